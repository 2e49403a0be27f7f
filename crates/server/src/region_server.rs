//! The region server: hosts regions on one [`Engine`] (one WAL, one set of
//! flush and compaction pools, one memstore budget for all of them) and
//! answers reads and writes for them.
//!
//! Every method here is synchronous engine work, meant to run on a handler
//! of the [`HandlerPool`]; the gRPC layer (`service::region`) does the
//! admission. This module never changes the meta: the master tells it which
//! regions to open and close.

use crate::error::{Result, ServerError};
use crate::handler_pool::HandlerPool;
use crate::read_path::{Rows, ScanRows};
use crate::row_lock::RowLocks;
use crate::scanner_leases::ScannerLeases;
use bytes::Bytes;
use ferrobase_proto::ErrorCode;
use ferrobase_proto::cellblock;
use ferrobase_proto::pb;
use ferrobase_storage::{Engine, Get, Region, RegionInfo, Scan};
use ferrobase_types::{Cell, CellType, RowMutation, Settings, TableDescriptor};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

mod atomic;

/// One region server.
pub struct RegionServer {
    engine: Arc<Engine>,
    address: parking_lot::RwLock<String>,
    pool: HandlerPool,
    scanners: ScannerLeases,
    locks: RowLocks,
    /// Regions open here but not serving (being split).
    offline: parking_lot::Mutex<std::collections::HashSet<u64>>,
    slow_log: crate::slow_log::SlowLog,
    /// Client operations applied here or replayed from a WAL, by nonce.
    nonces: Arc<crate::nonces::ServerNonces>,
    /// The permissions every call is checked against ([`crate::acl`]).
    access: Arc<crate::acl::AccessChecker>,
}

impl RegionServer {
    /// Opens the engine on `dir`.
    pub fn open(dir: &Path, settings: Settings) -> Result<Arc<RegionServer>> {
        RegionServer::open_dirs(&dir.join("data"), &dir.join("wal"), settings)
    }

    /// Opens the engine with store files under `data_dir` and the WAL in
    /// `wal_dir` (distributed mode: shared data, one WAL per server).
    pub fn open_dirs(
        data_dir: &Path,
        wal_dir: &Path,
        settings: Settings,
    ) -> Result<Arc<RegionServer>> {
        let local = Arc::new(ferrobase_storage::fs::LocalFs::as_given());
        RegionServer::open_on(local, data_dir, wal_dir, settings)
    }

    /// [`open_dirs`](Self::open_dirs) on a storage root (`--root`), the
    /// directories relative to it.
    pub fn open_on(
        fs: Arc<dyn ferrobase_storage::fs::Storage>,
        data_dir: &Path,
        wal_dir: &Path,
        settings: Settings,
    ) -> Result<Arc<RegionServer>> {
        let handlers = settings.handler_count.max(1);
        let queue = match settings.ipc_max_callqueue_length {
            0 => handlers * 10,
            n => n,
        };
        let timeout = Duration::from_millis(settings.scanner_timeout_ms.max(1));
        let slow_log = crate::slow_log::SlowLog::new(
            settings.ipc_warn_response_time_ms,
            settings.ipc_warn_response_size,
        );
        // Before the engine opens: its WAL and flushes record into the
        // process's recorder, which must exist by then.
        crate::rpc_metrics::register();
        let access = crate::acl::AccessChecker::from_settings(&settings)?;
        let engine = Engine::open_on(fs, data_dir, wal_dir, settings)?;
        Ok(Arc::new(RegionServer {
            engine,
            address: parking_lot::RwLock::new(String::new()),
            pool: HandlerPool::new(handlers, queue),
            scanners: ScannerLeases::new(timeout),
            locks: RowLocks::default(),
            offline: parking_lot::Mutex::new(Default::default()),
            slow_log,
            nonces: Arc::default(),
            access,
        }))
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// The nonces of Increments and Appends applied here (HBase RPC and
    /// gRPC `ReadModifyWrite`).
    pub fn nonces(&self) -> &Arc<crate::nonces::ServerNonces> {
        &self.nonces
    }

    /// The handler pool.
    pub fn pool(&self) -> &HandlerPool {
        &self.pool
    }

    /// Calls over `hbase.ipc.warn.response.time` or `.size`.
    pub fn slow_log(&self) -> &crate::slow_log::SlowLog {
        &self.slow_log
    }

    /// The permissions this server checks calls against.
    pub fn access_checker(&self) -> &Arc<crate::acl::AccessChecker> {
        &self.access
    }

    /// The open scanners.
    pub fn scanners(&self) -> &ScannerLeases {
        &self.scanners
    }

    /// The address clients reach this server at.
    pub fn address(&self) -> String {
        self.address.read().clone()
    }

    /// Sets the address once the listener is bound.
    pub fn set_address(&self, address: String) {
        *self.address.write() = address;
    }

    /// Brings a region online, first applying the edits recovered from
    /// the WAL of a server that held it and died.
    pub fn open_region(&self, table: &TableDescriptor, info: RegionInfo) -> Result<()> {
        let id = info.id;
        let already = self.engine.region(id).is_some();
        if !already {
            self.mark_offline(id);
        }
        let region = self.engine.open_region(table, info)?;
        if !already {
            // Operations its WAL replay or recovered edits applied, or a
            // clean close handed over: a retry is answered once.
            match crate::recovered::replay(&region, region.take_replayed_nonces()) {
                Ok(nonces) => self.nonces.applied_from_wal(&table.name, nonces),
                Err(e) => {
                    let _ = region.close();
                    return Err(e);
                }
            }
        }
        self.mark_online(id);
        Ok(())
    }

    /// Takes a region offline (flushing it) and closes its scanners. The
    /// nonces of its recent operations are left in its directory for its
    /// next opener (a move, a disable and enable, a restart), which learns
    /// them before it serves: a retry of an operation applied here is
    /// answered there, not applied again.
    pub fn close_region(&self, id: u64) -> Result<()> {
        self.scanners.close_region(id);
        if let Some(r) = self.engine.region(id) {
            if r.is_closed() {
                return Ok(());
            }
            r.close()?;
            // The region is closed either way: a file that could not be
            // written costs only the hand-over (as before it existed).
            if let Err(e) = self.hand_over_nonces(&r) {
                tracing::warn!(region = %r.info().name(), error = %e, "could not leave the region's nonces for its next opener");
            }
        }
        Ok(())
    }

    /// Writes the nonces of `region`'s rows (closed) beside it.
    fn hand_over_nonces(&self, region: &Region) -> Result<()> {
        self.leave_nonces(region.info(), region.dir())
    }

    /// Writes the nonces of the rows of `info` (a region not serving here:
    /// closed, or a daughter not yet opened) in `dir`, its directory, for
    /// whoever opens it next.
    pub(crate) fn leave_nonces(&self, info: &RegionInfo, dir: &Path) -> Result<()> {
        let nonces = self.nonces.applied_in(info);
        if nonces.is_empty() {
            return Ok(());
        }
        let name = crate::recovered::unique_name();
        ferrobase_storage::wal::split::write_nonces(
            &**self.engine.fs(),
            dir,
            info.id,
            &name,
            &nonces,
        )?;
        tracing::debug!(region = %info.name(), nonces = nonces.len(), "left the region's nonces for its next opener");
        Ok(())
    }

    /// Closes every region as [`close_region`](Self::close_region) does
    /// (their nonces left for their next opener), then the engine.
    pub fn close_all(&self) -> Result<()> {
        let mut first_err = None;
        for r in self.engine.regions() {
            if let Err(e) = self.close_region(r.info().id) {
                first_err.get_or_insert(e);
            }
        }
        self.engine.close()?;
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Flushes a region and waits.
    pub fn flush_region(&self, id: u64) -> Result<()> {
        Ok(self.region(id)?.flush(true)?)
    }

    /// Compacts a region (all its files when `major`) and waits.
    pub fn compact_region(&self, id: u64, major: bool) -> Result<()> {
        Ok(self.region(id)?.compact(major)?)
    }

    /// Load of every online region.
    pub fn load(&self) -> pb::ServerLoad {
        let mut regions: Vec<pb::RegionLoad> = self
            .engine
            .regions()
            .iter()
            .map(|r| {
                let s = r.status();
                pb::RegionLoad {
                    name: s.name,
                    region_id: r.info().id,
                    table: r.info().table.clone(),
                    read_requests: s.read_requests,
                    write_requests: s.write_requests,
                    memstore_bytes: s.memstore_bytes,
                    store_files: s.store_files,
                    store_file_bytes: s.store_file_bytes,
                    load_split_point: match self.engine.settings().load_split_threshold {
                        0 => None,
                        _ => r.load_split_point().map(Into::into),
                    },
                    compacting_minor: r.compacting().0,
                    compacting_major: r.compacting().1,
                }
            })
            .collect();
        regions.sort_by(|a, b| a.name.cmp(&b.name));
        let stats = self.engine.stats();
        let cache = self.engine.cache().stats();
        pb::ServerLoad {
            block_cache: Some(pb::BlockCacheStats {
                hits: cache.hits,
                misses: cache.misses,
                evictions: cache.evictions,
                size_bytes: cache.size_bytes,
                capacity_bytes: cache.capacity_bytes,
                blocks: cache.entries,
            }),
            server: self.address(),
            regions,
            global_memstore_bytes: stats.global_memstore_bytes,
            stalls: Some(pb::StallCounters {
                blocked_writes: stats.stalls.blocked_writes,
                blocked_ms: stats.stalls.blocked_ms,
                too_busy: stats.stalls.too_busy,
                delayed_flushes: stats.stalls.delayed_flushes,
                forced_flushes_global: stats.stalls.forced_flushes_global,
                forced_flushes_wal: stats.stalls.forced_flushes_wal,
                flushes: stats.flushes,
                compactions: stats.compactions,
            }),
            acl_version: self.access.version(),
        }
    }

    /// Takes region `id` out of service (calls get REGION_NOT_SERVING).
    pub fn mark_offline(&self, id: u64) {
        self.offline.lock().insert(id);
    }

    /// Puts region `id` back in service.
    pub fn mark_online(&self, id: u64) {
        self.offline.lock().remove(&id);
    }

    /// True while region `id` is out of service.
    pub fn is_offline(&self, id: u64) -> bool {
        self.offline.lock().contains(&id)
    }

    /// The region, when it is open here and serving.
    pub fn region(&self, id: u64) -> Result<Arc<Region>> {
        // Look the region up first, then check it is in service: a region
        // reopened during a split is always marked before it is reopened.
        match self.engine.region(id) {
            Some(r) if !r.is_closed() && !self.is_offline(id) => Ok(r),
            _ => Err(ServerError::not_serving(id)),
        }
    }

    /// Reads `rows` of a region; one result row per requested row.
    pub fn get(&self, region: u64, rows: &[Bytes], spec: Option<&pb::ReadSpec>) -> Result<Bytes> {
        Ok(crate::read_path::encode_rows(
            &self.get_rows(region, rows, spec)?,
        ))
    }

    /// [`get`](Self::get) with the rows' cells as read.
    pub fn get_rows(
        &self,
        region: u64,
        rows: &[Bytes],
        spec: Option<&pb::ReadSpec>,
    ) -> Result<crate::read_path::Rows> {
        let r = self.region(region)?;
        let mut results = Vec::with_capacity(rows.len());
        for row in rows {
            if row.is_empty() {
                return Err(ServerError::new(ErrorCode::EmptyRow, "row key is empty"));
            }
            let mut g = Get::new(row.clone());
            apply_spec(
                &r,
                spec,
                &mut g.columns,
                &mut g.max_versions,
                &mut g.time_range,
            )?;
            results.push((row.clone(), r.get(&g)?));
        }
        Ok(results)
    }

    /// Applies row mutations to one region, atomically as one batch.
    pub fn mutate(&self, region: u64, block: Bytes) -> Result<()> {
        let r = self.region(region)?;
        let mutations = cellblock::decode_mutations(block)?;
        if mutations.is_empty() {
            return Ok(());
        }
        // Owned: values move into the WAL edit instead of being shared.
        r.mutate_owned(mutations)?;
        Ok(())
    }

    /// Opens or continues a scan; returns at most `caching` rows and about
    /// `max_result_size` bytes.
    pub fn scan(&self, req: pb::ScanRequest) -> Result<pb::ScanResponse> {
        let r = self.scan_rows(req)?;
        Ok(pb::ScanResponse {
            scanner_id: r.scanner_id,
            cells: crate::read_path::encode_rows(&r.rows),
            rows: r.rows.len() as u32,
            more: r.more,
        })
    }

    /// [`scan`](Self::scan) with the rows' cells as read.
    pub fn scan_rows(&self, req: pb::ScanRequest) -> Result<ScanRows> {
        if req.scanner_id != 0 && req.close {
            self.scanners.close(req.scanner_id);
            return Ok(ScanRows {
                scanner_id: req.scanner_id,
                ..Default::default()
            });
        }
        let caching = if req.caching == 0 {
            u32::MAX
        } else {
            req.caching
        } as usize;
        let fetch = |scanner: &mut ferrobase_storage::RegionScanner| -> Result<(Rows, bool)> {
            let mut rows: Rows = Vec::new();
            let mut size = 0u64;
            let mut more = true;
            while rows.len() < caching {
                match scanner.next_row()? {
                    None => {
                        more = false;
                        break;
                    }
                    Some(cells) => {
                        let Some(first) = cells.first() else { continue };
                        size += cells
                            .iter()
                            .map(|c| (c.qualifier.len() + c.value.len() + 12) as u64)
                            .sum::<u64>();
                        rows.push((first.row.clone(), cells));
                        if req.max_result_size > 0 && size >= req.max_result_size {
                            break;
                        }
                    }
                }
            }
            Ok((rows, more))
        };
        if req.scanner_id == 0 {
            let r = self.region(req.region_id)?;
            let mut scan = Scan {
                start_row: req.start_row.clone(),
                stop_row: req.stop_row.clone(),
                ..Scan::default()
            };
            apply_spec(
                &r,
                req.spec.as_ref(),
                &mut scan.columns,
                &mut scan.max_versions,
                &mut scan.time_range,
            )?;
            let (start, stop) = r.info().clip(&scan.start_row, &scan.stop_row);
            scan.start_row = start;
            scan.stop_row = stop;
            let mut scanner = r.scan(&scan)?;
            let (rows, more) = fetch(&mut scanner)?;
            let n = rows.len() as u32;
            let scanner_id = if crate::scanner_leases::keeps_lease(&req, more, n) {
                self.scanners.register(scanner, req.region_id)
            } else {
                0
            };
            return Ok(ScanRows {
                scanner_id,
                rows,
                more: more && scanner_id != 0,
                filter_done: false,
            });
        }
        let lease = self.scanners.checkout(req.scanner_id)?;
        let mut l = lease.lock();
        let (rows, more) = fetch(&mut l.scanner)?;
        drop(l);
        if !more {
            self.scanners.close(req.scanner_id);
        }
        Ok(ScanRows {
            scanner_id: req.scanner_id,
            rows,
            more,
            filter_done: false,
        })
    }
}

/// The one check that a request's family exists in the region's table:
/// every client path (gRPC, HBase RPC, Thrift through gRPC) calls it, so
/// they fail alike (`FamilyNotFound`; HBase's `NoSuchColumnFamilyException`).
pub(crate) fn require_family(region: &Region, family: &[u8]) -> Result<()> {
    if region.table().family(family).is_some() {
        return Ok(());
    }
    Err(ServerError::new(
        ErrorCode::FamilyNotFound,
        format!(
            "column family '{}' does not exist in table '{}'",
            String::from_utf8_lossy(family),
            region.table().name
        ),
    ))
}

fn apply_spec(
    region: &Region,
    spec: Option<&pb::ReadSpec>,
    columns: &mut std::collections::BTreeMap<Bytes, Option<BTreeSet<Bytes>>>,
    max_versions: &mut u32,
    time_range: &mut (u64, u64),
) -> Result<()> {
    let Some(spec) = spec else { return Ok(()) };
    for c in &spec.columns {
        require_family(region, &c.family)?;
        if c.qualifiers.is_empty() {
            columns.insert(c.family.clone(), None);
        } else {
            let set: BTreeSet<Bytes> = c.qualifiers.iter().cloned().collect();
            columns.insert(c.family.clone(), Some(set));
        }
    }
    if spec.max_versions > 0 {
        *max_versions = spec.max_versions;
    }
    let max = if spec.max_timestamp == 0 {
        u64::MAX
    } else {
        spec.max_timestamp
    };
    *time_range = (spec.min_timestamp, max);
    Ok(())
}
