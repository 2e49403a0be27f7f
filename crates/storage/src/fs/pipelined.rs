//! [`PipelinedWriter`]: a [`FileWriter`] whose bytes are written by a
//! thread of its own, so the thread producing them (a flush or compaction
//! encoding blocks) never waits in `write(2)`.
//!
//! A flush is one thread per store; on a small machine its kernel copies
//! into the page cache were a quarter of its time, and writers block on
//! the memstore limit while it runs. Here the producer fills 1 MiB chunks
//! and hands them over a bounded channel; the writer thread writes them and
//! hands the emptied buffers back, so chunks are reused (fresh pages cost
//! a fault each).
//!
//! ```text
//! producer ──write()──▶ chunk ──full──▶ [channel, 4 chunks] ──▶ writer thread ──▶ inner FileWriter
//!     ▲                                                              │
//!     └──────────────────────── emptied chunks ◀─────────────────────┘
//! ```
//!
//! Errors: the first failure of the inner writer stops the thread; the
//! producer's next `write` fails, and [`FileWriter::finish`] returns the
//! inner error. Dropped unfinished, the inner writer is dropped too (which
//! removes its temporary file). This module never interprets the bytes.

use super::FileWriter;
use crate::error::{Result, StorageError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Bytes collected before a chunk is handed to the writer thread.
const CHUNK: usize = 1 << 20;
/// Chunks in flight before the producer waits (bounds memory at ~5 MiB).
const IN_FLIGHT: usize = 4;

/// See the module docs.
pub struct PipelinedWriter {
    chunk: Vec<u8>,
    full: Option<SyncSender<Vec<u8>>>,
    empty: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<Result<Box<dyn FileWriter>>>>,
    path: PathBuf,
}

impl PipelinedWriter {
    /// Starts the writer thread for `inner`; `path` names the file in
    /// errors.
    pub fn new(inner: Box<dyn FileWriter>, path: &Path) -> Result<PipelinedWriter> {
        let (full_tx, full_rx) = sync_channel::<Vec<u8>>(IN_FLIGHT);
        let (empty_tx, empty_rx) = sync_channel::<Vec<u8>>(IN_FLIGHT + 1);
        let thread_path = path.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("store file writer".into())
            .spawn(move || write_chunks(inner, &thread_path, &full_rx, &empty_tx))
            .map_err(|e| StorageError::io(path, e))?;
        Ok(PipelinedWriter {
            chunk: Vec::with_capacity(CHUNK),
            full: Some(full_tx),
            empty: empty_rx,
            thread: Some(thread),
            path: path.to_path_buf(),
        })
    }

    /// Hands the current chunk to the thread. `false` when the thread has
    /// stopped (its inner writer failed).
    fn send_chunk(&mut self) -> bool {
        let next = self
            .empty
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(CHUNK));
        let chunk = std::mem::replace(&mut self.chunk, next);
        match &self.full {
            Some(tx) => tx.send(chunk).is_ok(),
            None => false,
        }
    }

    /// Stops the thread and returns its outcome: the inner writer, or the
    /// error that stopped it.
    fn join(&mut self) -> Result<Box<dyn FileWriter>> {
        self.full = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(outcome)) => outcome,
            Some(Err(_)) => Err(StorageError::io(
                &self.path,
                io::Error::other("the writer thread panicked"),
            )),
            None => Err(StorageError::io(
                &self.path,
                io::Error::other("the writer was already finished"),
            )),
        }
    }
}

fn write_chunks(
    mut inner: Box<dyn FileWriter>,
    path: &Path,
    full: &Receiver<Vec<u8>>,
    empty: &SyncSender<Vec<u8>>,
) -> Result<Box<dyn FileWriter>> {
    for mut chunk in full.iter() {
        inner
            .write_all(&chunk)
            .map_err(|e| StorageError::io(path, e))?;
        chunk.clear();
        // The producer may have enough buffers already: then drop it.
        let _ = empty.try_send(chunk);
    }
    inner.flush().map_err(|e| StorageError::io(path, e))?;
    Ok(inner)
}

impl io::Write for PipelinedWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = CHUNK.saturating_sub(self.chunk.len()).max(1);
        let n = buf.len().min(room);
        self.chunk
            .extend_from_slice(buf.get(..n).unwrap_or_default());
        if self.chunk.len() >= CHUNK && !self.send_chunk() {
            return Err(io::Error::other(
                "the store file's writer thread stopped (its error is returned at finish)",
            ));
        }
        Ok(n)
    }

    /// Bytes are written by the thread; durability is `finish`'s job.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl FileWriter for PipelinedWriter {
    fn finish(mut self: Box<Self>) -> Result<()> {
        if !self.chunk.is_empty() {
            // A failed send means the thread stopped: `join` says why.
            let _ = self.send_chunk();
        }
        self.join()?.finish()
    }
}

impl Drop for PipelinedWriter {
    fn drop(&mut self) {
        // Unfinished: stop the thread; the inner writer it returns (or
        // drops on error) removes its temporary file.
        if self.thread.is_some() {
            drop(self.join());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{LocalFs, Storage};
    use std::io::Write;

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn writes_every_byte_in_order_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFs::as_given();
        let path = dir.path().join("f");
        let mut w = Box::new(PipelinedWriter::new(fs.create(&path).unwrap(), &path).unwrap());
        let data = pattern(3 * CHUNK + 12_345);
        // Uneven pieces, some larger than a chunk.
        let mut rest = &data[..];
        for size in [1, 7, CHUNK + 3, 100, 2 * CHUNK].iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (piece, tail) = rest.split_at((*size).min(rest.len()));
            w.write_all(piece).unwrap();
            rest = tail;
        }
        w.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), data);
    }

    #[test]
    fn an_empty_file_is_published() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty");
        let w = PipelinedWriter::new(LocalFs::as_given().create(&path).unwrap(), &path).unwrap();
        Box::new(w).finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn dropped_unfinished_leaves_nothing_at_the_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dropped");
        let mut w =
            PipelinedWriter::new(LocalFs::as_given().create(&path).unwrap(), &path).unwrap();
        w.write_all(&pattern(2 * CHUNK)).unwrap();
        drop(w);
        assert!(!path.exists());
        // No temporary file is left either.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// An inner writer that fails after `ok` bytes.
    struct Failing {
        ok: usize,
    }
    impl io::Write for Failing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if buf.len() > self.ok {
                return Err(io::Error::other("disk full"));
            }
            self.ok -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    impl FileWriter for Failing {
        fn finish(self: Box<Self>) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_inner_failure_fails_later_writes_and_finish() {
        let mut w =
            PipelinedWriter::new(Box::new(Failing { ok: CHUNK / 2 }), Path::new("x")).unwrap();
        let data = pattern(CHUNK);
        // The first chunk is accepted, then fails in the thread; some later
        // write must fail (the channel holds a few chunks).
        let mut failed = false;
        for _ in 0..(IN_FLIGHT + 4) {
            if w.write_all(&data).is_err() {
                failed = true;
                break;
            }
        }
        assert!(
            failed,
            "writes kept succeeding after the inner writer failed"
        );
        let err = Box::new(w).finish().unwrap_err();
        assert!(err.to_string().contains("disk full"), "{err}");
    }
}
