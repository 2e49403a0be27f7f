//! Compaction: choosing store files to merge ([`policy`]) and merging them
//! while dropping what no reader can see any more ([`compactor`]).
//!
//! Minor compactions merge a run of similar-sized files picked by HBase's
//! ratio rule (`hbase.hstore.compaction.min/max/ratio`). Major compactions
//! merge every file of a store and apply delete markers, TTL and VERSIONS
//! for good; [`throttle`] paces them (HBase 2's pressure-aware throughput
//! control). This module never publishes files: the region swaps the
//! inputs for the output in its manifest.

pub mod compactor;
pub mod policy;
mod row_batch;
pub mod throttle;

pub use compactor::{CompactionKind, compact_into};
pub use policy::select_minor;
