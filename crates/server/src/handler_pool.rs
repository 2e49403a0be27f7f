//! The RPC handler pool: `hbase.regionserver.handler.count` workers and a
//! bounded call queue (`hbase.ipc.server.max.callqueue.length`).
//!
//! Every data call runs its engine work on a handler (a blocking thread, as
//! the engine does synchronous I/O). A call that finds every handler busy
//! and the queue full is refused at once with [`ErrorCode::ServerBusy`],
//! which clients retry after a pause; the pool never queues without bound.

use crate::error::{Result, ServerError};
use ferrobase_proto::ErrorCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use tokio::sync::Semaphore;

/// Handlers plus a bounded queue.
pub struct HandlerPool {
    handlers: Arc<Semaphore>,
    handler_count: usize,
    admitted: AtomicUsize,
    limit: usize,
    rejected: AtomicU64,
}

struct Admission<'a>(&'a AtomicUsize);

impl Drop for Admission<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl HandlerPool {
    /// A pool of `handlers` workers and `queue` waiting calls.
    pub fn new(handlers: usize, queue: usize) -> HandlerPool {
        let handlers = handlers.max(1);
        HandlerPool {
            handlers: Arc::new(Semaphore::new(handlers)),
            handler_count: handlers,
            admitted: AtomicUsize::new(0),
            limit: handlers + queue,
            rejected: AtomicU64::new(0),
        }
    }

    /// Calls refused with "server busy" so far.
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }

    /// Handlers (`hbase.regionserver.handler.count`).
    pub fn handler_count(&self) -> usize {
        self.handler_count
    }

    /// Handlers running a call now.
    pub fn active_handlers(&self) -> usize {
        self.handler_count
            .saturating_sub(self.handlers.available_permits())
    }

    /// Calls admitted and not yet running on a handler (HBase's
    /// `numCallsInGeneralQueue`); calls answered on the RPC thread pass
    /// through it too, so this is a snapshot, not an exact queue length.
    pub fn queued_calls(&self) -> usize {
        self.admitted
            .load(Ordering::Relaxed)
            .saturating_sub(self.active_handlers())
    }

    /// Counts a call in, or refuses it when every handler is busy and the
    /// queue is full.
    fn admit(&self) -> Result<Admission<'_>> {
        if self.admitted.fetch_add(1, Ordering::SeqCst) >= self.limit {
            self.admitted.fetch_sub(1, Ordering::SeqCst);
            self.rejected.fetch_add(1, Ordering::Relaxed);
            return Err(ServerError::new(
                ErrorCode::ServerBusy,
                format!(
                    "server busy: every handler is busy and the call queue is full ({} calls); retry later",
                    self.limit
                ),
            ));
        }
        Ok(Admission(&self.admitted))
    }

    /// Runs short, non-blocking `work` (a point read on a local root) on
    /// the calling thread: it is admitted like any call, but skips the
    /// hand-off to a handler thread, whose wake-ups cost more than the
    /// read itself.
    pub fn run_here<T>(&self, work: impl FnOnce() -> Result<T>) -> Result<T> {
        let _admission = self.admit()?;
        work()
    }

    /// Runs `work` on a handler, or refuses it when the queue is full.
    pub async fn run<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce() -> Result<T> + Send + 'static,
    {
        let _admission = self.admit()?;
        let _permit = self
            .handlers
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| ServerError::new(ErrorCode::RegionNotServing, "server is stopping"))?;
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| ServerError::new(ErrorCode::Internal, format!("handler failed: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn full_queue_answers_server_busy() {
        let pool = Arc::new(HandlerPool::new(1, 1));
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let rx = Arc::new(parking_lot::Mutex::new(rx));
        let (started_tx, started_rx) = tokio::sync::oneshot::channel();
        let p = pool.clone();
        let r2 = rx.clone();
        let running = tokio::spawn(async move {
            p.run(move || {
                let _ = started_tx.send(());
                r2.lock().recv().ok();
                Ok(1)
            })
            .await
        });
        started_rx.await.unwrap();
        // One call may wait in the queue…
        let p = pool.clone();
        let queued = tokio::spawn(async move { p.run(|| Ok(2)).await });
        while pool.admitted.load(Ordering::SeqCst) < 2 {
            tokio::task::yield_now().await;
        }
        // …the next is refused at once.
        let e = pool.run(|| Ok(3)).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::ServerBusy);
        assert!(e.code.retryable());
        assert_eq!(pool.rejected(), 1);
        tx.send(()).unwrap();
        assert_eq!(running.await.unwrap().unwrap(), 1);
        assert_eq!(queued.await.unwrap().unwrap(), 2);
        assert_eq!(pool.run(|| Ok(4)).await.unwrap(), 4);
    }
}
