//! [`Filter`]: a parsed filter expression, immutable and shareable between
//! threads. Stateful filters (PageFilter, WHILE) keep their state in a
//! [`ScanFilter`](crate::ScanFilter), one per scanner, never here.

use crate::comparator::{Comparator, CompareOp};

/// A filter expression (HBase's filter classes and `FilterList`).
#[derive(Clone, Debug)]
pub enum Filter {
    /// Every operand must pass (`AND`, HBase's MUST_PASS_ALL).
    And(Vec<Filter>),
    /// One operand must pass (`OR`, HBase's MUST_PASS_ONE).
    Or(Vec<Filter>),
    /// `SKIP f`: drops the whole row when `f` drops any of its cells.
    Skip(Box<Filter>),
    /// `WHILE f`: ends the scan at the first row where `f` drops anything.
    While { id: usize, inner: Box<Filter> },
    /// Rows whose key starts with the prefix.
    Prefix(Vec<u8>),
    /// Cells whose qualifier starts with the prefix.
    ColumnPrefix(Vec<u8>),
    /// Cells whose qualifier starts with any of the prefixes.
    MultipleColumnPrefix(Vec<Vec<u8>>),
    /// Rows whose key passes the comparison.
    Row(CompareOp, Comparator),
    /// Cells whose family passes.
    Family(CompareOp, Comparator),
    /// Cells whose qualifier passes.
    Qualifier(CompareOp, Comparator),
    /// Cells whose value passes.
    Value(CompareOp, Comparator),
    /// Rows whose `family:qualifier` value passes.
    SingleColumnValue(SingleColumnValue),
    /// At most this many rows per region scan.
    Page { id: usize, size: u64 },
    /// Values replaced by nothing (or their 4-byte length).
    KeyOnly { len_as_value: bool },
    /// Only the first cell of each row.
    FirstKeyOnly,
    /// The newest version of the first N columns of each row.
    ColumnCountGet(u64),
    /// `limit` columns of each row after skipping `offset`.
    ColumnPagination { limit: u64, offset: u64 },
    /// Cells with one of these timestamps.
    Timestamps(Vec<u64>),
    /// Rows up to and including this one, then the scan ends.
    InclusiveStop(Vec<u8>),
    /// Cells whose qualifier is within the range.
    ColumnRange(ColumnRange),
}

/// SingleColumnValueFilter (and its Exclude variant) arguments.
#[derive(Clone, Debug)]
pub struct SingleColumnValue {
    pub family: Vec<u8>,
    pub qualifier: Vec<u8>,
    pub op: CompareOp,
    pub comparator: Comparator,
    /// Drop rows that do not have the column (default false).
    pub filter_if_missing: bool,
    /// Test only the newest version (default true).
    pub latest_version_only: bool,
    /// SingleColumnValueExcludeFilter: leave the tested column out.
    pub exclude_column: bool,
}

/// ColumnRangeFilter arguments; an empty bound is open.
#[derive(Clone, Debug)]
pub struct ColumnRange {
    pub min: Vec<u8>,
    pub min_inclusive: bool,
    pub max: Vec<u8>,
    pub max_inclusive: bool,
}

impl ColumnRange {
    /// True when `qualifier` is within the range.
    pub fn contains(&self, qualifier: &[u8]) -> bool {
        let above_min = self.min.is_empty()
            || qualifier > &self.min[..]
            || (self.min_inclusive && qualifier == &self.min[..]);
        let below_max = self.max.is_empty()
            || qualifier < &self.max[..]
            || (self.max_inclusive && qualifier == &self.max[..]);
        above_min && below_max
    }
}

impl Filter {
    /// How many state slots (PageFilter counters, WHILE flags) the
    /// expression uses: ids are `0..slots()`.
    pub fn slots(&self) -> usize {
        match self {
            Filter::And(v) | Filter::Or(v) => v.iter().map(Filter::slots).max().unwrap_or(0),
            Filter::Skip(f) => f.slots(),
            Filter::While { id, inner } => inner.slots().max(id + 1),
            Filter::Page { id, .. } => id + 1,
            _ => 0,
        }
    }
}
