//! One test per filter: [`ScanFilter`] over hand-built rows.

use crate::{ScanFilter, parse};
use ferrobase_types::Cell;
use std::sync::Arc;

type R = anyhow::Result<()>;

fn cell(row: &str, fq: &str, ts: u64, value: &str) -> Cell {
    let (f, q) = fq.split_once(':').unwrap_or((fq, ""));
    Cell::put(
        row.as_bytes().to_vec(),
        f.as_bytes().to_vec(),
        q.as_bytes().to_vec(),
        ts,
        value.as_bytes().to_vec(),
    )
}

/// A row with columns `f:a`=`1`, `f:b`=`2` (two versions: 2@20, 1@10),
/// `f:c`=`3`, `g:a`=`x`.
fn row(key: &str) -> Vec<Cell> {
    vec![
        cell(key, "f:a", 10, "1"),
        cell(key, "f:b", 20, "2"),
        cell(key, "f:b", 10, "old"),
        cell(key, "f:c", 10, "3"),
        cell(key, "g:a", 10, "x"),
    ]
}

fn scan_filter(s: &str) -> anyhow::Result<ScanFilter> {
    Ok(ScanFilter::new(Arc::new(parse(s)?), false))
}

/// `family:qualifier@ts` of what passes.
fn apply(s: &str, cells: Vec<Cell>) -> anyhow::Result<Vec<String>> {
    Ok(names(&scan_filter(s)?.filter_row(cells)))
}

fn names(cells: &[Cell]) -> Vec<String> {
    cells
        .iter()
        .map(|c| {
            format!(
                "{}:{}@{}",
                String::from_utf8_lossy(&c.family),
                String::from_utf8_lossy(&c.qualifier),
                c.timestamp
            )
        })
        .collect()
}

/// Rows (of `row()`) that a scan with filter `s` returns.
fn rows_passing(s: &str, keys: &[&str]) -> anyhow::Result<Vec<String>> {
    let mut f = scan_filter(s)?;
    let mut out = Vec::new();
    for k in keys {
        if f.done() {
            break;
        }
        if !f.filter_row(row(k)).is_empty() {
            out.push(k.to_string());
        }
    }
    Ok(out)
}

#[test]
fn prefix_filter_keeps_matching_rows_and_ends_past_the_prefix() -> R {
    let mut f = scan_filter("PrefixFilter('b')")?;
    assert!(f.filter_row(row("a1")).is_empty());
    assert!(!f.done());
    assert_eq!(f.filter_row(row("b1")).len(), 5);
    assert!(f.filter_row(row("c1")).is_empty());
    assert!(f.done());
    Ok(())
}

#[test]
fn column_prefix_filters() -> R {
    assert_eq!(
        apply("ColumnPrefixFilter('b')", row("r"))?,
        ["f:b@20", "f:b@10"]
    );
    assert_eq!(
        apply("MultipleColumnPrefixFilter('a', 'c')", row("r"))?,
        ["f:a@10", "f:c@10", "g:a@10"]
    );
    Ok(())
}

#[test]
fn compare_filters_on_qualifier_value_family_row() -> R {
    assert_eq!(
        apply("QualifierFilter(>=, 'binary:c')", row("r"))?,
        ["f:c@10"]
    );
    assert_eq!(apply("ValueFilter(=, 'binary:2')", row("r"))?, ["f:b@20"]);
    assert_eq!(
        apply("ValueFilter(=, 'substring:OL')", row("r"))?,
        ["f:b@10"]
    );
    assert_eq!(apply("FamilyFilter(=, 'binary:g')", row("r"))?, ["g:a@10"]);
    assert_eq!(
        rows_passing("RowFilter(<, 'binary:r2')", &["r1", "r2", "r3"])?,
        ["r1"]
    );
    assert_eq!(
        rows_passing("RowFilter(=, 'regexstring:[13]$')", &["r1", "r2", "r3"])?,
        ["r1", "r3"]
    );
    Ok(())
}

#[test]
fn single_column_value_filter_tests_the_latest_version() -> R {
    // f:b is 2 now, "old" before.
    assert_eq!(
        apply("SingleColumnValueFilter('f', 'b', =, 'binary:2')", row("r"))?.len(),
        5
    );
    assert!(
        apply(
            "SingleColumnValueFilter('f', 'b', =, 'binary:old')",
            row("r")
        )?
        .is_empty()
    );
    // latestVersionOnly false: any version may match.
    assert_eq!(
        apply(
            "SingleColumnValueFilter('f', 'b', =, 'binary:old', false, false)",
            row("r")
        )?
        .len(),
        5
    );
    // Missing column: kept unless filterIfMissing.
    assert_eq!(
        apply(
            "SingleColumnValueFilter('f', 'zz', =, 'binary:1')",
            row("r")
        )?
        .len(),
        5
    );
    assert!(
        apply(
            "SingleColumnValueFilter('f', 'zz', =, 'binary:1', true, true)",
            row("r")
        )?
        .is_empty()
    );
    assert_eq!(
        apply(
            "SingleColumnValueExcludeFilter('f', 'b', =, 'binary:2')",
            row("r")
        )?,
        ["f:a@10", "f:c@10", "g:a@10"]
    );
    Ok(())
}

#[test]
fn page_filter_limits_rows_per_scan() -> R {
    assert_eq!(
        rows_passing("PageFilter(2)", &["a", "b", "c", "d"])?,
        ["a", "b"]
    );
    assert!(rows_passing("PageFilter(0)", &["a"])?.is_empty());
    // Rows other filters drop do not use up the page.
    assert_eq!(
        rows_passing(
            "RowFilter(!=, 'binary:a') AND PageFilter(2)",
            &["a", "b", "c", "d"]
        )?,
        ["b", "c"]
    );
    Ok(())
}

#[test]
fn key_only_filter_strips_values() -> R {
    let out = scan_filter("KeyOnlyFilter()")?.filter_row(row("r"));
    assert_eq!(out.len(), 5);
    assert!(out.iter().all(|c| c.value.is_empty()));
    let out = scan_filter("KeyOnlyFilter(true)")?.filter_row(row("r"));
    assert_eq!(&out[2].value[..], &3u32.to_be_bytes());
    Ok(())
}

#[test]
fn first_key_only_and_column_count() -> R {
    assert_eq!(apply("FirstKeyOnlyFilter()", row("r"))?, ["f:a@10"]);
    assert_eq!(
        apply("ColumnCountGetFilter(2)", row("r"))?,
        ["f:a@10", "f:b@20"]
    );
    assert_eq!(
        apply("ColumnPaginationFilter(2, 1)", row("r"))?,
        ["f:b@20", "f:c@10"]
    );
    Ok(())
}

#[test]
fn timestamps_and_column_range() -> R {
    assert_eq!(apply("TimestampsFilter(20)", row("r"))?, ["f:b@20"]);
    assert!(apply("TimestampsFilter()", row("r"))?.is_empty());
    assert_eq!(
        apply("ColumnRangeFilter('a', false, 'c', true)", row("r"))?,
        ["f:b@20", "f:b@10", "f:c@10"]
    );
    Ok(())
}

#[test]
fn inclusive_stop_filter_includes_the_stop_row_then_ends() -> R {
    assert_eq!(
        rows_passing("InclusiveStopFilter('b')", &["a", "b", "c", "d"])?,
        ["a", "b"]
    );
    let mut f = ScanFilter::new(Arc::new(parse("InclusiveStopFilter('b')")?), true);
    assert!(!f.filter_row(row("c")).is_empty());
    assert!(!f.filter_row(row("b")).is_empty());
    assert!(f.filter_row(row("a")).is_empty());
    assert!(f.done());
    Ok(())
}

#[test]
fn and_or_skip_while() -> R {
    assert_eq!(
        apply(
            "ColumnPrefixFilter('b') AND ValueFilter(=, 'binary:2')",
            row("r")
        )?,
        ["f:b@20"]
    );
    assert_eq!(
        apply(
            "ColumnPrefixFilter('c') OR FamilyFilter(=, 'binary:g')",
            row("r")
        )?,
        ["f:c@10", "g:a@10"]
    );
    // OR: a branch that drops the row contributes nothing.
    assert_eq!(
        apply("PrefixFilter('zz') OR ColumnPrefixFilter('c')", row("r"))?,
        ["f:c@10"]
    );
    // SKIP drops a row when any cell is filtered.
    assert!(apply("SKIP ValueFilter(!=, 'binary:x')", row("r"))?.is_empty());
    assert_eq!(
        apply("SKIP ValueFilter(!=, 'binary:zz')", row("r"))?.len(),
        5
    );
    // WHILE ends the scan at the first row it rejects.
    assert_eq!(
        rows_passing("WHILE RowFilter(<, 'binary:c')", &["a", "b", "c", "a2"])?,
        ["a", "b"]
    );
    Ok(())
}

#[test]
fn only_scan_wide_ends_reach_other_regions() -> R {
    let mut page = scan_filter("PageFilter(1)")?;
    assert!(!page.filter_row(row("a")).is_empty());
    assert!(page.done());
    assert!(!page.scan_done());
    let mut stop = scan_filter("InclusiveStopFilter('a') AND PageFilter(5)")?;
    assert!(!stop.filter_row(row("a")).is_empty());
    assert!(!stop.scan_done());
    assert!(stop.filter_row(row("b")).is_empty());
    assert!(stop.scan_done());
    Ok(())
}

#[test]
fn an_empty_row_stays_empty() -> R {
    assert!(
        scan_filter("PageFilter(1)")?
            .filter_row(Vec::new())
            .is_empty()
    );
    Ok(())
}
