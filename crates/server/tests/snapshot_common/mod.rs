//! What the snapshot scenarios share: a table's whole contents as plain
//! tuples, and the store files under a data directory.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use ferrobase_client::{Connection, Scan};
use std::path::{Path, PathBuf};

/// One cell: row, family, qualifier, timestamp, value.
pub type CellTuple = (Bytes, Bytes, Bytes, u64, Bytes);

/// Every visible version (up to 10) of every cell of `table`, in order.
pub async fn dump(conn: &Connection, table: &str) -> Vec<CellTuple> {
    let rows = conn
        .table(table)
        .scan(Scan::new().versions(10))
        .collect()
        .await
        .unwrap();
    rows.into_iter()
        .flat_map(|r| r.cells)
        .map(|c| (c.row, c.family, c.qualifier, c.timestamp, c.value))
        .collect()
}

/// Store files (`*.sf`) under `dir`, recursively.
pub fn store_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(store_files(&p));
        } else if p.extension().is_some_and(|x| x == "sf") {
            out.push(p);
        }
    }
    out.sort();
    out
}
