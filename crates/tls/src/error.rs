//! The crate's errors: a setting that cannot be used, a store file that
//! cannot be read, a handshake that failed (with its cause in words, see
//! [`crate::handshake`]) and a plaintext peer on a TLS-only port.

/// A TLS failure, naming the setting, file or peer concerned.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A setting's value cannot be used.
    #[error("{setting}: {message}")]
    Setting {
        setting: &'static str,
        message: String,
    },
    /// A key store or trust store file cannot be read.
    #[error("{setting} = {path}: cannot read it: {source}")]
    Read {
        setting: &'static str,
        path: String,
        source: std::io::Error,
    },
    /// A key store or trust store file is not what it should be.
    #[error("{setting} = {path}: {message}")]
    Store {
        setting: &'static str,
        path: String,
        message: String,
    },
    /// rustls refused the configuration (a key that does not match its
    /// certificate, say).
    #[error("TLS configuration: {0}")]
    Config(String),
    /// The handshake with `peer` failed; `reason` says why.
    #[error("TLS handshake with {peer} failed: {reason}")]
    Handshake { peer: String, reason: String },
    /// A plaintext connection reached a TLS-only port.
    #[error("plaintext connection from {peer} refused: {what}")]
    Plaintext { peer: String, what: String },
    /// Connecting to `peer` failed before any TLS.
    #[error("cannot connect to {peer}: {source}")]
    Connect {
        peer: String,
        source: std::io::Error,
    },
}
