//! [`Client`]: one bucket prefix behind an OpenDAL operator, driven from
//! synchronous code.
//!
//! Owns the private tokio runtime (a [`BlockingRuntime`]: why, there),
//! the mapping from storage paths to object keys, and the translation of
//! OpenDAL errors into [`StorageError::Io`] naming `s3://bucket/key`. It
//! never decides what an operation means (that is the rest of `fs::s3`).

use super::config::{self, S3Config};
use crate::error::{Result, StorageError};
use crate::fs::runtime::BlockingRuntime;
pub(crate) use crate::fs::runtime::wait;
use opendal::{OperationContext, Operator};
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Once, mpsc};
use std::time::Duration;

/// A TCP connect that takes longer means the endpoint is wrong or down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// No byte for this long on an open request: the request fails instead of
/// hanging the engine thread waiting for it.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// See the module docs.
pub(crate) struct Client {
    pub op: Operator,
    pub bucket: String,
    /// Normalized (see [`config::normalize`]); empty for the bucket root.
    pub prefix: String,
    runtime: BlockingRuntime,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.prefix)
    }
}

impl Client {
    pub fn new(cfg: &S3Config) -> Result<Client> {
        let bad = |what: &str, e: &dyn std::fmt::Display| {
            StorageError::InvalidRequest(format!("storage root 's3://{}': {what}: {e}", cfg.bucket))
        };
        install_crypto_provider();
        // Our own reqwest client: `reqwest::Client::new()` (OpenDAL's lazy
        // default) panics when TLS cannot be set up; `build` reports it.
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .build()
            .map_err(|e| bad("cannot set up the HTTP client", &e))?;
        let transport = opendal::HttpTransporter::new(
            opendal_http_transport_reqwest::ReqwestTransport::new(http),
        );

        // Root "/": keys are computed here (prefix included), so messages
        // and listings speak in whole keys.
        let mut b = opendal::services::S3::default()
            .bucket(&cfg.bucket)
            .region(&cfg.region)
            .root("/");
        if let Some(endpoint) = &cfg.endpoint {
            b = b.endpoint(endpoint);
        }
        if let Some(c) = &cfg.credentials {
            b = b
                .access_key_id(&c.access_key_id)
                .secret_access_key(&c.secret_access_key);
            if let Some(token) = &c.session_token {
                b = b.session_token(token);
            }
        }
        // Without `auto-register-services` OpenDAL installs no default HTTP
        // transport: every operator must be given one.
        let op = Operator::new(b)
            .map_err(|e| bad("bad S3 configuration", &e))?
            .with_context(OperationContext::new().with_http_transport(transport));

        let runtime = BlockingRuntime::new("ferrobase-s3")
            .map_err(|e| StorageError::io(format!("s3://{}", cfg.bucket), e))?;
        Ok(Client {
            op,
            bucket: cfg.bucket.clone(),
            prefix: cfg.prefix.clone(),
            runtime,
        })
    }

    /// Runs `fut` on the private runtime and waits for its result, from any
    /// thread (see the module docs).
    pub fn run<T, F>(&self, fut: F) -> io::Result<T>
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        self.runtime.run(fut)
    }

    /// Starts `fut` on the private runtime; [`wait`] on the receiver gives
    /// its result. Lets a caller keep several requests in flight.
    pub fn start<T, F>(&self, fut: F) -> mpsc::Receiver<T>
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        self.runtime.start(fut)
    }

    /// [`run`](Self::run) for an OpenDAL call, with its error as `io::Error`.
    ///
    /// (See also [`start`](Self::start) and [`wait`].)
    pub fn call<T, F>(&self, fut: F) -> io::Result<T>
    where
        T: Send + 'static,
        F: Future<Output = opendal::Result<T>> + Send + 'static,
    {
        self.run(fut)?.map_err(to_io)
    }

    /// Starts `fut` and does not wait (best-effort cleanup from `Drop`).
    pub fn detach(&self, fut: impl Future<Output = ()> + Send + 'static) {
        self.runtime.detach(fut);
    }

    /// The object key of `path`: the prefix joined with the normalized
    /// path (an absolute path is taken as relative to the root).
    pub fn key(&self, path: &Path) -> Result<String> {
        let rel = path.to_str().ok_or_else(|| {
            StorageError::InvalidRequest(format!(
                "{}: an S3 key must be UTF-8",
                self.display_path(path)
            ))
        })?;
        let rel = config::normalize(rel).map_err(|why| {
            StorageError::InvalidRequest(format!("{}: {why}", self.display_path(path)))
        })?;
        Ok(join(&self.prefix, &rel))
    }

    /// `s3://bucket/key`, as messages name an object.
    pub fn display(&self, key: &str) -> String {
        format!("s3://{}/{}", self.bucket, key)
    }

    /// Like [`display`](Self::display) for a path that may not be a valid
    /// key (messages must never fail).
    pub fn display_path(&self, path: &Path) -> String {
        let rel = path.to_string_lossy();
        let rel = rel.split('/').filter(|p| !p.is_empty() && *p != ".");
        let key = rel.fold(self.prefix.clone(), |k, p| join(&k, p));
        self.display(&key)
    }

    /// A [`StorageError::Io`] on `key`.
    pub fn err(&self, key: &str, e: io::Error) -> StorageError {
        StorageError::io(PathBuf::from(self.display(key)), e)
    }

    /// An `io::Error` whose message names `key` (for `io::Read` and
    /// [`RandomRead`](crate::fs::RandomRead), which have no path field).
    pub fn io_err(&self, key: &str, e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("{}: {e}", self.display(key)))
    }
}

/// `a` + `/` + `b`, either possibly empty.
pub(crate) fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}/{b}"),
    }
}

/// `key/`, or `""` for the root.
pub(crate) fn dir(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("{key}/")
    }
}

/// OpenDAL's error as an `io::Error` of the matching kind (callers test
/// `NotFound`); the OpenDAL error, with its request context, is the source.
pub(crate) fn to_io(e: opendal::Error) -> io::Error {
    use opendal::ErrorKind as K;
    let kind = match e.kind() {
        K::NotFound => io::ErrorKind::NotFound,
        K::PermissionDenied => io::ErrorKind::PermissionDenied,
        K::AlreadyExists => io::ErrorKind::AlreadyExists,
        K::IsADirectory => io::ErrorKind::IsADirectory,
        K::NotADirectory => io::ErrorKind::NotADirectory,
        K::RangeNotSatisfied => io::ErrorKind::UnexpectedEof,
        K::ConfigInvalid | K::Unsupported => io::ErrorKind::InvalidInput,
        _ => io::ErrorKind::Other,
    };
    io::Error::new(kind, e)
}

/// True when `e` (from [`to_io`]) was a failed precondition
/// (`If-None-Match: *` on an existing object).
pub(crate) fn is_condition_failed(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<opendal::Error>())
        .is_some_and(|oe| oe.kind() == opendal::ErrorKind::ConditionNotMatch)
}

/// reqwest (built without a default provider, to avoid aws-lc's C build)
/// needs a process-wide rustls provider before it builds a TLS client.
fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err: another component installed one first; that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
