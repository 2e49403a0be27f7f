//! ferrobase's data model, shared by every layer above it.
//!
//! This crate owns the vocabulary: a [`Cell`] and the encoded [`key`] that
//! orders cells the way HBase does, [`Mutation`]s grouped into an atomic
//! [`RowMutation`] (kept as encoded [`CellRun`]s), [`Durability`], the table and column-family
//! [`descriptor`]s with every HBase attribute, the process [`Settings`] with
//! HBase's names and defaults, and the `\xNN` byte notation of HBase's
//! `Bytes.toStringBinary`.
//!
//! It must never do I/O or depend on another ferrobase crate: everything
//! else depends on it.

#![deny(clippy::indexing_slicing)]

pub mod binary;
pub mod cell;
pub mod cell_run;
pub mod descriptor;
pub mod durability;
pub mod key;
pub mod mutation;
pub mod nonce;
pub mod settings;
pub mod varint;

pub use cell::{Cell, CellType, LATEST_TIMESTAMP};
pub use cell_run::{CellRun, RunCell, RunSummary};
pub use descriptor::{
    BloomType, Compression, DataBlockEncoding, DescriptorError, FamilyDescriptor, KeepDeletedCells,
    TableDescriptor,
};
pub use durability::Durability;
pub use mutation::{FamilyCells, Mutation, MutationError, RowMutation};
pub use settings::{ClientAuth, Settings, SettingsError};
