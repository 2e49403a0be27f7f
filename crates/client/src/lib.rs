//! ferrobase's client library.
//!
//! - [`Connection`]: channels to the master and region servers
//!   (`hbase.client.ipc.pool.size` per server), region location cache,
//!   retries with backoff;
//! - [`Table`]: put, get, delete, scan ([`ResultScanner`]), batch,
//!   increment, append, check_and_mutate;
//! - [`Admin`]: DDL, flush, compaction, cluster status, permissions
//!   ([`access`]: grant, revoke, user_permission);
//! - [`BufferedMutator`]: a write buffer counted in encoded bytes;
//! - [`bulk_load`]: staging directories and handing regions sorted store
//!   files (HBase's `completebulkload` calls).
//!
//! Rows travel as cell blocks ([`ferrobase_proto::cellblock`]). The client
//! never depends on the storage engine.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferrobase_client::ClientError> {
//! use ferrobase_client::{Connection, Get};
//! use ferrobase_types::{RowMutation, Settings};
//! let conn = Connection::connect("127.0.0.1:16020", Settings::default())?;
//! let t = conn.table("t");
//! t.put(RowMutation::new("row1").put("f", "q", "v")).await?;
//! let r = t.get(Get::new("row1")).await?;
//! assert_eq!(r.value(b"f", b"q").map(|v| &v[..]), Some(&b"v"[..]));
//! # Ok(()) }
//! ```

pub mod access;
pub mod admin;
pub mod buffered_mutator;
pub mod bulk_load;
pub mod connection;
pub mod error;
pub mod read;
pub mod scanner;
pub mod table;

pub use access::{Permission, WhoAmI};
pub use admin::{
    Admin, ClusterStatus, NamespaceDescription, SnapshotDescription, SplitAlgorithm,
    TableDescription,
};
pub use buffered_mutator::{BufferedMutator, MutationErrors, MutationFailure};
pub use bulk_load::{BulkLoaded, StagingDir};
pub use connection::{Connection, RegionLocation};
pub use error::{ClientError, Result};
pub use ferrobase_proto::ErrorCode;
pub use read::{Get, ReadSpec, RowResult, Scan};
pub use scanner::ResultScanner;
pub use table::Table;
