//! [`Admin`]: table DDL through the active master's `MasterService`.
//!
//! This module owns create (with split keys and family attributes, from a
//! ferrobase [`TableDescriptor`] converted to HBase's `TableSchema`),
//! enable, disable, delete, exists and the table state. HBase 2 runs DDL as
//! master procedures: each call returns a procedure id, which is polled
//! with `getProcedureResult` until it is finished, and then the table's
//! visible state is awaited (every region of a new table online in
//! `hbase:meta`, a disabled table reported disabled, a deleted one gone),
//! so a call that returns has taken effect for the next client call.
//! Flushes and major compactions of a table go region by region to the
//! region servers' `AdminService` (`FlushRegion`, which returns when the
//! memstore is written; `CompactRegion`, then `GetRegionInfo`'s
//! compaction state polled until it is `NONE`), the calls HBase's own
//! `Admin` makes per region; `GetStoreFile` lists the store files the
//! regions serve. It never reads or writes data.

use crate::connection::{ADMIN_SERVICE, Connection};
use crate::error::{ClientError, Result};
use crate::rpc::HIGH_QOS;
use bytes::Bytes;
use ferrobase_hbase_wire::convert::schema::table_to_pb;
use ferrobase_hbase_wire::names::TableName;
use ferrobase_hbase_wire::pb;
use ferrobase_types::TableDescriptor;
use std::time::{Duration, Instant};

/// How long DDL may take to become visible (HBase's
/// `hbase.client.sync.wait.timeout.msec` is 10 minutes; a standalone
/// server needs seconds).
const DDL_WAIT: Duration = Duration::from_secs(120);

/// See the module docs.
#[derive(Clone, Debug)]
pub struct Admin {
    conn: Connection,
}

fn table_pb(name: &str) -> Result<pb::TableName> {
    Ok(TableName::parse(name)
        .map_err(|e| ClientError::Invalid(format!("table name {name}: {e}")))?
        .to_pb())
}

impl Admin {
    pub(crate) fn new(conn: Connection) -> Admin {
        Admin { conn }
    }

    /// Creates `table` with one region per range between `splits`, and
    /// waits until every region is online.
    pub async fn create_table(&self, table: &TableDescriptor, splits: &[Bytes]) -> Result<()> {
        let schema = table_to_pb(table)?;
        let mut split_keys: Vec<Bytes> = splits.to_vec();
        split_keys.sort();
        split_keys.dedup();
        if split_keys.iter().any(|k| k.is_empty()) {
            return Err(ClientError::Invalid("a split key may not be empty".into()));
        }
        let regions = split_keys.len() + 1;
        let req = pb::CreateTableRequest {
            table_schema: schema,
            split_keys,
            nonce_group: None,
            nonce: None,
        };
        let r: pb::CreateTableResponse = self.conn.master_call("CreateTable", &req).await?;
        self.wait_procedure(r.proc_id).await?;
        let name = table.name.clone();
        self.wait_for(
            &format!("all {regions} regions of {name} online"),
            async || {
                Ok(self
                    .conn
                    .region_locations(&name)
                    .await
                    .is_ok_and(|r| r.len() >= regions))
            },
        )
        .await
    }

    /// Disables `table` and waits until the master reports it disabled.
    pub async fn disable_table(&self, table: &str) -> Result<()> {
        let req = pb::DisableTableRequest {
            table_name: table_pb(table)?,
            nonce_group: None,
            nonce: None,
        };
        let r: pb::DisableTableResponse = self.conn.master_call("DisableTable", &req).await?;
        self.wait_procedure(r.proc_id).await?;
        self.conn.inner.locator.invalidate(table);
        self.wait_for(&format!("{table} disabled"), async || {
            Ok(!self.is_table_enabled(table).await?)
        })
        .await
    }

    /// Enables `table` and waits until the master reports it enabled.
    pub async fn enable_table(&self, table: &str) -> Result<()> {
        let req = pb::EnableTableRequest {
            table_name: table_pb(table)?,
            nonce_group: None,
            nonce: None,
        };
        let r: pb::EnableTableResponse = self.conn.master_call("EnableTable", &req).await?;
        self.wait_procedure(r.proc_id).await?;
        self.wait_for(&format!("{table} enabled"), async || {
            self.is_table_enabled(table).await
        })
        .await
    }

    /// Deletes a disabled `table` and waits until it is gone.
    pub async fn delete_table(&self, table: &str) -> Result<()> {
        let req = pb::DeleteTableRequest {
            table_name: table_pb(table)?,
            nonce_group: None,
            nonce: None,
        };
        let r: pb::DeleteTableResponse = self.conn.master_call("DeleteTable", &req).await?;
        self.wait_procedure(r.proc_id).await?;
        self.conn.inner.locator.invalidate(table);
        self.wait_for(&format!("{table} deleted"), async || {
            Ok(!self.table_exists(table).await?)
        })
        .await
    }

    /// True when `table` exists (enabled or not).
    pub async fn table_exists(&self, table: &str) -> Result<bool> {
        let req = pb::GetTableDescriptorsRequest {
            table_names: vec![table_pb(table)?],
            include_sys_tables: Some(true),
            ..Default::default()
        };
        let r: pb::GetTableDescriptorsResponse =
            self.conn.master_call("GetTableDescriptors", &req).await?;
        Ok(!r.table_schema.is_empty())
    }

    /// True when `table` is enabled; `TableNotFoundException` when it does
    /// not exist.
    pub async fn is_table_enabled(&self, table: &str) -> Result<bool> {
        let req = pb::GetTableStateRequest {
            table_name: table_pb(table)?,
        };
        let r: pb::GetTableStateResponse = self.conn.master_call("GetTableState", &req).await?;
        Ok(r.table_state.state == pb::table_state::State::Enabled as i32)
    }

    /// Disables (if enabled) and deletes `table` if it exists.
    pub async fn drop_table_if_exists(&self, table: &str) -> Result<()> {
        if !self.table_exists(table).await? {
            return Ok(());
        }
        if self.is_table_enabled(table).await? {
            self.disable_table(table).await?;
        }
        self.delete_table(table).await
    }

    /// Flushes every region of `table` (each region server writes the
    /// region's memstore to a store file before it answers). Returns how
    /// many regions had something to flush.
    pub async fn flush_table(&self, table: &str) -> Result<usize> {
        let mut flushed = 0;
        for loc in self.conn.region_locations(table).await? {
            let req = pb::FlushRegionRequest {
                region: loc.specifier(),
                if_older_than_ts: None,
                write_flush_wal_marker: None,
                family: None,
            };
            let (r, _): (pb::FlushRegionResponse, _) = self
                .conn
                .retrying(Some(table), |_| {
                    let (conn, server, req) = (self.conn.clone(), loc.server.clone(), req.clone());
                    async move {
                        conn.call(&server, ADMIN_SERVICE, "FlushRegion", &req, None, HIGH_QOS)
                            .await
                    }
                })
                .await?;
            flushed += usize::from(r.flushed == Some(true));
        }
        Ok(flushed)
    }

    /// The store files every region of `table` serves now, as the region
    /// servers name them (`GetStoreFile`; HBase: the files' full paths,
    /// e.g. `file:/DIR/hbase/data/default/T/REGION/FAMILY/FILE`). Files a
    /// compaction replaced but has not yet archived are not listed, so
    /// their sizes are the table's size on disk.
    pub async fn store_files(&self, table: &str) -> Result<Vec<String>> {
        let mut files = Vec::new();
        for loc in self.conn.region_locations(table).await? {
            let req = pb::GetStoreFileRequest {
                region: loc.specifier(),
                family: Vec::new(),
            };
            let (r, _): (pb::GetStoreFileResponse, _) = self
                .conn
                .retrying(Some(table), |_| {
                    let (conn, server, req) = (self.conn.clone(), loc.server.clone(), req.clone());
                    async move {
                        conn.call(&server, ADMIN_SERVICE, "GetStoreFile", &req, None, HIGH_QOS)
                            .await
                    }
                })
                .await?;
            files.extend(r.store_file);
        }
        Ok(files)
    }

    /// Major-compacts every region of `table` and waits (at most `limit`)
    /// until no region of it reports a compaction: the requests are queued
    /// by the region servers, so the compaction state is polled.
    pub async fn major_compact_table(&self, table: &str, limit: Duration) -> Result<()> {
        use pb::get_region_info_response::CompactionState;
        let regions = self.conn.region_locations(table).await?;
        for loc in &regions {
            let req = pb::CompactRegionRequest {
                region: loc.specifier(),
                major: Some(true),
                family: None,
            };
            let _: (pb::CompactRegionResponse, _) = self
                .conn
                .retrying(Some(table), |_| {
                    let (conn, server, req) = (self.conn.clone(), loc.server.clone(), req.clone());
                    async move {
                        conn.call(
                            &server,
                            ADMIN_SERVICE,
                            "CompactRegion",
                            &req,
                            None,
                            HIGH_QOS,
                        )
                        .await
                    }
                })
                .await?;
        }
        let start = Instant::now();
        let mut pause = Duration::from_millis(20);
        for loc in &regions {
            let req = pb::GetRegionInfoRequest {
                region: loc.specifier(),
                compaction_state: Some(true),
                best_split_row: None,
            };
            loop {
                let (r, _): (pb::GetRegionInfoResponse, _) = self
                    .conn
                    .call(
                        &loc.server,
                        ADMIN_SERVICE,
                        "GetRegionInfo",
                        &req,
                        None,
                        HIGH_QOS,
                    )
                    .await?;
                let idle = r
                    .compaction_state
                    .is_none_or(|s| s == CompactionState::None as i32);
                if idle {
                    break;
                }
                if start.elapsed() > limit {
                    return Err(ClientError::Timeout {
                        addr: loc.server.clone(),
                        method: format!("waiting for the major compaction of {table}"),
                        millis: limit.as_millis() as u64,
                    });
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(500));
            }
        }
        Ok(())
    }

    /// Polls a procedure until it is finished; its failure is an error
    /// naming the exception. A procedure the master no longer knows is
    /// taken as finished (the table's state is checked afterwards).
    async fn wait_procedure(&self, proc_id: Option<u64>) -> Result<()> {
        use pb::get_procedure_result_response::State;
        let Some(proc_id) = proc_id else {
            return Ok(());
        };
        let start = Instant::now();
        let mut pause = Duration::from_millis(20);
        loop {
            let r: pb::GetProcedureResultResponse = self
                .conn
                .master_call(
                    "getProcedureResult",
                    &pb::GetProcedureResultRequest { proc_id },
                )
                .await?;
            if r.state != State::Running as i32 {
                if let Some(e) = r.exception {
                    let g = e.generic_exception.unwrap_or_default();
                    return Err(ClientError::Procedure {
                        proc_id,
                        class: g.class_name.unwrap_or_default(),
                        message: g.message.unwrap_or_default(),
                    });
                }
                return Ok(());
            }
            if start.elapsed() > DDL_WAIT {
                return Err(ClientError::Timeout {
                    addr: self.conn.master(),
                    method: format!("procedure {proc_id}"),
                    millis: DDL_WAIT.as_millis() as u64,
                });
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }

    async fn wait_for(
        &self,
        what: &str,
        mut done: impl AsyncFnMut() -> Result<bool>,
    ) -> Result<()> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(20);
        loop {
            if done().await? {
                return Ok(());
            }
            if start.elapsed() > DDL_WAIT {
                return Err(ClientError::Timeout {
                    addr: self.conn.master(),
                    method: format!("waiting for {what}"),
                    millis: DDL_WAIT.as_millis() as u64,
                });
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }
}
