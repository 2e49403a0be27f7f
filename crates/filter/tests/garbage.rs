//! No input makes the parser (or evaluating what it accepts) panic: random
//! strings, random token soups, and valid filters with bytes mutated.

use ferrobase_filter::{ScanFilter, parse};
use ferrobase_types::Cell;
use proptest::prelude::*;
use std::sync::Arc;

const VALID: &[&str] = &[
    "PrefixFilter('row1') AND ValueFilter(=, 'binary:v')",
    "SingleColumnValueFilter('f', 'q', >=, 'binaryprefix:5', true, false)",
    "(ColumnPrefixFilter('a') OR MultipleColumnPrefixFilter('b', 'c')) AND KeyOnlyFilter()",
    "SKIP QualifierFilter(!=, 'substring:x') OR WHILE RowFilter(=, 'regexstring:^r[0-9]+')",
    "PageFilter(3) AND FirstKeyOnlyFilter() AND TimestampsFilter(1, 2, 3)",
    "ColumnCountGetFilter(2) OR FamilyFilter(=, 'binary:f') OR InclusiveStopFilter('z''z')",
    "ColumnRangeFilter('a', true, 'c', false) AND ColumnPaginationFilter(1, 0)",
];

const PIECES: &[&str] = &[
    "(",
    ")",
    ",",
    "'",
    "''",
    "AND",
    "OR",
    "SKIP",
    "WHILE",
    "=",
    "<",
    "<=",
    "!=",
    ">",
    ">=",
    "!",
    "true",
    "false",
    "-",
    "-1",
    "0",
    "99999999999999999999999",
    "'binary:",
    "'regexstring:(",
    "'substring:",
    "PrefixFilter",
    "ValueFilter",
    "PageFilter",
    "KeyOnlyFilter",
    "é",
    " ",
    "\t",
    "'x'",
    "SingleColumnValueFilter",
    "TimestampsFilter",
    "MultipleColumnPrefixFilter",
];

fn rows() -> Vec<Vec<Cell>> {
    (0..4)
        .map(|r| {
            let key = format!("row{r}");
            (0..3)
                .map(|q| {
                    Cell::put(
                        key.clone(),
                        "f",
                        format!("q{q}"),
                        10 - q,
                        format!("v{r}{q}"),
                    )
                })
                .collect()
        })
        .collect()
}

/// Parses `s`; when it parses, evaluates it over a few rows both ways.
fn exercise(s: &str) {
    if let Ok(f) = parse(s) {
        let f = Arc::new(f);
        for reversed in [false, true] {
            let mut sf = ScanFilter::new(f.clone(), reversed);
            for row in rows() {
                if sf.done() {
                    break;
                }
                let _ = sf.filter_row(row);
            }
        }
    } else if let Err(e) = parse(s) {
        assert!(!e.to_string().is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(5), ..ProptestConfig::default() })]

    #[test]
    fn random_strings(s in "\\PC{0,80}") {
        exercise(&s);
    }

    #[test]
    fn token_soup(pieces in proptest::collection::vec(0..PIECES.len(), 0..30)) {
        let s: String = pieces.iter().map(|&i| PIECES[i]).collect::<Vec<_>>().join("");
        exercise(&s);
    }

    #[test]
    fn mutated_valid_filters(
        which in 0..VALID.len(),
        edits in proptest::collection::vec((0usize..200, 0usize..3, any::<char>()), 1..6),
    ) {
        let mut chars: Vec<char> = VALID[which].chars().collect();
        for (pos, kind, ch) in edits {
            let at = pos % (chars.len() + 1);
            match kind {
                0 => chars.insert(at, ch),
                1 if at < chars.len() => { chars.remove(at); }
                _ if at < chars.len() => chars[at] = ch,
                _ => {}
            }
        }
        exercise(&chars.into_iter().collect::<String>());
    }
}

#[test]
fn valid_examples_parse() -> anyhow::Result<()> {
    for s in VALID {
        parse(s).map_err(|e| anyhow::anyhow!("{s}: {e}"))?;
    }
    Ok(())
}

#[test]
fn very_long_and_deep_inputs_are_refused_cleanly() {
    let deep = format!("{}PageFilter(1)", "SKIP ".repeat(10_000));
    assert!(parse(&deep).is_err());
    let wide = vec!["KeyOnlyFilter()"; 5_000].join(" AND ");
    assert!(parse(&wide).is_ok());
    let parens = "(".repeat(100_000);
    assert!(parse(&parens).is_err());
}
