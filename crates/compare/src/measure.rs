//! Peak resident memory, directory sizes and progress lines.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Resets the process's peak-RSS high-water mark (`VmHWM`) to the current
/// RSS by writing `5` to `/proc/self/clear_refs`. Returns false where the
/// kernel does not allow it (the peak then covers the whole process life).
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// A `kB` field of `/proc/self/status`, in MiB.
fn status_mb(field: &str) -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Peak RSS since the last [`reset_peak_rss`], in MiB.
pub fn peak_rss_mb() -> Option<f64> {
    status_mb("VmHWM:")
}

/// Current RSS, in MiB.
pub fn rss_mb() -> Option<f64> {
    status_mb("VmRSS:")
}

/// Apparent size (sum of file lengths) of everything under `dir`, in MiB.
pub fn dir_size_mb(dir: &Path) -> f64 {
    fn walk(dir: &Path) -> u64 {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return 0;
        };
        entries
            .filter_map(|e| e.ok())
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => walk(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    }
    walk(dir) as f64 / 1048576.0
}

/// A counter the workers bump and a reporter thread prints to stderr.
pub struct Progress {
    pub done: AtomicU64,
    stop: AtomicBool,
}

impl Progress {
    /// Runs `work` while printing `label: done/total` every 5 seconds;
    /// returns its result and how long it took (the reporter excluded).
    pub fn run<T>(label: &str, total: u64, work: impl FnOnce(&Progress) -> T) -> (T, Duration) {
        let progress = Progress {
            done: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        };
        std::thread::scope(|s| {
            let reporter = s.spawn(|| progress.report(label, total));
            let start = Instant::now();
            let out = work(&progress);
            let took = start.elapsed();
            progress.stop.store(true, Ordering::Relaxed);
            reporter.thread().unpark();
            (out, took)
        })
    }

    fn report(&self, label: &str, total: u64) {
        let start = Instant::now();
        let mut last_print = start;
        let mut last_done = 0u64;
        while !self.stop.load(Ordering::Relaxed) {
            std::thread::park_timeout(Duration::from_millis(500));
            if self.stop.load(Ordering::Relaxed) || last_print.elapsed() < Duration::from_secs(5) {
                continue;
            }
            let done = self.done.load(Ordering::Relaxed);
            let interval = last_print.elapsed().as_secs_f64();
            eprintln!(
                "  {label}: {done}/{total} ({:.1}%), {:.0}/s now, {:.0}/s overall, RSS {:.0} MB",
                100.0 * done as f64 / total.max(1) as f64,
                (done - last_done) as f64 / interval,
                done as f64 / start.elapsed().as_secs_f64(),
                rss_mb().unwrap_or(0.0)
            );
            last_print = Instant::now();
            last_done = done;
        }
    }
}
