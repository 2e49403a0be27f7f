//! The write path: validate, wait out backpressure, take a sequence id,
//! append to the WAL, insert into the memstore, advance the read point.

use super::{Region, Store};
use crate::error::{Result, StorageError};
use crate::memstore::MemStoreSet;
use crate::wal::{WalEdit, WalFamily};
use bytes::Bytes;
use ferrobase_types::cell_run::cell_at;
use ferrobase_types::mutation::check_cell;
use ferrobase_types::{CellType, Durability, LATEST_TIMESTAMP, RowMutation, key};
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
        // Gets of these rows stop using the row cache until they are
        // visible (the guard ends at return, after `wait_visible`).
        let _row_cache = self
            .row_cache
            .as_ref()
            .map(|rc| rc.writing(edits.iter().map(|e| &e.row[..])));
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
        // Acknowledged only once readable (see `mvcc`).
        self.mvcc.wait_visible(seq);
        self.write_requests
            .fetch_add(count as u64, Ordering::Relaxed);
        self.hot_keys.note_each(edits.iter().map(|e| &e.row[..]));
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
        let nonce = m.nonce;
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
            nonce,
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

    /// Backpressure (docs/architecture.md, design rules 2–4): waits while
    /// this region's memstore is above `block.multiplier × flush.size` or
    /// the process is above its global memstore limit, asking for flushes;
    /// fails with "region too busy" after `hbase.hstore.blockingWaitTime`,
    /// or at once with the flush's I/O error when a flush fails meanwhile
    /// (a full disk: waiting cannot help, and the client learns why).
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
            if let Some(e) = self.flush_failure_since(start) {
                self.shared.stalls().add_blocked_time(start.elapsed());
                return Err(e);
            }
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

/// Inserts an edit's cells into `active`; returns the bytes added. Each
/// family's arena is the row followed by the family's cell run as it was
/// received (see `memstore::row`): one copy of the run, and the cells are
/// located in it instead of re-encoded one by one.
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
        // The run is copied whole into the arena, behind the row; the
        // cells are located in it, not re-encoded.
        let run = fam.cells.as_bytes();
        let at = edit.row.len();
        let mut arena = Vec::with_capacity(at + run.len());
        arena.extend_from_slice(&edit.row);
        arena.extend_from_slice(run);
        let (starts, (lo, hi)) =
            ordered_starts(run, fam.cells.len(), at, |ts| edit.timestamp_of(ts));
        added += memstore.insert_row(
            &edit.row,
            edit.seq,
            (Bytes::from(arena), edit.now),
            &starts,
            (lo, hi),
            true,
        );
    }
    added
}

/// Where the `n` cells of `run` start in an arena that holds `run` from
/// offset `at`, in internal order (qualifier, then newest timestamp and
/// highest type first), keeping of identical keys only the mutation's last
/// cell; and the cells' timestamp range. `ts_of` resolves "latest". The
/// memstore then takes the cells as they are instead of comparing them
/// again.
///
/// A 53-column row arrives as `q0 q1 … q9 q10`, which is not byte order.
/// Rows of up to [`MAX_PACKED`] cells sort one `u64` a cell: the
/// qualifier's first seven bytes, then the cell's index (the standard
/// library sorts primitive integers several times faster than structs
/// under a closure). A cell alone with its prefix needs nothing more: no
/// other cell can have its key. Only cells whose prefixes tie (qualifiers
/// alike in their first seven bytes, or repeated) are parsed again and
/// compared in full. Rows sent in order skip the sort.
fn ordered_starts(
    run: &[u8],
    n: usize,
    at: usize,
    ts_of: impl Fn(u64) -> u64,
) -> (Vec<u32>, (u64, u64)) {
    let (mut lo, mut hi) = (u64::MAX, 0);
    let mut starts = Vec::with_capacity(n);
    if n > MAX_PACKED {
        // Too many for an 8-bit index: sort the parsed cells.
        let mut cells: Vec<Parsed<'_>> = Vec::with_capacity(n);
        let mut pos = 0;
        while cells.len() < n
            && let Some((c, next)) = cell_at(run, pos)
        {
            let p = parsed(c, at + pos, &ts_of);
            (lo, hi) = (lo.min(p.timestamp), hi.max(p.timestamp));
            cells.push(p);
            pos = next;
        }
        cells.sort_by(Parsed::order);
        push_last_of_each_key(&cells, &mut starts);
        return (starts, (lo, hi));
    }
    // Cell index → its offset in `run`; a run holds only checked bytes, so
    // every one of its `n` cells parses.
    let mut offsets: Vec<u32> = Vec::with_capacity(n);
    let mut packed: Vec<u64> = Vec::with_capacity(n);
    let mut pos = 0;
    while packed.len() < n
        && let Some((c, next)) = cell_at(run, pos)
    {
        packed.push(qualifier_prefix(c.qualifier) | packed.len() as u64);
        offsets.push(pos as u32);
        let ts = ts_of(c.timestamp);
        (lo, hi) = (lo.min(ts), hi.max(ts));
        pos = next;
    }
    if !packed.is_sorted() {
        packed.sort_unstable();
    }
    let offset = |k: u64| offsets.get((k & 0xff) as usize).map(|&o| o as usize);
    for group in packed.chunk_by(|a, b| a >> 8 == b >> 8) {
        if let [one] = group {
            if let Some(o) = offset(*one) {
                starts.push((at + o) as u32);
            }
            continue;
        }
        // In index order (the packed keys' low byte): a stable sort keeps
        // identical keys in the mutation's order.
        let mut tied: Vec<Parsed<'_>> = group
            .iter()
            .filter_map(|&k| {
                let o = offset(k)?;
                cell_at(run, o).map(|(c, _)| parsed(c, at + o, &ts_of))
            })
            .collect();
        tied.sort_by(Parsed::order);
        push_last_of_each_key(&tied, &mut starts);
    }
    (starts, (lo, hi))
}

/// A cell of a run being inserted: where it starts in the arena, and what
/// the sort compares.
#[derive(Clone, Copy, Debug)]
struct Parsed<'a> {
    start: u32,
    qualifier: &'a [u8],
    timestamp: u64,
    kind: u8,
}

impl Parsed<'_> {
    /// Internal order; identical keys compare equal (a stable sort then
    /// keeps them in the mutation's order).
    fn order(&self, other: &Parsed<'_>) -> std::cmp::Ordering {
        key::short_cmp(self.qualifier, other.qualifier)
            .then_with(|| other.timestamp.cmp(&self.timestamp))
            .then_with(|| other.kind.cmp(&self.kind))
    }
}

fn parsed<'a>(
    c: ferrobase_types::cell_run::RunCell<'a>,
    start: usize,
    ts_of: &impl Fn(u64) -> u64,
) -> Parsed<'a> {
    Parsed {
        start: start as u32,
        qualifier: c.qualifier,
        timestamp: ts_of(c.timestamp),
        kind: c.kind.code(),
    }
}

/// Appends the starts of `cells` (in internal order), skipping every cell
/// whose key the next one repeats: of identical keys the last written wins.
fn push_last_of_each_key(cells: &[Parsed<'_>], starts: &mut Vec<u32>) {
    let mut iter = cells.iter().peekable();
    while let Some(c) = iter.next() {
        if iter.peek().is_some_and(|n| c.order(n).is_eq()) {
            continue;
        }
        starts.push(c.start);
    }
}

/// The first seven bytes of a qualifier as a big-endian number, zero
/// padded, shifted left by eight bits: room for a cell's index below it,
/// so one `u64` sorts by qualifier prefix, then position.
#[inline]
fn qualifier_prefix(q: &[u8]) -> u64 {
    if let Some(head) = q.first_chunk::<8>() {
        return u64::from_be_bytes(*head) & !0xff;
    }
    // Shorter than eight bytes (most qualifiers): no copy call.
    let mut v = 0u64;
    for &b in q {
        v = (v << 8) | u64::from(b);
    }
    v.checked_shl(8 * (8 - q.len() as u32)).unwrap_or(0)
}

/// Rows of up to this many cells sort packed integers (an 8-bit index).
const MAX_PACKED: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::CellRun;
    use rand::{Rng, SeedableRng};

    /// `ordered_starts` against the plain stable sort and last-write-wins
    /// deduplication it replaces, on qualifiers built to tie on their first
    /// seven or eight bytes, to be prefixes of each other ("q" and "q\0")
    /// and to repeat with the same or other timestamps ("latest" among
    /// them) and types; rows of up to 300 cells (past the 8-bit index),
    /// some sent already in order.
    #[test]
    fn ordered_starts_is_the_stable_sort_keeping_the_last_write() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let pool: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"q".to_vec(),
            b"q\0".to_vec(),
            b"q1".to_vec(),
            b"q10".to_vec(),
            b"q2".to_vec(),
            b"abcdefg".to_vec(),
            b"abcdefg\0".to_vec(),
            b"abcdefgh".to_vec(),
            b"abcdefgh\0".to_vec(),
            b"abcdefghA".to_vec(),
            b"abcdefghB-longer-than-sixteen-bytes".to_vec(),
            vec![0xff; 9],
        ];
        let now = 7;
        let ts_of = |ts: u64| if ts == LATEST_TIMESTAMP { now } else { ts };
        // (qualifier, timestamp, type, value) in internal order, only the
        // last of identical keys.
        let model = |cells: &[(Vec<u8>, u64, CellType, Vec<u8>)]| {
            let mut order: Vec<usize> = (0..cells.len()).collect();
            order.sort_by(|&a, &b| {
                let (x, y) = (&cells[a], &cells[b]);
                x.0.cmp(&y.0)
                    .then_with(|| ts_of(y.1).cmp(&ts_of(x.1)))
                    .then_with(|| y.2.code().cmp(&x.2.code()))
            });
            let same = |a: usize, b: usize| {
                let (x, y) = (&cells[a], &cells[b]);
                x.0 == y.0 && ts_of(x.1) == ts_of(y.1) && x.2 == y.2
            };
            let kept: Vec<usize> = (0..order.len())
                .filter(|&i| i + 1 == order.len() || !same(order[i], order[i + 1]))
                .map(|i| order[i])
                .collect();
            kept
        };
        for case in 0..300 {
            let n = if case % 10 == 0 {
                rng.random_range(200..300)
            } else {
                rng.random_range(0..40)
            };
            let mut cells: Vec<(Vec<u8>, u64, CellType, Vec<u8>)> = (0..n)
                .map(|i| {
                    let ts = match rng.random_range(0..4) {
                        0 => LATEST_TIMESTAMP,
                        t => t + 5,
                    };
                    let kind = if rng.random_bool(0.8) {
                        CellType::Put
                    } else {
                        CellType::Delete
                    };
                    let q = pool[rng.random_range(0..pool.len())].clone();
                    (q, ts, kind, format!("v{i}").into_bytes())
                })
                .collect();
            for sorted in [false, true] {
                if sorted {
                    // The same cells sent in order.
                    let order = model(&cells);
                    cells = order.iter().map(|&i| cells[i].clone()).collect();
                }
                let mut run = CellRun::new();
                for (q, ts, kind, v) in &cells {
                    run.push(q, *ts, *kind, v);
                }
                let at = 5;
                let mut offsets = Vec::new();
                let mut pos = 0;
                while let Some((_, next)) = cell_at(run.as_bytes(), pos) {
                    offsets.push((at + pos) as u32);
                    pos = next;
                }
                let expected: Vec<u32> = model(&cells).iter().map(|&i| offsets[i]).collect();
                let (starts, (lo, hi)) = ordered_starts(run.as_bytes(), run.len(), at, ts_of);
                assert_eq!(starts, expected, "case {case} sorted {sorted}");
                let stamps = cells.iter().map(|c| ts_of(c.1));
                assert_eq!(
                    (lo, hi),
                    (
                        stamps.clone().min().unwrap_or(u64::MAX),
                        stamps.max().unwrap_or(0)
                    ),
                    "case {case}"
                );
            }
        }
    }

    #[test]
    fn qualifier_prefix_orders_like_the_first_seven_bytes() {
        assert_eq!(qualifier_prefix(b""), 0);
        assert_eq!(qualifier_prefix(b"a"), 0x61 << 56);
        assert_eq!(qualifier_prefix(b"abcdefg"), qualifier_prefix(b"abcdefgh"));
        assert_eq!(qualifier_prefix(b"abcdefg"), 0x6162_6364_6566_6700);
        assert!(qualifier_prefix(b"q1") < qualifier_prefix(b"q10"));
        assert!(qualifier_prefix(b"q10") < qualifier_prefix(b"q2"));
        assert_eq!(qualifier_prefix(&[0xff; 20]) & 0xff, 0);
    }
}
