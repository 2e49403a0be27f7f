//! Who a client certificate says the caller is: the subject's first
//! common name (CN) is the user name (the name ACLs will grant to), the
//! whole subject is kept for logs. A certificate without a CN is known by
//! its whole subject. This module parses certificates the handshake has
//! already verified; it never trusts one on its own.

use rustls::pki_types::CertificateDer;

/// The identity a verified client certificate carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerIdentity {
    /// The user name: the subject's CN, else the whole subject.
    pub user: String,
    /// The subject, RFC 4514 style (`CN=alice, O=Example`).
    pub subject: String,
}

impl PeerIdentity {
    /// The identity of the end-entity certificate `der`; `None` when it
    /// does not parse (a verified certificate always does).
    pub fn from_certificate(der: &CertificateDer<'_>) -> Option<PeerIdentity> {
        let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).ok()?;
        let subject = cert.subject().to_string();
        let cn = cert
            .subject()
            .iter_common_name()
            .find_map(|cn| cn.as_str().ok().map(str::to_string))
            .filter(|cn| !cn.trim().is_empty());
        Some(PeerIdentity {
            user: cn.unwrap_or_else(|| subject.clone()),
            subject,
        })
    }

    /// The identity of a connection's peer certificates (leaf first).
    pub fn from_chain(chain: Option<&[CertificateDer<'_>]>) -> Option<PeerIdentity> {
        chain
            .and_then(|c| c.first())
            .and_then(PeerIdentity::from_certificate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_no_identity() {
        assert_eq!(
            PeerIdentity::from_certificate(&CertificateDer::from(vec![0x30, 0x03, 1, 2])),
            None
        );
        assert_eq!(PeerIdentity::from_chain(None), None);
        assert_eq!(PeerIdentity::from_chain(Some(&[])), None);
    }
}
