//! Table schemas as the Java client sends them ⇄ ferrobase's
//! [`TableDescriptor`].
//!
//! A `ColumnFamilySchema` carries its attributes as text pairs with HBase's
//! names (`VERSIONS` → `3`, `TTL` → `2147483647` for FOREVER,
//! `BLOOMFILTER` → `ROW`, ...). Attributes ferrobase implements are parsed
//! with [`FamilyDescriptor::set`], so the wire accepts what the shell
//! accepts and a bad value is an error naming the attribute and its valid
//! values. Attributes ferrobase does not implement (`REPLICATION_SCOPE`,
//! `CACHE_DATA_ON_WRITE`, a table's `MAX_FILESIZE`, ...) are accepted,
//! since the Java client sends many of them with their defaults on every
//! create, and reported in [`Schema::ignored`] for the server to log. This
//! module never validates beyond that.

use super::ConvertError;
use crate::names::TableName;
use crate::pb;
use bytes::Bytes;
use ferrobase_types::{Durability, FamilyDescriptor, TableDescriptor};

/// HBase's TTL for "forever" (`HConstants.FOREVER`, `Integer.MAX_VALUE`).
pub const TTL_FOREVER: &str = "2147483647";

/// Family attributes ferrobase implements, by HBase's names.
const FAMILY_ATTRIBUTES: &[&str] = &[
    "VERSIONS",
    "MIN_VERSIONS",
    "TTL",
    "BLOCKSIZE",
    "BLOCKCACHE",
    "BLOOMFILTER",
    "COMPRESSION",
    "DATA_BLOCK_ENCODING",
    "IN_MEMORY",
    "KEEP_DELETED_CELLS",
];

/// A decoded schema and what of it ferrobase ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema<T> {
    pub descriptor: T,
    /// `name=value` of each attribute or configuration entry that was
    /// accepted but has no effect in ferrobase.
    pub ignored: Vec<String>,
}

fn text<'a>(what: &str, b: &'a Bytes) -> Result<&'a str, ConvertError> {
    std::str::from_utf8(b).map_err(|_| ConvertError::invalid(what.to_string(), "is not UTF-8"))
}

fn pair(k: &str, v: String) -> pb::BytesBytesPair {
    pb::BytesBytesPair {
        first: Bytes::from(k.to_string()),
        second: Bytes::from(v),
    }
}

/// Applies a family schema's attributes on top of `base` (ModifyColumn
/// keeps what the message leaves out).
pub fn apply_family(
    base: &mut FamilyDescriptor,
    f: &pb::ColumnFamilySchema,
) -> Result<Vec<String>, ConvertError> {
    let mut ignored = Vec::new();
    for a in &f.attributes {
        let key = text("column family attribute name", &a.first)?;
        let value = text("column family attribute value", &a.second)?;
        let upper = key.to_ascii_uppercase();
        if FAMILY_ATTRIBUTES.contains(&upper.as_str()) {
            base.set(&upper, value)?;
        } else {
            ignored.push(format!("{key}={value}"));
        }
    }
    for c in &f.configuration {
        ignored.push(format!("{}={}", c.name, c.value));
    }
    Ok(ignored)
}

/// A family from the wire, starting from HBase's defaults.
pub fn family_from_pb(
    f: &pb::ColumnFamilySchema,
) -> Result<Schema<FamilyDescriptor>, ConvertError> {
    let name = text("column family name", &f.name)?;
    let mut d = FamilyDescriptor::new(name)?;
    let ignored = apply_family(&mut d, f)?;
    Ok(Schema {
        descriptor: d,
        ignored,
    })
}

/// A family as the Java client expects it back: every attribute with its
/// raw value (TTL in seconds, `2147483647` for FOREVER), plus
/// `REPLICATION_SCOPE` 0, which HBase always reports.
pub fn family_to_pb(f: &FamilyDescriptor) -> pb::ColumnFamilySchema {
    let ttl = f
        .ttl_seconds
        .map_or_else(|| TTL_FOREVER.to_string(), |s| s.to_string());
    let attributes = vec![
        pair("BLOOMFILTER", f.bloomfilter.to_string()),
        pair("IN_MEMORY", f.in_memory.to_string()),
        pair("VERSIONS", f.versions.to_string()),
        pair("KEEP_DELETED_CELLS", f.keep_deleted_cells.to_string()),
        pair("DATA_BLOCK_ENCODING", f.data_block_encoding.to_string()),
        pair("COMPRESSION", f.compression.to_string()),
        pair("TTL", ttl),
        pair("MIN_VERSIONS", f.min_versions.to_string()),
        pair("BLOCKCACHE", f.blockcache.to_string()),
        pair("BLOCKSIZE", f.blocksize.to_string()),
        pair("REPLICATION_SCOPE", "0".to_string()),
    ];
    pb::ColumnFamilySchema {
        name: Bytes::from(f.name.clone()),
        attributes,
        configuration: Vec::new(),
    }
}

/// A table schema from the wire. The descriptor's name is HBase's string
/// form (`t` in the default namespace, `ns:t` otherwise).
pub fn table_from_pb(t: &pb::TableSchema) -> Result<Schema<TableDescriptor>, ConvertError> {
    let name = t
        .table_name
        .as_ref()
        .ok_or_else(|| ConvertError::invalid("table schema", "has no table name"))?;
    let name = TableName::from_pb(name)?;
    let mut ignored = Vec::new();
    let mut families = Vec::with_capacity(t.column_families.len());
    for f in &t.column_families {
        let s = family_from_pb(f)?;
        ignored.extend(
            s.ignored
                .into_iter()
                .map(|i| format!("{}:{i}", s.descriptor.name)),
        );
        families.push(s.descriptor);
    }
    let mut d = TableDescriptor::new(&name.to_string(), families)?;
    for a in &t.attributes {
        let key = text("table attribute name", &a.first)?;
        let value = text("table attribute value", &a.second)?;
        if key.eq_ignore_ascii_case("DURABILITY") {
            d.durability = value.parse::<Durability>().map_err(|_| {
                ferrobase_types::DescriptorError::InvalidValue {
                    attribute: "DURABILITY",
                    value: value.to_string(),
                    expected: format!("valid values: {}", Durability::NAMES.join(", ")),
                }
            })?;
        } else {
            ignored.push(format!("{key}={value}"));
        }
    }
    for c in &t.configuration {
        ignored.push(format!("{}={}", c.name, c.value));
    }
    Ok(Schema {
        descriptor: d,
        ignored,
    })
}

/// A table schema as the Java client expects it back. `DURABILITY` is sent
/// only when it is not `USE_DEFAULT`, as HBase omits default table values.
pub fn table_to_pb(t: &TableDescriptor) -> Result<pb::TableSchema, ConvertError> {
    let name = TableName::parse(&t.name)?;
    let mut attributes = Vec::new();
    if t.durability != Durability::UseDefault {
        attributes.push(pair("DURABILITY", t.durability.name().to_string()));
    }
    Ok(pb::TableSchema {
        table_name: Some(name.to_pb()),
        attributes,
        column_families: t.families.iter().map(family_to_pb).collect(),
        configuration: Vec::new(),
    })
}
