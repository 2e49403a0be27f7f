//! Distributed mode with etcd over TLS: etcd serves `https://` only and
//! requires client certificates; the master and region servers reach it
//! with `zookeeper.ssl.trustStore.location` / `keyStore.location`, and a
//! client works through them. A region server without a client
//! certificate is refused, and says that it is etcd's TLS that failed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;

use anyhow::Result;
use ferrobase_client::{Connection, Get};
use ferrobase_tls::testing::TestPki;
use ferrobase_types::{FamilyDescriptor, RowMutation, TableDescriptor};
use std::process::Command;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_coordinates_through_etcd_over_tls() -> Result<()> {
    let certs = tempfile::tempdir()?;
    let pki = TestPki::generate(certs.path())?;
    let etcd = cluster::Etcd::start_tls(&pki.server, &pki.ca)?;
    assert!(etcd.url.starts_with("https://"), "{}", etcd.url);
    let trust = format!("zookeeper.ssl.trustStore.location={}", pki.ca.display());
    let key = format!("zookeeper.ssl.keyStore.location={}", pki.client.display());
    let c = cluster::Cluster::start_with(etcd, None, 1, 1, &[&trust, &key])?;
    let conn = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&conn, 1).await?;
    let desc = TableDescriptor::new("t", vec![FamilyDescriptor::new("f")?])?;
    conn.admin().create_table(&desc, &[]).await?;
    conn.table("t")
        .put(RowMutation::new("r").put("f", "q", "v"))
        .await?;
    let got = conn.table("t").get(Get::new("r")).await?;
    assert_eq!(got.cells[0].value, "v");

    // Without a client certificate etcd refuses the handshake, and the
    // region server exits naming etcd and TLS.
    let out = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(["regionserver", "--etcd", &c.etcd.url, "--root", &c.root_url])
        .args(["--port", &cluster::free_port()?.to_string()])
        .args(["--set", &trust, "--info-port", "-1"])
        .output()?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("etcd") && err.contains("TLS"), "{err}");
    Ok(())
}
