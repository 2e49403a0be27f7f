//! [`S3Fs`]: an S3 bucket (or any S3-compatible store) as a storage root,
//! `s3://bucket[/prefix][?endpoint=URL&region=R&access_key_id=K&secret_access_key=S]`.
//!
//! A path `a/b` is the object `prefix/a/b`; directories are key prefixes,
//! so they need no creating and vanish with their last object. How each
//! guarantee of [`Storage`] is kept without rename or append:
//!
//! | guarantee                      | on S3                                          |
//! |--------------------------------|------------------------------------------------|
//! | file whole at `finish`         | multipart upload completed at `finish` (`file`) |
//! | `put` atomic                   | one PUT                                        |
//! | `put_new` only if absent       | PUT with `If-None-Match: *`                    |
//! | WAL append, durable batches    | one object per batch, named by offset (`log`) |
//! | fence                          | delete `dir/OWNER`, then copy, then delete (`fence`) |
//!
//! Submodules: `config` parses the root, `client` runs requests from
//! synchronous code on a private runtime, `testing` (feature `test-util`) starts a moto S3
//! server for tests. This module only maps each [`Storage`] call onto them;
//! it never retries (a retried `put_new` could report a lost race for its
//! own write) and never caches.

mod client;
mod config;
mod fence;
mod file;
mod log;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;

use super::{DirClaim, FileWriter, LogWriter, RandomRead, Storage};
use crate::error::{Result, StorageError};
use client::Client;
use std::collections::{BTreeSet, VecDeque};
use std::io;
use std::path::Path;
use std::sync::Arc;

/// See the module docs.
#[derive(Clone, Debug)]
pub struct S3Fs {
    client: Arc<Client>,
}

impl S3Fs {
    /// Parses `bucket[/prefix][?k=v&...]` (the part after `s3://`), with
    /// `AWS_ENDPOINT_URL`, `AWS_REGION` (default `us-east-1`),
    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` for what the URL
    /// leaves out. Sends no request: a wrong endpoint or key shows at the
    /// first operation, as an error naming the object.
    pub fn from_url(rest: &str) -> Result<S3Fs> {
        let cfg = config::S3Config::parse(rest, |name| std::env::var(name).ok())?;
        Ok(S3Fs {
            client: Arc::new(Client::new(&cfg)?),
        })
    }

    fn key(&self, path: &Path) -> Result<String> {
        self.client.key(path)
    }

    /// Runs an OpenDAL call and names `key` in its error.
    fn call<T, F>(&self, key: &str, fut: F) -> Result<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = opendal::Result<T>> + Send + 'static,
    {
        self.client.call(fut).map_err(|e| self.client.err(key, e))
    }
}

impl Storage for S3Fs {
    fn url(&self) -> String {
        let c = &self.client;
        format!("s3://{}", client::join(&c.bucket, &c.prefix))
    }

    fn display(&self, path: &Path) -> String {
        self.client.display_path(path)
    }

    fn create_dir_all(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let key = self.key(dir)?;
        let (op, d) = (self.client.op.clone(), client::dir(&key));
        let entries = self.call(&key, async move { op.list(&d).await })?;
        let dir = client::dir(&key);
        // Objects and common prefixes; `x` and `x/` are one name.
        let names: BTreeSet<String> = entries
            .iter()
            .filter_map(|e| e.path().strip_prefix(&dir))
            .map(|rel| rel.trim_end_matches('/'))
            .filter(|name| !name.is_empty() && !name.contains('/'))
            .map(str::to_string)
            .collect();
        Ok(names.into_iter().collect())
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        let key = self.key(path)?;
        let (op, k) = (self.client.op.clone(), key.clone());
        match self.client.call(async move { op.stat(&k).await }) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.client.err(&key, e)),
        }
    }

    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        let key = self.key(path)?;
        let (op, k) = (self.client.op.clone(), key.clone());
        match self.client.call(async move { op.read(&k).await }) {
            Ok(b) => Ok(Some(b.to_vec())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.client.err(&key, e)),
        }
    }

    fn open(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
        let key = self.key(path)?;
        let (op, k) = (self.client.op.clone(), key.clone());
        let meta = self.call(&key, async move { op.stat(&k).await })?;
        Ok(Arc::new(file::S3File {
            client: self.client.clone(),
            key,
            len: meta.content_length(),
        }))
    }

    fn create(&self, path: &Path) -> Result<Box<dyn FileWriter>> {
        let key = self.key(path)?;
        Ok(Box::new(file::S3Writer::new(self.client.clone(), key)?))
    }

    fn put(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let key = self.key(path)?;
        let (op, k, b) = (self.client.op.clone(), key.clone(), bytes.to_vec());
        self.call(&key, async move { op.write(&k, b).await })
            .map(drop)
    }

    fn put_new(&self, path: &Path, bytes: &[u8]) -> Result<bool> {
        let key = self.key(path)?;
        let (op, k, b) = (self.client.op.clone(), key.clone(), bytes.to_vec());
        match self
            .client
            .call(async move { op.write_with(&k, b).if_not_exists(true).await })
        {
            Ok(_) => Ok(true),
            Err(e) if client::is_condition_failed(&e) => Ok(false),
            Err(e) => Err(self.client.err(&key, e)),
        }
    }

    fn delete(&self, path: &Path) -> Result<()> {
        let key = self.key(path)?;
        let (op, k) = (self.client.op.clone(), key.clone());
        // S3 answers a DELETE of a missing key with success.
        self.call(&key, async move { op.delete(&k).await })
    }

    fn delete_all(&self, dir: &Path) -> Result<()> {
        let key = self.key(dir)?;
        let (op, d) = (self.client.op.clone(), client::dir(&key));
        self.call(
            &key,
            async move { op.delete_with(&d).recursive(true).await },
        )
    }

    /// A server-side copy (S3 `CopyObject`: no bytes through this process)
    /// then a delete; a copy S3 refuses (objects over 5 GiB) is streamed
    /// instead.
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let (src, dst) = (self.key(from)?, self.key(to)?);
        let (op, s, d) = (self.client.op.clone(), src.clone(), dst.clone());
        if let Err(e) = self.call(&src, async move { op.copy(&s, &d).await }) {
            tracing::debug!(error = %e, "server-side copy refused; streaming the object");
            super::copy_file(self, from, to)?;
        }
        self.delete(from)
    }

    fn create_log(&self, path: &Path, header: &[u8]) -> Result<Box<dyn LogWriter>> {
        let seg = self.key(path)?;
        let key = log::chunk_key(&seg, 0);
        // Like the local `create_new`: a segment is never created twice.
        let (op, k, b) = (self.client.op.clone(), key.clone(), header.to_vec());
        match self
            .client
            .call(async move { op.write_with(&k, b).if_not_exists(true).await })
        {
            Ok(_) => {}
            Err(e) if client::is_condition_failed(&e) => {
                return Err(self.client.err(
                    &key,
                    io::Error::new(io::ErrorKind::AlreadyExists, "WAL segment already exists"),
                ));
            }
            Err(e) => return Err(self.client.err(&key, e)),
        }
        Ok(Box::new(log::S3Log {
            client: self.client.clone(),
            seg,
            offset: header.len() as u64,
        }))
    }

    fn open_log(&self, path: &Path) -> Result<(Box<dyn io::Read + Send>, u64)> {
        let seg = self.key(path)?;
        let chunks = log::list_chunks(&self.client, &seg)?;
        if chunks.is_empty() {
            return Err(self.client.err(
                &seg,
                io::Error::new(io::ErrorKind::NotFound, "no such WAL segment"),
            ));
        }
        if chunks.first().is_some_and(|c| c.offset != 0) {
            // No header chunk: `create_log` PUTs it before any batch can be
            // acknowledged, and `delete_log` removes it last, so these are
            // batches a fenced writer PUT after the master moved its WAL
            // away. Nobody heard of them: the segment reads as empty (a
            // segment cut short before its header), never as a gap error
            // that would stop every later split of this directory.
            tracing::warn!(segment = %self.client.display(&seg), chunks = chunks.len(),
                "WAL segment without its header chunk (written after a fence); reading it as empty");
            return Ok((Box::new(io::empty()), 0));
        }
        let len = log::check_contiguous(&self.client, &chunks, u64::MAX)?;
        let reader = log::ChunkReader::new(self.client.clone(), VecDeque::from(chunks));
        Ok((Box::new(reader), len))
    }

    fn truncate_log(&self, path: &Path, len: u64) -> Result<()> {
        log::truncate(&self.client, &self.key(path)?, len)
    }

    fn log_exists(&self, path: &Path) -> Result<bool> {
        log::exists(&self.client, &self.key(path)?)
    }

    fn delete_log(&self, path: &Path) -> Result<()> {
        log::delete(&self.client, &self.key(path)?)
    }

    fn claim_dir(&self, dir: &Path) -> Result<Box<dyn DirClaim>> {
        let key = self.key(dir)?;
        Ok(Box::new(fence::S3Claim::claim(self.client.clone(), &key)?))
    }

    fn fence_dir(&self, dir: &Path, to: &Path) -> Result<()> {
        let (dir, to) = (self.key(dir)?, self.key(to)?);
        if dir.is_empty() {
            return Err(StorageError::InvalidRequest(format!(
                "{}: cannot fence the storage root",
                self.url()
            )));
        }
        fence::fence(&self.client, &dir, &to)
    }

    fn lock_dir(&self, _dir: &Path) -> Result<Option<Box<dyn Send + Sync>>> {
        Ok(None)
    }
}
