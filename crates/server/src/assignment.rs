//! Assignment, the master's half: which live region server holds each
//! region, repaired by [`Master::reconcile`] and evened out by
//! [`Master::balance`].
//!
//! The truth about where a region is open is what the region servers
//! report (their load), not what the master remembers: a new active master
//! learns the cluster by asking, and a region whose server died is simply
//! not reported any more. Before a region that was on a dead server is
//! opened elsewhere, that server's WAL is split (recovered edits per
//! region), so the new owner replays every acknowledged edit.
//!
//! ```text
//! reconcile (every tick, and when servers come or go):
//!   1. ask every live server which regions it has open → assignments
//!      (a server that does not answer keeps its regions: it is not dead
//!      until its etcd lease says so)
//!   2. WAL directories of servers not registered → split, then removed
//!   3. regions of enabled tables held by nobody → the least-loaded server
//! ```
//!
//! Each server whose WAL step 2 splits is remembered as a [`DeadServer`]
//! (HBase's dead server list: the master page and
//! `hbase_master_dead_region_servers`) until a server comes back on the
//! same host and port; `hbase_master_server_crash_total` counts them and
//! `hbase_master_wal_split_milliseconds_total` adds up their WAL splits.
//!
//! Every step runs under the DDL lock, so no DDL call sees a half-done
//! pass. This module never talks to etcd or gRPC itself: only through
//! [`Coordination`](crate::coordination::Coordination).

use crate::coordination::RegionServerAdmin;
use crate::error::{Result, ServerError};
use crate::master::Master;
use ferrobase_proto::ErrorCode;
use ferrobase_storage::RegionInfo;
use ferrobase_storage::wal::split;
use std::time::{Instant, SystemTime};

/// How many dead servers the list keeps (the oldest go first).
const DEAD_KEPT: usize = 100;

/// A region server whose WAL this master split: it died (its etcd lease
/// ended) or was fenced while paused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadServer {
    /// Its name, `host_port_startcode` (its WAL directory's name).
    pub name: String,
    /// When its WAL split finished.
    pub at: SystemTime,
    /// Edits recovered from its WAL for regions it held.
    pub edits: u64,
    /// Regions that got recovered edits.
    pub regions: u64,
}

impl DeadServer {
    /// Its name as HBase forms server names (`host,port,startcode`);
    /// `None` for a name not of the `host_port_startcode` form.
    pub fn server_name(&self) -> Option<ferrobase_hbase_wire::names::ServerName> {
        let mut parts = self.name.rsplitn(3, '_');
        let start = parts.next()?.parse().ok()?;
        let port = parts.next()?.parse().ok()?;
        Some(ferrobase_hbase_wire::names::ServerName::new(
            parts.next()?,
            port,
            start,
        ))
    }

    /// `host_port` of a `host_port_startcode` name: a server restarted on
    /// the same address has another start code.
    fn address_part(name: &str) -> &str {
        name.rsplit_once('_').map_or(name, |(a, _)| a)
    }
}

impl Master {
    /// The dead servers that have not come back on the same address,
    /// oldest first.
    pub fn dead_servers(&self) -> Vec<DeadServer> {
        let live: std::collections::HashSet<String> = self
            .coordination
            .live_servers()
            .iter()
            .map(|s| DeadServer::address_part(&s.name()).to_string())
            .collect();
        let mut dead = self.dead.lock();
        dead.retain(|d| !live.contains(DeadServer::address_part(&d.name)));
        dead.clone()
    }
}
use ferrobase_types::TableDescriptor;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

/// Suffix of a WAL directory being split (renamed away from its server).
const SPLITTING: &str = ".splitting";

impl Master {
    /// The live server at `address`.
    pub(crate) fn server_at(&self, address: &str) -> Option<Arc<dyn RegionServerAdmin>> {
        self.coordination
            .live_servers()
            .into_iter()
            .find(|s| s.address() == address)
    }

    /// The live server holding region `id`.
    pub(crate) fn holder(&self, id: u64) -> Result<Arc<dyn RegionServerAdmin>> {
        let address = self.assignments.lock().get(&id).cloned();
        address
            .and_then(|a| self.server_at(&a))
            .ok_or_else(|| ServerError::not_serving(id))
    }

    /// Region counts per live server address.
    fn counts(&self, live: &[Arc<dyn RegionServerAdmin>]) -> HashMap<String, usize> {
        let mut counts: HashMap<String, usize> =
            live.iter().map(|s| (s.address(), 0usize)).collect();
        for address in self.assignments.lock().values() {
            if let Some(c) = counts.get_mut(address) {
                *c += 1;
            }
        }
        counts
    }

    /// Opens `region` on the live server with the fewest regions, among
    /// those that answered their last load report if any did (a server the
    /// master cannot reach would hold the open, and the DDL lock, until
    /// the call fails).
    pub(crate) fn assign_region(&self, table: &TableDescriptor, region: &RegionInfo) -> Result<()> {
        let live = self.coordination.live_servers();
        let counts = self.counts(&live);
        let silent = self.silent.lock().clone();
        let server = live
            .iter()
            .min_by_key(|s| {
                let address = s.address();
                let count = counts.get(&address).copied().unwrap_or(0);
                (silent.contains(&address), count, address)
            })
            .ok_or_else(|| {
                ServerError::new(ErrorCode::RegionNotServing, "no live region server")
            })?;
        server.open_region(table, region)?;
        self.assignments.lock().insert(region.id, server.address());
        tracing::info!(region = %region.name(), server = %server.address(), "assigned region");
        Ok(())
    }

    /// Brings the assignments in line with the live servers (see the module
    /// docs); returns how many regions were opened.
    pub fn reconcile(&self) -> Result<usize> {
        let _ddl = self.ddl.lock();
        let live = self.coordination.live_servers();
        let mut hosted: HashMap<u64, String> = HashMap::new();
        let mut silent: HashSet<String> = HashSet::new();
        for s in &live {
            match s.try_load() {
                Ok(load) => {
                    self.sync_acl(&**s, load.acl_version);
                    for r in load.regions {
                        hosted.insert(r.region_id, s.address());
                    }
                }
                Err(e) => {
                    tracing::debug!(server = %s.address(), error = %e, "no load");
                    silent.insert(s.address());
                }
            }
        }
        {
            let mut a = self.assignments.lock();
            a.retain(|_, address| silent.contains(address));
            a.extend(hosted);
        }
        *self.silent.lock() = silent;
        self.split_dead_wals()?;
        let mut opened = 0;
        let mut first_err = None;
        for t in self.meta.snapshot().tables.values() {
            if !t.enabled {
                continue;
            }
            for r in &t.regions {
                if self.assignments.lock().contains_key(&r.id) {
                    continue;
                }
                match self.assign_region(&t.descriptor, r) {
                    Ok(()) => opened += 1,
                    Err(e) => {
                        tracing::warn!(region = %r.name(), error = %e, "assignment failed");
                        first_err.get_or_insert(e);
                    }
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(opened),
        }
    }

    /// Splits the WAL directory of every server that is not registered,
    /// then removes it: renamed to `<name>.splitting` first, which fences
    /// a server that is paused rather than dead. Fails (so nothing is
    /// assigned) if any split fails.
    fn split_dead_wals(&self) -> Result<()> {
        let Some(root) = &self.wal_root else {
            return Ok(());
        };
        let fs = &*self.fs;
        let io = |e: ferrobase_storage::StorageError| {
            ServerError::new(ErrorCode::Io, format!("WAL root: {e}"))
        };
        // List first, ask etcd second: a server registers before it creates
        // its WAL directory, so every listed directory of a live server is
        // registered by the time we ask.
        let names = fs.list(root).map_err(io)?;
        if names.is_empty() {
            return Ok(());
        }
        let dead = self.coordination.dead_servers(&names)?;
        if dead.is_empty() {
            return Ok(());
        }
        let meta = self.meta.snapshot();
        let dirs: HashMap<u64, PathBuf> = meta
            .tables
            .values()
            .flat_map(|t| t.regions.iter())
            .map(|r| (r.id, self.data_dir.join(&r.table).join(r.dir_name())))
            .collect();
        // Regions split or merged away: the nonces of their edits go to
        // the regions now holding the rows (the parents were flushed at
        // the split or merge, so nothing else of their edits is needed).
        let retired: HashMap<u64, &crate::meta::TableMeta> = meta
            .tables
            .values()
            .flat_map(|t| {
                t.retired
                    .keys()
                    .copied()
                    .chain(t.parents.iter().map(|p| p.info.id))
                    .map(move |id| (id, t))
            })
            .collect();
        for name in dead {
            // Fence first: a server that is only paused fails its next WAL
            // batch once its directory is renamed (storage `wal::writer`),
            // so it acknowledges nothing this split could miss. A directory
            // already renamed is a split a previous master did not finish.
            let (server, dir) = match name.strip_suffix(SPLITTING) {
                Some(server) => (server.to_string(), root.join(&name)),
                None => {
                    let renamed = root.join(format!("{name}{SPLITTING}"));
                    fs.fence_dir(&root.join(&name), &renamed).map_err(|e| {
                        ServerError::new(ErrorCode::Io, format!("fencing the WAL of {name}: {e}"))
                    })?;
                    (name.clone(), renamed)
                }
            };
            let name = server;
            let started = Instant::now();
            let report = split::split_wal_dir_routed(
                fs,
                &dir,
                &name,
                &|id| dirs.get(&id).cloned(),
                &|id, row| {
                    let t = retired.get(&id)?;
                    let r = t.region_of(row)?;
                    Some((r.id, self.data_dir.join(&r.table).join(r.dir_name())))
                },
            )?;
            tracing::info!(
                server = %name, segments = report.segments, edits = report.edits,
                recovered = report.recovered, regions = report.regions,
                "split the WAL of a dead region server"
            );
            fs.delete_all(&dir).map_err(io)?;
            let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            self.crashes[0].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.crashes[1].fetch_add(ms, std::sync::atomic::Ordering::Relaxed);
            let mut list = self.dead.lock();
            list.retain(|d| d.name != name);
            list.push(DeadServer {
                name,
                at: SystemTime::now(),
                edits: report.recovered,
                regions: report.regions as u64,
            });
            if list.len() > DEAD_KEPT {
                list.remove(0);
            }
        }
        Ok(())
    }

    /// Moves regions from the most to the least loaded live servers until
    /// their region counts differ by at most one; returns how many moved.
    pub fn balance(&self) -> Result<usize> {
        let _ddl = self.ddl.lock();
        let live = self.coordination.live_servers();
        if live.len() < 2 {
            return Ok(0);
        }
        let meta = self.meta.snapshot();
        let tables: HashMap<u64, (&TableDescriptor, &RegionInfo)> = meta
            .tables
            .values()
            .filter(|t| t.enabled)
            .flat_map(|t| t.regions.iter().map(move |r| (r.id, (&t.descriptor, r))))
            .collect();
        let mut moved = 0;
        // Bounded: each move narrows the spread, so this ends well before.
        for _ in 0..tables.len() {
            let counts = self.counts(&live);
            let (Some(max), Some(min)) = (
                counts.iter().max_by_key(|(a, c)| (**c, (*a).clone())),
                counts.iter().min_by_key(|(a, c)| (**c, (*a).clone())),
            ) else {
                break;
            };
            if max.1 - min.1 <= 1 {
                break;
            }
            let (from, to) = (max.0.clone(), min.0.clone());
            let region = self
                .assignments
                .lock()
                .iter()
                .filter(|(id, a)| **a == from && tables.contains_key(id))
                .map(|(id, _)| *id)
                .max();
            let Some(id) = region else { break };
            let Some(&(table, info)) = tables.get(&id) else {
                break;
            };
            self.move_region(table, info, &from, &to)?;
            moved += 1;
        }
        Ok(moved)
    }

    /// Moves region `id` to the live server at `dest` (`host:port`), or,
    /// without one, to the live server other than its holder with the
    /// fewest regions (HBase's `Admin.move`). Returns whether it moved:
    /// not when it already is on `dest` or no other server is live.
    pub fn move_region_to(&self, id: u64, dest: Option<&str>) -> Result<bool> {
        let _ddl = self.ddl.lock();
        let meta = self.meta.snapshot();
        let Some((table, region)) = meta.tables.values().find_map(|t| {
            t.regions
                .iter()
                .find(|r| r.id == id)
                .map(|r| (&t.descriptor, r))
        }) else {
            return Err(ServerError::new(
                ErrorCode::RegionNotServing,
                format!("no region with id {id}"),
            ));
        };
        let from = self
            .assignments
            .lock()
            .get(&id)
            .cloned()
            .ok_or_else(|| ServerError::not_serving(id))?;
        let live = self.coordination.live_servers();
        let to = match dest {
            Some(d) => {
                if !live.iter().any(|s| s.address() == d) {
                    return Err(ServerError::new(
                        ErrorCode::InvalidRequest,
                        format!("no live region server at {d}"),
                    ));
                }
                d.to_string()
            }
            None => {
                let counts = self.counts(&live);
                match counts
                    .iter()
                    .filter(|(a, _)| **a != from)
                    .min_by_key(|(a, c)| (**c, (*a).clone()))
                {
                    Some((a, _)) => a.clone(),
                    None => return Ok(false),
                }
            }
        };
        if to == from {
            return Ok(false);
        }
        self.move_region(table, region, &from, &to)?;
        Ok(true)
    }

    /// Region move: flush and close on `from`, then open on `to` (back on
    /// `from` if that fails). Clients see "not serving" meanwhile and retry.
    fn move_region(
        &self,
        table: &TableDescriptor,
        region: &RegionInfo,
        from: &str,
        to: &str,
    ) -> Result<()> {
        let (Some(source), Some(target)) = (self.server_at(from), self.server_at(to)) else {
            return Err(ServerError::not_serving(region.id));
        };
        self.assignments.lock().remove(&region.id);
        source.close_region(region.id)?;
        match target.open_region(table, region) {
            Ok(()) => {
                self.assignments.lock().insert(region.id, to.to_string());
                tracing::info!(region = %region.name(), from, to, "moved region");
                Ok(())
            }
            Err(e) => {
                tracing::warn!(region = %region.name(), to, error = %e, "move failed; reopening on the source");
                source.open_region(table, region)?;
                self.assignments.lock().insert(region.id, from.to_string());
                Err(e)
            }
        }
    }
}
