//! WAL segments as raw bytes (up to four, cut at the separator, oldest
//! first): header, record frames, CRCs, payloads, through the split,
//! recovered edits, open (recovery) and replay. The seeds are real
//! segments of both format versions.
#![no_main]

use ferrobase_fuzz::storefile::split;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let segments: Vec<Vec<u8>> = split(data)
        .into_iter()
        .take(4)
        .map(<[u8]>::to_vec)
        .collect();
    ferrobase_fuzz::wal::exercise(&segments);
});
