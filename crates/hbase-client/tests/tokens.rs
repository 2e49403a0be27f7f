//! The client's token authentication against a real secure ferrobase
//! standalone (`hbase.security.authentication=kerberos`, permissions on):
//! a Hadoop token file proves the user over SASL DIGEST-MD5, so the
//! superuser's token may create a table and alice's may only do what she
//! was granted; a client claiming a name, or with a forged token, is
//! refused with the server's exception; token files that are missing are
//! skipped and ones that are not token files are named.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_hbase_client::{ClientConfig, Connection, Get, Token};
use ferrobase_server::Standalone;
use ferrobase_types::{FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::path::{Path, PathBuf};

fn secure() -> Settings {
    Settings {
        memory_size: 256 << 20,
        security_authentication: "kerberos".into(),
        security_authorization: true,
        superuser: "admin".into(),
        ..Settings::default()
    }
}

/// A token file for `user`, minted from the server's own key.
fn token_file(dir: &Path, user: &str) -> PathBuf {
    let authority = ferrobase_server::auth::TokenAuthority::open(
        &ferrobase_storage::fs::LocalFs::new(dir),
        ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID,
        &secure(),
    )
    .unwrap();
    let token = authority.mint(user, ferrobase_server::auth::now_ms());
    let path = dir.join(format!("{user}.token"));
    std::fs::write(
        &path,
        ferrobase_hbase_wire::token::encode_storage(&[token.to_stored()]),
    )
    .unwrap();
    path
}

fn config(addr: &str, token_file: &Path) -> ClientConfig {
    let settings = Settings {
        token_files: token_file.display().to_string(),
        ..Settings::default()
    };
    ClientConfig::new(addr).with_token_files(&settings).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_proves_the_user_and_a_claim_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let server = Standalone::start(dir.path(), secure(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.addr().to_string();

    // The superuser's token: DDL and data.
    let admin_cfg = config(&addr, &token_file(dir.path(), "admin"));
    assert!(admin_cfg.token.is_some());
    assert!(
        !format!("{admin_cfg:?}").contains("password: ["),
        "{admin_cfg:?}"
    );
    let admin = Connection::connect_with(admin_cfg).await.unwrap();
    let desc = TableDescriptor::new("sec", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    admin.admin().create_table(&desc, &[]).await.unwrap();
    let t = admin.table("sec");
    t.put(&RowMutation::new("r").put("f", "q", "v"))
        .await
        .unwrap();
    assert_eq!(t.get(&Get::new("r")).await.unwrap().len(), 1);

    // alice's token makes her alice, whatever name the config claims: no
    // grant, no read.
    let mut alice_cfg = config(&addr, &token_file(dir.path(), "alice"));
    alice_cfg.user = "admin".into();
    alice_cfg.retries = 0;
    let alice = Connection::connect_with(alice_cfg).await.unwrap();
    let e = alice.table("sec").get(&Get::new("r")).await.unwrap_err();
    assert!(e.class_is("AccessDeniedException"), "{e}");
    assert!(e.to_string().contains("alice"), "{e}");

    // Claiming "admin" without a token is refused.
    let claim = ClientConfig {
        user: "admin".into(),
        retries: 0,
        ..ClientConfig::new(&addr)
    };
    let refused: ferrobase_hbase_client::ClientError = match Connection::connect_with(claim).await {
        Err(e) => e,
        Ok(c) => c.table("sec").get(&Get::new("r")).await.unwrap_err(),
    };
    assert!(
        refused.to_string().contains("Authentication is required"),
        "{refused}"
    );

    // A forged password fails the SASL exchange with the server's words.
    let mut forged = config(&addr, &token_file(dir.path(), "admin"));
    let real = forged.token.take().unwrap();
    forged.token = Some(Token {
        identifier: real.identifier,
        password: bytes::Bytes::from_static(b"not the password"),
    });
    forged.retries = 0;
    let e = match Connection::connect_with(forged).await {
        Err(e) => e,
        Ok(c) => c.table("sec").get(&Get::new("r")).await.unwrap_err(),
    };
    assert!(
        e.class_is("SaslException") && e.to_string().contains("wrong token password"),
        "{e}"
    );
    server.stop().await.unwrap();
}

#[test]
fn token_files_that_are_missing_are_skipped_and_bad_ones_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = Settings {
        token_files: dir.path().join("none.token").display().to_string(),
        ..Settings::default()
    };
    let c = ClientConfig::new("h:1").with_token_files(&missing).unwrap();
    assert!(c.token.is_none());
    let junk = dir.path().join("junk.token");
    std::fs::write(&junk, b"not a token file").unwrap();
    let bad = Settings {
        token_files: junk.display().to_string(),
        ..Settings::default()
    };
    let e = ClientConfig::new("h:1").with_token_files(&bad).unwrap_err();
    assert!(e.to_string().contains("junk.token"), "{e}");
}
