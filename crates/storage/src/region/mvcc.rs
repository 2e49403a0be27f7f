//! Multi-version concurrency control: sequence ids and the read point.
//!
//! Every write (a row mutation, or a batch) takes the next sequence id of
//! its region, inserts its cells tagged with it, then completes. The read
//! point only advances over a *contiguous* prefix of completed ids, so a
//! reader never sees half of a row mutation, nor a later write without an
//! earlier one. Ids are per region and contiguous, so the pending queue is
//! indexed by `seq - first_pending` (O(1), HBase's scheme).
//!
//! A write returns only once the read point covers it
//! ([`wait_visible`](Mvcc::wait_visible), HBase's `completeAndWait`): a
//! client that was told "done" reads its write back, and a read-modify-write
//! under the row lock reads the previous one's result. Without it, a write
//! that completed behind a slower earlier one (an FSYNC_WAL batch) would be
//! acknowledged while invisible, and an increment right after it would read
//! the old value and lose an update.

use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

/// See the module docs.
pub struct Mvcc {
    inner: Mutex<Inner>,
    read_point: AtomicU64,
    /// Signalled whenever the read point advances.
    advanced: Condvar,
}

struct Inner {
    next_seq: u64,
    /// `pending[i]` is `seq = first_pending + i`; true once completed.
    pending: VecDeque<bool>,
    first_pending: u64,
}

impl Mvcc {
    /// Starts after `last_seq` (everything up to it is visible).
    pub fn new(last_seq: u64) -> Mvcc {
        Mvcc {
            inner: Mutex::new(Inner {
                next_seq: last_seq + 1,
                pending: VecDeque::new(),
                first_pending: last_seq + 1,
            }),
            read_point: AtomicU64::new(last_seq),
            advanced: Condvar::new(),
        }
    }

    /// Takes the next sequence id.
    pub fn begin(&self) -> u64 {
        let mut g = self.inner.lock();
        let seq = g.next_seq;
        g.next_seq += 1;
        g.pending.push_back(false);
        seq
    }

    /// Marks `seq` complete and advances the read point if it can.
    pub fn complete(&self, seq: u64) {
        let mut g = self.inner.lock();
        let Some(idx) = seq.checked_sub(g.first_pending) else {
            return;
        };
        if let Some(slot) = g.pending.get_mut(idx as usize) {
            *slot = true;
        }
        let mut advanced = None;
        while g.pending.front() == Some(&true) {
            g.pending.pop_front();
            advanced = Some(g.first_pending);
            g.first_pending += 1;
        }
        if let Some(rp) = advanced {
            self.read_point.store(rp, Ordering::Release);
            drop(g);
            self.advanced.notify_all();
        }
    }

    /// Waits until the read point covers `seq` (already completed by the
    /// caller): every earlier write has completed too.
    pub fn wait_visible(&self, seq: u64) {
        if self.read_point() >= seq {
            return;
        }
        let mut g = self.inner.lock();
        // The read point only moves under `inner`, so checking it under the
        // lock cannot miss the notification.
        while self.read_point() < seq {
            self.advanced.wait(&mut g);
        }
    }

    /// The newest sequence id a reader may see.
    pub fn read_point(&self) -> u64 {
        self.read_point.load(Ordering::Acquire)
    }

    /// The largest id such that every id up to it is complete.
    /// Equal to the read point; named for its use at flush.
    pub fn completed_prefix(&self) -> u64 {
        self.read_point()
    }

    /// The last id handed out.
    pub fn last_assigned(&self) -> u64 {
        self.inner.lock().next_seq - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_point_waits_for_the_gap() {
        let m = Mvcc::new(10);
        let a = m.begin();
        let b = m.begin();
        assert_eq!((a, b), (11, 12));
        m.complete(b);
        assert_eq!(m.read_point(), 10);
        m.complete(a);
        assert_eq!(m.read_point(), 12);
        m.complete(5); // stale ids are ignored
        assert_eq!(m.last_assigned(), 12);
    }

    #[test]
    fn a_write_waits_until_earlier_ones_complete() {
        let m = std::sync::Arc::new(Mvcc::new(0));
        let slow = m.begin();
        let fast = m.begin();
        m.complete(fast);
        let waiter = {
            let m = m.clone();
            std::thread::spawn(move || {
                m.wait_visible(fast);
                m.read_point()
            })
        };
        // The waiter cannot return before `slow` completes: the read point
        // it returns covers both.
        m.complete(slow);
        assert_eq!(waiter.join().ok(), Some(2));
        m.wait_visible(1); // already visible: returns at once
    }

    #[test]
    fn concurrent_writers_end_with_everything_visible() {
        let m = std::sync::Arc::new(Mvcc::new(0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        let s = m.begin();
                        m.complete(s);
                    }
                })
            })
            .collect();
        for h in handles {
            let _ = h.join();
        }
        assert_eq!(m.read_point(), 4000);
    }
}
