//! What an import is told: the options of HBase's ImportTsv under their
//! HBase names and defaults, as flags or `-Dimporttsv.*=` settings.
//!
//! | `-D` name | flag | default |
//! |---|---|---|
//! | `importtsv.columns` | `--columns` | (required) |
//! | `importtsv.separator` | `--separator` | tab |
//! | `importtsv.skip.bad.lines` | `--skip-bad-lines` / `--fail-on-bad-lines` | true |
//! | `importtsv.timestamp` | `--timestamp` | the import's start, ms |
//! | `importtsv.skip.empty.columns` | | false |
//! | `importtsv.dry.run` | `--dry-run` | false |
//! | `importtsv.wal.durability` | `--durability` | the table's |
//! | `create.table` | | yes |
//! | `hbase.client.keyvalue.maxsize` and other settings | `--set` | the setting's |
//!
//! This module never reads a file.

use crate::ImportError;
use crate::columns::ColumnSpec;
use ferrobase_types::{Durability, Settings};
use std::path::PathBuf;

/// Everything an import is told.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    pub table: String,
    pub columns: ColumnSpec,
    pub files: Vec<PathBuf>,
    pub separator: u8,
    pub skip_bad_lines: bool,
    /// Every cell's timestamp unless a line has `HBASE_TS_KEY` (ms).
    pub timestamp: u64,
    pub skip_empty_columns: bool,
    pub dry_run: bool,
    pub bulk: bool,
    pub create_table: bool,
    pub durability: Durability,
    /// Reader threads.
    pub threads: usize,
    /// Bytes a reader takes of a file at a time.
    pub split_size: u64,
    /// The write path's buffer per reader (encoded bytes).
    pub write_buffer: u64,
    /// Memory for sorting lines into store files, over all readers.
    pub bulk_buffer: u64,
    pub rejects: PathBuf,
    /// The cluster's storage root, for `--bulk` against a distributed
    /// cluster (where the staging directory is relative to it).
    pub root: Option<String>,
    pub settings: Settings,
    pub quiet: bool,
}

/// Reads a boolean the way Hadoop's `Configuration.getBoolean` does.
fn boolean(name: &str, value: &str) -> Result<bool, ImportError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" => Ok(true),
        "false" | "no" => Ok(false),
        other => Err(ImportError::Invalid(format!(
            "-D{name}={other}: expected true or false"
        ))),
    }
}

/// Parses a durability by HBase's names (`SKIP_WAL`, …, `USE_DEFAULT`).
pub fn durability(text: &str) -> Result<Durability, ImportError> {
    match text.trim().to_ascii_uppercase().as_str() {
        "USE_DEFAULT" | "DEFAULT" => Ok(Durability::UseDefault),
        "SKIP_WAL" | "SKIP" => Ok(Durability::SkipWal),
        "ASYNC_WAL" | "ASYNC" => Ok(Durability::AsyncWal),
        "SYNC_WAL" | "SYNC" => Ok(Durability::SyncWal),
        "FSYNC_WAL" | "FSYNC" => Ok(Durability::FsyncWal),
        other => Err(ImportError::Invalid(format!(
            "durability '{other}': valid are USE_DEFAULT, SKIP_WAL, ASYNC_WAL, SYNC_WAL, FSYNC_WAL"
        ))),
    }
}

/// The `-D` settings of an import, before they meet the flags.
#[derive(Clone, Debug, Default)]
pub struct Defines {
    pub columns: Option<String>,
    pub separator: Option<String>,
    pub skip_bad_lines: Option<bool>,
    pub timestamp: Option<u64>,
    pub skip_empty_columns: bool,
    pub dry_run: bool,
    pub durability: Option<Durability>,
    pub create_table: Option<bool>,
    /// Any other `name=value`: a setting (`hbase.client.keyvalue.maxsize`).
    pub settings: Vec<String>,
}

impl Defines {
    /// Takes one `-D` value, `name=value`.
    pub fn add(&mut self, define: &str) -> Result<(), ImportError> {
        let (name, value) = define.split_once('=').ok_or_else(|| {
            ImportError::Invalid(format!(
                "-D{define}: expected name=value, e.g. -Dimporttsv.separator=,"
            ))
        })?;
        let name = name.trim();
        match name {
            "importtsv.columns" => self.columns = Some(value.to_string()),
            "importtsv.separator" => self.separator = Some(value.to_string()),
            "importtsv.skip.bad.lines" => self.skip_bad_lines = Some(boolean(name, value)?),
            "importtsv.timestamp" => {
                self.timestamp = Some(value.trim().parse().map_err(|_| {
                    ImportError::Invalid(format!(
                        "-D{name}={value}: expected milliseconds since the epoch"
                    ))
                })?)
            }
            "importtsv.skip.empty.columns" => self.skip_empty_columns = boolean(name, value)?,
            "importtsv.dry.run" => self.dry_run = boolean(name, value)?,
            "importtsv.wal.durability" => self.durability = Some(durability(value)?),
            "create.table" => self.create_table = Some(boolean(name, value)?),
            "importtsv.bulk.output" => {
                return Err(ImportError::Invalid(
                    "-Dimporttsv.bulk.output is not taken: --bulk writes the store files and loads them in one step".into(),
                ));
            }
            n if n.starts_with("importtsv.") => {
                return Err(ImportError::Invalid(format!(
                    "-D{n}: not an option of ferrobase import (see docs/import.md)"
                )));
            }
            _ => self.settings.push(define.to_string()),
        }
        Ok(())
    }
}

/// Milliseconds since the epoch now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Resolves `--columns` against `-Dimporttsv.columns` (one, not both).
pub fn columns(flag: Option<&str>, defines: &Defines) -> Result<ColumnSpec, ImportError> {
    match (flag, defines.columns.as_deref()) {
        (Some(_), Some(_)) => Err(ImportError::Invalid(
            "give the columns once: --columns or -Dimporttsv.columns".into(),
        )),
        (Some(c), None) | (None, Some(c)) => ColumnSpec::parse(c),
        (None, None) => Err(ImportError::Invalid(
            "--columns is required, e.g. --columns HBASE_ROW_KEY,f:a,f:b".into(),
        )),
    }
}

/// Resolves the bad-line policy: skip (HBase's default) unless
/// `--fail-on-bad-lines` or `-Dimporttsv.skip.bad.lines=false`.
pub fn skip_bad_lines(skip: bool, fail: bool, defines: &Defines) -> Result<bool, ImportError> {
    let from_define = defines.skip_bad_lines;
    if skip && fail {
        return Err(ImportError::Invalid(
            "--skip-bad-lines and --fail-on-bad-lines contradict each other".into(),
        ));
    }
    match from_define {
        Some(d) if (skip && !d) || (fail && d) => Err(ImportError::Invalid(
            "-Dimporttsv.skip.bad.lines contradicts --skip-bad-lines/--fail-on-bad-lines".into(),
        )),
        Some(d) => Ok(d),
        None => Ok(!fail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_take_hbase_names_and_refuse_the_rest() {
        let mut d = Defines::default();
        d.add("importtsv.separator=,").unwrap();
        d.add("importtsv.skip.bad.lines=false").unwrap();
        d.add("importtsv.timestamp=42").unwrap();
        d.add("importtsv.wal.durability=SKIP_WAL").unwrap();
        d.add("hbase.client.keyvalue.maxsize=100").unwrap();
        assert_eq!(d.separator.as_deref(), Some(","));
        assert_eq!(d.skip_bad_lines, Some(false));
        assert_eq!(d.timestamp, Some(42));
        assert_eq!(d.durability, Some(Durability::SkipWal));
        assert_eq!(d.settings, vec!["hbase.client.keyvalue.maxsize=100"]);
        for (bad, says) in [
            ("importtsv.separator", "expected name=value"),
            ("importtsv.skip.bad.lines=maybe", "true or false"),
            ("importtsv.timestamp=soon", "milliseconds"),
            ("importtsv.bulk.output=/x", "--bulk"),
            ("importtsv.mapper.class=X", "not an option"),
            ("importtsv.wal.durability=NEVER", "durability 'NEVER'"),
        ] {
            let e = Defines::default().add(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert!(!skip_bad_lines(false, false, &d).unwrap());
        assert!(skip_bad_lines(true, true, &Defines::default()).is_err());
        assert!(skip_bad_lines(true, false, &d).is_err());
        assert!(skip_bad_lines(false, false, &Defines::default()).unwrap());
    }
}
