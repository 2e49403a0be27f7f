//! A failed group write must fail its waiters (not hang them) and make the
//! WAL refuse later appends until a resume succeeds, while everything
//! acknowledged before the failure stays replayable and nothing refused is
//! ever replayed.

use super::{Wal, WalEdit, WalFamily, WalOptions};
use crate::error::StorageError;
use bytes::Bytes;
use ferrobase_types::{CellRun, CellType, Durability};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

fn edit(region_id: u64, seq: u64) -> WalEdit {
    WalEdit {
        nonce: None,
        now: ferrobase_types::LATEST_TIMESTAMP,
        region_id,
        seq,
        row: Bytes::from(format!("row-{seq}")),
        families: vec![WalFamily {
            family: Bytes::from_static(b"f"),
            cells: CellRun::single(b"q", seq, CellType::Put, &[7u8; 100]),
        }],
    }
}

#[test]
fn failed_write_fails_waiters_and_refuses_appends() {
    let dir = tempfile::tempdir().unwrap();
    let opts = WalOptions {
        roll_size: 1 << 20,
        async_flush_interval: Duration::from_millis(5),
    };
    let wal = Wal::open(dir.path(), opts.clone()).unwrap();
    // No resume in this test: the refusal itself is under test.
    *wal.writer.resume_interval.lock() = Duration::from_secs(3600);
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || {
                let d = if t % 2 == 0 {
                    Durability::SyncWal
                } else {
                    Durability::FsyncWal
                };
                let mut acked = Vec::new();
                for seq in 1.. {
                    if t == 0 && seq == 100 {
                        wal.writer.fail_writes.store(true, Ordering::SeqCst);
                    }
                    match wal.append(&[edit(t, seq)], d) {
                        Ok(()) => acked.push(seq),
                        Err(e) => return (acked, e),
                    }
                }
                unreachable!()
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|h| h.join().unwrap()).collect();
    for (_, e) in &results {
        assert!(matches!(e, StorageError::Io { .. }), "{e}");
    }
    // Refused from now on, whatever the durability, even with a healthy disk.
    wal.writer.fail_writes.store(false, Ordering::SeqCst);
    for d in [
        Durability::AsyncWal,
        Durability::SyncWal,
        Durability::FsyncWal,
    ] {
        assert!(matches!(
            wal.append(&[edit(99, 1)], d),
            Err(StorageError::Io { .. })
        ));
    }
    assert!(wal.close().is_err());
    drop(wal);

    // The half-written batch is a torn tail; every acknowledged edit is there.
    let wal = Wal::open(dir.path(), opts).unwrap();
    assert!(
        wal.open_report().truncated.is_some(),
        "{}",
        wal.open_report()
    );
    for (t, (acked, _)) in results.iter().enumerate() {
        let mut got = Vec::new();
        wal.replay(t as u64, 0, &mut |e| {
            got.push(e.seq);
            Ok(())
        })
        .unwrap();
        // Unacknowledged edits of the failed batch may have reached the
        // file whole; acknowledged ones must all be there, in order.
        assert_eq!(&got[..acked.len()], &acked[..], "thread {t}");
    }
}

#[test]
fn renamed_wal_directory_fences_the_writer() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("server-a");
    let opts = WalOptions {
        roll_size: 1 << 20,
        async_flush_interval: Duration::from_millis(5),
    };
    let wal = Wal::open(&dir, opts.clone()).unwrap();
    for seq in 1..=10 {
        wal.append(&[edit(1, seq)], Durability::SyncWal).unwrap();
    }
    // What the master does before splitting a dead server's WAL.
    let splitting = root.path().join("server-a.splitting");
    std::fs::rename(&dir, &splitting).unwrap();
    let e = wal
        .append(&[edit(1, 11)], Durability::SyncWal)
        .expect_err("a fenced WAL must not acknowledge");
    assert!(matches!(e, StorageError::Fenced(_)), "{e}");
    for d in [Durability::SyncWal, Durability::FsyncWal] {
        assert!(wal.append(&[edit(1, 12)], d).is_err());
    }
    drop(wal);
    // Every acknowledged edit is in the renamed directory, where the split
    // reads it.
    let wal = Wal::open(&splitting, opts).unwrap();
    let mut got = Vec::new();
    wal.replay(1, 0, &mut |e| {
        got.push(e.seq);
        Ok(())
    })
    .unwrap();
    assert_eq!(&got[..10], &(1..=10).collect::<Vec<u64>>()[..]);
}

/// Appends from 8 threads until the injected failure; returns per thread
/// the acknowledged seqs and the seq that failed.
fn write_until_failure(wal: &Arc<Wal>, first_seq: u64) -> Vec<(Vec<u64>, u64)> {
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let wal = Arc::clone(wal);
            std::thread::spawn(move || {
                let d = if t % 2 == 0 {
                    Durability::SyncWal
                } else {
                    Durability::FsyncWal
                };
                let mut acked = Vec::new();
                for seq in first_seq.. {
                    if t == 0 && seq == first_seq + 100 {
                        wal.writer.fail_writes.store(true, Ordering::SeqCst);
                    }
                    match wal.append(&[edit(t, seq)], d) {
                        Ok(()) => acked.push(seq),
                        Err(e) => {
                            assert!(matches!(e, StorageError::Io { .. }), "{e}");
                            return (acked, seq);
                        }
                    }
                }
                unreachable!()
            })
        })
        .collect();
    threads.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn a_failed_log_resumes_once_writes_succeed_and_never_replays_refused_edits() {
    let dir = tempfile::tempdir().unwrap();
    let opts = WalOptions {
        roll_size: 1 << 20,
        async_flush_interval: Duration::from_millis(5),
    };
    let wal = Wal::open(dir.path(), opts.clone()).unwrap();
    *wal.writer.resume_interval.lock() = Duration::ZERO;

    let first = write_until_failure(&wal, 1);
    // The storage still fails: the resume's new segment is written with
    // the failing writer only on the next batch, so the log takes the
    // append, fails it, and stays refused.
    assert!(wal.append(&[edit(50, 1)], Durability::SyncWal).is_err());
    // The storage recovers: the next append resumes the log.
    wal.writer.fail_writes.store(false, Ordering::SeqCst);
    let mut after = Vec::new();
    for seq in 1_000..1_050 {
        wal.append(&[edit(50, seq)], Durability::SyncWal)
            .expect("a resumed log takes appends");
        after.push(seq);
    }
    // A second failure and resume, with FSYNC_WAL writers too.
    let second = write_until_failure(&wal, 2_000);
    wal.writer.fail_writes.store(false, Ordering::SeqCst);
    wal.append(&[edit(51, 1)], Durability::FsyncWal)
        .expect("resumed again");
    wal.close().unwrap();
    drop(wal);

    // Reopened: no torn tail in the middle of the log (the failed segments
    // were cut back), every acknowledged edit is there, and no refused one.
    let wal = Wal::open(dir.path(), opts).unwrap();
    for t in 0..8u64 {
        let mut got = Vec::new();
        wal.replay(t, 0, &mut |e| {
            got.push(e.seq);
            Ok(())
        })
        .unwrap();
        let (a1, f1) = &first[t as usize];
        let (a2, f2) = &second[t as usize];
        let want: Vec<u64> = a1.iter().chain(a2).copied().collect();
        assert_eq!(got, want, "thread {t}: refused seqs {f1} and {f2}");
    }
    let mut got = Vec::new();
    wal.replay(50, 0, &mut |e| {
        got.push(e.seq);
        Ok(())
    })
    .unwrap();
    assert_eq!(
        got, after,
        "region 50: the append refused during the failure is absent"
    );
}
