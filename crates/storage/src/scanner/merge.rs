//! A k-way merge of sorted cursors.
//!
//! Sources are few (a memstore or two plus a store's files, bounded by
//! `hbase.hstore.blockingStoreFiles`), so the smallest source is found by a
//! linear pass over the valid ones instead of a heap: no key copies, and
//! faster than a heap below ~20 sources.

use crate::error::Result;
use crate::iter::{CellIterator, compare_entries};
use std::cmp::Ordering;

/// See the module docs.
pub struct MergingIterator {
    sources: Vec<Box<dyn CellIterator>>,
    current: Option<usize>,
}

impl MergingIterator {
    /// Merges `sources`; order among them only matters for exact
    /// `(key, seq)` ties, where the earlier source wins.
    pub fn new(sources: Vec<Box<dyn CellIterator>>) -> MergingIterator {
        MergingIterator {
            sources,
            current: None,
        }
    }

    /// Number of sources merged.
    pub fn source_count(&self) -> usize {
        self.sources.len()
    }

    fn pick(&mut self) {
        if let [only] = self.sources.as_slice() {
            self.current = only.valid().then_some(0);
            return;
        }
        let mut best: Option<usize> = None;
        for (i, s) in self.sources.iter().enumerate() {
            if !s.valid() {
                continue;
            }
            best = match best {
                None => Some(i),
                Some(b) => {
                    let bs = &self.sources[b];
                    if compare_entries(s.key(), s.seq(), bs.key(), bs.seq()) == Ordering::Less {
                        Some(i)
                    } else {
                        Some(b)
                    }
                }
            };
        }
        self.current = best;
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
        self.pick();
        Ok(())
    }
}
