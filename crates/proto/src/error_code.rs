//! Stable error codes shared by server and client.
//!
//! A failed call carries a gRPC status *and* a code string in the
//! `x-ferrobase-error` metadata entry; clients decide on retries by the code,
//! never by parsing the message. Codes are append-only: never rename one.

/// Metadata key holding the code.
pub const ERROR_CODE_KEY: &str = "x-ferrobase-error";

macro_rules! codes {
    ($($variant:ident => $text:literal, $status:ident, $retry:literal;)+) => {
        /// Every error a ferrobase call can report.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorCode { $($variant),+ }

        impl ErrorCode {
            /// Every code.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),+];

            /// The stable code string.
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $text),+ }
            }

            /// Parses a code string.
            pub fn parse(text: &str) -> Option<ErrorCode> {
                match text { $($text => Some(ErrorCode::$variant),)+ _ => None }
            }

            /// The gRPC status code it travels with.
            pub fn grpc(self) -> tonic::Code {
                match self { $(ErrorCode::$variant => tonic::Code::$status),+ }
            }

            /// True when the same call may succeed later unchanged.
            pub fn retryable(self) -> bool {
                match self { $(ErrorCode::$variant => $retry),+ }
            }
        }
    };
}

codes! {
    TableNotFound => "TABLE_NOT_FOUND", NotFound, false;
    TableExists => "TABLE_EXISTS", AlreadyExists, false;
    FamilyNotFound => "FAMILY_NOT_FOUND", InvalidArgument, false;
    TableDisabled => "TABLE_DISABLED", FailedPrecondition, false;
    TableNotDisabled => "TABLE_NOT_DISABLED", FailedPrecondition, false;
    TableEnabled => "TABLE_ALREADY_ENABLED", FailedPrecondition, false;
    CellTooLarge => "CELL_TOO_LARGE", InvalidArgument, false;
    EmptyRow => "EMPTY_ROW", InvalidArgument, false;
    InvalidMutation => "INVALID_MUTATION", InvalidArgument, false;
    InvalidAttribute => "INVALID_ATTRIBUTE", InvalidArgument, false;
    InvalidRequest => "INVALID_REQUEST", InvalidArgument, false;
    MalformedCellBlock => "MALFORMED_CELL_BLOCK", InvalidArgument, false;
    RegionNotServing => "REGION_NOT_SERVING", Unavailable, true;
    WrongRegion => "WRONG_REGION", Unavailable, true;
    Fenced => "FENCED", Unavailable, true;
    RegionTooBusy => "REGION_TOO_BUSY", ResourceExhausted, true;
    ServerBusy => "SERVER_BUSY", ResourceExhausted, true;
    UnknownScanner => "UNKNOWN_SCANNER", NotFound, false;
    Corruption => "CORRUPTION", DataLoss, false;
    Io => "IO_ERROR", Internal, false;
    Internal => "INTERNAL", Internal, false;
    InvalidFilter => "INVALID_FILTER", InvalidArgument, false;
    NamespaceNotFound => "NAMESPACE_NOT_FOUND", NotFound, false;
    NamespaceExists => "NAMESPACE_EXISTS", AlreadyExists, false;
    SnapshotNotFound => "SNAPSHOT_NOT_FOUND", NotFound, false;
    SnapshotExists => "SNAPSHOT_EXISTS", AlreadyExists, false;
    SnapshotExpired => "SNAPSHOT_EXPIRED", FailedPrecondition, false;
    AccessDenied => "ACCESS_DENIED", PermissionDenied, false;
    Unauthenticated => "UNAUTHENTICATED", Unauthenticated, false;
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A status carrying `code` in its metadata.
pub fn status(code: ErrorCode, message: impl Into<String>) -> tonic::Status {
    let mut s = tonic::Status::new(code.grpc(), message.into());
    if let Ok(v) = code.as_str().parse() {
        s.metadata_mut().insert(ERROR_CODE_KEY, v);
    }
    s
}

/// The code a status carries; transport failures without one map to
/// [`ErrorCode::RegionNotServing`] when the server was unreachable.
pub fn code_of(status: &tonic::Status) -> ErrorCode {
    if let Some(c) = status
        .metadata()
        .get(ERROR_CODE_KEY)
        .and_then(|v| v.to_str().ok())
        .and_then(ErrorCode::parse)
    {
        return c;
    }
    match status.code() {
        tonic::Code::Unavailable => ErrorCode::RegionNotServing,
        tonic::Code::ResourceExhausted => ErrorCode::ServerBusy,
        _ => ErrorCode::Internal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_through_status() {
        for &c in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(c.as_str()), Some(c));
            assert_eq!(code_of(&status(c, "x")), c);
        }
    }
}
