//! [`RpcConnection`]: one TCP connection to one HBase server for one
//! service, carrying many calls at once.
//!
//! This module owns the socket: the preamble (`HBas`, version 0, SIMPLE;
//! or DIGEST and a SASL DIGEST-MD5 exchange proving the config's token,
//! `authenticate`), the `ConnectionHeader` (service, the user when
//! SIMPLE, `KeyValueCodec`), call ids, a
//! writer task that sends every queued call in one write, and a reader task
//! that matches each answer to its call by id (answers come back in any
//! order, as HBase's server finishes them). A broken connection fails every
//! call waiting on it and is replaced by the pool on the next call. It also
//! owns the registry's one-shot `Regist` exchange ([`fetch_cluster_id`]).
//! It never retries and never looks inside messages beyond the header.

use crate::config::{ClientConfig, Token};
use crate::error::{ClientError, Result};
use bytes::{Bytes, BytesMut};
use ferrobase_hbase_wire::cellblock::CellCodec;
use ferrobase_hbase_wire::frame::{self, AuthMethod, DEFAULT_MAX_FRAME, ResponseFrame};
use ferrobase_hbase_wire::sasl::{self, ServerReply, digest_md5::DigestMd5Client};
use ferrobase_hbase_wire::{RemoteException, pb};
use parking_lot::Mutex;
use prost::Message;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, oneshot};

/// HBase's `HConstants.HIGH_QOS`: the priority of every call to
/// `hbase:meta` and the master.
pub const HIGH_QOS: u32 = 200;

type Waiter = oneshot::Sender<Result<ResponseFrame>>;

struct Shared {
    addr: String,
    pending: Mutex<HashMap<u32, Waiter>>,
    /// Why the connection ended, once it has.
    closed: Mutex<Option<String>>,
    dead: AtomicBool,
}

impl Shared {
    /// Marks the connection dead and fails every waiting call.
    fn close(&self, reason: String) {
        self.dead.store(true, Ordering::Release);
        let waiters: Vec<Waiter> = {
            let mut closed = self.closed.lock();
            if closed.is_none() {
                *closed = Some(reason.clone());
            }
            self.pending.lock().drain().map(|(_, w)| w).collect()
        };
        for w in waiters {
            let _ = w.send(Err(ClientError::ConnectionClosed {
                addr: self.addr.clone(),
                reason: reason.clone(),
            }));
        }
    }
}

/// One connection; see the module docs.
pub struct RpcConnection {
    shared: Arc<Shared>,
    out: mpsc::UnboundedSender<BytesMut>,
    next_id: AtomicU32,
    service: &'static str,
}

async fn open(addr: &str) -> Result<TcpStream> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| ClientError::Connect {
            addr: addr.to_string(),
            reason: e.to_string(),
        })?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

impl RpcConnection {
    /// Opens a connection to `addr` (`host:port`) for `service`
    /// (`ClientService`, `MasterService`, `ClientMetaService`, ...): with
    /// the config's token over SASL DIGEST-MD5, else as its `user`.
    pub async fn connect(
        addr: &str,
        service: &'static str,
        config: &ClientConfig,
    ) -> Result<RpcConnection> {
        let mut stream = open(addr).await?;
        let simple = match &config.token {
            Some(token) => {
                let handshake = authenticate(&mut stream, addr, token, config.fallback_to_simple);
                match tokio::time::timeout(config.rpc_timeout, handshake).await {
                    Ok(r) => r?,
                    Err(_) => {
                        return Err(ClientError::Timeout {
                            addr: addr.to_string(),
                            method: "SASL".into(),
                            millis: u64::try_from(config.rpc_timeout.as_millis())
                                .unwrap_or(u64::MAX),
                        });
                    }
                }
            }
            None => true,
        };
        let (read, mut write) = stream.into_split();
        let mut hello = BytesMut::new();
        if config.token.is_none() {
            frame::encode_preamble(&mut hello, AuthMethod::Simple);
        }
        // An authenticated connection's user is the token's: HBase's
        // client sends none in the header.
        let header = pb::ConnectionHeader {
            user_info: simple.then(|| pb::UserInformation {
                effective_user: config.user.clone(),
                real_user: None,
            }),
            service_name: Some(service.to_string()),
            cell_block_codec_class: Some(CellCodec::KeyValue.class_name().to_string()),
            ..Default::default()
        };
        frame::encode_connection_header(&mut hello, &header).map_err(|source| {
            ClientError::Wire {
                addr: addr.to_string(),
                source,
            }
        })?;
        write
            .write_all(&hello)
            .await
            .map_err(|e| ClientError::Connect {
                addr: addr.to_string(),
                reason: e.to_string(),
            })?;
        let shared = Arc::new(Shared {
            addr: addr.to_string(),
            pending: Mutex::new(HashMap::new()),
            closed: Mutex::new(None),
            dead: AtomicBool::new(false),
        });
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(write, rx, shared.clone()));
        tokio::spawn(read_loop(read, shared.clone()));
        Ok(RpcConnection {
            shared,
            out: tx,
            next_id: AtomicU32::new(0),
            service,
        })
    }

    /// The server's `host:port`.
    pub fn addr(&self) -> &str {
        &self.shared.addr
    }

    /// The service this connection calls.
    pub fn service(&self) -> &'static str {
        self.service
    }

    /// True once the connection has broken; the pool then opens another.
    pub fn is_dead(&self) -> bool {
        self.shared.dead.load(Ordering::Acquire)
    }

    /// Sends one call and waits for its answer: the decoded response
    /// message and the response's cell block, if any. A server exception
    /// is [`ClientError::Remote`] with HBase's class name.
    pub async fn call<Req: Message, Resp: Message + Default>(
        &self,
        method: &str,
        req: &Req,
        cell_block: Option<&[u8]>,
        priority: u32,
        timeout: Duration,
    ) -> Result<(Resp, Option<Bytes>)> {
        let addr = || self.shared.addr.clone();
        // Call ids are Java ints on the server: stay below 2^31.
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) & 0x7FFF_FFFF;
        let header = pb::RequestHeader {
            call_id: Some(id),
            method_name: Some(method.to_string()),
            priority: (priority > 0).then_some(priority),
            timeout: Some(u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX)),
            ..Default::default()
        };
        let mut buf = BytesMut::new();
        frame::encode_request_with_header(&mut buf, header, req, cell_block).map_err(|source| {
            ClientError::Wire {
                addr: addr(),
                source,
            }
        })?;
        let (tx, rx) = oneshot::channel();
        {
            let closed = self.shared.closed.lock();
            if let Some(reason) = closed.as_ref() {
                return Err(ClientError::ConnectionClosed {
                    addr: addr(),
                    reason: reason.clone(),
                });
            }
            self.shared.pending.lock().insert(id, tx);
        }
        if self.out.send(buf).is_err() {
            self.shared.pending.lock().remove(&id);
            return Err(ClientError::ConnectionClosed {
                addr: addr(),
                reason: "writer stopped".into(),
            });
        }
        let frame = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer?,
            Ok(Err(_)) => {
                return Err(ClientError::ConnectionClosed {
                    addr: addr(),
                    reason: "reader stopped".into(),
                });
            }
            Err(_) => {
                self.shared.pending.lock().remove(&id);
                return Err(ClientError::Timeout {
                    addr: addr(),
                    method: method.to_string(),
                    millis: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                });
            }
        };
        if let Some(e) = &frame.header.exception {
            return Err(RemoteException::from(e).into());
        }
        let body = frame.message.clone().unwrap_or_default();
        let resp = Resp::decode(body).map_err(|e| {
            ClientError::Protocol(format!(
                "{method} response from {} does not decode: {e}",
                addr()
            ))
        })?;
        Ok((resp, frame.cell_block))
    }
}

impl Drop for RpcConnection {
    fn drop(&mut self) {
        // The writer task ends when the channel closes; the reader when the
        // server sees the write side shut and closes.
        self.shared.dead.store(true, Ordering::Release);
    }
}

async fn write_loop(
    mut write: OwnedWriteHalf,
    mut rx: mpsc::UnboundedReceiver<BytesMut>,
    shared: Arc<Shared>,
) {
    while let Some(mut batch) = rx.recv().await {
        // Everything queued meanwhile goes out in the same write.
        while batch.len() < (1 << 20) {
            match rx.try_recv() {
                Ok(more) => batch.unsplit(more),
                Err(_) => break,
            }
        }
        if let Err(e) = write.write_all(&batch).await {
            shared.close(format!("write failed: {e}"));
            return;
        }
    }
    let _ = write.shutdown().await;
}

async fn read_loop(mut read: OwnedReadHalf, shared: Arc<Shared>) {
    let mut buf = BytesMut::with_capacity(64 * 1024);
    loop {
        loop {
            match frame::decode_response(&mut buf, DEFAULT_MAX_FRAME) {
                Ok(Some(f)) => {
                    let id = f.call_id();
                    if id == frame::NO_CALL_ID {
                        // A connection-level error: every call fails.
                        let why = f
                            .header
                            .exception
                            .as_ref()
                            .map(|e| RemoteException::from(e).to_string())
                            .unwrap_or_else(|| "the server answered call -1".into());
                        shared.close(why);
                        return;
                    }
                    if let Some(w) = shared.pending.lock().remove(&id) {
                        let _ = w.send(Ok(f));
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    shared.close(format!("undecodable answer: {e}"));
                    return;
                }
            }
        }
        match read.read_buf(&mut buf).await {
            Ok(0) => {
                shared.close("closed by the server".into());
                return;
            }
            Ok(_) => {}
            Err(e) => {
                shared.close(format!("read failed: {e}"));
                return;
            }
        }
    }
}

/// A client nonce for DIGEST-MD5 (RFC 2831 asks for one the server cannot
/// predict): two random words, base64.
fn cnonce() -> String {
    let (a, b) = (
        ferrobase_types::nonce::random_nonzero(),
        ferrobase_types::nonce::random_nonzero(),
    );
    let mut bytes = a.to_be_bytes().to_vec();
    bytes.extend(b.to_be_bytes());
    sasl::base64_encode(&bytes)
}

/// The DIGEST preamble and the SASL DIGEST-MD5 exchange of HBase's
/// `HBaseSaslRpcClient`: an empty first token, the server's challenge
/// answered with the token's identifier and password (both base64, as
/// HBase's `SaslClientCallbackHandler` gives them), the server's
/// `rspauth` checked, so the server proved it knows the password too.
/// True when the server told the client to go on with SIMPLE (allowed
/// only with `fallback`); a refusal is the server's exception, not
/// retried.
async fn authenticate(
    stream: &mut TcpStream,
    addr: &str,
    token: &Token,
    fallback: bool,
) -> Result<bool> {
    let io = |e: std::io::Error| ClientError::ConnectionClosed {
        addr: addr.to_string(),
        reason: format!("during SASL: {e}"),
    };
    let bad = |e: sasl::SaslError| ClientError::Protocol(format!("SASL with {addr}: {e}"));
    let mut out = BytesMut::new();
    frame::encode_preamble(&mut out, AuthMethod::Digest);
    sasl::encode_client_token(&mut out, b"").map_err(bad)?;
    stream.write_all(&out).await.map_err(io)?;
    let mut client = DigestMd5Client::new(
        &sasl::base64_encode(&token.identifier),
        sasl::base64_encode(&token.password).as_bytes(),
        &cnonce(),
        "null/default",
    );
    let mut buf = BytesMut::new();
    let mut responded = false;
    loop {
        let reply = loop {
            if let Some(r) = sasl::decode_server_reply(&mut buf).map_err(bad)? {
                break r;
            }
            if stream.read_buf(&mut buf).await.map_err(io)? == 0 {
                return Err(ClientError::ConnectionClosed {
                    addr: addr.to_string(),
                    reason: "closed during SASL authentication".into(),
                });
            }
        };
        match reply {
            ServerReply::Error { class, message } => {
                return Err(ClientError::Remote {
                    class,
                    message,
                    do_not_retry: true,
                });
            }
            ServerReply::SwitchToSimple if fallback => return Ok(true),
            ServerReply::SwitchToSimple => {
                return Err(ClientError::Invalid(format!(
                    "{addr} does not authenticate (it asked for SIMPLE) and this client has a token; \
                     allow it with hbase.ipc.client.fallback-to-simple-auth-allowed"
                )));
            }
            ServerReply::Token(challenge) if !responded => {
                let response = client.respond(&challenge).map_err(bad)?;
                let mut out = BytesMut::new();
                sasl::encode_client_token(&mut out, &response).map_err(bad)?;
                stream.write_all(&out).await.map_err(io)?;
                responded = true;
            }
            ServerReply::Token(rspauth) => {
                client.verify(&rspauth).map_err(bad)?;
                if !buf.is_empty() {
                    return Err(ClientError::Protocol(format!(
                        "{addr} sent {} bytes after SASL completed",
                        buf.len()
                    )));
                }
                return Ok(false);
            }
        }
    }
}

/// HBase 2.6's registry preamble: sends `Regist` on a fresh connection and
/// reads the one `GetConnectionRegistryResponse` frame (the cluster id).
/// `Ok(None)` when the server answers with an exception (an older server
/// that does not know the preamble).
pub async fn fetch_cluster_id(addr: &str, timeout: Duration) -> Result<Option<String>> {
    let exchange = async {
        let mut stream = open(addr).await?;
        let io = |e: std::io::Error| ClientError::ConnectionClosed {
            addr: addr.to_string(),
            reason: e.to_string(),
        };
        stream
            .write_all(&frame::REGISTRY_PREAMBLE)
            .await
            .map_err(io)?;
        let mut buf = BytesMut::new();
        loop {
            match frame::decode_response(&mut buf, 1 << 20) {
                Ok(Some(f)) => {
                    if f.header.exception.is_some() {
                        return Ok(None);
                    }
                    let m: pb::GetConnectionRegistryResponse =
                        f.decode_message().map_err(|_| {
                            ClientError::Protocol("registry answer does not decode".into())
                        })?;
                    return Ok(Some(m.cluster_id));
                }
                Ok(None) => {}
                Err(source) => {
                    return Err(ClientError::Wire {
                        addr: addr.to_string(),
                        source,
                    });
                }
            }
            if stream.read_buf(&mut buf).await.map_err(io)? == 0 {
                return Err(ClientError::ConnectionClosed {
                    addr: addr.to_string(),
                    reason: "closed before the registry answered".into(),
                });
            }
        }
    };
    match tokio::time::timeout(timeout, exchange).await {
        Ok(r) => r,
        Err(_) => Err(ClientError::Timeout {
            addr: addr.to_string(),
            method: "Regist".into(),
            millis: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        }),
    }
}
