//! ferrobase's HBase Thrift1 gateway: HBase's `Hbase.thrift` service on
//! TCP (default port 9090), so happybase and other HBase Thrift clients
//! work against ferrobase unchanged.
//!
//! - [`protocol`]: Thrift binary and compact protocols, as value trees;
//! - [`transport`]: buffered and framed transports, detected per connection;
//! - [`hbase_types`]: the IDL's structs and exceptions;
//! - `service`: the `Hbase` methods, mapped onto `ferrobase_client`;
//! - [`server`]: the TCP server ([`ThriftServer`]).
//!
//! The codec is written by hand (no `thrift` crate): the IDL is small and
//! frozen, and owning the decoder is what lets every size be bounded.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use ferrobase_thrift::{GatewayConfig, ThriftServer};
//! use ferrobase_types::Settings;
//! let settings = Settings::default();
//! let conn = ferrobase_client::Connection::connect("127.0.0.1:16020", settings.clone())?;
//! let config = GatewayConfig::from_settings(&settings, "0.0.0.0".parse()?)?;
//! let server = ThriftServer::start(conn, config).await?;
//! println!("Thrift gateway on {}", server.addr());
//! # Ok(()) }
//! ```

#![deny(clippy::indexing_slicing)]

pub mod error;
pub mod hbase_types;
pub mod http;
pub mod protocol;
pub mod server;
mod service;
pub mod transport;

pub use error::{CodecError, ServiceError, StartError};
pub use server::{GatewayConfig, ThriftServer};
