//! YCSB's measurements and its text output: the final summary
//! (`[OVERALL], RunTime(ms), …`, then per operation `Operations`,
//! `AverageLatency(us)`, `MinLatency(us)`, `MaxLatency(us)`,
//! `95thPercentileLatency(us)`, `99thPercentileLatency(us)`, `Return=…`)
//! and the status line printed every 10 s. Numbers are printed as Java
//! prints them (`Double.toString`; `DecimalFormat("#.##")` in status lines).

use crate::latency::Latency;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One operation kind's counts.
#[derive(Clone, Debug, Default)]
pub struct OpStats {
    pub total: Latency,
    /// Since the last status line.
    pub interval: Latency,
    /// Return code (`OK`, `NOT_FOUND`, `ERROR`) → count.
    pub returns: BTreeMap<String, u64>,
}

/// Every operation kind's counts, in YCSB's print order.
#[derive(Clone, Debug, Default)]
pub struct Measurements {
    pub ops: BTreeMap<String, OpStats>,
    /// Top-level operations done (a read-modify-write counts once, as in
    /// YCSB, though it is measured as READ, UPDATE and READ-MODIFY-WRITE).
    pub done: u64,
}

/// Order of operation kinds in the output.
const ORDER: [&str; 6] = [
    "READ",
    "UPDATE",
    "INSERT",
    "SCAN",
    "READ-MODIFY-WRITE",
    "CLEANUP",
];

impl Measurements {
    /// Records one operation.
    pub fn record(&mut self, op: &str, latency: Duration, status: &str) {
        let s = self.ops.entry(op.to_string()).or_default();
        s.total.record(latency);
        s.interval.record(latency);
        *s.returns.entry(status.to_string()).or_default() += 1;
    }

    /// Top-level operations done.
    pub fn operations(&self) -> u64 {
        self.done
    }

    /// Operations that returned ERROR.
    pub fn errors(&self) -> u64 {
        self.ops
            .values()
            .filter_map(|s| s.returns.get("ERROR"))
            .sum()
    }

    fn ordered(&self) -> Vec<(&String, &OpStats)> {
        let mut v: Vec<_> = self.ops.iter().collect();
        v.sort_by_key(|(k, _)| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
        v
    }
}

/// `Double.toString` of Java.
pub fn java_double(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = v.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = format!("{v}");
        if s.contains('.') { s } else { format!("{s}.0") }
    } else {
        let s = format!("{v:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') {
            m.to_string()
        } else {
            format!("{m}.0")
        };
        format!("{m}E{e}")
    }
}

/// `DecimalFormat("#.##")`: at most two decimals, no trailing zeros
/// (half-even rounding, as Java's default).
pub fn decimal2(v: f64) -> String {
    let scaled = v * 100.0;
    let r = scaled.round_ties_even() / 100.0;
    let s = format!("{r:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_string() }
}

/// YCSB's final summary.
pub fn summary(m: &Measurements, runtime: Duration) -> String {
    let ms = runtime.as_millis() as u64;
    let ops = m.operations();
    let mut out = format!("[OVERALL], RunTime(ms), {ms}\n");
    let tput = if ms == 0 {
        0.0
    } else {
        ops as f64 * 1000.0 / ms as f64
    };
    out += &format!("[OVERALL], Throughput(ops/sec), {}\n", java_double(tput));
    for (name, s) in m.ordered() {
        let h = s.total.summary();
        out += &format!("[{name}], Operations, {}\n", h.count);
        out += &format!("[{name}], AverageLatency(us), {}\n", java_double(h.mean_us));
        out += &format!("[{name}], MinLatency(us), {}\n", h.min_us);
        out += &format!("[{name}], MaxLatency(us), {}\n", h.max_us);
        out += &format!("[{name}], 95thPercentileLatency(us), {}\n", h.p95_us);
        out += &format!("[{name}], 99thPercentileLatency(us), {}\n", h.p99_us);
        for (code, n) in &s.returns {
            out += &format!("[{name}], Return={code}, {n}\n");
        }
    }
    out
}

/// YCSB's status line: `2026-11-30 21:40:00:123 10 sec: 12345 operations;
/// 1234.5 current ops/sec; [READ: Count=…, Max=…, Min=…, Avg=…, 90=…,
/// 99=…, 99.9=…, 99.99=…] …`. Resets the interval histograms.
pub fn status_line(
    m: &mut Measurements,
    elapsed: Duration,
    since_last_ops: u64,
    since_last: Duration,
    now: SystemTime,
) -> String {
    let total = m.operations();
    let rate = since_last_ops as f64 / since_last.as_secs_f64().max(1e-9);
    let mut line = format!(
        "{} {} sec: {} operations; {} current ops/sec;",
        timestamp(now),
        elapsed.as_secs(),
        total,
        decimal2(rate)
    );
    let mut names: Vec<String> = m.ops.keys().cloned().collect();
    names.sort_by_key(|k| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
    for name in names {
        if let Some(s) = m.ops.get_mut(&name) {
            let h = s.interval.summary();
            if h.count > 0 {
                line += &format!(
                    " [{name}: Count={}, Max={}, Min={}, Avg={}, 90={}, 99={}, 99.9={}, 99.99={}]",
                    h.count,
                    h.max_us,
                    h.min_us,
                    decimal2(h.mean_us),
                    s.interval.quantile(0.90),
                    h.p99_us,
                    h.p999_us,
                    s.interval.quantile(0.9999)
                );
            }
            s.interval.reset();
        }
    }
    line
}

/// `yyyy-MM-dd HH:mm:ss:SSS` (UTC), YCSB's status time format.
pub fn timestamp(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}:{:03}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// The summary as JSON (for `--json`).
#[derive(Clone, Debug, Serialize)]
pub struct JsonSummary {
    pub runtime_ms: u64,
    pub throughput_ops_per_s: f64,
    pub operations: BTreeMap<String, serde_json::Value>,
    /// What the server did during the phase (absent for an HBase target).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::target::Stalls>,
}

impl JsonSummary {
    pub fn new(m: &Measurements, runtime: Duration) -> JsonSummary {
        let ms = runtime.as_millis() as u64;
        let operations = m
            .ordered()
            .into_iter()
            .map(|(k, s)| {
                (
                    k.clone(),
                    serde_json::json!({ "latency": s.total.summary(), "returns": s.returns }),
                )
            })
            .collect();
        JsonSummary {
            runtime_ms: ms,
            throughput_ops_per_s: if ms == 0 {
                0.0
            } else {
                m.operations() as f64 * 1000.0 / ms as f64
            },
            operations,
            server: None,
        }
    }
}

/// YCSB-style lines of what the server did during a phase (a `[SERVER]`
/// section, after YCSB's own): flushes, compactions, stalls and the block
/// cache hit ratio.
pub fn server_section(d: &crate::target::Stalls) -> String {
    let mut out = String::new();
    for (what, v) in [
        ("Flushes", d.flushes),
        ("Compactions", d.compactions),
        ("BlockedWrites", d.blocked_writes),
        ("BlockedMs", d.blocked_ms),
        ("TooBusy", d.too_busy),
        ("DelayedFlushes", d.delayed_flushes),
        ("ForcedFlushesGlobal", d.forced_flushes_global),
        ("ForcedFlushesWal", d.forced_flushes_wal),
        ("BlockCacheHits", d.cache_hits),
        ("BlockCacheMisses", d.cache_misses),
    ] {
        out += &format!("[SERVER], {what}, {v}\n");
    }
    if let Some(r) = d.hit_ratio() {
        out += &format!("[SERVER], BlockCacheHitRatio(%), {}\n", decimal2(r * 100.0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_number_formats() {
        assert_eq!(java_double(98.91196834817013), "98.91196834817013");
        assert_eq!(java_double(100.0), "100.0");
        assert_eq!(java_double(0.0), "0.0");
        assert_eq!(java_double(1.5e7), "1.5E7");
        assert_eq!(java_double(2.0e7), "2.0E7");
        assert_eq!(java_double(1.0e-4), "1.0E-4");
        assert_eq!(decimal2(1234.5), "1234.5");
        assert_eq!(decimal2(12.0), "12");
        assert_eq!(decimal2(0.125), "0.12");
        assert_eq!(decimal2(2.3456), "2.35");
    }

    #[test]
    fn summary_golden() {
        let mut m = Measurements::default();
        for us in [100u64, 200, 300, 400] {
            m.record("READ", Duration::from_micros(us), "OK");
        }
        m.record("READ", Duration::from_micros(500), "NOT_FOUND");
        m.record("UPDATE", Duration::from_micros(1000), "OK");
        m.record("CLEANUP", Duration::from_micros(7), "OK");
        m.done = 6;
        let text = summary(&m, Duration::from_millis(2000));
        let golden = "\
[OVERALL], RunTime(ms), 2000
[OVERALL], Throughput(ops/sec), 3.0
[READ], Operations, 5
[READ], AverageLatency(us), 300.0
[READ], MinLatency(us), 100
[READ], MaxLatency(us), 500
[READ], 95thPercentileLatency(us), 500
[READ], 99thPercentileLatency(us), 500
[READ], Return=NOT_FOUND, 1
[READ], Return=OK, 4
[UPDATE], Operations, 1
[UPDATE], AverageLatency(us), 1000.0
[UPDATE], MinLatency(us), 1000
[UPDATE], MaxLatency(us), 1000
[UPDATE], 95thPercentileLatency(us), 1000
[UPDATE], 99thPercentileLatency(us), 1000
[UPDATE], Return=OK, 1
[CLEANUP], Operations, 1
[CLEANUP], AverageLatency(us), 7.0
[CLEANUP], MinLatency(us), 7
[CLEANUP], MaxLatency(us), 7
[CLEANUP], 95thPercentileLatency(us), 7
[CLEANUP], 99thPercentileLatency(us), 7
[CLEANUP], Return=OK, 1
";
        assert_eq!(text, golden);
    }

    #[test]
    fn status_line_format_and_reset() {
        let mut m = Measurements::default();
        m.record("READ", Duration::from_micros(250), "OK");
        m.record("READ", Duration::from_micros(750), "OK");
        m.done = 2;
        let t = UNIX_EPOCH + Duration::from_millis(1_764_538_800_123);
        let line = status_line(
            &mut m,
            Duration::from_secs(10),
            2,
            Duration::from_secs(10),
            t,
        );
        assert_eq!(
            line,
            "2025-11-30 21:40:00:123 10 sec: 2 operations; 0.2 current ops/sec; [READ: Count=2, Max=750, Min=250, Avg=500, 90=750, 99=750, 99.9=750, 99.99=750]"
        );
        // The interval was reset: the next line shows no READ block.
        let line = status_line(
            &mut m,
            Duration::from_secs(20),
            0,
            Duration::from_secs(10),
            t,
        );
        assert!(line.ends_with("0 current ops/sec;"), "{line}");
    }
}
