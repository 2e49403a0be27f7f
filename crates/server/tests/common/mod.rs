//! Shared set-up: a standalone server on an ephemeral loopback port.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use ferrobase_client::Connection;
use ferrobase_server::Standalone;
use ferrobase_types::{FamilyDescriptor, Settings, TableDescriptor};
use std::path::Path;

pub fn settings() -> Settings {
    Settings {
        memory_size: 256 * 1024 * 1024,
        client_retries: 3,
        client_pause_ms: 20,
        ..Settings::default()
    }
}

/// In secure mode (`hbase.security.authentication` other than simple) the
/// connection presents a token for its user, minted from the server's key
/// into a token file under `dir`, as `ferrobase token create` does.
pub async fn start_on(dir: &Path, settings: Settings) -> (Standalone, Connection) {
    let server = Standalone::start(dir, settings.clone(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let mut client = settings.clone();
    if !settings
        .security_authentication
        .eq_ignore_ascii_case("simple")
    {
        let file = token_file(dir, &settings.claimed_user(), &settings);
        client.token_files = file.display().to_string();
    }
    let conn = Connection::connect(&server.addr().to_string(), client).unwrap();
    (server, conn)
}

/// A Hadoop token file under `dir` holding a token for `user`, minted from
/// the key of the standalone server on `dir`.
pub fn token_file(dir: &Path, user: &str, settings: &Settings) -> std::path::PathBuf {
    let authority = ferrobase_server::auth::TokenAuthority::open(
        &ferrobase_storage::fs::LocalFs::new(dir),
        ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID,
        settings,
    )
    .unwrap();
    let token = authority.mint(user, ferrobase_server::auth::now_ms());
    let path = dir.join(format!("{user}.token"));
    std::fs::write(
        &path,
        ferrobase_hbase_wire::token::encode_storage(&[token.to_stored()]),
    )
    .unwrap();
    path
}

/// A standalone server on a storage root URL (`s3://…`).
pub async fn start_on_root(url: &str, settings: Settings) -> (Standalone, Connection) {
    let fs = ferrobase_storage::fs::from_url(url).unwrap();
    let server = Standalone::start_on(fs, settings.clone(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let conn = Connection::connect(&server.addr().to_string(), settings).unwrap();
    (server, conn)
}

pub fn table(name: &str, families: &[&str]) -> TableDescriptor {
    TableDescriptor::new(
        name,
        families
            .iter()
            .map(|f| FamilyDescriptor::new(f).unwrap())
            .collect(),
    )
    .unwrap()
}

/// An HTTP/1.1 GET over a fresh loopback connection: (status, body).
pub async fn http_get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status: u16 = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, body)
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}
