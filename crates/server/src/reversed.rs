//! [`ReversedScanner`]: a region's rows in descending order (HBase's
//! reversed scan) over an engine that only iterates forward.
//!
//! A first forward pass over the range notes every `CHUNK_ROWS`-th row key
//! as a chunk boundary and keeps only the rows of the last chunk. Rows are
//! then handed out from that chunk down, and each earlier chunk is read
//! forward again when its turn comes. Memory stays within one chunk plus
//! the boundary keys, at the cost of reading the range twice when it holds
//! more than one chunk. Each chunk is its own read, so rows written during
//! the scan may appear in chunks not yet read (as for a forward scan that
//! reopens after a region move). This module never filters.

use crate::error::Result;
use bytes::Bytes;
use ferrobase_storage::{Region, RegionScanner, Scan};
use ferrobase_types::Cell;
use std::sync::Arc;

/// Rows per chunk.
const CHUNK_ROWS: usize = 1024;

/// A reversed scan of one region.
pub struct ReversedScanner {
    region: Arc<Region>,
    /// Columns, versions, time range; start/stop set per chunk.
    scan: Scan,
    /// Starts of the chunks still to read, ascending.
    starts: Vec<Bytes>,
    /// Exclusive end of the next chunk to read.
    top: Bytes,
    /// The current chunk, ascending: `pop` gives the next row.
    rows: Vec<Vec<Cell>>,
}

impl ReversedScanner {
    /// Opens a reversed scan of `scan`'s range (already clipped to the
    /// region); returns it with the drained forward scanner of the first
    /// pass (which a scanner lease holds).
    pub fn open(region: Arc<Region>, scan: Scan) -> Result<(ReversedScanner, RegionScanner)> {
        let mut forward = region.scan(&scan)?;
        let mut starts = vec![scan.start_row.clone()];
        let mut rows: Vec<Vec<Cell>> = Vec::new();
        while let Some(cells) = forward.next_row()? {
            let Some(first) = cells.first() else { continue };
            if rows.len() == CHUNK_ROWS {
                starts.push(first.row.clone());
                rows.clear();
            }
            rows.push(cells);
        }
        // The last chunk's rows are in hand already.
        let top = starts.pop().unwrap_or_default();
        let r = ReversedScanner {
            region,
            scan,
            starts,
            top,
            rows,
        };
        Ok((r, forward))
    }

    /// The next row, descending; `None` at the start of the range.
    pub fn next_row(&mut self) -> Result<Option<Vec<Cell>>> {
        loop {
            if let Some(row) = self.rows.pop() {
                return Ok(Some(row));
            }
            let Some(start) = self.starts.pop() else {
                return Ok(None);
            };
            let chunk = Scan {
                start_row: start.clone(),
                stop_row: std::mem::replace(&mut self.top, start),
                ..self.scan.clone()
            };
            let mut scanner = self.region.scan(&chunk)?;
            while let Some(cells) = scanner.next_row()? {
                if !cells.is_empty() {
                    self.rows.push(cells);
                }
            }
        }
    }
}
