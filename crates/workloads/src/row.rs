//! [`GeneratedRow`]: one generated row, its key and its cells, held flat.
//!
//! A loader generates millions of rows and hands each to a client, so the
//! row is built for being rewritten in place: every qualifier goes into one
//! buffer and every value into another, and a cell is the pair of places
//! where its qualifier and its value end. Generating a 53-column row then
//! writes two buffers and 53 pairs of offsets, instead of emptying and
//! refilling 106 small vectors (that bookkeeping used to cost a `wide53`
//! load more instructions per cell than the client's encoding of the cell).
//!
//! ```text
//! names:  q0 q1 q2 …          ends: [(2, 15), (4, 30), (6, 45), …]
//! values: <15 B><15 B><15 B>…       (qualifier end, value end) per cell
//! ```
//!
//! This module owns the layout; it never interprets the bytes (the shapes
//! in `shapes.rs` decide them).

/// One generated row: its key and its `(qualifier, value)` cells, in the
/// order written (all in `Shape::family`). Rows built the same way compare
/// equal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GeneratedRow {
    pub row: Vec<u8>,
    /// Every cell's qualifier, back to back.
    names: Vec<u8>,
    /// Every cell's value, back to back.
    values: Vec<u8>,
    /// Per cell, where its qualifier ends in `names` and its value in
    /// `values`; each starts where the previous cell's ends.
    ends: Vec<(usize, usize)>,
}

impl GeneratedRow {
    /// A row of key `row` and `cells`.
    pub fn new<Q: AsRef<[u8]>, V: AsRef<[u8]>>(
        row: Vec<u8>,
        cells: impl IntoIterator<Item = (Q, V)>,
    ) -> GeneratedRow {
        let mut out = GeneratedRow {
            row,
            ..GeneratedRow::default()
        };
        for (q, v) in cells {
            out.push_cell(q.as_ref(), v.as_ref());
        }
        out
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// No cells.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The cells, as `(qualifier, value)`, in the order written.
    pub fn cells(&self) -> Cells<'_> {
        Cells {
            row: self,
            at: 0,
            from: (0, 0),
        }
    }

    /// Cell `j`, if the row has it.
    pub fn cell(&self, j: usize) -> Option<(&[u8], &[u8])> {
        let prev = match j.checked_sub(1) {
            Some(p) => *self.ends.get(p)?,
            None => (0, 0),
        };
        let end = *self.ends.get(j)?;
        Some(self.slices(prev, end))
    }

    /// Bytes of all values.
    pub fn value_bytes(&self) -> usize {
        self.values.len()
    }

    /// Bytes of all qualifiers and values.
    pub fn cell_bytes(&self) -> usize {
        self.names.len() + self.values.len()
    }

    /// Bytes of the row key, qualifiers and values (no family, no
    /// timestamps): the payload a client sends.
    pub fn payload_bytes(&self) -> usize {
        self.row.len() + self.cell_bytes()
    }

    /// Appends a cell.
    pub fn push_cell(&mut self, qualifier: &[u8], value: &[u8]) {
        self.add_cell(|q, v| {
            q.extend_from_slice(qualifier);
            v.extend_from_slice(value);
        });
    }

    /// Removes the key and every cell, keeping the buffers.
    pub fn clear(&mut self) {
        self.row.clear();
        self.names.clear();
        self.values.clear();
        self.ends.clear();
    }

    /// Appends a cell whose qualifier and value `f` appends to the two
    /// buffers it is given.
    #[inline]
    pub(crate) fn add_cell(&mut self, f: impl FnOnce(&mut Vec<u8>, &mut Vec<u8>)) {
        f(&mut self.names, &mut self.values);
        self.ends.push((self.names.len(), self.values.len()));
    }

    /// The buffers themselves, for a shape that writes its qualifiers and
    /// values in one go and then marks the cells with
    /// [`end_cells`](Self::end_cells).
    pub(crate) fn buffers(&mut self) -> (&mut Vec<u8>, &mut Vec<u8>) {
        (&mut self.names, &mut self.values)
    }

    /// Ends one cell per entry of `ends`: where its qualifier ends in the
    /// qualifiers and its value in the values, for a shape whose cuts are
    /// fixed. Not checked: they must be in order and inside the buffers, or
    /// the cells read as empty (never a panic).
    pub(crate) fn end_cells(&mut self, ends: &[(usize, usize)]) {
        self.ends.extend_from_slice(ends);
    }

    fn slices(&self, (q0, v0): (usize, usize), (q1, v1): (usize, usize)) -> (&[u8], &[u8]) {
        (
            self.names.get(q0..q1).unwrap_or_default(),
            self.values.get(v0..v1).unwrap_or_default(),
        )
    }
}

/// Iterator over a row's cells; see [`GeneratedRow::cells`].
#[derive(Clone, Debug)]
pub struct Cells<'a> {
    row: &'a GeneratedRow,
    at: usize,
    /// Where the next cell's qualifier and value start.
    from: (usize, usize),
}

impl<'a> Iterator for Cells<'a> {
    type Item = (&'a [u8], &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let end = *self.row.ends.get(self.at)?;
        self.at += 1;
        let cell = self.row.slices(self.from, end);
        self.from = end;
        Some(cell)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.row.ends.len().saturating_sub(self.at);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Cells<'_> {}

impl<'a> IntoIterator for &'a GeneratedRow {
    type Item = (&'a [u8], &'a [u8]);
    type IntoIter = Cells<'a>;
    fn into_iter(self) -> Cells<'a> {
        self.cells()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_come_back_as_pushed() {
        let cells: [(&[u8], &[u8]); 4] = [(b"a", b"1"), (b"", b"22"), (b"ccc", b""), (b"d", b"4")];
        let mut r = GeneratedRow::new(b"row".to_vec(), cells);
        assert_eq!(r.len(), 4);
        assert_eq!(r.cells().len(), 4);
        assert_eq!(r.cells().collect::<Vec<_>>(), cells.to_vec());
        for (j, c) in cells.iter().enumerate() {
            assert_eq!(r.cell(j), Some(*c));
        }
        assert_eq!(r.cell(4), None);
        assert_eq!(r.value_bytes(), 4);
        assert_eq!(r.cell_bytes(), 5 + 4);
        assert_eq!(r.payload_bytes(), 3 + 5 + 4);
        r.clear();
        assert!(r.is_empty() && r.row.is_empty());
        assert_eq!(r.cells().next(), None);
        assert_eq!(r, GeneratedRow::default());
    }

    #[test]
    fn end_cells_cut_the_buffers_and_bad_ends_read_empty() {
        let mut r = GeneratedRow::default();
        let (names, values) = r.buffers();
        values.extend_from_slice(b"abcdef");
        names.extend_from_slice(b"xy");
        r.end_cells(&[(1, 2), (2, 6), (99, 99), (0, 1)]);
        let got: Vec<_> = r.cells().collect();
        let empty: (&[u8], &[u8]) = (b"", b"");
        assert_eq!(
            got,
            vec![
                (&b"x"[..], &b"ab"[..]),
                (&b"y"[..], &b"cdef"[..]),
                empty,
                empty
            ]
        );
        assert_eq!(r.cell(3), Some(empty));
    }
}
