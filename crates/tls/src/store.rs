//! Key stores and trust stores (HBase's `hbase.rpc.tls.keystore.*` and
//! `truststore.*`), in the three formats HBase's `X509Util` reads: PEM, a
//! PKCS#12 file (`keytool`'s default; AES or legacy 3DES/RC2) or Java's
//! JKS ([`crate::jks`]). The format is the `.type` setting, or else the
//! file name's extension (`.pem`, `.p12`/`.pfx`, `.jks`). A key store holds
//! one private key and its certificate chain, leaf first; a trust store
//! holds CA certificates (its trusted-certificate entries, and the chains'
//! certificates of any key entries, as Java's trust manager takes them).
//! This module reads files and checks their contents; it never decides
//! whether TLS is on.

use crate::error::TlsError;
use crate::jks;
use ferrobase_types::Settings;
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;

/// The setting names, for messages.
pub const KEYSTORE_LOCATION: &str = "hbase.rpc.tls.keystore.location";
pub const KEYSTORE_TYPE: &str = "hbase.rpc.tls.keystore.type";
pub const KEYSTORE_PASSWORD: &str = "hbase.rpc.tls.keystore.password";
pub const TRUSTSTORE_LOCATION: &str = "hbase.rpc.tls.truststore.location";
pub const TRUSTSTORE_TYPE: &str = "hbase.rpc.tls.truststore.type";
pub const TRUSTSTORE_PASSWORD: &str = "hbase.rpc.tls.truststore.password";

/// A private key and its certificate chain.
pub struct Identity {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

/// A store file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreType {
    Pem,
    Pkcs12,
    Jks,
}

impl StoreType {
    /// The `.type` setting's value, or else the extension of `path`
    /// (HBase's `KeyStoreFileType.fromPropertyValueOrFileName`).
    pub fn of(setting: &'static str, value: &str, path: &str) -> Result<StoreType, TlsError> {
        let v = value.trim();
        if !v.is_empty() {
            return match v.to_ascii_uppercase().as_str() {
                "PEM" => Ok(StoreType::Pem),
                "PKCS12" => Ok(StoreType::Pkcs12),
                "JKS" => Ok(StoreType::Jks),
                _ => Err(TlsError::Setting {
                    setting,
                    message: format!("store type '{v}' is not read: PEM, PKCS12 and JKS are"),
                }),
            };
        }
        let ext = std::path::Path::new(path)
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "jks" => Ok(StoreType::Jks),
            "p12" | "pfx" => Ok(StoreType::Pkcs12),
            // PEM by default, as this setting always meant.
            _ => Ok(StoreType::Pem),
        }
    }
}

fn read(setting: &'static str, path: &str) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        setting,
        path: path.to_string(),
        source,
    })
}

fn store_error(setting: &'static str, path: &str, message: impl Into<String>) -> TlsError {
    TlsError::Store {
        setting,
        path: path.to_string(),
        message: message.into(),
    }
}

fn certificates(
    setting: &'static str,
    path: &str,
    pem: &[u8],
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| store_error(setting, path, format!("not a valid PEM file: {e}")))
}

fn pkcs12(
    setting: &'static str,
    path: &str,
    data: &[u8],
    password: &str,
) -> Result<p12_keystore::KeyStore, TlsError> {
    p12_keystore::KeyStore::from_pkcs12(data, password, p12_keystore::Pkcs12ImportPolicy::Relaxed)
        .map_err(|e| {
            let why = match e {
                p12_keystore::error::Error::MacError(_) => {
                    "the password is wrong, or the file was altered (its MAC does not match)"
                        .to_string()
                }
                other => format!("not a readable PKCS12 file: {other}"),
            };
            store_error(setting, path, why)
        })
}

fn jks_store(
    setting: &'static str,
    path: &str,
    data: &[u8],
    password: Option<&str>,
) -> Result<jks::JksStore, TlsError> {
    jks::decode(data, password).map_err(|e| store_error(setting, path, e.to_string()))
}

fn der(cert: &[u8]) -> CertificateDer<'static> {
    CertificateDer::from(cert.to_vec())
}

/// The key store of `settings`, or `None` when no location is set.
pub fn identity(settings: &Settings) -> Result<Option<Identity>, TlsError> {
    let path = settings.tls_keystore_location.trim();
    if path.is_empty() {
        return Ok(None);
    }
    let kind = StoreType::of(KEYSTORE_TYPE, &settings.tls_keystore_type, path)?;
    let password = settings.tls_keystore_password.as_str();
    let data = read(KEYSTORE_LOCATION, path)?;
    let identity = match kind {
        StoreType::Pem => pem_identity(path, &data, password)?,
        StoreType::Pkcs12 => {
            let store = pkcs12(KEYSTORE_LOCATION, path, &data, password)?;
            let (_, chain) = store.private_key_chain().ok_or_else(|| {
                store_error(KEYSTORE_LOCATION, path, "no private key entry in it: a key store holds the private key and its certificate chain")
            })?;
            Identity {
                chain: chain.certs().iter().map(|c| der(c.as_der())).collect(),
                key: PrivatePkcs8KeyDer::from(chain.key().as_der().to_vec()).into(),
            }
        }
        StoreType::Jks => {
            if password.is_empty() {
                return Err(TlsError::Setting {
                    setting: KEYSTORE_PASSWORD,
                    message: format!(
                        "{path} is a JKS key store: its password is needed to read the private key"
                    ),
                });
            }
            let store = jks_store(KEYSTORE_LOCATION, path, &data, Some(password))?;
            let entry = store.keys.into_iter().next().ok_or_else(|| {
                store_error(KEYSTORE_LOCATION, path, "no private key entry in it: a key store holds the private key and its certificate chain")
            })?;
            Identity {
                chain: entry.chain.iter().map(|c| der(c)).collect(),
                key: PrivatePkcs8KeyDer::from(entry.key).into(),
            }
        }
    };
    if identity.chain.is_empty() {
        return Err(store_error(
            KEYSTORE_LOCATION,
            path,
            "the private key has no certificate chain",
        ));
    }
    Ok(Some(identity))
}

fn pem_identity(path: &str, pem: &[u8], password: &str) -> Result<Identity, TlsError> {
    if !password.is_empty() {
        return Err(TlsError::Setting {
            setting: KEYSTORE_PASSWORD,
            message: "encrypted PEM keys are not read: give an unencrypted PEM key (readable by this process only), or a PKCS12 or JKS store".into(),
        });
    }
    let chain = certificates(KEYSTORE_LOCATION, path, pem)?;
    if chain.is_empty() {
        return Err(store_error(
            KEYSTORE_LOCATION,
            path,
            "no CERTIFICATE in it: a key store holds the private key and its certificate chain",
        ));
    }
    let key = match PrivateKeyDer::from_pem_slice(pem) {
        Ok(k) => k,
        Err(rustls::pki_types::pem::Error::NoItemsFound) => {
            return Err(store_error(
                KEYSTORE_LOCATION,
                path,
                "no PRIVATE KEY in it (an ENCRYPTED PRIVATE KEY is not read)",
            ));
        }
        Err(e) => {
            return Err(store_error(
                KEYSTORE_LOCATION,
                path,
                format!("the private key cannot be read: {e}"),
            ));
        }
    };
    Ok(Identity { chain, key })
}

/// The trust store of `settings`, or `None` when no location is set.
pub fn roots(settings: &Settings) -> Result<Option<Arc<RootCertStore>>, TlsError> {
    let path = settings.tls_truststore_location.trim();
    if path.is_empty() {
        return Ok(None);
    }
    let kind = StoreType::of(TRUSTSTORE_TYPE, &settings.tls_truststore_type, path)?;
    let password = settings.tls_truststore_password.as_str();
    let data = read(TRUSTSTORE_LOCATION, path)?;
    let certs = match kind {
        StoreType::Pem => certificates(TRUSTSTORE_LOCATION, path, &data)?,
        StoreType::Pkcs12 => {
            let store = pkcs12(TRUSTSTORE_LOCATION, path, &data, password)?;
            store
                .entries()
                .flat_map(|(_, e)| match e {
                    p12_keystore::KeyStoreEntry::Certificate(c) => vec![der(c.as_der())],
                    p12_keystore::KeyStoreEntry::PrivateKeyChain(k) => {
                        k.certs().iter().map(|c| der(c.as_der())).collect()
                    }
                    _ => Vec::new(),
                })
                .collect()
        }
        StoreType::Jks => {
            let pw = (!password.is_empty()).then_some(password);
            let store = jks_store(TRUSTSTORE_LOCATION, path, &data, pw);
            // Without a password a store holding a key cannot be opened;
            // say which setting would open it.
            let store = match (store, pw) {
                (Err(TlsError::Store { message, .. }), None) if message.contains("password") => {
                    return Err(TlsError::Setting {
                        setting: TRUSTSTORE_PASSWORD,
                        message: format!("{path} holds a private key entry: give its password"),
                    });
                }
                (r, _) => r?,
            };
            let mut certs: Vec<_> = store.certificates.iter().map(|c| der(c)).collect();
            certs.extend(
                store
                    .keys
                    .iter()
                    .flat_map(|k| k.chain.iter().map(|c| der(c))),
            );
            certs
        }
    };
    if certs.is_empty() {
        return Err(store_error(
            TRUSTSTORE_LOCATION,
            path,
            "no CERTIFICATE in it: a trust store holds the CA certificates to trust",
        ));
    }
    let mut store = RootCertStore::empty();
    for (i, cert) in certs.into_iter().enumerate() {
        store.add(cert).map_err(|e| {
            store_error(
                TRUSTSTORE_LOCATION,
                path,
                format!("certificate {} is not a usable CA certificate: {e}", i + 1),
            )
        })?;
    }
    Ok(Some(Arc::new(store)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_and_wrong_files_are_named() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut s = Settings::default();
        assert!(matches!(identity(&s), Ok(None)));
        s.tls_keystore_location = dir.path().join("nope.pem").display().to_string();
        let e = identity(&s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains(KEYSTORE_LOCATION) && e.contains("nope.pem"),
            "{e}"
        );

        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "hello\n").unwrap_or_else(|e| panic!("{e}"));
        s.tls_keystore_location = empty.display().to_string();
        let e = identity(&s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("no CERTIFICATE"), "{e}");
        s.tls_truststore_location = empty.display().to_string();
        let e = roots(&s).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains(TRUSTSTORE_LOCATION) && e.contains("no CERTIFICATE"),
            "{e}"
        );

        s.tls_keystore_type = "BCFKS".into();
        let e = identity(&s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains(KEYSTORE_TYPE) && e.contains("PKCS12 and JKS are"),
            "{e}"
        );
        // The type by extension: garbage named .p12 or .jks is refused as
        // that format, naming the file.
        for (name, says) in [("x.p12", "not a readable PKCS12"), ("x.jks", "not a JKS")] {
            let f = dir.path().join(name);
            std::fs::write(&f, "hello\n").unwrap_or_else(|e| panic!("{e}"));
            s.tls_keystore_type = String::new();
            s.tls_keystore_location = f.display().to_string();
            s.tls_keystore_password = "pw".into();
            let e = identity(&s)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(name) && e.contains(says), "{e}");
        }
        s.tls_keystore_location = empty.display().to_string();
        s.tls_keystore_type = "pem".into();
        s.tls_keystore_password = "secret".into();
        let e = identity(&s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(KEYSTORE_PASSWORD), "{e}");
    }
}
