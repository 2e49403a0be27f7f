//! Encoder round trip of the gRPC cell blocks: arbitrary rows encoded as
//! a mutation block and as a result block must decode to what was
//! encoded.
#![no_main]

use ferrobase_fuzz::cells::ARow;
use ferrobase_proto::cellblock;
use ferrobase_types::{Cell, RowMutation};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|rows: Vec<ARow>| {
    let mutations: Vec<RowMutation> = rows.iter().map(ARow::mutation).collect();
    let back = cellblock::decode_mutations(cellblock::encode_mutations(&mutations))
        .unwrap_or_else(|e| panic!("an encoded mutation block does not decode: {e}"));
    assert_eq!(back, mutations);

    let cells: Vec<Vec<Cell>> = rows.iter().map(ARow::cells).collect();
    let block =
        cellblock::encode_results(rows.iter().zip(&cells).map(|(r, c)| (&r.row[..], &c[..])));
    let back = cellblock::decode_results(block)
        .unwrap_or_else(|e| panic!("an encoded result block does not decode: {e}"));
    assert_eq!(back.len(), rows.len());
    for ((row, got), (r, want)) in back.iter().zip(rows.iter().zip(&cells)) {
        assert_eq!(&row[..], &r.row[..]);
        assert_eq!(got, want);
    }
});
