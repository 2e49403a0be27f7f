//! ferrobase's region engine: everything that stores one region's data on
//! disk, with no networking.
//!
//! Layout (one concept per module, HBase's names):
//! - [`cell`]: a cell by its parts, borrowed (what a flush hands the
//!   store file writer);
//! - [`wal`]: the write-ahead log shared by every region of the process
//!   (segments, checksummed records, group commit, replay, roll, truncation);
//! - [`memstore`]: the in-memory sorted cells of one store, swapped out
//!   whole at flush;
//! - [`storefile`]: immutable sorted files (blocks, encodings, compression,
//!   Bloom filter, block index, file info);
//! - [`cache`]: the process-wide block cache;
//! - [`scanner`]: merging sources and applying deletes, versions and TTL;
//! - [`compaction`]: which files to merge, and the merge itself;
//! - [`region`]: put/get/scan/flush/compact of one region, MVCC read points,
//!   the manifest that publishes file sets atomically;
//! - [`snapshot_manifest`]: what a table snapshot holds (store files by
//!   reference, the descriptor, region boundaries) and where snapshots live;
//! - [`snapshot_export`]: a snapshot copied to another root;
//! - [`archive`]: store files dropped by a region or a DDL call, deleted
//!   or kept for the snapshots that hold them;
//! - [`engine`]: what regions of one process share (settings, WAL, block
//!   cache, flush and compaction pools, global memstore accounting, stall
//!   counters).
//!
//! The engine never talks to the network and never panics on bytes read
//! from disk: every decoder returns [`StorageError::Corrupt`] naming the
//! file and offset.

pub mod archive;
pub mod cache;
pub mod cell;
pub mod checksummed_json;
pub mod codec;
pub mod compaction;
pub mod engine;
pub mod error;
pub mod file_link;
pub mod fs;
pub mod iter;
pub mod memstore;
pub mod region;
pub mod row_cache;
pub mod scanner;
pub mod snapshot_export;
pub mod snapshot_manifest;
pub mod storefile;
pub mod wal;

pub use engine::{Engine, EngineStats};
pub use error::{ErrorKind, Result, StorageError};
pub use region::{Get, Region, RegionInfo, RegionScanner, RegionStatus, Scan};
