//! Where a region's requests land (Bigtable's load-based splitting): a
//! small sample of the rows recently read or written, from which a region
//! whose request rate is too high is split at the row that halves its
//! requests rather than its bytes.
//!
//! Every [`SAMPLE_EVERY`]th row a request names is copied into a ring of
//! [`RING`] rows, so the cost per request is one atomic add, and one short
//! lock and copy per sampled row. The split point is the median of the
//! ring's rows: half the recent requests fall below it. Rows are kept
//! whole, so the point is always a real requested row.
//!
//! This module only samples and answers; the master decides when a region
//! is hot (`hbase_master`'s split chore, from request-count rates) and
//! splits it.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// One row in this many is sampled.
pub const SAMPLE_EVERY: u64 = 16;
/// Rows kept.
pub const RING: usize = 128;

/// The sample of one region's requested rows.
#[derive(Debug, Default)]
pub struct HotKeys {
    seen: AtomicU64,
    ring: Mutex<Ring>,
}

#[derive(Debug, Default)]
struct Ring {
    rows: Vec<Vec<u8>>,
    next: usize,
}

impl HotKeys {
    /// Notes a request for `row`.
    pub fn note(&self, row: &[u8]) {
        if self
            .seen
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(SAMPLE_EVERY)
        {
            self.keep(row);
        }
    }

    /// Notes a batch's rows: one atomic add for the whole batch.
    pub fn note_each<'a>(&self, rows: impl ExactSizeIterator<Item = &'a [u8]>) {
        let base = self.seen.fetch_add(rows.len() as u64, Ordering::Relaxed);
        for (i, row) in rows.enumerate() {
            if (base + i as u64).is_multiple_of(SAMPLE_EVERY) {
                self.keep(row);
            }
        }
    }

    fn keep(&self, row: &[u8]) {
        let mut r = self.ring.lock();
        if r.rows.len() < RING {
            r.rows.push(row.to_vec());
        } else {
            let at = r.next;
            if let Some(slot) = r.rows.get_mut(at) {
                slot.clear();
                slot.extend_from_slice(row);
            }
        }
        r.next = (r.next + 1) % RING;
    }

    /// The row that splits the sampled requests in half: strictly above
    /// `start_key` (a split point must be), `None` while the sample is
    /// too small (under a quarter of the ring) or a single row takes the
    /// lower half (a hot row cannot be split).
    pub fn split_point(&self, start_key: &[u8]) -> Option<Vec<u8>> {
        let mut rows = self.ring.lock().rows.clone();
        if rows.len() < RING / 4 {
            return None;
        }
        rows.sort_unstable();
        let median = rows.get(rows.len() / 2)?.clone();
        let first = rows.first()?;
        (median.as_slice() > start_key && *first != median).then_some(median)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_sampled_rows_halves_the_requests() {
        let h = HotKeys::default();
        assert_eq!(h.split_point(b""), None, "nothing sampled yet");
        // Requests spread over rows 000..999, one each, several rounds,
        // singly and in batches.
        for round in 0..4 {
            let rows: Vec<String> = (0..1000u32).map(|i| format!("{i:03}")).collect();
            if round % 2 == 0 {
                rows.iter().for_each(|r| h.note(r.as_bytes()));
            } else {
                h.note_each(rows.iter().map(|r| r.as_bytes()));
            }
        }
        let p = h.split_point(b"").unwrap();
        let n: u32 = String::from_utf8(p).unwrap().parse().unwrap();
        assert!((350..650).contains(&n), "median {n}");
        // Never the start key itself, nor below it.
        assert_eq!(h.split_point(b"999"), None);
    }

    #[test]
    fn a_single_hot_row_is_no_split_point() {
        let h = HotKeys::default();
        for i in 0..(RING as u64 * SAMPLE_EVERY * 2) {
            let row: &[u8] = if i % 10 == 0 { b"other" } else { b"hot" };
            h.note(row);
        }
        assert_eq!(h.split_point(b""), None);
    }
}
