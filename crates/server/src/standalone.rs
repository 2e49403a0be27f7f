//! Standalone mode: master, one region server and the meta in one process,
//! serving both gRPC services on one port.
//!
//! Layout of the data directory (or storage root): `meta.json` (the meta),
//! `wal/` and `data/` (the region server's engine). [`Standalone::stop`] stops accepting calls,
//! closes scanners and the engine (flushing regions, syncing the WAL).

use crate::coordination::InProcess;
use crate::error::{Result, ServerError};
use crate::master::Master;
use crate::region_server::RegionServer;
use crate::service::{master::MasterService, region::RegionService};
use ferrobase_proto::ErrorCode;
use ferrobase_proto::pb::{master_server::MasterServer, region_server_server::RegionServerServer};
use ferrobase_storage::fs::Storage;
use ferrobase_types::Settings;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::service::interceptor::InterceptedService;

/// Largest gRPC message accepted (a write-buffer flush, a cell of
/// `hbase.client.keyvalue.maxsize`).
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

/// A running standalone server.
pub struct Standalone {
    addr: SocketAddr,
    region_server: Arc<RegionServer>,
    master: Arc<Master>,
    hbase: Arc<crate::hbase_rpc::HBaseRpc>,
    shutdown: Option<oneshot::Sender<()>>,
    serve: Option<JoinHandle<std::result::Result<(), tonic::transport::Error>>>,
    reaper: JoinHandle<()>,
    splitter: JoinHandle<()>,
}

/// How often the master looks for regions past `hbase.hregion.max.filesize`.
pub const SPLIT_CHECK_INTERVAL: Duration = Duration::from_secs(1);

impl Standalone {
    /// Opens the local directory `dir` and serves on `bind` (port 0: an
    /// ephemeral port).
    pub async fn start(dir: &Path, settings: Settings, bind: SocketAddr) -> Result<Standalone> {
        let fs = Arc::new(ferrobase_storage::fs::LocalFs::new(dir));
        fs.create_dir_all(Path::new(""))
            .map_err(|e| ServerError::new(ErrorCode::Io, e.to_string()))?;
        Standalone::start_on(fs, settings, bind).await
    }

    /// Opens a storage root (`--root`: a directory or an S3 bucket) and
    /// serves on `bind`. One process per root: a second one claims the WAL
    /// and the regions (epochs), and the first acknowledges nothing more.
    pub async fn start_on(
        fs: Arc<dyn Storage>,
        settings: Settings,
        bind: SocketAddr,
    ) -> Result<Standalone> {
        let listener = tokio::net::TcpListener::bind(bind).await.map_err(|e| {
            ServerError::new(ErrorCode::Io, format!("cannot listen on {bind}: {e}"))
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServerError::new(ErrorCode::Io, e.to_string()))?;
        let max_filesize = settings.max_filesize;
        let load_split = settings.load_split_threshold;
        let tls = crate::tls::rpc(&settings)?;
        let authentication = crate::auth::Authentication::mode(&settings)?;
        let (region_server, master, tokens) = tokio::task::spawn_blocking(move || {
            // Tokens need the root's shared key (created on first use).
            let tokens = match authentication.is_secure() {
                true => Some(crate::auth::TokenAuthority::open_shared(
                    fs.clone(),
                    crate::hbase_rpc::STANDALONE_CLUSTER_ID,
                    &settings,
                )?),
                false => None,
            };
            let (data, wal) = (Path::new("data"), Path::new("wal"));
            let snapshot_settings = settings.clone();
            let rs = RegionServer::open_on(fs.clone(), data, wal, settings)?;
            rs.set_address(addr.to_string());
            let coordination = Arc::new(InProcess::new(vec![rs.clone()]));
            let master = Master::open(fs, (Path::new(""), data, None), coordination)?;
            // One checker for both: a grant is seen by the region server at once.
            master.set_access_checker(rs.access_checker().clone());
            master.configure_snapshots(&snapshot_settings);
            master.reconcile()?;
            Ok::<_, ServerError>((rs, Arc::new(master), tokens))
        })
        .await
        .map_err(|e| ServerError::new(ErrorCode::Internal, e.to_string()))??;
        if let Some(t) = &tokens {
            crate::auth::spawn_key_roller(t);
        }

        let (tx, rx) = oneshot::channel::<()>();
        let start_code = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        // gRPC callers prove who they are by the same rules (grpc_auth).
        let grpc_auth = crate::grpc_auth::GrpcAuthentication::new(authentication, tokens.clone());
        let hbase = Arc::new(
            crate::hbase_rpc::HBaseRpc::new(
                // One standalone server is one cluster.
                crate::hbase_rpc::STANDALONE_CLUSTER_ID,
                ferrobase_hbase_wire::names::ServerName::new(
                    &addr.ip().to_string(),
                    addr.port(),
                    start_code,
                ),
                Some(master.clone()),
                Some(region_server.clone()),
            )
            .with_authentication(authentication, tokens),
        );
        // HBase's native RPC and gRPC share the port (crate::hbase_rpc).
        let incoming = crate::hbase_rpc::split_incoming(listener, hbase.clone(), tls);
        let master_svc = MasterServer::new(MasterService(master.clone()))
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES);
        let region_svc = RegionServerServer::new(RegionService(region_server.clone()))
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES);
        let serve = tokio::spawn(
            tonic::transport::Server::builder()
                .tcp_nodelay(true)
                .add_service(InterceptedService::new(master_svc, grpc_auth.clone()))
                .add_service(InterceptedService::new(region_svc, grpc_auth))
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = rx.await;
                }),
        );
        let weak = Arc::downgrade(&region_server);
        let period = (region_server.scanners().timeout() / 4).max(Duration::from_millis(10));
        let reaper = tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            loop {
                tick.tick().await;
                match weak.upgrade() {
                    Some(rs) => {
                        rs.scanners().reap();
                    }
                    None => return,
                }
            }
        });
        let weak_master = Arc::downgrade(&master);
        let splitter = tokio::spawn(async move {
            let mut tick = tokio::time::interval(SPLIT_CHECK_INTERVAL);
            loop {
                tick.tick().await;
                let Some(m) = weak_master.upgrade() else {
                    return;
                };
                let _ = tokio::task::spawn_blocking(move || {
                    m.split_oversized(max_filesize);
                    m.split_hot(load_split);
                    m.janitor_chore();
                    m.snapshot_cleaner_chore();
                })
                .await;
            }
        });
        Ok(Standalone {
            splitter,
            addr,
            region_server,
            master,
            hbase,
            shutdown: Some(tx),
            serve: Some(serve),
            reaper,
        })
    }

    /// The address both services listen on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The region server (for status and tests).
    pub fn region_server(&self) -> &Arc<RegionServer> {
        &self.region_server
    }

    /// The master.
    pub fn master(&self) -> &Arc<Master> {
        &self.master
    }

    /// Who this server is to HBase clients (for the ZooKeeper registry
    /// endpoint, which the binary starts).
    pub fn hbase_rpc(&self) -> &Arc<crate::hbase_rpc::HBaseRpc> {
        &self.hbase
    }

    /// Stops serving, closes every scanner and the engine (flushing
    /// regions, syncing the WAL).
    pub async fn stop(mut self) -> Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(serve) = self.serve.take() {
            // Open client connections may hold the graceful shutdown; do not
            // wait for them forever.
            let _ = tokio::time::timeout(Duration::from_secs(5), serve).await;
        }
        self.reaper.abort();
        self.splitter.abort();
        // A split in progress holds the DDL lock; wait for it to finish.
        let master = self.master.clone();
        let _ = tokio::task::spawn_blocking(move || master.stop()).await;
        let rs = self.region_server.clone();
        tokio::task::spawn_blocking(move || {
            rs.scanners().reap_all();
            rs.close_all()
        })
        .await
        .map_err(|e| ServerError::new(ErrorCode::Internal, e.to_string()))??;
        Ok(())
    }
}
