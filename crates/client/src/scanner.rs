//! [`ResultScanner`]: a scan's rows across regions, fetched `caching` rows
//! (or `max.result.size` bytes) per round trip from a server-side scanner.
//!
//! A forward scan walks regions first to last; a reversed scan walks them
//! last to first and each server returns its region's rows descending. If a
//! region moves mid-scan the scanner reopens after the last row it
//! returned; if the server's lease expired it reports
//! [`ErrorCode::UnknownScanner`](ferrobase_proto::ErrorCode). Dropping it
//! without finishing leaves the server scanner to its lease. This module
//! never evaluates filters: the server does.

use crate::connection::RegionLocation;
use crate::error::Result;
use crate::read::{RowResult, Scan, decode_rows};
use crate::table::Table;
use bytes::Bytes;
use ferrobase_proto::pb;
use std::collections::VecDeque;

/// Rows of a scan, in row order (descending for a reversed scan).
pub struct ResultScanner {
    table: Table,
    scan: Scan,
    /// The scan's forward range `[low, high)`; empty: unbounded.
    low: Bytes,
    high: Bytes,
    /// Forward: where the next region scan starts (inclusive). Reversed:
    /// where it ends (exclusive; empty: the table's end).
    cursor: Bytes,
    /// The open server scanner: (server, region, id).
    open: Option<(String, u64, u64)>,
    /// Key range of the region being scanned.
    region_start: Bytes,
    region_end: Bytes,
    buffer: VecDeque<RowResult>,
    last_row: Option<Bytes>,
    /// Rows handed out (for `limit`).
    returned: u64,
    done: bool,
}

impl ResultScanner {
    pub(crate) fn new(table: Table, scan: Scan) -> ResultScanner {
        let (low, high) = scan.forward_range();
        let cursor = if scan.reversed {
            high.clone()
        } else {
            low.clone()
        };
        // A range that is empty by construction returns nothing.
        let done = !low.is_empty() && !high.is_empty() && low >= high;
        ResultScanner {
            table,
            scan,
            low,
            high,
            cursor,
            open: None,
            region_start: Bytes::new(),
            region_end: Bytes::new(),
            buffer: VecDeque::new(),
            last_row: None,
            returned: 0,
            done,
        }
    }

    fn request(&self, region_id: u64, scanner_id: u64) -> pb::ScanRequest {
        let s = &self.table.inner.settings;
        let (start_row, stop_row) = if self.scan.reversed {
            (self.low.clone(), self.cursor.clone())
        } else {
            (self.cursor.clone(), self.high.clone())
        };
        let mut caching = match self.scan.caching {
            0 => s.client_scanner_caching.min(u64::from(u32::MAX)) as u32,
            n => n,
        };
        let mut close = false;
        if self.scan.limit > 0 {
            // No point fetching more rows than the limit leaves; when one
            // call can return them all, an opening call asks the server to
            // keep no scanner once it has (see `ScanRequest.close`).
            let left = self.scan.limit.saturating_sub(self.returned).max(1);
            caching = caching.min(left.min(u64::from(u32::MAX)) as u32);
            close = scanner_id == 0 && u64::from(caching) >= left;
        }
        pb::ScanRequest {
            region_id,
            scanner_id,
            start_row,
            stop_row,
            spec: Some(self.scan.spec.to_pb()),
            caching,
            max_result_size: match self.scan.max_result_size {
                0 => s.client_scanner_max_result_size,
                n => n,
            },
            close,
            reversed: self.scan.reversed,
        }
    }

    /// The region the next region scan reads.
    async fn locate(&self) -> Result<RegionLocation> {
        let inner = &self.table.inner;
        if !self.scan.reversed {
            return inner.locate(&self.table.name, &self.cursor).await;
        }
        // The region holding the greatest row below the cursor.
        let regions = inner.regions(&self.table.name).await?;
        let i = if self.cursor.is_empty() {
            regions.len()
        } else {
            regions.partition_point(|r| r.start_key < self.cursor)
        };
        regions.get(i.saturating_sub(1)).cloned().ok_or_else(|| {
            crate::ClientError::Invalid(format!("table '{}' has no regions", self.table.name))
        })
    }

    /// Where to reopen after the last row returned (a region moved).
    fn resume_after_last(&mut self) {
        if let Some(last) = &self.last_row {
            self.cursor = if self.scan.reversed {
                last.clone()
            } else {
                let mut next = last.to_vec();
                next.push(0);
                next.into()
            };
        }
    }

    /// Moves to the next region once the current one is exhausted.
    fn region_finished(&mut self) {
        self.open = None;
        if self.scan.reversed {
            let below_low = !self.low.is_empty() && self.region_start <= self.low;
            if self.region_start.is_empty() || below_low {
                self.done = true;
            } else {
                self.cursor = self.region_start.clone();
            }
        } else {
            let past_stop = !self.high.is_empty() && self.region_end >= self.high;
            if self.region_end.is_empty() || past_stop {
                self.done = true;
            } else {
                self.cursor = self.region_end.clone();
            }
        }
    }

    /// Closes the server scanner early (limit reached); errors are moot
    /// because the lease would expire anyway.
    async fn close_open(&mut self) {
        if let Some((server, region_id, id)) = self.open.take() {
            let mut req = self.request(region_id, id);
            req.close = true;
            if let Ok(mut c) = self.table.inner.region_server(&server) {
                let _ = c.scan(req).await;
            }
        }
    }

    /// The next row, or `None` at the end.
    pub async fn next(&mut self) -> Result<Option<RowResult>> {
        loop {
            if self.scan.limit > 0 && self.returned >= self.scan.limit {
                if !self.done {
                    self.done = true;
                    self.buffer.clear();
                    self.close_open().await;
                }
                return Ok(None);
            }
            if let Some(r) = self.buffer.pop_front() {
                self.last_row = Some(r.row.clone());
                self.returned += 1;
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let fetched = match self.open.clone() {
                Some((server, region_id, id)) => {
                    let req = self.request(region_id, id);
                    let reply = match self.table.inner.region_server(&server) {
                        Ok(mut c) => c.scan(req).await.map_err(crate::ClientError::from),
                        Err(e) => Err(e),
                    };
                    match reply {
                        Ok(r) => (filter_done(&r), r.into_inner()),
                        Err(e) if e.stale_location() => {
                            self.table.inner.invalidate(&self.table.name);
                            self.open = None;
                            self.resume_after_last();
                            continue;
                        }
                        Err(e) => return Err(e),
                    }
                }
                None => {
                    let table = self.table.clone();
                    let this = &*self;
                    let (loc, resp) = table
                        .inner
                        .retry(&table.name, || {
                            let inner = table.inner.clone();
                            let mut req = this.request(0, 0);
                            async move {
                                let loc = this.locate().await?;
                                req.region_id = loc.region_id;
                                let r = inner.region_server(&loc.server)?.scan(req).await?;
                                Ok((loc, (filter_done(&r), r.into_inner())))
                            }
                        })
                        .await?;
                    self.region_start = loc.start_key.clone();
                    self.region_end = loc.end_key.clone();
                    if resp.1.more {
                        self.open = Some((loc.server, loc.region_id, resp.1.scanner_id));
                    }
                    resp
                }
            };
            let (filter_done, resp) = fetched;
            if !resp.more {
                self.region_finished();
            }
            if filter_done {
                // No later row of any region can pass the filter.
                self.open = None;
                self.done = true;
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

/// True when the server says the scan's filter can pass no later row.
fn filter_done<T>(r: &tonic::Response<T>) -> bool {
    r.metadata().get(ferrobase_proto::FILTER_DONE_KEY).is_some()
}
