//! The file info section: fuzzed fields (tags, lengths, numbers, codes,
//! the family name) in front of a real file's data blocks and index,
//! re-framed so it passes its checksum. The first byte picks the base
//! file (encoding, compression, Bloom type).
#![no_main]

use ferrobase_fuzz::storefile::{self, Parts};
use ferrobase_types::{BloomType, Compression, DataBlockEncoding};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn bases() -> &'static [Parts] {
    static BASES: OnceLock<Vec<Parts>> = OnceLock::new();
    BASES.get_or_init(|| {
        [
            (DataBlockEncoding::None, Compression::None, BloomType::Row),
            (DataBlockEncoding::Diff, Compression::Lz4, BloomType::None),
            (
                DataBlockEncoding::Prefix,
                Compression::Snappy,
                BloomType::RowCol,
            ),
            (
                DataBlockEncoding::RowIndexV1,
                Compression::Gz,
                BloomType::Row,
            ),
        ]
        .into_iter()
        .filter_map(|(e, c, b)| storefile::take_apart(&storefile::write_file(e, c, b, 300, 12)))
        .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, info)) = data.split_first() else {
        return;
    };
    let bases = bases();
    let Some(base) = bases.get(usize::from(which) % bases.len().max(1)) else {
        return;
    };
    let file = storefile::splice(base, base.bloom.as_deref(), &base.index, info);
    storefile::exercise(file, info.get(..16).unwrap_or_default());
});
