//! HBase's `ClientService` (Get, Mutate, Scan, Multi) over ferrobase's
//! regions: each request is read into ferrobase's terms (a
//! [`RowMutation`], a read spec and filter, a forward scan range) and run
//! by the [`RegionServer`] and [`read_path`] exactly as a gRPC call is.
//!
//! Every function here is synchronous region work for a handler thread (or
//! the RPC thread, for a short local read); the connection module decides
//! which. Results go back as the connection's cell block when it has a
//! codec, as protobuf cells otherwise. Nothing here knows about sockets or
//! `hbase:meta` (see `meta_table`).

use super::exceptions::{convert, do_not_retry, exception};
use super::scan::ScanRange;
use crate::acl::{Access, Action};
use crate::nonces::{ServerNonces, Start};
use crate::read_path::{self, Rows};
use crate::region_server::RegionServer;
use bytes::{Bytes, BytesMut};
use ferrobase_filter::{Comparator, CompareOp, Filter};
use ferrobase_hbase_wire::cellblock::{CellBlockReader, CellCodec, encode_cells};
use ferrobase_hbase_wire::convert::filter::{
    comparator_from_pb, compare_op_from_pb, filter_from_pb,
};
use ferrobase_hbase_wire::convert::mutation::{
    MutationKind, WireMutation, cell_to_pb, mutation_from_pb, result_to_pb,
};
use ferrobase_hbase_wire::convert::time_range_from_pb;
use ferrobase_hbase_wire::{HBaseException, pb};
use ferrobase_proto::pb as fpb;
use ferrobase_storage::Get;
use ferrobase_types::{Cell, LATEST_TIMESTAMP, RowMutation};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What the Java client's scanner asks for per call when it does not say
/// (HBase's `hbase.client.scanner.max.result.size`, 2 MiB).
pub const DEFAULT_MAX_RESULT_SIZE: u64 = 2 * 1024 * 1024;

/// How long an idle scanner lives, as the client is told (ms; HBase's
/// `hbase.client.scanner.timeout.period` default).
pub const SCANNER_TTL_MS: u32 = 60_000;

/// Ids given to scans answered in full with no scanner kept: never a live
/// lease's id (those count up from 1), so a stray close or next of one
/// touches nothing.
const CLOSED_SCANNER_IDS: u64 = 1 << 63;

/// A successful answer: the response message and its cell block.
pub struct Answer<M> {
    pub message: M,
    pub cells: BytesMut,
}

impl<M> Answer<M> {
    fn new(message: M, cells: BytesMut) -> Answer<M> {
        Answer { message, cells }
    }
}

type Outcome<M> = Result<Answer<M>, HBaseException>;

/// What a write call brings besides its message: the cell block and its
/// codec, the nonces of applied increments and appends, and the caller.
pub struct Io<'a> {
    pub cell_block: Option<&'a Bytes>,
    pub codec: Option<CellCodec>,
    pub nonces: &'a ServerNonces,
    pub access: &'a Access,
}

/// The table of a region online here.
fn table_of(rs: &RegionServer, region: u64) -> Result<String, HBaseException> {
    Ok(rs.region(region).map_err(exception)?.table().name.clone())
}

/// A read's columns, versions and time range in ferrobase's form. HBase's
/// time range is `[from, to)` with `to` = `Long.MAX_VALUE` for "no upper
/// bound"; ferrobase writes no upper bound as 0.
pub fn read_spec(
    columns: &[pb::Column],
    time_range: Option<&pb::TimeRange>,
    max_versions: Option<u32>,
) -> Result<fpb::ReadSpec, HBaseException> {
    let (from, to) = time_range_from_pb(time_range).map_err(convert)?;
    Ok(fpb::ReadSpec {
        columns: columns
            .iter()
            .map(|c| fpb::ColumnSpec {
                family: c.family.clone(),
                qualifiers: c.qualifier.clone(),
            })
            .collect(),
        max_versions: max_versions.unwrap_or(1).max(1),
        min_timestamp: from,
        max_timestamp: if to >= LATEST_TIMESTAMP { 0 } else { to },
        filter: String::new(),
    })
}

/// A request's filter, decoded once.
pub fn filter_of(f: Option<&pb::Filter>) -> Result<Option<Arc<Filter>>, HBaseException> {
    f.map(|f| filter_from_pb(f).map(Arc::new).map_err(convert))
        .transpose()
}

/// One result's cells: into the cell block with a codec, inline without.
pub fn encode_result(
    cells: &[Cell],
    codec: Option<CellCodec>,
    block: &mut BytesMut,
) -> Result<pb::Result, HBaseException> {
    match codec {
        Some(codec) => result_to_pb(cells, codec, block).map_err(convert),
        None => Ok(pb::Result {
            cell: cells.iter().map(cell_to_pb).collect(),
            ..Default::default()
        }),
    }
}

/// `ClientService.Get` of one row of a region.
pub fn get(
    rs: &RegionServer,
    region: u64,
    get: &pb::Get,
    codec: Option<CellCodec>,
    access: &Access,
) -> Outcome<pb::GetResponse> {
    let mut block = BytesMut::new();
    let result = get_result(rs, region, get, codec, &mut block, access)?;
    Ok(Answer::new(
        pb::GetResponse {
            result: Some(result),
        },
        block,
    ))
}

fn get_result(
    rs: &RegionServer,
    region: u64,
    get: &pb::Get,
    codec: Option<CellCodec>,
    block: &mut BytesMut,
    access: &Access,
) -> Result<pb::Result, HBaseException> {
    if get.closest_row_before == Some(true) {
        return Err(do_not_retry(
            "Get with closest_row_before is not supported: use a reversed scan",
        ));
    }
    let spec = read_spec(&get.column, get.time_range.as_ref(), get.max_versions)?;
    let acl = read_path::check_read(rs, access, "get", region, Some(&spec)).map_err(exception)?;
    let filter = filter_of(get.filter.as_ref())?;
    let rows = read_path::get_rows(
        rs,
        region,
        std::slice::from_ref(&get.row),
        Some(&spec),
        filter,
        acl.as_ref(),
    )
    .map_err(exception)?;
    let cells = rows.into_iter().next().map(|(_, c)| c).unwrap_or_default();
    if get.existence_only == Some(true) {
        return Ok(pb::Result {
            exists: Some(!cells.is_empty()),
            associated_cell_count: Some(0),
            ..Default::default()
        });
    }
    encode_result(&cells, codec, block)
}

/// A decoded mutation ready to apply: a whole-row Delete is expanded to a
/// family delete per family of the region's table.
fn row_mutation(
    rs: &RegionServer,
    region: u64,
    w: WireMutation,
) -> Result<RowMutation, HBaseException> {
    if !w.is_whole_row_delete() {
        return Ok(w.mutation);
    }
    let r = rs.region(region).map_err(exception)?;
    let mut m = RowMutation::new(w.mutation.row.clone()).with_durability(w.mutation.durability);
    for f in &r.table().families {
        m = m.delete_family(f.name.clone(), w.timestamp);
    }
    Ok(m)
}

/// The families of `m` that the region's table lacks, as HBase's
/// `NoSuchColumnFamilyException`; then WRITE on every cell of it (HBase's
/// `prePut`/`preDelete`/`preIncrement`/`preAppend`): every write path
/// of this service passes here before it applies anything.
fn check_families(
    rs: &RegionServer,
    region: u64,
    m: &RowMutation,
    access: &Access,
) -> Result<(), HBaseException> {
    let r = rs.region(region).map_err(exception)?;
    for f in m.families() {
        crate::region_server::require_family(&r, &f.family).map_err(exception)?;
    }
    access
        .require_write("mutate", &r.table().name, std::slice::from_ref(m))
        .map_err(exception)
}

/// A checked call's condition (HBase's `preCheckAndPut`): READ and WRITE
/// on the checked column; a filter condition reads the row, so it needs
/// READ on the table.
fn check_condition(
    rs: &RegionServer,
    region: u64,
    c: &Condition,
    access: &Access,
) -> Result<(), HBaseException> {
    if !access.checked() {
        return Ok(());
    }
    let table = table_of(rs, region)?;
    match c {
        Condition::Column(check) => access.require_column_all(
            "checkAndMutate",
            &table,
            (&check.family, &check.qualifier),
            &[Action::Read, Action::Write],
        ),
        Condition::Filter(..) => access.require_table("checkAndMutate", &table, &[Action::Read]),
    }
    .map_err(exception)
}

/// A `Condition`'s column, time range and test, with HBase's semantics
/// (`HRegion.checkAndMutate`): an empty expected value matches an absent
/// column (or an empty value) unless the operator is NOT_EQUAL, and the
/// operator reads "expected OP stored".
struct Check {
    family: Bytes,
    qualifier: Bytes,
    time_range: (u64, u64),
    op: CompareOp,
    comparator: Comparator,
    expected_empty: bool,
}

impl Check {
    fn of(c: &pb::Condition) -> Result<Check, HBaseException> {
        let family = c
            .family
            .clone()
            .ok_or_else(|| do_not_retry("checkAndMutate condition names no family"))?;
        let op = compare_op_from_pb(c.compare_type.unwrap_or(pb::CompareType::Equal as i32))
            .map_err(convert)?;
        let comparator = c
            .comparator
            .as_ref()
            .ok_or_else(|| do_not_retry("checkAndMutate condition has no comparator"))
            .and_then(|c| comparator_from_pb(c).map_err(convert))?;
        let expected_empty = match &comparator {
            Comparator::Binary(v) | Comparator::BinaryPrefix(v) => v.is_empty(),
            _ => false,
        };
        let time_range = match &c.time_range {
            Some(t) => time_range_from_pb(Some(t)).map_err(convert)?,
            None => (0, u64::MAX),
        };
        Ok(Check {
            family,
            qualifier: c.qualifier.clone().unwrap_or_default(),
            time_range,
            op,
            comparator,
            expected_empty,
        })
    }

    fn passes(&self, current: Option<&Cell>) -> bool {
        let not_equal = self.op == CompareOp::NotEqual;
        match current {
            None => self.expected_empty && !not_equal,
            Some(c) if self.expected_empty => c.value.is_empty() != not_equal,
            Some(c) => self.op.keeps(self.comparator.order(&c.value).reverse()),
        }
    }
}

/// What a checked mutation tests: one column, or a filter the row must
/// pass (some cell left after filtering).
enum Condition {
    Column(Check),
    Filter(Arc<Filter>, (u64, u64)),
}

impl Condition {
    fn of(c: &pb::Condition) -> Result<Condition, HBaseException> {
        match &c.filter {
            Some(f) => {
                let filter = filter_of(Some(f))?.ok_or_else(|| do_not_retry("empty filter"))?;
                let time_range = match &c.time_range {
                    Some(t) => time_range_from_pb(Some(t)).map_err(convert)?,
                    None => (0, u64::MAX),
                };
                Ok(Condition::Filter(filter, time_range))
            }
            None => Check::of(c).map(Condition::Column),
        }
    }

    /// True when the condition holds for `row` now (the caller holds the
    /// row lock).
    fn holds(&self, rs: &RegionServer, region: u64, row: &Bytes) -> Result<bool, HBaseException> {
        let r = rs.region(region).map_err(exception)?;
        match self {
            Condition::Column(check) => {
                crate::region_server::require_family(&r, &check.family).map_err(exception)?;
                let mut g = Get::new(row.clone());
                g.add_column(check.family.clone(), check.qualifier.clone());
                g.time_range = check.time_range;
                let cells = r.get(&g).map_err(|e| exception(e.into()))?;
                Ok(check.passes(cells.first()))
            }
            Condition::Filter(filter, (from, to)) => {
                let spec = fpb::ReadSpec {
                    min_timestamp: *from,
                    max_timestamp: if *to >= LATEST_TIMESTAMP { 0 } else { *to },
                    ..Default::default()
                };
                let rows = read_path::get_rows(
                    rs,
                    region,
                    std::slice::from_ref(row),
                    Some(&spec),
                    Some(filter.clone()),
                    None,
                )
                .map_err(exception)?;
                Ok(rows.iter().any(|(_, cells)| !cells.is_empty()))
            }
        }
    }
}

/// What a checked call does when its condition holds.
enum Checked {
    /// Puts and Deletes of the row, as one batch.
    Mutations(Vec<RowMutation>),
    /// An Increment (false) or Append (true) whose new cells come back.
    ReadModifyWrite(RowMutation, bool),
}

/// Runs `action` on `row` if `condition` holds, under the row lock.
/// Returns whether it held, and an Increment's or Append's new cells.
fn check_and(
    rs: &RegionServer,
    region: u64,
    row: &Bytes,
    condition: Option<&Condition>,
    action: Checked,
) -> Result<(bool, Option<Vec<Cell>>), HBaseException> {
    let _guard = rs.lock_row(region, row);
    if let Some(c) = condition
        && !c.holds(rs, region, row)?
    {
        return Ok((false, None));
    }
    match action {
        Checked::Mutations(ms) => {
            if !ms.is_empty() {
                rs.region(region)
                    .map_err(exception)?
                    .mutate_owned(ms)
                    .map_err(|e| exception(e.into()))?;
            }
            Ok((true, None))
        }
        Checked::ReadModifyWrite(m, append) => rs
            .read_modify_write_locked(region, m, append)
            .map(|cells| (true, Some(cells)))
            .map_err(exception),
    }
}

/// False when the client asked for no result (`setReturnResults(false)`:
/// the attribute `_rr_` holding a false boolean).
fn returns_results(w: &WireMutation) -> bool {
    !w.attributes
        .iter()
        .any(|a| a.name == "_rr_" && a.value.as_deref() == Some(&[0u8][..]))
}

/// The Get answering a retried Increment or Append that was applied
/// already: the current cells of the columns it names (HBase's
/// "convert to Get").
fn duplicate_as_get(m: &RowMutation) -> pb::Get {
    let mut column: Vec<pb::Column> = Vec::new();
    for c in m.mutations() {
        match column.iter_mut().find(|col| col.family == *c.family) {
            Some(col) => col.qualifier.push(Bytes::copy_from_slice(c.qualifier)),
            None => column.push(pb::Column {
                family: c.family.clone(),
                qualifier: vec![Bytes::copy_from_slice(c.qualifier)],
            }),
        }
    }
    pb::Get {
        row: m.row.clone(),
        column,
        ..Default::default()
    }
}

/// An Increment or Append outside a checked call, applied once per nonce:
/// its new cells, or (a retry of an applied one) the row's current ones.
fn read_modify_write_once(
    rs: &RegionServer,
    region: u64,
    w: WireMutation,
    nonces: (&ServerNonces, u64),
    codec: Option<CellCodec>,
    block: &mut BytesMut,
    access: &Access,
) -> Result<pb::Result, HBaseException> {
    let append = w.kind == MutationKind::Append;
    check_families(rs, region, &w.mutation, access)?;
    let (manager, group) = nonces;
    let nonce = w.nonce.unwrap_or(0);
    let mut m = w.mutation;
    if nonce != 0 {
        m.nonce = Some((group, nonce));
    }
    match manager.start(group, nonce) {
        // The caller's own applied cells: HBase answers them without READ.
        Start::Duplicate => get_result(
            rs,
            region,
            &duplicate_as_get(&m),
            codec,
            block,
            &Access::unchecked(),
        ),
        Start::Proceed => {
            let done = rs
                .read_modify_write_row(region, m, append)
                .map_err(exception);
            manager.end(group, nonce, done.is_ok());
            encode_result(&done?, codec, block)
        }
    }
}

/// `ClientService.Mutate`: a Put or Delete (optionally checked), or an
/// Increment or Append whose new cells come back (applied once per nonce).
pub fn mutate(
    rs: &RegionServer,
    region: u64,
    req: &pb::MutateRequest,
    io: &Io<'_>,
) -> Outcome<pb::MutateResponse> {
    let (codec, nonces, access) = (io.codec, io.nonces, io.access);
    let mut reader = io.cell_block.map(CellBlockReader::new);
    let w = mutation_from_pb(&req.mutation, reader.as_mut()).map_err(convert)?;
    let kind = w.kind;
    let condition = req.condition.as_ref().map(Condition::of).transpose()?;
    if let Some(c) = &condition {
        check_condition(rs, region, c, access)?;
    }
    if let Some(c) = &req.condition
        && c.row != w.mutation.row
    {
        return Err(do_not_retry(
            "checkAndMutate: the condition's row is not the mutation's row",
        ));
    }
    let mut block = BytesMut::new();
    match kind {
        MutationKind::Increment | MutationKind::Append if condition.is_none() => {
            let wants = returns_results(&w);
            let group = req.nonce_group.unwrap_or(0);
            let result =
                read_modify_write_once(rs, region, w, (nonces, group), codec, &mut block, access)?;
            // Without results asked for, no cells go back.
            let (result, block) = if wants {
                (Some(result), block)
            } else {
                (None, BytesMut::new())
            };
            Ok(Answer::new(
                pb::MutateResponse {
                    result,
                    processed: Some(true),
                },
                block,
            ))
        }
        MutationKind::Increment | MutationKind::Append => {
            let wants = returns_results(&w);
            check_families(rs, region, &w.mutation, access)?;
            let row = w.mutation.row.clone();
            let action = Checked::ReadModifyWrite(w.mutation, kind == MutationKind::Append);
            let (processed, cells) = check_and(rs, region, &row, condition.as_ref(), action)?;
            let result = match cells {
                Some(cells) if wants => Some(encode_result(&cells, codec, &mut block)?),
                _ => None,
            };
            Ok(Answer::new(
                pb::MutateResponse {
                    result,
                    processed: Some(processed),
                },
                block,
            ))
        }
        MutationKind::Put | MutationKind::Delete => {
            let m = row_mutation(rs, region, w)?;
            check_families(rs, region, &m, access)?;
            let processed = match &condition {
                Some(c) => {
                    let row = m.row.clone();
                    check_and(rs, region, &row, Some(c), Checked::Mutations(vec![m]))?.0
                }
                None => {
                    rs.region(region)
                        .map_err(exception)?
                        .mutate(m)
                        .map_err(|e| exception(e.into()))?;
                    true
                }
            };
            Ok(Answer::new(
                pb::MutateResponse {
                    result: None,
                    processed: Some(processed),
                },
                block,
            ))
        }
    }
}

/// An open scan's parameters in ferrobase's form.
fn open_request(
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
struct Shape {
    rows_left: Option<u64>,
    cells_per_result: Option<u32>,
    bytes_per_result: Option<u64>,
}

impl Shape {
    fn of_open(req: &pb::ScanRequest, scan: &pb::Scan) -> Shape {
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

    fn of_lease(rs: &RegionServer, id: u64) -> crate::Result<Shape> {
        let lease = rs.scanners().checkout(id)?;
        let l = lease.lock();
        Ok(Shape {
            rows_left: l.rows_left,
            cells_per_result: l.cells_per_result,
            bytes_per_result: l.bytes_per_result,
        })
    }

    /// `wanted` rows, no more than the limit leaves.
    fn cap(&self, wanted: u32) -> u32 {
        match self.rows_left {
            Some(left) => u32::try_from(left).unwrap_or(u32::MAX).min(wanted),
            None => wanted,
        }
    }

    /// A row's cells as results: `(cells, partial)`, `partial` set on every
    /// part but the row's last.
    fn parts<'a>(&self, cells: &'a [Cell]) -> Vec<(&'a [Cell], bool)> {
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

fn encode_rows(
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

/// A Multi's mutation, decoded in request order (cells come from the one
/// cell block in that order).
enum Decoded {
    Get(pb::Get),
    Mutation(WireMutation),
    Failed(HBaseException),
}

/// `ClientService.Multi`: per region action, Gets answered at once and the
/// Puts and Deletes applied as one batch (as HBase does, so a batch gives
/// no order between its reads and writes of one row); an atomic or
/// conditional action applies all its mutations or none.
pub fn multi(
    rs: &RegionServer,
    regions: &[Result<u64, HBaseException>],
    req: &pb::MultiRequest,
    io: &Io<'_>,
) -> Outcome<pb::MultiResponse> {
    let (cell_block, codec, nonces) = (io.cell_block, io.codec, io.nonces);
    if req.condition.is_some() {
        return Err(do_not_retry(
            "a MultiRequest-level condition is not supported: put it on the RegionAction",
        ));
    }
    // Decode every action first: the cell block holds every mutation's
    // cells in request order, also those of regions that fail.
    let mut reader = cell_block.map(CellBlockReader::new);
    let mut decoded: Vec<Vec<(u32, Decoded)>> = Vec::with_capacity(req.region_action.len());
    for ra in &req.region_action {
        let mut actions = Vec::with_capacity(ra.action.len());
        for (pos, a) in ra.action.iter().enumerate() {
            let index = a.index.unwrap_or(pos as u32);
            let d = match (&a.mutation, &a.get) {
                (Some(m), _) => match mutation_from_pb(m, reader.as_mut()) {
                    Ok(w) => Decoded::Mutation(w),
                    // The cell block cannot be trusted past a bad mutation.
                    Err(e) => return Err(convert(e)),
                },
                (None, Some(g)) => Decoded::Get(g.clone()),
                (None, None) => Decoded::Failed(do_not_retry(
                    "coprocessor service calls are not supported by ferrobase",
                )),
            };
            actions.push((index, d));
        }
        decoded.push(actions);
    }
    let mut block = BytesMut::new();
    let mut results = Vec::with_capacity(decoded.len());
    for ((ra, actions), region) in req.region_action.iter().zip(decoded).zip(regions) {
        let result = match region {
            Ok(region) => region_action(
                rs,
                (*region, ra),
                actions,
                codec,
                &mut block,
                (nonces, req.nonce_group.unwrap_or(0)),
                io.access,
            ),
            Err(e) => pb::RegionActionResult {
                exception: Some(e.to_name_bytes_pair()),
                ..Default::default()
            },
        };
        results.push(result);
    }
    Ok(Answer::new(
        pb::MultiResponse {
            region_action_result: results,
            processed: None,
            region_statistics: Some(pb::MultiRegionLoadStats::default()),
        },
        block,
    ))
}

fn failed(index: u32, e: &HBaseException) -> pb::ResultOrException {
    pb::ResultOrException {
        index: Some(index),
        exception: Some(e.to_name_bytes_pair()),
        ..Default::default()
    }
}

fn done(index: u32, result: pb::Result) -> pb::ResultOrException {
    pb::ResultOrException {
        index: Some(index),
        result: Some(result),
        ..Default::default()
    }
}

fn region_action(
    rs: &RegionServer,
    (region, ra): (u64, &pb::RegionAction),
    actions: Vec<(u32, Decoded)>,
    codec: Option<CellCodec>,
    block: &mut BytesMut,
    nonces: (&ServerNonces, u64),
    access: &Access,
) -> pb::RegionActionResult {
    if ra.atomic == Some(true) || ra.condition.is_some() {
        return atomic_action(rs, region, ra, actions, access);
    }
    let mut out = Vec::with_capacity(actions.len());
    // (index, mutation) applied together after the reads.
    let mut batch: Vec<(u32, RowMutation)> = Vec::new();
    for (index, d) in actions {
        match d {
            Decoded::Get(g) => match get_result(rs, region, &g, codec, block, access) {
                Ok(r) => out.push(done(index, r)),
                Err(e) => out.push(failed(index, &e)),
            },
            Decoded::Failed(e) => out.push(failed(index, &e)),
            Decoded::Mutation(w) => match w.kind {
                MutationKind::Increment | MutationKind::Append => {
                    match read_modify_write_once(rs, region, w, nonces, codec, block, access) {
                        Ok(r) => out.push(done(index, r)),
                        Err(e) => out.push(failed(index, &e)),
                    }
                }
                MutationKind::Put | MutationKind::Delete => {
                    match row_mutation(rs, region, w)
                        .and_then(|m| check_families(rs, region, &m, access).map(|()| m))
                    {
                        Ok(m) => batch.push((index, m)),
                        Err(e) => out.push(failed(index, &e)),
                    }
                }
            },
        }
    }
    if !batch.is_empty() {
        let (indexes, mutations): (Vec<u32>, Vec<RowMutation>) = batch.into_iter().unzip();
        let applied = rs
            .region(region)
            .map_err(exception)
            .and_then(|r| r.mutate_owned(mutations).map_err(|e| exception(e.into())));
        for index in indexes {
            match &applied {
                Ok(()) => out.push(done(index, pb::Result::default())),
                Err(e) => out.push(failed(index, e)),
            }
        }
    }
    pb::RegionActionResult {
        result_or_exception: out,
        ..Default::default()
    }
}

/// `RowMutations` (atomic) and `checkAndMutate` of several mutations: all
/// of one row, applied together or not at all.
fn atomic_action(
    rs: &RegionServer,
    region: u64,
    ra: &pb::RegionAction,
    actions: Vec<(u32, Decoded)>,
    access: &Access,
) -> pb::RegionActionResult {
    let fail_all = |e: HBaseException| pb::RegionActionResult {
        exception: Some(e.to_name_bytes_pair()),
        ..Default::default()
    };
    let mut indexes = Vec::with_capacity(actions.len());
    let mut mutations = Vec::with_capacity(actions.len());
    for (index, d) in actions {
        let m = match d {
            Decoded::Mutation(w) if matches!(w.kind, MutationKind::Put | MutationKind::Delete) => {
                match row_mutation(rs, region, w)
                    .and_then(|m| check_families(rs, region, &m, access).map(|()| m))
                {
                    Ok(m) => m,
                    Err(e) => return fail_all(e),
                }
            }
            _ => {
                return fail_all(do_not_retry(
                    "an atomic region action may hold only Puts and Deletes",
                ));
            }
        };
        indexes.push(index);
        mutations.push(m);
    }
    let Some(row) = mutations.first().map(|m| m.row.clone()) else {
        return pb::RegionActionResult {
            processed: Some(true),
            ..Default::default()
        };
    };
    let processed = ra
        .condition
        .as_ref()
        .map(Condition::of)
        .transpose()
        .and_then(|c| {
            if let Some(c) = &c {
                check_condition(rs, region, c, access)?;
            }
            Ok(c)
        })
        .and_then(|c| check_and(rs, region, &row, c.as_ref(), Checked::Mutations(mutations)))
        .map(|(held, _)| held);
    match processed {
        Ok(processed) => pb::RegionActionResult {
            result_or_exception: indexes
                .into_iter()
                .map(|i| pb::ResultOrException {
                    index: Some(i),
                    ..Default::default()
                })
                .collect(),
            processed: Some(processed),
            ..Default::default()
        },
        Err(e) => fail_all(e),
    }
}

#[cfg(test)]
mod tests;
