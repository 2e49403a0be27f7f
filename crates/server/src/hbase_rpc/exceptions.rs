//! Which HBase exception a ferrobase failure is, and which region a
//! request's `RegionSpecifier` names.
//!
//! The Java client acts on the exception class: it relocates on
//! `NotServingRegionException`, backs off on `RegionTooBusyException` and
//! `CallQueueTooBigException`, and gives up at once on anything that extends
//! `DoNotRetryIOException`. So the mapping here decides retry behaviour and
//! must keep each [`ErrorCode`]'s `retryable` meaning.

use crate::error::ServerError;
use crate::region_server::RegionServer;
use ferrobase_hbase_wire::convert::{ConvertError, RegionRef, region_ref};
use ferrobase_hbase_wire::names::RegionName;
use ferrobase_hbase_wire::{ExceptionClass, HBaseException, pb};
use ferrobase_proto::ErrorCode;

/// The HBase exception class of a ferrobase error code.
pub fn class_of(code: ErrorCode) -> ExceptionClass {
    match code {
        ErrorCode::TableNotFound => ExceptionClass::TableNotFound,
        ErrorCode::TableExists => ExceptionClass::TableExists,
        ErrorCode::FamilyNotFound => ExceptionClass::NoSuchColumnFamily,
        ErrorCode::TableDisabled => ExceptionClass::TableNotEnabled,
        // HBase answers enabling an enabled table with this one too.
        ErrorCode::TableNotDisabled | ErrorCode::TableEnabled => ExceptionClass::TableNotDisabled,
        ErrorCode::RegionNotServing | ErrorCode::WrongRegion | ErrorCode::Fenced => {
            ExceptionClass::NotServingRegion
        }
        ErrorCode::RegionTooBusy => ExceptionClass::RegionTooBusy,
        ErrorCode::ServerBusy => ExceptionClass::CallQueueTooBig,
        ErrorCode::UnknownScanner => ExceptionClass::UnknownScanner,
        ErrorCode::NamespaceNotFound => ExceptionClass::NamespaceNotFound,
        ErrorCode::NamespaceExists => ExceptionClass::NamespaceExist,
        ErrorCode::SnapshotNotFound => ExceptionClass::SnapshotDoesNotExist,
        ErrorCode::SnapshotExists => ExceptionClass::SnapshotExists,
        ErrorCode::SnapshotExpired => ExceptionClass::SnapshotTtlExpired,
        ErrorCode::Io => ExceptionClass::Io,
        ErrorCode::AccessDenied | ErrorCode::Unauthenticated => ExceptionClass::AccessDenied,
        ErrorCode::CellTooLarge
        | ErrorCode::EmptyRow
        | ErrorCode::InvalidMutation
        | ErrorCode::InvalidAttribute
        | ErrorCode::InvalidRequest
        | ErrorCode::MalformedCellBlock
        | ErrorCode::InvalidFilter
        | ErrorCode::Corruption
        | ErrorCode::Internal => ExceptionClass::DoNotRetryIo,
    }
}

/// A ferrobase error as the HBase exception the Java client expects.
pub fn exception(e: ServerError) -> HBaseException {
    HBaseException::new(class_of(e.code), e.message)
}

/// A request that could not be read into ferrobase's terms.
pub fn convert(e: ConvertError) -> HBaseException {
    e.exception()
}

/// "Do not retry" with a message.
pub fn do_not_retry(message: impl Into<String>) -> HBaseException {
    HBaseException::new(ExceptionClass::DoNotRetryIo, message)
}

/// What a region specifier names on this server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `hbase:meta`'s one region, served from the master's state.
    Meta,
    /// One of ferrobase's regions, by id.
    Region(u64),
}

/// Resolves a `RegionSpecifier`: `hbase:meta,,1` (or meta's encoded name)
/// is [`Target::Meta`]; a region name built by [`super::meta_table`]
/// carries ferrobase's region id as HBase's region id, and the region must
/// be open here for that table.
pub fn target(
    rs: Option<&RegionServer>,
    spec: &pb::RegionSpecifier,
) -> Result<Target, HBaseException> {
    let meta = RegionName::meta();
    let name = match region_ref(spec).map_err(convert)? {
        RegionRef::Encoded(e) if e == meta.encoded => return Ok(Target::Meta),
        RegionRef::Encoded(e) => {
            return Err(HBaseException::new(
                ExceptionClass::UnknownRegion,
                format!(
                    "region with encoded name {e} is not known here: name regions by their full name"
                ),
            ));
        }
        RegionRef::Name(n) if n == meta.name => return Ok(Target::Meta),
        RegionRef::Name(n) => n,
    };
    let parsed = RegionName::parse(&name).map_err(|e| do_not_retry(e.to_string()))?;
    if parsed.table.is_meta() {
        return Ok(Target::Meta);
    }
    let not_here = || {
        HBaseException::new(
            ExceptionClass::NotServingRegion,
            format!(
                "region {} is not online on this server",
                String::from_utf8_lossy(&name)
            ),
        )
    };
    let rs = rs.ok_or_else(not_here)?;
    let region = rs.region(parsed.region_id).map_err(|_| not_here())?;
    if region.table().name != parsed.table.name_as_string() {
        return Err(not_here());
    }
    Ok(Target::Region(parsed.region_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_retryable_code_maps_to_a_retryable_class() {
        for &code in ErrorCode::ALL {
            let class = class_of(code);
            if code.retryable() {
                assert!(!class.do_not_retry(), "{code} must stay retryable");
            }
        }
        assert_eq!(
            class_of(ErrorCode::FamilyNotFound),
            ExceptionClass::NoSuchColumnFamily
        );
        assert_eq!(
            class_of(ErrorCode::WrongRegion),
            ExceptionClass::NotServingRegion
        );
    }

    #[test]
    fn meta_is_named_by_name_or_encoded_name() {
        let meta = RegionName::meta();
        let by_name = pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: meta.name.clone(),
        };
        let by_encoded = pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::EncodedRegionName as i32,
            value: meta.encoded.clone().into(),
        };
        assert_eq!(target(None, &by_name).ok(), Some(Target::Meta));
        assert_eq!(target(None, &by_encoded).ok(), Some(Target::Meta));
        let garbage = pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: bytes::Bytes::from_static(b"no commas"),
        };
        let e = target(None, &garbage).err().map(|e| e.class);
        assert_eq!(e, Some(ExceptionClass::DoNotRetryIo));
    }
}
