//! Distributed mode: the `ferrobase master` and `ferrobase regionserver`
//! processes, wired to etcd ([`crate::etcd`]) and a shared root directory.
//!
//! ```text
//! <root>/meta.json            the meta (active master writes it atomically)
//! <root>/data/<table>/<region>/…   store files, shared by every server
//! <root>/wal/<server name>/   one WAL per region server process
//! ```
//!
//! A region server binds its port, registers in etcd under its session
//! lease, then creates its WAL directory and serves; if its lease is lost
//! it stops at once without flushing (the master may already be splitting
//! its WAL and reopening its regions elsewhere). A master campaigns; once
//! active it loads the meta, serves the `Master` service and runs the
//! assignment loop (reconcile, balancer, split check). Only `file://`
//! roots exist today; HDFS and S3 are not built. This module holds no
//! database logic of its own.

use crate::error::{Result, ServerError};
use crate::etcd::{self, registry::ServerRecord, remote::EtcdCoordination};
use crate::master::Master;
use crate::region_server::RegionServer;
use crate::service::{admin::RegionAdminService, master::MasterService, region::RegionService};
use crate::standalone::{MAX_MESSAGE_BYTES, SPLIT_CHECK_INTERVAL};
use ferrobase_proto::ErrorCode;
use ferrobase_proto::pb::{
    master_server::MasterServer, region_admin_server::RegionAdminServer,
    region_server_server::RegionServerServer,
};
use ferrobase_storage::fs::Storage;
use ferrobase_types::Settings;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::service::interceptor::InterceptedService;

/// How often the active master re-reads registrations and reconciles.
pub const RECONCILE_INTERVAL: Duration = Duration::from_millis(250);

/// What both processes need.
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// etcd endpoints, `http://host:port`.
    pub etcd: Vec<String>,
    /// The shared storage root (`--root`: a directory or an S3 bucket).
    pub root: Arc<dyn Storage>,
    /// Where to listen (and what to advertise).
    pub bind: SocketAddr,
    pub settings: Settings,
    /// The info port (web UI, `/metrics`, `/jmx`) on the same address;
    /// `None`: none (`-1`). See [`info_server::port_from`](crate::info_server::port_from).
    pub info_port: Option<u16>,
    /// The ZooKeeper registry endpoint's port on the same address, served
    /// while this process is the active master; `None`: none. See
    /// [`zookeeper_registry`](crate::zookeeper_registry).
    pub zookeeper_port: Option<u16>,
}

/// Starts the info server of `parts` when the configuration asks for one.
/// A port that cannot be bound is logged, not fatal: the data path does not
/// depend on it.
async fn start_info(
    cfg: &ClusterConfig,
    parts: crate::info_server::InfoParts,
) -> Option<crate::info_server::InfoServer> {
    let port = cfg.info_port?;
    let bind = SocketAddr::new(cfg.bind.ip(), port);
    let tls = match crate::tls::info(&cfg.settings) {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "info server not started");
            return None;
        }
    };
    match crate::info_server::InfoServer::start(bind, parts, tls).await {
        Ok(s) => {
            tracing::info!(addr = %s.addr(), "info server (web UI, /metrics, /jmx)");
            Some(s)
        }
        Err(e) => {
            tracing::warn!(error = %e, "info server not started");
            None
        }
    }
}

/// Starts the ZooKeeper registry endpoint when the configuration asks for
/// one. Like the info port, a port that cannot be bound is logged, not
/// fatal: clients can still use the RPC registry.
async fn start_zookeeper(
    cfg: &ClusterConfig,
    hbase: &Arc<crate::hbase_rpc::HBaseRpc>,
    info: Option<&crate::info_server::InfoServer>,
) -> Option<crate::zookeeper_registry::ZooKeeperRegistry> {
    let port = cfg.zookeeper_port?;
    let source = crate::zookeeper_registry::RegistrySource {
        hbase: hbase.clone(),
        parent: cfg.settings.zookeeper_znode_parent.clone(),
        info_port: info.map_or(0, |i| i.addr().port()),
    };
    let bind = SocketAddr::new(cfg.bind.ip(), port);
    match crate::zookeeper_registry::ZooKeeperRegistry::start(bind, source).await {
        Ok(z) => {
            tracing::info!(addr = %z.addr(), "ZooKeeper registry endpoint");
            Some(z)
        }
        Err(e) => {
            tracing::warn!(error = %e, "ZooKeeper registry endpoint not started");
            None
        }
    }
}

/// The storage a `--root` URL names: `file:///abs/dir` (or a plain path),
/// `s3://bucket/prefix?endpoint=…` or `hdfs://namenode:port/path` (see
/// `ferrobase_storage::fs`), shaped by `settings` (`dfs.replication`, ...).
pub fn parse_root(url: &str, settings: &Settings) -> Result<Arc<dyn Storage>> {
    ferrobase_storage::fs::open_root(url, settings)
        .map_err(|e| ServerError::new(ErrorCode::InvalidRequest, format!("--root '{url}': {e}")))
}

fn io(what: &str, e: impl std::fmt::Display) -> ServerError {
    ServerError::new(ErrorCode::Io, format!("{what}: {e}"))
}

async fn spawn_blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ServerError::new(ErrorCode::Internal, e.to_string()))?
}

fn lease_ttl(settings: &Settings) -> Duration {
    Duration::from_millis(settings.etcd_lease_ttl_ms.max(1000))
}

/// Runs a region server until `shutdown` resolves (then it closes its
/// regions, flushing them, and deregisters) or its etcd session is lost
/// (then the process must exit at once: see the module docs).
/// `on_ready` gets the address once it serves, and the info port's
/// address when one is serving.
pub async fn run_region_server(
    cfg: ClusterConfig,
    on_ready: impl FnOnce(&ServerRecord, Option<SocketAddr>),
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(cfg.bind)
        .await
        .map_err(|e| io(&format!("cannot listen on {}", cfg.bind), e))?;
    let addr = listener.local_addr().map_err(|e| io("local address", e))?;
    let tls = crate::tls::rpc(&cfg.settings)?;
    let client = etcd::connect(&cfg.etcd, &cfg.settings).await?;
    let session = etcd::session::Session::start(&client, lease_ttl(&cfg.settings)).await?;
    let start_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let record = ServerRecord::new(&addr.to_string(), start_ms);
    // Registered before the WAL directory exists: the master never takes a
    // live server's WAL directory for a dead one's.
    etcd::registry::register(&client, session.lease(), &record).await?;
    let (data, wal) = (PathBuf::from("data"), Path::new("wal").join(&record.name));
    let settings = cfg.settings.clone();
    let fs = cfg.root.clone();
    let rs = spawn_blocking(move || {
        let rs = RegionServer::open_on(fs, &data, &wal, settings)?;
        rs.set_address(addr.to_string());
        Ok(rs)
    })
    .await?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let hbase = hbase_rpc(
        &cfg,
        addr,
        start_ms,
        (None, Some(rs.clone())),
        tokens(&cfg)?,
    )?;
    let serve = tokio::spawn(
        tonic::transport::Server::builder()
            .tcp_nodelay(true)
            .add_service(InterceptedService::new(
                RegionServerServer::new(RegionService(rs.clone()))
                    .max_decoding_message_size(MAX_MESSAGE_BYTES)
                    .max_encoding_message_size(MAX_MESSAGE_BYTES),
                hbase.grpc_authentication(),
            ))
            .add_service(InterceptedService::new(
                RegionAdminServer::new(RegionAdminService(rs.clone()))
                    .max_decoding_message_size(MAX_MESSAGE_BYTES)
                    .max_encoding_message_size(MAX_MESSAGE_BYTES),
                hbase.grpc_authentication(),
            ))
            .serve_with_incoming_shutdown(
                crate::hbase_rpc::split_incoming(listener, hbase, tls),
                async {
                    let _ = rx.await;
                },
            ),
    );
    let reaper = {
        let weak = Arc::downgrade(&rs);
        let period = (rs.scanners().timeout() / 4).max(Duration::from_millis(10));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            loop {
                tick.tick().await;
                match weak.upgrade() {
                    Some(rs) => rs.scanners().reap(),
                    None => return,
                };
            }
        })
    };
    let info = start_info(
        &cfg,
        crate::info_server::InfoParts {
            master: None,
            region_server: Some(rs.clone()),
            role: "regionserver",
        },
    )
    .await;
    on_ready(
        &record,
        info.as_ref().map(crate::info_server::InfoServer::addr),
    );
    let lost = tokio::select! {
        _ = shutdown => false,
        _ = session.lost() => true,
    };
    if let Some(info) = info {
        info.stop().await;
    }
    if lost {
        // Fenced: never flush or write again. The caller exits the process.
        std::mem::forget(rs);
        return Err(ServerError::new(
            ErrorCode::Io,
            "etcd session lost: this region server is considered dead; stopping without flushing",
        ));
    }
    let _ = tx.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), serve).await;
    reaper.abort();
    spawn_blocking(move || {
        rs.scanners().reap_all();
        rs.close_all()
    })
    .await?;
    session.close().await;
    Ok(())
}

/// Runs a master: waits to become active (`on_active` is told when, with
/// its info port's address when one is serving), then
/// serves until `shutdown` or until its session is lost (an error: the
/// process must exit, a standby is taking over).
pub async fn run_master(
    cfg: ClusterConfig,
    on_active: impl FnOnce(SocketAddr, Option<SocketAddr>),
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    // Bad TLS settings fail before the campaign, not once elected.
    let tls = crate::tls::rpc(&cfg.settings)?;
    let client_tls = crate::tls::client(&cfg.settings)?;
    let client = etcd::connect(&cfg.etcd, &cfg.settings).await?;
    let session = etcd::session::Session::start(&client, lease_ttl(&cfg.settings)).await?;
    tokio::pin!(shutdown);
    let address = cfg.bind.to_string();
    tokio::select! {
        r = etcd::election::campaign(&client, session.lease(), &address) => r?,
        _ = session.lost() => return Err(lost()),
        _ = &mut shutdown => {
            session.close().await;
            return Ok(());
        }
    }
    let listener = tokio::net::TcpListener::bind(cfg.bind)
        .await
        .map_err(|e| io(&format!("cannot listen on {}", cfg.bind), e))?;
    let addr = listener.local_addr().map_err(|e| io("local address", e))?;
    // Read once: the master's calls to region servers and its HBase RPC
    // port share the root's token key.
    let token_authority = tokens(&cfg)?;
    // Masters roll the key (HBase's leader does; two racing masters create
    // the next key file once).
    if let Some(t) = &token_authority {
        crate::auth::spawn_key_roller(t);
    }
    let coordination = Arc::new(EtcdCoordination::new(
        client.clone(),
        tokio::runtime::Handle::current(),
        client_tls,
        crate::auth::Credentials::new(cfg.settings.claimed_user(), token_authority.clone()),
    ));
    coordination.refresh().await?;
    let root = cfg.root.clone();
    let coord = coordination.clone();
    let access = crate::acl::AccessChecker::from_settings(&cfg.settings)?;
    let snapshot_settings = cfg.settings.clone();
    let master = spawn_blocking(move || {
        root.create_dir_all(Path::new("wal"))
            .map_err(|e| io("creating the WAL root", e))?;
        let dirs = (Path::new(""), Path::new("data"), Some(Path::new("wal")));
        let master = Master::open(root, dirs, coord)?;
        master.set_access_checker(access);
        master.configure_snapshots(&snapshot_settings);
        Ok(Arc::new(master))
    })
    .await?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let start_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let hbase = hbase_rpc(
        &cfg,
        addr,
        start_ms,
        (Some(master.clone()), None),
        token_authority,
    )?;
    let serve = tokio::spawn(
        tonic::transport::Server::builder()
            .tcp_nodelay(true)
            .add_service(InterceptedService::new(
                MasterServer::new(MasterService(master.clone()))
                    .max_decoding_message_size(MAX_MESSAGE_BYTES)
                    .max_encoding_message_size(MAX_MESSAGE_BYTES),
                hbase.grpc_authentication(),
            ))
            .serve_with_incoming_shutdown(
                crate::hbase_rpc::split_incoming(listener, hbase.clone(), tls),
                async {
                    let _ = rx.await;
                },
            ),
    );
    tracing::info!(%addr, "active master");
    let info = start_info(
        &cfg,
        crate::info_server::InfoParts {
            master: Some(master.clone()),
            region_server: None,
            role: "master",
        },
    )
    .await;
    let zookeeper = start_zookeeper(&cfg, &hbase, info.as_ref()).await;
    on_active(
        addr,
        info.as_ref().map(crate::info_server::InfoServer::addr),
    );
    let chores = tokio::spawn(chores(master.clone(), coordination, cfg.settings.clone()));
    let lost_session = tokio::select! {
        _ = &mut shutdown => false,
        _ = session.lost() => true,
    };
    chores.abort();
    if let Some(zk) = zookeeper {
        zk.stop().await;
    }
    if let Some(info) = info {
        info.stop().await;
    }
    if lost_session {
        std::mem::forget(master);
        return Err(lost());
    }
    let _ = tx.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), serve).await;
    let m = master.clone();
    let _ = tokio::task::spawn_blocking(move || m.stop()).await;
    session.close().await;
    Ok(())
}

/// HBase's native RPC on a distributed process's port, beside gRPC: the
/// active master answers the connection registry, `MasterService` and
/// `hbase:meta`; a region server answers `ClientService` and
/// `AdminService` for its regions. The cluster id is derived from the
/// storage root, so every process of a cluster answers the same one.
/// `tokens` checks tokens in secure mode ([`tokens`]).
fn hbase_rpc(
    cfg: &ClusterConfig,
    addr: SocketAddr,
    start_ms: u128,
    (master, rs): (Option<Arc<Master>>, Option<Arc<RegionServer>>),
    tokens: Option<Arc<crate::auth::TokenAuthority>>,
) -> Result<Arc<crate::hbase_rpc::HBaseRpc>> {
    let cluster_id = crate::hbase_rpc::cluster_id_for_root(&cfg.root.url());
    let authentication = crate::auth::Authentication::mode(&cfg.settings)?;
    let server = ferrobase_hbase_wire::names::ServerName::new(
        &addr.ip().to_string(),
        addr.port(),
        u64::try_from(start_ms).unwrap_or(u64::MAX),
    );
    Ok(Arc::new(
        crate::hbase_rpc::HBaseRpc::new(cluster_id, server, master, rs)
            .with_authentication(authentication, tokens),
    ))
}

/// The root's token authority in secure mode (`None` in simple mode).
/// Every process reads (or first creates) the root's one token key, so a
/// token minted anywhere is accepted everywhere. A small read.
fn tokens(cfg: &ClusterConfig) -> Result<Option<Arc<crate::auth::TokenAuthority>>> {
    if !crate::auth::Authentication::mode(&cfg.settings)?.is_secure() {
        return Ok(None);
    }
    let cluster_id = crate::hbase_rpc::cluster_id_for_root(&cfg.root.url());
    crate::auth::TokenAuthority::open_shared(cfg.root.clone(), &cluster_id, &cfg.settings).map(Some)
}

fn lost() -> ServerError {
    ServerError::new(
        ErrorCode::Io,
        "etcd session lost: this master is no longer active; stopping",
    )
}

/// The active master's loop: registrations → reconcile; the balancer every
/// `hbase.balancer.period`; the split check and the janitor.
async fn chores(master: Arc<Master>, coordination: Arc<EtcdCoordination>, settings: Settings) {
    let balance_every = Duration::from_millis(settings.balancer_period_ms.max(100));
    let mut last_balance = Instant::now();
    let mut last_split_check = Instant::now();
    let mut tick = tokio::time::interval(RECONCILE_INTERVAL);
    loop {
        tick.tick().await;
        if let Err(e) = coordination.refresh().await {
            tracing::warn!(error = %e, "cannot read region server registrations");
            continue;
        }
        let m = master.clone();
        match spawn_blocking(move || m.reconcile()).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(regions = n, "assigned regions"),
            Err(e) => tracing::warn!(error = %e, "reconcile incomplete; retrying"),
        }
        if last_balance.elapsed() >= balance_every
            && master.switch_on(crate::master::Switch::Balancer)
        {
            last_balance = Instant::now();
            let m = master.clone();
            match spawn_blocking(move || m.balance()).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(moved = n, "balancer moved regions"),
                Err(e) => tracing::warn!(error = %e, "balancer stopped early"),
            }
        }
        if last_split_check.elapsed() >= SPLIT_CHECK_INTERVAL {
            last_split_check = Instant::now();
            let m = master.clone();
            let max = settings.max_filesize;
            let load_split = settings.load_split_threshold;
            let _ = tokio::task::spawn_blocking(move || {
                m.split_oversized(max);
                m.split_hot(load_split);
                m.janitor_chore();
                m.snapshot_cleaner_chore();
            })
            .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_roots_are_refused_by_name() {
        assert_eq!(
            parse_root("file:///shared/fb", &Settings::default())
                .map(|r| r.url())
                .ok(),
            Some("file:///shared/fb".to_string())
        );
        for (url, says) in [
            ("hdfs://nn:8020/fb?colour=red", "unknown query parameter"),
            ("s3://?endpoint=x", "bucket"),
            ("file://relative", "absolute path"),
            ("", "empty"),
        ] {
            let e = parse_root(url, &Settings::default())
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(says) && e.contains("--root"), "{url}: {e}");
        }
    }
}
