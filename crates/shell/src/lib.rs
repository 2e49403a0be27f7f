//! `ferrobase shell`: the HBase shell's commands, syntax and output, on
//! the ferrobase client library.
//!
//! - [`lexer`] and [`parser`]: the Ruby-ish command syntax;
//! - [`value`]: arguments and their conversions;
//! - [`commands`]: every command (DDL, DML, reads, tools, help);
//! - [`format`](mod@format): HBase's output shapes;
//! - [`session`]: a [`Shell`] that runs text against a server;
//! - [`repl`]: interactive line editing, `-e`, files and stdin.
//!
//! The shell never evaluates filters (the server does) and never talks to
//! storage: everything goes through [`ferrobase_client`].

pub mod commands;
pub mod format;
pub mod lexer;
pub mod parser;
pub mod repl;
pub mod session;
pub mod value;

pub use repl::{Options, run};
pub use session::{Outcome, Shell};

use ferrobase_client::ClientError;
use ferrobase_types::DescriptorError;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShellError {
    #[error("{0}")]
    Syntax(#[from] parser::ParseError),
    #[error("unknown command '{name}'{}", suggestion.as_ref().map(|s| format!("; did you mean '{s}'?")).unwrap_or_default())]
    UnknownCommand {
        name: String,
        suggestion: Option<String>,
    },
    #[error("{0}")]
    Argument(String),
    #[error("{}", client_message(.0))]
    Client(#[from] ClientError),
    #[error("{0}")]
    Descriptor(#[from] DescriptorError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// A server error as HBase's shell words it: the server's message with its
/// stable code.
fn client_message(e: &ClientError) -> String {
    match e {
        ClientError::Server { code, message } => format!("{message} ({code})"),
        other => other.to_string(),
    }
}

/// An argument error.
pub(crate) fn arg_err<T>(message: impl Into<String>) -> Result<T, ShellError> {
    Err(ShellError::Argument(message.into()))
}
