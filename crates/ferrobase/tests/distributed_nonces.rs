//! Increments and appends across a failover are applied exactly once: etcd,
//! a master and two region servers; clients increment counters (one task
//! per counter row, so every answer is that task's own count) and append
//! to a row while the region server holding them is killed with SIGKILL.
//! Calls cut off by the kill (the connection breaks, maybe after the edit
//! reached the WAL) are retried with the same nonce once the region is
//! open on the survivor, which learned the nonces of the edits it replayed
//! from the dead server's WAL. Every call must succeed, answer the count it
//! made, and every counter must end at exactly its acknowledged increments.
//!
//! And a retry of an increment applied before the kill, sent with the same
//! nonce to the new holder, is answered with the current value and not
//! applied again.
//!
//! The second test makes the cut deterministic: the region server holding
//! the table dies (crash point `increment-after-apply`, an abort as a kill
//! -9) right after it applied the client's first increment and before it
//! answered it. The client's retry with the same nonce, on the survivor,
//! must be answered 1 and leave the counter at 1.
//!
//! Then the nonce must reach the retry's server through a split followed
//! by a kill, through a graceful move (the balancer), and a checkAndMutate
//! cut off after its apply (crash point `check-and-mutate-after-apply`)
//! must be answered with its first outcome.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;

/// The tests take turns: two clusters at once on 2 cores starve each
/// other's leases (a test of failover, not of an overloaded machine).
static ONE_CLUSTER_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

use anyhow::{Context, Result, bail};
use ferrobase_client::{Connection, Get};
use ferrobase_proto::cellblock::{decode_results, encode_mutations};
use ferrobase_proto::pb::{self, region_server_client::RegionServerClient};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Counter rows, one incrementing task each.
const COUNTERS: usize = 3;

/// The nonce of the increment sent by hand before the kill and again after.
const MARKED: (u64, u64) = (0x5eed, 1);

/// Increments `f:n` of `row` by `amount` on `server` tagged `nonce`, as a
/// client's (re)try would; returns the value answered.
async fn increment_at(
    server: &str,
    region_id: u64,
    row: &str,
    amount: i64,
    (nonce_group, nonce): (u64, u64),
) -> Result<i64> {
    let mut rs = RegionServerClient::connect(format!("http://{server}")).await?;
    let m = RowMutation::new(row.to_string())
        .with_durability(Durability::SyncWal)
        .put("f", "n", amount.to_be_bytes());
    let resp = rs
        .read_modify_write(pb::ReadModifyWriteRequest {
            region_id,
            mutation: encode_mutations([&m]),
            append: false,
            nonce_group,
            nonce,
        })
        .await?
        .into_inner();
    let rows = decode_results(resp.cells)?;
    let cell = rows
        .first()
        .and_then(|(_, cells)| cells.first())
        .context("no cell answered")?;
    Ok(i64::from_be_bytes(cell.value[..].try_into()?))
}

async fn counter(conn: &Connection, row: &str) -> Result<i64> {
    let r = conn.table("nt").get(Get::new(row.to_string())).await?;
    let v = r.value(b"f", b"n").context("no counter")?;
    Ok(i64::from_be_bytes(v[..].try_into()?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn increments_cut_off_by_a_failover_are_applied_exactly_once() -> Result<()> {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    let mut c = cluster::Cluster::start(1, 2, &[])?;
    let conn = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&conn, 2).await?;
    let desc = TableDescriptor::new("nt", vec![FamilyDescriptor::new("f")?])?;
    conn.admin().create_table(&desc, &[]).await?;
    let region = conn.admin().describe("nt").await?.regions[0].clone();
    let victim_addr = region.server.clone();
    let victim = c
        .servers
        .iter()
        .position(|s| s.address() == victim_addr)
        .context("the holder is one of ours")?;

    // Applied (and acknowledged) on the victim before the kill.
    let v = increment_at(&victim_addr, region.region_id, "marked", 7, MARKED).await?;
    assert_eq!(v, 7);

    let stop = Arc::new(AtomicBool::new(false));
    let acks = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for w in 0..COUNTERS {
        let t = conn.table("nt");
        let (stop, acks) = (stop.clone(), acks.clone());
        tasks.push(tokio::spawn(async move {
            let row = format!("c{w}");
            let mut ok = 0i64;
            while !stop.load(Ordering::Relaxed) {
                let failed = match t.increment(row.clone(), "f", "n", 1).await {
                    // Only this task writes the row: every answer, a retry's
                    // included, is its own count.
                    Ok(v) if v == ok + 1 => {
                        ok = v;
                        None
                    }
                    Ok(v) => Some(format!("{row}: increment {} answered {v}", ok + 1)),
                    Err(e) => Some(format!("{row}: increment {} failed: {e}", ok + 1)),
                };
                if let Some(f) = failed {
                    stop.store(true, Ordering::Relaxed);
                    return Err(f);
                }
                acks.fetch_add(1, Ordering::Relaxed);
            }
            Ok((row, ok))
        }));
    }
    let appender = {
        let t = conn.table("nt");
        let (stop, acks) = (stop.clone(), acks.clone());
        tokio::spawn(async move {
            let mut ok = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let failed = match t.append("s", "f", "a", "x").await {
                    Ok(v) if v.len() == ok + 1 => {
                        ok = v.len();
                        None
                    }
                    Ok(v) => Some(format!("append {} answered {} bytes", ok + 1, v.len())),
                    Err(e) => Some(format!("append {} failed: {e}", ok + 1)),
                };
                if let Some(f) = failed {
                    stop.store(true, Ordering::Relaxed);
                    return Err(f);
                }
                acks.fetch_add(1, Ordering::Relaxed);
            }
            Ok(ok)
        })
    };
    wait_for(&acks, 300, &stop).await?;

    let before = acks.load(Ordering::Relaxed);
    let killed = Instant::now();
    c.servers[victim].kill()?;
    // Calls go on through the failover and after it.
    wait_for(&acks, before + 300, &stop).await?;
    let recovered = killed.elapsed();
    stop.store(true, Ordering::Relaxed);

    let mut total = 0;
    for task in tasks {
        let (row, ok) = task.await?.map_err(anyhow::Error::msg)?;
        assert_eq!(
            counter(&conn, &row).await?,
            ok,
            "{row}: exactly its acknowledged increments"
        );
        total += ok;
    }
    let appended = appender.await?.map_err(anyhow::Error::msg)?;
    let s = conn.table("nt").get(Get::new("s")).await?;
    let s = s.value(b"f", b"a").context("no appended value")?;
    assert_eq!(s.len(), appended, "exactly the acknowledged appends");

    // The increment applied on the victim, retried with its nonce on the
    // region's new holder: answered, not applied again.
    let now = conn.admin().describe("nt").await?.regions[0].clone();
    if now.server == victim_addr || now.server.is_empty() {
        bail!("the region did not move off the killed server: {now:?}");
    }
    let v = increment_at(&now.server, now.region_id, "marked", 7, MARKED).await?;
    assert_eq!(v, 7, "the retried nonce is answered with the current value");
    assert_eq!(counter(&conn, "marked").await?, 7, "and not applied twice");
    // A new nonce still applies.
    let v = increment_at(&now.server, now.region_id, "marked", 7, (MARKED.0, 2)).await?;
    assert_eq!(v, 14);

    println!(
        "{total} increments and {appended} appends acknowledged, each applied once; \
         300 more calls acknowledged {:.2} s after the kill",
        recovered.as_secs_f64()
    );
    Ok(())
}

/// Waits until `n` calls were acknowledged or a task failed (it sets
/// `stop`; its join reports why).
async fn wait_for(acks: &AtomicUsize, n: usize, stop: &AtomicBool) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(90);
    while acks.load(Ordering::Relaxed) < n && !stop.load(Ordering::Relaxed) {
        if Instant::now() > deadline {
            bail!(
                "only {} calls acknowledged, waiting for {n}",
                acks.load(Ordering::Relaxed)
            );
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_increment_applied_but_not_answered_is_retried_once() -> Result<()> {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    // Only the dying server at first, so the table's region opens there.
    let mut c = cluster::Cluster::start(1, 0, &[])?;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_ferrobase"));
    cmd.env("FERROBASE_CRASH_AT", "increment-after-apply");
    let dying = cluster::Node::spawn_with(
        cmd,
        "127.0.0.1",
        cluster::free_port()?,
        "regionserver",
        &c.etcd.url,
        &c.root_url,
        &[],
    )?;
    dying.wait_line("listening on", Duration::from_secs(30))?;
    let dying_addr = dying.address();
    c.servers.push(dying);
    let conn = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&conn, 1).await?;
    let desc = TableDescriptor::new("nt", vec![FamilyDescriptor::new("f")?])?;
    conn.admin().create_table(&desc, &[]).await?;
    assert_eq!(cluster::holder(&conn, "nt", b"c").await?, dying_addr);
    c.add_server()?;

    // Applied on the dying server, which aborts before answering; the
    // client's retry reaches the survivor once the region reopened there.
    let t = conn.table("nt");
    assert_eq!(t.increment("c", "f", "n", 1).await?, 1);
    assert_eq!(counter(&conn, "c").await?, 1, "applied once");
    let holder = cluster::holder(&conn, "nt", b"c").await?;
    assert_ne!(holder, dying_addr, "the region moved to the survivor");
    // The dying server did die at the crash point.
    let status = c.servers[0].wait_exit(Duration::from_secs(30))?;
    assert!(!status.success(), "{status:?}");
    // The next increments apply as usual.
    assert_eq!(t.increment("c", "f", "n", 1).await?, 2);
    assert_eq!(&t.append("s", "f", "a", "x").await?[..], b"x");
    println!("an increment cut off after its apply was answered once, on {holder}");
    Ok(())
}

/// The region of `row` in table `nt` once it is placed on a server other
/// than `not_on` (at most 60 s).
async fn placed_off(conn: &Connection, row: &[u8], not_on: &str) -> Result<(String, u64)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(d) = conn.admin().describe("nt").await
            && let Some(r) = d
                .regions
                .iter()
                .find(|r| &r.start_key[..] <= row && (r.end_key.is_empty() || row < &r.end_key[..]))
            && !r.server.is_empty()
            && r.server != not_on
        {
            return Ok((r.server.clone(), r.region_id));
        }
        if Instant::now() > deadline {
            bail!("the region of {row:?} was not placed off {not_on} within 60 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A split between an increment and its retry: the increment is applied
/// on the only region server (sent by hand with a fixed nonce, as a call
/// whose answer was lost), its region is then split there (the daughters
/// open on the same server), and that server is killed. The parent is no
/// longer in the meta when its WAL is split, so its edit's nonce goes to
/// the daughter now holding the row: the retry on the survivor is answered
/// with the value, not applied again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_increment_retried_after_a_split_and_a_kill_is_applied_once() -> Result<()> {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    let mut c = cluster::Cluster::start(1, 1, &[])?;
    let conn = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&conn, 1).await?;
    let desc = TableDescriptor::new("nt", vec![FamilyDescriptor::new("f")?])?;
    conn.admin().create_table(&desc, &[]).await?;
    let region = conn.admin().describe("nt").await?.regions[0].clone();
    let victim = region.server.clone();

    assert_eq!(
        increment_at(&victim, region.region_id, "marked", 7, MARKED).await?,
        7
    );
    conn.admin()
        .split("nt", Some(bytes::Bytes::from_static(b"m")))
        .await?;
    let regions = conn.admin().describe("nt").await?.regions;
    assert_eq!(regions.len(), 2, "split in two: {regions:?}");
    assert!(regions.iter().all(|r| r.server == victim), "{regions:?}");

    c.add_server()?;
    cluster::wait_servers(&conn, 2).await?;
    c.servers[0].kill()?;
    let (survivor, daughter) = placed_off(&conn, b"marked", &victim).await?;
    assert_ne!(daughter, region.region_id, "a daughter holds the row now");
    let v = increment_at(&survivor, daughter, "marked", 7, MARKED).await?;
    assert_eq!(v, 7, "the retry after the split and the kill is answered");
    assert_eq!(counter(&conn, "marked").await?, 7, "and not applied twice");
    let v = increment_at(&survivor, daughter, "marked", 7, (MARKED.0, 2)).await?;
    assert_eq!(v, 14, "a new nonce applies");
    Ok(())
}

/// A move between an increment and its retry: increments are applied on
/// the one region server holding both regions of the table (by hand, fixed
/// nonces, answers "lost"); a second server joins and the balancer moves
/// one region to it (flush and close on the source, open on the target).
/// The close hands the region's nonces to the opener, so the retry on the
/// new holder is answered with the value, not applied again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_increment_retried_after_a_move_is_applied_once() -> Result<()> {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    let mut c = cluster::Cluster::start(1, 1, &["hbase.balancer.period=1000"])?;
    let conn = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&conn, 1).await?;
    let desc = TableDescriptor::new("nt", vec![FamilyDescriptor::new("f")?])?;
    conn.admin()
        .create_table(&desc, &[bytes::Bytes::from_static(b"m")])
        .await?;
    let regions = conn.admin().describe("nt").await?.regions;
    let source = regions[0].server.clone();
    // One marked row in each region: whichever moves is checked.
    let marked = [("a-marked", MARKED), ("z-marked", (MARKED.0, 2))];
    for ((row, nonce), r) in marked.iter().zip(&regions) {
        assert_eq!(increment_at(&source, r.region_id, row, 7, *nonce).await?, 7);
    }

    c.add_server()?;
    let deadline = Instant::now() + Duration::from_secs(60);
    let (row, nonce, target, region_id) = loop {
        let now = conn.admin().describe("nt").await?.regions;
        let moved = marked
            .iter()
            .zip(&now)
            .find(|(_, r)| !r.server.is_empty() && r.server != source);
        if let Some(((row, nonce), r)) = moved {
            break (*row, *nonce, r.server.clone(), r.region_id);
        }
        if Instant::now() > deadline {
            bail!("the balancer moved no region within 60 s: {now:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let v = increment_at(&target, region_id, row, 7, nonce).await?;
    assert_eq!(v, 7, "the retry on the new holder is answered");
    assert_eq!(counter(&conn, row).await?, 7, "and not applied twice");
    let v = increment_at(&target, region_id, row, 7, (MARKED.0, 3)).await?;
    assert_eq!(v, 14, "a new nonce applies");
    Ok(())
}

/// A checkAndMutate cut off after its apply: the holder aborts (crash
/// point `check-and-mutate-after-apply`) right after applying the
/// client's first checkAndMutate ("put if absent") and before answering.
/// The client retries it with the same nonce once the region is on the
/// survivor, which learned the nonce from the dead server's WAL: the
/// answer is the first outcome, "applied", where checking anew would find
/// the value and answer "not applied".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_and_mutate_applied_but_not_answered_gets_its_outcome() -> Result<()> {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    let mut c = cluster::Cluster::start(1, 0, &[])?;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_ferrobase"));
    cmd.env("FERROBASE_CRASH_AT", "check-and-mutate-after-apply");
    let dying = cluster::Node::spawn_with(
        cmd,
        "127.0.0.1",
        cluster::free_port()?,
        "regionserver",
        &c.etcd.url,
        &c.root_url,
        &[],
    )?;
    dying.wait_line("listening on", Duration::from_secs(30))?;
    let dying_addr = dying.address();
    c.servers.push(dying);
    let conn = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&conn, 1).await?;
    let desc = TableDescriptor::new("nt", vec![FamilyDescriptor::new("f")?])?;
    conn.admin().create_table(&desc, &[]).await?;
    assert_eq!(cluster::holder(&conn, "nt", b"c").await?, dying_addr);
    c.add_server()?;

    let t = conn.table("nt");
    let put = |v: &'static str| RowMutation::new("c").put("f", "q", v);
    assert!(
        t.check_and_mutate("f", "q", None, put("first")).await?,
        "the retry answers the first outcome: applied"
    );
    let holder = cluster::holder(&conn, "nt", b"c").await?;
    assert_ne!(holder, dying_addr, "the region moved to the survivor");
    let status = c.servers[0].wait_exit(Duration::from_secs(30))?;
    assert!(!status.success(), "{status:?}");
    let got = t.get(Get::new("c")).await?;
    assert_eq!(got.value(b"f", b"q").map(|v| &v[..]), Some(&b"first"[..]));
    // The next ones check as usual.
    assert!(!t.check_and_mutate("f", "q", None, put("second")).await?);
    assert!(
        t.check_and_mutate("f", "q", Some("first".into()), put("third"))
            .await?
    );
    Ok(())
}
