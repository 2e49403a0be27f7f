//! Unit tests of the parent module.

use super::*;

fn check(op: CompareOp, expected: &[u8]) -> Check {
    Check {
        family: Bytes::from_static(b"f"),
        qualifier: Bytes::from_static(b"q"),
        time_range: (0, u64::MAX),
        op,
        comparator: Comparator::Binary(expected.to_vec()),
        expected_empty: expected.is_empty(),
    }
}

fn cell(v: &'static [u8]) -> Cell {
    Cell::put("r", "f", "q", 1, Bytes::from_static(v))
}

#[test]
fn empty_expected_value_means_absent_unless_not_equal() {
    assert!(check(CompareOp::Equal, b"").passes(None));
    assert!(!check(CompareOp::NotEqual, b"").passes(None));
    assert!(!check(CompareOp::Equal, b"").passes(Some(&cell(b"x"))));
    assert!(check(CompareOp::NotEqual, b"").passes(Some(&cell(b"x"))));
    assert!(!check(CompareOp::Equal, b"x").passes(None));
}

#[test]
fn operators_read_expected_op_stored() {
    // HBase: checkAndPut(..., LESS, "b") passes when "b" < stored.
    assert!(check(CompareOp::Less, b"b").passes(Some(&cell(b"c"))));
    assert!(!check(CompareOp::Less, b"b").passes(Some(&cell(b"a"))));
    assert!(check(CompareOp::Greater, b"b").passes(Some(&cell(b"a"))));
    assert!(check(CompareOp::Equal, b"b").passes(Some(&cell(b"b"))));
    assert!(check(CompareOp::GreaterOrEqual, b"b").passes(Some(&cell(b"b"))));
}
