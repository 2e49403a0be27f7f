//! Unit tests of the parent module.

use super::*;
use ferrobase_types::LATEST_TIMESTAMP;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

fn seeded(cases: u32) -> TestRunner {
    TestRunner::new_with_rng(
        Config {
            cases,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[11; 32]),
    )
}

fn parts<'a>(
    row: &'a [u8],
    family: &'a [u8],
    qualifier: &'a [u8],
    ts: u64,
    t: KeyValueType,
    value: &'a [u8],
) -> CellParts<'a> {
    CellParts {
        row,
        family,
        qualifier,
        timestamp: ts,
        kv_type: t,
        value,
        tags: &[],
    }
}

#[test]
fn golden_key_value() {
    let mut out = BytesMut::new();
    encode_key_value(
        &mut out,
        CellCodec::KeyValue,
        &parts(b"r", b"f", b"q", 1, KeyValueType::Put, b"v"),
    )
    .unwrap();
    let expected: &[u8] = &[
        0, 0, 0, 24, // cell length: 8 + key 15 + value 1
        0, 0, 0, 15, // key length: 2 + 1 + 1 + 1 + 1 + 8 + 1
        0, 0, 0, 1, // value length
        0, 1, b'r', // row length, row
        1, b'f', // family length, family
        b'q', // qualifier (the rest of the key)
        0, 0, 0, 0, 0, 0, 0, 1,    // timestamp
        4,    // type Put
        b'v', // value
    ];
    assert_eq!(&out[..], expected);
    let block = out.freeze();
    let kv = CellBlockReader::new(&block).next_cell().unwrap().unwrap();
    assert_eq!(
        (
            kv.row,
            kv.family,
            kv.qualifier,
            kv.timestamp,
            kv.kv_type,
            kv.value,
            kv.tags
        ),
        (
            &b"r"[..],
            &b"f"[..],
            &b"q"[..],
            1,
            KeyValueType::Put,
            &b"v"[..],
            &[][..]
        )
    );
}

#[test]
fn golden_key_value_with_tags() {
    let mut c = parts(
        b"r",
        b"f",
        b"",
        LATEST_TIMESTAMP,
        KeyValueType::DeleteFamily,
        b"",
    );
    c.tags = &[1, 0, 1, b'x'];
    let mut with = BytesMut::new();
    encode_key_value(&mut with, CellCodec::KeyValueWithTags, &c).unwrap();
    let expected: &[u8] = &[
        0, 0, 0, 28, // 8 + key 14 + value 0 + tags 2 + 4
        0, 0, 0, 14, // key: 2 + 1 + 1 + 1 + 0 + 8 + 1
        0, 0, 0, 0, // no value
        0, 1, b'r', 1, b'f', // row, family, empty qualifier
        0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // LATEST_TIMESTAMP
        14,   // DeleteFamily
        0, 4, 1, 0, 1, b'x', // tags length, tags
    ];
    assert_eq!(&with[..], expected);
    let block = with.freeze();
    let kv = CellBlockReader::new(&block).next_cell().unwrap().unwrap();
    assert_eq!(kv.tags, &[1, 0, 1, b'x']);
    // KeyValueCodec never writes tags.
    let mut without = BytesMut::new();
    encode_key_value(&mut without, CellCodec::KeyValue, &c).unwrap();
    assert_eq!(without.len(), 4 + 22);
}

#[test]
fn codecs_by_class_name_and_header() {
    for c in [CellCodec::KeyValue, CellCodec::KeyValueWithTags] {
        assert_eq!(CellCodec::from_class_name(c.class_name()), Some(c));
    }
    let mut h = pb::ConnectionHeader::default();
    assert_eq!(CellCodec::from_connection_header(&h).unwrap(), None);
    h.cell_block_codec_class = Some(KEY_VALUE_CODEC_WITH_TAGS.into());
    assert_eq!(
        CellCodec::from_connection_header(&h).unwrap(),
        Some(CellCodec::KeyValueWithTags)
    );
    h.cell_block_compressor_class = Some("org.apache.hadoop.io.compress.GzipCodec".into());
    let e = CellCodec::from_connection_header(&h).unwrap_err();
    assert_eq!(e.class, ExceptionClass::UnsupportedCompressionCodec);
    assert!(e.message.contains("GzipCodec"));
    h.cell_block_codec_class = Some("org.apache.hadoop.hbase.codec.MessageCodec".into());
    let e = CellCodec::from_connection_header(&h).unwrap_err();
    assert_eq!(e.class, ExceptionClass::UnsupportedCellCodec);
    assert!(e.message.contains("MessageCodec"));
}

#[test]
fn a_mutation_reads_into_one_run_per_family_group() {
    let mut out = BytesMut::new();
    let cells = [
        (&b"f"[..], &b"a"[..], KeyValueType::Put, &b"1"[..]),
        (b"f", b"b", KeyValueType::Put, b"2"),
        (b"g", b"c", KeyValueType::DeleteColumn, b""),
        (b"f", b"", KeyValueType::DeleteFamily, b""),
    ];
    for (f, q, t, v) in cells {
        encode_key_value(&mut out, CellCodec::KeyValue, &parts(b"row", f, q, 5, t, v)).unwrap();
    }
    // A second mutation's cell follows.
    encode_key_value(
        &mut out,
        CellCodec::KeyValue,
        &parts(b"next", b"f", b"q", 1, KeyValueType::Put, b""),
    )
    .unwrap();
    let block = out.freeze();
    let mut r = CellBlockReader::new(&block);
    let m = r.read_mutation(4, Durability::AsyncWal).unwrap();
    let expected = RowMutation::new("row")
        .with_durability(Durability::AsyncWal)
        .put_at("f", "a", 5, "1")
        .put_at("f", "b", 5, "2")
        .delete_column("g", "c", 5)
        .delete_family("f", 5);
    assert_eq!(m, expected);
    assert_eq!(m.families().len(), 3);
    // Row and family share the block's buffer.
    assert!(block.as_ptr_range().contains(&m.row.as_ptr()));
    assert!(
        block
            .as_ptr_range()
            .contains(&m.families()[0].family.as_ptr())
    );
    let next = r.read_mutation(1, Durability::UseDefault).unwrap();
    assert_eq!(&next.row[..], b"next");
    assert!(r.is_empty());
    // Announced cells that are not there.
    let e = CellBlockReader::new(&block)
        .read_mutation(6, Durability::UseDefault)
        .unwrap_err();
    assert!(e.what.contains("different rows"), "{e}");
    let mut r = CellBlockReader::new(&block);
    r.skip_cells(5).unwrap();
    let e = r.read_mutation(1, Durability::UseDefault).unwrap_err();
    assert!(e.what.contains("ends before"), "{e}");
}

#[test]
fn search_key_types_are_not_cells() {
    let mut out = BytesMut::new();
    encode_key_value(
        &mut out,
        CellCodec::KeyValue,
        &parts(b"r", b"f", b"q", 1, KeyValueType::Maximum, b""),
    )
    .unwrap();
    let block = out.freeze();
    let kv = CellBlockReader::new(&block).next_cell().unwrap().unwrap();
    assert_eq!(kv.kv_type, KeyValueType::Maximum);
    assert_eq!(kv.kv_type.cell_type(), None);
    assert!(decode_cells(&block).is_err());
    assert!(
        CellBlockReader::new(&block)
            .read_mutation(1, Durability::UseDefault)
            .is_err()
    );
    for code in [0u8, 4, 8, 10, 12, 14, 255] {
        assert_eq!(KeyValueType::from_code(code).unwrap().code(), code);
    }
    assert_eq!(KeyValueType::from_code(5), None);
}

#[test]
fn oversize_parts_are_refused_before_writing() {
    let mut out = BytesMut::new();
    let long_row = vec![0u8; 40_000];
    let e = encode_key_value(
        &mut out,
        CellCodec::KeyValue,
        &parts(&long_row, b"f", b"", 1, KeyValueType::Put, b""),
    )
    .unwrap_err();
    assert!(e.what.contains("row"));
    let long_family = vec![b'f'; 256];
    assert!(
        encode_key_value(
            &mut out,
            CellCodec::KeyValue,
            &parts(b"r", &long_family, b"", 1, KeyValueType::Put, b"")
        )
        .is_err()
    );
    assert!(out.is_empty());
}

#[test]
fn bad_lengths_are_typed_errors() {
    let mut good = BytesMut::new();
    encode_key_value(
        &mut good,
        CellCodec::KeyValue,
        &parts(b"row", b"f", b"q", 1, KeyValueType::Put, b"value"),
    )
    .unwrap();
    let good = good.freeze();
    // Every truncation fails cleanly.
    for cut in 1..good.len() {
        let b = good.slice(..cut);
        assert!(CellBlockReader::new(&b).next_cell().is_err(), "cut {cut}");
    }
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut v = good.to_vec();
        f(&mut v);
        let b = Bytes::from(v);
        CellBlockReader::new(&b).next_cell().unwrap_err().what
    };
    // A 2 GB cell length: no allocation, an error.
    assert_eq!(
        with(&|v| v[..4].copy_from_slice(&0x8000_0000u32.to_be_bytes())),
        "negative cell length"
    );
    assert_eq!(
        with(&|v| v[..4].copy_from_slice(&0x7fff_ffffu32.to_be_bytes())),
        "cell length runs past the block"
    );
    assert_eq!(
        with(&|v| v[4..8].copy_from_slice(&0xffff_fff0u32.to_be_bytes())),
        "negative key length"
    );
    assert_eq!(
        with(&|v| v[4..8].copy_from_slice(&100u32.to_be_bytes())),
        "key and value lengths run past the cell"
    );
    assert_eq!(
        with(&|v| v[4..8].copy_from_slice(&5u32.to_be_bytes())),
        "key shorter than its fixed fields"
    );
    assert_eq!(
        with(&|v| v[12..14].copy_from_slice(&0x8000u16.to_be_bytes())),
        "negative row length"
    );
    assert_eq!(
        with(&|v| v[12..14].copy_from_slice(&200u16.to_be_bytes())),
        "row runs past the key"
    );
    assert_eq!(with(&|v| v[17] = 200), "family runs past the key");
    assert_eq!(
        with(&|v| *v.iter_mut().rev().nth(5).unwrap() = 3),
        "unknown KeyValue type code"
    );
}

#[test]
fn cells_round_trip() {
    let cell = (
        proptest::collection::vec(any::<u8>(), 0..40),
        proptest::collection::vec(any::<u8>(), 0..20),
        proptest::collection::vec(any::<u8>(), 0..40),
        any::<u64>(),
        prop_oneof![
            Just(KeyValueType::Put),
            Just(KeyValueType::Delete),
            Just(KeyValueType::DeleteColumn),
            Just(KeyValueType::DeleteFamily),
            Just(KeyValueType::DeleteFamilyVersion),
            Just(KeyValueType::Minimum),
            Just(KeyValueType::Maximum),
        ],
        proptest::collection::vec(any::<u8>(), 0..300),
        proptest::collection::vec(any::<u8>(), 0..30),
    );
    let strategy = (proptest::collection::vec(cell, 0..20), any::<bool>());
    seeded(256)
        .run(&strategy, |(cells, tags)| {
            let codec = if tags {
                CellCodec::KeyValueWithTags
            } else {
                CellCodec::KeyValue
            };
            let mut out = BytesMut::new();
            let mut expected_len = 0;
            for (row, family, qualifier, ts, t, value, tag) in &cells {
                let p = CellParts {
                    row,
                    family,
                    qualifier,
                    timestamp: *ts,
                    kv_type: *t,
                    value,
                    tags: tag,
                };
                encode_key_value(&mut out, codec, &p).unwrap();
                expected_len += encoded_len(
                    codec,
                    row.len(),
                    family.len(),
                    qualifier.len(),
                    value.len(),
                    tag.len(),
                );
            }
            prop_assert_eq!(out.len(), expected_len);
            let block = out.freeze();
            let back: Vec<_> = CellBlockReader::new(&block)
                .collect::<Result<_, _>>()
                .unwrap();
            prop_assert_eq!(back.len(), cells.len());
            for (kv, (row, family, qualifier, ts, t, value, tag)) in back.iter().zip(&cells) {
                prop_assert_eq!(kv.row, &row[..]);
                prop_assert_eq!(kv.family, &family[..]);
                prop_assert_eq!(kv.qualifier, &qualifier[..]);
                prop_assert_eq!(kv.timestamp, *ts);
                prop_assert_eq!(kv.kv_type, *t);
                prop_assert_eq!(kv.value, &value[..]);
                prop_assert_eq!(kv.tags, if tags { &tag[..] } else { &[][..] });
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn results_round_trip_through_cells() {
    let cells = vec![
        Cell::put("r", "f", "a", 3, "x"),
        Cell {
            cell_type: CellType::DeleteColumn,
            ..Cell::put("r", "g", "b", 2, "")
        },
    ];
    let mut out = BytesMut::new();
    assert_eq!(
        encode_cells(&mut out, CellCodec::KeyValue, &cells).unwrap(),
        2
    );
    let block = out.freeze();
    assert_eq!(decode_cells(&block).unwrap(), cells);
    assert_eq!(CellBlockReader::new(&block).read_cells(2).unwrap(), cells);
    let m = RowMutation::new("r")
        .put("f", "q", "v")
        .delete_family("g", 9);
    let mut out = BytesMut::new();
    assert_eq!(
        encode_mutation(&mut out, CellCodec::KeyValue, &m).unwrap(),
        2
    );
    let block = out.freeze();
    assert_eq!(
        CellBlockReader::new(&block)
            .read_mutation(2, Durability::UseDefault)
            .unwrap(),
        m
    );
}

#[test]
fn garbage_never_panics() {
    let strategy = (proptest::collection::vec(any::<u8>(), 0..400), 0usize..20);
    seeded(3000)
        .run(&strategy, |(bytes, n)| {
            let b = Bytes::from(bytes);
            for c in CellBlockReader::new(&b) {
                if c.is_err() {
                    break;
                }
            }
            let _ = decode_cells(&b);
            let _ = CellBlockReader::new(&b).read_mutation(n, Durability::UseDefault);
            let _ = CellBlockReader::new(&b).read_cells(n);
            Ok(())
        })
        .unwrap();
}
