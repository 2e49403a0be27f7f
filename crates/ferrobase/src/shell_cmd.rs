//! `ferrobase shell`: command-line glue for the HBase-style shell in
//! `ferrobase-shell`. Owns only argument parsing; the shell owns the rest.

use crate::config;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct ShellArgs {
    /// The master's address (the standalone server's by default).
    #[arg(long, default_value = ferrobase_shell::repl::DEFAULT_SERVER)]
    pub server: String,
    /// Run these commands (separated by `;` or newlines) and exit;
    /// the first error exits non-zero.
    #[arg(short = 'e', long = "execute", value_name = "COMMANDS")]
    pub execute: Option<String>,
    /// A script of shell commands to run (the first error exits non-zero).
    pub file: Option<PathBuf>,
    /// A TOML settings file (client settings such as retries).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// `name=value` setting overrides, applied after the file.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Connect with TLS, trusting the CA certificates in this PEM file
    /// (`hbase.client.netty.tls.enabled`, `hbase.rpc.tls.truststore.location`).
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// This client's private key and certificate (one PEM file) for mutual
    /// TLS (`hbase.rpc.tls.keystore.location`).
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
}

/// Runs the shell; a failed non-interactive run exits with status 1.
pub fn run(args: ShellArgs) -> anyhow::Result<()> {
    let mut settings = config::load(args.config.as_deref(), &args.set)?;
    settings.apply_client_tls_flags(args.tls_ca.as_deref(), args.tls_cert.as_deref());
    let code = ferrobase_shell::run(ferrobase_shell::Options {
        server: args.server,
        execute: args.execute,
        file: args.file,
        settings,
    });
    if code != 0 {
        // The shell already printed the error in HBase's words.
        std::process::exit(code);
    }
    Ok(())
}
