//! [`Admin`]: DDL and cluster administration through the master. DDL calls
//! are not retried (they are not idempotent); each drops the location
//! cache of the table it changes.

use crate::connection::{Inner, RegionLocation};
use crate::error::{ClientError, Result};
use bytes::Bytes;
use ferrobase_proto::{pb, schema};
use ferrobase_types::{FamilyDescriptor, TableDescriptor};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Pre-split algorithms (HBase's `SPLITALGO`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitAlgorithm {
    /// Row keys are 8 hex digits.
    HexStringSplit,
    /// Row keys are uniformly distributed bytes.
    UniformSplit,
}

/// A table as `describe` shows it.
#[derive(Clone, Debug)]
pub struct TableDescription {
    pub descriptor: TableDescriptor,
    pub enabled: bool,
    pub regions: Vec<RegionLocation>,
}

/// A snapshot as `list_snapshots` shows it: name, table, and when it was
/// taken (milliseconds since the Unix epoch).
pub type SnapshotDescription = pb::SnapshotDescription;

/// Cluster load, per server and region.
pub type ClusterStatus = pb::ClusterStatus;

/// The admin API.
#[derive(Clone)]
pub struct Admin {
    pub(crate) inner: Arc<Inner>,
}

fn table(name: &str) -> pb::TableName {
    pb::TableName {
        name: name.to_string(),
    }
}

impl Admin {
    pub(crate) fn new(inner: Arc<Inner>) -> Admin {
        Admin { inner }
    }

    async fn create(&self, req: pb::CreateTableRequest) -> Result<()> {
        self.inner.active_master().await?.create_table(req).await?;
        Ok(())
    }

    /// Creates a table; `splits` are the start keys of the regions after
    /// the first (empty: one region).
    pub async fn create_table(&self, descriptor: &TableDescriptor, splits: &[Bytes]) -> Result<()> {
        self.create(pb::CreateTableRequest {
            schema: Some(schema::table_to_pb(descriptor)),
            splits: splits.to_vec(),
            ..Default::default()
        })
        .await
    }

    /// Creates a table of `num_regions` regions split by `algorithm`.
    pub async fn create_table_presplit(
        &self,
        descriptor: &TableDescriptor,
        num_regions: u32,
        algorithm: SplitAlgorithm,
    ) -> Result<()> {
        self.create(pb::CreateTableRequest {
            schema: Some(schema::table_to_pb(descriptor)),
            num_regions,
            split_algo: format!("{algorithm:?}"),
            ..Default::default()
        })
        .await
    }

    /// Every table name.
    pub async fn list_tables(&self) -> Result<Vec<String>> {
        Ok(self
            .inner
            .active_master()
            .await?
            .list_tables(pb::Empty {})
            .await?
            .into_inner()
            .names)
    }

    /// A table's schema, state and regions.
    pub async fn describe(&self, name: &str) -> Result<TableDescription> {
        let r = self
            .inner
            .active_master()
            .await?
            .describe_table(table(name))
            .await?
            .into_inner();
        let s = r
            .schema
            .ok_or_else(|| ClientError::Malformed("describe returned no schema".into()))?;
        Ok(TableDescription {
            descriptor: schema::table_from_pb(&s)
                .map_err(|e| ClientError::Malformed(e.to_string()))?,
            enabled: r.enabled,
            regions: r
                .regions
                .into_iter()
                .map(|l| RegionLocation {
                    region_id: l.region_id,
                    table: l.table,
                    start_key: l.start_key,
                    end_key: l.end_key,
                    server: l.server,
                })
                .collect(),
        })
    }

    /// True when the table exists.
    pub async fn exists(&self, name: &str) -> Result<bool> {
        Ok(self
            .inner
            .active_master()
            .await?
            .table_exists(table(name))
            .await?
            .into_inner()
            .value)
    }

    /// Disables a table: its regions go offline; reads and writes fail
    /// with `TABLE_DISABLED`.
    pub async fn disable(&self, name: &str) -> Result<()> {
        self.inner.invalidate(name);
        self.inner
            .active_master()
            .await?
            .disable_table(table(name))
            .await?;
        Ok(())
    }

    /// Enables a disabled table.
    pub async fn enable(&self, name: &str) -> Result<()> {
        self.inner.invalidate(name);
        self.inner
            .active_master()
            .await?
            .enable_table(table(name))
            .await?;
        Ok(())
    }

    /// True when the table is enabled.
    pub async fn is_enabled(&self, name: &str) -> Result<bool> {
        Ok(self
            .inner
            .active_master()
            .await?
            .is_table_enabled(table(name))
            .await?
            .into_inner()
            .value)
    }

    async fn alter(&self, req: pb::AlterTableRequest) -> Result<()> {
        self.inner.invalidate(&req.table);
        self.inner.active_master().await?.alter_table(req).await?;
        Ok(())
    }

    /// Adds a family.
    pub async fn add_family(&self, name: &str, family: &FamilyDescriptor) -> Result<()> {
        self.alter(pb::AlterTableRequest {
            table: name.to_string(),
            modify: vec![schema::family_to_pb(family)],
            delete: Vec::new(),
        })
        .await
    }

    /// Changes the given attributes of a family (HBase shell names and
    /// values, e.g. `("VERSIONS", "3")`).
    pub async fn modify_family(
        &self,
        name: &str,
        family: &str,
        attributes: &[(&str, &str)],
    ) -> Result<()> {
        self.alter(pb::AlterTableRequest {
            table: name.to_string(),
            modify: vec![pb::FamilySchema {
                name: family.to_string(),
                attributes: attributes
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                ..Default::default()
            }],
            delete: Vec::new(),
        })
        .await
    }

    /// Deletes a family and its data.
    pub async fn delete_family(&self, name: &str, family: &str) -> Result<()> {
        self.alter(pb::AlterTableRequest {
            table: name.to_string(),
            modify: Vec::new(),
            delete: vec![family.to_string()],
        })
        .await
    }

    /// Drops a disabled table.
    pub async fn drop_table(&self, name: &str) -> Result<()> {
        self.inner.invalidate(name);
        self.inner
            .active_master()
            .await?
            .drop_table(table(name))
            .await?;
        Ok(())
    }

    /// Deletes every row, keeping schema and split points.
    pub async fn truncate(&self, name: &str) -> Result<()> {
        self.inner.invalidate(name);
        self.inner
            .active_master()
            .await?
            .truncate_table(table(name))
            .await?;
        Ok(())
    }

    /// Flushes a table (or a region, by its id as text).
    pub async fn flush(&self, target: &str) -> Result<()> {
        self.inner
            .active_master()
            .await?
            .flush(pb::AdminRequest {
                target: target.to_string(),
                major: false,
            })
            .await?;
        Ok(())
    }

    /// Minor compaction of a table (or region).
    pub async fn compact(&self, target: &str) -> Result<()> {
        self.compact_inner(target, false).await
    }

    /// Major compaction of a table (or region).
    pub async fn major_compact(&self, target: &str) -> Result<()> {
        self.compact_inner(target, true).await
    }

    async fn compact_inner(&self, target: &str, major: bool) -> Result<()> {
        self.inner
            .active_master()
            .await?
            .compact(pb::AdminRequest {
                target: target.to_string(),
                major,
            })
            .await?;
        Ok(())
    }

    /// Splits a region in two: `target` is a table (its region holding
    /// `point`, or its largest region) or a region id as text; without a
    /// point, at the region's middle row by bytes.
    pub async fn split(&self, target: &str, point: Option<Bytes>) -> Result<()> {
        self.inner
            .active_master()
            .await?
            .split(pb::SplitRequest {
                target: target.to_string(),
                split_point: point,
            })
            .await?;
        Ok(())
    }

    /// Merges two adjacent regions of one table into one (HBase's
    /// `mergeRegionsAsync`), by reference: `a` and `b` are region ids as
    /// text or HBase encoded region names, in either order.
    pub async fn merge_regions(&self, a: &str, b: &str) -> Result<()> {
        self.inner
            .active_master()
            .await?
            .merge(pb::MergeRequest {
                region_a: a.to_string(),
                region_b: b.to_string(),
                ..Default::default()
            })
            .await?;
        Ok(())
    }

    /// Merges two or more regions of one table into one (HBase's
    /// `mergeRegionsAsync(byte[][], forcible)`), by reference. Without
    /// `force` they must be adjacent; with it, regions that are not are
    /// merged together with every region between them.
    pub async fn merge_many(&self, regions: &[String], force: bool) -> Result<()> {
        self.inner
            .active_master()
            .await?
            .merge(pb::MergeRequest {
                regions: regions.to_vec(),
                force,
                ..Default::default()
            })
            .await?;
        Ok(())
    }

    /// Load of every server and region.
    pub async fn cluster_status(&self) -> Result<ClusterStatus> {
        Ok(self
            .inner
            .active_master()
            .await?
            .get_cluster_status(pb::Empty {})
            .await?
            .into_inner())
    }

    /// Takes snapshot `name` of `table` (HBase's `snapshot`): every write
    /// acknowledged before the call is in it; its store files are shared
    /// with the table, not copied.
    pub async fn snapshot(&self, table: &str, name: &str) -> Result<SnapshotDescription> {
        Ok(self
            .inner
            .active_master()
            .await?
            .snapshot(pb::SnapshotRequest {
                table: table.to_string(),
                name: name.to_string(),
                ttl_secs: None,
            })
            .await?
            .into_inner())
    }

    /// [`snapshot`](Self::snapshot) with a TTL in seconds (HBase's
    /// `{TTL => n}`): once it has passed the snapshot can no longer be
    /// cloned or restored and the master's cleaner deletes it; 0 keeps it
    /// until deleted.
    pub async fn snapshot_with_ttl(
        &self,
        table: &str,
        name: &str,
        ttl_secs: u64,
    ) -> Result<SnapshotDescription> {
        Ok(self
            .inner
            .active_master()
            .await?
            .snapshot(pb::SnapshotRequest {
                table: table.to_string(),
                name: name.to_string(),
                ttl_secs: Some(ttl_secs),
            })
            .await?
            .into_inner())
    }

    /// HBase's `snapshot_cleanup_switch`: turns the cleaner of expired
    /// snapshots on or off; returns the state before.
    pub async fn snapshot_cleanup_switch(&self, on: bool) -> Result<bool> {
        self.switch(pb::SwitchKind::SnapshotCleanup, Some(on)).await
    }

    /// HBase's `snapshot_cleanup_enabled`.
    pub async fn snapshot_cleanup_enabled(&self) -> Result<bool> {
        self.switch(pb::SwitchKind::SnapshotCleanup, None).await
    }

    /// HBase's `balance_switch`: turns the periodic balancer on or off;
    /// returns the state before.
    pub async fn balance_switch(&self, on: bool) -> Result<bool> {
        self.switch(pb::SwitchKind::Balancer, Some(on)).await
    }

    /// HBase's `balancer_enabled`.
    pub async fn balancer_enabled(&self) -> Result<bool> {
        self.switch(pb::SwitchKind::Balancer, None).await
    }

    /// HBase's `catalogjanitor_switch`: turns the janitor's chore (which
    /// removes split and merge parents no region reads any more) on or off;
    /// returns the state before.
    pub async fn catalog_janitor_switch(&self, on: bool) -> Result<bool> {
        self.switch(pb::SwitchKind::CatalogJanitor, Some(on)).await
    }

    /// HBase's `catalogjanitor_enabled`.
    pub async fn catalog_janitor_enabled(&self) -> Result<bool> {
        self.switch(pb::SwitchKind::CatalogJanitor, None).await
    }

    async fn switch(&self, kind: pb::SwitchKind, enabled: Option<bool>) -> Result<bool> {
        Ok(self
            .inner
            .active_master()
            .await?
            .switch(pb::SwitchRequest {
                kind: kind as i32,
                enabled,
            })
            .await?
            .into_inner()
            .value)
    }

    /// HBase's `compaction_switch`: every live region server's compactions
    /// on or off (running ones finish); returns each server (`host:port`)
    /// with its state before, sorted by server.
    pub async fn compaction_switch(&self, on: bool) -> Result<Vec<(String, bool)>> {
        Ok(self
            .inner
            .active_master()
            .await?
            .compaction_switch(pb::SwitchRequest {
                kind: 0,
                enabled: Some(on),
            })
            .await?
            .into_inner()
            .servers
            .into_iter()
            .map(|s| (s.server, s.previous))
            .collect())
    }

    /// HBase's `balancer`: one balancer pass now (whatever its switch);
    /// returns how many regions moved.
    pub async fn balance(&self) -> Result<u64> {
        Ok(self
            .inner
            .active_master()
            .await?
            .balance(pb::Empty {})
            .await?
            .into_inner()
            .count)
    }

    /// HBase's `catalogjanitor_run`: one janitor pass now; returns how many
    /// parents and unused region directories it removed.
    pub async fn run_catalog_janitor(&self) -> Result<u64> {
        Ok(self
            .inner
            .active_master()
            .await?
            .run_catalog_janitor(pb::Empty {})
            .await?
            .into_inner()
            .count)
    }

    /// HBase's `move`: region `region` (an id or encoded name) to the live
    /// server `dest` (`host:port`), or to the least loaded other server;
    /// returns whether it moved.
    pub async fn move_region(&self, region: &str, dest: Option<&str>) -> Result<bool> {
        Ok(self
            .inner
            .active_master()
            .await?
            .move_region(pb::MoveRegionRequest {
                region: region.to_string(),
                dest: dest.unwrap_or_default().to_string(),
            })
            .await?
            .into_inner()
            .value)
    }

    /// HBase's `list_deadservers`: servers found dead that have not come
    /// back, oldest first.
    pub async fn dead_servers(&self) -> Result<Vec<pb::DeadServer>> {
        Ok(self
            .inner
            .active_master()
            .await?
            .list_dead_servers(pb::Empty {})
            .await?
            .into_inner()
            .servers)
    }

    /// Complete snapshots, sorted by name; with `regex`, those whose whole
    /// name matches it.
    pub async fn list_snapshots(&self, regex: Option<&str>) -> Result<Vec<SnapshotDescription>> {
        Ok(self
            .inner
            .active_master()
            .await?
            .list_snapshots(pb::ListSnapshotsRequest {
                regex: regex.unwrap_or_default().to_string(),
            })
            .await?
            .into_inner()
            .snapshots)
    }

    /// Deletes a snapshot; its files that nothing else holds are freed.
    pub async fn delete_snapshot(&self, name: &str) -> Result<()> {
        self.inner
            .active_master()
            .await?
            .delete_snapshot(pb::SnapshotName {
                name: name.to_string(),
            })
            .await?;
        Ok(())
    }

    /// Creates table `table` from snapshot `name` (rows, schema, region
    /// boundaries); it is independent of the snapshot's table.
    pub async fn clone_snapshot(&self, name: &str, table: &str) -> Result<()> {
        self.inner.invalidate(table);
        self.inner
            .active_master()
            .await?
            .clone_snapshot(pb::CloneSnapshotRequest {
                name: name.to_string(),
                table: table.to_string(),
            })
            .await?;
        Ok(())
    }

    /// Puts the snapshot's table (disabled) back to the snapshot's rows,
    /// schema and regions; it stays disabled.
    pub async fn restore_snapshot(&self, name: &str) -> Result<()> {
        self.inner
            .active_master()
            .await?
            .restore_snapshot(pb::SnapshotName {
                name: name.to_string(),
            })
            .await?;
        Ok(())
    }

    /// Creates namespace `name` with its configuration (HBase's
    /// `create_namespace`); tables `name:t` can then be created in it.
    /// Fails with `NAMESPACE_EXISTS` when it exists (`default` and `hbase`
    /// always do) and `INVALID_REQUEST` for a name that is not letters,
    /// digits and `_`.
    pub async fn create_namespace(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
    ) -> Result<()> {
        self.inner
            .active_master()
            .await?
            .create_namespace(namespace_pb(name, config))
            .await?;
        Ok(())
    }

    /// Replaces the whole configuration of namespace `name` with `config`
    /// (HBase's `modifyNamespace`; read it with
    /// [`describe_namespace`](Admin::describe_namespace) to change one key).
    /// Fails with `NAMESPACE_NOT_FOUND` for an unknown namespace and
    /// `INVALID_REQUEST` for `default` and `hbase`.
    pub async fn modify_namespace(
        &self,
        name: &str,
        config: &BTreeMap<String, String>,
    ) -> Result<()> {
        self.inner
            .active_master()
            .await?
            .modify_namespace(namespace_pb(name, config))
            .await?;
        Ok(())
    }

    /// Deletes namespace `name`. Fails with `NAMESPACE_NOT_FOUND` for an
    /// unknown namespace and `INVALID_REQUEST` when it still has tables or
    /// is `default` or `hbase`.
    pub async fn delete_namespace(&self, name: &str) -> Result<()> {
        self.inner
            .active_master()
            .await?
            .delete_namespace(namespace_name(name))
            .await?;
        Ok(())
    }

    /// The configuration of namespace `name` (`NAMESPACE_NOT_FOUND` when
    /// it does not exist).
    pub async fn describe_namespace(&self, name: &str) -> Result<NamespaceDescription> {
        let d = self
            .inner
            .active_master()
            .await?
            .describe_namespace(namespace_name(name))
            .await?
            .into_inner();
        Ok(namespace_from_pb(d))
    }

    /// Every namespace, `default` and `hbase` included, sorted by name.
    pub async fn list_namespaces(&self) -> Result<Vec<NamespaceDescription>> {
        let r = self
            .inner
            .active_master()
            .await?
            .list_namespaces(pb::Empty {})
            .await?
            .into_inner();
        let mut all: Vec<_> = r.namespaces.into_iter().map(namespace_from_pb).collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(all)
    }

    /// The tables of namespace `name`, by full name (`ns:t`; tables of
    /// `default` have no prefix), sorted (`NAMESPACE_NOT_FOUND` when it
    /// does not exist).
    pub async fn list_namespace_tables(&self, name: &str) -> Result<Vec<String>> {
        let mut names = self
            .inner
            .active_master()
            .await?
            .list_namespace_tables(namespace_name(name))
            .await?
            .into_inner()
            .names;
        names.sort();
        Ok(names)
    }
}

/// A namespace as `describe_namespace` shows it: its name and
/// configuration (HBase's `NamespaceDescriptor`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceDescription {
    pub name: String,
    pub config: BTreeMap<String, String>,
}

fn namespace_name(name: &str) -> pb::NamespaceName {
    pb::NamespaceName {
        name: name.to_string(),
    }
}

fn namespace_pb(name: &str, config: &BTreeMap<String, String>) -> pb::NamespaceDescriptor {
    pb::NamespaceDescriptor {
        name: name.to_string(),
        config: config.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
    }
}

fn namespace_from_pb(d: pb::NamespaceDescriptor) -> NamespaceDescription {
    NamespaceDescription {
        name: d.name,
        config: d.config.into_iter().collect(),
    }
}
