//! Full disk: a `ferrobase standalone` whose data directory is a small
//! tmpfs of its own (mounted by the test; it needs root, as CI has, and
//! fails rather than skips without it) is written with SYNC_WAL until the
//! disk is full. Writes then fail with an error naming the cause ("No space
//! left on device"), none is acknowledged without being logged, and once
//! space is freed writes succeed again without a restart; after a restart
//! every acknowledged row is there.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod standalone;

use bytes::Bytes;
use ferrobase_client::Connection;
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Server settings: frequent flushes, so store files fill the disk too.
const SETTINGS: &[&str] = &[
    "ferrobase.memory.size=268435456",
    "hbase.hregion.memstore.flush.size=1048576",
];

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .expect("running mount");
        assert!(
            out.status.success(),
            "this test mounts a small tmpfs and needs root: mount said {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(dir.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn settings() -> Settings {
    Settings {
        client_retries: 1,
        client_pause_ms: 10,
        ..Settings::default()
    }
}

fn value(i: u32) -> Vec<u8> {
    // 2 KiB that do not compress to nothing.
    (0..2048u32)
        .map(|j| (i.wrapping_mul(2_654_435_761).wrapping_add(j * 40_503) >> 7) as u8)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_writes_by_name_and_loses_nothing_acknowledged() {
    let base = tempfile::tempdir().unwrap();
    let mnt = base.path().join("disk");
    std::fs::create_dir(&mnt).unwrap();
    let _fs = Tmpfs::mount(&mnt, "12m");
    // Room the test frees later.
    let filler = mnt.join("filler");
    std::fs::write(&filler, vec![0u8; 4 << 20]).unwrap();
    let data = mnt.join("data");

    let (server, addr) = standalone::start(&data, SETTINGS);
    let conn = Connection::connect(&addr, settings()).unwrap();
    let desc = TableDescriptor::new("full", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    conn.admin().create_table(&desc, &[]).await.unwrap();
    let t = conn.table("full");

    let mut acked = Vec::new();
    let mut failure = None;
    for i in 0..20_000u32 {
        let row = format!("row-{i:06}");
        let m = RowMutation::new(row.clone())
            .with_durability(Durability::SyncWal)
            .put("f", "q", value(i));
        match t.put(m).await {
            Ok(()) => acked.push((row, i)),
            Err(e) => {
                failure = Some(e.to_string());
                break;
            }
        }
    }
    let failure = failure.expect("12 MiB filled without a failed write");
    assert!(
        failure.contains("No space left on device"),
        "the error names the cause: {failure}"
    );
    assert!(acked.len() > 100, "only {} rows acknowledged", acked.len());

    // Space back: writes succeed again, same server, no restart (the WAL
    // resumes on a new segment; the region flushes what it holds).
    std::fs::remove_file(&filler).unwrap();
    let mut resumed = None;
    for attempt in 0..600 {
        let m = RowMutation::new("after-space")
            .with_durability(Durability::SyncWal)
            .put("f", "q", value(1));
        match t.put(m).await {
            Ok(()) => {
                resumed = Some(attempt);
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    assert!(
        resumed.is_some(),
        "writes never resumed after space was freed"
    );
    for i in 20_000..20_300u32 {
        let row = format!("row-{i:06}");
        let m = RowMutation::new(row.clone())
            .with_durability(Durability::SyncWal)
            .put("f", "q", value(i));
        t.put(m).await.expect("writes after the resume succeed");
        acked.push((row, i));
    }

    // And everything acknowledged, before the disk filled and after, is
    // there after a restart.
    drop(server);
    let (_server, addr) = standalone::start(&data, SETTINGS);
    let patient = Settings {
        client_retries: 20,
        client_pause_ms: 50,
        ..Settings::default()
    };
    let conn = Connection::connect(&addr, patient).unwrap();
    let t = conn.table("full");
    for chunk in acked.chunks(200) {
        let rows = chunk.iter().map(|(r, _)| Bytes::from(r.clone())).collect();
        let got = t.get_rows(rows, &Default::default()).await.unwrap();
        for ((r, i), g) in chunk.iter().zip(got) {
            assert_eq!(
                g.value(b"f", b"q").map(|v| v.to_vec()),
                Some(value(*i)),
                "acknowledged row {r} lost"
            );
        }
    }
    t.put(
        RowMutation::new("after")
            .with_durability(Durability::SyncWal)
            .put("f", "q", "ok"),
    )
    .await
    .unwrap();
}
