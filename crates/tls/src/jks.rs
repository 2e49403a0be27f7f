//! Java's own key store format, JKS (`keytool -storetype JKS`), read so
//! that an HBase installation's `hbase.rpc.tls.keystore.location` and
//! `truststore.location` work unchanged. This module owns decoding the
//! file, checking its integrity digest and recovering private keys; it
//! never writes a store and never trusts a length it has not checked.
//!
//! The file (big-endian throughout):
//!
//! ```text
//! +----------+---------+-------+----------------------+------------------+
//! | FEEDFEED | version | count | entry × count        | SHA-1 digest (20)|
//! |   u32    | u32 1|2 |  u32  |                      |                  |
//! +----------+---------+-------+----------------------+------------------+
//! entry:  tag u32 (1 private key, 2 trusted certificate)
//!         alias (u16 length + modified UTF-8)   date u64 (ms)
//!   tag 1: key u32 length + EncryptedPrivateKeyInfo (DER)
//!          chain u32 count, then per certificate:
//!            [type: u16 length + UTF-8, version 2 only] u32 length + DER
//!   tag 2: [type, version 2 only] u32 length + DER
//! digest = SHA-1(password as UTF-16BE ‖ "Mighty Aphrodite" ‖ every byte before it)
//! ```
//!
//! A private key is protected with Sun's `KeyProtector` (algorithm OID
//! 1.3.6.1.4.1.42.2.17.1.1): the encrypted bytes are `salt(20) ‖ key ⊕
//! stream ‖ check(20)`, where the stream is SHA-1 chained from the salt,
//! `d₁ = SHA-1(pw ‖ salt)`, `dᵢ₊₁ = SHA-1(pw ‖ dᵢ)`, and `check =
//! SHA-1(pw ‖ key)` proves the password right. The key is PKCS#8.
#![deny(clippy::indexing_slicing)]

use ring::digest::{Context, SHA1_FOR_LEGACY_USE_ONLY};

const MAGIC: u32 = 0xFEED_FEED;
const DIGEST_LEN: usize = 20;
const WHITENER: &[u8] = b"Mighty Aphrodite";
/// DER of the `KeyProtector` algorithm's OID, 1.3.6.1.4.1.42.2.17.1.1.
const KEY_PROTECTOR_OID: &[u8] = &[0x2b, 0x06, 0x01, 0x04, 0x01, 0x2a, 0x02, 0x11, 0x01, 0x01];
/// More certificates in one chain than any real store holds.
const MAX_CHAIN: u32 = 64;

/// What is wrong with a JKS file, in words for the operator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JksError {
    #[error("not a JKS key store (it does not start with FEEDFEED)")]
    NotJks,
    #[error("JKS version {0} is not known (1 and 2 are)")]
    Version(u32),
    #[error("truncated: {0}")]
    Truncated(&'static str),
    #[error("entry {entry} has unknown tag {tag}")]
    Tag { entry: u32, tag: u32 },
    #[error("the password is wrong, or the file was altered (its digest does not match)")]
    Digest,
    #[error("entry '{alias}': {message}")]
    Key { alias: String, message: String },
    #[error("{0} bytes after the digest")]
    Trailing(usize),
}

/// A private key entry: the key (PKCS#8 DER) and its chain, leaf first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyEntry {
    pub alias: String,
    pub key: Vec<u8>,
    pub chain: Vec<Vec<u8>>,
}

/// The entries of a store, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JksStore {
    pub keys: Vec<KeyEntry>,
    /// Trusted certificate entries (DER).
    pub certificates: Vec<Vec<u8>>,
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], JksError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or(JksError::Truncated(what))?;
        let out = self
            .data
            .get(self.pos..end)
            .ok_or(JksError::Truncated(what))?;
        self.pos = end;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], JksError> {
        self.take(N, what)?
            .try_into()
            .map_err(|_| JksError::Truncated(what))
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, JksError> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, JksError> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }

    fn utf(&mut self, what: &'static str) -> Result<String, JksError> {
        let n = self.u16(what)?;
        // Java's modified UTF-8 differs from UTF-8 only for NUL and
        // characters outside the BMP; a lossy read is fine for names.
        Ok(String::from_utf8_lossy(self.take(usize::from(n), what)?).into_owned())
    }

    fn blob(&mut self, what: &'static str) -> Result<&'a [u8], JksError> {
        let n = self.u32(what)?;
        self.take(
            usize::try_from(n).map_err(|_| JksError::Truncated(what))?,
            what,
        )
    }

    fn certificate(&mut self, version: u32) -> Result<Vec<u8>, JksError> {
        if version == 2 {
            self.utf("certificate type")?;
        }
        Ok(self.blob("certificate")?.to_vec())
    }
}

/// The password as Java hands it to the digest: each UTF-16 unit, big-endian.
fn password_bytes(password: &str) -> Vec<u8> {
    password.encode_utf16().flat_map(u16::to_be_bytes).collect()
}

fn sha1(parts: &[&[u8]]) -> [u8; DIGEST_LEN] {
    let mut c = Context::new(&SHA1_FOR_LEGACY_USE_ONLY);
    for p in parts {
        c.update(p);
    }
    let mut out = [0u8; DIGEST_LEN];
    out.copy_from_slice(c.finish().as_ref());
    out
}

/// Decodes `data`. With a password the file's digest is checked (a wrong
/// password is an error) and private keys are recovered with it, as
/// `KeyStore.load` then `getKey` do with one password for both; without
/// one (a trust store opened with no password, which Java allows), the
/// digest is not checked and a private key entry is an error.
pub fn decode(data: &[u8], password: Option<&str>) -> Result<JksStore, JksError> {
    let mut r = Reader { data, pos: 0 };
    if r.u32("magic").map_err(|_| JksError::NotJks)? != MAGIC {
        return Err(JksError::NotJks);
    }
    let version = r.u32("version")?;
    if version != 1 && version != 2 {
        return Err(JksError::Version(version));
    }
    let count = r.u32("entry count")?;
    let mut store = JksStore::default();
    let mut protected = Vec::new();
    for entry in 0..count {
        let tag = r.u32("entry tag")?;
        let alias = r.utf("alias")?;
        r.take(8, "entry date")?;
        match tag {
            1 => {
                let key = r.blob("private key")?;
                let n = r.u32("chain length")?;
                if n > MAX_CHAIN {
                    return Err(JksError::Key {
                        alias,
                        message: format!("a chain of {n} certificates"),
                    });
                }
                let chain = (0..n)
                    .map(|_| r.certificate(version))
                    .collect::<Result<Vec<_>, _>>()?;
                protected.push((alias, key, chain));
            }
            2 => store.certificates.push(r.certificate(version)?),
            tag => return Err(JksError::Tag { entry, tag }),
        }
    }
    let body_end = r.pos;
    let digest = r.take(DIGEST_LEN, "digest")?;
    if r.pos != data.len() {
        return Err(JksError::Trailing(data.len() - r.pos));
    }
    let Some(password) = password else {
        if let Some((alias, ..)) = protected.into_iter().next() {
            return Err(JksError::Key {
                alias,
                message: "a private key cannot be read without the store's password".into(),
            });
        }
        return Ok(store);
    };
    let pw = password_bytes(password);
    let body = data.get(..body_end).ok_or(JksError::Truncated("body"))?;
    if sha1(&[&pw, WHITENER, body]) != digest {
        return Err(JksError::Digest);
    }
    for (alias, key, chain) in protected {
        let key = recover_key(key, &pw).map_err(|message| JksError::Key {
            alias: alias.clone(),
            message,
        })?;
        store.keys.push(KeyEntry { alias, key, chain });
    }
    Ok(store)
}

/// One DER element at the start of `data`: (tag, contents, rest).
fn der(data: &[u8]) -> Result<(u8, &[u8], &[u8]), String> {
    let (&tag, rest) = data.split_first().ok_or("DER: empty")?;
    let (&first, mut rest) = rest.split_first().ok_or("DER: no length")?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return Err("DER: bad length".into());
        }
        let (bytes, after) = rest.split_at(n);
        rest = after;
        bytes
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b))
    };
    if rest.len() < len {
        return Err("DER: element longer than its container".into());
    }
    let (contents, after) = rest.split_at(len);
    Ok((tag, contents, after))
}

/// The PKCS#8 key inside a `KeyProtector`-encrypted `EncryptedPrivateKeyInfo`.
fn recover_key(encrypted_info: &[u8], pw: &[u8]) -> Result<Vec<u8>, String> {
    const SEQUENCE: u8 = 0x30;
    const OID: u8 = 0x06;
    const OCTET_STRING: u8 = 0x04;
    let (tag, info, _) = der(encrypted_info)?;
    if tag != SEQUENCE {
        return Err("the key is not an EncryptedPrivateKeyInfo".into());
    }
    let (tag, algorithm, rest) = der(info)?;
    let (oid_tag, oid, _) = der(algorithm)?;
    if tag != SEQUENCE || oid_tag != OID {
        return Err("the key's algorithm is not readable".into());
    }
    if oid != KEY_PROTECTOR_OID {
        return Err("the key is not protected with JKS's KeyProtector (a JCEKS or PKCS#8 store?); convert the store to PKCS12".into());
    }
    let (tag, data, _) = der(rest)?;
    if tag != OCTET_STRING || data.len() < 2 * DIGEST_LEN {
        return Err("the protected key is too short".into());
    }
    let (salt, rest) = data.split_at(DIGEST_LEN);
    let (masked, check) = rest.split_at(rest.len() - DIGEST_LEN);
    let mut key = Vec::with_capacity(masked.len());
    let mut d = [0u8; DIGEST_LEN];
    d.copy_from_slice(salt);
    for chunk in masked.chunks(DIGEST_LEN) {
        d = sha1(&[pw, &d]);
        key.extend(chunk.iter().zip(d.iter()).map(|(m, s)| m ^ s));
    }
    if sha1(&[pw, &key]) != check {
        return Err("cannot recover the private key: its password differs from the store's (keytool -keypasswd)".into());
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store written the way `keytool` writes one, for the decoder's own
    /// checks; the real files come from keytool in tests/java_stores.rs.
    fn store(password: &str, key: &[u8], cert: &[u8]) -> Vec<u8> {
        let pw = password_bytes(password);
        let salt = [7u8; DIGEST_LEN];
        let mut d = salt;
        let mut masked = Vec::new();
        for chunk in key.chunks(DIGEST_LEN) {
            d = sha1(&[&pw, &d]);
            masked.extend(chunk.iter().zip(d.iter()).map(|(m, s)| m ^ s));
        }
        let mut protected = salt.to_vec();
        protected.extend(&masked);
        protected.extend(sha1(&[&pw, key]));
        let mut octets = vec![0x04, 0x81, protected.len() as u8];
        octets.extend(&protected);
        let mut alg = vec![
            0x30,
            (KEY_PROTECTOR_OID.len() + 4) as u8,
            0x06,
            KEY_PROTECTOR_OID.len() as u8,
        ];
        alg.extend(KEY_PROTECTOR_OID);
        alg.extend([0x05, 0x00]);
        let mut inner = alg;
        inner.extend(&octets);
        let mut epki = vec![0x30, 0x81, inner.len() as u8];
        epki.extend(&inner);

        let mut out = Vec::new();
        out.extend(MAGIC.to_be_bytes());
        out.extend(2u32.to_be_bytes());
        out.extend(2u32.to_be_bytes());
        // Entry 1: a private key with a one-certificate chain.
        out.extend(1u32.to_be_bytes());
        out.extend(6u16.to_be_bytes());
        out.extend(b"server");
        out.extend(0u64.to_be_bytes());
        out.extend((epki.len() as u32).to_be_bytes());
        out.extend(&epki);
        out.extend(1u32.to_be_bytes());
        out.extend(5u16.to_be_bytes());
        out.extend(b"X.509");
        out.extend((cert.len() as u32).to_be_bytes());
        out.extend(cert);
        // Entry 2: a trusted certificate.
        out.extend(2u32.to_be_bytes());
        out.extend(2u16.to_be_bytes());
        out.extend(b"ca");
        out.extend(0u64.to_be_bytes());
        out.extend(5u16.to_be_bytes());
        out.extend(b"X.509");
        out.extend((cert.len() as u32).to_be_bytes());
        out.extend(cert);
        let digest = sha1(&[&pw, WHITENER, &out]);
        out.extend(digest);
        out
    }

    #[test]
    fn keys_and_certificates_come_back_and_bad_passwords_are_named() {
        let key: Vec<u8> = (0..=77u8).collect();
        let data = store("changeit", &key, b"CERT");
        let s = decode(&data, Some("changeit")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.keys.len(), 1);
        assert_eq!(s.keys[0].alias, "server");
        assert_eq!(s.keys[0].key, key);
        assert_eq!(s.keys[0].chain, [b"CERT".to_vec()]);
        assert_eq!(s.certificates, [b"CERT".to_vec()]);
        assert_eq!(decode(&data, Some("wrong")), Err(JksError::Digest));
        assert!(matches!(decode(&data, None), Err(JksError::Key { .. })));
    }

    #[test]
    fn every_truncation_and_flip_is_an_error_not_a_panic() {
        let data = store("pw", &[1, 2, 3, 4, 5], b"C");
        for n in 0..data.len() {
            assert!(decode(&data[..n], Some("pw")).is_err(), "prefix {n}");
        }
        for i in 0..data.len() {
            let mut bad = data.clone();
            bad[i] ^= 0x40;
            assert!(decode(&bad, Some("pw")).is_err(), "flip at {i}");
        }
        assert_eq!(decode(b"PK\x03\x04....", None), Err(JksError::NotJks));
    }
}
