//! Round trips and corruption cases of every layout.

use super::*;
use ferrobase_types::{CellType, key};

const LAYOUTS: [Layout; 6] = [
    Layout::Plain,
    Layout::RowShared,
    Layout::RowRun,
    Layout::Prefix,
    Layout::Diff,
    Layout::FastDiff,
];

fn round_trip(encoding: Layout, entries: &[(Vec<u8>, u64, Vec<u8>)]) -> usize {
    let mut prev = Prev::default();
    let mut out = Vec::new();
    // Also encoded with the writer's "same row as the previous entry"
    // hint, which must change no byte.
    let mut hinted_prev = Prev::default();
    let mut hinted = Vec::new();
    let mut last_row: Option<&[u8]> = None;
    for (k, s, v) in entries {
        encode_entry(encoding, &mut prev, &mut out, (k, false), *s, v);
        let row = key::row_of(k);
        let same_row = last_row.is_some() && last_row == row;
        let hint = (k.as_slice(), same_row);
        encode_entry(encoding, &mut hinted_prev, &mut hinted, hint, *s, v);
        last_row = row;
    }
    assert_eq!(hinted, out, "{encoding:?}: hinted bytes differ");
    let mut cur = Prev::default();
    let mut pos = 0;
    for (k, s, v) in entries {
        let d = decode_entry(encoding, &mut cur, &out, pos)
            .unwrap_or_else(|e| panic!("{encoding:?}: {e}"));
        assert_eq!(&cur.key, k, "{encoding:?}");
        assert_eq!(cur.seq, *s);
        assert_eq!(
            out.get(d.value_start..d.value_start + cur.vlen),
            Some(v.as_slice())
        );
        pos = d.next;
    }
    assert_eq!(pos, out.len());
    out.len()
}

#[test]
fn every_encoding_round_trips() {
    let mut entries = Vec::new();
    for (i, row) in [&b"a"[..], b"a", b"ab", b"b\x00", b"b\x00\xff"]
        .iter()
        .enumerate()
    {
        for ts in [u64::MAX, 1_700_000_000_000, 5, 0] {
            let t = if i % 2 == 0 {
                CellType::Put
            } else {
                CellType::DeleteColumn
            };
            entries.push((
                key::encode(row, b"f", format!("q{i}").as_bytes(), ts, t),
                (i as u64) / 2,
                vec![i as u8; i],
            ));
        }
    }
    for l in LAYOUTS {
        round_trip(l, &entries);
    }
}

/// Cells `q0`…`q4` of one 64-byte row, all with timestamp 7 and sequence
/// id 3.
fn five_cells_of_one_row() -> Vec<(Vec<u8>, u64, Vec<u8>)> {
    let row = [b'r'; 64];
    (0..5)
        .map(|i| {
            let k = key::encode(&row, b"f", format!("q{i}").as_bytes(), 7, CellType::Put);
            (k, 3, b"v".to_vec())
        })
        .collect()
}

#[test]
fn row_shared_stores_row_and_family_once_per_run() {
    let entries = five_cells_of_one_row();
    let plain = round_trip(Layout::Plain, &entries);
    let shared = round_trip(Layout::RowShared, &entries);
    // Entries after the first skip `rowlen row famlen f` (2 + 64 + 2);
    // every entry pays one byte for its `shared` varint.
    assert_eq!(plain - shared, 4 * 68 - 5);
    let mut prev = Prev::default();
    let mut out = Vec::new();
    for (k, s, v) in &entries[..2] {
        encode_entry(Layout::RowShared, &mut prev, &mut out, (k, false), *s, v);
    }
    // Second entry: shared = 68, then the rest of its key (q1 ts type).
    let second = entries[0].0.len() + 5;
    assert_eq!(out.get(second..second + 2), Some(&[68u8, 11][..]));
    // A new row, or a family change, shares nothing.
    let other = key::encode(b"s", b"f", b"q", 7, CellType::Put);
    let mut out2 = Vec::new();
    encode_entry(
        Layout::RowShared,
        &mut prev,
        &mut out2,
        (&other, false),
        3,
        b"v",
    );
    assert_eq!(out2.first(), Some(&0));
}

#[test]
fn row_run_stores_what_a_row_shares_once() {
    let entries = five_cells_of_one_row();
    let shared = round_trip(Layout::RowShared, &entries);
    let run = round_trip(Layout::RowRun, &entries);
    // After the first entry a row-shared entry is `68 11 1 3 q_ ts type v`
    // (16 bytes); a row-run entry is `flags 2 1 q_ v` (6 bytes). The
    // first entries: 84 bytes against 78 (the timestamp as a varint).
    assert_eq!(shared - run, 4 * (16 - 6) + 6);
    let mut prev = Prev::default();
    let mut out = Vec::new();
    for (k, s, v) in &entries[..2] {
        encode_entry(Layout::RowRun, &mut prev, &mut out, (k, false), *s, v);
    }
    let first = out.len() - 6;
    let want = [
        SAME_ROW_FAMILY | SAME_SEQ | SAME_TS | SAME_TYPE,
        2,
        1,
        b'q',
        b'1',
        b'v',
    ];
    assert_eq!(out.get(first..), Some(&want[..]));
    // The first entry: no flag (the reset state shares nothing but a
    // zero timestamp, sequence id or type, none of which it has), then
    // the row and family in full.
    assert_eq!(out.get(..3), Some(&[0u8, 68, 0][..]));
    // Another row, sequence id, timestamp or type clears its flag.
    for (k, s, flag) in [
        (
            key::encode(b"s", b"f", b"q", 7, CellType::Put),
            3,
            SAME_ROW_FAMILY,
        ),
        (key::encode(b"s", b"f", b"q", 7, CellType::Put), 4, SAME_SEQ),
        (key::encode(b"s", b"f", b"q", 8, CellType::Put), 4, SAME_TS),
        (
            key::encode(b"s", b"f", b"q", 8, CellType::Delete),
            4,
            SAME_TYPE,
        ),
    ] {
        let mut one = Vec::new();
        encode_entry(Layout::RowRun, &mut prev, &mut one, (&k, false), s, b"v");
        assert_eq!(one.first().map(|f| f & flag), Some(0), "{flag:#x}");
    }
}

#[test]
fn a_row_run_never_continues_past_a_restart() {
    let mut cur = Prev::default();
    let entry = [
        SAME_ROW_FAMILY | SAME_SEQ | SAME_TS | SAME_TYPE,
        1,
        1,
        b'q',
        b'v',
    ];
    assert_eq!(
        decode_entry(Layout::RowRun, &mut cur, &entry, 0).err(),
        Some("row run continues past a restart point")
    );
    assert_eq!(
        decode_entry(Layout::RowRun, &mut cur, &[0x40], 0).err(),
        Some("unknown row-run flags")
    );
}

/// Stepping over a row's continuations leaves what decoding them does,
/// once the last key is rebuilt; it refuses what does not continue a
/// row, and garbage, with an error.
#[test]
#[allow(clippy::unwrap_used)]
fn stepping_in_a_row_matches_decoding() {
    let mut entries = five_cells_of_one_row();
    // A cell of another timestamp, type and sequence id, and a new row.
    let row = [b'r'; 64];
    entries.push((
        key::encode(&row, b"f", b"q9", 5, CellType::Delete),
        2,
        b"x".to_vec(),
    ));
    entries.push((
        key::encode(b"s", b"f", b"q", 5, CellType::Put),
        2,
        b"y".to_vec(),
    ));
    let mut prev = Prev::default();
    let mut out = Vec::new();
    for (k, s, v) in &entries {
        encode_entry(Layout::RowRun, &mut prev, &mut out, (k, false), *s, v);
    }
    let (mut decoded, mut stepped) = (Prev::default(), Prev::default());
    let first = decode_entry(Layout::RowRun, &mut decoded, &out, 0).unwrap();
    decode_entry(Layout::RowRun, &mut stepped, &out, 0).unwrap();
    let mut pos = first.next;
    for _ in 1..entries.len() - 1 {
        let d = decode_entry(Layout::RowRun, &mut decoded, &out, pos).unwrap();
        let (q, s) = step_row_run(&mut stepped, &out, pos).unwrap();
        assert_eq!(
            (s.value_start, s.next, s.same_row),
            (d.value_start, d.next, true)
        );
        assert_eq!(
            (stepped.seq, stepped.ts, stepped.typ, stepped.vlen),
            (decoded.seq, decoded.ts, decoded.typ, decoded.vlen)
        );
        rebuild_row_run_key(&mut stepped, out.get(q..s.value_start).unwrap());
        assert_eq!(stepped.key, decoded.key);
        pos = d.next;
    }
    // The new row's entry does not continue the row.
    assert_eq!(
        step_row_run(&mut stepped, &out, pos).err(),
        Some("entry does not continue its row")
    );
    for bytes in [&[0xffu8; 12][..], &[1, 5, 0, 0], &[0x20], &[], &[1, 0x80]] {
        assert!(step_row_run(&mut stepped, bytes, 0).is_err(), "{bytes:?}");
    }
    assert!(step_row_run(&mut stepped, &out, out.len() + 1).is_err());
    stepped.reset();
    assert!(step_row_run(&mut stepped, &out, first.next).is_err());
}

#[test]
fn block_codes_name_their_layouts() {
    use crate::storefile::FORMAT_VERSION as V;
    let none = DataBlockEncoding::None;
    for e in DataBlockEncoding::ALL {
        assert_eq!(
            Layout::of_block(Layout::block_code(*e), *e, V),
            Some(Layout::for_writing(*e))
        );
    }
    assert_eq!(Layout::block_code(none), 6);
    // Older NONE blocks still read in files of their own version: code
    // 5 (row-shared) in version 2, code 0 (whole keys) in version 1.
    assert_eq!(Layout::of_block(5, none, 2), Some(Layout::RowShared));
    assert_eq!(Layout::of_block(0, none, 1), Some(Layout::Plain));
    // ... and in no other.
    for (code, version) in [(6, 2), (6, 1), (5, 3), (5, 1), (0, 2), (0, 3)] {
        assert_eq!(
            Layout::of_block(code, none, version),
            None,
            "{code} {version}"
        );
    }
    // Other encodings' layouts never changed.
    assert_eq!(
        Layout::of_block(1, DataBlockEncoding::Prefix, 1),
        Some(Layout::Prefix)
    );
    // A code of another encoding is refused.
    assert_eq!(Layout::of_block(5, DataBlockEncoding::Prefix, V), None);
    assert_eq!(Layout::of_block(6, DataBlockEncoding::Diff, V), None);
    assert_eq!(Layout::of_block(1, none, V), None);
    assert_eq!(Layout::of_block(9, none, V), None);
}

#[test]
fn zigzag_round_trips_extremes() {
    for d in [0, 1, -1, i64::MAX, i64::MIN, 42, -42] {
        assert_eq!(unzigzag(zigzag(d)), d);
    }
}

#[test]
fn codes_round_trip() {
    for e in DataBlockEncoding::ALL {
        assert_eq!(from_code(code(*e)), Some(*e));
    }
    assert_eq!(from_code(9), None);
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    let mut cur = Prev::default();
    for e in LAYOUTS {
        for bytes in [
            &[0xffu8; 12][..],
            &[1, 5, 0, 0],
            &[0x20],
            &[],
            &[3, 0, 0, 0, 1],
        ] {
            cur.reset();
            let _ = decode_entry(e, &mut cur, bytes, 0);
            let _ = decode_entry(e, &mut cur, bytes, 100);
        }
    }
}
