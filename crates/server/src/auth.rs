//! Token authentication (HBase's `AuthenticationTokenSecretManager`): the
//! secret key every process of a cluster shares through the storage root,
//! minting tokens for a user, and checking the token a DIGEST-MD5 client
//! presents.
//!
//! The first key lives in `auth/token-key` under the root, written once by
//! whichever process needs it first (`Storage::put_new`: of two racing
//! creators one wins and the other reads the winner's key); each rolled
//! key is a file `auth/token-keys/<id>` of the same form, created the same
//! way:
//!
//! ```text
//! ferrobase-token-key v1\n {"key_id":1,"secret":"<128 hex digits>","created_ms":N}\n <crc32c hex>\n
//! ```
//!
//! Keys roll as HBase's do (`hbase.auth.key.update.interval`): the master
//! (or standalone server) adds key N+1 once key N is that old
//! ([`TokenAuthority::roll_if_due`]); new tokens use the newest key; a key
//! checks tokens until none of its tokens can still be valid (created +
//! update interval + `hbase.auth.token.max.lifetime`), and a rolled key
//! file is deleted after that. A server that meets a token of a key it
//! does not know reads the keys again (at most once a second), so a key
//! rolled by the master is accepted everywhere without a restart.
//!
//! A token is HBase's: identifier bytes (`ferrobase_hbase_wire::token`,
//! the user, key id, issue and expiry dates, a sequence number) and a
//! password, HMAC-SHA1(secret, identifier bytes). Anyone holding a key
//! file can mint tokens for any user, so they must be readable by the
//! servers only. Deleting every key file and restarting every process
//! invalidates every token (docs/security.md).
//!
//! This module never touches sockets; `hbase_rpc` asks it for the
//! password of the identifier a client presents.

mod key;

pub use key::{KEY_PATH, ROLLED_KEYS_DIR, TokenKey};
use key::{Keys, SECRET_BYTES, io, load_keys};

use crate::error::{Result, ServerError};
use ferrobase_hbase_wire::pb;
use ferrobase_hbase_wire::token::{self, StoredToken, TOKEN_KIND};
use ferrobase_proto::ErrorCode;
use ferrobase_storage::fs::Storage;
use ferrobase_types::Settings;
use parking_lot::RwLock;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// Least time between two reads of the keys prompted by unknown key ids,
/// so tokens naming made-up ids cannot make a server read storage often.
const REFRESH_EVERY_MS: i64 = 1_000;
/// The Java class HBase's server names when a token is refused; the Java
/// client raises it as a `RemoteException` of this class.
pub const INVALID_TOKEN_CLASS: &str = "org.apache.hadoop.security.token.SecretManager$InvalidToken";

/// How HBase RPC callers prove who they are (`hbase.security.authentication`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Authentication {
    /// `simple`: the claimed user name is trusted.
    Simple,
    /// `kerberos` or `token`: a token (SASL DIGEST-MD5) or a verified TLS
    /// client certificate; SIMPLE only where
    /// `hbase.ipc.server.fallback-to-simple-auth-allowed` says.
    Secure { fallback_to_simple: bool },
}

impl Authentication {
    /// The mode `settings` ask for; an unknown value is refused by name.
    pub fn mode(settings: &Settings) -> Result<Authentication> {
        let value = settings.security_authentication.trim();
        if value.eq_ignore_ascii_case("simple") {
            Ok(Authentication::Simple)
        } else if value.eq_ignore_ascii_case("kerberos") || value.eq_ignore_ascii_case("token") {
            Ok(Authentication::Secure {
                fallback_to_simple: settings.ipc_fallback_to_simple,
            })
        } else {
            Err(ServerError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "hbase.security.authentication={value} is not supported: use simple, \
                     or kerberos/token (tokens over SASL DIGEST-MD5 and TLS client \
                     certificates; docs/security.md)"
                ),
            ))
        }
    }

    pub fn is_secure(self) -> bool {
        matches!(self, Authentication::Secure { .. })
    }
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A token, ready for the wire or a token storage file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub identifier: Vec<u8>,
    pub password: Vec<u8>,
    /// The cluster id the token is for.
    pub service: String,
}

impl Token {
    /// As HBase's `AuthenticationProtos.Token`.
    pub fn to_pb(&self) -> pb::Token {
        pb::Token {
            identifier: Some(self.identifier.clone().into()),
            password: Some(self.password.clone().into()),
            service: Some(self.service.clone().into_bytes().into()),
        }
    }

    /// As one entry of a Hadoop token storage file.
    pub fn to_stored(&self) -> StoredToken {
        StoredToken {
            alias: self.service.clone(),
            identifier: self.identifier.clone(),
            password: self.password.clone(),
            kind: TOKEN_KIND.to_string(),
            service: self.service.clone(),
        }
    }
}

/// Mints and checks one cluster's tokens.
pub struct TokenAuthority {
    keys: RwLock<Arc<Keys>>,
    /// The root, for reading keys again and rolling them; `None` for an
    /// authority of fixed keys.
    fs: Option<Arc<dyn Storage>>,
    cluster_id: String,
    lifetime_ms: i64,
    update_interval_ms: i64,
    sequence: AtomicU64,
    last_refresh_ms: AtomicI64,
}

impl std::fmt::Debug for TokenAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenAuthority")
            .field("cluster_id", &self.cluster_id)
            .field("keys", &self.keys.read().keys().collect::<Vec<_>>())
            .finish()
    }
}

fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl TokenAuthority {
    /// Tokens of `key` for `cluster_id`, valid `lifetime_ms` after issue;
    /// the key never rolls.
    pub fn new(key: TokenKey, cluster_id: &str, lifetime_ms: u64) -> TokenAuthority {
        TokenAuthority::with_keys(
            Keys::from([(key.id(), key)]),
            None,
            cluster_id,
            lifetime_ms,
            u64::MAX,
        )
    }

    fn with_keys(
        keys: Keys,
        fs: Option<Arc<dyn Storage>>,
        cluster_id: &str,
        lifetime_ms: u64,
        update_interval_ms: u64,
    ) -> TokenAuthority {
        TokenAuthority {
            keys: RwLock::new(Arc::new(keys)),
            fs,
            cluster_id: cluster_id.to_string(),
            lifetime_ms: ms(lifetime_ms),
            update_interval_ms: ms(update_interval_ms),
            // Distinct sequence numbers across restarts without shared state.
            sequence: AtomicU64::new(now_ms().max(0) as u64),
            last_refresh_ms: AtomicI64::new(0),
        }
    }

    /// The authority of the root `fs` as it is now (its first key created
    /// if needed), with `settings`' token lifetime: what `ferrobase token
    /// create` mints with.
    pub fn open(fs: &dyn Storage, cluster_id: &str, settings: &Settings) -> Result<Arc<Self>> {
        Ok(Arc::new(TokenAuthority::with_keys(
            load_keys(fs)?,
            None,
            cluster_id,
            settings.auth_token_max_lifetime_ms,
            settings.auth_key_update_interval_ms,
        )))
    }

    /// [`open`](Self::open) for a server: it reads the keys again when a
    /// token names one it does not know, and can roll them.
    pub fn open_shared(
        fs: Arc<dyn Storage>,
        cluster_id: &str,
        settings: &Settings,
    ) -> Result<Arc<Self>> {
        Ok(Arc::new(TokenAuthority::with_keys(
            load_keys(&*fs)?,
            Some(fs),
            cluster_id,
            settings.auth_token_max_lifetime_ms,
            settings.auth_key_update_interval_ms,
        )))
    }

    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// The key ids known now, oldest first.
    pub fn key_ids(&self) -> Vec<i32> {
        self.keys.read().keys().copied().collect()
    }

    fn current(&self) -> Option<TokenKey> {
        self.keys.read().values().next_back().cloned()
    }

    /// When tokens of `key` can no longer be valid: a token is minted at
    /// most one update interval after its key, and lives its lifetime.
    fn key_expires_ms(&self, key: &TokenKey) -> i64 {
        key.created_ms()
            .saturating_add(self.update_interval_ms)
            .saturating_add(self.lifetime_ms)
    }

    /// Reads the keys from the root again (a server meeting a key id it
    /// does not know), at most once a [`REFRESH_EVERY_MS`].
    fn refresh(&self, now_ms: i64) {
        let Some(fs) = &self.fs else { return };
        let last = self.last_refresh_ms.load(Ordering::Relaxed);
        if now_ms.saturating_sub(last) < REFRESH_EVERY_MS
            || self
                .last_refresh_ms
                .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        match load_keys(&**fs) {
            Ok(keys) => *self.keys.write() = Arc::new(keys),
            Err(e) => tracing::warn!(error = %e.message, "cannot read the token keys again"),
        }
    }

    /// Rolls the key when the newest is `hbase.auth.key.update.interval`
    /// old, and deletes rolled key files whose tokens have all expired
    /// (never the newest). True when this call added a key. A blocking
    /// storage call: run it off the async threads.
    pub fn roll_if_due(&self, now_ms: i64) -> Result<bool> {
        let Some(fs) = &self.fs else { return Ok(false) };
        let keys = load_keys(&**fs)?;
        let Some(newest) = keys.values().next_back().cloned() else {
            return Ok(false);
        };
        let mut rolled = false;
        let mut keys = keys;
        if now_ms.saturating_sub(newest.created_ms()) >= self.update_interval_ms {
            let id = newest.id().saturating_add(1);
            let path = Path::new(ROLLED_KEYS_DIR).join(id.to_string());
            fs.create_dir_all(Path::new(ROLLED_KEYS_DIR))
                .map_err(|e| io(ROLLED_KEYS_DIR, e))?;
            if let Some(k) = TokenKey::create(&**fs, &path, id, now_ms)? {
                tracing::info!(key_id = id, "token key rolled");
                keys.insert(id, k);
                rolled = true;
            }
        }
        let newest_id = keys.keys().next_back().copied();
        let expired: Vec<i32> = keys
            .values()
            .filter(|k| Some(k.id()) != newest_id && k.id() != 1 && self.key_expires_ms(k) < now_ms)
            .map(|k| k.id())
            .collect();
        for id in expired {
            let path = Path::new(ROLLED_KEYS_DIR).join(id.to_string());
            fs.delete(&path).map_err(|e| io(&fs.display(&path), e))?;
            keys.remove(&id);
            tracing::info!(key_id = id, "expired token key deleted");
        }
        *self.keys.write() = Arc::new(keys);
        Ok(rolled)
    }

    /// A token for `user` issued at `issued_ms`, with the newest key.
    pub fn mint(&self, user: &str, issued_ms: i64) -> Token {
        // An authority always holds at least its first key.
        let key = self
            .current()
            .unwrap_or_else(|| TokenKey::new(0, &[0; SECRET_BYTES]));
        let id = pb::TokenIdentifier {
            kind: pb::token_identifier::Kind::HbaseAuthToken as i32,
            username: user.as_bytes().to_vec().into(),
            key_id: key.id(),
            issue_date: Some(issued_ms),
            expiration_date: Some(issued_ms.saturating_add(self.lifetime_ms)),
            sequence_number: Some(self.sequence.fetch_add(1, Ordering::Relaxed) as i64),
        };
        let identifier = token::encode_identifier(&id);
        Token {
            password: key.password(&identifier),
            identifier,
            service: self.cluster_id.clone(),
        }
    }

    /// The user of the token `identifier` and `password` (a bearer
    /// token, as gRPC callers present it), or why it is refused.
    pub fn verify(
        &self,
        identifier: &[u8],
        password: &[u8],
        now_ms: i64,
    ) -> std::result::Result<String, String> {
        let (user, key) = self.checked(identifier, now_ms)?;
        if !key.verify(identifier, password) {
            return Err(
                "its password does not match its identifier (a forged or altered token)".into(),
            );
        }
        Ok(user)
    }

    /// The user and password of the token whose identifier a client
    /// presents, or why it is refused (HBase's `InvalidToken` messages:
    /// "Token has expired", "Unknown master key for token (id=N)").
    pub fn check(
        &self,
        identifier: &[u8],
        now_ms: i64,
    ) -> std::result::Result<(String, Vec<u8>), String> {
        let (user, key) = self.checked(identifier, now_ms)?;
        Ok((user, key.password(identifier)))
    }

    fn checked(
        &self,
        identifier: &[u8],
        now_ms: i64,
    ) -> std::result::Result<(String, TokenKey), String> {
        let id = token::decode_identifier(identifier)
            .map_err(|e| format!("Can't de-serialize tokenIdentifier: {e}"))?;
        let known = |this: &Self| this.keys.read().get(&id.key_id).cloned();
        let key = match known(self) {
            Some(k) => k,
            None => {
                self.refresh(now_ms);
                known(self).ok_or_else(|| {
                    format!(
                        "Unknown master key for token (id={}); this cluster's keys are {:?} (was the token minted for another cluster, or its key deleted?)",
                        id.key_id,
                        self.key_ids()
                    )
                })?
            }
        };
        // The newest key never expires here: it is the one minting, even
        // when no master has been running to roll it.
        let newest = self.keys.read().keys().next_back().copied();
        if Some(key.id()) != newest && self.key_expires_ms(&key) < now_ms {
            return Err(format!(
                "Unknown master key for token (id={}): the key has expired",
                id.key_id
            ));
        }
        let expires = id.expiration_date.unwrap_or(0);
        if expires < now_ms {
            return Err(format!(
                "Token has expired (expiration date {expires} ms < now {now_ms} ms)"
            ));
        }
        let user = String::from_utf8(id.username.to_vec()).map_err(|_| {
            "Can't de-serialize tokenIdentifier: the user name is not UTF-8".to_string()
        })?;
        if user.is_empty() {
            return Err("the token names no user".into());
        }
        Ok((user, key))
    }
}

/// Rolls `authority`'s key when due, checking a few times per update
/// interval (at most once a minute), until the authority is dropped.
pub fn spawn_key_roller(authority: &Arc<TokenAuthority>) {
    let weak = Arc::downgrade(authority);
    let every = std::time::Duration::from_millis(
        (authority.update_interval_ms / 4).clamp(100, 60_000) as u64,
    );
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(a) = weak.upgrade() else { return };
            let outcome = tokio::task::spawn_blocking(move || a.roll_if_due(now_ms())).await;
            if let Ok(Err(e)) = outcome {
                tracing::warn!(error = %e.message, "cannot roll the token key");
            }
        }
    });
}

/// What this process shows other servers when it calls them (the master's
/// calls to region servers): the user it runs as, and in secure mode a
/// token for that user minted from the root's key, renewed at half its
/// lifetime.
#[derive(Clone, Debug)]
pub struct Credentials {
    user: String,
    tokens: Option<Arc<TokenAuthority>>,
}

impl Credentials {
    /// `user`, proved by tokens of `tokens` when there is one.
    pub fn new(user: String, tokens: Option<Arc<TokenAuthority>>) -> Credentials {
        Credentials { user, tokens }
    }

    /// The gRPC metadata of a call made now.
    pub fn header(&self) -> ferrobase_proto::UserHeader {
        let header = ferrobase_proto::UserHeader::new(&self.user);
        match &self.tokens {
            Some(t) => {
                let token = t.mint(&self.user, now_ms());
                header.with_token(&token.identifier, &token.password)
            }
            None => header,
        }
    }

    /// How long a [`header`](Self::header) may be used: half the token
    /// lifetime (forever without tokens).
    pub fn renew_after(&self) -> std::time::Duration {
        match &self.tokens {
            Some(t) => std::time::Duration::from_millis((t.lifetime_ms / 2).max(1) as u64),
            None => std::time::Duration::MAX,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::key::to_hex;
    use super::*;
    use ferrobase_storage::fs::LocalFs;

    fn authority() -> TokenAuthority {
        TokenAuthority::new(TokenKey::new(1, &[7; 64]), "c1", 1_000)
    }

    #[test]
    fn a_minted_token_checks_until_it_expires() {
        let a = authority();
        let t = a.mint("alice", 5_000);
        assert_eq!(t.service, "c1");
        assert_eq!(
            a.check(&t.identifier, 5_500),
            Ok(("alice".to_string(), t.password.clone()))
        );
        let e = a.check(&t.identifier, 6_001).unwrap_err();
        assert!(e.starts_with("Token has expired"), "{e}");
    }

    #[test]
    fn passwords_are_hmac_sha1_of_the_identifier() {
        // RFC 2202 test case 2: key "Jefe", "what do ya want for nothing?".
        let k = TokenKey::new(1, b"Jefe");
        assert_eq!(
            to_hex(&k.password(b"what do ya want for nothing?")),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"
        );
    }

    #[test]
    fn other_keys_and_garbage_are_refused_by_name() {
        let a = authority();
        let other = TokenAuthority::new(TokenKey::new(2, &[8; 64]), "c1", 1_000);
        let t = other.mint("alice", 5_000);
        assert!(
            a.check(&t.identifier, 5_000)
                .unwrap_err()
                .contains("Unknown master key for token (id=2)")
        );
        assert!(
            a.check(b"\x00\x00", 0)
                .unwrap_err()
                .contains("Can't de-serialize")
        );
    }

    #[test]
    fn the_key_is_created_once_and_shared() {
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFs::new(dir.path());
        let first = TokenKey::load_or_create(&fs).unwrap();
        let second = TokenKey::load_or_create(&fs).unwrap();
        assert_eq!(first.password(b"x"), second.password(b"x"));
        // A damaged file is an error naming it, not a new key.
        std::fs::write(
            dir.path().join(KEY_PATH),
            b"ferrobase-token-key v1\n{}\n00000000\n",
        )
        .unwrap();
        let e = TokenKey::load_or_create(&fs).unwrap_err();
        assert!(e.message.contains("checksum mismatch"), "{}", e.message);
    }

    #[test]
    fn keys_roll_are_found_by_other_servers_and_expire() {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn Storage> = Arc::new(LocalFs::new(dir.path()));
        let settings = Settings {
            auth_key_update_interval_ms: 1_000,
            auth_token_max_lifetime_ms: 5_000,
            ..Settings::default()
        };
        let master = TokenAuthority::open_shared(fs.clone(), "c", &settings).unwrap();
        let region_server = TokenAuthority::open_shared(fs.clone(), "c", &settings).unwrap();
        assert_eq!(master.key_ids(), [1]);
        let t0 = master.current().unwrap().created_ms();
        let old = master.mint("alice", t0);

        // Not due yet; then due: key 2 mints.
        assert!(!master.roll_if_due(t0 + 999).unwrap());
        assert!(master.roll_if_due(t0 + 1_000).unwrap());
        assert_eq!(master.key_ids(), [1, 2]);
        let new = master.mint("bob", t0 + 1_000);
        assert_eq!(token::decode_identifier(&new.identifier).unwrap().key_id, 2);
        // The region server has never seen key 2: it reads the keys again.
        assert_eq!(
            region_server.verify(&new.identifier, &new.password, t0 + 1_500),
            Ok("bob".to_string())
        );
        assert_eq!(region_server.key_ids(), [1, 2]);
        // Key 1's tokens still check until they expire.
        assert_eq!(
            region_server.verify(&old.identifier, &old.password, t0 + 1_500),
            Ok("alice".to_string())
        );
        // A racing roller (another master) adds no second key 3.
        assert!(master.roll_if_due(t0 + 2_000).unwrap());
        assert!(!region_server.roll_if_due(t0 + 2_000).unwrap());
        assert_eq!(region_server.key_ids(), [1, 2, 3]);

        // Past key 2's last possible token: its file goes, its tokens are
        // refused by the key's expiry; the first key's file stays.
        let after = t0 + 1_000 + 1_000 + 5_000 + 1;
        master.roll_if_due(after).unwrap();
        assert!(!dir.path().join(ROLLED_KEYS_DIR).join("2").exists());
        assert!(dir.path().join(KEY_PATH).exists());
        let e = master.check(&new.identifier, after).unwrap_err();
        assert!(e.contains("Unknown master key for token (id=2)"), "{e}");
        // Made-up key ids are refused without a storage read storm.
        let forged =
            TokenAuthority::new(TokenKey::new(99, &[1; 64]), "c", 5_000).mint("mallory", after);
        let e = region_server.check(&forged.identifier, after).unwrap_err();
        assert!(e.contains("id=99"), "{e}");
    }

    #[test]
    fn modes_follow_the_setting() {
        let mut s = Settings::default();
        assert_eq!(Authentication::mode(&s).unwrap(), Authentication::Simple);
        s.security_authentication = "Kerberos".into();
        assert_eq!(
            Authentication::mode(&s).unwrap(),
            Authentication::Secure {
                fallback_to_simple: false
            }
        );
        s.security_authentication = "token".into();
        s.ipc_fallback_to_simple = true;
        assert_eq!(
            Authentication::mode(&s).unwrap(),
            Authentication::Secure {
                fallback_to_simple: true
            }
        );
    }
}
