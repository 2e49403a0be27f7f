//! [`RowBatch`]: the surviving cells of one row, gathered while a
//! compaction reads them, so the store file writer gets whole rows
//! (`append_row`, the flush's path) and does its per-entry bookkeeping
//! once per row.
//!
//! The merge's keys and values are only valid until it moves on, so a
//! batch copies each cell's qualifier and value (a few dozen bytes for a
//! wide row's cell) into one buffer. A batch never grows past
//! [`MAX_CELLS`] cells or [`MAX_BYTES`] bytes: a longer row goes to the
//! writer in parts, which continue the same row.
//!
//! ```text
//! bytes: [ q0 | v0 | q1 | v1 | … ]     cells: (q0 end, v0 end, ts, type, seq) …
//! ```

use crate::cell::{CellView, reuse};
use crate::error::Result;
use crate::storefile::StoreFileWriter;

/// Cells a batch holds before it goes to the writer.
pub const MAX_CELLS: usize = 4096;
/// Qualifier and value bytes a batch holds before it goes to the writer.
pub const MAX_BYTES: usize = 1 << 20;

/// See the module docs.
#[derive(Default)]
pub struct RowBatch {
    row: Vec<u8>,
    bytes: Vec<u8>,
    cells: Vec<Parts>,
    views: Vec<CellView<'static>>,
}

/// Where a cell's qualifier and value end in `bytes` (each starts where
/// the previous field ended), and its key's other parts.
#[derive(Clone, Copy)]
struct Parts {
    qualifier_end: usize,
    value_end: usize,
    timestamp: u64,
    kind: u8,
    seq: u64,
}

impl RowBatch {
    /// Starts row `row`, handing `writer` what the previous row gathered.
    pub fn start_row(&mut self, row: &[u8], writer: &mut StoreFileWriter) -> Result<()> {
        self.write_to(writer)?;
        self.row.clear();
        self.row.extend_from_slice(row);
        Ok(())
    }

    /// Adds a cell of the current row (cells come in internal order).
    #[inline]
    pub fn push(
        &mut self,
        (qualifier, timestamp, kind): (&[u8], u64, u8),
        seq: u64,
        value: &[u8],
        writer: &mut StoreFileWriter,
    ) -> Result<()> {
        self.bytes.extend_from_slice(qualifier);
        let qualifier_end = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.cells.push(Parts {
            qualifier_end,
            value_end: self.bytes.len(),
            timestamp,
            kind,
            seq,
        });
        if self.cells.len() >= MAX_CELLS || self.bytes.len() >= MAX_BYTES {
            self.write_to(writer)?;
        }
        Ok(())
    }

    /// Hands `writer` the cells gathered so far (nothing when none are).
    pub fn write_to(&mut self, writer: &mut StoreFileWriter) -> Result<()> {
        if self.cells.is_empty() {
            return Ok(());
        }
        let mut views = reuse(std::mem::take(&mut self.views));
        let mut start = 0;
        for p in &self.cells {
            views.push(CellView {
                qualifier: self.bytes.get(start..p.qualifier_end).unwrap_or_default(),
                timestamp: p.timestamp,
                kind: p.kind,
                seq: p.seq,
                value: self
                    .bytes
                    .get(p.qualifier_end..p.value_end)
                    .unwrap_or_default(),
            });
            start = p.value_end;
        }
        let written = writer.append_row(&self.row, &views);
        self.views = reuse(views);
        self.cells.clear();
        self.bytes.clear();
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::{CellType, FamilyDescriptor, key};

    /// Rows through a batch (one longer than a batch holds, split in
    /// parts) write the bytes `append` writes for the same cells.
    #[test]
    fn batched_rows_write_what_append_writes() {
        let dir = tempfile::tempdir().unwrap();
        let fam = FamilyDescriptor::new("cf").unwrap();
        let rows: Vec<(Vec<u8>, usize)> = vec![
            (b"a".to_vec(), 3),
            (b"b".to_vec(), MAX_CELLS * 2 + 7),
            (b"c".to_vec(), 1),
        ];
        let cell = |i: usize| {
            (
                format!("q{i:06}").into_bytes(),
                format!("v{i}").into_bytes(),
            )
        };
        let mut by_key = StoreFileWriter::create(&dir.path().join("k"), &fam, 0).unwrap();
        let mut by_row = StoreFileWriter::create(&dir.path().join("r"), &fam, 0).unwrap();
        let mut batch = RowBatch::default();
        let put = CellType::Put.code();
        for (row, n) in &rows {
            batch.start_row(row, &mut by_row).unwrap();
            for i in 0..*n {
                let (q, v) = cell(i);
                let k = key::encode(row, b"cf", &q, 9, CellType::Put);
                by_key.append(&k, 5, &v).unwrap();
                batch.push((&q, 9, put), 5, &v, &mut by_row).unwrap();
            }
        }
        batch.write_to(&mut by_row).unwrap();
        let (a, b) = (by_key.finish().unwrap(), by_row.finish().unwrap());
        assert_eq!(a.entries, (MAX_CELLS * 2 + 11) as u64);
        assert_eq!(a.entries, b.entries);
        assert_eq!(
            std::fs::read(dir.path().join("k")).unwrap(),
            std::fs::read(dir.path().join("r")).unwrap()
        );
    }

    /// A cell out of order is refused when its batch reaches the writer.
    #[test]
    fn a_bad_batch_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let fam = FamilyDescriptor::new("cf").unwrap();
        let mut w = StoreFileWriter::create(&dir.path().join("x"), &fam, 0).unwrap();
        let mut batch = RowBatch::default();
        let put = CellType::Put.code();
        batch.start_row(b"r", &mut w).unwrap();
        batch.push((b"b", 1, put), 1, b"v", &mut w).unwrap();
        batch.push((b"a", 1, put), 1, b"v", &mut w).unwrap();
        assert!(batch.write_to(&mut w).is_err());
    }
}
