//! Unit tests of the parent module.

use super::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// A proptest runner with a fixed seed: the same cases on every run.
fn seeded(cases: u32) -> TestRunner {
    TestRunner::new_with_rng(
        Config {
            cases,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    )
}

fn buf(bytes: &[u8]) -> BytesMut {
    BytesMut::from(bytes)
}

#[test]
fn golden_preamble() {
    let mut out = BytesMut::new();
    encode_preamble(&mut out, AuthMethod::Simple);
    // 'H' 'B' 'a' 's', version 0, SIMPLE = 80 = 0x50
    assert_eq!(&out[..], &[0x48, 0x42, 0x61, 0x73, 0x00, 0x50]);
    assert_eq!(
        decode_preamble(&mut out).unwrap(),
        Some(Preamble::Rpc(AuthMethod::Simple))
    );
    assert!(out.is_empty());
    let mut reg = buf(b"Regist");
    assert_eq!(decode_preamble(&mut reg).unwrap(), Some(Preamble::Registry));
    let mut sec = buf(b"Securi");
    assert_eq!(decode_preamble(&mut sec).unwrap(), Some(Preamble::Security));
}

#[test]
fn golden_connection_header() {
    let header = pb::ConnectionHeader {
        user_info: Some(pb::UserInformation {
            effective_user: "u".into(),
            real_user: None,
        }),
        service_name: Some("ClientService".into()),
        cell_block_codec_class: Some(crate::cellblock::KEY_VALUE_CODEC.into()),
        ..Default::default()
    };
    let mut out = BytesMut::new();
    encode_connection_header(&mut out, &header).unwrap();
    let mut expected = vec![0, 0, 0, 65]; // 4-byte length: 5 + 15 + 45
    expected.extend_from_slice(&[0x0a, 3, 0x0a, 1, b'u']); // field 1: UserInformation{1: "u"}
    expected.extend_from_slice(&[0x12, 13]); // field 2: 13-byte service name
    expected.extend_from_slice(b"ClientService");
    expected.extend_from_slice(&[0x1a, 43]); // field 3: 43-byte codec class
    expected.extend_from_slice(b"org.apache.hadoop.hbase.codec.KeyValueCodec");
    assert_eq!(&out[..], &expected[..]);
    assert_eq!(
        decode_connection_header(&mut out, DEFAULT_MAX_FRAME).unwrap(),
        Some(header)
    );
}

#[test]
fn golden_request_frame() {
    let mut out = BytesMut::new();
    encode_request(&mut out, 1, "Get", &pb::EmptyMsg {}, None).unwrap();
    let expected: &[u8] = &[
        0, 0, 0, 11, // total length: 1 + 9 + 1
        9,  // varint length of the RequestHeader
        0x08, 1, // call_id = 1
        0x1a, 3, b'G', b'e', b't', // method_name = "Get"
        0x20, 1, // request_param = true
        0, // the (empty) param, varint-delimited
    ];
    assert_eq!(&out[..], expected);
    let call = decode_request(&mut out, DEFAULT_MAX_FRAME)
        .unwrap()
        .unwrap();
    assert_eq!(call.call_id(), 1);
    assert_eq!(call.method(), "Get");
    assert_eq!(call.param.as_deref(), Some(&[][..]));
    assert_eq!(call.cell_block, None);
}

#[test]
fn golden_request_with_cell_block() {
    let mut out = BytesMut::new();
    encode_request(&mut out, 2, "Multi", &pb::EmptyMsg {}, Some(b"CELLS")).unwrap();
    let expected: &[u8] = &[
        0, 0, 0, 22, // total: 1 + 15 + 1 + 5
        15, // header length: 2 + 7 + 2 + 4
        0x08, 2, // call_id = 2
        0x1a, 5, b'M', b'u', b'l', b't', b'i', // method_name = "Multi"
        0x20, 1, // request_param = true
        0x2a, 2, 0x08, 5, // cell_block_meta = { length: 5 }
        0, // empty param
        b'C', b'E', b'L', b'L', b'S', // the cell block
    ];
    assert_eq!(&out[..], expected);
    let call = decode_request(&mut out, DEFAULT_MAX_FRAME)
        .unwrap()
        .unwrap();
    assert_eq!(call.cell_block.as_deref(), Some(&b"CELLS"[..]));
}

#[test]
fn golden_response_frames() {
    let mut out = BytesMut::new();
    encode_response(&mut out, 7, &pb::GetResponse::default(), None).unwrap();
    // total 4: header {call_id: 7} delimited (3 bytes), empty message (1)
    assert_eq!(&out[..], &[0, 0, 0, 4, 2, 0x08, 7, 0]);
    let r = decode_response(&mut out, DEFAULT_MAX_FRAME)
        .unwrap()
        .unwrap();
    assert_eq!(r.call_id(), 7);
    assert_eq!(
        r.decode_message::<pb::GetResponse>().unwrap(),
        pb::GetResponse::default()
    );

    let e = pb::ExceptionResponse {
        exception_class_name: Some("X".into()),
        do_not_retry: Some(true),
        ..Default::default()
    };
    encode_exception(&mut out, NO_CALL_ID, &e).unwrap();
    let expected: &[u8] = &[
        0, 0, 0, 14, // total length
        13, // header length
        0x08, 0xff, 0xff, 0xff, 0xff, 0x0f, // call_id = 0xFFFFFFFF (HBase's -1)
        0x12, 5, // exception: 5 bytes
        0x0a, 1, b'X', // exception_class_name = "X"
        0x28, 1, // do_not_retry = true
    ];
    assert_eq!(&out[..], expected);
    let r = decode_response(&mut out, DEFAULT_MAX_FRAME)
        .unwrap()
        .unwrap();
    assert_eq!(r.message, None);
    assert_eq!(
        r.decode_message::<pb::GetResponse>().unwrap_err().unwrap(),
        e
    );
}

#[test]
fn response_head_then_separate_block_equals_one_piece() {
    let msg = pb::ScanResponse {
        cells_per_result: vec![2],
        scanner_id: Some(9),
        ..Default::default()
    };
    let mut one = BytesMut::new();
    encode_response(&mut one, 3, &msg, Some(b"0123456789")).unwrap();
    let mut two = BytesMut::new();
    encode_response_head(&mut two, 3, &msg, 10).unwrap();
    two.extend_from_slice(b"0123456789");
    assert_eq!(one, two);
    let r = decode_response(&mut one, DEFAULT_MAX_FRAME)
        .unwrap()
        .unwrap();
    assert_eq!(r.decode_message::<pb::ScanResponse>().unwrap(), msg);
    assert_eq!(r.cell_block.as_deref(), Some(&b"0123456789"[..]));
}

#[test]
fn server_decoder_walks_a_connection_byte_by_byte() {
    let mut wire = BytesMut::new();
    encode_preamble(&mut wire, AuthMethod::Simple);
    let header = pb::ConnectionHeader {
        service_name: Some("MasterService".into()),
        ..Default::default()
    };
    encode_connection_header(&mut wire, &header).unwrap();
    encode_request(
        &mut wire,
        1,
        "IsMasterRunning",
        &pb::IsMasterRunningRequest {},
        None,
    )
    .unwrap();
    let req = pb::GetTableStateRequest {
        table_name: crate::names::TableName::parse("ns:t").unwrap().to_pb(),
    };
    encode_request(&mut wire, 2, "GetTableState", &req, None).unwrap();

    let mut d = ServerDecoder::default();
    let mut buf = BytesMut::new();
    let mut events = Vec::new();
    for b in wire.iter() {
        buf.extend_from_slice(&[*b]);
        while let Some(e) = d.decode(&mut buf).unwrap() {
            events.push(e);
        }
    }
    assert!(buf.is_empty());
    assert_eq!(events.len(), 3);
    assert_eq!(events[0], ServerEvent::ConnectionHeader(header));
    let ServerEvent::Call(c) = &events[2] else {
        panic!("{:?}", events[2])
    };
    assert_eq!(c.method(), "GetTableState");
    assert_eq!(c.decode_param::<pb::GetTableStateRequest>().unwrap(), req);
    assert!(d.in_calls());
}

#[test]
fn wrong_version_and_auth_are_typed_errors() {
    assert_eq!(
        decode_preamble(&mut buf(b"HBas\x01\x50")).unwrap_err(),
        WireError::UnsupportedVersion { version: 1 }
    );
    assert_eq!(
        decode_preamble(&mut buf(b"HBas\x00\x07")).unwrap_err(),
        WireError::UnsupportedAuth { code: 7 }
    );
    // A SASL method is the server's to accept or refuse: the decoder
    // reports it and reads SASL tokens next.
    let mut d = ServerDecoder::default();
    assert_eq!(
        d.decode(&mut buf(b"HBas\x00\x51")).unwrap(),
        Some(ServerEvent::SaslPreamble(AuthMethod::Kerberos))
    );
    assert!(d.in_sasl());
    let err = ServerDecoder::default()
        .decode(&mut buf(b"PRI * HTTP/2.0"))
        .unwrap_err();
    assert_eq!(err, WireError::BadMagic { found: *b"PRI " });
    assert!(
        err.to_string()
            .contains("Expected HEADER=HBas but received HEADER=PRI ")
    );
    assert_eq!(
        err.exception().class,
        crate::ExceptionClass::FatalConnection
    );
    assert_eq!(
        WireError::UnsupportedVersion { version: 1 }
            .exception()
            .class,
        crate::ExceptionClass::WrongVersion
    );
    // Fewer than six bytes: wait.
    assert_eq!(decode_preamble(&mut buf(b"HBa")).unwrap(), None);
}

#[test]
fn two_gigabyte_lengths_are_refused_without_allocating() {
    for len in [0x8000_0000u32, 0xffff_ffff, (DEFAULT_MAX_FRAME + 1) as u32] {
        let mut b = BytesMut::with_capacity(16);
        b.extend_from_slice(&len.to_be_bytes());
        let cap = b.capacity();
        let err = decode_request(&mut b, DEFAULT_MAX_FRAME).unwrap_err();
        assert!(
            matches!(err, WireError::FrameTooLarge { len: l, .. } if l == u64::from(len)),
            "{err}"
        );
        assert_eq!(err.exception().class, crate::ExceptionClass::RequestTooBig);
        assert_eq!(b.capacity(), cap, "nothing was reserved");
        assert!(decode_connection_header(&mut b.clone(), DEFAULT_MAX_FRAME).is_err());
        assert!(decode_response(&mut b.clone(), DEFAULT_MAX_FRAME).is_err());
    }
    // Under a smaller configured maximum.
    let mut b = buf(&[0, 0, 1, 0]);
    assert!(matches!(
        decode_request(&mut b, 255),
        Err(WireError::FrameTooLarge {
            len: 256,
            max: 255,
            ..
        })
    ));
}

#[test]
fn lengths_inside_a_frame_are_checked() {
    // Header length 100 in a 3-byte frame.
    let err = decode_request(&mut buf(&[0, 0, 0, 3, 100, 0x08, 1]), DEFAULT_MAX_FRAME).unwrap_err();
    assert_eq!(
        err,
        WireError::Truncated {
            what: "request header",
            needed: 100,
            available: 2
        }
    );
    // A cell block announced longer than what follows.
    let header = pb::RequestHeader {
        call_id: Some(1),
        method_name: Some("Multi".into()),
        request_param: Some(true),
        cell_block_meta: Some(pb::CellBlockMeta { length: Some(100) }),
        ..Default::default()
    };
    let mut body = BytesMut::new();
    encode_delimited_into(&header, &mut body);
    body.extend_from_slice(&[0]); // empty param
    body.extend_from_slice(&[1; 10]); // 10 of the 100 cell block bytes
    let mut frame = BytesMut::new();
    frame.put_u32(body.len() as u32);
    frame.extend_from_slice(&body);
    let err = decode_request(&mut frame, DEFAULT_MAX_FRAME).unwrap_err();
    assert!(
        matches!(
            err,
            WireError::Truncated {
                what: "cell block",
                needed: 100,
                available: 10
            }
        ),
        "{err}"
    );
    // Bytes after everything the header announced.
    let mut out = BytesMut::new();
    encode_request(&mut out, 1, "Get", &pb::EmptyMsg {}, None).unwrap();
    out[3] += 2;
    out.extend_from_slice(b"xx");
    assert!(matches!(
        decode_request(&mut out, DEFAULT_MAX_FRAME),
        Err(WireError::TrailingBytes { count: 2, .. })
    ));
    // A varint that never ends.
    let err = decode_request(&mut buf(&[0, 0, 0, 2, 0xff, 0xff]), DEFAULT_MAX_FRAME).unwrap_err();
    assert!(matches!(err, WireError::BadVarint { .. }), "{err}");
    // A missing parameter is not a framing error.
    let mut out = BytesMut::new();
    let h = pb::RequestHeader {
        call_id: Some(4),
        method_name: Some("Get".into()),
        ..Default::default()
    };
    encode_frame_head::<_, pb::EmptyMsg>(&mut out, &h, None, 0, "request").unwrap();
    let call = decode_request(&mut out, DEFAULT_MAX_FRAME)
        .unwrap()
        .unwrap();
    let err = call.decode_param::<pb::GetRequest>().unwrap_err();
    assert!(!err.is_fatal());
    assert!(err.to_string().contains("call 4 (Get)"), "{err}");
}

#[test]
fn oversize_request_still_shows_its_call_id() {
    let mut out = BytesMut::new();
    encode_request(&mut out, 42, "Multi", &pb::EmptyMsg {}, Some(&[0; 64])).unwrap();
    out[0] = 0x7f; // claim a huge length
    assert!(decode_request(&mut out.clone(), 1024).is_err());
    assert_eq!(peek_request_header(&out).unwrap().call_id, Some(42));
    assert_eq!(peek_request_header(&out[..3]), None);
}

#[test]
fn protocol_detection() {
    for p in [&b""[..], b"H", b"HBa", b"HBas\x00P", b"Reg", b"Securi"] {
        assert!(looks_like_hbase(p), "{p:?}");
    }
    for p in [&b"PRI "[..], b"GET /", b"HBx", b"\x16\x03"] {
        assert!(!looks_like_hbase(p), "{p:?}");
    }
}

#[test]
fn registry_preamble_ends_the_connection() {
    let mut d = ServerDecoder::default();
    let mut b = buf(b"RegistHBas\x00\x50");
    assert_eq!(
        d.decode(&mut b).unwrap(),
        Some(ServerEvent::RegistryPreamble)
    );
    assert_eq!(d.decode(&mut b).unwrap(), None);
    let mut d = ServerDecoder::default();
    let mut b = buf(b"SecuriHBas\x00\x50");
    assert_eq!(
        d.decode(&mut b).unwrap(),
        Some(ServerEvent::SecurityPreamble)
    );
    assert_eq!(d.decode(&mut b).unwrap(), None);
    assert!(b.is_empty(), "the real preamble follows");
}

#[test]
fn frames_round_trip() {
    let strategy = (
        any::<u32>(),
        "[A-Za-z]{0,20}",
        proptest::collection::vec(any::<u8>(), 0..300),
        proptest::option::of(proptest::collection::vec(any::<u8>(), 1..300)),
        any::<bool>(),
    );
    seeded(256)
        .run(&strategy, |(call_id, method, param, block, exception)| {
            let param_msg = pb::BytesBytesPair {
                first: Bytes::from(param.clone()),
                second: Bytes::from_static(b"x"),
            };
            let mut wire = BytesMut::new();
            encode_request(&mut wire, call_id, &method, &param_msg, block.as_deref()).unwrap();
            // Split at every point a read could end.
            let cut = wire.len() / 2;
            let mut b = BytesMut::from(&wire[..cut]);
            prop_assert_eq!(decode_request(&mut b, DEFAULT_MAX_FRAME).unwrap(), None);
            b.extend_from_slice(&wire[cut..]);
            let call = decode_request(&mut b, DEFAULT_MAX_FRAME).unwrap().unwrap();
            prop_assert!(b.is_empty());
            prop_assert_eq!(call.call_id(), call_id);
            prop_assert_eq!(call.method(), method.as_str());
            prop_assert_eq!(
                call.decode_param::<pb::BytesBytesPair>().unwrap(),
                param_msg.clone()
            );
            prop_assert_eq!(call.cell_block.as_deref(), block.as_deref());

            let mut out = BytesMut::new();
            if exception {
                let e = crate::HBaseException::new(
                    crate::ExceptionClass::TableNotFound,
                    method.clone(),
                );
                encode_exception(&mut out, call_id, &e.to_response()).unwrap();
            } else {
                encode_response(&mut out, call_id, &param_msg, block.as_deref()).unwrap();
            }
            let r = decode_response(&mut out, DEFAULT_MAX_FRAME)
                .unwrap()
                .unwrap();
            prop_assert_eq!(r.call_id(), call_id);
            if exception {
                let e = r
                    .decode_message::<pb::BytesBytesPair>()
                    .unwrap_err()
                    .unwrap();
                prop_assert_eq!(e.do_not_retry, Some(true));
            } else {
                prop_assert_eq!(r.decode_message::<pb::BytesBytesPair>().unwrap(), param_msg);
                prop_assert_eq!(r.cell_block.as_deref(), block.as_deref());
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn garbage_after_the_magic_never_panics() {
    let strategy = proptest::collection::vec(any::<u8>(), 0..600);
    seeded(2000)
        .run(&strategy, |garbage| {
            let mut b = BytesMut::from(&b"HBas\x00\x50"[..]);
            b.extend_from_slice(&garbage);
            let cap = b.capacity();
            let mut d = ServerDecoder::new(4096);
            // Every unit consumes bytes, so this ends.
            for _ in 0..garbage.len() + 2 {
                match d.decode(&mut b) {
                    Ok(Some(_)) => continue,
                    Ok(None) | Err(_) => break,
                }
            }
            prop_assert!(b.capacity() <= cap);
            // And raw garbage as a response stream.
            let mut r = BytesMut::from(&garbage[..]);
            let _ = decode_response(&mut r, 4096);
            let _ = peek_request_header(&garbage);
            Ok(())
        })
        .unwrap();
}

#[test]
fn digest_preamble_reads_sasl_tokens_then_the_connection_header() {
    let header = pb::ConnectionHeader {
        service_name: Some("ClientService".into()),
        ..Default::default()
    };
    let mut b = buf(b"HBas\x00\x52\x00\x00\x00\x00\x00\x00\x00\x02hi");
    let mut d = ServerDecoder::default();
    assert_eq!(
        d.decode(&mut b).unwrap(),
        Some(ServerEvent::SaslPreamble(AuthMethod::Digest))
    );
    assert_eq!(
        d.decode(&mut b).unwrap(),
        Some(ServerEvent::SaslToken(Bytes::new()))
    );
    assert_eq!(
        d.decode(&mut b).unwrap(),
        Some(ServerEvent::SaslToken(Bytes::from_static(b"hi")))
    );
    assert_eq!(d.decode(&mut b).unwrap(), None);
    // Until the server says the mechanism completed, a header's bytes are
    // read as one more SASL token.
    d.sasl_complete();
    assert!(!d.in_sasl());
    encode_connection_header(&mut b, &header).unwrap();
    assert_eq!(
        d.decode(&mut b).unwrap(),
        Some(ServerEvent::ConnectionHeader(header.clone()))
    );

    // Fallback to SIMPLE: the client's initial token is skipped.
    let mut b = buf(b"HBas\x00\x52\x00\x00\x00\x00");
    encode_connection_header(&mut b, &header).unwrap();
    let mut d = ServerDecoder::default();
    assert!(matches!(
        d.decode(&mut b).unwrap(),
        Some(ServerEvent::SaslPreamble(_))
    ));
    d.sasl_switch_to_simple();
    assert_eq!(
        d.decode(&mut b).unwrap(),
        Some(ServerEvent::ConnectionHeader(header))
    );
}

#[test]
fn an_oversize_sasl_token_is_a_typed_error() {
    let mut b = buf(b"HBas\x00\x52\x7f\xff\xff\xff");
    let mut d = ServerDecoder::default();
    d.decode(&mut b).unwrap();
    let e = d.decode(&mut b).unwrap_err();
    assert!(
        e.to_string().contains("SASL token of 2147483647 bytes"),
        "{e}"
    );
}
