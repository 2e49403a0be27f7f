//! The bulk path's sink: good lines buffered in memory, then sorted and
//! written as store files, one per region and family, into the staging
//! directory (what HBase's ImportTsv with `importtsv.bulk.output` and its
//! sorting reducer do).
//!
//! The buffer holds each line as read (a copy) with its region and row;
//! when it reaches its share of `--bulk-buffer` it is sorted by region,
//! row and input order, and each region's lines become one file per
//! family (cells in store file order, sequence id 0: the region gives the
//! load its own when it adopts the files). A sink that spills several
//! times leaves several files per store; a region takes them all at once,
//! and compaction merges them later. Within one buffer, a line repeating
//! an earlier line's row, column and timestamp replaces its cell.
//!
//! This module writes staged files only; loading them is `crate::complete`.

use crate::ImportError;
use crate::columns::ColumnSpec;
use crate::line::Parsed;
use crate::sink::{Sink, SinkOutcome};
use ferrobase_client::RegionLocation;
use ferrobase_storage::fs::Storage;
use ferrobase_storage::storefile::StoreFileWriter;
use ferrobase_types::{CellType, FamilyDescriptor};
use std::path::PathBuf;
use std::sync::Arc;

/// A store file written for one region and family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagedFile {
    /// Index into the region list the import started with.
    pub region: usize,
    pub family: String,
    /// Its path on the storage root.
    pub path: PathBuf,
    pub entries: u64,
}

/// A family's cell columns: `(field index, qualifier)`, by qualifier.
type FamilyCells = Vec<(usize, Vec<u8>)>;

/// One buffered line.
struct Record {
    region: u32,
    /// The line in `arena`.
    start: usize,
    end: usize,
    row_start: usize,
    row_end: usize,
    timestamp: u64,
}

/// See the module docs.
pub struct BulkSink {
    fs: Arc<dyn Storage>,
    staging: PathBuf,
    regions: Arc<Vec<RegionLocation>>,
    /// Per family of the spec: its descriptor and its cells sorted by
    /// qualifier (`ColumnSpec::cells_of`).
    families: Vec<(FamilyDescriptor, FamilyCells)>,
    separator: u8,
    skip_empty: bool,
    limit: usize,
    worker: usize,
    spills: usize,
    arena: Vec<u8>,
    records: Vec<Record>,
    fields: Vec<(usize, usize)>,
    out: SinkOutcome,
}

impl BulkSink {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        fs: Arc<dyn Storage>,
        staging: PathBuf,
        regions: Arc<Vec<RegionLocation>>,
        spec: Arc<ColumnSpec>,
        families: Vec<FamilyDescriptor>,
        separator: u8,
        skip_empty: bool,
        buffer_bytes: usize,
        worker: usize,
    ) -> BulkSink {
        let families = families
            .into_iter()
            .enumerate()
            .map(|(f, d)| (d, spec.cells_of(f)))
            .collect();
        BulkSink {
            fs,
            staging,
            regions,
            families,
            separator,
            skip_empty,
            limit: buffer_bytes.max(1 << 16),
            worker,
            spills: 0,
            arena: Vec::new(),
            records: Vec::new(),
            fields: Vec::new(),
            out: SinkOutcome::default(),
        }
    }

    fn region_of(&self, row: &[u8]) -> usize {
        self.regions
            .partition_point(|r| &r.start_key[..] <= row)
            .saturating_sub(1)
    }

    /// Sorts the buffer and writes its store files.
    fn spill(&mut self) -> Result<(), ImportError> {
        if self.records.is_empty() {
            return Ok(());
        }
        let arena = &self.arena;
        let row = |r: &Record| &arena[r.row_start..r.row_end];
        // Stable: lines of one row stay in input order.
        self.records
            .sort_by(|a, b| a.region.cmp(&b.region).then_with(|| row(a).cmp(row(b))));
        let mut at = 0;
        while at < self.records.len() {
            let region = self.records[at].region;
            let end = at
                + self.records[at..]
                    .iter()
                    .position(|r| r.region != region)
                    .unwrap_or(self.records.len() - at);
            for f in 0..self.families.len() {
                self.write_file(region as usize, f, at..end)?;
            }
            at = end;
        }
        self.spills += 1;
        self.arena.clear();
        self.records.clear();
        Ok(())
    }

    /// Writes family `f`'s cells of records `range` (one region, sorted).
    fn write_file(
        &mut self,
        region: usize,
        f: usize,
        range: std::ops::Range<usize>,
    ) -> Result<(), ImportError> {
        let Some(loc) = self.regions.get(region) else {
            return Ok(());
        };
        let (family, cells) = match self.families.get(f) {
            Some(x) => x,
            None => return Ok(()),
        };
        let dir = self
            .staging
            .join(format!("{:016x}", loc.region_id))
            .join(&family.name);
        let path = dir.join(format!("w{}-{}.sf", self.worker, self.spills));
        let mut writer: Option<StoreFileWriter> = None;
        let mut entries = 0u64;
        let records = &self.records[range];
        let mut i = 0;
        // (qualifier index, timestamp, record) of a run of equal rows.
        let mut run: Vec<(usize, u64, usize)> = Vec::new();
        while i < records.len() {
            let row = &self.arena[records[i].row_start..records[i].row_end];
            let mut j = i + 1;
            while j < records.len() && self.arena[records[j].row_start..records[j].row_end] == *row
            {
                j += 1;
            }
            run.clear();
            for (k, rec) in records[i..j].iter().enumerate() {
                for q in 0..cells.len() {
                    run.push((q, rec.timestamp, i + k));
                }
            }
            // Qualifier order, newest timestamp first, the latest line
            // first among equal keys (which alone is kept).
            run.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
            run.dedup_by(|later, kept| later.0 == kept.0 && later.1 == kept.1);
            let mut row_open = false;
            for &(q, ts, r) in &run {
                let rec = &records[r];
                let line = &self.arena[rec.start..rec.end];
                split_fields(line, self.separator, &mut self.fields);
                let Some((field, qualifier)) = cells.get(q) else {
                    continue;
                };
                let value = self
                    .fields
                    .get(*field)
                    .and_then(|&(s, e)| line.get(s..e))
                    .unwrap_or_default();
                if self.skip_empty && value.is_empty() {
                    continue;
                }
                let w = match &mut writer {
                    Some(w) => w,
                    None => {
                        self.fs.create_dir_all(&dir)?;
                        let expected = (records.len() * cells.len()) as u64;
                        writer.insert(StoreFileWriter::create_on(
                            &*self.fs, &path, family, expected,
                        )?)
                    }
                };
                if !row_open {
                    w.begin_row(row)?;
                    row_open = true;
                }
                w.append_cell(qualifier, ts, CellType::Put as u8, 0, value)?;
                entries += 1;
            }
            i = j;
        }
        if let Some(w) = writer {
            w.finish()?;
            self.out.cells += entries;
            self.out.staged.push(StagedFile {
                region,
                family: family.name.clone(),
                path,
                entries,
            });
        }
        Ok(())
    }
}

/// Splits `line` on `separator` into `out` (ranges).
fn split_fields(line: &[u8], separator: u8, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let mut start = 0;
    for (i, &b) in line.iter().enumerate() {
        if b == separator {
            out.push((start, i));
            start = i + 1;
        }
    }
    out.push((start, line.len()));
}

impl Sink for BulkSink {
    fn add(&mut self, line: &Parsed<'_>) -> Result<(), ImportError> {
        let region = self.region_of(line.row) as u32;
        let start = self.arena.len();
        let whole = line.whole();
        self.arena.extend_from_slice(whole);
        let row_start = start + line.row_offset();
        self.records.push(Record {
            region,
            start,
            end: self.arena.len(),
            row_start,
            row_end: row_start + line.row.len(),
            timestamp: line.timestamp,
        });
        self.out.rows += 1;
        if self.arena.len() + self.records.len() * std::mem::size_of::<Record>() >= self.limit {
            self.spill()?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<SinkOutcome, ImportError> {
        self.spill()?;
        Ok(std::mem::take(&mut self.out))
    }
}
