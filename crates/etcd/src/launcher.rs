//! Starts a real etcd (Debian's `etcd` binary, v3 API) on free loopback
//! ports, for tests and `ferrobase bench`; the process is killed when the
//! [`EtcdProcess`] drops. Behind the `launcher` feature: servers never
//! start etcd, the operator runs it.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long etcd may take to accept connections.
const START_LIMIT: Duration = Duration::from_secs(30);

/// Why etcd could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// No `etcd` on the PATH.
    #[error("etcd is not installed: install Debian's etcd-server (apt-get install -y etcd-server)")]
    NotInstalled,
    /// Spawning it, or finding a free port, failed.
    #[error("starting etcd: {0}")]
    Io(#[from] std::io::Error),
    /// It started but did not listen in time.
    #[error("etcd did not listen on port {port} within {limit:?}; see {log}")]
    NotListening {
        /// Its client port.
        port: u16,
        /// How long it was given.
        limit: Duration,
        /// Its log file.
        log: String,
    },
}

/// A port nobody listens on right now on 127.0.0.1.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A running single-member etcd; see the module docs.
#[derive(Debug)]
pub struct EtcdProcess {
    child: Child,
    url: String,
    log: PathBuf,
}

impl EtcdProcess {
    /// Starts etcd with its data in `dir/etcd` and its output in
    /// `dir/etcd.log`, and waits until it accepts connections.
    pub fn start(dir: &Path) -> Result<EtcdProcess, LaunchError> {
        EtcdProcess::launch(dir, None)
    }

    /// The etcd process's id (for measuring its CPU and memory).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// [`start`](Self::start), serving clients over TLS only
    /// (`https://`): `key_store` is a PEM file holding its key and
    /// certificate, and clients must present a certificate signed by a CA
    /// in `trusted_ca` (etcd's `--client-cert-auth`).
    pub fn start_tls(
        dir: &Path,
        key_store: &Path,
        trusted_ca: &Path,
    ) -> Result<EtcdProcess, LaunchError> {
        EtcdProcess::launch(dir, Some((key_store, trusted_ca)))
    }

    fn launch(dir: &Path, tls: Option<(&Path, &Path)>) -> Result<EtcdProcess, LaunchError> {
        let (client, peer) = (free_port()?, free_port()?);
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let log = dir.join("etcd.log");
        let out = std::fs::File::create(&log)?;
        let mut cmd = Command::new("etcd");
        if let Some((key_store, ca)) = tls {
            // Go reads the certificate and the key out of one PEM file.
            cmd.arg("--cert-file")
                .arg(key_store)
                .arg("--key-file")
                .arg(key_store)
                .arg("--trusted-ca-file")
                .arg(ca)
                .arg("--client-cert-auth");
        }
        let child = cmd
            .args(["--name", "ferrobase", "--data-dir"])
            .arg(dir.join("etcd"))
            .args(["--listen-client-urls", &url])
            .args(["--advertise-client-urls", &url])
            .args(["--listen-peer-urls", &peer_url])
            .args(["--initial-advertise-peer-urls", &peer_url])
            .args(["--initial-cluster", &format!("ferrobase={peer_url}")])
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => LaunchError::NotInstalled,
                _ => LaunchError::Io(e),
            })?;
        // From here on a failure drops `etcd`, which kills the child.
        let etcd = EtcdProcess { child, url, log };
        let deadline = Instant::now() + START_LIMIT;
        while TcpStream::connect(("127.0.0.1", client)).is_err() {
            if Instant::now() > deadline {
                return Err(LaunchError::NotListening {
                    port: client,
                    limit: START_LIMIT,
                    log: etcd.log.display().to_string(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(etcd)
    }

    /// Its client URL, `http://127.0.0.1:PORT` (`https://` with TLS).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its log file.
    pub fn log(&self) -> &Path {
        &self.log
    }
}

impl Drop for EtcdProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
