//! Shared set-up: a real standalone ferrobase on a temp dir and the Thrift
//! gateway in front of it, both on ephemeral loopback ports.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use ferrobase_client::Connection;
use ferrobase_server::Standalone;
use ferrobase_thrift::protocol::Limits;
use ferrobase_thrift::{GatewayConfig, ThriftServer};
use ferrobase_types::Settings;
use std::time::Duration;

pub struct Cluster {
    pub gateway: ThriftServer,
    pub server: Standalone,
    pub conn: Connection,
    _dir: tempfile::TempDir,
}

pub fn settings() -> Settings {
    Settings {
        memory_size: 256 * 1024 * 1024,
        client_retries: 3,
        client_pause_ms: 20,
        ..Settings::default()
    }
}

pub fn config() -> GatewayConfig {
    GatewayConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        framed_only: false,
        limits: Limits::default(),
        scanner_idle: Duration::from_secs(600),
        tls: None,
    }
}

pub async fn start(config: GatewayConfig) -> Cluster {
    let dir = tempfile::tempdir().unwrap();
    let server = Standalone::start(dir.path(), settings(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let conn = Connection::connect(&server.addr().to_string(), settings()).unwrap();
    let gateway = ThriftServer::start(conn.clone(), config).await.unwrap();
    Cluster {
        gateway,
        server,
        conn,
        _dir: dir,
    }
}

impl Cluster {
    pub async fn stop(self) {
        self.gateway.stop().await;
        self.server.stop().await.unwrap();
    }
}
