//! Thrift's binary protocol (`TBinaryProtocol`, happybase's default
//! `protocol='binary'`): every integer big-endian, fixed width.
//!
//! ```text
//! strict message header (what every current client writes):
//!  0        4            8             8+n      12+n
//!  +--------+------------+-------------+--------+------------------+
//!  |80 01 00|name length | name (UTF-8)| seqid  | args struct ...  |
//!  |      TT|  i32 BE    |   n bytes   | i32 BE |                  |
//!  +--------+------------+-------------+--------+------------------+
//!   TT: 1 CALL, 2 REPLY, 3 EXCEPTION, 4 ONEWAY
//!
//! old (non-strict) header: name length (> 0) | name | TT (1 byte) | seqid
//!
//! struct:  { type u8 | field id i16 BE | value }*  00 (STOP)
//! bool 1 byte, byte 1, i16 2, i32 4, i64 8, double 8 (IEEE bits, BE)
//! binary/string: length i32 BE | bytes
//! list/set:  elem type u8 | count i32 BE | elems
//! map:       key type u8 | value type u8 | count i32 BE | k v k v ...
//! ```
//!
//! This module only converts between bytes and [`Value`]s, within
//! [`Limits`]; it never panics on input and never interprets fields.

use super::{
    DecodeFailure, Header, Input, Limits, Message, MessageType, Struct, TType, Value, check_depth,
    check_size, message_name,
};
use crate::error::CodecError;
use bytes::Bytes;

const VERSION_1: u32 = 0x8001_0000;
const VERSION_MASK: u32 = 0xffff_0000;

/// Decodes one message at the start of `buf`.
pub fn decode_message(buf: &[u8], limits: &Limits) -> Result<(Message, usize), DecodeFailure> {
    super::decode_with(buf, limits, decode_header, read_struct)
}

fn decode_header(input: &mut Input<'_>, limits: &Limits) -> Result<Header, CodecError> {
    let first = i32::from_be_bytes(input.array()?);
    if first < 0 {
        let word = first as u32;
        if word & VERSION_MASK != VERSION_1 {
            return Err(CodecError::Malformed(format!(
                "bad binary protocol version {:#010x} (expected 0x8001)",
                word & VERSION_MASK
            )));
        }
        let kind = MessageType::from_code((word & 0xff) as u8)?;
        let len = i32::from_be_bytes(input.array()?);
        let len = check_size("message name", i64::from(len), 1, limits)?;
        let name = message_name(input.take(len)?)?;
        let seqid = i32::from_be_bytes(input.array()?);
        Ok(Header { name, kind, seqid })
    } else {
        // Old clients without strict_write send the name length first.
        let len = check_size("message name", i64::from(first), 1, limits)?;
        let name = message_name(input.take(len)?)?;
        let kind = MessageType::from_code(input.u8()?)?;
        let seqid = i32::from_be_bytes(input.array()?);
        Ok(Header { name, kind, seqid })
    }
}

fn read_struct(input: &mut Input<'_>, limits: &Limits, depth: usize) -> Result<Struct, CodecError> {
    check_depth(depth, limits)?;
    let mut s = Struct::new();
    loop {
        let code = input.u8()?;
        if code == 0 {
            return Ok(s);
        }
        let ttype = TType::from_code(code)?;
        let id = i16::from_be_bytes(input.array()?);
        let value = read_value(input, ttype, limits, depth)?;
        s.fields.push((id, value));
    }
}

fn read_count(input: &mut Input<'_>, what: &str, limits: &Limits) -> Result<usize, CodecError> {
    let n = i32::from_be_bytes(input.array()?);
    check_size(what, i64::from(n), 1, limits)
}

fn read_value(
    input: &mut Input<'_>,
    ttype: TType,
    limits: &Limits,
    depth: usize,
) -> Result<Value, CodecError> {
    Ok(match ttype {
        TType::Bool => Value::Bool(input.u8()? != 0),
        TType::Byte => Value::Byte(i8::from_be_bytes(input.array()?)),
        TType::I16 => Value::I16(i16::from_be_bytes(input.array()?)),
        TType::I32 => Value::I32(i32::from_be_bytes(input.array()?)),
        TType::I64 => Value::I64(i64::from_be_bytes(input.array()?)),
        TType::Double => Value::Double(f64::from_bits(u64::from_be_bytes(input.array()?))),
        TType::Binary => {
            let n = read_count(input, "string", limits)?;
            Value::Binary(Bytes::copy_from_slice(input.take(n)?))
        }
        TType::Struct => Value::Struct(read_struct(input, limits, depth + 1)?),
        TType::List | TType::Set => {
            check_depth(depth + 1, limits)?;
            let elem = TType::from_code(input.u8()?)?;
            let n = read_count(input, "list", limits)?;
            super::read_items(input, ttype, elem, n, limits, depth, read_value)?
        }
        TType::Map => {
            check_depth(depth + 1, limits)?;
            let k = TType::from_code(input.u8()?)?;
            let v = TType::from_code(input.u8()?)?;
            let n = read_count(input, "map", limits)?;
            super::read_entries(input, (k, v), n, limits, depth, read_value)?
        }
    })
}

/// Encodes one message with a strict header.
pub fn encode_message(m: &Message) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&(VERSION_1 | m.header.kind as u32).to_be_bytes());
    write_len(&mut out, m.header.name.len());
    out.extend_from_slice(m.header.name.as_bytes());
    out.extend_from_slice(&m.header.seqid.to_be_bytes());
    write_struct(&mut out, &m.body);
    out
}

/// Lengths are i32 on the wire; our own values never come near 2 GiB, so
/// clamping only guards against a nonsensical encode, not real data.
fn write_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&i32::try_from(n).unwrap_or(i32::MAX).to_be_bytes());
}

fn write_struct(out: &mut Vec<u8>, s: &Struct) {
    for (id, v) in &s.fields {
        out.push(v.ttype().code());
        out.extend_from_slice(&id.to_be_bytes());
        write_value(out, v);
    }
    out.push(0);
}

fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Bool(b) => out.push(u8::from(*b)),
        Value::Byte(b) => out.extend_from_slice(&b.to_be_bytes()),
        Value::I16(n) => out.extend_from_slice(&n.to_be_bytes()),
        Value::I32(n) => out.extend_from_slice(&n.to_be_bytes()),
        Value::I64(n) => out.extend_from_slice(&n.to_be_bytes()),
        Value::Double(d) => out.extend_from_slice(&d.to_bits().to_be_bytes()),
        Value::Binary(b) => {
            write_len(out, b.len());
            out.extend_from_slice(b);
        }
        Value::Struct(s) => write_struct(out, s),
        Value::List(t, items) | Value::Set(t, items) => {
            out.push(t.code());
            write_len(out, items.len());
            for i in items {
                write_value(out, i);
            }
        }
        Value::Map(k, v, entries) => {
            out.push(k.code());
            out.push(v.code());
            write_len(out, entries.len());
            for (key, value) in entries {
                write_value(out, key);
                write_value(out, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `getTableNames()` exactly as happybase (thriftpy2, strict binary)
    /// sends it with seqid 0.
    const GET_TABLE_NAMES: &[u8] =
        b"\x80\x01\x00\x01\x00\x00\x00\x0dgetTableNames\x00\x00\x00\x00\x00";

    #[test]
    fn golden_get_table_names() {
        let (m, used) = decode_message(GET_TABLE_NAMES, &Limits::default())
            .map_err(|f| f.error)
            .unwrap();
        assert_eq!(used, GET_TABLE_NAMES.len());
        assert_eq!(m.header.name, "getTableNames");
        assert_eq!(m.header.kind, MessageType::Call);
        assert_eq!(m.header.seqid, 0);
        assert!(m.body.fields.is_empty());
        assert_eq!(encode_message(&m), GET_TABLE_NAMES);
    }

    #[test]
    fn golden_reply_with_names() {
        let reply = Message {
            header: Header {
                name: "getTableNames".into(),
                kind: MessageType::Reply,
                seqid: 3,
            },
            body: Struct::new().with(0, Value::List(TType::Binary, vec![Value::binary("t1")])),
        };
        let mut want = b"\x80\x01\x00\x02\x00\x00\x00\x0dgetTableNames\x00\x00\x00\x03".to_vec();
        want.extend_from_slice(b"\x0f\x00\x00\x0b\x00\x00\x00\x01\x00\x00\x00\x02t1\x00");
        assert_eq!(encode_message(&reply), want);
    }

    #[test]
    fn old_non_strict_header_is_accepted() {
        let mut old = b"\x00\x00\x00\x0dgetTableNames\x01\x00\x00\x00\x09".to_vec();
        old.push(0);
        let (m, _) = decode_message(&old, &Limits::default())
            .map_err(|f| f.error)
            .unwrap();
        assert_eq!(
            (m.header.name.as_str(), m.header.seqid),
            ("getTableNames", 9)
        );
    }

    #[test]
    fn bad_input_is_named() {
        let bad_version = b"\x80\x02\x00\x01\x00\x00\x00\x01x\x00\x00\x00\x00\x00";
        let e = decode_message(bad_version, &Limits::default()).unwrap_err();
        assert!(e.error.to_string().contains("version"), "{}", e.error);
        // A string claiming 1 GiB is refused before reading it.
        let mut huge = GET_TABLE_NAMES[..GET_TABLE_NAMES.len() - 1].to_vec();
        huge.extend_from_slice(b"\x0b\x00\x01\x40\x00\x00\x00");
        let e = decode_message(&huge, &Limits::default()).unwrap_err();
        assert!(matches!(e.error, CodecError::TooLarge(_)), "{:?}", e.error);
        assert_eq!(e.header.map(|h| h.name).as_deref(), Some("getTableNames"));
        // An unknown type code.
        let mut unknown = GET_TABLE_NAMES[..GET_TABLE_NAMES.len() - 1].to_vec();
        unknown.extend_from_slice(b"\x07\x00\x01");
        let e = decode_message(&unknown, &Limits::default()).unwrap_err();
        assert!(e.error.to_string().contains("type code 7"), "{}", e.error);
    }
}
