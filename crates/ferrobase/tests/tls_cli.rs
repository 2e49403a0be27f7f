//! TLS as a user turns it on: `ferrobase standalone` with the HBase TLS
//! settings (RPC port TLS-only with client certificates, HTTPS info port,
//! its Thrift gateway over TLS), `ferrobase shell --tls-ca --tls-cert`
//! doing real work, and a shell without TLS refused with words that say
//! why.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_tls::testing::TestPki;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

/// Kills the server child however the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn shell(addr: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(["shell", "--server", addr])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn standalone_over_tls_with_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::generate(dir.path()).unwrap();
    let data = dir.path().join("data");
    let server_pem = pki.server.display().to_string();
    let ca = pki.ca.display().to_string();
    let sets = [
        "ferrobase.memory.size=268435456".to_string(),
        "hbase.server.netty.tls.enabled=true".into(),
        "hbase.server.netty.tls.supportplaintext=false".into(),
        "hbase.server.netty.tls.client.auth.mode=NEED".into(),
        format!("hbase.rpc.tls.keystore.location={server_pem}"),
        format!("hbase.rpc.tls.truststore.location={ca}"),
        "hbase.ssl.enabled=true".into(),
        "hbase.thrift.ssl.enabled=true".into(),
        // The process's own Thrift gateway is a client of its server.
        "hbase.client.netty.tls.enabled=true".into(),
    ];
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ferrobase"));
    cmd.args([
        "standalone",
        "--port",
        "0",
        "--info-port",
        "0",
        "--zookeeper-port",
        "-1",
        "--thrift-port",
        "0",
        "--data-dir",
    ])
    .arg(&data);
    for s in &sets {
        cmd.args(["--set", s]);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let _guard = Server(child);
    let mut banner = String::new();
    for _ in 0..5 {
        out.read_line(&mut banner).unwrap();
    }
    assert!(banner.contains("listening on"), "{banner}");
    assert!(
        banner.contains("info port (web UI, /metrics, /jmx): https://"),
        "{banner}"
    );
    let addr = banner
        .lines()
        .next()
        .unwrap()
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();

    let client = pki.client.display().to_string();
    let o = shell(
        &addr,
        &[
            "--tls-ca",
            &ca,
            "--tls-cert",
            &client,
            "-e",
            "create 't', 'f'; put 't', 'r1', 'f:q', 'v1'; get 't', 'r1'",
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("value=v1"), "{text}");

    // Without TLS, and with TLS but no client certificate: refused.
    let o = shell(
        &addr,
        &["--set", "hbase.client.retries.number=1", "-e", "list"],
    );
    assert!(!o.status.success());
    let o = shell(
        &addr,
        &[
            "--tls-ca",
            &ca,
            "--set",
            "hbase.client.retries.number=1",
            "-e",
            "list",
        ],
    );
    assert!(!o.status.success());
    let mut all = String::from_utf8_lossy(&o.stdout).to_string();
    all += &String::from_utf8_lossy(&o.stderr);
    assert!(all.contains("requires a client certificate"), "{all}");
}
