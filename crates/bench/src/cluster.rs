//! A throw-away distributed cluster on this machine, for the
//! `regionservers` experiment: etcd (Debian's `etcd` binary, or an
//! existing one at `--etcd`), one `ferrobase master` and N `ferrobase
//! regionserver` child processes on loopback ports, sharing a root under a
//! temporary directory.
//!
//! [`LocalCluster`] owns every process it started and kills them when it
//! drops, on every exit path (errors, Ctrl-C), so a bench run never leaves
//! a server behind. With `--etcd` the processes register in that etcd
//! under ferrobase's usual keys, so it must be an etcd that no running
//! ferrobase cluster uses.
//!
//! Waits are bounded and fail with a message naming what did not happen.

use crate::{BenchError, Result};
use ferrobase_etcd::launcher::{EtcdProcess, LaunchError};
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// How long a process may take to come up.
const START_LIMIT: Duration = Duration::from_secs(60);

/// A port nobody listens on right now.
fn free_port() -> Result<u16> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(BenchError::io("finding a free loopback port"))
}

/// A child process, killed on drop; its stdout lines arrive on a channel.
struct Proc {
    what: String,
    child: Child,
    lines: Option<Receiver<String>>,
}

impl Proc {
    fn spawn(what: String, mut cmd: Command, log: &Path) -> Result<Proc> {
        let err = std::fs::File::create(log)
            .map_err(BenchError::io(format!("creating {}", log.display())))?;
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .map_err(BenchError::io(format!("starting {what}")))?;
        let lines = child.stdout.take().map(|out| {
            let (tx, rx) = channel();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
                    if tx.send(line).is_err() {
                        return;
                    }
                }
            });
            rx
        });
        Ok(Proc { what, child, lines })
    }

    /// Waits for a stdout line containing `text`.
    fn wait_line(&mut self, text: &str, log: &Path) -> Result<String> {
        let deadline = Instant::now() + START_LIMIT;
        let Some(lines) = &self.lines else {
            return Err(BenchError::Server(format!("{}: no stdout", self.what)));
        };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) if line.contains(text) => return Ok(line),
                Ok(_) => {}
                Err(_) => {
                    let exited = matches!(self.child.try_wait(), Ok(Some(_)));
                    return Err(BenchError::Server(format!(
                        "{} {} (no line with '{text}' within {START_LIMIT:?}); see {}",
                        self.what,
                        if exited { "exited" } else { "did not start" },
                        log.display()
                    )));
                }
            }
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// etcd, one master and region servers; see the module docs.
pub struct LocalCluster {
    // Field order is drop order: servers before the master before etcd.
    servers: Vec<Proc>,
    master: Option<Proc>,
    etcd: Option<EtcdProcess>,
    etcd_url: String,
    master_port: u16,
    exe: PathBuf,
    settings: Vec<String>,
    /// The `--root` URL of this cluster's processes.
    root: String,
    dir: tempfile::TempDir,
}

impl LocalCluster {
    /// Starts etcd (unless `etcd_url` is given), a master and `servers`
    /// region servers of the ferrobase binary `exe`, each with the
    /// `name=value` settings.
    pub fn start(
        exe: &Path,
        (etcd_url, root): (Option<&str>, Option<&str>),
        servers: usize,
        settings: &[String],
    ) -> Result<LocalCluster> {
        let dir = tempfile::Builder::new()
            .prefix("ferrobase-cluster-")
            .tempdir()
            .map_err(BenchError::io("creating a temporary cluster directory"))?;
        let root = match root {
            None => format!("file://{}", dir.path().join("root").display()),
            Some(url) => sub_root(url, &unique_name(dir.path())),
        };
        let (etcd, etcd_url) = match etcd_url {
            Some(url) => (None, url.to_string()),
            None => {
                let p = EtcdProcess::start(dir.path()).map_err(|e| match e {
                    LaunchError::NotInstalled => BenchError::CannotRun(
                        "the 'regionservers' experiment needs etcd: install Debian's etcd-server \
                         (apt-get install -y etcd-server) or pass --etcd http://HOST:2379"
                            .into(),
                    ),
                    other => BenchError::Server(other.to_string()),
                })?;
                let url = p.url().to_string();
                (Some(p), url)
            }
        };
        let mut c = LocalCluster {
            servers: Vec::new(),
            master: None,
            etcd,
            etcd_url,
            master_port: 0,
            exe: exe.to_path_buf(),
            settings: settings.to_vec(),
            root,
            dir,
        };
        c.master_port = free_port()?;
        let log = c.dir.path().join("master.log");
        let mut m = Proc::spawn(
            "ferrobase master".into(),
            c.command("master", c.master_port),
            &log,
        )?;
        m.wait_line("active on", &log)?;
        c.master = Some(m);
        for _ in 0..servers {
            c.add_server()?;
        }
        Ok(c)
    }

    fn command(&self, kind: &str, port: u16) -> Command {
        let mut cmd = Command::new(&self.exe);
        cmd.arg(kind)
            .args(["--etcd", &self.etcd_url])
            .args(["--root", &self.root])
            .args(["--port", &port.to_string()]);
        for s in &self.settings {
            cmd.args(["--set", s]);
        }
        cmd
    }

    /// Starts one more region server and waits until it serves.
    pub fn add_server(&mut self) -> Result<()> {
        let i = self.servers.len();
        let log = self.dir.path().join(format!("regionserver-{i}.log"));
        let mut p = Proc::spawn(
            format!("ferrobase regionserver #{i}"),
            self.command("regionserver", free_port()?),
            &log,
        )?;
        p.wait_line("listening on", &log)?;
        self.servers.push(p);
        Ok(())
    }

    /// Every process this cluster started, `(what, pid)`: the region
    /// servers, the master and etcd (unless an outside one was named).
    pub fn processes(&self) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> = self
            .servers
            .iter()
            .chain(self.master.iter())
            .map(|p| (p.what.clone(), p.child.id()))
            .collect();
        if let Some(e) = &self.etcd {
            out.push(("etcd".into(), e.pid()));
        }
        out
    }

    /// The master's address, for `--server`/`Connection::connect`.
    pub fn master_address(&self) -> String {
        format!("127.0.0.1:{}", self.master_port)
    }
}

/// A name no other cluster started from this machine uses: the temporary
/// directory's own name.
fn unique_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| format!("cluster-{}", std::process::id()))
}

/// `url` with `/name` appended to its path (before any `?query`), so that
/// clusters started one after another on one root never share a meta.
fn sub_root(url: &str, name: &str) -> String {
    let (path, query) = match url.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (url, None),
    };
    let joined = format!("{}/{name}", path.trim_end_matches('/'));
    match query {
        Some(q) => format!("{joined}?{q}"),
        None => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cluster_gets_its_own_place_under_the_root() {
        assert_eq!(sub_root("file:///r/", "c1"), "file:///r/c1");
        assert_eq!(
            sub_root("s3://b/p?endpoint=http://h:1&region=x", "c1"),
            "s3://b/p/c1?endpoint=http://h:1&region=x"
        );
        assert_eq!(sub_root("s3://b", "c1"), "s3://b/c1");
    }
}
