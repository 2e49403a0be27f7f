//! Key stores and trust stores as PEM files (HBase's
//! `hbase.rpc.tls.keystore.type` / `truststore.type` = `PEM`): a key store
//! holds one private key (PKCS#8, PKCS#1 or SEC1, unencrypted) and its
//! certificate chain, leaf first; a trust store holds CA certificates.
//! This module reads files and checks their contents; it never decides
//! whether TLS is on.

use crate::error::TlsError;
use ferrobase_types::Settings;
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;

/// The setting names, for messages.
pub const KEYSTORE_LOCATION: &str = "hbase.rpc.tls.keystore.location";
pub const KEYSTORE_TYPE: &str = "hbase.rpc.tls.keystore.type";
pub const KEYSTORE_PASSWORD: &str = "hbase.rpc.tls.keystore.password";
pub const TRUSTSTORE_LOCATION: &str = "hbase.rpc.tls.truststore.location";
pub const TRUSTSTORE_TYPE: &str = "hbase.rpc.tls.truststore.type";

/// A private key and its certificate chain.
pub struct Identity {
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
}

fn check_type(setting: &'static str, value: &str) -> Result<(), TlsError> {
    if value.is_empty() || value.eq_ignore_ascii_case("PEM") {
        return Ok(());
    }
    Err(TlsError::Setting {
        setting,
        message: format!(
            "store type '{value}' is not read: only PEM files are (convert a JKS or PKCS12 store with keytool and openssl)"
        ),
    })
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

/// The key store of `settings`, or `None` when no location is set.
pub fn identity(settings: &Settings) -> Result<Option<Identity>, TlsError> {
    let path = settings.tls_keystore_location.trim();
    if path.is_empty() {
        return Ok(None);
    }
    check_type(KEYSTORE_TYPE, &settings.tls_keystore_type)?;
    if !settings.tls_keystore_password.is_empty() {
        return Err(TlsError::Setting {
            setting: KEYSTORE_PASSWORD,
            message: "encrypted private keys are not read: give an unencrypted PEM key (readable by this process only)".into(),
        });
    }
    let pem = read(KEYSTORE_LOCATION, path)?;
    let chain = certificates(KEYSTORE_LOCATION, path, &pem)?;
    if chain.is_empty() {
        return Err(store_error(
            KEYSTORE_LOCATION,
            path,
            "no CERTIFICATE in it: a key store holds the private key and its certificate chain",
        ));
    }
    let key = match PrivateKeyDer::from_pem_slice(&pem) {
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
    Ok(Some(Identity { chain, key }))
}

/// The trust store of `settings`, or `None` when no location is set.
pub fn roots(settings: &Settings) -> Result<Option<Arc<RootCertStore>>, TlsError> {
    let path = settings.tls_truststore_location.trim();
    if path.is_empty() {
        return Ok(None);
    }
    check_type(TRUSTSTORE_TYPE, &settings.tls_truststore_type)?;
    let pem = read(TRUSTSTORE_LOCATION, path)?;
    let certs = certificates(TRUSTSTORE_LOCATION, path, &pem)?;
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

        s.tls_keystore_type = "JKS".into();
        let e = identity(&s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(KEYSTORE_TYPE) && e.contains("only PEM"), "{e}");
        s.tls_keystore_type = "pem".into();
        s.tls_keystore_password = "secret".into();
        let e = identity(&s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(KEYSTORE_PASSWORD), "{e}");
    }
}
