//! [`ClientConfig`]: the client's settings, named and defaulted as the
//! HBase Java client's (`hbase.client.*`, `hbase.rpc.timeout`).
//!
//! This module owns the defaults, the backoff schedule and reading an
//! HBase token from Hadoop token files; it never opens a connection.

use crate::error::{ClientError, Result};
use bytes::Bytes;
use ferrobase_types::Settings;
use std::time::Duration;

/// An HBase authentication token (kind `HBASE_AUTH_TOKEN`): with one, a
/// connection proves its user over SASL DIGEST-MD5 instead of claiming a
/// name. Its `Debug` never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    pub identifier: Bytes,
    pub password: Bytes,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("identifier_bytes", &self.identifier.len())
            .field("password", &"<hidden>")
            .finish()
    }
}

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
    /// The token connections authenticate with (SASL DIGEST-MD5); `None`:
    /// SIMPLE, the `user` claimed.
    pub token: Option<Token>,
    /// `hbase.ipc.client.fallback-to-simple-auth-allowed` (default false,
    /// as HBase): with a token, go on with SIMPLE when a server says it
    /// does not authenticate, instead of failing.
    pub fallback_to_simple: bool,
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
            token: None,
            fallback_to_simple: false,
        }
    }

    /// Takes the first HBase token of the Hadoop token files `settings`
    /// names (`hadoop.token.files`, else `HADOOP_TOKEN_FILE_LOCATION`), as
    /// the Java client's `UserGroupInformation` does: a file that does not
    /// exist is skipped, one that cannot be read or decoded is an error
    /// naming it. No token found leaves the config as it was.
    pub fn with_token_files(mut self, settings: &Settings) -> Result<ClientConfig> {
        let found = ferrobase_hbase_wire::token::first_hbase_token(&settings.token_file_paths())
            .map_err(ClientError::Invalid)?;
        if let Some(t) = found {
            self.token = Some(Token {
                identifier: t.identifier.into(),
                password: t.password.into(),
            });
        }
        Ok(self)
    }

    /// The wait before retry `attempt` (0-based), as HBase's
    /// `ConnectionUtils.getPauseTime`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let i = (attempt as usize).min(RETRY_BACKOFF.len() - 1);
        self.pause * RETRY_BACKOFF.get(i).copied().unwrap_or(200)
    }
}
