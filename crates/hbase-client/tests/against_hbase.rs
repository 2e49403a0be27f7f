//! The client against a real Apache HBase 2.6 (`scripts/hbase-peer.sh`:
//! the Apache artifacts from Maven Central, one JVM with the master, a
//! region server and ZooKeeper), over TCP: the same checks as against
//! ferrobase. Needs Java 17 and Maven (`scripts/java-deps.sh peer`); where
//! `java` is absent the test prints why and checks nothing, unless
//! `FERROBASE_REQUIRE_HBASE_PEER=1` (set by scripts/test.sh), which makes
//! a missing or failing peer a failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_hbase_client::Connection;
use std::path::PathBuf;
use std::process::Command;

fn required() -> bool {
    std::env::var("FERROBASE_REQUIRE_HBASE_PEER").is_ok_and(|v| v == "1")
}

fn skip(why: &str) {
    assert!(
        !required(),
        "FERROBASE_REQUIRE_HBASE_PEER=1 but the HBase peer cannot run: {why}"
    );
    eprintln!(
        "\n==================== SKIPPED: Rust client against Apache HBase ====================\n\
         {why}\nThis test checked NOTHING. scripts/java-deps.sh peer installs a JDK 17, Maven\n\
         and the HBase artifacts; scripts/test.sh does and then requires this test.\n\
         ====================================================================================\n"
    );
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The peer's JVM, stopped (SIGTERM, then SIGKILL) when dropped.
struct Peer {
    script: PathBuf,
    dir: tempfile::TempDir,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = Command::new(&self.script)
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_calls_and_ddl_against_apache_hbase() {
    if Command::new("java").arg("-version").output().is_err() {
        return skip("java is not on PATH");
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("scripts/hbase-peer.sh");
    let dir = tempfile::Builder::new()
        .prefix("ferrobase-hbase-peer-test-")
        .tempdir()
        .unwrap();
    let (master, rs, zk) = (free_port(), free_port(), free_port());
    let peer = Peer {
        script: script.clone(),
        dir,
    };
    let out = Command::new(&script)
        .arg("start")
        .arg(peer.dir.path())
        .env("HBASE_PEER_HEAP", "768m")
        .env("HBASE_PEER_MASTER_PORT", master.to_string())
        .env("HBASE_PEER_RS_PORT", rs.to_string())
        .env("HBASE_PEER_ZK_PORT", zk.to_string())
        .output()
        .unwrap();
    if !out.status.success() {
        let why = format!(
            "scripts/hbase-peer.sh start failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        return skip(&why);
    }
    let conn = Connection::connect(&format!("127.0.0.1:{rs}"))
        .await
        .unwrap();
    assert!(!conn.cluster_id().is_empty());
    assert_eq!(conn.master(), format!("127.0.0.1:{master}"));
    common::create(&conn, "rust_client").await;
    common::exercise(&conn, "rust_client").await;
    common::reversed_and_atomic(&conn, "rust_client").await;
    common::flush_and_compact(&conn, "rust_client").await;
    common::drop(&conn, "rust_client").await;
    drop(conn);
    drop(peer);
}
