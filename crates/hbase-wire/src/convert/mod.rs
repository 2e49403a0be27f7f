//! Conversions between HBase's messages and ferrobase's types: pure
//! functions, no I/O, no state.
//!
//! - [`filter`]: `Filter` / `Comparator` messages (the Java classes'
//!   serialised forms) ⇄ the filter AST of `ferrobase-filter`;
//! - [`schema`]: `TableSchema` / `ColumnFamilySchema` (HBase's attribute
//!   names) ⇄ [`ferrobase_types::TableDescriptor`];
//! - [`mutation`]: a `MutationProto` and its cells ⇄ [`ferrobase_types::RowMutation`];
//! - small helpers for durability, time ranges and region specifiers here.
//!
//! Errors name what was refused (the Java class, the attribute) so the
//! server can answer `DoNotRetryIOException` with a message a user can act
//! on ([`ConvertError::exception`]).

pub mod filter;
pub mod mutation;
pub mod schema;

use crate::exception::{ExceptionClass, HBaseException};
use crate::pb;
use ferrobase_types::{DescriptorError, Durability};

/// A message that cannot be turned into ferrobase's types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// A filter or comparator class ferrobase does not implement.
    #[error("{kind} {class} is not supported by ferrobase")]
    Unsupported { kind: &'static str, class: String },
    /// A message whose bytes or fields are wrong.
    #[error("{what}: {reason}")]
    Invalid { what: String, reason: String },
    /// A schema attribute with a bad value (or a schema HBase would refuse).
    #[error(transparent)]
    Descriptor(#[from] DescriptorError),
    /// A bad table, region or server name.
    #[error(transparent)]
    Name(#[from] crate::names::NameError),
    /// Cells in the cell block that do not match the message.
    #[error(transparent)]
    CellBlock(#[from] crate::cellblock::CellBlockError),
}

impl ConvertError {
    pub(crate) fn invalid(what: impl Into<String>, reason: impl Into<String>) -> ConvertError {
        ConvertError::Invalid {
            what: what.into(),
            reason: reason.into(),
        }
    }

    /// The exception a server answers: `DoNotRetryIOException` (the
    /// request cannot succeed as sent).
    pub fn exception(&self) -> HBaseException {
        HBaseException::new(ExceptionClass::DoNotRetryIo, self.to_string())
    }
}

/// A `MutationProto.Durability` code as ferrobase's [`Durability`].
pub fn durability_from_pb(code: i32) -> Result<Durability, ConvertError> {
    use pb::mutation_proto::Durability as D;
    Ok(match D::try_from(code) {
        Ok(D::UseDefault) => Durability::UseDefault,
        Ok(D::SkipWal) => Durability::SkipWal,
        Ok(D::AsyncWal) => Durability::AsyncWal,
        Ok(D::SyncWal) => Durability::SyncWal,
        Ok(D::FsyncWal) => Durability::FsyncWal,
        Err(_) => {
            return Err(ConvertError::invalid(
                "mutation durability",
                format!("unknown code {code}"),
            ));
        }
    })
}

/// ferrobase's [`Durability`] as a `MutationProto.Durability` code.
pub fn durability_to_pb(d: Durability) -> i32 {
    use pb::mutation_proto::Durability as D;
    (match d {
        Durability::UseDefault => D::UseDefault,
        Durability::SkipWal => D::SkipWal,
        Durability::AsyncWal => D::AsyncWal,
        Durability::SyncWal => D::SyncWal,
        Durability::FsyncWal => D::FsyncWal,
    }) as i32
}

/// A time range as `[from, to)` milliseconds; an absent range or bound is
/// all time (`0` and `i64::MAX`, HBase's defaults).
pub fn time_range_from_pb(t: Option<&pb::TimeRange>) -> Result<(u64, u64), ConvertError> {
    let from = t.and_then(|t| t.from).unwrap_or(0);
    let to = t.and_then(|t| t.to).unwrap_or(i64::MAX as u64);
    if from > to {
        return Err(ConvertError::invalid(
            "time range",
            format!("from {from} is after to {to}"),
        ));
    }
    Ok((from, to))
}

/// The region a `RegionSpecifier` names: full name or encoded name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegionRef {
    /// `table,startkey,id.encoded.` (or meta's `hbase:meta,,1`).
    Name(bytes::Bytes),
    /// The encoded name alone.
    Encoded(String),
}

/// Reads a `RegionSpecifier`.
pub fn region_ref(spec: &pb::RegionSpecifier) -> Result<RegionRef, ConvertError> {
    use pb::region_specifier::RegionSpecifierType as T;
    match T::try_from(spec.r#type) {
        Ok(T::RegionName) => Ok(RegionRef::Name(spec.value.clone())),
        Ok(T::EncodedRegionName) => std::str::from_utf8(&spec.value)
            .map(|s| RegionRef::Encoded(s.to_string()))
            .map_err(|_| ConvertError::invalid("encoded region name", "not UTF-8")),
        Err(_) => Err(ConvertError::invalid(
            "region specifier",
            format!("unknown type {}", spec.r#type),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durability_codes_round_trip() {
        for d in [
            Durability::UseDefault,
            Durability::SkipWal,
            Durability::AsyncWal,
            Durability::SyncWal,
            Durability::FsyncWal,
        ] {
            assert_eq!(durability_from_pb(durability_to_pb(d)).unwrap(), d);
        }
        assert!(durability_from_pb(9).is_err());
    }

    #[test]
    fn time_ranges_default_to_all_time() {
        assert_eq!(time_range_from_pb(None).unwrap(), (0, i64::MAX as u64));
        let t = pb::TimeRange {
            from: Some(5),
            to: None,
        };
        assert_eq!(time_range_from_pb(Some(&t)).unwrap(), (5, i64::MAX as u64));
        let bad = pb::TimeRange {
            from: Some(9),
            to: Some(3),
        };
        assert!(time_range_from_pb(Some(&bad)).is_err());
    }

    #[test]
    fn region_specifiers() {
        let by_name = pb::RegionSpecifier {
            r#type: 1,
            value: bytes::Bytes::from_static(b"hbase:meta,,1"),
        };
        assert_eq!(
            region_ref(&by_name).unwrap(),
            RegionRef::Name(bytes::Bytes::from_static(b"hbase:meta,,1"))
        );
        let encoded = pb::RegionSpecifier {
            r#type: 2,
            value: bytes::Bytes::from_static(b"1588230740"),
        };
        assert_eq!(
            region_ref(&encoded).unwrap(),
            RegionRef::Encoded("1588230740".into())
        );
        let bad = pb::RegionSpecifier {
            r#type: 7,
            value: bytes::Bytes::new(),
        };
        assert!(region_ref(&bad).is_err());
    }
}
