//! How far a write must get before it is acknowledged (HBase's
//! `Durability`).

use std::fmt;
use std::str::FromStr;

/// Per-mutation durability; `UseDefault` takes the table's.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum Durability {
    /// The table's durability (which itself defaults to `SyncWal`).
    #[default]
    UseDefault,
    /// Not written to the WAL: lost if the process dies before a flush.
    SkipWal,
    /// Appended to the WAL buffer; written out by a background task within
    /// `hbase.regionserver.optionallogflushinterval`.
    AsyncWal,
    /// Written to the operating system before the ack: survives the death of
    /// the process, not of the machine.
    SyncWal,
    /// `fdatasync`ed before the ack: survives a power cut.
    FsyncWal,
}

impl Durability {
    /// HBase's names.
    pub const NAMES: [&'static str; 5] = [
        "USE_DEFAULT",
        "SKIP_WAL",
        "ASYNC_WAL",
        "SYNC_WAL",
        "FSYNC_WAL",
    ];

    /// The name HBase uses.
    pub fn name(self) -> &'static str {
        match self {
            Durability::UseDefault => "USE_DEFAULT",
            Durability::SkipWal => "SKIP_WAL",
            Durability::AsyncWal => "ASYNC_WAL",
            Durability::SyncWal => "SYNC_WAL",
            Durability::FsyncWal => "FSYNC_WAL",
        }
    }

    /// Resolves `UseDefault` against a table default (itself resolved to
    /// `SyncWal` when it is `UseDefault`, as in HBase).
    pub fn resolve(self, table_default: Durability) -> Durability {
        match (self, table_default) {
            (Durability::UseDefault, Durability::UseDefault) => Durability::SyncWal,
            (Durability::UseDefault, t) => t,
            (d, _) => d,
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Durability {
    type Err = String;

    /// Accepts HBase's names in any case, and the short forms
    /// `skip`, `async`, `sync`, `fsync` used by the bench tool.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_uppercase().as_str() {
            "USE_DEFAULT" | "DEFAULT" => Ok(Durability::UseDefault),
            "SKIP_WAL" | "SKIP" => Ok(Durability::SkipWal),
            "ASYNC_WAL" | "ASYNC" => Ok(Durability::AsyncWal),
            "SYNC_WAL" | "SYNC" => Ok(Durability::SyncWal),
            "FSYNC_WAL" | "FSYNC" => Ok(Durability::FsyncWal),
            _ => Err(format!(
                "unknown durability '{s}'; valid values: {}",
                Durability::NAMES.join(", ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_resolve() {
        for name in Durability::NAMES {
            let d: Durability = name.parse().unwrap_or_default();
            assert_eq!(d.name(), name);
        }
        assert_eq!("fsync".parse::<Durability>(), Ok(Durability::FsyncWal));
        let err = "bogus".parse::<Durability>().err().unwrap_or_default();
        assert!(err.contains("SYNC_WAL"), "{err}");
        assert_eq!(
            Durability::UseDefault.resolve(Durability::UseDefault),
            Durability::SyncWal
        );
        assert_eq!(
            Durability::UseDefault.resolve(Durability::AsyncWal),
            Durability::AsyncWal
        );
        assert_eq!(
            Durability::SkipWal.resolve(Durability::FsyncWal),
            Durability::SkipWal
        );
    }
}
