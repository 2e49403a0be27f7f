//! One WAL record: the frame (marker, length, CRC32C) and the edit payload
//! inside it.
//!
//! ```text
//! +--------+-------------+-------------+----------------------------+
//! | marker | payload len | CRC32C      | payload (one WalEdit)      |
//! | 0xA7   | u32 LE      | u32 LE      | len bytes                  |
//! +--------+-------------+-------------+----------------------------+
//! payload, version 3 (written):
//!   region varint | seq varint | now varint (ts code) | row (len-prefixed) | nfam varint
//!   per family: name (len-prefixed) | ncells varint | the family's cell run, as sent
//!     run cell: qualifier (len-prefixed) | ts code varint | type u8 | value (len-prefixed)
//!   nonce group varint | nonce varint   (nonce 0: the edit is untagged)
//! payload, version 2 (still read): version 3 without the two nonce varints
//! payload, version 1 (still read):
//!   region varint | seq varint | row (len-prefixed) | nfam varint
//!   per family: name (len-prefixed) | ncells varint
//!     per cell: type u8 | qualifier (len-prefixed) | ts varint | value (len-prefixed)
//! ```
//!
//! Version 2 stores each family's cells in the run layout they arrive in
//! ([`CellRun`], the cell-block layout), so encoding a write is a copy and
//! decoding one shares the payload. A cell whose timestamp code is 0
//! ("latest") takes the edit's `now`: the server's clock reading is stored
//! once per edit, not once per cell.
//!
//! This module owns the byte layout and nothing else: it never does I/O and
//! never panics on input bytes. Every read goes through [`Cursor`] or
//! [`CellRun::parse`], every count is bounded by the bytes left, so garbage
//! costs no allocation. Row and family are written once per edit, never
//! per cell (docs/architecture.md, design rule 6).

use super::{WalEdit, WalFamily};
use crate::codec::{Cursor, put_varint};
use bytes::Bytes;
use ferrobase_types::cell_run::{timestamp_code, timestamp_of_code};
use ferrobase_types::{CellRun, CellType, LATEST_TIMESTAMP};

/// First byte of every record. Not 0x00 (zero-filled tails) nor 0xFF.
pub(crate) const MARKER: u8 = 0xA7;
/// Marker + length + CRC.
pub(crate) const FRAME_HEADER_LEN: usize = 9;
/// Largest payload we write or accept; a longer length is corruption, and
/// refusing it up front means a garbage length never drives an allocation.
pub(crate) const MAX_PAYLOAD: usize = 256 << 20;
/// Smallest possible payload: region, seq, row length, family count.
pub(crate) const MIN_PAYLOAD: usize = 4;
/// Smallest encoded cell (both versions): type, qualifier length,
/// timestamp, value length.
const MIN_CELL: usize = 4;
/// Smallest encoded family: name length, cell count.
const MIN_FAMILY: usize = 2;

/// The edit's payload would exceed [`MAX_PAYLOAD`]; carries its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooLarge(pub usize);

/// Appends one framed record for `edit` to `out`. On error `out` is left
/// as it was.
pub(crate) fn encode(edit: &WalEdit, out: &mut Vec<u8>) -> Result<(), TooLarge> {
    let start = out.len();
    out.reserve(max_encoded_len(edit));
    // Reserve the frame header, encode the payload after it, then patch
    // length and CRC in: one pass, no temporary buffer.
    out.extend_from_slice(&[MARKER, 0, 0, 0, 0, 0, 0, 0, 0]);
    put_varint(out, edit.region_id);
    put_varint(out, edit.seq);
    put_varint(out, timestamp_code(edit.now));
    put_bytes(out, &edit.row);
    put_varint(out, edit.families.len() as u64);
    for fam in &edit.families {
        put_bytes(out, &fam.family);
        put_varint(out, fam.cells.len() as u64);
        out.extend_from_slice(fam.cells.as_bytes());
    }
    let (group, nonce) = edit.nonce.unwrap_or((0, 0));
    put_varint(out, group);
    put_varint(out, nonce);
    let payload_start = start + FRAME_HEADER_LEN;
    let len = out.len() - payload_start;
    let Some(len32) = u32::try_from(len).ok().filter(|_| len <= MAX_PAYLOAD) else {
        out.truncate(start);
        return Err(TooLarge(len));
    };
    let crc = crc32c::crc32c(out.get(payload_start..).unwrap_or_default());
    if let Some(header) = out.get_mut(start + 1..payload_start) {
        let (len_field, crc_field) = header.split_at_mut(4);
        len_field.copy_from_slice(&len32.to_le_bytes());
        crc_field.copy_from_slice(&crc.to_le_bytes());
    }
    Ok(())
}

/// An upper bound of a record's size (every varint counted at its widest),
/// so encoding reserves once instead of growing per field. Cells take
/// exactly their run's bytes.
pub(crate) fn max_encoded_len(edit: &WalEdit) -> usize {
    const V: usize = 10;
    let families: usize = edit
        .families
        .iter()
        .map(|f| 2 * V + f.family.len() + f.cells.as_bytes().len())
        .sum();
    FRAME_HEADER_LEN + 7 * V + edit.row.len() + families
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Why a frame header is unacceptable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FrameError {
    BadMarker(u8),
    BadLength(u32),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::BadMarker(b) => {
                write!(f, "bad record marker 0x{b:02X} (expected 0x{MARKER:02X})")
            }
            FrameError::BadLength(n) => {
                write!(f, "record length {n} outside {MIN_PAYLOAD}..={MAX_PAYLOAD}")
            }
        }
    }
}

/// A parsed frame header: payload length and expected CRC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameHeader {
    pub len: usize,
    pub crc: u32,
}

/// Parses the 9-byte frame header.
pub(crate) fn parse_header(h: &[u8; FRAME_HEADER_LEN]) -> Result<FrameHeader, FrameError> {
    let mut c = Cursor::new(h);
    let marker = c.u8().unwrap_or_default();
    if marker != MARKER {
        return Err(FrameError::BadMarker(marker));
    }
    let len = c.u32_le().unwrap_or_default();
    let crc = c.u32_le().unwrap_or_default();
    match usize::try_from(len) {
        Ok(n) if (MIN_PAYLOAD..=MAX_PAYLOAD).contains(&n) => Ok(FrameHeader { len: n, crc }),
        _ => Err(FrameError::BadLength(len)),
    }
}

/// True when `payload` matches the CRC of its header.
pub(crate) fn crc_ok(header: &FrameHeader, payload: &[u8]) -> bool {
    crc32c::crc32c(payload) == header.crc
}

/// If a complete, checksummed frame starts at `buf[0]`, its total length.
/// Used to tell a torn tail (nothing valid after the damage) from mid-file
/// corruption (valid records after it).
pub(crate) fn valid_frame_len(buf: &[u8]) -> Option<usize> {
    let header: &[u8; FRAME_HEADER_LEN] = buf.get(..FRAME_HEADER_LEN)?.try_into().ok()?;
    let h = parse_header(header).ok()?;
    let payload = buf.get(FRAME_HEADER_LEN..FRAME_HEADER_LEN.checked_add(h.len)?)?;
    crc_ok(&h, payload).then_some(FRAME_HEADER_LEN + h.len)
}

/// Region and sequence id of a payload, without decoding the rest: replay
/// skips other regions' edits at this cost.
pub(crate) fn peek_region_seq(payload: &[u8]) -> Option<(u64, u64)> {
    let mut c = Cursor::new(payload);
    Some((c.varint()?, c.varint()?))
}

/// Walks a whole payload of segment format `version` without allocating;
/// `Some((region, seq))` when it is a well-formed edit that uses every
/// byte. Open uses this to validate.
#[cfg(test)]
pub(crate) fn validate(payload: &[u8], version: u32) -> Option<(u64, u64)> {
    validate_tagged(payload, version).map(|(region, seq, _)| (region, seq))
}

/// [`validate`], also saying whether the edit carries a client nonce
/// (version 3, nonce not 0).
pub(crate) fn validate_tagged(payload: &[u8], version: u32) -> Option<(u64, u64, bool)> {
    let mut c = Cursor::new(payload);
    let region = c.varint()?;
    let seq = c.varint()?;
    if version >= 2 {
        c.varint()?;
    }
    c.len_prefixed()?;
    let families = c.len(c.remaining() / MIN_FAMILY)?;
    for _ in 0..families {
        c.len_prefixed()?;
        let cells = c.len(c.remaining() / MIN_CELL)?;
        if version >= 2 {
            let end = CellRun::check(payload, c.position(), cells).ok()?;
            c.bytes(end.checked_sub(c.position())?)?;
            continue;
        }
        for _ in 0..cells {
            CellType::from_code(c.u8()?)?;
            c.len_prefixed()?;
            c.varint()?;
            c.len_prefixed()?;
        }
    }
    let mut tagged = false;
    if version >= 3 {
        c.varint()?;
        tagged = c.varint()? != 0;
    }
    c.is_empty().then_some((region, seq, tagged))
}

/// Decodes a payload of segment format `version` into an edit whose row,
/// families and (version 2) cells share `payload`'s buffer. Replay and
/// split only, never the write path. `None` if malformed.
pub(crate) fn decode(payload: &Bytes, version: u32) -> Option<WalEdit> {
    let mut c = Cursor::new(payload);
    let region_id = c.varint()?;
    let seq = c.varint()?;
    // Version 1 stored resolved timestamps: nothing is left to resolve.
    let now = if version >= 2 {
        timestamp_of_code(c.varint()?)
    } else {
        LATEST_TIMESTAMP
    };
    let row = slice(payload, c.len_prefixed()?);
    let nfam = c.len(c.remaining() / MIN_FAMILY)?;
    let mut families = Vec::with_capacity(nfam);
    for _ in 0..nfam {
        let family = slice(payload, c.len_prefixed()?);
        let ncells = c.len(c.remaining() / MIN_CELL)?;
        let cells = if version >= 2 {
            let (cells, end) = CellRun::parse(payload, c.position(), ncells).ok()?;
            c.bytes(end.checked_sub(c.position())?)?;
            cells
        } else {
            decode_v1_cells(&mut c, ncells)?
        };
        families.push(WalFamily { family, cells });
    }
    let nonce = if version >= 3 {
        match (c.varint()?, c.varint()?) {
            (_, 0) => None,
            pair => Some(pair),
        }
    } else {
        None
    };
    c.is_empty().then_some(WalEdit {
        region_id,
        seq,
        row,
        families,
        now,
        nonce,
    })
}

/// Version 1's cells, in their own field order, copied into one run.
fn decode_v1_cells(c: &mut Cursor<'_>, ncells: usize) -> Option<CellRun> {
    let mut cells = CellRun::new();
    for _ in 0..ncells {
        let cell_type = CellType::from_code(c.u8()?)?;
        let qualifier = c.len_prefixed()?;
        let timestamp = c.varint()?;
        let value = c.len_prefixed()?;
        cells.push(qualifier, timestamp, cell_type, value);
    }
    Some(cells)
}

/// `sub` always comes from a cursor over `buf`, so `slice_ref` cannot fail;
/// an empty `sub` is special-cased by `bytes` itself.
fn slice(buf: &Bytes, sub: &[u8]) -> Bytes {
    buf.slice_ref(sub)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn sample(region_id: u64, seq: u64, cells: usize) -> WalEdit {
        let types = [
            CellType::Put,
            CellType::Delete,
            CellType::DeleteColumn,
            CellType::DeleteFamily,
        ];
        WalEdit {
            now: ferrobase_types::LATEST_TIMESTAMP,
            nonce: seq.is_multiple_of(3).then_some((seq ^ 0x5555, seq | 1)),
            region_id,
            seq,
            row: Bytes::from(format!("row-{seq:08}")),
            families: vec![
                WalFamily {
                    family: Bytes::from_static(b"cf"),
                    cells: {
                        let mut run = CellRun::new();
                        for i in 0..cells {
                            run.push(
                                format!("q{i}").as_bytes(),
                                1_700_000_000_000 + i as u64,
                                types[i % types.len()],
                                &vec![i as u8; i * 3],
                            );
                        }
                        run
                    },
                },
                WalFamily {
                    family: Bytes::from_static(b"empty"),
                    cells: CellRun::new(),
                },
            ],
        }
    }

    fn payload_of(record: &[u8]) -> Bytes {
        Bytes::copy_from_slice(&record[FRAME_HEADER_LEN..])
    }

    #[test]
    fn latest_cells_are_copied_as_sent_and_take_the_edits_now() {
        let mut edit = sample(3, 9, 4);
        let mut run = CellRun::new();
        run.push(b"a", LATEST_TIMESTAMP, CellType::Put, b"x");
        run.push(b"b", 77, CellType::Put, b"y");
        edit.families[0].cells = run.clone();
        edit.now = 1_234_567;
        let mut out = Vec::new();
        encode(&edit, &mut out).unwrap();
        // The run's bytes are in the record as they are.
        let count = out
            .windows(run.as_bytes().len())
            .filter(|w| *w == run.as_bytes())
            .count();
        assert_eq!(count, 1);
        let back = decode(&payload_of(&out), 3).unwrap();
        assert_eq!(back, edit);
        let ts: Vec<u64> = back.families[0]
            .cells
            .iter()
            .map(|c| back.timestamp_of(c.timestamp))
            .collect();
        assert_eq!(ts, [1_234_567, 77]);
        let resolved = back.into_resolved();
        let ts: Vec<u64> = resolved.families[0]
            .cells
            .iter()
            .map(|c| c.timestamp)
            .collect();
        assert_eq!(ts, [1_234_567, 77]);
        assert_eq!(resolved.now, LATEST_TIMESTAMP);
    }

    /// A record written by format 1 (before runs were copied as sent),
    /// from `sample(3, 9, 5)` plus a cell `late`@42 = `v`.
    const V1_RECORD: &str = "a77900000022a6cfb603090c726f772d303030303030303902026366060402713080d095ffbc31000802713181d095ffbc31030101010c02713282d095ffbc31060202020202020e02713383d095ffbc31090303030303030303030402713484d095ffbc310c04040404040404040404040404046c6174652a017605656d70747900";

    #[test]
    fn version_1_records_still_decode() {
        let bytes: Vec<u8> = (0..V1_RECORD.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&V1_RECORD[i..i + 2], 16).unwrap())
            .collect();
        assert_eq!(valid_frame_len(&bytes), Some(bytes.len()));
        let payload = payload_of(&bytes);
        let mut expected = sample(3, 9, 5);
        expected.nonce = None;
        expected.families[0]
            .cells
            .push(b"late", 42, CellType::Put, b"v");
        assert_eq!(validate(&payload, 1), Some((3, 9)));
        assert_eq!(decode(&payload, 1), Some(expected.clone()));
        // The same edit in format 2 is another payload; neither parses as
        // the other version's edit of the same content.
        let mut out = Vec::new();
        encode(&expected, &mut out).unwrap();
        assert_ne!(out, bytes);
        assert_ne!(decode(&payload, 2), Some(expected));
    }

    #[test]
    fn round_trip() {
        for cells in [0, 1, 9, 60] {
            let edit = sample(7, u64::MAX - 3, cells);
            let mut out = vec![0xEE]; // encoding appends after existing bytes
            encode(&edit, &mut out).unwrap();
            let rec = &out[1..];
            assert_eq!(valid_frame_len(rec), Some(rec.len()));
            let header = parse_header(rec[..FRAME_HEADER_LEN].try_into().unwrap()).unwrap();
            assert_eq!(header.len, rec.len() - FRAME_HEADER_LEN);
            let payload = payload_of(rec);
            assert_eq!(peek_region_seq(&payload), Some((7, u64::MAX - 3)));
            assert_eq!(validate(&payload, 3), Some((7, u64::MAX - 3)));
            assert_eq!(decode(&payload, 3), Some(edit));
        }
    }

    #[test]
    fn nonces_round_trip_and_version_2_payloads_have_none() {
        let mut edit = sample(4, 30, 3);
        edit.nonce = Some((u64::MAX, 7));
        let mut out = Vec::new();
        encode(&edit, &mut out).unwrap();
        let payload = payload_of(&out);
        assert_eq!(decode(&payload, 3), Some(edit.clone()));
        // Without the two trailing varints (10 + 1 bytes here) the
        // payload is version 2's, which has no nonce.
        let v2 = payload.slice(..payload.len() - 11);
        assert_eq!(validate(&v2, 2), Some((4, 30)));
        edit.nonce = None;
        assert_eq!(decode(&v2, 2), Some(edit));
        assert_eq!(decode(&v2, 3), None);
    }

    #[test]
    fn row_and_family_are_written_once() {
        let edit = sample(1, 1, 9);
        let mut out = Vec::new();
        encode(&edit, &mut out).unwrap();
        let count = |needle: &[u8]| out.windows(needle.len()).filter(|w| *w == needle).count();
        assert_eq!(count(&edit.row), 1);
        assert_eq!(count(b"cf"), 1);
    }

    #[test]
    fn every_truncation_and_bit_flip_is_caught() {
        let mut out = Vec::new();
        encode(&sample(3, 99, 5), &mut out).unwrap();
        for cut in 0..out.len() {
            assert_eq!(valid_frame_len(&out[..cut]), None, "cut at {cut}");
            let payload =
                Bytes::copy_from_slice(out.get(FRAME_HEADER_LEN..cut).unwrap_or_default());
            assert_eq!(decode(&payload, 3), None);
            assert_eq!(validate(&payload, 3), None);
        }
        for i in 0..out.len() {
            let mut bad = out.clone();
            bad[i] ^= 0x10;
            assert_eq!(valid_frame_len(&bad), None, "flip at {i}");
        }
    }

    #[test]
    fn absurd_lengths_and_markers_are_rejected() {
        let mut h = [MARKER, 0, 0, 0, 0, 0, 0, 0, 0];
        h[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(parse_header(&h), Err(FrameError::BadLength(u32::MAX)));
        h[1..5].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(parse_header(&h), Err(FrameError::BadLength(0)));
        assert_eq!(parse_header(&[0; 9]), Err(FrameError::BadMarker(0)));
    }

    #[test]
    fn unknown_cell_type_is_rejected() {
        let mut out = Vec::new();
        encode(&sample(1, 1, 1), &mut out).unwrap();
        let mut payload = out[FRAME_HEADER_LEN..].to_vec();
        // region, seq, now, row "row-00000001" (1+12), nfam, "cf" (1+2),
        // ncells, then the run: "q0" (1+2), timestamp code, the type byte.
        let ts_len = crate::codec::varint_len(timestamp_code(1_700_000_000_000));
        let type_at = 1 + 1 + 1 + 13 + 1 + 3 + 1 + 3 + ts_len;
        assert_eq!(payload[type_at], CellType::Put.code());
        payload[type_at] = 99;
        assert_eq!(validate(&payload, 3), None);
        assert_eq!(decode(&Bytes::from(payload), 3), None);
    }

    #[test]
    fn too_large_leaves_buffer_untouched() {
        let mut edit = sample(1, 1, 0);
        edit.row = Bytes::from(vec![0u8; MAX_PAYLOAD]);
        let mut out = vec![1, 2, 3];
        assert!(matches!(encode(&edit, &mut out), Err(TooLarge(n)) if n > MAX_PAYLOAD));
        assert_eq!(out, vec![1, 2, 3]);
    }

    proptest! {
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let b = Bytes::from(bytes.clone());
            for v in 1..=3 {
                prop_assert_eq!(decode(&b, v).map(|e| (e.region_id, e.seq)), validate(&b, v));
            }
            let _ = peek_region_seq(&b);
            let _ = valid_frame_len(&b);
            // A garbage payload behind a correct frame header must not panic either.
            let mut framed = vec![MARKER];
            framed.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            framed.extend_from_slice(&crc32c::crc32c(&bytes).to_le_bytes());
            framed.extend_from_slice(&bytes);
            if bytes.len() >= MIN_PAYLOAD {
                prop_assert_eq!(valid_frame_len(&framed), Some(framed.len()));
            }
        }

        #[test]
        fn random_edits_round_trip(region in any::<u64>(), seq in any::<u64>(), cells in 0usize..20) {
            let edit = sample(region, seq, cells);
            let mut out = Vec::new();
            encode(&edit, &mut out).unwrap();
            prop_assert_eq!(decode(&payload_of(&out), 3), Some(edit));
        }
    }
}
