//! Master election with etcd's election API: every master campaigns with
//! its session's lease; etcd makes the oldest campaigner the leader, and
//! the next one takes over when the leader's lease expires.

use super::{Client, MASTER_ELECTION, err};
use crate::error::Result;

/// Waits until this master (reachable at `address`) is the active one.
pub async fn campaign(client: &Client, lease: i64, address: &str) -> Result<()> {
    client
        .clone()
        .campaign(MASTER_ELECTION, address, lease)
        .await
        .map_err(err("master election"))?;
    Ok(())
}

/// The active master's address, if any.
pub async fn active_master(client: &Client) -> Result<Option<String>> {
    let resp = client.clone().leader(MASTER_ELECTION).await;
    match resp {
        Ok(r) => Ok(r
            .kv()
            .map(|kv| String::from_utf8_lossy(kv.value()).into_owned())),
        // etcd answers "election: no leader" as an error.
        Err(ferrobase_etcd::Error::GRpcStatus(s)) if s.message().contains("no leader") => Ok(None),
        Err(e) => Err(err("master election leader")(e)),
    }
}
