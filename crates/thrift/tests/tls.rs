//! The Thrift gateway with `hbase.thrift.ssl.enabled`, over real loopback
//! TCP: a call answered over TLS, plaintext refused with a log line, an
//! expired server certificate and a wrong CA failing the handshake by
//! name, and client certificates checked as
//! `hbase.server.netty.tls.client.auth.mode` says.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_thrift::protocol::{Header, Message, MessageType, Protocol, Struct};
use ferrobase_tls::testing::{TestPki, capture_logs, wait_for_log};
use ferrobase_tls::{ClientTls, ServerTls};
use ferrobase_types::{ClientAuth, Settings};
use std::net::SocketAddr;
use std::path::Path;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

fn gateway_config(
    pki: &TestPki,
    key_store: &Path,
    auth: ClientAuth,
) -> ferrobase_thrift::GatewayConfig {
    let mut s = Settings::default();
    pki.apply_server(&mut s, key_store, auth);
    s.thrift_ssl_enabled = true;
    ferrobase_thrift::GatewayConfig {
        tls: ServerTls::thrift(&s).unwrap(),
        ..common::config()
    }
}

/// A framed binary `getTableNames` call; the reply's bytes.
async fn get_table_names<S: AsyncRead + AsyncWrite + Unpin>(mut s: S) -> std::io::Result<Vec<u8>> {
    let call = Message {
        header: Header {
            name: "getTableNames".into(),
            kind: MessageType::Call,
            seqid: 7,
        },
        body: Struct::new(),
    };
    let bytes = Protocol::Binary.encode(&call);
    let mut framed = (bytes.len() as i32).to_be_bytes().to_vec();
    framed.extend_from_slice(&bytes);
    s.write_all(&framed).await?;
    let mut len = [0u8; 4];
    s.read_exact(&mut len).await?;
    let mut reply = vec![0u8; i32::from_be_bytes(len).max(0) as usize];
    s.read_exact(&mut reply).await?;
    Ok(reply)
}

async fn over_tls(client: &Settings, addr: SocketAddr) -> Result<Vec<u8>, String> {
    let tls = ClientTls::from_settings(client).unwrap().unwrap();
    let s = tls
        .connect("127.0.0.1", addr.port())
        .await
        .map_err(|e| e.to_string())?;
    get_table_names(s)
        .await
        .map_err(|e| ferrobase_tls::grpc::tls_cause(&e).unwrap_or_else(|| e.to_string()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thrift_gateway_over_tls() {
    capture_logs();
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::generate(dir.path()).unwrap();
    let c = common::start(gateway_config(&pki, &pki.server, ClientAuth::Need)).await;
    let addr = c.gateway.addr();

    // Good: a call answered over mutual TLS.
    let good = pki.client_settings(&pki.ca, Some(&pki.client));
    let reply = over_tls(&good, addr).await.unwrap();
    assert!(
        reply.windows(13).any(|w| w == b"getTableNames"),
        "{reply:?}"
    );

    // Plaintext: closed unanswered and logged.
    let s = TcpStream::connect(addr).await.unwrap();
    let me = s.local_addr().unwrap().to_string();
    assert!(get_table_names(s).await.is_err());
    let lines = wait_for_log(&["plaintext connection from", &me]).await;
    assert!(
        lines.contains("the Thrift port requires TLS (hbase.thrift.ssl.enabled=true)"),
        "{lines}"
    );

    // Bad client certificates.
    for (key_store, says) in [
        (Some(&pki.expired_client), "expired"),
        (Some(&pki.other_client), "wrong CA"),
        (None, "requires a client certificate"),
    ] {
        let client = pki.client_settings(&pki.ca, key_store.map(|p| p.as_path()));
        let e = over_tls(&client, addr).await.unwrap_err();
        assert!(e.contains(says), "{key_store:?}: {e}");
    }
    // A client trusting another CA.
    let e = over_tls(&pki.client_settings(&pki.other_ca, Some(&pki.client)), addr)
        .await
        .unwrap_err();
    assert!(e.contains("wrong CA"), "{e}");
    c.stop().await;

    // An expired server certificate.
    let c = common::start(gateway_config(&pki, &pki.expired_server, ClientAuth::None)).await;
    let e = over_tls(&pki.client_settings(&pki.ca, None), c.gateway.addr())
        .await
        .unwrap_err();
    assert!(e.contains("the server's certificate has expired"), "{e}");
    c.stop().await;
}
