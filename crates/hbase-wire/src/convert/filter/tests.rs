//! Unit tests of the parent module.

use super::*;

fn class(short: &str) -> String {
    format!("{FILTER_PACKAGE}{short}")
}

fn java<M: Message>(short: &str, m: &M) -> pb::Filter {
    filter_msg(short, m)
}

fn binary(v: &[u8]) -> pb::Comparator {
    comparator_to_pb(&Comparator::Binary(v.to_vec()))
}

#[test]
fn every_filter_of_the_language_round_trips() {
    let composite = [
        "PrefixFilter('a') AND (ValueFilter(=, 'binary:v') OR KeyOnlyFilter())",
        "SKIP ValueFilter(!=, 'binary:0')",
        "WHILE RowFilter(<, 'binary:m')",
    ];
    for text in ferrobase_filter::registry::EXAMPLES
        .iter()
        .chain(&composite)
    {
        let parsed = ferrobase_filter::parse(text).unwrap();
        let wire = filter_to_pb(&parsed);
        let back = filter_from_pb(&wire).unwrap();
        assert_eq!(format!("{back:?}"), format!("{parsed:?}"), "{text}");
    }
}

#[test]
fn java_forms_decode_with_hbase_defaults() {
    let f = filter_from_pb(&java("PrefixFilter", &pb::PrefixFilter { prefix: None })).unwrap();
    assert!(matches!(f, Filter::Prefix(p) if p.is_empty()));
    let scvf = pb::SingleColumnValueFilter {
        column_family: Some(Bytes::from_static(b"f")),
        column_qualifier: Some(Bytes::from_static(b"q")),
        compare_op: pb::CompareType::Equal as i32,
        comparator: binary(b"v"),
        filter_if_missing: Some(true),
        latest_version_only: Some(true),
    };
    let Filter::SingleColumnValue(s) =
        filter_from_pb(&java("SingleColumnValueFilter", &scvf)).unwrap()
    else {
        panic!()
    };
    assert!(s.filter_if_missing && s.latest_version_only && !s.exclude_column);
    // FilterList of two pages and a WhileMatch: distinct state slots.
    let list = pb::FilterList {
        operator: pb::filter_list::Operator::MustPassOne as i32,
        filters: vec![
            java("PageFilter", &pb::PageFilter { page_size: 5 }),
            java("PageFilter", &pb::PageFilter { page_size: 6 }),
            java(
                "WhileMatchFilter",
                &pb::WhileMatchFilter {
                    filter: java("FirstKeyOnlyFilter", &pb::FirstKeyOnlyFilter {}),
                },
            ),
        ],
    };
    let f = filter_from_pb(&java("FilterList", &list)).unwrap();
    assert_eq!(f.slots(), 3);
    let empty = pb::FilterList {
        operator: pb::filter_list::Operator::MustPassOne as i32,
        filters: vec![],
    };
    assert!(
        matches!(filter_from_pb(&java("FilterList", &empty)).unwrap(), Filter::And(v) if v.is_empty())
    );
}

#[test]
fn unsupported_classes_are_named() {
    let fuzzy = pb::Filter {
        name: class("FuzzyRowFilter"),
        serialized_filter: None,
    };
    let e = filter_from_pb(&fuzzy).unwrap_err();
    assert_eq!(
        e.to_string(),
        "filter org.apache.hadoop.hbase.filter.FuzzyRowFilter is not supported by ferrobase"
    );
    assert_eq!(e.exception().class, crate::ExceptionClass::DoNotRetryIo);
    let custom = pb::Filter {
        name: "com.example.MyFilter".into(),
        serialized_filter: None,
    };
    assert!(
        filter_from_pb(&custom)
            .unwrap_err()
            .to_string()
            .contains("com.example.MyFilter")
    );
    let long = pb::Comparator {
        name: class("LongComparator"),
        serialized_comparator: None,
    };
    let vf = pb::ValueFilter {
        compare_filter: pb::CompareFilter {
            compare_op: pb::CompareType::Less as i32,
            comparator: Some(long),
        },
    };
    let e = filter_from_pb(&java("ValueFilter", &vf))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("comparator org.apache.hadoop.hbase.filter.LongComparator"),
        "{e}"
    );
    let with_offset = pb::ColumnPaginationFilter {
        limit: 1,
        offset: None,
        column_offset: Some(Bytes::from_static(b"c")),
    };
    assert!(filter_from_pb(&java("ColumnPaginationFilter", &with_offset)).is_err());
    let no_op = pb::RowFilter {
        compare_filter: pb::CompareFilter {
            compare_op: pb::CompareType::NoOp as i32,
            comparator: Some(binary(b"x")),
        },
    };
    assert!(
        filter_from_pb(&java("RowFilter", &no_op))
            .unwrap_err()
            .to_string()
            .contains("NO_OP")
    );
    let negative = java("PageFilter", &pb::PageFilter { page_size: -1 });
    assert!(
        filter_from_pb(&negative)
            .unwrap_err()
            .to_string()
            .contains(">= 0")
    );
    let garbage = pb::Filter {
        name: class("PageFilter"),
        serialized_filter: Some(Bytes::from_static(b"\xff\xff")),
    };
    assert!(
        filter_from_pb(&garbage)
            .unwrap_err()
            .to_string()
            .contains("does not decode")
    );
}

#[test]
fn deep_nesting_is_refused() {
    let mut f = java("FirstKeyOnlyFilter", &pb::FirstKeyOnlyFilter {});
    for _ in 0..MAX_DEPTH + 5 {
        f = java("SkipFilter", &pb::SkipFilter { filter: f });
    }
    assert!(
        filter_from_pb(&f)
            .unwrap_err()
            .to_string()
            .contains("nest deeper")
    );
}

#[test]
fn comparators_keep_java_semantics() {
    let regex = |pattern: &str, flags: i32| {
        comparator_from_pb(&pb::Comparator {
            name: class("RegexStringComparator"),
            serialized_comparator: Some(Bytes::from(
                pb::RegexStringComparator {
                    pattern: pattern.into(),
                    pattern_flags: flags,
                    charset: "UTF-8".into(),
                    engine: None,
                }
                .encode_to_vec(),
            )),
        })
        .unwrap()
    };
    let eq = CompareOp::Equal;
    assert!(regex("a.b", DOTALL).passes(eq, b"a\nb"));
    assert!(!regex("a.b", 0).passes(eq, b"a\nb"));
    assert!(regex("abc", DOTALL | CASE_INSENSITIVE).passes(eq, b"xABCx"));
    assert!(regex("a.c", DOTALL | LITERAL).passes(eq, b"a.c"));
    assert!(!regex("a.c", DOTALL | LITERAL).passes(eq, b"abc"));
    let sub = comparator_from_pb(&pb::Comparator {
        name: class("SubstringComparator"),
        serialized_comparator: Some(Bytes::from(
            pb::SubstringComparator {
                substr: "ELL".into(),
            }
            .encode_to_vec(),
        )),
    })
    .unwrap();
    assert!(sub.passes(eq, b"hello"));
    let null = comparator_from_pb(&pb::Comparator {
        name: class("NullComparator"),
        serialized_comparator: None,
    })
    .unwrap();
    // Every present value compares as "not null".
    assert!(!null.passes(eq, b""));
    assert!(!null.passes(eq, b"x"));
    assert!(null.passes(CompareOp::NotEqual, b"x"));
    let prefix =
        comparator_from_pb(&comparator_to_pb(&Comparator::BinaryPrefix(b"ab".to_vec()))).unwrap();
    assert!(prefix.passes(eq, b"abc"));
}
