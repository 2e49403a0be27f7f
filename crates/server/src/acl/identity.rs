//! Who a caller is, per connection or request: the CN of a verified TLS
//! client certificate when there is one, otherwise the name the client
//! claims (simple authentication, HBase's trust-the-client model): the
//! HBase RPC `ConnectionHeader.user_info.effective_user`, or the gRPC
//! metadata entry [`USER_KEY`](ferrobase_proto::USER_KEY). No name at all
//! is the empty (anonymous) user, which holds no permission. An HBase RPC
//! connection that authenticated with a token (SASL DIGEST-MD5) is the
//! token's user instead; `hbase_rpc` sets that, and refuses claimed names
//! when `hbase.security.authentication` requires proof. This module never
//! checks permissions.

use ferrobase_tls::{ConnectionInfo, PeerIdentity};
use std::sync::Arc;

/// The caller a gRPC request proved, set by the authentication
/// interceptor (`crate::grpc_auth`) in front of every service.
#[derive(Clone, Debug)]
pub struct Caller(pub Arc<str>);

/// The user of a gRPC request: the interceptor's [`Caller`], else (a
/// service reached without it, as in unit tests) the certificate or the
/// claimed name.
pub fn grpc_user<T>(req: &tonic::Request<T>) -> Arc<str> {
    if let Some(Caller(user)) = req.extensions().get::<Caller>() {
        return user.clone();
    }
    let peer = req
        .extensions()
        .get::<ConnectionInfo>()
        .and_then(|i| i.peer.as_ref());
    let claimed = req
        .metadata()
        .get(ferrobase_proto::USER_KEY)
        .and_then(|v| v.to_str().ok());
    user_of(peer, claimed)
}

/// The user of an HBase RPC connection: its certificate, else the
/// effective user of its connection header.
pub fn hbase_user(peer: Option<&PeerIdentity>, effective_user: Option<&str>) -> Arc<str> {
    user_of(peer, effective_user)
}

fn user_of(peer: Option<&PeerIdentity>, claimed: Option<&str>) -> Arc<str> {
    match peer {
        Some(p) => Arc::from(p.user.as_str()),
        None => Arc::from(claimed.map(str::trim).unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_certificate_wins_over_a_claimed_name() {
        let peer = PeerIdentity {
            user: "alice".into(),
            subject: "CN=alice".into(),
        };
        assert_eq!(&*hbase_user(Some(&peer), Some("root")), "alice");
        assert_eq!(&*hbase_user(None, Some(" bob ")), "bob");
        assert_eq!(&*hbase_user(None, None), "");
        let mut req = tonic::Request::new(());
        req.metadata_mut()
            .insert(ferrobase_proto::USER_KEY, "carol".parse().unwrap());
        assert_eq!(&*grpc_user(&req), "carol");
    }
}
