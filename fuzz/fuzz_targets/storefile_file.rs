//! A whole store file as raw bytes: the trailer, the section checks, the
//! file info, index and Bloom decoders and the data blocks behind them,
//! as far as the fuzzer's bytes pass the checksums. The seeds are real
//! files of every encoding and compression.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferrobase_fuzz::storefile::exercise(data.to_vec(), data.get(..32).unwrap_or_default());
});
