//! Scanners: `scannerOpen*` registers a ferrobase [`ResultScanner`] under
//! an i32 id; `scannerGet`/`scannerGetList` page through it;
//! `scannerClose` or the idle timeout (`hbase.thrift.connection.max-idletime`)
//! frees it.
//!
//! Ids are shared by the whole gateway, as in HBase (a client may open a
//! scanner on one connection and read it on another). This module owns
//! TScan's meaning: `timestamp` keeps cells strictly older than it,
//! `caching` is rows per round trip to the region server, `batchSize`
//! splits wide rows into results of at most that many cells (HBase's
//! `Scan.setBatch`), `sortColumns` answers with `sortedColumns`. It never
//! writes.

use super::reads::{before, row_result};
use super::{Args, Outcome};
use crate::error::ServiceError;
use crate::hbase_types::{ColumnName, TScan};
use crate::protocol::{TType, Value};
use bytes::Bytes;
use ferrobase_client::{Connection, ResultScanner, RowResult, Scan};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One open scanner.
struct Open {
    rows: Option<ResultScanner>,
    table: String,
    sorted: bool,
    /// Cells per result; 0: whole rows.
    batch: usize,
    /// Rows (or row pieces) fetched but not yet returned.
    pending: VecDeque<RowResult>,
}

struct Entry {
    open: Arc<tokio::sync::Mutex<Open>>,
    last_used: Instant,
}

/// The gateway's open scanners.
pub struct Scanners {
    next_id: AtomicI32,
    open: Mutex<HashMap<i32, Entry>>,
    idle: Duration,
}

fn invalid(id: i32) -> ServiceError {
    ServiceError::IllegalArgument(format!(
        "scanner ID {id} is invalid (never opened, closed, or idle longer than \
         hbase.thrift.connection.max-idletime)"
    ))
}

impl Scanners {
    pub fn new(idle: Duration) -> Scanners {
        Scanners {
            next_id: AtomicI32::new(1),
            open: Mutex::new(HashMap::new()),
            idle,
        }
    }

    fn map(&self) -> MutexGuard<'_, HashMap<i32, Entry>> {
        // A panic elsewhere cannot leave the map half-updated (every
        // update is one insert or remove), so a poisoned lock is usable.
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Open scanners.
    pub fn count(&self) -> usize {
        self.map().len()
    }

    /// Drops scanners idle longer than the timeout; returns how many.
    pub fn reap_idle(&self) -> usize {
        let mut map = self.map();
        let before = map.len();
        map.retain(|_, e| e.last_used.elapsed() < self.idle);
        before - map.len()
    }

    fn register(&self, open: Open) -> i32 {
        let mut map = self.map();
        loop {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            // After 2^31 opens the counter wraps: skip ids still in use
            // (and negative ones, which some clients treat as errors).
            if id < 0 {
                self.next_id.store(1, Ordering::Relaxed);
                continue;
            }
            if let std::collections::hash_map::Entry::Vacant(slot) = map.entry(id) {
                slot.insert(Entry {
                    open: Arc::new(tokio::sync::Mutex::new(open)),
                    last_used: Instant::now(),
                });
                return id;
            }
        }
    }

    /// `scannerOpenWithScan` (and the older `scannerOpen*`, turned into a
    /// TScan; `prefix` for `scannerOpenWithPrefix`).
    pub(super) async fn open_with_scan(
        &self,
        c: &Connection,
        table: &str,
        t: &ThriftScan,
    ) -> Outcome {
        let s = &t.scan;
        let mut scan = Scan::new();
        if let Some(p) = &t.prefix {
            scan = scan.row_prefix(p.clone());
        }
        if let Some(r) = s.start_row.as_ref().filter(|r| !r.is_empty()) {
            scan = scan.start_row(r.clone());
        }
        if let Some(r) = s.stop_row.as_ref().filter(|r| !r.is_empty()) {
            scan = scan.stop_row(r.clone());
        }
        let mut nothing = false;
        if let Some(ts) = s.timestamp {
            match before(ts)? {
                Some(t) => scan = scan.time_range(0, t),
                None => nothing = true,
            }
        }
        for col in s.columns.iter().flatten() {
            let col = ColumnName::parse(col);
            scan = match col.column() {
                Some(q) => scan.column(col.family, q),
                None => scan.family(col.family),
            };
        }
        if let Some(n) = s.caching.and_then(|n| u32::try_from(n).ok()) {
            scan = scan.caching(n);
        }
        if let Some(f) = s.filter_string.as_ref().filter(|f| !f.is_empty()) {
            let f = std::str::from_utf8(f)
                .map_err(|_| ServiceError::IllegalArgument("filterString is not UTF-8".into()))?;
            scan = scan.filter(f);
        }
        scan = scan.reversed(s.reversed.unwrap_or(false));
        let mut open = Open {
            rows: None,
            table: table.to_string(),
            sorted: s.sort_columns.unwrap_or(false),
            batch: s
                .batch_size
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(0),
            pending: VecDeque::new(),
        };
        if !nothing {
            let mut rows = c.table(table).scan(scan);
            // Fetching the first row now reports an unknown or disabled
            // table (or a bad filter) at open, as HBase's getScanner does.
            if let Some(first) = rows.next().await.map_err(|e| {
                ServiceError::from_client(&format!("scannerOpen on table '{table}'"), e)
            })? {
                open.pending.push_back(first);
                open.rows = Some(rows);
            }
        }
        Ok(Some(Value::I32(self.register(open))))
    }

    /// `scannerGetList` (and `scannerGet`, one row): up to `n` results.
    pub(super) async fn get_list(&self, id: i32, n: i32) -> Outcome {
        let open = {
            let mut map = self.map();
            let e = map.get_mut(&id).ok_or_else(|| invalid(id))?;
            e.last_used = Instant::now();
            e.open.clone()
        };
        let n = usize::try_from(n).unwrap_or(0);
        let mut open = open.lock().await;
        let mut out = Vec::with_capacity(n.min(1024));
        while out.len() < n {
            let row = match open.pending.pop_front() {
                Some(r) => r,
                None => {
                    let Some(rows) = open.rows.as_mut() else {
                        break;
                    };
                    match rows.next().await {
                        Ok(Some(r)) => r,
                        Ok(None) => {
                            open.rows = None;
                            break;
                        }
                        Err(e) => {
                            let context = format!("scanner {id} on table '{}'", open.table);
                            return Err(ServiceError::from_client(&context, e));
                        }
                    }
                }
            };
            let row = split_batch(row, open.batch, &mut open.pending);
            if let Some(r) = row_result(&row, open.sorted) {
                out.push(r.to_value());
            }
        }
        drop(open);
        if let Some(e) = self.map().get_mut(&id) {
            e.last_used = Instant::now();
        }
        Ok(Some(Value::List(TType::Struct, out)))
    }

    /// `scannerClose`.
    pub(super) fn close(&self, id: i32) -> Outcome {
        self.map().remove(&id).ok_or_else(|| invalid(id))?;
        Ok(None)
    }
}

/// With a batch size, returns the first `batch` cells of `row` and queues
/// the rest as further results of the same row, ahead of later rows.
fn split_batch(mut row: RowResult, batch: usize, pending: &mut VecDeque<RowResult>) -> RowResult {
    if batch == 0 || row.cells.len() <= batch {
        return row;
    }
    let rest = row.cells.split_off(batch);
    let pieces: Vec<RowResult> = rest
        .chunks(batch)
        .map(|c| RowResult {
            row: row.row.clone(),
            cells: c.to_vec(),
        })
        .collect();
    for p in pieces.into_iter().rev() {
        pending.push_front(p);
    }
    row
}

/// What a `scannerOpen*` call asks for.
pub(super) struct ThriftScan {
    pub(super) scan: TScan,
    pub(super) prefix: Option<Bytes>,
}

impl From<TScan> for ThriftScan {
    fn from(scan: TScan) -> ThriftScan {
        ThriftScan { scan, prefix: None }
    }
}

/// The older `scannerOpen*` calls as a TScan (field ids per the IDL).
pub(super) fn thrift_scan_of(method: &str, a: &Args<'_>) -> Result<ThriftScan, ServiceError> {
    let start = a.bytes(2, "startRow")?;
    let mut t = ThriftScan::from(TScan {
        start_row: Some(start.clone()),
        ..TScan::default()
    });
    match method {
        "scannerOpen" => t.scan.columns = a.texts(3),
        "scannerOpenWithStop" => {
            t.scan.stop_row = Some(a.bytes(3, "stopRow")?);
            t.scan.columns = a.texts(4);
        }
        "scannerOpenWithPrefix" => {
            t.scan.start_row = None;
            t.prefix = Some(start);
            t.scan.columns = a.texts(3);
        }
        "scannerOpenTs" => {
            t.scan.columns = a.texts(3);
            t.scan.timestamp = Some(a.i64(4, "timestamp")?);
        }
        "scannerOpenWithStopTs" => {
            t.scan.stop_row = Some(a.bytes(3, "stopRow")?);
            t.scan.columns = a.texts(4);
            t.scan.timestamp = Some(a.i64(5, "timestamp")?);
        }
        other => {
            return Err(ServiceError::Protocol(format!(
                "'{other}' is not a scannerOpen call"
            )));
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::Cell;

    #[test]
    fn batches_split_rows_in_order() {
        let cell = |q: &str| Cell::put("r", "f", q.to_string(), 1, "v");
        let row = RowResult {
            row: Bytes::from_static(b"r"),
            cells: ["a", "b", "c", "d", "e"].iter().map(|q| cell(q)).collect(),
        };
        let mut pending = VecDeque::from([RowResult {
            row: Bytes::from_static(b"s"),
            cells: vec![],
        }]);
        let first = split_batch(row, 2, &mut pending);
        assert_eq!(first.cells.len(), 2);
        let sizes: Vec<_> = pending
            .iter()
            .map(|r| (r.row.clone(), r.cells.len()))
            .collect();
        assert_eq!(
            sizes,
            vec![
                (Bytes::from_static(b"r"), 2),
                (Bytes::from_static(b"r"), 1),
                (Bytes::from_static(b"s"), 0)
            ]
        );
    }
}
