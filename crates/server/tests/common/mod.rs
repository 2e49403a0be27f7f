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

pub async fn start_on(dir: &Path, settings: Settings) -> (Standalone, Connection) {
    let server = Standalone::start(dir, settings.clone(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let conn = Connection::connect(&server.addr().to_string(), settings).unwrap();
    (server, conn)
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
