//! Whole objects as files: [`S3File`] reads one by ranged GETs, and
//! [`S3Writer`] streams one up as a multipart upload.
//!
//! Owns the visibility rule of [`FileWriter`]: an S3 object appears only
//! when its upload completes, so nothing is visible before
//! [`FileWriter::finish`], and an unfinished upload is aborted rather than
//! completed. Never caches bytes (the block cache is the engine's).

use super::client::Client;
use crate::error::{Result, StorageError};
use crate::fs::{FileWriter, RandomRead};
use std::io::{self, Write};
use std::sync::Arc;

/// Bytes buffered before a part is uploaded: above S3's 5 MiB minimum
/// part size, and few parts for a store file of a few hundred MiB (S3
/// allows 10 000).
pub(crate) const PART_SIZE: usize = 8 << 20;

/// An object opened for positional reads; its length is the one a `HEAD`
/// saw at open (store files never change once written).
pub(crate) struct S3File {
    pub client: Arc<Client>,
    pub key: String,
    pub len: u64,
}

impl std::fmt::Debug for S3File {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} bytes)", self.client.display(&self.key), self.len)
    }
}

impl RandomRead for S3File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(()); // as `FileExt::read_exact_at` (the local backend)
        }
        let end = offset.checked_add(buf.len() as u64);
        if end.is_none_or(|end| end > self.len) {
            return Err(self.client.io_err(
                &self.key,
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "read of {} bytes at {offset} is past the end ({} bytes)",
                        buf.len(),
                        self.len
                    ),
                ),
            ));
        }
        let (op, key) = (self.client.op.clone(), self.key.clone());
        let range = offset..offset + buf.len() as u64;
        let got = self
            .client
            .call(async move { op.read_with(&key).range(range).await })
            .map_err(|e| self.client.io_err(&self.key, e))?;
        if got.len() != buf.len() {
            // Shorter than the HEAD promised: replaced or truncated since.
            return Err(self.client.io_err(
                &self.key,
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("asked {} bytes at {offset}, got {}", buf.len(), got.len()),
                ),
            ));
        }
        let mut at = 0;
        for chunk in got {
            buf[at..at + chunk.len()].copy_from_slice(&chunk);
            at += chunk.len();
        }
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len
    }
}

/// A multipart upload in progress. Bytes gather in `buf` until a part is
/// full, so each `write` is a memcpy and only every [`PART_SIZE`] bytes a
/// request.
pub(crate) struct S3Writer {
    client: Arc<Client>,
    key: String,
    buf: Vec<u8>,
    /// `None` once finished, or after a failure lost it.
    upload: Option<opendal::Writer>,
}

impl S3Writer {
    pub fn new(client: Arc<Client>, key: String) -> Result<S3Writer> {
        let (op, k) = (client.op.clone(), key.clone());
        // Small files never start a multipart upload: `close` does one PUT.
        let upload = client
            .call(async move { op.writer_with(&k).chunk(PART_SIZE).await })
            .map_err(|e| client.err(&key, e))?;
        Ok(S3Writer {
            client,
            key,
            buf: Vec::with_capacity(PART_SIZE),
            upload: Some(upload),
        })
    }

    /// Hands the buffered bytes to the upload (which sends the full parts).
    fn send_buffered(&mut self) -> io::Result<()> {
        let Some(mut upload) = self.upload.take() else {
            return Err(io::Error::other("the upload already finished or failed"));
        };
        let data = std::mem::replace(&mut self.buf, Vec::with_capacity(PART_SIZE));
        // The writer moves into the task and comes back with the result.
        let (upload, r) = self.client.run(async move {
            let r = upload.write(data).await;
            (upload, r)
        })?;
        self.upload = Some(upload);
        r.map_err(super::client::to_io)
    }
}

impl Write for S3Writer {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.upload.is_none() {
            return Err(io::Error::other(format!(
                "{}: the upload already finished or failed",
                self.client.display(&self.key)
            )));
        }
        self.buf.extend_from_slice(data);
        if self.buf.len() >= PART_SIZE {
            self.send_buffered()
                .map_err(|e| self.client.io_err(&self.key, e))?;
        }
        Ok(data.len())
    }

    /// Nothing to do: bytes become durable (and visible) only at `finish`.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl FileWriter for S3Writer {
    fn finish(mut self: Box<Self>) -> Result<()> {
        if !self.buf.is_empty() {
            self.send_buffered()
                .map_err(|e| self.client.err(&self.key, e))?;
        }
        let Some(mut upload) = self.upload.take() else {
            return Err(self.client.err(
                &self.key,
                io::Error::other("the upload already finished or failed"),
            ));
        };
        let (upload, r) = self
            .client
            .run(async move {
                let r = upload.close().await;
                (upload, r)
            })
            .map_err(|e| self.client.err(&self.key, e))?;
        match r {
            Ok(_) => Ok(()),
            Err(e) => {
                // Put it back so `Drop` aborts the upload's parts.
                self.upload = Some(upload);
                Err(StorageError::io(
                    self.client.display(&self.key),
                    super::client::to_io(e),
                ))
            }
        }
    }
}

impl Drop for S3Writer {
    fn drop(&mut self) {
        if let Some(mut upload) = self.upload.take() {
            // Unfinished: never complete it (nothing may appear). Parts
            // already uploaded cost storage until aborted; the abort runs
            // in the background so a drop never waits on the network.
            self.client.detach(async move {
                let _ = upload.abort().await;
            });
        }
    }
}
