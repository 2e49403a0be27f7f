//! HBase 2.x native RPC for ferrobase: what the unmodified HBase Java
//! client (and the HBase shell, YCSB's `hbase2` binding, ...) sends and
//! expects, as a library with no I/O. The server owns sockets, dispatch and
//! storage; a Rust HBase client can use the same pieces the other way.
//!
//! | module | owns |
//! | --- | --- |
//! | [`pb`] | HBase's messages (package `hbase.pb`, HBase's names and field numbers), generated from our own subset in `proto/` |
//! | [`frame`] | the connection preamble, connection header and call frames, both directions, decoded incrementally from a `BytesMut` |
//! | [`cellblock`] | the `KeyValueCodec` / `KeyValueCodecWithTags` cell blocks, read zero-copy or straight into cell runs, and written |
//! | [`names`] | table names with namespaces, region names and encoded names, server names, `PBUF` values |
//! | [`exception`] | HBase's exception classes, their retry flags, and the two wire forms of an exception |
//! | [`convert`] | filters, comparators, table schemas and mutations ⇄ ferrobase's types |
//! | [`error`] | [`WireError`], every way the bytes can be wrong |
//! | [`sasl`] | the SASL exchange's frames after a KERBEROS/DIGEST preamble, and DIGEST-MD5 (RFC 2831) for token authentication |
//! | [`token`] | HBase token identifiers and Hadoop's token storage file (`HDTS`) |
//! | [`zookeeper`] | ZooKeeper's client protocol, enough for HBase's ZooKeeper connection registry, and the znodes it reads |
//!
//! # A server connection
//!
//! ```no_run
//! use bytes::BytesMut;
//! use ferrobase_hbase_wire::cellblock::{CellBlockReader, CellCodec};
//! use ferrobase_hbase_wire::frame::{self, ServerDecoder, ServerEvent};
//! use ferrobase_hbase_wire::{pb, HBaseException, ExceptionClass};
//!
//! # fn read_more(_: &mut BytesMut) {}
//! # fn write(_: &[u8]) {}
//! let mut decoder = ServerDecoder::default(); // 256 MiB frames at most
//! let mut buf = BytesMut::new();
//! let mut codec = None;
//! let mut out = BytesMut::new();
//! loop {
//!     read_more(&mut buf);
//!     while let Some(event) = match decoder.decode(&mut buf) {
//!         Ok(e) => e,
//!         Err(e) => {
//!             // The stream cannot be trusted: answer with HBase's class
//!             // for the error (FatalConnectionException, ...) and close.
//!             let _ = frame::encode_exception(&mut out, frame::NO_CALL_ID, &e.exception().to_response());
//!             return write(&out);
//!         }
//!     } {
//!         match event {
//!             ServerEvent::ConnectionHeader(h) => {
//!                 // h.service_name: "ClientService", "MasterService", ...
//!                 codec = CellCodec::from_connection_header(&h).ok().flatten();
//!             }
//!             ServerEvent::Call(call) => match call.method() {
//!                 "Mutate" => {
//!                     let req: pb::MutateRequest = call.decode_param().unwrap_or_default();
//!                     let block = call.cell_block.clone().unwrap_or_default();
//!                     let mut cells = CellBlockReader::new(&block);
//!                     let m = ferrobase_hbase_wire::convert::mutation::mutation_from_pb(
//!                         &req.mutation, Some(&mut cells));
//!                     // ... apply, then:
//!                     let resp = pb::MutateResponse { processed: Some(true), ..Default::default() };
//!                     let _ = frame::encode_response(&mut out, call.call_id(), &resp, None);
//!                 }
//!                 other => {
//!                     let e = HBaseException::unsupported_method("ClientService", other);
//!                     let _ = frame::encode_exception(&mut out, call.call_id(), &e.to_response());
//!                 }
//!             },
//!             ServerEvent::RegistryPreamble => {
//!                 let resp = pb::GetConnectionRegistryResponse { cluster_id: "id".into() };
//!                 let _ = frame::encode_response(&mut out, frame::NO_CALL_ID, &resp, None);
//!                 return write(&out); // then close
//!             }
//!             ServerEvent::SecurityPreamble => {
//!                 let e = HBaseException::new(ExceptionClass::FatalConnection, "security is not enabled");
//!                 let _ = frame::encode_exception(&mut out, frame::NO_CALL_ID, &e.to_response());
//!             }
//!             _ => {}
//!         }
//!     }
//!     write(&out);
//!     out.clear();
//! }
//! ```
//!
//! Responses carry cells in a cell block when the connection has a codec:
//! encode them with [`cellblock::encode_cells`] (or
//! [`convert::mutation::result_to_pb`]) into one buffer, then
//! [`frame::encode_response`] (or [`frame::encode_response_head`] and a
//! second write of the block). Without a codec, cells go inline
//! ([`convert::mutation::cell_to_pb`]).
//!
//! This crate never opens a socket, never blocks, and never panics or
//! allocates on a length from the network that it has not checked.
//!
//! # Testing
//!
//! Unit tests sit beside each module: golden bytes written by hand from
//! HBase's format, seeded property tests (round trips, garbage, truncation)
//! and HBase's own constants (meta's encoded name `1588230740`). The
//! repository's `fuzz/` crate holds cargo-fuzz targets for the frame,
//! cell-block and filter decoders (`hbase_*`; `scripts/fuzz.sh 60
//! hbase_frame_decoder`, docs/reliability.md).

#![deny(clippy::indexing_slicing)]

pub mod cellblock;
pub mod convert;
pub mod error;
pub mod exception;
pub mod frame;
pub mod md5;
pub mod names;
pub mod sasl;
pub mod token;
pub mod zookeeper;

/// HBase's messages (package `hbase.pb`), generated by prost from `proto/`.
/// `bytes` fields are [`bytes::Bytes`], so decoding from a received buffer
/// slices it instead of copying.
#[allow(
    clippy::all,
    clippy::pedantic,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    missing_docs
)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/hbase.pb.rs"));
}

pub use cellblock::{CellBlockError, CellBlockReader, CellCodec, KeyValueRef, KeyValueType};
pub use error::WireError;
pub use exception::{ExceptionClass, HBaseException, RemoteException};
pub use frame::{RequestFrame, ResponseFrame, ServerDecoder, ServerEvent};
pub use names::{RegionName, ServerName, TableName};
