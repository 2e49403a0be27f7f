//! HBase authentication tokens as bytes: the token identifier the
//! DIGEST-MD5 user name carries, and Hadoop's token storage file
//! (`Credentials.writeTokenStorageFile`, what `HADOOP_TOKEN_FILE_LOCATION`
//! names) in its Writable form, version 0, which every Hadoop 2 and 3
//! reader accepts.
//!
//! # Token identifier (Hadoop `TokenIdentifier.getBytes()`)
//!
//! ```text
//! +-------------------+----------------------------------------------+
//! | i32 BE length = N | hbase.pb.TokenIdentifier (N bytes)           |
//! +-------------------+----------------------------------------------+
//!   kind = HBASE_AUTH_TOKEN (0), username, key_id, issue_date,
//!   expiration_date (ms since the epoch), sequence_number
//! ```
//!
//! The token's password is HMAC-SHA1(key, these bytes); the DIGEST-MD5
//! user name is their base64, its password the password's base64.
//!
//! # Token storage file, version 0
//!
//! ```text
//! +------+---------+-------------+-----------------------------+----------------+
//! | HDTS | u8 0    | vint tokens | tokens: alias Token ...     | vint secrets=0 |
//! +------+---------+-------------+-----------------------------+----------------+
//! Token  := vint len, identifier | vint len, password | Text kind | Text service
//! Text   := vint len, UTF-8 bytes
//! ```
//!
//! `vint` is Hadoop's `WritableUtils.writeVInt`: -112..=127 in one byte,
//! otherwise a byte giving sign and length (1 to 8 bytes follow, big
//! endian). Everything here is bounds-checked: a truncated or oversize
//! file is an error naming the field, never a panic.

use crate::pb;
use prost::Message;

/// Hadoop's token kind of HBase's tokens.
pub const TOKEN_KIND: &str = "HBASE_AUTH_TOKEN";
/// The magic of a Hadoop token storage file.
pub const STORAGE_MAGIC: &[u8; 4] = b"HDTS";
/// The Writable format version this module writes and reads.
pub const STORAGE_VERSION_WRITABLE: u8 = 0;
/// Largest token storage file read, and largest field in one.
const MAX_FIELD: usize = 1 << 20;

/// Token bytes that do not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    #[error("{what}: truncated (needs {needed} bytes, {available} remain)")]
    Truncated {
        what: &'static str,
        needed: u64,
        available: usize,
    },
    #[error("{what}: {reason}")]
    Invalid { what: &'static str, reason: String },
}

fn invalid(what: &'static str, reason: impl Into<String>) -> TokenError {
    TokenError::Invalid {
        what,
        reason: reason.into(),
    }
}

/// The identifier bytes of `id`: length, then the message.
pub fn encode_identifier(id: &pb::TokenIdentifier) -> Vec<u8> {
    let body = id.encode_to_vec();
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Parses identifier bytes: the length must cover exactly the rest, the
/// kind must be HBASE_AUTH_TOKEN.
pub fn decode_identifier(bytes: &[u8]) -> Result<pb::TokenIdentifier, TokenError> {
    const WHAT: &str = "token identifier";
    let Some(&[a, b, c, d]) = bytes.get(..4) else {
        return Err(TokenError::Truncated {
            what: WHAT,
            needed: 4,
            available: bytes.len(),
        });
    };
    let len = u32::from_be_bytes([a, b, c, d]) as usize;
    let body = bytes.get(4..).unwrap_or_default();
    if len != body.len() {
        return Err(invalid(
            WHAT,
            format!("length prefix says {len} bytes but {} follow", body.len()),
        ));
    }
    let id = pb::TokenIdentifier::decode(body)
        .map_err(|e| invalid(WHAT, format!("does not decode: {e}")))?;
    if id.kind != pb::token_identifier::Kind::HbaseAuthToken as i32 {
        return Err(invalid(WHAT, format!("unknown kind {}", id.kind)));
    }
    Ok(id)
}

/// One token of a storage file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredToken {
    /// The key the file stores it under (HBase uses the service).
    pub alias: String,
    pub identifier: Vec<u8>,
    pub password: Vec<u8>,
    /// The token kind ([`TOKEN_KIND`] for HBase's).
    pub kind: String,
    /// Which cluster it is for: the cluster id the client's registry
    /// reports.
    pub service: String,
}

/// `WritableUtils.writeVLong`.
fn put_vlong(out: &mut Vec<u8>, value: i64) {
    if (-112..=127).contains(&value) {
        out.push(value as u8);
        return;
    }
    let (v, mut len) = if value < 0 {
        (!value, -120i32)
    } else {
        (value, -112i32)
    };
    let mut tmp = v;
    while tmp != 0 {
        tmp >>= 8;
        len -= 1;
    }
    out.push(len as u8);
    let bytes = if len < -120 {
        -(len + 120)
    } else {
        -(len + 112)
    };
    for idx in (0..bytes).rev() {
        out.push((v >> (idx * 8)) as u8);
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_vlong(out, bytes.len() as i64);
    out.extend_from_slice(bytes);
}

/// A token storage file (version 0) holding `tokens` and no secret keys.
pub fn encode_storage(tokens: &[StoredToken]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(STORAGE_MAGIC);
    out.push(STORAGE_VERSION_WRITABLE);
    put_vlong(&mut out, tokens.len() as i64);
    for t in tokens {
        put_bytes(&mut out, t.alias.as_bytes());
        put_bytes(&mut out, &t.identifier);
        put_bytes(&mut out, &t.password);
        put_bytes(&mut out, t.kind.as_bytes());
        put_bytes(&mut out, t.service.as_bytes());
    }
    put_vlong(&mut out, 0);
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], TokenError> {
        let available = self.bytes.len() - self.pos;
        let slice =
            self.bytes
                .get(self.pos..self.pos.saturating_add(n))
                .ok_or(TokenError::Truncated {
                    what,
                    needed: n as u64,
                    available,
                })?;
        self.pos += n;
        Ok(slice)
    }

    /// `WritableUtils.readVLong`.
    fn vlong(&mut self, what: &'static str) -> Result<i64, TokenError> {
        let first = *self.take(1, what)?.first().unwrap_or(&0) as i8;
        if first >= -112 {
            return Ok(i64::from(first));
        }
        let negative = first < -120;
        let size = if negative {
            -119 - i32::from(first)
        } else {
            -111 - i32::from(first)
        };
        let mut v: i64 = 0;
        for &b in self.take((size - 1) as usize, what)? {
            v = v << 8 | i64::from(b);
        }
        Ok(if negative { !v } else { v })
    }

    fn bytes(&mut self, what: &'static str) -> Result<&'a [u8], TokenError> {
        let len = self.vlong(what)?;
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= MAX_FIELD)
            .ok_or_else(|| invalid(what, format!("length {len} is negative or too large")))?;
        self.take(len, what)
    }

    fn text(&mut self, what: &'static str) -> Result<String, TokenError> {
        String::from_utf8(self.bytes(what)?.to_vec()).map_err(|_| invalid(what, "not UTF-8"))
    }
}

/// Reads a token storage file in the Writable format (version 0); the
/// protobuf format (version 1, Hadoop 3's default writer) is refused by
/// name. Secret keys in the file are skipped.
pub fn decode_storage(bytes: &[u8]) -> Result<Vec<StoredToken>, TokenError> {
    const WHAT: &str = "token storage file";
    if bytes.len() > MAX_FIELD {
        return Err(invalid(WHAT, format!("{} bytes is too large", bytes.len())));
    }
    let mut r = Reader { bytes, pos: 0 };
    if r.take(4, WHAT)? != STORAGE_MAGIC {
        return Err(invalid(WHAT, "does not start with HDTS"));
    }
    match r.take(1, WHAT)?.first().copied().unwrap_or(0) {
        STORAGE_VERSION_WRITABLE => {}
        v => {
            return Err(invalid(
                WHAT,
                format!("version {v} is not read (only 0, the Writable format)"),
            ));
        }
    }
    let count = r.vlong("token count")?;
    if !(0..=1024).contains(&count) {
        return Err(invalid(WHAT, format!("token count {count}")));
    }
    let mut tokens = Vec::new();
    for _ in 0..count {
        tokens.push(StoredToken {
            alias: r.text("token alias")?,
            identifier: r.bytes("token identifier")?.to_vec(),
            password: r.bytes("token password")?.to_vec(),
            kind: r.text("token kind")?,
            service: r.text("token service")?,
        });
    }
    let secrets = r.vlong("secret key count")?;
    if !(0..=1024).contains(&secrets) {
        return Err(invalid(WHAT, format!("secret key count {secrets}")));
    }
    for _ in 0..secrets {
        r.text("secret key alias")?;
        r.bytes("secret key")?;
    }
    if r.pos != bytes.len() {
        return Err(invalid(
            WHAT,
            format!("{} unexpected bytes at the end", bytes.len() - r.pos),
        ));
    }
    Ok(tokens)
}

/// The first HBase token (kind [`TOKEN_KIND`]) in the Hadoop token files
/// `paths`, read as Hadoop's `UserGroupInformation` reads them: a file that
/// does not exist is skipped; one that cannot be read or is not a token
/// file is an error naming it (and the settings that name such files).
pub fn first_hbase_token(paths: &[std::path::PathBuf]) -> Result<Option<StoredToken>, String> {
    for path in paths {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(format!(
                    "cannot read token file {} (hadoop.token.files, HADOOP_TOKEN_FILE_LOCATION): {e}",
                    path.display()
                ));
            }
        };
        let tokens = decode_storage(&bytes).map_err(|e| {
            format!(
                "token file {} is not a Hadoop token file: {e}",
                path.display()
            )
        })?;
        if let Some(t) = tokens.into_iter().find(|t| t.kind == TOKEN_KIND) {
            return Ok(Some(t));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identifier() -> pb::TokenIdentifier {
        pb::TokenIdentifier {
            kind: pb::token_identifier::Kind::HbaseAuthToken as i32,
            username: bytes::Bytes::from_static(b"alice"),
            key_id: 1,
            issue_date: Some(1_700_000_000_000),
            expiration_date: Some(1_700_604_800_000),
            sequence_number: Some(7),
        }
    }

    #[test]
    fn identifier_round_trips_with_its_length_prefix_and_kind() {
        let bytes = encode_identifier(&identifier());
        // Java's toBytes writes every field, kind 0 included: 08 00 first.
        assert_eq!(&bytes[4..6], &[0x08, 0x00]);
        assert_eq!(
            u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize,
            bytes.len() - 4
        );
        assert_eq!(decode_identifier(&bytes).unwrap(), identifier());

        let mut longer = bytes.clone();
        longer.push(0);
        assert!(
            decode_identifier(&longer)
                .unwrap_err()
                .to_string()
                .contains("length prefix says")
        );
        assert!(matches!(
            decode_identifier(&bytes[..2]),
            Err(TokenError::Truncated { .. })
        ));
        let mut other_kind = identifier();
        other_kind.kind = 3;
        assert!(
            decode_identifier(&encode_identifier(&other_kind))
                .unwrap_err()
                .to_string()
                .contains("unknown kind 3")
        );
    }

    #[test]
    fn vlongs_match_hadoop_writable_utils() {
        // Values and bytes from WritableUtils.writeVLong.
        for (v, expected) in [
            (0i64, vec![0x00]),
            (127, vec![0x7f]),
            (-112, vec![0x90]),
            (128, vec![0x8f, 0x80]),
            (300, vec![0x8e, 0x01, 0x2c]),
            (-113, vec![0x87, 0x70]),
        ] {
            let mut out = Vec::new();
            put_vlong(&mut out, v);
            assert_eq!(out, expected, "{v}");
            let mut r = Reader {
                bytes: &out,
                pos: 0,
            };
            assert_eq!(r.vlong("v").unwrap(), v);
        }
    }

    #[test]
    fn storage_file_round_trips_and_refuses_garbage() {
        let token = StoredToken {
            alias: "ferrobase-standalone".into(),
            identifier: encode_identifier(&identifier()),
            password: vec![9; 20],
            kind: TOKEN_KIND.into(),
            service: "ferrobase-standalone".into(),
        };
        let file = encode_storage(std::slice::from_ref(&token));
        assert_eq!(&file[..5], b"HDTS\x00");
        assert_eq!(decode_storage(&file).unwrap(), vec![token]);
        for cut in 0..file.len() {
            assert!(decode_storage(&file[..cut]).is_err(), "cut at {cut}");
        }
        let mut v1 = file.clone();
        v1[4] = 1;
        assert!(
            decode_storage(&v1)
                .unwrap_err()
                .to_string()
                .contains("version 1 is not read")
        );
    }
}
