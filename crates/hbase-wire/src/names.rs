//! HBase's names: tables with namespaces, regions, servers, and the
//! `PBUF`-prefixed values of `hbase:meta`.
//!
//! This module owns building and parsing these names exactly as HBase forms
//! them, because clients compare them byte for byte (a region name is also
//! its row key in `hbase:meta`):
//!
//! ```text
//! table name   "qualifier" (namespace "default") or "namespace:qualifier"
//! region name  <table>,<start key>,<region id>[_<replica, %04X>].<encoded>.
//!              encoded = lower-case hex MD5 of everything before the '.'
//! meta region  "hbase:meta,,1", encoded "1588230740" (an old-format name:
//!              no '.' suffix; its encoded name is a Jenkins hash)
//! server name  <host, lower case>,<port>,<start code>
//! ```
//!
//! It never checks that a table, region or server exists.

use crate::md5;
use crate::pb;
use bytes::Bytes;
use ferrobase_types::binary::to_string_binary;
use std::fmt;

/// The namespace of tables named without one.
pub const DEFAULT_NAMESPACE: &str = "default";
/// The namespace of HBase's own tables (`hbase:meta`, `hbase:namespace`).
pub const SYSTEM_NAMESPACE: &str = "hbase";
/// The qualifier of the meta table.
pub const META_QUALIFIER: &str = "meta";
/// The region name of the meta table's only region.
pub const META_REGION_NAME: &[u8] = b"hbase:meta,,1";
/// The encoded name of the meta table's region.
pub const META_ENCODED_NAME: &str = "1588230740";
/// The region id of the meta table's region.
pub const META_REGION_ID: u64 = 1;
/// Prefix of protobuf values stored in `hbase:meta` (`info:regioninfo`)
/// and ZooKeeper (HBase's `ProtobufUtil.PB_MAGIC`).
pub const PB_MAGIC: &[u8; 4] = b"PBUF";
/// The region id HBase's client puts in meta search keys: sorts after every
/// real region id of the same start key.
pub const NINES: &str = "99999999999999";

const MD5_HEX_LEN: usize = 32;

/// A name that is not a valid HBase name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    #[error("invalid table name '{name}': {reason}")]
    Table { name: String, reason: &'static str },
    #[error("invalid region name '{name}': {reason}")]
    Region { name: String, reason: &'static str },
    #[error("invalid server name '{name}': {reason}")]
    Server { name: String, reason: &'static str },
}

/// A table's full name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableName {
    namespace: String,
    qualifier: String,
}

fn check_namespace(ns: &str) -> Result<(), &'static str> {
    if ns.is_empty() {
        return Err("the namespace is empty");
    }
    if !ns.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err("a namespace may hold only letters, digits and '_'");
    }
    Ok(())
}

fn check_qualifier(q: &str) -> Result<(), &'static str> {
    if q.is_empty() {
        return Err("the table qualifier is empty");
    }
    if q.starts_with('.') || q.starts_with('-') {
        return Err("a table qualifier may not start with '.' or '-'");
    }
    if !q
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err("a table qualifier may hold only letters, digits, '_', '-' and '.'");
    }
    Ok(())
}

impl TableName {
    /// A table in `namespace`, checked with HBase's rules.
    pub fn new(namespace: &str, qualifier: &str) -> Result<TableName, NameError> {
        let err = |reason| NameError::Table {
            name: format!("{namespace}:{qualifier}"),
            reason,
        };
        check_namespace(namespace).map_err(err)?;
        check_qualifier(qualifier).map_err(err)?;
        Ok(TableName {
            namespace: namespace.to_string(),
            qualifier: qualifier.to_string(),
        })
    }

    /// Parses `ns:qualifier` or `qualifier` (namespace `default`).
    pub fn parse(name: &str) -> Result<TableName, NameError> {
        let (ns, q) = name.split_once(':').unwrap_or((DEFAULT_NAMESPACE, name));
        TableName::new(ns, q).map_err(|e| match e {
            NameError::Table { reason, .. } => NameError::Table {
                name: name.to_string(),
                reason,
            },
            other => other,
        })
    }

    /// `hbase:meta`.
    pub fn meta() -> TableName {
        TableName {
            namespace: SYSTEM_NAMESPACE.to_string(),
            qualifier: META_QUALIFIER.to_string(),
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn qualifier(&self) -> &str {
        &self.qualifier
    }

    /// True for `hbase:meta`.
    pub fn is_meta(&self) -> bool {
        self.namespace == SYSTEM_NAMESPACE && self.qualifier == META_QUALIFIER
    }

    /// True for tables of the `hbase` namespace.
    pub fn is_system(&self) -> bool {
        self.namespace == SYSTEM_NAMESPACE
    }

    /// The name as HBase prints it: without `default:`.
    pub fn name_as_string(&self) -> String {
        self.to_string()
    }

    /// The protobuf form.
    pub fn to_pb(&self) -> pb::TableName {
        pb::TableName {
            namespace: Bytes::from(self.namespace.clone()),
            qualifier: Bytes::from(self.qualifier.clone()),
        }
    }

    /// From the protobuf form; an empty namespace means `default`.
    pub fn from_pb(t: &pb::TableName) -> Result<TableName, NameError> {
        fn text(b: &Bytes) -> Result<&str, NameError> {
            std::str::from_utf8(b).map_err(|_| NameError::Table {
                name: to_string_binary(b),
                reason: "it is not UTF-8",
            })
        }
        let ns = text(&t.namespace)?;
        TableName::new(
            if ns.is_empty() { DEFAULT_NAMESPACE } else { ns },
            text(&t.qualifier)?,
        )
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace == DEFAULT_NAMESPACE {
            f.write_str(&self.qualifier)
        } else {
            write!(f, "{}:{}", self.namespace, self.qualifier)
        }
    }
}

/// A region's name, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionName {
    pub table: TableName,
    /// Empty for a table's first region.
    pub start_key: Bytes,
    pub region_id: u64,
    pub replica_id: u16,
    /// The encoded name (hex MD5, or the Jenkins hash of an old-format
    /// name such as meta's).
    pub encoded: String,
    /// The whole name: the region's row key in `hbase:meta`.
    pub name: Bytes,
}

/// `table,startkey,regionid[_replica]`: what the encoded name hashes.
fn region_name_prefix(
    table: &TableName,
    start_key: &[u8],
    region_id: u64,
    replica_id: u16,
) -> Vec<u8> {
    let table = table.to_string();
    let id = region_id.to_string();
    let mut b = Vec::with_capacity(table.len() + start_key.len() + id.len() + 8);
    b.extend_from_slice(table.as_bytes());
    b.push(b',');
    b.extend_from_slice(start_key);
    b.push(b',');
    b.extend_from_slice(id.as_bytes());
    if replica_id > 0 {
        b.extend_from_slice(format!("_{replica_id:04X}").as_bytes());
    }
    b
}

impl RegionName {
    /// A region's name in HBase's current format:
    /// `table,startkey,regionid.md5hex.`.
    pub fn new(table: &TableName, start_key: &[u8], region_id: u64) -> RegionName {
        RegionName::with_replica(table, start_key, region_id, 0)
    }

    /// [`new`](Self::new) for a read replica (`_0001` after the id).
    pub fn with_replica(
        table: &TableName,
        start_key: &[u8],
        region_id: u64,
        replica_id: u16,
    ) -> RegionName {
        let mut name = region_name_prefix(table, start_key, region_id, replica_id);
        let encoded = md5::hex(&name);
        name.push(b'.');
        name.extend_from_slice(encoded.as_bytes());
        name.push(b'.');
        RegionName {
            table: table.clone(),
            start_key: Bytes::copy_from_slice(start_key),
            region_id,
            replica_id,
            encoded,
            name: Bytes::from(name),
        }
    }

    /// The meta table's region: `hbase:meta,,1`, encoded `1588230740`.
    pub fn meta() -> RegionName {
        RegionName {
            table: TableName::meta(),
            start_key: Bytes::new(),
            region_id: META_REGION_ID,
            replica_id: 0,
            encoded: META_ENCODED_NAME.to_string(),
            name: Bytes::from_static(META_REGION_NAME),
        }
    }

    /// Parses a region name (new format, old format, or a meta search key
    /// such as `t,row,99999999999999`), with HBase's rules: the table ends
    /// at the first ',', the id starts after the last ',' (the start key
    /// may hold commas), a trailing `.<32 hex>.` is the encoded name.
    pub fn parse(name: &[u8]) -> Result<RegionName, NameError> {
        let err = |reason| NameError::Region {
            name: to_string_binary(name),
            reason,
        };
        let table_end = name
            .iter()
            .position(|&b| b == b',')
            .ok_or_else(|| err("it has no ','"))?;
        let table_text = std::str::from_utf8(name.get(..table_end).unwrap_or_default())
            .map_err(|_| err("its table name is not UTF-8"))?;
        let table = TableName::parse(table_text).map_err(|_| err("its table name is invalid"))?;
        let (body_end, encoded) = match name.len().checked_sub(MD5_HEX_LEN + 2) {
            Some(dot)
                if dot > table_end
                    && name.last() == Some(&b'.')
                    && name.get(dot) == Some(&b'.') =>
            {
                let hex = name.get(dot + 1..name.len() - 1).unwrap_or_default();
                let hex =
                    std::str::from_utf8(hex).map_err(|_| err("its encoded name is not text"))?;
                (dot, Some(hex.to_string()))
            }
            _ => (name.len(), None),
        };
        let body = name.get(..body_end).unwrap_or_default();
        let id_comma = body
            .iter()
            .rposition(|&b| b == b',')
            .filter(|&p| p > table_end)
            .ok_or_else(|| err("it has no ',' before the region id"))?;
        let start_key = body.get(table_end + 1..id_comma).unwrap_or_default();
        let id_part = body.get(id_comma + 1..).unwrap_or_default();
        let (id_text, replica_id) = match id_part.iter().position(|&b| b == b'_') {
            Some(u) => {
                let hex = std::str::from_utf8(id_part.get(u + 1..).unwrap_or_default())
                    .map_err(|_| err("its replica id is not text"))?;
                let replica =
                    u16::from_str_radix(hex, 16).map_err(|_| err("its replica id is not hex"))?;
                (id_part.get(..u).unwrap_or_default(), replica)
            }
            None => (id_part, 0),
        };
        let region_id = std::str::from_utf8(id_text)
            .ok()
            .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|t| t.parse::<u64>().ok())
            .ok_or_else(|| err("its region id is not a decimal number"))?;
        let encoded = match encoded {
            Some(e) => e,
            None => old_format_encoded_name(name),
        };
        Ok(RegionName {
            table,
            start_key: Bytes::copy_from_slice(start_key),
            region_id,
            replica_id,
            encoded,
            name: Bytes::copy_from_slice(name),
        })
    }

    /// The region's `RegionInfo` message (what `info:regioninfo` holds
    /// after [`PB_MAGIC`]).
    pub fn region_info(&self, end_key: &[u8]) -> pb::RegionInfo {
        pb::RegionInfo {
            region_id: self.region_id,
            table_name: self.table.to_pb(),
            start_key: Some(self.start_key.clone()),
            end_key: Some(Bytes::copy_from_slice(end_key)),
            offline: Some(false),
            split: Some(false),
            replica_id: Some(i32::from(self.replica_id)),
            region_encoded_name: None,
        }
    }

    /// A `RegionSpecifier` naming this region by its full name.
    pub fn specifier(&self) -> pb::RegionSpecifier {
        pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: self.name.clone(),
        }
    }
}

/// The encoded name of a region named in HBase's old format (no `.md5.`
/// suffix): the absolute value of its Jenkins hash, in decimal.
fn old_format_encoded_name(name: &[u8]) -> String {
    (jenkins_hash(name, 0) as i32).unsigned_abs().to_string()
}

/// Bob Jenkins' lookup3 `hashlittle`, as HBase's `JenkinsHash`.
fn jenkins_hash(key: &[u8], initval: u32) -> u32 {
    let word = |b: &[u8]| {
        b.iter().take(4).enumerate().fold(0u32, |acc, (i, &x)| {
            acc.wrapping_add(u32::from(x) << (8 * i))
        })
    };
    let mut a = 0xdead_beef_u32
        .wrapping_add(key.len() as u32)
        .wrapping_add(initval);
    let mut b = a;
    let mut c = a;
    let mut rest = key;
    while rest.len() > 12 {
        a = a.wrapping_add(word(rest));
        b = b.wrapping_add(word(rest.get(4..).unwrap_or_default()));
        c = c.wrapping_add(word(rest.get(8..).unwrap_or_default()));
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(4);
        b = b.wrapping_add(a);
        rest = rest.get(12..).unwrap_or_default();
    }
    if rest.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(rest));
    b = b.wrapping_add(word(rest.get(4..).unwrap_or_default()));
    c = c.wrapping_add(word(rest.get(8..).unwrap_or_default()));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c.wrapping_sub(b.rotate_left(24))
}

/// A region server (or master) as HBase names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerName {
    /// Lower case, as HBase keeps it.
    pub host: String,
    pub port: u16,
    /// When the server started (milliseconds); tells restarts apart.
    pub start_code: u64,
}

impl ServerName {
    pub fn new(host: &str, port: u16, start_code: u64) -> ServerName {
        ServerName {
            host: host.to_ascii_lowercase(),
            port,
            start_code,
        }
    }

    /// Parses `host,port,startcode`.
    pub fn parse(text: &str) -> Result<ServerName, NameError> {
        let err = |reason| NameError::Server {
            name: text.to_string(),
            reason,
        };
        let mut parts = text.split(',');
        let (Some(host), Some(port), Some(code), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(err("expected host,port,startcode"));
        };
        if host.is_empty() {
            return Err(err("the host is empty"));
        }
        let port = port
            .parse()
            .map_err(|_| err("the port is not a number below 65536"))?;
        let code = code
            .parse()
            .map_err(|_| err("the start code is not a number"))?;
        Ok(ServerName::new(host, port, code))
    }

    /// `host:port`, as `info:server` in `hbase:meta` holds it.
    pub fn host_and_port(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub fn to_pb(&self) -> pb::ServerName {
        pb::ServerName {
            host_name: self.host.clone(),
            port: Some(u32::from(self.port)),
            start_code: Some(self.start_code),
        }
    }

    pub fn from_pb(s: &pb::ServerName) -> Result<ServerName, NameError> {
        let port = u16::try_from(s.port.unwrap_or(0)).map_err(|_| NameError::Server {
            name: s.host_name.clone(),
            reason: "the port is above 65535",
        })?;
        if s.host_name.is_empty() {
            return Err(NameError::Server {
                name: String::new(),
                reason: "the host is empty",
            });
        }
        Ok(ServerName::new(
            &s.host_name,
            port,
            s.start_code.unwrap_or(0),
        ))
    }
}

impl fmt::Display for ServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.host, self.port, self.start_code)
    }
}

/// `PBUF` followed by the message: the form of `info:regioninfo` values.
pub fn with_pb_magic<M: prost::Message>(m: &M) -> Bytes {
    let mut out = Vec::with_capacity(PB_MAGIC.len() + m.encoded_len());
    out.extend_from_slice(PB_MAGIC);
    m.encode_raw(&mut out);
    Bytes::from(out)
}

/// The message bytes after a `PBUF` prefix, if it is there.
pub fn strip_pb_magic(value: &[u8]) -> Option<&[u8]> {
    value.strip_prefix(&PB_MAGIC[..])
}

#[cfg(test)]
mod tests;
