//! HBase's `AdminService` over a ferrobase [`RegionServer`]: what the Java
//! `Admin` asks a region server directly — its online regions and their
//! load, a region's info and compaction state, its store files, flushes,
//! compactions and the compaction switch.
//!
//! Flushes answer when the memstore is on disk (as HBase's do);
//! compactions are started on a blocking thread and answered at once, and
//! the client polls `GetRegionInfo`'s compaction state, as against HBase.
//! This module reads and flushes regions; it never changes which regions
//! the server holds (splits and moves are the master's).

use super::exceptions::{Target, do_not_retry, exception};
use crate::region_server::RegionServer;
use ferrobase_hbase_wire::names::{RegionName, TableName};
use ferrobase_hbase_wire::{HBaseException, pb};
use ferrobase_proto::pb as fpb;
use ferrobase_storage::region::{Region, RegionInfo};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

type Outcome<M> = Result<M, HBaseException>;

/// The HBase name of one of ferrobase's regions.
pub fn region_name(info: &RegionInfo) -> Outcome<RegionName> {
    let table = TableName::parse(&info.table).map_err(|e| do_not_retry(e.to_string()))?;
    Ok(RegionName::new(&table, &info.start_key, info.id))
}

/// `RegionInfo` as HBase describes a region.
fn hbase_region_info(info: &RegionInfo) -> Outcome<pb::RegionInfo> {
    Ok(region_name(info)?.region_info(&info.end_key))
}

/// A region's load as HBase reports it (sizes in MB, as HBase's
/// `RegionLoad` carries them).
pub fn hbase_region_load(name: &RegionName, load: &fpb::RegionLoad) -> pb::RegionLoad {
    const MB: u64 = 1024 * 1024;
    let mb = |b: u64| u32::try_from(b / MB).unwrap_or(u32::MAX);
    pb::RegionLoad {
        region_specifier: name.specifier(),
        stores: None,
        storefiles: Some(u32::try_from(load.store_files).unwrap_or(u32::MAX)),
        storefile_size_mb: Some(mb(load.store_file_bytes)),
        mem_store_size_mb: Some(mb(load.memstore_bytes)),
        read_requests_count: Some(load.read_requests),
        write_requests_count: Some(load.write_requests),
        ..Default::default()
    }
}

/// Compactions asked for through `CompactRegion` and not finished, per
/// region: `[minor, major]`. Together with what a region reports running,
/// this is the state `GetRegionInfo` answers, so a poll right after the
/// request already sees it.
#[derive(Default)]
pub struct CompactionRequests(parking_lot::Mutex<HashMap<u64, [u32; 2]>>);

impl CompactionRequests {
    fn add(&self, region: u64, major: bool) {
        let mut m = self.0.lock();
        let e = m.entry(region).or_default();
        e[usize::from(major)] += 1;
    }

    fn done(&self, region: u64, major: bool) {
        let mut m = self.0.lock();
        if let Some(e) = m.get_mut(&region) {
            let n = &mut e[usize::from(major)];
            *n = n.saturating_sub(1);
            if *e == [0, 0] {
                m.remove(&region);
            }
        }
    }

    fn pending(&self, region: u64) -> (bool, bool) {
        let m = self.0.lock();
        m.get(&region)
            .map_or((false, false), |e| (e[0] > 0, e[1] > 0))
    }
}

fn state(minor: bool, major: bool) -> pb::get_region_info_response::CompactionState {
    use pb::get_region_info_response::CompactionState as S;
    match (minor, major) {
        (false, false) => S::None,
        (true, false) => S::Minor,
        (false, true) => S::Major,
        (true, true) => S::MajorAndMinor,
    }
}

/// `GetRegionInfo`: the region's `RegionInfo`, and its compaction state
/// when asked for.
pub fn region_info(
    rs: &RegionServer,
    target: Target,
    req: &pb::GetRegionInfoRequest,
    requests: &CompactionRequests,
) -> Outcome<pb::GetRegionInfoResponse> {
    let id = match target {
        Target::Meta => {
            let meta = RegionName::meta();
            return Ok(pb::GetRegionInfoResponse {
                region_info: meta.region_info(b""),
                compaction_state: req
                    .compaction_state
                    .and_then(|want| want.then_some(state(false, false) as i32)),
                splittable: Some(false),
                mergeable: Some(false),
                best_split_row: None,
            });
        }
        Target::Region(id) => id,
    };
    let region = rs.region(id).map_err(exception)?;
    let compaction_state = if req.compaction_state == Some(true) {
        let (minor, major) = region.compacting();
        let (asked_minor, asked_major) = requests.pending(id);
        Some(state(minor || asked_minor, major || asked_major) as i32)
    } else {
        None
    };
    Ok(pb::GetRegionInfoResponse {
        region_info: hbase_region_info(region.info())?,
        compaction_state,
        splittable: Some(true),
        mergeable: Some(false),
        best_split_row: None,
    })
}

/// `GetOnlineRegion`: every region this server serves, in name order.
pub fn online_regions(rs: &RegionServer) -> Outcome<pb::GetOnlineRegionResponse> {
    let mut regions: Vec<(RegionName, pb::RegionInfo)> = Vec::new();
    for r in rs.engine().regions() {
        if rs.is_offline(r.info().id) {
            continue;
        }
        let name = region_name(r.info())?;
        let info = name.region_info(&r.info().end_key);
        regions.push((name, info));
    }
    regions.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    Ok(pb::GetOnlineRegionResponse {
        region_info: regions.into_iter().map(|(_, i)| i).collect(),
    })
}

/// `GetRegionLoad`: the load of this server's regions, or of one table's.
pub fn region_load(
    rs: &RegionServer,
    req: &pb::GetRegionLoadRequest,
) -> Outcome<pb::GetRegionLoadResponse> {
    let only = match &req.table_name {
        Some(t) => Some(
            TableName::from_pb(t)
                .map_err(|e| do_not_retry(e.to_string()))?
                .name_as_string(),
        ),
        None => None,
    };
    let mut loads = Vec::new();
    for r in rs.load().regions {
        if only.as_ref().is_some_and(|t| *t != r.table) {
            continue;
        }
        let Ok(region) = rs.region(r.region_id) else {
            continue;
        };
        loads.push(hbase_region_load(&region_name(region.info())?, &r));
    }
    Ok(pb::GetRegionLoadResponse {
        region_loads: loads,
    })
}

fn user_region(rs: &RegionServer, target: Target, what: &str) -> Outcome<Arc<Region>> {
    match target {
        Target::Meta => Err(do_not_retry(format!(
            "hbase:meta is rendered from the master's state and has nothing to {what}"
        ))),
        Target::Region(id) => rs.region(id).map_err(exception),
    }
}

/// The family a request names, checked against the region's table.
fn family_of(region: &Region, family: Option<&[u8]>) -> Outcome<Option<String>> {
    let Some(f) = family else {
        return Ok(None);
    };
    crate::region_server::require_family(region, f).map_err(super::exceptions::exception)?;
    Ok(Some(String::from_utf8_lossy(f).into_owned()))
}

/// `FlushRegion`: writes the region's memstore to a store file and waits.
/// A family named in the request is checked; the whole region is flushed
/// (one flush writes every store of a region in ferrobase).
pub fn flush_region(
    rs: &RegionServer,
    target: Target,
    req: &pb::FlushRegionRequest,
) -> Outcome<pb::FlushRegionResponse> {
    let region = user_region(rs, target, "flush")?;
    family_of(&region, req.family.as_deref())?;
    let had = region.memstore_size() > 0;
    rs.flush_region(region.info().id).map_err(exception)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    Ok(pb::FlushRegionResponse {
        last_flush_time: now,
        flushed: Some(had),
        wrote_flush_wal_marker: Some(false),
    })
}

/// `CompactRegion`: starts a compaction of the region (or of one family's
/// store) on a blocking thread and answers at once.
pub fn compact_region(
    rs: &Arc<RegionServer>,
    target: Target,
    req: &pb::CompactRegionRequest,
    requests: &Arc<CompactionRequests>,
) -> Outcome<pb::CompactRegionResponse> {
    let region = user_region(rs, target, "compact")?;
    let family = family_of(&region, req.family.as_deref())?;
    let major = req.major == Some(true);
    let id = region.info().id;
    requests.add(id, major);
    let requests = requests.clone();
    tokio::task::spawn_blocking(move || {
        let done = match &family {
            Some(f) => region.compact_family(f, major),
            None => region.compact(major),
        };
        if let Err(e) = done {
            tracing::warn!(region = id, major, error = %e, "requested compaction failed");
        }
        requests.done(id, major);
    });
    Ok(pb::CompactRegionResponse {})
}

/// `CompactionSwitch`: turns this server's compactions on or off and
/// answers the previous state.
pub fn compaction_switch(
    rs: &RegionServer,
    req: &pb::CompactionSwitchRequest,
) -> Outcome<pb::CompactionSwitchResponse> {
    let prev_state = rs.engine().compactions_enabled();
    rs.engine().set_compactions_enabled(req.enabled);
    Ok(pb::CompactionSwitchResponse { prev_state })
}

/// `GetStoreFile`: the region's store files (of the families asked for, or
/// of all), as paths under the storage root.
pub fn store_files(
    rs: &RegionServer,
    target: Target,
    req: &pb::GetStoreFileRequest,
) -> Outcome<pb::GetStoreFileResponse> {
    let region = user_region(rs, target, "list")?;
    let mut wanted = Vec::new();
    for f in &req.family {
        if let Some(name) = family_of(&region, Some(f))? {
            wanted.push(name);
        }
    }
    let store_file = region
        .store_files()
        .into_iter()
        .filter(|(family, _)| wanted.is_empty() || wanted.contains(family))
        .flat_map(|(_, files)| files)
        .map(|p| p.display().to_string())
        .collect();
    Ok(pb::GetStoreFileResponse { store_file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_requests_count_until_done() {
        let r = CompactionRequests::default();
        assert_eq!(r.pending(7), (false, false));
        r.add(7, true);
        r.add(7, true);
        r.add(7, false);
        assert_eq!(r.pending(7), (true, true));
        r.done(7, true);
        assert_eq!(r.pending(7), (true, true));
        r.done(7, false);
        assert_eq!(r.pending(7), (false, true));
        r.done(7, true);
        assert_eq!(r.pending(7), (false, false));
        assert!(r.0.lock().is_empty());
        // A stray completion never underflows.
        r.done(7, true);
        assert_eq!(r.pending(7), (false, false));
    }

    #[test]
    fn states_follow_hbase() {
        use pb::get_region_info_response::CompactionState as S;
        assert_eq!(state(false, false), S::None);
        assert_eq!(state(true, false), S::Minor);
        assert_eq!(state(false, true), S::Major);
        assert_eq!(state(true, true), S::MajorAndMinor);
    }
}
