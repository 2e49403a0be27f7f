//! Transcript tests: each `tests/transcripts/*.txt` is a shell session
//! against a real standalone server on an ephemeral loopback port.
//! Lines starting with `> ` are typed; `.. ` lines continue an unfinished
//! command (each earlier part must be incomplete on its own, as the
//! interactive shell sees it); everything else is the expected output.
//! Times, current timestamps and the server's port are masked.
//! A header line `#! interactive` echoes return values (`=> …`);
//! `#! set name=value` sets a setting of both the server and the shell.
//!
//! `FERROBASE_UPDATE_TRANSCRIPTS=1 cargo test -p ferrobase-shell --test
//! transcripts` rewrites the files with the actual output (review the diff).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use anyhow::{Context, Result};
use ferrobase_server::Standalone;
use ferrobase_shell::Shell;
use ferrobase_types::Settings;
use regex::Regex;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Output shared between the shell and the test.
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

impl Capture {
    fn take(&self) -> String {
        let mut v = self.0.lock().unwrap();
        String::from_utf8_lossy(&std::mem::take(&mut *v)).into_owned()
    }
}

struct Block {
    lines: Vec<String>,
}

/// Header lines and blocks of typed input.
fn parse(text: &str) -> (Vec<String>, Vec<Block>) {
    let mut header = Vec::new();
    let mut blocks: Vec<Block> = Vec::new();
    for line in text.lines() {
        if let Some(cmd) = line.strip_prefix("> ") {
            blocks.push(Block {
                lines: vec![cmd.to_string()],
            });
        } else if let (Some(cont), Some(b)) = (line.strip_prefix(".. "), blocks.last_mut()) {
            b.lines.push(cont.to_string());
        } else if blocks.is_empty() {
            header.push(line.to_string());
        }
    }
    (header, blocks)
}

fn mask(text: &str, masks: &[(Regex, &str)]) -> String {
    let mut t = text.to_string();
    for (re, with) in masks {
        t = re.replace_all(&t, *with).into_owned();
    }
    t
}

async fn run_transcript(path: &Path, masks: &[(Regex, &str)]) -> Result<(String, String)> {
    let expected = std::fs::read_to_string(path)?;
    let (header, blocks) = parse(&expected);
    let dir = tempfile::tempdir()?;
    let mut settings = Settings {
        memory_size: 256 * 1024 * 1024,
        client_retries: 3,
        client_pause_ms: 20,
        ..Settings::default()
    };
    for h in &header {
        if let Some(kv) = h.strip_prefix("#! set ") {
            settings.apply_override(kv)?;
        }
    }
    let server = Standalone::start(dir.path(), settings.clone(), "127.0.0.1:0".parse()?).await?;
    let capture = Capture::default();
    let mut shell = Shell::new(
        &server.addr().to_string(),
        settings,
        Box::new(capture.clone()),
    )?;
    shell.interactive = header.iter().any(|h| h.trim() == "#! interactive");
    let mut actual = String::new();
    for h in &header {
        actual.push_str(h);
        actual.push('\n');
    }
    for b in &blocks {
        for i in 1..b.lines.len() {
            let prefix = b.lines[..i].join("\n");
            anyhow::ensure!(
                Shell::is_incomplete(&prefix),
                "{}: '{prefix}' is complete, so the next line would be a new command",
                path.display()
            );
        }
        let input = b.lines.join("\n");
        actual.push_str(&format!("> {}\n", b.lines[0]));
        for l in &b.lines[1..] {
            actual.push_str(&format!(".. {l}\n"));
        }
        shell.run_text(&input, false).await;
        actual.push_str(&mask(&capture.take(), masks));
    }
    server.stop().await?;
    Ok((expected, actual))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transcripts() -> Result<()> {
    let masks = vec![
        (Regex::new(r"Took \d+\.\d{4} seconds")?, "Took X seconds"),
        (
            Regex::new(r"timestamp=20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}")?,
            "timestamp=NOW",
        ),
        (Regex::new(r"127\.0\.0\.1:\d+")?, "ADDR"),
        (Regex::new(r"127\.0\.0\.1,\d+,0")?, "HOST,PORT,STARTCODE"),
        (
            Regex::new(r"\(20\d\d-\d\d-\d\d \d\d:\d\d:\d\d \+0000\)")?,
            "(CREATION TIME)",
        ),
    ];
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    anyhow::ensure!(!files.is_empty(), "no transcripts in {}", dir.display());
    let update = std::env::var_os("FERROBASE_UPDATE_TRANSCRIPTS").is_some();
    let mut failures = Vec::new();
    for f in &files {
        let (expected, actual) = run_transcript(f, &masks)
            .await
            .with_context(|| format!("running {}", f.display()))?;
        if expected == actual {
            continue;
        }
        if update {
            std::fs::write(f, &actual)?;
            continue;
        }
        let (line, exp, act) = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .find(|(_, (e, a))| e != a)
            .map(|(i, (e, a))| (i + 1, e.to_string(), a.to_string()))
            .unwrap_or((
                expected.lines().count().min(actual.lines().count()) + 1,
                "<end>".into(),
                "<end>".into(),
            ));
        failures.push(format!(
            "{}: first difference at line {line}\n  expected: {exp}\n  actual:   {act}\n--- actual transcript ---\n{actual}",
            f.display()
        ));
    }
    anyhow::ensure!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}
