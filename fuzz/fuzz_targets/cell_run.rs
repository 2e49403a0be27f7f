//! `CellRun`, the family cell layout shared by cell blocks, WAL records and
//! row mutations: `parse` and `check` must agree on every input, a parsed
//! run must iterate its cells, rebuild to the same cells, and survive
//! `map_timestamps`; `cell_at` must walk the same cells.
#![no_main]

use bytes::Bytes;
use ferrobase_types::CellRun;
use ferrobase_types::cell_run::cell_at;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [count, start, rest @ ..] = data else {
        return;
    };
    let count = usize::from(*count);
    let start = usize::from(*start % 8);
    let buf = Bytes::copy_from_slice(rest);
    let parsed = CellRun::parse(&buf, start, count);
    let checked = CellRun::check(rest, start, count);
    match (&parsed, &checked) {
        (Ok((_, a)), Ok(b)) => assert_eq!(a, b, "parse and check end at different bytes"),
        (Err(a), Err(b)) => assert_eq!(a, b, "parse and check fail differently"),
        _ => panic!("parse and check disagree: {parsed:?} / {checked:?}"),
    }
    let Ok((run, end)) = parsed else { return };
    assert!(end <= rest.len());
    let cells: Vec<_> = run.iter().collect();
    assert_eq!(
        cells.len(),
        count,
        "a parsed run iterates fewer cells than it holds"
    );
    let mut rebuilt = CellRun::new();
    for c in &cells {
        rebuilt.push(c.qualifier, c.timestamp, c.kind, c.value);
    }
    assert_eq!(rebuilt.iter().collect::<Vec<_>>(), cells);
    let summary = run.summary();
    for c in &cells {
        assert!(summary.max_cell >= c.qualifier.len() + c.value.len());
    }
    let mut pos = start;
    for c in &cells {
        let Some((at, next)) = cell_at(rest, pos) else {
            panic!("cell_at misses a parsed cell")
        };
        assert_eq!(&at, c);
        pos = next;
    }
    assert_eq!(pos, end);
    let shifted = run.map_timestamps(|c| Ok::<u64, ()>(c.timestamp.wrapping_add(1)));
    if let Ok(Some(r)) = shifted {
        assert_eq!(r.len(), count);
        for (a, b) in r.iter().zip(&cells) {
            assert_eq!(a.timestamp, b.timestamp.wrapping_add(1));
            assert_eq!(
                (a.qualifier, a.kind, a.value),
                (b.qualifier, b.kind, b.value)
            );
        }
    }
});
