//! Filters as the Java client sends them ⇄ the filter AST of
//! `ferrobase-filter`.
//!
//! A `Filter` message names a Java class
//! (`org.apache.hadoop.hbase.filter.PrefixFilter`) and carries that class's
//! own message as bytes; comparators are nested the same way. This module
//! owns decoding each supported class into a [`Filter`] with HBase's
//! semantics (including its defaults for absent fields) and the reverse for
//! a Rust client. A class ferrobase does not implement is an error naming
//! it; nesting deeper than [`MAX_DEPTH`] is refused before it can exhaust
//! the stack. It never evaluates filters.

use super::ConvertError;
use crate::pb;
use bytes::Bytes;
use ferrobase_filter::filter::{ColumnRange, SingleColumnValue};
use ferrobase_filter::{Comparator, CompareOp, Filter};
use prost::Message;

/// Package of HBase's filter and comparator classes.
pub const FILTER_PACKAGE: &str = "org.apache.hadoop.hbase.filter.";
/// Deepest nesting of FilterList / SkipFilter / WhileMatchFilter accepted.
pub const MAX_DEPTH: usize = 32;

/// Filter classes (short names) that [`filter_from_pb`] accepts.
pub const SUPPORTED_FILTERS: &[&str] = &[
    "PrefixFilter",
    "ColumnPrefixFilter",
    "MultipleColumnPrefixFilter",
    "RowFilter",
    "FamilyFilter",
    "QualifierFilter",
    "ValueFilter",
    "SingleColumnValueFilter",
    "SingleColumnValueExcludeFilter",
    "PageFilter",
    "KeyOnlyFilter",
    "FirstKeyOnlyFilter",
    "ColumnCountGetFilter",
    "ColumnPaginationFilter",
    "TimestampsFilter",
    "InclusiveStopFilter",
    "ColumnRangeFilter",
    "FilterList",
    "SkipFilter",
    "WhileMatchFilter",
];

/// Comparator classes (short names) that [`filter_from_pb`] accepts.
pub const SUPPORTED_COMPARATORS: &[&str] = &[
    "BinaryComparator",
    "BinaryPrefixComparator",
    "SubstringComparator",
    "RegexStringComparator",
    "NullComparator",
];

// java.util.regex.Pattern flags.
const CASE_INSENSITIVE: i32 = 0x02;
const COMMENTS: i32 = 0x04;
const MULTILINE: i32 = 0x08;
const LITERAL: i32 = 0x10;
const DOTALL: i32 = 0x20;

/// A regex that matches nothing: a NullComparator's (HBase's compares every
/// present value as "less than" it, as a match-only comparator does for a
/// value it does not match).
const MATCH_NOTHING: &str = r"[^\x00-\x{10FFFF}]";

fn decode<M: Message + Default>(class: &str, body: &Bytes) -> Result<M, ConvertError> {
    M::decode(body.clone())
        .map_err(|e| ConvertError::invalid(class, format!("does not decode: {e}")))
}

fn non_negative(class: &str, field: &str, v: i64) -> Result<u64, ConvertError> {
    u64::try_from(v)
        .map_err(|_| ConvertError::invalid(class, format!("{field} must be >= 0, got {v}")))
}

/// Decodes a filter the Java client sent.
pub fn filter_from_pb(f: &pb::Filter) -> Result<Filter, ConvertError> {
    let mut slots = 0;
    from_pb(f, 0, &mut slots)
}

fn from_pb(f: &pb::Filter, depth: usize, slots: &mut usize) -> Result<Filter, ConvertError> {
    if depth >= MAX_DEPTH {
        return Err(ConvertError::invalid(
            "filter",
            format!("filters nest deeper than {MAX_DEPTH} levels"),
        ));
    }
    let class = f.name.as_str();
    let short = class.strip_prefix(FILTER_PACKAGE).unwrap_or("");
    let body = f.serialized_filter.clone().unwrap_or_default();
    fn slot(slots: &mut usize) -> usize {
        *slots += 1;
        *slots - 1
    }
    Ok(match short {
        "PrefixFilter" => Filter::Prefix(
            decode::<pb::PrefixFilter>(class, &body)?
                .prefix
                .unwrap_or_default()
                .to_vec(),
        ),
        "ColumnPrefixFilter" => Filter::ColumnPrefix(
            decode::<pb::ColumnPrefixFilter>(class, &body)?
                .prefix
                .to_vec(),
        ),
        "MultipleColumnPrefixFilter" => Filter::MultipleColumnPrefix(
            decode::<pb::MultipleColumnPrefixFilter>(class, &body)?
                .sorted_prefixes
                .iter()
                .map(|p| p.to_vec())
                .collect(),
        ),
        "RowFilter" => {
            let (op, c) =
                compare_filter(class, decode::<pb::RowFilter>(class, &body)?.compare_filter)?;
            Filter::Row(op, c)
        }
        "FamilyFilter" => {
            let (op, c) = compare_filter(
                class,
                decode::<pb::FamilyFilter>(class, &body)?.compare_filter,
            )?;
            Filter::Family(op, c)
        }
        "QualifierFilter" => {
            let (op, c) = compare_filter(
                class,
                decode::<pb::QualifierFilter>(class, &body)?.compare_filter,
            )?;
            Filter::Qualifier(op, c)
        }
        "ValueFilter" => {
            let (op, c) = compare_filter(
                class,
                decode::<pb::ValueFilter>(class, &body)?.compare_filter,
            )?;
            Filter::Value(op, c)
        }
        "SingleColumnValueFilter" => single_column_value(
            class,
            decode::<pb::SingleColumnValueFilter>(class, &body)?,
            false,
        )?,
        "SingleColumnValueExcludeFilter" => single_column_value(
            class,
            decode::<pb::SingleColumnValueExcludeFilter>(class, &body)?.single_column_value_filter,
            true,
        )?,
        "PageFilter" => Filter::Page {
            size: non_negative(
                class,
                "page_size",
                decode::<pb::PageFilter>(class, &body)?.page_size,
            )?,
            id: slot(slots),
        },
        "KeyOnlyFilter" => Filter::KeyOnly {
            len_as_value: decode::<pb::KeyOnlyFilter>(class, &body)?.len_as_val,
        },
        "FirstKeyOnlyFilter" => {
            decode::<pb::FirstKeyOnlyFilter>(class, &body)?;
            Filter::FirstKeyOnly
        }
        "ColumnCountGetFilter" => Filter::ColumnCountGet(non_negative(
            class,
            "limit",
            i64::from(decode::<pb::ColumnCountGetFilter>(class, &body)?.limit),
        )?),
        "ColumnPaginationFilter" => {
            let p = decode::<pb::ColumnPaginationFilter>(class, &body)?;
            if p.column_offset.is_some() {
                return Err(ConvertError::Unsupported {
                    kind: "filter",
                    class: format!("{class} with a column offset"),
                });
            }
            Filter::ColumnPagination {
                limit: non_negative(class, "limit", i64::from(p.limit))?,
                offset: non_negative(class, "offset", i64::from(p.offset.unwrap_or(0)))?,
            }
        }
        "TimestampsFilter" => Filter::Timestamps(
            decode::<pb::TimestampsFilter>(class, &body)?
                .timestamps
                .iter()
                .map(|&t| non_negative(class, "timestamp", t))
                .collect::<Result<_, _>>()?,
        ),
        "InclusiveStopFilter" => Filter::InclusiveStop(
            decode::<pb::InclusiveStopFilter>(class, &body)?
                .stop_row_key
                .unwrap_or_default()
                .to_vec(),
        ),
        "ColumnRangeFilter" => {
            let r = decode::<pb::ColumnRangeFilter>(class, &body)?;
            Filter::ColumnRange(ColumnRange {
                min: r.min_column.unwrap_or_default().to_vec(),
                min_inclusive: r.min_column_inclusive.unwrap_or(false),
                max: r.max_column.unwrap_or_default().to_vec(),
                max_inclusive: r.max_column_inclusive.unwrap_or(false),
            })
        }
        "FilterList" => {
            let list = decode::<pb::FilterList>(class, &body)?;
            let items = list
                .filters
                .iter()
                .map(|f| from_pb(f, depth + 1, slots))
                .collect::<Result<Vec<_>, _>>()?;
            match pb::filter_list::Operator::try_from(list.operator) {
                Ok(pb::filter_list::Operator::MustPassAll) => Filter::And(items),
                // An empty list filters nothing, whatever its operator.
                Ok(pb::filter_list::Operator::MustPassOne) if items.is_empty() => {
                    Filter::And(items)
                }
                Ok(pb::filter_list::Operator::MustPassOne) => Filter::Or(items),
                Err(_) => {
                    return Err(ConvertError::invalid(
                        class,
                        format!("unknown operator {}", list.operator),
                    ));
                }
            }
        }
        "SkipFilter" => {
            let inner = decode::<pb::SkipFilter>(class, &body)?.filter;
            Filter::Skip(Box::new(from_pb(&inner, depth + 1, slots)?))
        }
        "WhileMatchFilter" => {
            let inner = decode::<pb::WhileMatchFilter>(class, &body)?.filter;
            let inner = from_pb(&inner, depth + 1, slots)?;
            Filter::While {
                id: slot(slots),
                inner: Box::new(inner),
            }
        }
        _ => {
            return Err(ConvertError::Unsupported {
                kind: "filter",
                class: class.to_string(),
            });
        }
    })
}

fn compare_filter(
    class: &str,
    c: pb::CompareFilter,
) -> Result<(CompareOp, Comparator), ConvertError> {
    let op = compare_op_from_pb(c.compare_op)?;
    let comparator = c
        .comparator
        .ok_or_else(|| ConvertError::invalid(class, "has no comparator"))?;
    Ok((op, comparator_from_pb(&comparator)?))
}

fn single_column_value(
    class: &str,
    s: pb::SingleColumnValueFilter,
    exclude: bool,
) -> Result<Filter, ConvertError> {
    Ok(Filter::SingleColumnValue(SingleColumnValue {
        family: s.column_family.unwrap_or_default().to_vec(),
        qualifier: s.column_qualifier.unwrap_or_default().to_vec(),
        op: compare_op_from_pb(s.compare_op)
            .map_err(|e| ConvertError::invalid(class, e.to_string()))?,
        comparator: comparator_from_pb(&s.comparator)?,
        // HBase's parseFrom reads the fields as sent (the Java client always
        // sets both).
        filter_if_missing: s.filter_if_missing.unwrap_or(false),
        latest_version_only: s.latest_version_only.unwrap_or(false),
        exclude_column: exclude,
    }))
}

/// A `CompareType` code as a [`CompareOp`]; `NO_OP` is refused.
pub fn compare_op_from_pb(code: i32) -> Result<CompareOp, ConvertError> {
    use pb::CompareType as T;
    Ok(match T::try_from(code) {
        Ok(T::Less) => CompareOp::Less,
        Ok(T::LessOrEqual) => CompareOp::LessOrEqual,
        Ok(T::Equal) => CompareOp::Equal,
        Ok(T::NotEqual) => CompareOp::NotEqual,
        Ok(T::GreaterOrEqual) => CompareOp::GreaterOrEqual,
        Ok(T::Greater) => CompareOp::Greater,
        Ok(T::NoOp) => {
            return Err(ConvertError::Unsupported {
                kind: "compare operator",
                class: "NO_OP".into(),
            });
        }
        Err(_) => {
            return Err(ConvertError::invalid(
                "compare operator",
                format!("unknown code {code}"),
            ));
        }
    })
}

/// A [`CompareOp`] as a `CompareType` code.
pub fn compare_op_to_pb(op: CompareOp) -> i32 {
    use pb::CompareType as T;
    (match op {
        CompareOp::Less => T::Less,
        CompareOp::LessOrEqual => T::LessOrEqual,
        CompareOp::Equal => T::Equal,
        CompareOp::NotEqual => T::NotEqual,
        CompareOp::GreaterOrEqual => T::GreaterOrEqual,
        CompareOp::Greater => T::Greater,
    }) as i32
}

fn comparator_text(kind: &str, value: &[u8]) -> Result<Comparator, ConvertError> {
    let mut text = Vec::with_capacity(kind.len() + value.len());
    text.extend_from_slice(kind.as_bytes());
    text.extend_from_slice(value);
    Comparator::parse(&text).map_err(|e| ConvertError::invalid("comparator", e))
}

/// Escapes every regex metacharacter (Java's `Pattern.LITERAL`).
fn escape_regex(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() * 2);
    for c in pattern.chars() {
        if r"\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The pattern ferrobase compiles for a Java pattern and its flags
/// (ferrobase's regexes are DOTALL unless told otherwise).
fn regex_pattern(pattern: &str, flags: i32) -> String {
    let literal = flags & LITERAL != 0;
    let mut on = String::new();
    if flags & CASE_INSENSITIVE != 0 {
        on.push('i');
    }
    if flags & MULTILINE != 0 {
        on.push('m');
    }
    if flags & COMMENTS != 0 && !literal {
        on.push('x');
    }
    let off = if flags & DOTALL == 0 { "-s" } else { "" };
    let body = if literal {
        escape_regex(pattern)
    } else {
        pattern.to_string()
    };
    if on.is_empty() && off.is_empty() {
        body
    } else {
        format!("(?{on}{off}){body}")
    }
}

/// Decodes a comparator the Java client sent.
pub fn comparator_from_pb(c: &pb::Comparator) -> Result<Comparator, ConvertError> {
    let class = c.name.as_str();
    let short = class.strip_prefix(FILTER_PACKAGE).unwrap_or("");
    let body = c.serialized_comparator.clone().unwrap_or_default();
    match short {
        "BinaryComparator" => Ok(Comparator::Binary(
            decode::<pb::BinaryComparator>(class, &body)?
                .comparable
                .value
                .unwrap_or_default()
                .to_vec(),
        )),
        "BinaryPrefixComparator" => Ok(Comparator::BinaryPrefix(
            decode::<pb::BinaryPrefixComparator>(class, &body)?
                .comparable
                .value
                .unwrap_or_default()
                .to_vec(),
        )),
        "SubstringComparator" => comparator_text(
            "substring:",
            decode::<pb::SubstringComparator>(class, &body)?
                .substr
                .as_bytes(),
        ),
        "RegexStringComparator" => {
            let r = decode::<pb::RegexStringComparator>(class, &body)?;
            comparator_text(
                "regexstring:",
                regex_pattern(&r.pattern, r.pattern_flags).as_bytes(),
            )
        }
        "NullComparator" => {
            decode::<pb::NullComparator>(class, &body)?;
            comparator_text("regexstring:", MATCH_NOTHING.as_bytes())
        }
        _ => Err(ConvertError::Unsupported {
            kind: "comparator",
            class: class.to_string(),
        }),
    }
}

fn named<M: Message>(short: &str, m: &M) -> (String, Bytes) {
    (
        format!("{FILTER_PACKAGE}{short}"),
        Bytes::from(m.encode_to_vec()),
    )
}

fn filter_msg<M: Message>(short: &str, m: &M) -> pb::Filter {
    let (name, body) = named(short, m);
    pb::Filter {
        name,
        serialized_filter: Some(body),
    }
}

/// A comparator as the Java client would send it.
pub fn comparator_to_pb(c: &Comparator) -> pb::Comparator {
    let comparable = |v: &[u8]| pb::ByteArrayComparable {
        value: Some(Bytes::copy_from_slice(v)),
    };
    let (name, body) = match c {
        Comparator::Binary(v) => named(
            "BinaryComparator",
            &pb::BinaryComparator {
                comparable: comparable(v),
            },
        ),
        Comparator::BinaryPrefix(v) => named(
            "BinaryPrefixComparator",
            &pb::BinaryPrefixComparator {
                comparable: comparable(v),
            },
        ),
        Comparator::Substring(s) => named(
            "SubstringComparator",
            &pb::SubstringComparator {
                substr: String::from_utf8_lossy(s).into_owned(),
            },
        ),
        Comparator::Regex(re) => named(
            "RegexStringComparator",
            &pb::RegexStringComparator {
                pattern: re.as_str().to_string(),
                pattern_flags: DOTALL,
                charset: "UTF-8".into(),
                engine: None,
            },
        ),
    };
    pb::Comparator {
        name,
        serialized_comparator: Some(body),
    }
}

fn compare_filter_to_pb(op: CompareOp, c: &Comparator) -> pb::CompareFilter {
    pb::CompareFilter {
        compare_op: compare_op_to_pb(op),
        comparator: Some(comparator_to_pb(c)),
    }
}

fn i32_saturating(v: u64) -> i32 {
    i32::try_from(v).unwrap_or(i32::MAX)
}

fn bytes(v: &[u8]) -> Bytes {
    Bytes::copy_from_slice(v)
}

/// A filter as the Java client would send it (for a Rust HBase client).
pub fn filter_to_pb(f: &Filter) -> pb::Filter {
    match f {
        Filter::And(items) | Filter::Or(items) => filter_msg(
            "FilterList",
            &pb::FilterList {
                operator: if matches!(f, Filter::And(_)) {
                    pb::filter_list::Operator::MustPassAll
                } else {
                    pb::filter_list::Operator::MustPassOne
                } as i32,
                filters: items.iter().map(filter_to_pb).collect(),
            },
        ),
        Filter::Skip(inner) => filter_msg(
            "SkipFilter",
            &pb::SkipFilter {
                filter: filter_to_pb(inner),
            },
        ),
        Filter::While { inner, .. } => filter_msg(
            "WhileMatchFilter",
            &pb::WhileMatchFilter {
                filter: filter_to_pb(inner),
            },
        ),
        Filter::Prefix(p) => filter_msg(
            "PrefixFilter",
            &pb::PrefixFilter {
                prefix: Some(bytes(p)),
            },
        ),
        Filter::ColumnPrefix(p) => filter_msg(
            "ColumnPrefixFilter",
            &pb::ColumnPrefixFilter { prefix: bytes(p) },
        ),
        Filter::MultipleColumnPrefix(ps) => {
            let mut sorted: Vec<&Vec<u8>> = ps.iter().collect();
            sorted.sort();
            filter_msg(
                "MultipleColumnPrefixFilter",
                &pb::MultipleColumnPrefixFilter {
                    sorted_prefixes: sorted.into_iter().map(|p| bytes(p)).collect(),
                },
            )
        }
        Filter::Row(op, c) => filter_msg(
            "RowFilter",
            &pb::RowFilter {
                compare_filter: compare_filter_to_pb(*op, c),
            },
        ),
        Filter::Family(op, c) => filter_msg(
            "FamilyFilter",
            &pb::FamilyFilter {
                compare_filter: compare_filter_to_pb(*op, c),
            },
        ),
        Filter::Qualifier(op, c) => filter_msg(
            "QualifierFilter",
            &pb::QualifierFilter {
                compare_filter: compare_filter_to_pb(*op, c),
            },
        ),
        Filter::Value(op, c) => filter_msg(
            "ValueFilter",
            &pb::ValueFilter {
                compare_filter: compare_filter_to_pb(*op, c),
            },
        ),
        Filter::SingleColumnValue(s) => {
            let scvf = pb::SingleColumnValueFilter {
                column_family: Some(bytes(&s.family)),
                column_qualifier: Some(bytes(&s.qualifier)),
                compare_op: compare_op_to_pb(s.op),
                comparator: comparator_to_pb(&s.comparator),
                filter_if_missing: Some(s.filter_if_missing),
                latest_version_only: Some(s.latest_version_only),
            };
            if s.exclude_column {
                filter_msg(
                    "SingleColumnValueExcludeFilter",
                    &pb::SingleColumnValueExcludeFilter {
                        single_column_value_filter: scvf,
                    },
                )
            } else {
                filter_msg("SingleColumnValueFilter", &scvf)
            }
        }
        Filter::Page { size, .. } => filter_msg(
            "PageFilter",
            &pb::PageFilter {
                page_size: i64::try_from(*size).unwrap_or(i64::MAX),
            },
        ),
        Filter::KeyOnly { len_as_value } => filter_msg(
            "KeyOnlyFilter",
            &pb::KeyOnlyFilter {
                len_as_val: *len_as_value,
            },
        ),
        Filter::FirstKeyOnly => filter_msg("FirstKeyOnlyFilter", &pb::FirstKeyOnlyFilter {}),
        Filter::ColumnCountGet(n) => filter_msg(
            "ColumnCountGetFilter",
            &pb::ColumnCountGetFilter {
                limit: i32_saturating(*n),
            },
        ),
        Filter::ColumnPagination { limit, offset } => filter_msg(
            "ColumnPaginationFilter",
            &pb::ColumnPaginationFilter {
                limit: i32_saturating(*limit),
                offset: Some(i32_saturating(*offset)),
                column_offset: None,
            },
        ),
        Filter::Timestamps(ts) => filter_msg(
            "TimestampsFilter",
            &pb::TimestampsFilter {
                timestamps: ts
                    .iter()
                    .map(|&t| i64::try_from(t).unwrap_or(i64::MAX))
                    .collect(),
                can_hint: None,
            },
        ),
        Filter::InclusiveStop(stop) => filter_msg(
            "InclusiveStopFilter",
            &pb::InclusiveStopFilter {
                stop_row_key: Some(bytes(stop)),
            },
        ),
        Filter::ColumnRange(r) => filter_msg(
            "ColumnRangeFilter",
            &pb::ColumnRangeFilter {
                min_column: (!r.min.is_empty()).then(|| bytes(&r.min)),
                min_column_inclusive: Some(r.min_inclusive),
                max_column: (!r.max.is_empty()).then(|| bytes(&r.max)),
                max_column_inclusive: Some(r.max_inclusive),
            },
        ),
    }
}

#[cfg(test)]
mod tests;
