//! Operation histories and their checks, for partition tests. Clients
//! record every operation on a single-row register (put of a unique value,
//! get) as an invocation and a completion (ok, or unknown when the call
//! failed or timed out: a failed put may still have been applied), and
//! every counter increment as attempted / acknowledged. Afterwards:
//!
//! - [`check_register`]: a Wing–Gong linearizability search (with Lowe's
//!   memo of visited configurations) over one register's history. An op
//!   may be linearized next only if it was invoked before every pending
//!   op completed; a put of unknown outcome has no completion (it may take
//!   effect at any later point, or never); gets that failed are not
//!   recorded (they constrain nothing).
//! - [`check_counter`]: the final value is at least the acknowledged
//!   increments and at most the attempted ones.
//!
//! Time is a global event counter, not a clock: an invocation takes a
//! number before the call is sent, a completion after the answer arrives,
//! so "completed before invoked" is exact.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// What an operation did to a register (values are unique per put; `None`
/// is the initial, never-written state).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Wrote this value.
    Put(u64),
    /// Read this value (`None`: the row was absent).
    Get(Option<u64>),
}

/// One recorded operation.
#[derive(Clone, Debug)]
pub struct Event {
    /// The register (row) it touched.
    pub key: String,
    pub op: Op,
    /// Event number at invocation.
    pub invoke: u64,
    /// Event number at completion; `None`: unknown outcome.
    pub complete: Option<u64>,
}

/// A history shared by every client task.
#[derive(Default)]
pub struct History {
    clock: AtomicU64,
    events: Mutex<Vec<Event>>,
}

impl History {
    /// The event number of an invocation, taken before the call is sent.
    pub fn invoke(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::SeqCst)
    }

    /// Records a put that was acknowledged (`ok`) or whose outcome is unknown.
    pub fn put(&self, key: &str, value: u64, invoke: u64, ok: bool) {
        let complete = ok.then(|| self.clock.fetch_add(1, Ordering::SeqCst));
        self.push(key, Op::Put(value), invoke, complete);
    }

    /// Records a get that returned `value`.
    pub fn get(&self, key: &str, value: Option<u64>, invoke: u64) {
        let complete = Some(self.clock.fetch_add(1, Ordering::SeqCst));
        self.push(key, Op::Get(value), invoke, complete);
    }

    fn push(&self, key: &str, op: Op, invoke: u64, complete: Option<u64>) {
        self.events.lock().unwrap().push(Event {
            key: key.to_string(),
            op,
            invoke,
            complete,
        });
    }

    /// Every event, per key.
    pub fn by_key(&self) -> std::collections::BTreeMap<String, Vec<Event>> {
        let mut out: std::collections::BTreeMap<String, Vec<Event>> = Default::default();
        for e in self.events.lock().unwrap().iter() {
            out.entry(e.key.clone()).or_default().push(e.clone());
        }
        out
    }

    /// Checks every register; `Err` names the first key that is not
    /// linearizable.
    pub fn check(&self) -> Result<usize, String> {
        let mut n = 0;
        for (key, events) in self.by_key() {
            n += events.len();
            if !check_register(&events) {
                return Err(format!(
                    "register {key} is not linearizable ({} ops): {events:?}",
                    events.len()
                ));
            }
        }
        Ok(n)
    }
}

/// Whether one register's history is linearizable (see the module docs).
/// Iterative (histories have thousands of ops): a stack of the ops
/// linearized so far, backtracking to the next candidate on a dead end.
pub fn check_register(events: &[Event]) -> bool {
    // A put of unknown outcome whose value nobody read may as well never
    // have applied: dropping it changes no answer and prunes the search.
    let read: HashSet<u64> = events
        .iter()
        .filter_map(|e| match e.op {
            Op::Get(v) => v,
            Op::Put(_) => None,
        })
        .collect();
    let mut ops: Vec<Event> = events
        .iter()
        .filter(|e| e.complete.is_some() || matches!(e.op, Op::Put(v) if read.contains(&v)))
        .cloned()
        .collect();
    ops.sort_by_key(|e| e.invoke);
    let n = ops.len();
    let mut done = vec![0u64; n.div_ceil(64)];
    let is_done = |d: &[u64], i: usize| d[i / 64] & (1 << (i % 64)) != 0;
    let flip = |d: &mut [u64], i: usize| d[i / 64] ^= 1 << (i % 64);
    let mut left = ops.iter().filter(|e| e.complete.is_some()).count();
    let mut memo: HashSet<(Vec<u64>, Option<u64>)> = HashSet::new();
    // (op linearized, state before it)
    let mut stack: Vec<(usize, Option<u64>)> = Vec::new();
    let mut state: Option<u64> = None;
    let mut from = 0;
    loop {
        if left == 0 {
            // Every completed op is linearized; unknown puts may never apply.
            return true;
        }
        // An op may go next only if invoked before every pending op completed.
        // Ops are sorted by invocation and complete after it, so the scan
        // stops at the first invocation past the best completion so far.
        let first = done
            .iter()
            .position(|w| *w != u64::MAX)
            .map_or(n, |w| w * 64 + done[w].trailing_ones() as usize);
        let mut horizon = u64::MAX;
        for (i, e) in ops.iter().enumerate().skip(first) {
            if e.invoke > horizon {
                break;
            }
            if !is_done(&done, i) {
                horizon = horizon.min(e.complete.unwrap_or(u64::MAX));
            }
        }
        let mut next = None;
        for (i, e) in ops.iter().enumerate().skip(from.max(first)) {
            if e.invoke > horizon {
                break; // sorted by invocation: nothing later qualifies
            }
            if is_done(&done, i) {
                continue;
            }
            let after = match &e.op {
                Op::Put(v) => Some(*v),
                Op::Get(v) if *v == state => state,
                Op::Get(_) => continue,
            };
            flip(&mut done, i);
            if memo.insert((done.clone(), after)) {
                next = Some((i, after));
                break;
            }
            flip(&mut done, i);
        }
        match next {
            Some((i, after)) => {
                stack.push((i, state));
                state = after;
                if ops[i].complete.is_some() {
                    left -= 1;
                }
                from = 0;
            }
            None => {
                let Some((i, before)) = stack.pop() else {
                    return false;
                };
                flip(&mut done, i);
                state = before;
                if ops[i].complete.is_some() {
                    left += 1;
                }
                from = i + 1;
            }
        }
    }
}

/// A counter's check: `acked` increments of 1 were acknowledged, `attempted`
/// were sent (acknowledged or not), and it reads `value` at the end.
pub fn check_counter(value: i64, acked: i64, attempted: i64) -> Result<(), String> {
    if value < acked {
        return Err(format!(
            "counter {value} < {acked} acknowledged increments: an acknowledged increment was lost"
        ));
    }
    if value > attempted {
        return Err(format!(
            "counter {value} > {attempted} attempted increments: an increment was applied twice"
        ));
    }
    Ok(())
}
