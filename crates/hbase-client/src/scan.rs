//! [`Scan`] and [`Scanner`]: reading a range of rows, region by region.
//!
//! This module owns the scanner protocol of `ClientService.Scan`: open a
//! scanner in the region holding the start row (the request carries the
//! `Scan`), ask for `caching` rows per call with the scanner id and a
//! `next_call_seq` that counts the calls, move to the next region when the
//! server says the region has no more rows, and close a scanner left open
//! (dropping a [`Scanner`] mid-way leaves the server's lease to expire).
//! A scanner that fails to open is retried after a relocate; one that fails
//! mid-region is reopened just after the last row returned. It asks for
//! whole rows only (no partial results).
//!
//! A reversed scan (HBase's `Scan.setReversed`) runs from its start row
//! (the highest, included) down to its stop row (excluded), region after
//! region towards the table's start: the next region is the one holding
//! the rows just below the current region's start key, opened at that key
//! excluded, as HBase's client locates it (`RegionLocateType.BEFORE`).

use crate::connection::CLIENT_SERVICE;
use crate::error::{ClientError, Result};
use crate::locator::RegionLocation;
use crate::results::scan_rows;
use crate::table::Table;
use bytes::Bytes;
use ferrobase_hbase_wire::pb;
use ferrobase_types::Cell;
use std::collections::VecDeque;

/// What a scan reads.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// First row (inclusive); empty: the table's start.
    pub start_row: Bytes,
    /// Row to stop before (exclusive); empty: the table's end.
    pub stop_row: Bytes,
    /// Families to read; empty: every family.
    pub families: Vec<Bytes>,
    /// Rows per call (`hbase.client.scanner.caching`); 0: the connection's.
    pub caching: u32,
    /// Versions per column (default 1).
    pub max_versions: u32,
    /// Stop after this many rows (0: no limit).
    pub limit: u64,
    /// Rows from `start_row` down to `stop_row`: the start is then the
    /// highest row (empty: the table's end) and the stop the lowest.
    pub reversed: bool,
}

impl Scan {
    /// Every row of the table.
    pub fn new() -> Scan {
        Scan {
            max_versions: 1,
            ..Default::default()
        }
    }

    /// Rows `[start, stop)`.
    pub fn range(start: impl Into<Bytes>, stop: impl Into<Bytes>) -> Scan {
        Scan {
            start_row: start.into(),
            stop_row: stop.into(),
            ..Scan::new()
        }
    }

    /// Reads only `family` (may be called more than once).
    pub fn family(mut self, family: impl Into<Bytes>) -> Scan {
        self.families.push(family.into());
        self
    }

    /// Reads rows in descending order; see [`Scan::reversed`](field@Scan::reversed).
    pub fn reversed(mut self) -> Scan {
        self.reversed = true;
        self
    }

    /// Rows per call.
    pub fn caching(mut self, rows: u32) -> Scan {
        self.caching = rows;
        self
    }

    /// At most `rows` rows.
    pub fn limit(mut self, rows: u64) -> Scan {
        self.limit = rows;
        self
    }

    fn to_pb(&self, start: &Bytes, include_start: bool, caching: u32, max_size: u64) -> pb::Scan {
        pb::Scan {
            column: self
                .families
                .iter()
                .map(|f| pb::Column {
                    family: f.clone(),
                    qualifier: vec![],
                })
                .collect(),
            start_row: Some(start.clone()),
            stop_row: Some(self.stop_row.clone()),
            max_versions: Some(self.max_versions.max(1)),
            caching: Some(caching),
            max_result_size: Some(max_size),
            include_start_row: Some(include_start),
            reversed: Some(self.reversed),
            ..Default::default()
        }
    }
}

/// An open scan; see the module docs.
pub struct Scanner {
    table: Table,
    scan: Scan,
    /// Where the next region's scanner starts, and whether that row itself
    /// is included (after a failure mid-region it was already returned).
    next_start: Option<(Bytes, bool)>,
    open: Option<OpenScanner>,
    rows: VecDeque<Vec<Cell>>,
    returned: u64,
    /// The last row received, to check that rows keep the scan's order.
    last_row: Option<Bytes>,
}

struct OpenScanner {
    region: RegionLocation,
    id: u64,
    seq: u64,
}

impl Scanner {
    pub(crate) fn new(table: Table, scan: Scan) -> Scanner {
        Scanner {
            next_start: Some((scan.start_row.clone(), true)),
            table,
            scan,
            open: None,
            rows: VecDeque::new(),
            returned: 0,
            last_row: None,
        }
    }

    fn caching(&self) -> u32 {
        let c = if self.scan.caching > 0 {
            self.scan.caching
        } else {
            self.table.connection().config().scanner_caching
        };
        let left = self
            .scan
            .limit
            .checked_sub(self.returned)
            .filter(|_| self.scan.limit > 0);
        match left {
            Some(l) => c.min(u32::try_from(l).unwrap_or(u32::MAX)).max(1),
            None => c.max(1),
        }
    }

    /// The next row's cells, or `None` at the end.
    pub async fn next_row(&mut self) -> Result<Option<Vec<Cell>>> {
        loop {
            if self.scan.limit > 0 && self.returned >= self.scan.limit {
                self.close().await;
                return Ok(None);
            }
            if let Some(row) = self.rows.pop_front() {
                self.returned += 1;
                return Ok(Some(row));
            }
            if self.open.is_none() && self.next_start.is_none() {
                return Ok(None);
            }
            self.fetch().await?;
        }
    }

    /// Fills `rows` from the open scanner, or opens one in the next region.
    async fn fetch(&mut self) -> Result<()> {
        let conn = self.table.connection().clone();
        let caching = self.caching();
        let max_size = conn.config().scanner_max_result_size;
        if let Some(open) = &mut self.open {
            let req = pb::ScanRequest {
                scanner_id: Some(open.id),
                number_of_rows: Some(caching),
                next_call_seq: Some(open.seq),
                ..Default::default()
            };
            let answer: Result<(pb::ScanResponse, _)> = conn
                .call(&open.region.server, CLIENT_SERVICE, "Scan", &req, None, 0)
                .await;
            open.seq += 1;
            match answer {
                Ok((resp, block)) => {
                    let region = open.region.clone();
                    self.take(&resp, block.as_ref(), &region)
                }
                Err(e) => {
                    // Reopen after the last row handed out (or buffered).
                    self.open = None;
                    if !e.is_retryable() && !e.class_is("UnknownScannerException") {
                        return Err(e);
                    }
                    Ok(())
                }
            }
        } else {
            let Some((start, include)) = self.next_start.clone() else {
                return Ok(());
            };
            let table = self.table.clone();
            let scan = self.scan.to_pb(&start, include, caching, max_size);
            let name = table.name().to_string();
            let (region, resp, block) = conn
                .retrying(Some(&name), |_| {
                    let (conn, name, start, scan) =
                        (conn.clone(), name.clone(), start.clone(), scan.clone());
                    async move {
                        let region = if scan.reversed == Some(true) {
                            conn.inner
                                .locator
                                .locate_reversed(&conn, &name, &start, include)
                                .await?
                        } else {
                            conn.inner.locator.locate(&conn, &name, &start).await?
                        };
                        let req = pb::ScanRequest {
                            region: Some(region.specifier()),
                            scan: Some(scan),
                            number_of_rows: Some(caching),
                            ..Default::default()
                        };
                        let (resp, block): (pb::ScanResponse, Option<Bytes>) = conn
                            .call(&region.server, CLIENT_SERVICE, "Scan", &req, None, 0)
                            .await?;
                        Ok((region, resp, block))
                    }
                })
                .await?;
            self.take(&resp, block.as_ref(), &region)
        }
    }

    /// Takes a scan answer's rows and decides what comes next.
    fn take(
        &mut self,
        resp: &pb::ScanResponse,
        block: Option<&Bytes>,
        region: &RegionLocation,
    ) -> Result<()> {
        let rows = scan_rows(resp, block)?;
        let got = rows.len();
        // A server that ignores `reversed` (or repeats rows) would have the
        // scan go round the same regions for ever: an error instead.
        for r in rows.iter().filter_map(|r| r.first()) {
            if let Some(prev) = &self.last_row {
                let in_order = if self.scan.reversed {
                    r.row < *prev
                } else {
                    r.row > *prev
                };
                if !in_order {
                    self.open = None;
                    self.next_start = None;
                    return Err(ClientError::Protocol(format!(
                        "the {} scan got row {:?} after row {:?} from {}",
                        if self.scan.reversed {
                            "reversed"
                        } else {
                            "forward"
                        },
                        String::from_utf8_lossy(&r.row),
                        String::from_utf8_lossy(prev),
                        region.server
                    )));
                }
            }
            self.last_row = Some(r.row.clone());
        }
        if let Some(last) = rows.iter().rev().find_map(|r| r.first()) {
            self.next_start = Some((last.row.clone(), false));
        }
        self.rows.extend(rows.into_iter().filter(|r| !r.is_empty()));
        if resp.more_results == Some(false) {
            // The server says the whole scan is done (the stop row).
            self.open = None;
            self.next_start = None;
            return Ok(());
        }
        let region_done = resp.more_results_in_region == Some(false)
            || (resp.more_results_in_region.is_none() && got == 0);
        match resp.scanner_id.filter(|_| !region_done) {
            Some(id) => {
                let seq = self.open.as_ref().map_or(0, |o| o.seq);
                self.open = Some(OpenScanner {
                    region: region.clone(),
                    id,
                    seq,
                });
            }
            None => {
                self.open = None;
                self.next_start = self.next_region(region);
            }
        }
        Ok(())
    }

    /// Where the scan goes after `region`, unless that region reaches the
    /// stop row or the table's edge: forward, the next region's start key
    /// (included); reversed, this region's start key (excluded), which
    /// locates the region below it.
    fn next_region(&self, region: &RegionLocation) -> Option<(Bytes, bool)> {
        let stop = &self.scan.stop_row;
        if self.scan.reversed {
            let start = &region.start_key;
            let past_stop = !stop.is_empty() && *start <= *stop;
            (!start.is_empty() && !past_stop).then(|| (start.clone(), false))
        } else {
            let end = &region.end_key;
            let past_stop = !stop.is_empty() && *end >= *stop;
            (!end.is_empty() && !past_stop).then(|| (end.clone(), true))
        }
    }

    /// Closes a scanner left open on the server (after a limit).
    pub async fn close(&mut self) {
        self.next_start = None;
        self.rows.clear();
        if let Some(open) = self.open.take() {
            let req = pb::ScanRequest {
                scanner_id: Some(open.id),
                close_scanner: Some(true),
                ..Default::default()
            };
            let conn = self.table.connection();
            let _: Result<(pb::ScanResponse, _)> = conn
                .call(&open.region.server, CLIENT_SERVICE, "Scan", &req, None, 0)
                .await;
        }
    }
}
