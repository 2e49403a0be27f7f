//! What an import did, for people (`text`) and for scripts (JSON).

use crate::complete::LoadOutcome;
use serde::Serialize;
use std::collections::BTreeMap;

/// See the module docs.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ImportReport {
    pub table: String,
    pub server: String,
    /// `write path`, `bulk` or `dry run`.
    pub mode: String,
    pub files: usize,
    pub splits: usize,
    pub threads: usize,
    pub bytes: u64,
    pub lines: u64,
    pub rows: u64,
    pub cells: u64,
    pub bad_lines: u64,
    pub rejects: String,
    /// Rows the cluster refused after retries, by error (write path).
    pub failed_rows: BTreeMap<String, u64>,
    pub failed_count: u64,
    /// Store files written and loaded (bulk).
    pub bulk: Option<LoadOutcome>,
    pub elapsed_s: f64,
    pub rows_per_s: f64,
    pub mb_per_s: f64,
}

impl ImportReport {
    /// The report for people.
    pub fn text(&self) -> String {
        let mut s = format!(
            "import: {} file(s), {} bytes into '{}' on {} ({})\n",
            self.files, self.bytes, self.table, self.server, self.mode
        );
        s += &format!(
            "  {} reader thread(s), {} split(s)\n",
            self.threads, self.splits
        );
        s += &format!("  elapsed      {:.2} s\n", self.elapsed_s);
        s += &format!("  lines        {}\n", self.lines);
        s += &format!(
            "  rows         {} ({:.0} rows/s)\n",
            self.rows, self.rows_per_s
        );
        s += &format!("  cells        {}\n", self.cells);
        s += &format!("  MB/s         {:.2} (input text)\n", self.mb_per_s);
        s += &format!("  bad lines    {}", self.bad_lines);
        if self.bad_lines > 0 {
            s += &format!(" (in {})", self.rejects);
        }
        s += "\n";
        if let Some(b) = &self.bulk {
            s += &format!(
                "  bulk load    {} store file(s), {} cells, {} bytes into {} region(s); {} file(s) split at a region boundary\n",
                b.files, b.entries, b.bytes, b.regions, b.split_files
            );
        }
        s += &format!("  failed rows  {}", self.failed_count);
        for (k, v) in &self.failed_rows {
            s += &format!("\n    {k}: {v}");
        }
        s += "\n";
        if self.lines > 0 && self.bad_lines == self.lines {
            s += "  every line was bad: are --separator and --columns right?\n";
        }
        s
    }
}
