//! The gRPC mutation cell block decoder (`cellblock::decode_mutations`,
//! which parses each family's cells with `CellRun::parse`): arbitrary
//! bytes must decode or fail cleanly, and what decodes must survive
//! encoding and decoding again unchanged.
#![no_main]

use bytes::Bytes;
use ferrobase_proto::cellblock;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(rows) = cellblock::decode_mutations(Bytes::copy_from_slice(data)) else {
        return;
    };
    for m in &rows {
        let _ = m.validate(1 << 20);
        let _ = m.validate_row();
        let _ = (m.len(), m.encoded_size(), m.mutations().count());
    }
    let again = cellblock::decode_mutations(cellblock::encode_mutations(&rows))
        .unwrap_or_else(|e| panic!("re-encoded mutations do not decode: {e}"));
    assert_eq!(again, rows);
});
