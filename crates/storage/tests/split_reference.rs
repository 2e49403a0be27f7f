//! Splits by reference against models (seeded, reproducible):
//!
//! - a half reader over a store file of random cells (versions, every
//!   delete type, many small blocks, each encoding and Bloom type) serves
//!   exactly the file's entries whose row is in its range: full scans,
//!   random seeks, rows visited last to first, first/last keys and the
//!   Bloom filter;
//! - daughters made of references to a parent region's files (several
//!   flushes of random puts and deletes) read, row by row and by scans
//!   with every version, what the parent reads in their ranges, before
//!   and after writes of their own, a compaction that rewrites the
//!   references into files of their own (which leaves the parent's files
//!   alone) and a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::iter::CellIterator;
use ferrobase_storage::region::manifest::Manifest;
use ferrobase_storage::region::reference;
use ferrobase_storage::storefile::{RowBounds, StoreFileWriter, open_reference};
use ferrobase_storage::{Engine, Get, Region, RegionInfo, Scan};
use ferrobase_types::key;
use ferrobase_types::{
    BloomType, Cell, CellType, DataBlockEncoding, FamilyDescriptor, RowMutation, Settings,
    TableDescriptor,
};
use std::path::Path;
use std::sync::Arc;

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn row_name(rng: &mut Rng) -> Vec<u8> {
    // Rows of different lengths share prefixes ("r1", "r10", "r100").
    format!("r{}", rng.below(400)).into_bytes()
}

type Entry = (Vec<u8>, u64, Vec<u8>);

/// Random entries in internal order: several versions per column and
/// every delete type.
fn random_entries(rng: &mut Rng, n: usize) -> Vec<Entry> {
    let types = [
        CellType::Put,
        CellType::Put,
        CellType::Put,
        CellType::Delete,
        CellType::DeleteColumn,
        CellType::DeleteFamily,
        CellType::DeleteFamilyVersion,
    ];
    let mut keys: Vec<Vec<u8>> = (0..n)
        .map(|_| {
            let row = row_name(rng);
            let t = types[rng.below(types.len() as u64) as usize];
            let q = match t {
                CellType::DeleteFamily | CellType::DeleteFamilyVersion => Vec::new(),
                _ => format!("q{}", rng.below(5)).into_bytes(),
            };
            key::encode(&row, b"f", &q, 1 + rng.below(6), t)
        })
        .collect();
    keys.sort_by(|a, b| key::compare(a, b));
    keys.dedup();
    keys.into_iter()
        .enumerate()
        .map(|(i, k)| (k, i as u64 + 1, format!("v{i}").into_bytes()))
        .collect()
}

fn write_file(path: &Path, family: &FamilyDescriptor, entries: &[Entry]) {
    let mut w = StoreFileWriter::create(path, family, entries.len() as u64).unwrap();
    for (k, seq, v) in entries {
        w.append(k, *seq, v).unwrap();
    }
    w.finish().unwrap();
}

fn drain(it: &mut dyn CellIterator) -> Vec<Entry> {
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.seq(), it.value().to_vec()));
        it.next().unwrap();
    }
    out
}

fn in_bounds(b: &RowBounds, k: &[u8]) -> bool {
    b.contains(key::row_of(k).unwrap())
}

fn check_half(path: &Path, entries: &[Entry], bounds: RowBounds, rng: &mut Rng) {
    let want: Vec<Entry> = entries
        .iter()
        .filter(|e| in_bounds(&bounds, &e.0))
        .cloned()
        .collect();
    let fs = ferrobase_storage::fs::LocalFs::as_given();
    let half = open_reference(&fs, path, "x.ref", bounds.clone(), None).unwrap();
    let ctx = format!("bounds {bounds:?}");
    // File info: the half's own first and last keys.
    match (want.first(), want.last()) {
        (Some(f), Some(l)) => {
            assert_eq!(half.info().first_key, f.0, "{ctx}");
            assert_eq!(half.info().last_key, l.0, "{ctx}");
            assert!(half.info().entries > 0, "{ctx}");
        }
        _ => assert_eq!(half.info().entries, 0, "{ctx}"),
    }
    // Forward, whole.
    let mut s = half.scanner(false);
    s.seek_to_first().unwrap();
    assert_eq!(drain(&mut s), want, "{ctx}");
    // Random seeks (keys in and out of the range, present or not).
    for _ in 0..60 {
        let target = match rng.below(3) {
            0 => key::first_on_row(&row_name(rng)),
            1 if !entries.is_empty() => entries[rng.below(entries.len() as u64) as usize].0.clone(),
            _ => key::encode(&row_name(rng), b"f", b"q2", 3, CellType::Put),
        };
        let mut s = half.scanner(rng.below(2) == 0);
        s.seek(&target).unwrap();
        let expect: Vec<Entry> = want
            .iter()
            .filter(|e| key::compare(&e.0, &target) != std::cmp::Ordering::Less)
            .take(5)
            .cloned()
            .collect();
        let got: Vec<Entry> = drain(&mut s).into_iter().take(5).collect();
        assert_eq!(got, expect, "{ctx}, seek {:?}", key::row_of(&target));
    }
    // Rows last to first, each by a seek (a reversed scan's access).
    let mut rows: Vec<Vec<u8>> = want
        .iter()
        .map(|e| key::row_of(&e.0).unwrap().to_vec())
        .collect();
    rows.dedup();
    let mut s = half.scanner(true);
    for row in rows.iter().rev() {
        s.seek(&key::first_on_row(row)).unwrap();
        let mut got = Vec::new();
        while s.valid() && key::row_of(s.key()) == Some(row.as_slice()) {
            got.push(s.key().to_vec());
            s.next().unwrap();
        }
        let expect: Vec<Vec<u8>> = want
            .iter()
            .filter(|e| key::row_of(&e.0) == Some(row.as_slice()))
            .map(|e| e.0.clone())
            .collect();
        assert_eq!(got, expect, "{ctx}, row {row:?}");
    }
    // Bloom: never a false negative inside, always "absent" outside.
    for e in entries {
        let row = key::row_of(&e.0).unwrap();
        if bounds.contains(row) {
            assert!(half.might_contain_row(row), "{ctx}");
        } else {
            assert!(!half.might_contain_row(row), "{ctx}");
        }
    }
}

#[test]
fn half_reader_serves_exactly_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let combos = [
        (DataBlockEncoding::None, BloomType::Row),
        (DataBlockEncoding::FastDiff, BloomType::RowCol),
        (DataBlockEncoding::Prefix, BloomType::None),
        (DataBlockEncoding::Diff, BloomType::Row),
    ];
    for (round, (enc, bloom)) in combos.into_iter().enumerate() {
        let mut rng = Rng(0x5eed_0000 + round as u64 * 7919);
        let mut family = FamilyDescriptor::new("f").unwrap();
        family.blocksize = 256;
        family.data_block_encoding = enc;
        family.bloomfilter = bloom;
        let entries = random_entries(&mut rng, 1500);
        let path = dir.path().join(format!("{round}.sf"));
        write_file(&path, &family, &entries);
        for _ in 0..6 {
            let split = row_name(&mut rng);
            check_half(
                &path,
                &entries,
                RowBounds {
                    start: Vec::new(),
                    end: split.clone(),
                },
                &mut rng,
            );
            check_half(
                &path,
                &entries,
                RowBounds {
                    start: split,
                    end: Vec::new(),
                },
                &mut rng,
            );
        }
        // Both bounds; before every row; after every row.
        let (a, b) = (row_name(&mut rng), row_name(&mut rng));
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        check_half(&path, &entries, RowBounds { start: a, end: b }, &mut rng);
        for (start, end) in [(b"".to_vec(), b"a".to_vec()), (b"s".to_vec(), Vec::new())] {
            check_half(&path, &entries, RowBounds { start, end }, &mut rng);
        }
    }
}

fn settings() -> Settings {
    Settings {
        memory_size: 256 << 20,
        compaction_min: 100,
        ..Settings::default()
    }
}

fn table() -> TableDescriptor {
    let mut f = FamilyDescriptor::new("f").unwrap();
    f.set("VERSIONS", "3").unwrap();
    f.blocksize = 512;
    let mut g = FamilyDescriptor::new("g").unwrap();
    g.blocksize = 512;
    TableDescriptor::new("t", vec![f, g]).unwrap()
}

fn random_mutation(rng: &mut Rng, ts: &mut u64) -> RowMutation {
    let row = row_name(rng);
    *ts += 1;
    let fam = if rng.below(4) == 0 { "g" } else { "f" };
    let q = format!("q{}", rng.below(4));
    let m = RowMutation::new(row);
    match rng.below(12) {
        0 => m.delete_column(fam, q, *ts),
        1 => m.delete_version(fam, q, *ts - rng.below(5)),
        2 => m.delete_family(fam, *ts),
        _ => m.put_at(fam, q, *ts, format!("v{ts}")),
    }
}

fn all_versions(region: &Region) -> Vec<Vec<Cell>> {
    region
        .scan(&Scan {
            max_versions: u32::MAX,
            ..Scan::default()
        })
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

fn rows_in(rows: &[Vec<Cell>], info: &RegionInfo) -> Vec<Vec<Cell>> {
    rows.iter()
        .filter(|r| info.contains_row(&r[0].row))
        .cloned()
        .collect()
}

fn check_daughter(d: &Region, parent_rows: &[Vec<Cell>], ctx: &str) {
    let want = rows_in(parent_rows, d.info());
    assert_eq!(all_versions(d), want, "{ctx}: scan of {}", d.info().name());
    for r in &want {
        let mut g = Get::new(r[0].row.clone());
        g.max_versions = u32::MAX;
        assert_eq!(&d.get(&g).unwrap(), r, "{ctx}: get");
    }
}

fn dir_bytes(fs: &Path) -> u64 {
    walk(fs).iter().map(|p| p.metadata().unwrap().len()).sum()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn daughters_read_what_the_parent_read_before_and_after_their_compaction() {
    for seed in 1..=3u64 {
        let mut rng = Rng(0xd00d_0000 ^ (seed * 104_729));
        let dir = tempfile::tempdir().unwrap();
        let table = table();
        let engine = Engine::open(dir.path(), settings()).unwrap();
        let parent_info = RegionInfo::whole_table(1, "t");
        let parent = engine.open_region(&table, parent_info.clone()).unwrap();
        let mut ts = 1000;
        for _ in 0..4 {
            for _ in 0..600 {
                parent.mutate(random_mutation(&mut rng, &mut ts)).unwrap();
            }
            parent.flush(true).unwrap();
        }
        let parent_rows = all_versions(&parent);
        let point = parent.midkey().expect("several blocks: a midkey");
        parent.close().unwrap();
        let fs = engine.fs().clone();
        let pdir = engine.data_dir().join("t").join(parent_info.dir_name());
        let pm = Manifest::load(&*fs, &pdir).unwrap().unwrap();
        let daughters = [
            RegionInfo {
                id: 2,
                table: "t".into(),
                start_key: Vec::new(),
                end_key: point.clone(),
            },
            RegionInfo {
                id: 3,
                table: "t".into(),
                start_key: point.clone(),
                end_key: Vec::new(),
            },
        ];
        let parent_bytes = dir_bytes(&pdir);
        for d in &daughters {
            reference::write_child(
                &*fs,
                engine.data_dir(),
                &[(parent_info.clone(), pm.clone())],
                d,
            )
            .unwrap();
            let ddir = engine.data_dir().join("t").join(d.dir_name());
            // No cell was copied: a daughter is one small manifest.
            assert!(
                dir_bytes(&ddir) < 4096,
                "daughter holds {} bytes",
                dir_bytes(&ddir)
            );
        }
        assert!(parent_bytes > 40_000, "parent holds {parent_bytes} bytes");
        engine.set_compactions_enabled(false);
        let opened: Vec<Arc<Region>> = daughters
            .iter()
            .map(|d| engine.open_region(&table, d.clone()).unwrap())
            .collect();
        let ctx = format!(
            "seed {seed}, split at {:?}",
            String::from_utf8_lossy(&point)
        );
        for d in &opened {
            assert!(d.has_references());
            check_daughter(d, &parent_rows, &ctx);
        }
        // Writes of their own, above every parent sequence id; the model
        // is the parent reopened with the same writes applied.
        let parent = engine.open_region(&table, parent_info.clone()).unwrap();
        for d in &opened {
            for _ in 0..200 {
                let m = random_mutation(&mut rng, &mut ts);
                if d.info().contains_row(&m.row) {
                    d.mutate(m.clone()).unwrap();
                    parent.mutate(m).unwrap();
                }
            }
        }
        let parent_rows = all_versions(&parent);
        parent.close().unwrap();
        for d in &opened {
            check_daughter(d, &parent_rows, &format!("{ctx}, own writes"));
        }
        let before: Vec<Vec<Vec<Cell>>> = opened.iter().map(|d| all_versions(d)).collect();
        let referenced: Vec<std::path::PathBuf> = pm
            .stores
            .iter()
            .flat_map(|(f, names)| {
                let fdir = pdir.join(f);
                names.iter().map(move |n| fdir.join(n))
            })
            .collect();
        engine.set_compactions_enabled(true);
        for (d, want) in opened.iter().zip(&before) {
            d.flush(true).unwrap();
            d.compact(false).unwrap();
            assert!(
                !d.has_references(),
                "{ctx}: the compaction rewrote the references"
            );
            let m = Manifest::load(&*fs, d.dir()).unwrap().unwrap();
            assert!(m.references.is_empty());
            assert_eq!(&all_versions(d), want, "{ctx}: after compaction");
        }
        // The parent's files are untouched (the janitor's to remove).
        for p in &referenced {
            assert!(p.exists(), "{ctx}: {p:?} kept");
        }
        engine.close().unwrap();
        let engine = Engine::open(dir.path(), settings()).unwrap();
        for (d, want) in daughters.iter().zip(&before) {
            let r = engine.open_region(&table, d.clone()).unwrap();
            assert_eq!(&all_versions(&r), want, "{ctx}: after reopen");
        }
        engine.close().unwrap();
    }
}
