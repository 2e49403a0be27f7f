//! HBase's native RPC on the server's port: the 2.6 registry preamble, a
//! ClientMetaService connection, an unsupported call answered with HBase's
//! DoNotRetryIOException, garbage answered with a FatalConnectionException
//! on that connection alone, and gRPC still served on the same port.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::BytesMut;
use ferrobase_hbase_wire::frame::{self, AuthMethod, DEFAULT_MAX_FRAME, ResponseFrame};
use ferrobase_hbase_wire::pb;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads one response frame; `None` when the server closed first.
async fn read_response(s: &mut TcpStream, buf: &mut BytesMut) -> Option<ResponseFrame> {
    loop {
        if let Some(r) = frame::decode_response(buf, DEFAULT_MAX_FRAME).unwrap() {
            return Some(r);
        }
        if s.read_buf(buf).await.unwrap() == 0 {
            return None;
        }
    }
}

async fn client_meta_connection(addr: SocketAddr) -> TcpStream {
    connection(addr, "ClientMetaService").await
}

async fn connection(addr: SocketAddr, service: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let mut out = BytesMut::new();
    frame::encode_preamble(&mut out, AuthMethod::Simple);
    let header = pb::ConnectionHeader {
        service_name: Some(service.into()),
        cell_block_codec_class: Some("org.apache.hadoop.hbase.codec.KeyValueCodec".into()),
        ..Default::default()
    };
    frame::encode_connection_header(&mut out, &header).unwrap();
    s.write_all(&out).await.unwrap();
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_and_client_meta_service() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let addr = server.addr();

    // The 2.6 client's first connection: six bytes, one answer, closed.
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"Regist").await.unwrap();
    let mut buf = BytesMut::new();
    let r = read_response(&mut s, &mut buf).await.unwrap();
    assert_eq!(r.call_id(), frame::NO_CALL_ID);
    let id: pb::GetConnectionRegistryResponse = r.decode_message().unwrap();
    assert_eq!(
        id.cluster_id,
        ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID
    );
    assert!(read_response(&mut s, &mut buf).await.is_none());

    // A registry connection: calls answered by call id, pipelined.
    let mut s = client_meta_connection(addr).await;
    let mut out = BytesMut::new();
    frame::encode_request(
        &mut out,
        1,
        "GetClusterId",
        &pb::GetClusterIdRequest {},
        None,
    )
    .unwrap();
    frame::encode_request(
        &mut out,
        2,
        "GetActiveMaster",
        &pb::GetActiveMasterRequest {},
        None,
    )
    .unwrap();
    let locations = pb::GetMetaRegionLocationsRequest {};
    frame::encode_request(&mut out, 3, "GetMetaRegionLocations", &locations, None).unwrap();
    frame::encode_request(
        &mut out,
        4,
        "NoSuchMethod",
        &pb::GetClusterIdRequest {},
        None,
    )
    .unwrap();
    s.write_all(&out).await.unwrap();
    let mut buf = BytesMut::new();

    let r = read_response(&mut s, &mut buf).await.unwrap();
    assert_eq!(r.call_id(), 1);
    let m: pb::GetClusterIdResponse = r.decode_message().unwrap();
    assert_eq!(
        m.cluster_id.as_deref(),
        Some(ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID)
    );

    let r = read_response(&mut s, &mut buf).await.unwrap();
    assert_eq!(r.call_id(), 2);
    let m: pb::GetActiveMasterResponse = r.decode_message().unwrap();
    let master = m.server_name.unwrap();
    assert_eq!(master.port, Some(u32::from(addr.port())));
    assert_eq!(master.host_name, addr.ip().to_string());

    let r = read_response(&mut s, &mut buf).await.unwrap();
    assert_eq!(r.call_id(), 3);
    let m: pb::GetMetaRegionLocationsResponse = r.decode_message().unwrap();
    let meta = &m.meta_locations[0];
    assert_eq!(meta.region_info.table_name.qualifier, b"meta".as_slice());
    assert_eq!(meta.region_info.table_name.namespace, b"hbase".as_slice());

    let r = read_response(&mut s, &mut buf).await.unwrap();
    assert_eq!(r.call_id(), 4);
    let e = r.header.exception.unwrap();
    assert_eq!(
        e.exception_class_name.as_deref(),
        Some("org.apache.hadoop.hbase.DoNotRetryIOException")
    );
    assert!(e.stack_trace.unwrap_or_default().contains("NoSuchMethod"));

    // Garbage after the magic: this connection gets a fatal error and is
    // closed; the server goes on serving both protocols.
    let mut bad = TcpStream::connect(addr).await.unwrap();
    bad.write_all(b"HBas\x09\x50\xff\xff\xff\xff")
        .await
        .unwrap();
    let mut buf = BytesMut::new();
    let r = read_response(&mut bad, &mut buf).await.unwrap();
    let e = r.header.exception.unwrap();
    assert!(
        e.exception_class_name
            .as_deref()
            .is_some_and(|c| c.starts_with("org.apache.hadoop.hbase.ipc.")),
        "{e:?}"
    );
    assert!(read_response(&mut bad, &mut buf).await.is_none());

    let mut out = BytesMut::new();
    frame::encode_request(
        &mut out,
        9,
        "GetClusterId",
        &pb::GetClusterIdRequest {},
        None,
    )
    .unwrap();
    s.write_all(&out).await.unwrap();
    let mut buf = BytesMut::new();
    assert_eq!(read_response(&mut s, &mut buf).await.unwrap().call_id(), 9);
    assert!(conn.admin().list_tables().await.unwrap().is_empty());
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn master_service_lists_tables() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_namespace("ns1", &Default::default())
        .await
        .unwrap();
    for name in ["t1", "ns1:t2"] {
        conn.admin()
            .create_table(&common::table(name, &["f"]), &[])
            .await
            .unwrap();
    }
    let mut s = connection(server.addr(), "MasterService").await;
    let mut out = BytesMut::new();
    let running = pb::IsMasterRunningRequest {};
    frame::encode_request(&mut out, 1, "IsMasterRunning", &running, None).unwrap();
    let all = pb::GetTableNamesRequest::default();
    frame::encode_request(&mut out, 2, "GetTableNames", &all, None).unwrap();
    let ns1 = pb::GetTableNamesRequest {
        namespace: Some("ns1".into()),
        ..Default::default()
    };
    frame::encode_request(&mut out, 3, "GetTableNames", &ns1, None).unwrap();
    let system = pb::ListTableNamesByNamespaceRequest {
        namespace_name: "hbase".into(),
    };
    frame::encode_request(&mut out, 4, "ListTableNamesByNamespace", &system, None).unwrap();
    s.write_all(&out).await.unwrap();
    let mut buf = BytesMut::new();

    let r = read_response(&mut s, &mut buf).await.unwrap();
    let m: pb::IsMasterRunningResponse = r.decode_message().unwrap();
    assert!(m.is_master_running);

    let names = |r: ResponseFrame| {
        let m: pb::GetTableNamesResponse = r.decode_message().unwrap();
        let mut v: Vec<String> = m
            .table_names
            .iter()
            .map(|t| {
                format!(
                    "{}:{}",
                    String::from_utf8_lossy(&t.namespace),
                    String::from_utf8_lossy(&t.qualifier)
                )
            })
            .collect();
        v.sort();
        v
    };
    let r = read_response(&mut s, &mut buf).await.unwrap();
    assert_eq!(r.call_id(), 2);
    assert_eq!(names(r), ["default:t1", "ns1:t2"]);
    let r = read_response(&mut s, &mut buf).await.unwrap();
    assert_eq!(r.call_id(), 3);
    assert_eq!(names(r), ["ns1:t2"]);
    let r = read_response(&mut s, &mut buf).await.unwrap();
    assert_eq!(r.call_id(), 4);
    let m: pb::ListTableNamesByNamespaceResponse = r.decode_message().unwrap();
    assert_eq!(m.table_name.len(), 1);
    assert_eq!(m.table_name[0].qualifier, b"meta".as_slice());
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_exists_reads_meta_table_state() {
    use ferrobase_hbase_wire::RegionName;
    use ferrobase_hbase_wire::cellblock::decode_cells;
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(&common::table("t1", &["f"]), &[])
        .await
        .unwrap();
    let mut s = connection(server.addr(), "ClientService").await;
    let get = |row: &str| pb::GetRequest {
        region: RegionName::meta().specifier(),
        get: pb::Get {
            row: row.as_bytes().to_vec().into(),
            column: vec![pb::Column {
                family: "table".into(),
                qualifier: vec!["state".into()],
            }],
            ..Default::default()
        },
    };
    let mut out = BytesMut::new();
    frame::encode_request(&mut out, 1, "Get", &get("t1"), None).unwrap();
    frame::encode_request(&mut out, 2, "Get", &get("missing"), None).unwrap();
    s.write_all(&out).await.unwrap();
    let mut buf = BytesMut::new();

    let r = read_response(&mut s, &mut buf).await.unwrap();
    let m: pb::GetResponse = r.decode_message().unwrap();
    assert_eq!(m.result.unwrap().associated_cell_count, Some(1));
    let cells = decode_cells(&r.cell_block.unwrap()).unwrap();
    assert_eq!(&cells[0].row[..], b"t1");
    assert_eq!(&cells[0].qualifier[..], b"state");
    // A bare TableState (ENABLED = 0): HBase reads it without "PBUF".
    assert!(!cells[0].value.starts_with(b"PBUF"));
    assert_eq!(&cells[0].value[..], &[0x08, 0x00]);

    let r = read_response(&mut s, &mut buf).await.unwrap();
    let m: pb::GetResponse = r.decode_message().unwrap();
    assert_eq!(m.result.unwrap().associated_cell_count, Some(0));
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_table_with_split_keys() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let mut s = connection(server.addr(), "MasterService").await;
    let pair = |k: &str, v: &str| pb::BytesBytesPair {
        first: k.as_bytes().to_vec().into(),
        second: v.as_bytes().to_vec().into(),
    };
    let create = pb::CreateTableRequest {
        table_schema: pb::TableSchema {
            table_name: Some(pb::TableName {
                namespace: "default".into(),
                qualifier: "made".into(),
            }),
            column_families: vec![pb::ColumnFamilySchema {
                name: "f".into(),
                attributes: vec![pair("VERSIONS", "3"), pair("BLOOMFILTER", "ROW")],
                ..Default::default()
            }],
            ..Default::default()
        },
        split_keys: vec!["m".into()],
        ..Default::default()
    };
    let mut out = BytesMut::new();
    frame::encode_request(&mut out, 1, "CreateTable", &create, None).unwrap();
    frame::encode_request(&mut out, 2, "CreateTable", &create, None).unwrap();
    s.write_all(&out).await.unwrap();
    let mut buf = BytesMut::new();
    // DDL runs off the connection: answers come as they finish, matched
    // by call id, and one of the two creates wins.
    let a = read_response(&mut s, &mut buf).await.unwrap();
    let b = read_response(&mut s, &mut buf).await.unwrap();
    let mut ids = [a.call_id(), b.call_id()];
    ids.sort_unstable();
    assert_eq!(ids, [1, 2]);
    let (r, lost) = if a.header.exception.is_none() {
        (a, b)
    } else {
        (b, a)
    };
    let m: pb::CreateTableResponse = r.decode_message().unwrap();
    let proc_id = m.proc_id.unwrap();
    let e = lost.header.exception.unwrap();
    assert_eq!(
        e.exception_class_name.as_deref(),
        Some("org.apache.hadoop.hbase.TableExistsException")
    );

    let mut out = BytesMut::new();
    let poll = pb::GetProcedureResultRequest { proc_id };
    frame::encode_request(&mut out, 3, "getProcedureResult", &poll, None).unwrap();
    s.write_all(&out).await.unwrap();
    let r = read_response(&mut s, &mut buf).await.unwrap();
    let m: pb::GetProcedureResultResponse = r.decode_message().unwrap();
    assert_eq!(
        m.state,
        pb::get_procedure_result_response::State::Finished as i32
    );

    let d = conn.admin().describe("made").await.unwrap();
    assert_eq!(d.regions.len(), 2);
    assert_eq!(d.descriptor.families[0].versions, 3);
    server.stop().await.unwrap();
}
