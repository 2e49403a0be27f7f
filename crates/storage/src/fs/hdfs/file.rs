//! Whole files on HDFS: positional and streaming reads of a finished
//! file, and a file written under a temporary name that appears at its
//! own name only when finished.
//!
//! Owns buffering (HDFS calls are round trips: writes go out in 4 MiB
//! pieces, streams read 1 MiB at a time) and the temp-then-rename order;
//! never interprets the bytes. Checksums: the client checks every 512-byte
//! chunk against the DataNode's CRC32C (its block's `.meta` file) on read;
//! a replica that fails is skipped for the next, and when every replica
//! fails the read fails, naming the file, the offset and the length. The
//! engine's own formats check their CRCs on top, for damage HDFS cannot
//! see (bytes that went bad before the writer checksummed them).

use super::client::Client;
use crate::error::{Result, StorageError};
use crate::fs::{FileWriter, RandomRead};
use bytes::Bytes;
use hdfs_native::file::{FileReader, FileWriter as HdfsWriterInner};
use std::io::{self, Read, Write};
use std::sync::Arc;

/// Bytes a writer buffers before sending them to the DataNodes.
const WRITE_CHUNK: usize = 4 << 20;
/// Bytes a stream reads at a time.
const READ_CHUNK: usize = 1 << 20;

/// Opens `path` for reading (a finished file: HDFS serves only the
/// completed blocks of one still being written).
pub(crate) fn open_reader(client: &Client, path: &str) -> io::Result<Arc<FileReader>> {
    let (fs, p) = (client.fs.clone(), path.to_string());
    client.call(async move { fs.read(&p).await }).map(Arc::new)
}

/// A finished file read at any offset.
pub(crate) struct HdfsFile {
    pub client: Arc<Client>,
    pub path: String,
    pub reader: Arc<FileReader>,
}

impl std::fmt::Debug for HdfsFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.client.display(&self.path))
    }
}

impl RandomRead for HdfsFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let end = offset.checked_add(buf.len() as u64);
        if end.is_none_or(|end| end > self.len()) {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: read of {} bytes at {offset} passes the end ({} bytes)",
                    self.client.display(&self.path),
                    buf.len(),
                    self.len()
                ),
            ));
        }
        if buf.is_empty() {
            return Ok(());
        }
        let (reader, len) = (self.reader.clone(), buf.len());
        let bytes = self
            .client
            .call(async move { reader.read_range(offset as usize, len).await })
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{}: reading {len} bytes at offset {offset}: {e}",
                        self.client.display(&self.path)
                    ),
                )
            })?;
        if bytes.len() != len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: {len} bytes asked at {offset}, {} read",
                    self.client.display(&self.path),
                    bytes.len()
                ),
            ));
        }
        buf.copy_from_slice(&bytes);
        Ok(())
    }

    fn len(&self) -> u64 {
        self.reader.file_length() as u64
    }
}

/// A finished file read front to back, [`READ_CHUNK`] at a time.
pub(crate) struct HdfsStream {
    pub file: HdfsFile,
    pub pos: u64,
    pub current: io::Cursor<Vec<u8>>,
}

impl HdfsStream {
    pub fn new(file: HdfsFile) -> HdfsStream {
        HdfsStream {
            file,
            pos: 0,
            current: io::Cursor::new(Vec::new()),
        }
    }
}

impl Read for HdfsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let n = self.current.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let left = self.file.len().saturating_sub(self.pos);
            if left == 0 {
                return Ok(0);
            }
            let mut chunk = vec![0u8; left.min(READ_CHUNK as u64) as usize];
            self.file.read_exact_at(&mut chunk, self.pos)?;
            self.pos += chunk.len() as u64;
            self.current = io::Cursor::new(chunk);
        }
    }
}

/// Writes `tmp`, then renames it over `path` at [`finish`](FileWriter::finish).
pub(crate) struct HdfsWriter {
    pub client: Arc<Client>,
    /// `None` once finished (or failed).
    pub inner: Option<HdfsWriterInner>,
    pub buf: Vec<u8>,
    pub tmp: String,
    pub path: String,
}

impl HdfsWriter {
    /// Starts `tmp` (replacing a leftover one), for `path`.
    pub fn create(client: Arc<Client>, tmp: String, path: String) -> Result<HdfsWriter> {
        let (fs, t, opts) = (client.fs.clone(), tmp.clone(), client.file_options());
        let inner = client
            .call(async move {
                fs.create(&t, opts.overwrite(true).create_parent(true))
                    .await
            })
            .map_err(|e| StorageError::io(client.display(&tmp), e))?;
        Ok(HdfsWriter {
            client,
            inner: Some(inner),
            buf: Vec::with_capacity(WRITE_CHUNK),
            tmp,
            path,
        })
    }

    /// Sends the buffered bytes to the DataNodes.
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let mut inner = self
            .inner
            .take()
            .ok_or_else(|| io::Error::other("file already finished"))?;
        let bytes = Bytes::from(std::mem::replace(
            &mut self.buf,
            Vec::with_capacity(WRITE_CHUNK),
        ));
        let (inner, result) = self.client.run(async move {
            let r = inner.write_bytes(bytes).await;
            (inner, r)
        })?;
        self.inner = Some(inner);
        result.map(drop).map_err(|e| self.client.to_io(e))
    }
}

impl Write for HdfsWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.inner.is_none() {
            return Err(io::Error::other("file already finished"));
        }
        self.buf.extend_from_slice(data);
        if self.buf.len() >= WRITE_CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        // Nothing becomes visible before `finish`; sending early gains
        // nothing.
        Ok(())
    }
}

impl FileWriter for HdfsWriter {
    /// Sends the rest, `hsync`s (every DataNode of the last block's
    /// pipeline has it on disk, as a local root's fsync), closes (the
    /// NameNode completes the file once its blocks are replicated) and
    /// renames it into place: the file appears whole, or not at all.
    fn finish(mut self: Box<Self>) -> Result<()> {
        let shown = self.client.display(&self.tmp);
        self.send().map_err(|e| StorageError::io(&shown, e))?;
        let Some(mut inner) = self.inner.take() else {
            return Ok(());
        };
        let (fs, tmp, path) = (self.client.fs.clone(), self.tmp.clone(), self.path.clone());
        self.client
            .call(async move {
                inner.hsync().await?;
                inner.close().await?;
                fs.rename(&tmp, &path, true).await
            })
            .map_err(|e| StorageError::io(&shown, e))
    }
}

impl Drop for HdfsWriter {
    fn drop(&mut self) {
        if let Some(mut inner) = self.inner.take() {
            // Unfinished: the temp file is garbage. Removed before this
            // returns, so no listing shows it afterwards.
            let (fs, tmp) = (self.client.fs.clone(), self.tmp.clone());
            let _ = self.client.run(async move {
                let _ = inner.close().await;
                let _ = fs.delete(&tmp, false).await;
            });
        }
    }
}
