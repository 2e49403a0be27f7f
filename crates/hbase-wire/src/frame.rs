//! Framing: HBase RPC's bytes on a TCP connection, both directions.
//!
//! This module owns the byte layouts below and their incremental decoding
//! from a [`BytesMut`] read buffer: every decoder returns `Ok(None)` while
//! more bytes are needed, consumes exactly one unit when it returns
//! `Ok(Some(..))`, and checks every length before it waits for or slices
//! anything, so a hostile length costs neither memory nor time. It never
//! does I/O, never looks inside request parameters (the server decodes them
//! once it knows the method) and never interprets cell blocks (see
//! [`crate::cellblock`]).
//!
//! One file because each byte layout drawn below sits beside its encoder
//! and its incremental decoder, and the server decoder walks them in
//! connection order; split, a reader would chase one frame across files.
//!
//! # Connection preamble (client → server, once)
//!
//! ```text
//! +----+----+----+----+---------+------+
//! | 'H'| 'b'| 'a'| 's'| version | auth |     version = 0
//! +----+----+----+----+---------+------+     auth: SIMPLE = 80 (0x50),
//!   0    1    2    3       4        5              KERBEROS = 81, DIGEST = 82
//! ```
//!
//! Two other 6-byte openings exist in HBase 2.6 clients: `Regist` asks for
//! the cluster id before authenticating (the server answers one response
//! frame with call id `0xFFFFFFFF` holding a `GetConnectionRegistryResponse`
//! and closes), and `Securi` asks for the server's Kerberos principal.
//!
//! # Connection header (client → server, once, after the preamble)
//!
//! ```text
//! +-------------------+------------------------------+
//! | u32 BE length = N | ConnectionHeader (N bytes)   |   not varint-delimited
//! +-------------------+------------------------------+
//! ```
//!
//! # Request and response frames (every call)
//!
//! ```text
//! +---------------------+---------------+--------+----------------+---------+------------+
//! | u32 BE total length | varint len(H) | header | varint len(P)  | param   | cell block |
//! +---------------------+---------------+--------+----------------+---------+------------+
//!                        \______________________ total length bytes ____________________/
//! ```
//!
//! A request's header is a `RequestHeader`: `request_param` says whether the
//! param (the method's request message) follows, `cell_block_meta.length`
//! how long the cell block is. A response's header is a `ResponseHeader`:
//! when it carries an `exception` no message follows; otherwise the
//! response message does, then the cell block of `cell_block_meta.length`
//! bytes. Lengths are Java `int`s: a frame never exceeds `i32::MAX`, and the
//! decoders refuse anything above their `max_frame` (256 MiB by default,
//! HBase's `hbase.ipc.max.request.size`). Nothing may follow the cell
//! block inside a frame.

use crate::error::WireError;
use crate::pb;
use bytes::{Buf, BufMut, Bytes, BytesMut};
use prost::Message;

/// The first four bytes of every HBase RPC connection.
pub const RPC_MAGIC: [u8; 4] = *b"HBas";
/// The only RPC version HBase 2.x speaks.
pub const RPC_VERSION: u8 = 0;
/// Length of a connection preamble.
pub const PREAMBLE_LEN: usize = 6;
/// The preamble an HBase 2.6 client sends to fetch the cluster id before
/// it authenticates (`RpcConnectionRegistry`).
pub const REGISTRY_PREAMBLE: [u8; 6] = *b"Regist";
/// The preamble an HBase 2.6 client sends to ask for the server's Kerberos
/// principal.
pub const SECURITY_PREAMBLE: [u8; 6] = *b"Securi";
/// Default largest frame accepted (HBase's `hbase.ipc.max.request.size`).
pub const DEFAULT_MAX_FRAME: usize = 256 * 1024 * 1024;
/// The call id of responses that answer no call (preamble and connection
/// errors): HBase's `-1` as an unsigned 32-bit field.
pub const NO_CALL_ID: u32 = u32::MAX;

/// The authentication byte of a preamble.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthMethod {
    /// 80: the client's claimed user is trusted.
    Simple,
    /// 81: SASL GSSAPI.
    Kerberos,
    /// 82: SASL DIGEST-MD5 with a delegation token.
    Digest,
}

impl AuthMethod {
    /// The byte on the wire.
    pub fn code(self) -> u8 {
        match self {
            AuthMethod::Simple => 80,
            AuthMethod::Kerberos => 81,
            AuthMethod::Digest => 82,
        }
    }

    /// The method for a preamble byte, if HBase defines one.
    pub fn from_code(code: u8) -> Option<AuthMethod> {
        match code {
            80 => Some(AuthMethod::Simple),
            81 => Some(AuthMethod::Kerberos),
            82 => Some(AuthMethod::Digest),
            _ => None,
        }
    }
}

/// What a connection's first six bytes ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Preamble {
    /// `HBas`, version 0 and an authentication method: an RPC connection.
    Rpc(AuthMethod),
    /// `Regist`: answer the cluster id, then close.
    Registry,
    /// `Securi`: answer the server principal (or that security is off),
    /// then expect a real preamble.
    Security,
}

/// True when `prefix` (however few bytes have arrived) can still be the
/// start of an HBase connection, for a listener that tells HBase RPC from
/// another protocol (an HTTP/2 preface starts `PRI `) on one port.
pub fn looks_like_hbase(prefix: &[u8]) -> bool {
    let n = prefix.len().min(PREAMBLE_LEN);
    let head = prefix.get(..n).unwrap_or_default();
    let magic_part = head.get(..n.min(RPC_MAGIC.len())).unwrap_or_default();
    RPC_MAGIC.starts_with(magic_part)
        || REGISTRY_PREAMBLE.starts_with(head)
        || SECURITY_PREAMBLE.starts_with(head)
}

/// Reads a connection preamble. Any `HBas` preamble with version 0 and a
/// known authentication byte is returned (the caller decides which methods
/// it accepts); anything else is an error naming the bad bytes.
pub fn decode_preamble(buf: &mut BytesMut) -> Result<Option<Preamble>, WireError> {
    let Some(head) = buf.get(..PREAMBLE_LEN) else {
        return Ok(None);
    };
    let mut six = [0u8; PREAMBLE_LEN];
    six.copy_from_slice(head);
    let preamble = if six == REGISTRY_PREAMBLE {
        Preamble::Registry
    } else if six == SECURITY_PREAMBLE {
        Preamble::Security
    } else {
        let [m0, m1, m2, m3, version, auth] = six;
        let magic = [m0, m1, m2, m3];
        if magic != RPC_MAGIC {
            return Err(WireError::BadMagic { found: magic });
        }
        if version != RPC_VERSION {
            return Err(WireError::UnsupportedVersion { version });
        }
        Preamble::Rpc(AuthMethod::from_code(auth).ok_or(WireError::UnsupportedAuth { code: auth })?)
    };
    buf.advance(PREAMBLE_LEN);
    Ok(Some(preamble))
}

/// Writes a client's preamble: `HBas`, version 0, the method's byte.
pub fn encode_preamble(out: &mut BytesMut, auth: AuthMethod) {
    out.put_slice(&RPC_MAGIC);
    out.put_u8(RPC_VERSION);
    out.put_u8(auth.code());
}

/// The 4-byte big-endian length at the front of `buf`, checked against
/// `max`; `None` while fewer than 4 bytes have arrived.
fn peek_length(buf: &[u8], what: &'static str, max: usize) -> Result<Option<usize>, WireError> {
    let Some(&[a, b, c, d]) = buf.get(..4) else {
        return Ok(None);
    };
    let len = u32::from_be_bytes([a, b, c, d]);
    // A Java int: the high bit set is a negative length, and 2^31 and up
    // is larger than any maximum this crate allows.
    if u64::from(len) > max.min(i32::MAX as usize) as u64 {
        return Err(WireError::FrameTooLarge {
            what,
            len: u64::from(len),
            max,
        });
    }
    Ok(Some(len as usize))
}

/// Splits one length-prefixed unit off `buf`, returning its body (after the
/// 4-byte length) without copying; `None` while it has not fully arrived.
fn take_frame(
    buf: &mut BytesMut,
    what: &'static str,
    max: usize,
) -> Result<Option<Bytes>, WireError> {
    let Some(len) = peek_length(buf, what, max)? else {
        return Ok(None);
    };
    if buf.len() - 4 < len {
        return Ok(None);
    }
    let mut frame = buf.split_to(4 + len).freeze();
    frame.advance(4);
    Ok(Some(frame))
}

/// Reads the connection header that follows the preamble.
pub fn decode_connection_header(
    buf: &mut BytesMut,
    max_frame: usize,
) -> Result<Option<pb::ConnectionHeader>, WireError> {
    let Some(body) = take_frame(buf, "connection header", max_frame)? else {
        return Ok(None);
    };
    pb::ConnectionHeader::decode(body)
        .map(Some)
        .map_err(|e| WireError::decode("connection header", e))
}

/// Writes a client's connection header: 4-byte length, then the message.
pub fn encode_connection_header(
    out: &mut BytesMut,
    header: &pb::ConnectionHeader,
) -> Result<(), WireError> {
    let len = header.encoded_len();
    let len32 = java_len(len as u64, "connection header")?;
    out.reserve(4 + len);
    out.put_u32(len32);
    encode_into(header, out);
    Ok(())
}

/// A decoded call, as the server receives it. The parameter and cell block
/// are slices of the read buffer (no copy).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestFrame {
    pub header: pb::RequestHeader,
    /// The request message's bytes, undecoded (its type depends on the
    /// method); `None` when the header says no parameter follows.
    pub param: Option<Bytes>,
    /// The cell block, when the header announced one.
    pub cell_block: Option<Bytes>,
}

impl RequestFrame {
    /// The call id the response must echo.
    pub fn call_id(&self) -> u32 {
        self.header.call_id.unwrap_or(0)
    }

    /// The method name (`""` when absent).
    pub fn method(&self) -> &str {
        self.header.method_name.as_deref().unwrap_or("")
    }

    /// Decodes the parameter as the method's request message.
    pub fn decode_param<M: Message + Default>(&self) -> Result<M, WireError> {
        let param = self.param.clone().ok_or_else(|| WireError::MissingParam {
            call_id: self.call_id(),
            method: self.method().to_string(),
        })?;
        M::decode(param).map_err(|e| WireError::decode("request parameter", e))
    }
}

/// A decoded response, as a client receives it.
#[derive(Clone, Debug, PartialEq)]
pub struct ResponseFrame {
    pub header: pb::ResponseHeader,
    /// The response message's bytes, undecoded; `None` when the header
    /// carries an exception.
    pub message: Option<Bytes>,
    pub cell_block: Option<Bytes>,
}

impl ResponseFrame {
    /// The call this answers ([`NO_CALL_ID`] for connection-level errors).
    pub fn call_id(&self) -> u32 {
        self.header.call_id.unwrap_or(NO_CALL_ID)
    }

    /// Decodes the response message; an exception response is returned as
    /// `Err(Ok(exception))`, a malformed message as `Err(Err(..))`.
    pub fn decode_message<M: Message + Default>(
        &self,
    ) -> Result<M, Result<pb::ExceptionResponse, WireError>> {
        if let Some(e) = &self.header.exception {
            return Err(Ok(e.clone()));
        }
        let body = self.message.clone().unwrap_or_default();
        M::decode(body).map_err(|e| Err(WireError::decode("response message", e)))
    }
}

/// Reads a varint-delimited length at `*pos`, checks that that many bytes
/// remain in `frame`, and returns the range.
fn delimited(frame: &Bytes, pos: &mut usize, what: &'static str) -> Result<Bytes, WireError> {
    let rest = frame.get(*pos..).unwrap_or_default();
    let mut cursor = rest;
    let len =
        prost::encoding::decode_varint(&mut cursor).map_err(|_| WireError::BadVarint { what })?;
    let varint_len = rest.len() - cursor.len();
    let available = cursor.len();
    if len > available as u64 {
        return Err(WireError::Truncated {
            what,
            needed: len,
            available,
        });
    }
    let start = *pos + varint_len;
    let end = start + len as usize;
    *pos = end;
    Ok(frame.slice(start..end))
}

/// The cell block announced by `meta` at `*pos` of `frame`.
fn cell_block(
    frame: &Bytes,
    pos: &mut usize,
    meta: Option<&pb::CellBlockMeta>,
) -> Result<Option<Bytes>, WireError> {
    let Some(meta) = meta else {
        return Ok(None);
    };
    let len = meta.length.unwrap_or(0) as usize;
    let available = frame.len() - *pos;
    if len > available {
        return Err(WireError::Truncated {
            what: "cell block",
            needed: len as u64,
            available,
        });
    }
    let block = frame.slice(*pos..*pos + len);
    *pos += len;
    Ok(Some(block))
}

fn no_trailing(frame: &Bytes, pos: usize, what: &'static str) -> Result<(), WireError> {
    match frame.len() - pos {
        0 => Ok(()),
        count => Err(WireError::TrailingBytes { what, count }),
    }
}

/// Parses a request frame's body (after its 4-byte length).
pub fn parse_request(frame: Bytes) -> Result<RequestFrame, WireError> {
    let mut pos = 0;
    let header_bytes = delimited(&frame, &mut pos, "request header")?;
    let header = pb::RequestHeader::decode(header_bytes)
        .map_err(|e| WireError::decode("request header", e))?;
    let param = if header.request_param == Some(true) {
        Some(delimited(&frame, &mut pos, "request parameter")?)
    } else {
        None
    };
    let cell_block = cell_block(&frame, &mut pos, header.cell_block_meta.as_ref())?;
    no_trailing(&frame, pos, "request")?;
    Ok(RequestFrame {
        header,
        param,
        cell_block,
    })
}

/// Reads one request frame (server side).
pub fn decode_request(
    buf: &mut BytesMut,
    max_frame: usize,
) -> Result<Option<RequestFrame>, WireError> {
    match take_frame(buf, "request", max_frame)? {
        Some(frame) => parse_request(frame).map(Some),
        None => Ok(None),
    }
}

/// The header of the request at the front of `buf`, if its length prefix
/// and header have arrived, whatever the frame's announced total length.
/// For answering an oversize request with its own call id (HBase replies
/// `RequestTooBigException` to the call, then closes).
pub fn peek_request_header(buf: &[u8]) -> Option<pb::RequestHeader> {
    let mut cursor = buf.get(4..)?;
    let len = usize::try_from(prost::encoding::decode_varint(&mut cursor).ok()?).ok()?;
    pb::RequestHeader::decode(cursor.get(..len)?).ok()
}

/// Parses a response frame's body (after its 4-byte length).
pub fn parse_response(frame: Bytes) -> Result<ResponseFrame, WireError> {
    let mut pos = 0;
    let header_bytes = delimited(&frame, &mut pos, "response header")?;
    let header = pb::ResponseHeader::decode(header_bytes)
        .map_err(|e| WireError::decode("response header", e))?;
    let block_len = header
        .cell_block_meta
        .as_ref()
        .map_or(0, |m| m.length.unwrap_or(0) as usize);
    let message = if header.exception.is_none() && frame.len() - pos > block_len {
        Some(delimited(&frame, &mut pos, "response message")?)
    } else {
        None
    };
    let cell_block = cell_block(&frame, &mut pos, header.cell_block_meta.as_ref())?;
    no_trailing(&frame, pos, "response")?;
    Ok(ResponseFrame {
        header,
        message,
        cell_block,
    })
}

/// Reads one response frame (client side).
pub fn decode_response(
    buf: &mut BytesMut,
    max_frame: usize,
) -> Result<Option<ResponseFrame>, WireError> {
    match take_frame(buf, "response", max_frame)? {
        Some(frame) => parse_response(frame).map(Some),
        None => Ok(None),
    }
}

fn java_len(len: u64, what: &'static str) -> Result<u32, WireError> {
    if len > i32::MAX as u64 {
        return Err(WireError::TooLargeToEncode { what, len });
    }
    Ok(len as u32)
}

fn cell_block_meta(len: usize) -> Result<Option<pb::CellBlockMeta>, WireError> {
    if len == 0 {
        return Ok(None);
    }
    Ok(Some(pb::CellBlockMeta {
        length: Some(java_len(len as u64, "cell block")?),
    }))
}

/// Writes a protobuf message into a buffer that has room for it (encoding
/// into a `BytesMut` only fails when it runs out of room).
fn encode_into<M: Message>(m: &M, out: &mut BytesMut) {
    out.reserve(m.encoded_len());
    let _ = m.encode(out);
}

fn encode_delimited_into<M: Message>(m: &M, out: &mut BytesMut) {
    let len = m.encoded_len();
    out.reserve(len + prost::encoding::encoded_len_varint(len as u64));
    let _ = m.encode_length_delimited(out);
}

fn delimited_len(len: usize) -> usize {
    len + prost::encoding::encoded_len_varint(len as u64)
}

/// Writes the length and delimited header, then the delimited message if
/// any; the caller's cell block of `block_len` bytes must follow.
fn encode_frame_head<H: Message, M: Message>(
    out: &mut BytesMut,
    header: &H,
    message: Option<&M>,
    block_len: usize,
    what: &'static str,
) -> Result<(), WireError> {
    let total = delimited_len(header.encoded_len())
        + message.map_or(0, |m| delimited_len(m.encoded_len()))
        + block_len;
    let total32 = java_len(total as u64, what)?;
    out.reserve(4 + total - block_len);
    out.put_u32(total32);
    encode_delimited_into(header, out);
    if let Some(m) = message {
        encode_delimited_into(m, out);
    }
    Ok(())
}

/// Writes a successful response: header, message and cell block.
pub fn encode_response<M: Message>(
    out: &mut BytesMut,
    call_id: u32,
    message: &M,
    cell_block: Option<&[u8]>,
) -> Result<(), WireError> {
    let block = cell_block.unwrap_or_default();
    encode_response_head(out, call_id, message, block.len())?;
    out.put_slice(block);
    Ok(())
}

/// Writes a successful response up to its cell block, for a server that
/// writes the `cell_block_len` bytes of the block itself (a second write,
/// no copy into `out`).
pub fn encode_response_head<M: Message>(
    out: &mut BytesMut,
    call_id: u32,
    message: &M,
    cell_block_len: usize,
) -> Result<(), WireError> {
    let header = pb::ResponseHeader {
        call_id: Some(call_id),
        exception: None,
        cell_block_meta: cell_block_meta(cell_block_len)?,
    };
    encode_frame_head(out, &header, Some(message), cell_block_len, "response")
}

/// Writes a failed call's response: a header carrying the exception and
/// nothing after it. Use [`NO_CALL_ID`] for errors that answer no call
/// (a bad preamble or connection header).
pub fn encode_exception(
    out: &mut BytesMut,
    call_id: u32,
    exception: &pb::ExceptionResponse,
) -> Result<(), WireError> {
    let header = pb::ResponseHeader {
        call_id: Some(call_id),
        exception: Some(exception.clone()),
        cell_block_meta: None,
    };
    encode_frame_head::<_, pb::EmptyMsg>(out, &header, None, 0, "exception response")
}

/// Writes a request (client side): header with call id, method name and
/// `request_param`, the parameter, and the cell block.
pub fn encode_request<M: Message>(
    out: &mut BytesMut,
    call_id: u32,
    method: &str,
    param: &M,
    cell_block: Option<&[u8]>,
) -> Result<(), WireError> {
    let header = pb::RequestHeader {
        call_id: Some(call_id),
        method_name: Some(method.to_string()),
        request_param: Some(true),
        ..Default::default()
    };
    encode_request_with_header(out, header, param, cell_block)
}

/// [`encode_request`] with a caller-built header (priority, timeout,
/// attributes); `request_param` and `cell_block_meta` are set here.
pub fn encode_request_with_header<M: Message>(
    out: &mut BytesMut,
    mut header: pb::RequestHeader,
    param: &M,
    cell_block: Option<&[u8]>,
) -> Result<(), WireError> {
    let block = cell_block.unwrap_or_default();
    header.request_param = Some(true);
    header.cell_block_meta = cell_block_meta(block.len())?;
    encode_frame_head(out, &header, Some(param), block.len(), "request")?;
    out.put_slice(block);
    Ok(())
}

/// Where a server connection is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Preamble,
    /// After a KERBEROS or DIGEST preamble: SASL tokens until the server
    /// calls [`ServerDecoder::sasl_complete`].
    Sasl,
    /// The server told the client to fall back to SIMPLE: the client's
    /// initial SASL token, already sent, is dropped unread.
    SkipSaslToken,
    ConnectionHeader,
    Calls,
    /// A registry preamble was answered: nothing more is read.
    Closed,
}

/// What [`ServerDecoder::decode`] read.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// `Regist`: answer one `GetConnectionRegistryResponse` frame with call
    /// id [`NO_CALL_ID`], then close (the decoder reads nothing more).
    RegistryPreamble,
    /// `Securi`: answer with a `SecurityPreamableResponse` frame, or, with
    /// security off, an exception frame; the client then sends a real
    /// preamble.
    SecurityPreamble,
    /// A preamble asking for SASL authentication (KERBEROS or DIGEST):
    /// SASL tokens follow ([`ServerEvent::SaslToken`]). The server
    /// answers each (see [`crate::sasl`]), then calls
    /// [`ServerDecoder::sasl_complete`] when the mechanism completes, or
    /// [`ServerDecoder::sasl_switch_to_simple`], or refuses and closes. A
    /// SIMPLE preamble yields no event: the connection header follows.
    SaslPreamble(AuthMethod),
    /// One client SASL token (its length prefix removed).
    SaslToken(Bytes),
    /// The connection header: the service the client will call and its
    /// cell codec. Nothing is answered.
    ConnectionHeader(pb::ConnectionHeader),
    /// A call.
    Call(RequestFrame),
}

/// A server connection's incremental decoder: the preamble, the SASL
/// tokens of a KERBEROS or DIGEST one, the connection header, then calls. Feed it
/// the connection's read buffer after each read; call
/// [`decode`](Self::decode) until it returns `Ok(None)`. After an error the
/// stream cannot be trusted: answer (see [`WireError::exception`]) and
/// close.
#[derive(Clone, Debug)]
pub struct ServerDecoder {
    state: State,
    max_frame: usize,
}

impl Default for ServerDecoder {
    fn default() -> Self {
        ServerDecoder::new(DEFAULT_MAX_FRAME)
    }
}

impl ServerDecoder {
    /// A decoder for a new connection accepting frames up to `max_frame`
    /// bytes.
    pub fn new(max_frame: usize) -> ServerDecoder {
        ServerDecoder {
            state: State::Preamble,
            max_frame,
        }
    }

    /// The largest frame accepted.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// True once the connection header has been read.
    pub fn in_calls(&self) -> bool {
        self.state == State::Calls
    }

    /// True while SASL tokens are being read.
    pub fn in_sasl(&self) -> bool {
        self.state == State::Sasl
    }

    /// The SASL mechanism completed: the connection header comes next.
    pub fn sasl_complete(&mut self) {
        if self.state == State::Sasl {
            self.state = State::ConnectionHeader;
        }
    }

    /// The server answered the SASL preamble with "switch to SIMPLE"
    /// ([`crate::sasl::encode_switch_to_simple`]): the client's initial
    /// token, already on its way, is skipped, then the connection header
    /// is read.
    pub fn sasl_switch_to_simple(&mut self) {
        if self.state == State::Sasl {
            self.state = State::SkipSaslToken;
        }
    }

    /// Reads the next unit from `buf`; `Ok(None)` when more bytes are
    /// needed.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<ServerEvent>, WireError> {
        loop {
            match self.state {
                State::Closed => return Ok(None),
                State::Preamble => match decode_preamble(buf)? {
                    None => return Ok(None),
                    Some(Preamble::Rpc(AuthMethod::Simple)) => {
                        self.state = State::ConnectionHeader;
                    }
                    Some(Preamble::Rpc(method)) => {
                        self.state = State::Sasl;
                        return Ok(Some(ServerEvent::SaslPreamble(method)));
                    }
                    Some(Preamble::Registry) => {
                        self.state = State::Closed;
                        return Ok(Some(ServerEvent::RegistryPreamble));
                    }
                    Some(Preamble::Security) => return Ok(Some(ServerEvent::SecurityPreamble)),
                },
                State::Sasl => {
                    return Ok(crate::sasl::decode_client_token(
                        buf,
                        crate::sasl::MAX_CLIENT_TOKEN,
                    )
                    .map_err(WireError::Sasl)?
                    .map(ServerEvent::SaslToken));
                }
                State::SkipSaslToken => {
                    match crate::sasl::decode_client_token(buf, crate::sasl::MAX_CLIENT_TOKEN)
                        .map_err(WireError::Sasl)?
                    {
                        None => return Ok(None),
                        Some(_) => self.state = State::ConnectionHeader,
                    }
                }
                State::ConnectionHeader => {
                    return match decode_connection_header(buf, self.max_frame)? {
                        None => Ok(None),
                        Some(h) => {
                            self.state = State::Calls;
                            Ok(Some(ServerEvent::ConnectionHeader(h)))
                        }
                    };
                }
                State::Calls => {
                    return Ok(decode_request(buf, self.max_frame)?.map(ServerEvent::Call));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
