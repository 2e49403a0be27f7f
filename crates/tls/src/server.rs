//! A port's TLS: its identity (`hbase.rpc.tls.keystore.location`), the
//! client certificates it asks for (`hbase.server.netty.tls.client.auth.mode`,
//! verified against `hbase.rpc.tls.truststore.location`), and whether the
//! port still takes plaintext. [`ServerTls::accept`] reads nothing of a
//! new connection but its first byte: `0x16` (a TLS handshake record)
//! starts a handshake, anything else is plaintext, served or refused with
//! a log line naming the peer and what it seemed to speak. Every failed
//! handshake is logged with its cause ([`crate::handshake`]).

use crate::error::TlsError;
use crate::handshake::{self, Side};
use crate::store;
use crate::stream::ServerStream;
use ferrobase_types::{ClientAuth, Settings};
use rustls::server::WebPkiClientVerifier;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;

/// The first byte of every TLS record carrying a handshake message.
pub const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// How long a new connection may take to send its first byte.
const FIRST_BYTE_PATIENCE: Duration = Duration::from_secs(10);

/// One port's TLS policy.
pub struct ServerTls {
    acceptor: tokio_rustls::TlsAcceptor,
    /// The port's name in log lines (`RPC`, `info`, `Thrift`).
    port: &'static str,
    support_plaintext: bool,
    handshake_timeout: Duration,
    /// The setting that made the port TLS-only, for the refusal's words.
    tls_only_because: &'static str,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTls")
            .field("port", &self.port)
            .field("support_plaintext", &self.support_plaintext)
            .finish_non_exhaustive()
    }
}

/// What [`ServerTls::accept`] made of a connection.
pub enum Accepted {
    /// Ready to serve, TLS or (where allowed) plaintext.
    Stream(ServerStream),
    /// Refused or failed; already logged. Drop it.
    Closed,
}

impl ServerTls {
    /// The RPC port's TLS (gRPC and HBase RPC), when
    /// `hbase.server.netty.tls.enabled`.
    pub fn rpc(settings: &Settings) -> Result<Option<Arc<ServerTls>>, TlsError> {
        if !settings.tls_server_enabled {
            return Ok(None);
        }
        Self::build(
            settings,
            "RPC",
            settings.tls_client_auth,
            settings.tls_server_support_plaintext,
            "hbase.server.netty.tls.supportplaintext=false",
            &[b"h2"],
        )
        .map(Some)
    }

    /// The info port's HTTPS, when `hbase.ssl.enabled`: no client
    /// certificates (browsers), no plaintext.
    pub fn info(settings: &Settings) -> Result<Option<Arc<ServerTls>>, TlsError> {
        if !settings.info_ssl_enabled {
            return Ok(None);
        }
        Self::build(
            settings,
            "info",
            ClientAuth::None,
            false,
            "hbase.ssl.enabled=true",
            &[b"http/1.1"],
        )
        .map(Some)
    }

    /// The Thrift gateway's TLS, when `hbase.thrift.ssl.enabled`: no
    /// plaintext, client certificates as the RPC port asks for them.
    pub fn thrift(settings: &Settings) -> Result<Option<Arc<ServerTls>>, TlsError> {
        if !settings.thrift_ssl_enabled {
            return Ok(None);
        }
        Self::build(
            settings,
            "Thrift",
            settings.tls_client_auth,
            false,
            "hbase.thrift.ssl.enabled=true",
            &[],
        )
        .map(Some)
    }

    fn build(
        settings: &Settings,
        port: &'static str,
        client_auth: ClientAuth,
        support_plaintext: bool,
        tls_only_because: &'static str,
        alpn: &[&[u8]],
    ) -> Result<Arc<ServerTls>, TlsError> {
        let identity = store::identity(settings)?.ok_or(TlsError::Setting {
            setting: store::KEYSTORE_LOCATION,
            message: format!(
                "not set, and TLS on the {port} port needs the server's key and certificate (a PEM file)"
            ),
        })?;
        let provider = crate::provider();
        let verifier = match (client_auth, store::roots(settings)?) {
            (ClientAuth::None, _) => WebPkiClientVerifier::no_client_auth(),
            (mode, Some(roots)) => {
                let builder = WebPkiClientVerifier::builder_with_provider(roots, provider.clone());
                let builder = if mode == ClientAuth::Want {
                    builder.allow_unauthenticated()
                } else {
                    builder
                };
                builder
                    .build()
                    .map_err(|e| TlsError::Config(format!("client certificate verifier: {e}")))?
            }
            (mode, None) => {
                return Err(TlsError::Setting {
                    setting: store::TRUSTSTORE_LOCATION,
                    message: format!(
                        "not set, and hbase.server.netty.tls.client.auth.mode={mode} needs the CA certificates that sign client certificates (or set the mode to NONE)"
                    ),
                });
            }
        };
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Config(e.to_string()))?
            .with_client_cert_verifier(verifier)
            .with_single_cert(identity.chain, identity.key)
            .map_err(|e| TlsError::Store {
                setting: store::KEYSTORE_LOCATION,
                path: settings.tls_keystore_location.clone(),
                message: format!("the key and certificate cannot be used: {e}"),
            })?;
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(Arc::new(ServerTls {
            acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
            port,
            support_plaintext,
            handshake_timeout: Duration::from_millis(settings.tls_handshake_timeout_ms.max(100)),
            tls_only_because,
        }))
    }

    /// True when plaintext connections are still served.
    pub fn supports_plaintext(&self) -> bool {
        self.support_plaintext
    }

    /// Looks at the first byte of `stream`: a TLS handshake is completed
    /// (within `hbase.client.netty.tls.handshaketimeout`), plaintext is
    /// served only where allowed. Failures and refusals are logged here.
    pub async fn accept(&self, stream: TcpStream, peer: SocketAddr) -> Accepted {
        let mut first = [0u8; 8];
        let peeked = tokio::time::timeout(FIRST_BYTE_PATIENCE, stream.peek(&mut first)).await;
        let n = match peeked {
            Ok(Ok(n)) => n,
            // Silent or gone: nothing to serve, nothing worth a warning.
            Ok(Err(_)) | Err(_) => return Accepted::Closed,
        };
        let head = first.get(..n).unwrap_or(&[]);
        match head.first() {
            None => Accepted::Closed,
            Some(&TLS_HANDSHAKE_RECORD) => self.handshake(stream, peer).await,
            Some(_) if self.support_plaintext => Accepted::Stream(ServerStream::plain(stream)),
            Some(_) => {
                let e = TlsError::Plaintext {
                    peer: peer.to_string(),
                    what: format!(
                        "the {} port requires TLS ({}), and the client sent {}",
                        self.port,
                        self.tls_only_because,
                        plaintext_kind(head)
                    ),
                };
                tracing::warn!(port = self.port, %peer, "{e}");
                Accepted::Closed
            }
        }
    }

    async fn handshake(&self, stream: TcpStream, peer: SocketAddr) -> Accepted {
        let accept = self.acceptor.accept(stream).into_fallible();
        let done = tokio::time::timeout(self.handshake_timeout, accept).await;
        let reason = match done {
            Ok(Ok(tls)) => return Accepted::Stream(ServerStream::tls(tls)),
            Ok(Err((e, tcp))) => {
                let reason = handshake::describe(&e, Side::Server);
                linger(tcp).await;
                reason
            }
            Err(_) => format!(
                "not finished within {} ms (hbase.client.netty.tls.handshaketimeout)",
                self.handshake_timeout.as_millis()
            ),
        };
        let e = TlsError::Handshake {
            peer: peer.to_string(),
            reason,
        };
        tracing::warn!(port = self.port, %peer, "{e}");
        Accepted::Closed
    }
}

/// Closes a socket whose handshake failed so that the peer reads the
/// alert already sent: closing with its bytes unread would reset the
/// connection, and the peer would see "connection reset" instead of why.
async fn linger(mut tcp: TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = tcp.shutdown().await;
    let mut sink = [0u8; 4096];
    let drain = async {
        let mut left = 256 * 1024usize;
        while left > 0 {
            match tcp.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
}

/// What a plaintext client seemed to speak, from its first bytes.
fn plaintext_kind(head: &[u8]) -> String {
    let known: [(&[u8], &str); 6] = [
        (
            b"HBas",
            "an HBase RPC preamble (set hbase.client.netty.tls.enabled=true on the client)",
        ),
        (
            b"Regi",
            "an HBase connection registry preamble (set hbase.client.netty.tls.enabled=true on the client)",
        ),
        (
            b"PRI ",
            "an HTTP/2 (gRPC) preface (set hbase.client.netty.tls.enabled=true on the client)",
        ),
        (b"GET ", "an HTTP request (use https://)"),
        (b"POST", "an HTTP request (use https://)"),
        (b"HEAD", "an HTTP request (use https://)"),
    ];
    for (prefix, what) in known {
        if head.starts_with(prefix) {
            return what.to_string();
        }
    }
    let hex: Vec<String> = head.iter().map(|b| format!("{b:02x}")).collect();
    format!("plaintext bytes {}", hex.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plaintext_is_recognised() {
        assert!(plaintext_kind(b"HBas\x00\x50").contains("HBase RPC"));
        assert!(plaintext_kind(b"PRI * HTTP/2.0").contains("gRPC"));
        assert!(plaintext_kind(b"\x80\x01").contains("80 01"));
    }

    #[test]
    fn tls_on_needs_a_key_store() {
        let mut s = Settings {
            tls_server_enabled: true,
            ..Settings::default()
        };
        let e = ServerTls::rpc(&s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(store::KEYSTORE_LOCATION), "{e}");
        s.tls_server_enabled = false;
        assert!(matches!(ServerTls::rpc(&s), Ok(None)));
        assert!(matches!(ServerTls::info(&s), Ok(None)));
        assert!(matches!(ServerTls::thrift(&s), Ok(None)));
    }
}
