//! ferrobase's servers: the region server (regions on one engine, RPC
//! handler pool, scanner leases, row locks), the master (DDL, meta,
//! assignment, cluster status), the coordination trait between them, the
//! gRPC services, and standalone mode that runs them all in one process.
//!
//! Layout: [`acl`] (permissions: HBase's AccessController), [`region_server`], [`master`] (with [`assignment`]: reconcile,
//! balancer, WAL split of dead servers; [`snapshot`]: table snapshots), [`meta`], [`coordination`],
//! [`service`], [`bulk_load`] (a region server adopting staged store files),
//! [`standalone`], and distributed mode: [`etcd`] (sessions,
//! registration, election, remote region servers) and [`distributed`] (the
//! master and region server processes); helpers [`handler_pool`],
//! [`scanner_leases`], [`row_lock`], [`split_points`], [`error`]; [`hbase_rpc`]
//! serves HBase's native RPC on the same port as gRPC. This crate
//! never reaches into the engine's internals: only the storage crate's
//! public API.

pub mod acl;
pub mod assignment;
pub mod auth;
pub mod bulk_load;
pub mod coordination;
pub mod crash_point;
pub mod distributed;
pub mod error;
pub mod etcd;
pub mod grpc_auth;
pub mod handler_pool;
pub mod hbase_rpc;
pub mod info_server;
pub mod master;
pub mod meta;
pub mod nonces;
pub mod read_path;
mod recovered;
pub mod region_server;
pub mod reversed;
pub mod row_lock;
pub mod rpc_metrics;
pub mod scanner_leases;
pub mod service;
pub mod slow_log;
pub mod snapshot;
pub mod split;
pub mod split_points;
pub mod standalone;
pub mod tls;
pub mod zookeeper_registry;

pub use error::{Result, ServerError};
pub use standalone::Standalone;

/// Accepted connections with Nagle's algorithm off: tonic ignores
/// `tcp_nodelay` for `serve_with_incoming*`, and multi-segment replies then
/// waited ~40 ms on delayed ACKs (every get did).
pub fn nodelay_incoming(
    listener: tokio::net::TcpListener,
) -> impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    use tokio_stream::StreamExt as _;
    tokio_stream::wrappers::TcpListenerStream::new(listener).map(|s| {
        s.and_then(|s| {
            s.set_nodelay(true)?;
            Ok(s)
        })
    })
}
