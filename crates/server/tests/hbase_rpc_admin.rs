//! HBase's `AdminService` on the server's port, as the Java `Admin` calls
//! it on a region server: the online regions, a region's info and
//! compaction state, a flush that leaves a store file, a major compaction
//! the client polls until it is done, and bad requests (a family the table
//! lacks, `hbase:meta`) answered with HBase's exceptions; and
//! `MasterService`'s `MergeTableRegions` (by encoded region names, as
//! `Admin.mergeRegionsAsync` sends them; two regions, then three of which
//! two are not adjacent, refused until `forcible`) with
//! `IsSplitOrMergeEnabled`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod raw_hbase;

use raw_hbase::RawConn;

use bytes::Bytes;
use ferrobase_hbase_wire::frame::ResponseFrame;
use ferrobase_hbase_wire::{RegionName, pb};
use ferrobase_types::RowMutation;
use std::time::{Duration, Instant};

fn exception_class(r: &ResponseFrame) -> String {
    r.header
        .exception
        .as_ref()
        .and_then(|e| e.exception_class_name.clone())
        .unwrap_or_default()
}

fn put(row: &str) -> RowMutation {
    RowMutation::new(Bytes::copy_from_slice(row.as_bytes())).put(
        Bytes::from_static(b"f"),
        b"q",
        b"v",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flush_compact_and_list_regions() {
    use pb::get_region_info_response::CompactionState;
    let dir = tempfile::tempdir().unwrap();
    // Three flushed files must stay three until the major compaction asked
    // for below: no minor compaction may start on its own at three files.
    let settings = ferrobase_types::Settings {
        compaction_min: 10,
        ..common::settings()
    };
    let (server, conn) = common::start_on(dir.path(), settings).await;
    conn.admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let table = conn.table("t");
    let mut a = RawConn::connect(server.addr(), "AdminService", None).await;

    // The one region of "t" is online here, named as meta names it.
    let r = a
        .call("GetOnlineRegion", &pb::GetOnlineRegionRequest {})
        .await;
    let online: pb::GetOnlineRegionResponse = r.decode_message().unwrap();
    assert_eq!(online.region_info.len(), 1);
    let info = &online.region_info[0];
    assert_eq!(info.table_name.qualifier, b"t".as_slice());
    let t = ferrobase_hbase_wire::names::TableName::from_pb(&info.table_name).unwrap();
    let region = RegionName::new(&t, b"", info.region_id);

    let store_files = |r: ResponseFrame| {
        let m: pb::GetStoreFileResponse = r.decode_message().unwrap();
        m.store_file.len()
    };
    let list = pb::GetStoreFileRequest {
        region: region.specifier(),
        family: vec![],
    };
    let flush = pb::FlushRegionRequest {
        region: region.specifier(),
        ..Default::default()
    };
    // Three flushes of fresh rows: three store files.
    for round in 0..3 {
        table.put(put(&format!("r{round}"))).await.unwrap();
        let r = a.call("FlushRegion", &flush).await;
        let m: pb::FlushRegionResponse = r.decode_message().unwrap();
        assert_eq!(m.flushed, Some(true));
    }
    assert_eq!(store_files(a.call("GetStoreFile", &list).await), 3);

    // A major compaction answers at once; polled, it ends with one file.
    let compact = pb::CompactRegionRequest {
        region: region.specifier(),
        major: Some(true),
        family: None,
    };
    let r = a.call("CompactRegion", &compact).await;
    assert!(r.header.exception.is_none(), "{}", exception_class(&r));
    let state = pb::GetRegionInfoRequest {
        region: region.specifier(),
        compaction_state: Some(true),
        best_split_row: None,
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = a.call("GetRegionInfo", &state).await;
        let m: pb::GetRegionInfoResponse = r.decode_message().unwrap();
        assert_eq!(m.region_info.region_id, info.region_id);
        if m.compaction_state() == CompactionState::None {
            break;
        }
        assert!(Instant::now() < deadline, "the compaction never finished");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(store_files(a.call("GetStoreFile", &list).await), 1);

    // The region's load: three writes, one store file.
    let r = a
        .call("GetRegionLoad", &pb::GetRegionLoadRequest::default())
        .await;
    let m: pb::GetRegionLoadResponse = r.decode_message().unwrap();
    assert_eq!(m.region_loads.len(), 1);
    assert_eq!(m.region_loads[0].write_requests_count, Some(3));
    assert_eq!(m.region_loads[0].storefiles, Some(1));

    // Bad requests: a family "t" lacks, meta, a method not served.
    let missing = pb::FlushRegionRequest {
        region: region.specifier(),
        family: Some(Bytes::from_static(b"nope")),
        ..Default::default()
    };
    let r = a.call("FlushRegion", &missing).await;
    assert_eq!(
        exception_class(&r),
        "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"
    );
    let meta = pb::CompactRegionRequest {
        region: RegionName::meta().specifier(),
        major: Some(true),
        family: None,
    };
    let r = a.call("CompactRegion", &meta).await;
    assert_eq!(
        exception_class(&r),
        "org.apache.hadoop.hbase.DoNotRetryIOException"
    );
    let r = a.call("StopServer", &pb::GetOnlineRegionRequest {}).await;
    assert_eq!(
        exception_class(&r),
        "org.apache.hadoop.hbase.DoNotRetryIOException"
    );
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merge_table_regions_by_encoded_name() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(
            &common::table("t", &["f"]),
            &[
                Bytes::from_static(b"m"),
                Bytes::from_static(b"p"),
                Bytes::from_static(b"s"),
            ],
        )
        .await
        .unwrap();
    let table = conn.table("t");
    for r in ["a", "k", "m", "o", "p", "r", "s", "z"] {
        table.put(put(r)).await.unwrap();
    }
    let mut m = RawConn::connect(server.addr(), "MasterService", None).await;
    for switch in [pb::MasterSwitchType::Split, pb::MasterSwitchType::Merge] {
        let mut req = pb::IsSplitOrMergeEnabledRequest::default();
        req.set_switch_type(switch);
        let r = m.call("IsSplitOrMergeEnabled", &req).await;
        let on: pb::IsSplitOrMergeEnabledResponse = r.decode_message().unwrap();
        assert!(on.enabled, "{switch:?}");
    }
    let regions = conn.admin().describe("t").await.unwrap().regions;
    let t = ferrobase_hbase_wire::names::TableName::parse("t").unwrap();
    let spec = |i: usize| {
        let r = &regions[i];
        let n = RegionName::new(&t, &r.start_key, r.region_id);
        pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::EncodedRegionName as i32,
            value: Bytes::from(n.encoded.into_bytes()),
        }
    };
    let one = pb::MergeTableRegionsRequest {
        region: vec![spec(0)],
        ..Default::default()
    };
    let r = m.call("MergeTableRegions", &one).await;
    assert!(
        exception_class(&r).contains("DoNotRetryIOException"),
        "{}",
        exception_class(&r)
    );
    let req = pb::MergeTableRegionsRequest {
        region: vec![spec(1), spec(0)],
        ..Default::default()
    };
    let r = m.call("MergeTableRegions", &req).await;
    assert!(r.header.exception.is_none(), "{}", exception_class(&r));
    let merged = conn.admin().describe("t").await.unwrap().regions;
    assert_eq!(merged.len(), 3);
    assert!(merged[0].start_key.is_empty());
    assert_eq!(&merged[0].end_key[..], b"p");

    // The first and the last of three regions, not adjacent: refused,
    // then merged with `forcible` together with the region between them.
    conn.admin().major_compact("t").await.unwrap();
    let regions = conn.admin().describe("t").await.unwrap().regions;
    let spec = |i: usize| {
        let r = &regions[i];
        let n = RegionName::new(&t, &r.start_key, r.region_id);
        pb::RegionSpecifier {
            r#type: pb::region_specifier::RegionSpecifierType::EncodedRegionName as i32,
            value: Bytes::from(n.encoded.into_bytes()),
        }
    };
    let mut req = pb::MergeTableRegionsRequest {
        region: vec![spec(2), spec(0)],
        ..Default::default()
    };
    let r = m.call("MergeTableRegions", &req).await;
    let e = r.header.exception.clone().unwrap_or_default();
    assert!(
        e.stack_trace.unwrap_or_default().contains("not adjacent"),
        "{}",
        exception_class(&r)
    );
    assert_eq!(conn.admin().describe("t").await.unwrap().regions.len(), 3);
    req.forcible = Some(true);
    let r = m.call("MergeTableRegions", &req).await;
    assert!(r.header.exception.is_none(), "{}", exception_class(&r));
    let merged = conn.admin().describe("t").await.unwrap().regions;
    assert_eq!(merged.len(), 1);
    assert!(merged[0].start_key.is_empty() && merged[0].end_key.is_empty());
    let rows = table
        .scan(ferrobase_client::Scan::new())
        .collect()
        .await
        .unwrap();
    assert_eq!(rows.len(), 8);
    server.stop().await.unwrap();
}
