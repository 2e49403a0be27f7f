//! MasterService's snapshot calls: take, poll, list, delete and restore
//! (clone) table snapshots.

use super::*;

/// How long the Java client may poll a snapshot (it never needs to: the
/// answer carries a finished procedure).
const SNAPSHOT_EXPECTED_TIMEOUT_MS: i64 = 60_000;

/// A snapshot as HBase describes it: a FLUSH snapshot, manifest version 2.
fn snapshot_to_pb(s: &fpb::SnapshotDescription) -> pb::SnapshotDescription {
    pb::SnapshotDescription {
        name: s.name.clone(),
        table: Some(s.table.clone()),
        creation_time: Some(s.created_ms as i64),
        r#type: Some(pb::snapshot_description::Type::Flush as i32),
        version: Some(2),
        ttl: Some(i64::try_from(s.ttl_secs).unwrap_or(i64::MAX)),
        ..Default::default()
    }
}

/// A table name as HBase sends it in a snapshot description (`ns:t`, or
/// `t` in the default namespace), as ferrobase names the table.
fn snapshot_table(name: &str) -> Outcome<String> {
    TableName::parse(name)
        .map(|t| t.name_as_string())
        .map_err(|e| do_not_retry(e.to_string()))
}

/// Table snapshots (docs/snapshots.md): finished before they answer, like
/// the DDL calls above.
impl MasterService<'_> {
    /// `snapshot`: takes it, and answers a finished procedure.
    pub fn snapshot(&self, req: &pb::SnapshotRequest) -> Outcome<pb::SnapshotResponse> {
        let table = req
            .snapshot
            .table
            .as_deref()
            .ok_or_else(|| do_not_retry("a snapshot needs a table"))?;
        let table = snapshot_table(table)?;
        self.require_table("snapshot", &table, ADMIN)?;
        // As HBase's master reads it: 0 (unset) takes
        // hbase.master.snapshot.ttl, a negative TTL keeps it forever.
        let ttl = match req.snapshot.ttl.unwrap_or(0) {
            0 => None,
            t => Some(u64::try_from(t).unwrap_or(0)),
        };
        self.master
            .snapshot_with_ttl(&table, &req.snapshot.name, ttl)
            .map_err(exception)?;
        Ok(pb::SnapshotResponse {
            expected_timeout: SNAPSHOT_EXPECTED_TIMEOUT_MS,
            proc_id: Some(self.procedure() as i64),
        })
    }

    /// `snapshotCleanupSwitch`: answers the state before.
    pub fn switch_snapshot_cleanup(
        &self,
        req: &pb::SetSnapshotCleanupRequest,
    ) -> Outcome<pb::SetSnapshotCleanupResponse> {
        self.require_global("switchSnapshotCleanup", ADMIN)?;
        let prev = self
            .master
            .set_switch(Switch::SnapshotCleanup, req.enabled)
            .map_err(exception)?;
        Ok(pb::SetSnapshotCleanupResponse {
            prev_snapshot_cleanup: prev,
        })
    }

    /// `isSnapshotDone`: a snapshot that exists is done (snapshots finish
    /// before `snapshot` answers); an unknown one is an error, as in HBase.
    pub fn is_snapshot_done(
        &self,
        req: &pb::IsSnapshotDoneRequest,
    ) -> Outcome<pb::IsSnapshotDoneResponse> {
        let Some(asked) = &req.snapshot else {
            return Ok(pb::IsSnapshotDoneResponse {
                done: Some(true),
                snapshot: None,
            });
        };
        let found = self
            .master
            .describe_snapshot(&asked.name)
            .map_err(exception)?;
        Ok(pb::IsSnapshotDoneResponse {
            done: Some(true),
            snapshot: Some(snapshot_to_pb(&found)),
        })
    }

    /// `getCompletedSnapshots`: every snapshot.
    pub fn completed_snapshots(
        &self,
        _req: &pb::GetCompletedSnapshotsRequest,
    ) -> Outcome<pb::GetCompletedSnapshotsResponse> {
        self.require_global("listSnapshot", ADMIN)?;
        let all = self.master.list_snapshots(None).map_err(exception)?;
        Ok(pb::GetCompletedSnapshotsResponse {
            snapshots: all.iter().map(snapshot_to_pb).collect(),
        })
    }

    pub fn delete_snapshot(
        &self,
        req: &pb::DeleteSnapshotRequest,
    ) -> Outcome<pb::DeleteSnapshotResponse> {
        self.require_global("deleteSnapshot", ADMIN)?;
        self.master
            .delete_snapshot(&req.snapshot.name)
            .map_err(exception)?;
        Ok(pb::DeleteSnapshotResponse {})
    }

    /// `restoreSnapshot`, which the Java client sends for both
    /// `cloneSnapshot` and `restoreSnapshot`: as HBase's master does, a
    /// table that exists is restored (it must be disabled and be the
    /// snapshot's), one that does not is created from the snapshot.
    pub fn restore_snapshot(
        &self,
        req: &pb::RestoreSnapshotRequest,
    ) -> Outcome<pb::RestoreSnapshotResponse> {
        self.require_global("restoreSnapshot", ADMIN)?;
        let name = &req.snapshot.name;
        let found = self.master.describe_snapshot(name).map_err(exception)?;
        let target = match req.snapshot.table.as_deref().filter(|t| !t.is_empty()) {
            Some(t) => snapshot_table(t)?,
            None => found.table.clone(),
        };
        if !self.master.exists(&target) {
            let namespace = TableName::parse(&target)
                .map_err(|e| do_not_retry(e.to_string()))?
                .namespace()
                .to_string();
            if !self.master.namespaces().contains_key(&namespace) {
                return Err(HBaseException::new(
                    ExceptionClass::NamespaceNotFound,
                    namespace,
                ));
            }
            self.master
                .clone_snapshot(name, &target)
                .map_err(exception)?;
        } else if target == found.table {
            self.master.restore_snapshot(name).map_err(exception)?;
        } else {
            return Err(do_not_retry(format!(
                "snapshot '{name}' is of table '{}': it restores only that table, \
                 or clones into a table that does not exist ('{target}' exists)",
                found.table
            )));
        }
        Ok(pb::RestoreSnapshotResponse {
            proc_id: self.procedure(),
        })
    }
}
