//! The client's errors: a server error with its stable [`ErrorCode`], or a
//! transport failure. This module decides nothing about retries beyond
//! [`ClientError::retryable`].

use ferrobase_proto::ErrorCode;

/// A failed client call.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with an error.
    #[error("{code}: {message}")]
    Server { code: ErrorCode, message: String },
    /// The server could not be reached.
    #[error("cannot reach {address}: {message}")]
    Transport { address: String, message: String },
    /// The call was wrong before it was sent.
    #[error("invalid call: {0}")]
    Invalid(String),
    /// A reply did not parse.
    #[error("malformed reply: {0}")]
    Malformed(String),
}

/// Result with [`ClientError`].
pub type Result<T, E = ClientError> = std::result::Result<T, E>;

impl ClientError {
    /// The server's code, if the server answered.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            ClientError::Server { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// True when the same call may succeed later.
    pub fn retryable(&self) -> bool {
        match self {
            ClientError::Server { code, .. } => code.retryable(),
            ClientError::Transport { .. } => true,
            _ => false,
        }
    }

    /// True when the cached region location is stale.
    pub fn stale_location(&self) -> bool {
        matches!(
            self.code(),
            Some(ErrorCode::RegionNotServing | ErrorCode::WrongRegion | ErrorCode::Fenced)
        ) || matches!(self, ClientError::Transport { .. })
    }

    /// True when the call may have been applied although it failed: the
    /// server was fenced after writing it to its WAL (the new owner replays
    /// that WAL), or the connection broke after the request could have
    /// been sent. Repeating such a call is safe only if it is idempotent
    /// (a put, a delete, a read) or carries a nonce the server remembers
    /// (an increment, an append, a check-and-mutate). A connection that
    /// was never made is not ambiguous.
    pub fn ambiguous(&self) -> bool {
        match self {
            ClientError::Server { code, .. } => *code == ErrorCode::Fenced,
            ClientError::Transport { message, .. } => !NOT_CONNECTED
                .iter()
                .any(|m| message.to_ascii_lowercase().contains(m)),
            _ => false,
        }
    }
}

/// Transport failures that happen before a request leaves the client.
const NOT_CONNECTED: &[&str] = &[
    "tcp connect error",
    "error trying to connect",
    "connection refused",
];

impl ClientError {}

impl From<tonic::Status> for ClientError {
    fn from(s: tonic::Status) -> ClientError {
        // No ferrobase error code: the status was made by the transport (a
        // refused or broken connection, e.g. a region server that died
        // mid-call), not by a server; the call may succeed elsewhere.
        if s.metadata().get(ferrobase_proto::ERROR_CODE_KEY).is_none()
            && matches!(
                s.code(),
                tonic::Code::Unavailable | tonic::Code::Unknown | tonic::Code::Cancelled
            )
            || (s.code() == tonic::Code::Internal && s.message().contains("transport error"))
        {
            // A failed TLS handshake's cause is deep in the source chain.
            let message = match ferrobase_tls::grpc::tls_cause(&s) {
                Some(cause) => format!("{}: {cause}", s.message()),
                None => s.message().to_string(),
            };
            return ClientError::Transport {
                address: String::new(),
                message,
            };
        }
        ClientError::Server {
            code: ferrobase_proto::error_code::code_of(&s),
            message: s.message().to_string(),
        }
    }
}

impl From<ferrobase_proto::cellblock::CellBlockError> for ClientError {
    fn from(e: ferrobase_proto::cellblock::CellBlockError) -> ClientError {
        ClientError::Malformed(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transport(message: &str) -> ClientError {
        ClientError::Transport {
            address: "a:1".into(),
            message: message.into(),
        }
    }

    #[test]
    fn a_fenced_write_or_a_broken_call_may_have_been_applied() {
        let fenced = ClientError::Server {
            code: ErrorCode::Fenced,
            message: "fenced".into(),
        };
        assert!(fenced.ambiguous() && fenced.retryable() && fenced.stale_location());
        assert!(transport("error reading a body from connection: connection reset").ambiguous());
        assert!(transport("operation was canceled").ambiguous());
        for m in [
            "tcp connect error: Connection refused (os error 111)",
            "transport error: error trying to connect",
        ] {
            assert!(!transport(m).ambiguous(), "{m}");
        }
        let moved = ClientError::Server {
            code: ErrorCode::RegionNotServing,
            message: "moved".into(),
        };
        assert!(!moved.ambiguous());
    }
}
