//! The engine's errors, and what a caller should do about each
//! ([`ErrorKind`]).

use ferrobase_types::MutationError;
use std::path::PathBuf;

/// Result with [`StorageError`].
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// What the caller should do with an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Transient: retry after a pause (region too busy, closing).
    Retry,
    /// The request is wrong: do not retry it unchanged.
    BadRequest,
    /// Data on disk failed a check: an operator must look.
    Corruption,
    /// The operating system refused an I/O.
    Io,
}

/// Everything the engine can report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("corrupt data in {path} at offset {offset}: {what}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        what: String,
    },
    #[error("region {region} too busy: {reason} (waited {waited_ms} ms); retry later")]
    RegionTooBusy {
        region: String,
        reason: String,
        waited_ms: u64,
    },
    #[error("invalid mutation: {0}")]
    InvalidMutation(#[from] MutationError),
    #[error("column family '{family}' does not exist in table '{table}'")]
    NoSuchFamily { table: String, family: String },
    #[error("row '{row}' is outside region {region}")]
    WrongRegion { region: String, row: String },
    #[error("region {0} is closed")]
    Closed(String),
    /// This server's WAL directory was renamed away (its regions are being
    /// recovered elsewhere): it must acknowledge nothing more.
    #[error("fenced: {0}")]
    Fenced(String),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
}

impl StorageError {
    /// What to do about this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            StorageError::Io { .. } => ErrorKind::Io,
            StorageError::Corrupt { .. } => ErrorKind::Corruption,
            StorageError::RegionTooBusy { .. }
            | StorageError::Closed(_)
            | StorageError::Fenced(_) => ErrorKind::Retry,
            StorageError::InvalidMutation(_)
            | StorageError::NoSuchFamily { .. }
            | StorageError::WrongRegion { .. }
            | StorageError::InvalidRequest(_) => ErrorKind::BadRequest,
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> StorageError {
        StorageError::Io {
            path: path.into(),
            source,
        }
    }

    /// Corruption in `path` at `offset`.
    pub fn corrupt(path: impl Into<PathBuf>, offset: u64, what: impl Into<String>) -> StorageError {
        StorageError::Corrupt {
            path: path.into(),
            offset,
            what: what.into(),
        }
    }
}
