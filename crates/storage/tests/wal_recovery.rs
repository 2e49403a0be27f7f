//! WAL recovery on real files: durability levels, torn tails, corruption,
//! group commit, roll and truncation, close, and a kill -9 of a writer.
//! No timing assertions; every random choice comes from a seeded RNG.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use ferrobase_storage::StorageError;
use ferrobase_storage::wal::{Wal, WalEdit, WalFamily, WalOptions};
use ferrobase_types::{CellRun, CellType, Durability};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

fn opts(roll_size: u64) -> WalOptions {
    WalOptions {
        roll_size,
        async_flush_interval: Duration::from_millis(5),
    }
}

/// A deterministic edit: content derives from (region, seq).
fn edit(region_id: u64, seq: u64, cells: usize) -> WalEdit {
    let types = [CellType::Put, CellType::Delete, CellType::DeleteColumn];
    WalEdit {
        nonce: None,
        now: ferrobase_types::LATEST_TIMESTAMP,
        region_id,
        seq,
        row: Bytes::from(format!("row-{region_id}-{seq:06}")),
        families: vec![WalFamily {
            family: Bytes::from_static(b"cf"),
            cells: {
                let mut run = CellRun::new();
                for i in 0..cells {
                    run.push(
                        format!("q{i}").as_bytes(),
                        1_000 + seq,
                        types[(seq as usize + i) % types.len()],
                        format!("v-{region_id}-{seq}-{i}").as_bytes(),
                    );
                }
                run
            },
        }],
    }
}

fn replay_all(wal: &Wal, region: u64, after: u64) -> Vec<WalEdit> {
    let mut out = Vec::new();
    let n = wal
        .replay(region, after, &mut |e| {
            out.push(e);
            Ok(())
        })
        .unwrap();
    assert_eq!(n as usize, out.len());
    out
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_durability_replays_exactly_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut expected: BTreeMap<u64, Vec<WalEdit>> = BTreeMap::new();
    {
        let wal = Wal::open(dir.path(), opts(64 << 10)).unwrap();
        let durabilities = [
            Durability::AsyncWal,
            Durability::SyncWal,
            Durability::FsyncWal,
            Durability::UseDefault,
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut seq = 0;
        for round in 0..300 {
            let d = durabilities[round % durabilities.len()];
            // Units of 1-3 edits, possibly for different regions.
            let unit: Vec<WalEdit> = (0..rng.random_range(1..=3))
                .map(|_| {
                    seq += 1;
                    edit(rng.random_range(1..=4), seq, rng.random_range(0..6))
                })
                .collect();
            wal.append(&unit, d).unwrap();
            for e in unit {
                expected.entry(e.region_id).or_default().push(e);
            }
        }
        // SKIP_WAL writes nothing.
        wal.append(&[edit(1, 999_999, 2)], Durability::SkipWal)
            .unwrap();
        // Replay sees buffered ASYNC_WAL edits without an explicit sync.
        wal.append(&[edit(2, 1_000_000, 1)], Durability::AsyncWal)
            .unwrap();
        expected.entry(2).or_default().push(edit(2, 1_000_000, 1));
        assert_eq!(replay_all(&wal, 2, 0), expected[&2]);
        wal.close().unwrap();
    }
    let wal = Wal::open(dir.path(), opts(64 << 10)).unwrap();
    let report = wal.open_report();
    assert!(report.truncated.is_none(), "{report}");
    assert_eq!(
        report.records,
        expected.values().map(Vec::len).sum::<usize>() as u64
    );
    assert_eq!(report.max_seq, 1_000_000);
    for (region, edits) in &expected {
        assert_eq!(&replay_all(&wal, *region, 0), edits, "region {region}");
        let mid = edits[edits.len() / 2].seq;
        let after: Vec<_> = edits.iter().filter(|e| e.seq > mid).cloned().collect();
        assert_eq!(
            replay_all(&wal, *region, mid),
            after,
            "region {region} after {mid}"
        );
    }
    assert!(replay_all(&wal, 77, 0).is_empty());
}

/// Writes 19 edits, then a 20th; returns (segment path, its bytes, where
/// the 20th record starts).
fn wal_with_known_last_record(dir: &Path) -> (PathBuf, Vec<u8>, u64) {
    let wal = Wal::open(dir, opts(1 << 30)).unwrap();
    for seq in 1..=19 {
        wal.append(&[edit(5, seq, 3)], Durability::SyncWal).unwrap();
    }
    let seg = segments(dir).pop().unwrap();
    let last_start = std::fs::metadata(&seg).unwrap().len();
    // Tagged with a nonce, so the record does not end in zero bytes (an
    // untagged one ends with two zero varints, which zero padding of a
    // cut would put back: the record whole again, not torn).
    let mut last = edit(5, 20, 3);
    last.nonce = Some((0x1234, 0x5678));
    wal.append(&[last], Durability::SyncWal).unwrap();
    wal.close().unwrap();
    let bytes = std::fs::read(&seg).unwrap();
    assert!(bytes.len() as u64 > last_start + 9);
    (seg, bytes, last_start)
}

#[test]
fn torn_tail_is_truncated_at_every_position() {
    let src = tempfile::tempdir().unwrap();
    let (seg, bytes, last_start) = wal_with_known_last_record(src.path());
    let name = seg.file_name().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for cut in last_start as usize..bytes.len() {
        for variant in 0..3 {
            let dir = tempfile::tempdir().unwrap();
            let mut damaged = bytes[..cut].to_vec();
            match variant {
                0 => {}
                1 => damaged.extend(std::iter::repeat_n(0u8, rng.random_range(1..200))),
                _ => {
                    let mut junk = vec![0u8; rng.random_range(1..200)];
                    rng.fill_bytes(&mut junk);
                    damaged.extend(junk);
                }
            }
            let path = dir.path().join(name);
            std::fs::write(&path, &damaged).unwrap();
            let wal = Wal::open(dir.path(), opts(1 << 30)).unwrap();
            let report = wal.open_report();
            if damaged.len() > last_start as usize {
                let t = report
                    .truncated
                    .as_ref()
                    .unwrap_or_else(|| panic!("cut {cut} v{variant}: {report}"));
                assert_eq!(t.path, path);
                assert_eq!(t.offset, last_start);
                assert_eq!(t.bytes, damaged.len() as u64 - last_start);
                assert!(report.to_string().contains("truncated"), "{report}");
            } else {
                assert!(report.truncated.is_none());
            }
            assert_eq!(std::fs::metadata(&path).unwrap().len(), last_start);
            let got = replay_all(&wal, 5, 0);
            assert_eq!(
                got,
                (1..=19).map(|s| edit(5, s, 3)).collect::<Vec<_>>(),
                "cut {cut} v{variant}"
            );
            drop(wal);
            // The repair is durable: a second open finds nothing to fix.
            let wal = Wal::open(dir.path(), opts(1 << 30)).unwrap();
            assert!(wal.open_report().truncated.is_none());
            assert_eq!(replay_all(&wal, 5, 0).len(), 19);
        }
    }
}

#[test]
fn unfinished_segment_header_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    wal_with_known_last_record(dir.path());
    let stub = dir.path().join("wal-00000000000000000099.log");
    std::fs::write(&stub, b"FBWAL").unwrap();
    let wal = Wal::open(dir.path(), opts(1 << 30)).unwrap();
    let t = wal.open_report().truncated.unwrap();
    assert_eq!(t.path, stub);
    assert!(!stub.exists());
    assert_eq!(replay_all(&wal, 5, 0).len(), 20);
}

/// Writes enough to fill several segments; returns the dir's segments.
fn multi_segment_wal(dir: &Path) -> Vec<PathBuf> {
    let wal = Wal::open(dir, opts(2048)).unwrap();
    for seq in 1..=200 {
        wal.append(&[edit(1 + seq % 2, seq, 2)], Durability::SyncWal)
            .unwrap();
    }
    wal.close().unwrap();
    let segs = segments(dir);
    assert!(segs.len() >= 4, "{segs:?}");
    segs
}

fn expect_corrupt(dir: &Path, file: &Path, flipped_at: u64) {
    match Wal::open(dir, opts(2048)) {
        Err(StorageError::Corrupt { path, offset, what }) => {
            assert_eq!(path, file, "{what}");
            // The offset names the record holding the flipped byte.
            assert!(
                offset <= flipped_at && offset >= 12,
                "offset {offset}, flipped {flipped_at}: {what}"
            );
        }
        Err(e) => panic!("expected Corrupt, got {e}"),
        Ok(_) => panic!("open accepted a corrupt segment"),
    }
}

#[test]
fn corruption_in_an_older_segment_fails_open() {
    let dir = tempfile::tempdir().unwrap();
    let segs = multi_segment_wal(dir.path());
    let victim = &segs[1];
    let mut bytes = std::fs::read(victim).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x40;
    std::fs::write(victim, &bytes).unwrap();
    expect_corrupt(dir.path(), victim, at as u64);
    // Truncating an older segment mid-record is corruption too, not a tail.
    bytes[at] ^= 0x40;
    std::fs::write(victim, &bytes[..at]).unwrap();
    expect_corrupt(dir.path(), victim, at as u64);
}

#[test]
fn corruption_mid_last_segment_fails_open() {
    let dir = tempfile::tempdir().unwrap();
    let segs = multi_segment_wal(dir.path());
    // The last segment with records (the newest may hold only a header).
    let victim = segs
        .iter()
        .rev()
        .find(|p| std::fs::metadata(p).unwrap().len() > 300)
        .unwrap();
    // Drop the newer, empty ones so the victim is the last segment.
    for p in segs.iter().filter(|p| *p > victim) {
        std::fs::remove_file(p).unwrap();
    }
    let mut bytes = std::fs::read(victim).unwrap();
    let at = 12 + 20; // inside the first record: valid records follow
    bytes[at] ^= 0x01;
    std::fs::write(victim, &bytes).unwrap();
    expect_corrupt(dir.path(), victim, at as u64);
}

#[test]
fn group_commit_many_threads() {
    let dir = tempfile::tempdir().unwrap();
    const THREADS: u64 = 16;
    const PER_THREAD: u64 = 500;
    {
        let wal = Wal::open(dir.path(), opts(256 << 10)).unwrap();
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let wal = Arc::clone(&wal);
                std::thread::spawn(move || {
                    let d = if t % 2 == 0 {
                        Durability::SyncWal
                    } else {
                        Durability::FsyncWal
                    };
                    for j in 0..PER_THREAD {
                        wal.append(&[edit(1 + t % 4, t * 10_000 + j + 1, 1)], d)
                            .unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let stats = wal.stats();
        assert_eq!(stats.appends, THREADS * PER_THREAD);
        assert!(stats.batches <= stats.appends, "{stats:?}");
        assert!(stats.syncs >= 1 && stats.bytes > 0, "{stats:?}");
        wal.close().unwrap();
    }
    let wal = Wal::open(dir.path(), opts(256 << 10)).unwrap();
    for region in 1..=4 {
        let got: BTreeSet<u64> = replay_all(&wal, region, 0).iter().map(|e| e.seq).collect();
        let want: BTreeSet<u64> = (0..THREADS)
            .filter(|t| 1 + t % 4 == region)
            .flat_map(|t| (1..=PER_THREAD).map(move |j| t * 10_000 + j))
            .collect();
        let missing: Vec<_> = want.difference(&got).collect();
        let extra: Vec<_> = got.difference(&want).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "region {region}: missing {missing:?}, extra {extra:?}"
        );
    }
}

#[test]
fn roll_and_truncation_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(dir.path(), opts(4096)).unwrap();
    for seq in 1..=400 {
        wal.append(&[edit(1 + seq % 2, seq, 3)], Durability::SyncWal)
            .unwrap();
    }
    let before = wal.segment_count();
    assert!(before > 3, "{before}");
    assert!(wal.stats().rolls >= before as u64 - 1);
    assert_eq!(wal.regions_pinning_oldest_segment(), vec![1, 2]);
    wal.mark_flushed(1, 400);
    assert_eq!(
        wal.segment_count(),
        before,
        "region 2 still pins every segment"
    );
    assert_eq!(wal.regions_pinning_oldest_segment(), vec![2]);
    wal.mark_flushed(2, 400);
    assert_eq!(wal.segment_count(), 1, "only the current segment is kept");
    assert_eq!(segments(dir.path()).len(), 1);
    assert_eq!(wal.stats().segments_deleted, before as u64 - 1);
    // Writing goes on in the kept segment.
    wal.append(&[edit(1, 401, 1)], Durability::SyncWal).unwrap();
    assert_eq!(replay_all(&wal, 1, 400), vec![edit(1, 401, 1)]);
    wal.close().unwrap();
    drop(wal);

    // Region 1 writes first, region 2 after: after a restart, flushing
    // region 1 frees only the segments that hold nothing else.
    let dir = tempfile::tempdir().unwrap();
    {
        let wal = Wal::open(dir.path(), opts(4096)).unwrap();
        for seq in 1..=300 {
            let region = if seq <= 150 { 1 } else { 2 };
            wal.append(&[edit(region, seq, 3)], Durability::SyncWal)
                .unwrap();
        }
        wal.append(&[edit(3, 1, 1)], Durability::SyncWal).unwrap();
        wal.close().unwrap();
    }
    let wal = Wal::open(dir.path(), opts(4096)).unwrap();
    let after_open = wal.segment_count();
    assert_eq!(after_open, segments(dir.path()).len());
    assert_eq!(wal.regions_pinning_oldest_segment(), vec![1]);
    wal.mark_flushed(1, 150);
    let after_1 = wal.segment_count();
    assert!(
        after_1 < after_open && after_1 > 1,
        "{after_open} -> {after_1}"
    );
    wal.mark_flushed(2, 299); // seq 300 is unflushed: its segment stays
    assert!(wal.segment_count() > 1);
    wal.mark_flushed(2, 300);
    assert!(
        wal.segment_count() > 1,
        "region 3 still pins the last old segment"
    );
    assert_eq!(wal.regions_pinning_oldest_segment(), vec![3]);
    wal.forget_region(3);
    assert_eq!(wal.segment_count(), 1);
    assert_eq!(segments(dir.path()).len(), 1);
}

#[test]
fn appends_after_close_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(dir.path(), opts(1 << 20)).unwrap();
    wal.append(&[edit(1, 1, 1)], Durability::AsyncWal).unwrap();
    wal.close().unwrap();
    for d in [
        Durability::AsyncWal,
        Durability::SyncWal,
        Durability::FsyncWal,
    ] {
        match wal.append(&[edit(1, 2, 1)], d) {
            Err(StorageError::Closed(what)) => assert!(what.contains("WAL"), "{what}"),
            other => panic!("{d}: {other:?}"),
        }
    }
    wal.close().unwrap();
    wal.sync().unwrap();

    // The buffered ASYNC_WAL edit was written by close.
    assert_eq!(replay_all(&wal, 1, 0), vec![edit(1, 1, 1)]);
    // Close released the directory: it can be opened again.
    let again = Wal::open(dir.path(), opts(1 << 20)).unwrap();
    assert_eq!(replay_all(&again, 1, 0), vec![edit(1, 1, 1)]);
    // The closed WAL deletes nothing: the directory has a new owner.
    assert_eq!(segments(dir.path()).len(), 2);
    wal.mark_flushed(1, u64::MAX);
    wal.forget_region(1);
    assert_eq!(segments(dir.path()).len(), 2);
    again.mark_flushed(1, 1);
    assert_eq!(segments(dir.path()).len(), 1);
}

#[test]
fn second_open_of_a_live_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _wal = Wal::open(dir.path(), opts(1 << 20)).unwrap();
    assert!(matches!(
        Wal::open(dir.path(), opts(1 << 20)),
        Err(StorageError::Io { .. })
    ));
}

#[test]
fn close_races_with_appenders_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(dir.path(), opts(8192)).unwrap();
    let handles: Vec<_> = (0..8u64)
        .map(|t| {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                for seq in 1.. {
                    match wal.append(&[edit(t, seq, 1)], Durability::SyncWal) {
                        Ok(()) => acked.push(seq),
                        Err(StorageError::Closed(_)) => return acked,
                        Err(e) => panic!("{e}"),
                    }
                    if seq == 50 && t == 0 {
                        wal.close().unwrap();
                    }
                }
                acked
            })
        })
        .collect();
    let acked: Vec<Vec<u64>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    drop(wal);
    let wal = Wal::open(dir.path(), opts(8192)).unwrap();
    for (t, seqs) in acked.iter().enumerate() {
        let got: Vec<u64> = replay_all(&wal, t as u64, 0)
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(&got, seqs, "thread {t}");
    }
}

const CHILD_ENV: &str = "FERROBASE_WAL_CRASH_DIR";

/// The writer process of `kill_9_loses_no_acknowledged_edit`; a no-op in a
/// normal test run.
#[test]
fn crash_child_writer() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let wal = Wal::open(Path::new(&dir), opts(16 << 10)).unwrap();
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || {
                let d = if t == 0 {
                    Durability::FsyncWal
                } else {
                    Durability::SyncWal
                };
                for seq in 1..1_000_000 {
                    wal.append(&[edit(t, seq, 4)], d).unwrap();
                    // Printed only after append returned: an acknowledgement.
                    println!("ACK {t} {seq}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn kill_9_loses_no_acknowledged_edit() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let kill_after = rng.random_range(200..3000);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_child_writer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut acked: BTreeMap<u64, u64> = BTreeMap::new();
    let mut seen = 0;
    let mut killed = false;
    for line in stdout.lines() {
        let line = line.unwrap();
        let Some(rest) = line.strip_prefix("ACK ") else {
            continue;
        };
        let mut it = rest.split(' ').map(|x| x.parse::<u64>().unwrap());
        let (t, seq) = (it.next().unwrap(), it.next().unwrap());
        let max = acked.entry(t).or_default();
        *max = (*max).max(seq);
        seen += 1;
        if seen == kill_after && !killed {
            child.kill().unwrap(); // SIGKILL
            killed = true;
        }
    }
    child.wait().unwrap();
    assert!(killed, "the child exited on its own after {seen} acks");
    let wal = Wal::open(dir.path(), opts(16 << 10)).unwrap();
    for (t, max) in acked {
        let seqs: Vec<u64> = replay_all(&wal, t, 0).iter().map(|e| e.seq).collect();
        // Each thread appends in order, so the acked ones are a prefix.
        assert!(
            seqs.len() as u64 >= max,
            "thread {t}: acked up to {max}, replayed {}",
            seqs.len()
        );
        assert_eq!(
            seqs[..max as usize],
            (1..=max).collect::<Vec<_>>()[..],
            "thread {t}"
        );
    }
}

/// A region that flushed edits carrying client nonces before a crash does
/// not replay them, but its opener still learns their nonces from the
/// segment left on disk (a client may retry the operation after the
/// restart). Both edits here are flushed: one by the explicit flush, one
/// by the engine's close.
#[test]
fn flushed_edits_nonces_reach_the_regions_opener_after_a_restart() {
    use ferrobase_storage::{Engine, RegionInfo};
    use ferrobase_types::{FamilyDescriptor, RowMutation, Settings, TableDescriptor};
    let dir = tempfile::tempdir().unwrap();
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    let tagged = |row: &str, nonce: u64| {
        let mut m = RowMutation::new(row.to_string())
            .put("f", "q", "v")
            .with_durability(Durability::SyncWal);
        m.nonce = Some((7, nonce));
        m
    };
    let engine = Engine::open(dir.path(), Settings::default()).unwrap();
    let region = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    region.mutate(tagged("a", 1)).unwrap();
    region.flush(true).unwrap();
    region.mutate(tagged("b", 2)).unwrap();
    // No handover of nonces here (that is the server's clean close): the
    // engine's close leaves what a crash would.
    engine.close().unwrap();

    let engine = Engine::open(dir.path(), Settings::default()).unwrap();
    let region = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    let mut got: Vec<(u64, u64, Vec<u8>)> = region
        .take_replayed_nonces()
        .into_iter()
        .map(|n| (n.nonce.0, n.nonce.1, n.row.to_vec()))
        .collect();
    got.sort();
    assert_eq!(got, [(7, 1, b"a".to_vec()), (7, 2, b"b".to_vec())]);
    engine.close().unwrap();
}
