//! [`HBasePeer`]: a real Apache HBase 2.6 standalone server beside the
//! benchmark, for `ferrobase bench experiment NAME --peer hbase`.
//!
//! This module owns starting `scripts/hbase-peer.sh` (the Apache artifacts
//! from Maven Central, one JVM) on a temporary directory and free loopback
//! ports, and stopping it when the handle is dropped, whatever way the run
//! ends; and [`start_peer`]: that, or an HBase already running, for
//! `--peer`. It never changes HBase's settings beyond what it is told (the
//! experiments' server-wide settings that HBase can take at start).

use crate::cli::PeerArg;
use crate::{BenchError, Result};
use ferrobase_types::Settings;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// How many times [`HBasePeer::start_with`] tries ports.
const START_ATTEMPTS: usize = 3;

/// Why one start failed.
enum Started {
    /// HBase could not bind a port picked for it.
    PortTaken,
    Failed(BenchError),
}

impl From<BenchError> for Started {
    fn from(e: BenchError) -> Started {
        Started::Failed(e)
    }
}

/// A running peer; stopped (SIGTERM, then SIGKILL after 90 s) on drop.
pub struct HBasePeer {
    script: PathBuf,
    dir: tempfile::TempDir,
    /// The region server's `host:port`, the client's bootstrap server.
    pub addr: String,
    /// What the peer was started with, for the report.
    pub describe: String,
}

/// `scripts/hbase-peer.sh`: `$FERROBASE_HBASE_PEER_SCRIPT`, else the first
/// `scripts/hbase-peer.sh` in the current directory or a parent, else the
/// one of the source tree this binary was built from.
pub fn script() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("FERROBASE_HBASE_PEER_SCRIPT") {
        return Ok(PathBuf::from(p));
    }
    let mut dir = std::env::current_dir().ok();
    while let Some(d) = dir {
        let p = d.join("scripts/hbase-peer.sh");
        if p.is_file() {
            return Ok(p);
        }
        dir = d.parent().map(PathBuf::from);
    }
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/hbase-peer.sh");
    if built.is_file() {
        return Ok(built);
    }
    Err(BenchError::CannotRun(
        "--peer hbase needs scripts/hbase-peer.sh (run from a ferrobase checkout, or set FERROBASE_HBASE_PEER_SCRIPT), or an HBase already running: --peer-addr HOST:PORT".into(),
    ))
}

fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(BenchError::io("finding a free port"))?;
    Ok(l.local_addr()
        .map_err(BenchError::io("finding a free port"))?
        .port())
}

impl HBasePeer {
    /// Starts the peer with `heap` (`-Xms`/`-Xmx`, e.g. `2048m`) and HBase
    /// settings `set` (`name=value`); waits until it serves clients
    /// (about 15 s; the first run also fetches the artifacts).
    pub async fn start(heap: &str, set: &[String]) -> Result<HBasePeer> {
        HBasePeer::start_with(heap, set, 1).await
    }

    /// [`start`](Self::start) with `regionservers` region servers in the
    /// JVM (`HBASE_PEER_REGIONSERVERS`); it returns once the master counts
    /// them all. The first serves at [`addr`](Self::addr).
    ///
    /// The ports are free when picked but bound by the JVM seconds later,
    /// in which time another process (any outgoing connection's ephemeral
    /// port) may take one: a start that failed on a port in use is tried
    /// again on new ports, up to `START_ATTEMPTS` (3) times.
    pub async fn start_with(heap: &str, set: &[String], regionservers: usize) -> Result<HBasePeer> {
        let mut attempt = 1;
        loop {
            match HBasePeer::start_once(heap, set, regionservers).await {
                Err(Started::PortTaken) if attempt < START_ATTEMPTS => {
                    eprintln!(
                        "a port of the HBase peer was taken before it bound it; again on new ports"
                    );
                    attempt += 1;
                }
                Err(Started::PortTaken) => {
                    return Err(BenchError::CannotRun(format!(
                        "scripts/hbase-peer.sh start failed {START_ATTEMPTS} times on a port taken before HBase bound it"
                    )));
                }
                Err(Started::Failed(e)) => return Err(e),
                Ok(peer) => return Ok(peer),
            }
        }
    }

    async fn start_once(
        heap: &str,
        set: &[String],
        regionservers: usize,
    ) -> std::result::Result<HBasePeer, Started> {
        let script = script()?;
        let dir = tempfile::Builder::new()
            .prefix("ferrobase-bench-hbase-")
            .tempdir()
            .map_err(BenchError::io("creating the HBase peer's directory"))?;
        let (master, rs, zk) = (free_port()?, free_port()?, free_port()?);
        let mut cmd = Command::new(&script);
        cmd.arg("start")
            .arg(dir.path())
            .env("HBASE_PEER_HEAP", heap)
            .env("HBASE_PEER_MASTER_PORT", master.to_string())
            .env("HBASE_PEER_RS_PORT", rs.to_string())
            .env("HBASE_PEER_ZK_PORT", zk.to_string())
            .env("HBASE_PEER_SET", set.join(" "))
            .env("HBASE_PEER_REGIONSERVERS", regionservers.to_string())
            // Its progress goes where ours does; stdout carries results.
            .stdout(Stdio::from(std::io::stderr()))
            .stderr(Stdio::inherit());
        eprintln!(
            "starting Apache HBase ({}, heap {heap}) ...",
            script.display()
        );
        let peer = HBasePeer {
            script,
            dir,
            addr: format!("127.0.0.1:{rs}"),
            describe: format!(
                "Apache HBase 2.6.4 standalone (scripts/hbase-peer.sh){}, heap {heap}, G1{}",
                if regionservers > 1 {
                    format!(", {regionservers} region servers in one JVM")
                } else {
                    String::new()
                },
                if set.is_empty() {
                    String::new()
                } else {
                    format!(", {}", set.join(", "))
                }
            ),
        };
        let status = tokio::task::spawn_blocking(move || cmd.status())
            .await
            .map_err(|e| BenchError::Server(format!("starting the HBase peer: {e}")))?
            .map_err(BenchError::io("running scripts/hbase-peer.sh"))?;
        if !status.success() {
            let log = std::fs::read_to_string(peer.dir.path().join("peer.log")).unwrap_or_default();
            if log.contains("Address already in use") {
                return Err(Started::PortTaken);
            }
            return Err(Started::Failed(BenchError::CannotRun(format!(
                "scripts/hbase-peer.sh start failed ({status}); it needs Java 17 and Maven (scripts/java-deps.sh peer)"
            ))));
        }
        Ok(peer)
    }
}

/// The HBase of `--peer hbase`, for the experiments' [`Ctx`](crate::experiment::Ctx).
pub struct PeerSetup {
    /// The peer this command started; stopped when dropped.
    pub started: Option<HBasePeer>,
    /// Its registry address and how it was started ([`Ctx::peer`](crate::experiment::Ctx::peer)).
    pub peer: Option<(String, String)>,
    /// Its JVM's process id, when it runs here.
    pub pid: Option<u32>,
    /// The heap of the peer this command started ([`Ctx::peer_heap`](crate::experiment::Ctx::peer_heap)).
    pub heap: Option<String>,
}

/// Starts the HBase peer (`--peer hbase`), or names the one at `addr`;
/// `heap` defaults to the embedded ferrobase's memory budget.
pub async fn start_peer(
    peer: Option<PeerArg>,
    addr: Option<&str>,
    heap: Option<&str>,
) -> Result<PeerSetup> {
    let mut setup = PeerSetup {
        started: None,
        peer: None,
        pid: None,
        heap: None,
    };
    match (peer, addr) {
        (None, _) => {}
        (Some(PeerArg::Hbase), Some(addr)) => {
            // Its CPU and memory can be read only when it runs here.
            setup.pid =
                crate::resources::port_of(addr).and_then(crate::resources::pid_listening_on);
            setup.peer = Some((
                addr.to_string(),
                format!("Apache HBase at {addr} (already running)"),
            ));
        }
        (Some(PeerArg::Hbase), None) => {
            let heap = heap
                .map(String::from)
                .unwrap_or_else(|| format!("{}m", Settings::default().memory_budget() >> 20));
            // The write sweeps run ferrobase with 120 handlers (the seeds'
            // setting); HBase takes the same at start.
            let set = vec!["hbase.regionserver.handler.count=120".to_string()];
            let p = HBasePeer::start(&heap, &set).await?;
            setup.heap = Some(heap);
            setup.peer = Some((p.addr.clone(), p.describe.clone()));
            setup.pid = p.pid();
            setup.started = Some(p);
        }
    }
    Ok(setup)
}

impl HBasePeer {
    /// The JVM's process id (the pid file `scripts/hbase-peer.sh` writes).
    pub fn pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.dir.path().join("peer.pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}

impl Drop for HBasePeer {
    fn drop(&mut self) {
        let _ = Command::new(&self.script)
            .arg("stop")
            .arg(self.dir.path())
            .stdout(Stdio::from(std::io::stderr()))
            .status();
    }
}
