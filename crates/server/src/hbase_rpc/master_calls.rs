//! The calls a master answers over HBase RPC: the connection registry's
//! `ClientMetaService` and `MasterService` (DDL, namespaces, snapshots,
//! permissions, cluster status, region moves, splits and merges), each run
//! now on the connection's task or later on a blocking thread, as its cost
//! says. What each call does is in `master_service`; this file only routes.

use super::*;
use crate::master::Switch;

impl HBaseRpc {
    pub(super) fn client_meta(&self, id: u32, method: &str, out: &mut BytesMut) {
        if self.master.is_none() && method != "GetClusterId" {
            // A region server of a distributed cluster does not know which
            // master is active or where meta is: the masters answer.
            fail(
                out,
                id,
                &do_not_retry(format!(
                    "{method}: this region server does not answer the connection registry; \
                     list the masters in hbase.client.bootstrap.servers"
                )),
            );
            return;
        }
        match method {
            "GetClusterId" => write_answer(
                out,
                id,
                plain(Ok(pb::GetClusterIdResponse {
                    cluster_id: Some(self.cluster_id.clone()),
                })),
            ),
            "GetActiveMaster" => write_answer(
                out,
                id,
                plain(Ok(pb::GetActiveMasterResponse {
                    server_name: Some(self.server.to_pb()),
                })),
            ),
            "GetMasters" => write_answer(
                out,
                id,
                plain(Ok(pb::GetMastersResponse {
                    master_servers: vec![pb::GetMastersResponseEntry {
                        server_name: self.server.to_pb(),
                        is_active: true,
                    }],
                })),
            ),
            "GetBootstrapNodes" => write_answer(
                out,
                id,
                plain(Ok(pb::GetBootstrapNodesResponse {
                    server_name: vec![self.server.to_pb()],
                })),
            ),
            "GetMetaRegionLocations" => write_answer(
                out,
                id,
                plain(Ok(pb::GetMetaRegionLocationsResponse {
                    meta_locations: vec![pb::RegionLocation {
                        region_info: RegionName::meta().region_info(b""),
                        server_name: Some(self.server.to_pb()),
                        seq_num: -1,
                    }],
                })),
            ),
            method => {
                fail(
                    out,
                    id,
                    &HBaseException::unsupported_method("ClientMetaService", method),
                );
            }
        }
    }

    /// Runs master work on a blocking thread (DDL writes meta and opens or
    /// closes regions).
    pub(super) fn on_master<R, M>(
        self: &Arc<Self>,
        id: u32,
        access: Access,
        req: R,
        work: fn(&MasterService<'_>, &R) -> Result<M, HBaseException>,
    ) -> Option<Pending>
    where
        R: Send + 'static,
        M: Message + Send + 'static,
    {
        let rpc = self.clone();
        Some(Box::pin(async move {
            let done = tokio::task::spawn_blocking(move || {
                let master = rpc.master.as_ref().ok_or_else(not_master)?;
                let service = MasterService {
                    master,
                    procedures: &rpc.procedures,
                    access: &access,
                };
                work(&service, &req)
            })
            .await
            .unwrap_or_else(|e| Err(do_not_retry(format!("master call failed: {e}"))));
            let mut out = BytesMut::new();
            write_answer(&mut out, id, plain(done));
            out
        }))
    }

    /// Answers quick master reads at once.
    pub(super) fn master_now<R, M>(
        &self,
        id: u32,
        access: &Access,
        req: R,
        out: &mut BytesMut,
        work: impl FnOnce(&MasterService<'_>, &R) -> Result<M, HBaseException>,
    ) where
        M: Message,
    {
        let done = match self.master.as_ref() {
            Some(master) => work(
                &MasterService {
                    master,
                    procedures: &self.procedures,
                    access,
                },
                &req,
            ),
            None => Err(not_master()),
        };
        write_answer(out, id, plain(done));
    }

    pub(super) fn master_call(
        self: &Arc<Self>,
        conn: &Connection,
        id: u32,
        call: &RequestFrame,
        out: &mut BytesMut,
    ) -> Option<Pending> {
        let access = self.access(conn);
        macro_rules! now {
            ($req:ty, $m:ident) => {
                now!($req, |s, r| s.$m(r))
            };
            ($req:ty, |$s:pat_param, $r:pat_param| $body:expr) => {{
                match param::<$req>(call) {
                    Ok(req) => self.master_now(
                        id,
                        &access,
                        req,
                        out,
                        |$s: &MasterService<'_>, $r: &$req| $body,
                    ),
                    Err(e) => {
                        fail(out, id, &e);
                    }
                }
                None
            }};
        }
        macro_rules! later {
            ($req:ty, $m:ident) => {{
                match param::<$req>(call) {
                    Ok(req) => {
                        self.on_master(id, access, req, |s: &MasterService<'_>, r: &$req| s.$m(r))
                    }
                    Err(e) => {
                        fail(out, id, &e);
                        None
                    }
                }
            }};
        }
        match call.method() {
            "IsMasterRunning" => {
                write_answer(
                    out,
                    id,
                    plain(Ok(pb::IsMasterRunningResponse {
                        is_master_running: self.master.is_some(),
                    })),
                );
                None
            }
            // HBase's method name starts lower case.
            "getProcedureResult" | "GetProcedureResult" => {
                now!(pb::GetProcedureResultRequest, procedure_result)
            }
            "GetTableNames" => now!(pb::GetTableNamesRequest, table_names),
            "ListTableNamesByNamespace" => now!(pb::ListTableNamesByNamespaceRequest, |s, r| {
                s.table_names(&pb::GetTableNamesRequest {
                    regex: None,
                    include_sys_tables: Some(true),
                    namespace: Some(r.namespace_name.clone()),
                })
                .map(|t| pb::ListTableNamesByNamespaceResponse {
                    table_name: t.table_names,
                })
            }),
            "GetTableDescriptors" => now!(pb::GetTableDescriptorsRequest, table_descriptors),
            "ListTableDescriptorsByNamespace" => now!(
                pb::ListTableDescriptorsByNamespaceRequest,
                tables_of_namespace
            ),
            "GetTableState" => now!(pb::GetTableStateRequest, table_state),
            "GetSchemaAlterStatus" => {
                now!(pb::GetSchemaAlterStatusRequest, schema_alter_status)
            }
            "GetNamespaceDescriptor" => {
                now!(pb::GetNamespaceDescriptorRequest, namespace_descriptor)
            }
            "ListNamespaceDescriptors" => now!(pb::ListNamespaceDescriptorsRequest, |s, _r| s
                .namespace_descriptors()),
            "ListNamespaces" => now!(pb::ListNamespacesRequest, |s, _r| s.namespace_names()),
            "IsBalancerEnabled" => now!(pb::IsBalancerEnabledRequest, |s, _r| Ok(
                pb::IsBalancerEnabledResponse {
                    enabled: s.master.switch_on(Switch::Balancer)
                }
            )),
            "IsCatalogJanitorEnabled" => now!(pb::IsCatalogJanitorEnabledRequest, |s, _r| Ok(
                pb::IsCatalogJanitorEnabledResponse {
                    value: s.master.switch_on(Switch::CatalogJanitor)
                }
            )),
            "EnableCatalogJanitor" => {
                later!(pb::EnableCatalogJanitorRequest, enable_catalog_janitor)
            }
            "RunCatalogScan" => later!(pb::RunCatalogScanRequest, run_catalog_scan),
            "IsInMaintenanceMode" => now!(pb::IsInMaintenanceModeRequest, |_s, _r| Ok(
                pb::IsInMaintenanceModeResponse {
                    in_maintenance_mode: false
                }
            )),
            // Off the async workers: in a distributed cluster the master
            // asks every region server for its load.
            "GetClusterStatus" => {
                let rpc = self.clone();
                Some(Box::pin(async move {
                    let done = tokio::task::spawn_blocking(move || {
                        let master = rpc.master.as_ref().ok_or_else(not_master)?;
                        MasterService {
                            master,
                            procedures: &rpc.procedures,
                            access: &access,
                        }
                        .cluster_status(&rpc.server, &rpc.cluster_id)
                    })
                    .await
                    .unwrap_or_else(|e| Err(do_not_retry(format!("master call failed: {e}"))));
                    let mut out = BytesMut::new();
                    write_answer(&mut out, id, plain(done));
                    out
                }))
            }
            // ferrobase's balancer runs on its own schedule; HBase's switch
            // is reported off and a manual run moves nothing.
            "Balance" => later!(pb::BalanceRequest, balance),
            "SetBalancerRunning" => later!(pb::SetBalancerRunningRequest, set_balancer_running),
            // Permissions (HBase 2's Admin.grant/revoke/getUserPermissions).
            "Grant" => later!(pb::GrantRequest, grant),
            "Revoke" => later!(pb::RevokeRequest, revoke),
            "GetUserPermissions" => now!(pb::GetUserPermissionsRequest, user_permissions),
            "HasUserPermissions" => now!(pb::HasUserPermissionsRequest, has_user_permissions),
            "getSecurityCapabilities" | "GetSecurityCapabilities" => {
                let secure = self.authentication.is_secure();
                now!(pb::SecurityCapabilitiesRequest, |s, _r| s
                    .security_capabilities()
                    .map(|c| with_secure_authentication(c, secure)))
            }
            "SwitchSnapshotCleanup" => {
                later!(pb::SetSnapshotCleanupRequest, switch_snapshot_cleanup)
            }
            "IsSnapshotCleanupEnabled" => now!(pb::IsSnapshotCleanupEnabledRequest, |s, _r| Ok(
                pb::IsSnapshotCleanupEnabledResponse {
                    enabled: s.master.switch_on(Switch::SnapshotCleanup)
                }
            )),
            "IsSplitOrMergeEnabled" => now!(pb::IsSplitOrMergeEnabledRequest, |_s, _r| {
                // Splits and merges both run (by reference).
                Ok(pb::IsSplitOrMergeEnabledResponse { enabled: true })
            }),
            "ExecProcedure" => later!(pb::ExecProcedureRequest, exec_procedure),
            "IsProcedureDone" => now!(pb::IsProcedureDoneRequest, is_procedure_done),
            "FlushTable" => later!(pb::FlushTableRequest, flush_table),
            "SplitRegion" => later!(pb::SplitTableRegionRequest, split_region),
            "MergeTableRegions" => later!(pb::MergeTableRegionsRequest, merge_regions),
            "MoveRegion" => later!(pb::MoveRegionRequest, move_region),
            "CreateTable" => later!(pb::CreateTableRequest, create_table),
            "DisableTable" => later!(pb::DisableTableRequest, disable_table),
            "EnableTable" => later!(pb::EnableTableRequest, enable_table),
            "DeleteTable" => later!(pb::DeleteTableRequest, delete_table),
            "truncateTable" | "TruncateTable" => {
                later!(pb::TruncateTableRequest, truncate_table)
            }
            "AddColumn" => later!(pb::AddColumnRequest, add_column),
            "ModifyColumn" => later!(pb::ModifyColumnRequest, modify_column),
            "DeleteColumn" => later!(pb::DeleteColumnRequest, delete_column),
            "ModifyTable" => later!(pb::ModifyTableRequest, modify_table),
            "CreateNamespace" => later!(pb::CreateNamespaceRequest, create_namespace),
            "ModifyNamespace" => later!(pb::ModifyNamespaceRequest, modify_namespace),
            "DeleteNamespace" => later!(pb::DeleteNamespaceRequest, delete_namespace),
            "Snapshot" => later!(pb::SnapshotRequest, snapshot),
            "IsSnapshotDone" => later!(pb::IsSnapshotDoneRequest, is_snapshot_done),
            "GetCompletedSnapshots" => {
                later!(pb::GetCompletedSnapshotsRequest, completed_snapshots)
            }
            "DeleteSnapshot" => later!(pb::DeleteSnapshotRequest, delete_snapshot),
            "RestoreSnapshot" => later!(pb::RestoreSnapshotRequest, restore_snapshot),
            method => {
                fail(
                    out,
                    id,
                    &HBaseException::unsupported_method("MasterService", method),
                );
                None
            }
        }
    }
}

/// HBase reports SECURE_AUTHENTICATION in place of SIMPLE_AUTHENTICATION
/// when callers must prove who they are (tokens, certificates).
fn with_secure_authentication(
    mut c: pb::SecurityCapabilitiesResponse,
    secure: bool,
) -> pb::SecurityCapabilitiesResponse {
    use pb::security_capabilities_response::Capability;
    if secure {
        for cap in &mut c.capabilities {
            if *cap == Capability::SimpleAuthentication as i32 {
                *cap = Capability::SecureAuthentication as i32;
            }
        }
    }
    c
}
