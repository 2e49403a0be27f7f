//! What the fuzz targets share: an in-memory storage root ([`mem`]),
//! builders and readers of store files ([`storefile`]) and WAL segments
//! ([`wal`]) that put fuzzed payloads behind valid checksums, and
//! `arbitrary` cells for the round-trip targets ([`cells`]).
//!
//! Every target uses the crates' public API only. docs/reliability.md lists
//! the targets; scripts/fuzz.sh builds and runs them.

pub mod cells;
pub mod mem;
pub mod storefile;
pub mod thrift;
pub mod wal;
