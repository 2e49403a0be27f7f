//! [`HdfsFs`]: a directory of an HDFS cluster as a storage root,
//! `hdfs://namenode[:port][/path][?user=U&dfs.client.…=V]` (a nameservice
//! of `HADOOP_CONF_DIR`'s hdfs-site.xml works as the NameNode), through
//! the pure-Rust `hdfs-native` client: no JVM, no libhdfs.
//!
//! How each guarantee of [`Storage`] is kept, as HBase keeps it:
//!
//! | guarantee                      | on HDFS                                              |
//! |--------------------------------|------------------------------------------------------|
//! | file whole at `finish`         | `name.tmp` written, hsync, close, rename over (`file`) |
//! | `put` atomic                   | the same (an HDFS rename is one NameNode operation)   |
//! | `put_new` only if absent       | create without overwrite                             |
//! | WAL append, durable batches    | one file per segment, hsync per batch (`log`)        |
//! | fence                          | rename the directory, recoverLease its files (`fence`) |
//!
//! Replication and block size of every file come from `dfs.replication`
//! and `dfs.blocksize` (WAL segments: `hbase.regionserver.hlog.blocksize`).
//! Errors name `hdfs://namenode/path` and keep HDFS's meaning as an
//! `io::ErrorKind`: `NotFound`, `PermissionDenied`, `AlreadyExists`,
//! `StorageFull` (no DataNode with room), `QuotaExceeded`,
//! `ConnectionRefused` (NameNode not answering).
//!
//! Submodules: `config` parses the root, `client` runs requests from
//! synchronous code and translates errors, `testing` (feature `test-util`) starts a real
//! MiniDFSCluster for tests. This module only maps each [`Storage`] call
//! onto them.

mod client;
mod config;
mod fence;
mod file;
mod log;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;

use super::{DirClaim, FileWriter, LogWriter, RandomRead, Storage};
use crate::error::{Result, StorageError};
use client::{Client, parent};
use ferrobase_types::Settings;
use file::{HdfsFile, HdfsStream, HdfsWriter};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

/// See the module docs.
#[derive(Clone, Debug)]
pub struct HdfsFs {
    client: Arc<Client>,
    logs: Arc<log::OpenLogs>,
}

impl HdfsFs {
    /// Parses `namenode[:port][/path][?…]` (the part after `hdfs://`).
    /// Sends no request: an unreachable NameNode shows at the first
    /// operation, as an error naming the path.
    pub fn from_url(rest: &str, settings: &Settings) -> Result<HdfsFs> {
        let cfg = config::HdfsConfig::parse(rest, settings)?;
        Ok(HdfsFs {
            client: Arc::new(Client::new(cfg)?),
            logs: Arc::default(),
        })
    }

    fn path(&self, path: &Path) -> Result<String> {
        self.client.path(path)
    }

    /// Runs an HDFS call, naming `path` in its error.
    fn call<T, F>(&self, path: &str, fut: F) -> Result<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = hdfs_native::Result<T>> + Send + 'static,
    {
        self.client.call(fut).map_err(|e| self.client.err(path, e))
    }

    fn open_file(&self, path: &str) -> Result<HdfsFile> {
        let reader = file::open_reader(&self.client, path).map_err(|e| self.client.err(path, e))?;
        Ok(HdfsFile {
            client: self.client.clone(),
            path: path.to_string(),
            reader,
        })
    }
}

impl Storage for HdfsFs {
    fn url(&self) -> String {
        format!("{}{}", self.client.cfg.namenode_url(), self.client.cfg.root)
    }

    fn display(&self, path: &Path) -> String {
        self.client.display_path(path)
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        let (fs, d) = (self.client.fs.clone(), self.path(dir)?);
        self.call(&d.clone(), async move { fs.mkdirs(&d, 0o755, true).await })
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let (fs, d) = (self.client.fs.clone(), self.path(dir)?);
        let p = d.clone();
        match self
            .client
            .call(async move { fs.list_status(&p, false).await })
        {
            Ok(entries) => {
                let mut names: Vec<String> = entries
                    .iter()
                    .filter_map(|e| e.path.rsplit('/').next())
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect();
                names.sort_unstable();
                Ok(names)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(self.client.err(&d, e)),
        }
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        let (fs, p) = (self.client.fs.clone(), self.path(path)?);
        let q = p.clone();
        match self.client.call(async move { fs.get_file_info(&q).await }) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.client.err(&p, e)),
        }
    }

    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        let p = self.path(path)?;
        let file = match file::open_reader(&self.client, &p) {
            Ok(reader) => HdfsFile {
                client: self.client.clone(),
                path: p.clone(),
                reader,
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.client.err(&p, e)),
        };
        let mut out = vec![0u8; file.len() as usize];
        file.read_exact_at(&mut out, 0)
            .map_err(|e| StorageError::io(self.client.display(&p), e))?;
        Ok(Some(out))
    }

    fn open(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
        Ok(Arc::new(self.open_file(&self.path(path)?)?))
    }

    fn create(&self, path: &Path) -> Result<Box<dyn FileWriter>> {
        let p = self.path(path)?;
        let tmp = format!("{p}.tmp");
        Ok(Box::new(HdfsWriter::create(self.client.clone(), tmp, p)?))
    }

    fn put(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let mut w = self.create(path)?;
        w.write_all(bytes)
            .map_err(|e| StorageError::io(self.display(path), e))?;
        w.finish()
    }

    fn put_new(&self, path: &Path, bytes: &[u8]) -> Result<bool> {
        let p = self.path(path)?;
        let (fs, q, opts) = (
            self.client.fs.clone(),
            p.clone(),
            self.client.file_options(),
        );
        let b = bytes::Bytes::copy_from_slice(bytes);
        let created = self.client.call(async move {
            // The NameNode creates a name once: a second create, even while
            // the first is still being written, fails.
            let mut w = match fs.create(&q, opts.create_parent(true)).await {
                Ok(w) => w,
                Err(hdfs_native::HdfsError::AlreadyExists(_)) => return Ok(false),
                Err(e) => return Err(e),
            };
            w.write_bytes(b).await?;
            w.hsync().await?;
            w.close().await?;
            Ok(true)
        });
        match created {
            Ok(created) => Ok(created),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(self.client.err(&p, e)),
        }
    }

    fn delete(&self, path: &Path) -> Result<()> {
        let (fs, p) = (self.client.fs.clone(), self.path(path)?);
        self.call(&p.clone(), async move { fs.delete(&p, false).await })
            .map(drop)
    }

    fn delete_all(&self, dir: &Path) -> Result<()> {
        let (fs, d) = (self.client.fs.clone(), self.path(dir)?);
        if d == "/" {
            return Err(StorageError::InvalidRequest(format!(
                "{}: refusing to delete the file system's root",
                self.url()
            )));
        }
        self.call(&d.clone(), async move { fs.delete(&d, true).await })
            .map(drop)
    }

    /// One NameNode rename (replacing `to`), after creating `to`'s parent.
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let (fs, src, dst) = (self.client.fs.clone(), self.path(from)?, self.path(to)?);
        self.call(&src.clone(), async move {
            fs.mkdirs(parent(&dst), 0o755, true).await?;
            fs.rename(&src, &dst, true).await
        })
    }

    fn create_log(&self, path: &Path, header: &[u8]) -> Result<Box<dyn LogWriter>> {
        let p = self.path(path)?;
        let log = log::create(self.client.clone(), self.logs.clone(), p, header)?;
        Ok(Box::new(log))
    }

    fn open_log(&self, path: &Path) -> Result<(Box<dyn Read + Send>, u64)> {
        let p = self.path(path)?;
        log::prepare_read(&self.client, &self.logs, &p)?;
        let file = self.open_file(&p)?;
        let len = file.len();
        Ok((Box::new(HdfsStream::new(file)), len))
    }

    /// HDFS can truncate, but `hdfs-native` cannot: the first `len` bytes
    /// are copied to `path.tmp`, which then replaces the segment (a crash
    /// part way leaves the segment as it was, and a stray `.tmp`).
    fn truncate_log(&self, path: &Path, len: u64) -> Result<()> {
        let p = self.path(path)?;
        log::prepare_read(&self.client, &self.logs, &p)?;
        let src = self.open_file(&p)?;
        if src.len() < len {
            return Err(self.client.err(
                &p,
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "cannot truncate to {len} bytes: the segment has {}",
                        src.len()
                    ),
                ),
            ));
        }
        let mut out = HdfsWriter::create(self.client.clone(), format!("{p}.tmp"), p.clone())?;
        let mut reader = HdfsStream::new(src).take(len);
        io::copy(&mut reader, &mut out).map_err(|e| self.client.err(&p, e))?;
        Box::new(out).finish()
    }

    fn log_exists(&self, path: &Path) -> Result<bool> {
        self.exists(path)
    }

    fn delete_log(&self, path: &Path) -> Result<()> {
        self.delete(path)
    }

    fn claim_dir(&self, dir: &Path) -> Result<Box<dyn DirClaim>> {
        let d = self.path(dir)?;
        Ok(Box::new(fence::HdfsClaim::claim(self.client.clone(), &d)?))
    }

    fn fence_dir(&self, dir: &Path, to: &Path) -> Result<()> {
        let (d, t) = (self.path(dir)?, self.path(to)?);
        if d == self.client.cfg.root {
            return Err(StorageError::InvalidRequest(format!(
                "{}: cannot fence the storage root",
                self.url()
            )));
        }
        fence::fence(&self.client, &d, &t)
    }

    /// None: HDFS has no advisory lock. A second process on the same root
    /// takes the WAL claim, and the first then acknowledges nothing more.
    fn lock_dir(&self, _dir: &Path) -> Result<Option<Box<dyn Send + Sync>>> {
        Ok(None)
    }
}
