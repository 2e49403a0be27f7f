//! The gRPC result cell block decoder (`cellblock::decode_results`, what
//! a client reads): arbitrary bytes must decode or fail cleanly, and what
//! decodes must survive encoding and decoding again unchanged.
#![no_main]

use bytes::Bytes;
use ferrobase_proto::cellblock;
use ferrobase_types::Cell;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(rows) = cellblock::decode_results(Bytes::copy_from_slice(data)) else {
        return;
    };
    let refs: Vec<(&[u8], &[Cell])> = rows.iter().map(|(r, c)| (&r[..], &c[..])).collect();
    let again = cellblock::decode_results(cellblock::encode_results(refs))
        .unwrap_or_else(|e| panic!("re-encoded results do not decode: {e}"));
    assert_eq!(again, rows);
});
