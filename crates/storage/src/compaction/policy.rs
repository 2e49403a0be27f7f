//! Which files a minor compaction merges: HBase's ratio-based rule.
//!
//! Walking from the oldest file, a file is skipped while it is larger than
//! `ratio` × the total size of the (up to `max - 1`) newer files after it:
//! big old files are left alone until enough new data accumulates to make
//! rewriting them worthwhile. From the first file that passes, up to `max`
//! consecutive files are chosen; fewer than `min` means no compaction.

/// Picks a contiguous range of `sizes` (oldest first) to compact, or
/// `None`. `min`/`max`/`ratio` are `hbase.hstore.compaction.min/max/ratio`.
pub fn select_minor(
    sizes: &[u64],
    min: usize,
    max: usize,
    ratio: f64,
) -> Option<std::ops::Range<usize>> {
    let min = min.max(2);
    let max = max.max(min);
    if sizes.len() < min {
        return None;
    }
    let mut start = 0;
    while start + min <= sizes.len() {
        let end = (start + max).min(sizes.len());
        let newer: u64 = sizes
            .get(start + 1..end)
            .map(|s| s.iter().sum())
            .unwrap_or(0);
        let size = sizes.get(start).copied().unwrap_or(0);
        if (size as f64) <= ratio * newer as f64 {
            return Some(start..end);
        }
        start += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_big_old_files() {
        // One big file then three small flushes: only the small ones merge.
        assert_eq!(select_minor(&[1000, 10, 10, 10], 3, 10, 1.2), Some(1..4));
        // Similar sizes: everything (up to max).
        assert_eq!(select_minor(&[10, 10, 10], 3, 10, 1.2), Some(0..3));
        assert_eq!(select_minor(&[10; 15], 3, 10, 1.2), Some(0..10));
        // Too few files.
        assert_eq!(select_minor(&[10, 10], 3, 10, 1.2), None);
        // Nothing passes the ratio.
        assert_eq!(select_minor(&[1000, 100, 10], 3, 10, 1.2), None);
    }
}
