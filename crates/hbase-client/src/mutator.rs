//! [`BufferedMutator`]: HBase's client-side write buffer.
//!
//! This module owns buffering mutations until their encoded size reaches
//! the write buffer (`hbase.client.write.buffer`), then sending them as one
//! [`Table::batch`] (one `Multi` per region server). Failures of a flush
//! are kept and returned by the next [`flush`](BufferedMutator::flush) or
//! [`close`](BufferedMutator::close), as the Java client reports them
//! through its exception listener. It never sends in the background: a
//! `mutate` that fills the buffer waits for the flush.

use crate::error::{ClientError, Result};
use crate::table::Table;
use ferrobase_types::RowMutation;

/// HBase's default `hbase.client.write.buffer`: 2 MiB.
pub const DEFAULT_WRITE_BUFFER: u64 = 2 << 20;

/// See the module docs.
pub struct BufferedMutator {
    table: Table,
    write_buffer: u64,
    buffer: Vec<RowMutation>,
    buffered: u64,
    failed: Vec<ClientError>,
    /// Mutations sent, and batches sent.
    sent: u64,
    flushes: u64,
}

impl BufferedMutator {
    pub(crate) fn new(table: Table, write_buffer: u64) -> BufferedMutator {
        BufferedMutator {
            table,
            write_buffer: write_buffer.max(1),
            buffer: Vec::new(),
            buffered: 0,
            failed: Vec::new(),
            sent: 0,
            flushes: 0,
        }
    }

    /// The write buffer's size in bytes.
    pub fn write_buffer_size(&self) -> u64 {
        self.write_buffer
    }

    /// Bytes buffered now.
    pub fn buffered_bytes(&self) -> u64 {
        self.buffered
    }

    /// Batches sent so far.
    pub fn flushes(&self) -> u64 {
        self.flushes
    }

    /// Buffers `m`; sends the buffer when it reaches the write buffer size.
    pub async fn mutate(&mut self, m: RowMutation) -> Result<()> {
        self.buffered += m.encoded_size() as u64;
        self.buffer.push(m);
        if self.buffered >= self.write_buffer {
            self.send().await;
        }
        Ok(())
    }

    async fn send(&mut self) {
        if self.buffer.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.buffer);
        self.buffered = 0;
        self.flushes += 1;
        self.sent += batch.len() as u64;
        for r in self.table.batch(&batch).await {
            if let Err(e) = r {
                self.failed.push(e);
            }
        }
    }

    /// Sends whatever is buffered; the errors of every flush since the
    /// last call, if any (the first one, with the count).
    pub async fn flush(&mut self) -> Result<()> {
        self.send().await;
        let mut failed = std::mem::take(&mut self.failed).into_iter();
        let count = failed.len();
        match failed.next() {
            None => Ok(()),
            Some(first) if count == 1 => Err(first),
            Some(first) => Err(ClientError::BatchFailed {
                failed: count,
                first: Box::new(first),
            }),
        }
    }

    /// Flushes and ends the mutator.
    pub async fn close(mut self) -> Result<()> {
        self.flush().await
    }
}
