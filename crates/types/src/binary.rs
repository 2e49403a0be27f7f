//! HBase's printable byte notation (`Bytes.toStringBinary` and
//! `Bytes.toBytesBinary`): printable ASCII stays as is, every other byte is
//! written `\xNN`. Used by the shell, the store file tool and error messages.

/// Formats bytes as HBase's `Bytes.toStringBinary` does.
pub fn to_string_binary(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        // HBase keeps alphanumerics and this punctuation set, escapes the rest.
        if b.is_ascii_alphanumeric() || b" `~!@#$%^&*()-_=+[]{}|;:'\",.<>/?".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// Parses the notation back (`Bytes.toBytesBinary`): `\xNN` (either case)
/// becomes one byte; a malformed escape is kept literally, as HBase does.
pub fn to_bytes_binary(text: &str) -> Vec<u8> {
    let raw = text.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw.get(i) == Some(&b'\\') && raw.get(i + 1) == Some(&b'x') {
            let hex = raw
                .get(i + 2..i + 4)
                .and_then(|h| std::str::from_utf8(h).ok());
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        if let Some(&b) = raw.get(i) {
            out.push(b);
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn escapes_like_hbase() {
        assert_eq!(to_string_binary(b"row-1"), "row-1");
        assert_eq!(to_string_binary(b"\x00\x01\xff"), "\\x00\\x01\\xFF");
        assert_eq!(to_bytes_binary("\\x00a\\xFf"), b"\x00a\xff");
        assert_eq!(to_bytes_binary("\\xZZ"), b"\\xZZ");
        assert_eq!(to_bytes_binary("\\x"), b"\\x");
    }

    proptest! {
        #[test]
        fn round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            prop_assert_eq!(to_bytes_binary(&to_string_binary(&bytes)), bytes);
        }
    }
}
