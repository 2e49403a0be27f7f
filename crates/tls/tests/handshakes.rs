//! Handshakes on a real loopback socket, acceptor against connector: a
//! good certificate, an expired one, one from an untrusted CA (each way),
//! a missing client certificate, a host name the certificate does not
//! carry, and plaintext to a TLS-only port (refused with a log line) or
//! to a port that still allows it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_tls::testing::TestPki;
use ferrobase_tls::{Accepted, ClientTls, ServerTls};
use ferrobase_types::{ClientAuth, Settings};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn logs() {
    ferrobase_tls::testing::capture_logs();
}

/// Lines logged about connections from `peer`.
fn logged_about(peer: SocketAddr) -> String {
    ferrobase_tls::testing::logged_lines(&peer.to_string())
}

/// Serves one connection: answers `hello` with the caller's user name
/// (from its certificate) or `anonymous`.
async fn serve(tls: Arc<ServerTls>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, peer)) = listener.accept().await else {
                return;
            };
            let tls = tls.clone();
            tokio::spawn(async move {
                if let Accepted::Stream(mut s) = tls.accept(tcp, peer).await {
                    let user = s
                        .info()
                        .peer
                        .as_ref()
                        .map_or("anonymous".to_string(), |p| p.user.clone());
                    let mut hello = [0u8; 5];
                    if s.read_exact(&mut hello).await.is_ok() {
                        let _ = s.write_all(user.as_bytes()).await;
                        let _ = s.shutdown().await;
                    }
                }
            });
        }
    });
    addr
}

/// Connects, says hello, returns the answer or the error's words.
async fn hello(client: &Settings, addr: SocketAddr) -> Result<String, String> {
    let tls = ClientTls::from_settings(client)
        .map_err(|e| e.to_string())?
        .unwrap();
    let mut s = tls
        .connect("127.0.0.1", addr.port())
        .await
        .map_err(|e| e.to_string())?;
    s.write_all(b"hello")
        .await
        .map_err(|e| ferrobase_tls::grpc::tls_cause(&e).unwrap_or_else(|| e.to_string()))?;
    let mut out = String::new();
    s.read_to_string(&mut out)
        .await
        .map_err(|e| ferrobase_tls::grpc::tls_cause(&e).unwrap_or_else(|| e.to_string()))?;
    Ok(out)
}

fn pki() -> (tempfile::TempDir, TestPki) {
    logs();
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::generate(dir.path()).unwrap();
    (dir, pki)
}

#[tokio::test]
async fn good_certificates_and_mutual_tls_name_the_user() {
    let (_d, pki) = pki();
    let tls = ServerTls::rpc(&pki.server_settings(&pki.server, ClientAuth::Need))
        .unwrap()
        .unwrap();
    let addr = serve(tls).await;
    let client = pki.client_settings(&pki.ca, Some(&pki.client));
    assert_eq!(hello(&client, addr).await.unwrap(), "alice");

    // WANT: a client without a certificate is anonymous.
    let tls = ServerTls::rpc(&pki.server_settings(&pki.server, ClientAuth::Want))
        .unwrap()
        .unwrap();
    let addr = serve(tls).await;
    let anonymous = pki.client_settings(&pki.ca, None);
    assert_eq!(hello(&anonymous, addr).await.unwrap(), "anonymous");
    assert_eq!(hello(&client, addr).await.unwrap(), "alice");
}

#[tokio::test]
async fn expired_or_untrusted_server_certificates_fail_by_name() {
    let (_d, pki) = pki();
    let client = pki.client_settings(&pki.ca, None);
    for (key_store, says) in [
        (&pki.expired_server, "the server's certificate has expired"),
        (
            &pki.other_server,
            "not signed by a CA in this side's trust store",
        ),
    ] {
        let tls = ServerTls::rpc(&pki.server_settings(key_store, ClientAuth::None))
            .unwrap()
            .unwrap();
        let addr = serve(tls).await;
        let e = hello(&client, addr).await.unwrap_err();
        assert!(
            e.contains("TLS handshake with 127.0.0.1") && e.contains(says),
            "{e}"
        );
    }
    // A client trusting another CA refuses the good server too.
    let tls = ServerTls::rpc(&pki.server_settings(&pki.server, ClientAuth::None))
        .unwrap()
        .unwrap();
    let addr = serve(tls).await;
    let wrong_ca = pki.client_settings(&pki.other_ca, None);
    let e = hello(&wrong_ca, addr).await.unwrap_err();
    assert!(e.contains("wrong CA"), "{e}");
}

#[tokio::test]
async fn bad_client_certificates_are_refused_and_logged() {
    let (_d, pki) = pki();
    let tls = ServerTls::rpc(&pki.server_settings(&pki.server, ClientAuth::Need))
        .unwrap()
        .unwrap();
    let addr = serve(tls).await;
    for (key_store, client_says, server_says) in [
        (
            Some(&pki.expired_client),
            "has expired",
            "the client's certificate has expired",
        ),
        (
            Some(&pki.other_client),
            "wrong CA",
            "the client's certificate is not signed by a CA",
        ),
        (
            None,
            "requires a client certificate",
            "the client sent no certificate",
        ),
    ] {
        let client = pki.client_settings(&pki.ca, key_store.map(|p| p.as_path()));
        let e = hello(&client, addr).await.unwrap_err();
        assert!(e.contains(client_says), "{e}");
        // The server's side of it is in its log.
        let lines =
            ferrobase_tls::testing::wait_for_log(&["TLS handshake with", server_says]).await;
        assert!(
            lines.contains(server_says),
            "no log line saying '{server_says}': {lines}"
        );
    }
}

#[tokio::test]
async fn host_names_are_verified_unless_turned_off() {
    let (_d, pki) = pki();
    let tls = ServerTls::rpc(&pki.server_settings(&pki.server, ClientAuth::None))
        .unwrap()
        .unwrap();
    let addr = serve(tls).await;
    let client = ClientTls::from_settings(&pki.client_settings(&pki.ca, None))
        .unwrap()
        .unwrap();
    // Dialled as a name the certificate does not carry.
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = ferrobase_tls::client::server_name("db.example.org").unwrap();
    let e = client
        .handshake(tcp, name.clone(), "db.example.org")
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("is for localhost, 127.0.0.1 but the host dialled is db.example.org"),
        "{e}"
    );
    let mut lax = pki.client_settings(&pki.ca, None);
    lax.tls_verify_server_hostname = false;
    let client = ClientTls::from_settings(&lax).unwrap().unwrap();
    let tcp = TcpStream::connect(addr).await.unwrap();
    assert!(client.handshake(tcp, name, "db.example.org").await.is_ok());
}

#[tokio::test]
async fn plaintext_is_refused_on_a_tls_only_port_and_served_where_allowed() {
    let (_d, pki) = pki();
    let strict = ServerTls::rpc(&pki.server_settings(&pki.server, ClientAuth::None))
        .unwrap()
        .unwrap();
    let addr = serve(strict).await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    let me = s.local_addr().unwrap();
    s.write_all(b"HBas\x00\x50").await.unwrap();
    let mut rest = Vec::new();
    // Closed without an answer.
    assert_eq!(s.read_to_end(&mut rest).await.unwrap_or(0), 0);
    let line = logged_about(me);
    assert!(
        line.contains("plaintext connection from")
            && line.contains("the RPC port requires TLS")
            && line.contains("hbase.server.netty.tls.supportplaintext=false")
            && line.contains("HBase RPC preamble"),
        "{line}"
    );

    // A TLS client to a plaintext-only listener: the handshake fails by name.
    let plain = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plain_addr = plain.local_addr().unwrap();
    tokio::spawn(async move {
        if let Ok((mut s, _)) = plain.accept().await {
            let mut b = [0u8; 512];
            let _ = s.read(&mut b).await;
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
        }
    });
    let e = hello(&pki.client_settings(&pki.ca, None), plain_addr)
        .await
        .unwrap_err();
    assert!(e.contains("does not speak TLS"), "{e}");

    // With plaintext allowed, both are served.
    let mut settings = pki.server_settings(&pki.server, ClientAuth::None);
    settings.tls_server_support_plaintext = true;
    let both = ServerTls::rpc(&settings).unwrap().unwrap();
    let addr = serve(both).await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"hello").await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    assert_eq!(out, "anonymous");
    assert_eq!(
        hello(&pki.client_settings(&pki.ca, None), addr)
            .await
            .unwrap(),
        "anonymous"
    );
}
