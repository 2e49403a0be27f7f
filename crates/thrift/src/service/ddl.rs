//! Table administration: create, delete, enable/disable, compaction, and
//! descriptions (families, regions), through [`ferrobase_client::Admin`].
//!
//! This module owns the mapping between `ColumnDescriptor` and ferrobase's
//! [`FamilyDescriptor`] (HBase attribute names: VERSIONS, COMPRESSION,
//! IN_MEMORY, BLOOMFILTER, BLOCKCACHE, TTL). It never reads or writes rows.

use super::Outcome;
use crate::error::ServiceError;
use crate::hbase_types::{ColumnDescriptor, ColumnName, TRegionInfo};
use crate::protocol::{TType, Value};
use bytes::Bytes;
use ferrobase_client::{Connection, RegionLocation};
use ferrobase_types::{FamilyDescriptor, TableDescriptor};

fn err(context: String) -> impl FnOnce(ferrobase_client::ClientError) -> ServiceError {
    move |e| ServiceError::from_client(&context, e)
}

pub(super) async fn enable(c: &Connection, table: &str) -> Outcome {
    c.admin()
        .enable(table)
        .await
        .map_err(err(format!("enableTable '{table}'")))?;
    Ok(None)
}

pub(super) async fn disable(c: &Connection, table: &str) -> Outcome {
    c.admin()
        .disable(table)
        .await
        .map_err(err(format!("disableTable '{table}'")))?;
    Ok(None)
}

pub(super) async fn is_enabled(c: &Connection, table: &str) -> Outcome {
    let on = c
        .admin()
        .is_enabled(table)
        .await
        .map_err(err(format!("isTableEnabled '{table}'")))?;
    Ok(Some(Value::Bool(on)))
}

pub(super) async fn compact(c: &Connection, target: &str, major: bool) -> Outcome {
    let admin = c.admin();
    let r = if major {
        admin.major_compact(target).await
    } else {
        admin.compact(target).await
    };
    r.map_err(err(format!("compaction of '{target}'")))?;
    Ok(None)
}

pub(super) async fn table_names(c: &Connection) -> Outcome {
    let names = c
        .admin()
        .list_tables()
        .await
        .map_err(err("getTableNames".into()))?;
    Ok(Some(Value::List(
        TType::Binary,
        names.into_iter().map(Value::binary).collect(),
    )))
}

pub(super) async fn table_names_enabled(c: &Connection) -> Outcome {
    let admin = c.admin();
    let names = admin
        .list_tables()
        .await
        .map_err(err("getTableNamesWithIsTableEnabled".into()))?;
    let mut entries = Vec::with_capacity(names.len());
    for name in names {
        let on = admin
            .is_enabled(&name)
            .await
            .map_err(err(format!("isTableEnabled '{name}'")))?;
        entries.push((Value::binary(name), Value::Bool(on)));
    }
    Ok(Some(Value::Map(TType::Binary, TType::Bool, entries)))
}

/// A family as `getColumnDescriptors` shows it (HBase's `colDescFromHbase`).
fn to_thrift(f: &FamilyDescriptor) -> ColumnDescriptor {
    ColumnDescriptor {
        name: ColumnName::join(f.name.as_bytes(), b""),
        max_versions: i32::try_from(f.versions).unwrap_or(i32::MAX),
        compression: f.compression.to_string(),
        in_memory: f.in_memory,
        bloom_filter_type: f.bloomfilter.to_string(),
        bloom_filter_vector_size: 0,
        bloom_filter_nb_hashes: 0,
        block_cache_enabled: f.blockcache,
        time_to_live: f
            .ttl_seconds
            .map_or(i32::MAX, |s| i32::try_from(s).unwrap_or(i32::MAX)),
    }
}

/// A `ColumnDescriptor` as a family (HBase's `colDescFromThrift`): the
/// name is what precedes the `:`; a TTL of 0, negative or 2^31-1 is
/// FOREVER; the Bloom filter sizes are ignored, as HBase does.
pub(crate) fn from_thrift(cd: &ColumnDescriptor) -> Result<FamilyDescriptor, ServiceError> {
    let name = ColumnName::parse(&cd.name).family;
    let name = std::str::from_utf8(&name).map_err(|_| {
        ServiceError::IllegalArgument(format!(
            "column family name {:?} is not UTF-8",
            String::from_utf8_lossy(&name)
        ))
    })?;
    let bad = |e: ferrobase_types::descriptor::DescriptorError| {
        ServiceError::IllegalArgument(format!("column family '{name}': {e}"))
    };
    let mut f = FamilyDescriptor::new(name).map_err(bad)?;
    if cd.max_versions < 1 {
        return Err(ServiceError::IllegalArgument(format!(
            "column family '{name}': maxVersions must be at least 1, got {}",
            cd.max_versions
        )));
    }
    f.set("VERSIONS", &cd.max_versions.to_string())
        .map_err(bad)?;
    f.set("COMPRESSION", &cd.compression).map_err(bad)?;
    f.set("IN_MEMORY", &cd.in_memory.to_string()).map_err(bad)?;
    f.set("BLOOMFILTER", &cd.bloom_filter_type).map_err(bad)?;
    f.set("BLOCKCACHE", &cd.block_cache_enabled.to_string())
        .map_err(bad)?;
    let ttl = cd.time_to_live;
    if ttl > 0 && ttl != i32::MAX {
        f.set("TTL", &ttl.to_string()).map_err(bad)?;
    }
    Ok(f)
}

pub(super) async fn column_descriptors(c: &Connection, table: &str) -> Outcome {
    let d = c
        .admin()
        .describe(table)
        .await
        .map_err(err(format!("getColumnDescriptors '{table}'")))?;
    let entries = d
        .descriptor
        .families
        .iter()
        .map(|f| {
            let cd = to_thrift(f);
            (Value::Binary(cd.name.clone()), cd.to_value())
        })
        .collect();
    Ok(Some(Value::Map(TType::Binary, TType::Struct, entries)))
}

/// A region as `TRegionInfo`; the name follows HBase's
/// `table,startKey,regionId`.
fn region_info(table: &str, r: &RegionLocation) -> TRegionInfo {
    let (host, port) = match r.server.rsplit_once(':') {
        Some((h, p)) => (h, p.parse().unwrap_or(0)),
        None => (r.server.as_str(), 0),
    };
    let mut name = Vec::with_capacity(table.len() + r.start_key.len() + 24);
    name.extend_from_slice(table.as_bytes());
    name.push(b',');
    name.extend_from_slice(&r.start_key);
    name.extend_from_slice(format!(",{}", r.region_id).as_bytes());
    TRegionInfo {
        start_key: r.start_key.clone(),
        end_key: r.end_key.clone(),
        id: i64::try_from(r.region_id).unwrap_or(i64::MAX),
        name: name.into(),
        version: 1,
        server_name: Bytes::copy_from_slice(host.as_bytes()),
        port,
    }
}

pub(super) async fn regions(c: &Connection, table: &str) -> Outcome {
    let d = c
        .admin()
        .describe(table)
        .await
        .map_err(err(format!("getTableRegions '{table}'")))?;
    Ok(Some(Value::List(
        TType::Struct,
        d.regions
            .iter()
            .map(|r| region_info(table, r).to_value())
            .collect(),
    )))
}

/// `getRegionInfo(row)`: `row` is a meta row key, `table,row,…` (HBase
/// clients send `table,row,99999999999999`); answers with the region of
/// `table` that holds `row`.
pub(super) async fn region_info_of(c: &Connection, meta_row: &Bytes) -> Outcome {
    let bad = || {
        ServiceError::io(format!(
            "getRegionInfo: '{}' is not a meta row key of the form table,row,id",
            String::from_utf8_lossy(meta_row)
        ))
    };
    let first = meta_row.iter().position(|&b| b == b',').ok_or_else(bad)?;
    let last = meta_row.iter().rposition(|&b| b == b',').ok_or_else(bad)?;
    if last <= first {
        return Err(bad());
    }
    let table = std::str::from_utf8(meta_row.get(..first).ok_or_else(bad)?).map_err(|_| bad())?;
    let row = meta_row.get(first + 1..last).ok_or_else(bad)?;
    let d = c
        .admin()
        .describe(table)
        .await
        .map_err(err(format!("getRegionInfo '{table}'")))?;
    let r =
        d.regions.iter().find(|r| r.contains(row)).ok_or_else(|| {
            ServiceError::io(format!("table '{table}' has no region for that row"))
        })?;
    Ok(Some(region_info(table, r).to_value()))
}

pub(super) async fn create(c: &Connection, table: &str, families: &[ColumnDescriptor]) -> Outcome {
    let families = families
        .iter()
        .map(from_thrift)
        .collect::<Result<Vec<_>, _>>()?;
    let descriptor = TableDescriptor::new(table, families)
        .map_err(|e| ServiceError::IllegalArgument(format!("createTable '{table}': {e}")))?;
    c.admin()
        .create_table(&descriptor, &[])
        .await
        .map_err(err(format!("createTable '{table}'")))?;
    Ok(None)
}

pub(super) async fn delete(c: &Connection, table: &str) -> Outcome {
    c.admin()
        .drop_table(table)
        .await
        .map_err(err(format!("deleteTable '{table}'")))?;
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_map_to_hbase_attributes() {
        let cd = ColumnDescriptor {
            name: Bytes::from_static(b"cf:"),
            max_versions: 5,
            compression: "snappy".into(),
            in_memory: true,
            bloom_filter_type: "ROWCOL".into(),
            bloom_filter_vector_size: 0,
            bloom_filter_nb_hashes: 0,
            block_cache_enabled: true,
            time_to_live: 3600,
        };
        let f = from_thrift(&cd).unwrap();
        assert_eq!(f.name, "cf");
        assert_eq!(f.versions, 5);
        assert_eq!(f.compression.to_string(), "SNAPPY");
        assert_eq!(f.ttl_seconds, Some(3600));
        let back = to_thrift(&f);
        assert_eq!(back.compression, "SNAPPY");
        assert_eq!((back.max_versions, back.time_to_live), (5, 3600));
        let forever = ColumnDescriptor {
            time_to_live: -1,
            ..cd.clone()
        };
        assert_eq!(from_thrift(&forever).unwrap().ttl_seconds, None);
        let bad = ColumnDescriptor {
            bloom_filter_type: "ROWPREFIX_FIXED_LENGTH".into(),
            ..cd.clone()
        };
        let e = from_thrift(&bad).unwrap_err().to_string();
        assert!(e.contains("BLOOMFILTER") && e.contains("cf"), "{e}");
        let zero = ColumnDescriptor {
            max_versions: 0,
            ..cd
        };
        assert!(from_thrift(&zero).is_err());
    }
}
