//! [`BlockingRuntime`]: a private tokio runtime that remote storage roots
//! (S3, HDFS) drive their async clients on, from synchronous code.
//!
//! Why a private runtime and `spawn` + a std channel: the engine calls
//! [`Storage`](crate::fs::Storage) from plain threads *and* from inside
//! the server's tokio workers. `Runtime::block_on` panics in the latter,
//! and `Handle::current()` does not exist in the former; spawning onto a
//! runtime this value owns and blocking on a std channel works in both.
//! (Blocking a server worker for one request is the price of a
//! synchronous trait, the same as a local `fsync`.)
//!
//! Owns the runtime's threads and its shutdown; never knows what the
//! futures it runs do.

use std::future::Future;
use std::io;
use std::sync::mpsc;
use tokio::runtime::{Handle, Runtime};

/// The result of a future begun with [`BlockingRuntime::start`].
pub(crate) fn wait<T>(rx: mpsc::Receiver<T>) -> io::Result<T> {
    rx.recv().map_err(|_| {
        io::Error::other(
            "the storage request was dropped (its task panicked or the runtime stopped)",
        )
    })
}

/// See the module docs. It may be dropped anywhere: `Runtime`'s own drop
/// blocks waiting for its tasks and panics inside another runtime's
/// worker, where the last handle of a storage root may well be dropped.
pub(crate) struct BlockingRuntime(Option<Runtime>);

impl BlockingRuntime {
    /// A runtime of two worker threads named `name`.
    pub fn new(name: &str) -> io::Result<BlockingRuntime> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(name)
            .enable_all()
            .build()?;
        Ok(BlockingRuntime(Some(rt)))
    }

    /// The runtime's handle (for clients that spawn their own tasks).
    pub fn handle(&self) -> Option<Handle> {
        self.0.as_ref().map(|rt| rt.handle().clone())
    }

    /// Runs `fut` on the runtime and waits for its result, from any thread.
    pub fn run<T, F>(&self, fut: F) -> io::Result<T>
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        wait(self.start(fut))
    }

    /// Starts `fut`; [`wait`] on the receiver gives its result. Lets a
    /// caller keep several requests in flight.
    pub fn start<T, F>(&self, fut: F) -> mpsc::Receiver<T>
    where
        T: Send + 'static,
        F: Future<Output = T> + Send + 'static,
    {
        let (tx, rx) = mpsc::sync_channel(1);
        self.detach(async move {
            // The receiver waits until this sends; it is gone only if the
            // caller gave up on the result (or was unwound).
            let _ = tx.send(fut.await);
        });
        rx
    }

    /// Starts `fut` and does not wait (best-effort cleanup from `Drop`).
    pub fn detach(&self, fut: impl Future<Output = ()> + Send + 'static) {
        if let Some(rt) = &self.0 {
            rt.spawn(fut);
        }
    }
}

impl Drop for BlockingRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}
