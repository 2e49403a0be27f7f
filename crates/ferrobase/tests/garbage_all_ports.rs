//! Garbage on every port at once, from many connections, while real
//! clients keep working: a `ferrobase standalone` process with its RPC port
//! (gRPC and HBase RPC), Thrift gateway, info port and ZooKeeper registry
//! endpoint. Each garbage
//! connection sends random bytes, or a real protocol's opening followed by
//! random bytes, then goes away. Meanwhile a gRPC client writes and reads
//! rows, and HBase RPC, Thrift, HTTP and ZooKeeper clients make well-formed calls:
//! every one of them must succeed, the process must still run, and its log
//! must hold no panic. Seeded (`FERROBASE_GARBAGE_SEED`), so a failure
//! replays.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::BytesMut;
use ferrobase_client::{Connection, Get};
use ferrobase_hbase_wire::frame::{self, AuthMethod, DEFAULT_MAX_FRAME};
use ferrobase_hbase_wire::pb;
use ferrobase_types::{FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Garbage connections in all, and how many run at once.
const GARBAGE_CONNECTIONS: usize = 400;
const GARBAGE_PARALLEL: usize = 16;
/// Rounds of well-formed calls made while the garbage flows.
const CLIENT_ROUNDS: usize = 120;
/// Only a guard against a hung server; no assertion depends on timing.
const HANG_GUARD: Duration = Duration::from_secs(60);

struct Server {
    child: Child,
    rpc: String,
    thrift: String,
    info: String,
    zookeeper: String,
    log: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &std::path::Path) -> Server {
    let log = dir.join("server.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(["standalone", "--port", "0", "--thrift-port", "0"])
        .args(["--info-port", "0", "--zookeeper-port", "0", "--data-dir"])
        .arg(dir.join("data"))
        .args(["--set", "ferrobase.memory.size=268435456"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut server = Server {
        child,
        rpc: String::new(),
        thrift: String::new(),
        info: String::new(),
        zookeeper: String::new(),
        log,
    };
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let line = line.trim();
        if let Some(a) = line.strip_prefix("thrift gateway: ") {
            server.thrift = a.to_string();
        } else if let Some(a) = line.strip_prefix("ZooKeeper registry (hbase.zookeeper.quorum): ") {
            server.zookeeper = a.to_string();
        } else if let Some((_, a)) = line.split_once("http://") {
            server.info = a.trim_end_matches('/').to_string();
        } else if line.contains("listening on") {
            server.rpc = line.rsplit(' ').next().unwrap().to_string();
        }
        let ports = [&server.rpc, &server.thrift, &server.info, &server.zookeeper];
        if ports.iter().all(|p| !p.is_empty()) {
            break;
        }
    }
    assert!(
        [&server.rpc, &server.thrift, &server.info, &server.zookeeper]
            .iter()
            .all(|p| !p.is_empty()),
        "the server did not print its four ports"
    );
    server
}

/// One garbage payload for a port: random bytes, or a protocol's real
/// opening with random bytes after it.
fn garbage(rng: &mut ChaCha8Rng, port: usize) -> Vec<u8> {
    let mut tail = vec![0u8; rng.random_range(0..4096)];
    rng.fill(&mut tail[..]);
    let head: &[u8] = match (port, rng.random_range(0..4)) {
        (_, 0) => b"",
        // RPC port: HBase RPC preambles, the HTTP/2 preface.
        (0, 1) => b"HBas\x00\x50",
        (0, 2) => b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        (0, _) => b"HBas\x00\x50\x00\x00\x00\x10",
        // Thrift: a binary-protocol call header, a frame length.
        (1, 1) => b"\x80\x01\x00\x01\x00\x00\x00\x0dgetTableNames",
        (1, 2) => b"\x00\x00\x01\x00",
        (1, _) => b"\x82\x21\x01",
        // ZooKeeper: a handshake's start, a 2 GB length.
        (3, 1) => b"\x00\x00\x00\x2d\x00\x00\x00\x00",
        (3, 2) => b"\x7f\xff\xff\xff",
        (3, _) => ZK_HANDSHAKE,
        // Info port: HTTP requests gone wrong.
        (_, 1) => b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n",
        (_, 2) => b"GET /table.jsp?name=%ff%00 HTTP/1.1\r\n",
        (_, _) => b"POST /jmx HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    };
    let mut out = head.to_vec();
    out.extend_from_slice(&tail);
    out
}

/// Sends `bytes` and reads whatever comes back for a moment, then drops
/// the connection (half of them without reading: a vanished client).
async fn send_garbage(addr: &str, bytes: &[u8], read_back: bool) {
    let Ok(mut s) = TcpStream::connect(addr).await else {
        panic!("could not connect to {addr}: the server stopped accepting");
    };
    // The server may close early; a write error is one of its answers.
    let _ = s.write_all(bytes).await;
    if read_back {
        let mut buf = [0u8; 4096];
        let _ = tokio::time::timeout(Duration::from_millis(200), s.read(&mut buf)).await;
    }
}

/// A well-formed HBase RPC call on a fresh connection: GetClusterId.
async fn hbase_rpc_call(addr: &str) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let mut out = BytesMut::new();
    frame::encode_preamble(&mut out, AuthMethod::Simple);
    let header = pb::ConnectionHeader {
        service_name: Some("ClientMetaService".into()),
        cell_block_codec_class: Some("org.apache.hadoop.hbase.codec.KeyValueCodec".into()),
        ..Default::default()
    };
    frame::encode_connection_header(&mut out, &header).unwrap();
    frame::encode_request(
        &mut out,
        7,
        "GetClusterId",
        &pb::GetClusterIdRequest {},
        None,
    )
    .unwrap();
    s.write_all(&out).await.unwrap();
    let mut buf = BytesMut::new();
    let r = loop {
        if let Some(r) = frame::decode_response(&mut buf, DEFAULT_MAX_FRAME).unwrap() {
            break r;
        }
        assert!(s.read_buf(&mut buf).await.unwrap() > 0, "HBase RPC closed");
    };
    assert_eq!(r.call_id(), 7);
    let m: pb::GetClusterIdResponse = r.decode_message().unwrap();
    assert_eq!(
        m.cluster_id.as_deref(),
        Some(ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID)
    );
}

/// A well-formed Thrift call: getTableNames answers a reply naming `t`.
async fn thrift_call(addr: &str) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"\x80\x01\x00\x01\x00\x00\x00\x0dgetTableNames\x00\x00\x00\x05\x00")
        .await
        .unwrap();
    let mut reply = Vec::new();
    let mut buf = [0u8; 1024];
    // The reply is a list holding "t"; read until it has arrived.
    while !reply.windows(5).any(|w| w == b"\x00\x00\x00\x01t") {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "Thrift closed before replying: {reply:?}");
        reply.extend_from_slice(&buf[..n]);
    }
    assert!(reply.starts_with(b"\x80\x01\x00\x02"), "{reply:?}");
}

/// A ZooKeeper client's session handshake (protocol 0, a 30 s timeout, no
/// session, a 16-byte password, not read-only).
const ZK_HANDSHAKE: &[u8] = b"\x00\x00\x00\x2d\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\
\x00\x00\x75\x30\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10\
\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00";

/// A well-formed ZooKeeper session: the handshake, then `getData` of the
/// master znode answered with no error and a `PBUF` value.
async fn zookeeper_call(addr: &str) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let path = b"/hbase/master";
    let mut req = BytesMut::from(ZK_HANDSHAKE);
    let body_len = 8 + 4 + path.len() + 1;
    req.extend_from_slice(&(body_len as u32).to_be_bytes());
    req.extend_from_slice(&1u32.to_be_bytes()); // xid
    req.extend_from_slice(&4u32.to_be_bytes()); // getData
    req.extend_from_slice(&(path.len() as u32).to_be_bytes());
    req.extend_from_slice(path);
    req.extend_from_slice(&[0]);
    s.write_all(&req).await.unwrap();
    // The handshake's answer, then the reply: xid 1, zxid, err 0, data.
    let mut reply = Vec::new();
    let mut buf = [0u8; 1024];
    let handshake_answer = 4 + 37;
    while reply.len() < handshake_answer + 4 + 16 + 8 {
        let n = s.read(&mut buf).await.unwrap();
        assert!(n > 0, "ZooKeeper endpoint closed: {reply:?}");
        reply.extend_from_slice(&buf[..n]);
    }
    let r = &reply[handshake_answer..];
    assert_eq!(&r[4..8], &1u32.to_be_bytes(), "xid");
    assert_eq!(&r[16..20], &0u32.to_be_bytes(), "err");
    assert_eq!(&r[24..28], b"PBUF");
}

/// A well-formed HTTP call: `GET /metrics` answers 200.
async fn http_call(addr: &str) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).await.unwrap();
    assert!(
        reply.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&reply[..reply.len().min(200)])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_every_port_while_clients_work() {
    let seed: u64 = std::env::var("FERROBASE_GARBAGE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6761_7262);
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path());
    let settings = Settings::default();
    let conn = Connection::connect(&server.rpc, settings).unwrap();
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    conn.admin().create_table(&table, &[]).await.unwrap();

    let ports = [
        server.rpc.clone(),
        server.thrift.clone(),
        server.info.clone(),
        server.zookeeper.clone(),
    ];
    let garbage_task = {
        let ports = ports.clone();
        tokio::spawn(async move {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut running = tokio::task::JoinSet::new();
            for i in 0..GARBAGE_CONNECTIONS {
                let port = rng.random_range(0..ports.len());
                let bytes = garbage(&mut rng, port);
                let addr = ports[port].clone();
                let read_back = i % 2 == 0;
                if running.len() >= GARBAGE_PARALLEL {
                    running.join_next().await.unwrap().unwrap();
                }
                running.spawn(async move { send_garbage(&addr, &bytes, read_back).await });
            }
            while let Some(r) = running.join_next().await {
                r.unwrap();
            }
        })
    };

    let t = conn.table("t");
    let clients = async {
        for i in 0..CLIENT_ROUNDS {
            let row = format!("row{i:05}");
            t.put(RowMutation::new(row.clone()).put("f", "q", format!("v{i}")))
                .await
                .unwrap();
            let got = t.get(Get::new(row.clone())).await.unwrap();
            assert_eq!(
                got.value(b"f", b"q").map(|v| v.to_vec()),
                Some(format!("v{i}").into_bytes())
            );
            match i % 4 {
                0 => hbase_rpc_call(&ports[0]).await,
                1 => thrift_call(&ports[1]).await,
                2 => http_call(&ports[2]).await,
                _ => zookeeper_call(&ports[3]).await,
            }
        }
    };
    tokio::time::timeout(HANG_GUARD * 5, async {
        clients.await;
        garbage_task.await.unwrap();
    })
    .await
    .expect("the server hung under garbage");

    // Still alive, still answering on every port, every row there.
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the server exited"
    );
    hbase_rpc_call(&ports[0]).await;
    thrift_call(&ports[1]).await;
    http_call(&ports[2]).await;
    zookeeper_call(&ports[3]).await;
    for i in 0..CLIENT_ROUNDS {
        let row = format!("row{i:05}");
        assert!(
            !t.get(Get::new(row.clone())).await.unwrap().is_empty(),
            "{row} lost"
        );
    }
    let _ = server.child.kill();
    let _ = server.child.wait();
    let log = std::fs::read_to_string(&server.log).unwrap_or_default();
    assert!(!log.contains("panicked"), "the server panicked:\n{log}");
}
