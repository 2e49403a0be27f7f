//! `hbase:meta` as the Java client reads it, built on demand from the
//! master's state: ferrobase keeps no meta table of its own, so this module
//! renders one row per region and one state cell per table.
//!
//! A region's row key is its HBase region name,
//! `table,startkey,regionid.encoded.`, with ferrobase's region id as
//! HBase's region id (so a request naming the region names the id). Its
//! `info` cells, in qualifier order, are what HBase's `MetaTableAccessor`
//! writes and the client's locator reads:
//!
//! ```text
//! info:regioninfo        "PBUF" + RegionInfo
//! info:seqnumDuringOpen  8-byte long (1)
//! info:server            "host:port"               (only while enabled)
//! info:serverstartcode   8-byte long               (only while enabled)
//! info:sn                "host,port,startcode"     (only while enabled)
//! info:state             "OPEN" | "CLOSED"
//! ```
//!
//! A table's state is the cell `table:state` in the row named by the
//! table's name: a bare `TableState` message, without the "PBUF" prefix
//! (HBase's `TableState.parseFrom` reads it without one); scans of `info`
//! do not see those rows.
//!
//! Rows sort as HBase's `MetaCellComparator` sorts them: by table, then
//! start key, then the rest (the id), each compared as bytes, so a locate
//! key `t,row,99999999999999` falls after every region of `t` starting at
//! or before `row`. This module never changes anything: meta is read-only
//! to clients.

use super::exceptions::do_not_retry;
use super::scan::ScanRange;
use crate::master::Master;
use bytes::Bytes;
use ferrobase_hbase_wire::names::{RegionName, ServerName, TableName, with_pb_magic};
use ferrobase_hbase_wire::{HBaseException, pb};
use ferrobase_types::Cell;
use prost::Message;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Timestamp of the rendered cells (HBase's would be when meta was
/// written; clients do not read it).
const META_CELL_TS: u64 = 1;

/// Which families and qualifiers a read of meta asked for; empty: all.
pub type Columns = BTreeMap<Bytes, Option<BTreeSet<Bytes>>>;

/// A `Get`'s or `Scan`'s column list as a [`Columns`].
pub fn columns(list: &[pb::Column]) -> Columns {
    let mut out = Columns::new();
    for c in list {
        if c.qualifier.is_empty() {
            out.insert(c.family.clone(), None);
        } else {
            let entry = out
                .entry(c.family.clone())
                .or_insert_with(|| Some(BTreeSet::new()));
            if let Some(set) = entry {
                set.extend(c.qualifier.iter().cloned());
            }
        }
    }
    out
}

fn wanted(columns: &Columns, family: &[u8], qualifier: &[u8]) -> bool {
    if columns.is_empty() {
        return true;
    }
    match columns.get(family) {
        None => false,
        Some(None) => true,
        Some(Some(set)) => set.contains(qualifier),
    }
}

/// A row of meta: its key and its cells in column order.
#[derive(Clone, Debug)]
pub struct MetaRow {
    pub key: Bytes,
    pub cells: Vec<Cell>,
}

/// `(table, start key, rest)` of a meta row key or search key: the table
/// ends at the first ',', the rest starts after the last one.
fn key_parts(key: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let Some(first) = key.iter().position(|&b| b == b',') else {
        return (key, &[], &[]);
    };
    let last = key.iter().rposition(|&b| b == b',').unwrap_or(first);
    let table = key.get(..first).unwrap_or_default();
    if last == first {
        return (table, key.get(first + 1..).unwrap_or_default(), &[]);
    }
    (
        table,
        key.get(first + 1..last).unwrap_or_default(),
        key.get(last + 1..).unwrap_or_default(),
    )
}

/// HBase's meta row order.
pub fn compare_keys(a: &[u8], b: &[u8]) -> Ordering {
    let (ta, sa, ra) = key_parts(a);
    let (tb, sb, rb) = key_parts(b);
    ta.cmp(tb).then_with(|| sa.cmp(sb)).then_with(|| ra.cmp(rb))
}

/// Where the master's regions are served, as HBase server names.
pub struct Renderer<'a> {
    pub master: &'a Master,
    /// This server: where every region of a standalone server is.
    pub local: &'a ServerName,
}

impl Renderer<'_> {
    fn server_of(&self, address: &str) -> Option<ServerName> {
        if address.is_empty() {
            return None;
        }
        let local = format!("{}:{}", self.local.host, self.local.port);
        if address == local {
            return Some(self.local.clone());
        }
        let (host, port) = address.rsplit_once(':')?;
        Some(ServerName::new(host, port.parse().ok()?, 0))
    }

    /// Every region row of every table (or of `only`), in meta order.
    pub fn region_rows(&self, only: Option<&str>) -> Vec<MetaRow> {
        let names = match only {
            Some(t) => vec![t.to_string()],
            None => self.master.list_tables(),
        };
        let mut rows = Vec::new();
        for name in names {
            let Ok(table) = TableName::parse(&name) else {
                continue;
            };
            let Ok((enabled, regions)) = self.master.table_regions(&name) else {
                continue;
            };
            for r in regions {
                let region = RegionName::new(&table, &r.start_key, r.region_id);
                let server = if enabled {
                    self.server_of(&r.server)
                } else {
                    None
                };
                rows.push(self.region_row(&region, &r.end_key, server));
            }
        }
        rows.sort_by(|a, b| compare_keys(&a.key, &b.key));
        rows
    }

    fn region_row(
        &self,
        region: &RegionName,
        end_key: &[u8],
        server: Option<ServerName>,
    ) -> MetaRow {
        let key = region.name.clone();
        let cell = |q: &'static str, v: Bytes| Cell::put(key.clone(), "info", q, META_CELL_TS, v);
        let mut cells = vec![
            cell("regioninfo", with_pb_magic(&region.region_info(end_key))),
            cell(
                "seqnumDuringOpen",
                Bytes::copy_from_slice(&1i64.to_be_bytes()),
            ),
        ];
        match &server {
            Some(s) => {
                cells.push(cell(
                    "server",
                    Bytes::from(format!("{}:{}", s.host, s.port)),
                ));
                cells.push(cell(
                    "serverstartcode",
                    Bytes::copy_from_slice(&(s.start_code as i64).to_be_bytes()),
                ));
                cells.push(cell(
                    "sn",
                    Bytes::from(format!("{},{},{}", s.host, s.port, s.start_code)),
                ));
                cells.push(cell("state", Bytes::from_static(b"OPEN")));
            }
            None => cells.push(cell("state", Bytes::from_static(b"CLOSED"))),
        }
        MetaRow { key, cells }
    }

    /// The `table:state` row of a table; `None` when there is no such
    /// table.
    pub fn table_state_row(&self, row: &Bytes) -> Option<MetaRow> {
        let name = std::str::from_utf8(row).ok()?;
        let enabled = self.master.is_enabled(name).ok()?;
        let state = if enabled {
            pb::table_state::State::Enabled
        } else {
            pb::table_state::State::Disabled
        };
        let value = Bytes::from(
            pb::TableState {
                state: state as i32,
            }
            .encode_to_vec(),
        );
        Some(MetaRow {
            key: row.clone(),
            cells: vec![Cell::put(
                row.clone(),
                "table",
                "state",
                META_CELL_TS,
                value,
            )],
        })
    }

    /// A Get of meta: a table's state row or a region's row, with the
    /// columns asked for.
    pub fn get(&self, get: &pb::Get) -> Result<Vec<Cell>, HBaseException> {
        if get.filter.is_some() {
            return Err(do_not_retry("filters on hbase:meta are not supported"));
        }
        let cols = columns(&get.column);
        let row = &get.row;
        let found = if row.contains(&b',') {
            let parsed = RegionName::parse(row).ok();
            parsed.and_then(|r| {
                let table = r.table.name_as_string();
                self.region_rows(Some(&table))
                    .into_iter()
                    .find(|m| m.key == *row)
            })
        } else {
            self.table_state_row(row)
        };
        Ok(found
            .map(|m| {
                m.cells
                    .into_iter()
                    .filter(|c| wanted(&cols, &c.family, &c.qualifier))
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The region rows a meta scan covers, in the order it returns them,
    /// with the columns it asked for.
    pub fn scan(&self, scan: &pb::Scan) -> Result<Vec<MetaRow>, HBaseException> {
        if scan.filter.is_some() {
            return Err(do_not_retry("filters on hbase:meta are not supported"));
        }
        let cols = columns(&scan.column);
        let range = ScanRange::of(scan);
        // A scan within one table's rows renders only that table.
        let start_table = key_parts(&range.low.key).0;
        let stop_table = key_parts(&range.high.key).0;
        let only = if !start_table.is_empty()
            && (start_table == stop_table || range.high.key.is_empty() && range.low.key.is_empty())
        {
            std::str::from_utf8(start_table).ok()
        } else {
            None
        };
        let mut rows: Vec<MetaRow> = self
            .region_rows(only)
            .into_iter()
            .filter(|m| range.contains(&m.key, compare_keys))
            .map(|mut m| {
                m.cells.retain(|c| wanted(&cols, &c.family, &c.qualifier));
                m
            })
            .filter(|m| !m.cells.is_empty())
            .collect();
        if range.reversed {
            rows.reverse();
        }
        Ok(rows)
    }
}

/// A forward meta scan that did not fit one answer: the rows still to send.
pub struct MetaScanner {
    pub rows: std::collections::VecDeque<MetaRow>,
    pub opened: std::time::Instant,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_order_is_table_then_start_key_then_id() {
        // Bytewise "t,a,5" > "t,a\0,3" but HBase sorts start key "a" first.
        let a = b"t,a,5.x.".as_slice();
        let b = b"t,a\x00,3.y.".as_slice();
        assert_eq!(compare_keys(a, b), Ordering::Less);
        assert!(a > b);
        // A locate key sorts after every region of its table starting at
        // or before its row, and before the next table.
        let locate = b"t,b,99999999999999".as_slice();
        assert_eq!(compare_keys(b"t,,1.x.", locate), Ordering::Less);
        assert_eq!(compare_keys(b"t,b,7.x.", locate), Ordering::Less);
        assert_eq!(compare_keys(b"t,c,2.x.", locate), Ordering::Greater);
        assert_eq!(compare_keys(b"t1,,2.x.", locate), Ordering::Greater);
        // "t ,," ends table t's rows.
        assert_eq!(compare_keys(b"t,zzz,9.x.", b"t ,,"), Ordering::Less);
    }

    #[test]
    fn key_parts_split_at_the_first_and_last_comma() {
        assert_eq!(
            key_parts(b"ns:t,a,b,12.x."),
            (&b"ns:t"[..], &b"a,b"[..], &b"12.x."[..])
        );
        assert_eq!(key_parts(b"t,,"), (&b"t"[..], &b""[..], &b""[..]));
        assert_eq!(key_parts(b"t"), (&b"t"[..], &b""[..], &b""[..]));
        assert_eq!(key_parts(b"t,x"), (&b"t"[..], &b"x"[..], &b""[..]));
    }

    #[test]
    fn columns_select_families_and_qualifiers() {
        let cols = columns(&[pb::Column {
            family: Bytes::from_static(b"info"),
            qualifier: vec![Bytes::from_static(b"server")],
        }]);
        assert!(wanted(&cols, b"info", b"server"));
        assert!(!wanted(&cols, b"info", b"state"));
        assert!(!wanted(&cols, b"table", b"state"));
        assert!(wanted(&Columns::new(), b"table", b"state"));
    }
}
