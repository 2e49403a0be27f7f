//! The lexer of the shell's Ruby-ish syntax: quoted strings (single quotes
//! literal, double quotes with Ruby's escapes such as `\xNN`), numbers,
//! bare words (`NAME`, `true`, command names), `=>`, `,`, brackets,
//! braces, parentheses, `;` and newlines.
//!
//! It owns turning text into tokens with their line and column; it never
//! decides what a sequence of tokens means (the parser does). It never
//! panics, whatever the input.

use std::fmt;

/// Where a token starts: 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A quoted string's bytes (escapes resolved).
    Str(Vec<u8>),
    Int(i64),
    Float(f64),
    /// A bare word: `NAME`, `true`, `scan`, `SPLITS`.
    Word(String),
    Arrow,
    Comma,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    LParen,
    RParen,
    /// `;`: the end of a command.
    End,
    /// A newline: the end of a command unless an expression is open.
    Newline,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Str(_) => f.write_str("a string"),
            Tok::Int(n) => write!(f, "'{n}'"),
            Tok::Float(n) => write!(f, "'{n}'"),
            Tok::Word(w) => write!(f, "'{w}'"),
            Tok::Arrow => f.write_str("'=>'"),
            Tok::Comma => f.write_str("','"),
            Tok::LBracket => f.write_str("'['"),
            Tok::RBracket => f.write_str("']'"),
            Tok::LBrace => f.write_str("'{'"),
            Tok::RBrace => f.write_str("'}'"),
            Tok::LParen => f.write_str("'('"),
            Tok::RParen => f.write_str("')'"),
            Tok::End => f.write_str("';'"),
            Tok::Newline => f.write_str("end of line"),
        }
    }
}

/// A lexing failure.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LexError {
    /// The text ends inside a string: more input may complete it.
    Unterminated { pos: Pos, quote: char },
    /// A character or escape the syntax does not allow.
    Bad { pos: Pos, message: String },
}

/// Splits `text` into tokens with their positions.
pub fn lex(text: &str) -> Result<Vec<(Tok, Pos)>, LexError> {
    Lexer {
        chars: text.chars().collect(),
        i: 0,
        line: 1,
        column: 1,
    }
    .run()
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: usize,
    column: usize,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.i).copied()?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    fn run(mut self) -> Result<Vec<(Tok, Pos)>, LexError> {
        let mut out = Vec::new();
        while let Some(c) = self.peek(0) {
            let pos = self.pos();
            let tok = match c {
                ' ' | '\t' | '\r' => {
                    self.bump();
                    continue;
                }
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                    continue;
                }
                '\\' if self.peek(1) == Some('\n') => {
                    // An explicit line continuation.
                    self.bump();
                    self.bump();
                    continue;
                }
                '\n' => self.single(Tok::Newline),
                ';' => self.single(Tok::End),
                ',' => self.single(Tok::Comma),
                '[' => self.single(Tok::LBracket),
                ']' => self.single(Tok::RBracket),
                '{' => self.single(Tok::LBrace),
                '}' => self.single(Tok::RBrace),
                '(' => self.single(Tok::LParen),
                ')' => self.single(Tok::RParen),
                '=' if self.peek(1) == Some('>') => {
                    self.bump();
                    self.bump();
                    Tok::Arrow
                }
                '\'' => self.single_quoted(pos)?,
                '"' => self.double_quoted(pos)?,
                c if c.is_ascii_digit()
                    || (c == '-' && self.peek(1).is_some_and(|d| d.is_ascii_digit())) =>
                {
                    self.number(pos)?
                }
                c if c.is_alphabetic() || c == '_' => {
                    let mut w = String::new();
                    while let Some(c) = self.peek(0) {
                        if c.is_alphanumeric() || c == '_' || c == '?' || c == '!' {
                            w.push(c);
                            self.bump();
                        } else {
                            break;
                        }
                    }
                    Tok::Word(w)
                }
                other => {
                    return Err(LexError::Bad {
                        pos,
                        message: format!("unexpected character '{}'", other.escape_debug()),
                    });
                }
            };
            out.push((tok, pos));
        }
        Ok(out)
    }

    fn single(&mut self, t: Tok) -> Tok {
        self.bump();
        t
    }

    /// Ruby single quotes: only `\'` and `\\` are escapes.
    fn single_quoted(&mut self, start: Pos) -> Result<Tok, LexError> {
        self.bump();
        let mut s = String::new();
        loop {
            match self.bump() {
                None => {
                    return Err(LexError::Unterminated {
                        pos: start,
                        quote: '\'',
                    });
                }
                Some('\'') => return Ok(Tok::Str(s.into_bytes())),
                Some('\\') if matches!(self.peek(0), Some('\'') | Some('\\')) => {
                    if let Some(c) = self.bump() {
                        s.push(c);
                    }
                }
                Some(c) => s.push(c),
            }
        }
    }

    /// Ruby double quotes: `\xNN`, octal `\NNN`, `\uNNNN`, `\n`, `\t`, … .
    fn double_quoted(&mut self, start: Pos) -> Result<Tok, LexError> {
        self.bump();
        let mut out: Vec<u8> = Vec::new();
        loop {
            let pos = self.pos();
            match self.bump() {
                None => {
                    return Err(LexError::Unterminated {
                        pos: start,
                        quote: '"',
                    });
                }
                Some('"') => return Ok(Tok::Str(out)),
                Some('\\') => {
                    let Some(e) = self.bump() else {
                        return Err(LexError::Unterminated {
                            pos: start,
                            quote: '"',
                        });
                    };
                    match e {
                        'x' => {
                            let digits = self.take_while(2, |c| c.is_ascii_hexdigit());
                            let v = u8::from_str_radix(&digits, 16).map_err(|_| LexError::Bad {
                                pos,
                                message: "expected one or two hex digits after \\x".into(),
                            })?;
                            out.push(v);
                        }
                        '0'..='7' => {
                            let mut digits = e.to_string();
                            digits.push_str(&self.take_while(2, |c| ('0'..='7').contains(&c)));
                            let v = u32::from_str_radix(&digits, 8).unwrap_or(0);
                            out.push((v & 0xFF) as u8);
                        }
                        'u' => {
                            let digits = self.take_while(4, |c| c.is_ascii_hexdigit());
                            let ch = u32::from_str_radix(&digits, 16)
                                .ok()
                                .filter(|_| digits.len() == 4)
                                .and_then(char::from_u32)
                                .ok_or_else(|| LexError::Bad {
                                    pos,
                                    message: "expected four hex digits after \\u".into(),
                                })?;
                            push_char(&mut out, ch);
                        }
                        'n' => out.push(b'\n'),
                        't' => out.push(b'\t'),
                        'r' => out.push(b'\r'),
                        's' => out.push(b' '),
                        'a' => out.push(7),
                        'b' => out.push(8),
                        'e' => out.push(27),
                        'f' => out.push(12),
                        'v' => out.push(11),
                        other => push_char(&mut out, other),
                    }
                }
                Some(c) => push_char(&mut out, c),
            }
        }
    }

    fn take_while(&mut self, max: usize, ok: impl Fn(char) -> bool) -> String {
        let mut s = String::new();
        while s.len() < max {
            match self.peek(0) {
                Some(c) if ok(c) => {
                    s.push(c);
                    self.bump();
                }
                _ => break,
            }
        }
        s
    }

    fn number(&mut self, pos: Pos) -> Result<Tok, LexError> {
        let mut s = String::new();
        if self.peek(0) == Some('-') {
            s.push('-');
            self.bump();
        }
        let mut float = false;
        while let Some(c) = self.peek(0) {
            if c.is_ascii_alphanumeric() || c == '_' {
                s.push(c);
                self.bump();
            } else if c == '.' && !float && self.peek(1).is_some_and(|d| d.is_ascii_digit()) {
                float = true;
                s.push(c);
                self.bump();
            } else {
                break;
            }
        }
        let clean: String = s.chars().filter(|&c| c != '_').collect();
        let bad = || LexError::Bad {
            pos,
            message: format!("'{s}' is not a number"),
        };
        if float {
            return clean.parse::<f64>().map(Tok::Float).map_err(|_| bad());
        }
        let (neg, digits) = match clean.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, clean.as_str()),
        };
        let v = if let Some(hex) = digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
        {
            i64::from_str_radix(hex, 16)
        } else {
            digits.parse::<i64>()
        }
        .map_err(|_| bad())?;
        Ok(Tok::Int(if neg { -v } else { v }))
    }
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s)
            .unwrap_or_else(|e| panic!("{e:?}"))
            .into_iter()
            .map(|(t, _)| t)
            .collect()
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(toks(r"'a\x00'"), vec![Tok::Str(br"a\x00".to_vec())]);
        assert_eq!(
            toks(r#""a\x00\xff\n""#),
            vec![Tok::Str(b"a\x00\xff\n".to_vec())]
        );
        assert_eq!(toks(r"'it\'s'"), vec![Tok::Str(b"it's".to_vec())]);
        assert_eq!(toks(r#""\101""#), vec![Tok::Str(b"A".to_vec())]);
    }

    #[test]
    fn punctuation_numbers_words() {
        assert_eq!(
            toks("{NAME=>'f', VERSIONS => -3};x 1_000 0x10"),
            vec![
                Tok::LBrace,
                Tok::Word("NAME".into()),
                Tok::Arrow,
                Tok::Str(b"f".to_vec()),
                Tok::Comma,
                Tok::Word("VERSIONS".into()),
                Tok::Arrow,
                Tok::Int(-3),
                Tok::RBrace,
                Tok::End,
                Tok::Word("x".into()),
                Tok::Int(1000),
                Tok::Int(16),
            ]
        );
    }

    #[test]
    fn errors_have_positions() {
        assert_eq!(
            lex("put 't\n"),
            Err(LexError::Unterminated {
                pos: Pos { line: 1, column: 5 },
                quote: '\''
            })
        );
        assert!(matches!(
            lex("get 't' @"),
            Err(LexError::Bad {
                pos: Pos { line: 1, column: 9 },
                ..
            })
        ));
        assert!(matches!(lex("\"\\xZZ\""), Err(LexError::Bad { .. })));
    }
}
