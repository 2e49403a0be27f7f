//! The `Storage` contract on a real HDFS (a MiniDFSCluster of one
//! NameNode and three DataNodes, `fs::hdfs::testing`), then what only
//! HDFS has: files across blocks, the engine recovering a killed
//! process's open WAL segment (lease recovery), the fence of a paused
//! writer, a DataNode dying under writes, errors for an unreachable
//! NameNode, a permission and a missing path, blocks damaged on the
//! DataNodes' disks, and writes past a space quota.
//!
//! One cluster serves every test of this file (each under its own root
//! path); the DataNode test starts its own, since it stops one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::StorageError;
use ferrobase_storage::fs::hdfs::testing::MiniHdfs;
use ferrobase_storage::fs::{self, Storage};
use ferrobase_types::Settings;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
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

/// The replicas of a one-block file on the cluster's DataNodes: every
/// `blk_<id>` file under the data directories holding exactly `content`,
/// with its `.meta` file (HDFS's per-chunk checksums of the block).
fn replicas(hdfs: &MiniHdfs, content: &[u8]) -> Vec<(PathBuf, PathBuf)> {
    let mut found = Vec::new();
    let mut dirs = vec![hdfs.data_dir()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if name.starts_with("blk_")
                && !name.ends_with(".meta")
                && std::fs::metadata(&path).is_ok_and(|m| m.len() == content.len() as u64)
                && std::fs::read(&path).is_ok_and(|b| b == content)
            {
                let meta = std::fs::read_dir(&dir)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .find(|m| {
                        let n = m.file_name().unwrap().to_string_lossy().into_owned();
                        n.starts_with(&format!("{name}_")) && n.ends_with(".meta")
                    })
                    .unwrap_or_else(|| panic!("no .meta beside {}", path.display()));
                found.push((path, meta));
            }
        }
    }
    found.sort();
    found
}

/// Flips every bit of `len` bytes at `offset` of a block file, in place
/// (the DataNode reads its finalized block files at each request).
fn flip(block: &Path, offset: u64, len: usize) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(block)
        .unwrap();
    let mut buf = vec![0u8; len];
    f.read_exact_at(&mut buf, offset).unwrap();
    for b in &mut buf {
        *b = !*b;
    }
    f.write_all_at(&buf, offset).unwrap();
    f.sync_all().unwrap();
}

/// Rewrites a block's `.meta` checksums to match its (damaged) bytes: the
/// damage HDFS cannot see, as when bytes went bad before the client
/// checksummed them. Layout: a 2-byte version, the checksum type (1 byte:
/// 1 CRC32, 2 CRC32C), bytes per checksum (4, big-endian), then one
/// big-endian CRC per chunk.
fn rechecksum(block: &Path, meta: &Path) {
    let data = std::fs::read(block).unwrap();
    let mut m = std::fs::read(meta).unwrap();
    assert_eq!(m[2], 2, "{}: CRC32C checksums", meta.display());
    let per = u32::from_be_bytes(m[3..7].try_into().unwrap()) as usize;
    for (i, chunk) in data.chunks(per).enumerate() {
        let at = 7 + 4 * i;
        m[at..at + 4].copy_from_slice(&crc32c::crc32c(chunk).to_be_bytes());
    }
    std::fs::write(meta, m).unwrap();
}

/// A store file of `rows` rows in small (1 KiB) blocks, written through
/// the `Storage` trait; its bytes and entries. Values start with `salt`:
/// no two tests' files (on the shared cluster) have the same bytes.
fn write_store_file(
    fs: &dyn Storage,
    path: &str,
    salt: &str,
    rows: u32,
) -> (Vec<u8>, Vec<StoreEntry>) {
    use ferrobase_storage::storefile::StoreFileWriter;
    use ferrobase_types::{CellType, FamilyDescriptor, key};
    let mut family = FamilyDescriptor::new("f").unwrap();
    family.blocksize = 1024;
    let mut w = StoreFileWriter::create_on(fs, p(path), &family, u64::from(rows)).unwrap();
    let mut want = Vec::new();
    for i in 0..rows {
        let k = key::encode(
            format!("row-{i:06}").as_bytes(),
            b"f",
            b"q",
            7,
            CellType::Put,
        );
        let v = format!("{salt}-{i:06}-").repeat(4).into_bytes();
        w.append(&k, u64::from(i) + 1, &v).unwrap();
        want.push((k, u64::from(i) + 1, v));
    }
    w.finish().unwrap();
    (fs.read(p(path)).unwrap().unwrap(), want)
}

type StoreEntry = (Vec<u8>, u64, Vec<u8>);

/// Opens and scans a store file; the entries, or the first error.
fn scan_store_file(fs: &dyn Storage, path: &str) -> Result<Vec<StoreEntry>, StorageError> {
    use ferrobase_storage::iter::CellIterator;
    use ferrobase_storage::storefile::StoreFileReader;
    let r = StoreFileReader::open_on(fs, p(path), None)?;
    let mut it = r.scanner(false);
    it.seek_to_first()?;
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.seq(), it.value().to_vec()));
        it.next()?;
    }
    Ok(got)
}

/// A store file whose block is damaged on every DataNode: HDFS's own
/// checksums (the client checks each 512-byte chunk against the
/// DataNode's `.meta`) reject every replica, and the read fails naming
/// the file, the offset and the cause. Never different data, never a
/// panic. Damaged on one or two of three DataNodes, it reads whole: the
/// client skips a replica that fails its checksum for the next.
#[test]
fn a_corrupt_block_fails_the_read_naming_the_file_unless_a_replica_is_good() {
    let Some(hdfs) = MiniHdfs::shared() else {
        return;
    };
    let fs = fs::from_url(&hdfs.url("corrupt")).unwrap();
    let (bytes, want) = write_store_file(&*fs, "t/one", "all-or-some", 2000);
    assert_eq!(scan_store_file(&*fs, "t/one").unwrap(), want);
    let blocks = replicas(hdfs, &bytes);
    assert_eq!(blocks.len(), 3, "three replicas of {} bytes", bytes.len());

    // A data block's bytes in the middle of the file (the trailer, index
    // and Bloom filter at its end stay good, so it opens). Each replica
    // alone, then each pair, is damaged (and repaired after): the
    // NameNode lists the replicas in one order for this client, so some
    // of these cases put a damaged replica first, and one a good one
    // last.
    let at = bytes.len() as u64 / 3;
    let flip_each = |which: &[usize]| {
        for &i in which {
            flip(&blocks[i].0, at, 16);
        }
    };
    for damaged in [&[0][..], &[1], &[2], &[0, 1], &[0, 2], &[1, 2]] {
        flip_each(damaged);
        // A fresh reader (each remembers the DataNodes that failed it).
        assert_eq!(
            scan_store_file(&*fs, "t/one").unwrap(),
            want,
            "replicas {damaged:?} damaged"
        );
        assert_eq!(fs.read(p("t/one")).unwrap().unwrap(), bytes);
        flip_each(damaged);
    }

    flip_each(&[0, 1, 2]);
    let shown = fs.display(p("t/one"));
    let e = scan_store_file(&*fs, "t/one").expect_err("every replica damaged");
    let msg = e.to_string();
    assert!(msg.contains(&shown), "names the file: {msg}");
    assert!(msg.contains("checksum"), "names the cause: {msg}");
    assert!(
        !msg.contains("DatanodeInfoProto"),
        "no protobuf dump: {msg}"
    );
    // The whole-file read fails the same way, naming the offset of the
    // read that met the damage (0: one read of the whole file).
    let e = fs.read(p("t/one")).expect_err("every replica damaged");
    let msg = e.to_string();
    assert!(msg.contains(&shown), "{msg}");
    assert!(msg.contains("at offset 0"), "{msg}");
    // A read of the good bytes before the damage still succeeds.
    let r = fs.open(p("t/one")).unwrap();
    let mut head = vec![0u8; 4096];
    r.read_exact_at(&mut head, 0).unwrap();
    assert_eq!(head, bytes[..4096]);
    let mut buf = vec![0u8; 64];
    let e = r.read_exact_at(&mut buf, at - 8).unwrap_err();
    assert!(
        e.to_string().contains(&format!("at offset {}", at - 8)),
        "{e}"
    );
}

/// Damage HDFS cannot see (the `.meta` checksums rewritten to match the
/// damaged bytes on every DataNode, as when bytes went bad before the
/// client checksummed them): the store file's own CRCs catch it, as
/// `Corrupt` naming the file and the damaged block's offset.
#[test]
fn damage_hdfs_checksums_miss_is_caught_by_the_store_file_crc() {
    let Some(hdfs) = MiniHdfs::shared() else {
        return;
    };
    let fs = fs::from_url(&hdfs.url("corrupt-crc")).unwrap();
    let (bytes, want) = write_store_file(&*fs, "t/one", "unseen", 2000);
    assert_eq!(scan_store_file(&*fs, "t/one").unwrap(), want);
    let blocks = replicas(hdfs, &bytes);
    assert_eq!(blocks.len(), 3);
    let at = bytes.len() as u64 / 3;
    for (block, meta) in &blocks {
        flip(block, at, 16);
        rechecksum(block, meta);
    }
    // HDFS hands out the damaged bytes...
    let raw = fs.read(p("t/one")).unwrap().unwrap();
    assert_ne!(raw, bytes);
    // ...and the store file's CRC refuses them.
    match scan_store_file(&*fs, "t/one") {
        Err(StorageError::Corrupt { path, offset, what }) => {
            assert_eq!(path, PathBuf::from(fs.display(p("t/one"))), "{what}");
            // The frame of the 1 KiB block holding the damaged bytes.
            assert!(
                offset <= at && at - offset < 4096,
                "{offset} vs {at}: {what}"
            );
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

/// A directory out of space (an HDFS space quota, what an operator sets
/// with `hdfs dfsadmin -setSpaceQuota`; the NameNode refuses the next
/// block that would pass it): the write that needs the block fails,
/// naming the file and the quota; nothing it acknowledged before is lost,
/// the failed file does not appear, and writes succeed again once the
/// quota is lifted.
#[test]
fn a_write_past_a_space_quota_fails_naming_the_path_and_loses_nothing() {
    let Some(hdfs) = MiniHdfs::shared() else {
        return;
    };
    let settings = Settings {
        dfs_blocksize: 1 << 20,
        wal_block_size: 1 << 20,
        ..Settings::default()
    };
    let fs = fs::open_root(&hdfs.url("quota"), &settings).unwrap();
    fs.create_dir_all(p("data")).unwrap();
    fs.claim_dir(p("wal")).unwrap();
    // Raw bytes (length × replication 3); a block being written counts
    // whole until it is complete: 8 MiB holds a few 700 KB files, 5 MiB
    // one 1 MiB WAL block.
    hdfs.set_space_quota("quota/data", Some(8 << 20));
    hdfs.set_space_quota("quota/wal", Some(5 << 20));

    let file = |i: usize| vec![(i % 251) as u8; 700_000];
    let mut written = Vec::new();
    let e = loop {
        let i = written.len();
        assert!(i < 20, "the quota never refused a file");
        match fs.put(p(&format!("data/f{i}")), &file(i)) {
            Ok(()) => written.push(i),
            Err(e) => break e,
        }
    };
    assert!(!written.is_empty(), "the quota left room for a file: {e}");
    let failed = written.len();
    assert_eq!(io_kind(&e), Some(io::ErrorKind::QuotaExceeded), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains(&fs.display(p(&format!("data/f{failed}")))),
        "names the file: {msg}"
    );
    assert!(msg.contains("DiskSpace quota of"), "names the cause: {msg}");
    assert!(!msg.contains("\tat "), "no Java stack trace: {msg}");
    // The failed file is not there, not even its temporary name; every
    // acknowledged one reads back whole.
    let names: Vec<String> = written.iter().map(|i| format!("f{i}")).collect();
    assert_eq!(fs.list(p("data")).unwrap(), names);
    for &i in &written {
        assert_eq!(fs.read(p(&format!("data/f{i}"))).unwrap().unwrap(), file(i));
    }

    // A WAL segment: batches are acknowledged (hsync'ed) until one needs a
    // block past the quota.
    let mut log = fs.create_log(p("wal/seg"), b"HDR").unwrap();
    let mut acked = b"HDR".to_vec();
    let batch = |i: usize| format!("batch-{i:06};").repeat(9_000);
    let e = loop {
        let i = acked.len();
        assert!(i < 4 << 20, "the quota never refused a batch");
        let b = batch(i);
        match log.append(b.as_bytes()) {
            Ok(()) => acked.extend_from_slice(b.as_bytes()),
            Err(e) => break (e, b.len()),
        }
    };
    let (e, failed_len) = e;
    assert_eq!(io_kind(&e), Some(io::ErrorKind::QuotaExceeded), "{e}");
    let msg = e.to_string();
    assert!(msg.contains(&fs.display(p("wal/seg"))), "{msg}");
    assert!(msg.contains("DiskSpace quota of"), "{msg}");
    // Nor can a new segment start (its header needs a block), and none
    // is left behind under its name.
    let e = fs.create_log(p("wal/seg2"), b"HDR").err().expect("no room");
    assert_eq!(io_kind(&e), Some(io::ErrorKind::QuotaExceeded), "{e}");
    assert!(e.to_string().contains(&fs.display(p("wal/seg2"))), "{e}");
    assert!(!fs.log_exists(p("wal/seg2")).unwrap());
    drop(log);
    // Read after a lease recovery: every acknowledged batch, then at most
    // a part of the refused one (the bytes that fit its last block), which
    // the WAL's record checksums reject as a torn tail.
    let back = read_log(&*fs, "wal/seg");
    assert!(back.starts_with(&acked), "an acknowledged batch was lost");
    assert!(back.len() < acked.len() + failed_len, "{}", back.len());

    // Space is back: the same writes succeed.
    hdfs.set_space_quota("quota/data", None);
    hdfs.set_space_quota("quota/wal", None);
    fs.put(p(&format!("data/f{failed}")), &file(failed))
        .unwrap();
    assert_eq!(
        fs.read(p(&format!("data/f{failed}"))).unwrap().unwrap(),
        file(failed)
    );
    let mut log = fs.create_log(p("wal/seg2"), b"HDR").unwrap();
    log.append(batch(0).as_bytes()).unwrap();
}

/// The engine on a root whose WAL directory runs out of quota: the write
/// that cannot be logged fails (naming the segment and the quota) and is
/// not acknowledged; once the quota is lifted the same engine writes
/// again, and after a crash a new engine recovers every acknowledged
/// write.
#[test]
fn the_engine_acknowledges_no_write_past_a_space_quota() {
    use ferrobase_storage::{Engine, Get, RegionInfo};
    use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};

    let Some(hdfs) = MiniHdfs::shared() else {
        return;
    };
    let settings = Settings {
        wal_block_size: 1 << 20,
        ..Settings::default()
    };
    let url = hdfs.url("quota-engine");
    let fs = fs::open_root(&url, &settings).unwrap();
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    let row = |i: u32| format!("row-{i:05}");
    let value = |i: u32| format!("v{i:05}-").repeat(2_000);
    let engine = Engine::open_on(fs, p("data"), p("wal/rs1"), settings.clone()).unwrap();
    let region = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    hdfs.set_space_quota("quota-engine/wal", Some(5 << 20));
    let mut acked = Vec::new();
    let e = loop {
        let i = acked.len() as u32;
        assert!(i < 2_000, "the quota never refused a write");
        let m = RowMutation::new(row(i))
            .put("f", "q", value(i))
            .with_durability(Durability::SyncWal);
        match region.mutate(m) {
            Ok(_) => acked.push(i),
            Err(e) => break e,
        }
    };
    assert!(!acked.is_empty(), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("{url}/wal/rs1/")),
        "names the segment: {msg}"
    );
    assert!(msg.contains("DiskSpace quota of"), "names the cause: {msg}");
    // Space is back: the WAL resumes (at most once a second an appender
    // tries: the failed segment is cut back to its last whole batch and a
    // new one starts) and this same engine acknowledges writes again.
    hdfs.set_space_quota("quota-engine/wal", None);
    let mut resumed = None;
    for attempt in 0..300 {
        let i = 10_000 + attempt;
        let m = RowMutation::new(row(i))
            .put("f", "q", value(i))
            .with_durability(Durability::SyncWal);
        if region.mutate(m).is_ok() {
            resumed = Some(i);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let resumed = resumed.expect("writes succeed again once the quota is lifted");
    acked.push(resumed);
    // A crash: the engine is never closed, its segment stays open under
    // its lease until the next engine recovers it.
    engine.set_flushes_paused(true);
    std::mem::forget((region, engine));

    let fs = fs::open_root(&url, &settings).unwrap();
    let engine = Engine::open_on(fs, p("data"), p("wal/rs1"), settings).unwrap();
    let region = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    for &i in &acked {
        let cells = region.get(&Get::new(row(i))).unwrap();
        assert_eq!(cells.len(), 1, "acknowledged {} lost", row(i));
        assert_eq!(&cells[0].value[..], value(i).as_bytes());
    }
    engine.close().unwrap();
}

/// The same through the engine: a store file its flush wrote, damaged on
/// every DataNode, fails the reads that need the damaged block with an
/// error naming that store file; every other read returns its own value.
#[test]
fn the_engine_reports_a_corrupt_store_file_by_name() {
    use ferrobase_storage::{Engine, Get, RegionInfo};
    use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};

    let Some(hdfs) = MiniHdfs::shared() else {
        return;
    };
    let url = hdfs.url("corrupt-engine");
    let fs = fs::from_url(&url).unwrap();
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    let row = |i: u32| format!("row-{i:05}");
    let value = |i: u32| format!("engine-{i:05}-").repeat(8);
    let n = 3000;
    let engine = Engine::open_on(fs.clone(), p("data"), p("wal/rs1"), Settings::default()).unwrap();
    let region = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    for i in 0..n {
        let m = RowMutation::new(row(i))
            .put("f", "q", value(i))
            .with_durability(Durability::AsyncWal);
        region.mutate(m).unwrap();
    }
    region.flush(true).unwrap();
    drop(region);
    engine.close().unwrap();

    // The one store file of family f.
    let mut store_files = Vec::new();
    let mut dirs = vec![PathBuf::from("data")];
    while let Some(dir) = dirs.pop() {
        // Listing a file fails ("is not a directory").
        let Ok(names) = fs.list(&dir) else {
            continue;
        };
        for name in names {
            let child = dir.join(&name);
            // data/t/<region>/f/<store file>
            if dir.file_name().is_some_and(|d| d == "f") {
                store_files.push(child);
            } else {
                dirs.push(child);
            }
        }
    }
    assert_eq!(store_files.len(), 1, "{store_files:?}");
    let file = &store_files[0];
    let bytes = fs.read(file).unwrap().unwrap();
    let blocks = replicas(hdfs, &bytes);
    assert_eq!(blocks.len(), 3);
    let at = bytes.len() as u64 / 3;
    for (block, _) in &blocks {
        flip(block, at, 16);
    }

    let engine = Engine::open_on(fs.clone(), p("data"), p("wal/rs1"), Settings::default()).unwrap();
    let region = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    let shown = fs.display(file);
    let mut failed = 0;
    for i in 0..n {
        match region.get(&Get::new(row(i))) {
            Ok(cells) => {
                assert_eq!(cells.len(), 1, "{}", row(i));
                assert_eq!(&cells[0].value[..], value(i).as_bytes(), "{}", row(i));
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains(&shown), "names the store file: {msg}");
                failed += 1;
            }
        }
    }
    assert!(failed > 0, "no read met the damaged block");
    engine.close().unwrap();
}
