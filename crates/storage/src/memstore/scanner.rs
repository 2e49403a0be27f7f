//! A cursor over a memstore at a read point.
//!
//! The skip list's entry handles borrow the map, so a cursor that owns an
//! `Arc<MemStore>` cannot keep one. Instead it copies the next few entries
//! (cheap `Bytes` clones) into a small buffer and refills from the last key
//! it saw: one O(log n) search per batch, not per entry.

use super::{MemKey, MemStore};
use crate::error::Result;
use crate::iter::CellIterator;
use bytes::Bytes;
use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

const BATCH: usize = 64;

/// See the module docs.
pub struct MemStoreScanner {
    store: Arc<MemStore>,
    read_point: u64,
    buf: VecDeque<(MemKey, Bytes)>,
    /// Where the next refill starts (exclusive); `None` once exhausted.
    resume: Option<MemKey>,
}

impl MemStoreScanner {
    pub(super) fn new(store: Arc<MemStore>, read_point: u64) -> MemStoreScanner {
        MemStoreScanner {
            store,
            read_point,
            buf: VecDeque::new(),
            resume: None,
        }
    }

    fn fill(&mut self, from: Bound<MemKey>) {
        self.buf.clear();
        let mut last = None;
        for e in self.store.map().range((from, Bound::Unbounded)) {
            last = Some(e.key().clone());
            if e.key().seq <= self.read_point {
                self.buf.push_back((e.key().clone(), e.value().clone()));
                if self.buf.len() >= BATCH {
                    break;
                }
            }
        }
        // Only resume if the batch filled up; otherwise the map is exhausted.
        self.resume = if self.buf.len() >= BATCH { last } else { None };
    }

    fn refill_if_needed(&mut self) {
        while self.buf.is_empty() {
            match self.resume.take() {
                Some(k) => self.fill(Bound::Excluded(k)),
                None => return,
            }
        }
    }
}

impl CellIterator for MemStoreScanner {
    fn seek(&mut self, key: &[u8]) -> Result<()> {
        let start = MemKey {
            key: Bytes::copy_from_slice(key),
            seq: u64::MAX,
        };
        self.fill(Bound::Included(start));
        self.refill_if_needed();
        Ok(())
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.fill(Bound::Unbounded);
        self.refill_if_needed();
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
