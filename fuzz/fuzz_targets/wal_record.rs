//! WAL record payloads behind valid frames: the first byte picks the
//! segment format version (1 or 2) and whether the last part is left as a
//! torn tail or the records are spread over two segments; the other parts
//! (cut at the separator) are payloads, each framed with its CRC, so every
//! byte reaches the edit decoder and its validation (which must agree).
#![no_main]

use ferrobase_fuzz::storefile::split;
use ferrobase_fuzz::wal;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let version = 1 + u32::from(flags & 1);
    let torn = flags & 2 != 0;
    let two = flags & 4 != 0;
    let parts = split(rest);
    let mut segments = vec![wal::header(version)];
    let n = parts.len();
    for (i, p) in parts.into_iter().enumerate() {
        if two && i == n / 2 && i > 0 {
            segments.push(wal::header(version));
        }
        let Some(seg) = segments.last_mut() else {
            return;
        };
        if torn && i + 1 == n {
            seg.extend_from_slice(p);
        } else {
            seg.extend_from_slice(&wal::frame(p));
        }
    }
    wal::exercise(&segments);
});
