//! A small etcd v3 client: what ferrobase's distributed mode needs (keys,
//! prefix reads, leases kept alive, the election service), over tonic.
//!
//! Why not the `etcd-client` crate: its build script runs the system
//! `protoc`, which a fresh machine does not have, and ferrobase's first
//! command (`cargo run -p ferrobase -- standalone`) must build anywhere.
//! Here etcd's protos (in `proto/`, Apache-2.0) are compiled with protox.
//! The method names follow `etcd-client`'s, so code reads the same.
//!
//! This crate never interprets keys or values and never retries: callers
//! own their key layout and their retry policy. The `launcher` feature
//! adds [`launcher`], which starts a real etcd for tests and benchmarks.

#[cfg(feature = "launcher")]
pub mod launcher;

use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};

/// Generated etcd API types.
#[allow(clippy::all, missing_docs)]
pub mod pb {
    pub mod mvccpb {
        tonic::include_proto!("mvccpb");
    }
    pub mod authpb {
        tonic::include_proto!("authpb");
    }
    pub mod etcdserverpb {
        tonic::include_proto!("etcdserverpb");
    }
    pub mod v3electionpb {
        tonic::include_proto!("v3electionpb");
    }
}

use pb::etcdserverpb::{
    DeleteRangeRequest, LeaseGrantRequest, LeaseKeepAliveRequest, LeaseRevokeRequest, PutRequest,
    RangeRequest, kv_client::KvClient, lease_client::LeaseClient,
};
use pb::v3electionpb::{CampaignRequest, LeaderRequest, election_client::ElectionClient};

pub use pb::etcdserverpb::{
    DeleteRangeResponse, LeaseGrantResponse, LeaseKeepAliveResponse, LeaseRevokeResponse,
    PutResponse, RangeResponse as GetResponse,
};
pub use pb::mvccpb::KeyValue;
pub use pb::v3electionpb::{CampaignResponse, LeaderResponse};

/// What went wrong talking to etcd.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An endpoint that is not a URL.
    #[error("invalid etcd endpoint '{endpoint}': {reason}")]
    InvalidEndpoint { endpoint: String, reason: String },
    /// No endpoint given.
    #[error("no etcd endpoint given")]
    NoEndpoint,
    /// No endpoint could be reached.
    #[error("cannot connect to etcd: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// etcd answered with an error status.
    #[error("etcd: {}", .0.message())]
    GRpcStatus(#[from] tonic::Status),
    /// A call took longer than the client's timeout.
    #[error("etcd did not answer within {0:?}")]
    Timeout(Duration),
    /// The keep-alive stream of a lease ended.
    #[error("etcd lease keep-alive stream closed")]
    KeepAliveClosed,
}

/// How to connect.
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    connect_timeout: Duration,
    timeout: Duration,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            connect_timeout: Duration::from_secs(3),
            timeout: Duration::from_secs(5),
        }
    }
}

impl ConnectOptions {
    /// Defaults: 3 s to connect, 5 s per call.
    pub fn new() -> ConnectOptions {
        ConnectOptions::default()
    }
    /// Time allowed to open the connection.
    pub fn with_connect_timeout(mut self, t: Duration) -> Self {
        self.connect_timeout = t;
        self
    }
    /// Time allowed per call (not for `campaign`, which waits to win).
    pub fn with_timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }
}

/// Options of a put.
#[derive(Clone, Debug, Default)]
pub struct PutOptions {
    lease: i64,
}

impl PutOptions {
    /// No lease.
    pub fn new() -> PutOptions {
        PutOptions::default()
    }
    /// The key disappears with this lease.
    pub fn with_lease(mut self, lease: i64) -> Self {
        self.lease = lease;
        self
    }
}

/// Options of a get or delete.
#[derive(Clone, Debug, Default)]
pub struct GetOptions {
    prefix: bool,
}

/// Options of a delete (same as a get's).
pub type DeleteOptions = GetOptions;

impl GetOptions {
    /// Exactly the key.
    pub fn new() -> GetOptions {
        GetOptions::default()
    }
    /// Every key starting with the key.
    pub fn with_prefix(mut self) -> Self {
        self.prefix = true;
        self
    }
}

/// Options of a lease grant.
#[derive(Clone, Debug, Default)]
pub struct LeaseGrantOptions {
    id: i64,
}

impl LeaseGrantOptions {
    /// etcd picks the id.
    pub fn new() -> LeaseGrantOptions {
        LeaseGrantOptions::default()
    }
    /// Asks for a given lease id.
    pub fn with_id(mut self, id: i64) -> Self {
        self.id = id;
        self
    }
}

/// The end of the key range holding every key that starts with `prefix`
/// (etcd's convention: the prefix with its last byte below 0xff incremented;
/// `\0` for "to the end of the key space").
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// A connection to an etcd cluster (cheap to clone: clones share it).
#[derive(Clone)]
pub struct Client {
    kv: KvClient<Channel>,
    lease: LeaseClient<Channel>,
    election: ElectionClient<Channel>,
    timeout: Duration,
}

impl Client {
    /// Connects to the first reachable endpoint (`http://host:port`).
    pub async fn connect<S: AsRef<str>>(
        endpoints: &[S],
        options: Option<ConnectOptions>,
    ) -> Result<Client, Error> {
        let options = options.unwrap_or_default();
        let mut last = Error::NoEndpoint;
        for e in endpoints {
            let e = e.as_ref();
            let endpoint = Endpoint::from_shared(e.to_string())
                .map_err(|err| Error::InvalidEndpoint {
                    endpoint: e.to_string(),
                    reason: err.to_string(),
                })?
                .connect_timeout(options.connect_timeout)
                .tcp_nodelay(true);
            match endpoint.connect().await {
                Ok(channel) => {
                    return Ok(Client {
                        kv: KvClient::new(channel.clone()),
                        lease: LeaseClient::new(channel.clone()),
                        election: ElectionClient::new(channel),
                        timeout: options.timeout,
                    });
                }
                Err(err) => last = Error::Transport(err),
            }
        }
        Err(last)
    }

    /// A client on a channel the caller connected (over TLS, say: this
    /// crate dials plain `http://` endpoints only).
    pub fn from_channel(channel: Channel, options: Option<ConnectOptions>) -> Client {
        let options = options.unwrap_or_default();
        Client {
            kv: KvClient::new(channel.clone()),
            lease: LeaseClient::new(channel.clone()),
            election: ElectionClient::new(channel),
            timeout: options.timeout,
        }
    }

    async fn timed<T>(
        &self,
        f: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    ) -> Result<T, Error> {
        match tokio::time::timeout(self.timeout, f).await {
            Ok(r) => Ok(r?.into_inner()),
            Err(_) => Err(Error::Timeout(self.timeout)),
        }
    }

    /// Sets `key` to `value`.
    pub async fn put(
        &mut self,
        key: impl Into<Vec<u8>>,
        value: impl Into<Vec<u8>>,
        options: Option<PutOptions>,
    ) -> Result<PutResponse, Error> {
        let req = PutRequest {
            key: key.into(),
            value: value.into(),
            lease: options.unwrap_or_default().lease,
            ..Default::default()
        };
        let mut kv = self.kv.clone();
        self.timed(kv.put(req)).await
    }

    /// Reads `key` (or every key under it as a prefix).
    pub async fn get(
        &mut self,
        key: impl Into<Vec<u8>>,
        options: Option<GetOptions>,
    ) -> Result<GetResponse, Error> {
        let key = key.into();
        let range_end = match options {
            Some(o) if o.prefix => prefix_end(&key),
            _ => Vec::new(),
        };
        let req = RangeRequest {
            key,
            range_end,
            ..Default::default()
        };
        let mut kv = self.kv.clone();
        self.timed(kv.range(req)).await
    }

    /// Deletes `key` (or every key under it as a prefix).
    pub async fn delete(
        &mut self,
        key: impl Into<Vec<u8>>,
        options: Option<DeleteOptions>,
    ) -> Result<DeleteRangeResponse, Error> {
        let key = key.into();
        let range_end = match options {
            Some(o) if o.prefix => prefix_end(&key),
            _ => Vec::new(),
        };
        let req = DeleteRangeRequest {
            key,
            range_end,
            ..Default::default()
        };
        let mut kv = self.kv.clone();
        self.timed(kv.delete_range(req)).await
    }

    /// Grants a lease of `ttl` seconds.
    pub async fn lease_grant(
        &mut self,
        ttl: i64,
        options: Option<LeaseGrantOptions>,
    ) -> Result<LeaseGrantResponse, Error> {
        let req = LeaseGrantRequest {
            ttl,
            id: options.unwrap_or_default().id,
        };
        let mut lease = self.lease.clone();
        self.timed(lease.lease_grant(req)).await
    }

    /// Revokes a lease: its keys disappear at once.
    pub async fn lease_revoke(&mut self, id: i64) -> Result<LeaseRevokeResponse, Error> {
        let mut lease = self.lease.clone();
        self.timed(lease.lease_revoke(LeaseRevokeRequest { id }))
            .await
    }

    /// Opens a keep-alive stream for lease `id` and sends the first
    /// renewal; [`LeaseKeeper::keep_alive`] sends more, and each answer
    /// arrives on the [`LeaseKeepAliveStream`].
    pub async fn lease_keep_alive(
        &mut self,
        id: i64,
    ) -> Result<(LeaseKeeper, LeaseKeepAliveStream), Error> {
        let (tx, rx) = mpsc::channel(4);
        // The first renewal goes out with the call, so etcd answers at once.
        tx.send(LeaseKeepAliveRequest { id })
            .await
            .map_err(|_| Error::KeepAliveClosed)?;
        let mut lease = self.lease.clone();
        let stream = self
            .timed(lease.lease_keep_alive(ReceiverStream::new(rx)))
            .await?;
        Ok((
            LeaseKeeper { id, sender: tx },
            LeaseKeepAliveStream { stream },
        ))
    }

    /// Campaigns in election `name` with `value` under `lease`; resolves
    /// once this campaigner is the leader (no timeout: waiting is the point).
    pub async fn campaign(
        &mut self,
        name: impl Into<Vec<u8>>,
        value: impl Into<Vec<u8>>,
        lease: i64,
    ) -> Result<CampaignResponse, Error> {
        let req = CampaignRequest {
            name: name.into(),
            lease,
            value: value.into(),
        };
        Ok(self.election.clone().campaign(req).await?.into_inner())
    }

    /// The current leader of election `name` (etcd answers an error
    /// "election: no leader" when there is none).
    pub async fn leader(&mut self, name: impl Into<Vec<u8>>) -> Result<LeaderResponse, Error> {
        let req = LeaderRequest { name: name.into() };
        let mut election = self.election.clone();
        self.timed(election.leader(req)).await
    }
}

/// Sends renewals of one lease.
pub struct LeaseKeeper {
    id: i64,
    sender: mpsc::Sender<LeaseKeepAliveRequest>,
}

impl LeaseKeeper {
    /// The lease.
    pub fn id(&self) -> i64 {
        self.id
    }
    /// Sends one renewal.
    pub async fn keep_alive(&mut self) -> Result<(), Error> {
        self.sender
            .send(LeaseKeepAliveRequest { id: self.id })
            .await
            .map_err(|_| Error::KeepAliveClosed)
    }
}

/// etcd's answers to renewals.
pub struct LeaseKeepAliveStream {
    stream: tonic::Streaming<LeaseKeepAliveResponse>,
}

impl LeaseKeepAliveStream {
    /// The next answer; `None` when etcd closed the stream.
    pub async fn message(&mut self) -> Result<Option<LeaseKeepAliveResponse>, Error> {
        Ok(self.stream.message().await?)
    }
}

impl KeyValue {
    /// The key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }
    /// The key as text.
    pub fn key_str(&self) -> Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(&self.key)
    }
    /// The value.
    pub fn value(&self) -> &[u8] {
        &self.value
    }
    /// The value as text.
    pub fn value_str(&self) -> Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(&self.value)
    }
    /// The lease holding the key (0: none).
    pub fn lease(&self) -> i64 {
        self.lease
    }
}

impl GetResponse {
    /// The keys read.
    pub fn kvs(&self) -> &[KeyValue] {
        &self.kvs
    }
}

impl LeaseGrantResponse {
    /// The lease id.
    pub fn id(&self) -> i64 {
        self.id
    }
    /// Its time to live in seconds.
    pub fn ttl(&self) -> i64 {
        self.ttl
    }
}

impl LeaseKeepAliveResponse {
    /// The lease id.
    pub fn id(&self) -> i64 {
        self.id
    }
    /// Remaining time to live in seconds; 0 or less: the lease is gone.
    pub fn ttl(&self) -> i64 {
        self.ttl
    }
}

impl LeaderResponse {
    /// The leader's key and value, if there is a leader.
    pub fn kv(&self) -> Option<&KeyValue> {
        self.kv.as_ref()
    }
}

impl CampaignResponse {
    /// The leader key this campaigner now holds.
    pub fn leader(&self) -> Option<&pb::v3electionpb::LeaderKey> {
        self.leader.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_end_is_etcds() {
        assert_eq!(prefix_end(b"/a/"), b"/a0".to_vec());
        assert_eq!(prefix_end(b"a\xff"), b"b".to_vec());
        assert_eq!(prefix_end(b"\xff\xff"), vec![0]);
        assert_eq!(prefix_end(b""), vec![0]);
    }
}
