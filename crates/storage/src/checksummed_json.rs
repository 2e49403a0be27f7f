//! The small metadata files of the storage root (region manifests,
//! snapshot manifests, the token key): a version header, one line of JSON and its CRC32C.
//!
//! ```text
//! FILE := HEADER JSON "\n" crc32c(JSON) as 8 hex digits "\n"
//! ```
//!
//! A reader refuses a file whose header, checksum or JSON is wrong, naming
//! the byte offset; writing is one `Storage::put` by the caller, so the
//! file is atomic. This module only encodes and decodes; it does no I/O.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// `value` as a file with `header` (which ends with a newline).
pub fn encode<T: Serialize>(header: &str, value: &T) -> serde_json::Result<Vec<u8>> {
    let json = serde_json::to_vec(value)?;
    let mut out = Vec::with_capacity(json.len() + header.len() + 10);
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&json);
    out.extend_from_slice(format!("\n{:08x}\n", crc32c::crc32c(&json)).as_bytes());
    Ok(out)
}

/// The value in a file written by [`encode`] with `header`; on failure the
/// offset of the problem and what it is. `json_label` names the JSON in
/// the message ("bad {json_label}: ...").
pub fn decode<T: DeserializeOwned>(
    header: &str,
    json_label: &str,
    bytes: &[u8],
) -> Result<T, (u64, String)> {
    let body = bytes.strip_prefix(header.as_bytes()).ok_or_else(|| {
        (
            0,
            format!(
                "missing '{}' header (unknown format or version)",
                header.trim_end()
            ),
        )
    })?;
    let mut lines = body.split(|&b| b == b'\n');
    let json = lines.next().unwrap_or_default();
    let crc_text = lines.next().unwrap_or_default();
    let offset = (header.len() + json.len() + 1) as u64;
    let crc = std::str::from_utf8(crc_text)
        .ok()
        .and_then(|t| u32::from_str_radix(t, 16).ok())
        .ok_or((offset, "missing checksum line".to_string()))?;
    if crc32c::crc32c(json) != crc {
        return Err((header.len() as u64, "checksum mismatch".to_string()));
    }
    serde_json::from_slice(json)
        .map_err(|e| (header.len() as u64, format!("bad {json_label}: {e}")))
}
