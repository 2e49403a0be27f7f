//! `ferrobase thrift` as a user runs it: next to `ferrobase standalone`,
//! prints where it listens, answers a Thrift call (the bytes happybase
//! sends for `getTableNames`), refuses a bad port setting, and stops
//! cleanly on SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

fn spawn(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("listening on"), "{line}");
    let addr = line.trim().rsplit(' ').next().unwrap().to_string();
    (child, addr)
}

fn terminate(mut child: Child) {
    let pid = child.id().to_string();
    let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "exit status after SIGTERM: {status}");
}

#[test]
fn thrift_gateway_answers_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let (standalone, server) = spawn(&[
        "standalone",
        "--port",
        "0",
        "--data-dir",
        data,
        "--set",
        "ferrobase.memory.size=268435456",
    ]);
    let (gateway, addr) = spawn(&[
        "thrift",
        "--server",
        &server,
        "--port",
        "0",
        "--bind",
        "127.0.0.1",
    ]);
    let mut s = TcpStream::connect(&addr).unwrap();
    s.write_all(b"\x80\x01\x00\x01\x00\x00\x00\x0dgetTableNames\x00\x00\x00\x00\x00")
        .unwrap();
    // REPLY, name, seqid 0, field 0: an empty list of binaries, STOP.
    let want = b"\x80\x01\x00\x02\x00\x00\x00\x0dgetTableNames\x00\x00\x00\x00\x0f\x00\x00\x0b\x00\x00\x00\x00\x00";
    let mut reply = vec![0u8; want.len()];
    s.read_exact(&mut reply).unwrap();
    assert_eq!(&reply[..], &want[..]);
    drop(s);
    terminate(gateway);
    terminate(standalone);
}

#[test]
fn a_bad_port_setting_is_named() {
    let out = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(["thrift", "--set", "hbase.regionserver.thrift.port=70000"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hbase.regionserver.thrift.port"), "{err}");
}

#[test]
fn standalone_runs_the_gateway_with_thrift_port() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args([
            "standalone",
            "--port",
            "0",
            "--thrift-port",
            "0",
            "--data-dir",
        ])
        .arg(dir.path())
        .args(["--set", "ferrobase.memory.size=268435456"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = lines
        .by_ref()
        .map(|l| l.unwrap())
        .find_map(|l| {
            l.trim()
                .strip_prefix("thrift gateway: ")
                .map(str::to_string)
        })
        .expect("a 'thrift gateway:' line");
    let mut s = TcpStream::connect(&addr).unwrap();
    s.write_all(b"\x80\x01\x00\x01\x00\x00\x00\x0dgetTableNames\x00\x00\x00\x05\x00")
        .unwrap();
    let mut head = [0u8; 4];
    s.read_exact(&mut head).unwrap();
    assert_eq!(head, *b"\x80\x01\x00\x02");
    drop(s);
    terminate(child);
}
