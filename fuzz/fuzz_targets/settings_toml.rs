//! The settings loader (`ferrobase.toml`, `--set name=value`): TOML text,
//! HBase setting names and every value parser, then the sizes derived
//! from the settings.
#![no_main]

use ferrobase_types::Settings;
use ferrobase_types::settings::parse_size;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_size(text);
    let mut s = Settings::default();
    let _ = s.apply_override(text);
    for line in text.lines().take(8) {
        let _ = s.apply_override(line);
    }
    let _ = s.apply_toml(text);
    // Keep the memory budget off the machine's RAM: same result each run.
    if s.memory_size == 0 {
        s.memory_size = 1 << 30;
    }
    let _ = (
        s.memory_budget(),
        s.global_memstore_limit(),
        s.global_memstore_low_mark(),
        s.block_cache_bytes(),
        s.wal_roll_size(),
        s.memstore_block_size(),
        s.values(),
    );
});
