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
use ferrobase_types::Settings;

pub use ferrobase_etcd::Client;

/// Prefix of region server registrations.
pub const RS_PREFIX: &str = "/ferrobase/rs/";
/// Name of the master election.
pub const MASTER_ELECTION: &str = "/ferrobase/master";

/// An etcd failure as a server error naming what was attempted.
pub(crate) fn err(what: &str) -> impl Fn(ferrobase_etcd::Error) -> ServerError + '_ {
    move |e| ServerError::new(ErrorCode::Io, format!("etcd {what}: {e}"))
}

/// Connects to the etcd cluster at `endpoints`: `http://host:port`, or
/// `https://host:port` over TLS with `zookeeper.ssl.*` (falling back to
/// `hbase.rpc.tls.*`) as trust and client certificate, the settings HBase
/// uses for TLS to its coordination service.
pub async fn connect(endpoints: &[String], settings: &Settings) -> crate::Result<Client> {
    if endpoints.is_empty() {
        return Err(ServerError::new(
            ErrorCode::InvalidRequest,
            "no etcd endpoint given (--etcd http://host:2379[,...])",
        ));
    }
    let options = ferrobase_etcd::ConnectOptions::new()
        .with_connect_timeout(std::time::Duration::from_secs(3))
        .with_timeout(std::time::Duration::from_secs(5));
    let failed = |e: &dyn std::fmt::Display| {
        ServerError::new(
            ErrorCode::Io,
            format!("cannot connect to etcd at {}: {e}", endpoints.join(",")),
        )
    };
    let tls_endpoints: Vec<&str> = endpoints
        .iter()
        .filter_map(|e| e.strip_prefix("https://"))
        .collect();
    if tls_endpoints.is_empty() {
        return Client::connect(endpoints, Some(options))
            .await
            .map_err(|e| failed(&e));
    }
    if tls_endpoints.len() != endpoints.len() {
        return Err(ServerError::new(
            ErrorCode::InvalidRequest,
            format!(
                "--etcd mixes https:// and plain endpoints ({}): give all of them one scheme",
                endpoints.join(",")
            ),
        ));
    }
    let tls = etcd_tls(settings)?;
    let mut last = String::from("no endpoint");
    for hostport in tls_endpoints {
        // The connector does TLS; tonic sees a plain URI.
        let endpoint = tonic::transport::Endpoint::from_shared(format!("http://{hostport}"))
            .map_err(|e| {
                ServerError::new(
                    ErrorCode::InvalidRequest,
                    format!("bad etcd endpoint https://{hostport}: {e}"),
                )
            })?
            .connect_timeout(std::time::Duration::from_secs(3))
            .tcp_nodelay(true);
        match ferrobase_tls::grpc::connect(endpoint, &tls).await {
            Ok(channel) => {
                // etcd speaks first over HTTP/2, so a client certificate it
                // refuses shows only at the first call: make one now and
                // say what it means.
                let mut client = Client::from_channel(channel, Some(options.clone()));
                match client.get("/ferrobase/tls-probe", None).await {
                    Ok(_) => return Ok(client),
                    Err(e) => {
                        last = format!(
                            "https://{hostport}: the first call over TLS failed ({e}): \
                             etcd refused this process's client certificate, or there is \
                             none (zookeeper.ssl.keyStore.location)"
                        );
                    }
                }
            }
            Err(e) => {
                last = ferrobase_tls::grpc::tls_cause(&e)
                    .map(|c| format!("https://{hostport}: {c}"))
                    .unwrap_or_else(|| format!("https://{hostport}: {e}"));
            }
        }
    }
    Err(failed(&last))
}

/// The client TLS for etcd: `zookeeper.ssl.trustStore.location` and
/// `zookeeper.ssl.keyStore.location` where set, else the RPC ones.
fn etcd_tls(settings: &Settings) -> crate::Result<ferrobase_tls::ClientTls> {
    let mut s = settings.clone();
    s.tls_client_enabled = true;
    if !settings.etcd_tls_truststore_location.is_empty() {
        s.tls_truststore_location = settings.etcd_tls_truststore_location.clone();
    }
    if !settings.etcd_tls_keystore_location.is_empty() {
        s.tls_keystore_location = settings.etcd_tls_keystore_location.clone();
    }
    ferrobase_tls::ClientTls::from_settings_h2(&s)
        .map_err(|e| {
            ServerError::new(
                ErrorCode::InvalidRequest,
                format!("TLS to etcd (zookeeper.ssl.trustStore.location / keyStore.location): {e}"),
            )
        })?
        .ok_or_else(|| ServerError::new(ErrorCode::Internal, "TLS to etcd was not configured"))
}
