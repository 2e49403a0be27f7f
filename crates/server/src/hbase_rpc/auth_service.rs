//! HBase's `AuthenticationService` coprocessor endpoint, which the Java
//! client reaches through `ClientService.ExecService` on `hbase:meta`
//! (`TokenUtil.obtainToken(connection)`): `GetAuthenticationToken` mints a
//! token for the caller, `WhoAmI` says who the caller is and how it was
//! authenticated. Every other coprocessor service is refused as HBase
//! refuses one it does not have (`UnknownProtocolException`).

use super::*;

/// The endpoint's protobuf service name (the Java client sends the full
/// name; a bare one is accepted too).
const SERVICE: &str = "AuthenticationService";

impl HBaseRpc {
    /// Answers one `ExecService` call.
    pub(super) fn exec_service(
        &self,
        conn: &Connection,
        req: pb::CoprocessorServiceRequest,
    ) -> Result<pb::CoprocessorServiceResponse, HBaseException> {
        let call = &req.call;
        let service = call.service_name.as_str();
        if service != SERVICE && !service.ends_with(".AuthenticationService") {
            return Err(HBaseException::new(
                ExceptionClass::UnknownProtocol,
                format!(
                    "No registered coprocessor service found for {service} (ferrobase serves \
                     only hbase.pb.AuthenticationService)"
                ),
            ));
        }
        let (name, value) = match call.method_name.as_str() {
            "GetAuthenticationToken" => (
                "hbase.pb.GetAuthenticationTokenResponse",
                self.get_authentication_token(conn)?.encode_to_vec(),
            ),
            "WhoAmI" => (
                "hbase.pb.WhoAmIResponse",
                pb::WhoAmIResponse {
                    username: Some(conn.user.to_string()),
                    auth_method: Some(conn.auth_method().to_string()),
                }
                .encode_to_vec(),
            ),
            other => {
                return Err(HBaseException::unsupported_method(SERVICE, other));
            }
        };
        Ok(pb::CoprocessorServiceResponse {
            region: req.region,
            value: pb::NameBytesPair {
                name: name.to_string(),
                value: Some(value.into()),
            },
        })
    }

    /// A token for the caller, who must have proved who it is: HBase
    /// issues tokens to Kerberos (here: certificate) and token callers
    /// only, never to a SIMPLE one.
    fn get_authentication_token(
        &self,
        conn: &Connection,
    ) -> Result<pb::GetAuthenticationTokenResponse, HBaseException> {
        let Some(tokens) = &self.tokens else {
            return Err(HBaseException::new(
                ExceptionClass::DoNotRetryIo,
                "No secret manager configured for token authentication \
                 (hbase.security.authentication=simple on this server)",
            ));
        };
        if !conn.is_authenticated() || conn.user.is_empty() {
            return Err(HBaseException::new(
                ExceptionClass::AccessDenied,
                format!(
                    "Token generation only allowed for authenticated clients (a token or a TLS \
                     client certificate); this connection of '{}' used SIMPLE authentication",
                    conn.user
                ),
            ));
        }
        let token = tokens.mint(&conn.user, crate::auth::now_ms());
        tracing::info!(target: "ferrobase::audit", "issued a token for {}", conn.user);
        Ok(pb::GetAuthenticationTokenResponse {
            token: Some(token.to_pb()),
        })
    }
}
