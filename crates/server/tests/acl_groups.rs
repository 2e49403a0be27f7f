//! `@group` grants and superusers over gRPC (HBase's AccessController with
//! Hadoop's group mapping): alice is in `ops` and bob in `dev` by
//! `hadoop.user.group.static.mapping.overrides`; the OS user `daemon` is in
//! the host group `daemon` (`id -Gn daemon`, Debian's base system); carol
//! is in `admins`, a superuser group. A grant to `@ops` lets alice in and
//! not bob, is listed under `@ops`, and its revoke shuts her out again; a
//! grant to `@daemon` reaches a user through the host's groups.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_client::{ClientError, Connection, ErrorCode, Get, Permission};
use ferrobase_types::{RowMutation, Settings};

fn secured() -> Settings {
    Settings {
        security_authorization: true,
        superuser: "admin,@admins".into(),
        group_mapping: "org.apache.hadoop.security.ShellBasedUnixGroupsMapping".into(),
        group_static_overrides: "alice=ops;bob=dev;carol=admins".into(),
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

fn is_denied<T: std::fmt::Debug>(r: Result<T, ClientError>, user: &str) {
    match r {
        Err(ClientError::Server { code, message }) => {
            assert_eq!(code, ErrorCode::AccessDenied, "{message}");
            assert!(message.contains(&format!("'{user}'")), "{message}");
        }
        other => panic!("expected ACCESS_DENIED for {user}, got {other:?}"),
    }
}

fn on_table(user: &str, actions: &str) -> Permission {
    Permission::new(user, actions, Some("t"), None, None)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_grants_reach_their_members() {
    assert_eq!(
        String::from_utf8(
            std::process::Command::new("id")
                .args(["-Gn", "daemon"])
                .output()
                .unwrap()
                .stdout
        )
        .unwrap()
        .trim(),
        "daemon",
        "this test needs the OS user daemon in its group daemon"
    );
    let dir = tempfile::tempdir().unwrap();
    let server =
        ferrobase_server::Standalone::start(dir.path(), secured(), "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
    let admin = as_user(&server, "admin");
    let (alice, bob, carol, daemon) = (
        as_user(&server, "alice"),
        as_user(&server, "bob"),
        as_user(&server, "carol"),
        as_user(&server, "daemon"),
    );
    admin
        .admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    admin
        .table("t")
        .put(RowMutation::new("r1").put("f", "q", "1"))
        .await
        .unwrap();
    is_denied(alice.table("t").get(Get::new("r1")).await, "alice");

    // READ to @ops: alice (in ops) reads, bob (in dev) does not.
    admin.admin().grant(&on_table("@ops", "R")).await.unwrap();
    let r = alice.table("t").get(Get::new("r1")).await.unwrap();
    assert_eq!(&r.cells[0].value[..], b"1");
    is_denied(bob.table("t").get(Get::new("r1")).await, "bob");
    is_denied(
        alice
            .table("t")
            .put(RowMutation::new("r2").put("f", "q", "x"))
            .await,
        "alice",
    );
    let listed = admin.admin().user_permissions(Some("t")).await.unwrap();
    assert!(
        listed.iter().any(|p| p.user == "@ops"),
        "the grant is listed under @ops: {listed:?}"
    );

    // WRITE to @daemon: the host's groups of the user daemon include it.
    is_denied(
        daemon
            .table("t")
            .put(RowMutation::new("r3").put("f", "q", "d"))
            .await,
        "daemon",
    );
    admin
        .admin()
        .grant(&on_table("@daemon", "W"))
        .await
        .unwrap();
    daemon
        .table("t")
        .put(RowMutation::new("r3").put("f", "q", "d"))
        .await
        .unwrap();

    // carol is in @admins, a superuser group: she creates a table with no grant.
    carol
        .admin()
        .create_table(&common::table("c", &["f"]), &[])
        .await
        .unwrap();
    is_denied(
        bob.admin()
            .create_table(&common::table("b", &["f"]), &[])
            .await,
        "bob",
    );

    // Revoking @ops shuts alice out again.
    admin.admin().revoke(&on_table("@ops", "R")).await.unwrap();
    is_denied(alice.table("t").get(Get::new("r1")).await, "alice");
    server.stop().await.unwrap();
}
