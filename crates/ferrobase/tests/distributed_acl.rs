//! Permissions in distributed mode: etcd, a master and two region server
//! processes with `hbase.security.authorization` on. The master keeps the
//! grants in its meta and pushes them to the region servers, which enforce
//! them on the regions they hold: a grant lets alice read rows on both
//! servers, a revoke stops her on both. The test's own user started every
//! process, so it is their superuser (and the master's calls to the region
//! servers pass as it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;

use anyhow::Result;
use bytes::Bytes;
use ferrobase_client::{ClientError, Connection, ErrorCode, Get, Permission};
use ferrobase_types::{FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::time::{Duration, Instant};

const ROWS: [&str; 2] = ["b", "x"];

async fn alice_reads(alice: &Connection) -> Vec<Option<ErrorCode>> {
    let mut out = Vec::new();
    for row in ROWS {
        out.push(match alice.table("t").get(Get::new(row)).await {
            Ok(_) => None,
            Err(e) => Some(e.code().unwrap_or(ErrorCode::Internal)),
        });
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn region_servers_enforce_the_masters_grants() -> Result<()> {
    let c = cluster::Cluster::start(1, 2, &["hbase.security.authorization=true"])?;
    let admin = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&admin, 2).await?;
    let desc = TableDescriptor::new("t", vec![FamilyDescriptor::new("f")?])?;
    admin
        .admin()
        .create_table(&desc, &[Bytes::from("m")])
        .await?;
    let counts = cluster::region_counts(&admin).await?;
    assert_eq!(counts.len(), 2, "both servers hold a region: {counts:?}");
    for row in ROWS {
        admin
            .table("t")
            .put(RowMutation::new(row).put("f", "q", row))
            .await?;
    }
    let alice = Connection::connect(
        &c.master_addresses(),
        Settings {
            client_user: "alice".into(),
            ..cluster::client_settings()
        },
    )?;
    let denied = Some(ErrorCode::AccessDenied);
    assert_eq!(alice_reads(&alice).await, [denied, denied]);

    admin
        .admin()
        .grant(&Permission::new("alice", "R", Some("t"), None, None))
        .await?;
    // The push is synchronous; the reconcile pass would repeat it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while alice_reads(&alice).await != [None, None] {
        assert!(
            Instant::now() < deadline,
            "alice still denied after the grant"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let w = alice
        .table("t")
        .put(RowMutation::new("b").put("f", "q", "no"))
        .await;
    assert!(matches!(
        w,
        Err(ClientError::Server {
            code: ErrorCode::AccessDenied,
            ..
        })
    ));

    admin
        .admin()
        .revoke(&Permission::new("alice", "", Some("t"), None, None))
        .await?;
    assert_eq!(alice_reads(&alice).await, [denied, denied]);
    Ok(())
}
