//! What every server must do for this client, run against ferrobase and
//! against Apache HBase: DDL with split keys and family attributes, Put,
//! Get, Delete, Multi across regions, scans forward and reversed over every
//! region with a small caching, a BufferedMutator, increments, appends,
//! checkAndMutate, and HBase's exception classes.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use ferrobase_hbase_client::{CheckAndMutate, CompareOp, Connection, Get, Scan};
use ferrobase_types::{FamilyDescriptor, RowMutation, TableDescriptor};

pub fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

pub fn row(i: u32) -> Bytes {
    Bytes::from(format!("row{i:05}"))
}

/// Creates `table` (family `f`, 3 versions, split at row01000 and
/// row02000) after dropping any older one.
pub async fn create(conn: &Connection, table: &str) {
    let admin = conn.admin();
    admin.drop_table_if_exists(table).await.unwrap();
    assert!(!admin.table_exists(table).await.unwrap());
    let mut f = FamilyDescriptor::new("f").unwrap();
    f.set("VERSIONS", "3").unwrap();
    f.set("BLOCKSIZE", "16384").unwrap();
    let desc = TableDescriptor::new(table, vec![f]).unwrap();
    admin
        .create_table(&desc, &[row(2000), row(1000)])
        .await
        .unwrap();
    assert!(admin.table_exists(table).await.unwrap());
    assert!(admin.is_table_enabled(table).await.unwrap());
    let regions = conn.region_locations(table).await.unwrap();
    let starts: Vec<Bytes> = regions.iter().map(|r| r.start_key.clone()).collect();
    assert_eq!(starts, [Bytes::new(), row(1000), row(2000)]);
}

/// The data calls on a table made by [`create`].
pub async fn exercise(conn: &Connection, table: &str) {
    let t = conn.table(table);

    // Single Put and Get, versions kept by the family's VERSIONS. Explicit
    // timestamps: two puts in one millisecond would share the server's.
    t.put(&RowMutation::new(b("single")).put_at(b("f"), "q", 1_000, b("v1")))
        .await
        .unwrap();
    t.put(&RowMutation::new(b("single")).put_at(b("f"), "q", 2_000, b("v2")))
        .await
        .unwrap();
    let cells = t.get(&Get::new(b("single")).family(b("f"))).await.unwrap();
    assert_eq!(cells.len(), 1);
    assert_eq!(&cells[0].value[..], b"v2");
    let cells = t
        .get(&Get::new(b("single")).column(b("f"), b("q")).versions(5))
        .await
        .unwrap();
    let values: Vec<&[u8]> = cells.iter().map(|c| &c.value[..]).collect();
    assert_eq!(values, [&b"v2"[..], b"v1"]);
    assert!(t.get(&Get::new(b("absent"))).await.unwrap().is_empty());

    // A batch across all three regions, then every row read back by a scan
    // that crosses the region boundaries in calls of 7 rows.
    let rows: Vec<RowMutation> = (0..3000)
        .map(|i| {
            RowMutation::new(row(i))
                .put(b("f"), "a", Bytes::from(format!("a{i}")))
                .put(b("f"), "b", Bytes::from(format!("b{i}")))
        })
        .collect();
    for r in t.batch(&rows).await {
        r.unwrap();
    }
    let scanned = t
        .scan_all(Scan::range(row(0), row(3000)).caching(7))
        .await
        .unwrap();
    assert_eq!(scanned.len(), 3000);
    for (i, cells) in scanned.iter().enumerate() {
        assert_eq!(cells[0].row, row(i as u32));
        assert_eq!(cells.len(), 2);
        assert_eq!(cells[1].value, Bytes::from(format!("b{i}")));
    }
    // A limit stops early and closes the scanner; a range inside one region.
    let limited = t
        .scan_all(Scan::range(row(990), Bytes::new()).limit(25))
        .await
        .unwrap();
    assert_eq!(limited.len(), 25);
    assert_eq!(limited[24][0].row, row(1014));
    let inner = t.scan_all(Scan::range(row(1500), row(1510))).await.unwrap();
    assert_eq!(inner.len(), 10);

    // A BufferedMutator with a small buffer flushes many times.
    let mut m = conn.buffered_mutator(table, 4096);
    for i in 3000..5000 {
        m.mutate(RowMutation::new(row(i)).put(b("f"), "a", b("buffered")))
            .await
            .unwrap();
    }
    assert!(m.flushes() > 10, "{} flushes", m.flushes());
    m.close().await.unwrap();
    let cells = t.get(&Get::new(row(4999))).await.unwrap();
    assert_eq!(&cells[0].value[..], b"buffered");

    // Deletes: a whole row, and a column.
    t.delete_row(row(5)).await.unwrap();
    assert!(t.get(&Get::new(row(5))).await.unwrap().is_empty());
    t.mutate(&RowMutation::new(row(6)).delete_column(b("f"), "a", u64::MAX >> 1))
        .await
        .unwrap();
    let left = t.get(&Get::new(row(6))).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(&left[0].qualifier[..], b"b");

    // HBase's exception classes reach the caller by name.
    let e = t
        .get(&Get::new(b("single")).family(b("nope")))
        .await
        .unwrap_err();
    assert!(e.class_is("NoSuchColumnFamilyException"), "{e}");
    let bad = t
        .batch(&[
            RowMutation::new(row(7)).put(b("nope"), "q", b("x")),
            RowMutation::new(row(8)).put(b("f"), "q", b("ok")),
        ])
        .await;
    assert!(
        bad[0]
            .as_ref()
            .unwrap_err()
            .class_is("NoSuchColumnFamilyException")
    );
    bad[1].as_ref().unwrap();
    let e = conn
        .table("no_such_table")
        .get(&Get::new(b("r")))
        .await
        .unwrap_err();
    assert!(e.class_is("TableNotFoundException"), "{e}");
}

/// Reversed scans, Increment, Append and checkAndMutate on a table
/// [`exercise`] filled (rows 0..5000 but row 5).
pub async fn reversed_and_atomic(conn: &Connection, table: &str) {
    let t = conn.table(table);

    // Reversed: from row02999 down to row00000, crossing both region
    // boundaries in calls of 7 rows; row 5 was deleted.
    let down = t
        .scan_all(Scan::range(row(2999), Bytes::new()).reversed().caching(7))
        .await
        .unwrap();
    assert_eq!(down.len(), 2999);
    assert_eq!(down[0][0].row, row(2999));
    assert_eq!(down[998][0].row, row(2001));
    assert_eq!(down[999][0].row, row(2000));
    assert_eq!(down[1000][0].row, row(1999));
    assert_eq!(down.last().unwrap()[0].row, row(0));
    assert!(down.windows(2).all(|w| w[0][0].row > w[1][0].row));
    // The whole table from its end; a stop row (excluded) on a region's
    // start key; a range inside one region; a limit.
    let all = t
        .scan_all(Scan::new().reversed().caching(500))
        .await
        .unwrap();
    assert_eq!(
        all.len(),
        4999 + 1,
        "rows 0..5000 less row 5, and \"single\""
    );
    assert_eq!(all[0][0].row, b("single"));
    let to_boundary = t
        .scan_all(Scan::range(row(1500), row(1000)).reversed())
        .await
        .unwrap();
    assert_eq!(to_boundary.len(), 500);
    assert_eq!(to_boundary.last().unwrap()[0].row, row(1001));
    let limited = t
        .scan_all(Scan::range(row(2003), Bytes::new()).reversed().limit(5))
        .await
        .unwrap();
    let rows: Vec<Bytes> = limited.iter().map(|r| r[0].row.clone()).collect();
    assert_eq!(
        rows,
        [row(2003), row(2002), row(2001), row(2000), row(1999)]
    );

    // Increment: an absent column counts from 0; several columns at once.
    assert_eq!(
        t.increment_column(b("counter"), b("f"), b("n"), 5)
            .await
            .unwrap(),
        5
    );
    assert_eq!(
        t.increment_column(b("counter"), b("f"), b("n"), -2)
            .await
            .unwrap(),
        3
    );
    let cells = t
        .increment(b("counter"), &[(b("f"), b("n"), 10), (b("f"), b("m"), 1)])
        .await
        .unwrap();
    let mut got: Vec<(Bytes, i64)> = cells
        .iter()
        .map(|c| {
            let v: [u8; 8] = c.value[..].try_into().unwrap();
            (c.qualifier.clone(), i64::from_be_bytes(v))
        })
        .collect();
    got.sort();
    assert_eq!(got, [(b("m"), 1), (b("n"), 13)]);
    // Incrementing a column that holds no 8-byte number is refused.
    let e = t
        .increment_column(b("single"), b("f"), b("q"), 1)
        .await
        .unwrap_err();
    assert!(e.class_is("DoNotRetryIOException"), "{e}");

    // Append: to an absent column, then to what is there.
    let cells = t
        .append(&RowMutation::new(b("log")).put(b("f"), "l", b("ab")))
        .await
        .unwrap();
    assert_eq!(&cells[0].value[..], b"ab");
    let cells = t
        .append(&RowMutation::new(b("log")).put(b("f"), "l", b("cd")))
        .await
        .unwrap();
    assert_eq!(&cells[0].value[..], b"abcd");

    // checkAndMutate: absent, equal, not equal, an operator ("expected OP
    // stored"), and a checked delete.
    let put = |v: &str| RowMutation::new(b("cas")).put(b("f"), "c", b(v));
    let absent = CheckAndMutate::if_not_exists(b("f"), b("c"));
    assert!(t.check_and_mutate(&absent, &put("1")).await.unwrap());
    assert!(!t.check_and_mutate(&absent, &put("x")).await.unwrap());
    let is_one = CheckAndMutate::if_equals(b("f"), b("c"), b("1"));
    assert!(t.check_and_mutate(&is_one, &put("2")).await.unwrap());
    assert!(!t.check_and_mutate(&is_one, &put("x")).await.unwrap());
    // "1" < "2" stored: passes.
    let below = CheckAndMutate::if_matches(b("f"), b("c"), CompareOp::Less, b("1"));
    assert!(t.check_and_mutate(&below, &put("3")).await.unwrap());
    let cells = t.get(&Get::new(b("cas"))).await.unwrap();
    assert_eq!(&cells[0].value[..], b"3");
    let is_three = CheckAndMutate::if_equals(b("f"), b("c"), b("3"));
    let delete = RowMutation::new(b("cas")).delete_column(b("f"), "c", u64::MAX >> 1);
    assert!(t.check_and_mutate(&is_three, &delete).await.unwrap());
    assert!(t.get(&Get::new(b("cas"))).await.unwrap().is_empty());
    // Bad input is refused before anything is sent.
    assert!(t.append(&RowMutation::new(b("log"))).await.is_err());
    assert!(
        t.increment(b("counter"), &[]).await.is_err(),
        "an increment of no columns"
    );
}

/// Flushes and major-compacts a table [`exercise`] filled: every region
/// holds rows, so each has something to flush; a second flush finds the
/// memstores empty; the major compaction returns once the servers report
/// no compaction, leaves one store file a region, and every row reads the
/// same afterwards.
pub async fn flush_and_compact(conn: &Connection, table: &str) {
    let admin = conn.admin();
    let t = conn.table(table);
    t.put(&RowMutation::new(row(10)).put(b("f"), "c", b("before flush")))
        .await
        .unwrap();
    let regions = conn.region_locations(table).await.unwrap().len();
    assert_eq!(admin.flush_table(table).await.unwrap(), regions);
    assert_eq!(admin.flush_table(table).await.unwrap(), 0);
    admin
        .major_compact_table(table, std::time::Duration::from_secs(120))
        .await
        .unwrap();
    // A major compaction leaves each region one store file, and only the
    // files served are listed.
    let files = admin.store_files(table).await.unwrap();
    assert_eq!(files.len(), regions, "{files:?}");
    let cells = t
        .get(&Get::new(row(10)).column(b("f"), b("c")))
        .await
        .unwrap();
    assert_eq!(&cells[0].value[..], b"before flush");
    let all = t
        .scan_all(Scan::range(row(0), row(5000)).caching(500))
        .await
        .unwrap();
    // Rows 0..5000 less the deleted row 5.
    assert_eq!(all.len(), 4999);
    let e = admin.flush_table("no_such_table").await.unwrap_err();
    assert!(e.class_is("TableNotFoundException"), "{e}");
}

/// Disables and deletes `table`.
pub async fn drop(conn: &Connection, table: &str) {
    let admin = conn.admin();
    admin.disable_table(table).await.unwrap();
    assert!(!admin.is_table_enabled(table).await.unwrap());
    admin.delete_table(table).await.unwrap();
    assert!(!admin.table_exists(table).await.unwrap());
}
