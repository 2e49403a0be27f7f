//! A cursor over a memstore at a read point.
//!
//! The skip list's entry handles borrow the map, so a cursor that owns an
//! `Arc<MemStore>` cannot keep one. Instead it copies one row's visible
//! cells at a time (cheap `Bytes` clones, under the row's read lock) and
//! finds the next row with one search from the last row it read.

use super::{MemKey, MemStore, RowKey};
use crate::error::Result;
use crate::iter::CellIterator;
use bytes::Bytes;
use ferrobase_types::key;
use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

/// See the module docs.
pub struct MemStoreScanner {
    store: Arc<MemStore>,
    read_point: u64,
    stop_row: Option<Bytes>,
    buf: VecDeque<(MemKey, Bytes)>,
    /// The last row copied; the next fill starts after it. `None`: exhausted.
    last_row: Option<Bytes>,
}

impl MemStoreScanner {
    pub(super) fn new(
        store: Arc<MemStore>,
        read_point: u64,
        stop_row: Option<Bytes>,
    ) -> MemStoreScanner {
        MemStoreScanner {
            store,
            read_point,
            stop_row,
            buf: VecDeque::new(),
            last_row: None,
        }
    }

    /// Copies rows starting at `from` until one has a visible cell ≥ `start`.
    fn fill(&mut self, mut from: Bound<Bytes>, start: Option<MemKey>) {
        self.buf.clear();
        self.last_row = None;
        let mut start = start;
        loop {
            let from_key = from.map(RowKey::new);
            let Some(entry) = self
                .store
                .row_map()
                .range((from_key, Bound::Unbounded))
                .next()
            else {
                return;
            };
            let row = entry.key().row();
            if let Some(stop) = &self.stop_row
                && row >= stop
            {
                return;
            }
            entry.value().read().collect(
                row,
                self.store.family(),
                start.as_ref(),
                self.read_point,
                &mut self.buf,
            );
            self.last_row = Some(row.clone());
            if !self.buf.is_empty() {
                return;
            }
            start = None;
            from = Bound::Excluded(row.clone());
        }
    }

    fn refill_if_needed(&mut self) {
        if self.buf.is_empty()
            && let Some(row) = self.last_row.take()
        {
            self.fill(Bound::Excluded(row), None);
        }
    }
}

impl CellIterator for MemStoreScanner {
    fn seek(&mut self, seek_key: &[u8]) -> Result<()> {
        let row = Bytes::copy_from_slice(key::row_of(seek_key).unwrap_or_default());
        let start = MemKey {
            key: Bytes::copy_from_slice(seek_key),
            seq: u64::MAX,
        };
        self.fill(Bound::Included(row), Some(start));
        Ok(())
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.fill(Bound::Unbounded, None);
        Ok(())
    }

    fn valid(&self) -> bool {
        !self.buf.is_empty()
    }

    fn key(&self) -> &[u8] {
        self.buf.front().map(|(k, _)| &k.key[..]).unwrap_or(&[])
    }

    fn seq(&self) -> u64 {
        self.buf.front().map(|(k, _)| k.seq).unwrap_or(0)
    }

    fn value(&self) -> &[u8] {
        self.buf.front().map(|(_, v)| &v[..]).unwrap_or(&[])
    }

    fn next(&mut self) -> Result<()> {
        self.buf.pop_front();
        self.refill_if_needed();
        Ok(())
    }
}
