//! The calls a region server answers over HBase RPC: `ClientService`
//! (gets, mutations, multis and scans of its regions, and of `hbase:meta`
//! where this server is the master) and `AdminService`. Short local reads
//! run on the connection's task; writes and long scans on the handler pool.
//! What each call does is in `client_service`, `admin_service` and
//! `meta_table`; this file only routes and times.

use super::*;

impl HBaseRpc {
    pub(super) fn renderer(&self) -> Result<Renderer<'_>, HBaseException> {
        Ok(Renderer {
            master: self.master.as_deref().ok_or_else(|| {
                HBaseException::new(
                    ExceptionClass::NotServingRegion,
                    "hbase:meta is served by the master",
                )
            })?,
            local: &self.server,
        })
    }

    /// Runs region work on a handler thread, admitted by the pool.
    pub(super) fn on_handler<M, F>(&self, id: u32, work: F) -> Option<Pending>
    where
        M: Message + Send + 'static,
        F: FnOnce(&RegionServer) -> Result<Answer<M>, HBaseException> + Send + 'static,
    {
        let rs = self.region_server.clone();
        Some(Box::pin(async move {
            let result = match rs {
                Some(rs) => {
                    let handler = rs.clone();
                    rs.pool()
                        .run(move || Ok(work(&handler)))
                        .await
                        .map_err(exception)
                        .and_then(|r| r)
                }
                None => Err(not_region_server()),
            };
            let mut out = BytesMut::new();
            write_answer(&mut out, id, result);
            out
        }))
    }

    /// Runs short local region work here, still admitted by the pool.
    pub(super) fn here<M: Message>(
        &self,
        id: u32,
        out: &mut BytesMut,
        work: impl FnOnce(&RegionServer) -> Result<Answer<M>, HBaseException>,
    ) {
        let result = match &self.region_server {
            Some(rs) => rs
                .pool()
                .run_here(|| Ok(work(rs)))
                .map_err(exception)
                .and_then(|r| r),
            None => Err(not_region_server()),
        };
        write_answer(out, id, result);
    }

    pub(super) fn reads_are_local(&self) -> bool {
        self.region_server
            .as_ref()
            .is_some_and(|rs| rs.engine().reads_are_local())
    }

    /// [`client_call`](Self::client_call), timed and counted
    /// ([`rpc_metrics`](crate::rpc_metrics)); the response size is the
    /// answer frame's.
    pub(super) fn timed_client_call(
        self: &Arc<Self>,
        conn: &Connection,
        id: u32,
        call: RequestFrame,
        out: &mut BytesMut,
    ) -> Option<Pending> {
        let op = match call.method() {
            "Get" => Some(Op::Get),
            "Mutate" => Some(Op::Mutate),
            "Scan" => Some(Op::Scan),
            "Multi" => Some(Op::Multi),
            _ => None,
        };
        let (Some(op), Some(rs)) = (op, self.region_server.clone()) else {
            return self.client_call(conn, id, call, out, &mut None);
        };
        let request_bytes = (call.param.as_ref().map_or(0, |p| p.len())
            + call.cell_block.as_ref().map_or(0, |c| c.len())) as u64;
        let mut timer = Some(CallTimer::start(Protocol::Hbase, op));
        let span = timer
            .as_ref()
            .map(CallTimer::span)
            .unwrap_or_else(tracing::Span::none);
        let before = out.len();
        let pending = span.in_scope(|| self.client_call(conn, id, call, out, &mut timer));
        let timer = timer?;
        let finish = move |timer: CallTimer, response_bytes: usize| {
            timer.finish(
                &CallOutcome {
                    // An exception travels as an answer frame too; errors
                    // are counted by the gRPC service only.
                    ok: true,
                    request_bytes,
                    response_bytes: response_bytes as u64,
                    param: &|| format!("call_id={id}"),
                    client: None,
                },
                rs.slow_log(),
            );
        };
        match pending {
            None => {
                finish(timer, out.len().saturating_sub(before));
                None
            }
            Some(p) => Some(Box::pin(
                async move {
                    let answer = p.await;
                    finish(timer, answer.len());
                    answer
                }
                .instrument(span),
            )),
        }
    }

    pub(super) fn client_call(
        self: &Arc<Self>,
        conn: &Connection,
        id: u32,
        call: RequestFrame,
        out: &mut BytesMut,
        timer: &mut Option<CallTimer>,
    ) -> Option<Pending> {
        let codec = conn.codec;
        let rs = self.region_server.as_deref();
        let access = self.access(conn);
        match call.method() {
            "Get" => {
                let req = decoded::<pb::GetRequest>(&call, id, out)?;
                match target(rs, &req.region) {
                    Ok(Target::Meta) => {
                        let got = self.renderer().and_then(|r| r.get(&req.get));
                        let mut block = BytesMut::new();
                        let answer = got.and_then(|cells| {
                            client_service::encode_result(&cells, codec, &mut block)
                        });
                        write_answer(
                            out,
                            id,
                            answer.map(|result| Answer {
                                message: pb::GetResponse {
                                    result: Some(result),
                                },
                                cells: block,
                            }),
                        );
                        None
                    }
                    Ok(Target::Region(region)) if self.reads_are_local() => {
                        self.here(id, out, |rs| {
                            client_service::get(rs, region, &req.get, codec, &access)
                        });
                        None
                    }
                    Ok(Target::Region(region)) => self.on_handler(id, move |rs| {
                        client_service::get(rs, region, &req.get, codec, &access)
                    }),
                    Err(e) => {
                        fail(out, id, &e);
                        None
                    }
                }
            }
            "Mutate" => {
                let req = decoded::<pb::MutateRequest>(&call, id, out)?;
                if let Some(t) = timer.as_mut() {
                    t.set_op(mutate_op(&req));
                }
                match target(rs, &req.region) {
                    Ok(Target::Meta) => {
                        fail(
                            out,
                            id,
                            &do_not_retry("hbase:meta cannot be written by clients"),
                        );
                        None
                    }
                    Ok(Target::Region(region)) => {
                        let block = call.cell_block.clone();
                        let nonces = self.nonces.clone();
                        self.on_handler(id, move |rs| {
                            let io = client_service::Io {
                                cell_block: block.as_ref(),
                                codec,
                                nonces: &nonces,
                                access: &access,
                            };
                            client_service::mutate(rs, region, &req, &io)
                        })
                    }
                    Err(e) => {
                        fail(out, id, &e);
                        None
                    }
                }
            }
            "Scan" => self.scan_call(codec, access, id, &call, out),
            "Multi" => {
                let req = decoded::<pb::MultiRequest>(&call, id, out)?;
                let regions: Vec<Result<u64, HBaseException>> = req
                    .region_action
                    .iter()
                    .map(|ra| match target(rs, &ra.region) {
                        Ok(Target::Region(r)) => Ok(r),
                        Ok(Target::Meta) => Err(do_not_retry(
                            "hbase:meta cannot be read or written in a Multi",
                        )),
                        Err(e) => Err(e),
                    })
                    .collect();
                let block = call.cell_block.clone();
                let nonces = self.nonces.clone();
                self.on_handler(id, move |rs| {
                    let io = client_service::Io {
                        cell_block: block.as_ref(),
                        codec,
                        nonces: &nonces,
                        access: &access,
                    };
                    client_service::multi(rs, &regions, &req, &io)
                })
            }
            "ExecService" => {
                let req = decoded::<pb::CoprocessorServiceRequest>(&call, id, out)?;
                write_answer(out, id, plain(self.exec_service(conn, req)));
                None
            }
            method => {
                fail(
                    out,
                    id,
                    &HBaseException::unsupported_method("ClientService", method),
                );
                None
            }
        }
    }

    pub(super) fn admin_call(
        self: &Arc<Self>,
        conn: &Connection,
        id: u32,
        call: &RequestFrame,
        out: &mut BytesMut,
    ) -> Option<Pending> {
        let Some(rs) = self.region_server.clone() else {
            fail(out, id, &not_region_server());
            return None;
        };
        let access = self.access(conn);
        // HBase's preFlush/preCompact: ADMIN or CREATE on the region's table.
        let require_table = |t: Target, what: &str, out: &mut BytesMut| -> bool {
            let Target::Region(region) = t else {
                return true;
            };
            let checked = rs.region(region).and_then(|r| {
                access.require_table(what, &r.table().name, &[Action::Admin, Action::Create])
            });
            match checked {
                Ok(()) => true,
                Err(e) => {
                    fail(out, id, &exception(e));
                    false
                }
            }
        };
        // A call naming a region: its parameter, and the region resolved.
        macro_rules! region_call {
            ($req:ty) => {{
                let req = decoded::<$req>(call, id, out)?;
                match target(Some(&rs), &req.region) {
                    Ok(t) => (req, t),
                    Err(e) => {
                        fail(out, id, &e);
                        return None;
                    }
                }
            }};
        }
        match call.method() {
            "GetRegionInfo" => {
                let (req, t) = region_call!(pb::GetRegionInfoRequest);
                let done = admin_service::region_info(&rs, t, &req, &self.compactions);
                write_answer(out, id, plain(done));
                None
            }
            "GetOnlineRegion" => {
                decoded::<pb::GetOnlineRegionRequest>(call, id, out)?;
                write_answer(out, id, plain(admin_service::online_regions(&rs)));
                None
            }
            "GetRegionLoad" => {
                let req = decoded::<pb::GetRegionLoadRequest>(call, id, out)?;
                write_answer(out, id, plain(admin_service::region_load(&rs, &req)));
                None
            }
            "GetStoreFile" => {
                let (req, t) = region_call!(pb::GetStoreFileRequest);
                write_answer(out, id, plain(admin_service::store_files(&rs, t, &req)));
                None
            }
            "GetServerInfo" => {
                decoded::<pb::GetServerInfoRequest>(call, id, out)?;
                let info = pb::GetServerInfoResponse {
                    server_info: pb::ServerInfo {
                        server_name: self.server.to_pb(),
                        webui_port: None,
                    },
                };
                write_answer(out, id, plain(Ok(info)));
                None
            }
            "FlushRegion" => {
                let (req, t) = region_call!(pb::FlushRegionRequest);
                if !require_table(t, "flush", out) {
                    return None;
                }
                self.on_handler(id, move |rs| {
                    plain(admin_service::flush_region(rs, t, &req))
                })
            }
            "CompactRegion" => {
                let (req, t) = region_call!(pb::CompactRegionRequest);
                if !require_table(t, "compact", out) {
                    return None;
                }
                let done = admin_service::compact_region(&rs, t, &req, &self.compactions);
                write_answer(out, id, plain(done));
                None
            }
            "CompactionSwitch" => {
                let req = decoded::<pb::CompactionSwitchRequest>(call, id, out)?;
                if let Err(e) = access.require_global("compactionSwitch", &[Action::Admin]) {
                    fail(out, id, &exception(e));
                    return None;
                }
                write_answer(out, id, plain(admin_service::compaction_switch(&rs, &req)));
                None
            }
            method => {
                fail(
                    out,
                    id,
                    &HBaseException::unsupported_method("AdminService", method),
                );
                None
            }
        }
    }

    pub(super) fn scan_call(
        self: &Arc<Self>,
        codec: Option<CellCodec>,
        access: Access,
        id: u32,
        call: &RequestFrame,
        out: &mut BytesMut,
    ) -> Option<Pending> {
        let req = decoded::<pb::ScanRequest>(call, id, out)?;
        if let Some(sid) = req
            .scanner_id
            .filter(|s| s & META_SCANNER_IDS != 0 && s & (1 << 63) == 0)
        {
            write_answer(out, id, self.meta_scan_next(sid, &req, codec));
            return None;
        }
        let region = match (&req.region, req.scanner_id) {
            (Some(spec), None) => match target(self.region_server.as_deref(), spec) {
                Ok(Target::Meta) => {
                    write_answer(out, id, self.meta_scan_open(&req, codec));
                    return None;
                }
                Ok(Target::Region(r)) => Some(r),
                Err(e) => {
                    fail(out, id, &e);
                    return None;
                }
            },
            _ => None,
        };
        // A plain open of a few rows reads like a get; closing a scanner
        // reads nothing. Both are answered here rather than on a handler.
        let closing = req.scanner_id.is_some() && req.close_scanner == Some(true);
        let short_open = region.is_some()
            && req.number_of_rows.is_some_and(|n| n <= SHORT_SCAN_ROWS)
            && req
                .scan
                .as_ref()
                .is_some_and(|s| s.filter.is_none() && s.reversed != Some(true));
        let short = closing || short_open;
        if short && self.reads_are_local() {
            let closed = &self.closed_scanners;
            self.here(id, out, |rs| {
                client_service::scan(rs, region, &req, codec, closed, &access)
            });
            return None;
        }
        let rpc = self.clone();
        self.on_handler(id, move |rs| {
            client_service::scan(rs, region, &req, codec, &rpc.closed_scanners, &access)
        })
    }

    /// Opens a scan of `hbase:meta`: a reversed one (the client locating a
    /// row's region) answers what fits and keeps nothing, as the client
    /// never closes it; a forward one keeps the rest for its next calls.
    pub(super) fn meta_scan_open(
        &self,
        req: &pb::ScanRequest,
        codec: Option<CellCodec>,
    ) -> Result<Answer<pb::ScanResponse>, HBaseException> {
        let scan = req
            .scan
            .as_ref()
            .ok_or_else(|| do_not_retry("a scan open without a Scan"))?;
        let rows = self.renderer()?.scan(scan)?;
        let want =
            req.number_of_rows
                .or(scan.caching)
                .filter(|&n| n > 0)
                .unwrap_or(u32::MAX)
                .min(req.limit_of_rows.filter(|&l| l > 0).unwrap_or(u32::MAX)) as usize;
        let mut rows: std::collections::VecDeque<MetaRow> = rows.into();
        let batch: Vec<MetaRow> = rows.drain(..want.min(rows.len())).collect();
        let keep = !rows.is_empty()
            && scan.reversed != Some(true)
            && req
                .limit_of_rows
                .is_none_or(|l| l == 0 || batch.len() < l as usize);
        let scanner_id = META_SCANNER_IDS | self.closed_scanners.fetch_add(1, Ordering::Relaxed);
        if keep {
            let mut open = self.meta_scanners.lock();
            open.retain(|_, s| s.opened.elapsed() < META_SCANNER_TTL);
            open.insert(
                scanner_id,
                MetaScanner {
                    rows,
                    opened: Instant::now(),
                },
            );
        }
        meta_answer(scanner_id, &batch, keep, codec)
    }

    pub(super) fn meta_scan_next(
        &self,
        scanner_id: u64,
        req: &pb::ScanRequest,
        codec: Option<CellCodec>,
    ) -> Result<Answer<pb::ScanResponse>, HBaseException> {
        let mut open = self.meta_scanners.lock();
        if req.close_scanner == Some(true) {
            open.remove(&scanner_id);
            return meta_answer(scanner_id, &[], false, codec);
        }
        let Some(s) = open.get_mut(&scanner_id) else {
            return Err(HBaseException::new(
                ExceptionClass::UnknownScanner,
                format!("meta scanner {scanner_id} is unknown: it ended or expired"),
            ));
        };
        let want = req.number_of_rows.filter(|&n| n > 0).unwrap_or(100) as usize;
        let batch: Vec<MetaRow> = s.rows.drain(..want.min(s.rows.len())).collect();
        let more = !s.rows.is_empty();
        if !more {
            open.remove(&scanner_id);
        }
        meta_answer(scanner_id, &batch, more, codec)
    }
}

/// The operation an HBase `Mutate` call is, for its metrics.
pub(super) fn mutate_op(req: &pb::MutateRequest) -> Op {
    if req.condition.is_some() {
        return Op::CheckAndMutate;
    }
    match req.mutation.mutate_type {
        Some(0) => Op::Append,
        Some(1) => Op::Increment,
        Some(2) => Op::Put,
        Some(3) => Op::Delete,
        _ => Op::Mutate,
    }
}

/// A meta scan's answer: every row's cells in the cell block (or inline).
pub(super) fn meta_answer(
    scanner_id: u64,
    rows: &[MetaRow],
    more_in_region: bool,
    codec: Option<CellCodec>,
) -> Result<Answer<pb::ScanResponse>, HBaseException> {
    let mut block = BytesMut::new();
    let mut message = pb::ScanResponse {
        scanner_id: Some(scanner_id),
        more_results: Some(true),
        more_results_in_region: Some(more_in_region),
        ttl: Some(SCANNER_TTL_MS),
        ..Default::default()
    };
    for r in rows {
        let result = client_service::encode_result(&r.cells, codec, &mut block)?;
        match codec {
            Some(_) => message
                .cells_per_result
                .push(u32::try_from(r.cells.len()).unwrap_or(u32::MAX)),
            None => message.results.push(result),
        }
        message.partial_flag_per_result.push(false);
    }
    Ok(Answer {
        message,
        cells: block,
    })
}
