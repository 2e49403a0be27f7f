//! Thrift's compact protocol (`TCompactProtocol`, happybase's
//! `protocol='compact'`): varints, zigzag integers, field-id deltas.
//!
//! ```text
//! message header:
//!  +------+-------------+--------------+-------------+-------+-------------+
//!  | 0x82 | TTT 00001   | seqid        | name length | name  | args struct |
//!  |  id  | type|version| varint (u32) | varint      | bytes |             |
//!  +------+-------------+--------------+-------------+-------+-------------+
//!
//! field header: DDDD TTTT         delta 1..15 from the previous field id
//!           or  0000 TTTT + id    (id as a zigzag varint)
//!   TTTT: 1 true, 2 false (a bool field is its header), 3 byte, 4 i16,
//!         5 i32, 6 i64, 7 double, 8 binary, 9 list, 10 set, 11 map, 12 struct
//! struct: fields, then 00 (STOP)
//! i16/i32/i64: zigzag varint; double: 8 bytes little-endian
//! binary: varint length | bytes
//! list/set: SSSS TTTT (size < 15) or 1111 TTTT + varint size, then elems
//! map: 00 if empty, else varint size | KKKK VVVV | k v k v ...
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
use ferrobase_types::varint::{self, unzigzag, zigzag};

/// The compact protocol's first byte.
pub const PROTOCOL_ID: u8 = 0x82;
const VERSION: u8 = 1;

fn compact_code(t: TType) -> u8 {
    match t {
        TType::Bool => 1,
        TType::Byte => 3,
        TType::I16 => 4,
        TType::I32 => 5,
        TType::I64 => 6,
        TType::Double => 7,
        TType::Binary => 8,
        TType::List => 9,
        TType::Set => 10,
        TType::Map => 11,
        TType::Struct => 12,
    }
}

fn ttype_of(code: u8) -> Result<TType, CodecError> {
    Ok(match code {
        1 | 2 => TType::Bool,
        3 => TType::Byte,
        4 => TType::I16,
        5 => TType::I32,
        6 => TType::I64,
        7 => TType::Double,
        8 => TType::Binary,
        9 => TType::List,
        10 => TType::Set,
        11 => TType::Map,
        12 => TType::Struct,
        other => {
            return Err(CodecError::Malformed(format!(
                "unknown compact type code {other}"
            )));
        }
    })
}

/// Decodes one message at the start of `buf`.
pub fn decode_message(buf: &[u8], limits: &Limits) -> Result<(Message, usize), DecodeFailure> {
    super::decode_with(buf, limits, decode_header, read_struct)
}

fn decode_header(input: &mut Input<'_>, limits: &Limits) -> Result<Header, CodecError> {
    let id = input.u8()?;
    if id != PROTOCOL_ID {
        return Err(CodecError::Malformed(format!(
            "compact protocol id {id:#04x} (expected 0x82)"
        )));
    }
    let vt = input.u8()?;
    if vt & 0x1f != VERSION {
        return Err(CodecError::Malformed(format!(
            "compact protocol version {} (expected 1)",
            vt & 0x1f
        )));
    }
    let kind = MessageType::from_code(vt >> 5)?;
    let seqid = varint(input, 5)? as u32 as i32;
    let len = check_size("message name", varint(input, 5)? as i64, 1, limits)?;
    let name = message_name(input.take(len)?)?;
    Ok(Header { name, kind, seqid })
}

/// An unsigned LEB128 varint of at most `max_bytes` bytes.
fn varint(input: &mut Input<'_>, max_bytes: usize) -> Result<u64, CodecError> {
    input.varint(max_bytes)
}

fn read_struct(input: &mut Input<'_>, limits: &Limits, depth: usize) -> Result<Struct, CodecError> {
    check_depth(depth, limits)?;
    let mut s = Struct::new();
    let mut last: i16 = 0;
    loop {
        let b = input.u8()?;
        if b == 0 {
            return Ok(s);
        }
        let code = b & 0x0f;
        let delta = b >> 4;
        let id = if delta == 0 {
            i16::try_from(unzigzag(varint(input, 3)?))
                .map_err(|_| CodecError::Malformed("field id out of range".into()))?
        } else {
            last.checked_add(i16::from(delta))
                .ok_or_else(|| CodecError::Malformed("field id out of range".into()))?
        };
        last = id;
        let value = match code {
            1 => Value::Bool(true),
            2 => Value::Bool(false),
            _ => read_value(input, ttype_of(code)?, limits, depth)?,
        };
        s.fields.push((id, value));
    }
}

fn read_count(input: &mut Input<'_>, what: &str, limits: &Limits) -> Result<usize, CodecError> {
    let n = varint(input, 5)?;
    check_size(what, i64::try_from(n).unwrap_or(i64::MAX), 1, limits)
}

fn read_value(
    input: &mut Input<'_>,
    ttype: TType,
    limits: &Limits,
    depth: usize,
) -> Result<Value, CodecError> {
    let int = |input: &mut Input<'_>, bytes| varint(input, bytes).map(unzigzag);
    Ok(match ttype {
        TType::Bool => Value::Bool(input.u8()? == 1),
        TType::Byte => Value::Byte(i8::from_le_bytes(input.array()?)),
        TType::I16 => Value::I16(
            i16::try_from(int(input, 3)?)
                .map_err(|_| CodecError::Malformed("i16 out of range".into()))?,
        ),
        TType::I32 => Value::I32(
            i32::try_from(int(input, 5)?)
                .map_err(|_| CodecError::Malformed("i32 out of range".into()))?,
        ),
        TType::I64 => Value::I64(int(input, 10)?),
        TType::Double => Value::Double(f64::from_bits(u64::from_le_bytes(input.array()?))),
        TType::Binary => {
            let n = read_count(input, "string", limits)?;
            Value::Binary(Bytes::copy_from_slice(input.take(n)?))
        }
        TType::Struct => Value::Struct(read_struct(input, limits, depth + 1)?),
        TType::List | TType::Set => {
            check_depth(depth + 1, limits)?;
            let h = input.u8()?;
            let elem = ttype_of(h & 0x0f)?;
            let n = match h >> 4 {
                15 => read_count(input, "list", limits)?,
                small => usize::from(small),
            };
            super::read_items(input, ttype, elem, n, limits, depth, read_value)?
        }
        TType::Map => {
            check_depth(depth + 1, limits)?;
            let n = read_count(input, "map", limits)?;
            if n == 0 {
                // An empty map carries no types; any will do.
                return Ok(Value::Map(TType::Binary, TType::Binary, Vec::new()));
            }
            let kv = input.u8()?;
            let (k, v) = (ttype_of(kv >> 4)?, ttype_of(kv & 0x0f)?);
            super::read_entries(input, (k, v), n, limits, depth, read_value)?
        }
    })
}

/// Encodes one message.
pub fn encode_message(m: &Message) -> Vec<u8> {
    let mut out = vec![PROTOCOL_ID, VERSION | ((m.header.kind as u8) << 5)];
    write_varint(&mut out, u64::from(m.header.seqid as u32));
    write_varint(&mut out, m.header.name.len() as u64);
    out.extend_from_slice(m.header.name.as_bytes());
    write_struct(&mut out, &m.body);
    out
}

fn write_varint(out: &mut Vec<u8>, n: u64) {
    varint::put(out, n);
}

fn write_struct(out: &mut Vec<u8>, s: &Struct) {
    let mut last: i16 = 0;
    for (id, v) in &s.fields {
        let code = match v {
            Value::Bool(true) => 1,
            Value::Bool(false) => 2,
            other => compact_code(other.ttype()),
        };
        match id.checked_sub(last) {
            Some(delta @ 1..=15) => out.push(((delta as u8) << 4) | code),
            _ => {
                out.push(code);
                write_varint(out, zigzag(i64::from(*id)));
            }
        }
        last = *id;
        if !matches!(v, Value::Bool(_)) {
            write_value(out, v);
        }
    }
    out.push(0);
}

fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Bool(b) => out.push(if *b { 1 } else { 2 }),
        Value::Byte(b) => out.extend_from_slice(&b.to_le_bytes()),
        Value::I16(n) => write_varint(out, zigzag(i64::from(*n))),
        Value::I32(n) => write_varint(out, zigzag(i64::from(*n))),
        Value::I64(n) => write_varint(out, zigzag(*n)),
        Value::Double(d) => out.extend_from_slice(&d.to_bits().to_le_bytes()),
        Value::Binary(b) => {
            write_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
        Value::Struct(s) => write_struct(out, s),
        Value::List(t, items) | Value::Set(t, items) => {
            let code = compact_code(*t);
            if items.len() < 15 {
                out.push(((items.len() as u8) << 4) | code);
            } else {
                out.push(0xf0 | code);
                write_varint(out, items.len() as u64);
            }
            for i in items {
                write_value(out, i);
            }
        }
        Value::Map(k, v, entries) => {
            write_varint(out, entries.len() as u64);
            if !entries.is_empty() {
                out.push((compact_code(*k) << 4) | compact_code(*v));
            }
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

    #[test]
    fn golden_get_table_names() {
        // 0x82, CALL<<5|1, seqid 0, name length 13, name, STOP.
        let want = b"\x82\x21\x00\x0dgetTableNames\x00";
        let m = Message {
            header: Header {
                name: "getTableNames".into(),
                kind: MessageType::Call,
                seqid: 0,
            },
            body: Struct::new(),
        };
        assert_eq!(encode_message(&m), want);
        let (back, used) = decode_message(want, &Limits::default())
            .map_err(|f| f.error)
            .unwrap();
        assert_eq!((back, used), (m, want.len()));
    }

    #[test]
    fn zigzag_and_long_field_ids() {
        for n in [0i64, -1, 1, i64::MIN, i64::MAX, 300, -300] {
            assert_eq!(unzigzag(zigzag(n)), n);
        }
        let s = Struct::new()
            .with(100, Value::I32(-7))
            .with(2, Value::Bool(true));
        let mut out = Vec::new();
        write_struct(&mut out, &s);
        let back = read_struct(&mut Input::new(&out), &Limits::default(), 1).unwrap();
        assert_eq!(back, s);
        // An endless varint is an error, not a loop.
        let e = varint(&mut Input::new(&[0xff; 20]), 10).unwrap_err();
        assert!(e.to_string().contains("varint"), "{e}");
    }
}
