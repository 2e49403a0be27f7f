//! The `Master` gRPC service over [`Master`].

use super::blocking;
use crate::error::ServerError;
use crate::master::Master;
use ferrobase_proto::ErrorCode;
use ferrobase_proto::pb::{self, master_server};
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// The service.
pub struct MasterService(pub Arc<Master>);

type R<T> = Result<Response<T>, Status>;

macro_rules! call {
    ($self:ident, |$m:ident| $body:expr) => {{
        let $m = $self.0.clone();
        blocking(move || $body).await.map(Response::new)
    }};
}

#[tonic::async_trait]
impl master_server::Master for MasterService {
    async fn create_table(&self, req: Request<pb::CreateTableRequest>) -> R<pb::Empty> {
        let req = req.into_inner();
        call!(self, |m| m.create_table(req).map(|_| pb::Empty {}))
    }

    async fn list_tables(&self, _req: Request<pb::Empty>) -> R<pb::ListTablesResponse> {
        call!(self, |m| Ok(pb::ListTablesResponse {
            names: m.list_tables()
        }))
    }

    async fn describe_table(&self, req: Request<pb::TableName>) -> R<pb::DescribeResponse> {
        let name = req.into_inner().name;
        call!(self, |m| m.describe(&name))
    }

    async fn table_exists(&self, req: Request<pb::TableName>) -> R<pb::BoolResponse> {
        let name = req.into_inner().name;
        call!(self, |m| Ok(pb::BoolResponse {
            value: m.exists(&name)
        }))
    }

    async fn disable_table(&self, req: Request<pb::TableName>) -> R<pb::Empty> {
        let name = req.into_inner().name;
        call!(self, |m| m.disable(&name).map(|_| pb::Empty {}))
    }

    async fn enable_table(&self, req: Request<pb::TableName>) -> R<pb::Empty> {
        let name = req.into_inner().name;
        call!(self, |m| m.enable(&name).map(|_| pb::Empty {}))
    }

    async fn is_table_enabled(&self, req: Request<pb::TableName>) -> R<pb::BoolResponse> {
        let name = req.into_inner().name;
        call!(self, |m| m
            .is_enabled(&name)
            .map(|value| pb::BoolResponse { value }))
    }

    async fn alter_table(&self, req: Request<pb::AlterTableRequest>) -> R<pb::Empty> {
        let req = req.into_inner();
        call!(self, |m| m.alter(req).map(|_| pb::Empty {}))
    }

    async fn drop_table(&self, req: Request<pb::TableName>) -> R<pb::Empty> {
        let name = req.into_inner().name;
        call!(self, |m| m.drop_table(&name).map(|_| pb::Empty {}))
    }

    async fn truncate_table(&self, req: Request<pb::TableName>) -> R<pb::Empty> {
        let name = req.into_inner().name;
        call!(self, |m| m.truncate(&name).map(|_| pb::Empty {}))
    }

    async fn locate(&self, req: Request<pb::TableName>) -> R<pb::LocateResponse> {
        let name = req.into_inner().name;
        call!(self, |m| m
            .locate(&name)
            .map(|regions| pb::LocateResponse { regions }))
    }

    async fn flush(&self, req: Request<pb::AdminRequest>) -> R<pb::Empty> {
        let req = req.into_inner();
        call!(self, |m| m.flush(&req.target).map(|_| pb::Empty {}))
    }

    async fn compact(&self, req: Request<pb::AdminRequest>) -> R<pb::Empty> {
        let req = req.into_inner();
        call!(self, |m| m
            .compact(&req.target, req.major)
            .map(|_| pb::Empty {}))
    }

    async fn split(&self, req: Request<pb::SplitRequest>) -> R<pb::Empty> {
        let req = req.into_inner();
        call!(self, |m| m
            .split(&req.target, req.split_point.map(|p| p.to_vec()))
            .map(|_| pb::Empty {}))
    }

    async fn merge(&self, req: Request<pb::MergeRequest>) -> R<pb::Empty> {
        let req = req.into_inner();
        call!(self, |m| m
            .merge(&req.region_a, &req.region_b)
            .map(|_| pb::Empty {}))
    }

    async fn get_cluster_status(&self, _req: Request<pb::Empty>) -> R<pb::ClusterStatus> {
        call!(self, |m| Ok(m.cluster_status()))
    }

    async fn snapshot(&self, req: Request<pb::SnapshotRequest>) -> R<pb::SnapshotDescription> {
        let req = req.into_inner();
        call!(self, |m| m.snapshot(&req.table, &req.name))
    }

    async fn list_snapshots(
        &self,
        req: Request<pb::ListSnapshotsRequest>,
    ) -> R<pb::ListSnapshotsResponse> {
        let regex = req.into_inner().regex;
        call!(self, |m| m
            .list_snapshots(Some(&regex))
            .map(|snapshots| pb::ListSnapshotsResponse { snapshots }))
    }

    async fn delete_snapshot(&self, req: Request<pb::SnapshotName>) -> R<pb::Empty> {
        let name = req.into_inner().name;
        call!(self, |m| m.delete_snapshot(&name).map(|_| pb::Empty {}))
    }

    async fn clone_snapshot(&self, req: Request<pb::CloneSnapshotRequest>) -> R<pb::Empty> {
        let req = req.into_inner();
        call!(self, |m| m
            .clone_snapshot(&req.name, &req.table)
            .map(|_| pb::Empty {}))
    }

    async fn restore_snapshot(&self, req: Request<pb::SnapshotName>) -> R<pb::Empty> {
        let name = req.into_inner().name;
        call!(self, |m| m.restore_snapshot(&name).map(|_| pb::Empty {}))
    }

    async fn create_namespace(&self, req: Request<pb::NamespaceDescriptor>) -> R<pb::Empty> {
        let req = req.into_inner();
        call!(self, |m| m
            .create_namespace(&req.name, req.config.into_iter().collect())
            .map(|_| pb::Empty {}))
    }

    async fn modify_namespace(&self, req: Request<pb::NamespaceDescriptor>) -> R<pb::Empty> {
        let req = req.into_inner();
        call!(self, |m| m
            .modify_namespace(&req.name, req.config.into_iter().collect())
            .map(|_| pb::Empty {}))
    }

    async fn delete_namespace(&self, req: Request<pb::NamespaceName>) -> R<pb::Empty> {
        let name = req.into_inner().name;
        call!(self, |m| m.delete_namespace(&name).map(|_| pb::Empty {}))
    }

    async fn describe_namespace(
        &self,
        req: Request<pb::NamespaceName>,
    ) -> R<pb::NamespaceDescriptor> {
        let name = req.into_inner().name;
        call!(self, |m| match m.namespaces().remove(&name) {
            Some(config) => Ok(pb::NamespaceDescriptor {
                name,
                config: config.into_iter().collect(),
            }),
            None => Err(ServerError::new(
                ErrorCode::NamespaceNotFound,
                format!("namespace '{name}' does not exist"),
            )),
        })
    }

    async fn list_namespaces(&self, _req: Request<pb::Empty>) -> R<pb::ListNamespacesResponse> {
        call!(self, |m| Ok(pb::ListNamespacesResponse {
            namespaces: m
                .namespaces()
                .into_iter()
                .map(|(name, config)| pb::NamespaceDescriptor {
                    name,
                    config: config.into_iter().collect(),
                })
                .collect(),
        }))
    }

    async fn list_namespace_tables(
        &self,
        req: Request<pb::NamespaceName>,
    ) -> R<pb::ListTablesResponse> {
        let name = req.into_inner().name;
        call!(self, |m| m
            .namespace_tables(&name)
            .map(|names| pb::ListTablesResponse { names }))
    }
}
