//! [`BufferedMutator`]: buffers row mutations and sends them in batches.
//!
//! The buffer is counted in encoded bytes (`RowMutation::encoded_size`;
//! docs/architecture.md, design rule 7) and flushed when it reaches
//! `hbase.client.write.buffer`, every
//! `hbase.client.write.buffer.periodicflush.timeout.ms`, on
//! [`flush`](BufferedMutator::flush) and on [`close`](BufferedMutator::close).
//! A mutation that fails for good is never dropped silently: it comes back,
//! with its error, from the next `mutate`, `flush` or `close`.

use crate::error::ClientError;
use crate::table::Table;
use ferrobase_types::RowMutation;
use parking_lot::Mutex as SyncMutex;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

/// One mutation that could not be applied.
#[derive(Debug, Clone)]
pub struct MutationFailure {
    pub mutation: RowMutation,
    pub error: ClientError,
}

/// Mutations that failed, returned by the call that learned of them.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{} mutation(s) failed; first: {}", .0.len(), .0.first().map(|f| f.error.to_string()).unwrap_or_default())]
pub struct MutationErrors(pub Vec<MutationFailure>);

struct Buffer {
    mutations: Vec<RowMutation>,
    bytes: u64,
}

struct Shared {
    table: Table,
    buffer: Mutex<Buffer>,
    failures: SyncMutex<Vec<MutationFailure>>,
}

impl Shared {
    /// Sends what is buffered; failures go to `failures`.
    async fn flush(&self) {
        let mut buf = self.buffer.lock().await;
        if buf.mutations.is_empty() {
            return;
        }
        let mutations = std::mem::take(&mut buf.mutations);
        buf.bytes = 0;
        // Keep the lock while sending: writes of one mutator stay in order.
        let results = self.table.batch(&mutations).await;
        drop(buf);
        let mut failures = self.failures.lock();
        for (m, r) in mutations.into_iter().zip(results) {
            if let Err(error) = r {
                failures.push(MutationFailure { mutation: m, error });
            }
        }
    }

    fn take_failures(&self) -> Result<(), MutationErrors> {
        let f = std::mem::take(&mut *self.failures.lock());
        if f.is_empty() {
            Ok(())
        } else {
            Err(MutationErrors(f))
        }
    }
}

/// A write buffer over one table.
pub struct BufferedMutator {
    shared: Arc<Shared>,
    limit: u64,
    timer: Option<JoinHandle<()>>,
}

impl BufferedMutator {
    /// A mutator with the connection's `hbase.client.write.buffer`.
    pub fn new(table: Table) -> BufferedMutator {
        let limit = table.inner.settings.client_write_buffer;
        BufferedMutator::with_buffer_size(table, limit)
    }

    /// A mutator with a buffer of `bytes` encoded bytes.
    pub fn with_buffer_size(table: Table, bytes: u64) -> BufferedMutator {
        let period = table.inner.settings.client_write_buffer_flush_ms;
        let shared = Arc::new(Shared {
            table,
            buffer: Mutex::new(Buffer {
                mutations: Vec::new(),
                bytes: 0,
            }),
            failures: SyncMutex::new(Vec::new()),
        });
        let timer = (period > 0).then(|| {
            let weak = Arc::downgrade(&shared);
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_millis(period));
                tick.tick().await;
                loop {
                    tick.tick().await;
                    match weak.upgrade() {
                        Some(s) => s.flush().await,
                        None => return,
                    }
                }
            })
        });
        BufferedMutator {
            shared,
            limit: bytes.max(1),
            timer,
        }
    }

    /// Buffers a mutation; sends the buffer when it is full. Returns the
    /// failures of earlier sends, if any.
    pub async fn mutate(&self, mutation: RowMutation) -> Result<(), MutationErrors> {
        let full = {
            let mut buf = self.shared.buffer.lock().await;
            buf.bytes += mutation.encoded_size() as u64;
            buf.mutations.push(mutation);
            buf.bytes >= self.limit
        };
        if full {
            self.shared.flush().await;
        }
        self.shared.take_failures()
    }

    /// Encoded bytes buffered now.
    pub async fn buffered_bytes(&self) -> u64 {
        self.shared.buffer.lock().await.bytes
    }

    /// Sends everything buffered and waits; returns every failure not yet
    /// reported.
    pub async fn flush(&self) -> Result<(), MutationErrors> {
        self.shared.flush().await;
        self.shared.take_failures()
    }

    /// Flushes and stops the periodic timer.
    pub async fn close(mut self) -> Result<(), MutationErrors> {
        if let Some(t) = self.timer.take() {
            t.abort();
        }
        self.flush().await
    }
}

impl Drop for BufferedMutator {
    fn drop(&mut self) {
        if let Some(t) = self.timer.take() {
            t.abort();
        }
    }
}
