//! A linked store file that the archive moves while it is open, on S3 (a
//! real moto server), where a move is a copy and a delete: the open
//! reader finds the object gone and reads on from `archive/`; with nothing
//! holding it, the file is deleted and the read names what is missing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::archive::{self, Holds, Retired};
use ferrobase_storage::file_link;
use ferrobase_storage::fs::s3::testing::MotoServer;
use ferrobase_storage::fs::{self, Storage};
use ferrobase_storage::snapshot_manifest::SnapshotLayout;
use std::path::Path;
use std::sync::Arc;

#[test]
fn an_open_link_follows_its_file_into_the_archive_on_s3() {
    let moto = MotoServer::start();
    let fs: Arc<dyn Storage> = fs::from_url(&moto.url("links")).unwrap();
    let layout = SnapshotLayout::for_data_dir(Path::new("data"));
    let rel = "src/0000000000000001/f/0000000000000002.sf";
    let bytes: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    fs.put(&layout.live_path(rel), &bytes).unwrap();

    // The clone's table holds the file, then opens it where it is.
    file_link::hold(&*fs, &layout, "copy", [rel.to_string()]).unwrap();
    let (reader, at) = file_link::open(&fs, &layout, rel).unwrap();
    assert_eq!(at, layout.live_path(rel));
    let mut buf = vec![0u8; 1000];
    reader.read_exact_at(&mut buf, 5000).unwrap();
    assert_eq!(buf, bytes[5000..6000]);

    // The source compacts the file away: held, so it is moved (copied,
    // then deleted from data/), and the open reader reads on.
    let holds = Holds::load(&*fs, &layout).unwrap();
    assert!(holds.holds(rel), "a link hold counts like a snapshot");
    let retired = archive::retire(&*fs, &layout, &holds, &layout.live_path(rel)).unwrap();
    assert_eq!(retired, Retired::Archived);
    assert!(!fs.exists(&layout.live_path(rel)).unwrap());
    reader.read_exact_at(&mut buf, 90_000).unwrap();
    assert_eq!(buf, bytes[90_000..91_000]);
    reader.read_exact_at(&mut buf, 0).unwrap();
    assert_eq!(buf, bytes[..1000]);

    // The cleaner keeps it while the hold names it...
    assert_eq!(archive::clean(&*fs, &layout).unwrap().deleted, 0);
    // ...and frees it once the hold is released.
    file_link::LinkHold::delete(&*fs, &layout, "copy").unwrap();
    assert_eq!(archive::clean(&*fs, &layout).unwrap().deleted, 1);
    let e = file_link::open(&fs, &layout, rel).unwrap_err().to_string();
    assert!(e.contains("neither data/ nor archive/"), "{e}");
    assert!(e.contains("s3://"), "the message names the root: {e}");
}
