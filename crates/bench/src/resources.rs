//! CPU seconds and peak resident memory of the processes an experiment
//! point runs on, read from Linux's `/proc`: the bench process itself (the
//! client, and the embedded ferrobase when there is one) and the server
//! process under test when it is another one (an Apache HBase JVM, a
//! ferrobase started elsewhere).
//!
//! This module owns parsing `/proc/PID/stat` (utime + stime),
//! `/proc/PID/status` (`VmHWM`, the peak resident set), resetting that
//! peak at the start of a point (writing `5` to `/proc/PID/clear_refs`, so
//! the peak is the point's own), and finding which process listens on a
//! TCP port (`/proc/net/tcp*` and the processes' socket descriptors), for
//! a server named only by its address. Where `/proc` cannot be read
//! (another OS, another user's process) the figures are absent, never
//! guessed.

use serde::Serialize;

/// Clock ticks a second of `/proc/PID/stat`'s CPU times (`USER_HZ`, 100
/// on every Linux architecture the kernel exports to user space).
const TICKS_PER_S: f64 = 100.0;

/// utime + stime (clock ticks) from the text of `/proc/PID/stat`.
pub fn parse_stat_ticks(stat: &str) -> Option<u64> {
    // The command name is in parentheses and may hold spaces or ')'; the
    // fields after the last ')' start with the state (field 3), so utime
    // and stime (fields 14 and 15) are the 12th and 13th of the rest.
    let (_, rest) = stat.rsplit_once(')')?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// `VmHWM` (peak resident set) in bytes from the text of
/// `/proc/PID/status`.
pub fn parse_vm_hwm(status: &str) -> Option<u64> {
    let value = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let mut parts = value.split_whitespace();
    let n: u64 = parts.next()?.parse().ok()?;
    match parts.next() {
        Some("kB") | None => Some(n * 1024),
        _ => None,
    }
}

/// CPU seconds (user + system) a process has used so far.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat_ticks(&stat).map(|t| t as f64 / TICKS_PER_S)
}

/// A process's peak resident set in bytes (since it started, or since
/// [`reset_peak`]).
pub fn peak_rss(pid: u32) -> Option<u64> {
    parse_vm_hwm(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// Resets a process's `VmHWM` to its current resident set; false when the
/// kernel refused (another user's process, no `/proc`).
pub fn reset_peak(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// The socket inode listening on `port` in the text of `/proc/net/tcp` or
/// `/proc/net/tcp6` (state `0A`, LISTEN).
pub fn parse_listen_inode(table: &str, port: u16) -> Option<u64> {
    for line in table.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(local), Some(state), Some(inode)) = (f.get(1), f.get(3), f.get(9)) else {
            continue;
        };
        let Some((_, hex_port)) = local.rsplit_once(':') else {
            continue;
        };
        if *state == "0A" && u16::from_str_radix(hex_port, 16).ok() == Some(port) {
            return inode.parse().ok().filter(|i| *i != 0);
        }
    }
    None
}

/// The process listening on TCP `port` on this machine, if this user may
/// see it.
pub fn pid_listening_on(port: u16) -> Option<u32> {
    let inode = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .find_map(|t| parse_listen_inode(&t, port))?;
    let target = format!("socket:[{inode}]");
    // Our own process first: a server embedded in it is the common case
    // and saves walking every process.
    let me = std::process::id();
    let owns = |pid: u32| -> bool {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return false;
        };
        fds.filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .any(|l| l.as_os_str() == target.as_str())
    };
    if owns(me) {
        return Some(me);
    }
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| *pid != me && owns(*pid))
}

/// The port of a `host:port` address.
pub fn port_of(addr: &str) -> Option<u16> {
    addr.rsplit_once(':')?.1.trim_end_matches('/').parse().ok()
}

/// One process's use during a point.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProcessUsage {
    /// What runs in it (e.g. `bench client + embedded ferrobase`).
    pub process: String,
    pub pid: u32,
    /// CPU seconds (user + system) during the point.
    pub cpu_s: f64,
    /// Peak resident set (bytes): during the point when `peak_reset`,
    /// else since the process started.
    pub peak_rss_bytes: u64,
    pub peak_reset: bool,
}

/// Every process's use during a point.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Usage {
    pub processes: Vec<ProcessUsage>,
}

impl Usage {
    /// CPU seconds over every process (the server's and the client's).
    pub fn cpu_s(&self) -> f64 {
        self.processes.iter().map(|p| p.cpu_s).sum()
    }

    /// The server process's peak resident set (the first process
    /// measured, see [`Probe::start`]).
    pub fn server_peak_rss(&self) -> Option<u64> {
        self.processes.first().map(|p| p.peak_rss_bytes)
    }

    /// The summed peak resident sets of every process but this one (the
    /// server's processes; each its own peak, so an upper bound of their
    /// peak together); `None` when none was measured.
    pub fn servers_peak_rss_sum(&self) -> Option<u64> {
        let me = std::process::id();
        let peaks: Vec<u64> = self
            .processes
            .iter()
            .filter(|p| p.pid != me)
            .map(|p| p.peak_rss_bytes)
            .collect();
        (!peaks.is_empty()).then(|| peaks.iter().sum())
    }

    /// `CPU s` and `peak RSS MB` table cells (`n/a` when unknown).
    pub fn cells(&self) -> [String; 2] {
        if self.processes.is_empty() {
            return ["n/a".into(), "n/a".into()];
        }
        [
            format!("{:.2}", self.cpu_s()),
            self.server_peak_rss()
                .map_or("n/a".into(), |b| format!("{:.0}", b as f64 / 1e6)),
        ]
    }
}

/// Measures processes from [`Probe::start`] to [`Probe::finish`].
pub struct Probe {
    started: Vec<(String, u32, f64, bool)>,
}

impl Probe {
    /// Starts measuring: `server` (its pid and what it is) when the server
    /// runs in another process, then this process (`client`: what runs in
    /// it). The server comes first, so its peak is the one
    /// [`Usage::server_peak_rss`] reports; with no other server process,
    /// this process is the server.
    pub fn start(server: Option<(u32, &str)>, client: &str) -> Probe {
        let servers: Vec<(String, u32)> = server
            .map(|(pid, what)| (what.to_string(), pid))
            .into_iter()
            .collect();
        Probe::start_many(&servers, client)
    }

    /// [`start`](Self::start) for a server of several processes
    /// (`(what, pid)` each, e.g. a ferrobase cluster's master and region
    /// servers), measured in that order before this process.
    pub fn start_many(servers: &[(String, u32)], client: &str) -> Probe {
        let me = std::process::id();
        let mut procs: Vec<(String, u32)> = servers
            .iter()
            .filter(|(_, pid)| *pid != me)
            .cloned()
            .collect();
        procs.push((client.to_string(), me));
        let started = procs
            .into_iter()
            .filter_map(|(what, pid)| {
                let cpu = cpu_seconds(pid)?;
                Some((what, pid, cpu, reset_peak(pid)))
            })
            .collect();
        Probe { started }
    }

    /// The use since [`start`](Self::start); a process that has gone (or
    /// cannot be read) is left out.
    pub fn finish(self) -> Usage {
        Usage {
            processes: self
                .started
                .into_iter()
                .filter_map(|(process, pid, cpu0, peak_reset)| {
                    Some(ProcessUsage {
                        cpu_s: (cpu_seconds(pid)? - cpu0).max(0.0),
                        peak_rss_bytes: peak_rss(pid)?,
                        process,
                        pid,
                        peak_reset,
                    })
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_and_status_fields() {
        let stat =
            "1234 (java (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 40 0 1 2 3";
        assert_eq!(parse_stat_ticks(stat), Some(325));
        assert_eq!(parse_stat_ticks("1234 (x) S 1 2"), None);
        assert_eq!(parse_stat_ticks("no parenthesis"), None);
        let status = "Name:\tjava\nVmPeak:\t 9000 kB\nVmHWM:\t  524288 kB\nVmRSS:\t 1 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(524_288 * 1024));
        assert_eq!(parse_vm_hwm("Name:\tx\n"), None);
        assert_eq!(parse_vm_hwm("VmHWM:\t12 MB\n"), None);
    }

    #[test]
    fn listening_socket_inode() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:3E94 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0\n\
   1: 0100007F:3E94 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 5151 1 0000000000000000 20 4 30 10 -1\n\
   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 77 1 0000000000000000 100 0 0 10 0\n";
        assert_eq!(parse_listen_inode(table, 16020), Some(4242));
        assert_eq!(parse_listen_inode(table, 22), Some(77));
        assert_eq!(parse_listen_inode(table, 50000), None);
        assert_eq!(port_of("127.0.0.1:16020"), Some(16020));
        assert_eq!(port_of("[::1]:9/"), Some(9));
        assert_eq!(port_of("nohost"), None);
    }

    #[test]
    fn this_process_is_found_and_measured() -> std::io::Result<()> {
        let me = std::process::id();
        let l = std::net::TcpListener::bind("127.0.0.1:0")?;
        let port = l.local_addr()?.port();
        if std::fs::metadata("/proc/self/stat").is_err() {
            return Ok(()); // no /proc: nothing to find
        }
        assert_eq!(pid_listening_on(port), Some(me));
        let probe = Probe::start(Some((me, "the same process")), "bench");
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let u = probe.finish();
        // This process is the server too: measured once.
        assert_eq!(u.processes.len(), 1);
        assert_eq!(u.processes[0].process, "bench");
        assert!(u.processes[0].peak_rss_bytes > 0);
        assert!(u.cpu_s() >= 0.0);
        let [cpu, rss] = u.cells();
        assert!(cpu.parse::<f64>().is_ok() && rss.parse::<f64>().is_ok());
        assert_eq!(Usage::default().cells(), ["n/a", "n/a"]);
        Ok(())
    }
}
