//! [`CellRun`]: the cells of one family of one row, encoded back to back.
//!
//! A row mutation used to hold one struct per cell, with three shared
//! buffers each: a 53-column row cost 53 structs and over 200 atomic
//! reference-count operations between the client's builder and the
//! server's memstore. A run is one buffer instead, in the cell-block wire
//! layout, so the client's encoder and the server's decoder move a family's
//! cells with one copy (or one slice) and no per-cell allocation:
//!
//! ```text
//! cell := varint(len) qualifier  varint(ts code)  u8(type)  varint(len) value
//! run  := cell*                  (the count is kept beside the bytes)
//!
//! ts code := 0        for LATEST_TIMESTAMP ("the server's clock")
//!          | ts + 1   for ts <  LATEST_TIMESTAMP
//!          | ts       for ts >  LATEST_TIMESTAMP (refused by `check_cell`,
//!                     but kept distinct so the mapping is a bijection)
//! ```
//!
//! Varints are LEB128. The timestamp code makes the commonest timestamp, a
//! client's "latest", one byte instead of nine: a `wide53` row carries 53
//! of them, and every pass over a run (server check, WAL copy, memstore
//! insert) decodes them. This module owns the layout and its validation. A run
//! only ever holds bytes that [`CellRun::push`] wrote or [`CellRun::parse`]
//! checked, so iterating never fails; it never panics on input bytes.

use crate::cell::{CellType, LATEST_TIMESTAMP};
use crate::varint;
use bytes::Bytes;
use std::fmt;

/// One cell of a run, borrowed from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunCell<'a> {
    pub qualifier: &'a [u8],
    /// `LATEST_TIMESTAMP` means "assigned by the server".
    pub timestamp: u64,
    pub kind: CellType,
    /// Empty for deletes.
    pub value: &'a [u8],
}

/// Bytes that are not a well-formed run; `offset` counts from the start of
/// the buffer handed to [`CellRun::parse`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed cells at byte {offset}: {what}")]
pub struct RunError {
    pub offset: usize,
    pub what: &'static str,
}

/// What a run's cells may hold, kept while the run is built or parsed so
/// that a server's checks need not walk the cells again. A bound, not an
/// exact account: "no" is exact, "yes" may be stale after an edit (then the
/// caller walks the cells to find out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// At least the qualifier plus value bytes of the largest cell.
    pub max_cell: usize,
    /// Some cell may have a timestamp above `LATEST_TIMESTAMP`.
    pub bad_timestamp: bool,
    /// Some cell may be a `Delete` of the latest version (timestamp
    /// `LATEST_TIMESTAMP`), which the server must resolve by a read.
    pub latest_delete: bool,
}

impl RunSummary {
    #[inline(always)]
    fn add(&mut self, qualifier: usize, timestamp: u64, kind: CellType, value: usize) {
        self.max_cell = self.max_cell.max(qualifier + value);
        self.bad_timestamp |= timestamp > LATEST_TIMESTAMP;
        self.latest_delete |= timestamp == LATEST_TIMESTAMP && kind == CellType::Delete;
    }

    fn merge(&mut self, other: RunSummary) {
        self.max_cell = self.max_cell.max(other.max_cell);
        self.bad_timestamp |= other.bad_timestamp;
        self.latest_delete |= other.latest_delete;
    }
}

/// See the module docs.
#[derive(Clone)]
pub struct CellRun {
    /// Cells built by `push` (a client's builder, a server resolving
    /// timestamps); unused while `shared` is set.
    owned: Vec<u8>,
    /// A slice of a received buffer, checked by `parse`.
    shared: Option<Bytes>,
    count: usize,
    summary: RunSummary,
}

impl Default for CellRun {
    fn default() -> Self {
        CellRun::new()
    }
}

/// The varint value a run stores for timestamp `ts` (see the module docs).
#[inline]
pub fn timestamp_code(ts: u64) -> u64 {
    match ts {
        LATEST_TIMESTAMP => 0,
        ts if ts < LATEST_TIMESTAMP => ts + 1,
        ts => ts,
    }
}

/// The timestamp a run's stored code stands for; inverse of
/// [`timestamp_code`].
#[inline]
pub fn timestamp_of_code(code: u64) -> u64 {
    match code {
        0 => LATEST_TIMESTAMP,
        c if c <= LATEST_TIMESTAMP => c - 1,
        c => c,
    }
}

/// Reads a length-prefixed slice at `*pos`.
#[inline]
fn get_slice<'a>(buf: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = usize::try_from(varint::get(buf, pos)?).ok()?;
    let end = pos.checked_add(len)?;
    let s = buf.get(*pos..end)?;
    *pos = end;
    Some(s)
}

/// Decodes the cell at `*pos`, advancing it; `Err(what)` names the field
/// that is wrong. Inlined into the storage engine's loops: every write
/// parses each cell of a run more than once.
#[inline(always)]
fn get_cell<'a>(buf: &'a [u8], pos: &mut usize) -> Result<RunCell<'a>, &'static str> {
    let qualifier = get_slice(buf, pos).ok_or("truncated or oversize qualifier")?;
    let timestamp = timestamp_of_code(varint::get(buf, pos).ok_or("truncated timestamp")?);
    let code = *buf.get(*pos).ok_or("truncated cell type")?;
    let kind = CellType::from_code(code).ok_or("unknown cell type")?;
    *pos += 1;
    let value = get_slice(buf, pos).ok_or("truncated or oversize value")?;
    Ok(RunCell {
        qualifier,
        timestamp,
        kind,
        value,
    })
}

/// The cell that starts at byte `pos` of run bytes `buf`, and where the
/// next one starts; `None` when the bytes there are not a cell. For a
/// holder of a run's bytes (a memstore keeps them as received and locates
/// each cell by its start instead of copying its fields out).
#[inline]
pub fn cell_at(buf: &[u8], pos: usize) -> Option<(RunCell<'_>, usize)> {
    let mut at = pos;
    let cell = get_cell(buf, &mut at).ok()?;
    Some((cell, at))
}

impl CellRun {
    /// An empty run.
    pub fn new() -> CellRun {
        CellRun {
            owned: Vec::new(),
            shared: None,
            count: 0,
            summary: RunSummary::default(),
        }
    }

    /// An empty run with room for `bytes` encoded bytes.
    pub fn with_capacity(bytes: usize) -> CellRun {
        CellRun {
            owned: Vec::with_capacity(bytes),
            shared: None,
            count: 0,
            summary: RunSummary::default(),
        }
    }

    /// A run of one cell.
    pub fn single(qualifier: &[u8], timestamp: u64, kind: CellType, value: &[u8]) -> CellRun {
        let mut run = CellRun::new();
        run.push(qualifier, timestamp, kind, value);
        run
    }

    /// Bytes one cell takes in a run (and in a cell block or WAL record).
    pub fn encoded_cell_len(qualifier: usize, timestamp: u64, value: usize) -> usize {
        varint::encoded_len(qualifier as u64)
            + qualifier
            + varint::encoded_len(timestamp_code(timestamp))
            + 1
            + varint::encoded_len(value as u64)
            + value
    }

    #[inline]
    fn owned(&mut self) -> &mut Vec<u8> {
        if let Some(b) = self.shared.take() {
            // Adding to a received run (rare): copy it once.
            self.owned = b.to_vec();
        }
        &mut self.owned
    }

    /// Appends one cell.
    #[inline]
    pub fn push(&mut self, qualifier: &[u8], timestamp: u64, kind: CellType, value: &[u8]) {
        let out = self.owned();
        let code = timestamp_code(timestamp);
        if qualifier.len() < 0x80 && code < 0x80 && value.len() < 0x80 {
            // Every varint one byte (a `wide53` cell, any cell with "latest"
            // and a short value): the fields after the qualifier go in one
            // copy, with one capacity check for the whole cell.
            out.reserve(qualifier.len() + value.len() + 4);
            out.push(qualifier.len() as u8);
            out.extend_from_slice(qualifier);
            out.extend_from_slice(&[code as u8, kind.code(), value.len() as u8]);
        } else {
            varint::put(out, qualifier.len() as u64);
            out.extend_from_slice(qualifier);
            varint::put(out, code);
            out.push(kind.code());
            varint::put(out, value.len() as u64);
        }
        out.extend_from_slice(value);
        self.count += 1;
        self.summary
            .add(qualifier.len(), timestamp, kind, value.len());
    }

    /// Appends every cell of `other`.
    pub fn extend(&mut self, other: &CellRun) {
        let bytes = other.as_bytes();
        self.owned().extend_from_slice(bytes);
        self.count += other.count;
        self.summary.merge(other.summary);
    }

    /// A bound on what the cells hold (see [`RunSummary`]).
    pub fn summary(&self) -> RunSummary {
        self.summary
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when the run holds no cell.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The encoded cells.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.shared {
            Some(b) => b,
            None => &self.owned,
        }
    }

    /// The cells, in the order they were pushed.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            buf: self.as_bytes(),
            pos: 0,
            left: self.count,
        }
    }

    /// Calls `f` on every cell for its final timestamp (`f` may also refuse
    /// the cell). Returns the run with those timestamps, or `None` when
    /// every cell keeps its own: one pass, and a copy only from the first
    /// changed cell on (a server assigning "now" to a client's puts).
    pub fn map_timestamps<E>(
        &self,
        mut f: impl FnMut(&RunCell<'_>) -> Result<u64, E>,
    ) -> Result<Option<CellRun>, E> {
        let buf = self.as_bytes();
        let mut pos = 0;
        let mut out: Option<CellRun> = None;
        for i in 0..self.count {
            let start = pos;
            let Ok(cell) = get_cell(buf, &mut pos) else {
                break;
            };
            let ts = f(&cell)?;
            match &mut out {
                Some(run) => run.push(cell.qualifier, ts, cell.kind, cell.value),
                None if ts != cell.timestamp => {
                    // A timestamp may change the varint's width: copy the
                    // unchanged cells before this one, then re-encode.
                    let mut run = CellRun::with_capacity(buf.len() + 16);
                    run.owned
                        .extend_from_slice(buf.get(..start).unwrap_or_default());
                    run.count = i;
                    // The copied cells are some of ours: our bound holds.
                    run.summary = self.summary;
                    run.push(cell.qualifier, ts, cell.kind, cell.value);
                    out = Some(run);
                }
                None => {}
            }
        }
        Ok(out)
    }

    /// Checks `count` cells starting at `buf[start]` and returns them as a
    /// run sharing `buf` (no copy), with the offset just past them. Every
    /// length is checked against the bytes left, so a hostile count or
    /// length costs no allocation.
    pub fn parse(buf: &Bytes, start: usize, count: usize) -> Result<(CellRun, usize), RunError> {
        let (end, summary) = CellRun::check_summarized(buf, start, count)?;
        let run = CellRun {
            owned: Vec::new(),
            shared: Some(buf.slice(start..end)),
            count,
            summary,
        };
        Ok((run, end))
    }

    /// Checks that `count` well-formed cells start at `buf[start]`, without
    /// keeping them; returns the offset just past them.
    pub fn check(buf: &[u8], start: usize, count: usize) -> Result<usize, RunError> {
        Ok(CellRun::check_summarized(buf, start, count)?.0)
    }

    /// [`check`](Self::check), also summarizing the cells: the one pass a
    /// server makes over a received run before it is logged.
    fn check_summarized(
        buf: &[u8],
        start: usize,
        count: usize,
    ) -> Result<(usize, RunSummary), RunError> {
        if start > buf.len() {
            return Err(RunError {
                offset: start,
                what: "cells start past the end of the buffer",
            });
        }
        let mut pos = start;
        let mut summary = RunSummary::default();
        for _ in 0..count {
            let c = get_cell(buf, &mut pos).map_err(|what| RunError { offset: pos, what })?;
            summary.add(c.qualifier.len(), c.timestamp, c.kind, c.value.len());
        }
        Ok((pos, summary))
    }
}

/// Iterator over a run's cells; see [`CellRun::iter`].
pub struct Iter<'a> {
    buf: &'a [u8],
    pos: usize,
    left: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = RunCell<'a>;

    #[inline]
    fn next(&mut self) -> Option<RunCell<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Runs hold only checked bytes, so this never fails; if it did,
        // the run would end early instead of panicking.
        get_cell(self.buf, &mut self.pos).ok()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

impl<'a> IntoIterator for &'a CellRun {
    type Item = RunCell<'a>;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl PartialEq for CellRun {
    fn eq(&self, other: &Self) -> bool {
        self.count == other.count && self.as_bytes() == other.as_bytes()
    }
}
impl Eq for CellRun {}

impl fmt::Debug for CellRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LATEST_TIMESTAMP;
    use proptest::prelude::*;

    #[test]
    fn golden_bytes_of_one_cell() {
        let mut run = CellRun::new();
        run.push(b"q", 300, CellType::Put, b"vv");
        // len 1, "q", code 301 = 0xAD 0x02, type 4, len 2, "vv"
        assert_eq!(run.as_bytes(), &[1, b'q', 0xAD, 0x02, 4, 2, b'v', b'v']);
        assert_eq!(run.as_bytes().len(), CellRun::encoded_cell_len(1, 300, 2));
        // "Latest" is one byte, code 0.
        let latest = CellRun::single(b"q", LATEST_TIMESTAMP, CellType::Put, b"");
        assert_eq!(latest.as_bytes(), &[1, b'q', 0, 4, 0]);
        assert_eq!(
            CellRun::encoded_cell_len(3, LATEST_TIMESTAMP, 0),
            1 + 3 + 1 + 1 + 1
        );
        let zero = CellRun::single(b"q", 0, CellType::Put, b"");
        assert_eq!(zero.as_bytes(), &[1, b'q', 1, 4, 0]);
    }

    #[test]
    fn cell_at_walks_a_run_by_offsets_and_refuses_garbage() {
        let mut run = CellRun::new();
        run.push(b"q", 300, CellType::Put, b"vv");
        run.push(b"", LATEST_TIMESTAMP, CellType::Delete, b"");
        let buf = run.as_bytes();
        let (first, next) = cell_at(buf, 0).unwrap();
        assert_eq!(
            (first.qualifier, first.timestamp, first.value),
            (&b"q"[..], 300, &b"vv"[..])
        );
        assert_eq!(next, 8);
        let (second, end) = cell_at(buf, next).unwrap();
        assert_eq!(
            (second.kind, second.timestamp),
            (CellType::Delete, LATEST_TIMESTAMP)
        );
        assert_eq!(end, buf.len());
        assert!(cell_at(buf, end).is_none());
        assert!(cell_at(buf, usize::MAX).is_none());
        // Mid-cell offsets read garbage: never a panic, mostly `None`.
        for pos in 0..buf.len() {
            if let Some((_, next)) = cell_at(buf, pos) {
                assert!(next <= buf.len());
            }
        }
        assert!(cell_at(&[5, b'q'], 0).is_none());
    }

    #[test]
    fn timestamp_codes_are_a_bijection_at_the_edges() {
        for ts in [
            0,
            1,
            1_700_000_000_000,
            LATEST_TIMESTAMP - 1,
            LATEST_TIMESTAMP,
            LATEST_TIMESTAMP + 1,
            u64::MAX,
        ] {
            assert_eq!(timestamp_of_code(timestamp_code(ts)), ts, "{ts}");
        }
        assert_eq!(timestamp_code(LATEST_TIMESTAMP - 1), LATEST_TIMESTAMP);
        assert_eq!(timestamp_code(LATEST_TIMESTAMP + 1), LATEST_TIMESTAMP + 1);
        assert_eq!(timestamp_of_code(LATEST_TIMESTAMP), LATEST_TIMESTAMP - 1);
    }

    #[test]
    fn parse_names_what_is_wrong_and_never_reads_past_the_end() {
        let mut run = CellRun::new();
        run.push(b"qual", 7, CellType::Delete, b"");
        let good = Bytes::copy_from_slice(run.as_bytes());
        // Every truncation fails; so does a bad type code.
        for cut in 0..good.len() {
            let b = good.slice(..cut);
            assert!(CellRun::parse(&b, 0, 1).is_err(), "cut at {cut}");
        }
        let mut bad = good.to_vec();
        bad[6] = 99;
        let e = CellRun::parse(&Bytes::from(bad), 0, 1).unwrap_err();
        assert_eq!(e.what, "unknown cell type");
        // A huge count on a short buffer fails without allocating.
        assert!(CellRun::parse(&good, 0, usize::MAX).is_err());
        let huge_len = Bytes::from_static(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]);
        assert!(CellRun::parse(&huge_len, 0, 1).is_err());
    }

    #[test]
    fn map_timestamps_copies_only_when_something_changes() {
        let mut run = CellRun::new();
        run.push(b"a", 5, CellType::Put, b"1");
        run.push(b"b", LATEST_TIMESTAMP, CellType::Put, b"2");
        run.push(b"c", 7, CellType::Delete, b"");
        let same = run.map_timestamps(|c| Ok::<_, ()>(c.timestamp)).unwrap();
        assert!(same.is_none());
        let now = 1_700_000_000_000;
        let resolved = run
            .map_timestamps(|c| {
                Ok::<_, ()>(if c.timestamp == LATEST_TIMESTAMP {
                    now
                } else {
                    c.timestamp
                })
            })
            .unwrap()
            .unwrap();
        let got: Vec<_> = resolved
            .iter()
            .map(|c| (c.qualifier, c.timestamp))
            .collect();
        assert_eq!(got, vec![(&b"a"[..], 5), (&b"b"[..], now), (&b"c"[..], 7)]);
        assert_eq!(resolved.len(), 3);
        let refused = run.map_timestamps(|c| {
            if c.qualifier == b"c" {
                Err("no")
            } else {
                Ok(1)
            }
        });
        assert_eq!(refused.unwrap_err(), "no");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn push_parse_iterate_round_trip(
            cells in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 0..20),
                 prop_oneof![Just(LATEST_TIMESTAMP), Just(LATEST_TIMESTAMP + 1), any::<u64>()],
                 prop_oneof![Just(CellType::Put), Just(CellType::Delete), Just(CellType::DeleteFamily)],
                 proptest::collection::vec(any::<u8>(), 0..300)),
                0..40),
            prefix in proptest::collection::vec(any::<u8>(), 0..5),
        ) {
            let mut run = CellRun::new();
            let mut expected_len = 0;
            for (q, ts, kind, v) in &cells {
                run.push(q, *ts, *kind, v);
                expected_len += CellRun::encoded_cell_len(q.len(), *ts, v.len());
            }
            prop_assert_eq!(run.len(), cells.len());
            prop_assert_eq!(run.as_bytes().len(), expected_len);
            let mut buf = prefix.clone();
            buf.extend_from_slice(run.as_bytes());
            buf.push(0xEE);
            let buf = Bytes::from(buf);
            let (parsed, end) = CellRun::parse(&buf, prefix.len(), cells.len()).unwrap();
            prop_assert_eq!(end, buf.len() - 1);
            prop_assert_eq!(&parsed, &run);
            let back: Vec<_> = parsed
                .iter()
                .map(|c| (c.qualifier.to_vec(), c.timestamp, c.kind, c.value.to_vec()))
                .collect();
            prop_assert_eq!(back, cells.clone());
            // Built or parsed, the summary is exact.
            let expected = RunSummary {
                max_cell: cells.iter().map(|(q, _, _, v)| q.len() + v.len()).max().unwrap_or(0),
                bad_timestamp: cells.iter().any(|c| c.1 > LATEST_TIMESTAMP),
                latest_delete: cells
                    .iter()
                    .any(|c| c.1 == LATEST_TIMESTAMP && c.2 == CellType::Delete),
            };
            prop_assert_eq!(run.summary(), expected);
            prop_assert_eq!(parsed.summary(), expected);
            let mut doubled = parsed.clone();
            doubled.extend(&run);
            prop_assert_eq!(doubled.len(), 2 * cells.len());
            prop_assert_eq!(doubled.iter().count(), 2 * cells.len());
            prop_assert_eq!(doubled.summary(), expected);
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), n in 0usize..50) {
            let b = Bytes::from(bytes);
            if let Ok((run, end)) = CellRun::parse(&b, 0, n) {
                prop_assert!(end <= b.len());
                prop_assert_eq!(run.iter().count(), n);
            }
        }
    }
}
