//! The token keys of a root: the first key file, rolled key files, reading
//! and creating them. It owns their bytes and secrets; what a key signs
//! and when keys roll is [`super::TokenAuthority`]'s.

use crate::error::{Result, ServerError};
use ferrobase_proto::ErrorCode;
use ferrobase_storage::checksummed_json;
use ferrobase_storage::fs::Storage;
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

use super::now_ms;

/// Where the first key lives, relative to the storage root.
pub const KEY_PATH: &str = "auth/token-key";
/// Where rolled keys live, one file per key id.
pub const ROLLED_KEYS_DIR: &str = "auth/token-keys";
const KEY_HEADER: &str = "ferrobase-token-key v1\n";
/// Bytes of secret (HBase's keys are HMAC-SHA1 keys of this size).
pub(super) const SECRET_BYTES: usize = 64;

/// The key file's contents.
#[derive(Serialize, Deserialize)]
struct KeyFile {
    key_id: i32,
    /// Hex.
    secret: String,
    created_ms: u64,
}

/// A secret key for token passwords.
#[derive(Clone)]
pub struct TokenKey {
    id: i32,
    key: hmac::Key,
    created_ms: i64,
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.debug_struct("TokenKey").field("id", &self.id).finish()
    }
}

pub(super) fn io(what: &str, e: impl std::fmt::Display) -> ServerError {
    ServerError::new(ErrorCode::Io, format!("{what}: {e}"))
}

pub(super) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

impl TokenKey {
    /// The root's key, created (random) when it has none yet.
    pub fn load_or_create(fs: &dyn Storage) -> Result<TokenKey> {
        let path = Path::new(KEY_PATH);
        let shown = fs.display(path);
        if let Some(bytes) = fs.read(path).map_err(|e| io(&shown, e))? {
            return TokenKey::parse(&shown, &bytes);
        }
        let mut secret = [0u8; SECRET_BYTES];
        SystemRandom::new()
            .fill(&mut secret)
            .map_err(|_| io(&shown, "no system randomness for a token key"))?;
        if let Some(key) = TokenKey::create(fs, path, 1, now_ms())? {
            return Ok(key);
        }
        // Another process created it first; its write may still be under
        // way (`put_new` is not atomic for readers): read until whole.
        let mut last = None;
        for _ in 0..50 {
            if let Some(bytes) = fs.read(path).map_err(|e| io(&shown, e))? {
                match TokenKey::parse(&shown, &bytes) {
                    Ok(k) => return Ok(k),
                    Err(e) => last = Some(e),
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Err(last.unwrap_or_else(|| io(&shown, "the token key vanished while being read")))
    }

    /// Writes a new random key `id` at `path` unless a file is there
    /// already; `None` when another process created it first.
    pub(super) fn create(
        fs: &dyn Storage,
        path: &Path,
        id: i32,
        now_ms: i64,
    ) -> Result<Option<TokenKey>> {
        let shown = fs.display(path);
        let mut secret = [0u8; SECRET_BYTES];
        SystemRandom::new()
            .fill(&mut secret)
            .map_err(|_| io(&shown, "no system randomness for a token key"))?;
        let file = KeyFile {
            key_id: id,
            secret: to_hex(&secret),
            created_ms: now_ms.max(0) as u64,
        };
        let bytes = checksummed_json::encode(KEY_HEADER, &file).map_err(|e| io(&shown, e))?;
        if fs.put_new(path, &bytes).map_err(|e| io(&shown, e))? {
            return TokenKey::parse(&shown, &bytes).map(Some);
        }
        Ok(None)
    }

    fn parse(shown: &str, bytes: &[u8]) -> Result<TokenKey> {
        let file: KeyFile = checksummed_json::decode(KEY_HEADER, "token key", bytes)
            .map_err(|(offset, e)| io(shown, format!("at byte {offset}: {e}")))?;
        let secret = from_hex(&file.secret)
            .filter(|s| s.len() >= 32)
            .ok_or_else(|| io(shown, "the secret is not at least 32 bytes of hex"))?;
        let mut key = TokenKey::new(file.key_id, &secret);
        key.created_ms = i64::try_from(file.created_ms).unwrap_or(i64::MAX);
        Ok(key)
    }

    /// A key from its id and secret bytes (created at time 0).
    pub fn new(id: i32, secret: &[u8]) -> TokenKey {
        TokenKey {
            id,
            key: hmac::Key::new(hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, secret),
            created_ms: 0,
        }
    }

    /// When the key was made (ms since the epoch).
    pub fn created_ms(&self) -> i64 {
        self.created_ms
    }

    pub fn id(&self) -> i32 {
        self.id
    }

    /// HBase's token password: HMAC-SHA1 of the identifier bytes.
    pub fn password(&self, identifier: &[u8]) -> Vec<u8> {
        hmac::sign(&self.key, identifier).as_ref().to_vec()
    }

    /// True when `password` is `identifier`'s, compared in constant time.
    pub fn verify(&self, identifier: &[u8], password: &[u8]) -> bool {
        hmac::verify(&self.key, identifier, password).is_ok()
    }
}

/// Every key of a root, by id; the newest mints.
pub(super) type Keys = BTreeMap<i32, TokenKey>;

/// The root's first key and every rolled key file that reads whole (one
/// still being written is skipped until the next read).
pub(super) fn load_keys(fs: &dyn Storage) -> Result<Keys> {
    let mut keys = Keys::new();
    let first = TokenKey::load_or_create(fs)?;
    keys.insert(first.id, first);
    let dir = Path::new(ROLLED_KEYS_DIR);
    for name in fs.list(dir).map_err(|e| io(&fs.display(dir), e))? {
        if name.parse::<i32>().is_err() {
            continue;
        }
        let path = dir.join(&name);
        let shown = fs.display(&path);
        if let Some(bytes) = fs.read(&path).map_err(|e| io(&shown, e))? {
            match TokenKey::parse(&shown, &bytes) {
                Ok(k) => {
                    keys.insert(k.id, k);
                }
                Err(e) => {
                    tracing::debug!(file = %shown, error = %e.message, "token key not readable yet")
                }
            }
        }
    }
    Ok(keys)
}
