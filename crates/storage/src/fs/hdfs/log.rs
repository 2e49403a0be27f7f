//! WAL segments on HDFS: one HDFS file per segment, appended to in
//! batches, and HBase's lease recovery before anyone else reads one.
//!
//! Durability (HBase's semantics). Every batch is written to the
//! DataNode pipeline and `hsync`ed before [`LogWriter::append`] returns:
//! each DataNode of the pipeline has it on disk and the NameNode has
//! recorded the new length, checking on the way that this writer still
//! holds the file's lease. HBase acknowledges a SYNC_WAL edit after an
//! `hflush` (in every DataNode's memory) and a FSYNC_WAL one after an
//! `hsync`; `hdfs-native` 0.14 has no `hflush`, so on this root both get
//! the stronger `hsync`, and [`LogWriter::sync`] has nothing left to do.
//!
//! Reading. HDFS serves only the completed blocks of a file still being
//! written, so a segment is read only once it is closed:
//! - a segment this process writes (the engine replays its own current
//!   segment when a region reopens here) is closed first; its writer
//!   reopens it with `append` at its next batch;
//! - any other (a dead server's, a killed process's) has its lease
//!   recovered first ([`recover_lease`]): the NameNode closes it at the
//!   length every DataNode of its last block agrees on, which includes
//!   every batch an `hsync` acknowledged, and from then on its writer's
//!   next `hsync` fails. HBase does the same before splitting a WAL.
//!
//! Never looks inside a batch: record framing and checksums are the WAL's.

use super::client::Client;
use crate::error::Result;
use crate::fs::LogWriter;
use bytes::Bytes;
use hdfs_native::file::FileWriter as Inner;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How long a lease recovery may take before the read fails (HBase's
/// `hbase.lease.recovery.timeout`, 15 minutes: a DataNode of the last
/// block may have to time out first).
const LEASE_RECOVERY_TIMEOUT: Duration = Duration::from_secs(900);
/// Pause between two `recoverLease` calls, doubling up to the second.
const LEASE_RECOVERY_PAUSE: (Duration, Duration) =
    (Duration::from_millis(100), Duration::from_secs(1));

/// A segment's writer, shared with readers of the same segment in this
/// process (which close it; module docs).
#[derive(Default)]
pub(crate) struct LogState {
    /// `None` while closed for a reader (reopened with `append`).
    writer: Option<Inner>,
}

/// The segments this process has open, by HDFS path.
pub(crate) type OpenLogs = Mutex<HashMap<String, Weak<Mutex<LogState>>>>;

/// Appends to one segment; see the module docs.
pub(crate) struct HdfsLog {
    client: Arc<Client>,
    path: String,
    state: Arc<Mutex<LogState>>,
    logs: Arc<OpenLogs>,
}

/// Creates segment `path` (never twice, never its directory: a fenced
/// writer's directory is gone, and so is its chance to add a segment)
/// starting with `header`, `hsync`ed. When the header cannot be written
/// (no DataNode with room, a space quota), the new file is removed again:
/// it holds nothing, and the WAL, resuming once space is back, creates a
/// segment of the same name.
pub(crate) fn create(
    client: Arc<Client>,
    logs: Arc<OpenLogs>,
    path: String,
    header: &[u8],
) -> Result<HdfsLog> {
    let (fs, p, opts) = (client.fs.clone(), path.clone(), client.log_options());
    let header = Bytes::copy_from_slice(header);
    let writer = client
        .call(async move {
            let mut w = fs.create(&p, opts.create_parent(false)).await?;
            let written = async {
                w.write_bytes(header).await?;
                w.hsync().await
            }
            .await;
            match written {
                Ok(()) => Ok(w),
                Err(e) => {
                    drop(w);
                    // Best effort: the error to report is the write's.
                    let _ = fs.delete(&p, false).await;
                    Err(e)
                }
            }
        })
        .map_err(|e| client.err(&path, e))?;
    let state = Arc::new(Mutex::new(LogState {
        writer: Some(writer),
    }));
    logs.lock().insert(path.clone(), Arc::downgrade(&state));
    Ok(HdfsLog {
        client,
        path,
        state,
        logs,
    })
}

impl LogWriter for HdfsLog {
    fn append(&mut self, batch: &[u8]) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut state = self.state.lock();
        let writer = state.writer.take();
        let (fs, p) = (self.client.fs.clone(), self.path.clone());
        let batch = Bytes::copy_from_slice(batch);
        let (writer, result) = self
            .client
            .run(async move {
                let mut w = match writer {
                    Some(w) => w,
                    // Closed for a reader in this process: carry on at its end.
                    None => match fs.append(&p).await {
                        Ok(w) => w,
                        Err(e) => return (None, Err(e)),
                    },
                };
                let r = async {
                    w.write_bytes(batch).await?;
                    w.hsync().await
                }
                .await;
                (Some(w), r)
            })
            .map_err(|e| self.client.err(&self.path, e))?;
        match result {
            Ok(()) => {
                state.writer = writer;
                Ok(())
            }
            // A failed writer is dropped: the WAL refuses every later
            // append anyway, and a half-sent pipeline cannot be trusted.
            Err(e) => Err(self.client.err(&self.path, self.client.to_io(e))),
        }
    }

    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
}

impl Drop for HdfsLog {
    fn drop(&mut self) {
        self.logs.lock().remove(&self.path);
        if let Some(writer) = self.state.lock().writer.take() {
            // A rolled (or closed) segment: complete it, so readers see
            // all of it without a lease recovery.
            if let Err(e) = close(&self.client, writer) {
                tracing::warn!(segment = %self.client.display(&self.path), error = %e,
                    "closing a WAL segment failed; it will be read after a lease recovery");
            }
        }
    }
}

fn close(client: &Client, mut writer: Inner) -> io::Result<()> {
    client.call(async move { writer.close().await })
}

/// Makes segment `path` readable whole: closes it when this process
/// writes it, recovers its lease otherwise (module docs).
pub(crate) fn prepare_read(client: &Client, logs: &OpenLogs, path: &str) -> Result<()> {
    let own = logs.lock().get(path).and_then(Weak::upgrade);
    match own {
        Some(state) => {
            let mut state = state.lock();
            if let Some(writer) = state.writer.take() {
                close(client, writer).map_err(|e| client.err(path, e))?;
            }
            Ok(())
        }
        None => recover_lease(client, path),
    }
}

/// Calls `recoverLease` on `path` until the NameNode reports it closed
/// (at once for a closed file; after the last block's DataNodes agree on
/// its length for an open one). A missing file is `NotFound`.
pub(crate) fn recover_lease(client: &Client, path: &str) -> Result<()> {
    let started = Instant::now();
    let mut pause = LEASE_RECOVERY_PAUSE.0;
    let mut calls = 0u32;
    loop {
        let (fs, p) = (client.fs.clone(), path.to_string());
        let closed = client
            .call(async move { fs.recover_lease(&p).await })
            .map_err(|e| client.err(path, e))?;
        calls += 1;
        if closed {
            if calls > 1 {
                tracing::info!(file = %client.display(path), calls,
                    elapsed_ms = started.elapsed().as_millis() as u64, "recovered the lease");
            }
            return Ok(());
        }
        if started.elapsed() > LEASE_RECOVERY_TIMEOUT {
            return Err(client.err(
                path,
                io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "lease recovery did not finish within {LEASE_RECOVERY_TIMEOUT:?} \
                         ({calls} recoverLease calls); are the DataNodes of its last block up?"
                    ),
                ),
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(LEASE_RECOVERY_PAUSE.1);
    }
}
