//! The info port over HTTPS (`hbase.ssl.enabled`): an axum listener whose
//! connections have completed a TLS handshake. Handshakes run in their
//! own tasks, so a slow or silent client never holds up the next accept;
//! plaintext and failed handshakes are refused and logged by
//! `ferrobase_tls`. This module serves no pages.

use ferrobase_tls::{Accepted, ServerStream, ServerTls};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// Connections that completed their handshake, for `axum::serve`.
pub struct HttpsListener {
    addr: SocketAddr,
    ready: mpsc::Receiver<(ServerStream, SocketAddr)>,
}

impl HttpsListener {
    /// Accepts on `listener` and completes handshakes with `tls`; stops
    /// accepting when dropped.
    pub fn new(listener: TcpListener, addr: SocketAddr, tls: Arc<ServerTls>) -> HttpsListener {
        let (tx, ready) = mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    _ = tx.closed() => return,
                    a = listener.accept() => a,
                };
                let (tcp, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::warn!("info port accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let (tx, tls) = (tx.clone(), tls.clone());
                tokio::spawn(async move {
                    if let Accepted::Stream(s) = tls.accept(tcp, peer).await {
                        let _ = tx.send((s, peer)).await;
                    }
                });
            }
        });
        HttpsListener { addr, ready }
    }
}

impl axum::serve::Listener for HttpsListener {
    type Io = ServerStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (ServerStream, SocketAddr) {
        match self.ready.recv().await {
            Some(c) => c,
            // The accepting task is gone only when this listener is.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.addr)
    }
}
