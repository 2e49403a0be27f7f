//! `ferrobase import` against a real standalone server on loopback, on
//! real files: the rejects file lists exactly the bad lines (files cut
//! into many splits), rows read back equal a model through the write path
//! and through `--bulk`, a bulk import survives a restart and a major
//! compaction, and a bulk file crossing a region boundary is refused by
//! the region and split by the loader.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_bench::target::with_target_at;
use ferrobase_client::{Connection, ErrorCode, Scan};
use ferrobase_import::columns::ColumnSpec;
use ferrobase_import::{ImportOptions, run_import};
use ferrobase_server::Standalone;
use ferrobase_storage::fs::{LocalFs, Storage};
use ferrobase_storage::storefile::StoreFileWriter;
use ferrobase_types::{CellType, Durability, FamilyDescriptor, Settings, TableDescriptor, key};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// row → (family:qualifier → value).
type Model = BTreeMap<String, BTreeMap<String, String>>;

const TS: u64 = 1_000_000;

fn settings() -> Settings {
    Settings {
        memory_size: 256 * 1024 * 1024,
        client_retries: 5,
        client_pause_ms: 20,
        keyvalue_max_size: 200,
        ..Settings::default()
    }
}

fn options(table: &str, files: Vec<PathBuf>, rejects: &Path, bulk: bool) -> ImportOptions {
    ImportOptions {
        table: table.into(),
        columns: ColumnSpec::parse("HBASE_ROW_KEY,f:a,g:b,f:c").unwrap(),
        files,
        separator: b',',
        skip_bad_lines: true,
        timestamp: TS,
        skip_empty_columns: false,
        dry_run: false,
        bulk,
        create_table: true,
        durability: Durability::UseDefault,
        threads: 3,
        // Many splits a file, so line numbers cross split boundaries.
        split_size: 97,
        write_buffer: 4096,
        // Several spills a reader: several store files a store.
        bulk_buffer: 3 * 70_000,
        rejects: rejects.to_path_buf(),
        root: None,
        settings: settings(),
        quiet: true,
    }
}

/// Input files with good and bad lines; returns the model of the good
/// ones and the expected rejects (`file:line`, in order).
fn write_input(dir: &Path) -> (Vec<PathBuf>, Model, Vec<String>) {
    let mut model = Model::new();
    let mut bad = Vec::new();
    let mut files = Vec::new();
    for f in 0..3 {
        let path = dir.join(format!("in-{f}.csv"));
        let mut text = String::new();
        for i in 0..400u32 {
            let line_no = i + 1;
            let row = format!("r{:05}", (i * 7919 + f * 31) % 100_000);
            let line = match i % 37 {
                5 => format!("{row},only-two"),
                11 => format!(",a{i},b{i},c{i}"),
                17 => format!("{row},a,b,c,extra"),
                23 => format!("{row},{},b,c", "x".repeat(300)),
                29 => String::new(),
                _ => {
                    let cells = model.entry(row.clone()).or_default();
                    cells.insert("f:a".into(), format!("a{f}-{i}"));
                    cells.insert("g:b".into(), format!("b{f}-{i}"));
                    cells.insert("f:c".into(), String::new());
                    format!("{row},a{f}-{i},b{f}-{i},")
                }
            };
            if matches!(i % 37, 5 | 11 | 17 | 23 | 29) {
                bad.push(format!("{}:{line_no}", path.display()));
            }
            writeln!(text, "{line}").unwrap();
        }
        // A last line without a line break.
        if f == 2 {
            text += "zlast,x,y,z";
            let cells = model.entry("zlast".into()).or_default();
            for (c, v) in [("f:a", "x"), ("g:b", "y"), ("f:c", "z")] {
                cells.insert(c.into(), v.into());
            }
        }
        std::fs::write(&path, text).unwrap();
        files.push(path);
    }
    (files, model, bad)
}

async fn read_back(conn: &Connection, table: &str) -> Model {
    let rows = conn.table(table).scan(Scan::new()).collect().await.unwrap();
    let mut m = Model::new();
    for r in rows {
        let cells = m
            .entry(String::from_utf8_lossy(&r.row).to_string())
            .or_default();
        for c in r.cells {
            assert_eq!(c.timestamp, TS);
            cells.insert(
                format!(
                    "{}:{}",
                    String::from_utf8_lossy(&c.family),
                    String::from_utf8_lossy(&c.qualifier)
                ),
                String::from_utf8_lossy(&c.value).to_string(),
            );
        }
    }
    m
}

async fn import(addr: &str, opts: &ImportOptions) -> ferrobase_import::ImportReport {
    with_target_at(Some(addr), None, settings(), async |t| {
        run_import(t, opts)
            .await
            .map_err(|e| ferrobase_bench::BenchError::Invalid(e.to_string()))
    })
    .await
    .unwrap()
}

fn rejects_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_paths_load_the_model_and_reject_exactly_the_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (files, model, bad) = write_input(dir.path());
    let data = dir.path().join("data");
    let server = Standalone::start(&data, settings(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.addr().to_string();
    let conn = Connection::connect(&addr, settings()).unwrap();

    let rejects = dir.path().join("put.rejects");
    let r = import(&addr, &options("put", files.clone(), &rejects, false)).await;
    assert_eq!(rejects_of(&rejects), bad);
    assert_eq!(r.bad_lines, bad.len() as u64);
    assert_eq!(r.lines, 1201);
    assert_eq!(r.failed_count, 0);
    assert!(r.splits > 3, "{} splits", r.splits);
    // The reasons are said.
    let text = std::fs::read_to_string(&rejects).unwrap();
    for why in [
        "2 field(s), the columns name 4",
        "empty row key",
        "5 field(s)",
        "larger than hbase.client.keyvalue.maxsize (200)",
        "1 field(s)",
    ] {
        assert!(text.contains(why), "{why} missing from\n{text}");
    }
    assert_eq!(read_back(&conn, "put").await, model);

    let rejects = dir.path().join("bulk.rejects");
    let r = import(&addr, &options("bulk", files.clone(), &rejects, true)).await;
    assert_eq!(rejects_of(&rejects), bad);
    let loaded = r.bulk.clone().unwrap();
    assert!(loaded.files >= 2, "{loaded:?}");
    assert_eq!(read_back(&conn, "bulk").await, model);
    // The staging directory is gone.
    let staging = data.join("staging");
    assert!(std::fs::read_dir(&staging).map_or(0, |d| d.count()) == 0);

    // A major compaction merges the loaded files; a restart keeps them.
    conn.admin().major_compact("bulk").await.unwrap();
    drop(conn);
    server.stop().await.unwrap();
    let server = Standalone::start(&data, settings(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let conn = Connection::connect(&server.addr().to_string(), settings()).unwrap();
    assert_eq!(read_back(&conn, "bulk").await, model);
    assert_eq!(read_back(&conn, "put").await, model);
    conn.admin().major_compact("bulk").await.unwrap();
    assert_eq!(read_back(&conn, "bulk").await, model);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_file_crossing_a_region_boundary_is_refused_then_split() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Standalone::start(&data, settings(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let conn = Connection::connect(&server.addr().to_string(), settings()).unwrap();
    let family = FamilyDescriptor::new("f").unwrap();
    let desc = TableDescriptor::new("t", vec![family.clone()]).unwrap();
    conn.admin()
        .create_table(&desc, &[bytes::Bytes::from_static(b"m")])
        .await
        .unwrap();
    let table = conn.table("t");
    let regions = table.region_locations(true).await.unwrap();
    assert_eq!(regions.len(), 2);

    let staging = table.prepare_bulk_load().await.unwrap();
    let fs: Arc<dyn Storage> = ferrobase_storage::fs::from_url(&staging.root)
        .unwrap_or_else(|_| Arc::new(LocalFs::as_given()));
    let path = PathBuf::from(&staging.path).join("f").join("x.sf");
    fs.create_dir_all(path.parent().unwrap()).unwrap();
    let rows = ["a", "c", "m", "x"];
    let mut w = StoreFileWriter::create_on(&*fs, &path, &family, 4).unwrap();
    for r in rows {
        let k = key::encode(r.as_bytes(), b"f", b"q", TS, CellType::Put);
        w.append(&k, 0, r.as_bytes()).unwrap();
    }
    w.finish().unwrap();
    let file = vec![("f".to_string(), path.to_string_lossy().into_owned())];

    // The region refuses it, names the row outside and its boundary.
    let e = table.bulk_load(&regions[0], &file).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::WrongRegion), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("crosses the region's boundary") && text.contains("'x'"),
        "{text}"
    );
    // A path outside the staging directory is refused too.
    let e = table
        .bulk_load(&regions[0], &[("f".into(), "/etc/passwd".into())])
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("not inside the staging directory"),
        "{e}"
    );

    // The loader splits it along the boundary and loads both halves.
    let staged = vec![ferrobase_import::bulk_sink::StagedFile {
        region: 0,
        family: "f".into(),
        path: path.clone(),
        entries: 4,
    }];
    let out = ferrobase_import::complete::complete(&table, &fs, &desc, &regions, staged)
        .await
        .unwrap();
    assert_eq!(
        (out.files, out.regions, out.split_files, out.entries),
        (2, 2, 1, 4)
    );
    let got: Vec<String> = table
        .scan(Scan::new())
        .collect()
        .await
        .unwrap()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.row).to_string())
        .collect();
    assert_eq!(got, rows);
    table.cleanup_bulk_load(&staging).await.unwrap();
    server.stop().await.unwrap();
}
