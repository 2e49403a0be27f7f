//! The meta location cache: which server holds which region of a table.
//!
//! This module owns reading a table's regions from `hbase:meta` (a forward
//! scan of the rows `table,,` … `table ,,`, as HBase's
//! `MetaTableAccessor` reads a table's regions) and the cache of them, per
//! table, by start key. A row's region is the last one starting at or
//! before it. The cache of a table is dropped whole when a call finds it
//! stale (`NotServingRegionException`, `RegionMovedException`, a broken
//! connection) and read again on the next lookup. It never writes meta
//! and skips split parents and offline regions.

use crate::connection::{CLIENT_SERVICE, Connection};
use crate::error::{ClientError, Result};
use crate::results::scan_rows;
use crate::rpc::HIGH_QOS;
use bytes::Bytes;
use ferrobase_hbase_wire::names::{META_REGION_NAME, strip_pb_magic};
use ferrobase_hbase_wire::pb;
use ferrobase_types::Cell;
use parking_lot::Mutex;
use prost::Message;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Where one region is served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionLocation {
    /// The full region name (`table,start,id.encoded.`), as requests name
    /// it.
    pub region_name: Bytes,
    pub start_key: Bytes,
    /// Empty for the last region.
    pub end_key: Bytes,
    pub region_id: u64,
    /// The region server's `host:port`.
    pub server: String,
}

impl RegionLocation {
    /// True when `row` falls in this region.
    pub fn contains(&self, row: &[u8]) -> bool {
        row >= self.start_key.as_ref() && (self.end_key.is_empty() || row < self.end_key.as_ref())
    }

    pub(crate) fn specifier(&self) -> pb::RegionSpecifier {
        pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
            value: self.region_name.clone(),
        }
    }
}

/// A table's regions by start key.
pub(crate) type Regions = Arc<BTreeMap<Bytes, RegionLocation>>;

/// See the module docs.
#[derive(Default)]
pub(crate) struct Locator {
    tables: Mutex<HashMap<String, Regions>>,
}

impl Locator {
    /// Drops the cached regions of `table`.
    pub(crate) fn invalidate(&self, table: &str) {
        self.tables.lock().remove(table);
    }

    /// The regions of `table`, from the cache or from meta.
    pub(crate) async fn regions(&self, conn: &Connection, table: &str) -> Result<Regions> {
        if let Some(r) = self.tables.lock().get(table) {
            return Ok(r.clone());
        }
        let regions = match read_meta(conn, table).await {
            Ok(r) => r,
            Err(e) => {
                if e.relocates() {
                    conn.forget_meta();
                }
                return Err(e);
            }
        };
        if regions.is_empty() {
            return Err(ClientError::TableNotFound(table.to_string()));
        }
        let regions = Arc::new(regions);
        self.tables
            .lock()
            .insert(table.to_string(), regions.clone());
        Ok(regions)
    }

    /// The region holding `row`.
    pub(crate) async fn locate(
        &self,
        conn: &Connection,
        table: &str,
        row: &[u8],
    ) -> Result<RegionLocation> {
        let regions = self.regions(conn, table).await?;
        find(&regions, row)
            .cloned()
            .ok_or_else(|| ClientError::Remote {
                // A hole in meta (a split or a move half seen): retried after
                // the cache is dropped, as the Java client does.
                class: "org.apache.hadoop.hbase.NotServingRegionException".into(),
                message: format!("no region of {table} holds the row in hbase:meta yet"),
                do_not_retry: false,
            })
    }

    /// The region a reversed scan opens at `row`: the last region when
    /// `row` is empty (the table's end), the one holding `row` when it is
    /// included, else the one holding the rows just below it.
    pub(crate) async fn locate_reversed(
        &self,
        conn: &Connection,
        table: &str,
        row: &[u8],
        include: bool,
    ) -> Result<RegionLocation> {
        let regions = self.regions(conn, table).await?;
        find_reversed(&regions, row, include)
            .cloned()
            .ok_or_else(|| ClientError::Remote {
                class: "org.apache.hadoop.hbase.NotServingRegionException".into(),
                message: format!(
                    "no region of {table} holds the rows before the row in hbase:meta yet"
                ),
                do_not_retry: false,
            })
    }
}

/// The region of `regions` a reversed scan opens at `row`; see
/// [`Locator::locate_reversed`].
pub(crate) fn find_reversed<'r>(
    regions: &'r BTreeMap<Bytes, RegionLocation>,
    row: &[u8],
    include: bool,
) -> Option<&'r RegionLocation> {
    use std::ops::Bound::{Excluded, Included, Unbounded};
    if row.is_empty() {
        return regions
            .values()
            .next_back()
            .filter(|r| r.end_key.is_empty());
    }
    let upper = if include {
        Included(row)
    } else {
        Excluded(row)
    };
    regions
        .range::<[u8], _>((Unbounded, upper))
        .next_back()
        .map(|(_, r)| r)
        // A hole in meta: the region found must reach up to `row`.
        .filter(|r| {
            if include {
                r.contains(row)
            } else {
                r.end_key.is_empty() || r.end_key.as_ref() >= row
            }
        })
}

/// The region of `regions` holding `row`.
pub(crate) fn find<'r>(
    regions: &'r BTreeMap<Bytes, RegionLocation>,
    row: &[u8],
) -> Option<&'r RegionLocation> {
    regions
        .range::<[u8], _>((std::ops::Bound::Unbounded, std::ops::Bound::Included(row)))
        .next_back()
        .map(|(_, r)| r)
        .filter(|r| r.contains(row))
}

fn meta_specifier() -> pb::RegionSpecifier {
    pb::RegionSpecifier {
        r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
        value: Bytes::from_static(META_REGION_NAME),
    }
}

/// Scans meta for every online region of `table`.
async fn read_meta(conn: &Connection, table: &str) -> Result<BTreeMap<Bytes, RegionLocation>> {
    let meta = conn.meta_server().await?;
    let mut start = table.as_bytes().to_vec();
    start.extend_from_slice(b",,");
    let mut stop = table.as_bytes().to_vec();
    stop.extend_from_slice(b" ,,");
    let open = pb::ScanRequest {
        region: Some(meta_specifier()),
        scan: Some(pb::Scan {
            column: vec![pb::Column {
                family: Bytes::from_static(b"info"),
                qualifier: vec![],
            }],
            start_row: Some(Bytes::from(start)),
            stop_row: Some(Bytes::from(stop)),
            caching: Some(10_000),
            ..Default::default()
        }),
        number_of_rows: Some(10_000),
        ..Default::default()
    };
    let mut out = BTreeMap::new();
    let (mut resp, mut block): (pb::ScanResponse, _) = conn
        .call(&meta, CLIENT_SERVICE, "Scan", &open, None, HIGH_QOS)
        .await?;
    let mut seq = 0u64;
    loop {
        for cells in scan_rows(&resp, block.as_ref())? {
            if let Some(loc) = parse_meta_row(table, &cells)? {
                out.insert(loc.start_key.clone(), loc);
            }
        }
        let Some(id) = resp.scanner_id else { break };
        if resp.more_results_in_region == Some(false) || resp.more_results == Some(false) {
            // The server closed the scanner itself.
            break;
        }
        let more = resp.more_results_in_region == Some(true);
        let req = pb::ScanRequest {
            scanner_id: Some(id),
            number_of_rows: Some(10_000),
            next_call_seq: Some(seq),
            close_scanner: Some(!more),
            ..Default::default()
        };
        seq += 1;
        let answer = conn
            .call(&meta, CLIENT_SERVICE, "Scan", &req, None, HIGH_QOS)
            .await;
        if !more {
            // Only closing a scanner the server may keep: its answer does
            // not matter.
            break;
        }
        (resp, block) = answer?;
    }
    Ok(out)
}

/// One meta row: `None` for a split parent, an offline region, a region
/// with no server yet, or a row of another table.
fn parse_meta_row(table: &str, cells: &[Cell]) -> Result<Option<RegionLocation>> {
    let Some(first) = cells.first() else {
        return Ok(None);
    };
    let value = |q: &[u8]| {
        cells
            .iter()
            .find(|c| c.family.as_ref() == b"info" && c.qualifier.as_ref() == q)
            .map(|c| c.value.clone())
    };
    let Some(info) = value(b"regioninfo") else {
        return Ok(None);
    };
    let body = strip_pb_magic(&info).ok_or_else(|| {
        ClientError::Protocol("info:regioninfo in hbase:meta lacks the PBUF magic".into())
    })?;
    let ri = pb::RegionInfo::decode(body)
        .map_err(|e| ClientError::Protocol(format!("info:regioninfo does not decode: {e}")))?;
    let name = |t: &pb::TableName| {
        let ns = String::from_utf8_lossy(&t.namespace);
        let q = String::from_utf8_lossy(&t.qualifier);
        if ns == "default" {
            q.to_string()
        } else {
            format!("{ns}:{q}")
        }
    };
    let wanted = table.strip_prefix("default:").unwrap_or(table);
    if name(&ri.table_name) != wanted
        || ri.offline == Some(true)
        || ri.split == Some(true)
        || ri.replica_id.unwrap_or(0) != 0
    {
        return Ok(None);
    }
    let Some(server) = value(b"server").filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let server = String::from_utf8(server.to_vec())
        .map_err(|_| ClientError::Protocol("info:server is not UTF-8".into()))?;
    Ok(Some(RegionLocation {
        region_name: first.row.clone(),
        start_key: ri.start_key.unwrap_or_default(),
        end_key: ri.end_key.unwrap_or_default(),
        region_id: ri.region_id,
        server,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(start: &str, end: &str) -> RegionLocation {
        RegionLocation {
            region_name: Bytes::from(format!("t,{start},1.")),
            start_key: Bytes::copy_from_slice(start.as_bytes()),
            end_key: Bytes::copy_from_slice(end.as_bytes()),
            region_id: 1,
            server: "h:1".into(),
        }
    }

    #[test]
    fn a_row_is_in_the_last_region_starting_at_or_before_it() {
        let mut m = BTreeMap::new();
        for (s, e) in [("", "g"), ("g", "p"), ("p", "")] {
            m.insert(Bytes::copy_from_slice(s.as_bytes()), loc(s, e));
        }
        let start = |row: &str| find(&m, row.as_bytes()).map(|r| r.start_key.clone());
        assert_eq!(start("a"), Some(Bytes::from_static(b"")));
        assert_eq!(start("g"), Some(Bytes::from_static(b"g")));
        assert_eq!(start("ozz"), Some(Bytes::from_static(b"g")));
        assert_eq!(start("zz"), Some(Bytes::from_static(b"p")));
        // A hole: the region before it ends at "g".
        m.remove(&Bytes::from_static(b"g"));
        assert!(find(&m, b"h").is_none());
    }

    #[test]
    fn a_reversed_scan_opens_at_the_row_or_just_below_it() {
        let mut m = BTreeMap::new();
        for (s, e) in [("", "g"), ("g", "p"), ("p", "")] {
            m.insert(Bytes::copy_from_slice(s.as_bytes()), loc(s, e));
        }
        let start = |row: &str, include| {
            find_reversed(&m, row.as_bytes(), include).map(|r| r.start_key.clone())
        };
        // The table's end: the last region.
        assert_eq!(start("", true), Some(Bytes::from_static(b"p")));
        assert_eq!(start("h", true), Some(Bytes::from_static(b"g")));
        assert_eq!(start("g", true), Some(Bytes::from_static(b"g")));
        // Excluded: the rows just below "g" are in the first region.
        assert_eq!(start("g", false), Some(Bytes::from_static(b"")));
        assert_eq!(start("p", false), Some(Bytes::from_static(b"g")));
        assert_eq!(start("h", false), Some(Bytes::from_static(b"g")));
        // Holes: no region reaches up to the row, or no last region.
        m.remove(&Bytes::from_static(b"g"));
        assert!(find_reversed(&m, b"p", false).is_none());
        assert!(find_reversed(&m, b"h", true).is_none());
        m.remove(&Bytes::from_static(b"p"));
        assert!(find_reversed(&m, b"", true).is_none());
    }

    #[test]
    fn meta_rows_of_other_tables_and_split_parents_are_skipped() {
        let info = |ri: &pb::RegionInfo| {
            Cell::put(
                Bytes::from_static(b"t,,1.x."),
                Bytes::from_static(b"info"),
                Bytes::from_static(b"regioninfo"),
                1,
                ferrobase_hbase_wire::names::with_pb_magic(ri),
            )
        };
        let server = Cell::put(
            Bytes::from_static(b"t,,1.x."),
            Bytes::from_static(b"info"),
            Bytes::from_static(b"server"),
            1,
            Bytes::from_static(b"127.0.0.1:16020"),
        );
        let mut ri = pb::RegionInfo {
            region_id: 7,
            table_name: pb::TableName {
                namespace: Bytes::from_static(b"default"),
                qualifier: Bytes::from_static(b"t"),
            },
            ..Default::default()
        };
        let got = parse_meta_row("t", &[info(&ri), server.clone()]).unwrap_or_default();
        assert_eq!(
            got.map(|l| (l.region_id, l.server)),
            Some((7, "127.0.0.1:16020".into()))
        );
        assert!(matches!(
            parse_meta_row("u", &[info(&ri), server.clone()]),
            Ok(None)
        ));
        ri.split = Some(true);
        assert!(matches!(
            parse_meta_row("t", &[info(&ri), server.clone()]),
            Ok(None)
        ));
        // A regioninfo without its magic is an error, not a panic.
        let mut bad = info(&ri);
        bad.value = Bytes::from_static(b"junk");
        assert!(parse_meta_row("t", &[bad, server]).is_err());
    }
}
