//! Balancer: 3 region servers hold an 8-region table; a fourth joins and
//! the master's balancer (`hbase.balancer.period` = 1 s here) moves regions
//! to it (flush and close on the source, open on the target) until the
//! counts differ by at most one. Every row written before is still there.
//! With `balance_switch false` a fifth server gets no region until
//! `balancer` is asked for by name; `compaction_switch` reaches every
//! region server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;

use anyhow::{Result, bail};
use bytes::Bytes;
use ferrobase_client::Connection;
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fourth_region_server_gets_its_share_of_regions() -> Result<()> {
    let mut c = cluster::Cluster::start(1, 3, &["hbase.balancer.period=1000"])?;
    let conn = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&conn, 3).await?;
    let desc = TableDescriptor::new("bt", vec![FamilyDescriptor::new("f")?])?;
    let splits: Vec<Bytes> = ["b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .map(|s| Bytes::from_static(s.as_bytes()))
        .collect();
    conn.admin().create_table(&desc, &splits).await?;
    let t = conn.table("bt");
    let rows: Vec<String> = (0..400)
        .map(|i| format!("{}{i:04}", (b'a' + (i % 8) as u8) as char))
        .collect();
    let muts: Vec<RowMutation> = rows
        .iter()
        .map(|r| {
            RowMutation::new(r.clone())
                .with_durability(Durability::SyncWal)
                .put("f", "q", r.clone())
        })
        .collect();
    for r in t.batch(&muts).await {
        r?;
    }
    println!("before: {:?}", cluster::region_counts(&conn).await?);

    c.add_server()?;
    let newcomer = c.servers[3].address();
    let deadline = Instant::now() + Duration::from_secs(45);
    loop {
        let counts = cluster::region_counts(&conn).await?;
        let (max, min) = (
            counts.values().max().copied().unwrap_or(0),
            counts.values().min().copied().unwrap_or(0),
        );
        if counts.len() == 4 && counts.get(&newcomer).copied().unwrap_or(0) >= 2 && max - min <= 1 {
            println!("after: {counts:?}");
            break;
        }
        if Instant::now() > deadline {
            bail!("regions did not spread to the new server: {counts:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let got = t
        .get_rows(
            rows.iter().map(|r| Bytes::from(r.clone())).collect(),
            &Default::default(),
        )
        .await?;
    for (r, g) in rows.iter().zip(got) {
        assert!(!g.is_empty(), "row {r} lost in a region move");
    }

    // balance_switch false: a fifth server gets nothing over three
    // balancer periods; `balancer` asked for by name still runs a pass.
    let admin = conn.admin();
    assert!(admin.balance_switch(false).await?, "was on");
    c.add_server()?;
    let fifth = c.servers[4].address();
    cluster::wait_servers(&conn, 5).await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let counts = cluster::region_counts(&conn).await?;
    assert_eq!(counts.get(&fifth).copied().unwrap_or(0), 0, "{counts:?}");
    assert!(admin.balance().await? >= 1);
    let counts = cluster::region_counts(&conn).await?;
    assert!(counts.get(&fifth).copied().unwrap_or(0) >= 1, "{counts:?}");

    // compaction_switch reaches every region server.
    let before = admin.compaction_switch(false).await?;
    assert_eq!(before.len(), 5);
    assert!(before.iter().all(|(_, on)| *on), "{before:?}");
    let after = admin.compaction_switch(true).await?;
    assert!(after.iter().all(|(_, on)| !*on), "{after:?}");
    Ok(())
}
