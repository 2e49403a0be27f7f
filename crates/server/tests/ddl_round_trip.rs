//! DDL through the client against a real standalone server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use ferrobase_client::{ErrorCode, Get, SplitAlgorithm};
use ferrobase_types::{Compression, FamilyDescriptor, RowMutation, TableDescriptor};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ddl_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();

    // Create with every family attribute and explicit splits.
    let mut f = FamilyDescriptor::new("cf").unwrap();
    for (k, v) in [
        ("VERSIONS", "3"),
        ("MIN_VERSIONS", "1"),
        ("TTL", "259200"),
        ("BLOCKSIZE", "16384"),
        ("BLOCKCACHE", "false"),
        ("BLOOMFILTER", "ROWCOL"),
        ("COMPRESSION", "SNAPPY"),
        ("DATA_BLOCK_ENCODING", "PREFIX"),
        ("IN_MEMORY", "true"),
        ("KEEP_DELETED_CELLS", "TRUE"),
    ] {
        f.set(k, v).unwrap();
    }
    let desc = TableDescriptor::new("t1", vec![f]).unwrap();
    admin
        .create_table(&desc, &[Bytes::from("g"), Bytes::from("p")])
        .await
        .unwrap();
    let e = admin.create_table(&desc, &[]).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::TableExists));

    assert_eq!(admin.list_tables().await.unwrap(), vec!["t1".to_string()]);
    assert!(admin.exists("t1").await.unwrap());
    assert!(!admin.exists("nope").await.unwrap());
    let d = admin.describe("t1").await.unwrap();
    assert_eq!(d.descriptor, desc);
    assert!(d.enabled);
    assert_eq!(d.regions.len(), 3);
    assert_eq!(&d.regions[1].start_key[..], b"g");
    assert_eq!(
        admin.describe("nope").await.unwrap_err().code(),
        Some(ErrorCode::TableNotFound)
    );

    // Pre-split by algorithm.
    let t2 = common::table("t2", &["f"]);
    admin
        .create_table_presplit(&t2, 4, SplitAlgorithm::HexStringSplit)
        .await
        .unwrap();
    let d2 = admin.describe("t2").await.unwrap();
    assert_eq!(d2.regions.len(), 4);
    assert_eq!(&d2.regions[1].start_key[..], b"40000000");
    let t3 = common::table("t3", &["f"]);
    admin
        .create_table_presplit(&t3, 3, SplitAlgorithm::UniformSplit)
        .await
        .unwrap();
    assert_eq!(admin.describe("t3").await.unwrap().regions.len(), 3);

    // Invalid attribute: clear error, stable code.
    let e = admin
        .modify_family("t1", "cf", &[("COMPRESSION", "LZO")])
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidAttribute));
    assert!(e.to_string().contains("COMPRESSION"), "{e}");

    let t = conn.table("t1");
    t.put(RowMutation::new("a").put("cf", "q", "1"))
        .await
        .unwrap();
    t.put(RowMutation::new("z").put("cf", "q", "2"))
        .await
        .unwrap();

    // Drop needs a disabled table.
    let e = admin.drop_table("t1").await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::TableNotDisabled));
    assert!(e.to_string().contains("disable"), "{e}");

    // Disable: reads and writes fail with TABLE_DISABLED.
    admin.disable("t1").await.unwrap();
    assert!(!admin.is_enabled("t1").await.unwrap());
    let e = t.get(Get::new("a")).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::TableDisabled), "{e}");
    let e = t
        .put(RowMutation::new("a").put("cf", "q", "x"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::TableDisabled), "{e}");
    assert_eq!(
        admin.disable("t1").await.unwrap_err().code(),
        Some(ErrorCode::TableDisabled)
    );
    admin.enable("t1").await.unwrap();
    assert!(admin.is_enabled("t1").await.unwrap());
    let r = t.get(Get::new("a")).await.unwrap();
    assert_eq!(r.value(b"cf", b"q").unwrap(), &Bytes::from("1"));

    // Alter: add, modify, delete a family.
    admin
        .add_family("t1", &FamilyDescriptor::new("extra").unwrap())
        .await
        .unwrap();
    t.put(RowMutation::new("b").put("extra", "q", "e"))
        .await
        .unwrap();
    admin
        .modify_family("t1", "extra", &[("COMPRESSION", "LZ4"), ("VERSIONS", "5")])
        .await
        .unwrap();
    let d = admin.describe("t1").await.unwrap();
    let extra = d.descriptor.family(b"extra").unwrap();
    assert_eq!(extra.compression, Compression::Lz4);
    assert_eq!(extra.versions, 5);
    let r = t.get(Get::new("b")).await.unwrap();
    assert_eq!(r.value(b"extra", b"q").unwrap(), &Bytes::from("e"));
    admin.delete_family("t1", "extra").await.unwrap();
    let e = t
        .put(RowMutation::new("b").put("extra", "q", "e"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::FamilyNotFound), "{e}");
    assert_eq!(
        admin.delete_family("t1", "extra").await.unwrap_err().code(),
        Some(ErrorCode::FamilyNotFound)
    );

    // Truncate keeps schema and splits, loses rows.
    admin.truncate("t1").await.unwrap();
    assert!(t.get(Get::new("a")).await.unwrap().is_empty());
    let d = admin.describe("t1").await.unwrap();
    assert_eq!(d.regions.len(), 3);
    assert!(d.enabled);

    admin.disable("t1").await.unwrap();
    admin.drop_table("t1").await.unwrap();
    assert!(!admin.exists("t1").await.unwrap());
    assert_eq!(
        admin.list_tables().await.unwrap(),
        vec!["t2".to_string(), "t3".to_string()]
    );
    server.stop().await.unwrap();
}
