//! The Thrift targets' common part: decode one message in a protocol,
//! read its body the way the gateway's handlers do, and check that what
//! decodes re-encodes to bytes that decode to the same message.

use ferrobase_thrift::hbase_types::{
    BatchMutation, ColumnDescriptor, ColumnName, Mutation, TAppend, TIncrement, TScan,
};
use ferrobase_thrift::protocol::{Limits, Protocol, Struct, Value};

/// The conversions the gateway applies to argument structs, on every
/// struct of the message (nested ones too, down to `depth`).
fn read_like_handlers(s: &Struct, depth: usize) {
    let _ = (
        Mutation::from_struct(s),
        BatchMutation::from_struct(s),
        TIncrement::from_struct(s),
        TScan::from_struct(s),
        TAppend::from_struct(s),
        ColumnDescriptor::from_struct(s),
    );
    for (id, v) in &s.fields {
        let _ = (s.binaries(*id), s.structs(*id), Mutation::list(s, *id));
        if let Value::Binary(b) = v {
            let _ = ColumnName::parse(b).column();
        }
        if depth == 0 {
            continue;
        }
        match v {
            Value::Struct(inner) => read_like_handlers(inner, depth - 1),
            Value::List(_, items) | Value::Set(_, items) => {
                for item in items.iter().take(16) {
                    if let Value::Struct(inner) = item {
                        read_like_handlers(inner, depth - 1);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Decodes `data` as one message of `protocol`, with small limits so deep
/// and long inputs hit them.
pub fn exercise(protocol: Protocol, data: &[u8]) {
    let limits = Limits {
        max_message: 1 << 16,
        max_depth: 16,
    };
    let Ok((message, used)) = protocol.decode(data, &limits) else {
        return;
    };
    assert!(
        used <= data.len(),
        "a decoder claims more bytes than it was given"
    );
    read_like_handlers(&message.body, 4);
    // Compare encodings, not messages: a double may be NaN.
    let once = protocol.encode(&message);
    let Ok((again, n)) = protocol.decode(&once, &Limits::default()) else {
        panic!("a decoded message re-encodes to bytes that do not decode");
    };
    assert_eq!(
        n,
        once.len(),
        "a re-encoded message decodes from fewer bytes"
    );
    assert_eq!(again.header, message.header);
    assert!(
        protocol.encode(&again) == once,
        "a message changes on its second round trip"
    );
}
