//! Test certificates, made at test time (feature `test-certs`): no private
//! key is ever committed. [`TestPki::generate`] writes into a directory a
//! CA, a server identity for `localhost` and `127.0.0.1`, a client
//! identity (CN `alice`), expired ones, and the same signed by a second,
//! untrusted CA; [`TestPki::server_settings`] and
//! [`TestPki::client_settings`] turn them into HBase settings.
//! [`logged_lines`] captures the process's log lines, so a test can assert
//! what a refusal logged.

use ferrobase_types::{ClientAuth, Settings};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// A generated set of certificates, as PEM files in one directory.
#[derive(Debug, Clone)]
pub struct TestPki {
    pub dir: PathBuf,
    /// The trusted CA (a trust store).
    pub ca: PathBuf,
    /// Key stores (key and certificate) signed by the trusted CA.
    pub server: PathBuf,
    pub client: PathBuf,
    pub expired_server: PathBuf,
    pub expired_client: PathBuf,
    /// A second CA nobody trusts, and identities it signed.
    pub other_ca: PathBuf,
    pub other_server: PathBuf,
    pub other_client: PathBuf,
}

/// An error making test certificates.
#[derive(Debug, thiserror::Error)]
pub enum TestPkiError {
    #[error("rcgen: {0}")]
    Rcgen(#[from] rcgen::Error),
    #[error("writing {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

fn ca(name: &str) -> Result<CertifiedIssuer<'static, KeyPair>, TestPkiError> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(CertifiedIssuer::self_signed(params, KeyPair::generate()?)?)
}

/// A leaf's key store: its private key and certificate, one PEM file.
fn leaf(
    issuer: &CertifiedIssuer<'static, KeyPair>,
    cn: &str,
    expired: bool,
) -> Result<String, TestPkiError> {
    let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
    params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    params.distinguished_name.push(DnType::CommonName, cn);
    params
        .distinguished_name
        .push(DnType::OrganizationName, "ferrobase tests");
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    if expired {
        params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        params.not_after = rcgen::date_time_ymd(2021, 1, 1);
    } else {
        params.not_before = rcgen::date_time_ymd(2024, 1, 1);
        params.not_after = rcgen::date_time_ymd(2124, 1, 1);
    }
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, issuer)?;
    Ok(format!("{}{}", key.serialize_pem(), cert.pem()))
}

fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf, TestPkiError> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|source| TestPkiError::Write {
        path: path.display().to_string(),
        source,
    })?;
    Ok(path)
}

impl TestPki {
    /// Generates every certificate into `dir` (which must exist).
    pub fn generate(dir: &Path) -> Result<TestPki, TestPkiError> {
        let trusted = ca("ferrobase test CA")?;
        let other = ca("untrusted test CA")?;
        Ok(TestPki {
            dir: dir.to_path_buf(),
            ca: write(dir, "ca.pem", &trusted.pem())?,
            server: write(
                dir,
                "server.pem",
                &leaf(&trusted, "ferrobase-server", false)?,
            )?,
            client: write(dir, "client.pem", &leaf(&trusted, "alice", false)?)?,
            expired_server: write(
                dir,
                "expired-server.pem",
                &leaf(&trusted, "ferrobase-server", true)?,
            )?,
            expired_client: write(dir, "expired-client.pem", &leaf(&trusted, "alice", true)?)?,
            other_ca: write(dir, "other-ca.pem", &other.pem())?,
            other_server: write(
                dir,
                "other-server.pem",
                &leaf(&other, "ferrobase-server", false)?,
            )?,
            other_client: write(dir, "other-client.pem", &leaf(&other, "mallory", false)?)?,
        })
    }

    /// A TLS-only server (no plaintext) with `key_store` as its identity,
    /// trusting the CA for client certificates.
    pub fn server_settings(&self, key_store: &Path, client_auth: ClientAuth) -> Settings {
        let mut s = Settings::default();
        self.apply_server(&mut s, key_store, client_auth);
        s
    }

    /// Sets a TLS-only server's settings on `s`.
    pub fn apply_server(&self, s: &mut Settings, key_store: &Path, client_auth: ClientAuth) {
        s.tls_server_enabled = true;
        s.tls_server_support_plaintext = false;
        s.tls_client_auth = client_auth;
        s.tls_keystore_location = key_store.display().to_string();
        s.tls_truststore_location = self.ca.display().to_string();
    }

    /// A TLS client trusting `trust`, with `key_store` as its certificate.
    pub fn client_settings(&self, trust: &Path, key_store: Option<&Path>) -> Settings {
        Settings {
            tls_client_enabled: true,
            tls_truststore_location: trust.display().to_string(),
            tls_keystore_location: key_store
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            ..Settings::default()
        }
    }
}

/// Every log line of this test process so far that contains `needle`
/// (the first call installs the capturing subscriber, at `info`).
pub fn logged_lines(needle: &str) -> String {
    let text =
        String::from_utf8_lossy(&capture().lock().unwrap_or_else(|e| e.into_inner())).to_string();
    text.lines()
        .filter(|l| l.contains(needle))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Installs the capturing subscriber (idempotent); call before the code
/// whose lines are wanted runs.
pub fn capture_logs() {
    capture();
}

/// Waits (a bounded while) until a line containing every one of `words` is
/// logged; returns the lines containing the first word.
pub async fn wait_for_log(words: &[&str]) -> String {
    let first = words.first().copied().unwrap_or("");
    for _ in 0..500 {
        let lines = logged_lines(first);
        if lines.lines().any(|l| words.iter().all(|w| l.contains(w))) {
            return lines;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    logged_lines(first)
}

fn capture() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || Sink(sink.clone()))
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
        buf
    })
    .clone()
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
