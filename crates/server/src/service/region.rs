//! The `RegionServer` gRPC service over [`RegionServer`]: every call is
//! admitted by the handler pool (or refused with "server busy"). Reads go
//! through [`read_path`](crate::read_path) for filters and reversed scans.

use crate::error::ServerError;
use crate::region_server::RegionServer;
use ferrobase_proto::pb::{self, region_server_server};
use std::sync::Arc;
use tonic::metadata::MetadataValue;
use tonic::{Request, Response, Status};

/// The service.
pub struct RegionService(pub Arc<RegionServer>);

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

#[tonic::async_trait]
impl region_server_server::RegionServer for RegionService {
    async fn get(&self, req: Request<pb::GetRequest>) -> R<pb::RowsResponse> {
        let req = req.into_inner();
        let work = move |rs: &RegionServer| {
            let rows = req.rows.len() as u32;
            crate::read_path::get(rs, req.region_id, &req.rows, req.spec.as_ref())
                .map(|cells| pb::RowsResponse { cells, rows })
        };
        if self.0.engine().reads_are_local() {
            // A get reads at most one block per store file: on a local
            // root it runs here rather than on a handler thread.
            return self
                .0
                .pool()
                .run_here(|| work(&self.0))
                .map(Response::new)
                .map_err(Status::from);
        }
        handle!(self, |rs| work(&rs))
    }

    async fn mutate(&self, req: Request<pb::MutateRequest>) -> R<pb::Empty> {
        let req = req.into_inner();
        handle!(self, |rs| rs
            .mutate(req.region_id, req.mutations)
            .map(|_| pb::Empty {}))
    }

    async fn multi(&self, req: Request<pb::MultiRequest>) -> R<pb::MultiResponse> {
        let req = req.into_inner();
        handle!(self, |rs| {
            let results = req
                .actions
                .into_iter()
                .map(|a| {
                    let region_id = a.region_id;
                    match rs.mutate(region_id, a.mutations) {
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

    async fn scan(&self, req: Request<pb::ScanRequest>) -> R<pb::ScanResponse> {
        let req = req.into_inner();
        let rs = self.0.clone();
        let reply = self
            .0
            .pool()
            .run(move || crate::read_path::scan(&rs, req))
            .await
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

    async fn read_modify_write(
        &self,
        req: Request<pb::ReadModifyWriteRequest>,
    ) -> R<pb::RowsResponse> {
        let req = req.into_inner();
        handle!(self, |rs| rs
            .read_modify_write(req.region_id, req.mutation, req.append)
            .map(|cells| pb::RowsResponse { cells, rows: 1 }))
    }

    async fn check_and_mutate(
        &self,
        req: Request<pb::CheckAndMutateRequest>,
    ) -> R<pb::BoolResponse> {
        let req = req.into_inner();
        handle!(self, |rs| rs
            .check_and_mutate(req)
            .map(|value| pb::BoolResponse { value }))
    }
}
