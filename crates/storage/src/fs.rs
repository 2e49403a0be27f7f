//! The file system the engine stores on: a [`Storage`] behind a `--root`
//! URL (HBase's `hbase.rootdir`), so one server can reopen what another
//! wrote.
//!
//! | URL                               | backend            | WAL                          |
//! |-----------------------------------|--------------------|------------------------------|
//! | `/dir`, `file:///dir`             | [`LocalFs`]        | append + fdatasync           |
//! | `s3://bucket/prefix?endpoint=…`   | [`S3Fs`](s3::S3Fs) | one object per group commit  |
//! | `hdfs://namenode:port/path`       | [`HdfsFs`](hdfs::HdfsFs) | one file per segment, hsync per group commit |
//!
//! Paths are `/`-separated and relative to the root (an absolute path on a
//! local root is used as is). The operations are the few the engine needs,
//! each with the guarantee the engine relies on:
//!
//! - store files are written once ([`Storage::create`]) and appear whole
//!   at their name only when [`FileWriter::finish`] returns, durably;
//! - small files (manifests, meta) are replaced atomically ([`Storage::put`])
//!   or created only if absent ([`Storage::put_new`], the epoch claims);
//! - a WAL segment is appended to in batches ([`Storage::create_log`]); a
//!   batch is durable when [`LogWriter::sync`] returns and is read back as
//!   one byte stream ([`Storage::open_log`]);
//! - a finished file can be moved ([`Storage::rename`]: the archive of
//!   store files snapshots still hold, `crate::archive`);
//! - a WAL directory can be *fenced* ([`Storage::fence_dir`]): after that,
//!   the [`DirClaim`] its writer holds reports it lost, so a paused server
//!   that resumes acknowledges nothing more (`docs/failover.md`).
//!
//! This module never interprets the bytes it moves.

pub mod hdfs;
pub mod local;
pub mod pipelined;
mod runtime;
pub mod s3;

pub use local::LocalFs;

use crate::error::{Result, StorageError};
use ferrobase_types::Settings;
use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Positional reads of one immutable file (a store file).
pub trait RandomRead: Send + Sync + fmt::Debug {
    /// Fills `buf` from `offset`; a read past the end is
    /// [`io::ErrorKind::UnexpectedEof`].
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// The file's length in bytes.
    fn len(&self) -> u64;
    /// True for an empty file.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A file being written front to back. It becomes visible at its name,
/// durably and whole, only when [`finish`](FileWriter::finish) returns;
/// dropped unfinished, it leaves nothing behind (at worst a temp file the
/// next region open removes).
pub trait FileWriter: io::Write + Send {
    /// Makes the file durable and visible at its name.
    fn finish(self: Box<Self>) -> Result<()>;
}

/// Appends to one WAL segment.
pub trait LogWriter: Send {
    /// Appends one batch (whole records). It may not be durable yet.
    fn append(&mut self, batch: &[u8]) -> Result<()>;
    /// Makes every appended batch durable.
    fn sync(&mut self) -> Result<()>;
}

/// A writer's hold on a WAL directory; see [`Storage::fence_dir`].
pub trait DirClaim: Send + Sync {
    /// `Ok(false)` once the directory was fenced (or removed).
    fn still_held(&self) -> Result<bool>;
}

/// A storage root. See the module docs for what each call guarantees.
pub trait Storage: Send + Sync + fmt::Debug {
    /// The root as a URL, for messages.
    fn url(&self) -> String;
    /// `path` as shown in messages (the root's URL joined with it).
    fn display(&self, path: &Path) -> String;

    /// Creates a directory and its parents (no-op on object stores).
    fn create_dir_all(&self, dir: &Path) -> Result<()>;
    /// Names of the files and directories directly in `dir`, sorted; an
    /// empty list when `dir` does not exist.
    fn list(&self, dir: &Path) -> Result<Vec<String>>;
    /// True when a file exists at `path`.
    fn exists(&self, path: &Path) -> Result<bool>;
    /// The whole file; `None` when it does not exist.
    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>>;
    /// Opens a finished file for positional reads.
    fn open(&self, path: &Path) -> Result<Arc<dyn RandomRead>>;
    /// Starts writing a file at `path` (replacing any file there).
    fn create(&self, path: &Path) -> Result<Box<dyn FileWriter>>;
    /// Replaces the file at `path` with `bytes`, atomically and durably.
    fn put(&self, path: &Path, bytes: &[u8]) -> Result<()>;
    /// Creates `path` with `bytes` durably unless it exists: `Ok(false)`
    /// when it did (then nothing was written).
    fn put_new(&self, path: &Path, bytes: &[u8]) -> Result<bool>;
    /// Deletes a file; a missing file is not an error.
    fn delete(&self, path: &Path) -> Result<()>;
    /// Deletes a directory and everything under it; missing is fine.
    fn delete_all(&self, dir: &Path) -> Result<()>;

    /// Moves a finished file to `to` (replacing any file there), creating
    /// `to`'s parents. When it returns, the file is whole and durable at
    /// `to` and gone from `from`. A crash in between leaves it at `from`,
    /// or at both (never at neither): callers treat a copy left at `from`
    /// as not yet moved. The default copies then deletes (object stores
    /// have no rename); a local root renames.
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        copy_file(self, from, to)?;
        self.delete(from)
    }

    /// Creates WAL segment `path` starting with `header`, durably.
    fn create_log(&self, path: &Path, header: &[u8]) -> Result<Box<dyn LogWriter>>;
    /// Reads a WAL segment (or recovered edits file) front to back: the
    /// stream and its length.
    fn open_log(&self, path: &Path) -> Result<(Box<dyn io::Read + Send>, u64)>;
    /// Cuts a WAL segment back to `len` bytes (a torn tail), durably.
    fn truncate_log(&self, path: &Path, len: u64) -> Result<()>;
    /// True when `path` names a WAL segment (file or object group).
    fn log_exists(&self, path: &Path) -> Result<bool>;
    /// Deletes a WAL segment; missing is fine.
    fn delete_log(&self, path: &Path) -> Result<()>;

    /// Claims WAL directory `dir` for this process's writer (creating it).
    fn claim_dir(&self, dir: &Path) -> Result<Box<dyn DirClaim>>;
    /// Fences `dir` and moves its WAL segments to `to`: once this returns,
    /// every [`DirClaim`] on `dir` reports it lost, and every batch whose
    /// writer's claim was still held after writing it is under `to`.
    fn fence_dir(&self, dir: &Path, to: &Path) -> Result<()>;
    /// Takes this process's exclusive lock on `dir` where the backend has
    /// one (a local `flock`); `None` where it has not, which in
    /// distributed mode is covered by the etcd lease and the fence.
    fn lock_dir(&self, dir: &Path) -> Result<Option<Box<dyn Send + Sync>>>;

    /// True when a positional read is a local `pread` (at worst a disk
    /// seek), so that a point read may run on an RPC thread instead of
    /// being handed to a handler thread. Remote roots (S3) answer false:
    /// their reads wait on the network.
    fn reads_are_local(&self) -> bool {
        false
    }
}

/// Bytes a [`copy_file`] reads and writes at a time.
const COPY_CHUNK: u64 = 1 << 20;

/// Copies the finished file `from` to `to` on `fs` (replacing any file
/// there), streaming 1 MiB at a time: `to` appears whole and durably when
/// this returns, or not at all. Returns the bytes copied.
pub fn copy_file<S: Storage + ?Sized>(fs: &S, from: &Path, to: &Path) -> Result<u64> {
    copy_between(fs, from, fs, to, &mut |_| {})
}

/// Copies the finished file `from` on `src` to `to` on `dst`, as
/// [`copy_file`] does, calling `progress` with each chunk's length.
pub fn copy_between<S: Storage + ?Sized, D: Storage + ?Sized>(
    src: &S,
    from: &Path,
    dst: &D,
    to: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<u64> {
    let input = src.open(from)?;
    let len = input.len();
    let mut out = dst.create(to)?;
    let mut buf = vec![0u8; COPY_CHUNK.min(len) as usize];
    let mut offset = 0;
    while offset < len {
        let n = COPY_CHUNK.min(len - offset) as usize;
        let chunk = &mut buf[..n];
        input
            .read_exact_at(chunk, offset)
            .map_err(|e| StorageError::io(src.display(from), e))?;
        io::Write::write_all(&mut out, chunk).map_err(|e| StorageError::io(dst.display(to), e))?;
        offset += n as u64;
        progress(n as u64);
    }
    out.finish()?;
    Ok(len)
}

/// Opens the storage a `--root` URL names: a plain path or `file://` URL
/// (local), `s3://bucket[/prefix]` with `endpoint`, `region`,
/// `access_key_id`, `secret_access_key` query parameters (or the usual
/// `AWS_*` environment variables), or `hdfs://namenode[:port][/path]`,
/// with default [`Settings`].
pub fn from_url(url: &str) -> Result<Arc<dyn Storage>> {
    open_root(url, &Settings::default())
}

/// [`from_url`] with the process's settings (`dfs.replication`,
/// `dfs.blocksize`, `hbase.regionserver.hlog.blocksize` shape the files an
/// `hdfs://` root creates).
pub fn open_root(url: &str, settings: &Settings) -> Result<Arc<dyn Storage>> {
    if let Some(rest) = url.strip_prefix("s3://") {
        return Ok(Arc::new(s3::S3Fs::from_url(rest)?) as Arc<dyn Storage>);
    }
    if let Some(rest) = url.strip_prefix("hdfs://") {
        return Ok(Arc::new(hdfs::HdfsFs::from_url(rest, settings)?) as Arc<dyn Storage>);
    }
    if let Some(path) = url.strip_prefix("file://") {
        if !path.starts_with('/') {
            return Err(bad_url(
                url,
                "a file:// URL needs an absolute path (file:///dir)",
            ));
        }
        return Ok(Arc::new(LocalFs::new(path)));
    }
    if let Some((scheme, _)) = url.split_once("://") {
        return Err(bad_url(
            url,
            &format!("unknown scheme '{scheme}' (valid: file://, s3://, hdfs://, or a plain path)"),
        ));
    }
    if url.is_empty() {
        return Err(bad_url(url, "empty root"));
    }
    Ok(Arc::new(LocalFs::new(url)))
}

fn bad_url(url: &str, why: &str) -> StorageError {
    StorageError::InvalidRequest(format!("storage root '{url}': {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_pick_a_backend_or_say_what_is_wrong() {
        assert!(from_url("/tmp/x").is_ok());
        assert!(from_url("file:///tmp/x").is_ok());
        assert!(from_url("hdfs://nn:8020/x").is_ok(), "no request is sent");
        for (bad, says) in [
            ("file://tmp/x", "absolute path"),
            ("hdfs://", "no NameNode"),
            ("gs://b/x", "unknown scheme 'gs'"),
            ("", "empty root"),
            ("s3://", "bucket"),
        ] {
            let e = from_url(bad).expect_err(bad).to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
