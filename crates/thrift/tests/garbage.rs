//! Bad bytes over real TCP to a running gateway (seeded, reproducible):
//! random streams, truncated and corrupted calls, oversize frames and
//! strings, deep nesting, HTTP. The gateway must answer with an exception
//! or close the connection, never panic or hang, and keep serving a
//! well-formed client afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_thrift::protocol::{
    Header, Limits, Message, MessageType, Protocol, Struct, TType, Value,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Only a guard against a hung gateway; no assertion depends on timing.
const HANG_GUARD: Duration = Duration::from_secs(60);

fn call(name: &str, seqid: i32, body: Struct) -> Message {
    Message {
        header: Header {
            name: name.into(),
            kind: MessageType::Call,
            seqid,
        },
        body,
    }
}

fn framed(bytes: &[u8]) -> Vec<u8> {
    let mut out = (bytes.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(bytes);
    out
}

/// Well-formed calls to corrupt.
fn samples() -> Vec<Vec<u8>> {
    let mutation = Value::Struct(
        Struct::new()
            .with(1, Value::Bool(false))
            .with(2, Value::binary("cf:q"))
            .with(3, Value::binary("value")),
    );
    let calls = [
        call("getTableNames", 1, Struct::new()),
        call(
            "mutateRow",
            2,
            Struct::new()
                .with(1, Value::binary("garbage_t"))
                .with(2, Value::binary("row"))
                .with(3, Value::List(TType::Struct, vec![mutation]))
                .with(4, Value::Map(TType::Binary, TType::Binary, vec![])),
        ),
        call(
            "getRowWithColumns",
            3,
            Struct::new()
                .with(1, Value::binary("garbage_t"))
                .with(2, Value::binary("row"))
                .with(3, Value::List(TType::Binary, vec![Value::binary("cf")])),
        ),
        call(
            "scannerOpenWithScan",
            4,
            Struct::new()
                .with(1, Value::binary("garbage_t"))
                .with(2, Value::Struct(Struct::new().with(1, Value::binary("a")))),
        ),
    ];
    let mut out = Vec::new();
    for c in &calls {
        for p in [Protocol::Binary, Protocol::Compact] {
            let bytes = p.encode(c);
            out.push(framed(&bytes));
            out.push(bytes);
        }
    }
    out
}

/// Sends `bytes`, closes the sending side, and reads until the gateway
/// closes. Returns what it answered.
async fn exchange(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).await.unwrap();
    // The gateway may close before reading everything: write errors are
    // expected then.
    let _ = s.write_all(bytes).await;
    let _ = s.shutdown().await;
    let mut reply = Vec::new();
    match tokio::time::timeout(HANG_GUARD, s.read_to_end(&mut reply)).await {
        Ok(_) => reply,
        Err(_) => panic!(
            "the gateway neither answered nor closed after {} bytes: {:02x?}",
            bytes.len(),
            &bytes[..bytes.len().min(64)]
        ),
    }
}

/// Every complete message in a reply is a REPLY or an EXCEPTION.
fn check_replies(mut reply: &[u8]) {
    while !reply.is_empty() {
        let mut decoded = None;
        // The reply is in whichever transport/protocol the request seemed
        // to use; try them all.
        for (skip, p) in [
            (0, Protocol::Binary),
            (0, Protocol::Compact),
            (4, Protocol::Binary),
            (4, Protocol::Compact),
        ] {
            if let Some(body) = reply.get(skip..)
                && let Ok((m, used)) = p.decode(body, &Limits::default())
            {
                decoded = Some((m, skip + used));
                break;
            }
        }
        let Some((m, used)) = decoded else {
            panic!("undecodable reply: {:02x?}", &reply[..reply.len().min(64)]);
        };
        assert!(
            matches!(m.header.kind, MessageType::Reply | MessageType::Exception),
            "{m:?}"
        );
        reply = &reply[used..];
    }
}

/// A well-formed client still gets its table list.
async fn still_serving(addr: SocketAddr) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let req = Protocol::Binary.encode(&call("getTableNames", 77, Struct::new()));
    s.write_all(&req).await.unwrap();
    let mut buf = Vec::new();
    let reply = tokio::time::timeout(HANG_GUARD, async {
        loop {
            let mut chunk = [0u8; 4096];
            let n = s.read(&mut chunk).await.unwrap();
            assert!(n > 0, "gateway closed a well-formed connection");
            buf.extend_from_slice(&chunk[..n]);
            if let Ok((m, _)) = Protocol::Binary.decode(&buf, &Limits::default()) {
                return m;
            }
        }
    })
    .await
    .expect("no reply to getTableNames");
    assert_eq!(reply.header.kind, MessageType::Reply);
    assert_eq!(reply.header.seqid, 77);
    assert!(
        matches!(reply.body.get(0), Some(Value::List(..))),
        "{reply:?}"
    );
}

/// A gateway with a 64 KiB message limit, so oversize input is cheap to send.
fn small_limits() -> ferrobase_thrift::GatewayConfig {
    ferrobase_thrift::GatewayConfig {
        limits: Limits {
            max_message: 64 * 1024,
            max_depth: 64,
        },
        ..common::config()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_never_breaks_the_gateway() {
    let c = common::start(small_limits()).await;
    let addr = c.gateway.addr();
    let mut rng = ChaCha8Rng::seed_from_u64(0x7468_7269_6674);
    let samples = samples();

    for i in 0..600 {
        let bytes: Vec<u8> = match i % 4 {
            // Random bytes, sometimes starting like a real message.
            0 => {
                let mut b = vec![0u8; rng.random_range(1..2048)];
                rng.fill(&mut b[..]);
                match rng.random_range(0..4) {
                    0 => b[0] = 0x80,
                    1 => b[0] = 0x82,
                    2 if b.len() >= 4 => {
                        let len = (b.len() as i32 - 4).to_be_bytes();
                        b[..4].copy_from_slice(&len);
                    }
                    _ => {}
                }
                b
            }
            // A real call cut short.
            1 => {
                let s = &samples[rng.random_range(0..samples.len())];
                s[..rng.random_range(0..s.len())].to_vec()
            }
            // A real call with a few bytes changed.
            2 => {
                let mut s = samples[rng.random_range(0..samples.len())].clone();
                for _ in 0..rng.random_range(1..4) {
                    let at = rng.random_range(0..s.len());
                    s[at] = rng.random();
                }
                s
            }
            // A real call followed by junk.
            _ => {
                let mut s = samples[rng.random_range(0..samples.len())].clone();
                let mut junk = vec![0u8; rng.random_range(1..64)];
                rng.fill(&mut junk[..]);
                s.extend_from_slice(&junk);
                s
            }
        };
        let reply = exchange(addr, &bytes).await;
        check_replies(&reply);
        if i % 100 == 0 {
            still_serving(addr).await;
        }
    }
    still_serving(addr).await;
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversize_and_malformed_are_refused() {
    let c = common::start(small_limits()).await;
    let addr = c.gateway.addr();
    let header = |name: &str| {
        let mut b = b"\x80\x01\x00\x01".to_vec();
        b.extend_from_slice(&(name.len() as i32).to_be_bytes());
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&9i32.to_be_bytes());
        b
    };

    // A frame of 2 GiB: closed without reading it.
    assert!(
        exchange(addr, b"\x7f\xff\xff\xff\x80\x01\x00\x01")
            .await
            .is_empty()
    );
    // A string claiming 1 GiB: a TApplicationException naming the size.
    let mut huge = header("getRow");
    huge.extend_from_slice(b"\x0b\x00\x01\x40\x00\x00\x00");
    let reply = exchange(addr, &huge).await;
    let (m, _) = Protocol::Binary.decode(&reply, &Limits::default()).unwrap();
    assert_eq!(m.header.kind, MessageType::Exception);
    let text = format!("{:?}", m.body.binary(1));
    assert!(text.contains("max_frame_size_in_mb"), "{text}");
    // A list nested 10000 deep.
    let mut deep = header("getRow");
    deep.extend_from_slice(b"\x0f\x00\x01");
    for _ in 0..10_000 {
        deep.extend_from_slice(b"\x0f\x00\x00\x00\x01");
    }
    let reply = exchange(addr, &deep).await;
    let (m, _) = Protocol::Binary.decode(&reply, &Limits::default()).unwrap();
    assert!(
        format!("{:?}", m.body.binary(1)).contains("nested"),
        "{m:?}"
    );
    // An unframed message longer than the limit.
    let mut long = header("getRow");
    long.extend_from_slice(b"\x0b\x00\x01\x00\x01\x00\x00");
    long.extend(std::iter::repeat_n(b'x', 65536));
    check_replies(&exchange(addr, &long).await);
    // HTTP on the Thrift port is Thrift over HTTP: a GET is told to POST.
    let reply = exchange(
        addr,
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(
        reply.starts_with("HTTP/1.1 405") && reply.contains("POST one Thrift message"),
        "{reply}"
    );

    // On a framed connection a bad frame is answered and the connection
    // goes on: an unknown method, arguments of the wrong type, a frame
    // that ends inside its message, then a good call.
    let mut s = TcpStream::connect(addr).await.unwrap();
    let unknown = Protocol::Binary.encode(&call("noSuchMethod", 1, Struct::new()));
    let wrong = Protocol::Binary.encode(&call("getRow", 2, Struct::new().with(1, Value::I32(5))));
    let mut cut = Protocol::Binary.encode(&call(
        "getRow",
        3,
        Struct::new().with(1, Value::binary("t")),
    ));
    cut.truncate(cut.len() - 3);
    let good = Protocol::Binary.encode(&call("getTableNames", 4, Struct::new()));
    for m in [&unknown, &wrong, &cut, &good] {
        s.write_all(&framed(m)).await.unwrap();
    }
    let mut got = Vec::new();
    let mut buf = Vec::new();
    tokio::time::timeout(HANG_GUARD, async {
        while got.len() < 4 {
            let mut chunk = [0u8; 4096];
            let n = s.read(&mut chunk).await.unwrap();
            assert!(n > 0, "closed after {got:?}");
            buf.extend_from_slice(&chunk[..n]);
            while buf.len() >= 4 {
                let len = i32::from_be_bytes(buf[..4].try_into().unwrap()) as usize;
                if buf.len() < 4 + len {
                    break;
                }
                let (m, _) = Protocol::Binary
                    .decode(&buf[4..4 + len], &Limits::default())
                    .unwrap();
                buf.drain(..4 + len);
                got.push(m);
            }
        }
    })
    .await
    .expect("framed replies did not arrive");
    let kinds: Vec<_> = got
        .iter()
        .map(|m| (m.header.seqid, m.header.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (1, MessageType::Exception),
            (2, MessageType::Exception),
            (3, MessageType::Exception),
            (4, MessageType::Reply)
        ]
    );
    // TApplicationException types: UNKNOWN_METHOD, PROTOCOL_ERROR.
    assert_eq!(got[0].body.i32(2), Some(1));
    assert_eq!(got[1].body.i32(2), Some(7));
    assert!(format!("{:?}", got[1].body.binary(1)).contains("tableName"));
    still_serving(addr).await;
    c.stop().await;
}
