//! The client side: `hbase.client.netty.tls.enabled` with the trust store
//! (`hbase.rpc.tls.truststore.location`) that must sign servers'
//! certificates, an optional client certificate for mutual TLS
//! (`hbase.rpc.tls.keystore.location`), and host name verification
//! (`hbase.client.netty.tls.verify.server.hostname`). [`ClientTls::connect`]
//! dials and completes the handshake, or fails naming the cause.

use crate::confirm::{TicketWatch, confirm};
use crate::error::TlsError;
use crate::handshake::{self, Side};
use crate::store;
use ferrobase_types::Settings;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, SignatureScheme};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

/// Longest wait for a TLS 1.3 server's verdict on a client certificate.
const CONFIRM_PATIENCE: Duration = Duration::from_secs(2);

/// A client's TLS configuration; cheap to clone.
#[derive(Clone)]
pub struct ClientTls {
    connector: tokio_rustls::TlsConnector,
    handshake_timeout: Duration,
    /// Tickets received (the `confirm` module).
    tickets: Arc<TicketWatch>,
    /// Whether a TLS 1.3 handshake waits for the server's verdict on the
    /// client certificate (the `confirm` module). Only for servers that
    /// never speak first: an HTTP/2 server sends its SETTINGS at once.
    confirm: bool,
}

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTls")
            .field("handshake_timeout", &self.handshake_timeout)
            .finish_non_exhaustive()
    }
}

impl ClientTls {
    /// The client TLS of `settings`, when `hbase.client.netty.tls.enabled`.
    pub fn from_settings(settings: &Settings) -> Result<Option<ClientTls>, TlsError> {
        ClientTls::build(settings, Vec::new(), true)
    }

    /// [`from_settings`](Self::from_settings), offering HTTP/2 by ALPN:
    /// for gRPC servers that pick the protocol by ALPN (etcd does, and
    /// treats a TLS connection without it as HTTP/1.1). Such a server
    /// speaks first, so a refused client certificate surfaces at the first
    /// call rather than in the handshake.
    pub fn from_settings_h2(settings: &Settings) -> Result<Option<ClientTls>, TlsError> {
        ClientTls::build(settings, vec![b"h2".to_vec()], false)
    }

    fn build(
        settings: &Settings,
        alpn: Vec<Vec<u8>>,
        confirm: bool,
    ) -> Result<Option<ClientTls>, TlsError> {
        if !settings.tls_client_enabled {
            return Ok(None);
        }
        let roots = store::roots(settings)?.ok_or(TlsError::Setting {
            setting: store::TRUSTSTORE_LOCATION,
            message: "not set, and a TLS client (hbase.client.netty.tls.enabled=true) needs the CA certificates that sign the servers' certificates".into(),
        })?;
        let provider = crate::provider();
        let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| TlsError::Config(format!("server certificate verifier: {e}")))?;
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Config(e.to_string()))?;
        let builder = if settings.tls_verify_server_hostname {
            builder.with_webpki_verifier(webpki)
        } else {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyHostName(webpki)))
        };
        let mut config = match store::identity(settings)? {
            Some(id) => builder
                .with_client_auth_cert(id.chain, id.key)
                .map_err(|e| TlsError::Store {
                    setting: store::KEYSTORE_LOCATION,
                    path: settings.tls_keystore_location.clone(),
                    message: format!("the key and certificate cannot be used: {e}"),
                })?,
            None => builder.with_no_client_auth(),
        };
        config.alpn_protocols = alpn;
        // Also without a certificate: the server may require one.
        let tickets = Arc::new(TicketWatch::new());
        config.resumption = rustls::client::Resumption::store(tickets.clone());
        Ok(Some(ClientTls {
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
            handshake_timeout: Duration::from_millis(settings.tls_handshake_timeout_ms.max(100)),
            tickets,
            confirm,
        }))
    }

    /// Dials `host:port` and completes the handshake; the certificate must
    /// name `host` (unless host names are not verified).
    pub async fn connect(&self, host: &str, port: u16) -> Result<TlsStream<TcpStream>, TlsError> {
        let peer = format!("{host}:{port}");
        let name = server_name(host)?;
        let tcp = TcpStream::connect((host.trim_matches(['[', ']']), port))
            .await
            .map_err(|source| TlsError::Connect {
                peer: peer.clone(),
                source,
            })?;
        let _ = tcp.set_nodelay(true);
        self.handshake(tcp, name, &peer).await
    }

    /// Completes the handshake on a connected socket.
    pub async fn handshake(
        &self,
        tcp: TcpStream,
        name: ServerName<'static>,
        peer: &str,
    ) -> Result<TlsStream<TcpStream>, TlsError> {
        let tickets = self.tickets.subscribe();
        match tokio::time::timeout(self.handshake_timeout, self.connector.connect(name, tcp)).await
        {
            Ok(Ok(mut s)) => {
                let tls13 =
                    s.get_ref().1.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3);
                if tls13 && self.confirm {
                    let patience = self.handshake_timeout.min(CONFIRM_PATIENCE);
                    if let Err(e) = confirm(&mut s, tickets, patience).await {
                        return Err(TlsError::Handshake {
                            peer: peer.to_string(),
                            reason: handshake::describe(&e, Side::Client),
                        });
                    }
                }
                Ok(s)
            }
            Ok(Err(e)) => Err(TlsError::Handshake {
                peer: peer.to_string(),
                reason: handshake::describe(&e, Side::Client),
            }),
            Err(_) => Err(TlsError::Handshake {
                peer: peer.to_string(),
                reason: format!(
                    "not finished within {} ms (hbase.client.netty.tls.handshaketimeout): is it a plaintext port?",
                    self.handshake_timeout.as_millis()
                ),
            }),
        }
    }
}

/// The name a certificate must carry for `host` (a DNS name or an IP).
pub fn server_name(host: &str) -> Result<ServerName<'static>, TlsError> {
    ServerName::try_from(host.trim_matches(['[', ']']).to_string()).map_err(|e| TlsError::Setting {
        setting: "server address",
        message: format!("'{host}' is not a host name or IP address: {e}"),
    })
}

/// Verifies the chain and dates but not the host name
/// (`hbase.client.netty.tls.verify.server.hostname=false`).
#[derive(Debug)]
struct AnyHostName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyHostName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
