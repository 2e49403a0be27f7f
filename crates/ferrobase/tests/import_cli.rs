//! `ferrobase import` and `bench gen-text` from the command line: bad
//! flags are refused with a message saying what is wrong (before any
//! server is started), `--fail-on-bad-lines` stops at the first bad line
//! and names it, and text from `gen-text` imports with the columns it
//! prints, on an embedded server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

fn ferrobase(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn bad_flags_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.tsv"), "r\t1\n").unwrap();
    for (args, says) in [
        (
            vec!["import", "--table", "t", "in.tsv"],
            "--columns is required",
        ),
        (
            vec!["import", "--table", "t", "--columns", "f:a", "in.tsv"],
            "must name HBASE_ROW_KEY",
        ),
        (
            vec![
                "import",
                "--table",
                "t",
                "--columns",
                "HBASE_ROW_KEY,f:a",
                "--skip-bad-lines",
                "--fail-on-bad-lines",
                "in.tsv",
            ],
            "contradict",
        ),
        (
            vec![
                "import",
                "--table",
                "t",
                "--columns",
                "HBASE_ROW_KEY,f:a",
                "--separator",
                "ab",
                "in.tsv",
            ],
            "must be one byte",
        ),
        (
            vec![
                "import",
                "--table",
                "t",
                "-Dimporttsv.columns=HBASE_ROW_KEY,f:a",
                "-Dimporttsv.skip.bad.lines=perhaps",
                "in.tsv",
            ],
            "expected true or false",
        ),
        (
            vec![
                "import",
                "--table",
                "t",
                "-Dimporttsv.columns=HBASE_ROW_KEY,f:a",
                "-Dimporttsv.bulk.output=/tmp/x",
                "in.tsv",
            ],
            "--bulk writes the store files",
        ),
        (
            vec![
                "import",
                "--table",
                "t",
                "--columns",
                "HBASE_ROW_KEY,f:a",
                "--bulk",
                "--durability",
                "SKIP_WAL",
                "in.tsv",
            ],
            "--bulk writes no WAL",
        ),
        (
            vec![
                "import",
                "--table",
                "t",
                "--columns",
                "HBASE_ROW_KEY,f:a",
                "--set",
                "no.such.setting=1",
                "in.tsv",
            ],
            "no.such.setting",
        ),
        (
            vec![
                "import",
                "--table",
                "t",
                "--columns",
                "HBASE_ROW_KEY,f:a",
                "missing.tsv",
            ],
            "missing.tsv",
        ),
        (
            vec![
                "import",
                "--table",
                "t",
                "--columns",
                "HBASE_ROW_KEY,f:a",
                "--server",
                "127.0.0.1:1",
                "--data-dir",
                "d",
                "in.tsv",
            ],
            "cannot be used with",
        ),
    ] {
        let o = ferrobase(&args, dir.path());
        assert!(!o.status.success(), "{args:?} succeeded");
        let e = stderr(&o);
        assert!(e.contains(says), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
    }
}

#[test]
fn gen_text_imports_and_fail_on_bad_lines_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = ferrobase(
        &[
            "bench",
            "gen-text",
            "--shape",
            "vehicle15",
            "--rows",
            "300",
            "--files",
            "2",
            "--out",
            "txt",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let columns = out
        .split_whitespace()
        .skip_while(|w| *w != "--columns")
        .nth(1)
        .unwrap()
        .to_string();
    let o = ferrobase(
        &[
            "import",
            "--table",
            "v",
            "--columns",
            &columns,
            "--json",
            "--data-dir",
            "d",
            "txt/part-00000.tsv",
            "txt/part-00001.tsv",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["rows"], 300);
    assert_eq!(report["cells"], 300 * 15);
    assert_eq!(report["bad_lines"], 0);

    let mut text = std::fs::read_to_string(dir.path().join("txt/part-00001.tsv")).unwrap();
    text.insert_str(0, "short\tline\n");
    std::fs::write(dir.path().join("bad.tsv"), text).unwrap();
    let o = ferrobase(
        &[
            "import",
            "--table",
            "v",
            "--columns",
            &columns,
            "--fail-on-bad-lines",
            "--bulk",
            "--data-dir",
            "d",
            "bad.tsv",
        ],
        dir.path(),
    );
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("bad line bad.tsv:1: 2 field(s), the columns name 16")
            && e.contains("v.rejects"),
        "{e}"
    );
}
