//! Claims and fences of a WAL directory on HDFS, as HBase fences a dead
//! region server: rename its WAL directory, then recover the lease of
//! every segment in it.
//!
//! The claim is an empty file `dir/OWNER.<token>`; it holds while that
//! name exists (one NameNode `getFileInfo`). Owns those files and the
//! order of the fence; never reads the segments. Why a paused writer that
//! resumes after the fence can acknowledge nothing the split misses (the
//! NameNode applies its operations one at a time, in one order):
//!
//! ```text
//!  writer (maybe paused, resumes)             fencer (fence_dir)
//!  ------------------------------             ------------------
//!  write batch; hsync (NameNode fsync)        1. rename dir -> to
//!  getFileInfo dir/OWNER.<token>?             2. recoverLease(f) for every
//!     found: ack    missing: never               f in to/, until closed
//! ```
//!
//! - A batch is acknowledged only if the `getFileInfo` after its `hsync`
//!   found the claim, so it ran before step 1, so the `hsync` (which
//!   waits for every DataNode of the pipeline, then the NameNode) had
//!   completed before step 1. The segment moved with the rename (an HDFS
//!   rename moves the inode, open files included), and step 2 closes it
//!   at the length all DataNodes of its last block agree on, which covers
//!   every completed `hsync`. The split, reading after step 2, sees the
//!   batch.
//! - After step 2 the writer's next `hsync` fails at the NameNode (the
//!   lease is no longer its), and it cannot start a new segment: segments
//!   are created without their parent, which step 1 took away.
//! - A fence cut short can be run again: a directory already renamed is
//!   found by the master under `to` (`*-splitting`), and a second
//!   `recoverLease` of a closed file returns at once.

use super::client::{Client, join, parent};
use super::log::recover_lease;
use crate::error::Result;
use crate::fs::DirClaim;
use hdfs_native::WriteOptions;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Claim files are `OWNER.<token>`.
pub(crate) const OWNER_PREFIX: &str = "OWNER.";

/// A token no other claim in any process will hold: pid, wall-clock
/// nanoseconds and a per-process counter.
fn new_token() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}-{nanos}-{n}", std::process::id())
}

/// `dir/OWNER.<token>`; see the module docs.
pub(crate) struct HdfsClaim {
    client: Arc<Client>,
    path: String,
}

impl HdfsClaim {
    /// Creates `dir` and this claim's file in it, removing older claims'
    /// files (which from then on report their claim lost).
    pub fn claim(client: Arc<Client>, dir: &str) -> Result<HdfsClaim> {
        let fs = client.fs.clone();
        let (d, path) = (
            dir.to_string(),
            join(dir, &format!("/{OWNER_PREFIX}{}", new_token())),
        );
        let p = path.clone();
        client
            .call(async move {
                fs.mkdirs(&d, 0o755, true).await?;
                for old in fs.list_status(&d, false).await? {
                    let name = old.path.rsplit('/').next().unwrap_or_default();
                    if name.starts_with(OWNER_PREFIX) {
                        fs.delete(&old.path, false).await?;
                    }
                }
                let opts = WriteOptions::default().create_parent(false);
                fs.create(&p, opts).await?.close().await
            })
            .map_err(|e| client.err(&path, e))?;
        Ok(HdfsClaim { client, path })
    }
}

impl DirClaim for HdfsClaim {
    fn still_held(&self) -> Result<bool> {
        let (fs, p) = (self.client.fs.clone(), self.path.clone());
        match self.client.call(async move { fs.get_file_info(&p).await }) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.client.err(&self.path, e)),
        }
    }
}

/// Fences `dir` and moves it to `to`, in the order the module docs justify.
pub(crate) fn fence(client: &Client, dir: &str, to: &str) -> Result<()> {
    let fs = client.fs.clone();
    let (d, t) = (dir.to_string(), to.to_string());
    client
        .call(async move {
            fs.mkdirs(parent(&t), 0o755, true).await?;
            fs.rename(&d, &t, false).await
        })
        .map_err(|e| {
            client.err(
                dir,
                io::Error::new(
                    e.kind(),
                    format!("fencing (rename to {}): {e}", client.display(to)),
                ),
            )
        })?;
    let (fs, t) = (client.fs.clone(), to.to_string());
    let files = client
        .call(async move { fs.list_status(&t, false).await })
        .map_err(|e| client.err(to, e))?;
    for f in files.iter().filter(|f| !f.isdir) {
        let name = f.path.rsplit('/').next().unwrap_or_default();
        if !name.starts_with(OWNER_PREFIX) {
            recover_lease(client, &f.path)?;
        }
    }
    Ok(())
}
