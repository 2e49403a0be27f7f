//! The `RegionAdmin` gRPC service over [`RegionServer`]: what the master
//! asks of a region server in distributed mode. Calls run on blocking
//! threads, not the handler pool, so a busy server still obeys the master.
//! With authorization on, only a global ADMIN (the master's user is a
//! superuser) may call it.

use super::blocking;
use crate::error::ServerError;
use crate::etcd::remote::region_from_pb;
use crate::region_server::RegionServer;
use ferrobase_proto::pb::{self, region_admin_server};
use ferrobase_proto::{ErrorCode, schema};
use ferrobase_storage::RegionInfo;
use ferrobase_types::TableDescriptor;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// The service.
pub struct RegionAdminService(pub Arc<RegionServer>);

type R<T> = Result<Response<T>, Status>;

impl RegionAdminService {
    /// Global ADMIN (or a superuser, as the master is) for `what`.
    fn require_admin<T>(&self, req: &Request<T>, what: &str) -> Result<(), Status> {
        self.0
            .access_checker()
            .access(crate::acl::identity::grpc_user(req))
            .require_global(what, &[crate::acl::Action::Admin])
            .map_err(Status::from)
    }
}

fn missing(what: &str) -> ServerError {
    ServerError::new(ErrorCode::InvalidRequest, format!("request has no {what}"))
}

fn split_parts(
    req: &pb::SplitRegionRequest,
) -> crate::Result<(TableDescriptor, RegionInfo, Vec<RegionInfo>)> {
    let table = schema::table_from_pb(req.schema.as_ref().ok_or_else(|| missing("schema"))?)?;
    let parent = region_from_pb(
        req.parent
            .as_ref()
            .ok_or_else(|| missing("parent region"))?,
    );
    Ok((
        table,
        parent,
        req.daughters.iter().map(region_from_pb).collect(),
    ))
}

#[tonic::async_trait]
impl region_admin_server::RegionAdmin for RegionAdminService {
    async fn open_region(&self, req: Request<pb::OpenRegionRequest>) -> R<pb::Empty> {
        self.require_admin(&req, "open_region")?;
        let req = req.into_inner();
        let rs = self.0.clone();
        blocking(move || {
            let table =
                schema::table_from_pb(req.schema.as_ref().ok_or_else(|| missing("schema"))?)?;
            let region = region_from_pb(req.region.as_ref().ok_or_else(|| missing("region"))?);
            rs.open_region(&table, region)
        })
        .await
        .map(|()| Response::new(pb::Empty {}))
    }

    async fn close_region(&self, req: Request<pb::RegionIdRequest>) -> R<pb::Empty> {
        self.require_admin(&req, "close_region")?;
        let id = req.into_inner().region_id;
        let rs = self.0.clone();
        blocking(move || rs.close_region(id))
            .await
            .map(|()| Response::new(pb::Empty {}))
    }

    async fn flush_region(&self, req: Request<pb::RegionIdRequest>) -> R<pb::Empty> {
        self.require_admin(&req, "flush_region")?;
        let id = req.into_inner().region_id;
        let rs = self.0.clone();
        blocking(move || rs.flush_region(id))
            .await
            .map(|()| Response::new(pb::Empty {}))
    }

    async fn compact_region(&self, req: Request<pb::RegionIdRequest>) -> R<pb::Empty> {
        self.require_admin(&req, "compact_region")?;
        let req = req.into_inner();
        let rs = self.0.clone();
        blocking(move || rs.compact_region(req.region_id, req.major))
            .await
            .map(|()| Response::new(pb::Empty {}))
    }

    async fn get_load(&self, req: Request<pb::Empty>) -> R<pb::ServerLoad> {
        self.require_admin(&req, "get_load")?;
        let rs = self.0.clone();
        blocking(move || Ok(rs.load())).await.map(Response::new)
    }

    async fn split_point(&self, req: Request<pb::SplitRegionRequest>) -> R<pb::SplitPointResponse> {
        self.require_admin(&req, "split_point")?;
        let req = req.into_inner();
        let rs = self.0.clone();
        blocking(move || {
            let (table, parent, _) = split_parts(&req)?;
            rs.split_point(&table, &parent)
        })
        .await
        .map(|p| {
            Response::new(pb::SplitPointResponse {
                split_point: p.into(),
            })
        })
    }

    async fn split_region(&self, req: Request<pb::SplitRegionRequest>) -> R<pb::Empty> {
        self.require_admin(&req, "split_region")?;
        let req = req.into_inner();
        let rs = self.0.clone();
        blocking(move || {
            let (table, parent, daughters) = split_parts(&req)?;
            let daughters: [RegionInfo; 2] = daughters.try_into().map_err(|_| {
                ServerError::new(
                    ErrorCode::InvalidRequest,
                    "a split needs exactly two daughters",
                )
            })?;
            rs.split_region(&table, &parent, &daughters)
        })
        .await
        .map(|()| Response::new(pb::Empty {}))
    }

    async fn abort_split(&self, req: Request<pb::SplitRegionRequest>) -> R<pb::Empty> {
        self.require_admin(&req, "abort_split")?;
        let req = req.into_inner();
        let rs = self.0.clone();
        blocking(move || {
            let (table, parent, _) = split_parts(&req)?;
            rs.abort_split(&table, &parent)
        })
        .await
        .map(|()| Response::new(pb::Empty {}))
    }

    async fn set_compactions(&self, req: Request<pb::SwitchRequest>) -> R<pb::BoolResponse> {
        self.require_admin(&req, "compactionSwitch")?;
        let engine = self.0.engine();
        let value = engine.compactions_enabled();
        if let Some(on) = req.get_ref().enabled {
            engine.set_compactions_enabled(on);
        }
        Ok(Response::new(pb::BoolResponse { value }))
    }

    async fn set_acl(&self, req: Request<pb::AclState>) -> R<pb::Empty> {
        self.require_admin(&req, "setAcl")?;
        let state = crate::acl::wire::state_from_pb(req.get_ref())?;
        self.0.access_checker().set_state(state);
        Ok(Response::new(pb::Empty {}))
    }
}
