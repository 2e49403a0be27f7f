//! Coordination: which region servers are live and how the master reaches
//! them, behind a narrow trait.
//!
//! Standalone uses [`InProcess`] (one server in the same process, called
//! directly). The distributed mode implements the same traits over etcd and
//! gRPC (`crate::etcd`); the master never assumes the server is in its
//! process. This module never decides assignments: the master does.

use crate::error::Result;
use crate::region_server::RegionServer;
use ferrobase_proto::pb;
use ferrobase_storage::RegionInfo;
use ferrobase_types::TableDescriptor;
use std::sync::Arc;

/// What the master asks of one region server.
pub trait RegionServerAdmin: Send + Sync {
    /// Where clients reach it.
    fn address(&self) -> String;
    /// Its unique name (distributed mode: `host_port_startcode`, also the
    /// name of its WAL directory).
    fn name(&self) -> String {
        self.address()
    }
    /// Load of its regions, or why it could not be asked.
    fn try_load(&self) -> Result<pb::ServerLoad> {
        Ok(self.load())
    }
    /// Opens a region.
    fn open_region(&self, table: &TableDescriptor, region: &RegionInfo) -> Result<()>;
    /// Closes a region (flushing it).
    fn close_region(&self, region: u64) -> Result<()>;
    /// Flushes a region and waits.
    fn flush_region(&self, region: u64) -> Result<()>;
    /// Compacts a region and waits.
    fn compact_region(&self, region: u64, major: bool) -> Result<()>;
    /// Load of its regions.
    fn load(&self) -> pb::ServerLoad;
    /// Takes `parent` out of service and returns its middle row.
    fn split_point(&self, table: &TableDescriptor, parent: &RegionInfo) -> Result<Vec<u8>>;
    /// Copies `parent` into `daughters` (not yet serving) and closes it.
    fn split_region(
        &self,
        table: &TableDescriptor,
        parent: &RegionInfo,
        daughters: &[RegionInfo; 2],
    ) -> Result<()>;
    /// Puts `parent` back in service after a failed split.
    fn abort_split(&self, table: &TableDescriptor, parent: &RegionInfo) -> Result<()>;
    /// Replaces the server's copy of the permissions.
    fn set_acl(&self, state: &crate::acl::AclState) -> Result<()>;
    /// Turns the server's compactions on or off (HBase's
    /// `compaction_switch`); returns the state before.
    fn set_compactions(&self, on: bool) -> Result<bool>;
}

/// Live region servers, as the master sees them.
pub trait Coordination: Send + Sync {
    /// Every live region server.
    fn live_servers(&self) -> Vec<Arc<dyn RegionServerAdmin>>;
    /// Of the server names in `candidates` (WAL directories found on
    /// shared storage), those that are not registered as live, asked
    /// afresh (not from a cache): their WALs may be split.
    fn dead_servers(&self, candidates: &[String]) -> Result<Vec<String>> {
        let _ = candidates;
        Ok(Vec::new())
    }
}

impl RegionServerAdmin for RegionServer {
    fn address(&self) -> String {
        RegionServer::address(self)
    }
    fn open_region(&self, table: &TableDescriptor, region: &RegionInfo) -> Result<()> {
        RegionServer::open_region(self, table, region.clone())
    }
    fn close_region(&self, region: u64) -> Result<()> {
        RegionServer::close_region(self, region)
    }
    fn flush_region(&self, region: u64) -> Result<()> {
        RegionServer::flush_region(self, region)
    }
    fn compact_region(&self, region: u64, major: bool) -> Result<()> {
        RegionServer::compact_region(self, region, major)
    }
    fn load(&self) -> pb::ServerLoad {
        RegionServer::load(self)
    }
    fn split_point(&self, table: &TableDescriptor, parent: &RegionInfo) -> Result<Vec<u8>> {
        RegionServer::split_point(self, table, parent)
    }
    fn split_region(
        &self,
        table: &TableDescriptor,
        parent: &RegionInfo,
        daughters: &[RegionInfo; 2],
    ) -> Result<()> {
        RegionServer::split_region(self, table, parent, daughters)
    }
    fn abort_split(&self, table: &TableDescriptor, parent: &RegionInfo) -> Result<()> {
        RegionServer::abort_split(self, table, parent)
    }
    fn set_acl(&self, state: &crate::acl::AclState) -> Result<()> {
        self.access_checker().set_state(state.clone());
        Ok(())
    }
    fn set_compactions(&self, on: bool) -> Result<bool> {
        let prev = self.engine().compactions_enabled();
        self.engine().set_compactions_enabled(on);
        Ok(prev)
    }
}

/// The standalone coordination: a fixed set of servers in this process.
pub struct InProcess {
    servers: Vec<Arc<dyn RegionServerAdmin>>,
}

impl InProcess {
    /// Coordination over `servers`.
    pub fn new(servers: Vec<Arc<dyn RegionServerAdmin>>) -> InProcess {
        InProcess { servers }
    }
}

impl Coordination for InProcess {
    fn live_servers(&self) -> Vec<Arc<dyn RegionServerAdmin>> {
        self.servers.clone()
    }
}
