//! Claims and fences of a WAL directory on S3, which has no rename and no
//! directory identity: the claim is an `OWNER` object holding a random
//! token, and the fence deletes it before moving the directory's objects.
//!
//! Owns `dir/OWNER` and the order of the fence; never reads the segments
//! it moves. Why the order makes the fence safe (S3 has been strongly
//! read-after-write consistent since 2020, so a request sees every PUT or
//! DELETE that completed before it started):
//!
//! ```text
//!  writer (maybe paused, resumes)          fencer (fence_dir)
//!  ------------------------------          ------------------
//!  PUT dir/seg/<offset>   (a batch)
//!  GET dir/OWNER == token?  ── yes: ack    1. DELETE dir/OWNER
//!                           ── no: never   2. LIST dir/ ; COPY each to to/
//!                                          3. DELETE everything under dir/
//! ```
//!
//! A batch is acknowledged only if its writer's `GET dir/OWNER` (after
//! its PUT) found the token, so that GET ran before step 1, hence the PUT
//! completed before step 1, hence before the LIST of step 2 started: the
//! LIST sees it and it is copied to `to/`. A GET that runs after step 1
//! finds no token and the batch is never acknowledged; its chunk may or
//! may not be copied, and may even land in `dir/` after step 3 (an
//! orphan without a header chunk, which `open_log` reads as an empty
//! segment, so the split that follows skips it).
//! A fence interrupted part way can simply be run again: copies are
//! idempotent and nothing is deleted from `dir/` before all are done.

use super::client::{self, Client, join};
use crate::error::Result;
use crate::fs::DirClaim;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The claim object's name in a claimed directory.
pub(crate) const OWNER: &str = "OWNER";

/// Copies a fence runs at once (S3 serves far more; this bounds sockets).
const COPIES_IN_FLIGHT: usize = 16;

/// A token no other claim in any process will hold: pid, wall-clock
/// nanoseconds and a per-process counter (two claims in one nanosecond).
fn new_token() -> Vec<u8> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}-{nanos}-{n}", std::process::id()).into_bytes()
}

/// `dir/OWNER` holding this claim's token.
pub(crate) struct S3Claim {
    client: Arc<Client>,
    key: String,
    token: Vec<u8>,
}

impl S3Claim {
    /// PUTs a fresh token into `dir/OWNER` (replacing an older claim,
    /// which from now on reports it lost).
    pub fn claim(client: Arc<Client>, dir_key: &str) -> Result<S3Claim> {
        let key = join(dir_key, OWNER);
        let token = new_token();
        let (op, k, t) = (client.op.clone(), key.clone(), token.clone());
        client
            .call(async move { op.write(&k, t).await })
            .map_err(|e| client.err(&key, e))?;
        Ok(S3Claim { client, key, token })
    }
}

impl DirClaim for S3Claim {
    fn still_held(&self) -> Result<bool> {
        let (op, k) = (self.client.op.clone(), self.key.clone());
        match self.client.call(async move { op.read(&k).await }) {
            Ok(b) => Ok(b.to_vec() == self.token),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.client.err(&self.key, e)),
        }
    }
}

/// Fences directory `dir_key` and moves its objects under `to_key`, in the
/// order the module docs justify.
pub(crate) fn fence(client: &Client, dir_key: &str, to_key: &str) -> Result<()> {
    let owner = join(dir_key, OWNER);
    let (op, k) = (client.op.clone(), owner.clone());
    client
        .call(async move { op.delete(&k).await })
        .map_err(|e| client.err(&owner, e))?;

    let dir = client::dir(dir_key);
    let (op, d) = (client.op.clone(), dir.clone());
    let entries = client
        .call(async move { op.list_with(&d).recursive(true).await })
        .map_err(|e| client.err(dir_key, e))?;
    let moves: Vec<(String, String)> = entries
        .iter()
        .filter_map(|entry| {
            let rel = entry.path().strip_prefix(&dir)?;
            // Directory markers carry nothing; a claim made since step 1
            // is not the fenced writer's and means nothing under `to`.
            let skip = rel.is_empty() || rel.ends_with('/') || rel == OWNER;
            (!skip).then(|| (entry.path().to_string(), join(to_key, rel)))
        })
        .collect();
    // A WAL directory holds one object per batch, so thousands of copies:
    // several in flight, all finished before step 3 deletes anything.
    let op = client.op.clone();
    let failed = client
        .run(async move {
            use futures::StreamExt;
            futures::stream::iter(moves)
                .map(|(from, to)| {
                    let op = op.clone();
                    async move { op.copy(&from, &to).await.map_err(|e| (from, to, e)) }
                })
                .buffer_unordered(COPIES_IN_FLIGHT)
                .filter_map(|r| std::future::ready(r.err()))
                .next()
                .await
        })
        .map_err(|e| client.err(dir_key, e))?;
    if let Some((from, to, e)) = failed {
        let e = client::to_io(e);
        return Err(client.err(
            &from,
            io::Error::new(
                e.kind(),
                format!("fencing (copy to {}): {e}", client.display(&to)),
            ),
        ));
    }

    let (op, d) = (client.op.clone(), dir);
    client
        .call(async move { op.delete_with(&d).recursive(true).await })
        .map_err(|e| client.err(dir_key, e))
}
