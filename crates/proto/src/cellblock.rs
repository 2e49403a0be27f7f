//! Cell blocks: rows of cells as compact bytes inside gRPC messages.
//!
//! A row key and a family are written once per row, not once per cell
//! (docs/architecture.md, design rule 6). A block is a sequence of rows:
//!
//! ```text
//! row      := varint(len) bytes  u8(durability)  varint(n_families) family*
//! family   := varint(len) bytes  varint(n_cells) cell*
//! cell     := varint(len) qualifier  varint(ts code)  u8(type)  varint(len) value
//! ```
//!
//! The timestamp code is [`ferrobase_types::cell_run::timestamp_code`]:
//! 0 for "latest", `ts + 1` otherwise, so a client's default timestamp is
//! one byte on the wire.
//!
//! Mutation blocks carry the row's durability; result blocks write 0 there.
//! This module owns the format; decoding never panics on hostile bytes and
//! never copies values (they are slices of the received buffer).

use bytes::{BufMut, Bytes, BytesMut};
use ferrobase_types::cell_run::{timestamp_code, timestamp_of_code};
use ferrobase_types::varint::{self, VarintError};
use ferrobase_types::{Cell, CellRun, CellType, Durability, RowMutation};

/// A cell block that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed cell block at byte {offset}: {what}")]
pub struct CellBlockError {
    pub offset: usize,
    pub what: &'static str,
}

fn put_varint(out: &mut BytesMut, v: u64) {
    let mut buf = [0u8; varint::MAX_LEN];
    let n = varint::encode(v, &mut buf);
    out.put_slice(buf.get(..n).unwrap_or(&buf));
}

fn put_bytes(out: &mut BytesMut, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.put_slice(b);
}

fn durability_code(d: Durability) -> u8 {
    match d {
        Durability::UseDefault => 0,
        Durability::SkipWal => 1,
        Durability::AsyncWal => 2,
        Durability::SyncWal => 3,
        Durability::FsyncWal => 4,
    }
}

fn durability_of(code: u8) -> Option<Durability> {
    Some(match code {
        0 => Durability::UseDefault,
        1 => Durability::SkipWal,
        2 => Durability::AsyncWal,
        3 => Durability::SyncWal,
        4 => Durability::FsyncWal,
        _ => return None,
    })
}

/// Writes a row's header: row, durability code (0 in result blocks) and
/// family-group count.
fn put_row_header(out: &mut BytesMut, row: &[u8], durability: u8, families: usize) {
    put_bytes(out, row);
    out.put_u8(durability);
    put_varint(out, families as u64);
}

/// Writes one result row: its cells grouped by family.
fn put_result_row(out: &mut BytesMut, row: &[u8], cells: &[Cell]) {
    let groups = group_by_family(cells, |c| &c.family);
    put_row_header(out, row, 0, groups.len());
    for g in groups {
        if let Some(first) = g.first() {
            put_bytes(out, &first.family);
        }
        put_varint(out, g.len() as u64);
        for c in g {
            put_bytes(out, &c.qualifier);
            put_varint(out, timestamp_code(c.timestamp));
            out.put_u8(c.cell_type.code());
            put_bytes(out, &c.value);
        }
    }
}

/// Encodes row mutations. A mutation's cells are already in the cell
/// layout ([`CellRun`]), so each family group is one copy. The block is
/// sized once up front: growing a multi-megabyte batch by doubling would
/// copy it again at every step.
pub fn encode_mutations<'a, I>(rows: I) -> Bytes
where
    I: IntoIterator<Item = &'a RowMutation>,
    I::IntoIter: Clone,
{
    let rows = rows.into_iter();
    let total: usize = rows.clone().map(|m| m.encoded_size() + 8).sum();
    let mut out = BytesMut::with_capacity(total);
    for m in rows {
        put_row_header(
            &mut out,
            &m.row,
            durability_code(m.durability),
            m.families().len(),
        );
        for f in m.families() {
            put_bytes(&mut out, &f.family);
            put_varint(&mut out, f.cells.len() as u64);
            out.put_slice(f.cells.as_bytes());
        }
    }
    out.freeze()
}

/// Encodes result rows (each a row's cells, in order). An empty row
/// (a get that found nothing) is encoded as `row` with no families.
pub fn encode_results<'a>(rows: impl IntoIterator<Item = (&'a [u8], &'a [Cell])>) -> Bytes {
    let mut out = BytesMut::new();
    for (row, cells) in rows {
        put_result_row(&mut out, row, cells);
    }
    out.freeze()
}

fn group_by_family<T>(items: &[T], family: impl Fn(&T) -> &Bytes) -> Vec<&[T]> {
    items.chunk_by(|a, b| family(a) == family(b)).collect()
}

struct Reader {
    buf: Bytes,
    pos: usize,
}

impl Reader {
    fn err(&self, what: &'static str) -> CellBlockError {
        CellBlockError {
            offset: self.pos,
            what,
        }
    }

    fn varint(&mut self) -> Result<u64, CellBlockError> {
        varint::decode_bounded(&self.buf, &mut self.pos, varint::MAX_LEN).map_err(|e| match e {
            VarintError::Truncated => self.err("truncated varint"),
            _ => self.err("varint too long"),
        })
    }

    fn byte(&mut self) -> Result<u8, CellBlockError> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| self.err("truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    fn bytes(&mut self) -> Result<Bytes, CellBlockError> {
        let len = self.varint()?;
        let remaining = (self.buf.len() - self.pos) as u64;
        if len > remaining {
            return Err(self.err("length past end of block"));
        }
        let b = self.buf.slice(self.pos..self.pos + len as usize);
        self.pos += len as usize;
        Ok(b)
    }

    /// A count that cannot exceed the bytes left (each item takes ≥ 1 byte),
    /// so hostile counts never allocate.
    fn count(&mut self) -> Result<usize, CellBlockError> {
        let n = self.varint()?;
        if n > (self.buf.len() - self.pos) as u64 {
            return Err(self.err("count larger than the block"));
        }
        Ok(n as usize)
    }

    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }
}

/// One decoded row: `(row, durability, families of (family, cells))`.
type RawRow = (Bytes, u8, Vec<(Bytes, Vec<(Bytes, u64, u8, Bytes)>)>);

fn decode_rows(buf: Bytes) -> Result<Vec<RawRow>, CellBlockError> {
    let mut r = Reader { buf, pos: 0 };
    let mut rows = Vec::new();
    while !r.done() {
        let row = r.bytes()?;
        let durability = r.byte()?;
        let nf = r.count()?;
        let mut families = Vec::with_capacity(nf);
        for _ in 0..nf {
            let family = r.bytes()?;
            let nc = r.count()?;
            let mut cells = Vec::with_capacity(nc);
            for _ in 0..nc {
                let q = r.bytes()?;
                let ts = timestamp_of_code(r.varint()?);
                let t = r.byte()?;
                let v = r.bytes()?;
                cells.push((q, ts, t, v));
            }
            families.push((family, cells));
        }
        rows.push((row, durability, families));
    }
    Ok(rows)
}

/// Family names a process interns at most (beyond, names stay slices).
const MAX_INTERNED: usize = 1024;
/// Longer family names are never interned.
const MAX_INTERNED_LEN: usize = 64;

/// The family name as a `Bytes` backed by static memory, so that the
/// cells of a row share it without touching a reference count (one
/// atomic increment and decrement saved per cell). Family names are few
/// and short; each distinct one is leaked once per process, and both the
/// count and the length are bounded, so a client sending junk names can
/// leak at most 64 KiB.
fn intern_family(name: Bytes) -> Bytes {
    use std::collections::HashMap;
    use std::sync::{OnceLock, RwLock};
    static NAMES: OnceLock<RwLock<HashMap<Vec<u8>, &'static [u8]>>> = OnceLock::new();
    if name.len() > MAX_INTERNED_LEN {
        return name;
    }
    let names = NAMES.get_or_init(Default::default);
    if let Some(s) = names.read().ok().and_then(|m| m.get(&name[..]).copied()) {
        return Bytes::from_static(s);
    }
    let Ok(mut m) = names.write() else {
        return name;
    };
    if let Some(s) = m.get(&name[..]) {
        return Bytes::from_static(s);
    }
    if m.len() >= MAX_INTERNED {
        return name;
    }
    let s: &'static [u8] = Box::leak(name.to_vec().into_boxed_slice());
    m.insert(name.to_vec(), s);
    Bytes::from_static(s)
}

/// Decodes a mutation block.
///
/// One pass straight into [`RowMutation`]s: this runs for every row a
/// server receives, so it checks each cell but builds nothing per cell:
/// each family's cells stay one slice of the request buffer.
pub fn decode_mutations(buf: Bytes) -> Result<Vec<RowMutation>, CellBlockError> {
    let mut r = Reader { buf, pos: 0 };
    let mut out = Vec::new();
    while !r.done() {
        let row = r.bytes()?;
        let durability =
            durability_of(r.byte()?).ok_or_else(|| r.err("unknown durability code"))?;
        let mut m = RowMutation::new(row).with_durability(durability);
        let nf = r.count()?;
        for _ in 0..nf {
            let family = intern_family(r.bytes()?);
            let nc = r.count()?;
            let (cells, end) = CellRun::parse(&r.buf, r.pos, nc).map_err(|e| CellBlockError {
                offset: e.offset,
                what: e.what,
            })?;
            r.pos = end;
            m.push_family(family, cells);
        }
        if out.capacity() == 0 {
            // Rows of one block are alike: size the vector from the first.
            out.reserve(r.buf.len() / r.pos.max(1) + 1);
        }
        out.push(m);
    }
    Ok(out)
}

/// Decodes a result block into `(row, cells)` pairs.
pub fn decode_results(buf: Bytes) -> Result<Vec<(Bytes, Vec<Cell>)>, CellBlockError> {
    let mut out = Vec::new();
    for (row, _, families) in decode_rows(buf)? {
        let mut cells = Vec::new();
        for (family, fam_cells) in families {
            for (qualifier, timestamp, t, value) in fam_cells {
                let cell_type = CellType::from_code(t).ok_or(CellBlockError {
                    offset: 0,
                    what: "unknown cell type",
                })?;
                cells.push(Cell {
                    row: row.clone(),
                    family: family.clone(),
                    qualifier,
                    timestamp,
                    cell_type,
                    value,
                });
            }
        }
        out.push((row, cells));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn interned_families_equal_their_names_however_many_arrive() {
        // Past the bound and past the length limit, names come back as
        // given (slices), never wrong and never an unbounded table.
        for i in 0..MAX_INTERNED + 100 {
            let name = Bytes::from(format!("fam-{i}"));
            assert_eq!(intern_family(name.clone()), name);
        }
        let long = Bytes::from(vec![b'x'; MAX_INTERNED_LEN + 1]);
        assert_eq!(intern_family(long.clone()), long);
        let first = intern_family(Bytes::from_static(b"fam-0"));
        let again = intern_family(Bytes::copy_from_slice(b"fam-0"));
        assert_eq!(first.as_ptr(), again.as_ptr(), "one static copy per name");
    }

    #[test]
    fn mutations_round_trip_and_share_row_and_family() {
        let m = RowMutation::new("row-1")
            .with_durability(Durability::AsyncWal)
            .put("f", "a", "1")
            .put("f", "b", "2")
            .delete_column("g", "c", 5)
            .delete_family("f", 9);
        let block = encode_mutations([&m]);
        assert_eq!(decode_mutations(block.clone()).unwrap(), vec![m.clone()]);
        // "row-1" and "f" appear once for the first two cells.
        let count = block.windows(5).filter(|w| w == b"row-1").count();
        assert_eq!(count, 1);
        assert!(block.len() < m.encoded_size());
    }

    #[test]
    fn results_round_trip_with_empty_rows() {
        let cells = vec![
            Cell::put("r", "f", "a", 3, "x"),
            Cell::put("r", "g", "b", 2, "y"),
        ];
        let rows: Vec<(&[u8], &[Cell])> = vec![(b"r", &cells), (b"missing", &[])];
        let block = encode_results(rows);
        let back = decode_results(block).unwrap();
        assert_eq!(back[0].1, cells);
        assert_eq!(&back[1].0[..], b"missing");
        assert!(back[1].1.is_empty());
    }

    proptest! {
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = decode_mutations(Bytes::from(bytes.clone()));
            let _ = decode_results(Bytes::from(bytes));
        }

        #[test]
        fn truncations_fail_cleanly(cut in 0usize..40) {
            let m = RowMutation::new("row").put("fam", "qual", "value").put("fam", "q2", "v2");
            let block = encode_mutations([&m]);
            let cut = cut.min(block.len());
            let r = decode_mutations(block.slice(..cut));
            if cut == 0 {
                prop_assert!(r.unwrap().is_empty());
            } else if cut < block.len() {
                prop_assert!(r.is_err());
            }
        }
    }
}
