//! The Thrift compact protocol decoder (the gateway's port): one message
//! from arbitrary bytes, its body read as the handlers read it, and a
//! re-encoding that must decode to the same message.
#![no_main]

use ferrobase_thrift::protocol::Protocol;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ferrobase_fuzz::thrift::exercise(Protocol::Compact, data));
