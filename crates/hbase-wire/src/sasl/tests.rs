use super::digest_md5::{DigestMd5Client, DigestMd5Server, ServerStep, parse_directives};
use super::*;

/// RFC 2831 §4, the IMAP example: the server's challenge nonce, the
/// client's cnonce and the values both sides compute.
const RFC_USER: &str = "chris";
const RFC_REALM: &str = "elwood.innosoft.com";
const RFC_PASSWORD: &[u8] = b"secret";
const RFC_NONCE: &str = "OA6MG9tEQGm2hh";
const RFC_CNONCE: &str = "OA6MHXh6VqTrRk";
const RFC_RESPONSE: &str = "d388dad90d4bbd760a152321f2143af7";
const RFC_RSPAUTH: &str = "ea40f60335c427b5527b84dbabcdfffd";

fn rfc_response(extra: &str) -> Vec<u8> {
    format!(
        "charset=utf-8,username=\"chris\",realm=\"elwood.innosoft.com\",nonce=\"OA6MG9tEQGm2hh\",\
         nc=00000001,cnonce=\"OA6MHXh6VqTrRk\",digest-uri=\"imap/elwood.innosoft.com\",\
         response={RFC_RESPONSE},qop=auth{extra}"
    )
    .into_bytes()
}

fn rfc_server() -> DigestMd5Server {
    let mut s = DigestMd5Server::new(RFC_REALM, RFC_NONCE).unwrap();
    assert!(matches!(
        s.step(b"", |_| unreachable!()).unwrap(),
        ServerStep::Challenge(_)
    ));
    s
}

fn password(user: &str) -> Result<Vec<u8>, SaslError> {
    assert_eq!(user, RFC_USER);
    Ok(RFC_PASSWORD.to_vec())
}

#[test]
fn server_accepts_the_rfc_2831_example_and_answers_its_rspauth() {
    let mut s = rfc_server();
    let step = s.step(&rfc_response(""), password).unwrap();
    assert_eq!(
        step,
        ServerStep::Complete {
            reply: format!("rspauth={RFC_RSPAUTH}").into_bytes(),
            username: RFC_USER.into(),
        }
    );
    assert!(s.is_complete());
    assert_eq!(
        s.step(b"again", password).unwrap_err(),
        SaslError::State("a token arrived after authentication completed")
    );
}

#[test]
fn client_computes_the_rfc_2831_example() {
    let mut c = DigestMd5Client::new(
        RFC_USER,
        RFC_PASSWORD,
        RFC_CNONCE,
        "imap/elwood.innosoft.com",
    );
    let challenge = b"realm=\"elwood.innosoft.com\",nonce=\"OA6MG9tEQGm2hh\",qop=\"auth\",\
                      algorithm=md5-sess,charset=utf-8";
    let response = String::from_utf8(c.respond(challenge).unwrap()).unwrap();
    assert!(
        response.contains(&format!("response={RFC_RESPONSE}")),
        "{response}"
    );
    c.verify(format!("rspauth={RFC_RSPAUTH}").as_bytes())
        .unwrap();
    assert_eq!(
        c.verify(b"rspauth=00000000000000000000000000000000")
            .unwrap_err(),
        SaslError::BadServerProof
    );
}

#[test]
fn client_and_server_agree_with_hbase_names() {
    // What HBase's client sends: base64 identifier as user name, base64
    // password, realm and server name "default", no protocol.
    let mut server = DigestMd5Server::new(DEFAULT_REALM, "bm9uY2Vub25jZQ==").unwrap();
    let ServerStep::Challenge(challenge) = server.step(b"", |_| unreachable!()).unwrap() else {
        panic!("expected a challenge");
    };
    assert_eq!(
        challenge,
        b"realm=\"default\",nonce=\"bm9uY2Vub25jZQ==\",qop=\"auth\",charset=utf-8,algorithm=md5-sess"
    );
    let user = base64_encode(b"\x00\x00\x00\x02\x08\x00");
    let pass = base64_encode(&[7u8; 20]);
    let mut client = DigestMd5Client::new(&user, pass.as_bytes(), "Y25vbmNl", "null/default");
    let response = client.respond(&challenge).unwrap();
    let step = server
        .step(&response, |u| {
            assert_eq!(u, user);
            Ok(pass.clone().into_bytes())
        })
        .unwrap();
    let ServerStep::Complete { reply, username } = step else {
        panic!("expected completion");
    };
    assert_eq!(username, user);
    client.verify(&reply).unwrap();
}

#[test]
fn wrong_password_is_refused() {
    let mut s = rfc_server();
    assert_eq!(
        s.step(&rfc_response(""), |_| Ok(b"guess".to_vec()))
            .unwrap_err(),
        SaslError::BadResponse
    );
}

#[test]
fn credential_refusals_pass_through_unchanged() {
    let mut s = rfc_server();
    let e = s
        .step(&rfc_response(""), |_| {
            Err(SaslError::InvalidToken("Token has expired".into()))
        })
        .unwrap_err();
    assert_eq!(e.to_string(), "Token has expired");
}

#[test]
fn integrity_and_privacy_are_refused_by_name() {
    for qop in ["auth-int", "auth-conf"] {
        let mut s = rfc_server();
        let body = String::from_utf8(rfc_response("")).unwrap();
        let body = body.replace("qop=auth", &format!("qop={qop}"));
        let e = s.step(body.as_bytes(), password).unwrap_err();
        assert_eq!(e, SaslError::QopNotSupported { qop: qop.into() });
        assert!(
            e.to_string()
                .contains("hbase.rpc.protection=authentication")
        );
    }
}

#[test]
fn response_checks_name_the_directive() {
    let cases: &[(&str, &str, &str)] = &[
        ("nonce=\"OA6MG9tEQGm2hh\"", "nonce=\"other\"", "nonce=other"),
        ("realm=\"elwood.innosoft.com\"", "realm=\"x\"", "realm=x"),
        ("nc=00000001", "nc=00000002", "nc=00000002"),
        (
            "response=d388dad90d4bbd760a152321f2143af7",
            "response=zz",
            "response=zz",
        ),
        ("charset=utf-8", "charset=latin1", "charset=latin1"),
        ("username=\"chris\",", "", "username directive is missing"),
        (
            "cnonce=\"OA6MHXh6VqTrRk\",",
            "",
            "cnonce directive is missing",
        ),
    ];
    for (from, to, expected) in cases {
        let mut s = rfc_server();
        let body = String::from_utf8(rfc_response(""))
            .unwrap()
            .replacen(from, to, 1);
        let e = s.step(body.as_bytes(), password).unwrap_err();
        assert!(e.to_string().contains(expected), "{from} -> {to}: {e}");
    }
    let mut s = rfc_server();
    let e = s
        .step(&rfc_response(",username=\"eve\""), password)
        .unwrap_err();
    assert_eq!(
        e,
        SaslError::Duplicate {
            what: "DIGEST-MD5 response",
            name: "username".into()
        }
    );
    let mut s = rfc_server();
    let e = s
        .step(&rfc_response(",authzid=\"root\""), password)
        .unwrap_err();
    assert!(e.to_string().contains("authzid=root"), "{e}");
}

#[test]
fn a_response_before_the_challenge_is_refused() {
    let mut s = DigestMd5Server::new(RFC_REALM, RFC_NONCE).unwrap();
    assert!(matches!(
        s.step(&rfc_response(""), password),
        Err(SaslError::State(_))
    ));
}

#[test]
fn the_directive_parser_is_strict_and_bounded() {
    let list = parse_directives("t", b" a = \"x\\\"y\" ,, B=tok ,c=\"\"").unwrap();
    let pairs: Vec<_> = list
        .iter()
        .map(|d| (d.name.as_str(), d.value.as_str()))
        .collect();
    assert_eq!(pairs, [("a", "x\"y"), ("b", "tok"), ("c", "")]);
    for (bad, reason) in [
        (&b"a=\"open"[..], "unterminated quoted string"),
        (b"a=\"x\\", "unterminated quoted string"),
        (b"a", "expected '='"),
        (b"=x", "expected a directive name"),
        (b"a=", "expected a value"),
        (b"a=x y=z", "expected ','"),
        (b"a=\"\x01\"", "control character"),
        (b"a=\"\xff\"", "not UTF-8"),
    ] {
        let e = parse_directives("t", bad).unwrap_err();
        assert!(e.to_string().contains(reason), "{bad:?}: {e}");
    }
    let huge = vec![b'a'; digest_md5::MAX_MESSAGE + 1];
    assert!(matches!(
        parse_directives("t", &huge),
        Err(SaslError::TooLarge { .. })
    ));
    let many = "a=b,".repeat(100);
    assert!(
        parse_directives("t", many.as_bytes())
            .unwrap_err()
            .to_string()
            .contains("too many directives")
    );
}

#[test]
fn nonces_with_quotes_are_refused() {
    assert!(DigestMd5Server::new("default", "a\"b").is_err());
    assert!(DigestMd5Server::new("default", "").is_err());
}

#[test]
fn frames_round_trip_in_hbase_layout() {
    let mut out = BytesMut::new();
    encode_client_token(&mut out, b"").unwrap();
    encode_client_token(&mut out, b"abc").unwrap();
    assert_eq!(&out[..], b"\x00\x00\x00\x00\x00\x00\x00\x03abc");
    assert_eq!(
        decode_client_token(&mut out, 16).unwrap(),
        Some(Bytes::new())
    );
    assert_eq!(
        decode_client_token(&mut out, 16).unwrap(),
        Some(Bytes::from_static(b"abc"))
    );
    let mut big = BytesMut::from(&b"\x00\x01\x00\x01"[..]);
    assert!(matches!(
        decode_client_token(&mut big, MAX_CLIENT_TOKEN),
        Err(SaslError::TooLarge { len: 65537, .. })
    ));
    let mut negative = BytesMut::from(&b"\xff\xff\xff\xa8"[..]);
    assert!(decode_client_token(&mut negative, MAX_CLIENT_TOKEN).is_err());

    let mut replies = BytesMut::new();
    encode_success(&mut replies, b"rspauth=1").unwrap();
    encode_switch_to_simple(&mut replies);
    encode_error(
        &mut replies,
        "org.apache.hadoop.security.token.SecretManager$InvalidToken",
        "Token has expired",
    )
    .unwrap();
    assert_eq!(&replies[..12], b"\x00\x00\x00\x00\x00\x00\x00\x09rspa");
    assert_eq!(
        decode_server_reply(&mut replies).unwrap(),
        Some(ServerReply::Token(Bytes::from_static(b"rspauth=1")))
    );
    assert_eq!(
        decode_server_reply(&mut replies).unwrap(),
        Some(ServerReply::SwitchToSimple)
    );
    assert_eq!(
        decode_server_reply(&mut replies).unwrap(),
        Some(ServerReply::Error {
            class: "org.apache.hadoop.security.token.SecretManager$InvalidToken".into(),
            message: "Token has expired".into(),
        })
    );
    assert!(replies.is_empty());
}

#[test]
fn partial_replies_wait_and_garbage_is_an_error() {
    let mut full = BytesMut::new();
    encode_error(&mut full, "C", "m").unwrap();
    for cut in 0..full.len() {
        let mut part = BytesMut::from(&full[..cut]);
        assert_eq!(decode_server_reply(&mut part).unwrap(), None, "cut {cut}");
    }
    let mut bad = BytesMut::from(&b"\x00\x00\x00\x07\x00\x00\x00\x00"[..]);
    assert!(decode_server_reply(&mut bad).is_err());
}

#[test]
fn base64_matches_the_standard_alphabet_with_padding() {
    for (raw, text) in [
        (&b""[..], ""),
        (b"f", "Zg=="),
        (b"fo", "Zm8="),
        (b"foo", "Zm9v"),
        (b"\xfb\xff", "+/8="),
    ] {
        assert_eq!(base64_encode(raw), text);
        assert_eq!(base64_decode(text).unwrap(), raw);
    }
    for bad in ["Zg=", "Z===", "Zg=a", "Z*==", "=Zg="] {
        assert!(base64_decode(bad).is_err(), "{bad}");
    }
}
