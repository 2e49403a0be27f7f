//! [`FilterError`]: why a filter string was refused. Every message names
//! the 1-based column (in characters) where the problem is, or the filter
//! whose arguments are wrong. This module never parses.

/// A filter string that cannot be parsed or built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// The text does not follow the grammar.
    #[error("expected {expected} at column {column}, found {found}")]
    Syntax {
        column: usize,
        expected: String,
        found: String,
    },
    /// A quoted string never closes.
    #[error("unterminated string starting at column {column}")]
    UnterminatedString { column: usize },
    /// A character the language does not use.
    #[error("unexpected character '{ch}' at column {column}")]
    UnexpectedChar { column: usize, ch: char },
    /// A filter name that is not known.
    #[error("unknown filter '{name}' at column {column}{}", suggestion_text(.suggestion))]
    UnknownFilter {
        column: usize,
        name: String,
        suggestion: Option<String>,
    },
    /// A known filter given the wrong number or kind of arguments.
    #[error("{filter} at column {column}: {message}")]
    Arguments {
        column: usize,
        filter: String,
        message: String,
    },
    /// The expression nests too deeply to evaluate safely.
    #[error("filter nests deeper than {limit} levels at column {column}")]
    TooDeep { column: usize, limit: usize },
    /// The filter string is empty.
    #[error("the filter string is empty")]
    Empty,
}

fn suggestion_text(s: &Option<String>) -> String {
    match s {
        Some(s) => format!("; did you mean '{s}'?"),
        None => String::new(),
    }
}
