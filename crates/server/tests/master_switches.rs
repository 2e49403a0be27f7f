//! The master's switches (HBase's `catalogjanitor_switch`,
//! `balance_switch`): with the janitor switched off its chore leaves a
//! split parent no daughter reads any more, while `catalogjanitor_run`
//! still removes it; both switches keep their state across a restart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use ferrobase_types::RowMutation;

fn region_dirs(table_dir: &std::path::Path) -> usize {
    std::fs::read_dir(table_dir).unwrap().count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_janitor_switch_stops_its_chore_not_a_run_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let t = conn.table("t");
    for i in 0..100 {
        t.put(RowMutation::new(format!("r{i:03}")).put("f", "q", "v"))
            .await
            .unwrap();
    }
    admin.flush("t").await.unwrap();
    assert!(admin.catalog_janitor_switch(false).await.unwrap(), "was on");
    admin
        .split("t", Some(Bytes::from_static(b"r050")))
        .await
        .unwrap();
    // The daughters rewrite their references: the parent is read by none.
    admin.major_compact("t").await.unwrap();
    let table_dir = dir.path().join("data/t");
    assert_eq!(region_dirs(&table_dir), 3, "parent and two daughters");
    server.master().janitor_chore();
    assert_eq!(
        region_dirs(&table_dir),
        3,
        "the switched-off chore removed nothing"
    );
    assert!(admin.run_catalog_janitor().await.unwrap() >= 1);
    assert_eq!(
        region_dirs(&table_dir),
        2,
        "catalogjanitor_run removed the parent"
    );

    assert!(admin.balance_switch(false).await.unwrap(), "was on");
    assert_eq!(
        admin.balance().await.unwrap(),
        0,
        "one server: nothing to move"
    );
    server.stop().await.unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    assert!(!admin.catalog_janitor_enabled().await.unwrap());
    assert!(!admin.balancer_enabled().await.unwrap());
    assert!(!admin.balance_switch(true).await.unwrap());
    assert!(admin.balancer_enabled().await.unwrap());
    server.stop().await.unwrap();
}
