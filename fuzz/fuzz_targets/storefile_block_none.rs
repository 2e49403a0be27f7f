//! Data blocks of encoding NONE (row runs in version 3, row-shared in version 2, whole keys in version 1),
//! wrapped in a valid store file (frames, index, file info, trailer) so
//! every byte reaches the block iterator: scans, seeks, and a
//! compaction's copy that must read back equal.
#![no_main]

use ferrobase_fuzz::storefile::{ENC_NONE, block_target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| block_target(data, ENC_NONE));
