//! Feeds arbitrary bytes to the SASL side of HBase RPC: as client tokens
//! after a DIGEST preamble (the server decoder's SASL state), as a
//! DIGEST-MD5 digest-response to a server that sent its challenge, as a
//! challenge to a client, as server replies, and as base64 and token
//! identifiers and token storage files. Every path must return an error,
//! never panic or allocate from an unchecked length.
#![no_main]

use bytes::BytesMut;
use ferrobase_hbase_wire::frame::ServerDecoder;
use ferrobase_hbase_wire::sasl::digest_md5::{DigestMd5Client, DigestMd5Server};
use ferrobase_hbase_wire::sasl::{self, SaslError};
use ferrobase_hbase_wire::token;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut opened = BytesMut::from(&b"HBas\x00\x52"[..]);
    opened.extend_from_slice(data);
    let mut d = ServerDecoder::new(1 << 20);
    // Every event consumes bytes, so this ends.
    while let Ok(Some(_)) = d.decode(&mut opened) {}

    if let Ok(mut server) = DigestMd5Server::new("default", "bm9uY2U=") {
        let _ = server.step(b"", |_| Err(SaslError::State("unused")));
        let _ = server.step(data, |_| Ok(b"password".to_vec()));
    }
    let mut client = DigestMd5Client::new("user", b"password", "Y25vbmNl", "null/default");
    if client.respond(data).is_ok() {
        let _ = client.verify(data);
    }
    let _ = sasl::digest_md5::parse_directives("fuzz", data);

    let mut replies = BytesMut::from(data);
    while let Ok(Some(_)) = sasl::decode_server_reply(&mut replies) {}
    let mut tokens = BytesMut::from(data);
    while let Ok(Some(_)) = sasl::decode_client_token(&mut tokens, 1 << 16) {}

    if let Ok(text) = std::str::from_utf8(data) {
        let _ = sasl::base64_decode(text);
    }
    let _ = token::decode_identifier(data);
    let _ = token::decode_storage(data);
});
