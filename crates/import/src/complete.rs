//! Hands the staged store files to their regions (HBase's
//! `LoadIncrementalHFiles`, `completebulkload`): one `BulkLoad` call per
//! region with every file of every family, which the region adopts in one
//! manifest change.
//!
//! When a region refuses because it is no longer where the files were cut
//! for (it split, merged or moved: `WRONG_REGION`, `REGION_NOT_SERVING`),
//! the region list is read again, each of its files is split along the
//! new boundaries (read back and rewritten into the staging directory),
//! and the pieces are loaded into the regions now holding them, for a few
//! rounds. Any other refusal ends the import with the region's message.

use crate::ImportError;
use crate::bulk_sink::StagedFile;
use ferrobase_client::{ErrorCode, RegionLocation, StagingDir, Table};
use ferrobase_storage::fs::Storage;
use ferrobase_storage::iter::CellIterator;
use ferrobase_storage::storefile::{StoreFileReader, StoreFileWriter};
use ferrobase_types::{TableDescriptor, key};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rounds of regrouping before giving up.
const MAX_ROUNDS: usize = 10;

/// What the load did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct LoadOutcome {
    /// Store files the regions adopted.
    pub files: u64,
    /// Regions loaded into.
    pub regions: u64,
    pub entries: u64,
    pub bytes: u64,
    /// Files split because they crossed a region boundary.
    pub split_files: u64,
}

/// A file to load, by the region it is meant for.
struct Pending {
    region: RegionLocation,
    family: String,
    path: PathBuf,
}

/// Loads `files` (cut for `regions`) into `table`. See the module docs.
pub async fn complete(
    table: &Table,
    fs: &Arc<dyn Storage>,
    descriptor: &TableDescriptor,
    regions: &[RegionLocation],
    files: Vec<StagedFile>,
) -> Result<LoadOutcome, ImportError> {
    let mut out = LoadOutcome::default();
    let mut pending: Vec<Pending> = files
        .into_iter()
        .filter_map(|f| {
            regions.get(f.region).map(|r| Pending {
                region: r.clone(),
                family: f.family,
                path: f.path,
            })
        })
        .collect();
    let mut loaded_regions = std::collections::BTreeSet::new();
    for round in 0..=MAX_ROUNDS {
        if pending.is_empty() {
            break;
        }
        let mut by_region: BTreeMap<u64, Vec<Pending>> = BTreeMap::new();
        for p in pending.drain(..) {
            by_region.entry(p.region.region_id).or_default().push(p);
        }
        let mut refused: Vec<Pending> = Vec::new();
        let mut last_refusal = String::new();
        for (_, group) in by_region {
            let Some(region) = group.first().map(|p| p.region.clone()) else {
                continue;
            };
            let list: Vec<(String, String)> = group
                .iter()
                .map(|p| (p.family.clone(), p.path.to_string_lossy().into_owned()))
                .collect();
            match table.bulk_load(&region, &list).await {
                Ok(done) => {
                    out.files += list.len() as u64;
                    out.entries += done.entries;
                    out.bytes += done.bytes;
                    loaded_regions.insert(region.region_id);
                }
                Err(e)
                    if matches!(
                        e.code(),
                        Some(ErrorCode::WrongRegion | ErrorCode::RegionNotServing)
                    ) =>
                {
                    tracing::info!(region = region.region_id, error = %e, "bulk load refused; regrouping its files");
                    last_refusal = e.to_string();
                    refused.extend(group);
                }
                Err(e) => return Err(ImportError::Load(e.to_string())),
            }
        }
        if refused.is_empty() {
            break;
        }
        if round == MAX_ROUNDS {
            return Err(ImportError::Load(format!(
                "the regions kept changing; {} store file(s) not loaded after {MAX_ROUNDS} rounds: {last_refusal}",
                refused.len()
            )));
        }
        let now = table.region_locations(true).await?;
        for p in refused {
            let pieces = split_file(fs, descriptor, &now, &p)?;
            if pieces.len() > 1 {
                out.split_files += 1;
            }
            pending.extend(pieces);
        }
    }
    out.regions = loaded_regions.len() as u64;
    Ok(out)
}

/// Rewrites `p`'s file as one file per region of `regions` it has rows
/// in (the file itself when it lies in one region) and removes it.
fn split_file(
    fs: &Arc<dyn Storage>,
    descriptor: &TableDescriptor,
    regions: &[RegionLocation],
    p: &Pending,
) -> Result<Vec<Pending>, ImportError> {
    let region_of = |row: &[u8]| {
        regions
            .partition_point(|r| &r.start_key[..] <= row)
            .saturating_sub(1)
    };
    let family = descriptor.family(p.family.as_bytes()).ok_or_else(|| {
        ImportError::Load(format!(
            "family '{}' is no longer in table '{}'",
            p.family, descriptor.name
        ))
    })?;
    let reader = StoreFileReader::open_on(&**fs, &p.path, None)?;
    let info = reader.info();
    let (first, last) = (
        key::row_of(&info.first_key).map(region_of),
        key::row_of(&info.last_key).map(region_of),
    );
    if first == last
        && let Some(r) = first.and_then(|i| regions.get(i))
    {
        return Ok(vec![Pending {
            region: r.clone(),
            family: p.family.clone(),
            path: p.path.clone(),
        }]);
    }
    let mut pieces = Vec::new();
    let mut current: Option<(usize, StoreFileWriter, PathBuf)> = None;
    let mut scanner = reader.scanner(false);
    scanner.seek_to_first()?;
    let finish = |cur: Option<(usize, StoreFileWriter, PathBuf)>,
                  pieces: &mut Vec<Pending>|
     -> Result<(), ImportError> {
        if let Some((i, w, path)) = cur {
            w.finish()?;
            if let Some(r) = regions.get(i) {
                pieces.push(Pending {
                    region: r.clone(),
                    family: p.family.clone(),
                    path,
                });
            }
        }
        Ok(())
    };
    while scanner.valid() {
        let row = key::row_of(scanner.key()).unwrap_or_default();
        let i = region_of(row);
        if current.as_ref().map(|c| c.0) != Some(i) {
            finish(current.take(), &mut pieces)?;
            let path = piece_path(&p.path, regions.get(i).map_or(0, |r| r.region_id));
            if let Some(parent) = path.parent() {
                fs.create_dir_all(parent)?;
            }
            let w = StoreFileWriter::create_on(&**fs, &path, family, info.entries)?;
            current = Some((i, w, path));
        }
        if let Some((_, w, _)) = &mut current {
            w.append(scanner.key(), scanner.seq(), scanner.value())?;
        }
        scanner.next()?;
    }
    finish(current.take(), &mut pieces)?;
    fs.delete(&p.path)?;
    Ok(pieces)
}

/// `<dir>/<stem>-r<region hex>.sf` beside `path`.
fn piece_path(path: &Path, region_id: u64) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{stem}-r{region_id:016x}.sf"))
}

/// Removes the staging directory (best effort: an import that failed
/// should still say why it failed, not why cleanup failed).
pub async fn cleanup(table: &Table, staging: &StagingDir) {
    if let Err(e) = table.cleanup_bulk_load(staging).await {
        tracing::warn!(dir = %staging.path, error = %e, "could not remove the staging directory");
    }
}
