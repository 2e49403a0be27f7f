//! The `Storage` contract on a real HDFS (a MiniDFSCluster of one
//! NameNode and three DataNodes, `fs::hdfs::testing`), then what only
//! HDFS has: files across blocks, the engine recovering a killed
//! process's open WAL segment (lease recovery), the fence of a paused
//! writer, a DataNode dying under writes, and errors for an unreachable
//! NameNode, a permission and a missing path.
//!
//! One cluster serves every test of this file (each under its own root
//! path); the DataNode test starts its own, since it stops one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::StorageError;
use ferrobase_storage::fs::hdfs::testing::MiniHdfs;
use ferrobase_storage::fs::{self, Storage};
use ferrobase_types::Settings;
use std::io::{self, Read, Write};
use std::sync::Arc;

mod storage_contract;
use storage_contract::{contract, io_kind, p, read_log};

/// A root on the shared cluster; `None` when the test is skipped (no Java
/// in a dev run; the harness said so loudly).
fn root(path: &str) -> Option<(String, Arc<dyn Storage>)> {
    let hdfs = MiniHdfs::shared()?;
    let url = hdfs.url(path);
    let fs = fs::from_url(&url).unwrap();
    Some((url, fs))
}

#[test]
fn hdfs_backend_meets_the_contract() {
    let Some((url, fs)) = root("contract/one") else {
        return;
    };
    contract(&*fs);

    assert_eq!(fs.url(), url);
    assert_eq!(fs.display(p("a/x")), format!("{url}/a/x"));
    assert_eq!(fs.display(p("/a//./x")), format!("{url}/a/x"));
    assert!(fs.lock_dir(p("a")).unwrap().is_none());
    // An absolute path is relative to the root.
    assert_eq!(fs.read(p("/a/x")).unwrap().unwrap(), b"hello");
    // A sibling root sees none of this root's files.
    let other = fs::from_url(&url.replace("/one", "/two")).unwrap();
    assert_eq!(other.list(p("")).unwrap(), Vec::<String>::new());
    let whole = fs::from_url(&url.replace("/contract/one", "/contract")).unwrap();
    assert_eq!(whole.list(p("")).unwrap(), ["one"]);
    let e = whole.fence_dir(p(""), p("x")).unwrap_err();
    assert!(
        e.to_string().contains("cannot fence the storage root"),
        "{e}"
    );
}

/// Files larger than a block (1 MiB blocks here), written in odd pieces,
/// read back at any offset; a WAL segment across blocks too.
#[test]
fn hdfs_files_span_blocks_and_read_back_anywhere() {
    let Some(hdfs) = MiniHdfs::shared() else {
        return;
    };
    let settings = Settings {
        dfs_blocksize: 1 << 20,
        wal_block_size: 1 << 20,
        ..Settings::default()
    };
    let fs = fs::open_root(&hdfs.url("blocks"), &settings).unwrap();
    let data: Vec<u8> = (0..(5u32 << 20) + 123).map(|i| (i % 251) as u8).collect();
    let mut w = fs.create(p("f")).unwrap();
    for piece in data.chunks(1_000_003) {
        w.write_all(piece).unwrap();
    }
    assert!(!fs.exists(p("f")).unwrap());
    w.finish().unwrap();
    let r = fs.open(p("f")).unwrap();
    assert_eq!(r.len(), data.len() as u64);
    let mut buf = vec![0u8; 1_500_000];
    for offset in [0usize, (1 << 20) - 7, data.len() - buf.len()] {
        r.read_exact_at(&mut buf, offset as u64).unwrap();
        assert!(buf == data[offset..offset + buf.len()], "at {offset}");
    }
    assert_eq!(fs.read(p("f")).unwrap().unwrap(), data);

    fs.claim_dir(p("wal")).unwrap();
    let mut log = fs.create_log(p("wal/seg"), b"HDR").unwrap();
    let mut want = b"HDR".to_vec();
    for i in 0..40u32 {
        let batch = vec![(i % 256) as u8; 70_001];
        log.append(&batch).unwrap();
        want.extend_from_slice(&batch);
    }
    log.sync().unwrap();
    // Read while its writer is open (it is closed and reopened for that),
    // then appended to again.
    assert_eq!(read_log(&*fs, "wal/seg"), want);
    log.append(b"tail").unwrap();
    want.extend_from_slice(b"tail");
    drop(log);
    assert_eq!(read_log(&*fs, "wal/seg"), want);
}

#[test]
fn hdfs_errors_name_the_path_and_the_cause() {
    let Some(hdfs) = MiniHdfs::shared() else {
        return;
    };
    for (url, says) in [
        ("hdfs://", "no NameNode"),
        ("hdfs://nn:x/a", "not a port"),
        ("hdfs://nn/a/../b", "'..'"),
        ("hdfs://nn/a?colour=red", "unknown query parameter 'colour'"),
    ] {
        let e = fs::from_url(url).expect_err(url);
        assert!(matches!(e, StorageError::InvalidRequest(_)), "{url}: {e:?}");
        assert!(e.to_string().contains(says), "{url}: {e}");
    }

    // Nothing listens on the port: the first call fails, naming the path
    // and the NameNode, within a few seconds.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let fs = fs::from_url(&format!(
        "hdfs://127.0.0.1:{port}/pre?dfs.client.failover.max.attempts=0"
    ))
    .unwrap();
    let e = fs.read(p("x/y")).unwrap_err();
    assert_eq!(io_kind(&e), Some(io::ErrorKind::ConnectionRefused), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("hdfs://127.0.0.1:{port}/pre/x/y")),
        "{msg}"
    );
    assert!(msg.contains("does not answer"), "{msg}");

    // Permission: a directory only its owner may enter, used by another
    // user. The message is HDFS's, without the NameNode's stack trace.
    let owner = fs::from_url(&hdfs.url("perm")).unwrap();
    owner.put(p("private/x"), b"secret").unwrap();
    let private = fs::from_url(&format!("{}?user=mallory", hdfs.url("perm"))).unwrap();
    // A directory is 0755 by default: mallory can read but not write.
    let e = private.put(p("private/y"), b"mine").unwrap_err();
    assert_eq!(io_kind(&e), Some(io::ErrorKind::PermissionDenied), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("Permission denied: user=mallory"), "{msg}");
    assert!(!msg.contains("\tat "), "no Java stack trace: {msg}");

    // A missing path.
    let e = owner.open(p("nope/x")).unwrap_err();
    assert_eq!(io_kind(&e), Some(io::ErrorKind::NotFound), "{e}");
    assert!(e.to_string().contains("/perm/nope/x"), "{e}");
    let e = owner
        .open_log(p("nope/seg"))
        .err()
        .expect("missing segment");
    assert_eq!(io_kind(&e), Some(io::ErrorKind::NotFound), "{e}");
    // A segment is never created outside a (claimed) directory.
    let e = owner.create_log(p("nope/seg"), b"H").err().expect("no dir");
    assert_eq!(io_kind(&e), Some(io::ErrorKind::NotFound), "{e}");
}

/// The engine itself on HDFS: store files written by a flush, WAL batches
/// replayed after a simulated crash (the engine is leaked, never closed,
/// so its segment stays open under its lease until the second engine
/// recovers it), all read back by a second engine on the same root.
#[test]
fn the_engine_runs_on_hdfs_and_recovers_a_killed_writers_wal() {
    use ferrobase_storage::{Engine, Get, RegionInfo};
    use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};

    let Some((url, fs)) = root("engine") else {
        return;
    };
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    let row = |i: u32| format!("row-{i:05}");
    let n = 200;
    let engine = Engine::open_on(fs, p("data"), p("wal/rs1"), Settings::default()).unwrap();
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
    engine.set_flushes_paused(true);
    engine.set_compactions_enabled(false);
    std::mem::forget((region, engine));

    let fs = fs::from_url(&url).unwrap();
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

/// HBase's fence: the master renames a (paused) server's WAL directory
/// and recovers the lease of its segments; the writer's next batch fails
/// and the split recovers exactly the acknowledged edits.
#[test]
fn a_fenced_writer_acknowledges_nothing_the_split_misses() {
    use ferrobase_storage::wal::{Wal, WalEdit, WalFamily, WalOptions, split};
    use ferrobase_types::{CellRun, CellType, Durability};

    let Some((_, fs)) = root("fence") else {
        return;
    };
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
    fs.fence_dir(p("wal/rs1"), p("wal/rs1.splitting")).unwrap();
    // The segment's lease is the master's now: the write itself fails,
    // and is reported as the fence (the server's cue to exit).
    let e = wal.append(&[edit(3)], Durability::SyncWal).unwrap_err();
    assert!(matches!(e, StorageError::Fenced(_)), "{e}");
    let e = wal.append(&[edit(4)], Durability::FsyncWal).unwrap_err();
    assert!(matches!(e, StorageError::Fenced(_)), "{e}");
    drop(wal);
    // Nothing was recreated under the old name.
    assert_eq!(fs.list(p("wal")).unwrap(), ["rs1.splitting"]);

    let region = p("data/t/r7");
    let report = split::split_wal_dir(&*fs, p("wal/rs1.splitting"), "rs1", &|id| {
        (id == 7).then(|| region.to_path_buf())
    })
    .unwrap();
    assert_eq!(report.torn_tail, None);
    let mut seqs = Vec::new();
    for f in split::recovered_files(&*fs, region).unwrap() {
        split::read_recovered(&*fs, &f, &mut |e| {
            seqs.push(e.seq);
            Ok(())
        })
        .unwrap();
    }
    assert_eq!(seqs, vec![1, 2], "recovered edits");
}

/// Replication 3 on three DataNodes: one dies in the middle of a WAL
/// segment and of a store file, and nothing written is lost (the
/// pipelines go on with the two left).
#[test]
fn a_datanode_dying_under_writes_loses_nothing() {
    let Some(hdfs) = MiniHdfs::start() else {
        return;
    };
    let fs = fs::from_url(&hdfs.url("dn")).unwrap();
    fs.claim_dir(p("wal")).unwrap();
    let mut log = fs.create_log(p("wal/seg"), b"HDR").unwrap();
    let mut file = fs.create(p("data/f")).unwrap();
    let (mut want_log, mut want_file) = (b"HDR".to_vec(), Vec::new());
    for i in 0..200u32 {
        if i == 100 {
            assert_eq!(hdfs.stop_datanode(0), 2);
        }
        let batch = format!("batch-{i:05};").repeat(50);
        log.append(batch.as_bytes()).unwrap();
        want_log.extend_from_slice(batch.as_bytes());
        let chunk = vec![(i % 256) as u8; 100_000];
        file.write_all(&chunk).unwrap();
        want_file.extend_from_slice(&chunk);
    }
    file.finish().unwrap();
    drop(log);
    assert_eq!(read_log(&*fs, "wal/seg"), want_log);
    assert_eq!(fs.read(p("data/f")).unwrap().unwrap(), want_file);
    // The stopped DataNode comes back; every byte still reads the same.
    assert_eq!(hdfs.restart_datanodes(), 3);
    let (mut r, _) = fs.open_log(p("wal/seg")).unwrap();
    let mut back = Vec::new();
    r.read_to_end(&mut back).unwrap();
    assert_eq!(back, want_log);
}
