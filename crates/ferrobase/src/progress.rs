//! Progress for long commands: a bar on a terminal, plain status lines
//! every few seconds otherwise (CI logs, pipes).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// See the module docs.
pub struct Progress {
    bar: Option<ProgressBar>,
    what: String,
    total: u64,
    start: Instant,
    last_line: Instant,
}

impl Progress {
    /// Progress over `total` units of `what` (e.g. "rows").
    pub fn new(what: &str, total: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
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
            what: what.to_string(),
            total,
            start: Instant::now(),
            last_line: Instant::now(),
        }
    }

    /// Reports `done` units so far.
    pub fn set(&mut self, done: u64) {
        let rate = done as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
        if let Some(b) = &self.bar {
            b.set_position(done);
            b.set_message(format!("{rate:.0} {}/s", self.what));
        } else if self.last_line.elapsed() >= Duration::from_secs(5) {
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
