//! Writes the seed corpora, `fuzz/corpus/<target>/seed-*`, from the
//! repository's golden fixtures and test data (the store file fixtures of
//! format versions 1 and 2, the shell transcripts, the filter examples)
//! and from the public encoders (store files of every encoding and
//! compression, WAL segments, cell blocks, Thrift and HBase RPC messages).
//! Run from the repository root:
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example make_seeds
//! ```
//!
//! Seeds are small on purpose (the corpus is committed): a few rows each.

use bytes::{Bytes, BytesMut};
use ferrobase_fuzz::mem::MemStorage;
use ferrobase_fuzz::storefile::{self, join, take_apart, write_file};
use ferrobase_fuzz::wal;
use ferrobase_hbase_wire::cellblock::{self, CellCodec};
use ferrobase_hbase_wire::frame::{self, AuthMethod};
use ferrobase_hbase_wire::pb;
use ferrobase_proto::cellblock as proto_cellblock;
use ferrobase_storage::codec::put_varint;
use ferrobase_storage::wal::{Wal, WalEdit, WalOptions};
use ferrobase_thrift::protocol::{Header, Message, MessageType, Protocol, Struct, TType, Value};
use ferrobase_types::{
    BloomType, Cell, CellRun, CellType, Compression, DataBlockEncoding, Durability,
    LATEST_TIMESTAMP, RowMutation,
};
use prost::Message as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

type Res = Result<(), Box<dyn std::error::Error>>;

struct Corpus {
    root: PathBuf,
    bytes: usize,
}

impl Corpus {
    fn put(&mut self, target: &str, name: &str, data: &[u8]) -> Res {
        let dir = self.root.join(target);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(format!("seed-{name}")), data)?;
        self.bytes += data.len();
        Ok(())
    }
}

/// Bytes of a `hexdump -C` listing (the store file fixtures).
fn from_hexdump(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once("  ") else {
            continue;
        };
        let hex = rest.split('|').next().unwrap_or_default();
        out.extend(
            hex.split_whitespace()
                .filter_map(|h| u8::from_str_radix(h, 16).ok()),
        );
    }
    out
}

const ENCODINGS: [(DataBlockEncoding, &str, &str); 5] = [
    (DataBlockEncoding::None, "none", "storefile_block_none"),
    (
        DataBlockEncoding::Prefix,
        "prefix",
        "storefile_block_prefix",
    ),
    (DataBlockEncoding::Diff, "diff", "storefile_block_diff"),
    (
        DataBlockEncoding::FastDiff,
        "fast_diff",
        "storefile_block_fast_diff",
    ),
    (
        DataBlockEncoding::RowIndexV1,
        "row_index_v1",
        "storefile_block_row_index",
    ),
];

/// A block payload with its footer's encoding code replaced.
fn recode(block: &[u8], code: u8) -> Vec<u8> {
    let mut b = block.to_vec();
    if let Some(last) = b.last_mut() {
        *last = code;
    }
    b
}

fn storefiles(c: &mut Corpus) -> Res {
    // The golden fixtures: whole files of format versions 1 and 2.
    for (v, name) in [(1, "storefile_v1_none_row"), (2, "storefile_v2_none_row")] {
        let text = std::fs::read_to_string(format!("crates/storage/tests/fixtures/{name}.hex"))?;
        let file = from_hexdump(&text);
        c.put("storefile_file", name, &file)?;
        if let Some(parts) = take_apart(&file) {
            let blocks: Vec<&[u8]> = parts.blocks.iter().take(3).map(|b| &b.2[..]).collect();
            // Selector v - 1 gives format version v.
            let mut seed = vec![v - 1];
            seed.extend_from_slice(&join(&blocks));
            c.put("storefile_block_none", name, &seed)?;
        }
    }
    for (enc, name, target) in ENCODINGS {
        for (comp, cname) in [
            (Compression::None, "none"),
            (Compression::Snappy, "snappy"),
            (Compression::Lz4, "lz4"),
            (Compression::Zstd, "zstd"),
            (Compression::Gz, "gz"),
        ] {
            let bloom = match comp {
                Compression::None => BloomType::Row,
                Compression::Snappy => BloomType::RowCol,
                _ => BloomType::None,
            };
            let file = write_file(enc, comp, bloom, 200, 6);
            let parts = take_apart(&file).ok_or("a written file does not come apart")?;
            if comp == Compression::None {
                c.put("storefile_file", &format!("{name}_{cname}"), &file)?;
                let blocks: Vec<&[u8]> = parts.blocks.iter().take(2).map(|b| &b.2[..]).collect();
                let mut seed = vec![2];
                seed.extend_from_slice(&join(&blocks));
                c.put(target, "v3", &seed)?;
                if enc == DataBlockEncoding::RowIndexV1 {
                    // Whole keys: also what NONE blocks of version 1 hold.
                    let v1: Vec<Vec<u8>> = blocks.iter().map(|b| recode(b, 0)).collect();
                    let v1: Vec<&[u8]> = v1.iter().map(|b| &b[..]).collect();
                    let mut seed = vec![0];
                    seed.extend_from_slice(&join(&v1));
                    c.put("storefile_block_none", "v1_from_row_index", &seed)?;
                }
            } else if enc == DataBlockEncoding::FastDiff || enc == DataBlockEncoding::None {
                let codec_code = parts.blocks.first().map_or(0, |b| b.0);
                let mut seed = vec![codec_code, storefile::ENC_NONE];
                if enc == DataBlockEncoding::FastDiff {
                    seed[1] = storefile::ENC_FAST_DIFF;
                }
                let framed: Vec<Vec<u8>> = parts
                    .blocks
                    .iter()
                    .take(2)
                    .map(|(codec, raw, stored)| {
                        let mut p = vec![*codec];
                        p.extend_from_slice(&raw.to_le_bytes());
                        p.extend_from_slice(stored);
                        p
                    })
                    .collect();
                let framed: Vec<&[u8]> = framed.iter().map(|b| &b[..]).collect();
                seed.extend_from_slice(&join(&framed));
                c.put("storefile_codec", &format!("{name}_{cname}"), &seed)?;
            }
        }
    }
    // The bases the section targets splice into (same arguments as there).
    let index_base = write_file(
        DataBlockEncoding::None,
        Compression::None,
        BloomType::None,
        256,
        24,
    );
    let parts = take_apart(&index_base).ok_or("index base")?;
    c.put("storefile_index", "base", &parts.index)?;
    let bloom_base = write_file(
        DataBlockEncoding::FastDiff,
        Compression::None,
        BloomType::RowCol,
        512,
        16,
    );
    let parts = take_apart(&bloom_base).ok_or("bloom base")?;
    c.put(
        "storefile_bloom",
        "rowcol",
        parts.bloom.as_deref().unwrap_or_default(),
    )?;
    let row_bloom = write_file(
        DataBlockEncoding::None,
        Compression::None,
        BloomType::Row,
        512,
        16,
    );
    if let Some(b) = take_apart(&row_bloom).and_then(|p| p.bloom) {
        c.put("storefile_bloom", "row", &b)?;
    }
    for (i, (e, comp, b)) in [
        (DataBlockEncoding::None, Compression::None, BloomType::Row),
        (DataBlockEncoding::Diff, Compression::Lz4, BloomType::None),
        (
            DataBlockEncoding::Prefix,
            Compression::Snappy,
            BloomType::RowCol,
        ),
        (
            DataBlockEncoding::RowIndexV1,
            Compression::Gz,
            BloomType::Row,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let parts = take_apart(&write_file(e, comp, b, 300, 12)).ok_or("info base")?;
        let mut seed = vec![i as u8];
        seed.extend_from_slice(&parts.info);
        c.put("storefile_file_info", &format!("base{i}"), &seed)?;
    }
    // The trailer target: version and fields first, then the body.
    let file = write_file(
        DataBlockEncoding::Diff,
        Compression::None,
        BloomType::Row,
        200,
        4,
    );
    let t = file.len() - storefile::TRAILER_LEN;
    let mut seed = file[t + 60..t + 64].to_vec();
    seed.extend_from_slice(&file[t..t + 56]);
    seed.extend_from_slice(&file[..t]);
    c.put("storefile_trailer", "diff_row", &seed)?;
    Ok(())
}

fn edit(region_id: u64, seq: u64, row: &str, cells: usize) -> WalEdit {
    let mut run = CellRun::new();
    for i in 0..cells {
        let ts = if i % 2 == 0 {
            LATEST_TIMESTAMP
        } else {
            1000 + i as u64
        };
        let kind = if i == 3 {
            CellType::DeleteColumn
        } else {
            CellType::Put
        };
        run.push(
            format!("q{i}").as_bytes(),
            ts,
            kind,
            format!("v{i}").as_bytes(),
        );
    }
    WalEdit {
        nonce: None,
        region_id,
        seq,
        row: Bytes::from(row.to_string()),
        families: vec![ferrobase_storage::wal::WalFamily {
            family: Bytes::from_static(b"f"),
            cells: run,
        }],
        now: 1_700_000_000_000,
    }
}

/// A version-1 payload, written by hand from docs/wal-format.md (this
/// build writes version 2 only).
fn v1_payload(region: u64, seq: u64, row: &[u8]) -> Vec<u8> {
    let mut p = Vec::new();
    let lp = |p: &mut Vec<u8>, b: &[u8]| {
        put_varint(p, b.len() as u64);
        p.extend_from_slice(b);
    };
    put_varint(&mut p, region);
    put_varint(&mut p, seq);
    lp(&mut p, row);
    put_varint(&mut p, 1);
    lp(&mut p, b"f");
    put_varint(&mut p, 2);
    for (q, ts, v) in [(&b"a"[..], 5u64, &b"x"[..]), (b"b", 6, b"yy")] {
        p.push(CellType::Put.code());
        lp(&mut p, q);
        put_varint(&mut p, ts);
        lp(&mut p, v);
    }
    p
}

fn wal_segments(c: &mut Corpus) -> Res {
    let fs = MemStorage::new();
    let dir = Path::new("wal");
    let opts = WalOptions {
        roll_size: 1 << 20,
        async_flush_interval: Duration::from_secs(3600),
    };
    let w = Wal::open_on(Arc::new(fs.clone()), dir, opts)?;
    w.append(
        &[
            edit(1, 1, "row-a", 4),
            edit(2, 2, "row-b", 2),
            edit(1, 3, "row-c", 1),
        ],
        Durability::SyncWal,
    )?;
    w.close()?;
    let seg = fs
        .get(&dir.join(format!("wal-{:020}.log", 1)))
        .ok_or("no segment written")?;
    c.put("wal_segment", "v2", &seg)?;
    let payloads = wal::payloads(&seg);
    let refs: Vec<&[u8]> = payloads.iter().map(|p| &p[..]).collect();
    let mut seed = vec![1];
    seed.extend_from_slice(&join(&refs));
    c.put("wal_record", "v2", &seed)?;
    let v1 = [v1_payload(7, 10, b"r1"), v1_payload(7, 11, b"r2")];
    let mut seg1 = wal::header(1);
    for p in &v1 {
        seg1.extend_from_slice(&wal::frame(p));
    }
    c.put("wal_segment", "v1", &seg1)?;
    let mut seed = vec![0];
    seed.extend_from_slice(&join(&[&v1[0], &v1[1]]));
    c.put("wal_record", "v1", &seed)?;
    // Two segments, the last with a torn tail.
    let mut torn = seg1.clone();
    torn.extend_from_slice(storefile::SEPARATOR);
    torn.extend_from_slice(&seg[..seg.len() - 3]);
    c.put("wal_segment", "two_torn", &torn)?;
    Ok(())
}

fn rows() -> Vec<RowMutation> {
    vec![
        RowMutation::new("row-1")
            .with_durability(Durability::AsyncWal)
            .put("f", "a", "1")
            .put("f", "b", "2")
            .delete_column("g", "c", 5)
            .delete_family("f", 9),
        RowMutation::new("row-2").put_at("f", "q", 1234, "value"),
    ]
}

fn cell_blocks(c: &mut Corpus) -> Res {
    let muts = rows();
    let block = proto_cellblock::encode_mutations(&muts);
    c.put("proto_mutations", "two_rows", &block)?;
    let cells = vec![
        Cell::put("r", "f", "a", 3, "x"),
        Cell::put("r", "g", "b", 2, "y"),
    ];
    let results: Vec<(&[u8], &[Cell])> = vec![(b"r", &cells), (b"missing", &[])];
    c.put(
        "proto_results",
        "two_rows",
        &proto_cellblock::encode_results(results),
    )?;
    // cell_run: count, start, then the run (after `start` junk bytes).
    let m = &muts[0];
    for (i, f) in m.families().iter().enumerate() {
        let mut seed = vec![f.cells.len() as u8, 1, 0xEE];
        seed.extend_from_slice(f.cells.as_bytes());
        c.put("cell_run", &format!("family{i}"), &seed)?;
    }
    // HBase KeyValue blocks: a cell count, then the cells.
    let mut kv = BytesMut::new();
    let n = cellblock::encode_mutation(&mut kv, CellCodec::KeyValue, m)?;
    let mut seed = vec![n as u8];
    seed.extend_from_slice(&kv);
    c.put("hbase_cell_block_decoder", "mutation", &seed)?;
    let mut kv = BytesMut::new();
    cellblock::encode_cells(&mut kv, CellCodec::KeyValueWithTags, &cells)?;
    let mut seed = vec![cells.len() as u8];
    seed.extend_from_slice(&kv);
    c.put("hbase_cell_block_decoder", "cells", &seed)?;
    Ok(())
}

fn hbase_rpc(c: &mut Corpus) -> Res {
    let mut out = BytesMut::new();
    frame::encode_preamble(&mut out, AuthMethod::Simple);
    let header = pb::ConnectionHeader {
        service_name: Some("ClientService".into()),
        cell_block_codec_class: Some(cellblock::KEY_VALUE_CODEC.into()),
        ..Default::default()
    };
    frame::encode_connection_header(&mut out, &header)?;
    let region = pb::RegionSpecifier {
        value: Bytes::from_static(b"t,,1.abcdef."),
        ..Default::default()
    };
    let get = pb::GetRequest {
        region: region.clone(),
        get: pb::Get {
            row: Bytes::from_static(b"row-1"),
            ..Default::default()
        },
    };
    frame::encode_request(&mut out, 1, "Get", &get, None)?;
    let m = &rows()[0];
    let mut block = BytesMut::new();
    let n = cellblock::encode_mutation(&mut block, CellCodec::KeyValue, m)?;
    let mutate = pb::MutateRequest {
        region,
        mutation: pb::MutationProto {
            row: Some(m.row.clone()),
            mutate_type: Some(2),
            associated_cell_count: Some(n as i32),
            ..Default::default()
        },
        ..Default::default()
    };
    frame::encode_request(&mut out, 2, "Mutate", &mutate, Some(&block))?;
    c.put("hbase_frame_decoder", "connection", &out)?;
    // After the preamble and header the target prepends itself: calls only.
    let mut calls = BytesMut::new();
    frame::encode_request(&mut calls, 3, "Mutate", &mutate, Some(&block))?;
    c.put("hbase_frame_decoder", "call", &calls)?;
    c.put("hbase_frame_decoder", "registry", b"Regist")?;
    // zookeeper_request: a handshake and the reads of HBase's ZooKeeper
    // registry (the target also prepends a handshake itself).
    let zk_frame = |body: &[u8]| {
        let mut f = (body.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    };
    let zk_read = |xid: u32, op: u32, path: &str| {
        let mut b = xid.to_be_bytes().to_vec();
        b.extend_from_slice(&op.to_be_bytes());
        b.extend_from_slice(&(path.len() as u32).to_be_bytes());
        b.extend_from_slice(path.as_bytes());
        b.push(0);
        zk_frame(&b)
    };
    let mut handshake = vec![0u8; 4];
    handshake.extend_from_slice(&[0; 8]);
    handshake.extend_from_slice(&30_000u32.to_be_bytes());
    handshake.extend_from_slice(&[0; 8]);
    handshake.extend_from_slice(&16u32.to_be_bytes());
    handshake.extend_from_slice(&[0; 17]);
    let mut zk_session = zk_frame(&handshake);
    zk_session.extend(zk_read(1, 8, "/hbase"));
    zk_session.extend(zk_read(2, 4, "/hbase/meta-region-server"));
    c.put("zookeeper_request", "session", &zk_session)?;
    let mut zk_reads = zk_read(3, 4, "/hbase/master");
    zk_reads.extend(zk_read(4, 3, "/hbase/hbaseid"));
    zk_reads.extend(zk_frame(&[0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 11]));
    c.put("zookeeper_request", "reads", &zk_reads)?;
    // hbase_convert: a selector byte, then the message.
    let convert = |kind: u8, body: &[u8]| {
        let mut seed = vec![kind];
        seed.extend_from_slice(body);
        seed
    };
    c.put(
        "hbase_convert",
        "mutation",
        &convert(0, &join(&[&mutate.mutation.encode_to_vec(), &block])),
    )?;
    let mut family = ferrobase_types::FamilyDescriptor::new("f")?;
    family.set("VERSIONS", "3")?;
    family.set("TTL", "86400")?;
    family.set("COMPRESSION", "SNAPPY")?;
    let table = ferrobase_types::TableDescriptor::new("ns:t", vec![family.clone()])?;
    let schema = ferrobase_hbase_wire::convert::schema::table_to_pb(&table)?;
    c.put(
        "hbase_convert",
        "table",
        &convert(1, &schema.encode_to_vec()),
    )?;
    let fam = ferrobase_hbase_wire::convert::schema::family_to_pb(&family);
    c.put("hbase_convert", "family", &convert(2, &fam.encode_to_vec()))?;
    c.put(
        "hbase_convert",
        "region_spec",
        &convert(3, &mutate.region.encode_to_vec()),
    )?;
    let range = pb::TimeRange {
        from: Some(5),
        to: Some(10),
    };
    c.put(
        "hbase_convert",
        "time_range",
        &convert(4, &range.encode_to_vec()),
    )?;
    let t = ferrobase_hbase_wire::names::TableName::parse("ns:t")?;
    let r = ferrobase_hbase_wire::names::RegionName::with_replica(&t, b"a,b", 1_700_000_000_000, 1);
    c.put("hbase_convert", "region_name", &convert(5, &r.name))?;
    let mut parts = 1_700_000_000_000u64.to_le_bytes().to_vec();
    parts.extend_from_slice(&[1, 0]);
    parts.extend_from_slice(b"ns:t\0row,5");
    c.put("hbase_convert", "region_parts", &convert(6, &parts))?;
    c.put(
        "hbase_convert",
        "server",
        &convert(7, b"host-1.example,16020,1700000000000"),
    )?;
    for (i, text) in ferrobase_filter::registry::EXAMPLES.iter().enumerate() {
        let f = ferrobase_filter::parse(text)?;
        let wire = ferrobase_hbase_wire::convert::filter::filter_to_pb(&f);
        c.put(
            "hbase_filter_decoder",
            &format!("example{i:02}"),
            &wire.encode_to_vec(),
        )?;
    }
    Ok(())
}

fn thrift(c: &mut Corpus) -> Res {
    let mutation = Struct::new()
        .with(1, Value::Bool(false))
        .with(2, Value::binary("f:a"))
        .with(3, Value::binary("v"))
        .with(4, Value::Bool(true));
    let calls = [
        Message {
            header: Header {
                name: "mutateRow".into(),
                kind: MessageType::Call,
                seqid: 1,
            },
            body: Struct::new()
                .with(1, Value::binary("t"))
                .with(2, Value::binary("row"))
                .with(3, Value::List(TType::Struct, vec![Value::Struct(mutation)]))
                .with(4, Value::Map(TType::Binary, TType::Binary, vec![])),
        },
        Message {
            header: Header {
                name: "scannerOpenWithScan".into(),
                kind: MessageType::Call,
                seqid: 2,
            },
            body: Struct::new().with(1, Value::binary("t")).with(
                2,
                Value::Struct(
                    Struct::new()
                        .with(1, Value::binary("a"))
                        .with(4, Value::List(TType::Binary, vec![Value::binary("f")]))
                        .with(6, Value::binary("PrefixFilter('r')"))
                        .with(9, Value::Bool(true)),
                ),
            ),
        },
        Message {
            header: Header {
                name: "atomicIncrement".into(),
                kind: MessageType::Call,
                seqid: 3,
            },
            body: Struct::new()
                .with(1, Value::binary("t"))
                .with(2, Value::binary("r"))
                .with(3, Value::binary("f:n"))
                .with(4, Value::I64(-5))
                .with(5, Value::Double(1.5))
                .with(6, Value::I16(7))
                .with(7, Value::Byte(-1))
                .with(
                    8,
                    Value::Set(TType::I32, vec![Value::I32(1), Value::I32(2)]),
                ),
        },
    ];
    for (p, target, flag) in [
        (Protocol::Binary, "thrift_binary", 0u8),
        (Protocol::Compact, "thrift_compact", 0),
    ] {
        let mut buffered = vec![flag];
        let mut framed = vec![2u8 * 7];
        for (i, m) in calls.iter().enumerate() {
            let bytes = p.encode(m);
            c.put(target, &format!("call{i}"), &bytes)?;
            buffered.extend_from_slice(&bytes);
            framed.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
            framed.extend_from_slice(&bytes);
        }
        let name = if p == Protocol::Binary {
            "binary"
        } else {
            "compact"
        };
        c.put("thrift_transport", &format!("{name}_buffered"), &buffered)?;
        c.put("thrift_transport", &format!("{name}_framed"), &framed)?;
    }
    Ok(())
}

fn text(c: &mut Corpus) -> Res {
    for name in ["ddl", "dml", "errors", "filters", "interactive"] {
        let t = std::fs::read_to_string(format!("crates/shell/tests/transcripts/{name}.txt"))?;
        let commands: Vec<&str> = t.lines().filter_map(|l| l.strip_prefix("> ")).collect();
        c.put("shell_parser", name, commands.join("\n").as_bytes())?;
        if name == "filters" {
            for (i, cmd) in commands.iter().enumerate() {
                if let Some((_, rest)) = cmd.split_once("FILTER => \"") {
                    let f = rest.split('"').next().unwrap_or_default();
                    c.put("filter_parser", &format!("transcript{i:02}"), f.as_bytes())?;
                }
            }
        }
    }
    for (i, f) in ferrobase_filter::registry::EXAMPLES.iter().enumerate() {
        c.put("filter_parser", &format!("example{i:02}"), f.as_bytes())?;
    }
    c.put(
        "filter_parser",
        "composite",
        b"SKIP ValueFilter(!=, 'binary:0') AND (WHILE RowFilter(<, 'binary:r9') OR PageFilter(3))",
    )?;
    c.put(
        "settings_toml",
        "file",
        b"\"hbase.hstore.blockingStoreFiles\" = 16\nferrobase.memory.size = \"512m\"\n\n[hbase.regionserver]\nhandler.count = 8\nglobal.memstore.size = 0.25\nthrift.framed = true\n",
    )?;
    c.put("settings_toml", "override", b"hfile.block.cache.size=0.2")?;
    c.put(
        "region_manifest",
        "two_families",
        br#"{"flushed_seq":42,"max_seq":50,"next_file_id":3,"stores":{"f":["0000000000000001.sf","0000000000000002.sf"],"g":[]}}"#,
    )?;
    Ok(())
}

/// The master's meta and the gRPC requests (each behind its kind byte).
fn server_inputs(c: &mut Corpus) -> Res {
    use ferrobase_proto::{pb as fpb, schema};
    use ferrobase_server::meta::{MetaState, TableMeta};
    use ferrobase_storage::RegionInfo;
    use ferrobase_types::{FamilyDescriptor, TableDescriptor};

    let mut family = FamilyDescriptor::new("f")?;
    for (k, v) in [
        ("VERSIONS", "3"),
        ("TTL", "86400"),
        ("COMPRESSION", "SNAPPY"),
        ("DATA_BLOCK_ENCODING", "FAST_DIFF"),
        ("BLOOMFILTER", "ROWCOL"),
    ] {
        family.set(k, v)?;
    }
    let table = TableDescriptor::new("ns:t", vec![family, FamilyDescriptor::new("g")?])?;
    let mut meta = MetaState {
        next_region_id: 2,
        ..MetaState::default()
    };
    meta.tables.insert(
        "ns:t".into(),
        TableMeta {
            descriptor: table.clone(),
            enabled: true,
            regions: vec![RegionInfo::whole_table(2, "ns:t")],
            parents: Vec::new(),
            retired: [(1u64, 1_700_000_000_000u64)].into_iter().collect(),
        },
    );
    meta.namespaces.insert(
        "ns".into(),
        [(
            "hbase.namespace.quota.maxtables".to_string(),
            "5".to_string(),
        )]
        .into_iter()
        .collect(),
    );
    c.put("meta_json", "one_table", &serde_json::to_vec(&meta)?)?;

    let spec = fpb::ReadSpec {
        columns: vec![fpb::ColumnSpec {
            family: b"f".to_vec().into(),
            qualifiers: vec![b"a".to_vec().into()],
        }],
        max_versions: 2,
        min_timestamp: 0,
        max_timestamp: 0,
        filter: "PrefixFilter('r') AND ValueFilter(=, 'binary:1')".into(),
    };
    let block = proto_cellblock::encode_mutations(&rows()).to_vec();
    let requests: [(u8, &str, Vec<u8>); 8] = [
        (
            0,
            "create",
            fpb::CreateTableRequest {
                schema: Some(schema::table_to_pb(&table)),
                splits: vec![b"m".to_vec().into()],
                num_regions: 0,
                split_algo: String::new(),
            }
            .encode_to_vec(),
        ),
        (
            1,
            "alter",
            fpb::AlterTableRequest {
                table: "ns:t".into(),
                modify: vec![schema::family_to_pb(&table.families[0])],
                delete: vec!["g".into()],
            }
            .encode_to_vec(),
        ),
        (
            2,
            "get",
            fpb::GetRequest {
                region_id: 2,
                rows: vec![b"r1".to_vec().into()],
                spec: Some(spec.clone()),
            }
            .encode_to_vec(),
        ),
        (
            3,
            "scan",
            fpb::ScanRequest {
                region_id: 2,
                start_row: b"a".to_vec().into(),
                stop_row: b"z".to_vec().into(),
                spec: Some(spec),
                caching: 100,
                ..Default::default()
            }
            .encode_to_vec(),
        ),
        (
            4,
            "mutate",
            fpb::MutateRequest {
                region_id: 2,
                mutations: block.clone().into(),
            }
            .encode_to_vec(),
        ),
        (
            5,
            "multi",
            fpb::MultiRequest {
                actions: vec![fpb::RegionAction {
                    region_id: 2,
                    mutations: block.clone().into(),
                }],
            }
            .encode_to_vec(),
        ),
        (
            6,
            "increment",
            fpb::ReadModifyWriteRequest {
                region_id: 2,
                mutation: block.clone().into(),
                append: false,
                nonce_group: 1,
                nonce: 2,
            }
            .encode_to_vec(),
        ),
        (
            7,
            "check_and_mutate",
            fpb::CheckAndMutateRequest {
                region_id: 2,
                row: b"row-1".to_vec().into(),
                family: b"f".to_vec().into(),
                qualifier: b"a".to_vec().into(),
                expected: Some(b"1".to_vec().into()),
                mutation: block.into(),
                nonce_group: 0,
                nonce: 0,
            }
            .encode_to_vec(),
        ),
    ];
    for (kind, name, body) in requests {
        let mut data = vec![kind];
        data.extend_from_slice(&body);
        c.put("grpc_requests", name, &data)?;
    }
    Ok(())
}

fn main() -> Res {
    let mut c = Corpus {
        root: PathBuf::from("fuzz/corpus"),
        bytes: 0,
    };
    storefiles(&mut c)?;
    wal_segments(&mut c)?;
    cell_blocks(&mut c)?;
    hbase_rpc(&mut c)?;
    thrift(&mut c)?;
    text(&mut c)?;
    server_inputs(&mut c)?;
    println!("{} seed bytes under {}", c.bytes, c.root.display());
    Ok(())
}
