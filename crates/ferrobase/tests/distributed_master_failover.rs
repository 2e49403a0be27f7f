//! Master failover: two masters and two region servers on etcd. The active
//! master is killed with SIGKILL; the standby's campaign wins once the
//! dead master's lease expires, it loads the meta from the shared root and
//! learns the assignments from the region servers, and DDL works again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;

use anyhow::Result;
use bytes::Bytes;
use ferrobase_client::{Connection, Get};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standby_master_takes_over_and_ddl_works() -> Result<()> {
    let mut c = cluster::Cluster::start(2, 2, &[])?;
    let conn = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&conn, 2).await?;
    let desc = TableDescriptor::new("before", vec![FamilyDescriptor::new("f")?])?;
    conn.admin()
        .create_table(&desc, &[Bytes::from_static(b"m")])
        .await?;
    let t = conn.table("before");
    for row in ["a1", "z1"] {
        t.put(
            RowMutation::new(row)
                .with_durability(Durability::SyncWal)
                .put("f", "q", row),
        )
        .await?;
    }

    let killed = Instant::now();
    c.masters[0].kill()?;
    c.masters[1].wait_line("active on", Duration::from_secs(30))?;
    println!(
        "standby master active {:.2} s after the kill",
        killed.elapsed().as_secs_f64()
    );
    // Data path: the region servers kept serving; a read finds the new
    // master for its locations (the connection names both masters).
    conn.table("before").get(Get::new("a1")).await?;
    let fresh = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    assert!(!fresh.table("before").get(Get::new("z1")).await?.is_empty());

    // DDL on the new master; the meta written by the old one survived.
    let admin = conn.admin();
    assert_eq!(admin.list_tables().await?, vec!["before".to_string()]);
    let desc = TableDescriptor::new("after", vec![FamilyDescriptor::new("f")?])?;
    admin.create_table(&desc, &[]).await?;
    let t = conn.table("after");
    t.put(RowMutation::new("r").put("f", "q", "v")).await?;
    assert_eq!(t.get(Get::new("r")).await?.cells.len(), 1);
    admin.disable("before").await?;
    admin.drop_table("before").await?;
    assert_eq!(admin.list_tables().await?, vec!["after".to_string()]);
    Ok(())
}
