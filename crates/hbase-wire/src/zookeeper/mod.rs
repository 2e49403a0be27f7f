//! ZooKeeper's client protocol, as much of it as an HBase client's
//! ZooKeeper connection registry speaks: a session handshake, pings, and
//! the reads `getData`, `exists` and `getChildren` of a few znodes.
//!
//! HBase 2.x clients find the cluster by reading ZooKeeper unless told to
//! use the RPC registry (`hbase.client.registry.impl`). ferrobase keeps no
//! ZooKeeper, so a master answers these reads itself from what it knows
//! ([`znodes`]); this module owns the bytes only: decoding what a client
//! sends and encoding the answers. It never does I/O and never decides
//! what a znode holds.
//!
//! Every frame, both directions, is a 4-byte big-endian length and then a
//! jute record (integers big-endian, `buffer`/`ustring` = 4-byte length,
//! -1 for null, then the bytes; `vector` = 4-byte count then elements):
//!
//! ```text
//! client → server, first frame: ConnectRequest
//! ┌──────┬──────────────┬─────────────┬──────────┬───────────┬─────────────┬──────────────┐
//! │ len  │ protocol i32 │ lastZxid i64│ timeout  │ session   │ passwd      │ readOnly u8  │
//! │ i32  │              │             │ i32 (ms) │ id i64    │ buffer      │ (optional)   │
//! └──────┴──────────────┴─────────────┴──────────┴───────────┴─────────────┴──────────────┘
//! server → client: ConnectResponse = protocol i32, timeout i32, session id i64, passwd buffer, readOnly u8
//!
//! client → server, every later frame:  len i32 │ xid i32 │ op i32 │ request record
//! server → client, every answer:        len i32 │ xid i32 │ zxid i64 │ err i32 │ response record (err = 0 only)
//! ```
//!
//! Requests this module reads (op → record): `exists` 3, `getData` 4 and
//! `getChildren` 8 / `getChildren2` 12 are `path ustring, watch u8`;
//! `sync` 9 is `path ustring`; `ping` 11 (xid -2) and `closeSession` -11
//! have no record. Any other op is returned as [`Request::Other`] so the
//! server can answer it with an error code without reading its record.

use bytes::{Buf, BufMut, BytesMut};

pub mod znodes;

#[cfg(test)]
mod tests;

/// The largest frame read: ZooKeeper's own `jute.maxbuffer` default (1 MiB).
pub const MAX_FRAME: usize = 0xfffff;

/// The xid of pings, both ways.
pub const PING_XID: i32 = -2;

/// ZooKeeper's op codes that this module names.
pub mod op {
    pub const EXISTS: i32 = 3;
    pub const GET_DATA: i32 = 4;
    pub const GET_CHILDREN: i32 = 8;
    pub const SYNC: i32 = 9;
    pub const PING: i32 = 11;
    pub const GET_CHILDREN2: i32 = 12;
    pub const CLOSE_SESSION: i32 = -11;
    /// Ops that change state: create, delete, setData, setACL, check,
    /// multi, create2, reconfig, createContainer, createTTL, multiRead.
    pub const WRITES: [i32; 10] = [1, 2, 5, 7, 13, 14, 15, 16, 19, 21];
}

/// ZooKeeper's error codes (`KeeperException.Code`) this server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum ErrorCode {
    Ok = 0,
    /// An op this server does not implement.
    Unimplemented = -6,
    /// The znode does not exist.
    NoNode = -101,
    /// A write sent to a read-only server.
    NotReadOnly = -119,
}

/// Bytes that are not a ZooKeeper client stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ZkError {
    /// A frame length past [`MAX_FRAME`] or below zero.
    #[error("ZooKeeper frame length {len} is outside 0..={max} (jute.maxbuffer)")]
    BadFrameLength { len: i64, max: usize },
    /// A field that needs more bytes than the frame has left.
    #[error("ZooKeeper {what} needs {needed} bytes but only {available} remain in the frame")]
    Truncated {
        what: &'static str,
        needed: i64,
        available: usize,
    },
    /// A path that is null or not UTF-8.
    #[error("ZooKeeper {what} is not a UTF-8 string")]
    BadString { what: &'static str },
    /// A handshake for a protocol version other than 0.
    #[error("ZooKeeper protocol version {version} is not supported (0 is)")]
    BadProtocolVersion { version: i32 },
}

/// The session handshake, the first frame of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectRequest {
    pub protocol_version: i32,
    pub last_zxid_seen: i64,
    /// The session timeout the client asks for (ms).
    pub timeout_ms: i32,
    /// 0 for a new session; a reconnecting client sends its old one.
    pub session_id: i64,
    pub password: Vec<u8>,
    /// Absent in clients older than 3.4 (false then).
    pub read_only: bool,
}

/// A request after the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Ping,
    CloseSession,
    Exists {
        path: String,
    },
    GetData {
        path: String,
    },
    GetChildren {
        path: String,
    },
    /// `getChildren` that also wants the parent's stat.
    GetChildren2 {
        path: String,
    },
    Sync {
        path: String,
    },
    /// An op this module does not read; its record is skipped.
    Other {
        op: i32,
    },
}

/// One request frame: the client's xid (echoed in the answer) and what it
/// asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFrame {
    pub xid: i32,
    pub request: Request,
}

/// What [`ZkDecoder::decode`] read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZkEvent {
    Connect(ConnectRequest),
    Request(RequestFrame),
}

/// Decodes a client's stream incrementally: the handshake first, then
/// requests. Lengths are checked before anything is allocated.
#[derive(Debug, Default)]
pub struct ZkDecoder {
    connected: bool,
}

impl ZkDecoder {
    /// The next whole frame in `buf` (consumed), `None` until one is there.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<ZkEvent>, ZkError> {
        let Some(prefix) = buf.first_chunk::<4>() else {
            return Ok(None);
        };
        let len = i32::from_be_bytes(*prefix);
        let len = match usize::try_from(len) {
            Ok(l) if l <= MAX_FRAME => l,
            _ => {
                return Err(ZkError::BadFrameLength {
                    len: i64::from(len),
                    max: MAX_FRAME,
                });
            }
        };
        if buf.len() < 4 + len {
            return Ok(None);
        }
        buf.advance(4);
        let frame = buf.split_to(len);
        let mut r = Reader(&frame);
        if self.connected {
            read_request(&mut r).map(|f| Some(ZkEvent::Request(f)))
        } else {
            let c = read_connect(&mut r)?;
            self.connected = true;
            Ok(Some(ZkEvent::Connect(c)))
        }
    }
}

fn read_connect(r: &mut Reader<'_>) -> Result<ConnectRequest, ZkError> {
    let protocol_version = r.i32("protocol version")?;
    if protocol_version != 0 {
        return Err(ZkError::BadProtocolVersion {
            version: protocol_version,
        });
    }
    Ok(ConnectRequest {
        protocol_version,
        last_zxid_seen: r.i64("last zxid seen")?,
        timeout_ms: r.i32("session timeout")?,
        session_id: r.i64("session id")?,
        password: r.buffer("session password")?.unwrap_or_default(),
        // Older clients end the record here.
        read_only: r.0.first().is_some_and(|b| *b != 0),
    })
}

fn read_request(r: &mut Reader<'_>) -> Result<RequestFrame, ZkError> {
    let xid = r.i32("request xid")?;
    let op = r.i32("request op")?;
    let request = match op {
        op::PING => Request::Ping,
        op::CLOSE_SESSION => Request::CloseSession,
        op::EXISTS => Request::Exists { path: r.path()? },
        op::GET_DATA => Request::GetData { path: r.path()? },
        op::GET_CHILDREN => Request::GetChildren { path: r.path()? },
        op::GET_CHILDREN2 => Request::GetChildren2 { path: r.path()? },
        op::SYNC => Request::Sync { path: r.path()? },
        op => Request::Other { op },
    };
    // The watch flag (and anything a newer client appends) is not read:
    // this server never sets watches, and nothing it holds changes while
    // a client would be waiting on one.
    Ok(RequestFrame { xid, request })
}

/// A jute record being read; every read is bounds-checked.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take(&mut self, what: &'static str, n: usize) -> Result<&[u8], ZkError> {
        if self.0.len() < n {
            return Err(ZkError::Truncated {
                what,
                needed: n as i64,
                available: self.0.len(),
            });
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], ZkError> {
        let b = self.take(what, N)?;
        <[u8; N]>::try_from(b).map_err(|_| ZkError::Truncated {
            what,
            needed: N as i64,
            available: b.len(),
        })
    }

    fn i32(&mut self, what: &'static str) -> Result<i32, ZkError> {
        self.array::<4>(what).map(i32::from_be_bytes)
    }

    fn i64(&mut self, what: &'static str) -> Result<i64, ZkError> {
        self.array::<8>(what).map(i64::from_be_bytes)
    }

    /// A jute `buffer`: `None` for length -1.
    fn buffer(&mut self, what: &'static str) -> Result<Option<Vec<u8>>, ZkError> {
        let len = self.i32(what)?;
        if len == -1 {
            return Ok(None);
        }
        let n = usize::try_from(len).map_err(|_| ZkError::Truncated {
            what,
            needed: i64::from(len),
            available: self.0.len(),
        })?;
        Ok(Some(self.take(what, n)?.to_vec()))
    }

    fn path(&mut self) -> Result<String, ZkError> {
        let bytes = self
            .buffer("path")?
            .ok_or(ZkError::BadString { what: "path" })?;
        String::from_utf8(bytes).map_err(|_| ZkError::BadString { what: "path" })
    }
}

/// A znode's metadata as ZooKeeper's `Stat` record (68 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stat {
    pub czxid: i64,
    pub mzxid: i64,
    pub ctime: i64,
    pub mtime: i64,
    pub version: i32,
    pub cversion: i32,
    pub aversion: i32,
    pub ephemeral_owner: i64,
    pub data_length: i32,
    pub num_children: i32,
    pub pzxid: i64,
}

impl Stat {
    fn put(&self, out: &mut BytesMut) {
        out.put_i64(self.czxid);
        out.put_i64(self.mzxid);
        out.put_i64(self.ctime);
        out.put_i64(self.mtime);
        out.put_i32(self.version);
        out.put_i32(self.cversion);
        out.put_i32(self.aversion);
        out.put_i64(self.ephemeral_owner);
        out.put_i32(self.data_length);
        out.put_i32(self.num_children);
        out.put_i64(self.pzxid);
    }
}

/// The body of a successful answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response<'a> {
    /// Pings, `closeSession`: the header alone.
    Empty,
    Stat(Stat),
    Data(&'a [u8], Stat),
    Children(&'a [String]),
    Children2(&'a [String], Stat),
    Path(&'a str),
}

/// Writes the handshake's answer: protocol 0, the negotiated timeout, the
/// session id and password, not read-only (a read-only ZooKeeper server
/// makes clients look for a read-write one).
pub fn encode_connect_response(
    out: &mut BytesMut,
    timeout_ms: i32,
    session_id: i64,
    password: &[u8],
) {
    let at = begin(out);
    out.put_i32(0);
    out.put_i32(timeout_ms);
    out.put_i64(session_id);
    put_buffer(out, password);
    out.put_u8(0);
    end(out, at);
}

/// Writes one answer: a reply header and, when `err` is [`ErrorCode::Ok`],
/// the response record (ZooKeeper sends no record with an error).
pub fn encode_reply(out: &mut BytesMut, xid: i32, zxid: i64, err: ErrorCode, body: &Response<'_>) {
    let at = begin(out);
    out.put_i32(xid);
    out.put_i64(zxid);
    out.put_i32(err as i32);
    if err == ErrorCode::Ok {
        match body {
            Response::Empty => {}
            Response::Stat(s) => s.put(out),
            Response::Data(d, s) => {
                put_buffer(out, d);
                s.put(out);
            }
            Response::Children(c) => put_strings(out, c),
            Response::Children2(c, s) => {
                put_strings(out, c);
                s.put(out);
            }
            Response::Path(p) => put_buffer(out, p.as_bytes()),
        }
    }
    end(out, at);
}

fn begin(out: &mut BytesMut) -> usize {
    let at = out.len();
    out.put_i32(0);
    at
}

/// Fills in the length prefix written by [`begin`]. Answers are built from
/// a handful of small znodes, far below `i32::MAX`.
fn end(out: &mut BytesMut, at: usize) {
    let len = i32::try_from(out.len() - at - 4).unwrap_or(i32::MAX);
    if let Some(prefix) = out.get_mut(at..at + 4) {
        prefix.copy_from_slice(&len.to_be_bytes());
    }
}

fn put_buffer(out: &mut BytesMut, b: &[u8]) {
    out.put_i32(i32::try_from(b.len()).unwrap_or(i32::MAX));
    out.put_slice(b);
}

fn put_strings(out: &mut BytesMut, v: &[String]) {
    out.put_i32(i32::try_from(v.len()).unwrap_or(i32::MAX));
    for s in v {
        put_buffer(out, s.as_bytes());
    }
}
