//! The gateway's errors: codec errors (bytes that are not a Thrift
//! message) and service errors (a call that failed, answered with one of
//! `Hbase.thrift`'s exceptions). This module only names failures; it never
//! decides how they travel (see `service` and `server`).

use ferrobase_client::{ClientError, ErrorCode};

/// Bytes that did not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The input ended inside a message: read more.
    #[error("message is incomplete")]
    Incomplete,
    /// The bytes are not a valid Thrift message.
    #[error("malformed Thrift message: {0}")]
    Malformed(String),
    /// A size is past the configured limits.
    #[error("Thrift message too large: {0}")]
    TooLarge(String),
}

/// A failed call, as `Hbase.thrift` reports it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// `IOError`: the cluster could not do it (unknown or disabled table,
    /// unreachable server, ...).
    #[error("IOError: {message}")]
    Io { message: String, can_retry: bool },
    /// `IllegalArgument`: the call itself was wrong.
    #[error("IllegalArgument: {0}")]
    IllegalArgument(String),
    /// `AlreadyExists`: `createTable` of an existing table.
    #[error("AlreadyExists: {0}")]
    AlreadyExists(String),
    /// The arguments did not match the method's IDL: a
    /// `TApplicationException` (PROTOCOL_ERROR), as generated servers send.
    #[error("protocol error: {0}")]
    Protocol(String),
}

impl ServiceError {
    /// An `IOError` that retrying will not fix.
    pub fn io(message: impl Into<String>) -> ServiceError {
        ServiceError::Io {
            message: message.into(),
            can_retry: false,
        }
    }

    /// An error of the cluster, prefixed with what was being done (the
    /// client's messages name the code; the prefix names the table).
    pub fn from_client(context: &str, e: ClientError) -> ServiceError {
        let message = format!("{context}: {e}");
        match e.code() {
            Some(ErrorCode::TableExists) => ServiceError::AlreadyExists(message),
            Some(
                ErrorCode::EmptyRow
                | ErrorCode::InvalidMutation
                | ErrorCode::InvalidAttribute
                | ErrorCode::InvalidRequest
                | ErrorCode::InvalidFilter
                | ErrorCode::CellTooLarge,
            ) => ServiceError::IllegalArgument(message),
            _ if matches!(e, ClientError::Invalid(_)) => ServiceError::IllegalArgument(message),
            _ => ServiceError::Io {
                can_retry: e.retryable(),
                message,
            },
        }
    }
}

/// The gateway could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("cannot connect to ferrobase at {server}: {source}")]
    Connect { server: String, source: ClientError },
    /// The TLS settings (`hbase.thrift.ssl.enabled`) cannot be used.
    #[error("{0}")]
    Tls(ferrobase_tls::TlsError),
}
