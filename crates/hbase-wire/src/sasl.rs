//! SASL on an HBase RPC connection: the frames of the authentication
//! exchange, both directions, and the DIGEST-MD5 mechanism
//! ([`digest_md5`], RFC 2831) HBase uses for token authentication.
//!
//! A client that opens with the preamble `HBas 0 82` (DIGEST) or `81`
//! (KERBEROS) exchanges SASL tokens before its connection header; the
//! server's decoder yields them as `ServerEvent::SaslToken` (see
//! [`crate::frame`]). Once the mechanism completes, the connection header
//! and calls follow as on a SIMPLE connection (quality of protection
//! `auth` only: nothing is wrapped).
//!
//! # Client → server (every SASL token)
//!
//! ```text
//! +-------------------+--------------------+
//! | u32 BE length = N | token (N bytes)    |     DIGEST-MD5 opens with N = 0
//! +-------------------+--------------------+
//! ```
//!
//! # Server → client (HBase's `doRawSaslReply`)
//!
//! ```text
//! success:  +------------------+-------------------+-----------------+
//!           | i32 BE status=0  | u32 BE length = N | token (N bytes) |
//!           +------------------+-------------------+-----------------+
//! fallback: +------------------+------------------+
//!           | i32 BE status=0  | i32 BE -88       |   SWITCH_TO_SIMPLE_AUTH
//!           +------------------+------------------+
//! error:    +------------------+-----------+-------------+-----------+-------------+
//!           | i32 BE status=1  | i32 BE Lc | class (Lc)  | i32 BE Lm | message (Lm)|
//!           +------------------+-----------+-------------+-----------+-------------+
//! ```
//!
//! The error's class and message are Hadoop `WritableUtils.writeString`
//! strings (UTF-8); the Java client raises them as a `RemoteException`
//! of that class and the server closes the connection.
//!
//! This module owns bytes only: no I/O, no clock, no randomness (the
//! caller supplies nonces), no secrets (the caller looks passwords up).

pub mod digest_md5;

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// `SaslStatus.SUCCESS`.
pub const STATUS_SUCCESS: i32 = 0;
/// `SaslStatus.ERROR`.
pub const STATUS_ERROR: i32 = 1;
/// `SaslUtil.SWITCH_TO_SIMPLE_AUTH`: sent in place of a token length, it
/// tells the client to go on with SIMPLE authentication.
pub const SWITCH_TO_SIMPLE_AUTH: i32 = -88;
/// `SaslUtil.SASL_DEFAULT_REALM`: the realm (and server name) HBase's
/// DIGEST-MD5 uses.
pub const DEFAULT_REALM: &str = "default";
/// Largest client SASL token a server accepts. A DIGEST-MD5 response is
/// at most 4096 bytes (RFC 2831); the rest is room for other mechanisms.
pub const MAX_CLIENT_TOKEN: usize = 64 * 1024;
/// Largest server reply a client accepts (HBase's `SaslChallengeDecoder`).
pub const MAX_SERVER_REPLY: usize = 1024 * 1024;

/// Ways SASL bytes can be wrong, or an exchange refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SaslError {
    /// A length prefix or token above the maximum.
    #[error("{what} of {len} bytes is larger than the maximum of {max} bytes")]
    TooLarge {
        what: &'static str,
        len: u64,
        max: usize,
    },
    /// Bytes that do not follow the grammar, with the offset of the
    /// first wrong byte.
    #[error("malformed {what} at byte {offset}: {reason}")]
    Malformed {
        what: &'static str,
        offset: usize,
        reason: &'static str,
    },
    /// A directive the mechanism requires is absent.
    #[error("{what}: the {name} directive is missing")]
    Missing {
        what: &'static str,
        name: &'static str,
    },
    /// A directive that may appear once appears again.
    #[error("{what}: the {name} directive appears more than once")]
    Duplicate { what: &'static str, name: String },
    /// A directive with a value this side does not accept.
    #[error("{what}: {name}={value} is not accepted: {why}")]
    Refused {
        what: &'static str,
        name: &'static str,
        value: String,
        why: &'static str,
    },
    /// A quality of protection other than `auth`: integrity and privacy
    /// (frame wrapping) are not built.
    #[error(
        "SASL quality of protection {qop} is not supported: this server offers only 'auth' \
         (hbase.rpc.protection=authentication); integrity (auth-int) and privacy (auth-conf) \
         are not built, use TLS for privacy"
    )]
    QopNotSupported { qop: String },
    /// The client's digest does not match the password on record.
    #[error("DIGEST-MD5: the client's response does not match: wrong token password")]
    BadResponse,
    /// The server's `rspauth` does not prove it knows the password.
    #[error(
        "DIGEST-MD5: the server's rspauth does not match: the server does not hold the token's key"
    )]
    BadServerProof,
    /// The credentials look-up refused the user (an unknown, forged or
    /// expired token); the text is the reason.
    #[error("{0}")]
    InvalidToken(String),
    /// A step that does not fit where the exchange is.
    #[error("DIGEST-MD5 exchange: {0}")]
    State(&'static str),
}

/// Writes one client SASL token: length, then the bytes.
pub fn encode_client_token(out: &mut BytesMut, token: &[u8]) -> Result<(), SaslError> {
    let len = java_len(token.len(), "SASL token")?;
    out.reserve(4 + token.len());
    out.put_u32(len);
    out.put_slice(token);
    Ok(())
}

/// Reads one client SASL token (server side); `Ok(None)` until it has
/// fully arrived. The length is checked against `max` before anything
/// waits for or copies the body.
pub fn decode_client_token(buf: &mut BytesMut, max: usize) -> Result<Option<Bytes>, SaslError> {
    let Some(&[a, b, c, d]) = buf.get(..4) else {
        return Ok(None);
    };
    let len = u32::from_be_bytes([a, b, c, d]);
    if u64::from(len) > max.min(i32::MAX as usize) as u64 {
        return Err(SaslError::TooLarge {
            what: "SASL token",
            len: u64::from(len),
            max,
        });
    }
    let len = len as usize;
    if buf.len() - 4 < len {
        return Ok(None);
    }
    let mut token = buf.split_to(4 + len).freeze();
    token.advance(4);
    Ok(Some(token))
}

/// Writes a server's successful step: status 0, then the token.
pub fn encode_success(out: &mut BytesMut, token: &[u8]) -> Result<(), SaslError> {
    let len = java_len(token.len(), "SASL reply")?;
    out.reserve(8 + token.len());
    out.put_i32(STATUS_SUCCESS);
    out.put_u32(len);
    out.put_slice(token);
    Ok(())
}

/// Writes the server's "go on with SIMPLE authentication".
pub fn encode_switch_to_simple(out: &mut BytesMut) {
    out.put_i32(STATUS_SUCCESS);
    out.put_i32(SWITCH_TO_SIMPLE_AUTH);
}

/// Writes a server's refusal: status 1, the Java exception class and the
/// message. The Java client reads an empty message as a broken stream,
/// so an empty one is sent as the class name.
pub fn encode_error(out: &mut BytesMut, class: &str, message: &str) -> Result<(), SaslError> {
    let message = if message.is_empty() { class } else { message };
    let class_len = java_len(class.len(), "SASL error class")?;
    let message_len = java_len(message.len(), "SASL error message")?;
    out.reserve(12 + class.len() + message.len());
    out.put_i32(STATUS_ERROR);
    out.put_u32(class_len);
    out.put_slice(class.as_bytes());
    out.put_u32(message_len);
    out.put_slice(message.as_bytes());
    Ok(())
}

/// A server's reply, as a client reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerReply {
    /// A challenge (or the final `rspauth`).
    Token(Bytes),
    /// The server does not authenticate: go on with SIMPLE.
    SwitchToSimple,
    /// The server refused: a Java exception class and its message.
    Error { class: String, message: String },
}

/// Reads one server reply (client side); `Ok(None)` until it has fully
/// arrived.
pub fn decode_server_reply(buf: &mut BytesMut) -> Result<Option<ServerReply>, SaslError> {
    let Some(&[s0, s1, s2, s3, l0, l1, l2, l3]) = buf.get(..8) else {
        return Ok(None);
    };
    let status = i32::from_be_bytes([s0, s1, s2, s3]);
    let first = i32::from_be_bytes([l0, l1, l2, l3]);
    match status {
        STATUS_SUCCESS if first == SWITCH_TO_SIMPLE_AUTH => {
            buf.advance(8);
            Ok(Some(ServerReply::SwitchToSimple))
        }
        STATUS_SUCCESS => {
            let len = reply_len(first, 4, "SASL reply")?;
            if buf.len() - 8 < len {
                return Ok(None);
            }
            let mut token = buf.split_to(8 + len).freeze();
            token.advance(8);
            Ok(Some(ServerReply::Token(token)))
        }
        STATUS_ERROR => {
            let class_len = reply_len(first, 4, "SASL error class")?;
            let Some(&[m0, m1, m2, m3]) = buf.get(8 + class_len..12 + class_len) else {
                return Ok(None);
            };
            let message_len = reply_len(
                i32::from_be_bytes([m0, m1, m2, m3]),
                8 + class_len,
                "SASL error message",
            )?;
            if buf.len() < 12 + class_len + message_len {
                return Ok(None);
            }
            let frame = buf.split_to(12 + class_len + message_len).freeze();
            let text = |range: std::ops::Range<usize>| {
                String::from_utf8_lossy(frame.get(range).unwrap_or_default()).into_owned()
            };
            Ok(Some(ServerReply::Error {
                class: text(8..8 + class_len),
                message: text(12 + class_len..12 + class_len + message_len),
            }))
        }
        _ => Err(SaslError::Malformed {
            what: "SASL reply",
            offset: 0,
            reason: "status is neither SUCCESS (0) nor ERROR (1)",
        }),
    }
}

fn reply_len(len: i32, offset: usize, what: &'static str) -> Result<usize, SaslError> {
    let len = usize::try_from(len).map_err(|_| SaslError::Malformed {
        what,
        offset,
        reason: "negative length",
    })?;
    if len > MAX_SERVER_REPLY {
        return Err(SaslError::TooLarge {
            what,
            len: len as u64,
            max: MAX_SERVER_REPLY,
        });
    }
    Ok(len)
}

fn java_len(len: usize, what: &'static str) -> Result<u32, SaslError> {
    if len > i32::MAX as usize {
        return Err(SaslError::TooLarge {
            what,
            len: len as u64,
            max: i32::MAX as usize,
        });
    }
    Ok(len as u32)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64 with the standard alphabet and `=` padding, no line breaks (what
/// HBase's `SaslUtil` uses for token identifiers and passwords).
pub fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let [a, b, c] = [0, 1, 2].map(|i| chunk.get(i).copied().unwrap_or(0));
        let n = u32::from(a) << 16 | u32::from(b) << 8 | u32::from(c);
        let sextet = |shift: u32| {
            char::from(
                B64.get(((n >> shift) & 63) as usize)
                    .copied()
                    .unwrap_or(b'='),
            )
        };
        out.push(sextet(18));
        out.push(sextet(12));
        out.push(if chunk.len() > 1 { sextet(6) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(0) } else { '=' });
    }
    out
}

/// Strict base64 decoding: the standard alphabet, whole 4-character
/// groups, `=` padding only at the end.
pub fn base64_decode(text: &str) -> Result<Vec<u8>, SaslError> {
    let bytes = text.as_bytes();
    let malformed = |offset: usize, reason| SaslError::Malformed {
        what: "base64",
        offset,
        reason,
    };
    if !bytes.len().is_multiple_of(4) {
        return Err(malformed(bytes.len(), "length is not a multiple of 4"));
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    let groups = bytes.len() / 4;
    for (g, group) in bytes.chunks_exact(4).enumerate() {
        let last = g + 1 == groups;
        let mut n = 0u32;
        let mut pad = 0;
        for (i, &c) in group.iter().enumerate() {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'+' => 62,
                b'/' => 63,
                b'=' if last && i >= 2 => {
                    pad += 1;
                    0
                }
                _ => return Err(malformed(g * 4 + i, "not a base64 character")),
            };
            if pad > 0 && c != b'=' {
                return Err(malformed(g * 4 + i, "data after padding"));
            }
            n = n << 6 | u32::from(v);
        }
        let [_, b0, b1, b2] = n.to_be_bytes();
        out.push(b0);
        if pad < 2 {
            out.push(b1);
        }
        if pad < 1 {
            out.push(b2);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
