//! The server's errors: every failure has a stable [`ErrorCode`] and a
//! message for humans, and becomes a gRPC status carrying both.
//!
//! This module maps engine and descriptor errors to codes; it never decides
//! whether a client retries (the code's `retryable()` does).

use ferrobase_proto::ErrorCode;
use ferrobase_proto::cellblock::CellBlockError;
use ferrobase_storage::StorageError;
use ferrobase_types::{DescriptorError, MutationError};

/// A failed request.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ServerError {
    pub code: ErrorCode,
    pub message: String,
}

/// Result with [`ServerError`].
pub type Result<T, E = ServerError> = std::result::Result<T, E>;

impl ServerError {
    /// An error with `code`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ServerError {
        ServerError {
            code,
            message: message.into(),
        }
    }

    /// The table does not exist.
    pub fn no_table(table: &str) -> ServerError {
        ServerError::new(
            ErrorCode::TableNotFound,
            format!("table '{table}' does not exist"),
        )
    }

    /// The region is not online here.
    pub fn not_serving(region: u64) -> ServerError {
        ServerError::new(
            ErrorCode::RegionNotServing,
            format!("region {region} is not online on this server"),
        )
    }
}

impl From<ServerError> for tonic::Status {
    fn from(e: ServerError) -> tonic::Status {
        ferrobase_proto::error_code::status(e.code, e.message)
    }
}

impl From<MutationError> for ServerError {
    fn from(e: MutationError) -> ServerError {
        let code = match e {
            MutationError::EmptyRow => ErrorCode::EmptyRow,
            MutationError::CellTooLarge { .. } => ErrorCode::CellTooLarge,
            _ => ErrorCode::InvalidMutation,
        };
        ServerError::new(code, e.to_string())
    }
}

impl From<StorageError> for ServerError {
    fn from(e: StorageError) -> ServerError {
        let code = match &e {
            StorageError::InvalidMutation(m) => return m.clone().into(),
            StorageError::Io { .. } => ErrorCode::Io,
            StorageError::Corrupt { .. } => ErrorCode::Corruption,
            StorageError::RegionTooBusy { .. } => ErrorCode::RegionTooBusy,
            StorageError::NoSuchFamily { .. } => ErrorCode::FamilyNotFound,
            StorageError::WrongRegion { .. } => ErrorCode::WrongRegion,
            StorageError::Closed(_) => ErrorCode::RegionNotServing,
            // Its regions are being reopened elsewhere: the client relocates.
            // The write may still be in the WAL the new owner replays, so
            // the client must not blindly repeat a non-idempotent call.
            StorageError::Fenced(_) => ErrorCode::Fenced,
            StorageError::InvalidRequest(_) => ErrorCode::InvalidRequest,
            // A kind this layer does not know yet: never retried blindly.
            _ => ErrorCode::Internal,
        };
        ServerError::new(code, e.to_string())
    }
}

impl From<DescriptorError> for ServerError {
    fn from(e: DescriptorError) -> ServerError {
        let code = match e {
            DescriptorError::NoSuchFamily { .. } => ErrorCode::FamilyNotFound,
            _ => ErrorCode::InvalidAttribute,
        };
        ServerError::new(code, e.to_string())
    }
}

impl From<CellBlockError> for ServerError {
    fn from(e: CellBlockError) -> ServerError {
        ServerError::new(ErrorCode::MalformedCellBlock, e.to_string())
    }
}
