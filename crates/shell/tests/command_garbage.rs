//! Every command with seeded random arguments (wrong kinds, wrong counts,
//! unknown keys, binary bytes) against a real standalone server: each one
//! succeeds or prints an `ERROR:`, none panics, and the server still
//! answers afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use anyhow::Result;
use ferrobase_server::Standalone;
use ferrobase_shell::commands::COMMANDS;
use ferrobase_shell::{Outcome, Shell};
use ferrobase_types::Settings;
use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const ATOMS: &[&str] = &[
    "'g'",
    "'nosuch'",
    "'f'",
    "'f:q'",
    "'f:'",
    "':q'",
    "\"r\\x00\\xFF\"",
    "'r1'",
    "''",
    "0",
    "1",
    "2",
    "-1",
    "true",
    "nil",
    "NAME",
    "'delete'",
    "'simple'",
];
const KEYS: &[&str] = &[
    "NAME",
    "VERSIONS",
    "TTL",
    "COLUMNS",
    "COLUMN",
    "LIMIT",
    "STARTROW",
    "STOPROW",
    "FILTER",
    "TIMERANGE",
    "TIMESTAMP",
    "REVERSED",
    "INTERVAL",
    "METHOD",
    "SPLITS",
    "NUMREGIONS",
    "SPLITALGO",
    "COMPRESSION",
    "BLOOMFILTER",
    "BOGUS",
    "'delete'",
    "ROWPREFIXFILTER",
];
const FILTERS: &[&str] = &[
    "\"PrefixFilter('r')\"",
    "\"KeyOnlyFilter()\"",
    "\"ValueFilter(=\"",
    "\"x\"",
];

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn value(&mut self, depth: usize) -> String {
        match self.below(if depth > 1 { 3 } else { 6 }) {
            0..=2 => ATOMS[self.below(ATOMS.len())].to_string(),
            3 => {
                let n = self.below(4);
                let items: Vec<String> = (0..n).map(|_| self.value(depth + 1)).collect();
                format!("[{}]", items.join(", "))
            }
            4 => FILTERS[self.below(FILTERS.len())].to_string(),
            _ => {
                let n = self.below(4);
                let pairs: Vec<String> = (0..n)
                    .map(|_| {
                        let k = KEYS[self.below(KEYS.len())];
                        format!("{k} => {}", self.value(depth + 1))
                    })
                    .collect();
                format!("{{{}}}", pairs.join(", "))
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_arguments_never_panic() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let settings = Settings {
        memory_size: 256 * 1024 * 1024,
        client_retries: 1,
        client_pause_ms: 10,
        ..Settings::default()
    };
    let server = Standalone::start(dir.path(), settings.clone(), "127.0.0.1:0".parse()?).await?;
    let capture = Capture::default();
    let mut shell = Shell::new(
        &server.addr().to_string(),
        settings,
        Box::new(capture.clone()),
    )?;
    assert_eq!(shell.run_text("create 'g', 'f'", true).await, Outcome::Ok);
    let names: Vec<&str> = COMMANDS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !matches!(*n, "exit" | "quit"))
        .collect();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut failed = 0;
    for _ in 0..300 {
        let name = names[rng.below(names.len())];
        let n = rng.below(6);
        let args: Vec<String> = (0..n).map(|_| rng.value(0)).collect();
        let line = format!("{name} {}", args.join(", "));
        if shell.run_text(&line, false).await == Outcome::Failed {
            failed += 1;
        }
    }
    // Most random calls are wrong; each wrong one printed an ERROR.
    let out = String::from_utf8_lossy(&capture.0.lock().unwrap()).into_owned();
    assert!(failed > 0);
    assert_eq!(out.matches("ERROR: ").count(), failed, "{out}");
    assert_eq!(shell.run_text("exists 'g'", true).await, Outcome::Ok);
    server.stop().await?;
    Ok(())
}
