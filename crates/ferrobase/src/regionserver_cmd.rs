//! `ferrobase regionserver`: one region server of a distributed cluster:
//! registers in etcd, keeps its WAL under `<root>/wal/<name>/`, serves the
//! regions the master assigns (see `ferrobase_server::distributed`). This
//! module only parses arguments and prints state changes.

use crate::cluster_args::{ClusterArgs, runtime, say, stop_signal};
use clap::Args;

/// Arguments of `ferrobase regionserver`.
#[derive(Args)]
pub struct RegionServerArgs {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// Port of the region server's services.
    #[arg(long, default_value_t = 16020)]
    port: u16,
}

/// Runs until Ctrl-C or SIGTERM (regions are flushed and closed), or until
/// its etcd session is lost (the process exits at once, without flushing).
pub fn run(args: RegionServerArgs) -> anyhow::Result<()> {
    let cfg = args
        .cluster
        .config(args.port, |s| s.regionserver_info_port)?;
    let scheme = if cfg.settings.info_ssl_enabled {
        "https"
    } else {
        "http"
    };
    let rt = runtime()?;
    rt.block_on(async move {
        let stop = stop_signal()?;
        let r = ferrobase_server::distributed::run_region_server(
            cfg,
            |rec, info| {
                say(format!(
                    "ferrobase regionserver {} listening on {}",
                    rec.name, rec.address
                ));
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
            eprintln!("error: {e}");
            std::process::exit(2);
        }
        Ok(())
    })
}
