//! `ClientService.Scan`: opening a scanner from HBase's `Scan` message,
//! continuing and closing it, and shaping each answer (batch, partial
//! results, size limits) into HBase's `ScanResponse`.

use super::*;

/// An open scan's parameters in ferrobase's form.
pub(super) fn open_request(
    region: u64,
    req: &pb::ScanRequest,
    scan: &pb::Scan,
) -> Result<(fpb::ScanRequest, Option<Arc<Filter>>), HBaseException> {
    let range = ScanRange::of(scan);
    let (start_row, stop_row) = range.forward();
    let spec = read_spec(&scan.column, scan.time_range.as_ref(), scan.max_versions)?;
    let filter = filter_of(scan.filter.as_ref())?;
    let wanted = req
        .number_of_rows
        .or(scan.caching)
        .filter(|&n| n > 0)
        .unwrap_or(u32::MAX >> 1);
    let limit = req.limit_of_rows.filter(|&l| l > 0);
    let caching = limit.map_or(wanted, |l| l.min(wanted));
    Ok((
        fpb::ScanRequest {
            region_id: region,
            scanner_id: 0,
            start_row,
            stop_row,
            spec: Some(spec),
            caching,
            max_result_size: scan
                .max_result_size
                .filter(|&s| s > 0)
                .unwrap_or(DEFAULT_MAX_RESULT_SIZE),
            // The limit fits this call: keep no scanner once it is met.
            close: limit.is_some_and(|l| l <= wanted) || req.close_scanner == Some(true),
            reversed: range.reversed,
        },
        filter,
    ))
}

/// `ClientService.Scan` opening a scanner on a region (`region`) or
/// continuing or closing one (`req.scanner_id`).
pub fn scan(
    rs: &RegionServer,
    region: Option<u64>,
    req: &pb::ScanRequest,
    codec: Option<CellCodec>,
    closed_ids: &AtomicU64,
    access: &Access,
) -> Outcome<pb::ScanResponse> {
    let mut acl = None;
    let (ours, filter, shape) = match (req.scanner_id, region, &req.scan) {
        (Some(id), _, _) => {
            // Only its opener continues or closes a scanner.
            rs.scanners().require_owner(id, access).map_err(exception)?;
            if req.close_scanner == Some(true) {
                rs.scanners().close(id);
                return Ok(Answer::new(
                    pb::ScanResponse {
                        scanner_id: Some(id),
                        more_results: Some(false),
                        ..Default::default()
                    },
                    BytesMut::new(),
                ));
            }
            let shape = Shape::of_lease(rs, id).map_err(exception)?;
            let wanted = req.number_of_rows.filter(|&n| n > 0).unwrap_or(1);
            let next = fpb::ScanRequest {
                scanner_id: id,
                caching: shape.cap(wanted),
                max_result_size: DEFAULT_MAX_RESULT_SIZE,
                ..Default::default()
            };
            (next, None, shape)
        }
        (None, Some(region), Some(scan)) => {
            let (ours, filter) = open_request(region, req, scan)?;
            acl = read_path::check_read(rs, access, "scan", region, ours.spec.as_ref())
                .map_err(exception)?;
            (ours, filter, Shape::of_open(req, scan))
        }
        (None, _, _) => {
            return Err(do_not_retry(
                "Scan names neither a scanner nor a region and a scan",
            ));
        }
    };
    let opening = ours.scanner_id == 0;
    let reply = read_path::scan_rows(rs, ours, filter, acl).map_err(exception)?;
    if opening && reply.scanner_id != 0 {
        rs.scanners().set_owner(reply.scanner_id, access);
    }
    let returned = reply.rows.len() as u64;
    let rows_left = shape.rows_left.map(|l| l.saturating_sub(returned));
    let limit_met = rows_left == Some(0);
    let mut more = reply.more;
    if reply.scanner_id != 0 {
        if limit_met {
            rs.scanners().close(reply.scanner_id);
            more = false;
        } else if (opening || shape.rows_left.is_some())
            && let Ok(lease) = rs.scanners().checkout(reply.scanner_id)
        {
            let mut l = lease.lock();
            l.rows_left = rows_left;
            l.cells_per_result = shape.cells_per_result;
            l.bytes_per_result = shape.bytes_per_result;
        }
    }
    let scanner_id = match reply.scanner_id {
        0 => CLOSED_SCANNER_IDS | closed_ids.fetch_add(1, Ordering::Relaxed),
        id => id,
    };
    let mut block = BytesMut::new();
    let mut message = pb::ScanResponse {
        scanner_id: Some(scanner_id),
        // The whole scan goes on in the next region unless the filter can
        // pass nothing more or the limit is met; the client applies its
        // own stop row.
        more_results: Some(!reply.filter_done && !limit_met),
        more_results_in_region: Some(more),
        ttl: Some(SCANNER_TTL_MS),
        ..Default::default()
    };
    encode_rows(&reply.rows, &shape, codec, &mut block, &mut message)?;
    Ok(Answer::new(message, block))
}

/// How a scan's rows are cut into results and how many it may return.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Shape {
    rows_left: Option<u64>,
    cells_per_result: Option<u32>,
    bytes_per_result: Option<u64>,
}

impl Shape {
    pub(super) fn of_open(req: &pb::ScanRequest, scan: &pb::Scan) -> Shape {
        Shape {
            rows_left: req.limit_of_rows.filter(|&l| l > 0).map(u64::from),
            cells_per_result: scan.batch_size.filter(|&b| b > 0),
            bytes_per_result: (scan.allow_partial_results == Some(true)).then(|| {
                scan.max_result_size
                    .filter(|&s| s > 0)
                    .unwrap_or(DEFAULT_MAX_RESULT_SIZE)
            }),
        }
    }

    pub(super) fn of_lease(rs: &RegionServer, id: u64) -> crate::Result<Shape> {
        let lease = rs.scanners().checkout(id)?;
        let l = lease.lock();
        Ok(Shape {
            rows_left: l.rows_left,
            cells_per_result: l.cells_per_result,
            bytes_per_result: l.bytes_per_result,
        })
    }

    /// `wanted` rows, no more than the limit leaves.
    pub(super) fn cap(&self, wanted: u32) -> u32 {
        match self.rows_left {
            Some(left) => u32::try_from(left).unwrap_or(u32::MAX).min(wanted),
            None => wanted,
        }
    }

    /// A row's cells as results: `(cells, partial)`, `partial` set on every
    /// part but the row's last.
    pub(super) fn parts<'a>(&self, cells: &'a [Cell]) -> Vec<(&'a [Cell], bool)> {
        if self.cells_per_result.is_none() && self.bytes_per_result.is_none() {
            return vec![(cells, false)];
        }
        let max_cells = self.cells_per_result.map_or(usize::MAX, |b| b as usize);
        let max_bytes = self.bytes_per_result.unwrap_or(u64::MAX);
        let mut parts = Vec::new();
        let mut start = 0;
        let mut bytes = 0u64;
        for (i, c) in cells.iter().enumerate() {
            bytes += (c.row.len() + c.family.len() + c.qualifier.len() + c.value.len() + 20) as u64;
            if i + 1 - start >= max_cells || bytes >= max_bytes {
                parts.push((&cells[start..=i], true));
                start = i + 1;
                bytes = 0;
            }
        }
        if start < cells.len() {
            parts.push((&cells[start..], true));
        }
        if let Some(last) = parts.last_mut() {
            last.1 = false;
        }
        parts
    }
}

pub(super) fn encode_rows(
    rows: &Rows,
    shape: &Shape,
    codec: Option<CellCodec>,
    block: &mut BytesMut,
    message: &mut pb::ScanResponse,
) -> Result<(), HBaseException> {
    for (_, cells) in rows {
        for (part, partial) in shape.parts(cells) {
            match codec {
                Some(codec) => {
                    let n = encode_cells(block, codec, part)
                        .map_err(|e| do_not_retry(format!("results could not be encoded: {e}")))?;
                    message
                        .cells_per_result
                        .push(u32::try_from(n).unwrap_or(u32::MAX));
                }
                None => message.results.push(pb::Result {
                    cell: part.iter().map(cell_to_pb).collect(),
                    partial: Some(partial),
                    ..Default::default()
                }),
            }
            message.partial_flag_per_result.push(partial);
        }
    }
    Ok(())
}
