//! The master's view of region servers in distributed mode: each one is a
//! [`RemoteRegionServer`] (the `RegionAdmin` gRPC service, called
//! synchronously from the master's blocking threads), and the set of live
//! ones comes from etcd registrations ([`EtcdCoordination`]), refreshed in
//! the background and asked afresh before a WAL split.

use super::Client;
use super::registry::{self, ServerRecord};
use crate::coordination::{Coordination, RegionServerAdmin};
use crate::error::{Result, ServerError};
use ferrobase_proto::pb::{self, region_admin_client::RegionAdminClient};
use ferrobase_proto::{ErrorCode, error_code, schema};
use ferrobase_storage::RegionInfo;
use ferrobase_types::TableDescriptor;
use parking_lot::RwLock;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Handle;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// The channel to a region server, claiming the master's user
/// (`hbase.client.user` or the OS user; its certificate wins over TLS).
type AdminChannel = InterceptedService<Channel, ferrobase_proto::UserHeader>;

/// How long one admin call may take (an open replays recovered edits).
const ADMIN_CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// HTTP/2 pings on every admin connection: a region server the master can
/// no longer reach (a partition drops packets, nothing resets) fails the
/// call after about `KEEPALIVE_INTERVAL + KEEPALIVE_TIMEOUT`, instead of
/// holding the master for [`ADMIN_CALL_TIMEOUT`]; a slow open on a live
/// connection keeps answering pings and may take its time.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);
/// How long a ping may go unanswered.
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a load report may take.
const LOAD_TIMEOUT: Duration = Duration::from_secs(3);

fn status(s: tonic::Status) -> ServerError {
    ServerError::new(error_code::code_of(&s), s.message().to_string())
}

/// A region as sent to a region server.
pub fn region_to_pb(r: &RegionInfo) -> pb::RegionSpec {
    pb::RegionSpec {
        id: r.id,
        table: r.table.clone(),
        start_key: r.start_key.clone().into(),
        end_key: r.end_key.clone().into(),
    }
}

/// A region as received from the master.
pub fn region_from_pb(r: &pb::RegionSpec) -> RegionInfo {
    RegionInfo {
        id: r.id,
        table: r.table.clone(),
        start_key: r.start_key.to_vec(),
        end_key: r.end_key.to_vec(),
    }
}

/// One region server, reached over gRPC.
pub struct RemoteRegionServer {
    record: ServerRecord,
    client: RegionAdminClient<AdminChannel>,
    handle: Handle,
    /// When the credentials in `client`'s metadata stop being good to use.
    renew_at: std::time::Instant,
}

impl RemoteRegionServer {
    /// A lazily connected handle on the server of `record`.
    pub fn new(
        record: ServerRecord,
        handle: Handle,
        tls: Option<&ferrobase_tls::ClientTls>,
        credentials: &crate::auth::Credentials,
    ) -> Result<RemoteRegionServer> {
        let endpoint = Endpoint::from_shared(format!("http://{}", record.address))
            .map_err(|e| {
                ServerError::new(
                    ErrorCode::InvalidRequest,
                    format!("bad region server address '{}': {e}", record.address),
                )
            })?
            .connect_timeout(Duration::from_secs(2))
            .timeout(ADMIN_CALL_TIMEOUT)
            .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
            .keep_alive_timeout(KEEPALIVE_TIMEOUT)
            .keep_alive_while_idle(true)
            .tcp_nodelay(true);
        Ok(RemoteRegionServer {
            client: RegionAdminClient::with_interceptor(
                ferrobase_tls::grpc::channel(endpoint, tls),
                credentials.header(),
            )
            .max_decoding_message_size(crate::standalone::MAX_MESSAGE_BYTES),
            record,
            handle,
            renew_at: std::time::Instant::now()
                .checked_add(credentials.renew_after())
                .unwrap_or_else(|| std::time::Instant::now() + Duration::from_secs(1 << 40)),
        })
    }

    fn call<T, F, Fut>(&self, f: F) -> Result<T>
    where
        F: FnOnce(RegionAdminClient<AdminChannel>) -> Fut,
        Fut: Future<Output = std::result::Result<tonic::Response<T>, tonic::Status>>,
    {
        self.handle
            .block_on(f(self.client.clone()))
            .map(tonic::Response::into_inner)
            .map_err(status)
    }

    fn split_req(
        table: &TableDescriptor,
        parent: &RegionInfo,
        daughters: &[RegionInfo],
    ) -> pb::SplitRegionRequest {
        pb::SplitRegionRequest {
            schema: Some(schema::table_to_pb(table)),
            parent: Some(region_to_pb(parent)),
            daughters: daughters.iter().map(region_to_pb).collect(),
        }
    }
}

impl RegionServerAdmin for RemoteRegionServer {
    fn address(&self) -> String {
        self.record.address.clone()
    }
    fn name(&self) -> String {
        self.record.name.clone()
    }
    fn open_region(&self, table: &TableDescriptor, region: &RegionInfo) -> Result<()> {
        let req = pb::OpenRegionRequest {
            schema: Some(schema::table_to_pb(table)),
            region: Some(region_to_pb(region)),
        };
        self.call(|mut c| async move { c.open_region(req).await })
            .map(|_| ())
    }
    fn close_region(&self, region: u64) -> Result<()> {
        let req = pb::RegionIdRequest {
            region_id: region,
            major: false,
        };
        self.call(|mut c| async move { c.close_region(req).await })
            .map(|_| ())
    }
    fn flush_region(&self, region: u64) -> Result<()> {
        let req = pb::RegionIdRequest {
            region_id: region,
            major: false,
        };
        self.call(|mut c| async move { c.flush_region(req).await })
            .map(|_| ())
    }
    fn compact_region(&self, region: u64, major: bool) -> Result<()> {
        let req = pb::RegionIdRequest {
            region_id: region,
            major,
        };
        self.call(|mut c| async move { c.compact_region(req).await })
            .map(|_| ())
    }
    fn try_load(&self) -> Result<pb::ServerLoad> {
        // Short: the master asks every server each reconcile pass, under
        // its DDL lock; a hung server must not hold that up for long.
        let mut req = tonic::Request::new(pb::Empty {});
        req.set_timeout(LOAD_TIMEOUT);
        self.call(|mut c| async move { c.get_load(req).await })
    }
    fn load(&self) -> pb::ServerLoad {
        self.try_load().unwrap_or_else(|_| pb::ServerLoad {
            server: self.address(),
            ..Default::default()
        })
    }
    fn split_point(&self, table: &TableDescriptor, parent: &RegionInfo) -> Result<Vec<u8>> {
        let req = Self::split_req(table, parent, &[]);
        self.call(|mut c| async move { c.split_point(req).await })
            .map(|r| r.split_point.to_vec())
    }
    fn split_region(
        &self,
        table: &TableDescriptor,
        parent: &RegionInfo,
        daughters: &[RegionInfo; 2],
    ) -> Result<()> {
        let req = Self::split_req(table, parent, daughters);
        self.call(|mut c| async move { c.split_region(req).await })
            .map(|_| ())
    }
    fn abort_split(&self, table: &TableDescriptor, parent: &RegionInfo) -> Result<()> {
        let req = Self::split_req(table, parent, &[]);
        self.call(|mut c| async move { c.abort_split(req).await })
            .map(|_| ())
    }
    fn set_acl(&self, state: &crate::acl::AclState) -> Result<()> {
        let req = crate::acl::wire::state_to_pb(state);
        self.call(|mut c| async move { c.set_acl(req).await })
            .map(|_| ())
    }
    fn set_compactions(&self, on: bool) -> Result<bool> {
        let req = pb::SwitchRequest {
            kind: 0,
            enabled: Some(on),
        };
        self.call(|mut c| async move { c.set_compactions(req).await })
            .map(|r| r.value)
    }
}

/// Live region servers from etcd registrations.
pub struct EtcdCoordination {
    client: Client,
    handle: Handle,
    /// TLS to region servers (`hbase.client.netty.tls.enabled`).
    tls: Option<ferrobase_tls::ClientTls>,
    /// Who the master is toward region servers.
    credentials: crate::auth::Credentials,
    servers: RwLock<Vec<Arc<RemoteRegionServer>>>,
}

impl EtcdCoordination {
    /// Coordination through `client`; call [`refresh`](Self::refresh)
    /// periodically (the distributed master does).
    pub fn new(
        client: Client,
        handle: Handle,
        tls: Option<ferrobase_tls::ClientTls>,
        credentials: crate::auth::Credentials,
    ) -> EtcdCoordination {
        EtcdCoordination {
            client,
            handle,
            tls,
            credentials,
            servers: RwLock::new(Vec::new()),
        }
    }

    /// Re-reads the registrations; keeps the handles (and channels) of
    /// servers still registered. Returns whether the set changed.
    pub async fn refresh(&self) -> Result<bool> {
        let records = registry::list(&self.client).await?;
        let old = self.servers.read().clone();
        let mut next = Vec::with_capacity(records.len());
        for r in records {
            // A handle whose token is past half its life is made anew.
            let now = std::time::Instant::now();
            match old.iter().find(|s| s.record == r && s.renew_at > now) {
                Some(s) => next.push(s.clone()),
                None => next.push(Arc::new(RemoteRegionServer::new(
                    r,
                    self.handle.clone(),
                    self.tls.as_ref(),
                    &self.credentials,
                )?)),
            }
        }
        let changed =
            next.len() != old.len() || next.iter().zip(&old).any(|(a, b)| a.record != b.record);
        *self.servers.write() = next;
        Ok(changed)
    }
}

impl Coordination for EtcdCoordination {
    fn live_servers(&self) -> Vec<Arc<dyn RegionServerAdmin>> {
        self.servers
            .read()
            .iter()
            .map(|s| s.clone() as Arc<dyn RegionServerAdmin>)
            .collect()
    }

    fn dead_servers(&self, candidates: &[String]) -> Result<Vec<String>> {
        let live: HashSet<String> = self
            .handle
            .block_on(registry::list(&self.client))?
            .into_iter()
            .map(|r| r.name)
            .collect();
        Ok(candidates
            .iter()
            .filter(|c| !live.contains(*c))
            .cloned()
            .collect())
    }
}
