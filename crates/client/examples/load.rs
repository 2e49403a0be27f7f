//! A small load generator (`ferrobase bench load` is the full one): writes
//! rows of a data shape (docs/workloads.md) through BufferedMutators
//! against a running server.
//!
//! `cargo run --release -p ferrobase-client --example load -- ADDR [ROWS] [THREADS] [BUFFER_BYTES] [DURABILITY] [SHAPE] [REGIONS]`
//! defaults: 2000000 rows, 8 threads, 4 MiB, ASYNC_WAL, log9, 1 region.

use bytes::Bytes;
use ferrobase_client::{BufferedMutator, Connection, SplitAlgorithm};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use ferrobase_workloads::Shape;
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let addr = arg(0, "127.0.0.1:16020");
    let rows: u64 = arg(1, "2000000").parse()?;
    let threads: u64 = arg(2, "8").parse()?;
    let buffer: u64 = arg(3, "4194304").parse()?;
    let durability: Durability = arg(4, "ASYNC_WAL").parse()?;
    let shape = Shape::parse(&arg(5, "log9"), None)?;
    let regions: u32 = arg(6, "1").parse()?;

    let settings = Settings {
        client_ipc_pool_size: threads as usize,
        ..Settings::default()
    };
    let conn = Connection::connect(&addr, settings)?;
    let admin = conn.admin();
    let name = format!("load_{}", shape.name());
    if admin.exists(&name).await? {
        admin.disable(&name).await?;
        admin.drop_table(&name).await?;
    }
    let family = std::str::from_utf8(shape.family())?;
    let desc = TableDescriptor::new(&name, vec![FamilyDescriptor::new(family)?])?;
    if regions > 1 {
        admin
            .create_table_presplit(&desc, regions, SplitAlgorithm::UniformSplit)
            .await?;
    } else {
        admin.create_table(&desc, &[]).await?;
    }

    let start = Instant::now();
    let per_thread = rows.div_ceil(threads);
    let mut tasks = Vec::new();
    for t in 0..threads {
        let table = conn.table(&name);
        tasks.push(tokio::spawn(async move {
            let bm = BufferedMutator::with_buffer_size(table, buffer);
            let fam = Bytes::copy_from_slice(shape.family());
            for i in t * per_thread..((t + 1) * per_thread).min(rows) {
                let g = shape.row(i);
                let mut m =
                    RowMutation::new(Bytes::copy_from_slice(&g.row)).with_durability(durability);
                for (q, v) in &g {
                    m = m.put(fam.clone(), q, v);
                }
                bm.mutate(m).await?;
            }
            bm.close().await?;
            Ok::<(), BoxError>(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{rows} {} rows, {threads} threads, {buffer} B buffer, {durability}, {regions} region(s): {secs:.1} s, {:.0} rows/s",
        shape.name(),
        rows as f64 / secs
    );
    Ok(())
}
