//! Gets and scans with what HBase evaluates on the server: filters in
//! HBase's filter language (`ReadSpec.filter`, parsed once per get call or
//! scanner) and reversed scans (`ScanRequest.reversed`).
//!
//! Plain reads go straight to [`RegionServer::get`] / [`RegionServer::scan`].
//! A filtered get filters the rows those return. A filtered or reversed
//! scan keeps its [`ScanState`] (the filter with its PageFilter/WHILE state,
//! and for a reversed scan the region's rows) in its scanner lease.
//!
//! As in HBase, cells a filter drops do not count towards the requested
//! versions: a filtered read fetches every stored version, filters, then
//! keeps the newest `max_versions` of each column.
//!
//! Reversed scans read the region in chunks ([`crate::reversed`]). This
//! module never writes.

use crate::acl::{Access, CellFilter};
use crate::error::{Result, ServerError};
use crate::region_server::RegionServer;
use crate::reversed::ReversedScanner;
use bytes::Bytes;
use ferrobase_filter::{Filter, ScanFilter};
use ferrobase_proto::ErrorCode;
use ferrobase_proto::{cellblock, pb};
use ferrobase_storage::{Region, RegionScanner, Scan};
use ferrobase_types::Cell;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Rows a filtered call may examine before it answers (possibly with no
/// rows, `more` set) so that one call never walks a whole region.
const MAX_ROWS_EXAMINED_PER_CALL: usize = 100_000;

/// What a filtered or reversed scanner carries between calls.
#[derive(Default)]
pub struct ScanState {
    filter: Option<ScanFilter>,
    /// Versions per column to return after filtering.
    versions: u32,
    /// Reversed scans: where the rows come from.
    reversed: Option<ReversedScanner>,
    /// The cells the caller may read, when not all ([`crate::acl`]):
    /// applied before the filter, as HBase's `AccessControlFilter`.
    acl: Option<CellFilter>,
}

impl ScanState {
    /// True for a plain forward scan without a filter.
    pub fn is_plain(&self) -> bool {
        self.filter.is_none() && self.reversed.is_none() && self.acl.is_none()
    }
}

/// The columns a read spec names, as the permission checks take them.
pub fn read_columns(spec: Option<&pb::ReadSpec>) -> Vec<(&[u8], Vec<&[u8]>)> {
    spec.map_or_else(Vec::new, |s| {
        s.columns
            .iter()
            .map(|c| (&c.family[..], c.qualifiers.iter().map(|q| &q[..]).collect()))
            .collect()
    })
}

/// The READ check of a get or scan opening on `region` (HBase's
/// `preGetOp`/`preScannerOpen`): `None` when the caller may read all it
/// asked for, the cells it may read otherwise, or the denial.
pub fn check_read(
    rs: &RegionServer,
    access: &Access,
    what: &str,
    region: u64,
    spec: Option<&pb::ReadSpec>,
) -> Result<Option<CellFilter>> {
    if !access.checked() {
        return Ok(None);
    }
    let table = rs.region(region)?.table().name.clone();
    access.read(what, &table, &read_columns(spec))
}

/// Parses a request's filter string once; `None` when it is empty.
pub fn parse_filter(spec: Option<&pb::ReadSpec>) -> Result<Option<Arc<Filter>>> {
    let text = spec.map_or("", |s| s.filter.as_str());
    if text.trim().is_empty() {
        return Ok(None);
    }
    ferrobase_filter::parse(text)
        .map(|f| Some(Arc::new(f)))
        .map_err(|e| ServerError::new(ErrorCode::InvalidFilter, format!("invalid filter: {e}")))
}

/// Rows as read: each row's key with its cells, in request or scan order.
pub type Rows = Vec<(Bytes, Vec<Cell>)>;

/// Rows in ferrobase's cell-block form.
pub fn encode_rows(rows: &Rows) -> Bytes {
    cellblock::encode_results(rows.iter().map(|(r, c)| (&r[..], &c[..])))
}

/// Reads `rows` of a region with the spec's filter; one result row per
/// requested row (empty when filtered out).
pub fn get(
    rs: &RegionServer,
    region: u64,
    rows: &[Bytes],
    spec: Option<&pb::ReadSpec>,
    access: &Access,
) -> Result<Bytes> {
    let acl = check_read(rs, access, "get", region, spec)?;
    let filter = parse_filter(spec)?;
    Ok(encode_rows(&get_rows(
        rs,
        region,
        rows,
        spec,
        filter,
        acl.as_ref(),
    )?))
}

/// [`get`] with the filter already parsed (or built from another
/// protocol's filter messages); `spec.filter` is not looked at. `acl`
/// drops the cells the caller may not read, before the filter sees them.
pub fn get_rows(
    rs: &RegionServer,
    region: u64,
    rows: &[Bytes],
    spec: Option<&pb::ReadSpec>,
    filter: Option<Arc<Filter>>,
    acl: Option<&CellFilter>,
) -> Result<Rows> {
    let Some(filter) = filter else {
        let mut rows = rs.get_rows(region, rows, spec)?;
        if let Some(acl) = acl {
            acl.filter_rows(&mut rows, false);
        }
        return Ok(rows);
    };
    let (wide, versions) = widen(spec);
    let results = rs.get_rows(region, rows, Some(&wide))?;
    Ok(results
        .into_iter()
        .map(|(row, mut cells)| {
            if let Some(acl) = acl {
                cells.retain(|c| acl.allows(c));
            }
            // Each row of a multi-get is its own read, as in HBase.
            let cells = ScanFilter::new(filter.clone(), false).filter_row(cells);
            (row, trim_versions(cells, versions))
        })
        .collect())
}

/// A scan call's answer.
pub struct ScanReply {
    pub response: pb::ScanResponse,
    /// The filter can pass no later row in any region: the client should
    /// end the whole scan (sent as [`ferrobase_proto::FILTER_DONE_KEY`]).
    pub filter_done: bool,
}

/// A scan call's answer, its rows not yet encoded for a protocol.
#[derive(Default)]
pub struct ScanRows {
    /// The scanner to continue with; 0 when none was kept.
    pub scanner_id: u64,
    pub rows: Rows,
    /// False when the region has no more rows for this scan.
    pub more: bool,
    /// The filter can pass no later row in any region.
    pub filter_done: bool,
}

/// Opens or continues a scan, filtered and/or reversed as asked, as
/// `access`'s caller (its READ checked at the opening; a continuation
/// must be the opener's).
pub fn scan(rs: &RegionServer, req: pb::ScanRequest, access: &Access) -> Result<ScanReply> {
    let (filter, acl) = if req.scanner_id == 0 {
        let acl = check_read(rs, access, "scan", req.region_id, req.spec.as_ref())?;
        (parse_filter(req.spec.as_ref())?, acl)
    } else {
        rs.scanners().require_owner(req.scanner_id, access)?;
        (None, None)
    };
    let opening = req.scanner_id == 0;
    let r = scan_rows(rs, req, filter, acl)?;
    if opening && r.scanner_id != 0 {
        rs.scanners().set_owner(r.scanner_id, access);
    }
    Ok(ScanReply {
        response: pb::ScanResponse {
            scanner_id: r.scanner_id,
            cells: encode_rows(&r.rows),
            rows: r.rows.len() as u32,
            more: r.more,
        },
        filter_done: r.filter_done,
    })
}

/// [`scan`] with the opening call's filter already parsed (`spec.filter`
/// is not looked at); a continuation uses the filter its lease holds.
pub fn scan_rows(
    rs: &RegionServer,
    req: pb::ScanRequest,
    filter: Option<Arc<Filter>>,
    acl: Option<CellFilter>,
) -> Result<ScanRows> {
    if req.scanner_id != 0 {
        if !req.close {
            let lease = rs.scanners().checkout(req.scanner_id)?;
            let plain = lease.lock().state.is_plain();
            if !plain {
                return continue_scan(rs, &req, &lease);
            }
        }
        return rs.scan_rows(req);
    }
    if filter.is_none() && !req.reversed && acl.is_none() {
        return rs.scan_rows(req);
    }
    let region = online_region(rs, req.region_id)?;
    let mut scan = Scan::default();
    let (wide, versions) = widen(req.spec.as_ref());
    let spec = if filter.is_some() {
        Some(&wide)
    } else {
        req.spec.as_ref()
    };
    apply_spec(&region, spec, &mut scan)?;
    let (start, stop) = region.info().clip(&req.start_row, &req.stop_row);
    if !stop.is_empty() && start >= stop {
        return Ok(ScanRows::default());
    }
    scan.start_row = start;
    scan.stop_row = stop;
    let mut state = ScanState {
        filter: filter.map(|f| ScanFilter::new(f, req.reversed)),
        versions,
        reversed: None,
        acl,
    };
    let mut scanner = if req.reversed {
        let (reversed, drained) = ReversedScanner::open(region, scan)?;
        state.reversed = Some(reversed);
        drained
    } else {
        region.scan(&scan)?
    };
    let f = fetch(&mut scanner, &mut state, &req)?;
    let rows = f.rows.len() as u32;
    let scanner_id = if crate::scanner_leases::keeps_lease(&req, f.more, rows) {
        rs.scanners().register_with(scanner, req.region_id, state)
    } else {
        0
    };
    Ok(ScanRows {
        scanner_id,
        rows: f.rows,
        more: f.more && scanner_id != 0,
        filter_done: f.scan_done,
    })
}

fn continue_scan(
    rs: &RegionServer,
    req: &pb::ScanRequest,
    lease: &Arc<parking_lot::Mutex<crate::scanner_leases::Lease>>,
) -> Result<ScanRows> {
    let mut l = lease.lock();
    let l = &mut *l;
    let f = fetch(&mut l.scanner, &mut l.state, req)?;
    if !f.more {
        rs.scanners().close(req.scanner_id);
    }
    Ok(ScanRows {
        scanner_id: req.scanner_id,
        rows: f.rows,
        more: f.more,
        filter_done: f.scan_done,
    })
}

/// One batch of a scan's rows.
struct Fetched {
    rows: Rows,
    more: bool,
    scan_done: bool,
}

/// Up to `caching` rows (and about `max_result_size` bytes) that pass the
/// filter; `more` false when the region (or the filter) has no more.
fn fetch(
    scanner: &mut RegionScanner,
    state: &mut ScanState,
    req: &pb::ScanRequest,
) -> Result<Fetched> {
    let caching = if req.caching == 0 {
        usize::MAX
    } else {
        req.caching as usize
    };
    let mut rows: Rows = Vec::new();
    let mut size = 0u64;
    let mut examined = 0usize;
    let mut more = true;
    while rows.len() < caching && examined < MAX_ROWS_EXAMINED_PER_CALL {
        if state.filter.as_ref().is_some_and(ScanFilter::done) {
            more = false;
            break;
        }
        let next = match &mut state.reversed {
            Some(reversed) => reversed.next_row()?,
            None => scanner.next_row()?,
        };
        let Some(cells) = next else {
            more = false;
            break;
        };
        examined += 1;
        let mut cells = cells;
        if let Some(acl) = &state.acl {
            cells.retain(|c| acl.allows(c));
            if cells.is_empty() {
                continue;
            }
        }
        let cells = match &mut state.filter {
            Some(f) => trim_versions(f.filter_row(cells), state.versions),
            None => cells,
        };
        let Some(first) = cells.first() else { continue };
        size += cells
            .iter()
            .map(|c| (c.qualifier.len() + c.value.len() + 12) as u64)
            .sum::<u64>();
        rows.push((first.row.clone(), cells));
        if req.max_result_size > 0 && size >= req.max_result_size {
            break;
        }
    }
    if more && state.filter.as_ref().is_some_and(ScanFilter::done) {
        more = false;
    }
    let scan_done = state.filter.as_ref().is_some_and(ScanFilter::scan_done);
    Ok(Fetched {
        rows,
        more,
        scan_done,
    })
}

/// The spec asking for every stored version, and the versions the
/// caller wants (at least 1).
fn widen(spec: Option<&pb::ReadSpec>) -> (pb::ReadSpec, u32) {
    let mut wide = spec.cloned().unwrap_or_default();
    let versions = wide.max_versions.max(1);
    wide.max_versions = u32::MAX;
    (wide, versions)
}

/// Keeps the newest `versions` cells of each column (cells are in column,
/// newest-first order).
fn trim_versions(mut cells: Vec<Cell>, versions: u32) -> Vec<Cell> {
    let mut run = 0u32;
    let mut prev: Option<(Bytes, Bytes)> = None;
    cells.retain(|c| {
        let same = prev
            .as_ref()
            .is_some_and(|(f, q)| *f == c.family && *q == c.qualifier);
        if same {
            run += 1;
        } else {
            run = 1;
            prev = Some((c.family.clone(), c.qualifier.clone()));
        }
        run <= versions
    });
    cells
}

fn online_region(rs: &RegionServer, id: u64) -> Result<Arc<Region>> {
    match rs.engine().region(id) {
        Some(r) if !r.is_closed() && !rs.is_offline(id) => Ok(r),
        _ => Err(ServerError::not_serving(id)),
    }
}

/// The request's columns, versions and time range on `scan` (as the
/// region server does for plain reads).
fn apply_spec(region: &Region, spec: Option<&pb::ReadSpec>, scan: &mut Scan) -> Result<()> {
    let Some(spec) = spec else { return Ok(()) };
    for c in &spec.columns {
        crate::region_server::require_family(region, &c.family)?;
        let qualifiers = if c.qualifiers.is_empty() {
            None
        } else {
            Some(c.qualifiers.iter().cloned().collect::<BTreeSet<Bytes>>())
        };
        scan.columns.insert(c.family.clone(), qualifiers);
    }
    if spec.max_versions > 0 {
        scan.max_versions = spec.max_versions;
    }
    let max = if spec.max_timestamp == 0 {
        u64::MAX
    } else {
        spec.max_timestamp
    };
    scan.time_range = (spec.min_timestamp, max);
    Ok(())
}
