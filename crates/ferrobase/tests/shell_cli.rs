//! `ferrobase shell` as users run it: `-e "cmd; cmd"`, a script FILE and
//! standard input, against a `ferrobase standalone` child process. A
//! non-interactive run stops at the first error and exits non-zero.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

fn start(dir: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(["standalone", "--port", "0", "--data-dir"])
        .arg(dir)
        .args(["--set", "ferrobase.memory.size=268435456"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    assert!(line.contains("listening on"), "{line}");
    let addr = line.trim().rsplit(' ').next().unwrap().to_string();
    (child, addr)
}

fn shell(addr: &str, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(["shell", "--server", addr])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn execute_file_and_stdin_modes() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, addr) = start(dir.path());

    let o = shell(
        &addr,
        &[
            "-e",
            "create 'c', 'f'; put 'c', 'r1', 'f:q', \"v\\x00\"\nscan 'c'",
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("Created table c"), "{out}");
    assert!(
        out.contains("ROW  COLUMN+CELL\n r1 column=f:q, timestamp="),
        "{out}"
    );
    assert!(out.contains("value=v\\x00\n1 row(s)\nTook "), "{out}");

    // status 'detailed' carries the server's block cache counters.
    let o = shell(&addr, &["-e", "status 'detailed'"], None);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("blockCacheHitCount="), "{out}");
    assert!(out.contains("blockCacheHitRatio="), "{out}");
    assert!(!out.contains("blockCacheCapacityMB=0\n"), "{out}");

    // The first error stops the run: r2 is never written.
    let o = shell(
        &addr,
        &[
            "-e",
            "put 'c', 'r1', 'nofamily:q', 'v'; put 'c', 'r2', 'f:q', 'v'",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("ERROR: "), "{}", text(&o));

    let script = dir.path().join("script.hbase");
    std::fs::write(&script, "# a comment\ncount 'c'\nget 'c', 'r2'\n").unwrap();
    let o = shell(&addr, &[script.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).starts_with("1 row(s)\n"), "{}", text(&o));
    assert!(
        text(&o).contains("COLUMN  CELL\n0 row(s)\n"),
        "{}",
        text(&o)
    );

    // Standard input, with a syntax error at the end: exit 1.
    let o = shell(&addr, &[], Some("exists 'c'\nput 'c' 'r'\n"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("column 9"), "{}", text(&o));

    let missing = dir.path().join("missing.hbase");
    let o = shell(&addr, &[missing.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));

    server.kill().unwrap();
    server.wait().unwrap();
}
