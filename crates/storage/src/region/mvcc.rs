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
//! the old value and lose an update. Only the waiters the read point now
//! covers are woken: with many concurrent single-row writers completing
//! out of order, waking every waiter at every advance would put most of
//! them back to sleep at once.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::Thread;

/// See the module docs.
pub struct Mvcc {
    inner: Mutex<Inner>,
    read_point: AtomicU64,
}

struct Inner {
    next_seq: u64,
    /// `pending[i]` is `seq = first_pending + i`; true once completed.
    pending: VecDeque<bool>,
    first_pending: u64,
    /// Threads in [`Mvcc::wait_visible`] and the id each waits for.
    waiters: Vec<(u64, Thread)>,
}

impl Mvcc {
    /// Starts after `last_seq` (everything up to it is visible).
    pub fn new(last_seq: u64) -> Mvcc {
        Mvcc {
            inner: Mutex::new(Inner {
                next_seq: last_seq + 1,
                pending: VecDeque::new(),
                first_pending: last_seq + 1,
                waiters: Vec::new(),
            }),
            read_point: AtomicU64::new(last_seq),
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
        let Some(rp) = advanced else { return };
        self.read_point.store(rp, Ordering::Release);
        if g.waiters.iter().all(|(s, _)| *s > rp) {
            return;
        }
        let mut ready = Vec::new();
        g.waiters.retain(|(s, t)| {
            let covered = *s <= rp;
            if covered {
                ready.push(t.clone());
            }
            !covered
        });
        drop(g);
        for t in ready {
            t.unpark();
        }
    }

    /// Waits until the read point covers `seq` (already completed by the
    /// caller): every earlier write has completed too.
    pub fn wait_visible(&self, seq: u64) {
        if self.read_point() >= seq {
            return;
        }
        {
            let mut g = self.inner.lock();
            // The read point only moves under `inner`: checked under the
            // lock, a registered waiter cannot miss the advance that covers
            // it (`complete` unparks it after storing the read point).
            if self.read_point() >= seq {
                return;
            }
            g.waiters.push((seq, std::thread::current()));
        }
        // `park` may return spuriously, and an `unpark` that came first
        // makes it return at once: re-check each time.
        while self.read_point() < seq {
            std::thread::park();
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

    #[test]
    fn waiters_wake_when_covered_and_never_early() {
        let m = std::sync::Arc::new(Mvcc::new(0));
        let ids: Vec<u64> = (0..8).map(|_| m.begin()).collect();
        // Every write but the first completes, each with a waiting writer.
        let waiters: Vec<_> = ids[1..]
            .iter()
            .map(|&id| {
                let m = m.clone();
                m.complete(id);
                std::thread::spawn(move || {
                    m.wait_visible(id);
                    m.read_point() >= id
                })
            })
            .collect();
        assert_eq!(m.read_point(), 0, "the first write is still pending");
        m.complete(ids[0]);
        for w in waiters {
            assert_eq!(w.join().ok(), Some(true));
        }
        assert!(m.inner.lock().waiters.is_empty());
    }
}
