//! TLS for every ferrobase port and client, with HBase's settings
//! (`hbase.server.netty.tls.*`, `hbase.client.netty.tls.*`,
//! `hbase.rpc.tls.*`, `hbase.ssl.enabled`, `hbase.thrift.ssl.enabled`).
//!
//! - [`store`]: key stores and trust stores (PEM, PKCS12 or JKS), read
//!   from the paths the settings name; [`jks`]: Java's JKS format;
//! - [`ServerTls`] ([`server`]): a port's TLS identity and client
//!   certificate policy, and the acceptor that tells a TLS ClientHello
//!   (first byte `0x16`) from plaintext, refusing plaintext when the port
//!   is TLS-only;
//! - [`ClientTls`] ([`client`]): the client side, for gRPC channels
//!   ([`grpc`]) and raw sockets;
//! - [`ServerStream`] ([`stream`]): what a server serves after accepting,
//!   TLS or plain, with the peer's identity for gRPC's request extensions;
//! - [`PeerIdentity`] ([`identity`]): a client certificate's subject, its
//!   CN taken as the user name;
//! - [`handshake`]: a failed handshake's cause in words (expired
//!   certificate, unknown CA, missing client certificate, plaintext peer).
//!
//! rustls with the ring provider, chosen explicitly (never the process
//! default). This crate owns no protocol: it hands streams to the servers
//! that speak gRPC, HBase RPC, Thrift or HTTP over them.

pub mod client;
mod confirm;
pub mod error;
pub mod grpc;
pub mod handshake;
pub mod identity;
pub mod jks;
pub mod server;
pub mod store;
pub mod stream;
#[cfg(feature = "test-certs")]
pub mod testing;

pub use client::ClientTls;
pub use error::TlsError;
pub use identity::PeerIdentity;
pub use server::{Accepted, ServerTls};
pub use stream::{ConnectionInfo, ServerStream};

use std::sync::Arc;

/// The crypto provider every configuration is built with.
pub(crate) fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}
