//! Cells of an answer: a `Result` message's cells, inline or in the
//! response's cell block, as ferrobase [`Cell`]s sharing the received
//! buffer.
//!
//! This module owns matching the counts a message announces
//! (`associated_cell_count`, `cells_per_result`) with the cell block, and
//! refuses a count that runs past it; it never decides what the cells mean.

use crate::error::{ClientError, Result};
use bytes::Bytes;
use ferrobase_hbase_wire::cellblock::CellBlockReader;
use ferrobase_hbase_wire::convert::mutation::cell_from_pb;
use ferrobase_hbase_wire::pb;
use ferrobase_types::Cell;

/// Reads cells from a response's cell block in the order the messages
/// announce them.
pub(crate) struct CellSource<'a> {
    reader: Option<CellBlockReader<'a>>,
}

impl<'a> CellSource<'a> {
    pub(crate) fn new(block: Option<&'a Bytes>) -> CellSource<'a> {
        CellSource {
            reader: block.map(CellBlockReader::new),
        }
    }

    /// The next `count` cells of the block.
    pub(crate) fn take(&mut self, count: usize) -> Result<Vec<Cell>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let reader = self.reader.as_mut().ok_or_else(|| {
            ClientError::Protocol(format!("{count} cell(s) announced but no cell block sent"))
        })?;
        reader
            .read_cells(count)
            .map_err(|e| ClientError::Protocol(format!("cell block: {e}")))
    }

    /// A `Result` message's cells: its inline cells, then the cells it
    /// announces from the block.
    pub(crate) fn result(&mut self, r: &pb::Result) -> Result<Vec<Cell>> {
        let mut cells = r
            .cell
            .iter()
            .map(cell_from_pb)
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let count = usize::try_from(r.associated_cell_count.unwrap_or(0))
            .map_err(|_| ClientError::Protocol("negative associated_cell_count".into()))?;
        cells.extend(self.take(count)?);
        Ok(cells)
    }
}

/// The rows of a scan answer: one cell list per result, from
/// `cells_per_result` and the cell block, or from inline results.
pub(crate) fn scan_rows(resp: &pb::ScanResponse, block: Option<&Bytes>) -> Result<Vec<Vec<Cell>>> {
    let mut source = CellSource::new(block);
    let mut rows = Vec::with_capacity(resp.cells_per_result.len() + resp.results.len());
    for n in &resp.cells_per_result {
        rows.push(source.take(*n as usize)?);
    }
    for r in &resp.results {
        rows.push(source.result(r)?);
    }
    Ok(rows)
}
