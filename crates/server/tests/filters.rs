//! Server-side filters, reversed scans and the read options the shell
//! needs, end to end through the client against a standalone server with
//! a table pre-split into three regions ([r0, r3), [r3, r6), [r6, ...)).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use ferrobase_client::{ErrorCode, Get, RowResult, Scan, Table};
use ferrobase_types::{FamilyDescriptor, RowMutation, TableDescriptor};

const ROWS: u32 = 9;

/// Row `r{i}`: f:a = a{i}; f:b = "old"@100 then b{i}@200; f:c = i on even
/// rows only; g:x = x.
async fn load(t: &Table) {
    for i in 0..ROWS {
        let mut m = RowMutation::new(format!("r{i}"))
            .put_at("f", "a", 100, format!("a{i}"))
            .put_at("f", "b", 100, "old")
            .put_at("f", "b", 200, format!("b{i}"))
            .put_at("g", "x", 100, "x");
        if i % 2 == 0 {
            m = m.put_at("f", "c", 100, i.to_string());
        }
        t.put(m).await.unwrap();
    }
}

fn rows(results: &[RowResult]) -> Vec<String> {
    results
        .iter()
        .map(|r| String::from_utf8_lossy(&r.row).into_owned())
        .collect()
}

/// `row/f:q=value` for every cell.
fn cells(results: &[RowResult]) -> Vec<String> {
    results
        .iter()
        .flat_map(|r| r.cells.iter())
        .map(|c| {
            format!(
                "{}/{}:{}={}",
                String::from_utf8_lossy(&c.row),
                String::from_utf8_lossy(&c.family),
                String::from_utf8_lossy(&c.qualifier),
                String::from_utf8_lossy(&c.value)
            )
        })
        .collect()
}

async fn scan(t: &Table, s: Scan) -> Vec<RowResult> {
    t.scan(s).collect().await.unwrap()
}

async fn filtered(t: &Table, filter: &str) -> Vec<RowResult> {
    scan(t, Scan::new().filter(filter)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_reversed_scans_and_bad_filters_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let mut f = FamilyDescriptor::new("f").unwrap();
    f.versions = 3;
    let desc = TableDescriptor::new("ft", vec![f, FamilyDescriptor::new("g").unwrap()]).unwrap();
    let splits = [Bytes::from("r3"), Bytes::from("r6")];
    conn.admin().create_table(&desc, &splits).await.unwrap();
    let t = conn.table("ft");
    load(&t).await;

    // Row filters.
    assert_eq!(rows(&filtered(&t, "PrefixFilter('r1')").await), ["r1"]);
    assert_eq!(
        rows(&filtered(&t, "RowFilter(>=, 'binary:r7')").await),
        ["r7", "r8"]
    );
    assert_eq!(
        rows(&filtered(&t, "InclusiveStopFilter('r4')").await),
        ["r0", "r1", "r2", "r3", "r4"]
    );
    // Column and value filters.
    let r = filtered(&t, "ColumnPrefixFilter('b')").await;
    assert_eq!(r.len(), ROWS as usize);
    assert!(
        r.iter()
            .all(|r| r.cells.len() == 1 && &r.cells[0].qualifier[..] == b"b")
    );
    assert_eq!(
        cells(
            &filtered(
                &t,
                "MultipleColumnPrefixFilter('a', 'x') AND PrefixFilter('r2')"
            )
            .await
        ),
        ["r2/f:a=a2", "r2/g:x=x"]
    );
    assert_eq!(
        cells(&filtered(&t, "QualifierFilter(=, 'binary:c')").await),
        ["r0/f:c=0", "r2/f:c=2", "r4/f:c=4", "r6/f:c=6", "r8/f:c=8"]
    );
    assert_eq!(
        cells(&filtered(&t, "ValueFilter(=, 'binary:b4')").await),
        ["r4/f:b=b4"]
    );
    assert_eq!(
        cells(&filtered(&t, "ValueFilter(=, 'regexstring:^a[17]$')").await),
        ["r1/f:a=a1", "r7/f:a=a7"]
    );
    let r = filtered(&t, "FamilyFilter(=, 'binary:g')").await;
    assert_eq!(r.len(), ROWS as usize);
    assert!(
        r.iter()
            .all(|r| r.cells.len() == 1 && &r.cells[0].family[..] == b"g")
    );
    // SingleColumnValueFilter: rows without f:c stay unless filterIfMissing.
    assert_eq!(
        rows(&filtered(&t, "SingleColumnValueFilter('f', 'c', >=, 'binary:4')").await),
        ["r1", "r3", "r4", "r5", "r6", "r7", "r8"]
    );
    assert_eq!(
        rows(
            &filtered(
                &t,
                "SingleColumnValueFilter('f', 'c', >=, 'binary:4', true, true)"
            )
            .await
        ),
        ["r4", "r6", "r8"]
    );
    // The latest version of f:b is b{i}, so "old" matches nowhere...
    assert!(
        filtered(
            &t,
            "SingleColumnValueFilter('f', 'b', =, 'binary:old', true, true)"
        )
        .await
        .is_empty()
    );
    // ...unless every version may match.
    assert_eq!(
        filtered(
            &t,
            "SingleColumnValueFilter('f', 'b', =, 'binary:old', true, false)"
        )
        .await
        .len(),
        ROWS as usize
    );
    // PageFilter limits rows per region scan, as in HBase.
    assert_eq!(
        rows(&filtered(&t, "PageFilter(2)").await),
        ["r0", "r1", "r3", "r4", "r6", "r7"]
    );
    let r = filtered(&t, "KeyOnlyFilter()").await;
    assert_eq!(r.len(), ROWS as usize);
    assert!(r.iter().flat_map(|r| &r.cells).all(|c| c.value.is_empty()));
    assert_eq!(
        cells(&filtered(&t, "FirstKeyOnlyFilter() AND RowFilter(<, 'binary:r2')").await),
        ["r0/f:a=a0", "r1/f:a=a1"]
    );
    assert_eq!(
        cells(&filtered(&t, "ColumnCountGetFilter(2) AND PrefixFilter('r5')").await),
        ["r5/f:a=a5", "r5/f:b=b5"]
    );
    // Dropped cells do not use up versions: the older f:b is returned.
    assert_eq!(
        cells(&filtered(&t, "TimestampsFilter(100) AND PrefixFilter('r3')").await),
        ["r3/f:a=a3", "r3/f:b=old", "r3/g:x=x"]
    );
    assert_eq!(
        cells(
            &filtered(
                &t,
                "ColumnRangeFilter('a', false, 'c', true) AND PrefixFilter('r0')"
            )
            .await
        ),
        ["r0/f:b=b0", "r0/f:c=0"]
    );
    assert_eq!(
        rows(
            &filtered(
                &t,
                "PrefixFilter('r1') OR (PrefixFilter('r7') AND SKIP ValueFilter(!=, 'binary:zz'))"
            )
            .await
        ),
        ["r1", "r7"]
    );
    assert_eq!(
        rows(&filtered(&t, "WHILE RowFilter(<, 'binary:r2')").await),
        ["r0", "r1"]
    );

    // WHILE ends the whole scan, not just the region where it tripped.
    assert_eq!(
        rows(&filtered(&t, "WHILE ValueFilter(!=, 'binary:a1')").await),
        ["r0"]
    );
    assert_eq!(
        rows(
            &scan(
                &t,
                Scan::new()
                    .reversed(true)
                    .filter("WHILE ValueFilter(!=, 'binary:a7')")
            )
            .await
        ),
        ["r8"]
    );

    // Gets and multi-gets with filters and time ranges.
    let g = t
        .get(Get::new("r2").filter("ValueFilter(=, 'binary:b2')"))
        .await
        .unwrap();
    assert_eq!(cells(&[g]), ["r2/f:b=b2"]);
    let g = t
        .get(Get::new("r2").filter("RowFilter(=, 'binary:zz')"))
        .await
        .unwrap();
    assert!(g.is_empty());
    let spec = Get::new("x").filter("QualifierFilter(=, 'binary:a')").spec;
    let many = t
        .get_rows(vec![Bytes::from("r1"), Bytes::from("r7")], &spec)
        .await
        .unwrap();
    assert_eq!(cells(&many), ["r1/f:a=a1", "r7/f:a=a7"]);
    let g = t
        .get(Get::new("r2").family("f").timestamp(100))
        .await
        .unwrap();
    assert_eq!(cells(&[g]), ["r2/f:a=a2", "r2/f:b=old", "r2/f:c=2"]);
    let g = t
        .get(Get::new("r2").column("f", "b").time_range(150, 0))
        .await
        .unwrap();
    assert_eq!(cells(&[g]), ["r2/f:b=b2"]);
    let g = t
        .get(Get::new("r2").column("f", "b").versions(3))
        .await
        .unwrap();
    assert_eq!(cells(&[g]), ["r2/f:b=b2", "r2/f:b=old"]);

    // Scan options: prefix, limit, versions.
    assert_eq!(rows(&scan(&t, Scan::new().row_prefix("r4")).await), ["r4"]);
    assert_eq!(
        rows(&scan(&t, Scan::new().limit(4).caching(1)).await),
        ["r0", "r1", "r2", "r3"]
    );
    let r = scan(
        &t,
        Scan::new().column("f", "b").versions(2).row_prefix("r0"),
    )
    .await;
    assert_eq!(cells(&r), ["r0/f:b=b0", "r0/f:b=old"]);

    // Reversed scans across the three regions.
    let all_desc: Vec<String> = (0..ROWS).rev().map(|i| format!("r{i}")).collect();
    assert_eq!(rows(&scan(&t, Scan::new().reversed(true)).await), all_desc);
    assert_eq!(
        rows(&scan(&t, Scan::new().reversed(true).caching(1)).await),
        all_desc
    );
    assert_eq!(
        rows(&scan(&t, Scan::range("r5", "r1").reversed(true)).await),
        ["r5", "r4", "r3", "r2"]
    );
    assert_eq!(
        rows(&scan(&t, Scan::new().reversed(true).limit(3)).await),
        ["r8", "r7", "r6"]
    );
    assert_eq!(
        rows(&scan(&t, Scan::new().reversed(true).row_prefix("r6")).await),
        ["r6"]
    );
    assert_eq!(
        rows(&scan(&t, Scan::new().reversed(true).filter("PageFilter(1)")).await),
        ["r8", "r5", "r2"]
    );
    assert_eq!(
        rows(
            &scan(
                &t,
                Scan::new()
                    .reversed(true)
                    .filter("InclusiveStopFilter('r6')")
            )
            .await
        ),
        ["r8", "r7", "r6"]
    );

    // Bad filters: a clear error with a stable code, and the server keeps
    // serving.
    let e = t
        .scan(Scan::new().filter("PrefixFilter('r1'"))
        .collect()
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidFilter), "{e}");
    assert!(
        e.to_string().contains("expected ',' or ')' at column 18"),
        "{e}"
    );
    let e = t
        .get(Get::new("r1").filter("PrefxFilter('r')"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidFilter), "{e}");
    assert!(
        e.to_string().contains("did you mean 'PrefixFilter'?"),
        "{e}"
    );
    let e = t
        .scan(
            Scan::new()
                .reversed(true)
                .filter("ValueFilter(<, 'substring:x')"),
        )
        .collect()
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidFilter), "{e}");
    assert_eq!(rows(&filtered(&t, "PrefixFilter('r1')").await), ["r1"]);

    server.stop().await.unwrap();
}
