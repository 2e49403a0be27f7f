//! `ferrobase snapshot export NAME --to ROOT` (HBase's `ExportSnapshot`):
//! copies a snapshot's store files and manifest from one storage root to
//! another, with a progress bar; the destination's master can then clone
//! or restore it.
//!
//! The source is read as it is: a server may keep running on it (a file a
//! compaction archives meanwhile is read from the archive). This module
//! only parses arguments and reports; the copy is
//! `ferrobase_storage::snapshot_export`.

use anyhow::Context;
use clap::{Args, Subcommand};
use ferrobase_bench::progress::Progress;
use ferrobase_storage::fs::{LocalFs, Storage};
use ferrobase_storage::snapshot_export;
use ferrobase_storage::snapshot_manifest::SnapshotLayout;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `ferrobase snapshot …`.
#[derive(Subcommand)]
pub enum SnapshotCommand {
    /// Copy a snapshot (its files and manifest) to another storage root.
    Export(ExportArgs),
}

/// Arguments of `ferrobase snapshot export`.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("from").required(true).args(["data_dir", "root"])))]
pub struct ExportArgs {
    /// The snapshot's name.
    name: String,
    /// The destination: a directory, `file:///dir` or
    /// `s3://bucket/prefix?endpoint=URL`.
    #[arg(long, value_name = "ROOT")]
    to: String,
    /// The source data directory (as given to `standalone --data-dir`).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// The source storage root (as given to `--root`).
    #[arg(long)]
    root: Option<String>,
}

/// Runs a snapshot subcommand.
pub fn run(command: SnapshotCommand) -> anyhow::Result<()> {
    match command {
        SnapshotCommand::Export(args) => export(args),
    }
}

fn export(args: ExportArgs) -> anyhow::Result<()> {
    let src: Arc<dyn Storage> = match (&args.root, &args.data_dir) {
        (Some(url), _) => {
            ferrobase_storage::fs::from_url(url).with_context(|| format!("--root '{url}'"))?
        }
        (None, Some(dir)) => Arc::new(LocalFs::new(dir)),
        (None, None) => anyhow::bail!("give --data-dir DIR or --root URL"),
    };
    let dst =
        ferrobase_storage::fs::from_url(&args.to).with_context(|| format!("--to '{}'", args.to))?;
    // Every root keeps its store files under `data/` (standalone and
    // distributed alike).
    let layout = SnapshotLayout::for_data_dir(Path::new("data"));
    let mut progress: Option<Progress> = None;
    let report = snapshot_export::export(
        (&*src, &layout),
        (&*dst, &layout),
        &args.name,
        &mut |done, total| {
            progress
                .get_or_insert_with(|| Progress::new("bytes", total, false))
                .set(done);
        },
    )
    .with_context(|| {
        format!(
            "exporting snapshot '{}' from {} to {}",
            args.name,
            src.url(),
            dst.url()
        )
    })?;
    if let Some(p) = &progress {
        p.finish();
    }
    println!(
        "exported snapshot '{}' to {}: {} files copied ({} bytes), {} already there",
        args.name,
        dst.url(),
        report.files,
        report.bytes,
        report.skipped
    );
    Ok(())
}
