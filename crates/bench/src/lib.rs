//! `ferrobase bench`: the seeds' load tool (`SendData`), every seed
//! experiment as one command, and YCSB's core workloads.
//!
//! - [`target`]: the server a run drives: an embedded standalone server on a
//!   temporary directory, a running cluster (`--server`), or an HBase
//!   (`--target hbase://`). A run never
//!   leaves an embedded server running, whatever way it ends.
//! - [`rowspec`]: the data shapes of docs/workloads.md with the seed
//!   experiments' knobs on top (column
//!   count, qualifier length, value size).
//! - [`load`]: the load tool: one generator range per client thread, a
//!   write buffer per thread, latency per buffer flush, RPC and stall counts.
//! - [`gen_text`]: a shape's rows as delimited text files for
//!   `ferrobase import`.
//! - [`experiment`]: the seed experiments (sweeps → JSON, SVG chart, table).
//! - [`peer`]: a real Apache HBase beside the run (`--peer hbase`),
//!   stopped when dropped.
//! - [`peer_report`]: `bench peer ycsb|all`: YCSB (through
//!   `scripts/bench-peer.sh`) and the seed experiments against ferrobase and
//!   Apache HBase, and the HTML report of both.
//! - [`resources`]: CPU seconds and peak memory of the bench process and
//!   of the server process under test, from `/proc`.
//! - [`cluster`]: etcd, a master and N region server processes on this
//!   machine, for the `regionservers` experiment; killed when dropped.
//! - [`ycsb`]: YCSB property files, workloads A–F, YCSB's output format.
//! - [`cli`]: the `bench` subcommand's arguments and entry point.
//!
//! This crate never reaches into the storage engine: it talks to the
//! server through the client, and reads the engine's stall counters only
//! through the embedded server's public status.

pub mod chart;
pub mod cli;
pub mod cluster;
pub mod experiment;
pub mod gen_text;
pub mod latency;
pub mod load;
pub mod peer;
pub mod peer_report;
pub mod progress;
pub mod reads;
pub mod resources;
pub mod rowspec;
pub mod target;
pub mod ycsb;

/// Why a bench run could not run (errors of single operations are counted
/// in the reports instead).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    #[error("invalid argument: {0}")]
    Invalid(String),
    #[error("client: {0}")]
    Client(#[from] ferrobase_client::ClientError),
    #[error("HBase client: {0}")]
    HBase(#[from] ferrobase_hbase_client::ClientError),
    #[error("server: {0}")]
    Server(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    /// The experiment cannot run here (missing etcd, not run through the
    /// ferrobase binary); exit code 2.
    #[error("{0}")]
    CannotRun(String),
    #[error("interrupted")]
    Interrupted,
    #[error("chart: {0}")]
    Chart(String),
}

impl BenchError {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
        let what = what.into();
        move |source| BenchError::Io { what, source }
    }
}

pub type Result<T, E = BenchError> = std::result::Result<T, E>;
