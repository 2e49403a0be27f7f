//! [`Connection`]: a client's view of one HBase cluster.
//!
//! This module owns bootstrapping through the RPC connection registry
//! (HBase 2.6's `Regist` preamble for the cluster id, else
//! `ClientMetaService.GetClusterId`; then `GetMetaRegionLocations` and
//! `GetActiveMaster`), the pool of [`RpcConnection`]s per server and
//! service (`hbase.client.ipc.pool.size` of them, used in turn, replaced
//! when broken), and the retry loop every operation runs in. Region
//! lookups live in [`crate::locator`]; the operations in [`crate::table`],
//! [`crate::scan`], [`crate::mutator`] and [`crate::admin`]. It never
//! reads ZooKeeper: only the RPC registry is supported.
//!
//! Each connection is a nonce group (HBase's `PerClientRandomNonceGenerator`):
//! every increment, append and checkAndMutate draws a nonce from it and
//! sends the pair on each attempt, so a server that already applied the
//! call answers a retry without applying it again.

use crate::admin::Admin;
use crate::config::ClientConfig;
use crate::error::{ClientError, Result};
use crate::locator::{Locator, RegionLocation};
use crate::mutator::BufferedMutator;
use crate::rpc::{self, HIGH_QOS, RpcConnection};
use crate::table::Table;
use bytes::Bytes;
use ferrobase_hbase_wire::pb;
use parking_lot::Mutex;
use prost::Message;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// HBase's service names, one per TCP connection.
pub(crate) const CLIENT_SERVICE: &str = "ClientService";
pub(crate) const MASTER_SERVICE: &str = "MasterService";
pub(crate) const ADMIN_SERVICE: &str = "AdminService";
pub(crate) const META_SERVICE: &str = "ClientMetaService";

type PoolKey = (String, &'static str);

pub(crate) struct Inner {
    pub(crate) config: ClientConfig,
    cluster_id: String,
    /// The bootstrap server that answered.
    registry: String,
    master: Mutex<String>,
    meta: Mutex<Option<String>>,
    pools: Mutex<HashMap<PoolKey, Vec<Arc<RpcConnection>>>>,
    turn: AtomicUsize,
    pub(crate) locator: Locator,
    /// This connection's nonce group and next nonce.
    nonces: ferrobase_types::nonce::NonceGenerator,
}

impl Inner {
    /// A fresh `(nonce group, nonce)` for one non-idempotent call; unique
    /// within the group (a counter from a random start, skipping 0, which
    /// means "no nonce" to a server).
    pub(crate) fn new_nonce(&self) -> (u64, u64) {
        self.nonces.next()
    }
}

/// A connection to an HBase 2.x cluster (or ferrobase); cheap to clone.
#[derive(Clone)]
pub struct Connection {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("cluster_id", &self.inner.cluster_id)
            .field("registry", &self.inner.registry)
            .finish()
    }
}

impl Connection {
    /// Connects with the default settings to `servers`
    /// (`hbase.client.bootstrap.servers`: `host:port[,host:port...]`).
    pub async fn connect(servers: &str) -> Result<Connection> {
        Connection::connect_with(ClientConfig::new(servers)).await
    }

    /// Connects with `config`: the first bootstrap server that answers the
    /// registry is used.
    pub async fn connect_with(config: ClientConfig) -> Result<Connection> {
        if config.bootstrap.is_empty() {
            return Err(ClientError::Invalid(
                "no bootstrap server (host:port) given".into(),
            ));
        }
        let mut last = None;
        for server in &config.bootstrap {
            match bootstrap(server, &config).await {
                Ok((cluster_id, master)) => {
                    return Ok(Connection {
                        inner: Arc::new(Inner {
                            cluster_id,
                            registry: server.clone(),
                            master: Mutex::new(master),
                            meta: Mutex::new(None),
                            pools: Mutex::new(HashMap::new()),
                            turn: AtomicUsize::new(0),
                            locator: Locator::default(),
                            nonces: ferrobase_types::nonce::NonceGenerator::new(),
                            config,
                        }),
                    });
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| ClientError::Invalid("no bootstrap server".into())))
    }

    /// The cluster id the registry answered.
    pub fn cluster_id(&self) -> &str {
        &self.inner.cluster_id
    }

    /// The active master's `host:port`.
    pub fn master(&self) -> String {
        self.inner.master.lock().clone()
    }

    /// The nonce group this connection's increments, appends and
    /// checkAndMutates are sent with.
    pub fn nonce_group(&self) -> u64 {
        self.inner.nonces.group()
    }

    /// The settings in use.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// A handle on `table` (`name` or `namespace:name`); nothing is looked
    /// up until it is used.
    pub fn table(&self, table: &str) -> Table {
        Table::new(self.clone(), table)
    }

    /// Table DDL through the master.
    pub fn admin(&self) -> Admin {
        Admin::new(self.clone())
    }

    /// A buffered writer for `table` that sends a batch when its mutations
    /// reach `write_buffer_size` bytes (`hbase.client.write.buffer`, HBase's
    /// default 2 MiB).
    pub fn buffered_mutator(&self, table: &str, write_buffer_size: u64) -> BufferedMutator {
        BufferedMutator::new(self.table(table), write_buffer_size)
    }

    /// Every online region of `table`, sorted by start key, read afresh
    /// from `hbase:meta`.
    pub async fn region_locations(&self, table: &str) -> Result<Vec<RegionLocation>> {
        self.inner.locator.invalidate(table);
        let regions = self.inner.locator.regions(self, table).await?;
        Ok(regions.values().cloned().collect())
    }
}

/// Asks `server` for the cluster id and the active master.
async fn bootstrap(server: &str, config: &ClientConfig) -> Result<(String, String)> {
    let conn = RpcConnection::connect(server, META_SERVICE, config).await?;
    let cluster_id = match rpc::fetch_cluster_id(server, config.rpc_timeout).await {
        Ok(Some(id)) => id,
        _ => {
            let (r, _): (pb::GetClusterIdResponse, _) = conn
                .call(
                    "GetClusterId",
                    &pb::GetClusterIdRequest {},
                    None,
                    0,
                    config.rpc_timeout,
                )
                .await?;
            r.cluster_id.unwrap_or_default()
        }
    };
    let (m, _): (pb::GetActiveMasterResponse, _) = conn
        .call(
            "GetActiveMaster",
            &pb::GetActiveMasterRequest {},
            None,
            0,
            config.rpc_timeout,
        )
        .await?;
    let master = m
        .server_name
        .map(|s| format!("{}:{}", s.host_name, s.port.unwrap_or(16000)))
        .ok_or_else(|| ClientError::Protocol("GetActiveMaster named no master".into()))?;
    Ok((cluster_id, master))
}

impl Connection {
    /// A pooled connection to `addr` for `service`, opened (or replaced)
    /// when needed.
    pub(crate) async fn rpc(
        &self,
        addr: &str,
        service: &'static str,
    ) -> Result<Arc<RpcConnection>> {
        let size = self.inner.config.pool_size.max(1);
        let slot = self.inner.turn.fetch_add(1, Ordering::Relaxed) % size;
        let key = (addr.to_string(), service);
        if let Some(c) = self
            .inner
            .pools
            .lock()
            .get(&key)
            .and_then(|p| p.get(slot))
            .filter(|c| !c.is_dead())
        {
            return Ok(c.clone());
        }
        let fresh = Arc::new(RpcConnection::connect(addr, service, &self.inner.config).await?);
        let mut pools = self.inner.pools.lock();
        let pool = pools.entry(key).or_default();
        pool.retain(|c| !c.is_dead());
        if pool.len() < size {
            pool.push(fresh.clone());
        }
        Ok(fresh)
    }

    /// One call to `addr`'s `service`, no retry.
    pub(crate) async fn call<Req: Message, Resp: Message + Default>(
        &self,
        addr: &str,
        service: &'static str,
        method: &str,
        req: &Req,
        cells: Option<&[u8]>,
        priority: u32,
    ) -> Result<(Resp, Option<Bytes>)> {
        let conn = self.rpc(addr, service).await?;
        conn.call(method, req, cells, priority, self.inner.config.rpc_timeout)
            .await
    }

    /// One call to the active master's `MasterService`.
    pub(crate) async fn master_call<Req: Message, Resp: Message + Default>(
        &self,
        method: &str,
        req: &Req,
    ) -> Result<Resp> {
        let master = self.master();
        let r = self
            .call(&master, MASTER_SERVICE, method, req, None, HIGH_QOS)
            .await;
        if let Err(e) = &r
            && e.relocates()
        {
            self.refresh_master().await;
        }
        r.map(|(resp, _)| resp)
    }

    async fn refresh_master(&self) {
        let registry = self.inner.registry.clone();
        if let Ok((_, master)) = bootstrap(&registry, &self.inner.config).await {
            *self.inner.master.lock() = master;
        }
    }

    /// `hbase:meta`'s server, from the registry (cached until a call to it
    /// fails).
    pub(crate) async fn meta_server(&self) -> Result<String> {
        if let Some(m) = self.inner.meta.lock().clone() {
            return Ok(m);
        }
        let registry = self.inner.registry.clone();
        let (r, _): (pb::GetMetaRegionLocationsResponse, _) = self
            .call(
                &registry,
                META_SERVICE,
                "GetMetaRegionLocations",
                &pb::GetMetaRegionLocationsRequest {},
                None,
                HIGH_QOS,
            )
            .await?;
        let server = r
            .meta_locations
            .iter()
            .filter(|l| l.region_info.replica_id.unwrap_or(0) == 0)
            .find_map(|l| l.server_name.as_ref())
            .map(|s| format!("{}:{}", s.host_name, s.port.unwrap_or(16020)))
            .ok_or_else(|| ClientError::Protocol("hbase:meta has no location yet".into()))?;
        *self.inner.meta.lock() = Some(server.clone());
        Ok(server)
    }

    pub(crate) fn forget_meta(&self) {
        *self.inner.meta.lock() = None;
    }

    /// Runs `op` until it succeeds, fails for good, or the retries or the
    /// operation timeout run out. A stale region cache of `table` is
    /// dropped before the next attempt.
    ///
    /// `op` returns a future that owns what it uses (not an async closure
    /// borrowing its captures), so the calls stay `Send` inside spawned
    /// tasks: the compiler cannot prove that of an async closure's future
    /// for every lifetime.
    pub(crate) async fn retrying<T, Fut>(
        &self,
        table: Option<&str>,
        mut op: impl FnMut(u32) -> Fut,
    ) -> Result<T>
    where
        Fut: std::future::Future<Output = Result<T>>,
    {
        let start = Instant::now();
        let config = &self.inner.config;
        let mut attempt = 0u32;
        loop {
            let e = match op(attempt).await {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            if !e.is_retryable() {
                return Err(e);
            }
            if e.relocates()
                && let Some(t) = table
            {
                self.inner.locator.invalidate(t);
            }
            let pause = config.backoff(attempt);
            attempt += 1;
            if attempt > config.retries || start.elapsed() + pause > config.operation_timeout {
                return Err(ClientError::RetriesExhausted {
                    attempts: attempt,
                    last: Box::new(e),
                });
            }
            tokio::time::sleep(pause).await;
        }
    }
}
