//! Every way a snapshot call can be wrong gets a clear error naming what
//! was wrong, with a stable code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_client::ErrorCode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_errors_name_what_was_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    admin
        .create_table(&common::table("other", &["f"]), &[])
        .await
        .unwrap();

    let check = |e: ferrobase_client::ClientError, code: ErrorCode, says: &str| {
        assert_eq!(e.code(), Some(code), "{e}");
        assert!(e.to_string().contains(says), "'{e}' should say '{says}'");
    };
    check(
        admin.snapshot("nope", "s").await.unwrap_err(),
        ErrorCode::TableNotFound,
        "table 'nope' does not exist",
    );
    check(
        admin.snapshot("t", "bad name").await.unwrap_err(),
        ErrorCode::InvalidRequest,
        "snapshot name 'bad name' is invalid",
    );
    admin.snapshot("t", "s").await.unwrap();
    check(
        admin.snapshot("other", "s").await.unwrap_err(),
        ErrorCode::SnapshotExists,
        "snapshot 's' already exists",
    );
    check(
        admin.restore_snapshot("s").await.unwrap_err(),
        ErrorCode::TableNotDisabled,
        "table 't' is enabled; disable it before restoring snapshot 's'",
    );
    check(
        admin.clone_snapshot("s", "other").await.unwrap_err(),
        ErrorCode::TableExists,
        "table 'other' already exists",
    );
    for e in [
        admin.clone_snapshot("missing", "x").await.unwrap_err(),
        admin.restore_snapshot("missing").await.unwrap_err(),
        admin.delete_snapshot("missing").await.unwrap_err(),
    ] {
        check(
            e,
            ErrorCode::SnapshotNotFound,
            "snapshot 'missing' does not exist",
        );
    }
    check(
        admin.list_snapshots(Some("(")).await.unwrap_err(),
        ErrorCode::InvalidRequest,
        "invalid snapshot name pattern '('",
    );
    // A failed call leaves nothing behind.
    let names: Vec<String> = admin
        .list_snapshots(None)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["s"]);
    assert!(!admin.exists("x").await.unwrap());
    assert!(
        std::fs::read_dir(dir.path().join(".hbase-snapshot/.tmp"))
            .map(|d| d.count())
            .unwrap_or(0)
            == 0,
        "no in-progress marker left"
    );
    server.stop().await.unwrap();
}
