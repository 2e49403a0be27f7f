//! Token authentication (HBase's `AuthenticationTokenSecretManager`): the
//! secret key every process of a cluster shares through the storage root,
//! minting tokens for a user, and checking the token a DIGEST-MD5 client
//! presents.
//!
//! The key lives in `auth/token-key` under the root, written once by
//! whichever process needs it first (`Storage::put_new`: of two racing
//! creators one wins and the other reads the winner's key):
//!
//! ```text
//! ferrobase-token-key v1\n {"key_id":1,"secret":"<128 hex digits>","created_ms":N}\n <crc32c hex>\n
//! ```
//!
//! A token is HBase's: identifier bytes (`ferrobase_hbase_wire::token`,
//! the user, key id, issue and expiry dates, a sequence number) and a
//! password, HMAC-SHA1(secret, identifier bytes). Anyone holding the key
//! file can mint tokens for any user, so it must be readable by the
//! servers only. The key is not rolled: deleting the file and restarting
//! every process invalidates every token (docs/security.md).
//!
//! This module never touches sockets; `hbase_rpc` asks it for the
//! password of the identifier a client presents.

use crate::error::{Result, ServerError};
use ferrobase_hbase_wire::pb;
use ferrobase_hbase_wire::token::{self, StoredToken, TOKEN_KIND};
use ferrobase_proto::ErrorCode;
use ferrobase_storage::checksummed_json;
use ferrobase_storage::fs::Storage;
use ferrobase_types::Settings;
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the key lives, relative to the storage root.
pub const KEY_PATH: &str = "auth/token-key";
const KEY_HEADER: &str = "ferrobase-token-key v1\n";
/// Bytes of secret (HBase's keys are HMAC-SHA1 keys of this size).
const SECRET_BYTES: usize = 64;
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
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.debug_struct("TokenKey").field("id", &self.id).finish()
    }
}

fn io(what: &str, e: impl std::fmt::Display) -> ServerError {
    ServerError::new(ErrorCode::Io, format!("{what}: {e}"))
}

fn to_hex(bytes: &[u8]) -> String {
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
        let file = KeyFile {
            key_id: 1,
            secret: to_hex(&secret),
            created_ms: now_ms().max(0) as u64,
        };
        let bytes = checksummed_json::encode(KEY_HEADER, &file).map_err(|e| io(&shown, e))?;
        if fs.put_new(path, &bytes).map_err(|e| io(&shown, e))? {
            return TokenKey::parse(&shown, &bytes);
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

    fn parse(shown: &str, bytes: &[u8]) -> Result<TokenKey> {
        let file: KeyFile = checksummed_json::decode(KEY_HEADER, "token key", bytes)
            .map_err(|(offset, e)| io(shown, format!("at byte {offset}: {e}")))?;
        let secret = from_hex(&file.secret)
            .filter(|s| s.len() >= 32)
            .ok_or_else(|| io(shown, "the secret is not at least 32 bytes of hex"))?;
        Ok(TokenKey::new(file.key_id, &secret))
    }

    /// A key from its id and secret bytes.
    pub fn new(id: i32, secret: &[u8]) -> TokenKey {
        TokenKey {
            id,
            key: hmac::Key::new(hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, secret),
        }
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
#[derive(Debug)]
pub struct TokenAuthority {
    key: TokenKey,
    cluster_id: String,
    lifetime_ms: i64,
    sequence: AtomicU64,
}

impl TokenAuthority {
    /// Tokens of `key` for `cluster_id`, valid `lifetime_ms` after issue.
    pub fn new(key: TokenKey, cluster_id: &str, lifetime_ms: u64) -> TokenAuthority {
        TokenAuthority {
            key,
            cluster_id: cluster_id.to_string(),
            lifetime_ms: i64::try_from(lifetime_ms).unwrap_or(i64::MAX),
            // Distinct sequence numbers across restarts without shared state.
            sequence: AtomicU64::new(now_ms().max(0) as u64),
        }
    }

    /// The authority of the root `fs` (its key created if needed), with
    /// `settings`' token lifetime.
    pub fn open(fs: &dyn Storage, cluster_id: &str, settings: &Settings) -> Result<Arc<Self>> {
        let key = TokenKey::load_or_create(fs)?;
        Ok(Arc::new(TokenAuthority::new(
            key,
            cluster_id,
            settings.auth_token_max_lifetime_ms,
        )))
    }

    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// A token for `user` issued at `issued_ms`.
    pub fn mint(&self, user: &str, issued_ms: i64) -> Token {
        let id = pb::TokenIdentifier {
            kind: pb::token_identifier::Kind::HbaseAuthToken as i32,
            username: user.as_bytes().to_vec().into(),
            key_id: self.key.id(),
            issue_date: Some(issued_ms),
            expiration_date: Some(issued_ms.saturating_add(self.lifetime_ms)),
            sequence_number: Some(self.sequence.fetch_add(1, Ordering::Relaxed) as i64),
        };
        let identifier = token::encode_identifier(&id);
        Token {
            password: self.key.password(&identifier),
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
        let (user, _) = self.check(identifier, now_ms)?;
        if !self.key.verify(identifier, password) {
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
        let id = token::decode_identifier(identifier)
            .map_err(|e| format!("Can't de-serialize tokenIdentifier: {e}"))?;
        if id.key_id != self.key.id() {
            return Err(format!(
                "Unknown master key for token (id={}); this cluster's key is {} (was the token minted for another cluster or before {KEY_PATH} was replaced?)",
                id.key_id,
                self.key.id()
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
        Ok((user, self.key.password(identifier)))
    }
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
