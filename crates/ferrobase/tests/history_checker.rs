//! The partition tests' history checker (`tests/history/`) on known
//! histories: linearizable ones pass, non-linearizable ones (a stale read,
//! a lost write, a read of a value never written, reads going back in
//! time) fail, and a put of unknown outcome may apply late or never.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod history;

use history::{Event, Op, check_counter, check_register};

fn put(v: u64, invoke: u64, complete: Option<u64>) -> Event {
    Event {
        key: "r".into(),
        op: Op::Put(v),
        invoke,
        complete,
    }
}

fn get(v: Option<u64>, invoke: u64, complete: u64) -> Event {
    Event {
        key: "r".into(),
        op: Op::Get(v),
        invoke,
        complete: Some(complete),
    }
}

#[test]
fn sequential_history_is_linearizable() {
    let h = [
        get(None, 0, 1),
        put(1, 2, Some(3)),
        get(Some(1), 4, 5),
        put(2, 6, Some(7)),
        get(Some(2), 8, 9),
    ];
    assert!(check_register(&h));
}

#[test]
fn a_read_concurrent_with_a_write_may_see_either_value() {
    // put(2) overlaps both reads: one sees 1, the next 2.
    let h = [
        put(1, 0, Some(1)),
        put(2, 2, Some(7)),
        get(Some(1), 3, 4),
        get(Some(2), 5, 6),
    ];
    assert!(check_register(&h));
    // Concurrent reads may order the concurrent write either way.
    let h = [
        put(1, 0, Some(1)),
        put(2, 2, Some(9)),
        get(Some(2), 3, 4),
        get(Some(2), 5, 6),
    ];
    assert!(check_register(&h));
}

#[test]
fn a_stale_read_after_a_completed_write_is_not_linearizable() {
    let h = [put(1, 0, Some(1)), put(2, 2, Some(3)), get(Some(1), 4, 5)];
    assert!(!check_register(&h));
}

#[test]
fn reads_going_back_in_time_are_not_linearizable() {
    // put(2) is concurrent with both reads, but once a read saw 2 a later
    // read cannot see 1 again.
    let h = [
        put(1, 0, Some(1)),
        put(2, 2, Some(9)),
        get(Some(2), 3, 4),
        get(Some(1), 5, 6),
    ];
    assert!(!check_register(&h));
}

#[test]
fn a_lost_acknowledged_write_is_not_linearizable() {
    let h = [put(1, 0, Some(1)), get(None, 2, 3)];
    assert!(!check_register(&h));
}

#[test]
fn a_value_nobody_wrote_is_not_linearizable() {
    let h = [put(1, 0, Some(1)), get(Some(7), 2, 3)];
    assert!(!check_register(&h));
}

#[test]
fn an_unknown_put_may_apply_late_or_never() {
    // Failed put(2): a read long after it may see it…
    let late = [
        put(1, 0, Some(1)),
        put(2, 2, None),
        get(Some(1), 3, 4),
        get(Some(2), 10, 11),
    ];
    assert!(check_register(&late));
    // …or never see it.
    let never = [put(1, 0, Some(1)), put(2, 2, None), get(Some(1), 10, 11)];
    assert!(check_register(&never));
    // But not before it was invoked.
    let early = [put(1, 0, Some(1)), get(Some(2), 2, 3), put(2, 4, None)];
    assert!(!check_register(&early));
}

#[test]
fn many_concurrent_ops_are_checked_quickly() {
    // 4 writers × 50 rounds, each round's ops overlapping: the memo keeps
    // the search small.
    let mut h = Vec::new();
    let mut t = 0;
    for round in 0..50u64 {
        let base = t;
        for w in 0..4u64 {
            h.push(put(round * 4 + w + 1, base + w, Some(base + 8 + w)));
        }
        h.push(get(Some(round * 4 + 4), base + 12, base + 13));
        t = base + 14;
    }
    assert!(check_register(&h));
    h.push(get(Some(1), t, t + 1));
    assert!(!check_register(&h));
}

#[test]
fn counter_bounds() {
    assert!(check_counter(10, 10, 12).is_ok());
    assert!(check_counter(12, 10, 12).is_ok());
    assert!(check_counter(9, 10, 12).is_err());
    assert!(check_counter(13, 10, 12).is_err());
}

#[test]
fn long_histories_do_not_exhaust_the_stack() {
    // 20,000 ops on one register: a put, then two overlapping reads.
    let mut h = Vec::new();
    for i in 0..5_000u64 {
        let t = i * 10;
        h.push(put(i + 1, t, Some(t + 1)));
        h.push(get(Some(i + 1), t + 2, t + 5));
        h.push(get(Some(i + 1), t + 3, t + 4));
        h.push(put(i + 1_000_000, t + 6, None));
    }
    // One unknown put is read late: it applied after all.
    h.push(get(Some(1_004_999), 60_000, 60_001));
    assert!(check_register(&h));
}
