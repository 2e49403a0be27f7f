//! The `Storage` contract, held against both backends: one generic
//! `contract` run on a local directory and on S3 (a real moto server),
//! then what only S3 has: chunked WAL segments with gaps or garbage, a
//! fenced writer's late batch,
//! multipart uploads, bad roots, and calls from inside a tokio runtime.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::StorageError;
use ferrobase_storage::fs::s3::testing::MotoServer;
use ferrobase_storage::fs::{self, LocalFs, Storage};
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod storage_contract;
use storage_contract::{contract, io_kind, p, read_log};

#[test]
fn local_backend_meets_the_contract() {
    let tmp = tempfile::tempdir().unwrap();
    contract(&LocalFs::new(tmp.path()));
}

#[test]
fn s3_backend_meets_the_contract() {
    let moto = MotoServer::start();
    let fs = fs::from_url(&moto.url("root/one")).unwrap();
    contract(&*fs);

    assert_eq!(fs.url(), "s3://ferrobase-test/root/one");
    assert_eq!(fs.display(p("a/x")), "s3://ferrobase-test/root/one/a/x");
    assert_eq!(fs.display(p("/a//./x")), "s3://ferrobase-test/root/one/a/x");
    assert!(fs.lock_dir(p("a")).unwrap().is_none());
    // An absolute path is relative to the root.
    assert_eq!(fs.read(p("/a/x")).unwrap().unwrap(), b"hello");
    // The root's objects are all under its prefix, so a sibling root sees
    // none of them.
    let other = fs::from_url(&moto.url("root/two")).unwrap();
    assert_eq!(other.list(p("")).unwrap(), Vec::<String>::new());
    let whole = fs::from_url(&moto.url("")).unwrap();
    assert_eq!(whole.list(p("")).unwrap(), ["root"]);
    assert_eq!(whole.list(p("root")).unwrap(), ["one"]);
}

#[test]
fn s3_large_files_upload_in_parts_and_read_back_anywhere() {
    let moto = MotoServer::start();
    let fs = fs::from_url(&moto.url("big")).unwrap();
    // Three 8 MiB parts and a tail, written in odd-sized pieces.
    let data: Vec<u8> = (0..(25u32 << 20) + 123).map(|i| (i % 251) as u8).collect();
    let mut w = fs.create(p("f")).unwrap();
    for piece in data.chunks(1_000_003) {
        w.write_all(piece).unwrap();
    }
    assert!(!fs.exists(p("f")).unwrap(), "parts uploaded, none visible");
    w.finish().unwrap();
    let r = fs.open(p("f")).unwrap();
    assert_eq!(r.len(), data.len() as u64);
    let mut buf = vec![0u8; 3 << 20];
    for offset in [0usize, 7 << 20, data.len() - buf.len()] {
        r.read_exact_at(&mut buf, offset as u64).unwrap();
        assert!(buf == data[offset..offset + buf.len()], "at {offset}");
    }
    assert_eq!(fs.read(p("f")).unwrap().unwrap().len(), data.len());

    // Parts uploaded, then dropped: the upload is aborted, never completed.
    let mut w = fs.create(p("g")).unwrap();
    w.write_all(&data[..17 << 20]).unwrap();
    assert_eq!(moto.multipart_uploads(), 1);
    drop(w);
    assert!(!fs.exists(p("g")).unwrap());
    assert_eq!(fs.list(p("")).unwrap(), ["f"]);
    // The abort runs in the background; it lands soon after.
    let deadline = Instant::now() + Duration::from_secs(10);
    while moto.multipart_uploads() > 0 {
        assert!(
            Instant::now() < deadline,
            "the dropped upload was never aborted"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn s3_garbage_in_wal_segments_is_named() {
    let moto = MotoServer::start();
    let fs = fs::from_url(&moto.url("g")).unwrap();
    let chunk = |seg: &str, offset: u64| format!("{seg}/{offset:020}");

    // A missing batch: the chunk after the gap is named.
    fs.put(p(&chunk("gap", 0)), b"HDR").unwrap();
    fs.put(p(&chunk("gap", 3)), b"aaaa").unwrap();
    fs.put(p(&chunk("gap", 10)), b"cc").unwrap();
    let e = fs.open_log(p("gap")).err().expect("gap").to_string();
    assert!(
        e.contains("s3://ferrobase-test/g/gap/00000000000000000010"),
        "{e}"
    );
    assert!(e.contains("gap"), "{e}");
    // Truncating before the gap repairs it; beyond the data is refused.
    let e = fs.truncate_log(p("gap"), 12).unwrap_err();
    assert!(e.to_string().contains("00000000000000000010"), "{e}");
    fs.truncate_log(p("gap"), 5).unwrap();
    assert_eq!(read_log(&*fs, "gap"), b"HDRaa");
    let e = fs.truncate_log(p("gap"), 6).unwrap_err();
    assert_eq!(io_kind(&e), Some(io::ErrorKind::InvalidInput), "{e}");

    // No header chunk (what a paused writer leaves after a fence): never
    // acknowledged, so it reads as an empty segment, and the WAL split
    // skips it instead of failing on every retry.
    fs.put(p(&chunk("orphan", 40)), b"late").unwrap();
    assert_eq!(read_log(&*fs, "orphan"), b"");

    // Overlapping chunks, and an object that is not a chunk.
    fs.put(p(&chunk("over", 0)), b"HDR").unwrap();
    fs.put(p(&chunk("over", 2)), b"x").unwrap();
    let e = fs.open_log(p("over")).err().expect("overlap").to_string();
    assert!(
        e.contains("over/00000000000000000002") && e.contains("overlaps"),
        "{e}"
    );
    fs.put(p("junk/notes.txt"), b"?").unwrap();
    let e = fs.open_log(p("junk")).err().expect("junk").to_string();
    assert!(e.contains("s3://ferrobase-test/g/junk/notes.txt"), "{e}");

    // A chunk that changes under a reader is caught, not misread.
    fs.put(p(&chunk("shrink", 0)), b"HDR").unwrap();
    fs.put(p(&chunk("shrink", 3)), b"abcdef").unwrap();
    let (mut r, len) = fs.open_log(p("shrink")).unwrap();
    assert_eq!(len, 9);
    fs.put(p(&chunk("shrink", 3)), b"ab").unwrap();
    let e = r.read_to_end(&mut Vec::new()).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
    assert!(e.to_string().contains("shrink/00000000000000000003"), "{e}");
}

#[test]
fn s3_errors_name_the_object_or_the_bad_root_part() {
    for (url, says) in [
        ("s3://", "bucket"),
        ("s3://b?colour=red", "unknown query parameter 'colour'"),
        ("s3://b?endpoint=ftp://h", "http:// or https://"),
        ("s3://b?endpoint=not a url", "not a URL"),
        ("s3://b/../x", "'..'"),
        ("s3://b?access_key_id=k", "secret_access_key"),
    ] {
        let e = fs::from_url(url).expect_err(url);
        assert!(matches!(e, StorageError::InvalidRequest(_)), "{url}: {e:?}");
        assert!(e.to_string().contains(says), "{url}: {e}");
    }

    // Nothing listens on the port: the first call fails, naming the object.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let fs = fs::from_url(&format!(
        "s3://b/pre?endpoint=http://127.0.0.1:{port}&access_key_id=k&secret_access_key=s"
    ))
    .unwrap();
    let e = fs.read(p("x/y")).unwrap_err();
    assert!(e.to_string().contains("s3://b/pre/x/y"), "{e}");
    assert!(matches!(e, StorageError::Io { .. }), "{e:?}");

    // A bucket that does not exist is an error, not an empty store.
    let moto = MotoServer::start();
    let url = moto.url("p").replace("ferrobase-test", "no-such-bucket");
    let fs = fs::from_url(&url).unwrap();
    let e = fs.read(p("x")).unwrap_err();
    assert!(e.to_string().contains("s3://no-such-bucket/p/x"), "{e}");
    let e = fs.list(p("")).unwrap_err();
    assert!(e.to_string().contains("no-such-bucket"), "{e}");
    let e = fs.create_log(p("seg"), b"H").err().expect("no bucket");
    assert!(
        e.to_string().contains("s3://no-such-bucket/p/seg/0000"),
        "{e}"
    );
}

#[test]
fn s3_works_from_inside_a_tokio_runtime_and_drops_there() {
    let moto = MotoServer::start();
    let fs: Arc<dyn Storage> = fs::from_url(&moto.url("rt")).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    let read = rt.block_on(async move {
        // The server calls storage from its workers; the last handle may
        // be dropped there too.
        tokio::spawn(async move {
            fs.put(p("k"), b"v").unwrap();
            let mut w = fs.create(p("unfinished")).unwrap();
            w.write_all(b"x").unwrap();
            drop(w);
            let read = fs.read(p("k")).unwrap();
            drop(fs);
            read
        })
        .await
        .unwrap()
    });
    assert_eq!(read.unwrap(), b"v");
}

/// The engine itself on S3: store files written by a flush, WAL batches
/// replayed after a simulated crash (the engine is leaked, never closed),
/// all read back by a second engine on the same root.
#[test]
fn the_engine_runs_on_s3_and_recovers_from_its_wal() {
    use ferrobase_storage::{Engine, Get, RegionInfo};
    use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};

    let moto = MotoServer::start();
    let root = moto.url("cluster");
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    let row = |i: u32| format!("row-{i:05}");
    let n = 200;

    let engine = Engine::open_on(
        fs::from_url(&root).unwrap(),
        p("data"),
        p("wal/rs1"),
        Settings::default(),
    )
    .unwrap();
    let region = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    for i in 0..n {
        if i == n / 2 {
            region.flush(true).unwrap();
        }
        let m = RowMutation::new(row(i))
            .put("f", "q", format!("v{i}"))
            .with_durability(Durability::SyncWal);
        region.mutate(m).unwrap();
    }
    // Killed: the second half is only in the WAL.
    engine.set_flushes_paused(true);
    engine.set_compactions_enabled(false);
    std::mem::forget((region, engine));

    let fs = fs::from_url(&root).unwrap();
    assert!(
        !fs.list(p("data/t")).unwrap().is_empty(),
        "flushed store files"
    );
    let engine = Engine::open_on(fs, p("data"), p("wal/rs1"), Settings::default()).unwrap();
    let region = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    for i in 0..n {
        let cells = region.get(&Get::new(row(i))).unwrap();
        assert_eq!(cells.len(), 1, "{}", row(i));
        assert_eq!(&cells[0].value[..], format!("v{i}").as_bytes());
    }
    engine.close().unwrap();
}

#[test]
fn a_fenced_writers_late_batch_neither_survives_nor_blocks_the_split() {
    use ferrobase_storage::wal::{Wal, WalEdit, WalFamily, WalOptions, split};
    use ferrobase_types::{CellRun, CellType, Durability};

    let moto = MotoServer::start();
    let fs = fs::from_url(&moto.url("fence")).unwrap();
    let edit = |seq: u64| WalEdit {
        nonce: None,
        now: ferrobase_types::LATEST_TIMESTAMP,
        region_id: 7,
        seq,
        row: format!("row-{seq}").into(),
        families: vec![WalFamily {
            family: "f".into(),
            cells: CellRun::single(b"q", seq, CellType::Put, b"v"),
        }],
    };
    let wal = Wal::open_on(fs.clone(), p("wal/rs1"), WalOptions::default()).unwrap();
    wal.append(&[edit(1), edit(2)], Durability::SyncWal)
        .unwrap();

    // The master fences and moves the WAL; the writer is told at its next batch.
    fs.fence_dir(p("wal/rs1"), p("wal/rs1.splitting")).unwrap();
    let e = wal.append(&[edit(3)], Durability::SyncWal).unwrap_err();
    assert!(matches!(e, StorageError::Fenced(_)), "{e}");
    drop(wal);
    // Its batch 3 was PUT before the check failed: it sits, headerless,
    // under the old name, which the master sees as a dead WAL again.
    let late = fs.list(p("wal/rs1")).unwrap();
    assert_eq!(late.len(), 1, "{late:?}");

    let region = p("data/t/r7");
    let mut seqs = Vec::new();
    for dir in ["wal/rs1.splitting", "wal/rs1"] {
        let report = split::split_wal_dir(&*fs, p(dir), "rs1", &|id| {
            (id == 7).then(|| region.to_path_buf())
        })
        .unwrap();
        assert_eq!(report.torn_tail, None, "{dir}");
        for f in split::recovered_files(&*fs, region).unwrap() {
            split::read_recovered(&*fs, &f, &mut |e| {
                seqs.push(e.seq);
                Ok(())
            })
            .unwrap();
            // Replayed by the region's new owner, which then removes it.
            split::remove_recovered(&*fs, &f).unwrap();
        }
        fs.delete_all(p(dir)).unwrap();
    }
    // The acknowledged edits are recovered; the unacknowledged one is not.
    assert_eq!(seqs, vec![1, 2], "recovered edits");
}

/// A WAL of many group commits (one object each) reads back in order and
/// whole; reading prefetches chunks, so this also checks that prefetching
/// never reorders or drops one. Prints how long the read took.
#[test]
fn s3_a_wal_of_many_batches_reads_back_in_order() {
    let moto = MotoServer::start();
    let fs = fs::from_url(&moto.url("many")).unwrap();
    let mut log = fs.create_log(p("seg"), b"HDR").unwrap();
    let mut want = b"HDR".to_vec();
    for i in 0..600u32 {
        let batch = format!("batch-{i:05};").repeat(1 + (i % 7) as usize);
        log.append(batch.as_bytes()).unwrap();
        want.extend_from_slice(batch.as_bytes());
    }
    log.sync().unwrap();
    let start = Instant::now();
    assert_eq!(read_log(&*fs, "seg"), want);
    println!("read 601 chunks in {:?}", start.elapsed());
}
