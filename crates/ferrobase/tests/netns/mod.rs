//! Network namespaces for partition tests: a Linux bridge in the root
//! namespace (the test client's side, `10.A.B.1/24`) and one namespace per
//! process, joined to the bridge by a veth pair (`10.A.B.n/24`). Links are
//! cut with blackhole routes inside a namespace (`ip route add blackhole
//! IP/32`): packets to that address are dropped, so TCP neither connects
//! nor resets, as on a real partition. Everything is created with Debian's
//! iproute2 (`ip`) and removed when the [`Net`] drops, even on a panic.
//!
//! Needs root. [`Net::create`] returns `None` (and says why) only when the
//! test does not run as root; as root, a failure to build the network is an
//! error: the test fails, it never passes without having run.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use anyhow::{Context, Result, bail};
use std::process::Command;

/// Runs `ip ARGS`, failing with its stderr.
fn ip(args: &[&str]) -> Result<()> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .context("running ip (install iproute2)")?;
    if !out.status.success() {
        bail!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Whether this process runs as root (uid 0), from `/proc/self/status`.
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// Removes what runs that died without dropping their [`Net`] left (an
/// abort skips destructors): namespaces `fp<pid>s<seq>n<k>` whose creating test
/// process is gone, after killing the processes still inside them, and
/// their bridges.
fn reap_stale() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some(ns) = line.split_whitespace().next() else {
            continue;
        };
        let Some((pid, tag)) = ns
            .strip_prefix("fp")
            .and_then(|r| r.split_once('s'))
            .and_then(|(p, rest)| {
                let seq = rest.split_once('n')?.0;
                Some((p.parse::<u32>().ok()?, format!("fp{p}s{seq}")))
            })
        else {
            continue;
        };
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue; // its test still runs
        }
        if let Ok(p) = Command::new("ip").args(["netns", "pids", ns]).output() {
            for child in String::from_utf8_lossy(&p.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-9", child]).status();
            }
        }
        let _ = ip(&["netns", "del", ns]);
        let _ = ip(&["link", "del", &format!("{tag}br")]);
    }
}

/// The bridge, its namespaces and their veth pairs; removed on drop.
pub struct Net {
    tag: String,
    bridge: String,
    subnet: String,
    namespaces: Vec<String>,
    veths: Vec<String>,
}

impl Net {
    /// Builds a bridge and `hosts` namespaces. `None` when not root (the
    /// caller skips with the printed message); an error when root and
    /// anything fails.
    pub fn create(hosts: usize) -> Result<Option<Net>> {
        if !is_root() {
            eprintln!(
                "SKIPPED: network partition tests need root (ip netns add); run as root to run them"
            );
            return Ok(None);
        }
        reap_stale();
        let pid = std::process::id();
        // Names and a subnet of our own, so concurrent runs never collide.
        // 198.18.0.0/15 is reserved for network tests (RFC 2544): no real
        // network a CI machine depends on uses it.
        static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::SeqCst) % 10;
        let tag = format!("fp{pid}s{seq}");
        let used = Command::new("ip")
            .args(["-o", "-4", "addr"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let subnet = (0..512u32)
            .map(|i| (pid + i) % 512)
            .map(|n| format!("198.{}.{}", 18 + n / 256, n % 256))
            .find(|s| !used.contains(&format!(" {s}.")))
            .context("no free /24 in 198.18.0.0/15 for the test network")?;
        let mut net = Net {
            bridge: format!("{tag}br"),
            tag,
            subnet,
            namespaces: Vec::new(),
            veths: Vec::new(),
        };
        net.build(hosts)
            .context("creating network namespaces as root (iproute2, CAP_NET_ADMIN)")?;
        Ok(Some(net))
    }

    fn build(&mut self, hosts: usize) -> Result<()> {
        ip(&["link", "add", &self.bridge, "type", "bridge"])?;
        self.veths.push(self.bridge.clone());
        ip(&[
            "addr",
            "add",
            &format!("{}.1/24", self.subnet),
            "dev",
            &self.bridge,
        ])?;
        ip(&["link", "set", &self.bridge, "up"])?;
        for n in 0..hosts {
            let ns = format!("{}n{n}", self.tag);
            let (outer, inner) = (format!("{}v{n}", self.tag), format!("{}i{n}", self.tag));
            ip(&["netns", "add", &ns])?;
            self.namespaces.push(ns.clone());
            ip(&[
                "link", "add", &outer, "type", "veth", "peer", "name", &inner,
            ])?;
            self.veths.push(outer.clone());
            ip(&["link", "set", &inner, "netns", &ns])?;
            ip(&["link", "set", &outer, "master", &self.bridge, "up"])?;
            let addr = format!("{}/24", self.host_ip(n));
            ip(&["-n", &ns, "addr", "add", &addr, "dev", &inner])?;
            ip(&["-n", &ns, "link", "set", &inner, "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
        }
        Ok(())
    }

    /// The address of host `n` (in its namespace).
    pub fn host_ip(&self, n: usize) -> String {
        format!("{}.{}", self.subnet, n + 2)
    }

    /// The namespace of host `n`.
    pub fn namespace(&self, n: usize) -> &str {
        &self.namespaces[n]
    }

    /// A command that runs `program` inside host `n`'s namespace.
    pub fn command(&self, n: usize, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.namespaces[n], program]);
        c
    }

    /// Host `n` can no longer exchange packets with host `other` (both
    /// directions: `n` drops what it would send, `other` too).
    pub fn cut(&self, n: usize, other: usize) -> Result<()> {
        self.route(n, &self.host_ip(other), "add")?;
        self.route(other, &self.host_ip(n), "add")
    }

    /// Undoes [`cut`](Self::cut).
    pub fn heal(&self, n: usize, other: usize) -> Result<()> {
        self.route(n, &self.host_ip(other), "del")?;
        self.route(other, &self.host_ip(n), "del")
    }

    /// Host `n` can no longer reach the root namespace (the test client).
    pub fn cut_client(&self, n: usize) -> Result<()> {
        self.route(n, &format!("{}.1", self.subnet), "add")
    }

    /// Undoes [`cut_client`](Self::cut_client).
    pub fn heal_client(&self, n: usize) -> Result<()> {
        self.route(n, &format!("{}.1", self.subnet), "del")
    }

    fn route(&self, n: usize, to: &str, op: &str) -> Result<()> {
        ip(&[
            "-n",
            &self.namespaces[n],
            "route",
            op,
            "blackhole",
            &format!("{to}/32"),
        ])
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        // Deleting a namespace deletes the veth ends inside it, and with
        // them their peers; the bridge goes last.
        for ns in &self.namespaces {
            let _ = ip(&["netns", "del", ns]);
        }
        for link in self.veths.iter().rev() {
            let _ = ip(&["link", "del", link]);
        }
    }
}
