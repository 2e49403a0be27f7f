//! [`Client`]: one HDFS root behind an `hdfs-native` client, driven from
//! synchronous code.
//!
//! Owns the private runtime (a [`BlockingRuntime`]: why, there) that the
//! HDFS client also runs its own tasks on (packet senders, ack readers,
//! lease renewal), the mapping from storage paths to HDFS paths, and the
//! translation of HDFS errors (Java exception classes from the NameNode)
//! into [`StorageError::Io`] of a matching kind, naming
//! `hdfs://namenode/path`, without the Java stack trace. It never decides
//! what an operation means (that is the rest of `fs::hdfs`).

use super::config::{HdfsConfig, normalize};
use crate::error::{Result, StorageError};
use crate::fs::runtime::BlockingRuntime;
use hdfs_native::{HdfsError, WriteOptions};
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};

/// See the module docs.
pub(crate) struct Client {
    pub fs: hdfs_native::Client,
    pub cfg: HdfsConfig,
    runtime: BlockingRuntime,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.cfg.namenode_url(), self.cfg.root)
    }
}

impl Client {
    /// Builds the client; sends no request.
    pub fn new(cfg: HdfsConfig) -> Result<Client> {
        let runtime = BlockingRuntime::new("ferrobase-hdfs")
            .map_err(|e| StorageError::io(cfg.namenode_url(), e))?;
        let handle = runtime
            .handle()
            .ok_or_else(|| StorageError::io(cfg.namenode_url(), io::Error::other("no runtime")))?;
        let mut b = hdfs_native::ClientBuilder::new()
            .with_url(cfg.namenode_url())
            .with_config(cfg.client.clone())
            .with_io_runtime(handle);
        if let Some(user) = &cfg.user {
            b = b.with_user(user.clone());
        }
        let fs = b.build().map_err(|e| {
            StorageError::InvalidRequest(format!(
                "storage root '{}{}': {}",
                cfg.namenode_url(),
                cfg.root,
                short(&e)
            ))
        })?;
        Ok(Client { fs, cfg, runtime })
    }

    /// Runs an HDFS call on the private runtime and waits for it, with its
    /// error as an `io::Error` (which [`err`](Self::err) names `path` in).
    pub fn call<T, F>(&self, fut: F) -> io::Result<T>
    where
        T: Send + 'static,
        F: Future<Output = hdfs_native::Result<T>> + Send + 'static,
    {
        self.runtime.run(fut)?.map_err(|e| self.to_io(e))
    }

    /// Runs any future on the private runtime and waits for it.
    pub fn run<T, F>(&self, fut: F) -> io::Result<T>
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        self.runtime.run(fut)
    }

    /// The HDFS path of storage path `path` (an absolute one is taken as
    /// relative to the root).
    pub fn path(&self, path: &Path) -> Result<String> {
        let rel = path.to_str().ok_or_else(|| {
            StorageError::InvalidRequest(format!(
                "{}: an HDFS path must be UTF-8",
                self.display_path(path)
            ))
        })?;
        let rel = normalize(rel).map_err(|why| {
            StorageError::InvalidRequest(format!("{}: {why}", self.display_path(path)))
        })?;
        Ok(join(&self.cfg.root, &rel))
    }

    /// `hdfs://namenode/path`, as messages name a file.
    pub fn display(&self, hdfs_path: &str) -> String {
        format!("{}{hdfs_path}", self.cfg.namenode_url())
    }

    /// Like [`display`](Self::display) for a storage path that may not be
    /// valid (messages must never fail).
    pub fn display_path(&self, path: &Path) -> String {
        let rel = path.to_string_lossy();
        let rel: Vec<&str> = rel
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        self.display(&join(&self.cfg.root, &format!("/{}", rel.join("/"))))
    }

    /// A [`StorageError::Io`] on `hdfs_path`.
    pub fn err(&self, hdfs_path: &str, e: io::Error) -> StorageError {
        StorageError::io(PathBuf::from(self.display(hdfs_path)), e)
    }

    /// `e` as an `io::Error` of the matching kind (module docs).
    pub fn to_io(&self, e: HdfsError) -> io::Error {
        let kind = kind_of(&e);
        let mut msg = short(&e);
        if matches!(
            kind,
            io::ErrorKind::ConnectionRefused | io::ErrorKind::TimedOut
        ) {
            msg = format!(
                "the NameNode {} does not answer ({msg})",
                self.cfg.namenode_url()
            );
        }
        io::Error::new(kind, msg)
    }

    /// Options for a store file, manifest or other file.
    pub fn file_options(&self) -> WriteOptions {
        WriteOptions::default()
            .replication(self.cfg.replication)
            .block_size(self.cfg.block_size)
    }

    /// Options for a WAL segment.
    pub fn log_options(&self) -> WriteOptions {
        WriteOptions::default()
            .replication(self.cfg.replication)
            .block_size(self.cfg.wal_block_size)
    }
}

/// `root` + `rel`, both absolute and normalized.
pub(crate) fn join(root: &str, rel: &str) -> String {
    match (root, rel) {
        ("/", rel) => rel.to_string(),
        (root, "/") => root.to_string(),
        (root, rel) => format!("{root}{rel}"),
    }
}

/// The parent directory of an absolute HDFS path (`/` for `/x`).
pub(crate) fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The `io::ErrorKind` callers test for (`NotFound`, `AlreadyExists`,
/// `PermissionDenied`, `StorageFull`, `ConnectionRefused`, ...).
fn kind_of(e: &HdfsError) -> io::ErrorKind {
    use io::ErrorKind as K;
    match e {
        HdfsError::IOError(e) => e.kind(),
        HdfsError::FileNotFound(_) | HdfsError::BlocksNotFound(_) => K::NotFound,
        HdfsError::AlreadyExists(_) => K::AlreadyExists,
        HdfsError::IsADirectoryError(_) => K::IsADirectory,
        HdfsError::InvalidPath(_) | HdfsError::InvalidArgument(_) => K::InvalidInput,
        HdfsError::ChecksumError => K::InvalidData,
        HdfsError::UnsupportedFeature(_) => K::Unsupported,
        HdfsError::RPCError(class, msg) | HdfsError::FatalRPCError(class, msg) => {
            let class = class.rsplit('.').next().unwrap_or(class);
            match class {
                "FileNotFoundException" => K::NotFound,
                "FileAlreadyExistsException" | "AlreadyBeingCreatedException" => K::AlreadyExists,
                "AccessControlException" | "AuthorizationException" => K::PermissionDenied,
                "DSQuotaExceededException" | "NSQuotaExceededException" => K::QuotaExceeded,
                "SafeModeException" | "StandbyException" | "RetriableException" => K::ResourceBusy,
                // addBlock with no DataNode that has room (or none alive).
                _ if msg.contains("could only be written to") => K::StorageFull,
                _ => K::Other,
            }
        }
        _ => K::Other,
    }
}

/// The error's message without the NameNode's Java stack trace.
pub(crate) fn short(e: &HdfsError) -> String {
    match e {
        HdfsError::RPCError(class, msg) | HdfsError::FatalRPCError(class, msg) => {
            let first = msg.split("\n\tat ").next().unwrap_or(msg).trim();
            let class = class.rsplit('.').next().unwrap_or(class);
            format!("{class}: {first}")
        }
        // hdfs-native's message lists every replica's DataNode as a
        // protobuf dump, and loses why each failed.
        HdfsError::DataTransferError(msg) if msg.starts_with("All DataNodes failed") => {
            "no replica could be read: each DataNode holding the block failed, or sent \
             data failing its HDFS checksum (a corrupt block)"
                .to_string()
        }
        HdfsError::AlreadyExists(msg) => {
            let first = msg.split("\n\tat ").next().unwrap_or(msg).trim();
            format!("already exists: {first}")
        }
        e => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_and_errors_lose_their_stack_traces() {
        assert_eq!(join("/", "/a/b"), "/a/b");
        assert_eq!(join("/r", "/"), "/r");
        assert_eq!(join("/r", "/a"), "/r/a");
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a"), "/");
        let e = HdfsError::RPCError(
            "org.apache.hadoop.security.AccessControlException".into(),
            "Permission denied: user=x\n\tat org.apache.Foo(Foo.java:1)\n".into(),
        );
        assert_eq!(kind_of(&e), io::ErrorKind::PermissionDenied);
        assert_eq!(
            short(&e),
            "AccessControlException: Permission denied: user=x"
        );
        let full = HdfsError::RPCError(
            "org.apache.hadoop.ipc.RemoteException".into(),
            "File /x could only be written to 0 of the 1 minReplication nodes".into(),
        );
        assert_eq!(kind_of(&full), io::ErrorKind::StorageFull);
    }
}
