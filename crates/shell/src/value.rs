//! Argument values (strings, numbers, words, arrays, dicts) and the
//! conversions commands need: bytes, text, integers, booleans, and dict
//! lookups by HBase's constant names (`NAME`, `'NAME'` and `"NAME"` are
//! the same key).
//!
//! It owns the "wrong kind of argument" errors; it never runs a command.

use crate::ShellError;
use ferrobase_types::binary::to_string_binary;

/// One argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(Vec<u8>),
    Int(i64),
    Float(f64),
    /// A bare word: a constant such as `NAME`, or `true`/`false`/`nil`.
    Word(String),
    Array(Vec<Value>),
    Dict(Vec<(Value, Value)>),
}

fn bad(what: &str, v: &Value) -> ShellError {
    ShellError::Argument(format!(
        "{what} must be {}, not {}",
        expected(what),
        v.describe()
    ))
}

fn expected(what: &str) -> &'static str {
    if what.ends_with("COLUMNS") || what.contains("SPLITS") || what.contains("TIMERANGE") {
        "an array"
    } else {
        "a string"
    }
}

impl Value {
    /// How the value reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Value::Str(s) => format!("'{}'", to_string_binary(s)),
            Value::Int(n) => n.to_string(),
            Value::Float(n) => n.to_string(),
            Value::Word(w) => w.clone(),
            Value::Array(_) => "an array".into(),
            Value::Dict(_) => "a dict".into(),
        }
    }

    /// The key form of a string or word (for dict lookups and constants).
    pub fn key(&self) -> Option<String> {
        match self {
            Value::Str(s) => Some(String::from_utf8_lossy(s).into_owned()),
            Value::Word(w) => Some(w.clone()),
            _ => None,
        }
    }

    /// Bytes of a string (numbers as their decimal text, as Ruby's `to_s`).
    pub fn bytes(&self, what: &str) -> Result<Vec<u8>, ShellError> {
        match self {
            Value::Str(s) => Ok(s.clone()),
            Value::Int(n) => Ok(n.to_string().into_bytes()),
            Value::Float(n) => Ok(n.to_string().into_bytes()),
            Value::Word(w) if w != "nil" => Ok(w.clone().into_bytes()),
            v => Err(bad(what, v)),
        }
    }

    /// Text of a string, number or word (attribute values: `VERSIONS => 1`,
    /// `BLOCKCACHE => true`, `TTL => '259200'`).
    pub fn text(&self, what: &str) -> Result<String, ShellError> {
        self.bytes(what).and_then(|b| {
            String::from_utf8(b)
                .map_err(|_| ShellError::Argument(format!("{what} is not UTF-8 text")))
        })
    }

    /// An integer (a number, or a string of digits).
    pub fn int(&self, what: &str) -> Result<i64, ShellError> {
        match self {
            Value::Int(n) => Ok(*n),
            Value::Str(s) => std::str::from_utf8(s)
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .ok_or_else(|| {
                    ShellError::Argument(format!(
                        "{what} must be an integer, not {}",
                        self.describe()
                    ))
                }),
            v => Err(ShellError::Argument(format!(
                "{what} must be an integer, not {}",
                v.describe()
            ))),
        }
    }

    /// A non-negative integer.
    pub fn uint(&self, what: &str) -> Result<u64, ShellError> {
        let n = self.int(what)?;
        u64::try_from(n)
            .map_err(|_| ShellError::Argument(format!("{what} must be 0 or more, not {n}")))
    }

    /// `true`/`false` (bare or quoted).
    pub fn boolean(&self, what: &str) -> Result<bool, ShellError> {
        match self.key().map(|k| k.to_ascii_lowercase()).as_deref() {
            Some("true") => Ok(true),
            Some("false") => Ok(false),
            _ => Err(ShellError::Argument(format!(
                "{what} must be true or false, not {}",
                self.describe()
            ))),
        }
    }

    /// The items of an array (a single value counts as a one-item array).
    pub fn list(&self) -> Vec<Value> {
        match self {
            Value::Array(a) => a.clone(),
            v => vec![v.clone()],
        }
    }
}

/// A dict argument: keys compared as HBase constants (case-sensitive, as in
/// HBase, quoted or bare).
pub struct Dict<'a> {
    pairs: &'a [(Value, Value)],
}

impl<'a> Dict<'a> {
    pub fn new(pairs: &'a [(Value, Value)]) -> Dict<'a> {
        Dict { pairs }
    }

    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.pairs
            .iter()
            .find(|(k, _)| k.key().as_deref() == Some(key))
            .map(|(_, v)| v)
    }

    /// Every pair as (key text, value); a key that is not a string fails.
    pub fn entries(&self) -> Result<Vec<(String, &'a Value)>, ShellError> {
        self.pairs
            .iter()
            .map(|(k, v)| {
                k.key().map(|k| (k, v)).ok_or_else(|| {
                    ShellError::Argument(format!("a dict key must be a name, not {}", k.describe()))
                })
            })
            .collect()
    }

    /// Fails on a key outside `valid`, naming it and listing the valid ones.
    pub fn check_keys(&self, command: &str, valid: &[&str]) -> Result<(), ShellError> {
        for (k, _) in self.entries()? {
            if !valid.contains(&k.as_str()) {
                return Err(ShellError::Argument(format!(
                    "unknown argument '{k}' for {command}; valid arguments: {}",
                    valid.join(", ")
                )));
            }
        }
        Ok(())
    }
}
