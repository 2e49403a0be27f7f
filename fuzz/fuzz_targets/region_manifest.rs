//! A region's manifest (`MANIFEST.<epoch>`, read at every region open):
//! the fuzzed bytes are its JSON line, behind the header and before a
//! valid checksum, so the JSON decoder runs on them; the raw bytes are
//! also tried as a whole file. What loads must store and load back equal.
#![no_main]

use ferrobase_fuzz::mem::MemStorage;
use ferrobase_storage::region::manifest::{self, Manifest};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let dir = Path::new("region");
    let fs = MemStorage::new();
    fs.insert(dir.join(manifest::file_name(0)), data.to_vec());
    let _ = Manifest::load(&fs, dir);

    let mut file = b"FBMANIFEST v1\n".to_vec();
    file.extend_from_slice(data);
    file.extend_from_slice(format!("\n{:08x}\n", crc32c::crc32c(data)).as_bytes());
    fs.insert(dir.join(manifest::file_name(7)), file);
    let Ok(Some(m)) = Manifest::load(&fs, dir) else {
        return;
    };
    m.store(&fs, dir, 8)
        .unwrap_or_else(|e| panic!("store: {e}"));
    let back =
        Manifest::load(&fs, dir).unwrap_or_else(|e| panic!("a stored manifest does not load: {e}"));
    assert_eq!(back, Some(m));
});
