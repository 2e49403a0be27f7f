//! The write path: validate, wait out backpressure, take a sequence id,
//! append to the WAL, insert into the memstore, advance the read point.

use super::{Region, Store};
use crate::error::{Result, StorageError};
use crate::memstore::MemStoreSet;
use crate::wal::{WalEdit, WalFamily};
use bytes::Bytes;
use ferrobase_types::mutation::check_cell;
use ferrobase_types::{CellType, Durability, LATEST_TIMESTAMP, RowMutation, RunCell, key};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl Region {
    /// Applies one row mutation atomically.
    pub fn mutate(&self, mutation: RowMutation) -> Result<()> {
        self.mutate_owned(vec![mutation])
    }

    /// Applies several row mutations with one WAL append (one group-commit
    /// unit) and one sequence id: they become visible together.
    pub fn mutate_batch(&self, mutations: &[RowMutation]) -> Result<()> {
        self.mutate_owned(mutations.to_vec())
    }

    /// [`mutate_batch`](Self::mutate_batch) taking ownership, so cell values
    /// move into the WAL edit instead of being shared.
    pub fn mutate_owned(&self, mutations: Vec<RowMutation>) -> Result<()> {
        self.check_open()?;
        for m in &mutations {
            // Cells are checked in `build_edit`'s pass, before anything is
            // logged or applied.
            m.validate_row()?;
            if !self.info.contains_row(&m.row) {
                return Err(StorageError::WrongRegion {
                    region: self.info.name(),
                    row: ferrobase_types::binary::to_string_binary(&m.row),
                });
            }
            // A row's cells come grouped by family: look each group up once.
            for f in m.families() {
                self.store_index(&f.family)?;
            }
        }
        if mutations.is_empty() {
            return Ok(());
        }
        self.wait_for_memory()?;
        let now = super::now_ms();
        let table_default = self.table.durability;
        let durabilities: Vec<Durability> = mutations
            .iter()
            .map(|m| m.durability.resolve(table_default))
            .collect();
        let logged: Vec<bool> = durabilities
            .iter()
            .map(|d| *d != Durability::SkipWal)
            .collect();
        let wal_durability = durabilities
            .iter()
            .filter(|d| **d != Durability::SkipWal)
            .max()
            .copied();
        let count = mutations.len();
        let mut edits = Vec::with_capacity(count);
        for m in mutations {
            edits.push(self.build_edit(m, now)?);
        }

        let seq = self.mvcc.begin();
        for e in &mut edits {
            e.seq = seq;
        }
        if let Some(durability) = wal_durability {
            let appended = if logged.iter().all(|l| *l) {
                self.shared.wal().append(&edits, durability)
            } else {
                let some: Vec<WalEdit> = edits
                    .iter()
                    .zip(&logged)
                    .filter(|(_, l)| **l)
                    .map(|(e, _)| e.clone())
                    .collect();
                self.shared.wal().append(&some, durability)
            };
            if let Err(e) = appended {
                // Nothing was inserted: completing the id keeps the read
                // point moving without exposing anything.
                self.mvcc.complete(seq);
                return Err(e);
            }
        }
        // Rows in key order: consecutive skip-list searches then share
        // most of their path, which stays in cache (random rows cost a
        // cache miss per level). Stable, so a row repeated in the batch
        // keeps its order and the later cells still win.
        let mut order: Vec<u32> = (0..edits.len() as u32).collect();
        if edits.len() > 1 {
            order.sort_by(|&a, &b| edits[a as usize].row.cmp(&edits[b as usize].row));
        }
        let added = {
            let st = self.state.read();
            order
                .iter()
                .filter_map(|&i| edits.get(i as usize))
                .map(|e| insert_edit(&self.stores, &st.active, e))
                .sum::<u64>()
        };
        self.mvcc.complete(seq);
        self.write_requests
            .fetch_add(count as u64, Ordering::Relaxed);
        let size = self.memstore_size.fetch_add(added, Ordering::Relaxed) + added;
        self.shared.add_memstore(added);
        if size >= self.shared.settings().memstore_flush_size {
            self.request_flush();
        }
        Ok(())
    }

    /// Checks every cell and merges groups of one family. Cells saying
    /// `LATEST_TIMESTAMP` stay as sent, resolved to `now` downstream (see
    /// [`WalEdit::now`]), so a group moves into the edit as it is: a slice
    /// of the request, no copy. Only HBase's Delete of "the latest version"
    /// must be resolved here, by a read; its group is re-encoded once.
    fn build_edit(&self, m: RowMutation, now: u64) -> Result<WalEdit> {
        let max_cell = self.shared.settings().keyvalue_max_size;
        let (row, _, groups) = m.into_parts();
        let mut families: Vec<WalFamily> = Vec::new();
        for group in groups {
            if group.cells.is_empty() {
                continue;
            }
            // The run's summary, kept while it was parsed, answers the
            // checks for all its cells; only a run it flags is walked, to
            // name the cell at fault.
            let summary = group.cells.summary();
            let largest = row.len() + group.family.len() + summary.max_cell + key::KEY_OVERHEAD;
            if summary.bad_timestamp || (max_cell > 0 && largest > max_cell) {
                for c in &group.cells {
                    check_cell(
                        row.len(),
                        group.family.len(),
                        c.qualifier,
                        c.timestamp,
                        c.value,
                        max_cell,
                    )?;
                }
            }
            let delete_latest = summary.latest_delete;
            let cells = if delete_latest {
                let resolved = group.cells.map_timestamps(|c| -> Result<u64> {
                    Ok(match (c.timestamp, c.kind) {
                        (LATEST_TIMESTAMP, CellType::Delete) => self
                            .latest_timestamp(&row, &group.family, c.qualifier)?
                            .unwrap_or(now),
                        (LATEST_TIMESTAMP, _) => now,
                        (ts, _) => ts,
                    })
                })?;
                resolved.unwrap_or(group.cells)
            } else {
                group.cells
            };
            match families.iter_mut().find(|f| f.family == group.family) {
                Some(f) => f.cells.extend(&cells),
                None => families.push(WalFamily {
                    family: group.family,
                    cells,
                }),
            }
        }
        Ok(WalEdit {
            region_id: self.info.id,
            seq: 0,
            row,
            families,
            now,
        })
    }

    fn latest_timestamp(
        &self,
        row: &Bytes,
        family: &Bytes,
        qualifier: &[u8],
    ) -> Result<Option<u64>> {
        let mut get = super::Get::new(row.clone());
        get.add_column(family.clone(), Bytes::copy_from_slice(qualifier));
        Ok(self.get(&get)?.first().map(|c| c.timestamp))
    }

    /// Backpressure (DESIGN rules 2–4): waits while this region's memstore
    /// is above `block.multiplier × flush.size` or the process is above its
    /// global memstore limit, asking for flushes; fails with "region too
    /// busy" after `hbase.hstore.blockingWaitTime`.
    fn wait_for_memory(&self) -> Result<()> {
        let block_at = self.shared.settings().memstore_block_size();
        let over = |r: &Region| {
            if r.memstore_size() >= block_at {
                Some("memstore above hbase.hregion.memstore.block.multiplier × flush size")
            } else if r.shared.over_global_limit() {
                Some("process memstore above hbase.regionserver.global.memstore.size")
            } else {
                None
            }
        };
        let Some(mut reason) = over(self) else {
            return Ok(());
        };
        let start = Instant::now();
        let limit = Duration::from_millis(self.shared.settings().blocking_wait_time_ms);
        self.shared
            .stalls()
            .blocked_writes
            .fetch_add(1, Ordering::Relaxed);
        loop {
            if self.memstore_size() >= block_at {
                self.request_flush();
            } else {
                self.shared.request_global_flush();
            }
            let waited = start.elapsed();
            if waited >= limit {
                self.shared
                    .stalls()
                    .too_busy
                    .fetch_add(1, Ordering::Relaxed);
                self.shared.stalls().add_blocked_time(waited);
                return Err(StorageError::RegionTooBusy {
                    region: self.info.name(),
                    reason: reason.to_string(),
                    waited_ms: waited.as_millis() as u64,
                });
            }
            self.shared
                .wait_memory_freed((limit - waited).min(Duration::from_millis(50)));
            self.check_open()?;
            match over(self) {
                None => {
                    self.shared.stalls().add_blocked_time(start.elapsed());
                    return Ok(());
                }
                Some(r) => reason = r,
            }
        }
    }
}

/// Inserts an edit's cells into `active`; returns the bytes added. The
/// row, then the column keys and values of one family's cells, are copied
/// into one arena buffer (see `memstore::row`): one allocation per row and
/// family, and the row is stored once, not once per cell.
pub(crate) fn insert_edit(stores: &[Store], active: &MemStoreSet, edit: &WalEdit) -> u64 {
    let mut added = 0;
    for fam in &edit.families {
        let Some(idx) = stores.iter().position(|s| s.family_bytes == fam.family) else {
            // A family dropped since the edit was logged: nothing to keep.
            continue;
        };
        let Some(memstore) = active.stores.get(idx) else {
            continue;
        };
        // A run cell's bytes bound its qualifier and value; each column key
        // adds the family and the fixed key fields.
        let size = edit.row.len()
            + fam.cells.as_bytes().len()
            + fam.cells.len() * (key::KEY_OVERHEAD - 2 + fam.family.len());
        // Internal order (qualifier, then newest timestamp and highest type
        // first); of identical keys the mutation's last cell is last, and
        // only it is kept. The memstore then takes the cells as they are
        // instead of parsing their keys back to sort them.
        let mut cells: Vec<RunCell<'_>> = Vec::with_capacity(fam.cells.len());
        for c in &fam.cells {
            cells.push(RunCell {
                timestamp: edit.timestamp_of(c.timestamp),
                ..c
            });
        }
        let order = internal_order(&cells);
        let mut arena = Vec::with_capacity(size);
        arena.extend_from_slice(&edit.row);
        let mut slots = Vec::with_capacity(order.len());
        let (mut lo, mut hi) = (u64::MAX, 0);
        let mut iter = order
            .iter()
            .filter_map(|&(p, i)| Some((p, cells.get(i as usize)?)));
        let mut current = iter.next();
        while let Some((prefix, c)) = current {
            let next = iter.next();
            current = next;
            if next.is_some_and(|(np, n)| np == prefix && same_key(c, n)) {
                continue;
            }
            let start = arena.len();
            key::encode_column_into(&mut arena, &fam.family, c.qualifier, c.timestamp, c.kind);
            let key_len = arena.len() - start;
            arena.extend_from_slice(c.value);
            slots.push((start as u32, key_len as u32, c.value.len() as u32));
            lo = lo.min(c.timestamp);
            hi = hi.max(c.timestamp);
        }
        added += memstore.insert_row(
            &edit.row,
            edit.seq,
            Bytes::from(arena),
            &slots,
            (lo, hi),
            true,
        );
    }
    added
}

/// The first eight bytes of a qualifier as a big-endian number, zero
/// padded: comparing two of these orders most qualifiers without touching
/// their bytes again.
fn qualifier_prefix(q: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = q.len().min(8);
    if let (Some(dst), Some(src)) = (b.get_mut(..n), q.get(..n)) {
        dst.copy_from_slice(src);
    }
    u64::from_be_bytes(b)
}

fn same_key(a: &RunCell<'_>, b: &RunCell<'_>) -> bool {
    a.qualifier == b.qualifier && a.timestamp == b.timestamp && a.kind == b.kind
}

/// `cells` in internal order as `(qualifier prefix, index)` pairs; cells
/// with identical keys keep their order in the mutation. A 53-column row
/// arrives as `q0 q1 … q9 q10`, which is not byte order: sorting integers
/// that pack a qualifier's first eight bytes with the cell's index costs a
/// fraction of sorting the cells by comparing their qualifiers.
fn internal_order(cells: &[RunCell<'_>]) -> Vec<(u64, u32)> {
    // Prefix and index packed in one integer: the standard library sorts
    // primitive integers several times faster than tuples under a closure.
    let mut packed: Vec<u128> = Vec::with_capacity(cells.len());
    packed.extend(
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| (u128::from(qualifier_prefix(c.qualifier)) << 64) | i as u128),
    );
    packed.sort_unstable();
    let mut order: Vec<(u64, u32)> = Vec::with_capacity(packed.len());
    order.extend(packed.iter().map(|&k| ((k >> 64) as u64, k as u32)));
    // Equal prefixes (qualifiers alike in their first eight bytes, or
    // repeated): order each such group by the full comparison.
    let full = |a: u32, b: u32| match (cells.get(a as usize), cells.get(b as usize)) {
        (Some(x), Some(y)) => key::short_cmp(x.qualifier, y.qualifier)
            .then_with(|| y.timestamp.cmp(&x.timestamp))
            .then_with(|| y.kind.code().cmp(&x.kind.code()))
            .then_with(|| a.cmp(&b)),
        _ => a.cmp(&b),
    };
    for group in order.chunk_by_mut(|a, b| a.0 == b.0) {
        if group.len() > 1 {
            group.sort_unstable_by(|a, b| full(a.1, b.1));
        }
    }
    order
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The pair sort against the plain stable sort it replaces, on
    /// qualifiers built to tie on their first eight bytes, to be prefixes
    /// of each other ("q" and "q\0") and to repeat with other timestamps
    /// and types.
    #[test]
    fn internal_order_is_the_stable_sort_of_cells() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let pool: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"q".to_vec(),
            b"q\0".to_vec(),
            b"q1".to_vec(),
            b"q10".to_vec(),
            b"q2".to_vec(),
            b"abcdefgh".to_vec(),
            b"abcdefgh\0".to_vec(),
            b"abcdefghA".to_vec(),
            b"abcdefghB-longer-than-sixteen-bytes".to_vec(),
            vec![0xff; 9],
        ];
        for _ in 0..300 {
            let n = rng.random_range(0..40);
            let cells: Vec<RunCell<'_>> = (0..n)
                .map(|_| RunCell {
                    qualifier: &pool[rng.random_range(0..pool.len())],
                    timestamp: rng.random_range(0..3),
                    kind: if rng.random_bool(0.8) {
                        CellType::Put
                    } else {
                        CellType::Delete
                    },
                    value: b"",
                })
                .collect();
            let mut expected: Vec<u32> = (0..n as u32).collect();
            expected.sort_by(|&a, &b| {
                let (x, y) = (&cells[a as usize], &cells[b as usize]);
                x.qualifier
                    .cmp(y.qualifier)
                    .then_with(|| y.timestamp.cmp(&x.timestamp))
                    .then_with(|| y.kind.code().cmp(&x.kind.code()))
            });
            let got: Vec<u32> = internal_order(&cells).iter().map(|p| p.1).collect();
            assert_eq!(got, expected, "cells {cells:?}");
        }
    }
}
