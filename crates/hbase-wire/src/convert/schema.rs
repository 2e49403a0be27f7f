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
use ferrobase_types::{DataBlockEncoding, Durability, FamilyDescriptor, TableDescriptor};

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
    "ROW_CACHE",
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
        } else if upper == "REPLICATION_SCOPE" {
            // Always reported back as 0 (no replication).
            ignored.push(format!("{key}={value}"));
        } else {
            // Kept and shown back (getValue); not acted on.
            base.values.insert(key.to_string(), value.to_string());
        }
    }
    for c in &f.configuration {
        ignored.push(format!("{}={}", c.name, c.value));
    }
    // After all of them: HBase's client sends its attribute map in hash order.
    base.check()?;
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

/// The DATA_BLOCK_ENCODING an HBase 2 client can parse: its enum has no
/// PREFIX_TREE (HBase 2 removed it), so a PREFIX_TREE family is shown as
/// PREFIX, the encoding whose entries it shares.
fn hbase2_encoding(e: DataBlockEncoding) -> String {
    match e {
        DataBlockEncoding::PrefixTree => DataBlockEncoding::Prefix.to_string(),
        other => other.to_string(),
    }
}

/// A family as the Java client expects it back: every attribute with its
/// raw value (TTL in seconds, `2147483647` for FOREVER), plus
/// `REPLICATION_SCOPE` 0, which HBase always reports.
pub fn family_to_pb(f: &FamilyDescriptor) -> pb::ColumnFamilySchema {
    let ttl = f
        .ttl_seconds
        .map_or_else(|| TTL_FOREVER.to_string(), |s| s.to_string());
    let mut attributes = vec![
        pair("BLOOMFILTER", f.bloomfilter.to_string()),
        pair("IN_MEMORY", f.in_memory.to_string()),
        pair("VERSIONS", f.versions.to_string()),
        pair("KEEP_DELETED_CELLS", f.keep_deleted_cells.to_string()),
        pair(
            "DATA_BLOCK_ENCODING",
            hbase2_encoding(f.data_block_encoding),
        ),
        pair("COMPRESSION", f.compression.to_string()),
        pair("TTL", ttl),
        pair("MIN_VERSIONS", f.min_versions.to_string()),
        pair("BLOCKCACHE", f.blockcache.to_string()),
        pair("BLOCKSIZE", f.blocksize.to_string()),
        pair("REPLICATION_SCOPE", "0".to_string()),
    ];
    if f.row_cache {
        // ferrobase's own: a Java client reads it with getValue.
        attributes.push(pair("ROW_CACHE", "true".to_string()));
    }
    let attributes: Vec<_> = attributes
        .into_iter()
        .chain(f.values.iter().map(|(k, v)| pair(k, v.clone())))
        .collect();
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
            if !key.eq_ignore_ascii_case("IS_META") {
                // Kept and shown back (getMaxFileSize, getValue("owner")).
                d.values.insert(key.to_string(), value.to_string());
            }
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
    for (k, v) in &t.values {
        attributes.push(pair(k, v.clone()));
    }
    Ok(pb::TableSchema {
        table_name: Some(name.to_pb()),
        attributes,
        column_families: t.families.iter().map(family_to_pb).collect(),
        configuration: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::{BloomType, Compression, KeepDeletedCells};

    fn attrs(pairs: &[(&str, &str)]) -> Vec<pb::BytesBytesPair> {
        pairs.iter().map(|(k, v)| pair(k, v.to_string())).collect()
    }

    /// What the Java client sends for `create 'ns:t', {NAME => 'f', VERSIONS => 3}`:
    /// every default, plus attributes ferrobase does not implement.
    fn java_create() -> pb::TableSchema {
        pb::TableSchema {
            table_name: Some(TableName::parse("ns:t").unwrap().to_pb()),
            attributes: attrs(&[("DURABILITY", "ASYNC_WAL"), ("MAX_FILESIZE", "10737418240")]),
            column_families: vec![pb::ColumnFamilySchema {
                name: Bytes::from_static(b"f"),
                attributes: attrs(&[
                    ("BLOOMFILTER", "ROW"),
                    ("REPLICATION_SCOPE", "0"),
                    ("VERSIONS", "3"),
                    ("MIN_VERSIONS", "0"),
                    ("COMPRESSION", "NONE"),
                    ("TTL", TTL_FOREVER),
                    ("BLOCKSIZE", "65536"),
                    ("IN_MEMORY", "false"),
                    ("BLOCKCACHE", "true"),
                    ("KEEP_DELETED_CELLS", "FALSE"),
                    ("DATA_BLOCK_ENCODING", "NONE"),
                    ("CACHE_DATA_ON_WRITE", "false"),
                ]),
                configuration: vec![pb::NameStringPair {
                    name: "hbase.hstore.blockingStoreFiles".into(),
                    value: "20".into(),
                }],
            }],
            configuration: vec![],
        }
    }

    #[test]
    fn a_java_create_decodes_and_reports_what_is_ignored() {
        let s = table_from_pb(&java_create()).unwrap();
        let t = &s.descriptor;
        assert_eq!(t.name, "ns:t");
        assert_eq!(t.durability, Durability::AsyncWal);
        let f = &t.families[0];
        assert_eq!((f.versions, f.ttl_seconds), (3, None));
        assert_eq!(
            s.ignored,
            vec![
                "f:REPLICATION_SCOPE=0",
                "f:hbase.hstore.blockingStoreFiles=20",
            ]
        );
        // Values ferrobase does not act on are kept to be shown back.
        assert_eq!(
            f.values.get("CACHE_DATA_ON_WRITE").map(String::as_str),
            Some("false")
        );
        assert_eq!(
            t.values.get("MAX_FILESIZE").map(String::as_str),
            Some("10737418240")
        );
        let back = table_to_pb(t).unwrap();
        assert!(
            back.attributes
                .contains(&pair("MAX_FILESIZE", "10737418240".into()))
        );
    }

    #[test]
    fn prefix_tree_is_shown_to_hbase_2_clients_as_prefix() {
        let mut f = FamilyDescriptor::new("cf").unwrap();
        f.set("DATA_BLOCK_ENCODING", "PREFIX_TREE").unwrap();
        let wire = family_to_pb(&f);
        assert!(
            wire.attributes
                .contains(&pair("DATA_BLOCK_ENCODING", "PREFIX".into()))
        );
    }

    #[test]
    fn every_attribute_round_trips() {
        let mut f = FamilyDescriptor::new("cf").unwrap();
        for (k, v) in [
            ("VERSIONS", "5"),
            ("MIN_VERSIONS", "1"),
            ("TTL", "86400"),
            ("BLOCKSIZE", "8192"),
            ("BLOCKCACHE", "false"),
            ("BLOOMFILTER", "ROWCOL"),
            ("COMPRESSION", "ZSTD"),
            ("DATA_BLOCK_ENCODING", "FAST_DIFF"),
            ("IN_MEMORY", "true"),
            ("KEEP_DELETED_CELLS", "TTL"),
        ] {
            f.set(k, v).unwrap();
        }
        let mut t =
            TableDescriptor::new("t", vec![f, FamilyDescriptor::new("g").unwrap()]).unwrap();
        t.durability = Durability::FsyncWal;
        let wire = table_to_pb(&t).unwrap();
        assert_eq!(
            TableName::from_pb(wire.table_name.as_ref().unwrap())
                .unwrap()
                .namespace(),
            "default"
        );
        let back = table_from_pb(&wire).unwrap();
        assert_eq!(back.descriptor, t);
        assert_eq!(
            back.ignored,
            vec!["cf:REPLICATION_SCOPE=0", "g:REPLICATION_SCOPE=0"]
        );
        let cf = &back.descriptor.families[0];
        assert_eq!(cf.bloomfilter, BloomType::RowCol);
        assert_eq!(cf.compression, Compression::Zstd);
        assert_eq!(cf.keep_deleted_cells, KeepDeletedCells::Ttl);
        // FOREVER travels as Integer.MAX_VALUE.
        let g = family_to_pb(&back.descriptor.families[1]);
        assert!(g.attributes.contains(&pair("TTL", TTL_FOREVER.into())));
    }

    #[test]
    fn bad_values_name_the_attribute() {
        let mut s = java_create();
        s.column_families[0]
            .attributes
            .push(pair("COMPRESSION", "LZO".into()));
        let e = table_from_pb(&s).unwrap_err().to_string();
        assert!(e.contains("COMPRESSION") && e.contains("SNAPPY"), "{e}");
        let mut s = java_create();
        s.attributes = attrs(&[("DURABILITY", "SOMETIMES")]);
        assert!(
            table_from_pb(&s)
                .unwrap_err()
                .to_string()
                .contains("DURABILITY")
        );
        let mut s = java_create();
        s.column_families.clear();
        assert!(table_from_pb(&s).is_err());
        let mut s = java_create();
        s.table_name = None;
        assert!(
            table_from_pb(&s)
                .unwrap_err()
                .to_string()
                .contains("no table name")
        );
    }

    #[test]
    fn modify_column_keeps_what_is_not_sent() {
        let mut f = FamilyDescriptor::new("f").unwrap();
        f.set("VERSIONS", "4").unwrap();
        let change = pb::ColumnFamilySchema {
            name: Bytes::from_static(b"f"),
            attributes: attrs(&[("TTL", "60")]),
            configuration: vec![],
        };
        apply_family(&mut f, &change).unwrap();
        assert_eq!((f.versions, f.ttl_seconds), (4, Some(60)));
    }

    /// HBase's client sends a family's attributes in its hash map's order,
    /// so MIN_VERSIONS may come before the VERSIONS that allows it; a
    /// MIN_VERSIONS above VERSIONS is still refused, naming both.
    #[test]
    fn attribute_order_does_not_matter() {
        let schema = |pairs: &[(&str, &str)]| pb::ColumnFamilySchema {
            name: Bytes::from_static(b"f"),
            attributes: attrs(pairs),
            configuration: vec![],
        };
        let f = family_from_pb(&schema(&[("MIN_VERSIONS", "5"), ("VERSIONS", "7")]))
            .unwrap()
            .descriptor;
        assert_eq!((f.versions, f.min_versions), (7, 5));
        let mut g = FamilyDescriptor::new("f").unwrap();
        g.set("VERSIONS", "7").unwrap();
        g.set("MIN_VERSIONS", "5").unwrap();
        apply_family(&mut g, &schema(&[("MIN_VERSIONS", "2"), ("VERSIONS", "3")])).unwrap();
        assert_eq!((g.versions, g.min_versions), (3, 2));
        let e = family_from_pb(&schema(&[("VERSIONS", "2"), ("MIN_VERSIONS", "3")]))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("MIN_VERSIONS") && e.contains("VERSIONS (2)"),
            "{e}"
        );
    }
}
