//! Real happybase (Python, from PyPI) against the gateway in front of a
//! real standalone ferrobase: the scripts in `tests/happybase/` assert in
//! Python and exit non-zero on failure; this file checks their exit status
//! and output.
//!
//! The Python is found like moto in `ferrobase_storage`'s S3 tests:
//! `FERROBASE_PYTHON`, then `.venv/bin/python` at the workspace root, then
//! `python3` on PATH; one without happybase fails the test with how to
//! install it (scripts/test.sh does), never skips it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const HOW_TO_INSTALL: &str = "run scripts/test.sh (it installs happybase into .venv at the \
     workspace root), or `.venv/bin/pip install happybase`, or point FERROBASE_PYTHON at a \
     python that can `import happybase`";

/// A python that can import happybase.
fn python() -> PathBuf {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    let candidate = if let Some(p) = std::env::var_os("FERROBASE_PYTHON") {
        PathBuf::from(p)
    } else if venv.is_file() {
        venv
    } else {
        std::env::var_os("PATH")
            .and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join("python3"))
                    .find(|p| p.is_file())
            })
            .unwrap_or_else(|| panic!("no python found for the happybase tests; {HOW_TO_INSTALL}"))
    };
    let ok = Command::new(&candidate)
        .args(["-c", "import happybase"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "{} cannot `import happybase`; {HOW_TO_INSTALL}",
        candidate.display()
    );
    candidate
}

/// Runs `tests/happybase/<script>` against the gateway; panics with its
/// output unless it exits 0. A script that hangs is killed after a
/// generous guard (it has its own socket timeout; this only keeps a broken
/// run from blocking CI).
fn run_script(script: &str, port: u16, env: &[(&str, &str)]) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/happybase");
    let mut child = Command::new(python())
        .arg(dir.join(script))
        .current_dir(&dir)
        .env("HOST", "127.0.0.1")
        .env("PORT", port.to_string())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    match status {
        Some(s) if s.success() => {
            assert!(
                !err.contains("Traceback"),
                "{script} printed a traceback:\n{err}"
            );
            out
        }
        Some(s) => panic!("{script} failed ({s}):\nstdout:\n{out}\nstderr:\n{err}"),
        None => panic!("{script} did not finish:\nstdout:\n{out}\nstderr:\n{err}"),
    }
}

async fn script(port: u16, name: &'static str, env: Vec<(&'static str, &'static str)>) -> String {
    tokio::task::spawn_blocking(move || run_script(name, port, &env))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn happybase_workflow_buffered_binary() {
    let c = common::start(common::config()).await;
    let port = c.gateway.addr().port();
    let out = script(port, "workflow.py", vec![("TABLE", "hb_tour")]).await;
    assert!(out.contains("workflow ok"), "{out}");
    // Every scanner happybase opened was closed, including the abandoned one.
    assert_eq!(c.gateway.open_scanners(), 0);
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn happybase_errors_name_the_problem() {
    let c = common::start(common::config()).await;
    let out = script(c.gateway.addr().port(), "errors.py", vec![]).await;
    assert!(out.contains("errors ok"), "{out}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn happybase_every_transport_and_protocol() {
    let c = common::start(common::config()).await;
    let port = c.gateway.addr().port();
    for (table, transport, protocol) in [
        ("t_buffered_binary", "buffered", "binary"),
        ("t_framed_binary", "framed", "binary"),
        ("t_buffered_compact", "buffered", "compact"),
        ("t_framed_compact", "framed", "compact"),
    ] {
        let env = vec![
            ("TABLE", table),
            ("TRANSPORT", transport),
            ("PROTOCOL", protocol),
        ];
        let out = script(port, "transports.py", env).await;
        assert!(out.contains("transport ok"), "{out}");
    }
    c.stop().await;
}

/// Thrift over HTTP on the same port (Hue, `THttpClient`): thriftpy2's
/// HTTP client creates, writes, reads and drops a table; a GET and a body
/// that is not Thrift get 405 and 400 naming what was wrong.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thrift_over_http_on_the_same_port() {
    let c = common::start(common::config()).await;
    let out = script(
        c.gateway.addr().port(),
        "http_client.py",
        vec![("TABLE", "t_http")],
    )
    .await;
    assert!(out.contains("http ok"), "{out}");
    c.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn framed_only_gateway_serves_framed_clients() {
    let config = ferrobase_thrift::GatewayConfig {
        framed_only: true,
        ..common::config()
    };
    let c = common::start(config).await;
    let env = vec![("TABLE", "t_framed_only"), ("TRANSPORT", "framed")];
    let out = script(c.gateway.addr().port(), "transports.py", env).await;
    assert!(out.contains("transport ok"), "{out}");
    c.stop().await;
}
