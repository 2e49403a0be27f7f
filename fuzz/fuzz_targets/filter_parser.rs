//! The filter language (a client's filter string, parsed on the server):
//! lexer and parser on arbitrary text; a filter that parses is applied to
//! a few rows forwards and reversed, and must survive HBase's protobuf
//! form (`filter_to_pb`, `filter_from_pb`) unchanged.
#![no_main]

use ferrobase_filter::{ScanFilter, lexer, parse};
use ferrobase_hbase_wire::convert::filter::{filter_from_pb, filter_to_pb};
use ferrobase_types::Cell;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = lexer::tokenize(text);
    let Ok(filter) = parse(text) else { return };
    let _ = filter.slots();
    // The protobuf form is HBase's (MultipleColumnPrefixFilter's prefixes
    // sorted, as its `sorted_prefixes` say): converting back must give a
    // filter with the same protobuf form and the same verdicts.
    let wire = filter_to_pb(&filter);
    let back = filter_from_pb(&wire)
        .unwrap_or_else(|e| panic!("a parsed filter's protobuf form does not convert back: {e}"));
    assert_eq!(
        filter_to_pb(&back),
        wire,
        "a filter's protobuf form changes in a round trip"
    );

    let (filter, back) = (Arc::new(filter), Arc::new(back));
    let rows: [&[u8]; 4] = [b"", b"r", b"r5", &data[..data.len().min(12)]];
    for reversed in [false, true] {
        let mut s = ScanFilter::new(filter.clone(), reversed);
        let mut b = ScanFilter::new(back.clone(), reversed);
        for (i, row) in rows.iter().enumerate() {
            let cells = vec![
                Cell::put(row.to_vec(), "f", "q", i as u64, "5"),
                Cell::put(row.to_vec(), "f", "q", 0, "v12"),
                Cell::put(row.to_vec(), "g", "x", 2, data.to_vec()),
                Cell::put(
                    row.to_vec(),
                    "g",
                    data.get(..4).unwrap_or_default().to_vec(),
                    1,
                    "x",
                ),
            ];
            let kept = s.filter_row(cells.clone());
            assert_eq!(
                kept,
                b.filter_row(cells),
                "a filter judges differently after a protobuf round trip"
            );
            assert_eq!((s.done(), s.scan_done()), (b.done(), b.scan_done()));
        }
    }
});
