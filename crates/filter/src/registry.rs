//! The named filters: which names exist, what arguments each takes, and
//! building a [`Filter`] from them (HBase's `createFilterFromArguments`).
//! Also the "did you mean" suggestion for unknown names. This module never
//! tokenizes or evaluates.

use crate::comparator::{Comparator, CompareOp};
use crate::error::FilterError;
use crate::filter::{ColumnRange, Filter, SingleColumnValue};

/// One call of each filter (each usage form), for tests here and in the
/// crates that carry filters in other encodings (HBase's protobufs).
pub const EXAMPLES: &[&str] = &[
    "KeyOnlyFilter()",
    "KeyOnlyFilter(true)",
    "FirstKeyOnlyFilter()",
    "PrefixFilter('r')",
    "ColumnPrefixFilter('q')",
    "MultipleColumnPrefixFilter('a', 'b')",
    "ColumnCountGetFilter(2)",
    "PageFilter(10)",
    "ColumnPaginationFilter(2, 1)",
    "InclusiveStopFilter('r5')",
    "TimestampsFilter(1, 2, 3)",
    "RowFilter(<=, 'binary:r')",
    "FamilyFilter(=, 'binaryprefix:f')",
    "QualifierFilter(!=, 'substring:x')",
    "ValueFilter(=, 'regexstring:^v[0-9]+$')",
    "ColumnRangeFilter('a', true, 'c', false)",
    "SingleColumnValueFilter('f', 'q', >, 'binary:5')",
    "SingleColumnValueFilter('f', 'q', =, 'binary:5', true, false)",
    "SingleColumnValueExcludeFilter('f', 'q', =, 'binary:5')",
];

/// Every filter name the language knows, as HBase spells them.
pub const FILTER_NAMES: &[&str] = &[
    "KeyOnlyFilter",
    "FirstKeyOnlyFilter",
    "PrefixFilter",
    "ColumnPrefixFilter",
    "MultipleColumnPrefixFilter",
    "ColumnCountGetFilter",
    "PageFilter",
    "ColumnPaginationFilter",
    "InclusiveStopFilter",
    "TimestampsFilter",
    "RowFilter",
    "FamilyFilter",
    "QualifierFilter",
    "ValueFilter",
    "ColumnRangeFilter",
    "SingleColumnValueFilter",
    "SingleColumnValueExcludeFilter",
];

/// One argument as written.
#[derive(Clone, Debug)]
pub enum Arg {
    Str(Vec<u8>),
    Number(String),
    Op(String),
    Word(String),
}

impl Arg {
    fn describe(&self) -> String {
        match self {
            Arg::Str(s) => format!("string '{}'", String::from_utf8_lossy(s)),
            Arg::Number(n) => format!("number {n}"),
            Arg::Op(o) => format!("operator '{o}'"),
            Arg::Word(w) => format!("'{w}'"),
        }
    }
}

/// The canonical spelling of `name`, if it is a filter (case-sensitive,
/// as in HBase).
pub fn canonical_name(name: &str) -> Option<&'static str> {
    FILTER_NAMES.iter().copied().find(|n| *n == name)
}

/// The known name closest to `name`, if any is close enough to be a typo.
pub fn suggest(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let with_suffix = format!("{lower}filter");
    let mut best: Option<(usize, &str)> = None;
    for &known in FILTER_NAMES {
        let k = known.to_ascii_lowercase();
        if k == lower || k == with_suffix {
            return Some(known.into());
        }
        let d = edit_distance(lower.as_bytes(), k.as_bytes());
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, known));
        }
    }
    let (d, known) = best?;
    (d <= (name.chars().count() / 3).max(2)).then(|| known.to_string())
}

fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Reads arguments of one filter, with errors naming it.
struct Args<'a> {
    filter: &'a str,
    column: usize,
    args: Vec<Arg>,
}

impl Args<'_> {
    fn err(&self, message: impl Into<String>) -> FilterError {
        FilterError::Arguments {
            column: self.column,
            filter: self.filter.into(),
            message: message.into(),
        }
    }

    fn count(&self, allowed: &[usize], usage: &str) -> Result<(), FilterError> {
        if allowed.contains(&self.args.len()) {
            return Ok(());
        }
        Err(self.err(format!(
            "takes {} argument(s), got {}; usage: {usage}",
            allowed
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" or "),
            self.args.len()
        )))
    }

    fn kind_err(&self, i: usize, expected: &str) -> FilterError {
        self.err(format!(
            "argument {} must be {expected}, got {}",
            i + 1,
            self.args[i].describe()
        ))
    }

    fn bytes(&self, i: usize) -> Result<Vec<u8>, FilterError> {
        match &self.args[i] {
            Arg::Str(s) => Ok(s.clone()),
            _ => Err(self.kind_err(i, "a quoted string")),
        }
    }

    fn number(&self, i: usize) -> Result<i64, FilterError> {
        match &self.args[i] {
            Arg::Number(n) => n
                .parse::<i64>()
                .map_err(|_| self.err(format!("argument {} ({n}) is out of range", i + 1))),
            _ => Err(self.kind_err(i, "a number")),
        }
    }

    fn non_negative(&self, i: usize) -> Result<u64, FilterError> {
        let n = self.number(i)?;
        u64::try_from(n).map_err(|_| self.err(format!("argument {} must be >= 0, got {n}", i + 1)))
    }

    fn boolean(&self, i: usize) -> Result<bool, FilterError> {
        match &self.args[i] {
            Arg::Word(w) if w.eq_ignore_ascii_case("true") => Ok(true),
            Arg::Word(w) if w.eq_ignore_ascii_case("false") => Ok(false),
            _ => Err(self.kind_err(i, "true or false")),
        }
    }

    fn op(&self, i: usize) -> Result<CompareOp, FilterError> {
        let parsed = match &self.args[i] {
            Arg::Op(o) | Arg::Word(o) => CompareOp::parse(o),
            _ => None,
        };
        parsed.ok_or_else(|| self.kind_err(i, "a compare operator (<, <=, =, !=, >=, >)"))
    }

    /// The op and comparator at `i`, `i + 1`.
    fn compare(&self, i: usize) -> Result<(CompareOp, Comparator), FilterError> {
        let op = self.op(i)?;
        let text = self.bytes(i + 1)?;
        let c = Comparator::parse(&text).map_err(|m| self.err(m))?;
        if c.is_match_only() && !matches!(op, CompareOp::Equal | CompareOp::NotEqual) {
            return Err(self.err("substring: and regexstring: comparators only work with = and !="));
        }
        Ok((op, c))
    }
}

/// Builds filter `name` (canonical) from `args`; `slot` hands out state
/// slots for stateful filters.
pub fn build(
    name: &'static str,
    column: usize,
    args: Vec<Arg>,
    slot: &mut dyn FnMut() -> usize,
) -> Result<Filter, FilterError> {
    let a = Args {
        filter: name,
        column,
        args,
    };
    let n = a.args.len();
    Ok(match name {
        "KeyOnlyFilter" => {
            a.count(&[0, 1], "KeyOnlyFilter() or KeyOnlyFilter(lenAsValue)")?;
            Filter::KeyOnly {
                len_as_value: n == 1 && a.boolean(0)?,
            }
        }
        "FirstKeyOnlyFilter" => {
            a.count(&[0], "FirstKeyOnlyFilter()")?;
            Filter::FirstKeyOnly
        }
        "PrefixFilter" => {
            a.count(&[1], "PrefixFilter('rowprefix')")?;
            Filter::Prefix(a.bytes(0)?)
        }
        "ColumnPrefixFilter" => {
            a.count(&[1], "ColumnPrefixFilter('qualifierprefix')")?;
            Filter::ColumnPrefix(a.bytes(0)?)
        }
        "MultipleColumnPrefixFilter" => {
            if n == 0 {
                return Err(a.err(
                    "takes at least 1 argument; usage: MultipleColumnPrefixFilter('p1', 'p2', ...)",
                ));
            }
            Filter::MultipleColumnPrefix((0..n).map(|i| a.bytes(i)).collect::<Result<_, _>>()?)
        }
        "ColumnCountGetFilter" => {
            a.count(&[1], "ColumnCountGetFilter(limit)")?;
            Filter::ColumnCountGet(a.non_negative(0)?)
        }
        "PageFilter" => {
            a.count(&[1], "PageFilter(pageSize)")?;
            Filter::Page {
                size: a.non_negative(0)?,
                id: slot(),
            }
        }
        "ColumnPaginationFilter" => {
            a.count(&[2], "ColumnPaginationFilter(limit, offset)")?;
            Filter::ColumnPagination {
                limit: a.non_negative(0)?,
                offset: a.non_negative(1)?,
            }
        }
        "InclusiveStopFilter" => {
            a.count(&[1], "InclusiveStopFilter('stoprow')")?;
            Filter::InclusiveStop(a.bytes(0)?)
        }
        "TimestampsFilter" => Filter::Timestamps(
            (0..n)
                .map(|i| a.non_negative(i))
                .collect::<Result<_, _>>()?,
        ),
        "RowFilter" | "FamilyFilter" | "QualifierFilter" | "ValueFilter" => {
            a.count(&[2], &format!("{name}(compareOp, 'type:value')"))?;
            let (op, c) = a.compare(0)?;
            match name {
                "RowFilter" => Filter::Row(op, c),
                "FamilyFilter" => Filter::Family(op, c),
                "QualifierFilter" => Filter::Qualifier(op, c),
                _ => Filter::Value(op, c),
            }
        }
        "ColumnRangeFilter" => {
            a.count(
                &[4],
                "ColumnRangeFilter('minColumn', minInclusive, 'maxColumn', maxInclusive)",
            )?;
            Filter::ColumnRange(ColumnRange {
                min: a.bytes(0)?,
                min_inclusive: a.boolean(1)?,
                max: a.bytes(2)?,
                max_inclusive: a.boolean(3)?,
            })
        }
        "SingleColumnValueFilter" | "SingleColumnValueExcludeFilter" => {
            a.count(
                &[4, 6],
                &format!(
                    "{name}('family', 'qualifier', compareOp, 'type:value'[, filterIfMissing, latestVersionOnly])"
                ),
            )?;
            let (op, comparator) = a.compare(2)?;
            let (filter_if_missing, latest_version_only) = if n == 6 {
                (a.boolean(4)?, a.boolean(5)?)
            } else {
                (false, true)
            };
            Filter::SingleColumnValue(SingleColumnValue {
                family: a.bytes(0)?,
                qualifier: a.bytes(1)?,
                op,
                comparator,
                filter_if_missing,
                latest_version_only,
                exclude_column: name == "SingleColumnValueExcludeFilter",
            })
        }
        other => {
            return Err(FilterError::UnknownFilter {
                column,
                name: other.into(),
                suggestion: None,
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::EXAMPLES;
    use crate::parse;

    fn err(s: &str) -> String {
        match parse(s) {
            Ok(f) => format!("parsed: {f:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn every_name_parses_with_its_usage() -> anyhow::Result<()> {
        for s in EXAMPLES {
            parse(s).map_err(|e| anyhow::anyhow!("{s}: {e}"))?;
        }
        Ok(())
    }

    #[test]
    fn argument_errors_say_what_is_wrong() {
        assert_eq!(
            err("PageFilter()"),
            "PageFilter at column 1: takes 1 argument(s), got 0; usage: PageFilter(pageSize)"
        );
        assert_eq!(
            err("PageFilter('x')"),
            "PageFilter at column 1: argument 1 must be a number, got string 'x'"
        );
        assert_eq!(
            err("PageFilter(-1)"),
            "PageFilter at column 1: argument 1 must be >= 0, got -1"
        );
        assert_eq!(
            err("PageFilter(99999999999999999999)"),
            "PageFilter at column 1: argument 1 (99999999999999999999) is out of range"
        );
        assert_eq!(
            err("ValueFilter(<, 'substring:x')"),
            "ValueFilter at column 1: substring: and regexstring: comparators only work with = and !="
        );
        assert_eq!(
            err("ValueFilter('binary:x', =)"),
            "ValueFilter at column 1: argument 1 must be a compare operator (<, <=, =, !=, >=, >), got string 'binary:x'"
        );
        assert!(
            err("SingleColumnValueFilter('f', 'q', =, 'binary:5', true)")
                .contains("takes 4 or 6 argument(s), got 5")
        );
        assert!(err("KeyOnlyFilter(yes)").contains("must be true or false, got 'yes'"));
    }

    #[test]
    fn suggestions() {
        assert_eq!(super::suggest("Prefix").as_deref(), Some("PrefixFilter"));
        assert_eq!(
            super::suggest("valuefilter").as_deref(),
            Some("ValueFilter")
        );
        assert_eq!(
            super::suggest("QualiferFilter").as_deref(),
            Some("QualifierFilter")
        );
        assert_eq!(super::suggest("xyz"), None);
    }
}
