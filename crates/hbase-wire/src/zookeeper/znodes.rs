//! The znodes an HBase client reads to find a cluster, built from what a
//! ferrobase master knows: the tree under `zookeeper.znode.parent`
//! (`/hbase` by default) as HBase's own master would have written it.
//!
//! ```text
//! /                          children: the parent's first component
//! /hbase                     children: hbaseid, master, meta-region-server, rs, backup-masters
//! /hbase/hbaseid             PBUF + ClusterId { cluster_id }
//! /hbase/master              PBUF + Master { master: ServerName, rpc_version: 0, info_port }
//! /hbase/meta-region-server  PBUF + MetaRegionServer { server, rpc_version: 0, state: OPEN }
//! /hbase/rs                  children: one "host,port,startcode" per live region server
//! /hbase/backup-masters      children: none
//! ```
//!
//! HBase prefixes some values with a writer id (`0xFF`, id length, id);
//! its clients strip that prefix only when it is there, so none is
//! written. This module holds values only; answering requests for them is
//! the server's.

use crate::names::{ServerName, with_pb_magic};
use crate::pb;
use bytes::Bytes;

/// HBase's default `zookeeper.znode.parent`.
pub const DEFAULT_PARENT: &str = "/hbase";

/// What the tree is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterView {
    pub cluster_id: String,
    /// The active master; `None` while there is none (no `master` znode).
    pub master: Option<ServerName>,
    /// The master's info port, 0 when it has none.
    pub master_info_port: u16,
    /// Where `hbase:meta` is served; `None` while it is nowhere.
    pub meta: Option<ServerName>,
    pub region_servers: Vec<ServerName>,
}

/// A znode: its value and its children's names.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Znode {
    pub data: Bytes,
    pub children: Vec<String>,
}

/// The znodes under one parent.
#[derive(Debug, Clone)]
pub struct Znodes {
    /// Normalised: starts with `/`, no trailing `/`, not `/` itself.
    parent: String,
    view: ClusterView,
}

impl Znodes {
    /// The tree for `view` under `parent` (`zookeeper.znode.parent`); a
    /// parent of `/` or empty is taken as [`DEFAULT_PARENT`].
    pub fn new(parent: &str, view: ClusterView) -> Znodes {
        let trimmed = parent.trim_end_matches('/');
        let parent = if trimmed.is_empty() {
            DEFAULT_PARENT.to_string()
        } else if trimmed.starts_with('/') {
            trimmed.to_string()
        } else {
            format!("/{trimmed}")
        };
        Znodes { parent, view }
    }

    /// The znode at `path`, `None` where there is none.
    pub fn get(&self, path: &str) -> Option<Znode> {
        if !path.starts_with('/') {
            return None;
        }
        let path = if path.len() > 1 {
            path.trim_end_matches('/')
        } else {
            path
        };
        if let Some(rest) = path.strip_prefix(self.parent.as_str()) {
            if rest.is_empty() {
                return Some(self.parent_node());
            }
            return rest.strip_prefix('/').and_then(|child| self.child(child));
        }
        // An ancestor of the parent: one child, the next component.
        let ancestor = if path == "/" { "" } else { path };
        let below = self.parent.strip_prefix(ancestor)?.strip_prefix('/')?;
        let next = below.split('/').next()?;
        Some(Znode {
            data: Bytes::new(),
            children: vec![next.to_string()],
        })
    }

    fn parent_node(&self) -> Znode {
        let mut children = vec!["hbaseid".to_string(), "rs".into(), "backup-masters".into()];
        if self.view.master.is_some() {
            children.push("master".into());
        }
        if self.view.meta.is_some() {
            children.push("meta-region-server".into());
        }
        children.sort();
        Znode {
            data: Bytes::new(),
            children,
        }
    }

    fn child(&self, name: &str) -> Option<Znode> {
        let data = match name {
            "hbaseid" => with_pb_magic(&pb::ClusterId {
                cluster_id: self.view.cluster_id.clone(),
            }),
            "master" => with_pb_magic(&pb::Master {
                master: self.view.master.as_ref()?.to_pb(),
                rpc_version: Some(0),
                info_port: Some(u32::from(self.view.master_info_port)),
            }),
            "meta-region-server" => with_pb_magic(&pb::MetaRegionServer {
                server: self.view.meta.as_ref()?.to_pb(),
                rpc_version: Some(0),
                state: Some(pb::region_state::State::Open as i32),
            }),
            "rs" => {
                return Some(Znode {
                    data: Bytes::new(),
                    children: self
                        .view
                        .region_servers
                        .iter()
                        .map(ToString::to_string)
                        .collect(),
                });
            }
            "backup-masters" => Bytes::new(),
            other => {
                // A region server's own znode under rs/.
                let server = other.strip_prefix("rs/")?;
                self.view
                    .region_servers
                    .iter()
                    .any(|s| s.to_string() == server)
                    .then(Bytes::new)?
            }
        };
        Some(Znode {
            data,
            children: Vec::new(),
        })
    }
}
