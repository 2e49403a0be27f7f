//! Snapshots in distributed mode: etcd, a master and two region server
//! processes on a shared root. The master flushes the regions through the
//! region servers and reads their manifests from the root; the region
//! servers' compactions archive the files the snapshot holds; a clone and
//! a restore read back exactly the snapshot's rows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;

use anyhow::Result;
use bytes::Bytes;
use ferrobase_client::{Connection, Scan};
use ferrobase_types::{FamilyDescriptor, RowMutation, TableDescriptor};

async fn rows(conn: &Connection, table: &str) -> Result<Vec<(Bytes, Bytes)>> {
    Ok(conn
        .table(table)
        .scan(Scan::new())
        .collect()
        .await?
        .into_iter()
        .flat_map(|r| r.cells)
        .map(|c| (c.row, c.value))
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_clone_restore_across_region_servers() -> Result<()> {
    let c = cluster::Cluster::start(1, 2, &[])?;
    let conn = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&conn, 2).await?;
    let admin = conn.admin();
    let desc = TableDescriptor::new("t", vec![FamilyDescriptor::new("f")?])?;
    admin
        .create_table(&desc, &[Bytes::from("h"), Bytes::from("p")])
        .await?;
    let counts = cluster::region_counts(&conn).await?;
    assert_eq!(counts.len(), 2, "both servers hold regions: {counts:?}");
    let t = conn.table("t");
    for i in 0..300u32 {
        let row = format!("{}{i:03}", (b'a' + (i % 26) as u8) as char);
        t.put(RowMutation::new(row).put("f", "q", format!("v{i}")))
            .await?;
    }
    let expected = rows(&conn, "t").await?;
    admin.snapshot("t", "s").await?;

    for i in 0..50u32 {
        t.put(RowMutation::new(format!("a{i:03}")).put("f", "q", "changed"))
            .await?;
    }
    admin.flush("t").await?;
    admin.major_compact("t").await?;
    let archived = c.root.path().join("archive");
    assert!(archived.exists(), "the compactions archived held files");

    admin.clone_snapshot("s", "c").await?;
    assert_eq!(rows(&conn, "c").await?, expected);
    admin.disable("t").await?;
    admin.restore_snapshot("s").await?;
    admin.enable("t").await?;
    assert_eq!(rows(&conn, "t").await?, expected);
    admin.delete_snapshot("s").await?;
    assert!(admin.list_snapshots(None).await?.is_empty());
    Ok(())
}
