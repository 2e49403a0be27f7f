//! The `Storage` contract every backend meets, shared by the tests of
//! each (`s3_storage.rs`, `hdfs_storage.rs`): one generic [`contract`] in
//! terms any backend must meet, and small helpers.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use ferrobase_storage::StorageError;
use ferrobase_storage::fs::Storage;
use std::io::{self, Read, Write};
use std::path::Path;

pub fn p(s: &str) -> &Path {
    Path::new(s)
}

pub fn io_kind(e: &StorageError) -> Option<io::ErrorKind> {
    match e {
        StorageError::Io { source, .. } => Some(source.kind()),
        _ => None,
    }
}

pub fn read_log(fs: &dyn Storage, path: &str) -> Vec<u8> {
    let (mut r, len) = fs.open_log(p(path)).unwrap();
    let mut out = Vec::new();
    r.read_to_end(&mut out).unwrap();
    assert_eq!(out.len() as u64, len, "{path}: open_log's length");
    out
}

/// Every guarantee of `Storage` the engine relies on, in terms both
/// backends must meet.
pub fn contract(fs: &dyn Storage) {
    // Missing things.
    assert_eq!(fs.list(p("nothing")).unwrap(), Vec::<String>::new());
    assert!(!fs.exists(p("a/x")).unwrap());
    assert_eq!(fs.read(p("a/x")).unwrap(), None);
    let e = fs.open(p("a/x")).unwrap_err();
    assert_eq!(io_kind(&e), Some(io::ErrorKind::NotFound), "{e}");
    fs.delete(p("a/x")).unwrap();
    fs.delete_all(p("nothing")).unwrap();
    fs.create_dir_all(p("a")).unwrap();

    // A file appears, whole, only at finish.
    let mut w = fs.create(p("a/x")).unwrap();
    w.write_all(b"hel").unwrap();
    w.write_all(b"lo").unwrap();
    w.flush().unwrap();
    assert!(!fs.exists(p("a/x")).unwrap());
    assert!(!fs.list(p("a")).unwrap().contains(&"x".to_string()));
    w.finish().unwrap();
    assert!(fs.exists(p("a/x")).unwrap());
    assert_eq!(fs.read(p("a/x")).unwrap().unwrap(), b"hello");

    // An unfinished writer leaves nothing behind.
    let mut w = fs.create(p("a/y")).unwrap();
    w.write_all(b"partial").unwrap();
    drop(w);
    assert!(!fs.exists(p("a/y")).unwrap());

    // Listing: files and directories directly in `dir`, sorted.
    fs.put(p("a/sub/deep/z"), b"z").unwrap();
    fs.put(p("a/b"), b"b").unwrap();
    assert_eq!(fs.list(p("a")).unwrap(), ["b", "sub", "x"]);
    assert_eq!(fs.list(p("a/sub")).unwrap(), ["deep"]);

    // A move (the snapshot archive): whole at the new name, gone from the
    // old one, parents made as needed; the copy helper leaves the source.
    fs.put(p("m/one"), b"moved bytes").unwrap();
    fs.rename(p("m/one"), p("archive/m/deep/one")).unwrap();
    assert!(!fs.exists(p("m/one")).unwrap());
    assert_eq!(
        fs.read(p("archive/m/deep/one")).unwrap().unwrap(),
        b"moved bytes"
    );
    let copied = ferrobase_storage::fs::copy_file(fs, p("archive/m/deep/one"), p("m/two")).unwrap();
    assert_eq!(copied, 11);
    assert_eq!(fs.read(p("m/two")).unwrap().unwrap(), b"moved bytes");
    assert!(fs.exists(p("archive/m/deep/one")).unwrap());
    fs.delete_all(p("archive")).unwrap();
    fs.delete_all(p("m")).unwrap();

    // Positional reads, and past the end.
    let r = fs.open(p("a/x")).unwrap();
    assert_eq!((r.len(), r.is_empty()), (5, false));
    let mut buf = [0u8; 3];
    r.read_exact_at(&mut buf, 2).unwrap();
    assert_eq!(&buf, b"llo");
    r.read_exact_at(&mut buf[..0], 5).unwrap();
    for offset in [3, 5, 1 << 40] {
        let e = r.read_exact_at(&mut buf, offset).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "at {offset}: {e}");
    }

    // put replaces; put_new creates only once.
    fs.put(p("a/b"), b"b2").unwrap();
    assert_eq!(fs.read(p("a/b")).unwrap().unwrap(), b"b2");
    assert!(fs.put_new(p("a/e"), b"1").unwrap());
    assert!(!fs.put_new(p("a/e"), b"2").unwrap());
    assert_eq!(fs.read(p("a/e")).unwrap().unwrap(), b"1");

    // Deletes.
    fs.delete(p("a/e")).unwrap();
    assert!(!fs.exists(p("a/e")).unwrap());
    fs.delete_all(p("a/sub")).unwrap();
    assert_eq!(fs.list(p("a")).unwrap(), ["b", "x"]);
    assert_eq!(fs.read(p("a/sub/deep/z")).unwrap(), None);

    // WAL segments: header, appended batches, one byte stream.
    assert!(!fs.log_exists(p("wal/s1/seg1")).unwrap());
    let e = fs.open_log(p("wal/s1/seg1")).err().expect("no segment yet");
    assert_eq!(io_kind(&e), Some(io::ErrorKind::NotFound), "{e}");
    let claim = fs.claim_dir(p("wal/s1")).unwrap();
    assert!(claim.still_held().unwrap());
    let mut log = fs.create_log(p("wal/s1/seg1"), b"HDR").unwrap();
    assert!(fs.log_exists(p("wal/s1/seg1")).unwrap());
    assert_eq!(read_log(fs, "wal/s1/seg1"), b"HDR");
    for batch in [&b"aaaa"[..], b"", b"bbbb", b"cccc"] {
        log.append(batch).unwrap();
    }
    log.sync().unwrap();
    assert_eq!(read_log(fs, "wal/s1/seg1"), b"HDRaaaabbbbcccc");
    let e = fs
        .create_log(p("wal/s1/seg1"), b"HDR")
        .err()
        .expect("exists");
    assert_eq!(io_kind(&e), Some(io::ErrorKind::AlreadyExists), "{e}");
    assert!(fs.list(p("wal/s1")).unwrap().contains(&"seg1".to_string()));

    // Truncation inside a batch, at a batch boundary, and to nothing.
    fs.truncate_log(p("wal/s1/seg1"), 9).unwrap();
    assert_eq!(read_log(fs, "wal/s1/seg1"), b"HDRaaaabb");
    fs.truncate_log(p("wal/s1/seg1"), 7).unwrap();
    assert_eq!(read_log(fs, "wal/s1/seg1"), b"HDRaaaa");
    let mut log2 = fs.create_log(p("wal/s1/seg2"), b"H2").unwrap();
    log2.append(b"x").unwrap();
    fs.truncate_log(p("wal/s1/seg2"), 0).unwrap();
    assert!(fs.log_exists(p("wal/s1/seg2")).unwrap());
    assert_eq!(read_log(fs, "wal/s1/seg2"), b"");
    fs.delete_log(p("wal/s1/seg2")).unwrap();
    assert!(!fs.log_exists(p("wal/s1/seg2")).unwrap());
    fs.delete_log(p("wal/s1/seg2")).unwrap();

    // The fence: the claim is lost, and every acknowledged batch (its
    // writer's claim held after it) is under the new name.
    // (A segment is never appended to after a truncation, which is for
    // recovery: a new segment takes the new batches.)
    drop(log);
    let mut log3 = fs.create_log(p("wal/s1/seg3"), b"H3").unwrap();
    log3.append(b"dddd").unwrap();
    log3.sync().unwrap();
    assert!(claim.still_held().unwrap(), "so this batch is acknowledged");
    fs.fence_dir(p("wal/s1"), p("wal/s1.splitting")).unwrap();
    assert!(!claim.still_held().unwrap());
    assert!(
        fs.list(p("wal"))
            .unwrap()
            .contains(&"s1.splitting".to_string())
    );
    let moved = fs.list(p("wal/s1.splitting")).unwrap();
    assert!(moved.contains(&"seg1".to_string()) && moved.contains(&"seg3".to_string()));
    assert_eq!(read_log(fs, "wal/s1.splitting/seg1"), b"HDRaaaa");
    assert_eq!(read_log(fs, "wal/s1.splitting/seg3"), b"H3dddd");
    assert!(!fs.log_exists(p("wal/s1/seg1")).unwrap());
    assert!(!fs.log_exists(p("wal/s1/seg3")).unwrap());
    // A new owner of the old name is a different claim.
    let again = fs.claim_dir(p("wal/s1")).unwrap();
    assert!(again.still_held().unwrap());
    assert!(!claim.still_held().unwrap());

    // Lock: a local flock, or nothing (the etcd lease covers S3).
    drop(fs.lock_dir(p("a")).unwrap());
}
