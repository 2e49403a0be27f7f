//! `ferrobase standalone`: master, one region server and the meta in one
//! process on a local data directory (see `ferrobase_server::standalone`).
//!
//! This module parses arguments, prints where it listens and waits for
//! Ctrl-C or SIGTERM to shut down cleanly; it holds no database logic.

use anyhow::Context;
use clap::Args;
use ferrobase_server::Standalone;
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
        let server = Standalone::start(
            &args.data_dir,
            settings,
            SocketAddr::new(args.bind, args.port),
        )
        .await
        .with_context(|| format!("starting standalone on {}", args.data_dir.display()))?;
        println!("ferrobase standalone listening on {}", server.addr());
        println!("  master and region server: {}", server.addr());
        println!("  data directory: {}", args.data_dir.display());
        wait_for_signal().await?;
        eprintln!("shutting down: closing scanners, flushing regions, syncing the WAL");
        server.stop().await.context("shutting down")?;
        eprintln!("stopped");
        Ok(())
    })
}

async fn wait_for_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.context("waiting for Ctrl-C")?,
        _ = term.recv() => {}
    }
    Ok(())
}
