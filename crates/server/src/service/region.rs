//! The `RegionServer` gRPC service over [`RegionServer`]: every call is
//! admitted by the handler pool (or refused with "server busy"). Reads go
//! through [`read_path`](crate::read_path) for filters and reversed scans.
//! Every call is timed and counted ([`rpc_metrics`](crate::rpc_metrics)),
//! and checked against the caller's permissions ([`crate::acl`]) before it
//! reads or writes.

use crate::acl::{Access, Action};
use crate::error::ServerError;
use crate::region_server::RegionServer;
use crate::rpc_metrics::{CallOutcome, CallTimer, Op, Protocol};
use ferrobase_proto::pb::{self, region_server_server};
use std::sync::Arc;
use tonic::metadata::MetadataValue;
use tonic::{Request, Response, Status};
use tracing::Instrument as _;

/// The service.
pub struct RegionService(pub Arc<RegionServer>);

/// What a bulk load needs (HBase: ADMIN or CREATE since HBASE-11008).
const BULK_LOAD: &[Action] = &[Action::Admin, Action::Create];

type R<T> = Result<Response<T>, Status>;

macro_rules! handle {
    ($self:ident, |$rs:ident| $body:expr) => {{
        let $rs = $self.0.clone();
        $self
            .0
            .pool()
            .run(move || $body)
            .await
            .map(Response::new)
            .map_err(Status::from)
    }};
}

/// Rows a get (a multi-get) may name and still run on the RPC thread.
const SHORT_GET_ROWS: usize = 100;

/// Rows a scan call may ask for and still run on the RPC thread.
const SHORT_SCAN_ROWS: u32 = 1_000;

/// An unfiltered, forward scan opened for at most [`SHORT_SCAN_ROWS`] rows
/// (YCSB E's, a shell `LIMIT`): bounded work like a get. A filtered call
/// may examine many rows it does not return, so it goes to a handler.
fn is_short_plain_scan(req: &pb::ScanRequest) -> bool {
    req.scanner_id == 0
        && !req.close
        && !req.reversed
        && (1..=SHORT_SCAN_ROWS).contains(&req.caching)
        && req.spec.as_ref().is_none_or(|s| s.filter.trim().is_empty())
}

/// The table of a region online here (for permission checks).
fn table_of(rs: &RegionServer, region: u64) -> Result<String, ServerError> {
    Ok(rs.region(region)?.table().name.clone())
}

/// WRITE on every cell of a mutation block sent to `region`.
fn check_write(
    rs: &RegionServer,
    access: &Access,
    what: &str,
    region: u64,
    block: &bytes::Bytes,
) -> Result<(), ServerError> {
    if !access.checked() {
        return Ok(());
    }
    let table = table_of(rs, region)?;
    let mutations = ferrobase_proto::cellblock::decode_mutations(block.clone())?;
    access.require_write(what, &table, &mutations)
}

impl RegionService {
    /// The caller of `req` in front of this server's permissions.
    fn access<T>(&self, req: &Request<T>) -> Access {
        self.0
            .access_checker()
            .access(crate::acl::identity::grpc_user(req))
    }

    async fn get_call(&self, req: Request<pb::GetRequest>) -> R<pb::RowsResponse> {
        let access = self.access(&req);
        let req = req.into_inner();
        let short = req.rows.len() <= SHORT_GET_ROWS;
        let work = move |rs: &RegionServer| {
            let rows = req.rows.len() as u32;
            crate::read_path::get(rs, req.region_id, &req.rows, req.spec.as_ref(), &access)
                .map(|cells| pb::RowsResponse { cells, rows })
        };
        if short && self.0.engine().reads_are_local() {
            // A get reads at most one block per store file and row: on a
            // local root a few rows' worth runs here rather than on a
            // handler thread.
            return self
                .0
                .pool()
                .run_here(|| work(&self.0))
                .map(Response::new)
                .map_err(Status::from);
        }
        handle!(self, |rs| work(&rs))
    }

    async fn mutate_call(&self, req: Request<pb::MutateRequest>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        handle!(self, |rs| {
            check_write(&rs, &access, "mutate", req.region_id, &req.mutations)?;
            rs.mutate(req.region_id, req.mutations)
                .map(|_| pb::Empty {})
        })
    }

    async fn multi_call(&self, req: Request<pb::MultiRequest>) -> R<pb::MultiResponse> {
        let access = self.access(&req);
        let req = req.into_inner();
        handle!(self, |rs| {
            let results = req
                .actions
                .into_iter()
                .map(|a| {
                    let region_id = a.region_id;
                    // A denied region's rows are not applied; the others are.
                    let done = check_write(&rs, &access, "multi", region_id, &a.mutations)
                        .and_then(|()| rs.mutate(region_id, a.mutations));
                    match done {
                        Ok(()) => pb::ActionResult {
                            region_id,
                            ..Default::default()
                        },
                        Err(ServerError { code, message }) => pb::ActionResult {
                            region_id,
                            error_code: code.as_str().to_string(),
                            error_message: message,
                        },
                    }
                })
                .collect();
            Ok(pb::MultiResponse { results })
        })
    }

    async fn scan_call(&self, req: Request<pb::ScanRequest>) -> R<pb::ScanResponse> {
        let access = self.access(&req);
        let req = req.into_inner();
        let reply = if self.0.engine().reads_are_local() && is_short_plain_scan(&req) {
            // Like a get: a few blocks read on the RPC thread.
            self.0
                .pool()
                .run_here(|| crate::read_path::scan(&self.0, req, &access))
        } else {
            let rs = self.0.clone();
            self.0
                .pool()
                .run(move || crate::read_path::scan(&rs, req, &access))
                .await
        }
        .map_err(Status::from)?;
        let mut response = Response::new(reply.response);
        if reply.filter_done {
            response.metadata_mut().insert(
                ferrobase_proto::FILTER_DONE_KEY,
                MetadataValue::from_static("1"),
            );
        }
        Ok(response)
    }

    async fn read_modify_write_call(
        &self,
        req: Request<pb::ReadModifyWriteRequest>,
    ) -> R<pb::RowsResponse> {
        let access = self.access(&req);
        let req = req.into_inner();
        let what = if req.append { "append" } else { "increment" };
        handle!(self, |rs| {
            check_write(&rs, &access, what, req.region_id, &req.mutation)?;
            rs.read_modify_write_once(
                req.region_id,
                req.mutation,
                req.append,
                (req.nonce_group, req.nonce),
            )
            .map(|cells| pb::RowsResponse { cells, rows: 1 })
        })
    }

    async fn check_and_mutate_call(
        &self,
        req: Request<pb::CheckAndMutateRequest>,
    ) -> R<pb::BoolResponse> {
        let access = self.access(&req);
        let req = req.into_inner();
        handle!(self, |rs| {
            if access.checked() {
                // HBase's checkAndPut: READ and WRITE on the checked column.
                let table = table_of(&rs, req.region_id)?;
                access.require_column_all(
                    "checkAndMutate",
                    &table,
                    (&req.family, &req.qualifier),
                    &[Action::Read, Action::Write],
                )?;
                check_write(&rs, &access, "checkAndMutate", req.region_id, &req.mutation)?;
            }
            rs.check_and_mutate(req)
                .map(|value| pb::BoolResponse { value })
        })
    }
}

/// Times a call and records it ([`rpc_metrics`](crate::rpc_metrics)):
/// `$op` is the operation, `$param` what the slow log says it was about.
macro_rules! timed {
    ($self:ident, $req:ident, $op:expr, $inner:ident, |$r:ident| $param:expr) => {{
        let timer = CallTimer::start(Protocol::Grpc, $op);
        let request_bytes = prost::Message::encoded_len($req.get_ref()) as u64;
        let client = $req.remote_addr().or_else(|| {
            $req.extensions()
                .get::<ferrobase_tls::ConnectionInfo>()
                .and_then(|i| i.remote_addr)
        });
        // Copied out as numbers: the text is built only for a slow call.
        let (region, what, count): (u64, &str, usize) = {
            let $r = $req.get_ref();
            $param
        };
        let result = $self.$inner($req).instrument(timer.span()).await;
        let response_bytes = result
            .as_ref()
            .map_or(0, |resp| prost::Message::encoded_len(resp.get_ref()) as u64);
        timer.finish(
            &CallOutcome {
                ok: result.is_ok(),
                request_bytes,
                response_bytes,
                param: &|| format!("region={region} {what}={count}"),
                client,
            },
            $self.0.slow_log(),
        );
        result
    }};
}

#[tonic::async_trait]
impl region_server_server::RegionServer for RegionService {
    async fn get(&self, req: Request<pb::GetRequest>) -> R<pb::RowsResponse> {
        timed!(self, req, Op::Get, get_call, |r| (
            r.region_id,
            "rows",
            r.rows.len()
        ))
    }

    async fn mutate(&self, req: Request<pb::MutateRequest>) -> R<pb::Empty> {
        timed!(self, req, Op::Mutate, mutate_call, |r| (
            r.region_id,
            "bytes",
            r.mutations.len()
        ))
    }

    async fn multi(&self, req: Request<pb::MultiRequest>) -> R<pb::MultiResponse> {
        timed!(self, req, Op::Multi, multi_call, |r| (
            0,
            "actions",
            r.actions.len()
        ))
    }

    async fn scan(&self, req: Request<pb::ScanRequest>) -> R<pb::ScanResponse> {
        timed!(self, req, Op::Scan, scan_call, |r| (
            r.region_id,
            "scanner",
            r.scanner_id as usize
        ))
    }

    async fn read_modify_write(
        &self,
        req: Request<pb::ReadModifyWriteRequest>,
    ) -> R<pb::RowsResponse> {
        let op = if req.get_ref().append {
            Op::Append
        } else {
            Op::Increment
        };
        timed!(self, req, op, read_modify_write_call, |r| (
            r.region_id,
            "bytes",
            r.mutation.len()
        ))
    }

    async fn prepare_bulk_load(
        &self,
        req: Request<pb::PrepareBulkLoadRequest>,
    ) -> R<pb::PrepareBulkLoadResponse> {
        let access = self.access(&req);
        let region = req.into_inner().region_id;
        handle!(self, |rs| {
            // HBase's prePrepareBulkLoad: ADMIN or CREATE on the table.
            if access.checked() {
                let table = table_of(&rs, region)?;
                access.require_table("prepareBulkLoad", &table, BULK_LOAD)?;
            }
            rs.prepare_bulk_load(region)
        })
    }

    async fn bulk_load(&self, req: Request<pb::BulkLoadRequest>) -> R<pb::BulkLoadResponse> {
        let access = self.access(&req);
        let req = req.into_inner();
        handle!(self, |rs| {
            // HBase's preBulkLoadHFile: ADMIN or CREATE on each family.
            if access.checked() {
                let table = table_of(&rs, req.region_id)?;
                for f in &req.files {
                    access.require_family(
                        "bulkLoadHFile",
                        &table,
                        f.family.as_bytes(),
                        BULK_LOAD,
                    )?;
                }
            }
            rs.bulk_load(req)
        })
    }

    async fn cleanup_bulk_load(&self, req: Request<pb::CleanupBulkLoadRequest>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        handle!(self, |rs| {
            if access.checked() {
                let table = table_of(&rs, req.region_id)?;
                access.require_table("cleanupBulkLoad", &table, BULK_LOAD)?;
            }
            rs.cleanup_bulk_load(req).map(|_| pb::Empty {})
        })
    }

    async fn check_and_mutate(
        &self,
        req: Request<pb::CheckAndMutateRequest>,
    ) -> R<pb::BoolResponse> {
        timed!(self, req, Op::CheckAndMutate, check_and_mutate_call, |r| (
            r.region_id,
            "bytes",
            r.mutation.len()
        ))
    }
}
