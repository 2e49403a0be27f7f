//! Who a gRPC caller is, proved where `hbase.security.authentication`
//! asks for proof: the interceptor in front of every gRPC service of a
//! master, region server or standalone.
//!
//! ```text
//! verified TLS client certificate   ─► its CN                    (any mode)
//! x-ferrobase-token: hex(id):hex(pw) ─► the token's user          (checked against the root's key)
//!                                       a bad token: UNAUTHENTICATED, naming why
//! neither: simple mode, or secure with fallback-to-simple allowed ─► the claimed x-ferrobase-user
//!          secure mode                                            ─► UNAUTHENTICATED
//! ```
//!
//! The result travels to the services as a [`Caller`] request extension,
//! which `acl::identity::grpc_user` reads before anything else. The same
//! rules as the HBase RPC side (`hbase_rpc`, SASL DIGEST-MD5), so a
//! secure cluster has no protocol that trusts a claimed name. This module
//! never checks permissions.

use crate::acl::identity::Caller;
use crate::auth::{Authentication, TokenAuthority};
use ferrobase_tls::ConnectionInfo;
use std::sync::Arc;
use tonic::{Request, Status};

/// The interceptor (cheap to clone: one per service).
#[derive(Clone)]
pub struct GrpcAuthentication {
    mode: Authentication,
    tokens: Option<Arc<TokenAuthority>>,
}

impl GrpcAuthentication {
    /// Callers checked by `mode`, tokens by `tokens` (`None`: a simple-mode
    /// server, which takes a token's holder at their claim).
    pub fn new(mode: Authentication, tokens: Option<Arc<TokenAuthority>>) -> GrpcAuthentication {
        GrpcAuthentication { mode, tokens }
    }

    /// The user `req` proves (or claims, where that is allowed).
    pub fn caller<T>(&self, req: &Request<T>) -> Result<Arc<str>, Status> {
        let certified = req
            .extensions()
            .get::<ConnectionInfo>()
            .is_some_and(|i| i.peer.is_some());
        if !certified {
            // A simple-mode server has no key: a client with a token is
            // taken at its claim, as HBase tells such a client to fall
            // back to simple authentication.
            if let (Some(v), Some(tokens)) =
                (req.metadata().get(ferrobase_proto::TOKEN_KEY), &self.tokens)
            {
                return token_user(tokens, v.to_str().unwrap_or_default());
            }
            if let Authentication::Secure {
                fallback_to_simple: false,
            } = self.mode
            {
                return Err(unauthenticated(
                    "Authentication is required: this server runs with \
                     hbase.security.authentication=kerberos/token; present a TLS client \
                     certificate or a token (hadoop.token.files or HADOOP_TOKEN_FILE_LOCATION; \
                     ferrobase token create)",
                ));
            }
        }
        // The certificate's CN, or the claimed name where a claim is enough.
        Ok(crate::acl::identity::grpc_user(req))
    }
}

/// UNAUTHENTICATED, with the error code clients map to their own.
fn unauthenticated(message: &str) -> Status {
    ferrobase_proto::error_code::status(ferrobase_proto::ErrorCode::Unauthenticated, message)
}

fn token_user(tokens: &TokenAuthority, value: &str) -> Result<Arc<str>, Status> {
    let refused = |why: &str| unauthenticated(&format!("token refused: {why}"));
    let (identifier, password) = ferrobase_proto::parse_token_header(value)
        .ok_or_else(|| refused("x-ferrobase-token is not hex(identifier):hex(password)"))?;
    let user = tokens
        .verify(&identifier, &password, crate::auth::now_ms())
        .map_err(|why| refused(&why))?;
    Ok(Arc::from(user))
}

impl tonic::service::Interceptor for GrpcAuthentication {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        let user = self.caller(&req)?;
        req.extensions_mut().insert(Caller(user));
        Ok(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::TokenKey;
    use tonic::service::Interceptor;

    fn secure(fallback_to_simple: bool) -> GrpcAuthentication {
        let tokens = Arc::new(TokenAuthority::new(
            TokenKey::new(1, &[9; 64]),
            "cluster",
            60_000,
        ));
        GrpcAuthentication::new(Authentication::Secure { fallback_to_simple }, Some(tokens))
    }

    fn request(user: Option<&str>, token: Option<(&[u8], &[u8])>) -> Request<()> {
        let mut h = ferrobase_proto::UserHeader::new(user.unwrap_or_default());
        if let Some((id, pw)) = token {
            h = h.with_token(id, pw);
        }
        h.call(Request::new(())).unwrap()
    }

    fn caller_of(auth: &GrpcAuthentication, req: Request<()>) -> Result<String, String> {
        let mut auth = auth.clone();
        auth.call(req)
            .map(|r| r.extensions().get::<Caller>().unwrap().0.to_string())
            .map_err(|s| {
                assert_eq!(s.code(), tonic::Code::Unauthenticated);
                s.message().to_string()
            })
    }

    #[test]
    fn secure_mode_takes_tokens_and_refuses_claims_and_bad_tokens() {
        let auth = secure(false);
        let tokens = auth.tokens.clone().unwrap();
        let t = tokens.mint("alice", crate::auth::now_ms());
        let ok = request(Some("root"), Some((&t.identifier, &t.password)));
        assert_eq!(caller_of(&auth, ok), Ok("alice".into()));

        let e = caller_of(&auth, request(Some("root"), None)).unwrap_err();
        assert!(e.contains("Authentication is required"), "{e}");

        let mut forged = t.password.clone();
        forged[0] ^= 1;
        let e = caller_of(&auth, request(None, Some((&t.identifier, &forged)))).unwrap_err();
        assert!(e.contains("forged"), "{e}");

        let expired = tokens.mint("alice", 0);
        let e = caller_of(
            &auth,
            request(None, Some((&expired.identifier, &expired.password))),
        )
        .unwrap_err();
        assert!(e.contains("Token has expired"), "{e}");

        let other = TokenAuthority::new(TokenKey::new(2, &[1; 64]), "cluster", 60_000)
            .mint("mallory", crate::auth::now_ms());
        let e = caller_of(
            &auth,
            request(None, Some((&other.identifier, &other.password))),
        )
        .unwrap_err();
        assert!(e.contains("Unknown master key"), "{e}");

        let mut garbage = Request::new(());
        garbage
            .metadata_mut()
            .insert(ferrobase_proto::TOKEN_KEY, "xyz".parse().unwrap());
        let e = caller_of(&auth, garbage).unwrap_err();
        assert!(e.contains("not hex"), "{e}");
    }

    #[test]
    fn fallback_and_simple_mode_trust_the_claim() {
        assert_eq!(
            caller_of(&secure(true), request(Some("bob"), None)),
            Ok("bob".into())
        );
        let simple = GrpcAuthentication::new(Authentication::Simple, None);
        assert_eq!(
            caller_of(&simple, request(Some(" bob "), None)),
            Ok("bob".into())
        );
        assert_eq!(caller_of(&simple, request(None, None)), Ok("".into()));
        assert_eq!(
            caller_of(&simple, request(Some("carol"), Some((b"id", b"pw")))),
            Ok("carol".into())
        );
    }
}
