//! HBase's `MasterService` over ferrobase's [`Master`]: table DDL,
//! descriptors and state, namespaces, and the procedure polling the Java
//! `Admin` does after each DDL call.
//!
//! ferrobase's DDL finishes before it answers, so every procedure id handed
//! out here is already FINISHED when the client polls it. Each function is
//! synchronous master work (DDL writes meta and opens or closes regions):
//! the connection runs it off the async workers. This module never touches
//! regions' data directly.

use super::admin_service::hbase_region_load;
use super::exceptions::{convert, do_not_retry, exception};
use crate::master::Master;
use ferrobase_hbase_wire::convert::schema::{family_from_pb, table_from_pb, table_to_pb};
use ferrobase_hbase_wire::convert::{RegionRef, region_ref};
use ferrobase_hbase_wire::names::{RegionName, ServerName, TableName};
use ferrobase_hbase_wire::{ExceptionClass, HBaseException, pb};
use ferrobase_proto::pb as fpb;
use ferrobase_proto::schema as fschema;
use ferrobase_types::TableDescriptor;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

type Outcome<M> = Result<M, HBaseException>;

/// The signature of HBase's table flush procedure (`Admin.flush(table)`).
const FLUSH_TABLE_PROCEDURE: &str = "flush-table-proc";

/// The HBase version ferrobase's RPC answers for (the client's protocol).
pub const HBASE_VERSION: &str = "2.6.4";

/// The master and the procedure ids it has handed out.
pub struct MasterService<'a> {
    pub master: &'a Master,
    pub procedures: &'a AtomicU64,
}

fn table_name(t: &pb::TableName) -> Outcome<String> {
    TableName::from_pb(t)
        .map(|t| t.name_as_string())
        .map_err(|e| do_not_retry(e.to_string()))
}

impl MasterService<'_> {
    /// A finished procedure's id.
    fn procedure(&self) -> u64 {
        self.procedures.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// `getProcedureResult`: every procedure handed out is finished;
    /// others are unknown.
    pub fn procedure_result(
        &self,
        req: &pb::GetProcedureResultRequest,
    ) -> Outcome<pb::GetProcedureResultResponse> {
        use pb::get_procedure_result_response::State;
        let handed_out = 1..=self.procedures.load(Ordering::Relaxed);
        let state = if handed_out.contains(&req.proc_id) {
            State::Finished
        } else {
            State::NotFound
        };
        Ok(pb::GetProcedureResultResponse {
            state: state as i32,
            ..Default::default()
        })
    }

    /// `listTableNames`: user tables, with `hbase:meta` when system tables
    /// are asked for, optionally of one namespace.
    pub fn table_names(
        &self,
        req: &pb::GetTableNamesRequest,
    ) -> Outcome<pb::GetTableNamesResponse> {
        let names = self.tables(
            req.regex.as_deref(),
            req.include_sys_tables.unwrap_or(false),
            req.namespace.as_deref(),
        )?;
        Ok(pb::GetTableNamesResponse {
            table_names: names.iter().map(TableName::to_pb).collect(),
        })
    }

    fn tables(
        &self,
        regex: Option<&str>,
        include_sys: bool,
        namespace: Option<&str>,
    ) -> Outcome<Vec<TableName>> {
        let pattern = match regex.filter(|r| !r.is_empty()) {
            Some(r) => Some(
                regex::Regex::new(&format!("^(?:{r})$"))
                    .map_err(|e| do_not_retry(format!("invalid table name pattern '{r}': {e}")))?,
            ),
            None => None,
        };
        let mut names = Vec::new();
        let meta = TableName::meta();
        if include_sys && namespace.is_none_or(|ns| ns == meta.namespace()) {
            names.push(meta);
        }
        for name in self.master.list_tables() {
            let Ok(t) = TableName::parse(&name) else {
                continue;
            };
            if t.is_system() && !include_sys {
                continue;
            }
            if namespace.is_some_and(|ns| ns != t.namespace()) {
                continue;
            }
            names.push(t);
        }
        if let Some(p) = pattern {
            names.retain(|t| p.is_match(&t.name_as_string()));
        }
        Ok(names)
    }

    /// `createTable`, with HBase's schema and split keys.
    pub fn create_table(&self, req: &pb::CreateTableRequest) -> Outcome<pb::CreateTableResponse> {
        let schema = table_from_pb(&req.table_schema).map_err(convert)?;
        let name =
            TableName::parse(&schema.descriptor.name).map_err(|e| do_not_retry(e.to_string()))?;
        if !self.master.namespaces().contains_key(name.namespace()) {
            return Err(HBaseException::new(
                ExceptionClass::NamespaceNotFound,
                name.namespace().to_string(),
            ));
        }
        if !schema.ignored.is_empty() {
            tracing::debug!(
                "createTable {}: ignored {}",
                schema.descriptor.name,
                schema.ignored.join(", ")
            );
        }
        let create = fpb::CreateTableRequest {
            schema: Some(fschema::table_to_pb(&schema.descriptor)),
            splits: req.split_keys.clone(),
            ..Default::default()
        };
        self.master.create_table(create).map_err(exception)?;
        Ok(pb::CreateTableResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn disable_table(
        &self,
        req: &pb::DisableTableRequest,
    ) -> Outcome<pb::DisableTableResponse> {
        self.master
            .disable(&table_name(&req.table_name)?)
            .map_err(exception)?;
        Ok(pb::DisableTableResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn enable_table(&self, req: &pb::EnableTableRequest) -> Outcome<pb::EnableTableResponse> {
        self.master
            .enable(&table_name(&req.table_name)?)
            .map_err(exception)?;
        Ok(pb::EnableTableResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn delete_table(&self, req: &pb::DeleteTableRequest) -> Outcome<pb::DeleteTableResponse> {
        self.master
            .drop_table(&table_name(&req.table_name)?)
            .map_err(exception)?;
        Ok(pb::DeleteTableResponse {
            proc_id: Some(self.procedure()),
        })
    }

    /// `truncateTable`: the table's split points are kept only with
    /// `preserveSplits`, as in HBase.
    pub fn truncate_table(
        &self,
        req: &pb::TruncateTableRequest,
    ) -> Outcome<pb::TruncateTableResponse> {
        let name = table_name(&req.table_name)?;
        if self.master.is_enabled(&name).map_err(exception)? {
            return Err(HBaseException::new(ExceptionClass::TableNotDisabled, name));
        }
        self.master
            .truncate_with(&name, req.preserve_splits.unwrap_or(false))
            .map_err(exception)?;
        Ok(pb::TruncateTableResponse {
            proc_id: Some(self.procedure()),
        })
    }

    fn descriptor(&self, name: &str) -> Outcome<TableDescriptor> {
        let d = self.master.describe(name).map_err(exception)?;
        let schema = d
            .schema
            .ok_or_else(|| do_not_retry(format!("table '{name}' has no schema")))?;
        fschema::table_from_pb(&schema).map_err(|e| do_not_retry(e.to_string()))
    }

    fn schema(&self, name: &str) -> Outcome<pb::TableSchema> {
        table_to_pb(&self.descriptor(name)?).map_err(convert)
    }

    /// `getDescriptor` / `listTableDescriptors`: the named tables that exist
    /// (the client raises TableNotFoundException for a missing one), or
    /// every table matching the pattern and namespace.
    pub fn table_descriptors(
        &self,
        req: &pb::GetTableDescriptorsRequest,
    ) -> Outcome<pb::GetTableDescriptorsResponse> {
        let names: Vec<String> = if req.table_names.is_empty() {
            self.tables(req.regex.as_deref(), false, req.namespace.as_deref())?
                .iter()
                .map(TableName::name_as_string)
                .collect()
        } else {
            req.table_names
                .iter()
                .map(table_name)
                .collect::<Outcome<Vec<_>>>()?
        };
        let table_schema = names
            .iter()
            .filter(|n| self.master.exists(n))
            .map(|n| self.schema(n))
            .collect::<Outcome<Vec<_>>>()?;
        Ok(pb::GetTableDescriptorsResponse { table_schema })
    }

    pub fn tables_of_namespace(
        &self,
        req: &pb::ListTableDescriptorsByNamespaceRequest,
    ) -> Outcome<pb::ListTableDescriptorsByNamespaceResponse> {
        self.namespace(&req.namespace_name)?;
        let names = self.tables(None, false, Some(&req.namespace_name))?;
        let table_schema = names
            .iter()
            .map(|n| self.schema(&n.name_as_string()))
            .collect::<Outcome<Vec<_>>>()?;
        Ok(pb::ListTableDescriptorsByNamespaceResponse { table_schema })
    }

    pub fn table_state(
        &self,
        req: &pb::GetTableStateRequest,
    ) -> Outcome<pb::GetTableStateResponse> {
        use pb::table_state::State;
        let enabled = self
            .master
            .is_enabled(&table_name(&req.table_name)?)
            .map_err(exception)?;
        let state = if enabled {
            State::Enabled
        } else {
            State::Disabled
        };
        Ok(pb::GetTableStateResponse {
            table_state: pb::TableState {
                state: state as i32,
            },
        })
    }

    fn alter(
        &self,
        table: String,
        modify: Vec<fpb::FamilySchema>,
        delete: Vec<String>,
    ) -> Outcome<u64> {
        self.master
            .alter(fpb::AlterTableRequest {
                table,
                modify,
                delete,
            })
            .map_err(exception)?;
        Ok(self.procedure())
    }

    fn family(f: &pb::ColumnFamilySchema) -> Outcome<fpb::FamilySchema> {
        let f = family_from_pb(f).map_err(convert)?;
        Ok(fschema::family_to_pb(&f.descriptor))
    }

    pub fn add_column(&self, req: &pb::AddColumnRequest) -> Outcome<pb::AddColumnResponse> {
        let name = table_name(&req.table_name)?;
        let family = Self::family(&req.column_families)?;
        if self
            .descriptor(&name)?
            .family(family.name.as_bytes())
            .is_some()
        {
            return Err(HBaseException::new(
                ExceptionClass::InvalidFamilyOperation,
                format!(
                    "column family '{}' already exists in table '{name}'",
                    family.name
                ),
            ));
        }
        let proc_id = self.alter(name, vec![family], Vec::new())?;
        Ok(pb::AddColumnResponse {
            proc_id: Some(proc_id),
        })
    }

    pub fn modify_column(
        &self,
        req: &pb::ModifyColumnRequest,
    ) -> Outcome<pb::ModifyColumnResponse> {
        let name = table_name(&req.table_name)?;
        let family = Self::family(&req.column_families)?;
        if self
            .descriptor(&name)?
            .family(family.name.as_bytes())
            .is_none()
        {
            return Err(HBaseException::new(
                ExceptionClass::InvalidFamilyOperation,
                format!(
                    "column family '{}' does not exist in table '{name}'",
                    family.name
                ),
            ));
        }
        let proc_id = self.alter(name, vec![family], Vec::new())?;
        Ok(pb::ModifyColumnResponse {
            proc_id: Some(proc_id),
        })
    }

    pub fn delete_column(
        &self,
        req: &pb::DeleteColumnRequest,
    ) -> Outcome<pb::DeleteColumnResponse> {
        let name = table_name(&req.table_name)?;
        let family = String::from_utf8_lossy(&req.column_name).into_owned();
        let d = self.descriptor(&name)?;
        if d.family(family.as_bytes()).is_none() {
            return Err(HBaseException::new(
                ExceptionClass::InvalidFamilyOperation,
                format!("column family '{family}' does not exist in table '{name}'"),
            ));
        }
        if d.families.len() == 1 {
            return Err(HBaseException::new(
                ExceptionClass::InvalidFamilyOperation,
                format!("column family '{family}' is the only one of table '{name}'"),
            ));
        }
        let proc_id = self.alter(name, Vec::new(), vec![family])?;
        Ok(pb::DeleteColumnResponse {
            proc_id: Some(proc_id),
        })
    }

    /// `modifyTable`: the table becomes the given schema (families added,
    /// changed, or dropped when absent).
    pub fn modify_table(&self, req: &pb::ModifyTableRequest) -> Outcome<pb::ModifyTableResponse> {
        let name = table_name(&req.table_name)?;
        let new = table_from_pb(&req.table_schema)
            .map_err(convert)?
            .descriptor;
        if new.name != name {
            return Err(do_not_retry(format!(
                "modifyTable of '{name}' carries the schema of '{}'",
                new.name
            )));
        }
        let old = self.descriptor(&name)?;
        let delete = old
            .families
            .iter()
            .filter(|f| new.family(f.name.as_bytes()).is_none())
            .map(|f| f.name.clone())
            .collect();
        let modify = new.families.iter().map(fschema::family_to_pb).collect();
        let proc_id = self.alter(name.clone(), modify, delete)?;
        if new.durability != old.durability || new.values != old.values {
            self.master
                .set_table_values(&name, new.durability, new.values)
                .map_err(exception)?;
        }
        Ok(pb::ModifyTableResponse {
            proc_id: Some(proc_id),
        })
    }

    /// Schema changes are applied before the DDL answers: nothing is left
    /// to update.
    pub fn schema_alter_status(
        &self,
        req: &pb::GetSchemaAlterStatusRequest,
    ) -> Outcome<pb::GetSchemaAlterStatusResponse> {
        let name = table_name(&req.table_name)?;
        let (_, regions) = self.master.table_regions(&name).map_err(exception)?;
        Ok(pb::GetSchemaAlterStatusResponse {
            yet_to_update_regions: Some(0),
            total_regions: Some(u32::try_from(regions.len()).unwrap_or(u32::MAX)),
        })
    }

    fn namespace(&self, name: &str) -> Outcome<pb::NamespaceDescriptor> {
        let all = self.master.namespaces();
        let config = all.get(name).ok_or_else(|| {
            HBaseException::new(ExceptionClass::NamespaceNotFound, name.to_string())
        })?;
        Ok(pb::NamespaceDescriptor {
            name: name.as_bytes().to_vec().into(),
            configuration: config
                .iter()
                .map(|(k, v)| pb::NameStringPair {
                    name: k.clone(),
                    value: v.clone(),
                })
                .collect(),
        })
    }

    fn namespace_config(
        d: &pb::NamespaceDescriptor,
    ) -> Outcome<(String, BTreeMap<String, String>)> {
        let name = std::str::from_utf8(&d.name)
            .map_err(|_| do_not_retry("namespace name is not UTF-8"))?
            .to_string();
        let config = d
            .configuration
            .iter()
            .map(|p| (p.name.clone(), p.value.clone()))
            .collect();
        Ok((name, config))
    }

    pub fn create_namespace(
        &self,
        req: &pb::CreateNamespaceRequest,
    ) -> Outcome<pb::CreateNamespaceResponse> {
        let (name, config) = Self::namespace_config(&req.namespace_descriptor)?;
        self.master
            .create_namespace(&name, config)
            .map_err(exception)?;
        Ok(pb::CreateNamespaceResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn modify_namespace(
        &self,
        req: &pb::ModifyNamespaceRequest,
    ) -> Outcome<pb::ModifyNamespaceResponse> {
        let (name, config) = Self::namespace_config(&req.namespace_descriptor)?;
        self.master
            .modify_namespace(&name, config)
            .map_err(exception)?;
        Ok(pb::ModifyNamespaceResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn delete_namespace(
        &self,
        req: &pb::DeleteNamespaceRequest,
    ) -> Outcome<pb::DeleteNamespaceResponse> {
        let ns = &req.namespace_name;
        if !self.tables(None, false, Some(ns))?.is_empty() {
            return Err(HBaseException::new(
                ExceptionClass::Constraint,
                format!("namespace {ns} has tables: drop them before deleting it"),
            ));
        }
        self.master
            .delete_namespace(&req.namespace_name)
            .map_err(exception)?;
        Ok(pb::DeleteNamespaceResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn namespace_descriptor(
        &self,
        req: &pb::GetNamespaceDescriptorRequest,
    ) -> Outcome<pb::GetNamespaceDescriptorResponse> {
        Ok(pb::GetNamespaceDescriptorResponse {
            namespace_descriptor: self.namespace(&req.namespace_name)?,
        })
    }

    pub fn namespace_descriptors(&self) -> Outcome<pb::ListNamespaceDescriptorsResponse> {
        let namespace_descriptor = self
            .master
            .namespaces()
            .keys()
            .map(|n| self.namespace(n))
            .collect::<Outcome<Vec<_>>>()?;
        Ok(pb::ListNamespaceDescriptorsResponse {
            namespace_descriptor,
        })
    }

    /// `getClusterMetrics` (and the HBase shell's `status`): this server as
    /// the master and every region server with its regions' load.
    pub fn cluster_status(
        &self,
        me: &ServerName,
        cluster_id: &str,
    ) -> Outcome<pb::GetClusterStatusResponse> {
        let status = self.master.cluster_status();
        let local = format!("{}:{}", me.host, me.port);
        let live_servers = status
            .servers
            .iter()
            .map(|s| {
                let server = if s.server == local || s.server.is_empty() {
                    me.clone()
                } else {
                    s.server
                        .rsplit_once(':')
                        .and_then(|(h, p)| Some(ServerName::new(h, p.parse().ok()?, 0)))
                        .unwrap_or_else(|| me.clone())
                };
                let region_loads = s
                    .regions
                    .iter()
                    .filter_map(|r| {
                        let table = TableName::parse(&r.table).ok()?;
                        let (_, regions) = self.master.table_regions(&r.table).ok()?;
                        let start = regions
                            .iter()
                            .find(|l| l.region_id == r.region_id)
                            .map(|l| l.start_key.clone())
                            .unwrap_or_default();
                        Some(hbase_region_load(
                            &RegionName::new(&table, &start, r.region_id),
                            r,
                        ))
                    })
                    .collect::<Vec<_>>();
                let reads: u64 = s.regions.iter().map(|r| r.read_requests).sum();
                let writes: u64 = s.regions.iter().map(|r| r.write_requests).sum();
                pb::LiveServerInfo {
                    server: server.to_pb(),
                    server_load: pb::ServerLoad {
                        total_number_of_requests: Some(reads + writes),
                        read_requests_count: Some(reads),
                        write_requests_count: Some(writes),
                        region_loads,
                        ..Default::default()
                    },
                }
            })
            .collect::<Vec<_>>();
        let servers_name = live_servers.iter().map(|l| l.server.clone()).collect();
        // Per table region counts: the shell's `alter` reports progress
        // from them. Regions of an enabled table are open; of a disabled
        // one, closed; ferrobase's DDL leaves none in transition.
        let table_region_states_count = self
            .master
            .list_tables()
            .into_iter()
            .filter_map(|name| {
                let table = TableName::parse(&name).ok()?;
                let (enabled, regions) = self.master.table_regions(&name).ok()?;
                let total = u32::try_from(regions.len()).unwrap_or(u32::MAX);
                Some(pb::TableRegionStatesCount {
                    table_name: table.to_pb(),
                    region_states_count: pb::RegionStatesCount {
                        open_regions: if enabled { total } else { 0 },
                        split_regions: 0,
                        closed_regions: if enabled { 0 } else { total },
                        regions_in_transition: 0,
                        total_regions: total,
                    },
                })
            })
            .collect();
        Ok(pb::GetClusterStatusResponse {
            cluster_status: pb::ClusterStatus {
                hbase_version: Some(pb::HBaseVersionFileContent {
                    version: HBASE_VERSION.to_string(),
                }),
                live_servers,
                cluster_id: Some(pb::ClusterId {
                    cluster_id: cluster_id.to_string(),
                }),
                master: Some(me.to_pb()),
                balancer_on: Some(false),
                servers_name,
                table_region_states_count,
                ..Default::default()
            },
        })
    }

    /// `ExecProcedure`: the barriered procedures HBase's `Admin` runs by
    /// signature. `flush-table-proc` (`Admin.flush(table)`) flushes every
    /// region of the table named by the instance before answering.
    pub fn exec_procedure(
        &self,
        req: &pb::ExecProcedureRequest,
    ) -> Outcome<pb::ExecProcedureResponse> {
        let p = &req.procedure;
        match p.signature.as_str() {
            FLUSH_TABLE_PROCEDURE => {
                let table = p
                    .instance
                    .as_deref()
                    .ok_or_else(|| do_not_retry("flush-table-proc without a table"))?;
                self.flush(table)?;
                Ok(pb::ExecProcedureResponse {
                    expected_timeout: Some(0),
                    return_data: None,
                })
            }
            other => Err(do_not_retry(format!(
                "procedure '{other}' is not supported by ferrobase (only {FLUSH_TABLE_PROCEDURE})"
            ))),
        }
    }

    /// `IsProcedureDone`: a procedure [`exec_procedure`](Self::exec_procedure)
    /// ran has finished by the time it answered.
    pub fn is_procedure_done(
        &self,
        req: &pb::IsProcedureDoneRequest,
    ) -> Outcome<pb::IsProcedureDoneResponse> {
        match req.procedure.as_ref().map(|p| p.signature.as_str()) {
            Some(FLUSH_TABLE_PROCEDURE) => Ok(pb::IsProcedureDoneResponse {
                done: Some(true),
                snapshot: None,
            }),
            other => Err(do_not_retry(format!(
                "procedure '{}' is not known to ferrobase",
                other.unwrap_or("")
            ))),
        }
    }

    /// Flushes every region of a table, HBase's table name given.
    fn flush(&self, table: &str) -> Outcome<()> {
        let name = TableName::parse(table).map_err(|e| do_not_retry(e.to_string()))?;
        self.master.flush(&name.name_as_string()).map_err(exception)
    }

    /// `FlushTable` (HBase 2.6's flush procedure): flushes every region of
    /// the table (all families: a ferrobase flush writes a region's every
    /// store) and answers a finished procedure.
    pub fn flush_table(&self, req: &pb::FlushTableRequest) -> Outcome<pb::FlushTableResponse> {
        let name = table_name(&req.table_name)?;
        let desc = self.descriptor(&name)?;
        for f in &req.column_family {
            let family = String::from_utf8_lossy(f);
            if !desc.families.iter().any(|d| d.name == family) {
                return Err(HBaseException::new(
                    ExceptionClass::NoSuchColumnFamily,
                    format!("column family '{family}' does not exist in table '{name}'"),
                ));
            }
        }
        self.master.flush(&name).map_err(exception)?;
        Ok(pb::FlushTableResponse {
            proc_id: Some(self.procedure()),
        })
    }

    /// `SplitRegion`: splits the region at the row given (or at its middle)
    /// and answers a finished procedure once both daughters serve.
    pub fn split_region(
        &self,
        req: &pb::SplitTableRegionRequest,
    ) -> Outcome<pb::SplitTableRegionResponse> {
        let table = table_name(&req.region_info.table_name)?;
        let id = req.region_info.region_id;
        let (_, regions) = self.master.table_regions(&table).map_err(exception)?;
        if !regions.iter().any(|r| r.region_id == id) {
            return Err(HBaseException::new(
                ExceptionClass::UnknownRegion,
                format!("table '{table}' has no region with id {id}"),
            ));
        }
        let point = req
            .split_row
            .as_ref()
            .filter(|p| !p.is_empty())
            .map(|p| p.to_vec());
        self.master
            .split(&id.to_string(), point)
            .map_err(exception)?;
        Ok(pb::SplitTableRegionResponse {
            proc_id: Some(self.procedure()),
        })
    }

    /// The ferrobase region id a specifier names (full or encoded name),
    /// looked up in the master's tables.
    fn region_id(&self, spec: &pb::RegionSpecifier) -> Outcome<u64> {
        let wanted = region_ref(spec).map_err(convert)?;
        for name in self.master.list_tables() {
            let Ok(table) = TableName::parse(&name) else {
                continue;
            };
            let Ok((_, regions)) = self.master.table_regions(&name) else {
                continue;
            };
            for r in regions {
                let n = RegionName::new(&table, &r.start_key, r.region_id);
                let hit = match &wanted {
                    RegionRef::Name(full) => *full == n.name,
                    RegionRef::Encoded(e) => *e == n.encoded,
                };
                if hit {
                    return Ok(r.region_id);
                }
            }
        }
        Err(HBaseException::new(
            ExceptionClass::UnknownRegion,
            format!("no region named {}", String::from_utf8_lossy(&spec.value)),
        ))
    }

    /// `MoveRegion` (`Admin.move`): closes the region on its server and
    /// opens it on the one named, or on the least loaded other server;
    /// answers once it serves there. With one server it stays put.
    pub fn move_region(&self, req: &pb::MoveRegionRequest) -> Outcome<pb::MoveRegionResponse> {
        let id = self.region_id(&req.region)?;
        let dest = match &req.dest_server_name {
            Some(s) => Some(
                ServerName::from_pb(s)
                    .map_err(|e| do_not_retry(e.to_string()))?
                    .host_and_port(),
            ),
            None => None,
        };
        self.master
            .move_region_to(id, dest.as_deref())
            .map_err(exception)?;
        Ok(pb::MoveRegionResponse {})
    }

    pub fn namespace_names(&self) -> Outcome<pb::ListNamespacesResponse> {
        Ok(pb::ListNamespacesResponse {
            namespace_name: self.master.namespaces().into_keys().collect(),
        })
    }
}

/// How long the Java client may poll a snapshot (it never needs to: the
/// answer carries a finished procedure).
const SNAPSHOT_EXPECTED_TIMEOUT_MS: i64 = 60_000;

/// A snapshot as HBase describes it: a FLUSH snapshot, manifest version 2.
fn snapshot_to_pb(s: &fpb::SnapshotDescription) -> pb::SnapshotDescription {
    pb::SnapshotDescription {
        name: s.name.clone(),
        table: Some(s.table.clone()),
        creation_time: Some(s.created_ms as i64),
        r#type: Some(pb::snapshot_description::Type::Flush as i32),
        version: Some(2),
        ..Default::default()
    }
}

/// A table name as HBase sends it in a snapshot description (`ns:t`, or
/// `t` in the default namespace), as ferrobase names the table.
fn snapshot_table(name: &str) -> Outcome<String> {
    TableName::parse(name)
        .map(|t| t.name_as_string())
        .map_err(|e| do_not_retry(e.to_string()))
}

/// Table snapshots (docs/snapshots.md): finished before they answer, like
/// the DDL calls above.
impl MasterService<'_> {
    /// `snapshot`: takes it, and answers a finished procedure.
    pub fn snapshot(&self, req: &pb::SnapshotRequest) -> Outcome<pb::SnapshotResponse> {
        let table = req
            .snapshot
            .table
            .as_deref()
            .ok_or_else(|| do_not_retry("a snapshot needs a table"))?;
        self.master
            .snapshot(&snapshot_table(table)?, &req.snapshot.name)
            .map_err(exception)?;
        Ok(pb::SnapshotResponse {
            expected_timeout: SNAPSHOT_EXPECTED_TIMEOUT_MS,
            proc_id: Some(self.procedure() as i64),
        })
    }

    /// `isSnapshotDone`: a snapshot that exists is done (snapshots finish
    /// before `snapshot` answers); an unknown one is an error, as in HBase.
    pub fn is_snapshot_done(
        &self,
        req: &pb::IsSnapshotDoneRequest,
    ) -> Outcome<pb::IsSnapshotDoneResponse> {
        let Some(asked) = &req.snapshot else {
            return Ok(pb::IsSnapshotDoneResponse {
                done: Some(true),
                snapshot: None,
            });
        };
        let found = self
            .master
            .describe_snapshot(&asked.name)
            .map_err(exception)?;
        Ok(pb::IsSnapshotDoneResponse {
            done: Some(true),
            snapshot: Some(snapshot_to_pb(&found)),
        })
    }

    /// `getCompletedSnapshots`: every snapshot.
    pub fn completed_snapshots(
        &self,
        _req: &pb::GetCompletedSnapshotsRequest,
    ) -> Outcome<pb::GetCompletedSnapshotsResponse> {
        let all = self.master.list_snapshots(None).map_err(exception)?;
        Ok(pb::GetCompletedSnapshotsResponse {
            snapshots: all.iter().map(snapshot_to_pb).collect(),
        })
    }

    pub fn delete_snapshot(
        &self,
        req: &pb::DeleteSnapshotRequest,
    ) -> Outcome<pb::DeleteSnapshotResponse> {
        self.master
            .delete_snapshot(&req.snapshot.name)
            .map_err(exception)?;
        Ok(pb::DeleteSnapshotResponse {})
    }

    /// `restoreSnapshot`, which the Java client sends for both
    /// `cloneSnapshot` and `restoreSnapshot`: as HBase's master does, a
    /// table that exists is restored (it must be disabled and be the
    /// snapshot's), one that does not is created from the snapshot.
    pub fn restore_snapshot(
        &self,
        req: &pb::RestoreSnapshotRequest,
    ) -> Outcome<pb::RestoreSnapshotResponse> {
        let name = &req.snapshot.name;
        let found = self.master.describe_snapshot(name).map_err(exception)?;
        let target = match req.snapshot.table.as_deref().filter(|t| !t.is_empty()) {
            Some(t) => snapshot_table(t)?,
            None => found.table.clone(),
        };
        if !self.master.exists(&target) {
            let namespace = TableName::parse(&target)
                .map_err(|e| do_not_retry(e.to_string()))?
                .namespace()
                .to_string();
            if !self.master.namespaces().contains_key(&namespace) {
                return Err(HBaseException::new(
                    ExceptionClass::NamespaceNotFound,
                    namespace,
                ));
            }
            self.master
                .clone_snapshot(name, &target)
                .map_err(exception)?;
        } else if target == found.table {
            self.master.restore_snapshot(name).map_err(exception)?;
        } else {
            return Err(do_not_retry(format!(
                "snapshot '{name}' is of table '{}': it restores only that table, \
                 or clones into a table that does not exist ('{target}' exists)",
                found.table
            )));
        }
        Ok(pb::RestoreSnapshotResponse {
            proc_id: self.procedure(),
        })
    }
}
