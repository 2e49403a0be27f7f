//! Thrift messages as a generic value tree, and the two wire protocols
//! (binary, compact) that read and write it.
//!
//! A message is decoded whole into [`Value`]s before anything looks at it,
//! so skipping unknown fields of any type is free (they are simply never
//! read) and the service code never touches raw bytes. This module owns
//! the limits every decoder applies ([`Limits`]): message size, string and
//! container sizes, nesting depth. It must never panic on input bytes:
//! every read is bounds-checked and a short input is
//! [`CodecError::Incomplete`], which the transport answers by reading more.
//! It knows nothing about HBase.

pub mod binary;
pub mod compact;

use crate::error::CodecError;
use bytes::Bytes;

/// Thrift's field and element types (binary protocol codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TType {
    Bool,
    Byte,
    Double,
    I16,
    I32,
    I64,
    /// `string` and `binary`.
    Binary,
    Struct,
    Map,
    Set,
    List,
}

impl TType {
    /// The binary protocol's code.
    pub fn code(self) -> u8 {
        match self {
            TType::Bool => 2,
            TType::Byte => 3,
            TType::Double => 4,
            TType::I16 => 6,
            TType::I32 => 8,
            TType::I64 => 10,
            TType::Binary => 11,
            TType::Struct => 12,
            TType::Map => 13,
            TType::Set => 14,
            TType::List => 15,
        }
    }

    /// Parses a binary protocol type code (0, STOP, is not a type).
    pub fn from_code(code: u8) -> Result<TType, CodecError> {
        Ok(match code {
            2 => TType::Bool,
            3 => TType::Byte,
            4 => TType::Double,
            6 => TType::I16,
            8 => TType::I32,
            10 => TType::I64,
            11 => TType::Binary,
            12 => TType::Struct,
            13 => TType::Map,
            14 => TType::Set,
            15 => TType::List,
            other => {
                return Err(CodecError::Malformed(format!(
                    "unknown Thrift type code {other}"
                )));
            }
        })
    }
}

/// One Thrift value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Byte(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    Double(f64),
    Binary(Bytes),
    Struct(Struct),
    List(TType, Vec<Value>),
    Set(TType, Vec<Value>),
    Map(TType, TType, Vec<(Value, Value)>),
}

impl Value {
    /// This value's type.
    pub fn ttype(&self) -> TType {
        match self {
            Value::Bool(_) => TType::Bool,
            Value::Byte(_) => TType::Byte,
            Value::I16(_) => TType::I16,
            Value::I32(_) => TType::I32,
            Value::I64(_) => TType::I64,
            Value::Double(_) => TType::Double,
            Value::Binary(_) => TType::Binary,
            Value::Struct(_) => TType::Struct,
            Value::List(..) => TType::List,
            Value::Set(..) => TType::Set,
            Value::Map(..) => TType::Map,
        }
    }

    /// A `binary`/`string` value.
    pub fn binary(b: impl Into<Bytes>) -> Value {
        Value::Binary(b.into())
    }
}

/// A struct: its fields by id, in wire order. Unknown ids are kept and
/// ignored by whoever reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Struct {
    pub fields: Vec<(i16, Value)>,
}

impl Struct {
    /// An empty struct.
    pub fn new() -> Struct {
        Struct::default()
    }

    /// Adds a field (builder style).
    pub fn with(mut self, id: i16, value: Value) -> Struct {
        self.fields.push((id, value));
        self
    }

    /// Adds a field if `value` is set.
    pub fn with_opt(self, id: i16, value: Option<Value>) -> Struct {
        match value {
            Some(v) => self.with(id, v),
            None => self,
        }
    }

    /// Field `id`; the last one wins when a field repeats, as in generated
    /// Thrift code.
    pub fn get(&self, id: i16) -> Option<&Value> {
        self.fields
            .iter()
            .rev()
            .find(|(i, _)| *i == id)
            .map(|(_, v)| v)
    }

    // Typed reads. A field of the wrong type reads as absent, as in
    // generated Thrift code (which skips it).

    /// A `binary`/`string` field.
    pub fn binary(&self, id: i16) -> Option<&Bytes> {
        match self.get(id) {
            Some(Value::Binary(b)) => Some(b),
            _ => None,
        }
    }

    /// A `bool` field.
    pub fn bool(&self, id: i16) -> Option<bool> {
        match self.get(id) {
            Some(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    /// An `i32` field.
    pub fn i32(&self, id: i16) -> Option<i32> {
        match self.get(id) {
            Some(Value::I32(n)) => Some(*n),
            _ => None,
        }
    }

    /// An `i64` field.
    pub fn i64(&self, id: i16) -> Option<i64> {
        match self.get(id) {
            Some(Value::I64(n)) => Some(*n),
            _ => None,
        }
    }

    /// A struct field.
    pub fn strukt(&self, id: i16) -> Option<&Struct> {
        match self.get(id) {
            Some(Value::Struct(s)) => Some(s),
            _ => None,
        }
    }

    /// A `list` (or `set`) field's elements.
    pub fn list(&self, id: i16) -> Option<&[Value]> {
        match self.get(id) {
            Some(Value::List(_, items) | Value::Set(_, items)) => Some(items),
            _ => None,
        }
    }

    /// A `list<binary>` field; elements of another type are skipped.
    pub fn binaries(&self, id: i16) -> Option<Vec<Bytes>> {
        self.list(id).map(|items| {
            items
                .iter()
                .filter_map(|v| match v {
                    Value::Binary(b) => Some(b.clone()),
                    _ => None,
                })
                .collect()
        })
    }

    /// A `list<struct>` field; elements of another type are skipped.
    pub fn structs(&self, id: i16) -> Option<Vec<&Struct>> {
        self.list(id).map(|items| {
            items
                .iter()
                .filter_map(|v| match v {
                    Value::Struct(s) => Some(s),
                    _ => None,
                })
                .collect()
        })
    }
}

/// Thrift's message types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageType {
    Call = 1,
    Reply = 2,
    Exception = 3,
    Oneway = 4,
}

impl MessageType {
    /// Parses a message type code.
    pub fn from_code(code: u8) -> Result<MessageType, CodecError> {
        Ok(match code {
            1 => MessageType::Call,
            2 => MessageType::Reply,
            3 => MessageType::Exception,
            4 => MessageType::Oneway,
            other => {
                return Err(CodecError::Malformed(format!(
                    "unknown message type {other}"
                )));
            }
        })
    }
}

/// A message header: what a reply must echo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub name: String,
    pub kind: MessageType,
    pub seqid: i32,
}

/// A whole message: header and its argument (or result) struct.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub header: Header,
    pub body: Struct,
}

/// Which wire protocol a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Binary,
    Compact,
}

impl Protocol {
    /// Decodes one message from the start of `buf`; returns it and the
    /// bytes it took.
    pub fn decode(self, buf: &[u8], limits: &Limits) -> Result<(Message, usize), DecodeFailure> {
        match self {
            Protocol::Binary => binary::decode_message(buf, limits),
            Protocol::Compact => compact::decode_message(buf, limits),
        }
    }

    /// Encodes one message.
    pub fn encode(self, message: &Message) -> Vec<u8> {
        match self {
            Protocol::Binary => binary::encode_message(message),
            Protocol::Compact => compact::encode_message(message),
        }
    }
}

/// A message that did not decode; `header` is set when the header did, so
/// the caller can still answer with a `TApplicationException`.
#[derive(Debug)]
pub struct DecodeFailure {
    pub header: Option<Header>,
    pub error: CodecError,
}

impl From<CodecError> for DecodeFailure {
    fn from(error: CodecError) -> DecodeFailure {
        DecodeFailure {
            header: None,
            error,
        }
    }
}

/// What a decoder accepts.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest message (or frame), in bytes
    /// (`hbase.regionserver.thrift.framed.max_frame_size_in_mb`).
    pub max_message: usize,
    /// Deepest nesting of structs and containers.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_message: 2 << 20,
            max_depth: 64,
        }
    }
}

/// A bounds-checked read position in a byte slice. Running off the end is
/// [`CodecError::Incomplete`]: the rest may still be on the wire.
/// One message: a protocol's header, then its argument struct. A body
/// that fails keeps the header, so the reply can name the call and seqid.
pub(crate) fn decode_with(
    buf: &[u8],
    limits: &Limits,
    header: fn(&mut Input<'_>, &Limits) -> Result<Header, CodecError>,
    body: fn(&mut Input<'_>, &Limits, usize) -> Result<Struct, CodecError>,
) -> Result<(Message, usize), DecodeFailure> {
    let mut input = Input::new(buf);
    let header = header(&mut input, limits)?;
    match body(&mut input, limits, 1) {
        Ok(body) => Ok((Message { header, body }, input.pos())),
        Err(error) => Err(DecodeFailure {
            header: Some(header),
            error,
        }),
    }
}

/// A protocol's reader of one value of a given type at a nesting depth.
pub(crate) type ReadValue = fn(&mut Input<'_>, TType, &Limits, usize) -> Result<Value, CodecError>;

/// The `n` elements of a list or set, once the protocol has read its
/// header. `n` was checked against the bytes left, and the capacity is
/// capped, so a hostile count allocates little.
pub(crate) fn read_items(
    input: &mut Input<'_>,
    ttype: TType,
    elem: TType,
    n: usize,
    limits: &Limits,
    depth: usize,
    read: ReadValue,
) -> Result<Value, CodecError> {
    let mut items = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        items.push(read(input, elem, limits, depth + 1)?);
    }
    Ok(if ttype == TType::List {
        Value::List(elem, items)
    } else {
        Value::Set(elem, items)
    })
}

/// The `n` entries of a map, once the protocol has read its header.
pub(crate) fn read_entries(
    input: &mut Input<'_>,
    (k, v): (TType, TType),
    n: usize,
    limits: &Limits,
    depth: usize,
    read: ReadValue,
) -> Result<Value, CodecError> {
    let mut entries = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        let key = read(input, k, limits, depth + 1)?;
        let value = read(input, v, limits, depth + 1)?;
        entries.push((key, value));
    }
    Ok(Value::Map(k, v, entries))
}

pub(crate) struct Input<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Input<'a> {
        Input { buf, pos: 0 }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        let end = self.pos.checked_add(n).ok_or(CodecError::Incomplete)?;
        let out = self.buf.get(self.pos..end).ok_or(CodecError::Incomplete)?;
        self.pos = end;
        Ok(out)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], CodecError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.array::<1>()?[0])
    }

    /// An unsigned LEB128 varint of at most `max_bytes` bytes.
    pub(crate) fn varint(&mut self, max_bytes: usize) -> Result<u64, CodecError> {
        ferrobase_types::varint::decode_bounded(self.buf, &mut self.pos, max_bytes).map_err(|e| {
            match e {
                ferrobase_types::varint::VarintError::Truncated => CodecError::Incomplete,
                other => CodecError::Malformed(other.to_string()),
            }
        })
    }
}

/// Checks a declared string or container size against the limits before
/// anything is allocated for it.
pub(crate) fn check_size(
    what: &str,
    declared: i64,
    min_each: usize,
    limits: &Limits,
) -> Result<usize, CodecError> {
    if declared < 0 {
        return Err(CodecError::Malformed(format!(
            "{what} has negative size {declared}"
        )));
    }
    let n = usize::try_from(declared)
        .map_err(|_| CodecError::TooLarge(format!("{what} of {declared} elements")))?;
    if n.saturating_mul(min_each.max(1)) > limits.max_message {
        return Err(CodecError::TooLarge(format!(
            "{what} of size {n} cannot fit in a message of at most {} bytes \
             (hbase.regionserver.thrift.framed.max_frame_size_in_mb)",
            limits.max_message
        )));
    }
    Ok(n)
}

/// Checks the nesting depth.
pub(crate) fn check_depth(depth: usize, limits: &Limits) -> Result<(), CodecError> {
    if depth > limits.max_depth {
        return Err(CodecError::Malformed(format!(
            "values nested deeper than {} levels",
            limits.max_depth
        )));
    }
    Ok(())
}

/// The message name as text (Thrift method names are ASCII identifiers).
pub(crate) fn message_name(bytes: &[u8]) -> Result<String, CodecError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| CodecError::Malformed("message name is not UTF-8".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Message {
        let inner = Struct::new()
            .with(1, Value::binary("v"))
            .with(2, Value::I64(-5));
        Message {
            header: Header {
                name: "getRow".into(),
                kind: MessageType::Call,
                seqid: 7,
            },
            body: Struct::new()
                .with(1, Value::binary("table"))
                .with(2, Value::Bool(true))
                .with(3, Value::Bool(false))
                .with(4, Value::Byte(-1))
                .with(5, Value::I16(-300))
                .with(6, Value::I32(i32::MIN))
                .with(7, Value::I64(i64::MAX))
                .with(8, Value::Double(1.5))
                .with(40, Value::Struct(inner.clone()))
                .with(
                    41,
                    Value::List(TType::Struct, vec![Value::Struct(inner); 20]),
                )
                .with(
                    -2,
                    Value::Map(
                        TType::Binary,
                        TType::Bool,
                        vec![(Value::binary("a"), Value::Bool(true))],
                    ),
                )
                .with(42, Value::Set(TType::I32, vec![Value::I32(1)]))
                .with(43, Value::List(TType::Bool, vec![Value::Bool(false)]))
                // Compact writes an empty map without types: use the decoder's.
                .with(44, Value::Map(TType::Binary, TType::Binary, vec![])),
        }
    }

    #[test]
    fn both_protocols_round_trip() {
        let m = sample();
        for p in [Protocol::Binary, Protocol::Compact] {
            let bytes = p.encode(&m);
            let (back, used) = p
                .decode(&bytes, &Limits::default())
                .map_err(|f| f.error)
                .unwrap();
            assert_eq!(used, bytes.len(), "{p:?}");
            assert_eq!(back, m, "{p:?}");
            // Every strict prefix is incomplete, never an error or a panic.
            for cut in 0..bytes.len() {
                let r = p.decode(&bytes[..cut], &Limits::default());
                assert!(
                    matches!(
                        r,
                        Err(DecodeFailure {
                            error: CodecError::Incomplete,
                            ..
                        })
                    ),
                    "{p:?} cut at {cut}: {r:?}"
                );
            }
        }
    }

    #[test]
    fn depth_and_size_limits_hold() {
        let mut v = Value::I32(1);
        for _ in 0..100 {
            v = Value::List(v.ttype(), vec![v]);
        }
        let m = Message {
            header: Header {
                name: "x".into(),
                kind: MessageType::Call,
                seqid: 1,
            },
            body: Struct::new().with(1, v),
        };
        for p in [Protocol::Binary, Protocol::Compact] {
            let err = p.decode(&p.encode(&m), &Limits::default()).unwrap_err();
            assert!(err.error.to_string().contains("nested"), "{}", err.error);
            assert_eq!(err.header.map(|h| h.name), Some("x".to_string()));
        }
        let limits = Limits {
            max_message: 16,
            max_depth: 8,
        };
        assert!(matches!(
            check_size("list", 17, 1, &limits),
            Err(CodecError::TooLarge(_))
        ));
        assert!(matches!(
            check_size("list", -1, 1, &limits),
            Err(CodecError::Malformed(_))
        ));
    }
}
