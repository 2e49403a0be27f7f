//! Snapshots survive a server restart: listed, restorable, clonable, and
//! their archived files are not cleaned by the restart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod snapshot_common;

use bytes::Bytes;
use ferrobase_types::RowMutation;
use snapshot_common::dump;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let before;
    {
        let (server, conn) = common::start_on(dir.path(), common::settings()).await;
        let admin = conn.admin();
        admin
            .create_table(&common::table("t", &["f"]), &[Bytes::from("r5")])
            .await
            .unwrap();
        let t = conn.table("t");
        for i in 0..10 {
            t.put(RowMutation::new(format!("r{i}")).put("f", "q", format!("{i}")))
                .await
                .unwrap();
        }
        before = dump(&conn, "t").await;
        admin.snapshot("t", "keep").await.unwrap();
        // Its files leave the table (archived) before the restart.
        for i in 0..10 {
            t.put(RowMutation::new(format!("r{i}")).put("f", "q", "later"))
                .await
                .unwrap();
        }
        admin.flush("t").await.unwrap();
        admin.major_compact("t").await.unwrap();
        server.stop().await.unwrap();
    }
    // A crash mid-snapshot leaves an in-progress marker; the restart drops
    // it and the interrupted snapshot does not exist.
    std::fs::create_dir_all(dir.path().join(".hbase-snapshot/.tmp")).unwrap();
    std::fs::write(dir.path().join(".hbase-snapshot/.tmp/crashed"), b"").unwrap();

    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    let names: Vec<String> = admin
        .list_snapshots(None)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["keep"]);
    assert!(!dir.path().join(".hbase-snapshot/.tmp/crashed").exists());
    admin.clone_snapshot("keep", "c").await.unwrap();
    let c = dump(&conn, "c").await;
    assert_eq!(
        c.iter().map(|x| (&x.0, &x.4)).collect::<Vec<_>>(),
        before.iter().map(|x| (&x.0, &x.4)).collect::<Vec<_>>()
    );
    admin.disable("t").await.unwrap();
    admin.restore_snapshot("keep").await.unwrap();
    admin.enable("t").await.unwrap();
    assert_eq!(dump(&conn, "t").await, before);
    server.stop().await.unwrap();
}
