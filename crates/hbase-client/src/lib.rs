//! A Rust client for HBase 2.x's native RPC, for Apache HBase and for
//! ferrobase alike: the same calls the HBase Java client makes, without a
//! JVM. `ferrobase bench` uses it to drive a real HBase with exactly the
//! bytes it sends ferrobase.
//!
//! | module | owns |
//! | --- | --- |
//! | [`config`] | settings with HBase's names and defaults (`hbase.rpc.timeout`, `hbase.client.retries.number`, ...) |
//! | [`rpc`] | one TCP connection per server and service: preamble, connection header, pipelined calls matched by call id |
//! | [`connection`] | bootstrapping through the RPC connection registry, the connection pool, the retry loop |
//! | [`locator`] | the meta location cache: a table's regions read from `hbase:meta`, dropped when stale |
//! | [`table`] | `Get`, `Mutate` (Put, Delete) and `Multi` batches grouped per region server |
//! | [`atomic`] | `Increment`, `Append` and `checkAndMutate`, each sent with a nonce |
//! | [`scan`] | scanners, forward or reversed: open, next with caching, close, region after region |
//! | [`mutator`] | `BufferedMutator`: a write buffer flushed when full |
//! | [`admin`] | create (split keys, family attributes), enable, disable, delete, exists; flush and major-compact a table |
//! | [`error`] | [`ClientError`], naming HBase's exception classes |
//!
//! The bytes themselves (framing, messages, KeyValue cell blocks, names)
//! are `ferrobase-hbase-wire`'s. Authentication is SIMPLE, or an HBase
//! token over SASL DIGEST-MD5 ([`ClientConfig::with_token_files`]); the
//! RPC registry (`hbase.client.bootstrap.servers`) is the only one: no
//! ZooKeeper, Kerberos or TLS. Nothing received is trusted: lengths and cell
//! counts are checked before use, and bad bytes are an error, not a panic.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferrobase_hbase_client::ClientError> {
//! use ferrobase_hbase_client::{Connection, Get};
//! use ferrobase_types::RowMutation;
//!
//! let conn = Connection::connect("127.0.0.1:16020").await?;
//! let table = conn.table("t");
//! table.put(&RowMutation::new("row1").put("f", "q", "v")).await?;
//! let cells = table.get(&Get::new("row1").family("f")).await?;
//! assert_eq!(&cells[0].value[..], b"v");
//! # Ok(()) }
//! ```

pub mod admin;
pub mod atomic;
pub mod config;
pub mod connection;
pub mod error;
pub mod locator;
pub mod mutator;
mod results;
pub mod rpc;
pub mod scan;
pub mod table;

pub use admin::Admin;
pub use atomic::CheckAndMutate;
pub use config::{ClientConfig, Token};
pub use connection::Connection;
pub use error::{ClientError, Result};
pub use ferrobase_filter::CompareOp;
pub use locator::RegionLocation;
pub use mutator::{BufferedMutator, DEFAULT_WRITE_BUFFER};
pub use scan::{Scan, Scanner};
pub use table::{Get, Table};
