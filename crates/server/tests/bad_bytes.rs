//! Garbage bytes or a half-sent request on the gRPC port: that connection
//! is dropped, the server keeps serving everyone else.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_client::Get;
use ferrobase_types::RowMutation;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(30), stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue, // a GOAWAY frame, then EOF
            Err(_) => return false,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_half_requests_do_not_hurt_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let t = conn.table("t");
    t.put(RowMutation::new("r").put("f", "q", "v"))
        .await
        .unwrap();

    // Garbage instead of the HTTP/2 preface.
    let mut garbage = TcpStream::connect(server.addr()).await.unwrap();
    garbage
        .write_all(b"\x00\xffGET / HTTP/9.9\r\n\r\n\x13\x37garbage garbage garbage")
        .await
        .unwrap();
    assert!(closed_by_server(&mut garbage).await);

    // A valid preface, then half a frame, left hanging.
    let mut half = TcpStream::connect(server.addr()).await.unwrap();
    half.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x40\x01\x04\x00\x00\x00\x01\x00\x00")
        .await
        .unwrap();

    // Others are still served while that connection hangs.
    let r = t.get(Get::new("r")).await.unwrap();
    assert!(!r.is_empty());
    let other =
        ferrobase_client::Connection::connect(&server.addr().to_string(), common::settings())
            .unwrap();
    other
        .table("t")
        .put(RowMutation::new("r2").put("f", "q", "v"))
        .await
        .unwrap();
    drop(half);

    // A bad frame after a valid preface is a protocol error: dropped.
    let mut bad_frame = TcpStream::connect(server.addr()).await.unwrap();
    bad_frame
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\xff\xff\xff\xff\xff\xff\xff\xff\xff")
        .await
        .unwrap();
    assert!(closed_by_server(&mut bad_frame).await);

    assert!(!t.get(Get::new("r2")).await.unwrap().is_empty());
    server.stop().await.unwrap();
}
