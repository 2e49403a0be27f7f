//! `ferrobase master`: one master of a distributed cluster. It waits as a
//! standby until etcd elects it, then serves DDL and assigns regions (see
//! `ferrobase_server::distributed`). This module only parses arguments and
//! prints state changes.

use crate::cluster_args::{ClusterArgs, runtime, say, stop_signal};
use clap::Args;

/// Arguments of `ferrobase master`.
#[derive(Args)]
pub struct MasterArgs {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Port of the master service once active.
    #[arg(long, default_value_t = 16000)]
    port: u16,
    /// ZooKeeper registry endpoint, served while active: overrides
    /// `hbase.zookeeper.property.clientPort` (2181); -1 disables it, 0
    /// picks a free port.
    #[arg(long, allow_hyphen_values = true, value_name = "PORT")]
    zookeeper_port: Option<i64>,
}

/// Runs until Ctrl-C or SIGTERM, or until its etcd session is lost.
pub fn run(args: MasterArgs) -> anyhow::Result<()> {
    let mut cfg = args.cluster.config(args.port, |s| s.master_info_port)?;
    cfg.zookeeper_port = ferrobase_server::zookeeper_registry::port_from(
        cfg.settings.zookeeper_client_port,
        args.zookeeper_port,
    )?;
    let scheme = if cfg.settings.info_ssl_enabled {
        "https"
    } else {
        "http"
    };
    let rt = runtime()?;
    let bind = cfg.bind;
    rt.block_on(async move {
        let stop = stop_signal()?;
        say(format!(
            "ferrobase master {bind}: standby, waiting to be elected"
        ));
        let r = ferrobase_server::distributed::run_master(
            cfg,
            |addr, info| {
                say(format!("ferrobase master active on {addr}"));
                if let Some(info) = info {
                    say(format!(
                        "  info port (web UI, /metrics, /jmx): {scheme}://{info}/"
                    ));
                }
            },
            stop,
        )
        .await;
        if let Err(e) = r {
            // A master that lost its session must not linger: a standby is
            // taking over. Exit without running destructors.
            eprintln!("error: {e}");
            std::process::exit(2);
        }
        Ok(())
    })
}
