//! The stamp protocol of the row cache, one step at a time.

use super::*;
use ferrobase_types::CellType;

fn cell(row: &str, ts: u64, value: &str) -> Cell {
    Cell {
        row: Bytes::from(row.to_string()),
        family: Bytes::from_static(b"f"),
        qualifier: Bytes::from_static(b"q"),
        timestamp: ts,
        cell_type: CellType::Put,
        value: Bytes::from(value.to_string()),
    }
}

const AT: (u64, u64) = (1 << 32, 1 << 32);

fn row() -> Bytes {
    Bytes::from_static(b"r")
}

fn spec() -> Bytes {
    Bytes::from_static(b"spec")
}

fn miss(c: &RowCache) -> u64 {
    match c.lookup(AT, &row(), &spec(), 0) {
        Lookup::Miss(stamp) => stamp,
        Lookup::Hit(_) => panic!("expected a miss, got a hit"),
        Lookup::Bypass => panic!("expected a miss, got a bypass"),
    }
}

#[test]
fn a_filled_get_hits_until_a_write_begins() {
    let c = RowCache::new(1 << 20);
    let stamp = miss(&c);
    c.fill(
        AT,
        (&row(), &spec()),
        stamp,
        (&[cell("r", 1, "a")], u64::MAX),
    );
    match c.lookup(AT, &row(), &spec(), 0) {
        Lookup::Hit(cells) => assert_eq!(cells, vec![cell("r", 1, "a")]),
        _ => panic!("expected a hit"),
    }
    // A write in flight: no lookups at all.
    let token = c.begin_write(AT.0, b"r");
    assert!(matches!(c.lookup(AT, &row(), &spec(), 0), Lookup::Bypass));
    c.end_write(token);
    // After it, the old entry never matches again.
    miss(&c);
    let s = c.stats();
    assert_eq!((s.hits, s.misses, s.bypasses), (1, 2, 1));
}

#[test]
fn a_fill_from_before_a_write_is_dropped() {
    let c = RowCache::new(1 << 20);
    let stamp = miss(&c);
    // The get read the region, then a write began and ended before it
    // filled the cache: what it read may be older than that write.
    let token = c.begin_write(AT.0, b"r");
    c.end_write(token);
    c.fill(
        AT,
        (&row(), &spec()),
        stamp,
        (&[cell("r", 1, "old")], u64::MAX),
    );
    miss(&c);
    // The same if the write began before the fill and ends after it.
    let stamp = miss(&c);
    let token = c.begin_write(AT.0, b"r");
    c.fill(
        AT,
        (&row(), &spec()),
        stamp,
        (&[cell("r", 1, "old")], u64::MAX),
    );
    c.end_write(token);
    miss(&c);
}

#[test]
fn entries_expire_at_their_deadline_and_odd_epochs_bypass() {
    let c = RowCache::new(1 << 20);
    let stamp = miss(&c);
    c.fill(AT, (&row(), &spec()), stamp, (&[cell("r", 1, "a")], 1_000));
    assert!(matches!(c.lookup(AT, &row(), &spec(), 999), Lookup::Hit(_)));
    assert!(matches!(
        c.lookup(AT, &row(), &spec(), 1_000),
        Lookup::Miss(_)
    ));
    assert!(matches!(
        c.lookup((AT.0, AT.1 + 1), &row(), &spec(), 0),
        Lookup::Bypass
    ));
}

#[test]
fn a_region_caches_only_gets_of_row_cache_families() {
    let mut f = FamilyDescriptor::new("f").unwrap();
    f.set("ROW_CACHE", "true").unwrap();
    f.set("TTL", "10").unwrap();
    let g = FamilyDescriptor::new("g").unwrap();
    let cache = Arc::new(RowCache::new(1 << 20));
    assert!(RegionRowCache::open(Some(&cache), std::slice::from_ref(&g)).is_none());
    assert!(RegionRowCache::open(None, std::slice::from_ref(&f)).is_none());
    let rc = RegionRowCache::open(Some(&cache), &[f, g]).unwrap();
    let mut columns = BTreeMap::new();
    assert!(
        rc.spec(&columns, 1, (0, u64::MAX)).is_none(),
        "all families"
    );
    columns.insert(Bytes::from_static(b"f"), None);
    let one = rc.spec(&columns, 1, (0, u64::MAX)).unwrap();
    assert_ne!(Some(one), rc.spec(&columns, 2, (0, u64::MAX)));
    columns.insert(Bytes::from_static(b"g"), None);
    assert!(rc.spec(&columns, 1, (0, u64::MAX)).is_none());
    // TTL 10 s: a cell written at 5,000 ms expires at 15,000.
    assert_eq!(rc.deadline(&[cell("r", 5_000, "a")]), 15_000);
    let (id, epoch) = rc.position();
    rc.begin_reload();
    assert_eq!(rc.position(), (id, epoch + 1));
    rc.end_reload();
    assert_eq!(rc.position(), (id, epoch + 2));
}
