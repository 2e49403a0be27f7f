//! Compressed data blocks: the decompressors (SNAPPY, LZ4, ZSTD, GZ) with
//! hostile stored bytes and raw lengths. Input: the file's compression
//! code, its encoding code, then blocks cut at the separator, each
//! `codec u8, raw_len u32 LE, stored bytes`.
#![no_main]

use ferrobase_fuzz::storefile::{self, IndexEntry, Info, KIND_DATA};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [compression, encoding, rest @ ..] = data else {
        return;
    };
    let mut frames = Vec::new();
    for part in storefile::split(rest).into_iter().take(4) {
        let [codec, a, b, c, d, stored @ ..] = part else {
            continue;
        };
        let raw_len = u32::from_le_bytes([*a, *b, *c, *d]);
        frames.push(storefile::frame(KIND_DATA, *codec % 8, raw_len, stored));
    }
    let mut offset = 0;
    let entries: Vec<IndexEntry> = frames
        .iter()
        .map(|f| {
            let e = IndexEntry {
                offset,
                len: f.len() as u64,
                first: storefile::lowest_key(),
                last: storefile::highest_key(),
            };
            offset += f.len() as u64;
            e
        })
        .collect();
    let mut info = Info::plain(encoding % 5, frames.len() as u64);
    info.compression = compression % 5;
    let file = storefile::assemble(
        &frames,
        None,
        &storefile::index_payload(&entries),
        &info.encode(),
        3,
    );
    storefile::exercise(file, rest.get(..16).unwrap_or_default());
});
