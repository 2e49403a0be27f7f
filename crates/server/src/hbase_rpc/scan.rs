//! An HBase `Scan`'s row range in one place: HBase gives a start and a stop
//! row, each inclusive or not, and for a reversed scan the start is the
//! high end. ferrobase's own scans take a forward `[start, stop)` range and
//! a direction; this module converts between the two and never reads rows.

use bytes::Bytes;
use ferrobase_hbase_wire::pb;
use std::cmp::Ordering;

/// One end of a range; an empty key is unbounded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    pub key: Bytes,
    pub inclusive: bool,
}

/// A scan's rows, low end to high end, whichever way it reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanRange {
    pub low: Bound,
    pub high: Bound,
    pub reversed: bool,
}

/// The smallest key after `key` (`key` + 0x00).
fn successor(key: &[u8]) -> Bytes {
    let mut k = Vec::with_capacity(key.len() + 1);
    k.extend_from_slice(key);
    k.push(0);
    Bytes::from(k)
}

impl ScanRange {
    /// The range of an HBase `Scan` (HBase's defaults: start inclusive,
    /// stop exclusive).
    pub fn of(scan: &pb::Scan) -> ScanRange {
        let start = Bound {
            key: scan.start_row.clone().unwrap_or_default(),
            inclusive: scan.include_start_row.unwrap_or(true),
        };
        let stop = Bound {
            key: scan.stop_row.clone().unwrap_or_default(),
            inclusive: scan.include_stop_row.unwrap_or(false),
        };
        let reversed = scan.reversed.unwrap_or(false);
        if reversed {
            ScanRange {
                low: stop,
                high: start,
                reversed,
            }
        } else {
            ScanRange {
                low: start,
                high: stop,
                reversed,
            }
        }
    }

    /// True when `key` lies in the range under `cmp`.
    pub fn contains(&self, key: &[u8], cmp: impl Fn(&[u8], &[u8]) -> Ordering) -> bool {
        let above_low = self.low.key.is_empty()
            || match cmp(key, &self.low.key) {
                Ordering::Greater => true,
                Ordering::Equal => self.low.inclusive,
                Ordering::Less => false,
            };
        let below_high = self.high.key.is_empty()
            || match cmp(key, &self.high.key) {
                Ordering::Less => true,
                Ordering::Equal => self.high.inclusive,
                Ordering::Greater => false,
            };
        above_low && below_high
    }

    /// The same rows as ferrobase's forward `[start, stop)` (empty:
    /// unbounded), under plain byte order.
    pub fn forward(&self) -> (Bytes, Bytes) {
        let start = if self.low.inclusive || self.low.key.is_empty() {
            self.low.key.clone()
        } else {
            successor(&self.low.key)
        };
        let stop = if self.high.key.is_empty() || !self.high.inclusive {
            self.high.key.clone()
        } else {
            successor(&self.high.key)
        };
        (start, stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(start: &str, stop: &str) -> pb::Scan {
        pb::Scan {
            start_row: Some(Bytes::copy_from_slice(start.as_bytes())),
            stop_row: Some(Bytes::copy_from_slice(stop.as_bytes())),
            ..Default::default()
        }
    }

    fn bytes_cmp(a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }

    #[test]
    fn forward_scan_defaults_to_start_inclusive_stop_exclusive() {
        let r = ScanRange::of(&scan("b", "d"));
        assert!(r.contains(b"b", bytes_cmp));
        assert!(r.contains(b"c", bytes_cmp));
        assert!(!r.contains(b"d", bytes_cmp));
        assert_eq!(r.forward(), (Bytes::from("b"), Bytes::from("d")));
    }

    #[test]
    fn include_flags_move_the_forward_bounds() {
        let mut s = scan("b", "d");
        s.include_start_row = Some(false);
        s.include_stop_row = Some(true);
        let r = ScanRange::of(&s);
        assert!(!r.contains(b"b", bytes_cmp));
        assert!(r.contains(b"d", bytes_cmp));
        assert_eq!(r.forward(), (Bytes::from("b\0"), Bytes::from("d\0")));
    }

    #[test]
    fn reversed_scan_starts_at_the_high_end() {
        let mut s = scan("d", "b");
        s.reversed = Some(true);
        let r = ScanRange::of(&s);
        // Start "d" inclusive, stop "b" exclusive.
        assert!(r.contains(b"d", bytes_cmp));
        assert!(!r.contains(b"b", bytes_cmp));
        assert_eq!(r.forward(), (Bytes::from("b\0"), Bytes::from("d\0")));
        let open = ScanRange::of(&pb::Scan {
            reversed: Some(true),
            ..Default::default()
        });
        assert_eq!(open.forward(), (Bytes::new(), Bytes::new()));
        assert!(open.contains(b"anything", bytes_cmp));
    }
}
