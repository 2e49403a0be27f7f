//! Latency recording: an HdrHistogram of microseconds (1 µs to 1 hour,
//! 3 significant digits) and its summary (count, mean, p50/p95/p99/p99.9,
//! max).

use hdrhistogram::Histogram;
use serde::Serialize;
use std::time::Duration;

/// A latency histogram in microseconds.
#[derive(Clone, Debug)]
pub struct Latency {
    hist: Histogram<u64>,
}

impl Default for Latency {
    fn default() -> Self {
        Latency::new()
    }
}

/// Percentiles of a [`Latency`], in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub min_us: u64,
    pub p50_us: u64,
    pub p95_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
}

const HIGHEST_US: u64 = 3_600_000_000;

impl Latency {
    pub fn new() -> Latency {
        // Constant, valid bounds: this cannot fail.
        #[allow(clippy::expect_used)]
        let hist = Histogram::new_with_bounds(1, HIGHEST_US, 3).expect("valid histogram bounds");
        Latency { hist }
    }

    /// Records one duration (clamped to the histogram's range).
    pub fn record(&mut self, d: Duration) {
        let us = (d.as_micros() as u64).clamp(1, HIGHEST_US);
        let _ = self.hist.record(us);
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &Latency) {
        let _ = self.hist.add(&other.hist);
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// The value at quantile `q` (0..=1), in microseconds.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.hist.is_empty() {
            0
        } else {
            self.hist.value_at_quantile(q)
        }
    }

    /// Clears every count.
    pub fn reset(&mut self) {
        self.hist.reset();
    }

    pub fn summary(&self) -> LatencySummary {
        let h = &self.hist;
        if h.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            count: h.len(),
            mean_us: h.mean(),
            min_us: h.min(),
            p50_us: h.value_at_quantile(0.50),
            p95_us: h.value_at_quantile(0.95),
            p99_us: h.value_at_quantile(0.99),
            p999_us: h.value_at_quantile(0.999),
            max_us: h.max(),
        }
    }
}

impl LatencySummary {
    /// `p50 1.2 ms, p95 …` for people.
    pub fn line(&self) -> String {
        let ms = |us: u64| format!("{:.2}", us as f64 / 1000.0);
        format!(
            "p50 {} ms, p95 {} ms, p99 {} ms, p99.9 {} ms, max {} ms ({} samples)",
            ms(self.p50_us),
            ms(self.p95_us),
            ms(self.p99_us),
            ms(self.p999_us),
            ms(self.max_us),
            self.count
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_known_samples() {
        let mut a = Latency::new();
        for us in 1..=1000u64 {
            a.record(Duration::from_micros(us));
        }
        let mut b = Latency::new();
        b.record(Duration::from_secs(2));
        a.merge(&b);
        let s = a.summary();
        assert_eq!(s.count, 1001);
        assert!((499..=501).contains(&s.p50_us), "{s:?}");
        assert!((989..=991).contains(&s.p99_us), "{s:?}");
        assert!(s.max_us >= 1_999_000, "{s:?}");
        assert_eq!(Latency::new().summary(), LatencySummary::default());
    }
}
