//! The block index section: a real file's data blocks with a fuzzed index
//! (offsets, lengths, first and last keys), re-framed so it passes its
//! checksum; the file info's block count follows the index's own count.
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
            DataBlockEncoding::None,
            Compression::None,
            BloomType::None,
            256,
            24,
        );
        storefile::take_apart(&file)
    })
    .as_ref()
}

fuzz_target!(|data: &[u8]| {
    let Some(base) = base() else { return };
    let count = Cursor::new(data).varint().unwrap_or(0);
    let info = storefile::patch_info(&base.info, &[(1, count), (12, count)]);
    let file = storefile::splice(base, None, data, &info);
    storefile::exercise(
        file,
        data.get(data.len().saturating_sub(16)..)
            .unwrap_or_default(),
    );
});
