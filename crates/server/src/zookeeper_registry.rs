//! The ZooKeeper registry endpoint: a read-only ZooKeeper server on
//! `hbase.zookeeper.property.clientPort` (2181) that answers the znodes an
//! HBase client reads to find the cluster (cluster id, active master, meta
//! location, live region servers), so clients configured only with
//! `hbase.zookeeper.quorum` — HBase 2.x's default registry, the HBase
//! shell, YCSB, Spark's connector — connect unchanged.
//!
//! The standalone process and the *active* master serve it; a standby
//! master does not listen, so a client given every master in its quorum
//! list finds the active one the way it skips a dead ZooKeeper server.
//! Values are computed from [`HBaseRpc`] at each read, never stored.
//!
//! This module owns the sockets and the sessions. It never writes: every
//! state-changing op is answered `NOTREADONLY`, every other unknown op
//! `UNIMPLEMENTED`, and bytes that are not ZooKeeper's protocol close the
//! connection (the byte layouts and the decoder are in
//! `ferrobase_hbase_wire::zookeeper`).

use crate::error::{Result, ServerError};
use crate::hbase_rpc::HBaseRpc;
use bytes::BytesMut;
use ferrobase_hbase_wire::zookeeper::znodes::{ClusterView, Znodes};
use ferrobase_hbase_wire::zookeeper::{
    self as zk, ErrorCode as ZkCode, Request, Response, Stat, ZkDecoder, ZkEvent,
};
use ferrobase_proto::ErrorCode;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The zxid every answer carries: nothing here ever changes state, so one
/// transaction id is as true as any.
const ZXID: i64 = 1;

/// Session timeouts are clamped as a ZooKeeper server with a 2 s tick does
/// (2 to 20 ticks).
const MIN_SESSION_MS: i32 = 4_000;
const MAX_SESSION_MS: i32 = 40_000;

/// A connection that has not finished its handshake by then is closed.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the answers come from.
#[derive(Clone)]
pub struct RegistrySource {
    pub hbase: Arc<HBaseRpc>,
    /// `zookeeper.znode.parent`.
    pub parent: String,
    /// The master's info port, published in its znode (0: none).
    pub info_port: u16,
}

impl RegistrySource {
    /// The znodes as of now.
    fn znodes(&self) -> Znodes {
        let me = &self.hbase.server;
        let master = self.hbase.master.as_ref();
        let region_servers = match master {
            Some(m) => m
                .live_server_addresses()
                .iter()
                .map(|a| crate::hbase_rpc::registered_server_name(a, me))
                .collect(),
            None => Vec::new(),
        };
        let active = master.map(|_| me.clone());
        Znodes::new(
            &self.parent,
            ClusterView {
                cluster_id: self.hbase.cluster_id.clone(),
                // The master serves hbase:meta as well.
                meta: active.clone(),
                master: active,
                master_info_port: self.info_port,
                region_servers,
            },
        )
    }
}

/// The port to serve on: `--zookeeper-port` if given, else the setting
/// `hbase.zookeeper.property.clientPort`; `None` when it is negative.
pub fn port_from(setting: i64, flag: Option<i64>) -> Result<Option<u16>> {
    crate::info_server::optional_port(setting, flag, |port| {
        format!("ZooKeeper registry port {port} (hbase.zookeeper.property.clientPort)")
    })
}

/// A running endpoint; [`stop`](Self::stop) ends it.
pub struct ZooKeeperRegistry {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl ZooKeeperRegistry {
    /// Listens on `bind` (port 0: any free port).
    pub async fn start(bind: SocketAddr, source: RegistrySource) -> Result<ZooKeeperRegistry> {
        let listener = TcpListener::bind(bind).await.map_err(|e| {
            ServerError::new(
                ErrorCode::Io,
                format!(
                    "cannot listen on {bind} for the ZooKeeper registry \
                     (hbase.zookeeper.property.clientPort; -1 turns it off): {e}"
                ),
            )
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServerError::new(ErrorCode::Io, e.to_string()))?;
        let (tx, mut rx) = oneshot::channel();
        let sessions = Arc::new(AtomicI64::new(first_session_id()));
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut rx => return,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, peer)) => {
                            let source = source.clone();
                            let sessions = sessions.clone();
                            tokio::spawn(async move {
                                if let Err(e) = serve(stream, &source, &sessions).await {
                                    tracing::debug!(%peer, error = %e, "ZooKeeper registry connection closed");
                                }
                            });
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "ZooKeeper registry: accept failed");
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    },
                }
            }
        });
        Ok(ZooKeeperRegistry {
            addr,
            shutdown: Some(tx),
            task,
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops listening; open sessions end with their connections.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for ZooKeeperRegistry {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Session ids start from the clock so a client reconnecting after a
/// restart is not handed its old id again.
fn first_session_id() -> i64 {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    i64::try_from(ms).unwrap_or(0) << 20
}

#[derive(Debug, thiserror::Error)]
enum ConnError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Protocol(#[from] zk::ZkError),
    #[error("no frame within {0:?}")]
    Idle(Duration),
}

/// One client connection: the handshake, then requests until it closes
/// its session, goes quiet past its session timeout or sends bytes that
/// are not ZooKeeper's.
async fn serve(
    mut stream: TcpStream,
    source: &RegistrySource,
    sessions: &AtomicI64,
) -> std::result::Result<(), ConnError> {
    let _ = stream.set_nodelay(true);
    let mut decoder = ZkDecoder::default();
    let mut buf = BytesMut::with_capacity(4096);
    let mut out = BytesMut::new();
    let mut idle = HANDSHAKE_TIMEOUT;
    loop {
        while let Some(event) = decoder.decode(&mut buf)? {
            match event {
                ZkEvent::Connect(c) => {
                    let timeout = c.timeout_ms.clamp(MIN_SESSION_MS, MAX_SESSION_MS);
                    idle = Duration::from_millis(u64::try_from(timeout).unwrap_or(40_000) * 2);
                    let session = if c.session_id != 0 {
                        c.session_id
                    } else {
                        sessions.fetch_add(1, Ordering::Relaxed)
                    };
                    zk::encode_connect_response(&mut out, timeout, session, &[0; 16]);
                }
                ZkEvent::Request(frame) => {
                    let close = frame.request == Request::CloseSession;
                    answer(&mut out, frame.xid, &frame.request, source);
                    if close {
                        stream.write_all(&out).await?;
                        return Ok(());
                    }
                }
            }
        }
        if !out.is_empty() {
            stream.write_all(&out).await?;
            out.clear();
        }
        let read = tokio::time::timeout(idle, stream.read_buf(&mut buf))
            .await
            .map_err(|_| ConnError::Idle(idle))??;
        if read == 0 {
            return Ok(());
        }
    }
}

/// Writes the answer to one request.
fn answer(out: &mut BytesMut, xid: i32, request: &Request, source: &RegistrySource) {
    let reply = |out: &mut BytesMut, code, body: &Response<'_>| {
        zk::encode_reply(out, xid, ZXID, code, body);
    };
    match request {
        Request::Ping | Request::CloseSession => reply(out, ZkCode::Ok, &Response::Empty),
        Request::Sync { path } => reply(out, ZkCode::Ok, &Response::Path(path)),
        Request::Exists { path }
        | Request::GetData { path }
        | Request::GetChildren { path }
        | Request::GetChildren2 { path } => {
            let Some(node) = source.znodes().get(path) else {
                return reply(out, ZkCode::NoNode, &Response::Empty);
            };
            let stat = Stat {
                czxid: ZXID,
                mzxid: ZXID,
                pzxid: ZXID,
                data_length: i32::try_from(node.data.len()).unwrap_or(i32::MAX),
                num_children: i32::try_from(node.children.len()).unwrap_or(i32::MAX),
                ..Stat::default()
            };
            let body = match request {
                Request::Exists { .. } => Response::Stat(stat),
                Request::GetData { .. } => Response::Data(&node.data, stat),
                Request::GetChildren { .. } => Response::Children(&node.children),
                _ => Response::Children2(&node.children, stat),
            };
            reply(out, ZkCode::Ok, &body);
        }
        Request::Other { op } if zk::op::WRITES.contains(op) => {
            reply(out, ZkCode::NotReadOnly, &Response::Empty);
        }
        Request::Other { .. } => reply(out, ZkCode::Unimplemented, &Response::Empty),
    }
}
