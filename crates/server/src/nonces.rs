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
//!
//! Each pair remembers the table and row it changed, so the pairs of a
//! region's rows can follow the region: a clean close writes them beside
//! the region ([`ServerNonces::applied_in`], read back as recovered edits
//! by the next opener), and a split or merge on this server needs nothing,
//! the table being the server's, not the region's. A checkAndMutate's
//! pair also remembers whether its check passed, so a retry gets the
//! first answer ([`Start::DuplicateFailedCheck`]).

use bytes::Bytes;
use ferrobase_storage::RegionInfo;
use ferrobase_storage::wal::LoggedNonce;
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long an applied nonce is remembered (HBase's default: 30 minutes).
pub const GRACE_PERIOD: Duration = Duration::from_secs(30 * 60);

/// How often, at most, expired nonces are swept.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// How long a duplicate waits for the first call of its pair before it
/// proceeds as if the first had failed.
const WAIT_FOR_RUNNING: Duration = Duration::from_secs(60);

/// How long a closing region waits for calls of its rows still between
/// their write and their [`ServerNonces::end`].
const WAIT_AT_CLOSE: Duration = Duration::from_secs(5);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Running,
    /// Applied (`true`), or a checkAndMutate whose check failed (`false`).
    Done {
        at: Instant,
        applied: bool,
    },
}

#[derive(Clone, Debug)]
struct Entry {
    state: State,
    /// The table and row the operation is of; `None` when the caller did
    /// not say (such a pair does not follow its region).
    place: Option<(Arc<str>, Bytes)>,
}

/// What a call with a nonce does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// First of its pair (or no nonce): apply it, then [`ServerNonces::end`].
    Proceed,
    /// Already applied: answer with the row's current cells (a
    /// checkAndMutate: its check passed).
    Duplicate,
    /// A checkAndMutate whose check failed the first time: answer "not
    /// applied" again, without checking anew.
    DuplicateFailedCheck,
}

/// The nonces this server has seen; see the module docs.
pub struct ServerNonces {
    pairs: Mutex<Pairs>,
    changed: Condvar,
}

struct Pairs {
    map: HashMap<(u64, u64), Entry>,
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

/// Milliseconds since the Unix epoch now.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// True while `l` is within the grace period (by the wall clock).
pub fn within_grace(l: &LoggedNonce) -> bool {
    now_ms().saturating_sub(l.at_ms) < u64::try_from(GRACE_PERIOD.as_millis()).unwrap_or(u64::MAX)
}

impl ServerNonces {
    /// Starts an operation tagged `(group, nonce)` whose table and row are
    /// not known here; see [`start_on`](Self::start_on).
    pub fn start(&self, group: u64, nonce: u64) -> Start {
        self.start_at(group, nonce, None)
    }

    /// Starts an operation tagged `(group, nonce)` on `row` of `table`; a
    /// nonce of 0 (none) always proceeds and needs no [`end`](Self::end).
    pub fn start_on(&self, group: u64, nonce: u64, table: &str, row: &Bytes) -> Start {
        self.start_at(group, nonce, Some((Arc::from(table), row.clone())))
    }

    fn start_at(&self, group: u64, nonce: u64, place: Option<(Arc<str>, Bytes)>) -> Start {
        if nonce == 0 {
            return Start::Proceed;
        }
        let key = (group, nonce);
        let mut p = self.pairs.lock();
        let now = Instant::now();
        if now.duration_since(p.last_sweep) >= SWEEP_EVERY {
            p.map.retain(|_, e| match e.state {
                State::Running => true,
                State::Done { at, .. } => now.duration_since(at) < GRACE_PERIOD,
            });
            p.last_sweep = now;
        }
        let deadline = now + WAIT_FOR_RUNNING;
        loop {
            match p.map.get(&key).map(|e| e.state) {
                None => {
                    p.map.insert(
                        key,
                        Entry {
                            state: State::Running,
                            place,
                        },
                    );
                    return Start::Proceed;
                }
                Some(State::Done { applied: true, .. }) => return Start::Duplicate,
                Some(State::Done { applied: false, .. }) => return Start::DuplicateFailedCheck,
                Some(State::Running) => {
                    if self.changed.wait_until(&mut p, deadline).timed_out() {
                        // The first call is stuck; this one applies it.
                        p.map.insert(
                            key,
                            Entry {
                                state: State::Running,
                                place,
                            },
                        );
                        return Start::Proceed;
                    }
                }
            }
        }
    }

    /// Remembers as applied the pairs of edits of `table` replayed from a
    /// WAL, recovered edits, or a closed region's file, each as old as its
    /// log says (expired ones are skipped).
    pub fn applied_from_wal(&self, table: &str, logged: impl IntoIterator<Item = LoggedNonce>) {
        let (now, wall) = (Instant::now(), now_ms());
        let table: Arc<str> = Arc::from(table);
        let mut p = self.pairs.lock();
        for l in logged {
            if l.nonce.1 == 0 {
                continue;
            }
            if !within_grace(&l) {
                continue;
            }
            // A clock behind the writer's counts as no age at all.
            let age = Duration::from_millis(wall.saturating_sub(l.at_ms));
            let at = now.checked_sub(age).unwrap_or(now);
            let entry = p.map.entry(l.nonce).or_insert(Entry {
                state: State::Running,
                place: None,
            });
            // Applied elsewhere, whatever this server thought of it.
            if !matches!(entry.state, State::Done { applied: true, at: seen } if seen >= at) {
                entry.state = State::Done { at, applied: true };
            }
            entry.place = Some((table.clone(), l.row));
        }
        drop(p);
        self.changed.notify_all();
    }

    /// Ends an operation [`start`](Self::start) let proceed: remembered
    /// when `applied`, forgotten otherwise (a retry applies it).
    pub fn end(&self, group: u64, nonce: u64, applied: bool) {
        self.finish(group, nonce, applied.then_some(true));
    }

    /// Ends a checkAndMutate [`start`](Self::start) let proceed whose check
    /// failed: a retry is answered "not applied" without checking again.
    pub fn end_failed_check(&self, group: u64, nonce: u64) {
        self.finish(group, nonce, Some(false));
    }

    fn finish(&self, group: u64, nonce: u64, done: Option<bool>) {
        if nonce == 0 {
            return;
        }
        let mut p = self.pairs.lock();
        match done {
            Some(applied) => {
                let at = Instant::now();
                let entry = p.map.entry((group, nonce)).or_insert(Entry {
                    state: State::Running,
                    place: None,
                });
                entry.state = State::Done { at, applied };
            }
            None => {
                p.map.remove(&(group, nonce));
            }
        }
        drop(p);
        self.changed.notify_all();
    }

    /// The applied pairs of rows of `region`, still within the grace
    /// period, with their wall-clock time of application: what a clean
    /// close hands to the region's next opener. Waits (a few seconds at
    /// most) for calls of those rows still running: the region is closed,
    /// so each either applied already or fails.
    pub fn applied_in(&self, region: &RegionInfo) -> Vec<LoggedNonce> {
        let of_region = |e: &Entry| {
            e.place
                .as_ref()
                .is_some_and(|(t, row)| **t == *region.table && region.contains_row(row))
        };
        let deadline = Instant::now() + WAIT_AT_CLOSE;
        let mut p = self.pairs.lock();
        while p
            .map
            .values()
            .any(|e| e.state == State::Running && of_region(e))
        {
            if self.changed.wait_until(&mut p, deadline).timed_out() {
                break;
            }
        }
        let (now, wall) = (Instant::now(), now_ms());
        p.map
            .iter()
            .filter_map(|(pair, e)| match (e.state, &e.place) {
                (State::Done { at, applied: true }, Some((_, row))) if of_region(e) => {
                    let age = now.duration_since(at);
                    (age < GRACE_PERIOD).then(|| LoggedNonce {
                        nonce: *pair,
                        row: row.clone(),
                        at_ms: wall.saturating_sub(u64::try_from(age.as_millis()).unwrap_or(0)),
                    })
                }
                _ => None,
            })
            .collect()
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
    fn a_failed_check_is_answered_again_without_checking() {
        let n = ServerNonces::default();
        assert_eq!(n.start(3, 1), Start::Proceed);
        n.end_failed_check(3, 1);
        assert_eq!(n.start(3, 1), Start::DuplicateFailedCheck);
        // Learned from a log as applied elsewhere: applied wins.
        n.applied_from_wal(
            "t",
            [LoggedNonce {
                nonce: (3, 1),
                row: Bytes::from_static(b"r"),
                at_ms: now_ms(),
            }],
        );
        assert_eq!(n.start(3, 1), Start::Duplicate);
    }

    #[test]
    fn a_region_hands_over_the_pairs_of_its_rows() {
        let n = ServerNonces::default();
        let row = |r: &'static str| Bytes::from_static(r.as_bytes());
        for (nonce, table, r) in [(1, "t", "a"), (2, "t", "m"), (3, "u", "a")] {
            assert_eq!(n.start_on(9, nonce, table, &row(r)), Start::Proceed);
            n.end(9, nonce, true);
        }
        // Unknown place, failed or running: not handed over.
        assert_eq!(n.start(9, 4), Start::Proceed);
        n.end(9, 4, true);
        assert_eq!(n.start_on(9, 5, "t", &row("b")), Start::Proceed);
        n.end_failed_check(9, 5);
        // Too old to matter.
        let old = now_ms() - u64::try_from(GRACE_PERIOD.as_millis()).unwrap() - 1;
        n.applied_from_wal(
            "t",
            [LoggedNonce {
                nonce: (9, 6),
                row: row("c"),
                at_ms: old,
            }],
        );
        assert_eq!(n.start(9, 6), Start::Proceed, "expired: not learned");
        n.end(9, 6, false);
        let lower = RegionInfo {
            id: 1,
            table: "t".into(),
            start_key: Vec::new(),
            end_key: b"m".to_vec(),
        };
        let got = n.applied_in(&lower);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].nonce, &got[0].row[..]), ((9, 1), &b"a"[..]));
        assert!(got[0].at_ms <= now_ms() && got[0].at_ms + 60_000 > now_ms());
        // Another server learns them as applied; their age goes along.
        let other = ServerNonces::default();
        other.applied_from_wal("t", got);
        assert_eq!(other.start(9, 1), Start::Duplicate);
        assert_eq!(other.start(9, 2), Start::Proceed);
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
