//! The master's meta (`meta.json`, read at every master start and
//! failover): the fuzzed bytes are the whole file, opened through
//! `MetaStore::open` on an in-memory storage. What opens must serialize
//! and parse back to the same JSON.
#![no_main]

use ferrobase_fuzz::mem::MemStorage;
use ferrobase_server::meta::{META_FILE, MetaState, MetaStore};
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let dir = Path::new("root");
    let fs = Arc::new(MemStorage::new());
    fs.insert(dir.join(META_FILE), data.to_vec());
    let Ok(store) = MetaStore::open(fs, dir) else {
        return;
    };
    let state = store.snapshot();
    let json = serde_json::to_vec(&state).unwrap_or_else(|e| panic!("serialize: {e}"));
    let back: MetaState = serde_json::from_slice(&json)
        .unwrap_or_else(|e| panic!("a serialized meta does not parse: {e}"));
    let again = serde_json::to_vec(&back).unwrap_or_else(|e| panic!("serialize: {e}"));
    assert_eq!(json, again, "the meta changed in a round trip");
});
