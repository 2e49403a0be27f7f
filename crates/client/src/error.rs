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
            Some(ErrorCode::RegionNotServing | ErrorCode::WrongRegion)
        ) || matches!(self, ClientError::Transport { .. })
    }
}

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
