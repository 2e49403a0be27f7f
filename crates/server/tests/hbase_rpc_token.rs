//! Token authentication over HBase's native RPC on a real standalone
//! server and real TCP, with the frames HBase's Java client sends: SASL
//! DIGEST-MD5 with a token minted from the root's key, the token's user
//! as the caller permissions are checked for, and every refusal a client
//! can meet (expired, forged, unknown key, SIMPLE and KERBEROS in secure
//! mode) named in the answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod raw_hbase;

use bytes::{Bytes, BytesMut};
use ferrobase_hbase_wire::frame::{self, AuthMethod, DEFAULT_MAX_FRAME};
use ferrobase_hbase_wire::names::{RegionName, TableName};
use ferrobase_hbase_wire::pb;
use ferrobase_hbase_wire::sasl::{self, ServerReply};
use ferrobase_server::auth::{TokenAuthority, TokenKey};
use ferrobase_storage::fs::LocalFs;
use ferrobase_types::{RowMutation, Settings};
use prost::Message;
use raw_hbase::RawConn;

const DENIED: &str = "org.apache.hadoop.hbase.security.AccessDeniedException";
const INVALID_TOKEN: &str = "org.apache.hadoop.security.token.SecretManager$InvalidToken";

fn secure() -> Settings {
    Settings {
        security_authentication: "kerberos".into(),
        security_authorization: true,
        superuser: "admin".into(),
        client_user: "admin".into(),
        ..common::settings()
    }
}

fn get(region: &pb::RegionSpecifier) -> pb::GetRequest {
    pb::GetRequest {
        region: region.clone(),
        get: pb::Get {
            row: Bytes::from_static(b"r1"),
            ..Default::default()
        },
    }
}

fn exec(method: &str) -> pb::CoprocessorServiceRequest {
    pb::CoprocessorServiceRequest {
        region: RegionName::meta().specifier(),
        call: pb::CoprocessorServiceCall {
            row: Bytes::new(),
            service_name: "hbase.pb.AuthenticationService".into(),
            method_name: method.into(),
            request: Bytes::new(),
        },
    }
}

fn exception_class(r: &frame::ResponseFrame) -> (String, String) {
    let e = r.header.exception.clone().unwrap_or_default();
    (
        e.exception_class_name.unwrap_or_default(),
        e.stack_trace.unwrap_or_default(),
    )
}

/// The SASL reply a DIGEST preamble plus `tokens` gets before the close.
async fn sasl_refusal(addr: std::net::SocketAddr, auth: AuthMethod) -> (String, String) {
    let mut out = BytesMut::new();
    frame::encode_preamble(&mut out, auth);
    sasl::encode_client_token(&mut out, b"").unwrap();
    let mut answer = RawConn::exchange_until_closed(addr, &out).await;
    match sasl::decode_server_reply(&mut answer).unwrap() {
        Some(ServerReply::Error { class, message }) => (class, message),
        other => panic!("expected a SASL error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_authenticate_and_the_token_user_is_the_caller() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), secure()).await;
    conn.admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    conn.table("t")
        .put(RowMutation::new("r1").put("f", "c", "v"))
        .await
        .unwrap();
    let id = conn.admin().describe("t").await.unwrap().regions[0].region_id;
    let region = RegionName::new(&TableName::parse("t").unwrap(), b"", id).specifier();

    // Minted from the key the server created under the root, as
    // `ferrobase token create` does.
    let authority = TokenAuthority::open(
        &LocalFs::new(dir.path()),
        ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID,
        &secure(),
    )
    .unwrap();
    let now = ferrobase_server::auth::now_ms();
    let bob_token = authority.mint("bob", now);
    let mut bob = RawConn::connect_with_token(
        server.addr(),
        "ClientService",
        &bob_token.identifier,
        &bob_token.password,
    )
    .await
    .unwrap();
    // Permissions are checked for the token's user.
    let (class, text) = exception_class(&bob.call("Get", &get(&region)).await);
    assert_eq!(class, DENIED);
    assert!(text.contains("'bob'"), "{text}");
    let who: pb::CoprocessorServiceResponse = bob
        .call("ExecService", &exec("WhoAmI"))
        .await
        .decode_message()
        .unwrap();
    let who = pb::WhoAmIResponse::decode(who.value.value.unwrap()).unwrap();
    assert_eq!(who.username.as_deref(), Some("bob"));
    assert_eq!(who.auth_method.as_deref(), Some("TOKEN"));

    // The superuser, with a token too, grants bob READ; bob now reads.
    let admin_token = authority.mint("admin", now);
    let mut admin = RawConn::connect_with_token(
        server.addr(),
        "MasterService",
        &admin_token.identifier,
        &admin_token.password,
    )
    .await
    .unwrap();
    let grant = pb::GrantRequest {
        user_permission: pb::UserPermission {
            user: Bytes::from_static(b"bob"),
            permission: pb::Permission {
                r#type: pb::permission::Type::Table as i32,
                table_permission: Some(pb::TablePermission {
                    table_name: Some(TableName::parse("t").unwrap().to_pb()),
                    action: vec![pb::permission::Action::Read as i32],
                    ..Default::default()
                }),
                ..Default::default()
            },
        },
        merge_existing_permissions: None,
    };
    let caps: pb::SecurityCapabilitiesResponse = admin
        .call(
            "getSecurityCapabilities",
            &pb::SecurityCapabilitiesRequest {},
        )
        .await
        .decode_message()
        .unwrap();
    use pb::security_capabilities_response::Capability;
    assert_eq!(
        caps.capabilities,
        [
            Capability::SecureAuthentication as i32,
            Capability::Authorization as i32
        ]
    );
    let r = admin.call("Grant", &grant).await;
    assert!(r.header.exception.is_none(), "{:?}", exception_class(&r));
    let got: pb::GetResponse = bob
        .call("Get", &get(&region))
        .await
        .decode_message()
        .unwrap();
    assert_eq!(got.result.unwrap().associated_cell_count, Some(1));

    // A token caller may ask for a new token (TokenUtil.obtainToken), and
    // that one authenticates too.
    let issued: pb::CoprocessorServiceResponse = bob
        .call("ExecService", &exec("GetAuthenticationToken"))
        .await
        .decode_message()
        .unwrap();
    let issued = pb::GetAuthenticationTokenResponse::decode(issued.value.value.unwrap())
        .unwrap()
        .token
        .unwrap();
    assert_eq!(
        issued.service.as_deref(),
        Some(ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID.as_bytes())
    );
    let mut again = RawConn::connect_with_token(
        server.addr(),
        "ClientService",
        &issued.identifier.unwrap(),
        &issued.password.unwrap(),
    )
    .await
    .unwrap();
    let got: pb::GetResponse = again
        .call("Get", &get(&region))
        .await
        .decode_message()
        .unwrap();
    assert_eq!(got.result.unwrap().associated_cell_count, Some(1));
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tokens_simple_and_kerberos_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _conn) = common::start_on(dir.path(), secure()).await;
    let addr = server.addr();
    let now = ferrobase_server::auth::now_ms();
    let fs = LocalFs::new(dir.path());

    // Expired: issued long enough ago that its lifetime has passed.
    let authority = TokenAuthority::open(
        &fs,
        ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID,
        &secure(),
    )
    .unwrap();
    let old = authority.mint("bob", now - 8 * 24 * 3600 * 1000);
    let (class, message) =
        RawConn::connect_with_token(addr, "ClientService", &old.identifier, &old.password)
            .await
            .err()
            .unwrap();
    assert_eq!(class, INVALID_TOKEN);
    assert!(message.starts_with("Token has expired"), "{message}");

    // Forged: the right identifier with a password of another key.
    let forger = TokenAuthority::new(
        TokenKey::new(1, &[1; 64]),
        ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID,
        60_000,
    );
    let forged = forger.mint("admin", now);
    let (class, message) =
        RawConn::connect_with_token(addr, "ClientService", &forged.identifier, &forged.password)
            .await
            .err()
            .unwrap();
    assert_eq!(class, "javax.security.sasl.SaslException");
    assert!(message.contains("does not match"), "{message}");

    // A key this cluster never had.
    let stranger = TokenAuthority::new(
        TokenKey::new(9, &[1; 64]),
        ferrobase_server::hbase_rpc::STANDALONE_CLUSTER_ID,
        60_000,
    );
    let t = stranger.mint("admin", now);
    let (class, message) =
        RawConn::connect_with_token(addr, "ClientService", &t.identifier, &t.password)
            .await
            .err()
            .unwrap();
    assert_eq!(class, INVALID_TOKEN);
    assert!(
        message.contains("Unknown master key for token (id=9)"),
        "{message}"
    );

    // KERBEROS is refused in SASL's own error format.
    let (class, message) = sasl_refusal(addr, AuthMethod::Kerberos).await;
    assert_eq!(class, "javax.security.sasl.SaslException");
    assert!(
        message.contains("GSSAPI/Kerberos is not supported"),
        "{message}"
    );

    // SIMPLE, whatever name it claims, is refused on the connection.
    let mut out = BytesMut::new();
    frame::encode_preamble(&mut out, AuthMethod::Simple);
    let header = pb::ConnectionHeader {
        user_info: Some(pb::UserInformation {
            effective_user: "admin".into(),
            real_user: None,
        }),
        service_name: Some("ClientService".into()),
        ..Default::default()
    };
    frame::encode_connection_header(&mut out, &header).unwrap();
    let mut answer = RawConn::exchange_until_closed(addr, &out).await;
    let r = frame::decode_response(&mut answer, DEFAULT_MAX_FRAME)
        .unwrap()
        .unwrap();
    assert_eq!(r.call_id(), frame::NO_CALL_ID);
    let (class, text) = exception_class(&r);
    assert_eq!(
        class,
        "org.apache.hadoop.hbase.ipc.FatalConnectionException"
    );
    assert!(text.contains("Authentication is required"), "{text}");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simple_servers_tell_token_clients_to_fall_back_and_issue_no_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _conn) = common::start_on(dir.path(), common::settings()).await;
    let mut out = BytesMut::new();
    frame::encode_preamble(&mut out, AuthMethod::Digest);
    sasl::encode_client_token(&mut out, b"").unwrap();
    let header = pb::ConnectionHeader {
        user_info: Some(pb::UserInformation {
            effective_user: "carol".into(),
            real_user: None,
        }),
        service_name: Some("ClientService".into()),
        ..Default::default()
    };
    frame::encode_connection_header(&mut out, &header).unwrap();
    frame::encode_request(&mut out, 1, "ExecService", &exec("WhoAmI"), None).unwrap();
    frame::encode_request(
        &mut out,
        2,
        "ExecService",
        &exec("GetAuthenticationToken"),
        None,
    )
    .unwrap();
    let mut s = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    s.write_all(&out).await.unwrap();
    let mut buf = BytesMut::new();
    let reply = loop {
        if let Some(r) = sasl::decode_server_reply(&mut buf).unwrap() {
            break r;
        }
        assert!(s.read_buf(&mut buf).await.unwrap() > 0);
    };
    assert_eq!(reply, ServerReply::SwitchToSimple);
    let mut answers = Vec::new();
    while answers.len() < 2 {
        match frame::decode_response(&mut buf, DEFAULT_MAX_FRAME).unwrap() {
            Some(r) => answers.push(r),
            None => assert!(s.read_buf(&mut buf).await.unwrap() > 0),
        }
    }
    answers.sort_by_key(|r| r.call_id());
    let who: pb::CoprocessorServiceResponse = answers[0].decode_message().unwrap();
    let who = pb::WhoAmIResponse::decode(who.value.value.unwrap()).unwrap();
    assert_eq!(who.username.as_deref(), Some("carol"));
    assert_eq!(who.auth_method.as_deref(), Some("SIMPLE"));
    let (_, text) = exception_class(&answers[1]);
    assert!(text.contains("No secret manager configured"), "{text}");
    server.stop().await.unwrap();
}
