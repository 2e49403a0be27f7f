//! Feeds arbitrary bytes to the frame decoders: as a whole server
//! connection, as calls after a valid preamble and header, and as a
//! client's response stream. They must return errors, never panic, and
//! never allocate from an unchecked length.
#![no_main]

use bytes::BytesMut;
use ferrobase_hbase_wire::frame::{self, ServerDecoder};
use libfuzzer_sys::fuzz_target;

const MAX: usize = 1 << 20;

fn drain(d: &mut ServerDecoder, buf: &mut BytesMut) {
    // Every event consumes bytes, so this ends.
    while let Ok(Some(_)) = d.decode(buf) {}
}

fuzz_target!(|data: &[u8]| {
    let mut d = ServerDecoder::new(MAX);
    drain(&mut d, &mut BytesMut::from(data));

    let mut opened = BytesMut::from(&b"HBas\x00\x50\x00\x00\x00\x00"[..]);
    opened.extend_from_slice(data);
    let mut d = ServerDecoder::new(MAX);
    drain(&mut d, &mut opened);

    let mut responses = BytesMut::from(data);
    while let Ok(Some(_)) = frame::decode_response(&mut responses, MAX) {}
    let _ = frame::peek_request_header(data);
    let _ = frame::looks_like_hbase(data);
});
