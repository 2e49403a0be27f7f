//! Table and column-family descriptors with HBase's attribute names,
//! values and defaults.
//!
//! This module owns parsing attributes the way the HBase shell spells them
//! (`VERSIONS => 1`, `BLOOMFILTER => 'ROWCOL'`, `TTL => '259200'`, …) and
//! printing them back the way `describe` shows them. It never touches
//! storage: the engine reads the typed fields.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A family attribute that was unknown or had a bad value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DescriptorError {
    #[error("unknown column family attribute '{name}'; valid attributes: {}", FamilyDescriptor::ATTRIBUTES.join(", "))]
    UnknownAttribute { name: String },
    #[error("invalid value '{value}' for {attribute}; {expected}")]
    InvalidValue {
        attribute: &'static str,
        value: String,
        expected: String,
    },
    #[error("invalid column family name '{0}': {1}")]
    InvalidFamilyName(String, &'static str),
    #[error("invalid table name '{0}': {1}")]
    InvalidTableName(String, &'static str),
    #[error("table '{table}' has no column family '{family}'")]
    NoSuchFamily { table: String, family: String },
    #[error("table needs at least one column family")]
    NoFamilies,
    #[error("column family '{0}' is given twice")]
    DuplicateFamily(String),
}

macro_rules! named_enum {
    ($(#[$doc:meta])* $name:ident, $attr:literal, { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name { #[default] $($variant),+ }

        impl $name {
            /// Every value, as HBase spells it.
            pub const NAMES: &'static [&'static str] = &[$($text),+];
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// HBase's spelling.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses HBase's spelling, in any case.
            pub fn parse(value: &str) -> Result<$name, DescriptorError> {
                let upper = value.trim().to_ascii_uppercase();
                match upper.as_str() {
                    $($text => Ok($name::$variant),)+
                    _ => Err(DescriptorError::InvalidValue {
                        attribute: $attr,
                        value: value.to_string(),
                        expected: format!("valid values: {}", Self::NAMES.join(", ")),
                    }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.name()) }
        }
    };
}

named_enum!(
    /// Which keys a store file's Bloom filter holds.
    BloomType, "BLOOMFILTER", { Row => "ROW", None => "NONE", RowCol => "ROWCOL" });
named_enum!(
    /// Block compression (applied at flush and compaction).
    Compression, "COMPRESSION", { None => "NONE", Snappy => "SNAPPY", Lz4 => "LZ4", Zstd => "ZSTD", Gz => "GZ" });
named_enum!(
/// How cells are encoded inside a data block.
DataBlockEncoding, "DATA_BLOCK_ENCODING", {
    None => "NONE", Prefix => "PREFIX", Diff => "DIFF", FastDiff => "FAST_DIFF", RowIndexV1 => "ROW_INDEX_V1",
    PrefixTree => "PREFIX_TREE"
});
named_enum!(
    /// Whether major compaction keeps deleted cells (HBase's `KeepDeletedCells`).
    KeepDeletedCells, "KEEP_DELETED_CELLS", { False => "FALSE", True => "TRUE", Ttl => "TTL" });

/// A column family and its attributes. Field defaults are HBase's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilyDescriptor {
    pub name: String,
    /// VERSIONS: how many versions a column keeps.
    pub versions: u32,
    /// MIN_VERSIONS: versions kept even when older than TTL.
    pub min_versions: u32,
    /// TTL in seconds; `None` is FOREVER.
    pub ttl_seconds: Option<u64>,
    /// BLOCKSIZE in bytes (before compression).
    pub blocksize: u32,
    /// BLOCKCACHE: whether data blocks of this family enter the block cache.
    pub blockcache: bool,
    pub bloomfilter: BloomType,
    pub compression: Compression,
    pub data_block_encoding: DataBlockEncoding,
    /// IN_MEMORY: blocks get priority in the block cache.
    pub in_memory: bool,
    pub keep_deleted_cells: KeepDeletedCells,
    /// ROW_CACHE (ferrobase's): whole get results of this family are kept
    /// in the row cache (`ferrobase.rowcache.size`).
    #[serde(default)]
    pub row_cache: bool,
    /// Other attributes as given (HBase's `setValue` and configuration
    /// keys): kept and shown back, not acted on.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub values: std::collections::BTreeMap<String, String>,
}

impl FamilyDescriptor {
    /// Attribute names accepted by [`FamilyDescriptor::set`].
    pub const ATTRIBUTES: &'static [&'static str] = &[
        "NAME",
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

    /// A family with HBase's defaults. Fails on a name HBase would refuse.
    pub fn new(name: &str) -> Result<FamilyDescriptor, DescriptorError> {
        validate_family_name(name)?;
        Ok(FamilyDescriptor {
            name: name.to_string(),
            versions: 1,
            min_versions: 0,
            ttl_seconds: None,
            blocksize: 65536,
            blockcache: true,
            bloomfilter: BloomType::Row,
            compression: Compression::None,
            data_block_encoding: DataBlockEncoding::None,
            in_memory: false,
            keep_deleted_cells: KeepDeletedCells::False,
            row_cache: false,
            values: Default::default(),
        })
    }

    /// Sets one attribute by its HBase name (any case), from shell text.
    pub fn set(&mut self, attribute: &str, value: &str) -> Result<(), DescriptorError> {
        let v = value.trim();
        match attribute.trim().to_ascii_uppercase().as_str() {
            "NAME" => {
                validate_family_name(v)?;
                self.name = v.to_string();
            }
            "VERSIONS" => self.versions = parse_u32("VERSIONS", v, 1)?,
            "MIN_VERSIONS" => self.min_versions = parse_u32("MIN_VERSIONS", v, 0)?,
            "TTL" => self.ttl_seconds = parse_ttl(v)?,
            "BLOCKSIZE" => {
                let size = parse_u32("BLOCKSIZE", v, 1024)?;
                if size > 16 * 1024 * 1024 {
                    return Err(DescriptorError::InvalidValue {
                        attribute: "BLOCKSIZE",
                        value: v.to_string(),
                        expected: "a size in bytes between 1024 and 16777216".into(),
                    });
                }
                self.blocksize = size;
            }
            "BLOCKCACHE" => self.blockcache = parse_bool("BLOCKCACHE", v)?,
            "BLOOMFILTER" => self.bloomfilter = BloomType::parse(v)?,
            "COMPRESSION" => self.compression = Compression::parse(v)?,
            "DATA_BLOCK_ENCODING" => self.data_block_encoding = DataBlockEncoding::parse(v)?,
            "IN_MEMORY" => self.in_memory = parse_bool("IN_MEMORY", v)?,
            "KEEP_DELETED_CELLS" => self.keep_deleted_cells = KeepDeletedCells::parse(v)?,
            "ROW_CACHE" => self.row_cache = parse_bool("ROW_CACHE", v)?,
            _ => {
                return Err(DescriptorError::UnknownAttribute {
                    name: attribute.to_string(),
                });
            }
        }
        Ok(())
    }

    /// The rules between attributes (MIN_VERSIONS at most VERSIONS), checked
    /// once all of a request's attributes are set: [`set`](Self::set) takes
    /// them one at a time in whatever order a client's map gives them, so it
    /// cannot. [`TableDescriptor::new`] checks every family with it.
    pub fn check(&self) -> Result<(), DescriptorError> {
        if self.min_versions > self.versions {
            return Err(DescriptorError::InvalidValue {
                attribute: "MIN_VERSIONS",
                value: self.min_versions.to_string(),
                expected: format!("at most VERSIONS ({})", self.versions),
            });
        }
        Ok(())
    }

    /// Every attribute as `(NAME, value)` in the order `describe` prints
    /// them; ROW_CACHE, not one of HBase's, only when it is on.
    pub fn attributes(&self) -> Vec<(&'static str, String)> {
        let mut a = vec![
            ("NAME", self.name.clone()),
            ("BLOOMFILTER", self.bloomfilter.to_string()),
            ("IN_MEMORY", self.in_memory.to_string()),
            ("VERSIONS", self.versions.to_string()),
            ("KEEP_DELETED_CELLS", self.keep_deleted_cells.to_string()),
            ("DATA_BLOCK_ENCODING", self.data_block_encoding.to_string()),
            ("COMPRESSION", self.compression.to_string()),
            ("TTL", ttl_text(self.ttl_seconds)),
            ("MIN_VERSIONS", self.min_versions.to_string()),
            ("BLOCKCACHE", self.blockcache.to_string()),
            ("BLOCKSIZE", self.blocksize.to_string()),
        ];
        if self.row_cache {
            a.push(("ROW_CACHE", "true".to_string()));
        }
        a
    }

    /// TTL in milliseconds, if any.
    pub fn ttl_millis(&self) -> Option<u64> {
        self.ttl_seconds.map(|s| s.saturating_mul(1000))
    }
}

impl fmt::Display for FamilyDescriptor {
    /// `{NAME => 'f', BLOOMFILTER => 'ROW', …}` as the HBase shell prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .attributes()
            .into_iter()
            .map(|(k, v)| format!("{k} => '{v}'"))
            .collect();
        write!(f, "{{{}}}", parts.join(", "))
    }
}

fn ttl_text(ttl: Option<u64>) -> String {
    match ttl {
        None => "FOREVER".to_string(),
        Some(s) => {
            let days = s / 86_400;
            if days > 0 && s % 86_400 == 0 {
                format!(
                    "{s} SECONDS ({days} DAY{})",
                    if days == 1 { "" } else { "S" }
                )
            } else {
                format!("{s} SECONDS")
            }
        }
    }
}

fn parse_u32(attribute: &'static str, v: &str, min: u32) -> Result<u32, DescriptorError> {
    match v.parse::<u32>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(DescriptorError::InvalidValue {
            attribute,
            value: v.to_string(),
            expected: format!("an integer ≥ {min}"),
        }),
    }
}

fn parse_bool(attribute: &'static str, v: &str) -> Result<bool, DescriptorError> {
    match v.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(DescriptorError::InvalidValue {
            attribute,
            value: v.to_string(),
            expected: "valid values: true, false".into(),
        }),
    }
}

/// TTL as the shell takes it: seconds, `FOREVER`, or `N SECONDS`.
fn parse_ttl(v: &str) -> Result<Option<u64>, DescriptorError> {
    let upper = v.to_ascii_uppercase();
    if upper == "FOREVER" || upper == i32::MAX.to_string() {
        return Ok(None);
    }
    let digits = upper
        .strip_suffix("SECONDS")
        .map(str::trim)
        .unwrap_or(&upper);
    match digits.parse::<u64>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(DescriptorError::InvalidValue {
            attribute: "TTL",
            value: v.to_string(),
            expected: "a number of seconds > 0, or FOREVER".into(),
        }),
    }
}

fn validate_family_name(name: &str) -> Result<(), DescriptorError> {
    if name.is_empty() {
        return Err(DescriptorError::InvalidFamilyName(
            name.into(),
            "it is empty",
        ));
    }
    if name.len() > crate::key::MAX_FAMILY_LEN {
        return Err(DescriptorError::InvalidFamilyName(
            name.into(),
            "it is longer than 255 bytes",
        ));
    }
    if name.starts_with('.') {
        return Err(DescriptorError::InvalidFamilyName(
            name.into(),
            "it starts with '.'",
        ));
    }
    if name.chars().any(|c| c == ':' || c == '/' || c.is_control()) {
        return Err(DescriptorError::InvalidFamilyName(
            name.into(),
            "it contains ':', '/' or a control character",
        ));
    }
    Ok(())
}

/// A table: a name, its families and table-level attributes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableDescriptor {
    pub name: String,
    pub families: Vec<FamilyDescriptor>,
    /// DURABILITY: the default for mutations that say `USE_DEFAULT`.
    pub durability: crate::Durability,
    /// Other table attributes as given (HBase's `MAX_FILESIZE`,
    /// `MEMSTORE_FLUSHSIZE`, user keys such as `owner`): kept and shown
    /// back, not acted on.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub values: std::collections::BTreeMap<String, String>,
}

impl TableDescriptor {
    /// A table with the given families and default attributes.
    pub fn new(
        name: &str,
        families: Vec<FamilyDescriptor>,
    ) -> Result<TableDescriptor, DescriptorError> {
        validate_table_name(name)?;
        if families.is_empty() {
            return Err(DescriptorError::NoFamilies);
        }
        for (i, f) in families.iter().enumerate() {
            if families.iter().skip(i + 1).any(|g| g.name == f.name) {
                return Err(DescriptorError::DuplicateFamily(f.name.clone()));
            }
            f.check()?;
        }
        Ok(TableDescriptor {
            name: name.to_string(),
            families,
            durability: crate::Durability::UseDefault,
            values: Default::default(),
        })
    }

    /// The family named `name`.
    pub fn family(&self, name: &[u8]) -> Option<&FamilyDescriptor> {
        self.families.iter().find(|f| f.name.as_bytes() == name)
    }
}

/// HBase's table-name rule: letters, digits, `_`, `-`, `.`, and an optional
/// `namespace:` prefix; not starting with `.` or `-`.
pub fn validate_table_name(name: &str) -> Result<(), DescriptorError> {
    let qualifier = name.rsplit(':').next().unwrap_or(name);
    if qualifier.is_empty() {
        return Err(DescriptorError::InvalidTableName(
            name.into(),
            "it is empty",
        ));
    }
    if qualifier.starts_with('.') || qualifier.starts_with('-') {
        return Err(DescriptorError::InvalidTableName(
            name.into(),
            "it starts with '.' or '-'",
        ));
    }
    if name.matches(':').count() > 1
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
    {
        return Err(DescriptorError::InvalidTableName(
            name.into(),
            "only letters, digits, '_', '-', '.' and one 'namespace:' prefix are allowed",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_hbase_defaults() {
        let f = FamilyDescriptor::new("cf").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            f.to_string(),
            "{NAME => 'cf', BLOOMFILTER => 'ROW', IN_MEMORY => 'false', VERSIONS => '1', \
             KEEP_DELETED_CELLS => 'FALSE', DATA_BLOCK_ENCODING => 'NONE', COMPRESSION => 'NONE', \
             TTL => 'FOREVER', MIN_VERSIONS => '0', BLOCKCACHE => 'true', BLOCKSIZE => '65536'}"
        );
    }

    #[test]
    fn seed_004_attributes_parse() -> Result<(), DescriptorError> {
        let mut f = FamilyDescriptor::new("Toutiao")?;
        for (k, v) in [
            ("VERSIONS", "1"),
            ("BLOCKCACHE", "true"),
            ("BLOOMFILTER", "ROW"),
            ("COMPRESSION", "SNAPPY"),
            ("TTL", "259200"),
            ("DATA_BLOCK_ENCODING", "PREFIX"),
            ("BLOCKSIZE", "65536"),
        ] {
            f.set(k, v)?;
        }
        assert_eq!(f.compression, Compression::Snappy);
        assert_eq!(f.ttl_seconds, Some(259_200));
        assert_eq!(f.attributes()[7].1, "259200 SECONDS (3 DAYS)");
        Ok(())
    }

    /// Clients send attributes from a hash map: MIN_VERSIONS may come
    /// before the VERSIONS that allows it.
    #[test]
    fn attribute_order_does_not_matter() -> Result<(), DescriptorError> {
        let mut f = FamilyDescriptor::new("f")?;
        f.set("MIN_VERSIONS", "5")?;
        f.set("VERSIONS", "7")?;
        f.check()?;
        TableDescriptor::new("t", vec![f])?;
        Ok(())
    }

    #[test]
    fn errors_name_attribute_and_choices() {
        let mut f = FamilyDescriptor::new("f").unwrap_or_else(|e| panic!("{e}"));
        let e = f
            .set("COMPRESSION", "LZO")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("COMPRESSION") && e.contains("SNAPPY"), "{e}");
        let e = f
            .set("BLOOMFILTR", "ROW")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("BLOOMFILTR") && e.contains("BLOOMFILTER"), "{e}");
        let e = f
            .set("VERSIONS", "0")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("VERSIONS"), "{e}");
        f.set("MIN_VERSIONS", "3").unwrap_or_else(|e| panic!("{e}"));
        assert!(f.check().is_err());
        assert!(TableDescriptor::new("t", vec![f.clone()]).is_err());
        f.set("MIN_VERSIONS", "0").unwrap_or_else(|e| panic!("{e}"));
        assert!(f.set("TTL", "-1").is_err());
        assert!(f.set("DATA_BLOCK_ENCODING", "prefix_trie").is_err());
        f.set("DATA_BLOCK_ENCODING", "prefix_tree")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(FamilyDescriptor::new("a:b").is_err());
        assert!(FamilyDescriptor::new("").is_err());
    }

    #[test]
    fn table_names() {
        assert!(validate_table_name("ns:NewsClickFeedback").is_ok());
        assert!(validate_table_name("bad name").is_err());
        assert!(validate_table_name(".meta").is_err());
        let f = FamilyDescriptor::new("f").unwrap_or_else(|e| panic!("{e}"));
        assert!(TableDescriptor::new("t", vec![f.clone(), f]).is_err());
        assert!(TableDescriptor::new("t", vec![]).is_err());
    }
}
