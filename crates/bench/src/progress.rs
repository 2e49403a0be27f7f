//! Progress of a run on stderr: a bar with rate and ETA on a terminal,
//! a plain status line every 5 s otherwise (pipes, CI logs), nothing when
//! quiet. Never writes to stdout, which carries the results (and `--json`).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// See the module docs.
pub struct Progress {
    bar: Option<ProgressBar>,
    lines: bool,
    what: String,
    total: u64,
    start: Instant,
    last_line: Instant,
}

impl Progress {
    /// Progress over `total` units of `what` (e.g. "rows").
    pub fn new(what: &str, total: u64, quiet: bool) -> Progress {
        let tty = !quiet && std::io::stderr().is_terminal();
        let bar = tty.then(|| {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} {msg} [{elapsed_precise}, ETA {eta}]",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        });
        Progress {
            bar,
            lines: !quiet && !tty,
            what: what.to_string(),
            total,
            start: Instant::now(),
            last_line: Instant::now(),
        }
    }

    /// Progress over `total` bytes, shown as sizes, with the rate of a
    /// second unit (`rate_of`, e.g. "rows") given by [`set_counting`](Self::set_counting).
    pub fn bytes(total: u64, rate_of: &str, quiet: bool) -> Progress {
        let p = Progress::new(rate_of, total, quiet);
        if let Some(b) = &p.bar {
            b.set_style(
                ProgressStyle::with_template(
                    "{bar:40} {bytes}/{total_bytes} {msg} [{elapsed_precise}, ETA {eta}]",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
        }
        p
    }

    /// Reports `done` bytes and `count` units of the second unit so far
    /// (a [`bytes`](Self::bytes) progress).
    pub fn set_counting(&mut self, done: u64, count: u64) {
        let secs = self.start.elapsed().as_secs_f64().max(1e-9);
        let rate = count as f64 / secs;
        if let Some(b) = &self.bar {
            b.set_position(done);
            b.set_message(format!("{count} {}, {rate:.0} {}/s", self.what, self.what));
        } else if self.lines && self.last_line.elapsed() >= Duration::from_secs(5) {
            self.last_line = Instant::now();
            let pct = 100.0 * done as f64 / self.total.max(1) as f64;
            let eta = if done > 0 {
                secs * (self.total.saturating_sub(done)) as f64 / done as f64
            } else {
                0.0
            };
            eprintln!(
                "{done}/{} bytes ({pct:.0}%), {count} {} ({rate:.0}/s), ETA {eta:.0} s",
                self.total, self.what
            );
        }
    }

    /// Reports `done` units so far.
    pub fn set(&mut self, done: u64) {
        let rate = done as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
        if let Some(b) = &self.bar {
            b.set_position(done);
            b.set_message(format!("{rate:.0} {}/s", self.what));
        } else if self.lines && self.last_line.elapsed() >= Duration::from_secs(5) {
            self.last_line = Instant::now();
            eprintln!("{done}/{} {} ({rate:.0}/s)", self.total, self.what);
        }
    }

    /// Ends the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Awaits every task, updating `progress` from `done` every 100 ms;
/// returns as soon as the last task ends.
pub async fn join_all<T>(
    tasks: Vec<tokio::task::JoinHandle<T>>,
    done: &std::sync::atomic::AtomicU64,
    progress: &mut Progress,
) -> Vec<Result<T, tokio::task::JoinError>> {
    join_all_with(tasks, progress, |p| {
        p.set(done.load(std::sync::atomic::Ordering::Relaxed))
    })
    .await
}

/// [`join_all`] with the caller's update of `progress` every 100 ms.
pub async fn join_all_with<T>(
    tasks: Vec<tokio::task::JoinHandle<T>>,
    progress: &mut Progress,
    mut update: impl FnMut(&mut Progress),
) -> Vec<Result<T, tokio::task::JoinError>> {
    let all = async {
        let mut out = Vec::with_capacity(tasks.len());
        for t in tasks {
            out.push(t.await);
        }
        out
    };
    tokio::pin!(all);
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tokio::select! {
            out = &mut all => {
                progress.finish();
                return out;
            }
            _ = tick.tick() => update(progress),
        }
    }
}
