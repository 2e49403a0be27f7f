//! [`EntryStats`]: what a store file's info says about its entries
//! (count, average key and value length, sequence id and timestamp ranges,
//! delete markers), summed as entries are appended. The writer keeps one
//! for the file; its row path sums a row into one of its own and merges it
//! once per row.

use super::PUT;
use ferrobase_types::CellType;

/// See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct EntryStats {
    pub entries: u64,
    pub key_bytes: u64,
    pub value_bytes: u64,
    pub max_seq: u64,
    pub min_seq: u64,
    pub min_ts: u64,
    pub max_ts: u64,
    pub delete_markers: u64,
}

impl Default for EntryStats {
    fn default() -> Self {
        EntryStats {
            entries: 0,
            key_bytes: 0,
            value_bytes: 0,
            max_seq: 0,
            min_seq: u64::MAX,
            min_ts: u64::MAX,
            max_ts: 0,
            delete_markers: 0,
        }
    }
}

impl EntryStats {
    /// Counts one entry.
    #[inline]
    pub fn add(
        &mut self,
        (seq, timestamp, type_code): (u64, u64, u8),
        key_len: usize,
        value_len: usize,
    ) {
        self.entries += 1;
        self.key_bytes += key_len as u64;
        self.value_bytes += value_len as u64;
        self.max_seq = self.max_seq.max(seq);
        self.min_seq = self.min_seq.min(seq);
        self.min_ts = self.min_ts.min(timestamp);
        self.max_ts = self.max_ts.max(timestamp);
        if type_code != PUT && CellType::from_code(type_code).is_some_and(CellType::is_delete) {
            self.delete_markers += 1;
        }
    }

    /// Adds what `other` counted.
    pub fn merge(&mut self, other: &EntryStats) {
        self.entries += other.entries;
        self.key_bytes += other.key_bytes;
        self.value_bytes += other.value_bytes;
        self.max_seq = self.max_seq.max(other.max_seq);
        self.min_seq = self.min_seq.min(other.min_seq);
        self.min_ts = self.min_ts.min(other.min_ts);
        self.max_ts = self.max_ts.max(other.max_ts);
        self.delete_markers += other.delete_markers;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_parts_equals_counting_all() {
        let put = CellType::Put.code();
        let delete = CellType::DeleteColumn.code();
        let entries = [(7, 100, put), (3, 50, delete), (9, 75, put), (5, 200, 0x42)];
        let (mut all, mut a, mut b) = (
            EntryStats::default(),
            EntryStats::default(),
            EntryStats::default(),
        );
        for (i, e) in entries.iter().enumerate() {
            all.add(*e, 10 + i, 20 * i);
            if i < 2 {
                a.add(*e, 10 + i, 20 * i)
            } else {
                b.add(*e, 10 + i, 20 * i)
            }
        }
        a.merge(&b);
        assert_eq!(a, all);
        assert_eq!((all.entries, all.key_bytes, all.value_bytes), (4, 46, 120));
        assert_eq!(
            (all.min_seq, all.max_seq, all.min_ts, all.max_ts),
            (3, 9, 50, 200)
        );
        // An unknown type code is not counted as a delete marker.
        assert_eq!(all.delete_markers, 1);
        // Merging an empty count changes nothing.
        a.merge(&EntryStats::default());
        assert_eq!(a, all);
    }
}
