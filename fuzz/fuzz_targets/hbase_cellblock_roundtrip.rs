//! Encoder round trip of HBase's KeyValue cell blocks: arbitrary cells
//! (tags too, with `KeyValueCodecWithTags`) encoded one by one must read
//! back part for part; a mutation encoded whole must read back as the
//! same row and cells.
#![no_main]

use arbitrary::Arbitrary;
use bytes::{Bytes, BytesMut};
use ferrobase_fuzz::cells::{ARow, Kind};
use ferrobase_hbase_wire::cellblock::{self, CellBlockReader, CellCodec, CellParts, KeyValueType};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct KeyValue {
    row: Vec<u8>,
    family: Vec<u8>,
    qualifier: Vec<u8>,
    timestamp: u64,
    kind: Option<Kind>,
    value: Vec<u8>,
    tags: Vec<u8>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    with_tags: bool,
    cells: Vec<KeyValue>,
    mutation: ARow,
}

fuzz_target!(|input: Input| {
    let codec = if input.with_tags {
        CellCodec::KeyValueWithTags
    } else {
        CellCodec::KeyValue
    };
    let mut out = BytesMut::new();
    let mut written = Vec::new();
    for kv in &input.cells {
        let parts = CellParts {
            row: &kv.row,
            family: &kv.family,
            qualifier: &kv.qualifier,
            timestamp: kv.timestamp,
            kv_type: kv
                .kind
                .map_or(KeyValueType::Maximum, |k| k.cell_type().into()),
            value: &kv.value,
            tags: &kv.tags,
        };
        let before = out.len();
        match cellblock::encode_key_value(&mut out, codec, &parts) {
            Ok(()) => written.push(parts),
            Err(_) => assert_eq!(out.len(), before, "a refused cell left bytes behind"),
        }
    }
    let block = out.freeze();
    let mut reader = CellBlockReader::new(&block);
    for want in &written {
        let got = reader
            .next_cell()
            .unwrap_or_else(|e| panic!("an encoded cell does not decode: {e}"))
            .unwrap_or_else(|| panic!("the block ends before its last cell"));
        let tags: &[u8] = if input.with_tags { want.tags } else { &[] };
        assert_eq!(
            (
                got.row,
                got.family,
                got.qualifier,
                got.timestamp,
                got.kv_type,
                got.value,
                got.tags
            ),
            (
                want.row,
                want.family,
                want.qualifier,
                want.timestamp,
                want.kv_type,
                want.value,
                tags
            )
        );
    }
    assert!(reader.is_empty());

    let m = input.mutation.mutation();
    let mut out = BytesMut::new();
    let Ok(n) = cellblock::encode_mutation(&mut out, codec, &m) else {
        return;
    };
    let block: Bytes = out.freeze();
    let back = CellBlockReader::new(&block)
        .read_mutation(n, m.durability)
        .unwrap_or_else(|e| panic!("an encoded mutation does not decode: {e}"));
    if n > 0 {
        assert_eq!(back.row, m.row);
    }
    assert!(
        back.mutations().eq(m.mutations()),
        "a mutation's cells change in a round trip"
    );
});
