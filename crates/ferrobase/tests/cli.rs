//! The `ferrobase` binary as a user runs it: the demo on a fresh data
//! directory (and again, after a restart), the store file tool on the files
//! it wrote, and clear errors for bad flags and bad files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn ferrobase(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn demo_then_storefile_tool() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let args = [
        "demo",
        "--data-dir",
        d,
        "--rows",
        "3000",
        "--family-attr",
        "COMPRESSION=SNAPPY",
        "--family-attr",
        "DATA_BLOCK_ENCODING=PREFIX",
    ];
    let (ok, out, err) = ferrobase(&args);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("rows present at open: 0"), "{out}");
    assert!(out.contains("get: 3000/3000 sampled rows found"), "{out}");
    let (ok, out, err) = ferrobase(&args);
    assert!(ok, "{err}");
    assert!(
        out.contains("rows present at open: 3000"),
        "restart lost rows: {out}"
    );

    let file = out
        .lines()
        .find_map(|l| l.split("storefile meta ").nth(1))
        .map(|s| s.trim_end_matches(')').to_string())
        .expect("demo names its store file");
    let (ok, meta, err) = ferrobase(&["storefile", "meta", &file]);
    assert!(ok, "{err}");
    for key in [
        "entries=27000",
        "avgKeyLen=",
        "avgValueLen=",
        "firstKey=",
        "lastKey=",
        "compression=SNAPPY",
        "encoding=PREFIX",
        "bloom=ROW",
        "blocks=",
        "length=",
        "maxSeqId=",
        "timeRange=",
        &format!(
            "formatVersion={}",
            ferrobase_storage::storefile::FORMAT_VERSION
        ),
    ] {
        assert!(meta.contains(key), "missing {key} in\n{meta}");
    }
    let (ok, cells, err) = ferrobase(&["storefile", "cells", &file]);
    assert!(ok, "{err}");
    assert_eq!(cells.lines().count(), 27000);
    let first = cells.lines().next().unwrap();
    assert!(
        first.contains("/f:c0/") && first.contains("/Put/vlen="),
        "{first}"
    );
}

/// Relative paths are relative to the working directory (the storage
/// layer must not anchor them at `/`).
#[test]
fn relative_paths_stay_relative() {
    let cwd = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
            .args(args)
            .current_dir(cwd.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{args:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let out = run(&["demo", "--data-dir", "rel-data", "--rows", "500"]);
    assert!(cwd.path().join("rel-data/data").is_dir(), "{out}");
    let file = out
        .lines()
        .find_map(|l| l.split("storefile meta ").nth(1))
        .map(|s| s.trim_end_matches(')').to_string())
        .expect("demo names its store file");
    let rel = std::path::Path::new(&file)
        .strip_prefix(cwd.path())
        .map(|p| p.to_string_lossy().to_string())
        .unwrap_or(file);
    assert!(run(&["storefile", "meta", &rel]).contains("entries=4500"));
}

#[test]
fn bad_input_is_explained() {
    let (ok, _, err) = ferrobase(&["demo", "--shape", "nope", "--rows", "1"]);
    assert!(!ok && err.contains("nope"), "{err}");
    let (ok, _, err) = ferrobase(&["demo", "--durability", "maybe", "--rows", "1"]);
    assert!(!ok && err.contains("SYNC_WAL"), "{err}");
    let (ok, _, err) = ferrobase(&["demo", "--family-attr", "COMPRESSION=LZO", "--rows", "1"]);
    assert!(
        !ok && err.contains("COMPRESSION") && err.contains("SNAPPY"),
        "{err}"
    );
    let (ok, _, err) = ferrobase(&["settings", "--set", "hbase.hstore.blockingStoreFile=3"]);
    assert!(
        !ok && err.contains("did you mean 'hbase.hstore.blockingStoreFiles'"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.sf");
    std::fs::write(&garbage, vec![0xAB; 5000]).unwrap();
    let (ok, _, err) = ferrobase(&["storefile", "meta", garbage.to_str().unwrap()]);
    assert!(!ok && err.contains("garbage.sf"), "{err}");
    let (ok, _, err) = ferrobase(&["storefile", "cells", "/nonexistent/file.sf"]);
    assert!(!ok && err.contains("/nonexistent/file.sf"), "{err}");

    // Storage roots: a bad URL is named, and one place to keep data at most.
    let (ok, _, err) = ferrobase(&["standalone", "--root", "gs://bucket/x", "--port", "0"]);
    assert!(!ok && err.contains("unknown scheme 'gs'"), "{err}");
    let (ok, _, err) = ferrobase(&["standalone", "--root", "s3://", "--port", "0"]);
    assert!(!ok && err.contains("bucket"), "{err}");
    let (ok, _, err) = ferrobase(&["standalone", "--port", "0"]);
    assert!(
        !ok && err.contains("--data-dir") && err.contains("--root"),
        "{err}"
    );
    let (ok, _, err) = ferrobase(&["standalone", "--data-dir", "/tmp/x", "--root", "/tmp/y"]);
    assert!(!ok && err.contains("cannot be used with"), "{err}");
    let (ok, _, err) = ferrobase(&["bench", "experiment", "regionservers", "--root", "gs://b/x"]);
    assert!(!ok && err.contains("--root 'gs://b/x'"), "{err}");
}

#[test]
fn readme_lists_every_setting() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let (ok, out, _) = ferrobase(&["settings"]);
    assert!(ok);
    for line in out.lines() {
        let name = line.split(' ').next().unwrap();
        assert!(
            readme.contains(&format!("`{name}`")),
            "README does not list {name}"
        );
    }
}

#[test]
fn output_read_only_in_part_is_no_error() {
    // `ferrobase settings | head -1`: the reader closes the pipe early.
    // Closed here before the child has started, so its first write fails.
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(["settings", "--markdown"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn token_create_writes_a_hadoop_token_file_for_the_root() {
    use ferrobase_hbase_wire::token;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = dir.path().join("alice.token");
    let (ok, stdout, err) = ferrobase(&[
        "token",
        "create",
        "--user",
        "alice",
        "--data-dir",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "hbase.auth.token.max.lifetime=60000",
    ]);
    assert!(ok, "{err}");
    assert!(
        stdout.contains(&format!(
            "token for 'alice' (cluster {}, valid 60 s)",
            ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID
        )),
        "{stdout}"
    );
    let tokens = token::decode_storage(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0].kind, "HBASE_AUTH_TOKEN");
    assert_eq!(
        tokens[0].service,
        ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID
    );
    assert_eq!(tokens[0].password.len(), 20, "HMAC-SHA1");
    let id = token::decode_identifier(&tokens[0].identifier).unwrap();
    assert_eq!(&id.username[..], b"alice");
    assert_eq!(id.expiration_date.unwrap() - id.issue_date.unwrap(), 60_000);
    // The key was created under the root, for the servers to share.
    assert!(data.join("auth/token-key").is_file());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&out).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "only its owner may read a token");
    }
    // A second token comes from the same key.
    let again = dir.path().join("again.token");
    let (ok, _, err) = ferrobase(&[
        "token",
        "create",
        "--user",
        "bob",
        "--data-dir",
        data.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let (ok, _, err) = ferrobase(&["token", "create", "--user", "bob", "--out", "x"]);
    assert!(!ok);
    assert!(
        err.contains("--data-dir") || err.contains("--root"),
        "{err}"
    );
}
