//! TLS on a standalone server's ports over real loopback TCP: the RPC
//! port (gRPC through the Rust client, and HBase RPC on the same port)
//! and the info port (HTTPS). Each port: a good certificate, an expired
//! one, a wrong CA, and plaintext to a TLS-only port (refused, with a log
//! line naming the peer and the setting).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::{Bytes, BytesMut};
use ferrobase_client::{Connection, Get};
use ferrobase_hbase_wire::frame::{self, DEFAULT_MAX_FRAME};
use ferrobase_hbase_wire::pb;
use ferrobase_server::Standalone;
use ferrobase_server::info_server::{InfoParts, InfoServer};
use ferrobase_tls::testing::{TestPki, capture_logs, wait_for_log};
use ferrobase_tls::{ClientTls, ServerTls};
use ferrobase_types::{ClientAuth, RowMutation, Settings};
use std::net::SocketAddr;
use std::path::Path;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// A standalone server whose RPC port is TLS-only with `key_store`.
async fn tls_server(pki: &TestPki, dir: &Path, key_store: &Path, auth: ClientAuth) -> Standalone {
    let mut s = common::settings();
    pki.apply_server(&mut s, key_store, auth);
    Standalone::start(dir, s, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

/// A client's settings: TLS trusting `trust`, with `key_store` as its
/// certificate; few retries.
fn client(pki: &TestPki, trust: &Path, key_store: Option<&Path>) -> Settings {
    let mut s = pki.client_settings(trust, key_store);
    s.client_retries = 1;
    s.client_pause_ms = 10;
    s
}

/// What a Rust client gets for listing tables.
async fn list(addr: SocketAddr, settings: Settings) -> Result<Vec<String>, String> {
    let conn = Connection::connect(&addr.to_string(), settings).map_err(|e| e.to_string())?;
    conn.admin().list_tables().await.map_err(|e| e.to_string())
}

/// The connection registry's cluster id, over `stream` (HBase 2.6's
/// `Regist` preamble), or `None` when the server closed first.
async fn registry_cluster_id<S: AsyncRead + AsyncWrite + Unpin>(mut s: S) -> Option<String> {
    s.write_all(b"Regist").await.ok()?;
    let mut buf = BytesMut::new();
    loop {
        if let Some(r) = frame::decode_response(&mut buf, DEFAULT_MAX_FRAME).unwrap() {
            let id: pb::GetConnectionRegistryResponse = r.decode_message().unwrap();
            return Some(id.cluster_id);
        }
        match s.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

fn pki() -> (tempfile::TempDir, TestPki) {
    capture_logs();
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::generate(dir.path()).unwrap();
    (dir, pki)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc_port_serves_grpc_and_hbase_rpc_over_mutual_tls() {
    let (_d, pki) = pki();
    let data = tempfile::tempdir().unwrap();
    let server = tls_server(&pki, data.path(), &pki.server, ClientAuth::Need).await;
    let addr = server.addr();

    // gRPC: the Rust client with its certificate does real work.
    let conn =
        Connection::connect(&addr.to_string(), client(&pki, &pki.ca, Some(&pki.client))).unwrap();
    conn.admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let t = conn.table("t");
    t.put(RowMutation::new("r1").put("f", "q", "v1"))
        .await
        .unwrap();
    let r = t.get(Get::new("r1")).await.unwrap();
    assert_eq!(r.value(b"f", b"q"), Some(&Bytes::from("v1")));

    // HBase RPC on the same port, after the handshake.
    let tls = ClientTls::from_settings(&client(&pki, &pki.ca, Some(&pki.client)))
        .unwrap()
        .unwrap();
    let s = tls.connect("127.0.0.1", addr.port()).await.unwrap();
    assert_eq!(
        registry_cluster_id(s).await.as_deref(),
        Some(ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID)
    );
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc_port_refuses_plaintext_and_bad_client_certificates_by_name() {
    let (_d, pki) = pki();
    let data = tempfile::tempdir().unwrap();
    let server = tls_server(&pki, data.path(), &pki.server, ClientAuth::Need).await;
    let addr = server.addr();

    // Plaintext gRPC: refused, and the server says why.
    let mut plain = common::settings();
    plain.client_retries = 1;
    assert!(list(addr, plain).await.is_err());
    let lines = wait_for_log(&["plaintext connection from", "HTTP/2"]).await;
    assert!(
        lines.contains("the RPC port requires TLS (hbase.server.netty.tls.supportplaintext=false)"),
        "{lines}"
    );
    // Plaintext HBase RPC: closed unanswered, logged as such.
    let s = TcpStream::connect(addr).await.unwrap();
    let me = s.local_addr().unwrap().to_string();
    assert_eq!(registry_cluster_id(s).await, None);
    let lines = wait_for_log(&["plaintext connection from", &me]).await;
    assert!(
        lines.contains("HBase connection registry preamble"),
        "{lines}"
    );

    // Client certificates: expired, from another CA, none at all.
    for (key_store, says) in [
        (Some(&pki.expired_client), "expired"),
        (Some(&pki.other_client), "wrong CA"),
        (None, "requires a client certificate"),
    ] {
        let e = list(addr, client(&pki, &pki.ca, key_store.map(|p| p.as_path())))
            .await
            .unwrap_err();
        assert!(e.contains(says), "{key_store:?}: {e}");
    }
    for says in [
        "the client's certificate has expired",
        "the client's certificate is not signed by a CA",
        "the client sent no certificate",
    ] {
        let lines = wait_for_log(&["TLS handshake with", says]).await;
        assert!(lines.contains(says), "{lines}");
    }
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc_port_with_an_expired_or_untrusted_certificate_fails_the_handshake() {
    let (_d, pki) = pki();
    for (key_store, says) in [
        (&pki.expired_server, "the server's certificate has expired"),
        (
            &pki.other_server,
            "the server's certificate is not signed by a CA",
        ),
    ] {
        let data = tempfile::tempdir().unwrap();
        let server = tls_server(&pki, data.path(), key_store, ClientAuth::None).await;
        let addr = server.addr();
        let e = list(addr, client(&pki, &pki.ca, None)).await.unwrap_err();
        assert!(e.contains(says) && e.contains("TLS handshake"), "{e}");
        let tls = ClientTls::from_settings(&client(&pki, &pki.ca, None))
            .unwrap()
            .unwrap();
        let e = tls
            .connect("127.0.0.1", addr.port())
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(says), "{e}");
        server.stop().await.unwrap();
    }
    // A good server, a client trusting another CA.
    let data = tempfile::tempdir().unwrap();
    let server = tls_server(&pki, data.path(), &pki.server, ClientAuth::None).await;
    let e = list(server.addr(), client(&pki, &pki.other_ca, None))
        .await
        .unwrap_err();
    assert!(e.contains("wrong CA"), "{e}");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc_port_serves_both_when_plaintext_is_supported() {
    let (_d, pki) = pki();
    let data = tempfile::tempdir().unwrap();
    let mut s = common::settings();
    pki.apply_server(&mut s, &pki.server, ClientAuth::Want);
    s.tls_server_support_plaintext = true;
    let server = Standalone::start(data.path(), s, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.addr();
    assert!(list(addr, common::settings()).await.is_ok());
    assert!(list(addr, client(&pki, &pki.ca, None)).await.is_ok());
    assert!(
        list(addr, client(&pki, &pki.ca, Some(&pki.client)))
            .await
            .is_ok()
    );
    let s = TcpStream::connect(addr).await.unwrap();
    assert_eq!(
        registry_cluster_id(s).await.as_deref(),
        Some(ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID)
    );
    server.stop().await.unwrap();
}

/// An info server over HTTPS with `key_store`.
async fn https_info(pki: &TestPki, key_store: &Path) -> InfoServer {
    let mut s = Settings::default();
    pki.apply_server(&mut s, key_store, ClientAuth::None);
    s.info_ssl_enabled = true;
    let tls = ServerTls::info(&s).unwrap();
    InfoServer::start(
        "127.0.0.1:0".parse().unwrap(),
        InfoParts {
            role: "thrift",
            ..Default::default()
        },
        tls,
    )
    .await
    .unwrap()
}

/// `GET path` over TLS: the response's status line, or the error's words.
async fn https_get(tls: &ClientTls, addr: SocketAddr, path: &str) -> Result<String, String> {
    let mut s = tls
        .connect("127.0.0.1", addr.port())
        .await
        .map_err(|e| e.to_string())?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    let read = s.read_to_end(&mut raw).await;
    if raw.is_empty()
        && let Err(e) = read
    {
        return Err(ferrobase_tls::grpc::tls_cause(&e).unwrap_or_else(|| e.to_string()));
    }
    let text = String::from_utf8_lossy(&raw).to_string();
    Ok(text.lines().next().unwrap_or("").to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_port_serves_https_only() {
    let (_d, pki) = pki();
    let good = ClientTls::from_settings(&client(&pki, &pki.ca, None))
        .unwrap()
        .unwrap();
    let info = https_info(&pki, &pki.server).await;
    assert_eq!(
        https_get(&good, info.addr(), "/metrics").await.unwrap(),
        "HTTP/1.1 200 OK"
    );
    // Plaintext HTTP: closed, logged.
    let mut s = TcpStream::connect(info.addr()).await.unwrap();
    let me = s.local_addr().unwrap().to_string();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out).await;
    assert!(out.is_empty());
    let lines = wait_for_log(&["plaintext connection from", &me]).await;
    assert!(
        lines.contains("the info port requires TLS (hbase.ssl.enabled=true)")
            && lines.contains("an HTTP request (use https://)"),
        "{lines}"
    );
    // A client trusting another CA.
    let wrong = ClientTls::from_settings(&client(&pki, &pki.other_ca, None))
        .unwrap()
        .unwrap();
    let e = https_get(&wrong, info.addr(), "/metrics")
        .await
        .unwrap_err();
    assert!(e.contains("wrong CA"), "{e}");
    info.stop().await;

    // An expired server certificate.
    let info = https_info(&pki, &pki.expired_server).await;
    let e = https_get(&good, info.addr(), "/metrics").await.unwrap_err();
    assert!(e.contains("the server's certificate has expired"), "{e}");
    info.stop().await;
}

/// `ExecService` on `AuthenticationService` over `s` after a SIMPLE
/// preamble claiming `claimed`: the answers to `WhoAmI` and
/// `GetAuthenticationToken`.
async fn who_and_token<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    claimed: &str,
) -> (pb::WhoAmIResponse, frame::ResponseFrame) {
    use ferrobase_hbase_wire::frame::AuthMethod;
    use ferrobase_hbase_wire::names::RegionName;
    use prost::Message;
    let mut out = BytesMut::new();
    frame::encode_preamble(&mut out, AuthMethod::Simple);
    let header = pb::ConnectionHeader {
        user_info: Some(pb::UserInformation {
            effective_user: claimed.into(),
            real_user: None,
        }),
        service_name: Some("ClientService".into()),
        ..Default::default()
    };
    frame::encode_connection_header(&mut out, &header).unwrap();
    for (id, method) in [(1, "WhoAmI"), (2, "GetAuthenticationToken")] {
        let req = pb::CoprocessorServiceRequest {
            region: RegionName::meta().specifier(),
            call: pb::CoprocessorServiceCall {
                row: Bytes::new(),
                service_name: "hbase.pb.AuthenticationService".into(),
                method_name: method.into(),
                request: Bytes::new(),
            },
        };
        frame::encode_request(&mut out, id, "ExecService", &req, None).unwrap();
    }
    s.write_all(&out).await.unwrap();
    let mut buf = BytesMut::new();
    let mut answers = Vec::new();
    while answers.len() < 2 {
        match frame::decode_response(&mut buf, DEFAULT_MAX_FRAME).unwrap() {
            Some(r) => answers.push(r),
            None => assert!(s.read_buf(&mut buf).await.unwrap() > 0, "closed"),
        }
    }
    answers.sort_by_key(|r| r.call_id());
    let token = answers.pop().unwrap();
    let who: pb::CoprocessorServiceResponse = answers[0].decode_message().unwrap();
    (
        pb::WhoAmIResponse::decode(who.value.value.unwrap()).unwrap(),
        token,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secure_authentication_accepts_certificates_and_issues_them_tokens() {
    use prost::Message;
    let (_d, pki) = pki();
    let data = tempfile::tempdir().unwrap();
    let mut s = common::settings();
    pki.apply_server(&mut s, &pki.server, ClientAuth::Need);
    s.security_authentication = "kerberos".into();
    let server = Standalone::start(data.path(), s, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let tls = ClientTls::from_settings(&client(&pki, &pki.ca, Some(&pki.client)))
        .unwrap()
        .unwrap();
    let stream = tls
        .connect("127.0.0.1", server.addr().port())
        .await
        .unwrap();
    // SIMPLE over mutual TLS is accepted; the certificate, not the claimed
    // name, is the user, and it may have a token.
    let (who, token) = who_and_token(stream, "mallory").await;
    assert_eq!(who.username.as_deref(), Some("alice"));
    assert_eq!(who.auth_method.as_deref(), Some("CERTIFICATE"));
    let token: pb::CoprocessorServiceResponse = token.decode_message().unwrap();
    let token = pb::GetAuthenticationTokenResponse::decode(token.value.value.unwrap())
        .unwrap()
        .token
        .unwrap();
    let id = ferrobase_hbase_wire::token::decode_identifier(&token.identifier.unwrap()).unwrap();
    assert_eq!(&id.username[..], b"alice");
    server.stop().await.unwrap();
}
