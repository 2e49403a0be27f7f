//! The names of bulk-loaded store files, which carry the sequence id the
//! region gave the load (HBase's `_SeqId_<n>_` suffix).
//!
//! A bulk-loaded file is written before any region sees it (by
//! `ferrobase import --bulk`), so its cells hold no meaningful sequence
//! ids. When a region adopts the file it takes one sequence id `n` from its
//! MVCC and renames the file `<16 hex>_SeqId_<n>_.sf`; every reader of a
//! file so named reports `n` as the sequence id of each of its cells
//! ([`StoreFileReader`](super::StoreFileReader)), so at equal keys the
//! loaded cells are newer than every write before the load and older than
//! every write after it. The name travels with the file (manifests,
//! snapshots, exports), so the order survives a restart.
//!
//! This module owns the name's syntax only; it never opens files.

/// The marker between the file id and the sequence id.
const MARKER: &str = "_SeqId_";

/// The name of a bulk-loaded file: file id `id`, load sequence id `seq`.
pub fn bulk_file_name(id: u64, seq: u64) -> String {
    format!("{id:016x}{MARKER}{seq}_.{}", crate::region::STORE_FILE_EXT)
}

/// The load sequence id a store file's `name` carries, if it is a
/// bulk-loaded file's name.
pub fn bulk_seq_id(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(crate::region::STORE_FILE_EXT)?;
    let stem = stem.strip_suffix('.')?;
    let (_, rest) = stem.split_once(MARKER)?;
    let digits = rest.strip_suffix('_')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_others_are_not_bulk_files() {
        let n = bulk_file_name(0x2a, 77);
        assert_eq!(n, "000000000000002a_SeqId_77_.sf");
        assert_eq!(bulk_seq_id(&n), Some(77));
        for other in [
            "000000000000002a.sf",
            "x_SeqId__.sf",
            "x_SeqId_7.sf",
            "x_SeqId_7_.sf.tmp",
            "x_SeqId_-1_.sf",
            "x_SeqId_99999999999999999999999_.sf",
        ] {
            assert_eq!(bulk_seq_id(other), None, "{other}");
        }
    }
}
