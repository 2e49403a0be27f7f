//! The `Master` gRPC service over [`Master`]. Every call is checked
//! against the caller's permissions first, with HBase's AccessController
//! table of what each operation needs ([`crate::acl`]).

use super::blocking;
use crate::acl::{Access, Action, Scope, identity, wire};
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

/// What table DDL needs (HBase: ADMIN or CREATE on the table).
const DDL: &[Action] = &[Action::Admin, Action::Create];
const ADMIN: &[Action] = &[Action::Admin];

impl MasterService {
    fn access<T>(&self, req: &Request<T>) -> Access {
        self.0.access_checker().access(identity::grpc_user(req))
    }
}

/// ADMIN at the scope being granted, revoked or listed (HBase's
/// `preGrant`/`preRevoke`/`preGetUserPermissions`).
pub(crate) fn require_admin_at(access: &Access, what: &str, scope: &Scope) -> crate::Result<()> {
    match scope {
        Scope::Global => access.require_global(what, ADMIN),
        Scope::Namespace { namespace } => access.require_namespace(what, namespace, ADMIN),
        Scope::Table { table, .. } => access.require_table(what, table, ADMIN),
    }
}

/// A table may be described by a caller holding any permission on it.
pub(crate) fn require_visible(access: &Access, what: &str, table: &str) -> crate::Result<()> {
    if access.sees_table(table) {
        Ok(())
    } else {
        access.require_table(what, table, DDL)
    }
}

#[tonic::async_trait]
impl master_server::Master for MasterService {
    async fn create_table(&self, req: Request<pb::CreateTableRequest>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            let name = req
                .schema
                .as_ref()
                .map(|s| s.name.clone())
                .unwrap_or_default();
            let ns = crate::master::namespace_of(&name);
            access.require_namespace("createTable", ns, DDL)?;
            m.create_table_by(req, access.user()).map(|_| pb::Empty {})
        })
    }

    async fn list_tables(&self, req: Request<pb::Empty>) -> R<pb::ListTablesResponse> {
        let access = self.access(&req);
        call!(self, |m| Ok(pb::ListTablesResponse {
            names: m
                .list_tables()
                .into_iter()
                .filter(|t| access.sees_table(t))
                .collect()
        }))
    }

    async fn describe_table(&self, req: Request<pb::TableName>) -> R<pb::DescribeResponse> {
        let access = self.access(&req);
        let name = req.into_inner().name;
        call!(self, |m| {
            require_visible(&access, "getTableDescriptors", &name)?;
            m.describe(&name)
        })
    }

    async fn table_exists(&self, req: Request<pb::TableName>) -> R<pb::BoolResponse> {
        let name = req.into_inner().name;
        call!(self, |m| Ok(pb::BoolResponse {
            value: m.exists(&name)
        }))
    }

    async fn disable_table(&self, req: Request<pb::TableName>) -> R<pb::Empty> {
        let access = self.access(&req);
        let name = req.into_inner().name;
        call!(self, |m| {
            access.require_table("disableTable", &name, DDL)?;
            m.disable(&name).map(|_| pb::Empty {})
        })
    }

    async fn enable_table(&self, req: Request<pb::TableName>) -> R<pb::Empty> {
        let access = self.access(&req);
        let name = req.into_inner().name;
        call!(self, |m| {
            access.require_table("enableTable", &name, DDL)?;
            m.enable(&name).map(|_| pb::Empty {})
        })
    }

    async fn is_table_enabled(&self, req: Request<pb::TableName>) -> R<pb::BoolResponse> {
        let name = req.into_inner().name;
        call!(self, |m| m
            .is_enabled(&name)
            .map(|value| pb::BoolResponse { value }))
    }

    async fn alter_table(&self, req: Request<pb::AlterTableRequest>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            access.require_table("modifyTable", &req.table, DDL)?;
            m.alter(req).map(|_| pb::Empty {})
        })
    }

    async fn drop_table(&self, req: Request<pb::TableName>) -> R<pb::Empty> {
        let access = self.access(&req);
        let name = req.into_inner().name;
        call!(self, |m| {
            access.require_table("deleteTable", &name, DDL)?;
            m.drop_table(&name).map(|_| pb::Empty {})
        })
    }

    async fn truncate_table(&self, req: Request<pb::TableName>) -> R<pb::Empty> {
        let access = self.access(&req);
        let name = req.into_inner().name;
        call!(self, |m| {
            access.require_table("truncateTable", &name, DDL)?;
            m.truncate(&name).map(|_| pb::Empty {})
        })
    }

    async fn locate(&self, req: Request<pb::TableName>) -> R<pb::LocateResponse> {
        let name = req.into_inner().name;
        call!(self, |m| m
            .locate(&name)
            .map(|regions| pb::LocateResponse { regions }))
    }

    async fn flush(&self, req: Request<pb::AdminRequest>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            access.require_table("flush", &m.table_of_target(&req.target), DDL)?;
            m.flush(&req.target).map(|_| pb::Empty {})
        })
    }

    async fn compact(&self, req: Request<pb::AdminRequest>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            access.require_table("compact", &m.table_of_target(&req.target), DDL)?;
            m.compact(&req.target, req.major).map(|_| pb::Empty {})
        })
    }

    async fn split(&self, req: Request<pb::SplitRequest>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            access.require_table("split", &m.table_of_target(&req.target), ADMIN)?;
            m.split(&req.target, req.split_point.map(|p| p.to_vec()))
                .map(|_| pb::Empty {})
        })
    }

    async fn merge(&self, req: Request<pb::MergeRequest>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        let regions = if req.regions.is_empty() {
            vec![req.region_a, req.region_b]
        } else {
            req.regions
        };
        call!(self, |m| {
            for r in &regions {
                access.require_table("mergeRegions", &m.table_of_target(r), ADMIN)?;
            }
            m.merge_regions(&regions, req.force).map(|_| pb::Empty {})
        })
    }

    async fn get_cluster_status(&self, req: Request<pb::Empty>) -> R<pb::ClusterStatus> {
        let access = self.access(&req);
        call!(self, |m| {
            access.require_global("getClusterStatus", ADMIN)?;
            Ok(m.cluster_status())
        })
    }

    async fn snapshot(&self, req: Request<pb::SnapshotRequest>) -> R<pb::SnapshotDescription> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            access.require_table("snapshot", &req.table, ADMIN)?;
            m.snapshot_with_ttl(&req.table, &req.name, req.ttl_secs)
        })
    }

    async fn switch(&self, req: Request<pb::SwitchRequest>) -> R<pb::BoolResponse> {
        use crate::master::Switch;
        let access = self.access(&req);
        let req = req.into_inner();
        let (switch, what) = match req.kind() {
            pb::SwitchKind::Balancer => (Switch::Balancer, "balanceSwitch"),
            pb::SwitchKind::CatalogJanitor => (Switch::CatalogJanitor, "enableCatalogJanitor"),
            pb::SwitchKind::SnapshotCleanup => (Switch::SnapshotCleanup, "switchSnapshotCleanup"),
        };
        call!(self, |m| {
            let value = match req.enabled {
                Some(on) => {
                    access.require_global(what, ADMIN)?;
                    m.set_switch(switch, on)?
                }
                None => m.switch_on(switch),
            };
            Ok(pb::BoolResponse { value })
        })
    }

    async fn compaction_switch(
        &self,
        req: Request<pb::SwitchRequest>,
    ) -> R<pb::CompactionSwitchResponse> {
        let access = self.access(&req);
        let on = req.into_inner().enabled;
        call!(self, |m| {
            access.require_global("compactionSwitch", ADMIN)?;
            let on = on.ok_or_else(|| {
                ServerError::new(
                    ErrorCode::InvalidRequest,
                    "compaction_switch needs true or false",
                )
            })?;
            let servers = m
                .compaction_switch(on)?
                .into_iter()
                .map(|(server, previous)| pb::ServerSwitchState { server, previous })
                .collect();
            Ok(pb::CompactionSwitchResponse { servers })
        })
    }

    async fn balance(&self, req: Request<pb::Empty>) -> R<pb::CountResponse> {
        let access = self.access(&req);
        call!(self, |m| {
            access.require_global("balance", ADMIN)?;
            m.balance().map(|n| pb::CountResponse { count: n as u64 })
        })
    }

    async fn run_catalog_janitor(&self, req: Request<pb::Empty>) -> R<pb::CountResponse> {
        let access = self.access(&req);
        call!(self, |m| {
            access.require_global("runCatalogScan", ADMIN)?;
            m.run_janitor()
                .map(|n| pb::CountResponse { count: n as u64 })
        })
    }

    async fn move_region(&self, req: Request<pb::MoveRegionRequest>) -> R<pb::BoolResponse> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            access.require_table("move", &m.table_of_target(&req.region), ADMIN)?;
            let (_, region) = m.find_region(&req.region)?;
            let dest = Some(req.dest.as_str()).filter(|d| !d.is_empty());
            m.move_region_to(region.id, dest)
                .map(|value| pb::BoolResponse { value })
        })
    }

    async fn list_dead_servers(&self, req: Request<pb::Empty>) -> R<pb::ListDeadServersResponse> {
        let access = self.access(&req);
        call!(self, |m| {
            access.require_global("listDeadServers", ADMIN)?;
            let servers = m
                .dead_servers()
                .into_iter()
                .map(|d| pb::DeadServer {
                    name: d
                        .server_name()
                        .map_or_else(|| d.name.clone(), |n| n.to_string()),
                    at_ms: d
                        .at
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |t| t.as_millis() as u64),
                })
                .collect();
            Ok(pb::ListDeadServersResponse { servers })
        })
    }

    async fn list_snapshots(
        &self,
        req: Request<pb::ListSnapshotsRequest>,
    ) -> R<pb::ListSnapshotsResponse> {
        let access = self.access(&req);
        let regex = req.into_inner().regex;
        call!(self, |m| {
            access.require_global("listSnapshot", ADMIN)?;
            m.list_snapshots(Some(&regex))
                .map(|snapshots| pb::ListSnapshotsResponse { snapshots })
        })
    }

    async fn delete_snapshot(&self, req: Request<pb::SnapshotName>) -> R<pb::Empty> {
        let access = self.access(&req);
        let name = req.into_inner().name;
        call!(self, |m| {
            access.require_global("deleteSnapshot", ADMIN)?;
            m.delete_snapshot(&name).map(|_| pb::Empty {})
        })
    }

    async fn clone_snapshot(&self, req: Request<pb::CloneSnapshotRequest>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            access.require_global("cloneSnapshot", ADMIN)?;
            m.clone_snapshot(&req.name, &req.table)
                .map(|_| pb::Empty {})
        })
    }

    async fn restore_snapshot(&self, req: Request<pb::SnapshotName>) -> R<pb::Empty> {
        let access = self.access(&req);
        let name = req.into_inner().name;
        call!(self, |m| {
            access.require_global("restoreSnapshot", ADMIN)?;
            m.restore_snapshot(&name).map(|_| pb::Empty {})
        })
    }

    async fn create_namespace(&self, req: Request<pb::NamespaceDescriptor>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            access.require_global("createNamespace", ADMIN)?;
            m.create_namespace(&req.name, req.config.into_iter().collect())
                .map(|_| pb::Empty {})
        })
    }

    async fn modify_namespace(&self, req: Request<pb::NamespaceDescriptor>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            access.require_global("modifyNamespace", ADMIN)?;
            m.modify_namespace(&req.name, req.config.into_iter().collect())
                .map(|_| pb::Empty {})
        })
    }

    async fn delete_namespace(&self, req: Request<pb::NamespaceName>) -> R<pb::Empty> {
        let access = self.access(&req);
        let name = req.into_inner().name;
        call!(self, |m| {
            access.require_global("deleteNamespace", ADMIN)?;
            m.delete_namespace(&name).map(|_| pb::Empty {})
        })
    }

    async fn describe_namespace(
        &self,
        req: Request<pb::NamespaceName>,
    ) -> R<pb::NamespaceDescriptor> {
        let access = self.access(&req);
        let name = req.into_inner().name;
        call!(self, |m| {
            access.require_namespace("getNamespaceDescriptor", &name, ADMIN)?;
            match m.namespaces().remove(&name) {
                Some(config) => Ok(pb::NamespaceDescriptor {
                    name,
                    config: config.into_iter().collect(),
                }),
                None => Err(ServerError::new(
                    ErrorCode::NamespaceNotFound,
                    format!("namespace '{name}' does not exist"),
                )),
            }
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
        let access = self.access(&req);
        let name = req.into_inner().name;
        call!(self, |m| m.namespace_tables(&name).map(|names| {
            pb::ListTablesResponse {
                names: names.into_iter().filter(|t| access.sees_table(t)).collect(),
            }
        }))
    }

    async fn grant(&self, req: Request<pb::GrantRequest>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            let p = wire::from_pb(&req.permission.unwrap_or_default())?;
            require_admin_at(&access, "grant", &p.scope)?;
            m.grant(&p.user, &p.scope, p.actions, req.merge)
                .map(|_| pb::Empty {})
        })
    }

    async fn revoke(&self, req: Request<pb::RevokeRequest>) -> R<pb::Empty> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            let p = wire::from_pb(&req.permission.unwrap_or_default())?;
            require_admin_at(&access, "revoke", &p.scope)?;
            m.revoke(&p.user, &p.scope, p.actions).map(|_| pb::Empty {})
        })
    }

    async fn get_user_permissions(
        &self,
        req: Request<pb::UserPermissionsRequest>,
    ) -> R<pb::UserPermissionsResponse> {
        let access = self.access(&req);
        let req = req.into_inner();
        call!(self, |m| {
            let scope = Scope::from_shell(Some(&req.scope), None, None);
            let user = Some(req.user.as_str()).filter(|u| !u.is_empty());
            // Anyone may list their own permissions (as HBase).
            if user != Some(access.user()) {
                require_admin_at(&access, "getUserPermissions", &scope)?;
            }
            let family = Some(&req.family[..]).filter(|f| !f.is_empty());
            Ok(pb::UserPermissionsResponse {
                permissions: m
                    .user_permissions(&scope, family, user)
                    .iter()
                    .map(wire::to_pb)
                    .collect(),
            })
        })
    }

    async fn who_am_i(&self, req: Request<pb::Empty>) -> R<pb::WhoAmIResponse> {
        let certificate = req
            .extensions()
            .get::<ferrobase_tls::ConnectionInfo>()
            .is_some_and(|i| i.peer.is_some());
        let access = self.access(&req);
        let authentication = if certificate {
            "certificate"
        } else if access.user().is_empty() {
            "none"
        } else {
            "simple"
        };
        Ok(Response::new(pb::WhoAmIResponse {
            user: access.user().to_string(),
            authentication: authentication.to_string(),
            authorization: access.checker().enabled(),
        }))
    }
}
