//! The slow-request log: a call that took longer than
//! `hbase.ipc.warn.response.time` or answered more than
//! `hbase.ipc.warn.response.size` bytes is logged as HBase's
//! `(responseTooSlow)` / `(responseTooLarge)` JSON line (a tracing warning,
//! target `ferrobase::slow_log`) and kept in a ring of the most recent ones
//! for the region server's page.
//!
//! The check on every call is two comparisons; the ring's lock is taken
//! only for a call over a limit. This module never times calls itself
//! ([`rpc_metrics`](crate::rpc_metrics) does).

use parking_lot::Mutex;
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Slow calls kept for the region server page.
pub const RING_SIZE: usize = 100;

/// A finished call, as [`SlowLog::check`] sees it.
pub struct Call<'a> {
    /// The call's id in this process (its `rpc` span's `request_id`).
    pub request_id: u64,
    /// `grpc` or `hbase`.
    pub protocol: &'static str,
    /// The operation (`get`, `put`, `multi`, …).
    pub method: &'static str,
    /// How long it took (it ended now).
    pub elapsed: Duration,
    /// Bytes answered.
    pub response_bytes: u64,
    /// What it was about (built only for a slow call).
    pub param: &'a dyn Fn() -> String,
    /// The client's address, when known.
    pub client: Option<std::net::SocketAddr>,
}

/// One logged call, in HBase's field names.
#[derive(Clone, Debug, Serialize)]
pub struct SlowCall {
    /// `responseTooSlow`, `responseTooLarge`, or `responseTooSlow,responseTooLarge`.
    #[serde(skip)]
    pub tag: &'static str,
    pub requestid: u64,
    pub method: &'static str,
    pub protocol: &'static str,
    pub starttimems: u64,
    pub processingtimems: u64,
    pub responsesize: u64,
    pub param: String,
    pub client: String,
    pub class: &'static str,
}

/// The thresholds and the ring.
pub struct SlowLog {
    warn_time: Duration,
    warn_size: u64,
    ring: Mutex<VecDeque<SlowCall>>,
    slow: AtomicU64,
    large: AtomicU64,
}

impl SlowLog {
    /// Limits: `warn_time_ms` (`hbase.ipc.warn.response.time`) and
    /// `warn_size` bytes (`hbase.ipc.warn.response.size`); 0 disables one.
    pub fn new(warn_time_ms: u64, warn_size: u64) -> SlowLog {
        SlowLog {
            warn_time: if warn_time_ms == 0 {
                Duration::MAX
            } else {
                Duration::from_millis(warn_time_ms)
            },
            warn_size: if warn_size == 0 { u64::MAX } else { warn_size },
            ring: Mutex::new(VecDeque::with_capacity(RING_SIZE)),
            slow: AtomicU64::new(0),
            large: AtomicU64::new(0),
        }
    }

    /// Logs and keeps `call` when it passed a limit.
    pub fn check(&self, call: Call<'_>) {
        let too_slow = call.elapsed > self.warn_time;
        let too_large = call.response_bytes > self.warn_size;
        if !too_slow && !too_large {
            return;
        }
        let tag = match (too_slow, too_large) {
            (true, true) => "responseTooSlow,responseTooLarge",
            (true, false) => "responseTooSlow",
            _ => "responseTooLarge",
        };
        if too_slow {
            self.slow.fetch_add(1, Ordering::Relaxed);
        }
        if too_large {
            self.large.fetch_add(1, Ordering::Relaxed);
        }
        let entry = SlowCall {
            tag,
            requestid: call.request_id,
            method: call.method,
            protocol: call.protocol,
            // Only a logged call pays for reading the wall clock.
            starttimems: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64)
                .saturating_sub(call.elapsed.as_millis() as u64),
            processingtimems: call.elapsed.as_millis() as u64,
            responsesize: call.response_bytes,
            param: (call.param)(),
            client: call.client.map(|c| c.to_string()).unwrap_or_default(),
            class: "HRegionServer",
        };
        let json = serde_json::to_string(&entry).unwrap_or_default();
        tracing::warn!(target: "ferrobase::slow_log", "({tag}): {json}");
        let mut ring = self.ring.lock();
        if ring.len() == RING_SIZE {
            ring.pop_front();
        }
        ring.push_back(entry);
    }

    /// The kept calls, newest first.
    pub fn recent(&self) -> Vec<SlowCall> {
        self.ring.lock().iter().rev().cloned().collect()
    }

    /// Calls over the time limit so far.
    pub fn too_slow(&self) -> u64 {
        self.slow.load(Ordering::Relaxed)
    }

    /// Calls over the size limit so far.
    pub fn too_large(&self) -> u64 {
        self.large.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(ms: u64, bytes: u64) -> Call<'static> {
        Call {
            request_id: 7,
            protocol: "grpc",
            method: "get",
            elapsed: Duration::from_millis(ms),
            response_bytes: bytes,
            param: &|| "region=1".to_string(),
            client: None,
        }
    }

    #[test]
    fn keeps_only_calls_over_a_limit_newest_first_bounded() {
        let log = SlowLog::new(10, 1000);
        log.check(call(5, 10));
        assert!(log.recent().is_empty());
        log.check(call(11, 10));
        log.check(call(1, 1001));
        let recent = log.recent();
        assert_eq!(recent.len(), 2);
        assert_eq!(recent[0].tag, "responseTooLarge");
        assert_eq!(recent[1].tag, "responseTooSlow");
        assert_eq!((log.too_slow(), log.too_large()), (1, 1));
        for _ in 0..RING_SIZE + 5 {
            log.check(call(20, 0));
        }
        assert_eq!(log.recent().len(), RING_SIZE);
    }

    #[test]
    fn zero_disables_a_limit() {
        let log = SlowLog::new(0, 0);
        log.check(call(u64::from(u32::MAX), u64::MAX - 1));
        assert!(log.recent().is_empty());
    }
}
