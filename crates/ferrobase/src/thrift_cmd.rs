//! `ferrobase thrift`: HBase's Thrift1 gateway (`hbase thrift start`) in
//! front of a running ferrobase, so happybase and other HBase Thrift
//! clients work (see `ferrobase_thrift`).
//!
//! This module parses arguments, applies them over the settings, prints
//! where it listens and waits for Ctrl-C or SIGTERM; it holds no gateway
//! logic.

use anyhow::Context;
use clap::Args;
use ferrobase_thrift::{GatewayConfig, ThriftServer};
use std::io::Write;
use std::net::IpAddr;
use std::path::PathBuf;

/// Arguments of `ferrobase thrift`.
#[derive(Args)]
pub struct ThriftArgs {
    /// The ferrobase master's address (the standalone server's by default).
    #[arg(long, default_value = ferrobase_shell::repl::DEFAULT_SERVER)]
    server: String,
    /// Port to listen on (`hbase.regionserver.thrift.port`, default 9090;
    /// 0: any free port).
    #[arg(long, short = 'p')]
    port: Option<u16>,
    /// Address to bind (HBase's `hbase.regionserver.thrift.ipaddress`).
    #[arg(long, default_value = "0.0.0.0")]
    bind: IpAddr,
    /// Accept only framed transport (HBase's `-f`,
    /// `hbase.regionserver.thrift.framed`); by default each connection's
    /// transport is detected.
    #[arg(long, short = 'f')]
    framed: bool,
    /// A TOML settings file.
    #[arg(long)]
    config: Option<PathBuf>,
    /// `name=value` overrides, applied after the file.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Info port (/metrics, /jmx): overrides `hbase.thrift.info.port`
    /// (9095); -1 disables it, 0 picks a free port.
    #[arg(long, allow_hyphen_values = true, value_name = "PORT")]
    info_port: Option<i64>,
}

/// Runs the gateway until Ctrl-C or SIGTERM.
pub fn run(args: ThriftArgs) -> anyhow::Result<()> {
    let mut settings = crate::config::load(args.config.as_deref(), &args.set)?;
    if let Some(port) = args.port {
        settings.thrift_port = u64::from(port);
    }
    if args.framed {
        settings.thrift_framed = true;
    }
    anyhow::ensure!(
        settings.thrift_port <= u64::from(u16::MAX),
        "hbase.regionserver.thrift.port = {} is not a TCP port",
        settings.thrift_port
    );
    let config = GatewayConfig::from_settings(&settings, args.bind)?;
    let info_settings = settings.clone();
    let info_port =
        ferrobase_server::info_server::port_from(settings.thrift_info_port, args.info_port)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("ferrobase-thrift")
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        // Installed before listening, so a SIGTERM sent as soon as the
        // address is printed is never lost to the default action.
        let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .context("installing the SIGTERM handler")?;
        let conn = ferrobase_client::Connection::connect(&args.server, settings)
            .with_context(|| format!("connecting to ferrobase at {}", args.server))?;
        let server = ThriftServer::start(conn, config.clone()).await?;
        let info = match info_port {
            None => None,
            Some(port) => {
                let parts = ferrobase_server::info_server::InfoParts {
                    role: "thrift",
                    ..Default::default()
                };
                crate::info::start(std::net::SocketAddr::new(args.bind, port), parts, &info_settings).await
            }
        };
        let banner = format!(
            "ferrobase thrift gateway listening on {}\n  ferrobase: {}\n{}  transport: {}, protocol: binary or compact (detected per connection)\n",
            server.addr(),
            args.server,
            crate::info::banner_line(info.as_ref()),
            if config.framed_only { "framed only" } else { "buffered or framed (detected per connection)" },
        );
        // One write, errors ignored: whoever started us may read only the
        // first line and close the pipe; that must not stop the gateway.
        let mut out = std::io::stdout();
        let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
        wait_for_signal(term).await?;
        server.stop().await;
        if let Some(i) = info {
            i.stop().await;
        }
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
