//! Region server registration: one key per live server under
//! [`super::RS_PREFIX`], held by the server's session lease.

use super::{Client, RS_PREFIX, err};
use crate::error::{Result, ServerError};
use ferrobase_etcd::{GetOptions, PutOptions};
use ferrobase_proto::ErrorCode;
use serde::{Deserialize, Serialize};

/// What a region server publishes about itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerRecord {
    /// Unique per process start: `host_port_startcode`; also the name of
    /// its WAL directory under `<root>/wal/`.
    pub name: String,
    /// Where clients and the master reach it (`host:port`).
    pub address: String,
}

impl ServerRecord {
    /// The record of a server listening at `address`, started at
    /// `start_ms` (milliseconds since the epoch).
    pub fn new(address: &str, start_ms: u128) -> ServerRecord {
        let safe: String = address
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        ServerRecord {
            name: format!("{safe}_{start_ms}"),
            address: address.to_string(),
        }
    }
}

/// Publishes `record` under `lease`.
pub async fn register(client: &Client, lease: i64, record: &ServerRecord) -> Result<()> {
    let value = serde_json::to_vec(record)
        .map_err(|e| ServerError::new(ErrorCode::Internal, e.to_string()))?;
    client
        .clone()
        .put(
            format!("{RS_PREFIX}{}", record.name),
            value,
            Some(PutOptions::new().with_lease(lease)),
        )
        .await
        .map_err(err("register region server"))?;
    Ok(())
}

/// Every registered region server (records that do not parse are skipped
/// with a warning: they are not ours to delete).
pub async fn list(client: &Client) -> Result<Vec<ServerRecord>> {
    let resp = client
        .clone()
        .get(RS_PREFIX, Some(GetOptions::new().with_prefix()))
        .await
        .map_err(err("list region servers"))?;
    let mut out = Vec::new();
    for kv in resp.kvs() {
        match serde_json::from_slice::<ServerRecord>(kv.value()) {
            Ok(r) => out.push(r),
            Err(e) => tracing::warn!(key = ?kv.key_str(), error = %e, "unreadable registration"),
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}
