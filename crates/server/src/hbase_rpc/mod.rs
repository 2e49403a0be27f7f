//! HBase's native RPC on the server's port, beside gRPC: each accepted
//! connection's first bytes decide. HBase clients open with `HBas` (or the
//! 2.6 registry's `Regist`, or `Securi`); gRPC clients with the HTTP/2
//! preface `PRI `. HBase connections are served here; every other
//! connection is handed on, untouched, to the gRPC server through the
//! stream [`split_incoming`] returns. One port serves both, as one port
//! serves HBase's services, so a client's `hbase.client.bootstrap.servers`
//! names the same `host:port` as ferrobase's own clients. With TLS on
//! (`hbase.server.netty.tls.enabled`) the handshake comes first
//! (`ferrobase_tls::ServerTls::accept` tells a ClientHello from plaintext)
//! and the sniffing looks at the decrypted bytes.
//!
//! Services: the connection registry (`Regist` and `ClientMetaService`),
//! `MasterService` where this server is the master (`master_service`),
//! and `ClientService` (`client_service`, with `hbase:meta` rendered by
//! `meta_table`). A method that is not served is answered with HBase's
//! `DoNotRetryIOException` wrapping an `UnsupportedOperationException`
//! that names it, so a Java client fails at once saying what is missing
//! instead of retrying.
//!
//! One connection carries many calls at once (the Java client multiplexes
//! every thread's calls over one socket per server), so calls are answered
//! as they finish, not in order: short local reads and meta are answered
//! on the connection's task, writes, long scans and DDL on the handler pool
//! or a blocking thread, and one writer task sends the answers.
//!
//! Calls are routed by `master_calls` (registry and `MasterService`) and
//! `region_calls` (`ClientService`, `AdminService`).
//!
//! This module owns sockets and dispatch only; the bytes are
//! `ferrobase-hbase-wire`'s. It never lets one connection's bad bytes reach
//! another: a decode error is answered with HBase's
//! `FatalConnectionException` and that connection alone is closed.

mod admin_service;
mod auth_service;
mod client_service;
mod cluster_id;
mod exceptions;
mod master_calls;
mod master_service;
mod meta_table;
mod region_calls;
mod scan;

pub use client_service::{DEFAULT_MAX_RESULT_SIZE, SCANNER_TTL_MS};
pub use cluster_id::{STANDALONE_CLUSTER_ID, cluster_id_for_root};

use crate::acl::{Access, Action};
use crate::auth::{Authentication, TokenAuthority};
use crate::master::Master;
use crate::region_server::RegionServer;
use crate::rpc_metrics::{CallOutcome, CallTimer, Op, Protocol};
use admin_service::CompactionRequests;
use bytes::BytesMut;
use client_service::Answer;
use exceptions::{Target, do_not_retry, exception, target};
use ferrobase_hbase_wire::cellblock::CellCodec;
use ferrobase_hbase_wire::frame::{self, AuthMethod, NO_CALL_ID, ServerDecoder, ServerEvent};
use ferrobase_hbase_wire::names::{RegionName, ServerName};
use ferrobase_hbase_wire::sasl::digest_md5::{DigestMd5Server, ServerStep};
use ferrobase_hbase_wire::sasl::{self, SaslError};
use ferrobase_hbase_wire::{ExceptionClass, HBaseException, RequestFrame, pb};
use ferrobase_tls::stream::Halves;
use ferrobase_tls::{Accepted, ServerStream, ServerTls};
use master_service::MasterService;
use meta_table::{MetaRow, MetaScanner, Renderer};
use prost::Message;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tracing::Instrument as _;

/// How long a new connection may take to send the bytes that tell its
/// protocol before it is handed to gRPC (which applies its own timeouts).
const SNIFF_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes needed to tell HBase from HTTP/2 (`HBas`/`Regi`/`Secu` vs `PRI `).
const SNIFF_BYTES: usize = 4;

/// Scan opens asking for at most this many rows run on the connection's
/// task on a local root, like the gRPC path's short scans (an HBase Get is
/// one row and always does).
const SHORT_SCAN_ROWS: u32 = 1_000;

/// Meta scanner ids: a range no region scanner uses.
const META_SCANNER_IDS: u64 = 1 << 62;

/// Forward meta scans left unfinished are dropped after this long.
const META_SCANNER_TTL: Duration = Duration::from_secs(60);

/// Who this server is to HBase clients.
pub struct HBaseRpc {
    /// The cluster id the registry answers.
    pub cluster_id: String,
    /// This server (also the master in standalone mode).
    pub server: ServerName,
    /// The master, where this server is it (standalone): answers
    /// `MasterService` and renders `hbase:meta`.
    pub master: Option<Arc<Master>>,
    /// The region server, where this server is one: answers
    /// `ClientService` for its regions.
    pub region_server: Option<Arc<RegionServer>>,
    /// Procedure ids handed out for DDL (each finished when answered).
    pub procedures: Arc<AtomicU64>,
    /// Ids for scans answered whole (no scanner kept).
    pub closed_scanners: AtomicU64,
    /// Forward meta scans that did not fit one answer.
    pub meta_scanners: parking_lot::Mutex<HashMap<u64, MetaScanner>>,
    /// Compactions `AdminService` started and not finished.
    compactions: Arc<CompactionRequests>,
    /// Increments and Appends applied, by nonce (retries apply once).
    nonces: Arc<crate::nonces::ServerNonces>,
    /// How callers prove who they are (`hbase.security.authentication`).
    authentication: Authentication,
    /// Mints and checks tokens; `None` with simple authentication.
    tokens: Option<Arc<TokenAuthority>>,
}

impl HBaseRpc {
    /// This server's HBase RPC: a master and/or a region server.
    pub fn new(
        cluster_id: impl Into<String>,
        server: ServerName,
        master: Option<Arc<Master>>,
        region_server: Option<Arc<RegionServer>>,
    ) -> HBaseRpc {
        HBaseRpc {
            cluster_id: cluster_id.into(),
            server,
            master,
            procedures: Arc::default(),
            closed_scanners: AtomicU64::new(1),
            meta_scanners: parking_lot::Mutex::default(),
            compactions: Arc::default(),
            nonces: region_server
                .as_ref()
                .map(|rs| rs.nonces().clone())
                .unwrap_or_default(),
            region_server,
            authentication: Authentication::Simple,
            tokens: None,
        }
    }

    /// This server with `authentication`; a secure mode needs the
    /// cluster's token authority.
    pub fn with_authentication(
        mut self,
        authentication: Authentication,
        tokens: Option<Arc<TokenAuthority>>,
    ) -> HBaseRpc {
        self.authentication = authentication;
        self.tokens = tokens;
        self
    }

    /// The token authority, where tokens are on.
    /// The gRPC interceptor proving callers by the same rules, for the
    /// services sharing this port.
    pub fn grpc_authentication(&self) -> crate::grpc_auth::GrpcAuthentication {
        crate::grpc_auth::GrpcAuthentication::new(self.authentication, self.tokens.clone())
    }

    pub fn tokens(&self) -> Option<&Arc<TokenAuthority>> {
        self.tokens.as_ref()
    }
}

/// An answer still being worked on: its encoded response frame.
type Pending = Pin<Box<dyn Future<Output = BytesMut> + Send>>;

/// What one connection said about itself in its header.
#[derive(Clone, Default)]
struct Connection {
    /// The one service the connection calls (`ClientService`, ...).
    service: Arc<str>,
    /// How cells travel; `None`: inside the messages.
    codec: Option<CellCodec>,
    /// The verified client certificate's identity (mutual TLS).
    peer: Option<ferrobase_tls::PeerIdentity>,
    /// Who calls ([`crate::acl::identity`]): the token's user, else the
    /// certificate's, else the header's effective user.
    user: Arc<str>,
    /// The user a token authenticated (SASL DIGEST-MD5).
    token_user: Option<Arc<str>>,
    /// The DIGEST-MD5 exchange under way.
    sasl: Option<DigestMd5Server>,
}

impl Connection {
    /// How the caller was authenticated, in HBase's names (`WhoAmI`).
    fn auth_method(&self) -> &'static str {
        if self.token_user.is_some() {
            "TOKEN"
        } else if self.peer.is_some() {
            "CERTIFICATE"
        } else {
            "SIMPLE"
        }
    }

    /// True when the caller proved who it is (a token or a certificate).
    fn is_authenticated(&self) -> bool {
        self.token_user.is_some() || self.peer.is_some()
    }
}

/// The Java class of a refused SASL exchange other than a bad token.
const SASL_EXCEPTION: &str = "javax.security.sasl.SaslException";

/// A fresh DIGEST-MD5 nonce: 16 random bytes, base64.
fn fresh_nonce() -> Option<String> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 16];
    ring::rand::SystemRandom::new().fill(&mut bytes).ok()?;
    Some(sasl::base64_encode(&bytes))
}

/// Writes an answer: the message and its cell block, or the exception.
fn write_answer<M: Message>(
    out: &mut BytesMut,
    id: u32,
    result: Result<Answer<M>, HBaseException>,
) {
    let ok = match result {
        Ok(a) => frame::encode_response(out, id, &a.message, Some(&a.cells)).is_ok(),
        Err(e) => fail(out, id, &e),
    };
    if !ok {
        let e = do_not_retry(format!("call {id}: the answer could not be encoded"));
        let _ = frame::encode_exception(out, id, &e.to_response());
    }
}

fn plain<M>(result: Result<M, HBaseException>) -> Result<Answer<M>, HBaseException> {
    result.map(|message| Answer {
        message,
        cells: BytesMut::new(),
    })
}

fn fail(out: &mut BytesMut, call_id: u32, e: &HBaseException) -> bool {
    frame::encode_exception(out, call_id, &e.to_response()).is_ok()
}

/// A call's parameter; a malformed one is HBase's DoNotRetryIOException.
fn param<M: Message + Default>(call: &RequestFrame) -> Result<M, HBaseException> {
    call.decode_param().map_err(|e| e.exception())
}

/// [`param`], with a malformed one already answered: `None` then.
fn decoded<M: Message + Default>(call: &RequestFrame, id: u32, out: &mut BytesMut) -> Option<M> {
    param(call).map_err(|e| fail(out, id, &e)).ok()
}

fn not_master() -> HBaseException {
    HBaseException::new(
        ExceptionClass::DoNotRetryIo,
        "this server is not the master",
    )
}

fn not_region_server() -> HBaseException {
    HBaseException::new(
        ExceptionClass::DoNotRetryIo,
        "this server is not a region server",
    )
}

impl HBaseRpc {
    /// The caller of `conn` in front of this server's permissions.
    fn access(&self, conn: &Connection) -> Access {
        let checker = match (&self.region_server, &self.master) {
            (Some(rs), _) => rs.access_checker().clone(),
            (None, Some(m)) => m.access_checker(),
            (None, None) => crate::acl::AccessChecker::disabled(),
        };
        checker.access(conn.user.clone())
    }

    /// Answers one event; false when the connection is to be closed after
    /// what `out` holds is written.
    fn event(
        self: &Arc<Self>,
        event: ServerEvent,
        decoder: &mut ServerDecoder,
        conn: &mut Connection,
        out: &mut BytesMut,
        later: &mut Vec<Pending>,
    ) -> bool {
        match event {
            ServerEvent::SaslPreamble(method) => self.sasl_preamble(method, decoder, conn, out),
            ServerEvent::SaslToken(token) => self.sasl_token(&token, decoder, conn, out),
            ServerEvent::RegistryPreamble => {
                let resp = pb::GetConnectionRegistryResponse {
                    cluster_id: self.cluster_id.clone(),
                };
                let _ = frame::encode_response(out, NO_CALL_ID, &resp, None);
                false
            }
            ServerEvent::SecurityPreamble => {
                // The preamble asks for a Kerberos principal, which no
                // ferrobase server has.
                let e = HBaseException::new(
                    ExceptionClass::FatalConnection,
                    match self.authentication {
                        Authentication::Simple => {
                            "security is not enabled on this ferrobase server (SIMPLE authentication only)"
                        }
                        Authentication::Secure { .. } => {
                            "this ferrobase server has no Kerberos principal: GSSAPI/Kerberos is not \
                             supported; use a token (DIGEST) or a TLS client certificate"
                        }
                    },
                );
                let _ = frame::encode_exception(out, NO_CALL_ID, &e.to_response());
                true
            }
            ServerEvent::ConnectionHeader(h) => {
                match CellCodec::from_connection_header(&h) {
                    Ok(codec) => conn.codec = codec,
                    Err(e) => {
                        let _ = frame::encode_exception(out, NO_CALL_ID, &e.to_response());
                        return false;
                    }
                }
                conn.service = Arc::from(h.service_name.unwrap_or_default());
                let claimed = h.user_info.as_ref().map(|u| u.effective_user.as_str());
                if let Some(user) = &conn.token_user {
                    // HBase: a token authenticates its own user only, no doAs.
                    if let Some(c) = claimed.filter(|c| !c.is_empty() && *c != &**user) {
                        // FatalConnectionException, not HBase's AccessDenied:
                        // the Java client skips any other class answering no
                        // call and reports only "Connection closed".
                        let e = HBaseException::new(
                            ExceptionClass::FatalConnection,
                            format!(
                                "Authenticated user ({user}) doesn't match what the client claims to be ({c})"
                            ),
                        );
                        let _ = frame::encode_exception(out, NO_CALL_ID, &e.to_response());
                        return false;
                    }
                    conn.user = user.clone();
                    return true;
                }
                if let Authentication::Secure { fallback_to_simple } = self.authentication
                    && conn.peer.is_none()
                {
                    if !fallback_to_simple {
                        // FatalConnectionException (see above) so that the
                        // client's error says why.
                        let e = HBaseException::new(
                            ExceptionClass::FatalConnection,
                            "Authentication is required: this server \
                             (hbase.security.authentication=kerberos/token) refuses SIMPLE \
                             connections; use a token (HADOOP_TOKEN_FILE_LOCATION, \
                             hbase.security.authentication=kerberos on the client) or a TLS \
                             client certificate",
                        );
                        tracing::warn!(
                            target: "ferrobase::audit",
                            "SIMPLE connection refused (claimed user {:?}): authentication is required",
                            claimed.unwrap_or_default()
                        );
                        let _ = frame::encode_exception(out, NO_CALL_ID, &e.to_response());
                        return false;
                    }
                    tracing::warn!(
                        "Allowed fallback to SIMPLE auth for {:?} (hbase.ipc.server.fallback-to-simple-auth-allowed)",
                        claimed.unwrap_or_default()
                    );
                }
                conn.user = crate::acl::identity::hbase_user(conn.peer.as_ref(), claimed);
                true
            }
            ServerEvent::Call(call) => {
                if let Some(p) = self.call(conn, call, out) {
                    later.push(p);
                }
                true
            }
            // Events a newer wire crate may add: nothing to answer.
            _ => true,
        }
    }

    /// A KERBEROS or DIGEST preamble: with simple authentication the
    /// client is told to fall back to SIMPLE (HBase's answer); KERBEROS is
    /// refused; DIGEST starts an exchange.
    fn sasl_preamble(
        &self,
        method: AuthMethod,
        decoder: &mut ServerDecoder,
        conn: &mut Connection,
        out: &mut BytesMut,
    ) -> bool {
        if !self.authentication.is_secure() {
            sasl::encode_switch_to_simple(out);
            decoder.sasl_switch_to_simple();
            return true;
        }
        let refuse = |out: &mut BytesMut, class: &str, message: &str| {
            tracing::warn!(target: "ferrobase::audit", "SASL authentication refused: {message}");
            let _ = sasl::encode_error(out, class, message);
            false
        };
        if method != AuthMethod::Digest {
            return refuse(
                out,
                SASL_EXCEPTION,
                "GSSAPI/Kerberos is not supported; use a token (DIGEST) or a TLS client certificate",
            );
        }
        let server =
            fresh_nonce().and_then(|nonce| DigestMd5Server::new(sasl::DEFAULT_REALM, &nonce).ok());
        match server {
            Some(s) => {
                conn.sasl = Some(s);
                true
            }
            None => refuse(
                out,
                SASL_EXCEPTION,
                "the server has no randomness for a nonce",
            ),
        }
    }

    /// One client SASL token of a DIGEST-MD5 exchange.
    fn sasl_token(
        &self,
        token: &[u8],
        decoder: &mut ServerDecoder,
        conn: &mut Connection,
        out: &mut BytesMut,
    ) -> bool {
        let (Some(server), Some(tokens)) = (conn.sasl.as_mut(), self.tokens.as_ref()) else {
            let _ = sasl::encode_error(out, SASL_EXCEPTION, "no SASL exchange is under way");
            return false;
        };
        let now = crate::auth::now_ms();
        let mut token_user = None;
        let step = server.step(token, |name| {
            let identifier = sasl::base64_decode(name).map_err(|e| {
                SaslError::InvalidToken(format!("Can't de-serialize tokenIdentifier: {e}"))
            })?;
            let (user, password) = tokens
                .check(&identifier, now)
                .map_err(SaslError::InvalidToken)?;
            token_user = Some(user);
            // The DIGEST-MD5 password is the token password's base64.
            Ok(sasl::base64_encode(&password).into_bytes())
        });
        match step {
            Ok(ServerStep::Challenge(c)) => sasl::encode_success(out, &c).is_ok(),
            Ok(ServerStep::Complete { reply, .. }) => {
                // Completion needs the password, so the look-up above ran.
                let Some(user) = token_user else {
                    let _ = sasl::encode_error(out, SASL_EXCEPTION, "no token was checked");
                    return false;
                };
                tracing::debug!("SASL DIGEST-MD5 authenticated {user}");
                conn.token_user = Some(Arc::from(user.as_str()));
                conn.user = Arc::from(user.as_str());
                conn.sasl = None;
                decoder.sasl_complete();
                sasl::encode_success(out, &reply).is_ok()
            }
            Err(e) => {
                let class = match e {
                    SaslError::InvalidToken(_) => crate::auth::INVALID_TOKEN_CLASS,
                    _ => SASL_EXCEPTION,
                };
                tracing::warn!(
                    target: "ferrobase::audit",
                    "SASL DIGEST-MD5 authentication refused: {e}"
                );
                let _ = sasl::encode_error(out, class, &e.to_string());
                false
            }
        }
    }

    /// Answers `call` into `out`, or returns the work that will.
    fn call(
        self: &Arc<Self>,
        conn: &Connection,
        call: RequestFrame,
        out: &mut BytesMut,
    ) -> Option<Pending> {
        let id = call.call_id();
        match &*conn.service {
            "ClientMetaService" => {
                self.client_meta(id, call.method(), out);
                None
            }
            "MasterService" => self.master_call(conn, id, &call, out),
            "ClientService" => self.timed_client_call(conn, id, call, out),
            "AdminService" => self.admin_call(conn, id, &call, out),
            service => {
                fail(
                    out,
                    id,
                    &HBaseException::unsupported_method(service, call.method()),
                );
                None
            }
        }
    }

    /// Serves one HBase connection until the client closes it or sends
    /// bytes that cannot be trusted.
    async fn serve(self: Arc<Self>, stream: ServerStream) {
        let peer = stream.info().peer.clone();
        match stream.into_halves() {
            Halves::Plain(r, w) => self.serve_halves(r, w, peer).await,
            Halves::Tls(r, w) => self.serve_halves(r, w, peer).await,
        }
    }

    async fn serve_halves<R, W>(
        self: Arc<Self>,
        mut reader: R,
        mut writer: W,
        peer: Option<ferrobase_tls::PeerIdentity>,
    ) where
        R: tokio::io::AsyncRead + Unpin,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, mut rx) = mpsc::unbounded_channel::<BytesMut>();
        let write_task = tokio::spawn(async move {
            while let Some(mut buf) = rx.recv().await {
                // Send what else is ready in the same write.
                while let Ok(more) = rx.try_recv() {
                    buf.extend_from_slice(&more);
                }
                if writer.write_all(&buf).await.is_err() {
                    return;
                }
            }
            let _ = writer.shutdown().await;
        });
        let mut decoder = ServerDecoder::default();
        let mut buf = BytesMut::with_capacity(64 * 1024);
        let mut conn = Connection {
            user: crate::acl::identity::hbase_user(peer.as_ref(), None),
            peer,
            ..Connection::default()
        };
        let mut later = Vec::new();
        let mut open = true;
        while open {
            match reader.read_buf(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let mut out = BytesMut::new();
            loop {
                match decoder.decode(&mut buf) {
                    Ok(None) => break,
                    Ok(Some(event)) => {
                        open = self.event(event, &mut decoder, &mut conn, &mut out, &mut later);
                        if !open {
                            break;
                        }
                    }
                    Err(e) if decoder.in_sasl() => {
                        // The client reads SASL replies, not RPC frames.
                        tracing::debug!("HBase RPC connection closed during SASL: {e}");
                        let _ = sasl::encode_error(&mut out, SASL_EXCEPTION, &e.to_string());
                        open = false;
                        break;
                    }
                    Err(e) => {
                        tracing::debug!("HBase RPC connection closed: {e}");
                        let _ = frame::encode_exception(
                            &mut out,
                            NO_CALL_ID,
                            &e.exception().to_response(),
                        );
                        open = false;
                        break;
                    }
                }
            }
            if !out.is_empty() && tx.send(out).is_err() {
                break;
            }
            for work in later.drain(..) {
                let tx = tx.clone();
                tokio::spawn(async move {
                    let _ = tx.send(work.await);
                });
            }
        }
        // The writer ends once every answer still being worked on is sent.
        drop(tx);
        let _ = write_task.await;
    }
}

/// True when the connection speaks HBase RPC; false for anything else
/// (HTTP/2), for a connection closed before it said, or one silent for
/// [`SNIFF_TIMEOUT`]. Over TLS the bytes looked at are the decrypted ones.
async fn speaks_hbase(stream: &mut ServerStream) -> bool {
    match stream.peek_head(SNIFF_BYTES, SNIFF_TIMEOUT).await {
        Ok(head) => head.len() >= SNIFF_BYTES && frame::looks_like_hbase(&head),
        Err(_) => false,
    }
}

/// Accepts connections on `listener` (Nagle off), completes TLS where
/// `tls` says (and refuses plaintext where it must), serves the HBase
/// connections and yields the others for `tonic`'s `serve_with_incoming*`.
/// Accepting stops when the returned stream is dropped (the gRPC server
/// stopped), so the port is free again for a restart.
/// A region server's registered `host:port` as an HBase server name; this
/// process's own address (or none) is `me`, with its start code.
pub(crate) fn registered_server_name(addr: &str, me: &ServerName) -> ServerName {
    if addr.is_empty() || addr == format!("{}:{}", me.host, me.port) {
        return me.clone();
    }
    addr.rsplit_once(':')
        .and_then(|(h, p)| Some(ServerName::new(h, p.parse().ok()?, 0)))
        .unwrap_or_else(|| me.clone())
}

pub fn split_incoming(
    listener: TcpListener,
    rpc: Arc<HBaseRpc>,
    tls: Option<Arc<ServerTls>>,
) -> ReceiverStream<io::Result<ServerStream>> {
    let (tx, rx) = mpsc::channel::<io::Result<ServerStream>>(64);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                _ = tx.closed() => return,
                a = listener.accept() => a,
            };
            let (stream, peer) = match accepted {
                Ok(s) => s,
                Err(e) => {
                    // Out of file descriptors and the like: wait, go on.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let tx = tx.clone();
            let rpc = rpc.clone();
            let tls = tls.clone();
            tokio::spawn(async move {
                let mut stream = match tls {
                    None => ServerStream::plain(stream),
                    Some(tls) => match tls.accept(stream, peer).await {
                        Accepted::Stream(s) => s,
                        Accepted::Closed => return,
                    },
                };
                if speaks_hbase(&mut stream).await {
                    rpc.serve(stream).await;
                } else {
                    let _ = tx.send(Ok(stream)).await;
                }
            });
        }
    });
    ReceiverStream::new(rx)
}
