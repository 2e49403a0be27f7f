//! The read path: [`Get`] and [`Scan`] over a consistent view.
//!
//! A read takes the MVCC read point, then clones (under the state read
//! lock, briefly) the memstores and file lists it needs. It never sees a
//! write newer than the read point nor half a row mutation, and keeps the
//! files it reads alive by holding their `Arc`s even if a compaction
//! replaces them meanwhile.

use super::Region;
use crate::error::Result;
use crate::iter::CellIterator;
use crate::row_cache::Lookup;
use crate::scanner::{FamilyQuery, MergingIterator, StoreScanner};
use crate::storefile::StoreFileReader;
use bytes::Bytes;
use ferrobase_types::{Cell, key};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Which families and qualifiers a read wants: family → `None` for the
/// whole family or the set of qualifiers. Empty map: every family.
pub type Columns = BTreeMap<Bytes, Option<BTreeSet<Bytes>>>;

/// A read of one row (HBase's `Get`).
#[derive(Clone, Debug)]
pub struct Get {
    pub row: Bytes,
    pub columns: Columns,
    /// Versions per column (default 1; capped at the family's VERSIONS).
    pub max_versions: u32,
    /// `[min, max)` timestamps.
    pub time_range: (u64, u64),
    /// Whether blocks read go into the block cache.
    pub cache_blocks: bool,
}

impl Get {
    /// The newest version of every column of `row`.
    pub fn new(row: impl Into<Bytes>) -> Get {
        Get {
            row: row.into(),
            columns: Columns::new(),
            max_versions: 1,
            time_range: (0, u64::MAX),
            cache_blocks: true,
        }
    }

    /// Restricts the read to a whole family (adds to earlier restrictions).
    pub fn add_family(&mut self, family: impl Into<Bytes>) -> &mut Get {
        self.columns.insert(family.into(), None);
        self
    }

    /// Restricts the read to one column (adds to earlier restrictions).
    pub fn add_column(
        &mut self,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
    ) -> &mut Get {
        let entry = self
            .columns
            .entry(family.into())
            .or_insert_with(|| Some(BTreeSet::new()));
        if let Some(set) = entry {
            set.insert(qualifier.into());
        }
        self
    }
}

/// A read of a row range (HBase's `Scan`).
#[derive(Clone, Debug)]
pub struct Scan {
    /// Inclusive; empty: from the first row.
    pub start_row: Bytes,
    /// Exclusive; empty: to the last row.
    pub stop_row: Bytes,
    pub columns: Columns,
    pub max_versions: u32,
    pub time_range: (u64, u64),
    /// Stop after this many rows.
    pub limit: Option<u64>,
    pub cache_blocks: bool,
}

impl Default for Scan {
    fn default() -> Scan {
        Scan {
            start_row: Bytes::new(),
            stop_row: Bytes::new(),
            columns: Columns::new(),
            max_versions: 1,
            time_range: (0, u64::MAX),
            limit: None,
            cache_blocks: true,
        }
    }
}

/// Rows of a scan, one at a time; see [`Region::scan`].
pub struct RegionScanner {
    stores: Vec<StoreScanner>,
    stop_row: Bytes,
    remaining: Option<u64>,
    /// Cells of the last row returned, to size the next row's vector.
    last_row_cells: usize,
}

impl RegionScanner {
    /// The next row's visible cells (in family, qualifier, newest-first
    /// timestamp order), or `None` at the end.
    pub fn next_row(&mut self) -> Result<Option<Vec<Cell>>> {
        loop {
            if self.remaining == Some(0) {
                return Ok(None);
            }
            let Some(row) = self
                .stores
                .iter()
                .filter_map(|s| s.peek_row())
                .min()
                .map(Bytes::copy_from_slice)
            else {
                return Ok(None);
            };
            if !self.stop_row.is_empty() && row >= self.stop_row {
                return Ok(None);
            }
            let mut out = Vec::with_capacity(self.last_row_cells + 2);
            for s in &mut self.stores {
                if s.peek_row() == Some(&row[..]) {
                    s.read_row(&row, &mut out)?;
                }
            }
            if !out.is_empty() {
                self.last_row_cells = out.len();
                if let Some(r) = &mut self.remaining {
                    *r -= 1;
                }
                return Ok(Some(out));
            }
        }
    }
}

impl Iterator for RegionScanner {
    type Item = Result<Vec<Cell>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row().transpose()
    }
}

impl Region {
    /// Reads one row.
    pub fn get(&self, get: &Get) -> Result<Vec<Cell>> {
        self.check_open()?;
        self.read_requests.fetch_add(1, Ordering::Relaxed);
        self.hot_keys.note(&get.row);
        let Some(rc) = &self.row_cache else {
            return self.read_row(get);
        };
        let Some(spec) = rc.spec(&get.columns, get.max_versions, get.time_range) else {
            return self.read_row(get);
        };
        let at = rc.position();
        match rc.cache().lookup(at, &get.row, &spec, super::now_ms()) {
            Lookup::Hit(cells) => Ok(cells),
            Lookup::Bypass => self.read_row(get),
            Lookup::Miss(stamp) => {
                let cells = self.read_row(get)?;
                let deadline = rc.deadline(&cells);
                rc.cache()
                    .fill(at, (&get.row, &spec), stamp, (&cells, deadline));
                Ok(cells)
            }
        }
    }

    /// [`get`](Self::get) from the memstores and store files.
    fn read_row(&self, get: &Get) -> Result<Vec<Cell>> {
        let stop = Bytes::from(super::row_successor(&get.row));
        let mut scanner = self.open_scanner(
            &get.row,
            &stop,
            &get.columns,
            get.max_versions,
            get.time_range,
            Some(&get.row),
            get.cache_blocks,
            None,
        )?;
        Ok(scanner.next_row()?.unwrap_or_default())
    }

    /// Opens a scanner over a row range.
    pub fn scan(&self, scan: &Scan) -> Result<RegionScanner> {
        self.check_open()?;
        self.read_requests.fetch_add(1, Ordering::Relaxed);
        let (start, stop) = self.info.clip(&scan.start_row, &scan.stop_row);
        self.hot_keys.note(&start);
        self.open_scanner(
            &start,
            &stop,
            &scan.columns,
            scan.max_versions,
            scan.time_range,
            None,
            scan.cache_blocks,
            scan.limit,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn open_scanner(
        &self,
        start: &Bytes,
        stop: &Bytes,
        columns: &super::read::Columns,
        max_versions: u32,
        time_range: (u64, u64),
        get_row: Option<&Bytes>,
        cache_blocks: bool,
        limit: Option<u64>,
    ) -> Result<RegionScanner> {
        for family in columns.keys() {
            self.store_index(family)?;
        }
        let read_point = self.mvcc.read_point();
        let (active, snapshot, files) = {
            let st = self.state.read();
            (st.active.clone(), st.snapshot.clone(), st.files.clone())
        };
        let now = super::now_ms();
        let mut order: Vec<usize> = (0..self.stores.len()).collect();
        order.sort_by(|a, b| {
            self.stores[*a]
                .family_bytes
                .cmp(&self.stores[*b].family_bytes)
        });
        let mut stores = Vec::new();
        for i in order {
            let store = &self.stores[i];
            let qualifiers = if columns.is_empty() {
                None
            } else {
                match columns.get(&store.family_bytes) {
                    None => continue,
                    Some(q) => q.clone(),
                }
            };
            let family = &store.family;
            let ttl_cutoff = family
                .ttl_millis()
                .map(|t| now.saturating_sub(t))
                .unwrap_or(0);
            let mut sources: Vec<Box<dyn CellIterator>> = Vec::new();
            let memstores = [
                active.stores.get(i),
                snapshot.as_ref().and_then(|s| s.stores.get(i)),
            ];
            for m in memstores.into_iter().flatten() {
                if !m.is_empty() {
                    sources.push(Box::new(if stop.is_empty() {
                        m.scanner(read_point)
                    } else {
                        m.scanner_until(read_point, stop.clone())
                    }));
                }
            }
            let cache = cache_blocks && family.blockcache;
            for f in files.get(i).map(|v| v.as_slice()).unwrap_or(&[]) {
                // With MIN_VERSIONS, expired cells can still be visible.
                let file_ttl = if family.min_versions == 0 {
                    ttl_cutoff
                } else {
                    0
                };
                if keep_file(
                    f,
                    start,
                    stop,
                    time_range,
                    file_ttl,
                    get_row,
                    qualifiers.as_ref(),
                    &store.family_bytes,
                ) {
                    sources.push(Box::new(f.scanner(cache)));
                }
            }
            let query = FamilyQuery {
                family: store.family_bytes.clone(),
                qualifiers,
                max_versions: max_versions.clamp(1, family.versions),
                min_versions: family.min_versions,
                time_range,
                ttl_cutoff,
            };
            let mut s = StoreScanner::new(MergingIterator::new(sources), query);
            s.seek_row(start)?;
            stores.push(s);
        }
        Ok(RegionScanner {
            stores,
            stop_row: stop.clone(),
            remaining: limit,
            last_row_cells: 0,
        })
    }
}

/// Whether a file can hold anything the read wants: key range, time range,
/// TTL and, for gets, the Bloom filter.
#[allow(clippy::too_many_arguments)]
fn keep_file(
    f: &Arc<StoreFileReader>,
    start: &[u8],
    stop: &[u8],
    time_range: (u64, u64),
    ttl_cutoff: u64,
    get_row: Option<&Bytes>,
    qualifiers: Option<&BTreeSet<Bytes>>,
    family: &[u8],
) -> bool {
    let info = f.info();
    if info.entries == 0 {
        return false;
    }
    if let Some(last) = key::row_of(&info.last_key)
        && last < start
    {
        return false;
    }
    if let Some(first) = key::row_of(&info.first_key)
        && !stop.is_empty()
        && first >= stop
    {
        return false;
    }
    // Files holding only puts can be skipped by time; delete markers must
    // always be seen, so only delete-free files are skipped this way.
    if info.delete_markers == 0 {
        if info.max_timestamp < time_range.0 || info.min_timestamp >= time_range.1 {
            return false;
        }
        if ttl_cutoff > 0 && info.max_timestamp < ttl_cutoff {
            return false;
        }
    }
    if let Some(row) = get_row {
        if !f.might_contain_row(row) {
            return false;
        }
        if let Some(qs) = qualifiers
            && !qs.is_empty()
            && info.delete_markers == 0
            && !qs.iter().any(|q| f.might_contain_column(row, family, q))
        {
            return false;
        }
    }
    true
}
