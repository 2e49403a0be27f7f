//! `ferrobase standalone`: master, one region server and the meta in one
//! process on a local data directory or a storage root such as an S3
//! bucket (see `ferrobase_server::standalone`).
//!
//! This module parses arguments, prints where it listens and waits for
//! Ctrl-C or SIGTERM to shut down cleanly; it holds no database logic.

use anyhow::Context;
use clap::Args;
use ferrobase_server::Standalone;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

/// Arguments of `ferrobase standalone`.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("place").required(true).args(["data_dir", "root"])))]
pub struct StandaloneArgs {
    /// Data directory (meta, WAL, store files); created if missing.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Storage root instead of a data directory (`hbase.rootdir`):
    /// `file:///dir`, `s3://bucket/prefix?endpoint=URL` or
    /// `hdfs://namenode:port/path` (see README, "Distributed mode").
    #[arg(long)]
    root: Option<String>,
    /// A TOML settings file.
    #[arg(long)]
    config: Option<PathBuf>,
    /// `name=value` overrides, applied after the file.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Port for the master and region server services (0: any free port).
    #[arg(long, default_value_t = 16020)]
    port: u16,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Also run the HBase Thrift1 gateway (happybase) on this port, on the
    /// same address (`ferrobase thrift` runs it as its own process).
    #[arg(long, value_name = "PORT")]
    thrift_port: Option<u16>,
    /// Info port (web UI with the master's and the region server's pages,
    /// /metrics, /jmx): overrides `hbase.master.info.port` (16010); -1
    /// disables it, 0 picks a free port.
    #[arg(long, allow_hyphen_values = true, value_name = "PORT")]
    info_port: Option<i64>,
    /// ZooKeeper registry endpoint for HBase clients configured with
    /// `hbase.zookeeper.quorum`: overrides
    /// `hbase.zookeeper.property.clientPort` (2181); -1 disables it, 0
    /// picks a free port.
    #[arg(long, allow_hyphen_values = true, value_name = "PORT")]
    zookeeper_port: Option<i64>,
}

/// Runs until Ctrl-C or SIGTERM.
pub fn run(args: StandaloneArgs) -> anyhow::Result<()> {
    let settings = crate::config::load(args.config.as_deref(), &args.set)?;
    let settings_for_thrift = settings.clone();
    let info_settings = settings.clone();
    let info_port =
        ferrobase_server::info_server::port_from(settings.master_info_port, args.info_port)?;
    let zookeeper_port = ferrobase_server::zookeeper_registry::port_from(
        settings.zookeeper_client_port,
        args.zookeeper_port,
    )?;
    let znode_parent = settings.zookeeper_znode_parent.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("ferrobase-rpc")
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        // Installed before the server starts, so a SIGTERM sent as soon as
        // the address is printed is never lost to the default action.
        let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("installing the SIGTERM handler")?;
        let bind = SocketAddr::new(args.bind, args.port);
        let (server, place) = match (&args.root, &args.data_dir) {
            (Some(url), _) => {
                let fs = ferrobase_server::distributed::parse_root(url, &settings)?;
                let place = fs.url();
                let server = Standalone::start_on(fs, settings, bind).await;
                (server, place)
            }
            (None, Some(dir)) => (
                Standalone::start(dir, settings, bind).await,
                dir.display().to_string(),
            ),
            (None, None) => anyhow::bail!("give --data-dir DIR or --root URL"),
        };
        let server = server.with_context(|| format!("starting standalone on {place}"))?;
        let gateway = match args.thrift_port {
            None => None,
            Some(port) => {
                let bind = SocketAddr::new(args.bind, port);
                match start_thrift(server.addr(), settings_for_thrift, bind).await {
                    Ok(g) => Some(g),
                    Err(e) => {
                        let _ = server.stop().await;
                        return Err(e);
                    }
                }
            }
        };
        let info = match info_port {
            None => None,
            Some(port) => {
                let parts = ferrobase_server::info_server::InfoParts {
                    master: Some(server.master().clone()),
                    region_server: Some(server.region_server().clone()),
                    role: "standalone",
                };
                crate::info::start(SocketAddr::new(args.bind, port), parts, &info_settings).await
            }
        };
        let zookeeper = match zookeeper_port {
            None => None,
            Some(port) => {
                let source = ferrobase_server::zookeeper_registry::RegistrySource {
                    hbase: server.hbase_rpc().clone(),
                    parent: znode_parent,
                    info_port: info.as_ref().map_or(0, |i| i.addr().port()),
                };
                let bind = SocketAddr::new(args.bind, port);
                match ferrobase_server::zookeeper_registry::ZooKeeperRegistry::start(bind, source)
                    .await
                {
                    Ok(z) => Some(z),
                    Err(e) => {
                        // Like the info port: not fatal, HBase clients can
                        // still use the RPC registry.
                        let _ = writeln!(std::io::stderr(), "warning: {e}");
                        None
                    }
                }
            }
        };
        let zookeeper_line = zookeeper
            .as_ref()
            .map(|z| format!("  ZooKeeper registry (hbase.zookeeper.quorum): {}\n", z.addr()))
            .unwrap_or_default();
        let info_line = crate::info::banner_line(info.as_ref());
        let thrift_line = gateway
            .as_ref()
            .map(|g| format!("  thrift gateway: {}\n", g.addr()))
            .unwrap_or_default();
        // One write, errors ignored: whoever started us may read only the
        // first line and close the pipe; that must not stop the server.
        let banner = format!(
            "ferrobase standalone listening on {addr}\n  master and region server: {addr}\n  data directory: {place}\n{info_line}{zookeeper_line}{thrift_line}",
            addr = server.addr()
        );
        let mut out = std::io::stdout();
        let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
        wait_for_signal(term).await?;
        if let Some(g) = gateway {
            g.stop().await;
        }
        if let Some(i) = info {
            i.stop().await;
        }
        if let Some(z) = zookeeper {
            z.stop().await;
        }
        let _ = writeln!(std::io::stderr(), "shutting down: closing scanners, flushing regions, syncing the WAL");
        server.stop().await.context("shutting down")?;
        let _ = writeln!(std::io::stderr(), "stopped");
        Ok(())
    })
}

/// The Thrift gateway (`--thrift-port`) in front of this process's server.
async fn start_thrift(
    server: SocketAddr,
    settings: ferrobase_types::Settings,
    bind: SocketAddr,
) -> anyhow::Result<ferrobase_thrift::ThriftServer> {
    let conn = ferrobase_client::Connection::connect(&server.to_string(), settings)?;
    let mut config = ferrobase_thrift::GatewayConfig::from_settings(conn.settings(), bind.ip())?;
    config.bind = bind;
    Ok(ferrobase_thrift::ThriftServer::start(conn, config).await?)
}

async fn wait_for_signal(mut term: tokio::signal::unix::Signal) -> anyhow::Result<()> {
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.context("waiting for Ctrl-C")?,
        _ = term.recv() => {}
    }
    Ok(())
}
