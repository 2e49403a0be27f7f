//! `ferrobase token create --user NAME --out FILE`: mints an HBase
//! authentication token from the storage root's token key (creating the
//! key if the root has none yet) and writes it as a Hadoop token storage
//! file, which the unmodified HBase Java client reads through
//! `HADOOP_TOKEN_FILE_LOCATION` (with `hbase.security.authentication=kerberos`
//! it then authenticates with SASL DIGEST-MD5). The token is for the
//! cluster on that root: its service is the cluster id the servers
//! report. This module parses arguments and writes the file; tokens are
//! `ferrobase_server::auth`'s.

use anyhow::Context;
use clap::{Args, Subcommand};
use ferrobase_server::auth::TokenAuthority;
use ferrobase_server::hbase_rpc::{STANDALONE_CLUSTER_ID, cluster_id_for_root};
use ferrobase_storage::fs::{LocalFs, Storage};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// `ferrobase token …`.
#[derive(Subcommand)]
pub enum TokenCommand {
    /// Mint a token for a user and write it as a Hadoop token file.
    Create(CreateArgs),
}

/// Arguments of `ferrobase token create`.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("from").required(true).args(["data_dir", "root"])))]
pub struct CreateArgs {
    /// The user the token authenticates.
    #[arg(long)]
    user: String,
    /// Where to write the token file (created with mode 0600).
    #[arg(long)]
    out: PathBuf,
    /// A standalone server's data directory (as given to `standalone --data-dir`).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// A distributed cluster's storage root (as given to `--root`).
    #[arg(long)]
    root: Option<String>,
    /// The cluster id the token is for, when not the one the servers on
    /// this root report (a standalone started with `--root`, say).
    #[arg(long)]
    cluster_id: Option<String>,
    /// A TOML settings file (for `hbase.auth.token.max.lifetime`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// `name=value` overrides, applied after the file.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

/// Runs a token subcommand.
pub fn run(command: TokenCommand) -> anyhow::Result<()> {
    match command {
        TokenCommand::Create(args) => create(args),
    }
}

fn create(args: CreateArgs) -> anyhow::Result<()> {
    let settings = crate::config::load(args.config.as_deref(), &args.set)?;
    let user = args.user.trim();
    anyhow::ensure!(!user.is_empty(), "--user must name a user");
    let (fs, cluster_id): (Arc<dyn Storage>, String) = match (&args.root, &args.data_dir) {
        (Some(url), _) => {
            let fs =
                ferrobase_storage::fs::from_url(url).with_context(|| format!("--root '{url}'"))?;
            let id = cluster_id_for_root(&fs.url());
            (fs, id)
        }
        (None, Some(dir)) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("--data-dir {}", dir.display()))?;
            (
                Arc::new(LocalFs::new(dir)),
                STANDALONE_CLUSTER_ID.to_string(),
            )
        }
        (None, None) => anyhow::bail!("give --data-dir DIR or --root URL"),
    };
    let cluster_id = args.cluster_id.unwrap_or(cluster_id);
    let authority = TokenAuthority::open(&*fs, &cluster_id, &settings)
        .map_err(|e| anyhow::anyhow!("{}", e.message))
        .context("the root's token key")?;
    let issued = ferrobase_server::auth::now_ms();
    let token = authority.mint(user, issued);
    let file = ferrobase_hbase_wire::token::encode_storage(&[token.to_stored()]);
    write_private(&args.out, &file).with_context(|| format!("--out {}", args.out.display()))?;
    println!(
        "token for '{user}' (cluster {cluster_id}, valid {} s) written to {}",
        settings.auth_token_max_lifetime_ms / 1000,
        args.out.display()
    );
    Ok(())
}

/// A token is a password: only its owner may read the file.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}
