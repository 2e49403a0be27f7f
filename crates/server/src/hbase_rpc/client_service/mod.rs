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
//!
//! Get and Mutate are here; `checked` holds checkAndMutate's conditions,
//! `scan_call` the Scan call and `multi` the Multi call.

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

mod checked;
mod multi;
mod scan_call;

use checked::*;
pub use multi::multi;
pub use scan_call::scan;

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
    let table = table_of(rs, region)?;
    match manager.start_on(group, nonce, &table, &m.row) {
        // The caller's own applied cells: HBase answers them without READ.
        Start::Duplicate | Start::DuplicateFailedCheck => get_result(
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
            let tag = (nonces, req.nonce_group.unwrap_or(0), w.nonce.unwrap_or(0));
            let action = Checked::ReadModifyWrite(w.mutation, kind == MutationKind::Append);
            let (processed, cells) =
                check_and_once(rs, region, &row, condition.as_ref(), action, tag)?;
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
            let tag = (nonces, req.nonce_group.unwrap_or(0), w.nonce.unwrap_or(0));
            let m = row_mutation(rs, region, w)?;
            check_families(rs, region, &m, access)?;
            let processed = match &condition {
                Some(c) => {
                    let row = m.row.clone();
                    let action = Checked::Mutations(vec![m]);
                    check_and_once(rs, region, &row, Some(c), action, tag)?.0
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

#[cfg(test)]
mod tests;
