//! The lexer of HBase's filter language: names, numbers, quoted strings
//! (`'it''s'` holds a quote), compare operators, `(`, `)`, `,`.
//!
//! Positions are 1-based character columns. This module never decides
//! what a token means in context: the parser does.

use crate::error::FilterError;

/// One token's kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    LParen,
    RParen,
    Comma,
    /// A bare word: filter name, keyword, `true`/`false`.
    Word(String),
    /// An integer, possibly negative.
    Number(String),
    /// A quoted string's bytes, quotes removed and `''` unescaped.
    Str(Vec<u8>),
    /// `<`, `<=`, `=`, `!=`, `>`, `>=`.
    Op(String),
}

/// A token and the column it starts at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub column: usize,
}

impl TokenKind {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::LParen => "'('".into(),
            TokenKind::RParen => "')'".into(),
            TokenKind::Comma => "','".into(),
            TokenKind::Word(w) => format!("'{w}'"),
            TokenKind::Number(n) => format!("number {n}"),
            TokenKind::Str(s) => format!("string '{}'", String::from_utf8_lossy(s)),
            TokenKind::Op(o) => format!("operator '{o}'"),
        }
    }
}

/// Splits `input` into tokens.
pub fn tokenize(input: &str) -> Result<Vec<Token>, FilterError> {
    let chars: Vec<char> = input.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        let simple = |kind| Token { kind, column };
        match c {
            c if c.is_whitespace() => i += 1,
            '(' => {
                out.push(simple(TokenKind::LParen));
                i += 1;
            }
            ')' => {
                out.push(simple(TokenKind::RParen));
                i += 1;
            }
            ',' => {
                out.push(simple(TokenKind::Comma));
                i += 1;
            }
            '\'' => {
                let (s, next) = quoted(&chars, i)?;
                out.push(simple(TokenKind::Str(s)));
                i = next;
            }
            '<' | '>' | '=' | '!' => {
                let two = chars.get(i + 1) == Some(&'=') && c != '=';
                if c == '!' && !two {
                    return Err(FilterError::UnexpectedChar { column, ch: c });
                }
                let op = if two { format!("{c}=") } else { c.to_string() };
                out.push(simple(TokenKind::Op(op)));
                i += if two { 2 } else { 1 };
            }
            c if c == '-' || c.is_ascii_digit() => {
                let start = i;
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                if text == "-" {
                    return Err(FilterError::UnexpectedChar { column, ch: '-' });
                }
                out.push(simple(TokenKind::Number(text)));
            }
            c if c.is_alphanumeric() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push(simple(TokenKind::Word(chars[start..i].iter().collect())));
            }
            ch => return Err(FilterError::UnexpectedChar { column, ch }),
        }
    }
    Ok(out)
}

/// A quoted string starting at `chars[start]`; returns its bytes and the
/// index after the closing quote.
fn quoted(chars: &[char], start: usize) -> Result<(Vec<u8>, usize), FilterError> {
    let mut s = String::new();
    let mut i = start + 1;
    loop {
        match chars.get(i) {
            None => return Err(FilterError::UnterminatedString { column: start + 1 }),
            Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                s.push('\'');
                i += 2;
            }
            Some('\'') => return Ok((s.into_bytes(), i + 1)),
            Some(&c) => {
                s.push(c);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<TokenKind> {
        tokenize(s)
            .unwrap_or_default()
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn tokens_of_a_compare_filter() {
        assert_eq!(
            kinds("ValueFilter(>=, 'binary:it''s')"),
            vec![
                TokenKind::Word("ValueFilter".into()),
                TokenKind::LParen,
                TokenKind::Op(">=".into()),
                TokenKind::Comma,
                TokenKind::Str(b"binary:it's".to_vec()),
                TokenKind::RParen,
            ]
        );
    }

    #[test]
    fn columns_are_one_based_characters() {
        let t = tokenize("  PageFilter (-3)").unwrap_or_default();
        assert_eq!(t[0].column, 3);
        assert_eq!(t[2].kind, TokenKind::Number("-3".into()));
        assert_eq!(t[2].column, 15);
    }

    #[test]
    fn bad_characters_and_strings_are_errors() {
        assert_eq!(
            tokenize("PrefixFilter('abc"),
            Err(FilterError::UnterminatedString { column: 14 })
        );
        assert_eq!(
            tokenize("a ; b"),
            Err(FilterError::UnexpectedChar { column: 3, ch: ';' })
        );
        assert_eq!(
            tokenize("x !"),
            Err(FilterError::UnexpectedChar { column: 3, ch: '!' })
        );
    }
}
