//! The master's switches, HBase's `balance_switch`,
//! `catalogjanitor_switch` and `snapshot_cleanup_switch`: kept in the meta
//! so they survive restarts and master failovers; each chore reads its
//! switch at every pass. A switch only stops a chore from starting; a
//! pass asked for by name (`balancer`, `catalogjanitor_run`) runs anyway,
//! as in HBase.

use super::*;

/// Which switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Switch {
    /// The periodic balancer (`hbase.balancer.period`).
    Balancer,
    /// The janitor's chore (split and merge parents, unused directories).
    CatalogJanitor,
    /// The cleaner of expired snapshots.
    SnapshotCleanup,
}

impl Master {
    /// Turns `switch` on or off; returns its state before.
    pub fn set_switch(&self, switch: Switch, on: bool) -> Result<bool> {
        self.meta.update(|m| {
            let off = match switch {
                Switch::Balancer => &mut m.balancer_off,
                Switch::CatalogJanitor => &mut m.janitor_off,
                Switch::SnapshotCleanup => &mut m.snapshot_cleanup_off,
            };
            let was = !*off;
            *off = !on;
            Ok(was)
        })
    }

    /// Whether `switch` is on.
    pub fn switch_on(&self, switch: Switch) -> bool {
        self.meta.read(|m| match switch {
            Switch::Balancer => !m.balancer_off,
            Switch::CatalogJanitor => !m.janitor_off,
            Switch::SnapshotCleanup => !m.snapshot_cleanup_off,
        })
    }

    /// HBase's `compaction_switch`: every live region server's compactions
    /// on or off (not kept: a restarted server compacts again, as in
    /// HBase); returns each server's address and state before.
    pub fn compaction_switch(&self, on: bool) -> Result<Vec<(String, bool)>> {
        let mut out = Vec::new();
        for server in self.coordination.live_servers() {
            out.push((server.address(), server.set_compactions(on)?));
        }
        out.sort();
        Ok(out)
    }
}
