//! Where parsed lines go: the write path ([`WritePathSink`]: batched puts
//! through the client, as `bench load` sends them), sorted store files
//! for a bulk load (`crate::bulk_sink`), or nowhere (`importtsv.dry.run`,
//! [`DryRunSink`]). Each reader thread owns one sink.

use crate::ImportError;
use crate::bulk_sink::StagedFile;
use crate::columns::ColumnSpec;
use crate::line::Parsed;
use bytes::Bytes;
use ferrobase_client::Table;
use ferrobase_types::{CellRun, CellType, Durability, RowMutation};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a sink did.
#[derive(Debug, Default)]
pub struct SinkOutcome {
    pub rows: u64,
    pub cells: u64,
    /// Rows the cluster refused after retries, by error.
    pub failed: BTreeMap<String, u64>,
    /// Store files written (bulk).
    pub staged: Vec<StagedFile>,
}

/// A destination for good lines.
pub trait Sink: Send {
    fn add(&mut self, line: &Parsed<'_>) -> Result<(), ImportError>;
    fn finish(self: Box<Self>) -> Result<SinkOutcome, ImportError>;
}

/// Counts, writes nothing.
#[derive(Default)]
pub struct DryRunSink {
    pub out: SinkOutcome,
    pub cells_per_row: u64,
}

impl Sink for DryRunSink {
    fn add(&mut self, _line: &Parsed<'_>) -> Result<(), ImportError> {
        self.out.rows += 1;
        self.out.cells += self.cells_per_row;
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<SinkOutcome, ImportError> {
        Ok(self.out)
    }
}

/// Batched puts: a buffer of `write_buffer` encoded bytes sent as one
/// `batch` (one multi call per server), like `bench load`'s threads.
pub struct WritePathSink {
    table: Table,
    rt: tokio::runtime::Handle,
    spec: Arc<ColumnSpec>,
    families: Vec<Bytes>,
    durability: Durability,
    skip_empty: bool,
    limit: u64,
    buf: Vec<RowMutation>,
    bytes: u64,
    out: SinkOutcome,
}

impl WritePathSink {
    pub fn new(
        table: Table,
        rt: tokio::runtime::Handle,
        spec: Arc<ColumnSpec>,
        durability: Durability,
        skip_empty: bool,
        write_buffer: u64,
    ) -> WritePathSink {
        let families = spec
            .families
            .iter()
            .map(|f| Bytes::copy_from_slice(f.as_bytes()))
            .collect();
        WritePathSink {
            table,
            rt,
            spec,
            families,
            durability,
            skip_empty,
            limit: write_buffer.max(1),
            buf: Vec::new(),
            bytes: 0,
            out: SinkOutcome::default(),
        }
    }

    fn send(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let results = self.rt.block_on(self.table.batch(&self.buf));
        for r in results {
            if let Err(e) = r {
                let kind = match e.code() {
                    Some(code) => format!("{code:?}: {e}"),
                    None => e.to_string(),
                };
                *self.out.failed.entry(kind).or_default() += 1;
            }
        }
        self.buf.clear();
        self.bytes = 0;
    }
}

impl Sink for WritePathSink {
    fn add(&mut self, line: &Parsed<'_>) -> Result<(), ImportError> {
        let mut m =
            RowMutation::new(Bytes::copy_from_slice(line.row)).with_durability(self.durability);
        for (f, family) in self.families.iter().enumerate() {
            let mut cells = CellRun::new();
            for (i, c) in self.spec.columns.iter().enumerate() {
                if let crate::columns::Column::Cell { family, qualifier } = c
                    && *family == f
                {
                    let v = line.field(i);
                    if self.skip_empty && v.is_empty() {
                        continue;
                    }
                    cells.push(qualifier, line.timestamp, CellType::Put, v);
                    self.out.cells += 1;
                }
            }
            if !cells.is_empty() {
                m.push_family(family.clone(), cells);
            }
        }
        self.out.rows += 1;
        if m.is_empty() {
            return Ok(());
        }
        self.bytes += m.encoded_size() as u64;
        self.buf.push(m);
        if self.bytes >= self.limit {
            self.send();
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<SinkOutcome, ImportError> {
        self.send();
        Ok(std::mem::take(&mut self.out))
    }
}
