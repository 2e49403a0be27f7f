//! Feeds arbitrary bytes as a `Filter` message to the filter conversion
//! (nested filters, comparators, regex patterns).
#![no_main]

use ferrobase_hbase_wire::convert::filter::filter_from_pb;
use ferrobase_hbase_wire::pb;
use libfuzzer_sys::fuzz_target;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = pb::Filter::decode(data) {
        let _ = filter_from_pb(&f);
    }
});
