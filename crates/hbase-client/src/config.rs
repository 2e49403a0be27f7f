//! [`ClientConfig`]: the client's settings, named and defaulted as the
//! HBase Java client's (`hbase.client.*`, `hbase.rpc.timeout`).
//!
//! This module owns the defaults and the backoff schedule; it never opens
//! a connection.

use std::time::Duration;

/// HBase's `HConstants.RETRY_BACKOFF`: multiples of the pause before
/// retry n.
const RETRY_BACKOFF: [u32; 13] = [1, 2, 3, 5, 10, 20, 40, 100, 100, 100, 100, 200, 200];

/// How the client connects and retries.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// `hbase.client.bootstrap.servers`: `host:port` of servers that answer
    /// the connection registry (an HBase master or region server, or a
    /// ferrobase server).
    pub bootstrap: Vec<String>,
    /// The user name sent in each connection header (SIMPLE
    /// authentication).
    pub user: String,
    /// `hbase.rpc.timeout` (default 60 s): one call's limit.
    pub rpc_timeout: Duration,
    /// `hbase.client.operation.timeout` (HBase: 20 minutes; here 2
    /// minutes): an operation's limit over all its retries.
    pub operation_timeout: Duration,
    /// `hbase.client.retries.number` (default 15).
    pub retries: u32,
    /// `hbase.client.pause` (default 100 ms), multiplied by HBase's
    /// backoff schedule.
    pub pause: Duration,
    /// `hbase.client.ipc.pool.size` (default 1): TCP connections per
    /// server and service, used in turn.
    pub pool_size: usize,
    /// `hbase.client.scanner.caching`: rows asked for per scan call
    /// (HBase 2 asks for up to `Integer.MAX_VALUE` rows bounded by 2 MiB;
    /// here 1,000 rows).
    pub scanner_caching: u32,
    /// `hbase.client.scanner.max.result.size` (default 2 MiB).
    pub scanner_max_result_size: u64,
}

impl ClientConfig {
    /// The defaults, bootstrapping from `servers` (`host:port`, comma
    /// separated).
    pub fn new(servers: &str) -> ClientConfig {
        ClientConfig {
            bootstrap: servers
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            user: std::env::var("USER").unwrap_or_else(|_| "ferrobase".into()),
            rpc_timeout: Duration::from_secs(60),
            operation_timeout: Duration::from_secs(120),
            retries: 15,
            pause: Duration::from_millis(100),
            pool_size: 1,
            scanner_caching: 1000,
            scanner_max_result_size: 2 << 20,
        }
    }

    /// The wait before retry `attempt` (0-based), as HBase's
    /// `ConnectionUtils.getPauseTime`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let i = (attempt as usize).min(RETRY_BACKOFF.len() - 1);
        self.pause * RETRY_BACKOFF.get(i).copied().unwrap_or(200)
    }
}
