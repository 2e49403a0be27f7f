//! The ZooKeeper registry endpoint in front of a standalone server, spoken
//! to as a ZooKeeper client speaks (handshake, getChildren, getData,
//! exists, ping, closeSession) over real TCP: the znodes name this server
//! as master and meta, writes are refused as read-only, unknown ops as
//! unimplemented, and bytes that are not ZooKeeper's close only their own
//! connection.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::{Buf, BufMut, BytesMut};
use ferrobase_hbase_wire::names::strip_pb_magic;
use ferrobase_hbase_wire::pb;
use ferrobase_server::zookeeper_registry::{RegistrySource, ZooKeeperRegistry};
use prost::Message;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const NO_NODE: i32 = -101;
const NOT_READ_ONLY: i32 = -119;
const UNIMPLEMENTED: i32 = -6;

struct ZkClient {
    s: TcpStream,
    xid: i32,
}

impl ZkClient {
    /// Connects and opens a session; returns the negotiated timeout too.
    async fn connect(addr: SocketAddr, timeout_ms: i32) -> (ZkClient, i32, i64) {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let mut body = BytesMut::new();
        body.put_i32(0);
        body.put_i64(0);
        body.put_i32(timeout_ms);
        body.put_i64(0);
        body.put_i32(16);
        body.put_slice(&[0; 16]);
        body.put_u8(0);
        send(&mut s, &body).await;
        let mut r = recv(&mut s).await.unwrap();
        assert_eq!(r.get_i32(), 0, "protocol version");
        let timeout = r.get_i32();
        let session = r.get_i64();
        assert_eq!(r.get_i32(), 16, "password length");
        r.advance(16);
        assert_eq!(r.get_u8(), 0, "read-only flag");
        (ZkClient { s, xid: 0 }, timeout, session)
    }

    /// Sends op with a path record; returns (err, response record).
    async fn call(&mut self, op: i32, path: Option<&str>) -> (i32, BytesMut) {
        self.xid += 1;
        let mut body = BytesMut::new();
        body.put_i32(self.xid);
        body.put_i32(op);
        if let Some(p) = path {
            body.put_i32(p.len() as i32);
            body.put_slice(p.as_bytes());
            body.put_u8(0);
        }
        send(&mut self.s, &body).await;
        let mut r = recv(&mut self.s).await.unwrap();
        assert_eq!(r.get_i32(), self.xid, "xid echoed");
        let _zxid = r.get_i64();
        let err = r.get_i32();
        (err, r)
    }

    async fn children(&mut self, path: &str) -> Vec<String> {
        let (err, mut r) = self.call(8, Some(path)).await;
        assert_eq!(err, 0, "getChildren {path}");
        let n = r.get_i32();
        (0..n)
            .map(|_| {
                let len = r.get_i32() as usize;
                String::from_utf8(r.split_to(len).to_vec()).unwrap()
            })
            .collect()
    }

    async fn data(&mut self, path: &str) -> Vec<u8> {
        let (err, mut r) = self.call(4, Some(path)).await;
        assert_eq!(err, 0, "getData {path}");
        let len = r.get_i32() as usize;
        let data = r.split_to(len).to_vec();
        assert_eq!(r.len(), 68, "a Stat follows the data");
        data
    }
}

async fn send(s: &mut TcpStream, body: &[u8]) {
    let mut f = BytesMut::new();
    f.put_i32(body.len() as i32);
    f.put_slice(body);
    s.write_all(&f).await.unwrap();
}

/// One frame, or `None` once the server closed the connection.
async fn recv(s: &mut TcpStream) -> Option<BytesMut> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).await.ok()?;
    let mut body = vec![0u8; i32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).await.ok()?;
    Some(BytesMut::from(&body[..]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hbase_clients_find_the_cluster_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _conn) = common::start_on(dir.path(), common::settings()).await;
    let zk = ZooKeeperRegistry::start(
        "127.0.0.1:0".parse().unwrap(),
        RegistrySource {
            hbase: server.hbase_rpc().clone(),
            parent: "/hbase".into(),
            info_port: 16010,
        },
    )
    .await
    .unwrap();

    // The session timeout is clamped as a ZooKeeper server clamps it.
    let (mut c, timeout, session) = ZkClient::connect(zk.addr(), 1_000).await;
    assert_eq!(timeout, 4_000);
    assert_ne!(session, 0);
    let (_, timeout, other) = ZkClient::connect(zk.addr(), 90_000).await;
    assert_eq!(timeout, 40_000);
    assert_ne!(other, session, "each session has its own id");

    assert_eq!(c.children("/").await, vec!["hbase"]);
    assert_eq!(
        c.children("/hbase").await,
        vec![
            "backup-masters",
            "hbaseid",
            "master",
            "meta-region-server",
            "rs"
        ]
    );
    let port = u32::from(server.addr().port());
    let master = c.data("/hbase/master").await;
    let master = pb::Master::decode(strip_pb_magic(&master).unwrap()).unwrap();
    assert_eq!(master.master.port, Some(port));
    assert_eq!(master.info_port, Some(16010));
    let meta = c.data("/hbase/meta-region-server").await;
    let meta = pb::MetaRegionServer::decode(strip_pb_magic(&meta).unwrap()).unwrap();
    assert_eq!(meta.server.port, Some(port));
    assert_eq!(meta.state, Some(pb::region_state::State::Open as i32));
    let id = c.data("/hbase/hbaseid").await;
    let id = pb::ClusterId::decode(strip_pb_magic(&id).unwrap()).unwrap();
    assert_eq!(id.cluster_id, server.hbase_rpc().cluster_id);
    let rs = c.children("/hbase/rs").await;
    assert_eq!(rs.len(), 1);
    assert!(rs[0].starts_with(&format!("127.0.0.1,{port},")), "{rs:?}");

    // exists: a Stat for a znode, NONODE for none.
    let (err, r) = c.call(3, Some("/hbase/master")).await;
    assert_eq!((err, r.len()), (0, 68));
    let (err, r) = c.call(3, Some("/hbase/table/t")).await;
    assert_eq!((err, r.len()), (NO_NODE, 0));
    assert_eq!(c.call(4, Some("/elsewhere")).await.0, NO_NODE);
    // Writes are refused as to a read-only server; other ops unimplemented.
    assert_eq!(c.call(1, Some("/hbase/mine")).await.0, NOT_READ_ONLY);
    assert_eq!(c.call(2, Some("/hbase/master")).await.0, NOT_READ_ONLY);
    assert_eq!(c.call(6, Some("/hbase")).await.0, UNIMPLEMENTED);
    // sync answers the path.
    let (err, mut r) = c.call(9, Some("/hbase")).await;
    assert_eq!(err, 0);
    assert_eq!(r.get_i32(), 6);

    // A ping, then closeSession: answered, then the connection closes.
    let mut ping = BytesMut::new();
    ping.put_i32(-2);
    ping.put_i32(11);
    send(&mut c.s, &ping).await;
    let mut r = recv(&mut c.s).await.unwrap();
    assert_eq!(r.get_i32(), -2);
    assert_eq!(c.call(-11, None).await.0, 0);
    assert!(recv(&mut c.s).await.is_none(), "closed after closeSession");

    // Garbage: a 2 GB length, a bad protocol version, HTTP. Each closes its
    // own connection without an answer; the endpoint keeps serving.
    for bad in [
        &[0x7f, 0xff, 0xff, 0xff][..],
        &[0, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0, 0][..],
        b"GET / HTTP/1.1\r\n\r\n",
    ] {
        let mut s = TcpStream::connect(zk.addr()).await.unwrap();
        s.write_all(bad).await.unwrap();
        assert!(recv(&mut s).await.is_none(), "{bad:?} was answered");
    }
    let (mut c, _, _) = ZkClient::connect(zk.addr(), 30_000).await;
    assert!(!c.data("/hbase/master").await.is_empty());

    zk.stop().await;
    server.stop().await.unwrap();
}
