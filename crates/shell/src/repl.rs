//! Where commands come from: `-e "cmd; cmd"`, a script file, standard
//! input, or an interactive terminal with line editing (rustyline),
//! history in `~/.ferrobase_shell_history`, multi-line input for an
//! unfinished command and Ctrl-C to cancel the line.
//!
//! Non-interactive runs stop at the first error and exit non-zero; the
//! interactive shell reports the error and keeps going. This module never
//! interprets commands (the [`Shell`] does).

use crate::session::{Outcome, Shell};
use ferrobase_types::Settings;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;

/// The standalone server's default address.
pub const DEFAULT_SERVER: &str = "127.0.0.1:16020";

/// How the shell was started.
#[derive(Clone, Debug)]
pub struct Options {
    /// The master's address (`host:port`).
    pub server: String,
    /// Commands given with `-e`.
    pub execute: Option<String>,
    /// A script file to run.
    pub file: Option<PathBuf>,
    pub settings: Settings,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            server: DEFAULT_SERVER.to_string(),
            execute: None,
            file: None,
            settings: Settings::default(),
        }
    }
}

/// Runs the shell; returns the process exit code (0: every command
/// succeeded or the interactive session ended).
pub fn run(opts: Options) -> i32 {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ERROR: cannot start the async runtime: {e}");
            return 1;
        }
    };
    // Channels are created lazily but need a runtime to exist.
    let _runtime = rt.enter();
    let mut shell = match Shell::new(
        &opts.server,
        opts.settings.clone(),
        Box::new(std::io::stdout()),
    ) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ERROR: {e}");
            return 1;
        }
    };
    let tty = std::io::stdout().is_terminal();
    if tty {
        shell.set_width(terminal_width());
    }
    let script = if let Some(text) = &opts.execute {
        Some(text.clone())
    } else if let Some(path) = &opts.file {
        match std::fs::read_to_string(path) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("ERROR: cannot read script {}: {e}", path.display());
                return 1;
            }
        }
    } else if !std::io::stdin().is_terminal() {
        let mut text = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("ERROR: cannot read standard input: {e}");
            return 1;
        }
        Some(text)
    } else {
        None
    };
    match script {
        Some(text) => match rt.block_on(shell.run_text(&text, true)) {
            Outcome::Failed => 1,
            Outcome::Ok | Outcome::Exit => 0,
        },
        None => {
            shell.interactive = true;
            interactive(&rt, &mut shell)
        }
    }
}

/// The terminal's width from `COLUMNS`, else HBase's usual 100.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&w: &usize| w >= 20)
        .unwrap_or(100)
}

fn history_path() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".ferrobase_shell_history"))
}

fn interactive(rt: &tokio::runtime::Runtime, shell: &mut Shell) -> i32 {
    let mut editor = match DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("ERROR: cannot open the terminal: {e}");
            return 1;
        }
    };
    let history = history_path();
    if let Some(h) = &history {
        // No history yet is normal on the first run.
        let _ = editor.load_history(h);
    }
    println!(
        "ferrobase shell {}; enter 'help<RETURN>' for a list of commands, 'exit<RETURN>' to leave.\nConnected to {}",
        env!("CARGO_PKG_VERSION"),
        shell.address
    );
    let mut buffer = String::new();
    let mut n = 1;
    loop {
        let prompt = format!(
            "ferrobase:{n:03}:0{} ",
            if buffer.is_empty() { '>' } else { '*' }
        );
        match editor.readline(&prompt) {
            Ok(line) => {
                if !buffer.is_empty() {
                    buffer.push('\n');
                }
                buffer.push_str(&line);
                if Shell::is_incomplete(&buffer) {
                    continue;
                }
                let text = std::mem::take(&mut buffer);
                n += 1;
                if text.trim().is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(text.as_str());
                if rt.block_on(shell.run_text(&text, false)) == Outcome::Exit {
                    break;
                }
            }
            // Ctrl-C cancels the line being typed, as in HBase's shell.
            Err(ReadlineError::Interrupted) => {
                buffer.clear();
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("ERROR: {e}");
                break;
            }
        }
    }
    if let Some(h) = &history
        && let Err(e) = editor.save_history(h)
    {
        eprintln!("warning: cannot save history to {}: {e}", h.display());
    }
    0
}
