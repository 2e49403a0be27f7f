//! WAL segments for the fuzz targets: framing payloads with valid CRCs
//! (docs/wal-format.md), and [`exercise`], which reads segments through
//! every public reader of a WAL directory: a dead server's split, a
//! recovered edits file, and `Wal::open_on` (recovery) followed by replay.

use crate::mem::MemStorage;
use ferrobase_storage::wal::split;
use ferrobase_storage::wal::{Wal, WalEdit, WalOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub const SEGMENT_MAGIC: &[u8; 8] = b"FBWALSEG";
pub const MARKER: u8 = 0xA7;

/// A segment header of format `version`.
pub fn header(version: u32) -> Vec<u8> {
    let mut h = SEGMENT_MAGIC.to_vec();
    h.extend_from_slice(&version.to_le_bytes());
    h
}

/// One record frame: marker, length, CRC32C, payload.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = vec![MARKER];
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32c::crc32c(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payloads of a well-formed segment (seeds are made this way).
pub fn payloads(segment: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = segment.get(12..).unwrap_or_default();
    while let (Some(len), Some(tail)) = (rest.get(1..5), rest.get(9..)) {
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let Some(p) = tail.get(..len) else { break };
        out.push(p.to_vec());
        rest = &tail[len..];
    }
    out
}

fn segment_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("wal-{id:020}.log"))
}

/// Every edit of a segment directory, as a dead server's split reads it;
/// `None` when reading failed.
fn split_read(fs: &MemStorage, dir: &Path) -> Option<Vec<WalEdit>> {
    let mut edits = Vec::new();
    split::read_wal_dir(fs, dir, &mut |e| {
        edits.push(e);
        Ok(())
    })
    .ok()?;
    Some(edits)
}

/// Reads `segments` (oldest first) as one server's WAL directory, every
/// way the server does, and checks that the readers agree: when open's
/// validation accepts the directory, the split must read the same number
/// of edits, and replay must hand each region exactly the edits the split
/// found for it (a record that validates must also decode).
pub fn exercise(segments: &[Vec<u8>]) {
    let fs = MemStorage::new();
    let dir = Path::new("wal");
    for (i, s) in segments.iter().enumerate() {
        fs.insert(segment_path(dir, i as u64 + 1), s.clone());
    }
    // A recovered edits file has the segment format, but nothing in it
    // may be torn.
    if let Some(first) = segments.first() {
        let rec = Path::new("region/recovered.edits/dead.wal");
        fs.insert(rec, first.clone());
        let _ = split::read_recovered(&fs, rec, &mut |e| {
            let _ = e.into_resolved();
            Ok(())
        });
    }
    let split_edits = split_read(&fs, dir);

    let opts = WalOptions {
        roll_size: 1 << 20,
        async_flush_interval: Duration::from_secs(3600),
    };
    let Ok(wal) = Wal::open_on(Arc::new(fs.clone()), dir, opts) else {
        return;
    };
    let report = wal.open_report();
    let Some(edits) = split_edits else {
        panic!("WAL open accepted segments that the split could not read: {report}");
    };
    assert_eq!(
        report.records,
        edits.len() as u64,
        "WAL open and split count different edits"
    );
    let mut per_region: BTreeMap<u64, u64> = BTreeMap::new();
    for e in &edits {
        if e.seq > 0 {
            *per_region.entry(e.region_id).or_default() += 1;
        }
    }
    for (&region, &expected) in per_region.iter().take(8) {
        let mut got = 0u64;
        match wal.replay(region, 0, &mut |_| {
            got += 1;
            Ok(())
        }) {
            Ok(n) => assert_eq!(
                (n, got),
                (expected, expected),
                "replay of region {region} delivered other edits than the split read"
            ),
            Err(e) => panic!("replay fails on segments open accepted: {e}"),
        }
    }
    let _ = wal.close();
}
