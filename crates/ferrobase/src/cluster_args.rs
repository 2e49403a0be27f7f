//! Arguments shared by `ferrobase master` and `ferrobase regionserver`:
//! etcd endpoints, the shared root, settings, where to listen.

use anyhow::Context;
use clap::Args;
use ferrobase_server::distributed::{ClusterConfig, parse_root};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

/// See the module docs.
#[derive(Args)]
pub struct ClusterArgs {
    /// etcd endpoints, comma separated (`http://127.0.0.1:2379`).
    #[arg(long, value_delimiter = ',', required = true)]
    pub etcd: Vec<String>,
    /// Shared storage root (`hbase.rootdir`): `file:///shared/dir`, a plain
    /// path, `s3://bucket/prefix?endpoint=URL` (credentials from the URL
    /// or the `AWS_*` environment variables), or `hdfs://namenode:port/path`.
    #[arg(long)]
    pub root: String,
    /// A TOML settings file.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// `name=value` overrides, applied after the file.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Address to bind (and advertise).
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Info port (web UI, /metrics, /jmx): overrides
    /// `hbase.master.info.port` / `hbase.regionserver.info.port`; -1
    /// disables it, 0 picks a free port.
    #[arg(long, allow_hyphen_values = true, value_name = "PORT")]
    pub info_port: Option<i64>,
}

impl ClusterArgs {
    /// The configuration for a process listening on `port`, its info port
    /// from `info_setting` (the process's `*.info.port`) unless
    /// `--info-port` says otherwise.
    pub fn config(
        &self,
        port: u16,
        info_setting: fn(&ferrobase_types::Settings) -> i64,
    ) -> anyhow::Result<ClusterConfig> {
        let settings = crate::config::load(self.config.as_deref(), &self.set)?;
        let root = parse_root(&self.root, &settings).context("in --root")?;
        root.create_dir_all(std::path::Path::new(""))
            .with_context(|| format!("creating the root {}", root.url()))?;
        let info_port =
            ferrobase_server::info_server::port_from(info_setting(&settings), self.info_port)?;
        Ok(ClusterConfig {
            info_port,
            // Only an active master serves it (`ferrobase master` sets it).
            zookeeper_port: None,
            etcd: self.etcd.clone(),
            root,
            bind: SocketAddr::new(self.bind, port),
            settings,
        })
    }
}

/// A multi-threaded runtime for a server process.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("ferrobase-rpc")
        .build()
        .context("starting the async runtime")
}

/// Resolves on Ctrl-C or SIGTERM (installed before the server starts, so
/// an early SIGTERM is never lost to the default action).
pub fn stop_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    Ok(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    })
}

/// Prints one line to stdout in one write, ignoring a closed pipe.
pub fn say(line: String) {
    use std::io::Write;
    let mut out = std::io::stdout();
    let _ = out
        .write_all(format!("{line}\n").as_bytes())
        .and_then(|()| out.flush());
}
