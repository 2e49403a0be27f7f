//! Measurement, not a check (ignored by default): the time of a split by
//! reference against the time of a copying split (every cell read and
//! written into the daughters, then flushed) of the same region.
//!
//! ```text
//! FERROBASE_SPLIT_MEASURE_MIB=1024 cargo test -p ferrobase-storage --release \
//!     --test split_measure -- --ignored --nocapture
//! ```
//!
//! The parent is built directly as four store files (rows interleaved, as
//! flushes leave them) of 1000-byte values, then opened by the engine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::region::manifest::Manifest;
use ferrobase_storage::region::reference;
use ferrobase_storage::storefile::StoreFileWriter;
use ferrobase_storage::{Engine, RegionInfo, Scan};
use ferrobase_types::{
    CellType, Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor, key,
};
use std::time::Instant;

const VALUE: usize = 1000;
const FILES: u64 = 4;

fn info(id: u64, start: &[u8], end: &[u8]) -> RegionInfo {
    RegionInfo {
        id,
        table: "t".into(),
        start_key: start.to_vec(),
        end_key: end.to_vec(),
    }
}

#[test]
#[ignore]
fn split_time_by_reference_and_by_copy() {
    let mib: u64 = std::env::var("FERROBASE_SPLIT_MEASURE_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let rows = mib * 1024 * 1024 / (VALUE as u64 + 40);
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        memory_size: 1 << 30,
        compaction_min: 1000,
        ..Settings::default()
    };
    let family = FamilyDescriptor::new("f").unwrap();
    let table = TableDescriptor::new("t", vec![family.clone()]).unwrap();
    let engine = Engine::open(dir.path(), settings.clone()).unwrap();
    engine.set_compactions_enabled(false);
    let fs = engine.fs().clone();
    let parent = info(1, b"", b"");
    let pdir = engine.data_dir().join("t").join(parent.dir_name());
    let started = Instant::now();
    let value = vec![b'v'; VALUE];
    let mut m = Manifest::default();
    for f in 0..FILES {
        let name = format!("{:016x}.sf", f + 1);
        let mut w =
            StoreFileWriter::create_on(&*fs, &pdir.join("f").join(&name), &family, rows / FILES)
                .unwrap();
        let mut i = f;
        while i < rows {
            let k = key::encode(
                format!("row{i:010}").as_bytes(),
                b"f",
                b"q",
                1,
                CellType::Put,
            );
            w.append(&k, i + 1, &value).unwrap();
            i += FILES;
        }
        w.finish().unwrap();
        m.stores.entry("f".into()).or_default().push(name);
    }
    m.max_seq = rows + 1;
    m.flushed_seq = rows + 1;
    m.next_file_id = FILES;
    m.store(&*fs, &pdir, 1).unwrap();
    println!(
        "built a {mib} MiB region ({rows} rows, {FILES} files) in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // By reference: close (nothing to flush), midkey, two manifests, open.
    let region = engine.open_region(&table, parent.clone()).unwrap();
    let started = Instant::now();
    let point = region.midkey().unwrap();
    region.close().unwrap();
    let pm = Manifest::load(&*fs, &pdir).unwrap().unwrap();
    let daughters = [info(2, b"", &point), info(3, &point, b"")];
    for d in &daughters {
        reference::write_child(&*fs, engine.data_dir(), &[(parent.clone(), pm.clone())], d)
            .unwrap();
        engine.open_region(&table, d.clone()).unwrap();
    }
    let by_reference = started.elapsed();
    println!(
        "split by reference at {mib} MiB: {:.3} s",
        by_reference.as_secs_f64()
    );

    // By copy (the algorithm splits used before references): read every
    // cell, write it into the daughters, flush them.
    let region = engine.open_region(&table, parent.clone()).unwrap();
    let started = Instant::now();
    let daughters = [info(4, b"", &point), info(5, &point, b"")];
    let lower = engine.open_region(&table, daughters[0].clone()).unwrap();
    let upper = engine.open_region(&table, daughters[1].clone()).unwrap();
    let mut scanner = region
        .scan(&Scan {
            max_versions: u32::MAX,
            cache_blocks: false,
            ..Scan::default()
        })
        .unwrap();
    let (mut lo, mut hi) = (Vec::new(), Vec::new());
    while let Some(cells) = scanner.next_row().unwrap() {
        let mut m = RowMutation::new(cells[0].row.clone()).with_durability(Durability::SkipWal);
        for c in &cells {
            m = m.put_at(
                c.family.clone(),
                c.qualifier.clone(),
                c.timestamp,
                c.value.clone(),
            );
        }
        let (target, buf) = if daughters[1].contains_row(&m.row) {
            (&upper, &mut hi)
        } else {
            (&lower, &mut lo)
        };
        buf.push(m);
        if buf.len() >= 512 {
            target.mutate_batch(buf).unwrap();
            buf.clear();
        }
    }
    lower.mutate_batch(&lo).unwrap();
    upper.mutate_batch(&hi).unwrap();
    lower.flush(true).unwrap();
    upper.flush(true).unwrap();
    let by_copy = started.elapsed();
    println!("copying split at {mib} MiB: {:.3} s", by_copy.as_secs_f64());
    engine.close().unwrap();
}
