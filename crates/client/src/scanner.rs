//! [`ResultScanner`]: a scan's rows across regions, fetched `caching` rows
//! (or `max.result.size` bytes) per round trip from a server-side scanner.
//!
//! If a region moves mid-scan the scanner reopens after the last row it
//! returned; if the server's lease expired it reports
//! [`ErrorCode::UnknownScanner`](ferrobase_proto::ErrorCode). Dropping it
//! without finishing leaves the server scanner to its lease.

use crate::error::Result;
use crate::read::{RowResult, Scan, decode_rows};
use crate::table::Table;
use bytes::Bytes;
use ferrobase_proto::pb;
use std::collections::VecDeque;

/// Rows of a scan, in row order.
pub struct ResultScanner {
    table: Table,
    scan: Scan,
    /// Where the next region scan starts.
    cursor: Bytes,
    /// The open server scanner: (server, region, id).
    open: Option<(String, u64, u64)>,
    /// End key of the region being scanned (empty: last region).
    region_end: Bytes,
    buffer: VecDeque<RowResult>,
    last_row: Option<Bytes>,
    done: bool,
}

impl ResultScanner {
    pub(crate) fn new(table: Table, scan: Scan) -> ResultScanner {
        ResultScanner {
            cursor: scan.start_row.clone(),
            table,
            scan,
            open: None,
            region_end: Bytes::new(),
            buffer: VecDeque::new(),
            last_row: None,
            done: false,
        }
    }

    fn request(&self, region_id: u64, scanner_id: u64) -> pb::ScanRequest {
        let s = &self.table.inner.settings;
        pb::ScanRequest {
            region_id,
            scanner_id,
            start_row: self.cursor.clone(),
            stop_row: self.scan.stop_row.clone(),
            spec: Some(self.scan.spec.to_pb()),
            caching: match self.scan.caching {
                0 => s.client_scanner_caching.min(u64::from(u32::MAX)) as u32,
                n => n,
            },
            max_result_size: match self.scan.max_result_size {
                0 => s.client_scanner_max_result_size,
                n => n,
            },
            close: false,
        }
    }

    /// The next row, or `None` at the end.
    pub async fn next(&mut self) -> Result<Option<RowResult>> {
        loop {
            if let Some(r) = self.buffer.pop_front() {
                self.last_row = Some(r.row.clone());
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let resp = match self.open.clone() {
                Some((server, region_id, id)) => {
                    let req = self.request(region_id, id);
                    let reply = match self.table.inner.region_server(&server) {
                        Ok(mut c) => c.scan(req).await.map_err(crate::ClientError::from),
                        Err(e) => Err(e),
                    };
                    match reply {
                        Ok(r) => r.into_inner(),
                        Err(e) if e.stale_location() => {
                            // Reopen after the last row returned.
                            self.table.inner.invalidate(&self.table.name);
                            self.open = None;
                            if let Some(last) = &self.last_row {
                                let mut next = last.to_vec();
                                next.push(0);
                                self.cursor = next.into();
                            }
                            continue;
                        }
                        Err(e) => return Err(e),
                    }
                }
                None => {
                    let table = self.table.clone();
                    let cursor = self.cursor.clone();
                    let this = &*self;
                    let (loc, resp) = table
                        .inner
                        .retry(&table.name, || {
                            let (inner, name, cursor) =
                                (table.inner.clone(), table.name.clone(), cursor.clone());
                            let mut req = this.request(0, 0);
                            async move {
                                let loc = inner.locate(&name, &cursor).await?;
                                req.region_id = loc.region_id;
                                let r = inner.region_server(&loc.server)?.scan(req).await?;
                                Ok((loc, r.into_inner()))
                            }
                        })
                        .await?;
                    self.region_end = loc.end_key.clone();
                    if resp.more {
                        self.open = Some((loc.server, loc.region_id, resp.scanner_id));
                    }
                    resp
                }
            };
            if !resp.more {
                self.open = None;
                let past_stop =
                    !self.scan.stop_row.is_empty() && self.region_end >= self.scan.stop_row;
                if self.region_end.is_empty() || past_stop {
                    self.done = true;
                } else {
                    self.cursor = self.region_end.clone();
                }
            }
            self.buffer.extend(decode_rows(resp.cells)?);
        }
    }

    /// Every remaining row.
    pub async fn collect(mut self) -> Result<Vec<RowResult>> {
        let mut out = Vec::new();
        while let Some(r) = self.next().await? {
            out.push(r);
        }
        Ok(out)
    }
}
