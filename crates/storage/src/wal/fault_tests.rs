//! A failed group write must fail its waiters (not hang them) and make the
//! WAL refuse every later append, while everything acknowledged before the
//! failure stays replayable.

use super::{Wal, WalEdit, WalFamily, WalOptions};
use crate::error::StorageError;
use bytes::Bytes;
use ferrobase_types::{CellRun, CellType, Durability};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

fn edit(region_id: u64, seq: u64) -> WalEdit {
    WalEdit {
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
