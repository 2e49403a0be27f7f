//! Namespaces through the gRPC Master service and the Rust client's
//! `Admin`: create, describe, modify, list, tables of a namespace, delete,
//! every refusal with its stable code, and namespaces kept across a
//! restart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_client::ErrorCode;
use ferrobase_types::RowMutation;
use std::collections::BTreeMap;

fn config(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();

    // The built-in ones exist from the start.
    let names = |all: Vec<ferrobase_client::NamespaceDescription>| {
        all.into_iter().map(|d| d.name).collect::<Vec<_>>()
    };
    assert_eq!(
        names(admin.list_namespaces().await.unwrap()),
        ["default", "hbase"]
    );

    // Create, with a configuration; a second create is refused.
    let owner = config(&[("PROPERTY_NAME", "owner")]);
    admin.create_namespace("ns1", &owner).await.unwrap();
    let d = admin.describe_namespace("ns1").await.unwrap();
    assert_eq!(d.name, "ns1");
    assert_eq!(d.config, owner);
    for existing in ["ns1", "default", "hbase"] {
        let e = admin
            .create_namespace(existing, &BTreeMap::new())
            .await
            .unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::NamespaceExists), "{existing}");
    }
    let e = admin
        .create_namespace("bad-name", &BTreeMap::new())
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidRequest));
    assert!(e.to_string().contains("bad-name"), "{e}");
    assert_eq!(
        names(admin.list_namespaces().await.unwrap()),
        ["default", "hbase", "ns1"]
    );

    // Modify replaces the whole configuration.
    let team = config(&[("team", "gps")]);
    admin.modify_namespace("ns1", &team).await.unwrap();
    assert_eq!(admin.describe_namespace("ns1").await.unwrap().config, team);

    // Unknown namespaces.
    let e = admin.describe_namespace("nosuch").await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NamespaceNotFound));
    assert!(e.to_string().contains("nosuch"), "{e}");
    for e in [
        admin
            .modify_namespace("nosuch", &BTreeMap::new())
            .await
            .unwrap_err(),
        admin.delete_namespace("nosuch").await.unwrap_err(),
        admin.list_namespace_tables("nosuch").await.unwrap_err(),
    ] {
        assert_eq!(e.code(), Some(ErrorCode::NamespaceNotFound), "{e}");
    }

    // A table's namespace must exist.
    let e = admin
        .create_table(&common::table("nosuch:t", &["f"]), &[])
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NamespaceNotFound));
    assert!(!admin.exists("nosuch:t").await.unwrap());

    // Tables of a namespace, by full name; `default` holds the plain ones.
    admin
        .create_table(&common::table("ns1:b", &["f"]), &[])
        .await
        .unwrap();
    admin
        .create_table(&common::table("ns1:a", &["f"]), &[])
        .await
        .unwrap();
    admin
        .create_table(&common::table("plain", &["f"]), &[])
        .await
        .unwrap();
    assert_eq!(
        admin.list_namespace_tables("ns1").await.unwrap(),
        ["ns1:a", "ns1:b"]
    );
    assert_eq!(
        admin.list_namespace_tables("default").await.unwrap(),
        ["plain"]
    );
    assert!(
        admin
            .list_namespace_tables("hbase")
            .await
            .unwrap()
            .is_empty()
    );
    let t = conn.table("ns1:a");
    t.put(RowMutation::new("r").put("f", "q", "v"))
        .await
        .unwrap();

    // A namespace with tables, and the built-in ones, cannot be deleted.
    let e = admin.delete_namespace("ns1").await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidRequest));
    assert!(e.to_string().contains("has tables"), "{e}");
    for builtin in ["default", "hbase"] {
        let e = admin.delete_namespace(builtin).await.unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidRequest), "{builtin}");
    }

    // Namespaces and their configuration survive a restart.
    drop(t);
    drop(conn);
    server.stop().await.unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    assert_eq!(admin.describe_namespace("ns1").await.unwrap().config, team);
    assert_eq!(
        admin.list_namespace_tables("ns1").await.unwrap(),
        ["ns1:a", "ns1:b"]
    );

    // Emptied, it can be deleted; then it is gone.
    for t in ["ns1:a", "ns1:b"] {
        admin.disable(t).await.unwrap();
        admin.drop_table(t).await.unwrap();
    }
    assert!(admin.list_namespace_tables("ns1").await.unwrap().is_empty());
    admin.delete_namespace("ns1").await.unwrap();
    assert_eq!(
        admin.describe_namespace("ns1").await.unwrap_err().code(),
        Some(ErrorCode::NamespaceNotFound)
    );
    assert_eq!(
        names(admin.list_namespaces().await.unwrap()),
        ["default", "hbase"]
    );
    server.stop().await.unwrap();
}
