//! MasterService's cluster-wide calls: the cluster status (the shell's
//! `status`), table flush procedures, region split and move.

use super::*;

impl MasterService<'_> {
    /// `getClusterMetrics` (and the HBase shell's `status`): this server as
    /// the master and every region server with its regions' load.
    pub fn cluster_status(
        &self,
        me: &ServerName,
        cluster_id: &str,
    ) -> Outcome<pb::GetClusterStatusResponse> {
        self.require_global("getClusterMetrics", ADMIN)?;
        let status = self.master.cluster_status();
        let live_servers = status
            .servers
            .iter()
            .map(|s| {
                let server = crate::hbase_rpc::registered_server_name(&s.server, me);
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
        let dead_servers = self
            .master
            .dead_servers()
            .iter()
            .filter_map(|d| Some(d.server_name()?.to_pb()))
            .collect();
        Ok(pb::GetClusterStatusResponse {
            cluster_status: pb::ClusterStatus {
                dead_servers,
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
        self.require_table("flush", &name.name_as_string(), DDL)?;
        self.master.flush(&name.name_as_string()).map_err(exception)
    }

    /// `FlushTable` (HBase 2.6's flush procedure): flushes every region of
    /// the table (all families: a ferrobase flush writes a region's every
    /// store) and answers a finished procedure.
    pub fn flush_table(&self, req: &pb::FlushTableRequest) -> Outcome<pb::FlushTableResponse> {
        let name = table_name(&req.table_name)?;
        self.require_table("flush", &name, DDL)?;
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
        self.require_table("split", &table, ADMIN)?;
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

    /// `MergeTableRegions` (`Admin.mergeRegionsAsync`): merges two or more
    /// adjacent regions by reference and answers a finished procedure once
    /// the merged region serves. With `forcible`, non-adjacent regions
    /// merge together with every region between them (`Master::merge_regions`).
    pub fn merge_regions(
        &self,
        req: &pb::MergeTableRegionsRequest,
    ) -> Outcome<pb::MergeTableRegionsResponse> {
        if req.region.len() < 2 {
            return Err(HBaseException::new(
                ExceptionClass::DoNotRetryIo,
                format!(
                    "a merge takes at least two regions; {} were given",
                    req.region.len()
                ),
            ));
        }
        let mut ids = Vec::with_capacity(req.region.len());
        for spec in &req.region {
            let id = self.region_id(spec)?;
            let table = self.master.table_of_target(&id.to_string());
            self.require_table("mergeRegions", &table, ADMIN)?;
            ids.push(id.to_string());
        }
        self.master
            .merge_regions(&ids, req.forcible.unwrap_or(false))
            .map_err(exception)?;
        Ok(pb::MergeTableRegionsResponse {
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
        self.require_global("move", ADMIN)?;
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

    /// `balance` (`Admin.balance`): one balancer pass now, whatever its
    /// switch; a dry run moves nothing (the balancer computes and moves in
    /// one pass, so it reports no plan).
    pub fn balance(&self, req: &pb::BalanceRequest) -> Outcome<pb::BalanceResponse> {
        self.require_global("balance", ADMIN)?;
        let dry = req.dry_run == Some(true);
        let moved = if dry {
            0
        } else {
            self.master.balance().map_err(exception)?
        };
        let moved = u32::try_from(moved).unwrap_or(u32::MAX);
        Ok(pb::BalanceResponse {
            balancer_ran: !dry,
            moves_calculated: Some(moved),
            moves_executed: Some(moved),
        })
    }

    /// `balancerSwitch`: answers the state before.
    pub fn set_balancer_running(
        &self,
        req: &pb::SetBalancerRunningRequest,
    ) -> Outcome<pb::SetBalancerRunningResponse> {
        self.require_global("balanceSwitch", ADMIN)?;
        let prev = self
            .master
            .set_switch(Switch::Balancer, req.on)
            .map_err(exception)?;
        Ok(pb::SetBalancerRunningResponse {
            prev_balance_value: Some(prev),
        })
    }

    /// `catalogJanitorSwitch`: answers the state before.
    pub fn enable_catalog_janitor(
        &self,
        req: &pb::EnableCatalogJanitorRequest,
    ) -> Outcome<pb::EnableCatalogJanitorResponse> {
        self.require_global("enableCatalogJanitor", ADMIN)?;
        let prev = self
            .master
            .set_switch(Switch::CatalogJanitor, req.enable)
            .map_err(exception)?;
        Ok(pb::EnableCatalogJanitorResponse {
            prev_value: Some(prev),
        })
    }

    /// `runCatalogJanitor`: one janitor pass now; answers what it removed.
    pub fn run_catalog_scan(
        &self,
        _req: &pb::RunCatalogScanRequest,
    ) -> Outcome<pb::RunCatalogScanResponse> {
        self.require_global("runCatalogScan", ADMIN)?;
        let n = self.master.run_janitor().map_err(exception)?;
        Ok(pb::RunCatalogScanResponse {
            scan_result: Some(i32::try_from(n).unwrap_or(i32::MAX)),
        })
    }
}
