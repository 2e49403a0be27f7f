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
use crate::acl::{Access, Action};
use crate::master::{Master, Switch};
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

/// The master and the procedure ids it has handed out, and the caller
/// (every call is checked against its permissions, HBase's
/// AccessController table of what each operation needs).
pub struct MasterService<'a> {
    pub master: &'a Master,
    pub procedures: &'a AtomicU64,
    pub access: &'a Access,
}

/// What table DDL needs (HBase: ADMIN or CREATE on the table).
pub(super) const DDL: &[Action] = &[Action::Admin, Action::Create];
pub(super) const ADMIN: &[Action] = &[Action::Admin];

fn table_name(t: &pb::TableName) -> Outcome<String> {
    TableName::from_pb(t)
        .map(|t| t.name_as_string())
        .map_err(|e| do_not_retry(e.to_string()))
}

impl MasterService<'_> {
    /// One of `actions` on `table` for `what`.
    pub(super) fn require_table(&self, what: &str, table: &str, actions: &[Action]) -> Outcome<()> {
        self.access
            .require_table(what, table, actions)
            .map_err(exception)
    }

    /// One of `actions` globally for `what`.
    pub(super) fn require_global(&self, what: &str, actions: &[Action]) -> Outcome<()> {
        self.access.require_global(what, actions).map_err(exception)
    }

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
            // Tables the caller holds no permission on are not listed (HBase).
            if !self.access.sees_table(&name) {
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
        self.access
            .require_namespace("createTable", name.namespace(), DDL)
            .map_err(exception)?;
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
        self.master
            .create_table_by(create, self.access.user())
            .map_err(exception)?;
        Ok(pb::CreateTableResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn disable_table(
        &self,
        req: &pb::DisableTableRequest,
    ) -> Outcome<pb::DisableTableResponse> {
        let name = table_name(&req.table_name)?;
        self.require_table("disableTable", &name, DDL)?;
        self.master.disable(&name).map_err(exception)?;
        Ok(pb::DisableTableResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn enable_table(&self, req: &pb::EnableTableRequest) -> Outcome<pb::EnableTableResponse> {
        let name = table_name(&req.table_name)?;
        self.require_table("enableTable", &name, DDL)?;
        self.master.enable(&name).map_err(exception)?;
        Ok(pb::EnableTableResponse {
            proc_id: Some(self.procedure()),
        })
    }

    pub fn delete_table(&self, req: &pb::DeleteTableRequest) -> Outcome<pb::DeleteTableResponse> {
        let name = table_name(&req.table_name)?;
        self.require_table("deleteTable", &name, DDL)?;
        self.master.drop_table(&name).map_err(exception)?;
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
        self.require_table("truncateTable", &name, DDL)?;
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
            let names = req
                .table_names
                .iter()
                .map(table_name)
                .collect::<Outcome<Vec<_>>>()?;
            for n in &names {
                if self.master.exists(n) {
                    crate::service::master::require_visible(self.access, "getTableDescriptors", n)
                        .map_err(exception)?;
                }
            }
            names
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
        self.require_table("modifyTable", &table, DDL)?;
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
        self.require_table("modifyTable", &name, DDL)?;
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
}

mod access;
mod cluster;
mod namespaces;
mod snapshots;
