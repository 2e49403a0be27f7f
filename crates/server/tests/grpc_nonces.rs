//! Client nonces over gRPC: a `ReadModifyWrite` (increment or append)
//! tagged with `(nonce_group, nonce)` is applied once by a real standalone
//! server on loopback; the same pair sent again (a client's retry after a
//! call whose answer it never saw) is answered with the row's current
//! cells and changes nothing. Untagged calls, and the same nonce in
//! another group, apply each time. The Rust client tags every increment
//! and append with a nonce of its connection's group.
//!
//! A clean close hands a region's nonces to its next opener (here: a
//! stop and a start on the same directory), and a checkAndMutate tagged
//! with a nonce is answered once: a retry gets the first outcome.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use ferrobase_proto::cellblock::{decode_results, encode_mutations};
use ferrobase_proto::pb::{self, region_server_client::RegionServerClient};
use ferrobase_types::RowMutation;
use tonic::transport::Channel;

/// Sends one increment (`append`: one append) of `value` to `f:q` of `row`
/// tagged `(group, nonce)`; returns the value the server answers.
async fn call(
    rs: &mut RegionServerClient<Channel>,
    region_id: u64,
    row: &str,
    value: &[u8],
    append: bool,
    (nonce_group, nonce): (u64, u64),
) -> Bytes {
    let m = RowMutation::new(row.to_string()).put("f", "q", value);
    let resp = rs
        .read_modify_write(pb::ReadModifyWriteRequest {
            region_id,
            mutation: encode_mutations([&m]),
            append,
            nonce_group,
            nonce,
        })
        .await
        .unwrap()
        .into_inner();
    let rows = decode_results(resp.cells).unwrap();
    assert_eq!(rows.len(), 1);
    let cell = rows[0].1.first().expect("the column comes back");
    cell.value.clone()
}

fn long(v: &Bytes) -> i64 {
    i64::from_be_bytes(v[..].try_into().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_nonce_is_answered_as_a_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let region_id = conn.admin().describe("t").await.unwrap().regions[0].region_id;
    let mut rs = RegionServerClient::connect(format!("http://{}", server.addr()))
        .await
        .unwrap();
    let five = 5i64.to_be_bytes();

    // First call of (7, 1): applied.
    let v = call(&mut rs, region_id, "n", &five, false, (7, 1)).await;
    assert_eq!(long(&v), 5);
    // Its retry: answered with the current value, not applied again.
    let v = call(&mut rs, region_id, "n", &five, false, (7, 1)).await;
    assert_eq!(long(&v), 5, "a retried nonce is not applied twice");
    // The same nonce in another group, and another nonce, are new calls.
    let v = call(&mut rs, region_id, "n", &five, false, (8, 1)).await;
    assert_eq!(long(&v), 10);
    let v = call(&mut rs, region_id, "n", &five, false, (7, 2)).await;
    assert_eq!(long(&v), 15);
    // Without a nonce (an older client): every call applies.
    for want in [20, 25] {
        let v = call(&mut rs, region_id, "n", &five, false, (7, 0)).await;
        assert_eq!(long(&v), want);
    }
    // Someone else's increment, then the old retry again: the answer is
    // the row as it is now, still without applying the retry.
    assert_eq!(
        conn.table("t").increment("n", "f", "q", 1).await.unwrap(),
        26
    );
    let v = call(&mut rs, region_id, "n", &five, false, (7, 1)).await;
    assert_eq!(long(&v), 26);

    // Appends: the same.
    let v = call(&mut rs, region_id, "s", b"ab", true, (7, 3)).await;
    assert_eq!(&v[..], b"ab");
    let v = call(&mut rs, region_id, "s", b"ab", true, (7, 3)).await;
    assert_eq!(&v[..], b"ab", "a retried append is not applied twice");
    let v = call(&mut rs, region_id, "s", b"cd", true, (7, 4)).await;
    assert_eq!(&v[..], b"abcd");

    // The Rust client's own calls carry nonces of its connection's group
    // (never 0: 0 is "no nonce"), one per call: each applies.
    assert_ne!(conn.nonce_group(), 0);
    let t = conn.table("t");
    assert_eq!(t.increment("m", "f", "q", 2).await.unwrap(), 2);
    assert_eq!(t.increment("m", "f", "q", 2).await.unwrap(), 4);
    assert_eq!(&t.append("s", "f", "q", "e").await.unwrap()[..], b"abcde");
    let other =
        ferrobase_client::Connection::connect(&server.addr().to_string(), common::settings())
            .unwrap();
    assert_ne!(other.nonce_group(), conn.nonce_group());
    server.stop().await.unwrap();
}

/// A clean close hands the region's nonces to its next opener: the server
/// stops (closing every region), starts again on the same directory, and
/// a retry of an increment applied before the stop is answered with the
/// value, not applied again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_a_clean_close_and_reopen_is_answered_once() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let region_id = conn.admin().describe("t").await.unwrap().regions[0].region_id;
    let mut rs = RegionServerClient::connect(format!("http://{}", server.addr()))
        .await
        .unwrap();
    let five = 5i64.to_be_bytes();
    assert_eq!(
        long(&call(&mut rs, region_id, "n", &five, false, (7, 1)).await),
        5
    );
    // A clean stop flushes the region: the WAL replay at the next open
    // has nothing of it, so only the handed-over nonces say it applied.
    drop(rs);
    server.stop().await.unwrap();

    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let region_id = conn.admin().describe("t").await.unwrap().regions[0].region_id;
    let mut rs = RegionServerClient::connect(format!("http://{}", server.addr()))
        .await
        .unwrap();
    let v = call(&mut rs, region_id, "n", &five, false, (7, 1)).await;
    assert_eq!(
        long(&v),
        5,
        "the retry after the reopen is not applied again"
    );
    let v = call(&mut rs, region_id, "n", &five, false, (7, 2)).await;
    assert_eq!(long(&v), 10, "a new nonce applies");
    server.stop().await.unwrap();
}

/// Sends one checkAndMutate tagged `(group, nonce)`: put `f:q` = `value`
/// on `row` when `f:q` holds `expected` (`None`: absent).
async fn check_and_put(
    rs: &mut RegionServerClient<Channel>,
    region_id: u64,
    row: &str,
    expected: Option<&'static [u8]>,
    value: &'static [u8],
    (nonce_group, nonce): (u64, u64),
) -> bool {
    let m = RowMutation::new(row.to_string()).put("f", "q", value);
    rs.check_and_mutate(pb::CheckAndMutateRequest {
        region_id,
        row: Bytes::from(row.to_string()),
        family: Bytes::from_static(b"f"),
        qualifier: Bytes::from_static(b"q"),
        expected: expected.map(Bytes::from_static),
        mutation: encode_mutations([&m]),
        nonce_group,
        nonce,
    })
    .await
    .unwrap()
    .into_inner()
    .value
}

async fn value(conn: &ferrobase_client::Connection, row: &str) -> Option<Bytes> {
    let r = conn
        .table("t")
        .get(ferrobase_client::Get::new(row.to_string()))
        .await
        .unwrap();
    r.value(b"f", b"q").cloned()
}

/// A checkAndMutate retried with its nonce gets its first outcome, whatever
/// the row holds by then: "applied" when it applied (the check, run again,
/// would now fail), "not applied" when its check failed (run again, it
/// would now pass), and in neither case is anything written again. Also
/// across a clean close and reopen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_check_and_mutate_gets_its_first_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let region_id = conn.admin().describe("t").await.unwrap().regions[0].region_id;
    let mut rs = RegionServerClient::connect(format!("http://{}", server.addr()))
        .await
        .unwrap();

    // Applied: "absent" held. Its retry would find "one" and fail.
    assert!(check_and_put(&mut rs, region_id, "a", None, b"one", (7, 1)).await);
    assert!(
        check_and_put(&mut rs, region_id, "a", None, b"one", (7, 1)).await,
        "the retry of an applied checkAndMutate answers applied"
    );
    // Not applied: "x" was expected. Someone then writes "x"; the retry
    // would now pass and write "two".
    assert!(!check_and_put(&mut rs, region_id, "b", Some(b"x"), b"two", (7, 2)).await);
    conn.table("t")
        .put(RowMutation::new("b").put("f", "q", "x"))
        .await
        .unwrap();
    assert!(
        !check_and_put(&mut rs, region_id, "b", Some(b"x"), b"two", (7, 2)).await,
        "the retry of a failed check answers not applied"
    );
    assert_eq!(value(&conn, "b").await.as_deref(), Some(&b"x"[..]));
    // Without a nonce every call checks anew.
    assert!(check_and_put(&mut rs, region_id, "b", Some(b"x"), b"two", (7, 0)).await);
    assert_eq!(value(&conn, "b").await.as_deref(), Some(&b"two"[..]));

    // An applied one survives a clean close and reopen (its nonce handed
    // over); someone overwrites the value meanwhile, and the retry neither
    // answers "not applied" nor writes again.
    assert!(check_and_put(&mut rs, region_id, "c", None, b"one", (7, 3)).await);
    drop(rs);
    server.stop().await.unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let region_id = conn.admin().describe("t").await.unwrap().regions[0].region_id;
    let mut rs = RegionServerClient::connect(format!("http://{}", server.addr()))
        .await
        .unwrap();
    conn.table("t")
        .put(RowMutation::new("c").put("f", "q", "other"))
        .await
        .unwrap();
    assert!(check_and_put(&mut rs, region_id, "c", None, b"one", (7, 3)).await);
    assert_eq!(value(&conn, "c").await.as_deref(), Some(&b"other"[..]));

    // The Rust client tags its checkAndMutate calls: each is a new call.
    let t = conn.table("t");
    let put = |v: &'static str| RowMutation::new("d").put("f", "q", v);
    assert!(t.check_and_mutate("f", "q", None, put("1")).await.unwrap());
    assert!(!t.check_and_mutate("f", "q", None, put("2")).await.unwrap());
    assert!(
        t.check_and_mutate("f", "q", Some(Bytes::from("1")), put("3"))
            .await
            .unwrap()
    );
    server.stop().await.unwrap();
}
