//! The trailer past its checksum: the fuzzer chooses the version and the
//! seven section fields (data length, Bloom, index, file info offsets and
//! lengths); the harness adds their valid CRC and the magic behind the
//! rest of the input (the file's body), so the section bounds checks and
//! the reads they allow run on every combination.
#![no_main]

use ferrobase_fuzz::storefile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (Some(head), Some(body)) = (data.get(..60), data.get(60..)) else {
        return;
    };
    let version = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let mut fields = [0u64; 7];
    for (f, b) in fields.iter_mut().zip(head[4..].chunks_exact(8)) {
        *f = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    }
    let mut file = body.to_vec();
    file.extend_from_slice(&storefile::trailer(fields, version));
    storefile::exercise(file, &[]);
});
