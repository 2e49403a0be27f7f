//! The single-level block index: for every data block its offset, stored
//! length (frame included) and its first and last key, loaded whole at open
//! so a seek binary-searches blocks in memory and reads exactly one.
//!
//! ```text
//!  section payload:
//!  +---------+-----------------------------------------------------------+
//!  | count v | count × [offset v][length v][first key lp][last key lp]   |
//!  +---------+-----------------------------------------------------------+
//!  v = varint, lp = varint length + bytes
//! ```
//!
//! At open the index is checked against the trailer: blocks are contiguous
//! from offset 0 to the end of the data region, each at least a frame long,
//! and keys ascend (`first ≤ last ≤ next first`), which is what makes the
//! binary search correct. This module does no I/O.

use super::block::FRAME_OVERHEAD;
use super::{MAX_BLOCK_LEN, SeekTarget};
use crate::codec::{Cursor, put_varint};
use ferrobase_types::key;
use std::cmp::Ordering;

/// Accumulates index entries while a file is written.
#[derive(Default)]
pub(crate) struct IndexBuilder {
    body: Vec<u8>,
    count: u64,
}

impl IndexBuilder {
    pub fn add(&mut self, offset: u64, len: u64, first_key: &[u8], last_key: &[u8]) {
        put_varint(&mut self.body, offset);
        put_varint(&mut self.body, len);
        put_varint(&mut self.body, first_key.len() as u64);
        self.body.extend_from_slice(first_key);
        put_varint(&mut self.body, last_key.len() as u64);
        self.body.extend_from_slice(last_key);
        self.count += 1;
    }

    pub fn finish(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.len() + 10);
        put_varint(&mut out, self.count);
        out.extend_from_slice(&self.body);
        out
    }
}

/// Where a data block is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockHandle {
    pub offset: u64,
    pub len: u64,
    first: (usize, usize),
    last: (usize, usize),
}

/// The loaded index; keys live in one buffer to avoid an allocation each.
pub(crate) struct BlockIndex {
    handles: Vec<BlockHandle>,
    keys: Vec<u8>,
}

impl std::fmt::Debug for BlockIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockIndex")
            .field("blocks", &self.handles.len())
            .field("key_bytes", &self.keys.len())
            .finish()
    }
}

impl BlockIndex {
    /// Parses and checks a section payload; `data_len` is where the data
    /// region ends (from the trailer).
    pub fn parse(payload: &[u8], data_len: u64) -> Result<BlockIndex, String> {
        let mut c = Cursor::new(payload);
        // Each entry takes at least 4 bytes, which bounds the allocation.
        let count = c.len(payload.len() / 4).ok_or("bad block count")?;
        let mut handles = Vec::with_capacity(count);
        let mut keys = Vec::with_capacity(payload.len());
        let mut expected_offset = 0u64;
        for i in 0..count {
            let bad = |what: &str| format!("block index entry {i}: {what}");
            let offset = c.varint().ok_or_else(|| bad("bad offset"))?;
            let len = c.varint().ok_or_else(|| bad("bad length"))?;
            if offset != expected_offset {
                return Err(bad(&format!("offset {offset}, expected {expected_offset}")));
            }
            if len < FRAME_OVERHEAD as u64 || len > (MAX_BLOCK_LEN + FRAME_OVERHEAD) as u64 {
                return Err(bad(&format!("length {len}")));
            }
            expected_offset = offset.saturating_add(len);
            let mut key_range = |c: &mut Cursor<'_>| {
                let k = c.len_prefixed().ok_or_else(|| bad("truncated key"))?;
                let start = keys.len();
                keys.extend_from_slice(k);
                Ok::<_, String>((start, keys.len()))
            };
            let first = key_range(&mut c)?;
            let last = key_range(&mut c)?;
            handles.push(BlockHandle {
                offset,
                len,
                first,
                last,
            });
        }
        if !c.is_empty() {
            return Err(format!(
                "{} bytes after the last block index entry",
                c.remaining()
            ));
        }
        if expected_offset != data_len {
            return Err(format!(
                "blocks end at {expected_offset}, the data region at {data_len}"
            ));
        }
        let index = BlockIndex { handles, keys };
        for i in 0..index.len() {
            let (first, last) = (index.first_key(i), index.last_key(i));
            if key::compare(first, last) == Ordering::Greater {
                return Err(format!("block {i}: first key after last key"));
            }
            if i + 1 < index.len()
                && key::compare(last, index.first_key(i + 1)) == Ordering::Greater
            {
                return Err(format!(
                    "block {i}: last key after the next block's first key"
                ));
            }
        }
        Ok(index)
    }

    pub fn len(&self) -> usize {
        self.handles.len()
    }

    pub fn handle(&self, i: usize) -> Option<BlockHandle> {
        self.handles.get(i).copied()
    }

    pub fn handles(&self) -> impl Iterator<Item = &BlockHandle> {
        self.handles.iter()
    }

    pub fn first_key(&self, i: usize) -> &[u8] {
        self.handles
            .get(i)
            .and_then(|h| self.keys.get(h.first.0..h.first.1))
            .unwrap_or_default()
    }

    pub fn last_key(&self, i: usize) -> &[u8] {
        self.handles
            .get(i)
            .and_then(|h| self.keys.get(h.last.0..h.last.1))
            .unwrap_or_default()
    }

    /// The first block whose last key is ≥ `target`: the only block a seek
    /// to `target` needs to read. `None` when every key is smaller.
    pub fn find(&self, target: &[u8]) -> Option<usize> {
        let target = SeekTarget::new(target);
        let i = self.handles.partition_point(|h| {
            target.is_after(self.keys.get(h.last.0..h.last.1).unwrap_or_default())
        });
        (i < self.handles.len()).then_some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::CellType;

    fn k(row: &str) -> Vec<u8> {
        key::encode(row.as_bytes(), b"f", b"q", 1, CellType::Put)
    }

    #[test]
    fn find_picks_the_first_block_that_can_hold_the_key() -> Result<(), String> {
        let mut b = IndexBuilder::default();
        b.add(0, 100, &k("a"), &k("c"));
        b.add(100, 50, &k("c"), &k("f"));
        b.add(150, 10, &k("h"), &k("h"));
        let idx = BlockIndex::parse(&b.finish(), 160)?;
        assert_eq!(idx.find(&key::first_on_row(b"")), Some(0));
        assert_eq!(idx.find(&k("c")), Some(0));
        assert_eq!(idx.find(&key::first_on_row(b"d")), Some(1));
        assert_eq!(idx.find(&key::first_on_row(b"g")), Some(2));
        assert_eq!(idx.find(&key::first_on_row(b"i")), None);
        assert_eq!(idx.first_key(1), k("c").as_slice());
        Ok(())
    }

    #[test]
    fn inconsistent_indexes_are_rejected() {
        let mut b = IndexBuilder::default();
        b.add(0, 100, &k("a"), &k("c"));
        b.add(100, 50, &k("b"), &k("f"));
        let payload = b.finish();
        assert!(BlockIndex::parse(&payload, 150).is_err(), "keys overlap");
        let mut b = IndexBuilder::default();
        b.add(0, 100, &k("a"), &k("c"));
        let payload = b.finish();
        assert!(BlockIndex::parse(&payload, 101).is_err(), "gap at end");
        for cut in 0..payload.len() {
            assert!(BlockIndex::parse(payload.get(..cut).unwrap_or_default(), 100).is_err());
        }
    }
}
