//! gRPC adapters: the [`pb`](ferrobase_proto::pb) services over the master
//! and the region server. They decode requests, run the work off the async
//! runtime and map errors to statuses; they hold no state of their own.

pub mod admin;
pub mod master;
pub mod region;

use crate::error::{Result, ServerError};
use ferrobase_proto::ErrorCode;

/// Runs blocking work off the async runtime.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, tonic::Status>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ServerError::new(ErrorCode::Internal, e.to_string()))?
        .map_err(tonic::Status::from)
}
