use super::znodes::{ClusterView, Znodes};
use super::*;
use crate::names::{ServerName, strip_pb_magic};
use crate::pb;
use bytes::BufMut;
use prost::Message;

fn frame(body: &[u8]) -> BytesMut {
    let mut b = BytesMut::new();
    b.put_i32(body.len() as i32);
    b.put_slice(body);
    b
}

fn connect_body(read_only: Option<bool>) -> Vec<u8> {
    let mut b = Vec::new();
    b.put_i32(0);
    b.put_i64(7);
    b.put_i32(30_000);
    b.put_i64(0);
    b.put_i32(16);
    b.put_slice(&[0u8; 16]);
    if let Some(r) = read_only {
        b.put_u8(u8::from(r));
    }
    b
}

fn request_body(xid: i32, op: i32, path: Option<&str>, watch: bool) -> Vec<u8> {
    let mut b = Vec::new();
    b.put_i32(xid);
    b.put_i32(op);
    if let Some(p) = path {
        b.put_i32(p.len() as i32);
        b.put_slice(p.as_bytes());
        b.put_u8(u8::from(watch));
    }
    b
}

#[test]
fn reads_a_handshake_then_requests_split_anywhere() {
    let mut stream = frame(&connect_body(Some(false)));
    stream.extend_from_slice(&frame(&request_body(
        1,
        op::GET_DATA,
        Some("/hbase/master"),
        false,
    )));
    stream.extend_from_slice(&frame(&request_body(PING_XID, op::PING, None, false)));
    stream.extend_from_slice(&frame(&request_body(
        2,
        op::GET_CHILDREN,
        Some("/hbase"),
        true,
    )));
    stream.extend_from_slice(&frame(&request_body(3, op::CLOSE_SESSION, None, false)));
    // Fed one byte at a time: nothing is decoded before a frame is whole.
    let mut dec = ZkDecoder::default();
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    for b in stream.iter() {
        buf.put_u8(*b);
        while let Some(e) = dec.decode(&mut buf).unwrap() {
            events.push(e);
        }
    }
    assert_eq!(events.len(), 5);
    match &events[0] {
        ZkEvent::Connect(c) => {
            assert_eq!(c.timeout_ms, 30_000);
            assert_eq!(c.last_zxid_seen, 7);
            assert_eq!(c.password.len(), 16);
            assert!(!c.read_only);
        }
        other => panic!("expected the handshake, got {other:?}"),
    }
    assert_eq!(
        events[1],
        ZkEvent::Request(RequestFrame {
            xid: 1,
            request: Request::GetData {
                path: "/hbase/master".into()
            }
        })
    );
    assert_eq!(
        events[2],
        ZkEvent::Request(RequestFrame {
            xid: PING_XID,
            request: Request::Ping
        })
    );
    assert!(matches!(
        &events[3],
        ZkEvent::Request(RequestFrame { xid: 2, request: Request::GetChildren { path } }) if path == "/hbase"
    ));
    assert!(matches!(
        &events[4],
        ZkEvent::Request(RequestFrame {
            request: Request::CloseSession,
            ..
        })
    ));
    assert!(buf.is_empty());
}

#[test]
fn a_handshake_without_the_read_only_byte_is_accepted() {
    let mut dec = ZkDecoder::default();
    let mut buf = frame(&connect_body(None));
    assert!(matches!(
        dec.decode(&mut buf).unwrap(),
        Some(ZkEvent::Connect(ConnectRequest {
            read_only: false,
            ..
        }))
    ));
}

#[test]
fn bad_lengths_are_refused_before_allocating() {
    for len in [-1i32, i32::MIN, (MAX_FRAME + 1) as i32, i32::MAX] {
        let mut buf = BytesMut::new();
        buf.put_i32(len);
        let err = ZkDecoder::default().decode(&mut buf).unwrap_err();
        assert!(
            matches!(err, ZkError::BadFrameLength { .. }),
            "{len}: {err}"
        );
        assert!(err.to_string().contains("jute.maxbuffer"));
    }
}

#[test]
fn truncated_and_malformed_records_name_the_field() {
    // A handshake cut inside the password.
    let mut body = connect_body(None);
    body.truncate(body.len() - 4);
    let err = ZkDecoder::default().decode(&mut frame(&body)).unwrap_err();
    assert!(err.to_string().contains("session password"), "{err}");

    // A path whose length runs past the frame, a null path, a non-UTF-8 path.
    let connected = || {
        let mut d = ZkDecoder::default();
        d.decode(&mut frame(&connect_body(Some(false)))).unwrap();
        d
    };
    let mut body = request_body(1, op::GET_DATA, Some("/hbase"), false);
    body.truncate(body.len() - 3);
    let err = connected().decode(&mut frame(&body)).unwrap_err();
    assert!(
        matches!(err, ZkError::Truncated { what: "path", .. }),
        "{err}"
    );

    let mut body = request_body(1, op::EXISTS, None, false);
    body.put_i32(-1);
    let err = connected().decode(&mut frame(&body)).unwrap_err();
    assert_eq!(err, ZkError::BadString { what: "path" });

    let mut body = request_body(1, op::EXISTS, None, false);
    body.put_i32(2);
    body.put_slice(&[0xff, 0xfe]);
    assert!(connected().decode(&mut frame(&body)).is_err());

    // Another protocol version.
    let mut body = connect_body(None);
    body[3] = 1;
    assert_eq!(
        ZkDecoder::default().decode(&mut frame(&body)).unwrap_err(),
        ZkError::BadProtocolVersion { version: 1 }
    );
}

#[test]
fn unknown_ops_are_passed_up_without_their_record() {
    let mut d = ZkDecoder::default();
    d.decode(&mut frame(&connect_body(None))).unwrap();
    let mut body = request_body(5, 1, Some("/hbase/x"), false); // create
    body.put_slice(b"more of a create record");
    assert_eq!(
        d.decode(&mut frame(&body)).unwrap(),
        Some(ZkEvent::Request(RequestFrame {
            xid: 5,
            request: Request::Other { op: 1 }
        }))
    );
}

/// Golden bytes: the answers' layout is ZooKeeper's, byte for byte.
#[test]
fn answers_have_zookeepers_layout() {
    let mut out = BytesMut::new();
    encode_connect_response(&mut out, 30_000, 0x0102_0304_0506_0708, &[9; 16]);
    let mut want = vec![0, 0, 0, 37, 0, 0, 0, 0, 0, 0, 0x75, 0x30];
    want.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 16]);
    want.extend_from_slice(&[9; 16]);
    want.push(0);
    assert_eq!(&out[..], &want[..]);

    let mut out = BytesMut::new();
    encode_reply(&mut out, 4, 1, ErrorCode::NoNode, &Response::Empty);
    assert_eq!(
        &out[..],
        &[
            0, 0, 0, 16, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0x9b
        ]
    );

    let stat = Stat {
        data_length: 3,
        num_children: 0,
        ..Stat::default()
    };
    let mut out = BytesMut::new();
    encode_reply(&mut out, 6, 1, ErrorCode::Ok, &Response::Data(b"abc", stat));
    // header 16 + buffer 4 + 3 + stat 68
    assert_eq!(out.len(), 4 + 16 + 7 + 68);
    assert_eq!(&out[20..27], &[0, 0, 0, 3, b'a', b'b', b'c']);
    // dataLength sits 52 bytes into the stat.
    assert_eq!(&out[27 + 52..27 + 56], &[0, 0, 0, 3]);

    let kids = vec!["a".to_string(), "bc".to_string()];
    let mut out = BytesMut::new();
    encode_reply(&mut out, 7, 1, ErrorCode::Ok, &Response::Children(&kids));
    assert_eq!(
        &out[20..],
        &[0, 0, 0, 2, 0, 0, 0, 1, b'a', 0, 0, 0, 2, b'b', b'c']
    );
    // An error carries no record even when one is given.
    let mut out = BytesMut::new();
    encode_reply(
        &mut out,
        7,
        1,
        ErrorCode::Unimplemented,
        &Response::Children(&kids),
    );
    assert_eq!(out.len(), 20);
}

fn view() -> ClusterView {
    let sn = ServerName::new("127.0.0.1", 16020, 42);
    ClusterView {
        cluster_id: "c1".into(),
        master: Some(sn.clone()),
        master_info_port: 16010,
        meta: Some(sn.clone()),
        region_servers: vec![sn, ServerName::new("127.0.0.2", 16020, 43)],
    }
}

#[test]
fn the_tree_holds_what_hbase_clients_read() {
    let z = Znodes::new("/hbase", view());
    let root = z.get("/").unwrap();
    assert_eq!(root.children, vec!["hbase"]);
    let parent = z.get("/hbase").unwrap();
    assert_eq!(
        parent.children,
        vec![
            "backup-masters",
            "hbaseid",
            "master",
            "meta-region-server",
            "rs"
        ]
    );
    let id = z.get("/hbase/hbaseid").unwrap();
    let id = pb::ClusterId::decode(strip_pb_magic(&id.data).unwrap()).unwrap();
    assert_eq!(id.cluster_id, "c1");
    let m = z.get("/hbase/master").unwrap();
    let m = pb::Master::decode(strip_pb_magic(&m.data).unwrap()).unwrap();
    assert_eq!(m.master.host_name, "127.0.0.1");
    assert_eq!(m.master.port, Some(16020));
    assert_eq!(m.master.start_code, Some(42));
    assert_eq!(m.info_port, Some(16010));
    let meta = z.get("/hbase/meta-region-server/").unwrap();
    let meta = pb::MetaRegionServer::decode(strip_pb_magic(&meta.data).unwrap()).unwrap();
    assert_eq!(meta.state, Some(pb::region_state::State::Open as i32));
    assert_eq!(meta.server.port, Some(16020));
    assert_eq!(
        z.get("/hbase/rs").unwrap().children,
        vec!["127.0.0.1,16020,42", "127.0.0.2,16020,43"]
    );
    assert!(z.get("/hbase/rs/127.0.0.2,16020,43").is_some());
    assert!(z.get("/hbase/rs/127.0.0.3,16020,43").is_none());
    assert!(z.get("/hbase/table").is_none());
    assert!(z.get("/hbas").is_none());
    assert!(z.get("/other").is_none());
    assert!(z.get("").is_none());
}

#[test]
fn a_cluster_without_an_active_master_has_no_master_znode() {
    let mut v = view();
    v.master = None;
    v.meta = None;
    let z = Znodes::new("/a/b/", v);
    assert_eq!(z.get("/").unwrap().children, vec!["a"]);
    assert_eq!(z.get("/a").unwrap().children, vec!["b"]);
    assert!(z.get("/a/b/master").is_none());
    assert!(z.get("/a/b/meta-region-server").is_none());
    assert!(
        !z.get("/a/b")
            .unwrap()
            .children
            .contains(&"master".to_string())
    );
    assert!(z.get("/a/b/hbaseid").is_some());
}
