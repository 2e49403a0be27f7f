//! A failed TLS handshake's cause in words: which certificate (ours or
//! the peer's), what is wrong with it (expired, not yet valid, signed by a
//! CA the trust store does not hold, issued for another name), or that the
//! peer does not speak TLS at all. The words name the setting to look at.
//! This module only describes errors; it never retries or decides.

use crate::store::{KEYSTORE_LOCATION, TRUSTSTORE_LOCATION};
use rustls::pki_types::UnixTime;
use rustls::{AlertDescription, CertificateError, Error};

/// Which end of the handshake we are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

impl Side {
    fn peer(self) -> &'static str {
        match self {
            Side::Client => "the server",
            Side::Server => "the client",
        }
    }
}

/// The cause of a handshake that failed with `error` (tokio-rustls's I/O
/// error, wrapping rustls's when there is one).
pub fn describe(error: &std::io::Error, side: Side) -> String {
    if let Some(e) = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<Error>())
    {
        return describe_rustls(e, side);
    }
    match error.kind() {
        std::io::ErrorKind::UnexpectedEof
        | std::io::ErrorKind::ConnectionReset
        | std::io::ErrorKind::BrokenPipe => format!(
            "{} closed the connection during the handshake ({}): it may not speak TLS on this port, or it refused this side's certificate",
            side.peer(),
            error
        ),
        _ => error.to_string(),
    }
}

fn when(t: UnixTime) -> String {
    format!("{} s after the Unix epoch", t.as_secs())
}

/// `localhost` for rustls's `DnsName("localhost")`, `127.0.0.1` for
/// `IpAddress(127.0.0.1)`.
fn plain_name(presented: &str) -> String {
    let inner = presented
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or(presented);
    inner.trim_matches('"').to_string()
}

/// The cause of rustls error `e`, seen from `side`.
pub fn describe_rustls(e: &Error, side: Side) -> String {
    let whose = match side {
        Side::Client => "the server's certificate",
        Side::Server => "the client's certificate",
    };
    match e {
        Error::InvalidCertificate(c) => match c {
            CertificateError::Expired => format!("{whose} has expired"),
            CertificateError::ExpiredContext { time, not_after } => format!(
                "{whose} has expired (valid until {}, now {})",
                when(*not_after),
                when(*time)
            ),
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                format!("{whose} is not valid yet")
            }
            CertificateError::UnknownIssuer => format!(
                "{whose} is not signed by a CA in this side's trust store ({TRUSTSTORE_LOCATION}): wrong CA"
            ),
            CertificateError::BadSignature => format!(
                "{whose} has a bad signature: it is not signed by the CA it names"
            ),
            CertificateError::NotValidForName => format!(
                "{whose} does not name the host dialled (hbase.client.netty.tls.verify.server.hostname=false skips this check)"
            ),
            CertificateError::NotValidForNameContext { expected, presented } => format!(
                "{whose} is for {} but the host dialled is {} (hbase.client.netty.tls.verify.server.hostname=false skips this check)",
                if presented.is_empty() {
                    "no name".to_string()
                } else {
                    presented
                        .iter()
                        .map(|n| plain_name(n))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                expected.to_str()
            ),
            CertificateError::Revoked => format!("{whose} is revoked"),
            CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
                format!("{whose} is not issued for this use (extended key usage)")
            }
            other => format!("{whose} is refused: {other:?}"),
        },
        Error::NoCertificatesPresented => match side {
            Side::Server => "the client sent no certificate, and hbase.server.netty.tls.client.auth.mode=NEED requires one".into(),
            Side::Client => "the server sent no certificate".into(),
        },
        Error::AlertReceived(alert) => {
            let why = match alert {
                AlertDescription::CertificateExpired => {
                    format!(": it says this side's certificate ({KEYSTORE_LOCATION}) has expired")
                }
                AlertDescription::UnknownCA => format!(
                    ": it does not trust the CA of this side's certificate ({KEYSTORE_LOCATION}): wrong CA"
                ),
                AlertDescription::BadCertificate | AlertDescription::UnsupportedCertificate => {
                    format!(": it refused this side's certificate ({KEYSTORE_LOCATION})")
                }
                AlertDescription::CertificateRequired => format!(
                    ": it requires a client certificate ({KEYSTORE_LOCATION})"
                ),
                AlertDescription::HandshakeFailure if side == Side::Client => format!(
                    ": no common protocol version or cipher, or it requires a client certificate ({KEYSTORE_LOCATION})"
                ),
                _ => String::new(),
            };
            format!("{} sent the alert {alert:?}{why}", side.peer())
        }
        Error::InvalidMessage(_) | Error::InappropriateMessage { .. } => format!(
            "{} does not speak TLS (is it a plaintext port?): {e}",
            side.peer()
        ),
        other => other.to_string(),
    }
}

/// The alert named `name` (rustls's name for it, as in "received fatal
/// alert: UnknownCA"), as [`describe_rustls`] words it for a client.
pub fn describe_alert_name(name: &str) -> String {
    let known = [
        AlertDescription::CertificateExpired,
        AlertDescription::UnknownCA,
        AlertDescription::BadCertificate,
        AlertDescription::UnsupportedCertificate,
        AlertDescription::CertificateRequired,
        AlertDescription::HandshakeFailure,
        AlertDescription::CertificateRevoked,
        AlertDescription::AccessDenied,
    ];
    match known.into_iter().find(|a| format!("{a:?}") == name) {
        Some(alert) => describe_rustls(&Error::AlertReceived(alert), Side::Client),
        None => format!("the server sent the alert {name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_named() {
        let expired = Error::InvalidCertificate(CertificateError::Expired);
        assert!(
            describe_rustls(&expired, Side::Client)
                .contains("the server's certificate has expired")
        );
        let unknown = Error::InvalidCertificate(CertificateError::UnknownIssuer);
        assert!(describe_rustls(&unknown, Side::Server).contains("wrong CA"));
        let alert = Error::AlertReceived(AlertDescription::UnknownCA);
        assert!(describe_rustls(&alert, Side::Client).contains("does not trust"));
        let none = Error::NoCertificatesPresented;
        assert!(describe_rustls(&none, Side::Server).contains("NEED"));
        let io = std::io::Error::new(std::io::ErrorKind::InvalidData, expired);
        assert!(describe(&io, Side::Client).contains("expired"));
        assert!(describe_alert_name("CertificateExpired").contains("has expired"));
        assert!(describe_alert_name("Nonsense").contains("Nonsense"));
        let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        assert!(describe(&eof, Side::Client).contains("may not speak TLS"));
    }
}
