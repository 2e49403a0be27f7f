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
pub fn check_register(events: &[Event]) -> bool {
    let mut ops = events.to_vec();
    ops.sort_by_key(|e| e.invoke);
    let mut done = vec![false; ops.len()];
    let mut memo = HashSet::new();
    let mut left = ops.iter().filter(|e| e.complete.is_some()).count();
    search(&ops, &mut done, &mut left, None, &mut memo)
}

fn search(
    ops: &[Event],
    done: &mut Vec<bool>,
    left: &mut usize,
    state: Option<u64>,
    memo: &mut HashSet<(Vec<bool>, Option<u64>)>,
) -> bool {
    if *left == 0 {
        // Every completed op is linearized; unknown puts may never apply.
        return true;
    }
    let horizon = ops
        .iter()
        .zip(done.iter())
        .filter(|(_, d)| !**d)
        .filter_map(|(e, _)| e.complete)
        .min()
        .unwrap_or(u64::MAX);
    for i in 0..ops.len() {
        if done[i] {
            continue;
        }
        if ops[i].invoke > horizon {
            break; // sorted by invocation: nothing later qualifies
        }
        let next = match &ops[i].op {
            Op::Put(v) => Some(*v),
            Op::Get(v) if *v == state => state,
            Op::Get(_) => continue,
        };
        done[i] = true;
        let counted = ops[i].complete.is_some();
        if counted {
            *left -= 1;
        }
        if memo.insert((done.clone(), next)) && search(ops, done, left, next, memo) {
            return true;
        }
        if counted {
            *left += 1;
        }
        done[i] = false;
    }
    false
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
