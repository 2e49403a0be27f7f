//! The server a bench run drives: an embedded standalone server on a
//! temporary directory (the default, so a run needs nothing else) or on a
//! data directory the caller names (`ferrobase import --data-dir`), a
//! running cluster at `--server ADDR` (`--target ferrobase://ADDR`), or an
//! Apache HBase 2.x at `--target hbase://ADDR`, driven through
//! `ferrobase-hbase-client` over HBase's own RPC.
//!
//! [`with_target`] (or [`with_target_at`]) is the only way to get one: it stops the embedded server
//! and removes its directory on every exit path, errors included. Stall
//! counters come from the embedded server's engine, or from a remote
//! cluster's status (summed over its region servers).

use crate::{BenchError, Result};
use ferrobase_client::Connection;
use ferrobase_hbase_client::{ClientConfig, Connection as HBaseConnection};
use ferrobase_server::Standalone;
use ferrobase_types::Settings;
use serde::Serialize;

/// The server-side counters that say why a run got its number: the stall
/// counters (docs/architecture.md, design rule 4), flushes, compactions and
/// block cache hits and misses; a snapshot, summed over every region
/// server. A remote cluster reports them in its cluster status, the same
/// numbers `/metrics` shows, over the run's own authenticated connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stalls {
    pub blocked_writes: u64,
    pub blocked_ms: u64,
    pub too_busy: u64,
    pub delayed_flushes: u64,
    pub forced_flushes_global: u64,
    pub forced_flushes_wal: u64,
    pub flushes: u64,
    pub compactions: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
}

impl Stalls {
    /// Counts between `before` and `self`.
    pub fn since(&self, before: &Stalls) -> Stalls {
        Stalls {
            blocked_writes: self.blocked_writes.saturating_sub(before.blocked_writes),
            blocked_ms: self.blocked_ms.saturating_sub(before.blocked_ms),
            too_busy: self.too_busy.saturating_sub(before.too_busy),
            delayed_flushes: self.delayed_flushes.saturating_sub(before.delayed_flushes),
            forced_flushes_global: self
                .forced_flushes_global
                .saturating_sub(before.forced_flushes_global),
            forced_flushes_wal: self
                .forced_flushes_wal
                .saturating_sub(before.forced_flushes_wal),
            flushes: self.flushes.saturating_sub(before.flushes),
            compactions: self.compactions.saturating_sub(before.compactions),
            cache_hits: self.cache_hits.saturating_sub(before.cache_hits),
            cache_misses: self.cache_misses.saturating_sub(before.cache_misses),
        }
    }

    /// The block cache hit ratio of these counts; `None` without lookups.
    pub fn hit_ratio(&self) -> Option<f64> {
        let lookups = self.cache_hits + self.cache_misses;
        (lookups > 0).then(|| self.cache_hits as f64 / lookups as f64)
    }

    /// One line: what the server did (of a delta, during a run).
    pub fn line(&self) -> String {
        let cache = match self.hit_ratio() {
            Some(r) => format!(
                "block cache hit ratio {:.1} % ({} hits, {} misses)",
                r * 100.0,
                self.cache_hits,
                self.cache_misses
            ),
            None => "no block cache lookups".to_string(),
        };
        format!(
            "flushes {}, compactions {}, blocked writes {} ({} ms), too busy {}, delayed flushes {}, forced flushes (global {}, wal {}), {cache}",
            self.flushes,
            self.compactions,
            self.blocked_writes,
            self.blocked_ms,
            self.too_busy,
            self.delayed_flushes,
            self.forced_flushes_global,
            self.forced_flushes_wal,
        )
    }
}

/// Which server a run drives (`--target`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetUrl {
    /// `ferrobase://` (the default): an embedded standalone server.
    Embedded,
    /// `ferrobase://HOST:PORT`: a running ferrobase (`--server`).
    Ferrobase(String),
    /// `hbase://HOST:PORT`: an HBase 2.x cluster, reached through its RPC
    /// connection registry at this address (`hbase.client.bootstrap.servers`).
    HBase(String),
}

impl TargetUrl {
    /// Reads `ferrobase://[HOST:PORT]` or `hbase://HOST:PORT`.
    pub fn parse(text: &str) -> Result<TargetUrl> {
        let bad = || {
            BenchError::Invalid(format!(
                "--target {text}: expected ferrobase:// (embedded), ferrobase://HOST:PORT or hbase://HOST:PORT"
            ))
        };
        let (scheme, rest) = text.split_once("://").ok_or_else(bad)?;
        let addr = rest.trim_end_matches('/');
        match (scheme, addr.is_empty()) {
            ("ferrobase", true) => Ok(TargetUrl::Embedded),
            ("ferrobase", false) => Ok(TargetUrl::Ferrobase(addr.to_string())),
            ("hbase", false) if addr.contains(':') => Ok(TargetUrl::HBase(addr.to_string())),
            _ => Err(bad()),
        }
    }

    /// The target of `--server ADDR` (or none: embedded).
    pub fn from_server(server: Option<&str>) -> TargetUrl {
        match server {
            Some(a) => TargetUrl::Ferrobase(a.to_string()),
            None => TargetUrl::Embedded,
        }
    }
}

/// A server to drive. See the module docs.
pub struct Target {
    /// The embedded server and its temporary directory (none when it runs
    /// on a data directory the caller named).
    embedded: Option<(Standalone, Option<tempfile::TempDir>)>,
    addr: String,
    settings: Settings,
    /// True for an HBase target (`addr` is its bootstrap server).
    hbase: bool,
}

impl Target {
    async fn start_at(
        server: Option<&str>,
        data_dir: Option<&std::path::Path>,
        settings: Settings,
    ) -> Result<Target> {
        match (server, data_dir) {
            (Some(addr), _) => Ok(Target {
                embedded: None,
                addr: addr.to_string(),
                settings,
                hbase: false,
            }),
            (None, Some(dir)) => {
                let bind = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
                let server = Standalone::start(dir, settings.clone(), bind)
                    .await
                    .map_err(|e| {
                        BenchError::Server(format!("embedded server on {}: {e}", dir.display()))
                    })?;
                Ok(Target {
                    addr: server.addr().to_string(),
                    embedded: Some((server, None)),
                    settings,
                    hbase: false,
                })
            }
            (None, None) => {
                let dir = tempfile::Builder::new()
                    .prefix("ferrobase-bench-")
                    .tempdir()
                    .map_err(BenchError::io("cannot create a temporary data directory"))?;
                let bind = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
                let server = Standalone::start(dir.path(), settings.clone(), bind)
                    .await
                    .map_err(|e| BenchError::Server(format!("embedded server: {e}")))?;
                Ok(Target {
                    addr: server.addr().to_string(),
                    embedded: Some((server, Some(dir))),
                    settings,
                    hbase: false,
                })
            }
        }
    }

    /// The address the client connects to.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// `embedded` or the remote address, for reports.
    pub fn describe(&self) -> String {
        if self.hbase {
            format!("HBase at {} (HBase RPC)", self.addr)
        } else if self.embedded.is_some() {
            format!("embedded standalone on {}", self.addr)
        } else {
            self.addr.clone()
        }
    }

    /// Whether this is an embedded server.
    pub fn is_embedded(&self) -> bool {
        self.embedded.is_some()
    }

    /// The settings the embedded server runs with (and the client uses).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// True for an HBase target (`hbase://`).
    pub fn is_hbase(&self) -> bool {
        self.hbase
    }

    /// A new HBase RPC connection to an HBase target, with `pool` TCP
    /// connections per server (`hbase.client.ipc.pool.size`), proving its
    /// user with the HBase token of the token files when there is one
    /// (`hadoop.token.files`, `HADOOP_TOKEN_FILE_LOCATION`).
    pub async fn hbase_connect(&self, pool: usize) -> Result<HBaseConnection> {
        let config = ClientConfig {
            pool_size: pool.max(1),
            ..ClientConfig::new(&self.addr)
        }
        .with_token_files(&self.settings)?;
        Ok(HBaseConnection::connect_with(config).await?)
    }

    /// A new connection with `pool` channels per server.
    pub fn connect(&self, pool: usize) -> Result<Connection> {
        if self.hbase {
            return Err(BenchError::Invalid(format!(
                "this command needs a ferrobase server; {} is an HBase target (hbase://), which only `bench load` and the write experiments drive",
                self.addr
            )));
        }
        let settings = Settings {
            client_ipc_pool_size: pool.max(1),
            ..self.settings.clone()
        };
        Ok(Connection::connect(&self.addr, settings)?)
    }

    /// The stall counters now: the embedded server's engine, or the sum
    /// over every region server of a remote cluster (from the cluster
    /// status; `None` if the cluster cannot be asked).
    pub async fn stalls(&self) -> Option<Stalls> {
        if self.hbase {
            // HBase reports no such counters over its client RPC.
            return None;
        }
        let Some((server, _)) = self.embedded.as_ref() else {
            let conn = self.connect(1).ok()?;
            let status = conn.admin().cluster_status().await.ok()?;
            let mut sum = Stalls::default();
            for c in status.servers.iter().filter_map(|s| s.block_cache.as_ref()) {
                sum.cache_hits += c.hits;
                sum.cache_misses += c.misses;
            }
            for s in status.servers.iter().filter_map(|s| s.stalls.as_ref()) {
                sum.blocked_writes += s.blocked_writes;
                sum.blocked_ms += s.blocked_ms;
                sum.too_busy += s.too_busy;
                sum.delayed_flushes += s.delayed_flushes;
                sum.forced_flushes_global += s.forced_flushes_global;
                sum.forced_flushes_wal += s.forced_flushes_wal;
                sum.flushes += s.flushes;
                sum.compactions += s.compactions;
            }
            return Some(sum);
        };
        let s = server.region_server().engine().stats();
        Some(Stalls {
            blocked_writes: s.stalls.blocked_writes,
            blocked_ms: s.stalls.blocked_ms,
            too_busy: s.stalls.too_busy,
            delayed_flushes: s.stalls.delayed_flushes,
            forced_flushes_global: s.stalls.forced_flushes_global,
            forced_flushes_wal: s.stalls.forced_flushes_wal,
            flushes: s.flushes,
            compactions: s.compactions,
            cache_hits: s.cache.hits,
            cache_misses: s.cache.misses,
        })
    }

    /// Block cache hits and misses so far (embedded server only).
    pub fn cache_hits_misses(&self) -> Option<(u64, u64)> {
        let (server, _) = self.embedded.as_ref()?;
        let c = server.region_server().engine().stats().cache;
        Some((c.hits, c.misses))
    }

    /// Waits until the embedded engine has no flush queued or running (at
    /// most `limit`), so a table can be dropped without racing one;
    /// compactions may go on. A remote cluster returns at once.
    pub async fn wait_flushed(&self, limit: std::time::Duration) {
        let Some((server, _)) = self.embedded.as_ref() else {
            return;
        };
        let start = std::time::Instant::now();
        while server.region_server().engine().stats().flush_jobs > 0 && start.elapsed() < limit {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Waits until the embedded engine has no flush or compaction queued or
    /// running (at most `limit`); a remote cluster returns at once.
    pub async fn wait_idle(&self, limit: std::time::Duration) {
        let Some((server, _)) = self.embedded.as_ref() else {
            return;
        };
        let start = std::time::Instant::now();
        while server.region_server().engine().stats().background_jobs > 0 && start.elapsed() < limit
        {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    async fn stop(self) -> Result<()> {
        if let Some((server, dir)) = self.embedded {
            let r = server
                .stop()
                .await
                .map_err(|e| BenchError::Server(format!("stopping the embedded server: {e}")));
            drop(dir);
            r?;
        }
        Ok(())
    }
}

/// [`with_target`] with the embedded server on `data_dir` when one is
/// given (kept afterwards, like `ferrobase standalone --data-dir`).
pub async fn with_target_at<T>(
    server: Option<&str>,
    data_dir: Option<&std::path::Path>,
    settings: Settings,
    body: impl AsyncFnOnce(&Target) -> Result<T>,
) -> Result<T> {
    let target = Target::start_at(server, data_dir, settings).await?;
    let result = tokio::select! {
        r = body(&target) => r,
        _ = tokio::signal::ctrl_c() => Err(BenchError::Interrupted),
    };
    let stopped = target.stop().await;
    let value = result?;
    stopped?;
    Ok(value)
}

/// [`with_target`] for a [`TargetUrl`]: an HBase target is driven as it
/// is (nothing is started or stopped).
pub async fn with_target_url<T>(
    url: &TargetUrl,
    settings: Settings,
    body: impl AsyncFnOnce(&Target) -> Result<T>,
) -> Result<T> {
    match url {
        TargetUrl::Embedded => with_target(None, settings, body).await,
        TargetUrl::Ferrobase(addr) => with_target(Some(addr), settings, body).await,
        TargetUrl::HBase(addr) => {
            let target = Target {
                embedded: None,
                addr: addr.clone(),
                settings,
                hbase: true,
            };
            tokio::select! {
                r = body(&target) => r,
                _ = tokio::signal::ctrl_c() => Err(BenchError::Interrupted),
            }
        }
    }
}

/// Runs `body` against a server (embedded when `server` is `None`) and
/// stops the embedded server afterwards, whether `body` succeeded, failed
/// or was interrupted by Ctrl-C (then the result is
/// [`BenchError::Interrupted`]).
pub async fn with_target<T>(
    server: Option<&str>,
    settings: Settings,
    body: impl AsyncFnOnce(&Target) -> Result<T>,
) -> Result<T> {
    with_target_at(server, None, settings, body).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_urls() -> Result<()> {
        assert_eq!(TargetUrl::parse("ferrobase://")?, TargetUrl::Embedded);
        assert_eq!(
            TargetUrl::parse("ferrobase://h:1")?,
            TargetUrl::Ferrobase("h:1".into())
        );
        assert_eq!(
            TargetUrl::parse("hbase://127.0.0.1:16020/")?,
            TargetUrl::HBase("127.0.0.1:16020".into())
        );
        for bad in ["hbase://", "hbase://nohost", "http://h:1", "h:1"] {
            assert!(TargetUrl::parse(bad).is_err(), "{bad}");
        }
        Ok(())
    }
}
