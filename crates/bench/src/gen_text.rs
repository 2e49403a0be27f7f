//! `bench gen-text`: a shape's rows (docs/workloads.md, with the knobs of
//! [`RowSpec`]) written as delimited text, one line a row, for
//! `ferrobase import` (HBase's ImportTsv input): the row key, then every
//! cell's value in the shape's column order, separated by a tab unless
//! told otherwise. Rows are cut into `files` contiguous ranges, one file
//! each, the way `bench load` gives each client thread its range (the
//! seeds loaded one text file per client thread), so `import` of these
//! files and `bench load` of the same rows write the very same cells.
//!
//! This module writes files only; it never talks to a server.

use crate::rowspec::RowSpec;
use crate::{BenchError, Result};
use ferrobase_workloads::GeneratedRow;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What `gen-text` wrote.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GenTextReport {
    pub files: Vec<PathBuf>,
    pub rows: u64,
    pub bytes: u64,
    /// The `--columns` value that imports these files
    /// (`HBASE_ROW_KEY,f:q1,f:q2,…`).
    pub columns: String,
}

/// The `--columns` spec of `rows`' text lines.
pub fn columns_spec(rows: &RowSpec) -> Result<String> {
    let family = String::from_utf8_lossy(rows.shape.family()).to_string();
    let mut spec = String::from("HBASE_ROW_KEY");
    for (q, _) in &rows.row(0) {
        let q = std::str::from_utf8(q).map_err(|_| {
            BenchError::Invalid(
                "a qualifier of this shape is not text; it has no --columns spec".into(),
            )
        })?;
        if q.contains([',', ':']) {
            return Err(BenchError::Invalid(format!(
                "qualifier '{q}' holds ',' or ':', which a --columns spec cannot name"
            )));
        }
        spec += &format!(",{family}:{q}");
    }
    Ok(spec)
}

/// Writes rows `0..row_count` of `rows` into `files` files `part-NNNNN.tsv`
/// under `dir` (created), fields separated by `separator`.
pub fn gen_text(
    rows: &RowSpec,
    row_count: u64,
    files: usize,
    dir: &Path,
    separator: u8,
) -> Result<GenTextReport> {
    if files == 0 {
        return Err(BenchError::Invalid("--files must be at least 1".into()));
    }
    if separator == b'\n' || separator == b'\r' {
        return Err(BenchError::Invalid(
            "the separator cannot be a line break".into(),
        ));
    }
    let columns = columns_spec(rows)?;
    std::fs::create_dir_all(dir).map_err(BenchError::io(format!("creating {}", dir.display())))?;
    let per_file = row_count.div_ceil(files as u64);
    let paths: Vec<PathBuf> = (0..files)
        .map(|f| dir.join(format!("part-{f:05}.tsv")))
        .collect();
    let results: Vec<Result<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = paths
            .iter()
            .enumerate()
            .map(|(f, path)| {
                let lo = (f as u64 * per_file).min(row_count);
                let hi = ((f as u64 + 1) * per_file).min(row_count);
                s.spawn(move || write_range(rows, lo..hi, path, separator))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(BenchError::Invalid("a writer thread died".into())))
            })
            .collect()
    });
    let mut bytes = 0;
    for r in results {
        bytes += r?;
    }
    Ok(GenTextReport {
        files: paths,
        rows: row_count,
        bytes,
        columns,
    })
}

/// Writes the lines of rows `range` to `path`; returns the bytes written.
fn write_range(
    rows: &RowSpec,
    range: std::ops::Range<u64>,
    path: &Path,
    separator: u8,
) -> Result<u64> {
    let what = || format!("writing {}", path.display());
    let file = std::fs::File::create(path).map_err(BenchError::io(what()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut g = GeneratedRow::default();
    let mut line = Vec::new();
    let mut bytes = 0u64;
    for i in range {
        rows.fill(i, &mut g);
        line.clear();
        push_field(&mut line, &g.row, separator, i)?;
        for (_, v) in &g {
            line.push(separator);
            push_field(&mut line, v, separator, i)?;
        }
        line.push(b'\n');
        out.write_all(&line).map_err(BenchError::io(what()))?;
        bytes += line.len() as u64;
    }
    out.flush().map_err(BenchError::io(what()))?;
    Ok(bytes)
}

fn push_field(line: &mut Vec<u8>, field: &[u8], separator: u8, row: u64) -> Result<()> {
    if field
        .iter()
        .any(|&b| b == separator || b == b'\n' || b == b'\r')
    {
        return Err(BenchError::Invalid(format!(
            "row {row} holds the separator or a line break in a field; choose another --separator"
        )));
    }
    line.extend_from_slice(field);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_workloads::Shape;

    #[test]
    fn vehicle15_lines_hold_the_rows_of_bench_load() {
        let dir = tempfile::tempdir().unwrap();
        let rows = RowSpec::plain(Shape::Vehicle15);
        let r = gen_text(&rows, 10, 3, dir.path(), b'\t').unwrap();
        assert_eq!(r.files.len(), 3);
        assert!(r.columns.starts_with("HBASE_ROW_KEY,f:plate,f:id,"));
        assert_eq!(r.columns.split(',').count(), 16);
        let mut all = String::new();
        for f in &r.files {
            all += &std::fs::read_to_string(f).unwrap();
        }
        assert_eq!(all.len() as u64, r.bytes);
        let lines: Vec<&str> = all.lines().collect();
        assert_eq!(lines.len(), 10);
        for (i, l) in lines.iter().enumerate() {
            let g = rows.row(i as u64);
            let fields: Vec<&str> = l.split('\t').collect();
            assert_eq!(fields[0].as_bytes(), &g.row[..]);
            let values: Vec<&[u8]> = g.cells().map(|(_, v)| v).collect();
            let got: Vec<&[u8]> = fields[1..].iter().map(|f| f.as_bytes()).collect();
            assert_eq!(got, values);
        }
        // gps60 values hold a space: a space separator is refused.
        let e = gen_text(&RowSpec::plain(Shape::Gps60), 2, 1, dir.path(), b' ').unwrap_err();
        assert!(e.to_string().contains("separator"), "{e}");
    }
}
