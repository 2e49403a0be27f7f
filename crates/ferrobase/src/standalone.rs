//! `ferrobase standalone`: master, one region server and the meta in one
//! process on a local data directory (see `ferrobase_server::standalone`).
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
pub struct StandaloneArgs {
    /// Data directory (meta, WAL, store files); created if missing.
    #[arg(long)]
    data_dir: PathBuf,
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
}

/// Runs until Ctrl-C or SIGTERM.
pub fn run(args: StandaloneArgs) -> anyhow::Result<()> {
    let settings = crate::config::load(args.config.as_deref(), &args.set)?;
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
        let server = Standalone::start(
            &args.data_dir,
            settings,
            SocketAddr::new(args.bind, args.port),
        )
        .await
        .with_context(|| format!("starting standalone on {}", args.data_dir.display()))?;
        // One write, errors ignored: whoever started us may read only the
        // first line and close the pipe; that must not stop the server.
        let banner = format!(
            "ferrobase standalone listening on {addr}\n  master and region server: {addr}\n  data directory: {}\n",
            args.data_dir.display(),
            addr = server.addr()
        );
        let mut out = std::io::stdout();
        let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
        wait_for_signal(term).await?;
        let _ = writeln!(std::io::stderr(), "shutting down: closing scanners, flushing regions, syncing the WAL");
        server.stop().await.context("shutting down")?;
        let _ = writeln!(std::io::stderr(), "stopped");
        Ok(())
    })
}

async fn wait_for_signal(mut term: tokio::signal::unix::Signal) -> anyhow::Result<()> {
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.context("waiting for Ctrl-C")?,
        _ = term.recv() => {}
    }
    Ok(())
}
