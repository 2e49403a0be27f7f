//! A [`Shell`]: a connection, an output stream and the loop that parses
//! text, runs each command and prints its output, its `ERROR: …` and its
//! `Took 0.0123 seconds` the way the HBase shell does.
//!
//! It owns error reporting (syntax errors with a caret under the column);
//! it never reads input itself (the [`repl`](crate::repl) does).

use crate::ShellError;
use crate::commands::{self, Reply};
use crate::format::{Formatter, took};
use crate::parser::{Command, ParseError, parse};
use ferrobase_client::{Admin, Connection};
use ferrobase_types::Settings;
use std::io::Write;
use std::time::Instant;

/// How running some text ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every command succeeded.
    Ok,
    /// A command (or the syntax) failed; the error was printed.
    Failed,
    /// `exit` or `quit` was run.
    Exit,
}

/// A shell session against one cluster.
pub struct Shell {
    pub(crate) conn: Connection,
    pub(crate) admin: Admin,
    pub(crate) address: String,
    pub(crate) fmt: Formatter,
    out: Box<dyn Write + Send>,
    /// Interactive sessions echo return values (`=> true`) as IRB does.
    pub interactive: bool,
}

impl Shell {
    /// A shell talking to the master at `address`, printing to `out`.
    /// Must be called inside a tokio runtime (channels open lazily on it).
    pub fn new(
        address: &str,
        settings: Settings,
        out: Box<dyn Write + Send>,
    ) -> Result<Shell, ShellError> {
        let conn = Connection::connect(address, settings)?;
        Ok(Shell {
            admin: conn.admin(),
            conn,
            address: address.to_string(),
            fmt: Formatter { width: 0 },
            out,
            interactive: false,
        })
    }

    /// Pads output columns to a terminal of `width` columns (0: none).
    pub fn set_width(&mut self, width: usize) {
        self.fmt.width = width;
    }

    /// True when `text` is an unfinished command (an open string, array,
    /// dict or argument list) that more lines may complete.
    pub fn is_incomplete(text: &str) -> bool {
        matches!(parse(text), Err(ParseError::Incomplete(_)))
    }

    fn emit(&mut self, text: &str) {
        // A closed stdout (`| head`) must not kill the shell with a panic.
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
    }

    /// Parses and runs every command of `text`; with `stop_on_error` the
    /// first failure ends the run.
    pub async fn run_text(&mut self, text: &str, stop_on_error: bool) -> Outcome {
        let commands = match parse(text) {
            Ok(c) => c,
            Err(e) => {
                let msg = syntax_message(text, &e);
                self.emit(&msg);
                return Outcome::Failed;
            }
        };
        let mut outcome = Outcome::Ok;
        for c in &commands {
            match self.execute(c).await {
                Outcome::Ok => {}
                Outcome::Exit => return Outcome::Exit,
                Outcome::Failed => {
                    outcome = Outcome::Failed;
                    if stop_on_error {
                        return outcome;
                    }
                }
            }
        }
        outcome
    }

    /// Runs one parsed command and prints its output.
    pub async fn execute(&mut self, cmd: &Command) -> Outcome {
        let start = Instant::now();
        let mut out = String::new();
        let result = commands::run(self, cmd, &mut out).await;
        let elapsed = start.elapsed().as_secs_f64();
        match result {
            Ok(Reply::Exit) => {
                self.emit(&out);
                Outcome::Exit
            }
            Ok(Reply::Done { value, timed }) => {
                if timed {
                    out.push_str(&took(elapsed));
                    out.push('\n');
                }
                if let (true, Some(v)) = (self.interactive, value) {
                    out.push_str(&format!("=> {v}\n"));
                }
                self.emit(&out);
                Outcome::Ok
            }
            Err(e) => {
                out.push_str(&format!("ERROR: {e}\n\n"));
                if commands::is_command(&cmd.name) {
                    out.push_str(&format!("For usage try 'help \"{}\"'\n\n", cmd.name));
                }
                out.push_str(&took(elapsed));
                out.push('\n');
                self.emit(&out);
                Outcome::Failed
            }
        }
    }
}

/// `ERROR: syntax error at line L, column C: …` with the line and a caret.
fn syntax_message(text: &str, e: &ParseError) -> String {
    let mut msg = format!("ERROR: {e}\n");
    if let Some(pos) = e.pos()
        && let Some(line) = text.lines().nth(pos.line.saturating_sub(1))
    {
        msg.push_str(line);
        msg.push('\n');
        msg.push_str(&" ".repeat(pos.column.saturating_sub(1)));
        msg.push_str("^\n");
    }
    msg.push('\n');
    msg
}
