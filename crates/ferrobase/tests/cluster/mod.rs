//! Test harness for distributed mode: a real etcd (Debian's `etcd`
//! binary) on free loopback ports in a temp dir, and `ferrobase master` /
//! `ferrobase regionserver` child processes on a shared temp root. Every
//! process is killed when its handle drops. Waits are bounded (they fail
//! with a message, they never assert on timing).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// Settings every test process runs with: a short etcd lease so that
/// failover is quick, a small memory budget (several processes share the machine).
pub const SETTINGS: &[&str] = &[
    "ferrobase.etcd.lease.ttl.ms=2000",
    "ferrobase.memory.size=268435456",
    "hbase.regionserver.handler.count=8",
];

/// A port nobody listens on right now.
pub fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A running etcd in a temporary directory, killed on drop.
pub struct Etcd {
    // Field order is drop order: the process before its directory.
    _process: ferrobase_etcd::launcher::EtcdProcess,
    _dir: tempfile::TempDir,
    pub url: String,
}

impl Etcd {
    /// Starts `etcd` on free ports and waits until it accepts connections.
    pub fn start() -> Result<Etcd> {
        let dir = tempfile::tempdir()?;
        let process = ferrobase_etcd::launcher::EtcdProcess::start(dir.path())?;
        let url = process.url().to_string();
        Ok(Etcd {
            _process: process,
            _dir: dir,
            url,
        })
    }

    /// [`start`](Self::start) over TLS only, requiring client certificates
    /// signed by `ca`; its URL is `https://`.
    pub fn start_tls(key_store: &std::path::Path, ca: &std::path::Path) -> Result<Etcd> {
        let dir = tempfile::tempdir()?;
        let process = ferrobase_etcd::launcher::EtcdProcess::start_tls(dir.path(), key_store, ca)?;
        let url = process.url().to_string();
        Ok(Etcd {
            _process: process,
            _dir: dir,
            url,
        })
    }
}

/// A ferrobase child process; its stdout lines arrive on a channel.
pub struct Node {
    child: Child,
    lines: Receiver<String>,
    /// The port it listens on (masters: once active).
    pub port: u16,
    /// The address it binds and advertises.
    pub host: String,
}

impl Node {
    fn spawn(kind: &str, etcd: &str, root: &str, extra: &[String]) -> Result<Node> {
        let cmd = Command::new(env!("CARGO_BIN_EXE_ferrobase"));
        Node::spawn_with(cmd, "127.0.0.1", free_port()?, kind, etcd, root, extra)
    }

    /// Starts `cmd` (the `ferrobase` binary, or a wrapper such as `ip
    /// netns exec NS ferrobase`) as a `kind` process bound to `host:port`,
    /// and waits for nothing.
    pub fn spawn_with(
        mut cmd: Command,
        host: &str,
        port: u16,
        kind: &str,
        etcd: &str,
        root: &str,
        extra: &[String],
    ) -> Result<Node> {
        cmd.arg(kind)
            .args(["--bind", host])
            .args(["--etcd", etcd])
            .args(["--root", root])
            .args(["--port", &port.to_string()]);
        for s in SETTINGS
            .iter()
            .map(|s| s.to_string())
            .chain(extra.iter().cloned())
        {
            cmd.args(["--set", &s]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting ferrobase {kind}"))?;
        let stdout = child.stdout.take().context("child stdout")?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Ok(Node {
            child,
            lines,
            port,
            host: host.to_string(),
        })
    }

    /// Waits (at most `limit`) for a stdout line containing `text`.
    pub fn wait_line(&self, text: &str, limit: Duration) -> Result<String> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(text) => return Ok(line),
                Ok(_) => {}
                Err(_) => bail!("no line with '{text}' within {limit:?}"),
            }
        }
    }

    /// `host:port`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// Sends a signal (`"STOP"`, `"CONT"`, …) with kill(1).
    pub fn signal(&self, sig: &str) -> Result<()> {
        let status = Command::new("kill")
            .args(["-s", sig, &self.child.id().to_string()])
            .status()
            .context("running kill")?;
        if !status.success() {
            bail!("kill -s {sig} failed");
        }
        Ok(())
    }

    /// Waits (at most `limit`) for the process to exit on its own.
    pub fn wait_exit(&mut self, limit: Duration) -> Result<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                bail!("the process did not exit within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL, and reap.
    pub fn kill(&mut self) -> Result<()> {
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// etcd, a shared root, masters and region servers.
pub struct Cluster {
    pub masters: Vec<Node>,
    pub servers: Vec<Node>,
    pub root: tempfile::TempDir,
    /// The `--root` URL: `file://` + `root` unless started on another one.
    pub root_url: String,
    pub etcd: Etcd,
    extra: Vec<String>,
}

impl Cluster {
    /// Starts etcd, `masters` masters (the first one becomes active) and
    /// `servers` region servers; `extra` are more `--set` settings.
    pub fn start(masters: usize, servers: usize, extra: &[&str]) -> Result<Cluster> {
        Cluster::start_on(None, masters, servers, extra)
    }

    /// [`start`](Self::start) on the storage root `root_url` (`None`: a
    /// shared temp directory).
    pub fn start_on(
        root_url: Option<String>,
        masters: usize,
        servers: usize,
        extra: &[&str],
    ) -> Result<Cluster> {
        Cluster::start_with(Etcd::start()?, root_url, masters, servers, extra)
    }

    /// [`start_on`](Self::start_on) with a given etcd (one over TLS, say).
    pub fn start_with(
        etcd: Etcd,
        root_url: Option<String>,
        masters: usize,
        servers: usize,
        extra: &[&str],
    ) -> Result<Cluster> {
        let root = tempfile::tempdir()?;
        let mut c = Cluster {
            etcd,
            root_url: root_url.unwrap_or_else(|| format!("file://{}", root.path().display())),
            root,
            masters: Vec::new(),
            servers: Vec::new(),
            extra: extra.iter().map(|s| s.to_string()).collect(),
        };
        for i in 0..masters {
            c.add_master()?;
            if i == 0 {
                c.masters[0].wait_line("active on", Duration::from_secs(30))?;
            }
        }
        for _ in 0..servers {
            c.add_server()?;
        }
        Ok(c)
    }

    /// Starts one more master.
    pub fn add_master(&mut self) -> Result<()> {
        let n = Node::spawn("master", &self.etcd.url, &self.root_url, &self.extra)?;
        n.wait_line("standby", Duration::from_secs(30))?;
        self.masters.push(n);
        Ok(())
    }

    /// Starts one more region server and waits until it serves.
    pub fn add_server(&mut self) -> Result<()> {
        let n = Node::spawn("regionserver", &self.etcd.url, &self.root_url, &self.extra)?;
        n.wait_line("listening on", Duration::from_secs(30))?;
        self.servers.push(n);
        Ok(())
    }

    /// Every master's address, comma separated (for `Connection::connect`).
    pub fn master_addresses(&self) -> String {
        self.masters
            .iter()
            .map(Node::address)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Client settings that ride out a failover: many retries, short pauses.
pub fn client_settings() -> ferrobase_types::Settings {
    ferrobase_types::Settings {
        client_retries: 40,
        client_pause_ms: 20,
        ..ferrobase_types::Settings::default()
    }
}

/// Region counts per region server address, as the master reports them.
pub async fn region_counts(
    conn: &ferrobase_client::Connection,
) -> Result<std::collections::BTreeMap<String, usize>> {
    let status = conn.admin().cluster_status().await?;
    Ok(status
        .servers
        .iter()
        .map(|s| (s.server.clone(), s.regions.len()))
        .collect())
}

/// Waits (at most 30 s) until the active master sees `n` region servers.
pub async fn wait_servers(conn: &ferrobase_client::Connection, n: usize) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match conn.admin().cluster_status().await {
            Ok(s) if s.servers.len() == n => return Ok(()),
            _ if Instant::now() > deadline => bail!("the master did not see {n} region servers"),
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// The address of the server holding `row` of `table`, per the master.
pub async fn holder(
    conn: &ferrobase_client::Connection,
    table: &str,
    row: &[u8],
) -> Result<String> {
    let d = conn.admin().describe(table).await?;
    d.regions
        .iter()
        .find(|r| &r.start_key[..] <= row && (r.end_key.is_empty() || row < &r.end_key[..]))
        .map(|r| r.server.clone())
        .ok_or_else(|| anyhow::anyhow!("no region of {table} holds {row:?}"))
}
