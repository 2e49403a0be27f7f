//! Test harness: a `ferrobase standalone` child process on a data
//! directory and a free port, killed when its handle drops (a failed
//! assertion must not leave it running).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The running server; `0` is the child process.
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `ferrobase standalone --data-dir DIR --port 0` with `--set` for
/// each of `settings` and returns it with its address. `FERROBASE_BIN`
/// overrides the binary (a copy, for a long run that must not see a
/// rebuild of the one cargo built). Panics if the first line of output is
/// not "listening on" (an unreadable file after a crash, a bad setting).
pub fn start(dir: &Path, settings: &[&str]) -> (Server, String) {
    start_with_env(dir, settings, &[])
}

/// [`start`] with extra environment variables (`FERROBASE_CRASH_AT`).
pub fn start_with_env(dir: &Path, settings: &[&str], env: &[(&str, &str)]) -> (Server, String) {
    let bin = std::env::var("FERROBASE_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_ferrobase").to_string());
    let mut cmd = Command::new(bin);
    cmd.args(["standalone", "--port", "0", "--data-dir"])
        .arg(dir);
    for s in settings {
        cmd.args(["--set", s]);
    }
    cmd.envs(env.iter().copied());
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    assert!(
        line.contains("listening on"),
        "the server did not start (an unreadable file?): {line:?}"
    );
    let addr = line.trim().rsplit(' ').next().unwrap().to_string();
    (server, addr)
}
