//! [`ClientError`]: every way an HBase call made by this crate can fail.
//!
//! This module owns the error vocabulary of the client: a server's
//! exception keeps HBase's class name (`org.apache.hadoop.hbase.
//! NotServingRegionException`, ...), so callers match on the same names a
//! Java application sees. It decides which errors are worth a retry
//! ([`ClientError::is_retryable`]) and which mean the region cache is stale
//! ([`ClientError::relocates`]); it never retries anything itself.

use ferrobase_hbase_wire::convert::ConvertError;
use ferrobase_hbase_wire::{ExceptionClass, RemoteException, WireError};

/// Why a call failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The TCP connection could not be opened.
    #[error("cannot connect to {addr}: {reason}")]
    Connect { addr: String, reason: String },
    /// The connection broke (or was closed by the server) before the answer
    /// arrived.
    #[error("connection to {addr} closed: {reason}")]
    ConnectionClosed { addr: String, reason: String },
    /// No answer within the RPC timeout (`hbase.rpc.timeout`).
    #[error("{method} to {addr} timed out after {millis} ms")]
    Timeout {
        addr: String,
        method: String,
        millis: u64,
    },
    /// The server answered with an exception; `class` is HBase's Java
    /// class name.
    #[error("{class}: {message}")]
    Remote {
        class: String,
        message: String,
        do_not_retry: bool,
    },
    /// Bytes from the server that are not HBase RPC.
    #[error("bad bytes from {addr}: {source}")]
    Wire { addr: String, source: WireError },
    /// A well-framed answer that does not say what it must (a missing
    /// field, a cell count past the cell block, ...).
    #[error("bad answer from the server: {0}")]
    Protocol(String),
    /// A table, family or mutation that cannot be put on the wire.
    #[error("{0}")]
    Convert(#[from] ConvertError),
    /// `hbase:meta` holds no region of the table.
    #[error("org.apache.hadoop.hbase.TableNotFoundException: {0}")]
    TableNotFound(String),
    /// A master procedure (create, disable, delete) ended with an error.
    #[error("procedure {proc_id} failed: {class}: {message}")]
    Procedure {
        proc_id: u64,
        class: String,
        message: String,
    },
    /// A bad argument from the caller.
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// Mutations of a buffered batch failed; the first error is kept.
    #[error("{failed} mutation(s) failed; the first: {first}")]
    BatchFailed {
        failed: usize,
        first: Box<ClientError>,
    },
    /// Every retry failed; the last error is kept.
    #[error("gave up after {attempts} attempt(s): {last}")]
    RetriesExhausted {
        attempts: u32,
        last: Box<ClientError>,
    },
}

/// This crate's result type.
pub type Result<T, E = ClientError> = std::result::Result<T, E>;

impl From<RemoteException> for ClientError {
    fn from(e: RemoteException) -> ClientError {
        ClientError::Remote {
            class: e.class_name,
            message: e.message,
            do_not_retry: e.do_not_retry,
        }
    }
}

impl ClientError {
    /// HBase's exception class name, for a server's exception (also inside
    /// [`RetriesExhausted`](Self::RetriesExhausted)).
    pub fn exception_class(&self) -> Option<&str> {
        match self {
            ClientError::Remote { class, .. } => Some(class),
            ClientError::TableNotFound(_) => Some(ExceptionClass::TableNotFound.class_name()),
            ClientError::RetriesExhausted { last, .. } => last.exception_class(),
            ClientError::BatchFailed { first, .. } => first.exception_class(),
            _ => None,
        }
    }

    /// True when the server's exception is the class with this simple name
    /// (`UnknownScannerException`).
    pub fn class_is(&self, simple: &str) -> bool {
        self.exception_class()
            .is_some_and(|c| c.rsplit('.').next() == Some(simple))
    }

    /// A short name of the error's kind, for counting failures: the
    /// exception's simple class name, or the variant.
    pub fn kind(&self) -> String {
        match self.exception_class() {
            Some(c) => c.rsplit('.').next().unwrap_or(c).to_string(),
            None => match self {
                ClientError::Connect { .. } => "Connect".into(),
                ClientError::ConnectionClosed { .. } => "ConnectionClosed".into(),
                ClientError::Timeout { .. } => "Timeout".into(),
                ClientError::Wire { .. } => "Wire".into(),
                ClientError::Protocol(_) => "Protocol".into(),
                ClientError::Convert(_) => "Convert".into(),
                ClientError::Procedure { .. } => "Procedure".into(),
                ClientError::Invalid(_) => "Invalid".into(),
                _ => "Other".into(),
            },
        }
    }

    /// True when the same call may succeed if sent again: connection
    /// failures, timeouts, and server exceptions HBase marks retryable
    /// (a region moving or opening, a busy region or call queue).
    pub fn is_retryable(&self) -> bool {
        match self {
            ClientError::Connect { .. }
            | ClientError::ConnectionClosed { .. }
            | ClientError::Timeout { .. } => true,
            ClientError::Remote {
                class,
                do_not_retry,
                ..
            } => match ExceptionClass::from_class_name(class) {
                Some(c) => !c.do_not_retry() && !*do_not_retry,
                None => !*do_not_retry && !class.contains("DoNotRetry"),
            },
            _ => false,
        }
    }

    /// True when the region cache is stale for the call: the region moved,
    /// is not (or not yet) served where it was looked up, or its server's
    /// connection broke.
    pub fn relocates(&self) -> bool {
        match self {
            ClientError::Connect { .. } | ClientError::ConnectionClosed { .. } => true,
            ClientError::Remote { class, .. } => {
                class.ends_with("NotServingRegionException")
                    || class.ends_with("RegionMovedException")
                    || class.ends_with("RegionOpeningException")
                    || class.ends_with("RegionServerStoppedException")
            }
            _ => false,
        }
    }
}
