//! Which rows a region holds, and its name.

use bytes::Bytes;
use ferrobase_types::binary::to_string_binary;
use serde::{Deserialize, Serialize};

/// A region: a row range `[start_key, end_key)` of a table (empty bounds are
/// open), with an id unique in the cluster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionInfo {
    pub id: u64,
    pub table: String,
    pub start_key: Vec<u8>,
    pub end_key: Vec<u8>,
}

impl RegionInfo {
    /// A region covering every row of `table`.
    pub fn whole_table(id: u64, table: &str) -> RegionInfo {
        RegionInfo {
            id,
            table: table.to_string(),
            start_key: Vec::new(),
            end_key: Vec::new(),
        }
    }

    /// True when `row` belongs to this region.
    pub fn contains_row(&self, row: &[u8]) -> bool {
        row >= self.start_key.as_slice()
            && (self.end_key.is_empty() || row < self.end_key.as_slice())
    }

    /// HBase-style name: `table,startKey,id`.
    pub fn name(&self) -> String {
        format!(
            "{},{},{}",
            self.table,
            to_string_binary(&self.start_key),
            self.id
        )
    }

    /// The region's directory name under its table.
    pub fn dir_name(&self) -> String {
        format!("{:016x}", self.id)
    }

    /// Clips a scan's `[start, stop)` to this region.
    pub fn clip(&self, start: &[u8], stop: &[u8]) -> (Bytes, Bytes) {
        let s = if start < self.start_key.as_slice() {
            &self.start_key[..]
        } else {
            start
        };
        let e = match (stop.is_empty(), self.end_key.is_empty()) {
            (true, _) => &self.end_key[..],
            (false, true) => stop,
            (false, false) => stop.min(&self.end_key[..]),
        };
        (Bytes::copy_from_slice(s), Bytes::copy_from_slice(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let r = RegionInfo {
            id: 7,
            table: "t".into(),
            start_key: b"b".to_vec(),
            end_key: b"d".to_vec(),
        };
        assert!(!r.contains_row(b"a"));
        assert!(r.contains_row(b"b"));
        assert!(r.contains_row(b"c\xff"));
        assert!(!r.contains_row(b"d"));
        assert_eq!(
            r.clip(b"", b""),
            (Bytes::from_static(b"b"), Bytes::from_static(b"d"))
        );
        assert_eq!(
            r.clip(b"c", b"z"),
            (Bytes::from_static(b"c"), Bytes::from_static(b"d"))
        );
        assert!(RegionInfo::whole_table(1, "t").contains_row(b"anything"));
        assert_eq!(r.name(), "t,b,7");
    }
}
