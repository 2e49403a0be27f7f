//! Compaction throughput control: HBase 2's default
//! `PressureAwareCompactionThroughputController`.
//!
//! An unthrottled compaction takes every core it can get, and on a loaded
//! server that is CPU (and disk) the writers needed: the load slows for as
//! long as the compaction runs. HBase 2 therefore limits the bytes a
//! compaction writes per second, between two bounds picked by *pressure*,
//! how close the fullest store is to `hbase.hstore.blockingStoreFiles`:
//!
//! ```text
//! pressure = (files - compaction.min) / (blockingStoreFiles - compaction.min)   (≤ 0 → 0)
//! limit    = lower + (higher - lower) × pressure      pressure ≤ 1
//!          = none                                     pressure > 1 (flushes would block)
//! each of n running compactions gets limit / n
//! ```
//!
//! So compaction yields to writes while files are few, and runs flat out
//! once they pile up towards the point where flushes would wait. A bound
//! of 0 switches the control off (HBase's `NoLimitThroughputController`):
//! a zero lower bound would otherwise let a compaction that started at no
//! pressure sleep until more flushes come.
//!
//! This module owns the arithmetic and the pacing; it never chooses files
//! and never touches them. The pacing sleeps in short slices and asks the
//! caller whether to go on, so closing a region interrupts a throttled
//! compaction at once instead of waiting for it.

use std::time::Duration;

/// Bytes written between two pacing decisions.
pub const CHECK_EVERY_BYTES: u64 = 1 << 20;
/// Longest single sleep, so an abort is seen promptly.
pub const SLEEP_SLICE: Duration = Duration::from_millis(50);

/// Compaction pressure of a store with `files` store files.
pub fn pressure(files: usize, compaction_min: usize, blocking_files: usize) -> f64 {
    let min = compaction_min as f64;
    let span = blocking_files as f64 - min;
    if span <= 0.0 {
        // Misconfigured (blocking ≤ min): treat as always under pressure.
        return 2.0;
    }
    ((files as f64 - min) / span).max(0.0)
}

/// Bytes per second one of `active` compactions may write; `None`: no
/// limit (control off, or pressure above 1).
pub fn limit(lower: u64, higher: u64, pressure: f64, active: usize) -> Option<u64> {
    if lower == 0 || higher == 0 || pressure > 1.0 {
        return None;
    }
    let (lo, hi) = (lower.min(higher) as f64, lower.max(higher) as f64);
    let total = lo + (hi - lo) * pressure;
    Some(((total / active.max(1) as f64) as u64).max(1))
}

/// How long to wait so that `bytes` written over `elapsed` stay within
/// `rate` bytes per second.
pub fn behind(bytes: u64, elapsed: Duration, rate: u64) -> Duration {
    let due = Duration::from_secs_f64(bytes as f64 / rate.max(1) as f64);
    due.saturating_sub(elapsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_rises_from_min_files_to_the_blocking_count() {
        assert_eq!(pressure(2, 3, 16), 0.0);
        assert_eq!(pressure(3, 3, 16), 0.0);
        assert_eq!(pressure(16, 3, 16), 1.0);
        assert!(pressure(17, 3, 16) > 1.0);
        assert!((pressure(8, 3, 13) - 0.5).abs() < 1e-9);
        assert_eq!(pressure(5, 3, 3), 2.0, "blocking ≤ min: no limit");
    }

    #[test]
    fn limits_follow_hbase_and_are_shared() {
        let (lo, hi) = (50 << 20, 100 << 20);
        assert_eq!(limit(lo, hi, 0.0, 1), Some(50 << 20));
        assert_eq!(limit(lo, hi, 1.0, 1), Some(100 << 20));
        assert_eq!(limit(lo, hi, 0.5, 1), Some(75 << 20));
        assert_eq!(limit(lo, hi, 0.0, 2), Some(25 << 20));
        assert_eq!(
            limit(lo, hi, 1.01, 1),
            None,
            "files past blocking: flat out"
        );
        assert_eq!(limit(0, 0, 0.0, 1), None, "0/0: control off");
        assert_eq!(limit(0, hi, 0.0, 1), None, "a zero bound: control off");
        assert_eq!(limit(lo, 0, 0.0, 1), None, "a zero bound: control off");
        assert_eq!(limit(hi, lo, 0.0, 1), Some(50 << 20), "swapped bounds");
    }

    #[test]
    fn pacing_waits_only_when_ahead_of_the_rate() {
        let s = Duration::from_secs;
        assert_eq!(behind(100, s(0), 100), s(1));
        assert_eq!(behind(100, s(1), 100), Duration::ZERO);
        assert_eq!(behind(100, s(5), 100), Duration::ZERO);
        assert_eq!(behind(250, s(1), 100), Duration::from_millis(1500));
    }
}
