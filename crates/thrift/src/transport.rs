//! Thrift transports on one connection: buffered (messages back to back
//! on the stream, happybase's default `transport='buffered'`) and framed
//! (`transport='framed'`, HBase's `-f`), and which one a connection speaks.
//!
//! ```text
//! buffered:  | message | message | ...
//! framed:    | length i32 BE | message (length bytes) | length | ...
//!
//! detection from the first bytes of a connection:
//!   byte 0 = 0x80           buffered, binary (strict header 80 01 ..)
//!   byte 0 = 0x82           buffered, compact (protocol id)
//!   byte 4 = 0x80 or 0x82   framed (bytes 0-3 are the frame length)
//!   byte 4 = 0x00           framed, binary with an old non-strict header
//!   otherwise               buffered, binary with an old non-strict header
//!                           (bytes 0-3 are the length of the method name,
//!                           byte 4 its first letter)
//! ```
//!
//! This module owns reading whole messages off a stream within the size
//! limit, and writing replies in the connection's transport. It never
//! interprets a message's content.

use crate::error::CodecError;
use crate::protocol::{DecodeFailure, Limits, Message, Protocol};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Whether messages are length-prefixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    Buffered,
    Framed,
}

/// What one connection speaks, decided from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wire {
    pub framing: Framing,
    pub protocol: Protocol,
}

/// Decides the transport and protocol from the first bytes; `None`: more
/// bytes are needed. With `framed_only`, an unframed client is refused
/// with a message saying so (HBase's `-f` servers simply hang up).
pub fn detect(first: &[u8], framed_only: bool) -> Result<Option<Wire>, CodecError> {
    let Some(&b0) = first.first() else {
        return Ok(None);
    };
    let unframed = |protocol| {
        if framed_only {
            Err(CodecError::Malformed(
                "the client sent an unframed message, but this gateway accepts only framed \
                 transport (hbase.regionserver.thrift.framed = true); use transport='framed'"
                    .into(),
            ))
        } else {
            Ok(Some(Wire {
                framing: Framing::Buffered,
                protocol,
            }))
        }
    };
    match b0 {
        0x80 => return unframed(Protocol::Binary),
        crate::protocol::compact::PROTOCOL_ID => return unframed(Protocol::Compact),
        _ => {}
    }
    if first.starts_with(b"GET ") || first.starts_with(b"POST") || first.starts_with(b"PUT ") {
        return Err(CodecError::Malformed(
            "an HTTP request reached the Thrift port; the gateway speaks Thrift's binary or \
             compact protocol over TCP, not HTTP"
                .into(),
        ));
    }
    let Some(&b4) = first.get(4) else {
        return Ok(None);
    };
    let framed = |protocol| {
        Ok(Some(Wire {
            framing: Framing::Framed,
            protocol,
        }))
    };
    match b4 {
        0x80 | 0x00 => framed(Protocol::Binary),
        crate::protocol::compact::PROTOCOL_ID => framed(Protocol::Compact),
        _ => unframed(Protocol::Binary),
    }
}

/// What reading the next message gave.
#[derive(Debug)]
pub enum Incoming {
    /// A whole message.
    Message(Message),
    /// The peer closed the connection between messages.
    Closed,
    /// A message that did not decode. `resync` says whether the stream is
    /// still at a message boundary (framed: the bad frame was consumed),
    /// so the connection can go on after answering.
    Bad {
        failure: DecodeFailure,
        resync: bool,
    },
}

/// Reads messages from, and writes replies to, one connection.
pub struct Transport<S> {
    stream: S,
    buf: Vec<u8>,
    wire: Option<Wire>,
    limits: Limits,
    framed_only: bool,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Transport<S> {
    /// A transport that detects its wire format from the first bytes.
    pub fn new(stream: S, limits: Limits, framed_only: bool) -> Transport<S> {
        Transport {
            stream,
            buf: Vec::new(),
            wire: None,
            limits,
            framed_only,
        }
    }

    /// The wire format, once detected.
    pub fn wire(&self) -> Option<Wire> {
        self.wire
    }

    /// Reads more bytes; false at end of stream.
    async fn fill(&mut self) -> std::io::Result<bool> {
        let mut chunk = [0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).await?;
        self.buf
            .extend_from_slice(chunk.get(..n).unwrap_or_default());
        Ok(n > 0)
    }

    fn closed_mid_message(&self) -> Incoming {
        Incoming::Bad {
            failure: CodecError::Malformed(format!(
                "connection closed inside a message ({} bytes received)",
                self.buf.len()
            ))
            .into(),
            resync: false,
        }
    }

    /// The next message.
    pub async fn next(&mut self) -> std::io::Result<Incoming> {
        let wire = loop {
            match self.wire {
                Some(w) => break w,
                None => match detect(&self.buf, self.framed_only) {
                    Ok(Some(w)) => self.wire = Some(w),
                    Ok(None) => {
                        if !self.fill().await? {
                            return Ok(if self.buf.is_empty() {
                                Incoming::Closed
                            } else {
                                self.closed_mid_message()
                            });
                        }
                    }
                    Err(e) => {
                        return Ok(Incoming::Bad {
                            failure: e.into(),
                            resync: false,
                        });
                    }
                },
            }
        };
        match wire.framing {
            Framing::Framed => self.next_frame(wire.protocol).await,
            Framing::Buffered => self.next_buffered(wire.protocol).await,
        }
    }

    async fn next_frame(&mut self, protocol: Protocol) -> std::io::Result<Incoming> {
        while self.buf.len() < 4 {
            if !self.fill().await? {
                return Ok(if self.buf.is_empty() {
                    Incoming::Closed
                } else {
                    self.closed_mid_message()
                });
            }
        }
        let mut len_bytes = [0u8; 4];
        len_bytes.copy_from_slice(self.buf.get(..4).unwrap_or(&[0; 4]));
        let len = i32::from_be_bytes(len_bytes);
        let len = match usize::try_from(len) {
            Ok(n) if n > 0 && n <= self.limits.max_message => n,
            _ => {
                return Ok(Incoming::Bad {
                    failure: CodecError::TooLarge(format!(
                        "frame of {len} bytes; frames must be 1 to {} bytes \
                         (hbase.regionserver.thrift.framed.max_frame_size_in_mb)",
                        self.limits.max_message
                    ))
                    .into(),
                    resync: false,
                });
            }
        };
        while self.buf.len() < 4 + len {
            if !self.fill().await? {
                return Ok(self.closed_mid_message());
            }
        }
        let frame: Vec<u8> = self.buf.drain(..4 + len).skip(4).collect();
        Ok(match protocol.decode(&frame, &self.limits) {
            Ok((m, _)) => Incoming::Message(m),
            Err(DecodeFailure {
                header,
                error: CodecError::Incomplete,
            }) => Incoming::Bad {
                failure: DecodeFailure {
                    header,
                    error: CodecError::Malformed(format!(
                        "the message is longer than its {len}-byte frame"
                    )),
                },
                resync: true,
            },
            Err(failure) => Incoming::Bad {
                failure,
                resync: true,
            },
        })
    }

    async fn next_buffered(&mut self, protocol: Protocol) -> std::io::Result<Incoming> {
        loop {
            if !self.buf.is_empty() {
                match protocol.decode(&self.buf, &self.limits) {
                    Ok((m, used)) => {
                        self.buf.drain(..used);
                        return Ok(Incoming::Message(m));
                    }
                    Err(DecodeFailure {
                        error: CodecError::Incomplete,
                        header,
                    }) => {
                        if self.buf.len() >= self.limits.max_message {
                            return Ok(Incoming::Bad {
                                failure: DecodeFailure {
                                    header,
                                    error: CodecError::TooLarge(format!(
                                        "message longer than {} bytes \
                                         (hbase.regionserver.thrift.framed.max_frame_size_in_mb)",
                                        self.limits.max_message
                                    )),
                                },
                                resync: false,
                            });
                        }
                    }
                    Err(failure) => {
                        return Ok(Incoming::Bad {
                            failure,
                            resync: false,
                        });
                    }
                }
            }
            if !self.fill().await? {
                return Ok(if self.buf.is_empty() {
                    Incoming::Closed
                } else {
                    self.closed_mid_message()
                });
            }
        }
    }

    /// Writes one reply in the connection's transport and protocol.
    pub async fn send(&mut self, message: &Message) -> std::io::Result<()> {
        let wire = self.wire.unwrap_or(Wire {
            framing: Framing::Buffered,
            protocol: Protocol::Binary,
        });
        let body = wire.protocol.encode(message);
        if wire.framing == Framing::Framed {
            let len = i32::try_from(body.len()).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, "reply too large")
            })?;
            let mut framed = Vec::with_capacity(body.len() + 4);
            framed.extend_from_slice(&len.to_be_bytes());
            framed.extend_from_slice(&body);
            self.stream.write_all(&framed).await?;
        } else {
            self.stream.write_all(&body).await?;
        }
        self.stream.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_from_first_bytes() {
        let w = |f, p| {
            Ok(Some(Wire {
                framing: f,
                protocol: p,
            }))
        };
        assert_eq!(detect(b"", false), Ok(None));
        assert_eq!(
            detect(b"\x80\x01", false),
            w(Framing::Buffered, Protocol::Binary)
        );
        assert_eq!(
            detect(b"\x82\x21", false),
            w(Framing::Buffered, Protocol::Compact)
        );
        assert_eq!(detect(b"\x00\x00\x00", false), Ok(None));
        assert_eq!(
            detect(b"\x00\x00\x00\x20\x80\x01", false),
            w(Framing::Framed, Protocol::Binary)
        );
        assert_eq!(
            detect(b"\x00\x00\x00\x20\x82\x21", true),
            w(Framing::Framed, Protocol::Compact)
        );
        assert_eq!(
            detect(b"\x00\x00\x00\x0dgetTableNames", false),
            w(Framing::Buffered, Protocol::Binary)
        );
        assert!(detect(b"\x80\x01", true).is_err());
        assert!(detect(b"GET / HTTP/1.1", false).is_err());
    }
}
