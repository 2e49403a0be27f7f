//! The parser: tokens into commands. A command is a bare word followed by
//! arguments separated by commas, optionally in parentheses; an argument is
//! a string, number, word, `[array]` or `{dict}`, and trailing `KEY =>
//! value` pairs without braces form one dict (as Ruby does). Commands end
//! at `;` or at a newline that does not follow an open bracket, a comma
//! or `=>`.
//!
//! It owns syntax errors (with the position and what was expected) and
//! telling an unfinished command ([`ParseError::Incomplete`]) from a wrong
//! one; it never knows what a command does.

use crate::lexer::{LexError, Pos, Tok, lex};
use crate::value::Value;

/// One parsed command.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    pub name: String,
    pub args: Vec<Value>,
    pub pos: Pos,
}

/// Why text did not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The text stops inside a string, array, dict or argument list: more
    /// lines may complete it.
    #[error("unexpected end of input: {0}")]
    Incomplete(String),
    #[error("syntax error at line {}, column {}: {message}", pos.line, pos.column)]
    Syntax { pos: Pos, message: String },
}

impl ParseError {
    /// The position of a syntax error.
    pub fn pos(&self) -> Option<Pos> {
        match self {
            ParseError::Syntax { pos, .. } => Some(*pos),
            ParseError::Incomplete(_) => None,
        }
    }
}

/// Parses every command in `text`.
pub fn parse(text: &str) -> Result<Vec<Command>, ParseError> {
    let tokens = lex(text).map_err(|e| match e {
        LexError::Unterminated { quote, pos } => ParseError::Incomplete(format!(
            "string opened with {quote} at line {}, column {} is not closed",
            pos.line, pos.column
        )),
        LexError::Bad { pos, message } => ParseError::Syntax { pos, message },
    })?;
    let end = tokens
        .last()
        .map(|(_, p)| *p)
        .unwrap_or(Pos { line: 1, column: 1 });
    Parser { tokens, i: 0, end }.program()
}

struct Parser {
    tokens: Vec<(Tok, Pos)>,
    i: usize,
    end: Pos,
}

const VALUE: &str = "a value (a 'string', a number, [an array] or {a dict})";

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.i).map(|(t, _)| t)
    }

    fn pos(&self) -> Pos {
        self.tokens.get(self.i).map(|(_, p)| *p).unwrap_or(self.end)
    }

    fn next(&mut self) -> Option<(Tok, Pos)> {
        let t = self.tokens.get(self.i).cloned();
        self.i += 1;
        t
    }

    fn skip_newlines(&mut self) {
        while self.peek() == Some(&Tok::Newline) {
            self.i += 1;
        }
    }

    fn error<T>(&self, expected: &str) -> Result<T, ParseError> {
        match self.tokens.get(self.i) {
            None => Err(ParseError::Incomplete(format!("expected {expected}"))),
            Some((t, pos)) => Err(ParseError::Syntax {
                pos: *pos,
                message: format!("expected {expected}, found {t}"),
            }),
        }
    }

    fn program(mut self) -> Result<Vec<Command>, ParseError> {
        let mut out = Vec::new();
        loop {
            while matches!(self.peek(), Some(Tok::End | Tok::Newline)) {
                self.i += 1;
            }
            if self.peek().is_none() {
                return Ok(out);
            }
            out.push(self.command()?);
            match self.peek() {
                None | Some(Tok::End | Tok::Newline) => {}
                Some(_) => return self.error("',' or the end of the command"),
            }
        }
    }

    fn command(&mut self) -> Result<Command, ParseError> {
        let pos = self.pos();
        let name = match self.peek() {
            Some(Tok::Word(w)) => w.clone(),
            _ => return self.error("a command name"),
        };
        self.i += 1;
        let args = if self.peek() == Some(&Tok::LParen) {
            self.i += 1;
            self.skip_newlines();
            let args = if self.peek() == Some(&Tok::RParen) {
                Vec::new()
            } else {
                self.args(true)?
            };
            self.skip_newlines();
            match self.peek() {
                Some(Tok::RParen) => self.i += 1,
                _ => return self.error("')' or ','"),
            }
            args
        } else if matches!(self.peek(), None | Some(Tok::End | Tok::Newline)) {
            Vec::new()
        } else {
            self.args(false)?
        };
        Ok(Command { name, args, pos })
    }

    /// Comma-separated arguments; trailing `k => v` pairs become one dict.
    fn args(&mut self, in_parens: bool) -> Result<Vec<Value>, ParseError> {
        let mut args = Vec::new();
        let mut pairs: Option<Vec<(Value, Value)>> = None;
        loop {
            if in_parens {
                self.skip_newlines();
            }
            let v = self.value()?;
            if self.peek() == Some(&Tok::Arrow) {
                self.i += 1;
                self.skip_newlines();
                let val = self.value()?;
                pairs.get_or_insert_with(Vec::new).push((v, val));
            } else {
                if let Some(p) = pairs.take() {
                    args.push(Value::Dict(p));
                }
                args.push(v);
            }
            if self.peek() == Some(&Tok::Comma) {
                self.i += 1;
                // A trailing comma continues the command on the next line.
                self.skip_newlines();
                continue;
            }
            break;
        }
        if let Some(p) = pairs {
            args.push(Value::Dict(p));
        }
        Ok(args)
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        let Some(tok) = self.peek().cloned() else {
            return self.error(VALUE);
        };
        let v = match tok {
            Tok::Str(s) => Value::Str(s),
            Tok::Int(n) => Value::Int(n),
            Tok::Float(n) => Value::Float(n),
            Tok::Word(w) => Value::Word(w),
            Tok::LBracket => return self.array(),
            Tok::LBrace => return self.dict(),
            _ => return self.error(VALUE),
        };
        self.i += 1;
        Ok(v)
    }

    fn array(&mut self) -> Result<Value, ParseError> {
        self.next();
        let mut items = Vec::new();
        loop {
            self.skip_newlines();
            if self.peek() == Some(&Tok::RBracket) {
                self.i += 1;
                return Ok(Value::Array(items));
            }
            items.push(self.value()?);
            self.skip_newlines();
            match self.peek() {
                Some(Tok::Comma) => self.i += 1,
                Some(Tok::RBracket) => {}
                _ => return self.error("',' or ']'"),
            }
        }
    }

    fn dict(&mut self) -> Result<Value, ParseError> {
        self.next();
        let mut pairs = Vec::new();
        loop {
            self.skip_newlines();
            if self.peek() == Some(&Tok::RBrace) {
                self.i += 1;
                return Ok(Value::Dict(pairs));
            }
            let k = self.value()?;
            self.skip_newlines();
            if self.peek() != Some(&Tok::Arrow) {
                return self.error("'=>' after a dict key");
            }
            self.i += 1;
            self.skip_newlines();
            let v = self.value()?;
            pairs.push((k, v));
            self.skip_newlines();
            match self.peek() {
                Some(Tok::Comma) => self.i += 1,
                Some(Tok::RBrace) => {}
                _ => return self.error("',' or '}'"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Command {
        let mut v = parse(s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v.len(), 1, "{v:?}");
        v.remove(0)
    }

    #[test]
    fn seed_004_line() {
        let c = one(
            "create 'NewsClickFeedback',{NAME=>'Toutiao',VERSIONS=>1,BLOCKCACHE=>true,BLOOMFILTER=>'ROW',COMPRESSION=>'SNAPPY',TTL => '259200', DATA_BLOCK_ENCODING => 'PREFIX', BLOCKSIZE => '65536'},{SPLITS => ['1','2','3','4','5','6','7','8','9','a','b','c','d','e','f']}",
        );
        assert_eq!(c.name, "create");
        assert_eq!(c.args.len(), 3);
        assert!(
            matches!(&c.args[2], Value::Dict(p) if matches!(&p[0].1, Value::Array(a) if a.len() == 15))
        );
    }

    #[test]
    fn bare_pairs_form_one_dict_and_parens_work() {
        let c = one("alter 't', NAME => 'f', VERSIONS => 5");
        assert_eq!(c.args.len(), 2);
        assert!(matches!(&c.args[1], Value::Dict(p) if p.len() == 2));
        let c = one("get('t', 'r')");
        assert_eq!(c.args.len(), 2);
        assert_eq!(one("list").args.len(), 0);
    }

    #[test]
    fn separators_and_continuations() {
        assert_eq!(parse("list; list\nlist").map(|v| v.len()), Ok(3));
        assert_eq!(parse("scan 't', {\nLIMIT => 1\n}").map(|v| v.len()), Ok(1));
        assert_eq!(
            parse("put 't',\n 'r', 'f:q', 'v'").map(|v| v[0].args.len()),
            Ok(4)
        );
    }

    #[test]
    fn incomplete_versus_wrong() {
        assert!(matches!(
            parse("create 't', {NAME => 'f'"),
            Err(ParseError::Incomplete(_))
        ));
        assert!(matches!(
            parse("scan 't', {LIMIT =>"),
            Err(ParseError::Incomplete(_))
        ));
        assert!(matches!(parse("put 't"), Err(ParseError::Incomplete(_))));
        let e = parse("put 't' 'r'").err();
        assert!(
            matches!(&e, Some(ParseError::Syntax { pos, message }) if pos.column == 9 && message.contains("expected ','")),
            "{e:?}"
        );
        let e = parse("scan 't', {LIMIT 1}").err();
        assert!(
            matches!(&e, Some(ParseError::Syntax { message, .. }) if message.contains("'=>'")),
            "{e:?}"
        );
        assert!(matches!(parse("'t'"), Err(ParseError::Syntax { .. })));
    }
}
