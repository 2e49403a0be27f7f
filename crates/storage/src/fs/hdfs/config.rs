//! Parsing an `hdfs://` root: `hdfs://namenode[:port][/path][?name=value&…]`,
//! and the write options the settings give it.
//!
//! Owns the root's syntax and validation; never connects (a wrong host or
//! port shows at the first operation, as an error naming the path).

use crate::error::{Result, StorageError};
use ferrobase_types::Settings;
use std::collections::HashMap;

/// Client settings that differ from HDFS's defaults; a root's query may
/// set them otherwise.
/// - `dfs.client.failover.max.attempts`: how many times the client tries a
///   NameNode that does not answer before an operation fails (HDFS: 15,
///   about two minutes of back-off); 3 is a few seconds, so an unreachable
///   NameNode is reported rather than waited on.
/// - `...replace-datanode-on-failure.best-effort`: when a DataNode of a
///   WAL segment's pipeline dies and no other can replace it (a cluster of
///   three), the segment goes on with the DataNodes left (HDFS
///   re-replicates it later) instead of failing every later write.
const CLIENT_DEFAULTS: &[(&str, &str)] = &[
    ("dfs.client.failover.max.attempts", "3"),
    (
        "dfs.client.block.write.replace-datanode-on-failure.best-effort",
        "true",
    ),
];

/// A parsed root; see the module docs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HdfsConfig {
    /// `host:port`, or a nameservice of `HADOOP_CONF_DIR`'s hdfs-site.xml.
    pub authority: String,
    /// The root directory: absolute, normalized, `/` for the file system's.
    pub root: String,
    /// The user to act as (`?user=`; else `HADOOP_USER_NAME`, else the
    /// login name).
    pub user: Option<String>,
    /// Client settings passed to the HDFS client (`dfs.client.*` and other
    /// Hadoop names from the query), over `HADOOP_CONF_DIR`'s files.
    pub client: HashMap<String, String>,
    /// Replication of every file created (`dfs.replication`).
    pub replication: u32,
    /// Block size of store files and other files (`dfs.blocksize`).
    pub block_size: u64,
    /// Block size of WAL segments (`hbase.regionserver.hlog.blocksize`).
    pub wal_block_size: u64,
}

impl HdfsConfig {
    /// Parses `rest`, the part after `hdfs://`.
    pub fn parse(rest: &str, settings: &Settings) -> Result<HdfsConfig> {
        let bad = |why: String| {
            StorageError::InvalidRequest(format!("storage root 'hdfs://{rest}': {why}"))
        };
        let (location, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = match location.find('/') {
            Some(i) => location.split_at(i),
            None => (location, ""),
        };
        if authority.is_empty() {
            return Err(bad(
                "no NameNode (hdfs://namenode:8020/path, or a nameservice)".into(),
            ));
        }
        if let Some((_, port)) = authority.rsplit_once(':')
            && port.parse::<u16>().is_err()
        {
            return Err(bad(format!("'{port}' is not a port number")));
        }
        let root = normalize(path).map_err(bad)?;
        let mut client: HashMap<String, String> = CLIENT_DEFAULTS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut user = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| bad(format!("query part '{pair}' is not name=value")))?;
            match name {
                "user" if !value.is_empty() => user = Some(value.to_string()),
                n if n.starts_with("dfs.") || n.starts_with("hadoop.") || n.starts_with("ipc.") => {
                    client.insert(n.to_string(), value.to_string());
                }
                _ => {
                    return Err(bad(format!(
                        "unknown query parameter '{name}' (valid: user, and Hadoop client \
                         settings such as dfs.client.socket-timeout)"
                    )));
                }
            }
        }
        let replication = u32::try_from(settings.dfs_replication)
            .ok()
            .filter(|r| (1..=512).contains(r))
            .ok_or_else(|| {
                bad(format!(
                    "dfs.replication = {} (1 to 512)",
                    settings.dfs_replication
                ))
            })?;
        Ok(HdfsConfig {
            authority: authority.to_string(),
            root,
            user,
            client,
            replication,
            block_size: settings.dfs_blocksize,
            wal_block_size: settings.wal_block_size,
        })
    }

    /// `hdfs://authority`, what the client connects to.
    pub fn namenode_url(&self) -> String {
        format!("hdfs://{}", self.authority)
    }
}

/// `/a//b/./c/` → `/a/b/c`, `""` → `/`; `..` is refused (a root must not
/// reach outside its directory).
pub(crate) fn normalize(path: &str) -> std::result::Result<String, String> {
    let mut out = String::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(format!("'{path}': '..' is not allowed in an HDFS path")),
            part => {
                out.push('/');
                out.push_str(part);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_parse_or_say_what_is_wrong() {
        let s = Settings::default();
        let c = HdfsConfig::parse("nn:8020/hbase//data/", &s).unwrap();
        assert_eq!(
            (c.authority.as_str(), c.root.as_str(), c.replication),
            ("nn:8020", "/hbase/data", 3)
        );
        assert_eq!(c.namenode_url(), "hdfs://nn:8020");
        assert_eq!(c.wal_block_size, s.wal_block_size);
        let c = HdfsConfig::parse("ns1?user=hbase&dfs.client.socket-timeout=5000", &s).unwrap();
        assert_eq!((c.root.as_str(), c.user.as_deref()), ("/", Some("hbase")));
        assert_eq!(c.client["dfs.client.socket-timeout"], "5000");
        assert_eq!(c.client["dfs.client.failover.max.attempts"], "3");

        let one = Settings {
            dfs_replication: 0,
            ..Settings::default()
        };
        for (rest, settings, says) in [
            ("", &s, "no NameNode"),
            ("/x", &s, "no NameNode"),
            ("nn:80x/x", &s, "not a port"),
            ("nn/a/../b", &s, "'..'"),
            ("nn/a?colour=red", &s, "unknown query parameter 'colour'"),
            ("nn/a?user", &s, "not name=value"),
            ("nn/a", &one, "dfs.replication = 0"),
        ] {
            let e = HdfsConfig::parse(rest, settings)
                .expect_err(rest)
                .to_string();
            assert!(e.contains(says), "{rest}: {e}");
        }
    }
}
