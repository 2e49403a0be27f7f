//! HBase's filter language for ferrobase: the text clients send
//! (`"PrefixFilter('row') AND ValueFilter(=, 'binary:v')"`), parsed once
//! per get or scanner on the server and applied to each row the region
//! returns.
//!
//! - [`parse`]: text → [`Filter`], with errors naming the column and what
//!   was expected ([`FilterError`]); no input panics;
//! - [`ScanFilter`]: a filter's evaluation over rows with HBase semantics,
//!   holding per-scanner state (PageFilter counts, WHILE);
//! - [`comparator`]: `binary:`, `binaryprefix:`, `substring:`,
//!   `regexstring:` and the compare operators.
//!
//! This crate never touches storage or the network.

pub mod comparator;
pub mod error;
pub mod eval;
pub mod filter;
pub mod lexer;
pub mod parser;
pub mod registry;

pub use comparator::{Comparator, CompareOp};
pub use error::FilterError;
pub use eval::ScanFilter;
pub use filter::Filter;
pub use parser::parse;
pub use registry::FILTER_NAMES;

#[cfg(test)]
mod eval_tests;
