//! The client against a real etcd (Debian's `etcd` binary, started on free
//! loopback ports in a temp dir): keys and prefixes, a lease whose keys
//! vanish when it is revoked, keep-alive answers, and the election.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use anyhow::{Context, Result, bail};
use ferrobase_etcd::launcher::{EtcdProcess, free_port};
use ferrobase_etcd::{Client, ConnectOptions, GetOptions, PutOptions};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_leases_and_election_against_a_real_etcd() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let etcd = EtcdProcess::start(dir.path())?;
    // An unreachable endpoint first: the client moves on to the next one.
    let dead = format!("http://127.0.0.1:{}", free_port()?);
    let mut c = Client::connect(
        &[dead, etcd.url().to_string()],
        Some(ConnectOptions::new().with_connect_timeout(Duration::from_secs(2))),
    )
    .await?;

    c.put("/t/a", "1", None).await?;
    c.put("/t/b", "2", None).await?;
    c.put("/u", "3", None).await?;
    let all = c.get("/t/", Some(GetOptions::new().with_prefix())).await?;
    let keys: Vec<&str> = all.kvs().iter().map(|kv| kv.key_str().unwrap()).collect();
    assert_eq!(keys, ["/t/a", "/t/b"]);
    assert_eq!(c.get("/u", None).await?.kvs()[0].value(), b"3");

    // A key under a lease vanishes when the lease is revoked.
    let lease = c.lease_grant(5, None).await?.id();
    c.put("/t/leased", "x", Some(PutOptions::new().with_lease(lease)))
        .await?;
    let (mut keeper, mut stream) = c.lease_keep_alive(lease).await?;
    let first = stream.message().await?.context("no keep-alive answer")?;
    assert_eq!(first.id(), lease);
    assert!(first.ttl() > 0);
    keeper.keep_alive().await?;
    assert!(stream.message().await?.context("no second answer")?.ttl() > 0);
    assert_eq!(c.get("/t/leased", None).await?.kvs().len(), 1);
    c.lease_revoke(lease).await?;
    assert!(c.get("/t/leased", None).await?.kvs().is_empty());

    // Election: no leader, then the campaigner leads.
    match c.leader("/t/election").await {
        Err(ferrobase_etcd::Error::GRpcStatus(s)) => assert!(s.message().contains("no leader")),
        other => bail!("expected 'no leader', got {other:?}"),
    }
    let lease = c.lease_grant(5, None).await?.id();
    c.campaign("/t/election", "me:1", lease).await?;
    let leader = c.leader("/t/election").await?;
    assert_eq!(leader.kv().context("no leader key")?.value(), b"me:1");

    c.delete("/t/", Some(GetOptions::new().with_prefix()))
        .await?;
    assert!(
        c.get("/t/", Some(GetOptions::new().with_prefix()))
            .await?
            .kvs()
            .is_empty()
    );
    assert_eq!(c.get("/u", None).await?.kvs().len(), 1);
    Ok(())
}

#[tokio::test]
async fn bad_endpoints_are_clear_errors() {
    let e = Client::connect(&["not a url"], None)
        .await
        .err()
        .map(|e| e.to_string());
    assert!(e.unwrap_or_default().contains("not a url"));
    let none: [&str; 0] = [];
    let e = Client::connect(&none, None)
        .await
        .err()
        .map(|e| e.to_string());
    assert_eq!(e.as_deref(), Some("no etcd endpoint given"));
}
