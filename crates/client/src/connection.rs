//! A connection to a ferrobase cluster: a channel to the master, a pool of
//! `hbase.client.ipc.pool.size` channels per region server (spread round
//! robin), the region location cache, and the retry policy.
//!
//! The location cache is filled from the master and dropped for a table
//! when a call says the region is not served there (or the server is
//! unreachable). In distributed mode the connection may name several
//! masters (`host:port,host:port`): a locate that cannot reach the current
//! one moves on to the next, so clients follow a standby that took over.
//! Every channel is TLS when `hbase.client.netty.tls.enabled` (see
//! `ferrobase_tls`).
//!
//! Each connection is a nonce group (HBase's per-client nonce group): every
//! increment, append and check-and-mutate draws a nonce from it and sends
//! the pair on each retry, so the server applies it once (and answers a
//! check-and-mutate's retry with its first outcome) even when a retry
//! follows a call that was applied but not answered (a failover, a fenced server, a
//! broken connection). This module never interprets rows.

use crate::admin::Admin;
use crate::error::{ClientError, Result};
use crate::table::Table;
use bytes::Bytes;
use ferrobase_proto::pb::{
    self, master_client::MasterClient, region_server_client::RegionServerClient,
};
use ferrobase_types::Settings;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// A channel whose every request claims the connection's user
/// (`hbase.client.user`, else the OS user) for simple authentication.
pub(crate) type UserChannel = InterceptedService<Channel, ferrobase_proto::UserHeader>;

/// Largest message sent or received.
const MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

/// HBase's `RETRY_BACKOFF`: multiples of `hbase.client.pause`.
const RETRY_BACKOFF: [u64; 13] = [1, 2, 3, 5, 10, 20, 40, 100, 100, 100, 100, 200, 200];

/// Where one region is online.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionLocation {
    pub region_id: u64,
    pub table: String,
    pub start_key: Bytes,
    pub end_key: Bytes,
    pub server: String,
}

impl RegionLocation {
    fn from_pb(r: pb::RegionLocation) -> RegionLocation {
        RegionLocation {
            region_id: r.region_id,
            table: r.table,
            start_key: r.start_key,
            end_key: r.end_key,
            server: r.server,
        }
    }

    /// True when `row` is in this region.
    pub fn contains(&self, row: &[u8]) -> bool {
        row >= &self.start_key[..] && (self.end_key.is_empty() || row < &self.end_key[..])
    }
}

struct ServerChannels {
    clients: Vec<RegionServerClient<UserChannel>>,
    next: AtomicUsize,
}

pub(crate) struct Inner {
    pub(crate) settings: Settings,
    /// TLS to every server (`hbase.client.netty.tls.enabled`).
    tls: Option<ferrobase_tls::ClientTls>,
    masters: Vec<MasterClient<UserChannel>>,
    /// The user every request claims.
    user: ferrobase_proto::UserHeader,
    /// Index in `masters` of the one believed active.
    active_master: AtomicUsize,
    servers: Mutex<HashMap<String, Arc<ServerChannels>>>,
    locations: RwLock<HashMap<String, Arc<Vec<RegionLocation>>>>,
    /// This connection's nonce group and next nonce.
    nonces: ferrobase_types::nonce::NonceGenerator,
}

/// A connection; cheap to clone, shared by every [`Table`] and [`Admin`].
#[derive(Clone)]
pub struct Connection {
    pub(crate) inner: Arc<Inner>,
}

fn channel(address: &str, tls: Option<&ferrobase_tls::ClientTls>) -> Result<Channel> {
    let uri = if address.contains("://") {
        address.to_string()
    } else {
        format!("http://{address}")
    };
    let endpoint = Endpoint::from_shared(uri)
        .map_err(|e| ClientError::Invalid(format!("bad address '{address}': {e}")))?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(5))
        .http2_adaptive_window(true);
    Ok(ferrobase_tls::grpc::channel(endpoint, tls))
}

/// What every request of a connection carries: the claimed user
/// (`hbase.client.user`), and the first HBase token (`HBASE_AUTH_TOKEN`)
/// in the token files (`hadoop.token.files`, else
/// `HADOOP_TOKEN_FILE_LOCATION`), which a secure server takes as proof
/// and a simple one ignores. As Hadoop does, a token file that does not
/// exist is skipped; one that cannot be read or decoded is an error
/// naming it.
fn credentials(settings: &Settings) -> Result<ferrobase_proto::UserHeader> {
    let header = ferrobase_proto::UserHeader::new(&settings.claimed_user());
    let found = ferrobase_hbase_wire::token::first_hbase_token(&settings.token_file_paths())
        .map_err(ClientError::Invalid)?;
    Ok(match found {
        Some(t) => header.with_token(&t.identifier, &t.password),
        None => header,
    })
}

impl Connection {
    /// Connects to the master at `address` (`host:port`, or several
    /// masters comma separated); channels are opened lazily, so this fails
    /// only on a malformed address or TLS settings that cannot be used
    /// (`hbase.client.netty.tls.enabled` and the trust store).
    pub fn connect(address: &str, settings: Settings) -> Result<Connection> {
        let tls = ferrobase_tls::ClientTls::from_settings(&settings)
            .map_err(|e| ClientError::Invalid(e.to_string()))?;
        let user = credentials(&settings)?;
        let masters = address
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(|a| {
                channel(a, tls.as_ref()).map(|c| {
                    MasterClient::with_interceptor(c, user.clone())
                        .max_decoding_message_size(MAX_MESSAGE_BYTES)
                        .max_encoding_message_size(MAX_MESSAGE_BYTES)
                })
            })
            .collect::<Result<Vec<_>>>()?;
        if masters.is_empty() {
            return Err(ClientError::Invalid(format!(
                "no master address in '{address}'"
            )));
        }
        Ok(Connection {
            inner: Arc::new(Inner {
                settings,
                tls,
                masters,
                user,
                active_master: AtomicUsize::new(0),
                servers: Mutex::new(HashMap::new()),
                locations: RwLock::new(HashMap::new()),
                nonces: ferrobase_types::nonce::NonceGenerator::new(),
            }),
        })
    }

    /// A handle on table `name` (no call is made).
    pub fn table(&self, name: &str) -> Table {
        Table::new(self.inner.clone(), name)
    }

    /// The admin API.
    pub fn admin(&self) -> Admin {
        Admin::new(self.inner.clone())
    }

    /// The settings the connection runs with.
    pub fn settings(&self) -> &Settings {
        &self.inner.settings
    }

    /// The nonce group every increment and append of this connection is
    /// tagged with (HBase's `NonceGenerator.getNonceGroup`).
    pub fn nonce_group(&self) -> u64 {
        self.inner.nonces.group()
    }
}

impl Inner {
    /// A fresh `(nonce group, nonce)` for one increment, append or
    /// check-and-mutate; unique within the group (a counter from a random
    /// start, skipping 0).
    pub(crate) fn new_nonce(&self) -> (u64, u64) {
        self.nonces.next()
    }

    pub(crate) fn master(&self) -> MasterClient<UserChannel> {
        let i = self.active_master.load(Ordering::Relaxed) % self.masters.len();
        self.masters[i].clone()
    }

    /// The master to send an admin call to. With several masters, the
    /// current one is first asked a cheap question; while it cannot be
    /// reached the next ones are tried, with the usual backoff, so admin
    /// calls follow a standby that took over.
    pub(crate) async fn active_master(&self) -> Result<MasterClient<UserChannel>> {
        if self.masters.len() == 1 {
            return Ok(self.master());
        }
        let mut attempt = 0;
        loop {
            for _ in 0..self.masters.len() {
                let m = self.master();
                match m.clone().list_tables(pb::Empty {}).await {
                    Ok(_) => return Ok(m),
                    Err(s) if s.code() == tonic::Code::Unavailable => self.next_master(),
                    Err(s) => return Err(s.into()),
                }
            }
            if attempt >= self.settings.client_retries {
                return Err(ClientError::Transport {
                    address: format!("{} masters", self.masters.len()),
                    message: "no master answers".into(),
                });
            }
            tokio::time::sleep(self.backoff(attempt)).await;
            attempt += 1;
        }
    }

    /// The current master did not answer: try the next one from now on.
    pub(crate) fn next_master(&self) {
        if self.masters.len() > 1 {
            self.active_master.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A client for the region server at `address`, round robin over its
    /// channel pool.
    pub(crate) fn region_server(&self, address: &str) -> Result<RegionServerClient<UserChannel>> {
        let pool = {
            let mut servers = self.servers.lock();
            match servers.get(address) {
                Some(p) => p.clone(),
                None => {
                    let n = self.settings.client_ipc_pool_size.max(1);
                    let clients = (0..n)
                        .map(|_| {
                            channel(address, self.tls.as_ref()).map(|c| {
                                RegionServerClient::with_interceptor(c, self.user.clone())
                                    .max_decoding_message_size(MAX_MESSAGE_BYTES)
                                    .max_encoding_message_size(MAX_MESSAGE_BYTES)
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let p = Arc::new(ServerChannels {
                        clients,
                        next: AtomicUsize::new(0),
                    });
                    servers.insert(address.to_string(), p.clone());
                    p
                }
            }
        };
        let i = pool.next.fetch_add(1, Ordering::Relaxed) % pool.clients.len();
        Ok(pool.clients[i].clone())
    }

    /// Every region of `table`, from the cache or the master.
    pub(crate) async fn regions(&self, table: &str) -> Result<Arc<Vec<RegionLocation>>> {
        if let Some(l) = self.locations.read().get(table) {
            return Ok(l.clone());
        }
        let mut tries = self.masters.len();
        let resp = loop {
            let r = self
                .master()
                .locate(pb::TableName {
                    name: table.to_string(),
                })
                .await;
            match r {
                Ok(r) => break r.into_inner(),
                // Unreachable (a standby does not listen until elected).
                Err(s) if s.code() == tonic::Code::Unavailable && tries > 1 => {
                    tries -= 1;
                    self.next_master();
                }
                Err(s) => return Err(s.into()),
            }
        };
        let locs: Arc<Vec<RegionLocation>> = Arc::new(
            resp.regions
                .into_iter()
                .map(RegionLocation::from_pb)
                .collect(),
        );
        if locs.iter().any(|l| l.server.is_empty()) {
            return Err(ClientError::Server {
                code: ferrobase_proto::ErrorCode::RegionNotServing,
                message: format!("a region of '{table}' is not assigned"),
            });
        }
        self.locations
            .write()
            .insert(table.to_string(), locs.clone());
        Ok(locs)
    }

    /// The region of `table` holding `row`.
    pub(crate) async fn locate(&self, table: &str, row: &[u8]) -> Result<RegionLocation> {
        let regions = self.regions(table).await?;
        let i = regions.partition_point(|r| &r.start_key[..] <= row);
        regions
            .get(i.saturating_sub(1))
            .filter(|r| r.contains(row))
            .cloned()
            .ok_or_else(|| ClientError::Invalid(format!("no region of '{table}' holds the row")))
    }

    /// Forgets the cached locations of `table`.
    pub(crate) fn invalidate(&self, table: &str) {
        self.locations.write().remove(table);
    }

    /// The pause before retry number `attempt` (0-based).
    pub(crate) fn backoff(&self, attempt: usize) -> Duration {
        let mult = RETRY_BACKOFF[attempt.min(RETRY_BACKOFF.len() - 1)];
        Duration::from_millis(self.settings.client_pause_ms.saturating_mul(mult))
    }

    /// Runs `call` until it succeeds, fails for good, or
    /// `hbase.client.retries.number` retries are spent; drops the location
    /// cache of `table` when a region was not where the cache said. Every
    /// call is safe to repeat after a failure that may have applied it
    /// ([`ClientError::ambiguous`]): puts, deletes and reads are
    /// idempotent, and increments, appends and check-and-mutates carry a
    /// nonce the server answers a retry of once.
    pub(crate) async fn retry<T, F, Fut>(&self, table: &str, mut call: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let mut attempt = 0;
        loop {
            match call().await {
                Ok(v) => return Ok(v),
                Err(e) if e.retryable() && attempt < self.settings.client_retries => {
                    if e.stale_location() {
                        self.invalidate(table);
                    }
                    tracing::debug!(table, attempt, error = %e, "retrying");
                    tokio::time::sleep(self.backoff(attempt)).await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }
}
