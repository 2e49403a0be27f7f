//! gRPC channels over TLS: a tonic connector that dials and completes the
//! handshake with [`ClientTls`], so a handshake failure reaches the caller
//! with its cause (see [`crate::handshake`]) in the error chain. With no
//! TLS configured a channel is tonic's own plain one. This module owns no
//! retry policy.

use crate::client::ClientTls;
use crate::error::TlsError;
use http::Uri;
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tonic::transport::{Channel, Endpoint};

/// A lazily connected channel to `endpoint`, over TLS when `tls` is set.
pub fn channel(endpoint: Endpoint, tls: Option<&ClientTls>) -> Channel {
    match tls {
        None => endpoint.connect_lazy(),
        Some(tls) => endpoint.connect_with_connector_lazy(Connector(tls.clone())),
    }
}

/// A channel to `endpoint` over TLS, connected now (the handshake's
/// failure is this call's error).
pub async fn connect(
    endpoint: Endpoint,
    tls: &ClientTls,
) -> Result<Channel, tonic::transport::Error> {
    endpoint
        .connect_with_connector(Connector(tls.clone()))
        .await
}

/// The cause of a failed call's transport error, when it is a TLS one:
/// tonic reports a failed connect as a bare "transport error", with the
/// cause in its source chain.
pub fn tls_cause(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(tls) = e.downcast_ref::<TlsError>() {
            return Some(tls.to_string());
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && let Some(rustls) = io
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        {
            return Some(format!(
                "TLS failed: {}",
                crate::handshake::describe_rustls(rustls, crate::handshake::Side::Client)
            ));
        }
        if let Some(rustls) = e.downcast_ref::<rustls::Error>() {
            return Some(format!(
                "TLS failed: {}",
                crate::handshake::describe_rustls(rustls, crate::handshake::Side::Client)
            ));
        }
        // hyper keeps an I/O error's words, not its rustls error.
        if let Some(alert) = e.to_string().strip_prefix("received fatal alert: ") {
            return Some(format!(
                "TLS failed: {}",
                crate::handshake::describe_alert_name(alert.trim())
            ));
        }
        next = e.source();
    }
    None
}

/// Dials an `http://host:port` URI and completes a TLS handshake.
#[derive(Clone)]
pub struct Connector(ClientTls);

impl tower_service::Service<Uri> for Connector {
    type Response = TokioIo<TlsStream<TcpStream>>;
    type Error = TlsError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, TlsError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), TlsError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let tls = self.0.clone();
        Box::pin(async move {
            let host = uri.host().ok_or_else(|| TlsError::Setting {
                setting: "server address",
                message: format!("'{uri}' names no host"),
            })?;
            let port = uri.port_u16().unwrap_or(80);
            let stream = tls.connect(host, port).await?;
            Ok(TokioIo::new(stream))
        })
    }
}
