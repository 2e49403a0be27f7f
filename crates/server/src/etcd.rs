//! Distributed mode's coordination through etcd (the role ZooKeeper plays
//! for HBase): sessions (a lease kept alive), region server registration,
//! master election, and the [`Coordination`](crate::coordination::Coordination)
//! the master uses to reach region servers over gRPC.
//!
//! Keys, all under `/ferrobase/`:
//!
//! ```text
//! /ferrobase/rs/<server name>   {"name":…,"address":…}, under the server's lease
//! /ferrobase/master/<lease>     etcd election: the oldest key is the active master
//! ```
//!
//! A key under a lease disappears when its owner stops renewing it (crash,
//! partition): that is how the master learns a region server died and a
//! standby learns the active master died. This module never decides
//! assignments and never touches storage.

pub mod election;
pub mod registry;
pub mod remote;
pub mod session;

use crate::error::ServerError;
use ferrobase_proto::ErrorCode;

pub use ferrobase_etcd::Client;

/// Prefix of region server registrations.
pub const RS_PREFIX: &str = "/ferrobase/rs/";
/// Name of the master election.
pub const MASTER_ELECTION: &str = "/ferrobase/master";

/// An etcd failure as a server error naming what was attempted.
pub(crate) fn err(what: &str) -> impl Fn(ferrobase_etcd::Error) -> ServerError + '_ {
    move |e| ServerError::new(ErrorCode::Io, format!("etcd {what}: {e}"))
}

/// Connects to the etcd cluster at `endpoints` (`http://host:port`).
pub async fn connect(endpoints: &[String]) -> crate::Result<Client> {
    if endpoints.is_empty() {
        return Err(ServerError::new(
            ErrorCode::InvalidRequest,
            "no etcd endpoint given (--etcd http://host:2379[,...])",
        ));
    }
    let options = ferrobase_etcd::ConnectOptions::new()
        .with_connect_timeout(std::time::Duration::from_secs(3))
        .with_timeout(std::time::Duration::from_secs(5));
    Client::connect(endpoints, Some(options))
        .await
        .map_err(|e| {
            ServerError::new(
                ErrorCode::Io,
                format!("cannot connect to etcd at {}: {e}", endpoints.join(",")),
            )
        })
}
