//! [`MotoServer`]: a real S3 API (moto's standalone server) on a loopback
//! port, with one bucket, for tests of this and other crates.
//!
//! Owns the moto process: finds the binary, starts it, waits until it
//! answers, creates the bucket, and kills it on drop. A test that needs S3
//! and cannot find moto fails with how to install it; it never skips, so a
//! green run always means S3 was exercised. Test support only: it panics
//! (with a message) instead of returning errors.

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The keys every `url` carries (moto accepts any; they must be present
/// for requests to be signed at all).
pub const ACCESS_KEY_ID: &str = "ferrobase";
pub const SECRET_ACCESS_KEY: &str = "ferrobase-secret";
/// The bucket [`MotoServer::start`] creates.
pub const BUCKET: &str = "ferrobase-test";

/// How long moto may take to answer after its start (Python imports).
const STARTUP: Duration = Duration::from_secs(20);

const HOW_TO_INSTALL: &str = "install it with `python3 -m venv .venv && \
     .venv/bin/pip install 'moto[server]'` at the workspace root (scripts/test.sh does this), \
     or point FERROBASE_MOTO_SERVER at a moto_server binary";

/// A running moto server; see the module docs.
pub struct MotoServer {
    child: Child,
    port: u16,
    bucket: String,
    log: PathBuf,
}

impl MotoServer {
    /// Starts moto with bucket [`BUCKET`].
    pub fn start() -> MotoServer {
        MotoServer::start_with_bucket(BUCKET)
    }

    /// Starts moto with bucket `bucket` (a valid S3 bucket name).
    pub fn start_with_bucket(bucket: &str) -> MotoServer {
        let bin = find_moto_server();
        // Another process can take the port between our probe and moto's
        // bind; moto then exits at once and we try another port.
        let mut last_failure = String::new();
        for _ in 0..3 {
            let port = free_port();
            let log = std::env::temp_dir()
                .join(format!("ferrobase-moto-{}-{port}.log", std::process::id()));
            let log_file = File::create(&log)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
            let stderr = log_file
                .try_clone()
                .unwrap_or_else(|e| panic!("cannot reopen {}: {e}", log.display()));
            // Output goes to a file: a pipe nobody reads would fill up and
            // stall moto, which logs every request.
            let child = Command::new(&bin)
                .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(log_file)
                .stderr(stderr)
                .spawn()
                .unwrap_or_else(|e| {
                    panic!("cannot start {}: {e}; {HOW_TO_INSTALL}", bin.display())
                });
            let mut server = MotoServer {
                child,
                port,
                bucket: bucket.to_string(),
                log,
            };
            match server.wait_ready() {
                Ok(()) => {
                    server.create_bucket();
                    return server;
                }
                Err(why) => last_failure = why,
            }
        }
        panic!(
            "moto_server ({}) did not start: {last_failure}",
            bin.display()
        );
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The bucket this server was started with.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// A storage root for [`fs::from_url`](crate::fs::from_url):
    /// `s3://bucket/prefix?endpoint=…&region=us-east-1&access_key_id=…&secret_access_key=…`.
    pub fn url(&self, prefix: &str) -> String {
        let prefix = prefix.trim_matches('/');
        let path = if prefix.is_empty() {
            self.bucket.clone()
        } else {
            format!("{}/{prefix}", self.bucket)
        };
        format!(
            "s3://{path}?endpoint={}&region=us-east-1&access_key_id={ACCESS_KEY_ID}&secret_access_key={SECRET_ACCESS_KEY}",
            self.endpoint()
        )
    }

    /// How many multipart uploads are in progress (started, neither
    /// completed nor aborted) in the bucket.
    pub fn multipart_uploads(&self) -> usize {
        let resp = self
            .request("GET", &format!("/{}?uploads", self.bucket))
            .unwrap_or_else(|e| panic!("listing multipart uploads: {e}"));
        if !resp.starts_with("HTTP/1.1 200") && !resp.starts_with("HTTP/1.0 200") {
            panic!("listing multipart uploads failed: {resp}");
        }
        resp.matches("<Upload>").count()
    }

    /// Polls until moto accepts connections; `Err` (with its log) if it
    /// exits or does not answer within [`STARTUP`].
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("it exited ({status}); {}", self.log_tail()));
            }
            if let Ok(resp) = self.request("GET", "/")
                && resp.starts_with("HTTP/1.")
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                return Err(format!(
                    "no answer on port {} within {STARTUP:?}; {}",
                    self.port,
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `PUT /bucket`: moto accepts it unsigned.
    fn create_bucket(&self) {
        let resp = self
            .request("PUT", &format!("/{}", self.bucket))
            .unwrap_or_else(|e| panic!("creating bucket {}: {e}", self.bucket));
        if !resp.starts_with("HTTP/1.1 200") && !resp.starts_with("HTTP/1.0 200") {
            panic!("creating bucket {} failed: {resp}", self.bucket);
        }
    }

    /// One plain HTTP/1.1 request with an empty body; the whole response.
    fn request(&self, method: &str, path: &str) -> io::Result<String> {
        let addr = (Ipv4Addr::LOCALHOST, self.port).into();
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            self.port
        )?;
        let mut resp = String::new();
        s.read_to_string(&mut resp)?;
        Ok(resp)
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!("log {}:\n{}", self.log.display(), tail.join("\n"))
    }
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Kept when a test failed: it shows what moto saw.
        if !std::thread::panicking() {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// `FERROBASE_MOTO_SERVER`, else `<workspace>/.venv/bin/moto_server`, else
/// `moto_server` on `PATH`; panics with how to install it.
pub fn find_moto_server() -> PathBuf {
    if let Some(p) = std::env::var_os("FERROBASE_MOTO_SERVER") {
        let p = PathBuf::from(p);
        if !p.is_file() {
            panic!(
                "FERROBASE_MOTO_SERVER={} is not a file; {HOW_TO_INSTALL}",
                p.display()
            );
        }
        return p;
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/moto_server");
    if venv.is_file() {
        return venv;
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("moto_server"))
            .find(|p| p.is_file())
    });
    on_path.unwrap_or_else(|| {
        panic!(
            "moto_server (a local S3 server) is needed by this test and was not found \
             (looked at FERROBASE_MOTO_SERVER, {}, PATH); {HOW_TO_INSTALL}",
            venv.display()
        )
    })
}

/// A loopback port free right now.
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("cannot find a free loopback port: {e}"))
}
