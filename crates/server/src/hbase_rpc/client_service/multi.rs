//! `ClientService.Multi`: region actions across this server's regions,
//! each action answered alone (a failed action fails only itself), atomic
//! `RowMutations` and conditional region actions.

use super::*;

/// A Multi's mutation, decoded in request order (cells come from the one
/// cell block in that order).
pub(super) enum Decoded {
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

pub(super) fn failed(index: u32, e: &HBaseException) -> pb::ResultOrException {
    pb::ResultOrException {
        index: Some(index),
        exception: Some(e.to_name_bytes_pair()),
        ..Default::default()
    }
}

pub(super) fn done(index: u32, result: pb::Result) -> pb::ResultOrException {
    pb::ResultOrException {
        index: Some(index),
        result: Some(result),
        ..Default::default()
    }
}

pub(super) fn region_action(
    rs: &RegionServer,
    (region, ra): (u64, &pb::RegionAction),
    actions: Vec<(u32, Decoded)>,
    codec: Option<CellCodec>,
    block: &mut BytesMut,
    nonces: (&ServerNonces, u64),
    access: &Access,
) -> pb::RegionActionResult {
    if ra.atomic == Some(true) || ra.condition.is_some() {
        return atomic_action(rs, region, ra, actions, access, nonces);
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
pub(super) fn atomic_action(
    rs: &RegionServer,
    region: u64,
    ra: &pb::RegionAction,
    actions: Vec<(u32, Decoded)>,
    access: &Access,
    (manager, group): (&ServerNonces, u64),
) -> pb::RegionActionResult {
    let fail_all = |e: HBaseException| pb::RegionActionResult {
        exception: Some(e.to_name_bytes_pair()),
        ..Default::default()
    };
    let mut indexes = Vec::with_capacity(actions.len());
    let mut mutations = Vec::with_capacity(actions.len());
    // A checked action's nonce (one for the call), on any of its mutations.
    let mut nonce = 0;
    for (index, d) in actions {
        let m = match d {
            Decoded::Mutation(w) if matches!(w.kind, MutationKind::Put | MutationKind::Delete) => {
                if nonce == 0 {
                    nonce = w.nonce.unwrap_or(0);
                }
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
        .and_then(|c| {
            let action = Checked::Mutations(mutations);
            match &c {
                Some(_) => check_and_once(
                    rs,
                    region,
                    &row,
                    c.as_ref(),
                    action,
                    (manager, group, nonce),
                ),
                // RowMutations without a condition: no check to answer.
                None => check_and(rs, region, &row, None, action),
            }
        })
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
