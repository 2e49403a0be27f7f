//! `ferrobase import`'s input (text files from anywhere): the first line
//! is a column spec, the rest lines of input. A spec that parses must
//! split every line without a panic; a line that passes has its row key
//! among its fields, no empty row key, and exactly the spec's fields.
#![no_main]

use ferrobase_import::columns::ColumnSpec;
use ferrobase_import::line::LineParser;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|&b| b == b'\n');
    let Some(spec) = lines.next().and_then(|l| std::str::from_utf8(l).ok()) else {
        return;
    };
    let Ok(spec) = ColumnSpec::parse(spec) else {
        return;
    };
    let spec = Arc::new(spec);
    let separator = data.last().copied().unwrap_or(b'\t');
    let mut parser = LineParser::new(spec.clone(), separator, 1, 64);
    for line in lines {
        if let Ok(p) = parser.parse(line) {
            assert!(!p.row.is_empty());
            assert_eq!(p.field(spec.row_key), p.row);
            let fields = line.split(|&b| b == separator).count();
            assert_eq!(fields, spec.width());
        }
    }
});
