//! The grammar of HBase's `ParseFilter`:
//!
//! ```text
//! or     := and ("OR" and)*
//! and    := unary ("AND" unary)*
//! unary  := ("SKIP" | "WHILE") unary | "(" or ")" | Name "(" [arg ("," arg)*] ")"
//! arg    := 'quoted string' | number | true | false | < | <= | = | != | >= | >
//! ```
//!
//! so SKIP/WHILE bind tighter than AND, and AND tighter than OR. Keywords
//! are accepted in any case. Building a named filter from its arguments is
//! [`crate::registry`]'s job; this module never evaluates anything.

use crate::error::FilterError;
use crate::filter::Filter;
use crate::lexer::{Token, TokenKind, tokenize};
use crate::registry::{self, Arg};

/// Deepest nesting of parentheses, SKIP and WHILE accepted.
pub const MAX_DEPTH: usize = 64;

/// Parses a filter string.
pub fn parse(input: &str) -> Result<Filter, FilterError> {
    let tokens = tokenize(input)?;
    if tokens.is_empty() {
        return Err(FilterError::Empty);
    }
    let mut p = Parser {
        tokens,
        pos: 0,
        end_column: input.chars().count() + 1,
        next_slot: 0,
    };
    let f = p.or(0)?;
    if let Some(t) = p.peek() {
        return Err(FilterError::Syntax {
            column: t.column,
            expected: "AND, OR or the end of the filter".into(),
            found: t.kind.describe(),
        });
    }
    Ok(f)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    end_column: usize,
    /// Next state slot for PageFilter / WHILE.
    next_slot: usize,
}

fn is_keyword(t: &Token, kw: &str) -> bool {
    matches!(&t.kind, TokenKind::Word(w) if w.eq_ignore_ascii_case(kw))
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn column(&self) -> usize {
        self.peek().map_or(self.end_column, |t| t.column)
    }

    fn found(&self) -> String {
        self.peek()
            .map_or("the end of the filter".into(), |t| t.kind.describe())
    }

    fn syntax(&self, expected: &str) -> FilterError {
        FilterError::Syntax {
            column: self.column(),
            expected: expected.into(),
            found: self.found(),
        }
    }

    fn eat_keyword(&mut self, kw: &str) -> bool {
        if self.peek().is_some_and(|t| is_keyword(t, kw)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, kind: &TokenKind, what: &str) -> Result<usize, FilterError> {
        match self.peek() {
            Some(t) if &t.kind == kind => {
                let c = t.column;
                self.pos += 1;
                Ok(c)
            }
            _ => Err(self.syntax(what)),
        }
    }

    fn or(&mut self, depth: usize) -> Result<Filter, FilterError> {
        let mut items = vec![self.and(depth)?];
        while self.eat_keyword("OR") {
            items.push(self.and(depth)?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Filter::Or(items)
        })
    }

    fn and(&mut self, depth: usize) -> Result<Filter, FilterError> {
        let mut items = vec![self.unary(depth)?];
        while self.eat_keyword("AND") {
            items.push(self.unary(depth)?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Filter::And(items)
        })
    }

    fn unary(&mut self, depth: usize) -> Result<Filter, FilterError> {
        if depth >= MAX_DEPTH {
            return Err(FilterError::TooDeep {
                column: self.column(),
                limit: MAX_DEPTH,
            });
        }
        if self.eat_keyword("SKIP") {
            return Ok(Filter::Skip(Box::new(self.unary(depth + 1)?)));
        }
        if self.eat_keyword("WHILE") {
            let id = self.slot();
            return Ok(Filter::While {
                id,
                inner: Box::new(self.unary(depth + 1)?),
            });
        }
        let Some(t) = self.peek().cloned() else {
            return Err(self.syntax("a filter, '(', SKIP or WHILE"));
        };
        match t.kind {
            TokenKind::LParen => {
                self.pos += 1;
                let f = self.or(depth + 1)?;
                self.expect(&TokenKind::RParen, "')'")?;
                Ok(f)
            }
            TokenKind::Word(name) if !["AND", "OR"].iter().any(|k| is_keyword(&t, k)) => {
                self.pos += 1;
                self.call(&name, t.column)
            }
            _ => Err(self.syntax("a filter, '(', SKIP or WHILE")),
        }
    }

    fn slot(&mut self) -> usize {
        self.next_slot += 1;
        self.next_slot - 1
    }

    /// `Name(args)` after the name.
    fn call(&mut self, name: &str, column: usize) -> Result<Filter, FilterError> {
        let Some(canonical) = registry::canonical_name(name) else {
            return Err(FilterError::UnknownFilter {
                column,
                name: name.into(),
                suggestion: registry::suggest(name),
            });
        };
        self.expect(&TokenKind::LParen, &format!("'(' after {canonical}"))?;
        let mut args = Vec::new();
        if self.peek().is_some_and(|t| t.kind == TokenKind::RParen) {
            self.pos += 1;
        } else {
            loop {
                args.push(self.arg()?);
                match self.peek().map(|t| &t.kind) {
                    Some(TokenKind::Comma) => self.pos += 1,
                    Some(TokenKind::RParen) => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(self.syntax("',' or ')'")),
                }
            }
        }
        let mut slot = || self.slot();
        registry::build(canonical, column, args, &mut slot)
    }

    fn arg(&mut self) -> Result<Arg, FilterError> {
        let Some(t) = self.peek().cloned() else {
            return Err(self.syntax("an argument"));
        };
        let arg = match t.kind {
            TokenKind::Str(s) => Arg::Str(s),
            TokenKind::Number(n) => Arg::Number(n),
            TokenKind::Op(o) => Arg::Op(o),
            TokenKind::Word(w) => Arg::Word(w),
            _ => return Err(self.syntax("an argument")),
        };
        self.pos += 1;
        Ok(arg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> String {
        match parse(s) {
            Ok(f) => format!("parsed: {f:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn precedence_is_skip_and_or() {
        let f = parse("PrefixFilter('a') OR SKIP ValueFilter(=,'binary:x') AND KeyOnlyFilter()");
        let Ok(Filter::Or(items)) = f else {
            panic!("{f:?}")
        };
        assert_eq!(items.len(), 2);
        assert!(matches!(&items[0], Filter::Prefix(p) if p == b"a"));
        let Filter::And(and) = &items[1] else {
            panic!("{items:?}")
        };
        assert!(matches!(and[0], Filter::Skip(_)));
        assert!(matches!(and[1], Filter::KeyOnly { .. }));
    }

    #[test]
    fn parentheses_group() {
        let f = parse("(PrefixFilter('a') OR PrefixFilter('b')) AND FirstKeyOnlyFilter()");
        let Ok(Filter::And(items)) = f else {
            panic!("{f:?}")
        };
        assert!(matches!(items[0], Filter::Or(_)));
    }

    #[test]
    fn syntax_errors_name_the_column_and_expectation() {
        assert_eq!(
            err("PrefixFilter('abc'"),
            "expected ',' or ')' at column 19, found the end of the filter"
        );
        assert_eq!(
            err("PrefixFilter('a') AND"),
            "expected a filter, '(', SKIP or WHILE at column 22, found the end of the filter"
        );
        assert_eq!(
            err("(PrefixFilter('a') KeyOnlyFilter()"),
            "expected ')' at column 20, found 'KeyOnlyFilter'"
        );
        assert_eq!(
            err("PrefixFilter 'a'"),
            "expected '(' after PrefixFilter at column 14, found string 'a'"
        );
        assert_eq!(
            err("PrefixFilter('a') PrefixFilter('b')"),
            "expected AND, OR or the end of the filter at column 19, found 'PrefixFilter'"
        );
        assert_eq!(err("   "), "the filter string is empty");
    }

    #[test]
    fn unknown_filters_suggest_the_closest() {
        assert_eq!(
            err("PrefxFilter('a')"),
            "unknown filter 'PrefxFilter' at column 1; did you mean 'PrefixFilter'?"
        );
        assert_eq!(
            err("KeyOnlyFilter() AND keyonlyfilter()"),
            "unknown filter 'keyonlyfilter' at column 21; did you mean 'KeyOnlyFilter'?"
        );
        assert_eq!(
            err("Zzzzzzzzzzzzzzzzzzzz()"),
            "unknown filter 'Zzzzzzzzzzzzzzzzzzzz' at column 1"
        );
    }

    #[test]
    fn deep_nesting_is_refused() {
        let s = format!("{}KeyOnlyFilter(){}", "(".repeat(100), ")".repeat(100));
        assert!(err(&s).starts_with("filter nests deeper than 64 levels"));
        let s = format!("{}KeyOnlyFilter(){}", "(".repeat(10), ")".repeat(10));
        assert!(parse(&s).is_ok());
    }

    #[test]
    fn keywords_in_any_case() {
        assert!(parse("PrefixFilter('a') and skip KeyOnlyFilter() or while PageFilter(1)").is_ok());
    }
}
