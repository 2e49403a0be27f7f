//! HBase's visibility rules for one store, applied row by row.
//!
//! Within a row and family the merged stream arrives in cell order, so
//! every delete marker is seen before the puts it can mask:
//! - `DeleteFamily` markers carry an empty qualifier, which sorts before
//!   every other qualifier, and newer markers come first;
//! - within a column, timestamps descend and, at equal timestamps, delete
//!   types (higher codes) precede `Put`;
//! - identical keys (same cell written twice) arrive newest write first:
//!   only the first counts.
//!
//! A put is visible when no marker masks it, it lies in the query's time
//! range, it has not expired (TTL) unless MIN_VERSIONS keeps it, and fewer
//! than `max_versions` newer visible versions of its column were returned.

use crate::error::Result;
use crate::iter::CellIterator;
use crate::scanner::merge::MergingIterator;
use bytes::Bytes;
use ferrobase_types::key::{self, KeyRef};
use ferrobase_types::{Cell, CellType};
use std::collections::BTreeSet;

/// What a reader asks of one family.
#[derive(Clone, Debug)]
pub struct FamilyQuery {
    pub family: Bytes,
    /// `None` reads every qualifier.
    pub qualifiers: Option<BTreeSet<Bytes>>,
    /// Already capped at the family's VERSIONS.
    pub max_versions: u32,
    pub min_versions: u32,
    /// `[min, max)` timestamps.
    pub time_range: (u64, u64),
    /// Puts older than this timestamp have expired (`now - TTL`); 0: no TTL.
    pub ttl_cutoff: u64,
}

/// Walks one store's merged stream; see the module docs.
pub struct StoreScanner {
    iter: MergingIterator,
    query: FamilyQuery,
    prev_key: Vec<u8>,
    /// Sizes of the last row read, to allocate the next one in one go.
    last_arena: usize,
    last_found: usize,
}

#[derive(Default)]
struct ColumnState {
    qualifier: Vec<u8>,
    started: bool,
    delete_column_ts: Option<u64>,
    version_deletes: Vec<u64>,
    returned: u32,
    puts_seen: u32,
}

impl ColumnState {
    /// Starts a new column, reusing the buffers (no allocation per column).
    fn reset(&mut self, qualifier: &[u8]) {
        self.qualifier.clear();
        self.qualifier.extend_from_slice(qualifier);
        self.started = true;
        self.delete_column_ts = None;
        self.version_deletes.clear();
        self.returned = 0;
        self.puts_seen = 0;
    }
}

impl StoreScanner {
    /// A scanner over `iter`, which the caller has not positioned yet.
    pub fn new(iter: MergingIterator, query: FamilyQuery) -> StoreScanner {
        StoreScanner {
            iter,
            query,
            prev_key: Vec::new(),
            last_arena: 0,
            last_found: 0,
        }
    }

    /// Positions at the first cell of `row` or later.
    pub fn seek_row(&mut self, row: &[u8]) -> Result<()> {
        self.prev_key.clear();
        self.iter.seek(&key::first_on_row(row))
    }

    /// The row of the next unread cell, if any.
    pub fn peek_row(&self) -> Option<&[u8]> {
        if self.iter.valid() {
            key::row_of(self.iter.key())
        } else {
            None
        }
    }

    /// Reads every entry of `row` (which must be [`peek_row`](Self::peek_row)
    /// or absent) and appends the visible cells to `out`.
    ///
    /// The qualifiers and values of the row's cells share one allocation.
    pub fn read_row(&mut self, row: &Bytes, out: &mut Vec<Cell>) -> Result<()> {
        let q = &self.query;
        let mut arena: Vec<u8> = Vec::with_capacity(self.last_arena + self.last_arena / 4);
        // (qualifier start, value start, value end, timestamp) in `arena`.
        let mut found: Vec<(usize, usize, usize, u64)> = Vec::with_capacity(self.last_found + 2);
        let mut family_delete_ts: Option<u64> = None;
        let mut family_version_deletes: Vec<u64> = Vec::new();
        let mut col = ColumnState::default();
        while self.iter.valid() {
            let raw = self.iter.key();
            let Some(k) = KeyRef::parse(raw) else {
                // Decoders validate keys; an unparseable one is skipped
                // rather than trusted.
                self.iter.next()?;
                continue;
            };
            if k.row != &row[..] {
                break;
            }
            if raw == self.prev_key.as_slice() {
                // Same cell written again earlier: the newer write won.
                self.iter.next()?;
                continue;
            }
            self.prev_key.clear();
            self.prev_key.extend_from_slice(raw);
            let Some(cell_type) = k.cell_type() else {
                self.iter.next()?;
                continue;
            };
            match cell_type {
                CellType::DeleteFamily => {
                    family_delete_ts =
                        Some(family_delete_ts.map_or(k.timestamp, |d| d.max(k.timestamp)));
                }
                CellType::DeleteFamilyVersion => family_version_deletes.push(k.timestamp),
                _ => {
                    if !col.started || col.qualifier != k.qualifier {
                        col.reset(k.qualifier);
                    }
                    match cell_type {
                        CellType::DeleteColumn => {
                            col.delete_column_ts = Some(
                                col.delete_column_ts
                                    .map_or(k.timestamp, |d| d.max(k.timestamp)),
                            );
                        }
                        CellType::Delete => col.version_deletes.push(k.timestamp),
                        _ => {
                            let masked = family_delete_ts.is_some_and(|d| k.timestamp <= d)
                                || family_version_deletes.contains(&k.timestamp)
                                || col.delete_column_ts.is_some_and(|d| k.timestamp <= d)
                                || col.version_deletes.contains(&k.timestamp);
                            if !masked {
                                col.puts_seen += 1;
                                if visible(q, &k, &col) {
                                    col.returned += 1;
                                    let qs = arena.len();
                                    arena.extend_from_slice(k.qualifier);
                                    let vs = arena.len();
                                    arena.extend_from_slice(self.iter.value());
                                    found.push((qs, vs, arena.len(), k.timestamp));
                                }
                            }
                        }
                    }
                }
            }
            self.iter.next()?;
        }
        self.last_arena = arena.len();
        self.last_found = found.len();
        let arena = Bytes::from(arena);
        out.extend(found.into_iter().map(|(qs, vs, ve, ts)| Cell {
            row: row.clone(),
            family: q.family.clone(),
            qualifier: arena.slice(qs..vs),
            timestamp: ts,
            cell_type: CellType::Put,
            value: arena.slice(vs..ve),
        }));
        Ok(())
    }
}

fn visible(q: &FamilyQuery, k: &KeyRef<'_>, col: &ColumnState) -> bool {
    if k.timestamp < q.time_range.0 || k.timestamp >= q.time_range.1 {
        return false;
    }
    if let Some(wanted) = &q.qualifiers
        && !wanted.contains(k.qualifier)
    {
        return false;
    }
    if q.ttl_cutoff > 0 && k.timestamp < q.ttl_cutoff && col.puts_seen > q.min_versions {
        return false;
    }
    col.returned < q.max_versions
}
