//! Token authentication over gRPC on a real standalone server: with
//! `hbase.security.authentication=kerberos` a Rust client proves its user
//! with a token from a Hadoop token file (`hadoop.token.files`), and
//! permissions are checked for that user; a client without one, with a
//! forged token or with a file that is not a token file is refused,
//! naming why. With `hbase.ipc.server.fallback-to-simple-auth-allowed`
//! the claimed name is accepted again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_client::{ClientError, Connection, ErrorCode, Get, Permission};
use ferrobase_types::{RowMutation, Settings};
use std::path::Path;

fn secure() -> Settings {
    Settings {
        security_authentication: "kerberos".into(),
        security_authorization: true,
        superuser: "admin".into(),
        client_user: "admin".into(),
        ..common::settings()
    }
}

/// A client claiming `user`, presenting the token in `token_file` if any.
fn client(addr: &str, user: &str, token_file: Option<&Path>) -> Connection {
    let settings = Settings {
        client_user: user.into(),
        token_files: token_file
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        ..secure()
    };
    Connection::connect(addr, settings).unwrap()
}

fn unauthenticated<T: std::fmt::Debug>(r: Result<T, ClientError>) -> String {
    match r {
        Err(ClientError::Server { code, message }) => {
            assert_eq!(code, ErrorCode::Unauthenticated, "{message}");
            message
        }
        other => panic!("expected UNAUTHENTICATED, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_callers_prove_their_user_with_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let (server, admin) = common::start_on(dir.path(), secure()).await;
    let addr = server.addr().to_string();
    admin
        .admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    admin
        .admin()
        .grant(&Permission::new("alice", "RW", Some("t"), None, None))
        .await
        .unwrap();

    // alice's token: she is alice, whatever she claims.
    let alice_file = common::token_file(dir.path(), "alice", &secure());
    let alice = client(&addr, "admin", Some(&alice_file));
    assert_eq!(alice.admin().who_am_i().await.unwrap().user, "alice");
    let t = alice.table("t");
    t.put(RowMutation::new("r1").put("f", "q", "v"))
        .await
        .unwrap();
    assert_eq!(t.get(Get::new("r1")).await.unwrap().cells.len(), 1);
    // ...and only alice: she holds no ADMIN.
    let e = alice.admin().disable("t").await.unwrap_err();
    assert!(e.to_string().contains("'alice'"), "{e}");

    // Claiming a name proves nothing.
    let claim = client(&addr, "admin", None);
    let e = unauthenticated(claim.table("t").get(Get::new("r1")).await);
    assert!(e.contains("Authentication is required"), "{e}");
    // A token file that does not exist is skipped, as Hadoop skips it.
    let missing = client(&addr, "admin", Some(&dir.path().join("none.token")));
    unauthenticated(missing.admin().who_am_i().await);

    // A forged token: alice's identifier, another password.
    let mut bytes = std::fs::read(&alice_file).unwrap();
    let mut tokens = ferrobase_hbase_wire::token::decode_storage(&bytes).unwrap();
    tokens[0].password[0] ^= 1;
    let forged_file = dir.path().join("forged.token");
    std::fs::write(
        &forged_file,
        ferrobase_hbase_wire::token::encode_storage(&tokens),
    )
    .unwrap();
    let forged = client(&addr, "alice", Some(&forged_file));
    let e = unauthenticated(forged.table("t").get(Get::new("r1")).await);
    assert!(e.contains("forged"), "{e}");

    // Not a token file at all: the connection is refused, naming the file.
    bytes.truncate(3);
    let broken = dir.path().join("broken.token");
    std::fs::write(&broken, &bytes).unwrap();
    let settings = Settings {
        token_files: broken.display().to_string(),
        ..secure()
    };
    let e = Connection::connect(&addr, settings)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("broken.token"), "{e}");
    server.stop().await.unwrap();

    // With fallback to simple allowed, the claim is taken again.
    let fallback = Settings {
        ipc_fallback_to_simple: true,
        ..secure()
    };
    let server = ferrobase_server::Standalone::start(
        dir.path(),
        fallback.clone(),
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    let claim = Connection::connect(
        &server.addr().to_string(),
        Settings {
            client_user: "alice".into(),
            ..fallback
        },
    )
    .unwrap();
    assert_eq!(claim.admin().who_am_i().await.unwrap().user, "alice");
    assert_eq!(
        claim
            .table("t")
            .get(Get::new("r1"))
            .await
            .unwrap()
            .cells
            .len(),
        1
    );
    server.stop().await.unwrap();
}
