//! [`MiniHdfs`]: a real HDFS (Apache Hadoop's MiniDFSCluster: one
//! NameNode and three DataNodes in one JVM, every port a free loopback
//! one) for tests of this and other crates.
//!
//! Owns the JVM: builds its classpath with `scripts/hdfs-minicluster.sh
//! classpath` (which installs a JDK, Maven and the Hadoop artifacts when
//! missing), starts it with its standard input on a pipe, waits for its
//! URL, and kills it on drop. The JVM also exits by itself when that pipe
//! closes, so a test process that dies, or a cluster shared through a
//! `static` ([`MiniHdfs::shared`]), never leaves it running.
//!
//! Without `java` on `PATH` a dev run skips the test with a loud message
//! ([`MiniHdfs::start`] returns `None`); under CI (`CI` or
//! `FERROBASE_REQUIRE_HDFS` set) it fails instead, so a green CI always
//! means HDFS was exercised. Test support only: it panics (with a
//! message) instead of returning errors.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long the cluster may take to serve (JVM start, format, three
/// DataNodes registering: about 5 s on an idle machine).
const STARTUP: Duration = Duration::from_secs(180);

/// The JVM heap: a NameNode and three DataNodes holding test data need
/// far less; other builds share the machine.
const HEAP: &str = "-Xmx512m";

/// A running MiniDFSCluster; see the module docs.
pub struct MiniHdfs {
    child: Child,
    control: Mutex<(ChildStdin, BufReader<ChildStdout>)>,
    url: String,
    dir: PathBuf,
}

impl MiniHdfs {
    /// Starts a cluster of one NameNode and three DataNodes; `None` (after
    /// a loud message) when Java is absent in a dev run.
    pub fn start() -> Option<MiniHdfs> {
        if !java_available() {
            if required() {
                panic!(
                    "java is not on PATH and CI/FERROBASE_REQUIRE_HDFS is set: the hdfs:// tests \
                     must run; scripts/java-deps.sh hdfs installs a JDK and Maven"
                );
            }
            eprintln!(
                "\n==================== SKIPPED: hdfs:// test ====================\n\
                 java is not on PATH, so no MiniDFSCluster can start and this test\n\
                 checked NOTHING. Run scripts/java-deps.sh hdfs (a JDK 17 and Maven),\n\
                 or scripts/test.sh, which does, to run it.\n\
                 ===============================================================\n"
            );
            return None;
        }
        Some(MiniHdfs::launch())
    }

    /// One cluster for the whole test process, started on first use (each
    /// test then works under its own root path). Never dropped: the JVM
    /// exits when the process does (module docs).
    pub fn shared() -> Option<&'static MiniHdfs> {
        static SHARED: OnceLock<Option<MiniHdfs>> = OnceLock::new();
        SHARED.get_or_init(MiniHdfs::start).as_ref()
    }

    fn launch() -> MiniHdfs {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        remove_stale_dirs();
        let dir = std::env::temp_dir().join(format!("ferrobase-hdfs-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        let log = dir.join("minicluster.log");
        let log_file =
            File::create(&log).unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
        let mut child = Command::new("java")
            .args([
                HEAP,
                "-Xms64m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Djava.net.preferIPv4Stack=true",
                "-cp",
                classpath(),
                "io.ferrobase.hdfs.MiniHdfs",
            ])
            .arg(&dir)
            .arg("--control")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start java: {e}"));
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            panic!("java started without its pipes");
        };
        let mut stdout = BufReader::new(stdout);
        let url = read_ready(&mut child, &mut stdout, &log);
        MiniHdfs {
            child,
            control: Mutex::new((stdin, stdout)),
            url,
            dir,
        }
    }

    /// `hdfs://127.0.0.1:PORT`.
    pub fn namenode(&self) -> &str {
        &self.url
    }

    /// A storage root under the cluster: `hdfs://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.url, path.trim_matches('/'))
    }

    /// Where the cluster keeps its NameNode metadata and DataNode blocks
    /// (`data/data/dataN/current/...`).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Stops the `i`-th (0-based) running DataNode; returns how many run.
    pub fn stop_datanode(&self, i: usize) -> usize {
        self.command(&format!("stop-datanode {i}"))
    }

    /// Restarts every DataNode [`stop_datanode`](Self::stop_datanode)
    /// stopped; returns how many run.
    pub fn restart_datanodes(&self) -> usize {
        self.command("restart-datanodes")
    }

    /// Sets the space quota of directory `path` (a path under the
    /// cluster, as given to [`url`](Self::url)) to `bytes` raw bytes (a
    /// file's length times its replication), or clears it (`None`): what
    /// `hdfs dfsadmin -setSpaceQuota` and `-clrSpaceQuota` do. The
    /// NameNode then refuses a new block that would pass it.
    pub fn set_space_quota(&self, path: &str, bytes: Option<u64>) {
        let path = format!("/{}", path.trim_matches('/'));
        let bytes = bytes.map_or(-1, |b| i64::try_from(b).unwrap_or(i64::MAX));
        self.command(&format!("space-quota {path} {bytes}"));
    }

    /// Sends one control command; the number its `OK N running` answer
    /// carries.
    fn command(&self, line: &str) -> usize {
        let mut guard = self
            .control
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (stdin, stdout) = &mut *guard;
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("MiniDFSCluster control '{line}': {e}"));
        let mut answer = String::new();
        stdout
            .read_line(&mut answer)
            .unwrap_or_else(|e| panic!("MiniDFSCluster control '{line}': {e}"));
        answer
            .strip_prefix("OK ")
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("MiniDFSCluster control '{line}' answered '{answer}'"))
    }
}

impl Drop for MiniHdfs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Kept when a test failed: its log and blocks show what happened.
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Reads the JVM's output until its `READY hdfs://…` line.
fn read_ready(child: &mut Child, stdout: &mut BufReader<ChildStdout>, log: &Path) -> String {
    let deadline = Instant::now() + STARTUP;
    let mut line = String::new();
    loop {
        line.clear();
        // Blocks until a line or EOF; the JVM prints READY or exits.
        let n = stdout.read_line(&mut line).unwrap_or(0);
        if let Some(url) = line.trim().strip_prefix("READY ") {
            return url.to_string();
        }
        if n == 0 || Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(30).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            panic!(
                "MiniDFSCluster did not start; log {}:\n{}",
                log.display(),
                tail.join("\n")
            );
        }
    }
}

/// Removes the directories of clusters whose test process is gone (the
/// JVM removes its blocks when it exits; a shared cluster's log stays).
fn remove_stale_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("ferrobase-hdfs-"))
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// True when CI runs the tests: HDFS must then be exercised.
fn required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
        || std::env::var_os("FERROBASE_REQUIRE_HDFS").is_some()
}

fn java_available() -> bool {
    Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The launcher's classpath from `scripts/hdfs-minicluster.sh classpath`
/// (once per process: it may compile and fetch).
fn classpath() -> &'static str {
    static CLASSPATH: OnceLock<String> = OnceLock::new();
    CLASSPATH.get_or_init(|| {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/hdfs-minicluster.sh");
        let out = Command::new(&script)
            .arg("classpath")
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        if !out.status.success() {
            panic!(
                "{} classpath failed ({}); see its messages above",
                script.display(),
                out.status
            );
        }
        let cp = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if cp.is_empty() {
            panic!("{} classpath printed nothing", script.display());
        }
        cp
    })
}
