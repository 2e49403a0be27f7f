//! Server-side scanners and their leases
//! (`hbase.client.scanner.timeout.period`).
//!
//! A scan that does not finish in one round trip leaves its
//! [`RegionScanner`] here under an id. Each continuation renews the lease;
//! a scanner not continued within the timeout is closed (by the reaper or
//! at its next use) and the client gets [`ErrorCode::UnknownScanner`]. This
//! module never reads rows itself.

use crate::error::{Result, ServerError};
use crate::read_path::ScanState;
use ferrobase_proto::{ErrorCode, pb};
use ferrobase_storage::RegionScanner;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One open scanner.
pub struct Lease {
    pub scanner: RegionScanner,
    pub region: u64,
    /// The scan's filter and reversed rows ([`crate::read_path`]).
    pub state: ScanState,
    /// Rows the scan may still return under its limit (HBase's
    /// `Scan.setLimit`, which the Java client sends only when it opens
    /// the scanner); `None`: no limit.
    pub rows_left: Option<u64>,
    /// Most cells per result (HBase's `Scan.setBatch`); `None`: whole rows.
    pub cells_per_result: Option<u32>,
    /// Results cut at about this many bytes, a row in several parts
    /// (HBase's partial results); `None`: whole rows.
    pub bytes_per_result: Option<u64>,
    /// The user who opened it, when authorization is on: only that user
    /// may continue it (HBase's scanner owner check).
    pub owner: Option<Arc<str>>,
    last_used: Instant,
}

/// Open scanners by id.
pub struct ScannerLeases {
    next_id: AtomicU64,
    timeout: Duration,
    open: Mutex<HashMap<u64, Arc<Mutex<Lease>>>>,
}

impl ScannerLeases {
    /// Leases lasting `timeout`.
    pub fn new(timeout: Duration) -> ScannerLeases {
        ScannerLeases {
            next_id: AtomicU64::new(1),
            timeout,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// The lease timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Keeps `scanner` open; returns its id.
    pub fn register(&self, scanner: RegionScanner, region: u64) -> u64 {
        self.register_with(scanner, region, ScanState::default())
    }

    /// Keeps `scanner` open with its filter / reversed-scan state.
    pub fn register_with(&self, scanner: RegionScanner, region: u64, state: ScanState) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let lease = Lease {
            scanner,
            region,
            state,
            rows_left: None,
            cells_per_result: None,
            bytes_per_result: None,
            owner: None,
            last_used: Instant::now(),
        };
        self.open.lock().insert(id, Arc::new(Mutex::new(lease)));
        id
    }

    /// The scanner `id`, its lease renewed; an error when it expired.
    pub fn checkout(&self, id: u64) -> Result<Arc<Mutex<Lease>>> {
        let lease = self.open.lock().get(&id).cloned();
        let Some(lease) = lease else {
            return Err(unknown(id));
        };
        let mut l = lease.lock();
        if l.last_used.elapsed() > self.timeout {
            drop(l);
            self.open.lock().remove(&id);
            return Err(unknown(id));
        }
        l.last_used = Instant::now();
        drop(l);
        Ok(lease)
    }

    /// Records who opened scanner `id`, when authorization is on.
    pub fn set_owner(&self, id: u64, access: &crate::acl::Access) {
        if !access.checker().enabled() {
            return;
        }
        if let Some(l) = self.open.lock().get(&id) {
            l.lock().owner = Some(Arc::from(access.user()));
        }
    }

    /// With authorization on, scanner `id` may be continued or closed only
    /// by the user who opened it (HBase's `requireScannerOwner`).
    pub fn require_owner(&self, id: u64, access: &crate::acl::Access) -> Result<()> {
        if !access.checker().enabled() {
            return Ok(());
        }
        let lease = self.open.lock().get(&id).cloned();
        let owner = lease.and_then(|l| l.lock().owner.clone());
        match owner {
            Some(o) if *o != *access.user() => Err(ServerError::new(
                ErrorCode::AccessDenied,
                format!(
                    "User '{}' is not the scanner owner! (scanner {id})",
                    access.user()
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Closes scanner `id` (no error if it is gone).
    pub fn close(&self, id: u64) {
        self.open.lock().remove(&id);
    }

    /// Closes every scanner of `region` (when it goes offline).
    pub fn close_region(&self, region: u64) {
        self.open.lock().retain(|_, l| match l.try_lock() {
            Some(l) => l.region != region,
            None => true,
        });
    }

    /// Closes expired scanners that are not in use; returns how many.
    pub fn reap(&self) -> usize {
        let timeout = self.timeout;
        let mut open = self.open.lock();
        let before = open.len();
        open.retain(|_, l| match l.try_lock() {
            Some(l) => l.last_used.elapsed() <= timeout,
            None => true,
        });
        before - open.len()
    }

    /// Scanners open now.
    pub fn len(&self) -> usize {
        self.open.lock().len()
    }

    /// True when no scanner is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn unknown(id: u64) -> ServerError {
    ServerError::new(
        ErrorCode::UnknownScanner,
        format!(
            "scanner {id} is unknown: its lease expired (hbase.client.scanner.timeout.period) or it was closed"
        ),
    )
}

impl ScannerLeases {
    /// Closes every scanner (at shutdown).
    pub fn reap_all(&self) {
        self.open.lock().clear();
    }
}

/// Whether a scan's opening call leaves a scanner lease behind: when the
/// region has more rows, unless the client asked to close (`close` on an
/// open: it wants at most `caching` rows, a limit) and the call returned
/// them all. A call cut short by `max_result_size` or a filter keeps its
/// lease even then, so the client can continue. A short scan (YCSB E, a
/// shell `LIMIT`) thus costs one round trip and no lease.
pub fn keeps_lease(req: &pb::ScanRequest, more: bool, rows: u32) -> bool {
    let limit_reached = req.close && req.caching > 0 && rows >= req.caching;
    more && !limit_reached
}
