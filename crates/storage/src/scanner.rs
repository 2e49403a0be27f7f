//! Reading a store: merging its sources and deciding what a reader sees.
//!
//! - [`merge`]: [`MergingIterator`] merges any number of sorted sources
//!   (memstores, store files) into one stream in internal order.
//! - [`matcher`]: [`StoreScanner`] walks one store's merged stream row by row
//!   and applies HBase's rules — delete markers, VERSIONS, MIN_VERSIONS,
//!   TTL, time range, column selection — yielding visible cells.
//!
//! This module never chooses sources (the region does, at a consistent
//! read point) and never writes.

pub mod matcher;
pub mod merge;

pub use matcher::{FamilyQuery, StoreScanner};
pub use merge::MergingIterator;
