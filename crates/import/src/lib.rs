//! `ferrobase import`: HBase's ImportTsv for ferrobase. Delimited text
//! files (one row a line) become rows of a table, either through the
//! write path (batched puts) or, with `--bulk`, as sorted store files
//! handed to the regions in one manifest change each (HBase's
//! `completebulkload`), which touches neither the WAL nor a memstore.
//! docs/import.md says what the user types.
//!
//! Layout, one concept a module:
//! - [`options`]: everything an import is told (HBase's `importtsv.*`
//!   names and defaults), and the `-D` spellings;
//! - [`columns`]: the column spec (`HBASE_ROW_KEY`, `HBASE_TS_KEY`,
//!   `family:qualifier`);
//! - [`splits`]: files cut on line boundaries, several readers a file;
//! - [`line`](mod@line): one line split and checked (what makes a line bad);
//! - [`rejects`]: the rejects file, with each bad line's file line number;
//! - [`sink`]: where good lines go: the write path, or nowhere (dry run);
//! - [`bulk_sink`]: good lines sorted into store files per region;
//! - [`complete`]: staged files handed to their regions, split when a
//!   region boundary moved;
//! - [`run`]: the reader threads, the progress bar and the report.
//!
//! This crate talks to the cluster only through the client; it writes
//! store files with the storage crate's writer, never into a region.

pub mod bulk_sink;
pub mod columns;
pub mod complete;
pub mod line;
pub mod options;
pub mod rejects;
pub mod report;
pub mod run;
pub mod sink;
pub mod splits;

pub use options::ImportOptions;
pub use run::{ImportReport, run_import};

use std::path::Path;

/// Why an import could not run or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("invalid argument: {0}")]
    Invalid(String),
    #[error("--columns: {0}")]
    Columns(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("client: {0}")]
    Client(#[from] ferrobase_client::ClientError),
    #[error("store file: {0}")]
    Storage(#[from] ferrobase_storage::StorageError),
    #[error("bulk load: {0}")]
    Load(String),
    #[error("bad line {at}: {why} (stopped: --fail-on-bad-lines; bad lines are in {rejects})")]
    BadLine {
        at: String,
        why: String,
        rejects: String,
    },
    #[error("{0}")]
    Server(String),
}

impl ImportError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> ImportError {
        ImportError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
