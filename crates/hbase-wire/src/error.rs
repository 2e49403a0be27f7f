//! [`WireError`]: every way bytes from a peer can fail to be HBase RPC.
//!
//! This module owns the error vocabulary of the framing and cell-block
//! decoders; each variant names the part of the stream that was wrong and
//! the numbers involved. It never decides what to answer a peer: the server
//! maps an error to an HBase exception with [`WireError::exception`].

use crate::cellblock::CellBlockError;
use crate::exception::{ExceptionClass, HBaseException};
use ferrobase_types::binary::to_string_binary;

/// Bytes that are not a well-formed HBase RPC stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The connection does not start with `HBas` (nor a known special
    /// preamble).
    #[error("Expected HEADER=HBas but received HEADER={}", to_string_binary(found))]
    BadMagic { found: [u8; 4] },
    /// The preamble's version byte is not 0.
    #[error("serverVersion=0, clientVersion={version}: unsupported RPC version")]
    UnsupportedVersion { version: u8 },
    /// The preamble's authentication byte is unknown or not accepted.
    #[error(
        "authentication method {code} is not supported; HBase defines SIMPLE (80), KERBEROS (81) and DIGEST (82)"
    )]
    UnsupportedAuth { code: u8 },
    /// A length prefix larger than the configured maximum (checked before
    /// anything is allocated or awaited).
    #[error("{what} of {len} bytes is larger than the maximum of {max} bytes")]
    FrameTooLarge {
        what: &'static str,
        len: u64,
        max: usize,
    },
    /// A length inside a frame that points past the frame's end.
    #[error("{what} needs {needed} bytes but only {available} remain in the frame")]
    Truncated {
        what: &'static str,
        needed: u64,
        available: usize,
    },
    /// A varint length prefix that runs past the frame or past 10 bytes.
    #[error("{what}: malformed or truncated varint")]
    BadVarint { what: &'static str },
    /// A protobuf message that does not decode.
    #[error("{what} does not decode: {reason}")]
    Decode { what: &'static str, reason: String },
    /// Bytes left over after everything the header announced.
    #[error("{count} unexpected bytes follow the {what}")]
    TrailingBytes { what: &'static str, count: usize },
    /// A call whose header says no request message follows, where one is
    /// needed.
    #[error("request header of call {call_id} ({method}) has no request parameter")]
    MissingParam { call_id: u32, method: String },
    /// A cell block that does not parse.
    #[error(transparent)]
    CellBlock(#[from] CellBlockError),
    /// SASL bytes that are malformed or oversize.
    #[error(transparent)]
    Sasl(#[from] crate::sasl::SaslError),
    /// A frame bigger than the Java peer can read (its lengths are `int`).
    #[error("{what} of {len} bytes does not fit a 4-byte signed length")]
    TooLargeToEncode { what: &'static str, len: u64 },
}

impl WireError {
    pub(crate) fn decode(what: &'static str, e: prost::DecodeError) -> WireError {
        WireError::Decode {
            what,
            reason: e.to_string(),
        }
    }

    /// True when the stream can no longer be trusted (the server answers
    /// and closes the connection): every framing error. Only
    /// [`MissingParam`](Self::MissingParam) and cell-block errors leave the
    /// frame boundaries intact, so the connection may go on.
    pub fn is_fatal(&self) -> bool {
        !matches!(
            self,
            WireError::MissingParam { .. } | WireError::CellBlock(_)
        )
    }

    /// The HBase exception a server sends for this error, with HBase's
    /// class: a bad version is `WrongVersionException`, an unknown
    /// authentication `BadAuthException`, an oversize request
    /// `RequestTooBigException`, other framing errors
    /// `FatalConnectionException` (the Java client then fails every call on
    /// the connection and reconnects), a bad parameter or cell block
    /// `DoNotRetryIOException`.
    pub fn exception(&self) -> HBaseException {
        let class = match self {
            WireError::UnsupportedVersion { .. } => ExceptionClass::WrongVersion,
            WireError::UnsupportedAuth { .. } => ExceptionClass::BadAuth,
            WireError::FrameTooLarge { .. } => ExceptionClass::RequestTooBig,
            WireError::MissingParam { .. } | WireError::CellBlock(_) => {
                ExceptionClass::DoNotRetryIo
            }
            _ => ExceptionClass::FatalConnection,
        };
        HBaseException::new(class, self.to_string())
    }
}
