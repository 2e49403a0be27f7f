//! Feeds arbitrary bytes to the ZooKeeper registry's decoder: as a whole
//! connection (handshake first) and as requests after a valid handshake,
//! and answers every request it reads against a cluster's znodes. It must
//! return errors, never panic, and never allocate from an unchecked length.
#![no_main]

use bytes::{BufMut, BytesMut};
use ferrobase_hbase_wire::names::ServerName;
use ferrobase_hbase_wire::zookeeper::znodes::{ClusterView, Znodes};
use ferrobase_hbase_wire::zookeeper::{self as zk, Request, ZkDecoder, ZkEvent};
use libfuzzer_sys::fuzz_target;

fn drain(d: &mut ZkDecoder, buf: &mut BytesMut, tree: &Znodes) {
    // Every event consumes bytes, so this ends.
    while let Ok(Some(event)) = d.decode(buf) {
        if let ZkEvent::Request(f) = event {
            let path = match &f.request {
                Request::Exists { path }
                | Request::GetData { path }
                | Request::GetChildren { path }
                | Request::GetChildren2 { path }
                | Request::Sync { path } => path.as_str(),
                _ => continue,
            };
            if let Some(node) = tree.get(path) {
                let mut out = BytesMut::new();
                zk::encode_reply(
                    &mut out,
                    f.xid,
                    1,
                    zk::ErrorCode::Ok,
                    &zk::Response::Data(&node.data, zk::Stat::default()),
                );
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let me = ServerName::new("127.0.0.1", 16020, 1);
    let tree = Znodes::new(
        "/hbase",
        ClusterView {
            cluster_id: "fuzz".into(),
            master: Some(me.clone()),
            master_info_port: 16010,
            meta: Some(me.clone()),
            region_servers: vec![me],
        },
    );
    drain(&mut ZkDecoder::default(), &mut BytesMut::from(data), &tree);

    let mut connected = BytesMut::new();
    connected.put_i32(44);
    connected.put_i32(0);
    connected.put_i64(0);
    connected.put_i32(30_000);
    connected.put_i64(0);
    connected.put_i32(16);
    connected.put_slice(&[0; 16]);
    connected.extend_from_slice(data);
    drain(&mut ZkDecoder::default(), &mut connected, &tree);
});
