//! The Bloom filter section: a fuzzed filter (type, hash version, k, key
//! count, bit array) in a real file, re-framed so it passes its checksum;
//! the file info's Bloom type and key count follow the section's own
//! header, so row and column checks run on it.
#![no_main]

use ferrobase_fuzz::storefile::{self, Parts};
use ferrobase_storage::codec::Cursor;
use ferrobase_types::{BloomType, Compression, DataBlockEncoding};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn base() -> Option<&'static Parts> {
    static BASE: OnceLock<Option<Parts>> = OnceLock::new();
    BASE.get_or_init(|| {
        let file = storefile::write_file(
            DataBlockEncoding::FastDiff,
            Compression::None,
            BloomType::RowCol,
            512,
            16,
        );
        storefile::take_apart(&file)
    })
    .as_ref()
}

fuzz_target!(|data: &[u8]| {
    let Some(base) = base() else { return };
    let mut c = Cursor::new(data);
    let kind = c.u8().unwrap_or(0);
    let keys = c.bytes(2).and_then(|_| c.varint()).unwrap_or(0);
    let info = storefile::patch_info(&base.info, &[(11, u64::from(kind)), (16, keys)]);
    let file = storefile::splice(base, Some(data), &base.index, &info);
    storefile::exercise(
        file,
        data.get(data.len().saturating_sub(24)..)
            .unwrap_or_default(),
    );
});
