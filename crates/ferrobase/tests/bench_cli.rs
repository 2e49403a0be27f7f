//! `ferrobase bench` through the binary: a bad flag exits non-zero listing
//! the valid values; a small load prints a JSON report and exits 0;
//! `regionservers` exits 2 with "needs distributed mode".

use std::process::Command;

fn ferrobase(args: &[&str]) -> std::io::Result<std::process::Output> {
    Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(args)
        .output()
}

#[test]
fn bad_flags_are_refused_with_the_valid_values() -> Result<(), Box<dyn std::error::Error>> {
    let out = ferrobase(&["bench", "load", "--shape", "log10", "--rows", "10"])?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("log10") && err.contains("log9") && err.contains("single53"),
        "{err}"
    );

    let out = ferrobase(&["bench", "load", "--shape", "kv", "--durability", "often"])?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("skip") && err.contains("fsync"), "{err}");

    let out = ferrobase(&["bench", "experiment", "nope"])?;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("block-size"));

    let out = ferrobase(&["bench", "ycsb", "run", "--workload", "z"])?;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("a, b, c, d, e, f"));
    Ok(())
}

#[test]
fn load_prints_json_and_regionservers_needs_distributed_mode()
-> Result<(), Box<dyn std::error::Error>> {
    let out = ferrobase(&[
        "bench",
        "load",
        "--shape",
        "kv",
        "--value-size",
        "50",
        "--rows",
        "500",
        "--threads",
        "2",
        "--write-buffer",
        "8k",
        "--json",
    ])?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(v["rows"], 500);
    assert_eq!(v["cells"], 500);
    assert_eq!(v["error_count"], 0);
    assert!(v["rpcs"].as_u64().unwrap_or(0) >= 2);

    let out = ferrobase(&["bench", "experiment", "regionservers"])?;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("needs distributed mode"));
    Ok(())
}
