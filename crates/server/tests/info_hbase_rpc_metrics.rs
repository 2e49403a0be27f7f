//! HBase's native RPC is counted per operation (`protocol="hbase"`): a
//! Java-client-shaped Put, Increment, Get, Multi and Scan each move their
//! own counter in `/metrics`, and the Put is not counted as gRPC.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::{Bytes, BytesMut};
use common::http_get;
use ferrobase_hbase_wire::cellblock::CellCodec;
use ferrobase_hbase_wire::frame::{self, AuthMethod, DEFAULT_MAX_FRAME, ResponseFrame};
use ferrobase_hbase_wire::names::{RegionName, TableName};
use ferrobase_hbase_wire::pb;
use ferrobase_server::info_server::{InfoParts, InfoServer};
use prometheus_parse::{Scrape, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn call<M: prost::Message>(
    s: &mut TcpStream,
    buf: &mut BytesMut,
    id: u32,
    method: &str,
    req: &M,
) -> ResponseFrame {
    let mut out = BytesMut::new();
    frame::encode_request(&mut out, id, method, req, None).unwrap();
    s.write_all(&out).await.unwrap();
    loop {
        if let Some(r) = frame::decode_response(buf, DEFAULT_MAX_FRAME).unwrap() {
            assert_eq!(r.call_id(), id);
            return r;
        }
        assert!(s.read_buf(buf).await.unwrap() > 0);
    }
}

fn count(s: &Scrape, protocol: &str, op: &str) -> f64 {
    s.samples
        .iter()
        .filter(|x| x.metric == "hbase_regionserver_rpc_requests_total")
        .filter(|x| x.labels.get("protocol") == Some(protocol) && x.labels.get("op") == Some(op))
        .map(|x| match x.value {
            Value::Counter(v) | Value::Untyped(v) => v,
            _ => 0.0,
        })
        .sum()
}

fn put(
    region: &RegionName,
    row: &str,
    kind: pb::mutation_proto::MutationType,
    value: Bytes,
) -> pb::MutateRequest {
    pb::MutateRequest {
        region: region.specifier(),
        mutation: pb::MutationProto {
            row: Some(Bytes::copy_from_slice(row.as_bytes())),
            mutate_type: Some(kind as i32),
            column_value: vec![pb::mutation_proto::ColumnValue {
                family: Bytes::from_static(b"f"),
                qualifier_value: vec![pb::mutation_proto::column_value::QualifierValue {
                    qualifier: Some(Bytes::from_static(b"c")),
                    value: Some(value),
                    ..Default::default()
                }],
            }],
            ..Default::default()
        },
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hbase_rpc_calls_are_counted_by_operation() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(&common::table("h", &["f"]), &[])
        .await
        .unwrap();
    let info = InfoServer::start(
        "127.0.0.1:0".parse().unwrap(),
        InfoParts {
            master: Some(server.master().clone()),
            region_server: Some(server.region_server().clone()),
            role: "standalone",
        },
        None,
    )
    .await
    .unwrap();
    let (_, locations) = server.master().table_regions("h").unwrap();
    let region = RegionName::new(&TableName::parse("h").unwrap(), b"", locations[0].region_id);

    let mut s = TcpStream::connect(server.addr()).await.unwrap();
    let mut out = BytesMut::new();
    frame::encode_preamble(&mut out, AuthMethod::Simple);
    let header = pb::ConnectionHeader {
        service_name: Some("ClientService".into()),
        cell_block_codec_class: Some(CellCodec::KeyValue.class_name().into()),
        ..Default::default()
    };
    frame::encode_connection_header(&mut out, &header).unwrap();
    s.write_all(&out).await.unwrap();
    let mut buf = BytesMut::new();

    use pb::mutation_proto::MutationType;
    let r = call(
        &mut s,
        &mut buf,
        1,
        "Mutate",
        &put(&region, "r", MutationType::Put, Bytes::from_static(b"v")),
    )
    .await;
    let m: pb::MutateResponse = r.decode_message().unwrap();
    assert_eq!(m.processed, Some(true));
    let one = Bytes::copy_from_slice(&1i64.to_be_bytes());
    let r = call(
        &mut s,
        &mut buf,
        2,
        "Mutate",
        &put(&region, "n", MutationType::Increment, one),
    )
    .await;
    r.decode_message::<pb::MutateResponse>().unwrap();
    let get = pb::GetRequest {
        region: region.specifier(),
        get: pb::Get {
            row: Bytes::from_static(b"r"),
            ..Default::default()
        },
    };
    let r = call(&mut s, &mut buf, 3, "Get", &get).await;
    let g: pb::GetResponse = r.decode_message().unwrap();
    assert!(g.result.is_some());
    let scan = pb::ScanRequest {
        region: Some(region.specifier()),
        scan: Some(pb::Scan::default()),
        number_of_rows: Some(10),
        close_scanner: Some(true),
        ..Default::default()
    };
    call(&mut s, &mut buf, 4, "Scan", &scan).await;

    let (status, body) = http_get(info.addr(), "/metrics").await;
    assert_eq!(status, 200);
    let m = Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).unwrap();
    assert_eq!(count(&m, "hbase", "put"), 1.0);
    assert_eq!(count(&m, "hbase", "increment"), 1.0);
    assert_eq!(count(&m, "hbase", "get"), 1.0);
    assert_eq!(count(&m, "hbase", "scan"), 1.0);
    assert_eq!(count(&m, "hbase", "append"), 0.0);
    assert_eq!(count(&m, "grpc", "put"), 0.0);
    assert_eq!(count(&m, "grpc", "mutate"), 0.0);

    drop(s);
    info.stop().await;
    server.stop().await.unwrap();
}
