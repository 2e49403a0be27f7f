//! The ASYNC_WAL background flusher: a thread that writes out whatever is
//! buffered every `async_flush_interval`, or at once when an appender
//! signals that a lot is buffered.
//!
//! It takes part in group commit exactly like a SYNC_WAL waiter (it may
//! lead a batch), so it owns no file and no buffer. It never fsyncs: an
//! ASYNC_WAL edit is promised to reach the OS, not the disk.

use super::writer::Writer;
use crate::error::{Result, StorageError};
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

#[derive(Default)]
struct Flags {
    kicked: bool,
    stop: bool,
}

/// Wakes the flusher early, or stops it.
#[derive(Default)]
pub(crate) struct Signal {
    flags: Mutex<Flags>,
    cv: Condvar,
}

impl Signal {
    pub(crate) fn kick(&self) {
        self.flags.lock().kicked = true;
        self.cv.notify_one();
    }

    pub(crate) fn stop(&self) {
        self.flags.lock().stop = true;
        self.cv.notify_one();
    }

    /// Waits up to `interval` or for a kick; false once stopped.
    fn wait(&self, interval: Duration) -> bool {
        let mut flags = self.flags.lock();
        if !flags.kicked && !flags.stop {
            self.cv.wait_for(&mut flags, interval);
        }
        flags.kicked = false;
        !flags.stop
    }
}

/// Starts the flusher thread.
pub(crate) fn spawn(
    writer: Arc<Writer>,
    signal: Arc<Signal>,
    interval: Duration,
) -> Result<JoinHandle<()>> {
    // A zero interval would spin; a millisecond is already far below
    // HBase's default of one second.
    let interval = interval.max(Duration::from_millis(1));
    std::thread::Builder::new()
        .name("wal-flusher".into())
        .spawn(move || run(&writer, &signal, interval))
        .map_err(|e| StorageError::io("wal-flusher thread", e))
}

fn run(writer: &Writer, signal: &Signal, interval: Duration) {
    let mut reported = false;
    while signal.wait(interval) {
        if let Err(e) = writer.flush(false) {
            // The writer already refuses appends; say so once, not every tick.
            if !reported {
                tracing::error!(error = %e, "WAL background flush failed");
                reported = true;
            }
        }
    }
}
