//! Data blocks of encoding DIFF,
//! wrapped in a valid store file (frames, index, file info, trailer) so
//! every byte reaches the block iterator: scans, seeks, and a
//! compaction's copy that must read back equal.
#![no_main]

use ferrobase_fuzz::storefile::{ENC_DIFF, block_target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| block_target(data, ENC_DIFF));
