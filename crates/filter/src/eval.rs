//! [`ScanFilter`]: one scanner's (or one get's) evaluation of a [`Filter`]
//! over whole rows, with HBase's semantics, and the state stateful filters
//! need (PageFilter's row count, WHILE's tripped flag).
//!
//! Each filter judges a row at two levels: the row as a whole (RowFilter,
//! PrefixFilter, SingleColumnValueFilter, PageFilter, ...) and each cell
//! (ValueFilter, ColumnPrefixFilter, FirstKeyOnlyFilter, ...). `AND` keeps
//! a cell only when every operand does and drops the row when any operand
//! does; `OR` keeps what any operand not dropping the row keeps. A row
//! left with no cells is dropped and does not count towards a PageFilter.
//! [`ScanFilter::done`] says no later row can pass (HBase's
//! `filterAllRemaining`), so the server can end the scan early. This module
//! never reads storage.

use crate::filter::Filter;
use bytes::Bytes;
use ferrobase_types::Cell;
use std::sync::Arc;

/// How kept cells' values are rewritten (KeyOnlyFilter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Strip {
    None,
    Empty,
    Length,
}

/// One filter's judgement of one row.
struct Verdict {
    /// Per cell: kept.
    keep: Vec<bool>,
    /// The whole row is dropped.
    excluded: bool,
    strip: Strip,
    /// PageFilters that let the row through (counted if it is returned).
    pages: Vec<usize>,
}

impl Verdict {
    fn all(n: usize) -> Verdict {
        Verdict {
            keep: vec![true; n],
            excluded: false,
            strip: Strip::None,
            pages: Vec::new(),
        }
    }

    fn row(n: usize, passes: bool) -> Verdict {
        Verdict {
            excluded: !passes,
            ..Verdict::all(n)
        }
    }

    fn cells(keep: Vec<bool>) -> Verdict {
        Verdict {
            keep,
            excluded: false,
            strip: Strip::None,
            pages: Vec::new(),
        }
    }

    fn rejects_anything(&self) -> bool {
        self.excluded || self.keep.iter().any(|k| !k)
    }
}

/// A filter being applied to the rows of one scan (or one get).
#[derive(Clone, Debug)]
pub struct ScanFilter {
    filter: Arc<Filter>,
    /// PageFilter: rows returned; WHILE: 1 once tripped.
    slots: Vec<u64>,
    reversed: bool,
    /// The last row judged, for filters that end the scan past a key.
    last_row: Option<Bytes>,
}

impl ScanFilter {
    /// Fresh state for `filter`; `reversed` when rows come in descending
    /// order.
    pub fn new(filter: Arc<Filter>, reversed: bool) -> ScanFilter {
        ScanFilter {
            slots: vec![0; filter.slots()],
            filter,
            reversed,
            last_row: None,
        }
    }

    /// The cells of one row (all of the same row, in cell order) to return;
    /// empty when the row is dropped.
    pub fn filter_row(&mut self, cells: Vec<Cell>) -> Vec<Cell> {
        let Some(row) = cells.first().map(|c| c.row.clone()) else {
            return cells;
        };
        let filter = self.filter.clone();
        let v = self.eval(&filter, &row, &cells);
        self.last_row = Some(row);
        if v.excluded {
            return Vec::new();
        }
        let mut out: Vec<Cell> = cells
            .into_iter()
            .zip(&v.keep)
            .filter_map(|(c, &k)| k.then_some(c))
            .collect();
        if out.is_empty() {
            return out;
        }
        for id in v.pages {
            self.slots[id] += 1;
        }
        match v.strip {
            Strip::None => {}
            Strip::Empty => out.iter_mut().for_each(|c| c.value = Bytes::new()),
            Strip::Length => out.iter_mut().for_each(|c| {
                let len = u32::try_from(c.value.len()).unwrap_or(u32::MAX);
                c.value = Bytes::copy_from_slice(&len.to_be_bytes());
            }),
        }
        out
    }

    /// True when no later row can pass: a PageFilter is full, a WHILE
    /// tripped, or the scan went past an InclusiveStopFilter's row or a
    /// PrefixFilter's prefix.
    pub fn done(&self) -> bool {
        self.all_remaining(&self.filter, true)
    }

    /// True when no later row of *any* region can pass: like [`done`],
    /// except that a full PageFilter (which counts per region scan, as in
    /// HBase) does not count.
    ///
    /// [`done`]: ScanFilter::done
    pub fn scan_done(&self) -> bool {
        self.all_remaining(&self.filter, false)
    }

    fn all_remaining(&self, f: &Filter, pages: bool) -> bool {
        let past = |key: &[u8], is_prefix: bool| match &self.last_row {
            None => false,
            Some(r) if is_prefix && r.starts_with(key) => false,
            Some(r) if self.reversed => &r[..] < key,
            Some(r) => &r[..] > key,
        };
        match f {
            Filter::And(v) => v.iter().any(|f| self.all_remaining(f, pages)),
            Filter::Or(v) => v.iter().all(|f| self.all_remaining(f, pages)),
            Filter::Skip(inner) => self.all_remaining(inner, pages),
            Filter::While { id, inner } => self.slots[*id] > 0 || self.all_remaining(inner, pages),
            Filter::Page { id, size } => pages && self.slots[*id] >= *size,
            Filter::Prefix(p) => past(p, true),
            Filter::InclusiveStop(stop) => past(stop, false),
            _ => false,
        }
    }

    fn eval(&mut self, f: &Filter, row: &[u8], cells: &[Cell]) -> Verdict {
        let n = cells.len();
        let each = |pred: &dyn Fn(&Cell) -> bool| Verdict::cells(cells.iter().map(pred).collect());
        match f {
            Filter::And(items) => {
                let mut acc = Verdict::all(n);
                for item in items {
                    let v = self.eval(item, row, cells);
                    acc.excluded |= v.excluded;
                    for (a, b) in acc.keep.iter_mut().zip(&v.keep) {
                        *a &= *b;
                    }
                    if acc.strip == Strip::None {
                        acc.strip = v.strip;
                    }
                    acc.pages.extend(v.pages);
                }
                acc
            }
            Filter::Or(items) => {
                let mut acc = Verdict {
                    keep: vec![false; n],
                    excluded: true,
                    strip: Strip::None,
                    pages: Vec::new(),
                };
                for item in items {
                    let v = self.eval(item, row, cells);
                    if v.excluded {
                        continue;
                    }
                    acc.excluded = false;
                    for (a, b) in acc.keep.iter_mut().zip(&v.keep) {
                        *a |= *b;
                    }
                    if acc.strip == Strip::None {
                        acc.strip = v.strip;
                    }
                    acc.pages.extend(v.pages);
                }
                acc
            }
            Filter::Skip(inner) => {
                let mut v = self.eval(inner, row, cells);
                v.excluded = v.rejects_anything();
                v
            }
            Filter::While { id, inner } => {
                let mut v = self.eval(inner, row, cells);
                if v.rejects_anything() {
                    self.slots[*id] = 1;
                    // Cells before the first rejected one still pass.
                    let first_bad = v.keep.iter().position(|k| !k).unwrap_or(n);
                    for (i, k) in v.keep.iter_mut().enumerate() {
                        *k = i < first_bad;
                    }
                }
                v
            }
            Filter::Prefix(p) => Verdict::row(n, row.starts_with(p)),
            Filter::Row(op, c) => Verdict::row(n, c.passes(*op, row)),
            Filter::InclusiveStop(stop) => Verdict::row(
                n,
                if self.reversed {
                    row >= &stop[..]
                } else {
                    row <= &stop[..]
                },
            ),
            Filter::Page { id, size } => {
                let passes = self.slots[*id] < *size;
                let mut v = Verdict::row(n, passes);
                if passes {
                    v.pages.push(*id);
                }
                v
            }
            Filter::ColumnPrefix(p) => each(&|c| c.qualifier.starts_with(p)),
            Filter::MultipleColumnPrefix(ps) => {
                each(&|c| ps.iter().any(|p| c.qualifier.starts_with(p)))
            }
            Filter::Family(op, cmp) => each(&|c| cmp.passes(*op, &c.family)),
            Filter::Qualifier(op, cmp) => each(&|c| cmp.passes(*op, &c.qualifier)),
            Filter::Value(op, cmp) => each(&|c| cmp.passes(*op, &c.value)),
            Filter::Timestamps(ts) => each(&|c| ts.contains(&c.timestamp)),
            Filter::ColumnRange(r) => each(&|c| r.contains(&c.qualifier)),
            Filter::KeyOnly { len_as_value } => Verdict {
                strip: if *len_as_value {
                    Strip::Length
                } else {
                    Strip::Empty
                },
                ..Verdict::all(n)
            },
            Filter::FirstKeyOnly => Verdict::cells((0..n).map(|i| i == 0).collect()),
            Filter::ColumnCountGet(limit) => Verdict::cells(newest_of_columns(cells, 0, *limit)),
            Filter::ColumnPagination { limit, offset } => {
                Verdict::cells(newest_of_columns(cells, *offset, *limit))
            }
            Filter::SingleColumnValue(s) => {
                let mut column = cells
                    .iter()
                    .filter(|c| c.family == s.family && c.qualifier == s.qualifier);
                let passes = match column.next() {
                    None => !s.filter_if_missing,
                    Some(newest) if s.latest_version_only => {
                        s.comparator.passes(s.op, &newest.value)
                    }
                    Some(newest) => std::iter::once(newest)
                        .chain(column)
                        .any(|c| s.comparator.passes(s.op, &c.value)),
                };
                let mut v = Verdict::row(n, passes);
                if s.exclude_column {
                    for (k, c) in v.keep.iter_mut().zip(cells) {
                        *k = !(c.family == s.family && c.qualifier == s.qualifier);
                    }
                }
                v
            }
        }
    }
}

/// Keeps the newest version of columns number `offset..offset + limit`
/// (0-based, in cell order) of a row.
fn newest_of_columns(cells: &[Cell], offset: u64, limit: u64) -> Vec<bool> {
    let mut keep = Vec::with_capacity(cells.len());
    let mut column: u64 = 0;
    for (i, c) in cells.iter().enumerate() {
        let first_version =
            i == 0 || cells[i - 1].family != c.family || cells[i - 1].qualifier != c.qualifier;
        if first_version && i > 0 {
            column += 1;
        }
        keep.push(first_version && column >= offset && column - offset < limit);
    }
    keep
}
