//! `ferrobase snapshot export NAME --to ROOT` as a user runs it: a
//! snapshot taken on one standalone (whose files were then compacted away
//! into the archive) is exported to another root while that server runs,
//! and a second standalone on the destination clones it and reads every
//! row. Errors name what was wrong.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use ferrobase_client::{Connection, Scan};
use ferrobase_server::Standalone;
use ferrobase_types::{FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::process::Command;

fn ferrobase(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn settings() -> Settings {
    Settings {
        memory_size: 256 * 1024 * 1024,
        client_retries: 3,
        client_pause_ms: 20,
        ..Settings::default()
    }
}

async fn start(dir: &std::path::Path) -> (Standalone, Connection) {
    let server = Standalone::start(dir, settings(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let conn = Connection::connect(&server.addr().to_string(), settings()).unwrap();
    (server, conn)
}

async fn rows(conn: &Connection, table: &str) -> Vec<(Bytes, Bytes)> {
    conn.table(table)
        .scan(Scan::new())
        .collect()
        .await
        .unwrap()
        .into_iter()
        .flat_map(|r| r.cells)
        .map(|c| (c.row, c.value))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_then_clone_on_another_root() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (server, conn) = start(a.path()).await;
    let admin = conn.admin();
    let desc = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    admin
        .create_table(&desc, &[Bytes::from("r50")])
        .await
        .unwrap();
    let t = conn.table("t");
    for i in 0..100 {
        t.put(RowMutation::new(format!("r{i:02}")).put("f", "q", format!("v{i}")))
            .await
            .unwrap();
    }
    let expected = rows(&conn, "t").await;
    admin.snapshot("t", "s").await.unwrap();
    // The snapshot's files leave the table (archived) before the export.
    t.put(RowMutation::new("r00").put("f", "q", "later"))
        .await
        .unwrap();
    admin.flush("t").await.unwrap();
    admin.major_compact("t").await.unwrap();

    let (src, dst) = (a.path().to_str().unwrap(), b.path().to_str().unwrap());
    let (ok, out, err) = ferrobase(&["snapshot", "export", "s", "--data-dir", src, "--to", dst]);
    assert!(ok, "{out}\n{err}");
    assert!(
        out.contains("exported snapshot 's'") && out.contains("2 files copied"),
        "{out}"
    );
    // Again: the destination has it now.
    let (ok, _, err) = ferrobase(&["snapshot", "export", "s", "--data-dir", src, "--to", dst]);
    assert!(!ok);
    assert!(err.contains("snapshot 's' already exists"), "{err}");
    let (ok, _, err) = ferrobase(&["snapshot", "export", "nope", "--data-dir", src, "--to", dst]);
    assert!(!ok);
    assert!(err.contains("snapshot 'nope' does not exist"), "{err}");
    server.stop().await.unwrap();

    let (server, conn) = start(b.path()).await;
    let admin = conn.admin();
    let listed: Vec<String> = admin
        .list_snapshots(None)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(listed, ["s"]);
    admin.clone_snapshot("s", "t").await.unwrap();
    assert_eq!(rows(&conn, "t").await, expected);
    assert_eq!(admin.describe("t").await.unwrap().regions.len(), 2);
    server.stop().await.unwrap();
}
