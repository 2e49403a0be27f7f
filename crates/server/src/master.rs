//! The master: DDL, region assignment, cluster status and (in `snapshot`)
//! table snapshots.
//!
//! The master owns the meta (through [`MetaStore`]) and decides which
//! server holds each region; it reaches region servers only through
//! [`Coordination`], never by touching an engine. DDL calls are serialized
//! by one lock; every method is synchronous and may do I/O.

use crate::coordination::Coordination;
use crate::error::{Result, ServerError};
use crate::meta::{MetaStore, TableMeta};
use crate::split_points;
use ferrobase_proto::{ErrorCode, pb, schema};
use ferrobase_storage::RegionInfo;
use ferrobase_storage::archive;
use ferrobase_storage::fs::Storage;
use ferrobase_types::TableDescriptor;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod acl;
mod janitor;
mod merge;
mod namespaces;
mod region_ops;
mod switches;

pub use switches::Switch;

/// Namespaces that always exist.
pub const BUILTIN_NAMESPACES: [&str; 2] = ["default", "hbase"];

/// The namespace of a table name: the part before `:`, or `default`.
pub fn namespace_of(table: &str) -> &str {
    table.split_once(':').map_or("default", |(ns, _)| ns)
}

/// The master.
pub struct Master {
    pub(crate) meta: MetaStore,
    pub(crate) coordination: Arc<dyn Coordination>,
    /// Region id → server address, for online regions.
    pub(crate) assignments: Mutex<HashMap<u64, String>>,
    /// Live servers whose last load report failed (unreachable from here,
    /// e.g. partitioned, though their lease holds): new regions go to
    /// the others first.
    pub(crate) silent: Mutex<std::collections::HashSet<String>>,
    pub(crate) ddl: Mutex<()>,
    /// The storage root holding the meta, the data and the WALs.
    pub(crate) fs: Arc<dyn Storage>,
    pub(crate) data_dir: PathBuf,
    /// Distributed mode: the directory holding one WAL directory per
    /// region server (`<root>/wal`), split when its server dies.
    pub(crate) wal_root: Option<PathBuf>,
    /// Servers found dead, newest last (see `assignment`).
    pub(crate) dead: Mutex<Vec<crate::assignment::DeadServer>>,
    /// Dead servers handled, and the milliseconds their WAL splits took.
    pub(crate) crashes: [std::sync::atomic::AtomicU64; 2],
    /// Region splits and merges published, and directories the janitor
    /// retired, since this master started.
    pub(crate) region_changes: [std::sync::atomic::AtomicU64; 3],
    /// Load-based splits: each region's request count at the start of its
    /// current measuring window (`region_ops::split_hot`).
    pub(crate) load_windows: Mutex<HashMap<u64, (std::time::Instant, u64)>>,
    stopping: std::sync::atomic::AtomicBool,
    /// The permissions the services check ([`crate::acl`]).
    access: parking_lot::RwLock<Arc<crate::acl::AccessChecker>>,
    /// Snapshot TTLs: the default TTL (s), the cleaner's interval (ms) and
    /// when it last ran (`snapshot::clean_expired_snapshots`).
    pub(crate) snapshot_ttl: Mutex<crate::snapshot::TtlChore>,
}

impl Master {
    /// Loads the meta from `dir` and assigns every region of every enabled
    /// table. `data_dir` is where region servers keep `data/<table>`.
    pub fn start(
        dir: &Path,
        data_dir: &Path,
        coordination: Arc<dyn Coordination>,
    ) -> Result<Master> {
        let local = Arc::new(ferrobase_storage::fs::LocalFs::as_given());
        let master = Master::open(local, (dir, data_dir, None), coordination)?;
        master.reconcile()?;
        Ok(master)
    }

    /// Loads the meta from `dir` on `fs` without assigning anything
    /// (distributed mode: [`reconcile`](Self::reconcile) runs
    /// periodically). `dirs` is (meta dir, data dir, WAL root): the WAL
    /// root holds the region servers' WAL directories.
    pub fn open(
        fs: Arc<dyn Storage>,
        (dir, data_dir, wal_root): (&Path, &Path, Option<&Path>),
        coordination: Arc<dyn Coordination>,
    ) -> Result<Master> {
        let master = Master {
            meta: MetaStore::open(fs.clone(), dir)?,
            fs,
            coordination,
            assignments: Mutex::new(HashMap::new()),
            silent: Mutex::new(Default::default()),
            ddl: Mutex::new(()),
            data_dir: data_dir.to_path_buf(),
            wal_root: wal_root.map(Path::to_path_buf),
            dead: Mutex::new(Vec::new()),
            crashes: Default::default(),
            region_changes: Default::default(),
            load_windows: Mutex::new(HashMap::new()),
            stopping: std::sync::atomic::AtomicBool::new(false),
            access: parking_lot::RwLock::new(crate::acl::AccessChecker::disabled()),
            snapshot_ttl: Mutex::default(),
        };
        master.recover_snapshots();
        Ok(master)
    }

    pub(crate) fn assign(&self, t: &TableMeta) -> Result<()> {
        for r in &t.regions {
            if !self.assignments.lock().contains_key(&r.id) {
                self.assign_region(&t.descriptor, r)?;
            }
        }
        Ok(())
    }

    fn unassign(&self, t: &TableMeta) -> Result<()> {
        for r in &t.regions {
            let Some(address) = self.assignments.lock().remove(&r.id) else {
                continue;
            };
            if let Some(server) = self.server_at(&address) {
                server.close_region(r.id)?;
            }
        }
        Ok(())
    }

    pub(crate) fn table(&self, name: &str) -> Result<TableMeta> {
        self.meta
            .table(name)
            .ok_or_else(|| ServerError::no_table(name))
    }

    /// Removes regions' directories; their store files go through the
    /// archive (`ferrobase_storage::archive`), which keeps those a snapshot
    /// holds.
    pub(crate) fn remove_data(&self, table: &str, regions: &[RegionInfo]) -> Result<()> {
        let layout = self.snapshot_layout();
        for r in regions {
            let dir = self.data_dir.join(table).join(r.dir_name());
            archive::retire_dir(&*self.fs, &layout, &dir)
                .map_err(|e| ServerError::new(ErrorCode::Io, format!("removing a region: {e}")))?;
        }
        Ok(())
    }

    /// Creates a table, pre-split by `splits` or `num_regions` + `algo`.
    pub fn create_table(&self, req: pb::CreateTableRequest) -> Result<()> {
        self.create_table_by(req, "")
    }

    /// [`create_table`](Self::create_table) by `owner`, who gets every
    /// action on it when authorization is on (HBase's table owner).
    pub fn create_table_by(&self, req: pb::CreateTableRequest, owner: &str) -> Result<()> {
        let schema = req
            .schema
            .ok_or_else(|| ServerError::new(ErrorCode::InvalidRequest, "create needs a schema"))?;
        let descriptor = schema::table_from_pb(&schema)?;
        let keys = if !req.splits.is_empty() {
            split_points::check_splits(req.splits.iter().map(|s| s.to_vec()).collect())?
        } else if req.num_regions > 1 {
            split_points::split_keys(&req.split_algo, req.num_regions)?
        } else {
            Vec::new()
        };
        let _ddl = self.ddl.lock();
        let name = descriptor.name.clone();
        let t = self.meta.update(|m| {
            if m.tables.contains_key(&name) {
                return Err(ServerError::new(
                    ErrorCode::TableExists,
                    format!("table '{name}' already exists"),
                ));
            }
            // Checked under the DDL lock so that a concurrent
            // delete_namespace cannot leave the table without one.
            let ns = namespace_of(&name);
            if !BUILTIN_NAMESPACES.contains(&ns) && !m.namespaces.contains_key(ns) {
                return Err(ServerError::new(
                    ErrorCode::NamespaceNotFound,
                    format!("namespace '{ns}' does not exist (table '{name}')"),
                ));
            }
            let t = TableMeta {
                regions: regions_for(m, &name, &keys),
                descriptor,
                enabled: true,
                parents: Vec::new(),
                retired: Default::default(),
            };
            m.tables.insert(name.clone(), t.clone());
            self.grant_owner(m, &name, owner);
            Ok(t)
        })?;
        if !owner.is_empty() {
            self.publish_acl();
        }
        self.assign(&t)
    }

    /// Every table name.
    pub fn list_tables(&self) -> Vec<String> {
        self.meta.snapshot().tables.keys().cloned().collect()
    }

    /// A table's schema, state and regions.
    pub fn describe(&self, name: &str) -> Result<pb::DescribeResponse> {
        let t = self.table(name)?;
        Ok(pb::DescribeResponse {
            schema: Some(schema::table_to_pb(&t.descriptor)),
            enabled: t.enabled,
            regions: self.locations(&t),
        })
    }

    /// True when the table exists.
    pub fn exists(&self, name: &str) -> bool {
        self.meta.table(name).is_some()
    }

    /// True when the table is enabled.
    pub fn is_enabled(&self, name: &str) -> Result<bool> {
        Ok(self.table(name)?.enabled)
    }

    /// Takes every region of the table offline.
    pub fn disable(&self, name: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.table(name)?;
        if !t.enabled {
            return Err(ServerError::new(
                ErrorCode::TableDisabled,
                format!("table '{name}' is already disabled"),
            ));
        }
        self.unassign(&t)?;
        self.set_enabled(name, false)
    }

    /// Brings every region of the table online.
    pub fn enable(&self, name: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.table(name)?;
        if t.enabled {
            return Err(ServerError::new(
                ErrorCode::TableEnabled,
                format!("table '{name}' is already enabled"),
            ));
        }
        self.set_enabled(name, true)?;
        self.assign(&t)
    }

    fn set_enabled(&self, name: &str, enabled: bool) -> Result<()> {
        self.meta.update(|m| {
            if let Some(t) = m.tables.get_mut(name) {
                t.enabled = enabled;
            }
            Ok(())
        })
    }

    /// Adds, modifies or deletes families; an enabled table's regions are
    /// reopened with the new schema.
    pub fn alter(&self, req: pb::AlterTableRequest) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.table(&req.table)?;
        let mut d: TableDescriptor = t.descriptor.clone();
        for f in &req.modify {
            match d.families.iter_mut().find(|x| x.name == f.name) {
                Some(existing) => schema::apply_family(existing, f)?,
                None => d.families.push(schema::family_from_pb(f)?),
            }
        }
        for name in &req.delete {
            let before = d.families.len();
            d.families.retain(|f| &f.name != name);
            if d.families.len() == before {
                return Err(ServerError::new(
                    ErrorCode::FamilyNotFound,
                    format!("table '{}' has no column family '{name}'", req.table),
                ));
            }
        }
        let d = TableDescriptor::new(&d.name, d.families.clone()).map(|mut n| {
            n.durability = d.durability;
            n.values = d.values.clone();
            n
        })?;
        if t.enabled {
            self.unassign(&t)?;
        }
        for name in &req.delete {
            for r in &t.regions {
                let dir = self
                    .data_dir
                    .join(&t.descriptor.name)
                    .join(r.dir_name())
                    .join(name);
                if let Err(e) = archive::retire_dir(&*self.fs, &self.snapshot_layout(), &dir) {
                    tracing::warn!(dir = %self.fs.display(&dir), error = %e, "could not remove a deleted family's files");
                }
            }
        }
        let new = self.meta.update(|m| {
            let entry = m
                .tables
                .get_mut(&req.table)
                .ok_or_else(|| ServerError::no_table(&req.table))?;
            entry.descriptor = d;
            Ok(entry.clone())
        })?;
        if new.enabled {
            self.assign(&new)?;
        }
        Ok(())
    }

    /// Sets a table's DURABILITY and other attributes (HBase's
    /// `modifyTable` of table-level values); regions reopen when the
    /// durability changes.
    pub fn set_table_values(
        &self,
        name: &str,
        durability: ferrobase_types::Durability,
        values: BTreeMap<String, String>,
    ) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.table(name)?;
        let reopen = t.enabled && t.descriptor.durability != durability;
        if reopen {
            self.unassign(&t)?;
        }
        let new = self.meta.update(|m| {
            let entry = m
                .tables
                .get_mut(name)
                .ok_or_else(|| ServerError::no_table(name))?;
            entry.descriptor.durability = durability;
            entry.descriptor.values = values;
            Ok(entry.clone())
        })?;
        if reopen {
            self.assign(&new)?;
        }
        Ok(())
    }

    /// Deletes a disabled table and its data.
    pub fn drop_table(&self, name: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.table(name)?;
        if t.enabled {
            return Err(ServerError::new(
                ErrorCode::TableNotDisabled,
                format!("table '{name}' is enabled; disable it before dropping it"),
            ));
        }
        self.meta.update(|m| {
            m.tables.remove(name);
            // HBase drops a deleted table's permissions with it.
            m.acl.remove_table(name);
            Ok(())
        })?;
        self.publish_acl();
        self.remove_data(name, &t.regions)?;
        // Region directories the meta no longer lists (a split or restore
        // interrupted before its cleanup) may hold files a snapshot needs.
        let tdir = self.data_dir.join(name);
        let layout = self.snapshot_layout();
        for leftover in self.fs.list(&tdir).unwrap_or_default() {
            let _ = archive::retire_dir(&*self.fs, &layout, &tdir.join(leftover));
        }
        let _ = self.fs.delete_all(&tdir);
        Ok(())
    }

    /// Deletes every row, keeping the schema and the split points; the
    /// table is enabled afterwards (as HBase's `truncate_preserve`).
    pub fn truncate(&self, name: &str) -> Result<()> {
        self.truncate_with(name, true)
    }

    /// [`truncate`](Self::truncate), keeping the table's split points
    /// only when `preserve_splits` (HBase's `truncateTable` flag); without
    /// them the table restarts as one region.
    pub fn truncate_with(&self, name: &str, preserve_splits: bool) -> Result<()> {
        let _ddl = self.ddl.lock();
        let t = self.table(name)?;
        if t.enabled {
            self.unassign(&t)?;
        }
        let keys: Vec<Vec<u8>> = if preserve_splits {
            t.regions
                .iter()
                .skip(1)
                .map(|r| r.start_key.clone())
                .collect()
        } else {
            Vec::new()
        };
        let new = self.meta.update(|m| {
            let regions = regions_for(m, name, &keys);
            let entry = m
                .tables
                .get_mut(name)
                .ok_or_else(|| ServerError::no_table(name))?;
            entry.regions = regions;
            entry.parents.clear();
            entry.enabled = true;
            Ok(entry.clone())
        })?;
        self.remove_data(name, &t.regions)?;
        self.remove_data(name, &t.parent_infos())?;
        self.assign(&new)
    }

    /// Refuses further splits and waits for a running DDL call or split.
    pub fn stop(&self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        drop(self.ddl.lock());
    }

    /// The `host:port` of every live region server, as registered (no
    /// call to any of them).
    pub fn live_server_addresses(&self) -> Vec<String> {
        self.coordination
            .live_servers()
            .iter()
            .map(|s| s.address())
            .collect()
    }

    /// Every server's load.
    pub fn cluster_status(&self) -> pb::ClusterStatus {
        pb::ClusterStatus {
            servers: self
                .coordination
                .live_servers()
                .iter()
                .map(|s| s.load())
                .collect(),
            tables: self.meta.snapshot().tables.len() as u32,
        }
    }
}

fn regions_for(m: &mut crate::meta::MetaState, table: &str, keys: &[Vec<u8>]) -> Vec<RegionInfo> {
    let mut bounds = vec![Vec::new()];
    bounds.extend(keys.iter().cloned());
    bounds.push(Vec::new());
    bounds
        .windows(2)
        .map(|w| RegionInfo {
            id: m.allocate_region_id(),
            table: table.to_string(),
            start_key: w[0].clone(),
            end_key: w[1].clone(),
        })
        .collect()
}
