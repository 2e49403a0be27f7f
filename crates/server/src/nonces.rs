//! HBase's server nonces: an Increment or Append the client retried (its
//! first attempt timed out, but the server had applied it) is applied once.
//!
//! The Java client tags each Increment and Append with a random nonce in
//! its connection's nonce group and sends the same pair on every retry;
//! ferrobase's own client does the same over gRPC (`ReadModifyWrite`'s
//! `nonce_group` and `nonce`), and both protocols share this server's one
//! table, so a pair is applied once whichever way it came.
//! The first call with a pair proceeds; a call with a pair already applied
//! is answered from the row as it is now (HBase's "convert to Get"); a call
//! with a pair still running waits for it. A failed operation forgets its
//! pair, so the retry applies it. Pairs are kept for
//! [`GRACE_PERIOD`] (HBase's `hbase.server.hashNonce.gracePeriod`), longer
//! than any client retries.
//!
//! The pairs also travel with the edits they tagged through the WAL. When a
//! region opens here after a crash or a failover, the pairs of the edits
//! its WAL replay or recovered edits applied are remembered as applied
//! ([`ServerNonces::applied_from_wal`], HBase's `reportOperationFromWal`),
//! so a client retrying across the failover is still answered once. This
//! module only tracks pairs; it never touches region data.

use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long an applied nonce is remembered (HBase's default: 30 minutes).
pub const GRACE_PERIOD: Duration = Duration::from_secs(30 * 60);

/// How often, at most, expired nonces are swept.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// How long a duplicate waits for the first call of its pair before it
/// proceeds as if the first had failed.
const WAIT_FOR_RUNNING: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Running,
    Applied(Instant),
}

/// What a call with a nonce does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// First of its pair (or no nonce): apply it, then [`ServerNonces::end`].
    Proceed,
    /// Already applied: answer with the row's current cells.
    Duplicate,
}

/// The nonces this server has seen; see the module docs.
pub struct ServerNonces {
    pairs: Mutex<Pairs>,
    changed: Condvar,
}

struct Pairs {
    map: HashMap<(u64, u64), State>,
    last_sweep: Instant,
}

impl Default for ServerNonces {
    fn default() -> ServerNonces {
        ServerNonces {
            pairs: Mutex::new(Pairs {
                map: HashMap::new(),
                last_sweep: Instant::now(),
            }),
            changed: Condvar::new(),
        }
    }
}

impl ServerNonces {
    /// Starts an operation tagged `(group, nonce)`; a nonce of 0 (none)
    /// always proceeds and needs no [`end`](Self::end).
    pub fn start(&self, group: u64, nonce: u64) -> Start {
        if nonce == 0 {
            return Start::Proceed;
        }
        let key = (group, nonce);
        let mut p = self.pairs.lock();
        let now = Instant::now();
        if now.duration_since(p.last_sweep) >= SWEEP_EVERY {
            p.map.retain(|_, s| match s {
                State::Running => true,
                State::Applied(at) => now.duration_since(*at) < GRACE_PERIOD,
            });
            p.last_sweep = now;
        }
        let deadline = now + WAIT_FOR_RUNNING;
        loop {
            match p.map.get(&key).copied() {
                None => {
                    p.map.insert(key, State::Running);
                    return Start::Proceed;
                }
                Some(State::Applied(_)) => return Start::Duplicate,
                Some(State::Running) => {
                    if self.changed.wait_until(&mut p, deadline).timed_out() {
                        // The first call is stuck; this one applies it.
                        p.map.insert(key, State::Running);
                        return Start::Proceed;
                    }
                }
            }
        }
    }

    /// Remembers pairs found in edits replayed from a WAL as applied.
    pub fn applied_from_wal(&self, pairs: impl IntoIterator<Item = (u64, u64)>) {
        let now = Instant::now();
        let mut p = self.pairs.lock();
        for pair in pairs {
            if pair.1 != 0 {
                p.map.insert(pair, State::Applied(now));
            }
        }
        drop(p);
        self.changed.notify_all();
    }

    /// Ends an operation [`start`](Self::start) let proceed: remembered
    /// when `applied`, forgotten otherwise (a retry applies it).
    pub fn end(&self, group: u64, nonce: u64, applied: bool) {
        if nonce == 0 {
            return;
        }
        let mut p = self.pairs.lock();
        if applied {
            p.map.insert((group, nonce), State::Applied(Instant::now()));
        } else {
            p.map.remove(&(group, nonce));
        }
        drop(p);
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_pair_applies_once_and_a_failure_is_retried() {
        let n = ServerNonces::default();
        assert_eq!(n.start(1, 10), Start::Proceed);
        n.end(1, 10, true);
        assert_eq!(n.start(1, 10), Start::Duplicate);
        // Another group, or another nonce, is another operation.
        assert_eq!(n.start(2, 10), Start::Proceed);
        assert_eq!(n.start(1, 11), Start::Proceed);
        n.end(1, 11, false);
        assert_eq!(n.start(1, 11), Start::Proceed);
        // No nonce: always proceeds.
        assert_eq!(n.start(1, 0), Start::Proceed);
        assert_eq!(n.start(1, 0), Start::Proceed);
    }

    #[test]
    fn a_duplicate_waits_for_the_running_first_call() {
        let n = Arc::new(ServerNonces::default());
        assert_eq!(n.start(5, 5), Start::Proceed);
        let waiter = {
            let n = n.clone();
            std::thread::spawn(move || n.start(5, 5))
        };
        // Whether the waiter already waits or not, it sees the end.
        n.end(5, 5, true);
        assert_eq!(waiter.join().ok(), Some(Start::Duplicate));
    }
}
