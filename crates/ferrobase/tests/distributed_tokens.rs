//! Token authentication in distributed mode: etcd, a master and two
//! region server processes with `hbase.security.authentication=kerberos`
//! and authorization on. The master proves itself to the region servers
//! with tokens it mints from the root's shared key (region opens and
//! permission pushes go through), `ferrobase token create --root` mints a
//! client's token, and a client that only claims a name is refused on
//! the master and on the region servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;

use anyhow::Result;
use bytes::Bytes;
use ferrobase_client::{ClientError, Connection, ErrorCode, Get, Permission};
use ferrobase_types::{FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::process::Command;

fn token(c: &cluster::Cluster, user: &str) -> Result<Settings> {
    let out = c.root.path().join(format!("{user}.token"));
    let status = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args([
            "token",
            "create",
            "--user",
            user,
            "--root",
            &c.root_url,
            "--out",
        ])
        .arg(&out)
        .status()?;
    assert!(status.success(), "token create for {user}");
    Ok(Settings {
        token_files: out.display().to_string(),
        ..cluster::client_settings()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secure_cluster_takes_tokens_everywhere() -> Result<()> {
    let c = cluster::Cluster::start(
        1,
        2,
        &[
            "hbase.security.authentication=kerberos",
            "hbase.security.authorization=true",
            "hbase.superuser=admin",
        ],
    )?;
    let admin = Connection::connect(&c.master_addresses(), token(&c, "admin")?)?;
    cluster::wait_servers(&admin, 2).await?;
    // Two regions on two servers: the master's region opens were accepted.
    let desc = TableDescriptor::new("t", vec![FamilyDescriptor::new("f")?])?;
    admin
        .admin()
        .create_table(&desc, &[Bytes::from("m")])
        .await?;
    let counts = cluster::region_counts(&admin).await?;
    assert_eq!(counts.len(), 2, "both servers hold a region: {counts:?}");
    for row in ["b", "x"] {
        admin
            .table("t")
            .put(RowMutation::new(row).put("f", "q", row))
            .await?;
    }
    // The master's permission push reaches both servers.
    admin
        .admin()
        .grant(&Permission::new("alice", "R", Some("t"), None, None))
        .await?;
    let alice = Connection::connect(&c.master_addresses(), token(&c, "alice")?)?;
    for row in ["b", "x"] {
        let r = alice.table("t").get(Get::new(row)).await?;
        assert_eq!(r.cells.len(), 1, "alice reads {row}");
    }

    // Claiming "admin" proves nothing, to the master or a region server.
    let claim = Connection::connect(
        &c.master_addresses(),
        Settings {
            client_user: "admin".into(),
            ..cluster::client_settings()
        },
    )?;
    let e = claim.admin().list_tables().await;
    assert!(
        matches!(
            &e,
            Err(ClientError::Server {
                code: ErrorCode::Unauthenticated,
                ..
            })
        ),
        "{e:?}"
    );
    for server in &c.servers {
        let channel =
            tonic::transport::Endpoint::from_shared(format!("http://{}", server.address()))?
                .connect()
                .await?;
        let mut direct =
            ferrobase_proto::pb::region_server_client::RegionServerClient::with_interceptor(
                channel,
                ferrobase_proto::UserHeader::new("admin"),
            );
        let e = direct
            .get(ferrobase_proto::pb::GetRequest::default())
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::Unauthenticated, "{e}");
        assert!(e.message().contains("Authentication is required"), "{e}");
    }
    Ok(())
}
