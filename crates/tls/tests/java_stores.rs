//! Key stores and trust stores as HBase installations have them: PKCS12
//! files made by `openssl pkcs12 -export` and by Java's `keytool`, and JKS
//! files made by `keytool`, used for real handshakes on loopback (mutual
//! TLS, the client's certificate naming the user). Wrong passwords, a key
//! password that differs from the store's, and a JKS trust store opened
//! without a password are checked too. Skipped, saying so, where `keytool`
//! or `openssl` is not installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_tls::testing::TestPki;
use ferrobase_tls::{Accepted, ClientTls, ServerTls};
use ferrobase_types::{ClientAuth, Settings};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn run(program: &str, args: &[&str]) {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn tool_missing() -> Option<&'static str> {
    for tool in ["keytool", "openssl"] {
        let found = Command::new(tool)
            .arg(if tool == "keytool" {
                "-help"
            } else {
                "version"
            })
            .output()
            .is_ok();
        if !found {
            return Some(tool);
        }
    }
    None
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `pem` (key and certificate) as a PKCS12 file made by openssl, and the
/// same converted by keytool into a JKS file and into a keytool PKCS12.
fn key_stores(dir: &Path, pem: &Path, name: &str, password: &str) -> [PathBuf; 3] {
    let p12 = dir.join(format!("{name}.openssl.p12"));
    let pass = format!("pass:{password}");
    run(
        "openssl",
        &[
            "pkcs12",
            "-export",
            "-in",
            s(pem),
            "-inkey",
            s(pem),
            "-name",
            name,
            "-out",
            s(&p12),
            "-passout",
            &pass,
        ],
    );
    let mut out = Vec::new();
    for (ext, kind) in [("jks", "JKS"), ("keytool.p12", "PKCS12")] {
        let dest = dir.join(format!("{name}.{ext}"));
        run(
            "keytool",
            &[
                "-importkeystore",
                "-noprompt",
                "-srckeystore",
                s(&p12),
                "-srcstoretype",
                "PKCS12",
                "-srcstorepass",
                password,
                "-destkeystore",
                s(&dest),
                "-deststoretype",
                kind,
                "-deststorepass",
                password,
                "-destkeypass",
                password,
            ],
        );
        out.push(dest);
    }
    [p12, out.remove(0), out.remove(0)]
}

/// The CA certificate as a keytool trust store of `kind`.
fn trust_store(dir: &Path, ca: &Path, kind: &str, password: &str) -> PathBuf {
    let ext = if kind == "JKS" { "jks" } else { "p12" };
    let dest = dir.join(format!("trust.{ext}"));
    run(
        "keytool",
        &[
            "-importcert",
            "-noprompt",
            "-alias",
            "ca",
            "-file",
            s(ca),
            "-keystore",
            s(&dest),
            "-storetype",
            kind,
            "-storepass",
            password,
        ],
    );
    dest
}

/// Serves connections: answers `hello` with the caller's certificate user.
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

async fn hello(client: &Settings, addr: SocketAddr) -> String {
    let tls = ClientTls::from_settings(client).unwrap().unwrap();
    let mut s = tls.connect("127.0.0.1", addr.port()).await.unwrap();
    s.write_all(b"hello").await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

fn server(key: &Path, key_pw: &str, trust: &Path, trust_pw: &str) -> Settings {
    Settings {
        tls_server_enabled: true,
        tls_server_support_plaintext: false,
        tls_client_auth: ClientAuth::Need,
        tls_keystore_location: s(key).into(),
        tls_keystore_password: key_pw.into(),
        tls_truststore_location: s(trust).into(),
        tls_truststore_password: trust_pw.into(),
        ..Settings::default()
    }
}

fn client(key: &Path, key_pw: &str, trust: &Path, trust_pw: &str) -> Settings {
    Settings {
        tls_client_enabled: true,
        tls_keystore_location: s(key).into(),
        tls_keystore_password: key_pw.into(),
        tls_truststore_location: s(trust).into(),
        tls_truststore_password: trust_pw.into(),
        ..Settings::default()
    }
}

#[tokio::test]
async fn pkcs12_and_jks_stores_from_openssl_and_keytool_serve_mutual_tls() {
    if let Some(tool) = tool_missing() {
        eprintln!("SKIPPED: {tool} is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::generate(dir.path()).unwrap();
    let servers = key_stores(dir.path(), &pki.server, "server", "serverpw");
    let clients = key_stores(dir.path(), &pki.client, "client", "clientpw");
    let trust_jks = trust_store(dir.path(), &pki.ca, "JKS", "trustpw");
    let trust_p12 = trust_store(dir.path(), &pki.ca, "PKCS12", "trustpw");

    // Every server store with every client store, the trust stores crossed;
    // the types come from the extensions.
    for (i, server_store) in servers.iter().enumerate() {
        let (trust, other_trust) = if i % 2 == 0 {
            (&trust_jks, &trust_p12)
        } else {
            (&trust_p12, &trust_jks)
        };
        let tls = ServerTls::rpc(&server(server_store, "serverpw", trust, "trustpw"))
            .unwrap()
            .unwrap();
        let addr = serve(tls).await;
        for client_store in &clients {
            let c = client(client_store, "clientpw", other_trust, "trustpw");
            assert_eq!(
                hello(&c, addr).await,
                "alice",
                "{server_store:?} {client_store:?}"
            );
        }
        // A JKS trust store needs no password (its digest goes unchecked).
        let c = client(&clients[1], "clientpw", &trust_jks, "");
        assert_eq!(hello(&c, addr).await, "alice");
    }
    // The type given explicitly wins over a misleading name.
    let renamed = dir.path().join("server-store.bin");
    std::fs::copy(&servers[1], &renamed).unwrap();
    let mut typed = server(&renamed, "serverpw", &trust_jks, "trustpw");
    typed.tls_keystore_type = "jks".into();
    assert!(ServerTls::rpc(&typed).is_ok());
}

fn error_of(settings: &Settings) -> String {
    match ServerTls::rpc(settings) {
        Ok(_) => String::from("no error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn wrong_passwords_are_refused_naming_the_store() {
    if let Some(tool) = tool_missing() {
        eprintln!("SKIPPED: {tool} is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::generate(dir.path()).unwrap();
    let [p12, jks, _] = key_stores(dir.path(), &pki.server, "server", "serverpw");
    let trust = trust_store(dir.path(), &pki.ca, "JKS", "trustpw");

    for store in [&p12, &jks] {
        let e = error_of(&server(store, "wrong", &trust, "trustpw"));
        assert!(
            e.contains("hbase.rpc.tls.keystore.location")
                && e.contains(s(store))
                && e.contains("password is wrong"),
            "{e}"
        );
    }
    let e = error_of(&server(&jks, "", &trust, "trustpw"));
    assert!(e.contains("hbase.rpc.tls.keystore.password"), "{e}");
    let e = error_of(&server(&jks, "serverpw", &trust, "wrong"));
    assert!(
        e.contains("hbase.rpc.tls.truststore.location") && e.contains("password is wrong"),
        "{e}"
    );
    // A key whose password differs from the store's cannot be recovered.
    run(
        "keytool",
        &[
            "-keypasswd",
            "-alias",
            "server",
            "-keystore",
            s(&jks),
            "-storepass",
            "serverpw",
            "-keypass",
            "serverpw",
            "-new",
            "otherpw",
        ],
    );
    let e = error_of(&server(&jks, "serverpw", &trust, "trustpw"));
    assert!(e.contains("differs from the store's"), "{e}");
    // A key store given as a trust store without its password.
    let e = error_of(&server(&p12, "serverpw", &jks, ""));
    assert!(e.contains("hbase.rpc.tls.truststore.password"), "{e}");
}
