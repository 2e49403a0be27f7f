//! Compare operators and byte comparators (`binary:`, `binaryprefix:`,
//! `substring:`, `regexstring:`) with HBase's semantics: a comparator
//! compares *itself* to the cell's bytes, and the operator reads as
//! "cell op comparator" (`ValueFilter(<, 'binary:5')` keeps values below
//! `5`). `substring:` is case-insensitive and `regexstring:` finds a match
//! anywhere (Java's `Matcher.find` with DOTALL), as in HBase; both only
//! support `=` and `!=`. This module never looks at whole cells or rows.

use regex::bytes::{Regex, RegexBuilder};
use std::cmp::Ordering;

/// HBase's `CompareOperator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareOp {
    Less,
    LessOrEqual,
    Equal,
    NotEqual,
    GreaterOrEqual,
    Greater,
}

impl CompareOp {
    /// The operator for `<`, `<=`, `=`, `!=`, `>=`, `>` (and HBase's
    /// names `LESS` … `GREATER`).
    pub fn parse(text: &str) -> Option<CompareOp> {
        Some(match text {
            "<" | "LESS" => CompareOp::Less,
            "<=" | "LESS_OR_EQUAL" => CompareOp::LessOrEqual,
            "=" | "EQUAL" => CompareOp::Equal,
            "!=" | "NOT_EQUAL" => CompareOp::NotEqual,
            ">=" | "GREATER_OR_EQUAL" => CompareOp::GreaterOrEqual,
            ">" | "GREATER" => CompareOp::Greater,
            _ => return None,
        })
    }

    /// True when the cell passes, given how the cell's bytes order against
    /// the comparator's.
    pub fn keeps(self, cell_vs_comparator: Ordering) -> bool {
        use Ordering::*;
        match self {
            CompareOp::Less => cell_vs_comparator == Less,
            CompareOp::LessOrEqual => cell_vs_comparator != Greater,
            CompareOp::Equal => cell_vs_comparator == Equal,
            CompareOp::NotEqual => cell_vs_comparator != Equal,
            CompareOp::GreaterOrEqual => cell_vs_comparator != Less,
            CompareOp::Greater => cell_vs_comparator == Greater,
        }
    }
}

/// A byte comparator.
#[derive(Clone, Debug)]
pub enum Comparator {
    Binary(Vec<u8>),
    BinaryPrefix(Vec<u8>),
    /// Lower-cased needle.
    Substring(Vec<u8>),
    Regex(Regex),
}

/// Largest compiled regex, so a filter string cannot exhaust memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

impl Comparator {
    /// Parses `type:value`; the error says what was wrong.
    pub fn parse(text: &[u8]) -> Result<Comparator, String> {
        let Some(colon) = text.iter().position(|&b| b == b':') else {
            return Err(format!(
                "comparator '{}' has no type: write binary:, binaryprefix:, substring: or regexstring:",
                String::from_utf8_lossy(text)
            ));
        };
        let (kind, value) = (&text[..colon], &text[colon + 1..]);
        match kind {
            b"binary" => Ok(Comparator::Binary(value.to_vec())),
            b"binaryprefix" => Ok(Comparator::BinaryPrefix(value.to_vec())),
            b"substring" => Ok(Comparator::Substring(value.to_ascii_lowercase())),
            b"regexstring" => {
                let pattern = std::str::from_utf8(value)
                    .map_err(|_| "regexstring pattern is not UTF-8".to_string())?;
                RegexBuilder::new(pattern)
                    .dot_matches_new_line(true)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map(Comparator::Regex)
                    .map_err(|e| format!("invalid regexstring '{pattern}': {e}"))
            }
            other => Err(format!(
                "unknown comparator type '{}': expected binary, binaryprefix, substring or regexstring",
                String::from_utf8_lossy(other)
            )),
        }
    }

    /// True for comparators that only say "matches" or "does not match".
    pub fn is_match_only(&self) -> bool {
        matches!(self, Comparator::Substring(_) | Comparator::Regex(_))
    }

    /// How `cell` orders against this comparator. Match-only comparators
    /// answer `Equal` on a match and `Less` otherwise (HBase's compareTo
    /// returns 1, "comparator greater", when there is no match).
    pub fn order(&self, cell: &[u8]) -> Ordering {
        match self {
            Comparator::Binary(v) => cell.cmp(v),
            Comparator::BinaryPrefix(v) => cell[..cell.len().min(v.len())].cmp(v),
            Comparator::Substring(needle) => {
                let hay = cell.to_ascii_lowercase();
                let found =
                    needle.is_empty() || hay.windows(needle.len()).any(|w| w == &needle[..]);
                if found {
                    Ordering::Equal
                } else {
                    Ordering::Less
                }
            }
            Comparator::Regex(re) => {
                if re.is_match(cell) {
                    Ordering::Equal
                } else {
                    Ordering::Less
                }
            }
        }
    }

    /// True when `cell` passes `op` against this comparator.
    pub fn passes(&self, op: CompareOp, cell: &[u8]) -> bool {
        op.keeps(self.order(cell))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(s: &str) -> Comparator {
        match Comparator::parse(s.as_bytes()) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn binary_orders_the_cell_against_the_value() {
        let c = cmp("binary:m");
        assert!(c.passes(CompareOp::Less, b"a"));
        assert!(!c.passes(CompareOp::Less, b"m"));
        assert!(c.passes(CompareOp::LessOrEqual, b"m"));
        assert!(c.passes(CompareOp::Greater, b"ma"));
        assert!(c.passes(CompareOp::NotEqual, b"x"));
        assert!(c.passes(CompareOp::Equal, b"m"));
    }

    #[test]
    fn binaryprefix_compares_only_the_prefix() {
        let c = cmp("binaryprefix:ab");
        assert!(c.passes(CompareOp::Equal, b"abc"));
        assert!(!c.passes(CompareOp::Equal, b"a"));
        assert!(c.passes(CompareOp::Greater, b"ac"));
    }

    #[test]
    fn substring_ignores_case_and_regex_finds_anywhere() {
        assert!(cmp("substring:ELL").passes(CompareOp::Equal, b"hello"));
        assert!(cmp("substring:xyz").passes(CompareOp::NotEqual, b"hello"));
        assert!(cmp("regexstring:l+o$").passes(CompareOp::Equal, b"hello"));
        assert!(cmp("regexstring:a.b").passes(CompareOp::Equal, b"a\nb"));
        assert!(!cmp("regexstring:^x").passes(CompareOp::Equal, b"hello"));
    }

    #[test]
    fn bad_comparators_say_why() {
        let e = Comparator::parse(b"bin:x").err().unwrap_or_default();
        assert!(e.contains("unknown comparator type 'bin'"), "{e}");
        let e = Comparator::parse(b"abc").err().unwrap_or_default();
        assert!(e.contains("has no type"), "{e}");
        let e = Comparator::parse(b"regexstring:(")
            .err()
            .unwrap_or_default();
        assert!(e.contains("invalid regexstring"), "{e}");
    }
}
