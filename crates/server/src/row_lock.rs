//! Row locks for read-modify-write calls (increment, append,
//! checkAndMutate): the read and the write of one row happen with no other
//! read-modify-write of that row in between.
//!
//! Locks are striped by a hash of (region, row), so memory is fixed and a
//! lock is held only for one row's read and write. Plain puts do not take
//! them (as the engine makes each row mutation atomic on its own); this
//! module never blocks a plain write.

use parking_lot::{Mutex, MutexGuard};
use std::hash::{Hash, Hasher};

const STRIPES: usize = 1024;

/// A fixed set of striped row locks.
pub struct RowLocks {
    stripes: Vec<Mutex<()>>,
}

impl Default for RowLocks {
    fn default() -> Self {
        RowLocks {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }
}

impl RowLocks {
    /// Locks `row` of `region` until the guard is dropped.
    pub fn lock(&self, region: u64, row: &[u8]) -> MutexGuard<'_, ()> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        region.hash(&mut h);
        row.hash(&mut h);
        self.stripes[(h.finish() as usize) % STRIPES].lock()
    }
}
