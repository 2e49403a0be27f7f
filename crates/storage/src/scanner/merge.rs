//! A k-way merge of sorted cursors.
//!
//! Sources are few (a memstore or two plus a store's files, bounded by
//! `hbase.hstore.blockingStoreFiles`), so the smallest source is found by a
//! linear pass over the valid ones instead of a heap: no key copies, and
//! faster than a heap below ~20 sources.
//!
//! The pass also remembers the *runner-up*, the smallest of the other
//! sources. Only the current source moves on `next`, so the others' minimum
//! is unchanged: while the current source stays below the runner-up (a run
//! of cells from one file, such as the 53 cells of one wide row), `next`
//! costs one comparison instead of a pass. Inside a row it often costs
//! none: when the current source's row is below the runner-up's and the
//! source says its next entry kept that row ([`CellIterator::row_kept`],
//! which a row-run block knows for free), the next entry is below the
//! runner-up too. Between rows one comparison of rows usually decides.

use crate::error::Result;
use crate::iter::{CellIterator, compare_entries};
use crate::storefile::{RowRunCopy, StoreFileWriter};
use ferrobase_types::key;
use std::cmp::Ordering;

/// See the module docs.
pub struct MergingIterator {
    sources: Vec<Box<dyn CellIterator>>,
    current: Option<usize>,
    /// The smallest valid source other than `current` (module docs).
    runner_up: Option<usize>,
    /// The current source's row is below the runner-up's row.
    row_below_runner_up: bool,
    /// The last `next` stayed on the same source.
    kept: bool,
}

impl MergingIterator {
    /// Merges `sources`; order among them only matters for exact
    /// `(key, seq)` ties, where the earlier source wins.
    pub fn new(sources: Vec<Box<dyn CellIterator>>) -> MergingIterator {
        MergingIterator {
            sources,
            current: None,
            runner_up: None,
            row_below_runner_up: false,
            kept: false,
        }
    }

    /// Number of sources merged.
    pub fn source_count(&self) -> usize {
        self.sources.len()
    }

    /// True when source `a` comes before source `b`: smaller `(key, seq)`,
    /// or an exact tie and the earlier source.
    fn before(&self, a: usize, b: usize) -> bool {
        match (self.sources.get(a), self.sources.get(b)) {
            (Some(x), Some(y)) => match compare_entries(x.key(), x.seq(), y.key(), y.seq()) {
                Ordering::Less => true,
                Ordering::Equal => a < b,
                Ordering::Greater => false,
            },
            _ => false,
        }
    }

    /// Whether source `a` comes before source `b`, and whether `a`'s row
    /// is below `b`'s: rows first (one byte comparison decides most
    /// steps between rows), whole entries only on the same row.
    fn before_by_row(&self, a: usize, b: usize) -> (bool, bool) {
        let rows = self
            .sources
            .get(a)
            .zip(self.sources.get(b))
            .and_then(|(x, y)| key::row_of(x.key()).zip(key::row_of(y.key())));
        match rows.map(|(x, y)| x.cmp(y)) {
            Some(Ordering::Less) => (true, true),
            Some(Ordering::Greater) => (false, false),
            _ => (self.before(a, b), false),
        }
    }

    /// A full pass: the smallest valid source and the runner-up.
    fn pick(&mut self) {
        self.kept = false;
        self.row_below_runner_up = false;
        if let [only] = self.sources.as_slice() {
            self.current = only.valid().then_some(0);
            self.runner_up = None;
            return;
        }
        let (mut best, mut second): (Option<usize>, Option<usize>) = (None, None);
        for i in 0..self.sources.len() {
            if !self.sources.get(i).is_some_and(|s| s.valid()) {
                continue;
            }
            match best {
                None => best = Some(i),
                Some(b) if self.before(i, b) => {
                    second = best;
                    best = Some(i);
                }
                Some(_) => {
                    if second.is_none_or(|s| self.before(i, s)) {
                        second = Some(i);
                    }
                }
            }
        }
        self.current = best;
        self.runner_up = second;
        if let (Some(b), Some(s)) = (best, second) {
            self.row_below_runner_up = self.before_by_row(b, s).1;
        }
    }

    /// After the current source moved: keep it while it still comes
    /// before the runner-up, else a full pass.
    fn repick(&mut self) {
        let Some(c) = self.current else {
            return;
        };
        let Some(source) = self.sources.get(c).filter(|s| s.valid()) else {
            return self.pick();
        };
        let Some(r) = self.runner_up else {
            self.kept = true;
            return;
        };
        if self.row_below_runner_up && source.row_kept() {
            self.kept = true;
            return;
        }
        match self.before_by_row(c, r) {
            (true, row_below) => {
                self.kept = true;
                self.row_below_runner_up = row_below;
            }
            (false, _) => self.pick(),
        }
    }

    /// True when no source but the current one holds the current row.
    pub fn row_alone(&self) -> bool {
        self.current.is_some() && (self.runner_up.is_none() || self.row_below_runner_up)
    }

    fn cur(&self) -> Option<&dyn CellIterator> {
        self.current
            .and_then(|i| self.sources.get(i))
            .map(|b| b.as_ref())
    }
}

impl CellIterator for MergingIterator {
    fn seek(&mut self, key: &[u8]) -> Result<()> {
        for s in &mut self.sources {
            s.seek(key)?;
        }
        self.pick();
        Ok(())
    }

    fn seek_to_first(&mut self) -> Result<()> {
        for s in &mut self.sources {
            s.seek_to_first()?;
        }
        self.pick();
        Ok(())
    }

    fn valid(&self) -> bool {
        self.current.is_some()
    }

    fn key(&self) -> &[u8] {
        self.cur().map(|c| c.key()).unwrap_or(&[])
    }

    fn seq(&self) -> u64 {
        self.cur().map(|c| c.seq()).unwrap_or(0)
    }

    fn value(&self) -> &[u8] {
        self.cur().map(|c| c.value()).unwrap_or(&[])
    }

    fn next(&mut self) -> Result<()> {
        if let Some(s) = self.current.and_then(|i| self.sources.get_mut(i)) {
            s.next()?;
        }
        self.repick();
        Ok(())
    }

    fn row_kept(&self) -> bool {
        self.kept && self.cur().is_some_and(|c| c.row_kept())
    }

    /// Copies only while no other source has the current row (it is below
    /// the runner-up's row): the copied entries then come next in the
    /// merged order too, and no other source holds a cell that could
    /// supersede them.
    fn next_copying(&mut self, writer: &mut StoreFileWriter, min_ts: u64) -> Result<RowRunCopy> {
        if !self.row_alone() {
            self.next()?;
            return Ok(RowRunCopy::default());
        }
        let copied = match self.current.and_then(|i| self.sources.get_mut(i)) {
            Some(s) => s.next_copying(writer, min_ts)?,
            None => RowRunCopy::default(),
        };
        self.repick();
        Ok(copied)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::{CellType, key};
    use proptest::prelude::*;

    /// A sorted in-memory source. It tells when `next` kept the row, as
    /// a store file's row-run blocks do (every other step, so that the
    /// merge also meets sources that do not know).
    struct VecSource {
        entries: Vec<(Vec<u8>, u64, Vec<u8>)>,
        pos: usize,
        moved: bool,
    }

    impl CellIterator for VecSource {
        fn seek(&mut self, k: &[u8]) -> Result<()> {
            self.pos = self
                .entries
                .iter()
                .position(|(e, _, _)| key::compare(e, k) != Ordering::Less)
                .unwrap_or(self.entries.len());
            self.moved = false;
            Ok(())
        }
        fn seek_to_first(&mut self) -> Result<()> {
            self.pos = 0;
            self.moved = false;
            Ok(())
        }
        fn valid(&self) -> bool {
            self.pos < self.entries.len()
        }
        fn key(&self) -> &[u8] {
            &self.entries[self.pos].0
        }
        fn seq(&self) -> u64 {
            self.entries[self.pos].1
        }
        fn value(&self) -> &[u8] {
            &self.entries[self.pos].2
        }
        fn next(&mut self) -> Result<()> {
            self.pos += 1;
            self.moved = true;
            Ok(())
        }
        fn row_kept(&self) -> bool {
            let row = |i: usize| self.entries.get(i).and_then(|e| key::row_of(&e.0));
            self.moved
                && self.pos.is_multiple_of(2)
                && self.pos > 0
                && row(self.pos).is_some()
                && row(self.pos) == row(self.pos - 1)
        }
    }

    fn cell_key(row: u8, q: u8, ts: u64) -> Vec<u8> {
        key::encode(&[b'r', row], b"f", &[q], ts, CellType::Put)
    }

    proptest! {
        /// The merge yields every entry of every source in (key, seq) order,
        /// an exact tie from the earlier source first: what a full pass per
        /// step gives, however the runner-up shortcut skips passes. Rows
        /// and qualifiers are drawn from few values so that runs from one
        /// source, interleavings and exact ties all happen.
        #[test]
        fn merge_matches_a_sorted_concatenation(
            sources in prop::collection::vec(
                prop::collection::vec((0u8..6, 0u8..4, 0u64..3, 0u64..3), 0..40),
                1..6,
            ),
            seek_row in prop::option::of(0u8..6),
        ) {
            let mut expected = Vec::new();
            let mut its: Vec<Box<dyn CellIterator>> = Vec::new();
            for (i, cells) in sources.iter().enumerate() {
                let mut entries: Vec<(Vec<u8>, u64, Vec<u8>)> = cells
                    .iter()
                    .map(|&(r, q, ts, seq)| (cell_key(r, q, ts), seq, vec![i as u8, r, q]))
                    .collect();
                entries.sort_by(|a, b| compare_entries(&a.0, a.1, &b.0, b.1));
                for e in &entries {
                    expected.push((e.0.clone(), e.1, i, e.2.clone()));
                }
                its.push(Box::new(VecSource {
                    entries,
                    pos: 0,
                    moved: false,
                }));
            }
            // Stable: equal (key, seq) keep source order, the earlier first.
            expected.sort_by(|a, b| compare_entries(&a.0, a.1, &b.0, b.1).then(a.2.cmp(&b.2)));
            let mut m = MergingIterator::new(its);
            match seek_row {
                Some(r) => {
                    let from = key::first_on_row(&[b'r', r]);
                    m.seek(&from).unwrap();
                    expected.retain(|e| key::compare(&e.0, &from) != Ordering::Less);
                }
                None => m.seek_to_first().unwrap(),
            }
            let mut got: Vec<(Vec<u8>, u64, Vec<u8>)> = Vec::new();
            while m.valid() {
                // The merge's own hint holds whenever it is given.
                if m.row_kept() {
                    let prev = got.last().map(|g| g.0.as_slice()).unwrap_or_default();
                    prop_assert_eq!(key::row_of(prev), key::row_of(m.key()));
                }
                got.push((m.key().to_vec(), m.seq(), m.value().to_vec()));
                m.next().unwrap();
            }
            let want: Vec<(Vec<u8>, u64, Vec<u8>)> =
                expected.into_iter().map(|(k, s, _, v)| (k, s, v)).collect();
            prop_assert_eq!(got, want);
        }
    }
}
