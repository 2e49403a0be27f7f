//! The data calls of HBase's native RPC, as the Java client makes them:
//! locate a row's region with a reversed scan of `hbase:meta`, write with
//! `Mutate` (cells inline) and `Multi` (cells in the cell block), read with
//! `Get` and a `Scan` continued over several calls, and a missing family
//! answered with `NoSuchColumnFamilyException` for that action alone; a
//! retried Increment applied once per nonce.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod raw_hbase;

use raw_hbase::RawConn;

use bytes::{Bytes, BytesMut};
use ferrobase_hbase_wire::cellblock::{CellCodec, decode_cells};
use ferrobase_hbase_wire::convert::mutation::{MutationKind, mutation_to_pb};
use ferrobase_hbase_wire::frame::ResponseFrame;
use ferrobase_hbase_wire::{RegionName, pb};
use ferrobase_types::RowMutation;

fn bytes(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locate_write_read_and_scan() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(&common::table("d", &["f"]), &[bytes("m")])
        .await
        .unwrap();
    let mut c = RawConn::connect(server.addr(), "ClientService", None).await;

    // Locate row "q": the last region starting at or before it.
    let locate = pb::ScanRequest {
        region: Some(RegionName::meta().specifier()),
        scan: Some(pb::Scan {
            column: vec![pb::Column {
                family: bytes("info"),
                qualifier: vec![],
            }],
            start_row: Some(bytes("d,q,99999999999999")),
            stop_row: Some(bytes("d,,")),
            reversed: Some(true),
            include_stop_row: Some(true),
            ..Default::default()
        }),
        number_of_rows: Some(1),
        ..Default::default()
    };
    let r = c.call("Scan", &locate).await;
    let m: pb::ScanResponse = r.decode_message().unwrap();
    assert_eq!(m.cells_per_result.len(), 1);
    assert_eq!(m.more_results_in_region, Some(false));
    let cells = decode_cells(&r.cell_block.unwrap()).unwrap();
    let high = RegionName::parse(&cells[0].row).unwrap();
    assert_eq!(&high.start_key[..], b"m");
    let qualifiers: Vec<&[u8]> = cells.iter().map(|c| &c.qualifier[..]).collect();
    assert_eq!(
        qualifiers,
        [
            &b"regioninfo"[..],
            b"seqnumDuringOpen",
            b"server",
            b"serverstartcode",
            b"sn",
            b"state"
        ]
    );
    // Every region of the table, forward (what getAllRegionLocations reads).
    let all = pb::ScanRequest {
        region: Some(RegionName::meta().specifier()),
        scan: Some(pb::Scan {
            start_row: Some(bytes("d,,")),
            stop_row: Some(bytes("d ,,")),
            ..Default::default()
        }),
        number_of_rows: Some(100),
        ..Default::default()
    };
    let r = c.call("Scan", &all).await;
    let m: pb::ScanResponse = r.decode_message().unwrap();
    assert_eq!(m.cells_per_result, [6, 6]);
    let low = RegionName::parse(&decode_cells(&r.cell_block.unwrap()).unwrap()[0].row).unwrap();
    assert!(low.start_key.is_empty());

    // A single Put, cells inline as the Java client sends them.
    let put = pb::MutateRequest {
        region: high.specifier(),
        mutation: pb::MutationProto {
            row: Some(bytes("q")),
            mutate_type: Some(pb::mutation_proto::MutationType::Put as i32),
            column_value: vec![pb::mutation_proto::ColumnValue {
                family: bytes("f"),
                qualifier_value: vec![pb::mutation_proto::column_value::QualifierValue {
                    qualifier: Some(bytes("c")),
                    value: Some(bytes("inline")),
                    ..Default::default()
                }],
            }],
            ..Default::default()
        },
        ..Default::default()
    };
    let r = c.call("Mutate", &put).await;
    let m: pb::MutateResponse = r.decode_message().unwrap();
    assert_eq!(m.processed, Some(true));

    // A Multi of puts in the cell block, and one to a missing family.
    let mut block = BytesMut::new();
    let mut actions = Vec::new();
    for (i, (row, family)) in [("r1", "f"), ("r2", "nope"), ("r3", "f")]
        .iter()
        .enumerate()
    {
        let m = RowMutation::new(bytes(row)).put(bytes(family), "c", bytes(row));
        let proto =
            mutation_to_pb(MutationKind::Put, &m, None, CellCodec::KeyValue, &mut block).unwrap();
        actions.push(pb::Action {
            index: Some(i as u32),
            mutation: Some(proto),
            ..Default::default()
        });
    }
    let multi = pb::MultiRequest {
        region_action: vec![pb::RegionAction {
            region: high.specifier(),
            action: actions,
            ..Default::default()
        }],
        ..Default::default()
    };
    let r = c.call_with("Multi", &multi, Some(&block)).await;
    let m: pb::MultiResponse = r.decode_message().unwrap();
    let results = &m.region_action_result[0].result_or_exception;
    let failed: Vec<u32> = results
        .iter()
        .filter(|r| r.exception.is_some())
        .filter_map(|r| r.index)
        .collect();
    assert_eq!(failed, [1]);
    let e = results.iter().find_map(|r| r.exception.clone()).unwrap();
    assert_eq!(
        e.name,
        "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"
    );

    // Get of the inline put.
    let get = pb::GetRequest {
        region: high.specifier(),
        get: pb::Get {
            row: bytes("q"),
            ..Default::default()
        },
    };
    let r = c.call("Get", &get).await;
    let cells = decode_cells(&r.cell_block.unwrap()).unwrap();
    assert_eq!(&cells[0].value[..], b"inline");

    // A scan of the high region, one row per call: q, r1, r3.
    let open = pb::ScanRequest {
        region: Some(high.specifier()),
        scan: Some(pb::Scan::default()),
        number_of_rows: Some(1),
        ..Default::default()
    };
    let mut rows = Vec::new();
    let r = c.call("Scan", &open).await;
    let mut m: pb::ScanResponse = r.decode_message().unwrap();
    rows.extend(decode_cells(&r.cell_block.unwrap()).unwrap());
    let id = m.scanner_id.unwrap();
    while m.more_results_in_region == Some(true) {
        let next = pb::ScanRequest {
            scanner_id: Some(id),
            number_of_rows: Some(1),
            ..Default::default()
        };
        let r = c.call("Scan", &next).await;
        m = r.decode_message().unwrap();
        if let Some(b) = r.cell_block {
            rows.extend(decode_cells(&b).unwrap());
        }
    }
    let keys: Vec<&[u8]> = rows.iter().map(|c| &c.row[..]).collect();
    assert_eq!(keys, [&b"q"[..], b"r1", b"r3"]);
    // The scanner closed itself at the region's end.
    let next = pb::ScanRequest {
        scanner_id: Some(id),
        number_of_rows: Some(1),
        ..Default::default()
    };
    let r = c.call("Scan", &next).await;
    assert_eq!(
        r.header.exception.unwrap().exception_class_name.as_deref(),
        Some("org.apache.hadoop.hbase.UnknownScannerException")
    );
    server.stop().await.unwrap();
}

/// An Increment retried with the same nonce (the client's first attempt
/// timed out after the server applied it) is applied once, in `Mutate` and
/// in `Multi`; the retry answers the current value. Another nonce applies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_increment_applies_once() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(&common::table("n", &["f"]), &[])
        .await
        .unwrap();
    let mut c = RawConn::connect(server.addr(), "ClientService", None).await;
    let locate = pb::ScanRequest {
        region: Some(RegionName::meta().specifier()),
        scan: Some(pb::Scan {
            start_row: Some(bytes("n,,")),
            stop_row: Some(bytes("n ,,")),
            ..Default::default()
        }),
        number_of_rows: Some(10),
        ..Default::default()
    };
    let r = c.call("Scan", &locate).await;
    let region = RegionName::parse(&decode_cells(&r.cell_block.unwrap()).unwrap()[0].row).unwrap();

    let increment = |nonce: u64, block: &mut BytesMut| {
        let m = RowMutation::new(bytes("counter")).put(bytes("f"), "n", 5i64.to_be_bytes());
        mutation_to_pb(
            MutationKind::Increment,
            &m,
            Some(nonce),
            CellCodec::KeyValue,
            block,
        )
        .unwrap()
    };
    let value = |r: &ResponseFrame| {
        let cells = decode_cells(r.cell_block.as_ref().unwrap()).unwrap();
        i64::from_be_bytes(cells[0].value[..8].try_into().unwrap())
    };
    let mutate = |nonce: u64| {
        let mut block = BytesMut::new();
        let mutation = increment(nonce, &mut block);
        (
            pb::MutateRequest {
                region: region.specifier(),
                mutation,
                nonce_group: Some(42),
                ..Default::default()
            },
            block,
        )
    };
    let (first, block) = mutate(1001);
    let r = c.call_with("Mutate", &first, Some(&block)).await;
    assert_eq!(value(&r), 5);
    // The retry: same group and nonce; answered with the value as it is.
    let r = c.call_with("Mutate", &first, Some(&block)).await;
    assert_eq!(value(&r), 5);
    let (second, block) = mutate(1002);
    let r = c.call_with("Mutate", &second, Some(&block)).await;
    assert_eq!(value(&r), 10);

    // The same in a Multi: nonce 1003 applies once however often sent.
    let mut block = BytesMut::new();
    let multi = pb::MultiRequest {
        region_action: vec![pb::RegionAction {
            region: region.specifier(),
            action: vec![pb::Action {
                index: Some(0),
                mutation: Some(increment(1003, &mut block)),
                ..Default::default()
            }],
            ..Default::default()
        }],
        nonce_group: Some(42),
        ..Default::default()
    };
    for _ in 0..3 {
        let r = c.call_with("Multi", &multi, Some(&block)).await;
        assert_eq!(value(&r), 15);
    }
    // A nonce of another group is another operation.
    let (mut other, block) = mutate(1003);
    other.nonce_group = Some(43);
    let r = c.call_with("Mutate", &other, Some(&block)).await;
    assert_eq!(value(&r), 20);
    server.stop().await.unwrap();
}

/// A checkAndMutate with a nonce (HBase 2.4+ sends one with a checked
/// Increment or Append) retried with the same pair gets the first call's
/// outcome: `processed` true and the row's current value when it applied
/// (the check, run again, would fail now), without applying again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_check_and_mutate_gets_its_first_outcome() {
    use ferrobase_filter::Comparator;
    use ferrobase_hbase_wire::convert::filter::comparator_to_pb;
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(&common::table("n", &["f"]), &[])
        .await
        .unwrap();
    let mut c = RawConn::connect(server.addr(), "ClientService", None).await;
    let locate = pb::ScanRequest {
        region: Some(RegionName::meta().specifier()),
        scan: Some(pb::Scan {
            start_row: Some(bytes("n,,")),
            stop_row: Some(bytes("n ,,")),
            ..Default::default()
        }),
        number_of_rows: Some(10),
        ..Default::default()
    };
    let r = c.call("Scan", &locate).await;
    let region = RegionName::parse(&decode_cells(&r.cell_block.unwrap()).unwrap()[0].row).unwrap();

    // Increment f:n by 5 if f:flag is absent (an empty expected value).
    let checked = |nonce: u64| {
        let mut block = BytesMut::new();
        let m = RowMutation::new(bytes("row")).put(bytes("f"), "n", 5i64.to_be_bytes());
        let mutation = mutation_to_pb(
            MutationKind::Increment,
            &m,
            Some(nonce),
            CellCodec::KeyValue,
            &mut block,
        )
        .unwrap();
        let req = pb::MutateRequest {
            region: region.specifier(),
            mutation,
            condition: Some(pb::Condition {
                row: bytes("row"),
                family: Some(bytes("f")),
                qualifier: Some(bytes("flag")),
                compare_type: Some(pb::CompareType::Equal as i32),
                comparator: Some(comparator_to_pb(&Comparator::Binary(Vec::new()))),
                ..Default::default()
            }),
            nonce_group: Some(42),
        };
        (req, block)
    };
    let answer = |r: &ResponseFrame| {
        let resp: pb::MutateResponse = r.decode_message().unwrap();
        let value = r
            .cell_block
            .as_ref()
            .and_then(|b| decode_cells(b).unwrap().first().cloned())
            .map(|c| i64::from_be_bytes(c.value[..8].try_into().unwrap()));
        (resp.processed, value)
    };
    let (first, block) = checked(2001);
    let r = c.call_with("Mutate", &first, Some(&block)).await;
    assert_eq!(answer(&r), (Some(true), Some(5)));
    // The flag is set: checked anew, the retry would fail.
    conn.table("n")
        .put(RowMutation::new("row").put("f", "flag", "set"))
        .await
        .unwrap();
    let r = c.call_with("Mutate", &first, Some(&block)).await;
    assert_eq!(
        answer(&r),
        (Some(true), Some(5)),
        "the retry answers its first outcome"
    );
    // A new nonce is a new call: its check fails now.
    let (second, block) = checked(2002);
    let r = c.call_with("Mutate", &second, Some(&block)).await;
    assert_eq!(answer(&r).0, Some(false));
    // The flag is gone: the retry of the failed one still answers false
    // and applies nothing.
    conn.table("n")
        .delete(RowMutation::new("row").delete_column(
            "f",
            "flag",
            ferrobase_types::LATEST_TIMESTAMP,
        ))
        .await
        .unwrap();
    let r = c.call_with("Mutate", &second, Some(&block)).await;
    assert_eq!(answer(&r).0, Some(false));
    let n = conn
        .table("n")
        .get(ferrobase_client::Get::new("row"))
        .await
        .unwrap();
    assert_eq!(
        n.value(b"f", b"n").map(|v| v[..].to_vec()),
        Some(5i64.to_be_bytes().to_vec())
    );
    server.stop().await.unwrap();
}
