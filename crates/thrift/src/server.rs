//! The TCP server: accepts connections on `hbase.regionserver.thrift.port`
//! and serves each in its own task, one request at a time in arrival
//! order (Thrift1 clients wait for each reply), while a background task
//! frees idle scanners.
//!
//! With `hbase.thrift.ssl.enabled` every connection completes a TLS
//! handshake first (`ferrobase_tls`); plaintext is refused and logged.
//! This module owns sockets, connection lifetimes and what happens to a
//! bad message: a `TApplicationException` when its header was readable,
//! then the connection is closed unless the stream is still in step
//! (framed transport); every such event is logged with the peer and what
//! was wrong. It never interprets a call (see `service`). A connection
//! that opens with an HTTP request is served as Thrift over HTTP (`http`).

use crate::error::StartError;
use crate::hbase_types::ApplicationError;
use crate::protocol::Limits;
use crate::service::{Gateway, application_error};
use crate::transport::{Incoming, Transport};
use ferrobase_client::Connection;
use ferrobase_tls::{Accepted, ServerStream, ServerTls};
use ferrobase_types::Settings;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

/// How the gateway listens and what it accepts.
#[derive(Clone, Debug)]
pub struct GatewayConfig {
    /// `hbase.regionserver.thrift.ipaddress` : `hbase.regionserver.thrift.port`.
    pub bind: SocketAddr,
    /// `hbase.regionserver.thrift.framed`: refuse unframed clients.
    pub framed_only: bool,
    pub limits: Limits,
    /// `hbase.thrift.connection.max-idletime`.
    pub scanner_idle: Duration,
    /// TLS only (`hbase.thrift.ssl.enabled`); `None`: plaintext.
    pub tls: Option<Arc<ServerTls>>,
}

impl GatewayConfig {
    /// The gateway's settings; `bind_ip` is the address to listen on
    /// (HBase's `hbase.regionserver.thrift.ipaddress`, default 0.0.0.0).
    /// Fails only on TLS settings that cannot be used.
    pub fn from_settings(
        s: &Settings,
        bind_ip: std::net::IpAddr,
    ) -> Result<GatewayConfig, StartError> {
        let port = u16::try_from(s.thrift_port).unwrap_or(9090);
        let max = usize::try_from(s.thrift_max_frame_size_mb.saturating_mul(1 << 20))
            .unwrap_or(usize::MAX)
            .max(1024);
        Ok(GatewayConfig {
            bind: SocketAddr::new(bind_ip, port),
            framed_only: s.thrift_framed,
            limits: Limits {
                max_message: max,
                ..Limits::default()
            },
            scanner_idle: Duration::from_millis(s.thrift_max_idle_ms.max(1)),
            tls: ServerTls::thrift(s).map_err(StartError::Tls)?,
        })
    }
}

/// A running gateway.
pub struct ThriftServer {
    addr: SocketAddr,
    gateway: Arc<Gateway>,
    shutdown: watch::Sender<bool>,
    accept: JoinHandle<()>,
}

impl ThriftServer {
    /// Listens on `config.bind` (port 0: any free port) and serves calls
    /// through `conn`.
    pub async fn start(
        conn: Connection,
        config: GatewayConfig,
    ) -> Result<ThriftServer, StartError> {
        let listener = TcpListener::bind(config.bind)
            .await
            .map_err(|source| StartError::Bind {
                addr: config.bind.to_string(),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| StartError::Bind {
            addr: config.bind.to_string(),
            source,
        })?;
        let gateway = Arc::new(Gateway::new(conn, config.scanner_idle));
        let (shutdown, stop) = watch::channel(false);
        let accept = tokio::spawn(accept_loop(listener, gateway.clone(), config, stop));
        Ok(ThriftServer {
            addr,
            gateway,
            shutdown,
            accept,
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Open scanners (for tests and status).
    pub fn open_scanners(&self) -> usize {
        self.gateway.open_scanners()
    }

    /// Stops accepting, closes every connection and scanner.
    pub async fn stop(self) {
        let _ = self.shutdown.send(true);
        let _ = self.accept.await;
    }
}

async fn accept_loop(
    listener: TcpListener,
    gateway: Arc<Gateway>,
    config: GatewayConfig,
    mut stop: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    let reap_every =
        (config.scanner_idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
    let mut reap = tokio::time::interval(reap_every);
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            _ = reap.tick() => {
                let n = gateway.reap_idle_scanners();
                if n > 0 {
                    tracing::info!("closed {n} idle Thrift scanner(s) (hbase.thrift.connection.max-idletime)");
                }
            }
            // Finished connection tasks are collected as they end.
            Some(done) = connections.join_next(), if !connections.is_empty() => {
                if let Err(e) = done && e.is_panic() {
                    tracing::error!("a Thrift connection task panicked: {e}");
                }
            }
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let (gateway, config) = (gateway.clone(), config.clone());
                    connections.spawn(async move {
                        let _ = stream.set_nodelay(true);
                        let stream = match &config.tls {
                            None => ServerStream::plain(stream),
                            Some(tls) => match tls.accept(stream, peer).await {
                                Accepted::Stream(s) => s,
                                Accepted::Closed => return,
                            },
                        };
                        serve(stream, peer, gateway, config).await;
                    });
                }
                Err(e) => {
                    // Out of descriptors and the like: pause rather than spin.
                    tracing::warn!("Thrift gateway accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
        }
    }
    connections.shutdown().await;
}

/// Serves one connection until the peer closes it or sends something
/// that cannot be answered in step.
async fn serve(
    stream: ServerStream,
    peer: SocketAddr,
    gateway: Arc<Gateway>,
    config: GatewayConfig,
) {
    // HTTP (a POST per call) or a Thrift socket transport: the first four
    // bytes tell, and are read again by whichever serves the connection.
    let mut stream = stream;
    let mut first = Vec::with_capacity(4);
    while first.len() < 4 {
        let mut byte = [0u8; 4];
        let want = byte.get_mut(..4 - first.len()).unwrap_or_default();
        match tokio::io::AsyncReadExt::read(&mut stream, want).await {
            Ok(0) => break,
            Ok(n) => first.extend_from_slice(byte.get(..n).unwrap_or_default()),
            Err(e) => {
                tracing::debug!(%peer, "Thrift connection read failed: {e}");
                return;
            }
        }
    }
    let stream = crate::http::Rewind::new(first.clone(), stream);
    if crate::http::is_http(&first) {
        crate::http::serve(stream, peer, gateway, config.limits).await;
        return;
    }
    let mut transport = Transport::new(stream, config.limits, config.framed_only);
    loop {
        let incoming = match transport.next().await {
            Ok(i) => i,
            Err(e) => {
                tracing::debug!(%peer, "Thrift connection read failed: {e}");
                return;
            }
        };
        match incoming {
            Incoming::Closed => return,
            Incoming::Message(m) => {
                if let Some(reply) = gateway.handle(&m).await
                    && let Err(e) = transport.send(&reply).await
                {
                    tracing::debug!(%peer, "Thrift reply not sent: {e}");
                    return;
                }
            }
            Incoming::Bad { failure, resync } => {
                let wire = transport.wire();
                tracing::warn!(
                    %peer,
                    ?wire,
                    method = failure.header.as_ref().map(|h| h.name.as_str()).unwrap_or("?"),
                    "bad Thrift message: {}{}",
                    failure.error,
                    if resync { "" } else { "; closing the connection" }
                );
                let Some(header) = failure.header else {
                    return;
                };
                let reply = application_error(
                    &header,
                    ApplicationError::ProtocolError,
                    &failure.error.to_string(),
                );
                if transport.send(&reply).await.is_err() || !resync {
                    return;
                }
            }
        }
    }
}
