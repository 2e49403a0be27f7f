//! Bulk load: store files written outside the region (by `ferrobase
//! import --bulk`) adopted into its stores in one manifest change
//! (HBase's `HRegion.bulkLoadHFiles`, what `completebulkload` calls).
//!
//! 1. Every file is checked before anything moves: it opens as a store
//!    file, holds cells, belongs to a family of the table, and its first
//!    and last rows lie inside the region (a file crossing a boundary is
//!    refused with [`StorageError::WrongRegion`] naming the first row
//!    outside, so the loader can split it along the new boundaries).
//! 2. The region takes one sequence id `n` from its MVCC and moves each
//!    file into its store as `<id>_SeqId_<n>_.sf`: its cells read with
//!    sequence id `n` (`crate::storefile::bulk_seq_id`), newer than every
//!    write before the load and older than every write after it, which
//!    is the order HBase gives bulk-loaded cells.
//! 3. One manifest replacement publishes every file of every store, then
//!    readers see them all at once.
//!
//! The WAL and the memstores are never touched. A failure before step 3
//! moves the files back where they came from (best effort); a crash
//! between 2 and 3 leaves files the manifest does not list, which the
//! next open of the region retires.

use super::Region;
use crate::error::{Result, StorageError};
use crate::storefile::{StoreFileReader, bulk_file_name};
use ferrobase_types::binary::to_string_binary;
use ferrobase_types::key;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a bulk load did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BulkLoadOutcome {
    /// The sequence id the loaded cells read with.
    pub seq_id: u64,
    /// `(family, file name in the store)` of every loaded file.
    pub files: Vec<(String, String)>,
    /// Cells loaded.
    pub entries: u64,
    /// Bytes of the loaded files.
    pub bytes: u64,
}

/// One file checked and ready to move.
struct Checked {
    store: usize,
    from: PathBuf,
    entries: u64,
    bytes: u64,
}

impl Region {
    /// Adopts the store files `files` (`(family, path on this region's
    /// storage root)`) into the region's stores in one manifest change;
    /// see the module docs. The files must lie outside the data directory
    /// (a staging directory); they are moved, not copied.
    pub fn bulk_load(&self, files: &[(String, PathBuf)]) -> Result<BulkLoadOutcome> {
        self.check_open()?;
        if files.is_empty() {
            return Err(StorageError::InvalidRequest(
                "a bulk load needs at least one store file".into(),
            ));
        }
        let checked = files
            .iter()
            .map(|(family, path)| self.check_bulk_file(family, path))
            .collect::<Result<Vec<_>>>()?;
        // One at a time with flushes: a flush publishes the manifest too,
        // and a close flushes last under this lock.
        let _publishing = self.flush_lock.lock();
        self.check_open()?;
        let seq = self.mvcc.begin();
        // Rows change without a write: cached gets of this region are
        // bypassed while the files go live, and never match again after.
        if let Some(rc) = &self.row_cache {
            rc.begin_reload();
        }
        let result = self.adopt(&checked, seq);
        self.mvcc.complete(seq);
        self.mvcc.wait_visible(seq);
        if let Some(rc) = &self.row_cache {
            rc.end_reload();
        }
        let outcome = result?;
        self.maybe_request_compaction();
        Ok(outcome)
    }

    fn check_bulk_file(&self, family: &str, path: &Path) -> Result<Checked> {
        let store = self.store_index(family.as_bytes())?;
        let shown = self.fs.display(path);
        if path.starts_with(self.shared.data_dir()) {
            return Err(StorageError::InvalidRequest(format!(
                "bulk load of {shown}: the file is inside the data directory; load files from a staging directory"
            )));
        }
        let reader = StoreFileReader::open_on(&*self.fs, path, None)?;
        let info = reader.info();
        if info.family != family {
            return Err(StorageError::InvalidRequest(format!(
                "bulk load of {shown}: the file holds family '{}', not '{family}'",
                info.family
            )));
        }
        if info.entries == 0 {
            return Err(StorageError::InvalidRequest(format!(
                "bulk load of {shown}: the file holds no cells"
            )));
        }
        let (first, last) = match (key::row_of(&info.first_key), key::row_of(&info.last_key)) {
            (Some(f), Some(l)) => (f, l),
            _ => {
                return Err(StorageError::corrupt(
                    shown,
                    0,
                    "file info: first or last key does not parse",
                ));
            }
        };
        for row in [first, last] {
            if !self.info.contains_row(row) {
                return Err(StorageError::WrongRegion {
                    region: format!(
                        "{} (bulk load of {shown}, rows {} to {}, crosses the region's boundary [{}, {}))",
                        self.info.name(),
                        to_string_binary(first),
                        to_string_binary(last),
                        to_string_binary(&self.info.start_key),
                        to_string_binary(&self.info.end_key),
                    ),
                    row: to_string_binary(row),
                });
            }
        }
        Ok(Checked {
            store,
            from: path.to_path_buf(),
            entries: info.entries,
            bytes: reader.size(),
        })
    }

    /// Steps 2 and 3 of the module docs, under the flush lock.
    fn adopt(&self, checked: &[Checked], seq: u64) -> Result<BulkLoadOutcome> {
        let mut moved: Vec<(usize, String, PathBuf, PathBuf)> = Vec::new();
        let undo = |moved: &[(usize, String, PathBuf, PathBuf)]| {
            for (_, _, from, to) in moved {
                if let Err(e) = self.fs.rename(to, from) {
                    tracing::warn!(file = %self.fs.display(to), error = %e, "could not move a bulk-loaded file back");
                }
            }
        };
        let mut readers = Vec::new();
        for c in checked {
            let Some(store) = self.stores.get(c.store) else {
                continue;
            };
            let id = {
                let mut m = self.manifest.lock();
                m.next_file_id += 1;
                m.next_file_id
            };
            let name = bulk_file_name(id, seq);
            let to = store.dir.join(&name);
            if let Err(e) = self.fs.rename(&c.from, &to) {
                undo(&moved);
                return Err(e);
            }
            moved.push((c.store, name, c.from.clone(), to.clone()));
            let cache = Some(self.shared.cache_for(&store.family));
            match StoreFileReader::open_on(&*self.fs, &to, cache) {
                Ok(r) => readers.push((c.store, r)),
                Err(e) => {
                    undo(&moved);
                    return Err(e);
                }
            }
        }
        {
            let mut m = self.manifest.lock();
            let mut next = m.clone();
            for (i, name, _, _) in &moved {
                if let Some(store) = self.stores.get(*i) {
                    next.stores
                        .entry(store.family.name.clone())
                        .or_default()
                        .push(name.clone());
                }
            }
            next.max_seq = next.max_seq.max(seq);
            if let Err(e) = next.store(&*self.fs, &self.dir, self.epoch) {
                drop(m);
                undo(&moved);
                return Err(e);
            }
            *m = next;
        }
        {
            let mut st = self.state.write();
            for (i, reader) in readers {
                if let Some(slot) = st.files.get_mut(i) {
                    let mut list: Vec<Arc<StoreFileReader>> = Vec::with_capacity(slot.len() + 1);
                    list.push(reader);
                    list.extend(slot.iter().cloned());
                    *slot = Arc::new(list);
                }
            }
        }
        Ok(BulkLoadOutcome {
            seq_id: seq,
            files: moved
                .into_iter()
                .filter_map(|(i, name, _, _)| {
                    self.stores.get(i).map(|s| (s.family.name.clone(), name))
                })
                .collect(),
            entries: checked.iter().map(|c| c.entries).sum(),
            bytes: checked.iter().map(|c| c.bytes).sum(),
        })
    }
}
