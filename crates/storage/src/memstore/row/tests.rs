//! Unit tests of the parent module.

use super::*;
use ferrobase_types::CellType;
use std::collections::BTreeSet;

const PUT: u8 = 4;

/// A cell as a test writes it: qualifier, timestamp, type code, value.
type TestCell<'a> = (&'a [u8], u64, u8, &'a [u8]);
/// A cell as a walk sees it: qualifier, timestamp, type, seq, value.
type Walked = (Vec<u8>, u64, u8, u64, Vec<u8>);

/// An arena holding `r` then the cells as a run, and their starts.
fn arena_with(cells: &[TestCell<'_>]) -> (Bytes, Vec<u32>) {
    let mut buf = b"r".to_vec();
    let mut starts = Vec::new();
    for (q, ts, kind, v) in cells {
        starts.push(buf.len() as u32);
        let kind = CellType::from_code(*kind).unwrap_or(CellType::Put);
        buf.extend_from_slice(ferrobase_types::CellRun::single(q, *ts, kind, v).as_bytes());
    }
    (Bytes::from(buf), starts)
}

fn numbered(qs: &[u32]) -> (Bytes, Vec<u32>) {
    let names: Vec<(Vec<u8>, Vec<u8>)> = qs
        .iter()
        .map(|q| (format!("q{q:05}").into_bytes(), q.to_string().into_bytes()))
        .collect();
    let cells: Vec<TestCell<'_>> = names
        .iter()
        .map(|(q, v)| (q.as_slice(), 1, PUT, v.as_slice()))
        .collect();
    arena_with(&cells)
}

fn walk(r: &RowCells, newest: bool) -> Vec<Walked> {
    let mut seen = Vec::new();
    let f = |c: &CellView<'_>| {
        seen.push((
            c.qualifier.to_vec(),
            c.timestamp,
            c.kind,
            c.seq,
            c.value.to_vec(),
        ));
        Ok::<(), ()>(())
    };
    let walked = if newest {
        r.for_each_newest(f)
    } else {
        r.for_each(f)
    };
    assert_eq!(walked, Ok(()));
    seen
}

#[test]
fn stays_sorted_across_the_switch_to_btree() {
    let mut r = RowCells::default();
    // Reverse order, past SMALL_MAX, in several mutations.
    let all: Vec<u32> = (0..(SMALL_MAX as u32 * 2)).rev().collect();
    for chunk in all.chunks(10) {
        let (a, cells) = numbered(chunk);
        assert_eq!(r.insert(a, 0, &cells, 1), chunk.len());
    }
    // Same key, same seq: replaced, not added.
    let (a, cells) = numbered(&[3]);
    assert_eq!(r.insert(a, 0, &cells, 1), 0);
    assert!(matches!(r, RowCells::Large(_)));
    assert_eq!(r.len(), SMALL_MAX * 2);
    let mut out = VecDeque::new();
    let from = MemKey {
        key: Bytes::from(key::encode(b"r", b"f", b"q00002", 1, CellType::Put)),
        seq: u64::MAX,
    };
    r.collect(b"r", b"f", Some(&from), u64::MAX, &mut out);
    assert_eq!(out.len(), SMALL_MAX * 2 - 2);
    assert!(out.iter().zip(out.iter().skip(1)).all(|(a, b)| a.0 < b.0));
    assert_eq!(
        out.get(1).map(|x| x.1.clone()),
        Some(Bytes::from_static(b"3"))
    );
    assert_eq!(
        out.front().map(|x| x.0.key.clone()),
        Some(Bytes::from(key::encode(
            b"r",
            b"f",
            b"q00002",
            1,
            CellType::Put
        )))
    );
    let mut hidden = VecDeque::new();
    r.collect(b"r", b"f", None, 0, &mut hidden);
    assert!(hidden.is_empty(), "seq 1 is above read point 0");
}

#[test]
fn newest_only_keeps_the_first_of_identical_keys_small_and_large() {
    for extra in [0u32, SMALL_MAX as u32] {
        let mut r = RowCells::default();
        let (a, cells) = numbered(&[1, 2]);
        r.insert(a, 0, &cells, 5);
        let (a, cells) = numbered(&[1]);
        r.insert(a, 0, &cells, 9);
        let wide: Vec<u32> = (100..100 + extra).collect();
        let (a, cells) = numbered(&wide);
        r.insert(a, 0, &cells, 3);
        let (all, newest) = (walk(&r, false), walk(&r, true));
        assert_eq!(all.len(), 3 + extra as usize);
        assert_eq!(newest.len(), 2 + extra as usize);
        let q1 = (b"q00001".to_vec(), 1, PUT);
        assert_eq!(
            newest.first().map(|c| (c.0.clone(), c.1, c.2, c.3)),
            Some((q1.0.clone(), q1.1, q1.2, 9))
        );
        assert_eq!(all.get(1).map(|c| (c.0.clone(), c.3)), Some((q1.0, 5)));
    }
}

#[test]
fn a_slot_outside_its_arena_reads_as_an_empty_cell() {
    let mut r = RowCells::default();
    let (a, _) = numbered(&[1]);
    // Past the end, and inside the row (not a cell).
    assert_eq!(r.insert(a.clone(), 0, &[u32::MAX - 1], 1), 1);
    assert_eq!(walk(&r, false), vec![(vec![], 0, 0, 1, vec![])]);
    let mut out = VecDeque::new();
    r.collect(b"r", b"f", None, 1, &mut out);
    assert_eq!(out.len(), 1);
    let mut r = RowCells::default();
    r.insert(Bytes::from_static(b"\x7f"), 0, &[0], 1);
    assert_eq!(walk(&r, true).len(), 1);
}

#[test]
fn latest_timestamps_read_as_the_arena_clock() {
    let mut r = RowCells::default();
    let (a, starts) = arena_with(&[(b"a", LATEST_TIMESTAMP, PUT, b"x"), (b"b", 5, PUT, b"y")]);
    r.insert_sorted(a, 1234, &starts, 3);
    let got: Vec<(Vec<u8>, u64)> = walk(&r, false).into_iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(got, vec![(b"a".to_vec(), 1234), (b"b".to_vec(), 5)]);
}

type Model = BTreeSet<(
    Vec<u8>,
    std::cmp::Reverse<u64>,
    std::cmp::Reverse<u8>,
    std::cmp::Reverse<u64>,
    Vec<u8>,
)>;

proptest::proptest! {
    /// Against a `BTreeSet` in internal order: mutations of random
    /// cells (repeated keys, versions, deletes, rows growing past
    /// SMALL_MAX), inserted sorted as the write path does or one by
    /// one; every walk, `collect` from every key, and the full keys.
    #[test]
    fn rows_match_a_sorted_model(
        muts in proptest::collection::vec(
            (proptest::collection::vec(("[a-d]{0,2}", 0u64..3, proptest::bool::weighted(0.2), "[xyz]{0,2}"), 1..30),
             proptest::bool::ANY),
            1..6),
    ) {
        let mut r = RowCells::default();
        let mut model: Model = BTreeSet::new();
        for (seq, (cells, presort)) in muts.iter().enumerate() {
            let seq = seq as u64 + 1;
            let mut cells: Vec<TestCell<'_>> = cells
                .iter()
                .map(|(q, ts, del, v)| (q.as_bytes(), *ts, if *del { 8 } else { PUT }, v.as_bytes()))
                .collect();
            if *presort {
                // As insert_edit: internal order, the last of identical keys kept.
                let mut keyed: Vec<(usize, TestCell<'_>)> = cells.iter().copied().enumerate().collect();
                keyed.sort_by(|(i, a), (j, b)| a.0.cmp(b.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)).then(i.cmp(j)));
                let mut kept: Vec<TestCell<'_>> = Vec::new();
                for (_, c) in keyed {
                    match kept.last_mut() {
                        Some(l) if (l.0, l.1, l.2) == (c.0, c.1, c.2) => *l = c,
                        _ => kept.push(c),
                    }
                }
                cells = kept;
            }
            for c in &cells {
                let k = (c.0.to_vec(), std::cmp::Reverse(c.1), std::cmp::Reverse(c.2), std::cmp::Reverse(seq));
                model.retain(|m| (&m.0, m.1, m.2, m.3) != (&k.0, k.1, k.2, k.3));
                model.insert((k.0, k.1, k.2, k.3, c.3.to_vec()));
            }
            let (arena, starts) = arena_with(&cells);
            if *presort {
                r.insert_sorted(arena, 0, &starts, seq);
            } else {
                r.insert(arena, 0, &starts, seq);
            }
        }
        let want: Vec<_> = model.iter().map(|m| (m.0.clone(), m.1.0, m.2.0, m.3.0, m.4.clone())).collect();
        proptest::prop_assert_eq!(r.len(), want.len());
        proptest::prop_assert_eq!(walk(&r, false), want.clone());
        let mut newest = want.clone();
        newest.dedup_by(|b, a| (&a.0, a.1, a.2) == (&b.0, b.1, b.2));
        proptest::prop_assert_eq!(walk(&r, true), newest);
        for (i, w) in want.iter().enumerate() {
            let kind = CellType::from_code(w.2).unwrap_or(CellType::Put);
            let full = key::encode(b"r", b"f", &w.0, w.1, kind);
            let mut out = VecDeque::new();
            r.collect(b"r", b"f", Some(&MemKey { key: Bytes::from(full.clone()), seq: w.3 }), u64::MAX, &mut out);
            proptest::prop_assert_eq!(out.len(), want.len() - i);
            let first = out.front().map(|(k, v)| (k.key.to_vec(), k.seq, v.to_vec()));
            proptest::prop_assert_eq!(first, Some((full, w.3, w.4.clone())));
        }
        // Another family sorts wholly before or after this one's cells.
        let mut out = VecDeque::new();
        let before = MemKey { key: Bytes::from(key::encode(b"r", b"e", b"zz", 0, CellType::Put)), seq: 0 };
        r.collect(b"r", b"f", Some(&before), u64::MAX, &mut out);
        proptest::prop_assert_eq!(out.len(), want.len());
        let mut out = VecDeque::new();
        let after = MemKey { key: Bytes::from(key::encode(b"r", b"g", b"", 9, CellType::Put)), seq: 0 };
        r.collect(b"r", b"f", Some(&after), u64::MAX, &mut out);
        proptest::prop_assert_eq!(out.len(), 0);
    }
}
