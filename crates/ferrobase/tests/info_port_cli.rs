//! The info port as a user runs it: `ferrobase standalone --info-port 0`
//! prints its address and serves `/metrics`, which counts the calls of the
//! Thrift gateway started beside it; `-1` turns it off; `ferrobase thrift`
//! has one too; a bad port is refused by name; `--log-format json` writes
//! the slow-request log as JSON lines.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Command, Stdio};

/// Starts the binary and reads `lines` lines of its banner.
fn spawn(args: &[&str], lines: usize) -> (Child, Vec<String>, BufReader<ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut banner = Vec::new();
    for _ in 0..lines {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        banner.push(line.trim().to_string());
    }
    (child, banner, out)
}

/// Stops with SIGTERM; returns stderr.
fn terminate(mut child: Child) -> String {
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(child.wait().unwrap().success(), "{err}");
    err
}

fn after<'a>(banner: &'a [String], prefix: &str) -> Option<&'a str> {
    banner.iter().find_map(|l| l.strip_prefix(prefix))
}

fn info_addr(banner: &[String]) -> String {
    after(banner, "info port (web UI, /metrics, /jmx): http://")
        .unwrap_or_else(|| panic!("no info port in {banner:?}"))
        .trim_end_matches('/')
        .to_string()
}

fn http_get(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, text)
}

#[test]
fn standalone_and_gateway_serve_metrics_on_their_info_ports() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (standalone, banner, _out) = spawn(
        &[
            "--log-format",
            "json",
            "standalone",
            "--port",
            "0",
            "--data-dir",
            data,
            "--info-port",
            "0",
            "--zookeeper-port",
            "-1",
            "--thrift-port",
            "0",
            "--set",
            "ferrobase.memory.size=268435456",
            // Every answer is "too large": the slow log writes a line.
            "--set",
            "hbase.ipc.warn.response.size=1",
        ],
        5,
    );
    let info = info_addr(&banner);
    let thrift = after(&banner, "thrift gateway: ").unwrap().to_string();
    let (status, metrics) = http_get(&info, "/metrics");
    assert_eq!(status, 200, "{metrics}");
    assert!(
        metrics.contains("hbase_regionserver_regions 0"),
        "{metrics}"
    );

    // One Thrift call (happybase's getTableNames) goes through the gateway
    // in the same process, which counts it.
    let mut s = TcpStream::connect(&thrift).unwrap();
    s.write_all(b"\x80\x01\x00\x01\x00\x00\x00\x0dgetTableNames\x00\x00\x00\x00\x00")
        .unwrap();
    let mut reply = [0u8; 4];
    s.read_exact(&mut reply).unwrap();
    drop(s);
    let (_, metrics) = http_get(&info, "/metrics");
    assert!(
        metrics.contains("hbase_thrift_requests_total{method=\"getTableNames\"} 1"),
        "{metrics}"
    );
    let (status, _) = http_get(&info, "/no-such-page");
    assert_eq!(status, 404);

    // A get through the shell: its answer is over the size limit.
    let server = after(&banner, "master and region server: ")
        .unwrap()
        .to_string();
    let shell = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args([
            "shell",
            "--server",
            &server,
            "-e",
            "create 't', 'f'; put 't', 'r', 'f:q', 'v'; get 't', 'r'",
        ])
        .output()
        .unwrap();
    assert!(shell.status.success(), "{shell:?}");
    let (_, metrics) = http_get(&info, "/metrics");
    let large: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix("hbase_regionserver_large_responses_total "))
        .unwrap_or_else(|| panic!("{metrics}"))
        .trim()
        .parse()
        .unwrap();
    assert!(large >= 1.0, "{metrics}");

    // The gateway as its own process has its own info port.
    let (gateway, gbanner, _gout) = spawn(
        &[
            "thrift",
            "--server",
            &server,
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--info-port",
            "0",
        ],
        3,
    );
    let (status, gmetrics) = http_get(&info_addr(&gbanner), "/metrics");
    assert_eq!(status, 200);
    assert!(
        gmetrics.contains("process_resident_memory_bytes"),
        "{gmetrics}"
    );
    terminate(gateway);

    let err = terminate(standalone);
    // --log-format json: the slow log's line is a JSON object.
    let slow = err
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["target"] == "ferrobase::slow_log")
        .unwrap_or_else(|| panic!("no JSON slow-log line in:\n{err}"));
    assert_eq!(slow["level"], "WARN");
    let message = slow["fields"]["message"].as_str().unwrap();
    assert!(message.starts_with("(responseTooLarge): {"), "{message}");
}

#[test]
fn info_port_minus_one_disables_it_and_a_bad_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (standalone, banner, _out) = spawn(
        &[
            "standalone",
            "--port",
            "0",
            "--data-dir",
            data,
            "--info-port",
            "-1",
            "--zookeeper-port",
            "-1",
            "--thrift-port",
            "0",
            "--set",
            "ferrobase.memory.size=268435456",
        ],
        4,
    );
    assert!(
        banner[3].starts_with("thrift gateway: "),
        "an info port or ZooKeeper line with -1: {banner:?}"
    );
    terminate(standalone);

    let out = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args([
            "standalone",
            "--port",
            "0",
            "--data-dir",
            data,
            "--info-port",
            "70000",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("info port 70000 is not a TCP port"), "{err}");

    let out = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(["standalone", "--port", "0", "--data-dir", data])
        .args(["--info-port", "-1", "--zookeeper-port", "65536"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(
            "ZooKeeper registry port 65536 (hbase.zookeeper.property.clientPort) is not a TCP port"
        ),
        "{err}"
    );
}
