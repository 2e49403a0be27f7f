//! Authorization over gRPC with two users (HBase's AccessController rules):
//! with `hbase.security.authorization` on, alice and bob (simple
//! authentication: the name each client claims) can do nothing until the
//! superuser grants them; family grants filter reads; namespace CREATE
//! lets bob create a table he then owns; grants survive a restart; a
//! denied batch action applies nothing for its rows.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_client::{ClientError, Connection, ErrorCode, Get, Permission, Scan};
use ferrobase_types::{RowMutation, Settings};

fn secured() -> Settings {
    Settings {
        security_authorization: true,
        superuser: "admin".into(),
        ..common::settings()
    }
}

fn as_user(server: &ferrobase_server::Standalone, user: &str) -> Connection {
    let settings = Settings {
        client_user: user.into(),
        ..secured()
    };
    Connection::connect(&server.addr().to_string(), settings).unwrap()
}

fn denied<T: std::fmt::Debug>(r: Result<T, ClientError>, user: &str) -> String {
    match r {
        Err(ClientError::Server { code, message }) => {
            assert_eq!(code, ErrorCode::AccessDenied, "{message}");
            assert!(message.contains(&format!("'{user}'")), "{message}");
            message
        }
        other => panic!("expected ACCESS_DENIED for {user}, got {other:?}"),
    }
}

fn perm(user: &str, actions: &str, target: Option<&str>, family: Option<&str>) -> Permission {
    Permission::new(user, actions, target, family.map(str::as_bytes), None)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_users_grant_revoke_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server =
        ferrobase_server::Standalone::start(dir.path(), secured(), "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
    let admin = as_user(&server, "admin");
    let alice = as_user(&server, "alice");
    let bob = as_user(&server, "bob");
    let who = alice.admin().who_am_i().await.unwrap();
    assert_eq!((who.user.as_str(), who.authorization), ("alice", true));

    admin
        .admin()
        .create_table(&common::table("t", &["f", "g"]), &[])
        .await
        .unwrap();
    admin
        .admin()
        .create_namespace("ns", &Default::default())
        .await
        .unwrap();
    admin
        .table("t")
        .put(RowMutation::new("r1").put("f", "a", "1").put("g", "b", "2"))
        .await
        .unwrap();

    // Nothing granted: reads, writes and DDL are denied, and say so.
    let m = denied(alice.table("t").get(Get::new("r1")).await, "alice");
    assert!(m.contains("READ") && m.contains("table=t"), "{m}");
    denied(
        bob.table("t")
            .put(RowMutation::new("r2").put("f", "a", "x"))
            .await,
        "bob",
    );
    denied(bob.admin().disable("t").await, "bob");
    denied(
        bob.admin()
            .create_table(&common::table("t2", &["f"]), &[])
            .await,
        "bob",
    );
    denied(
        alice
            .admin()
            .grant(&perm("alice", "RWXCA", None, None))
            .await,
        "alice",
    );
    assert!(alice.admin().list_tables().await.unwrap().is_empty());

    // alice gets READ and WRITE on the table.
    admin
        .admin()
        .grant(&perm("alice", "RW", Some("t"), None))
        .await
        .unwrap();
    alice
        .table("t")
        .put(RowMutation::new("r2").put("g", "c", "3"))
        .await
        .unwrap();
    let r = alice.table("t").get(Get::new("r1")).await.unwrap();
    assert_eq!(r.cells.len(), 2);
    assert_eq!(alice.admin().list_tables().await.unwrap(), ["t"]);
    denied(alice.admin().disable("t").await, "alice");
    denied(alice.admin().flush("t").await, "alice");

    // bob gets READ on family f only: asking for both families filters g
    // out; asking for no family at all is denied (HBase's rule).
    admin
        .admin()
        .grant(&perm("bob", "R", Some("t"), Some("f")))
        .await
        .unwrap();
    let r = bob
        .table("t")
        .get(Get::new("r1").family("f").family("g"))
        .await
        .unwrap();
    let families: Vec<&[u8]> = r.cells.iter().map(|c| &c.family[..]).collect();
    assert_eq!(families, [b"f"]);
    denied(bob.table("t").get(Get::new("r1")).await, "bob");
    let rows = bob
        .table("t")
        .scan(Scan::new().family("f").family("g"))
        .collect()
        .await
        .unwrap();
    // r2 has only a g cell: the filtered scan skips it.
    assert_eq!(rows.len(), 1);
    assert!(rows[0].cells.iter().all(|c| &c.family[..] == b"f"));
    denied(bob.table("t").increment("r1", "f", "n", 1).await, "bob");

    // A batch: alice's writes to t apply, a write to a table she cannot
    // write is refused and nothing of it lands.
    admin
        .admin()
        .create_table(&common::table("other", &["f"]), &[])
        .await
        .unwrap();
    let results = alice
        .table("other")
        .batch(&[RowMutation::new("x").put("f", "q", "v")])
        .await;
    assert_eq!(
        results[0].as_ref().err().and_then(ClientError::code),
        Some(ErrorCode::AccessDenied)
    );
    assert!(
        admin
            .table("other")
            .get(Get::new("x"))
            .await
            .unwrap()
            .is_empty()
    );

    // CREATE on a namespace: bob creates a table there and owns it.
    admin
        .admin()
        .grant(&perm("bob", "C", Some("@ns"), None))
        .await
        .unwrap();
    bob.admin()
        .create_table(&common::table("ns:mine", &["f"]), &[])
        .await
        .unwrap();
    bob.table("ns:mine")
        .put(RowMutation::new("k").put("f", "q", "v"))
        .await
        .unwrap();
    denied(alice.table("ns:mine").get(Get::new("k")).await, "alice");
    // The owner may grant on his table.
    bob.admin()
        .grant(&perm("alice", "R", Some("ns:mine"), None))
        .await
        .unwrap();
    assert!(
        !alice
            .table("ns:mine")
            .get(Get::new("k"))
            .await
            .unwrap()
            .is_empty()
    );

    // user_permission 't': the creator's (owner's) grant, alice RW on the
    // table, bob R on family f.
    let mut listed: Vec<(String, String, Vec<u8>)> = admin
        .admin()
        .user_permissions(Some("t"))
        .await
        .unwrap()
        .into_iter()
        .map(|p| (p.user, p.actions, p.family))
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            ("admin".to_string(), "RWXCA".to_string(), vec![]),
            ("alice".to_string(), "RW".to_string(), vec![]),
            ("bob".to_string(), "R".to_string(), b"f".to_vec()),
        ]
    );
    // bob may list his own permissions, not alice's.
    denied(bob.admin().user_permissions(Some("t")).await, "bob");

    // Revoke: alice is denied again.
    admin
        .admin()
        .revoke(&perm("alice", "", Some("t"), None))
        .await
        .unwrap();
    denied(alice.table("t").get(Get::new("r1")).await, "alice");

    // Permissions live in the meta: a restart keeps bob's.
    drop((admin, alice, bob));
    server.stop().await.unwrap();
    let server =
        ferrobase_server::Standalone::start(dir.path(), secured(), "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
    let bob = as_user(&server, "bob");
    let r = bob
        .table("t")
        .get(Get::new("r1").family("f"))
        .await
        .unwrap();
    assert_eq!(r.cells.len(), 1);
    bob.table("ns:mine")
        .put(RowMutation::new("k2").put("f", "q", "v"))
        .await
        .unwrap();
    let alice = as_user(&server, "alice");
    denied(alice.table("t").get(Get::new("r1")).await, "alice");
    // Dropping a table drops its permissions.
    let admin = as_user(&server, "admin");
    admin.admin().disable("ns:mine").await.unwrap();
    admin.admin().drop_table("ns:mine").await.unwrap();
    admin
        .admin()
        .create_table(&common::table("ns:mine", &["f"]), &[])
        .await
        .unwrap();
    denied(bob.table("ns:mine").get(Get::new("k")).await, "bob");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_off_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) = common::start_on(dir.path(), common::settings()).await;
    let bob = Connection::connect(
        &server.addr().to_string(),
        Settings {
            client_user: "bob".into(),
            ..common::settings()
        },
    )
    .unwrap();
    bob.admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    bob.table("t")
        .put(RowMutation::new("r").put("f", "q", "v"))
        .await
        .unwrap();
    assert!(!bob.table("t").get(Get::new("r")).await.unwrap().is_empty());
    assert!(
        bob.admin()
            .user_permissions(Some("t"))
            .await
            .unwrap()
            .is_empty()
    );
    server.stop().await.unwrap();
}
