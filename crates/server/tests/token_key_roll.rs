//! Token keys roll on a real secure standalone
//! (`hbase.auth.key.update.interval` short): the server writes the next
//! key file under `auth/token-keys/`, tokens minted afterwards (as
//! `ferrobase token create` mints them, from the root) carry the new key
//! id, and tokens of the first key keep working until they expire.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_client::Connection;
use ferrobase_types::Settings;
use std::time::{Duration, Instant};

fn secure() -> Settings {
    Settings {
        security_authentication: "kerberos".into(),
        auth_key_update_interval_ms: 300,
        auth_token_max_lifetime_ms: 600_000,
        ..common::settings()
    }
}

fn key_id_of(file: &std::path::Path) -> i32 {
    let stored =
        ferrobase_hbase_wire::token::decode_storage(&std::fs::read(file).unwrap()).unwrap();
    ferrobase_hbase_wire::token::decode_identifier(&stored[0].identifier)
        .unwrap()
        .key_id
}

async fn user_with(addr: &str, token_file: &std::path::Path) -> String {
    let settings = Settings {
        token_files: token_file.display().to_string(),
        client_user: "someone-else".into(),
        ..secure()
    };
    let conn = Connection::connect(addr, settings).unwrap();
    conn.admin().who_am_i().await.unwrap().user
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_rolls_and_old_tokens_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _admin) = common::start_on(dir.path(), secure()).await;
    let addr = server.addr().to_string();
    let first = dir.path().join("first.token");
    std::fs::rename(common::token_file(dir.path(), "alice", &secure()), &first).unwrap();
    let first_id = key_id_of(&first);

    // Wait (bounded) for the server to roll past the key alice's token has.
    let rolled = dir.path().join("auth/token-keys");
    let deadline = Instant::now() + Duration::from_secs(60);
    let newer = loop {
        let file = common::token_file(dir.path(), "bob", &secure());
        if key_id_of(&file) > first_id {
            break file;
        }
        assert!(Instant::now() < deadline, "no key rolled in 60 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(rolled.is_dir());
    assert_eq!(user_with(&addr, &newer).await, "bob");
    assert_eq!(user_with(&addr, &first).await, "alice");
    server.stop().await.unwrap();
}
