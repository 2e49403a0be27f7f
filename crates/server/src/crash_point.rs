//! Crash points: the step boundaries of splits, merges and the janitor,
//! where a kill -9 test makes the process die on purpose.
//!
//! The codebase has no failpoint library; a test sets
//! `FERROBASE_CRASH_AT=<step>` in a server's environment and the process
//! aborts (`std::process::abort`: no destructor, no flush, as a kill -9)
//! when it reaches that step. Unset (always, outside tests), a crash point
//! is one comparison against a value read once. Steps:
//!
//! ```text
//! split-before-references   parent closed and flushed, no daughter written
//! split-after-references    both daughters' manifests written, meta unchanged
//! split-after-meta          meta names the daughters, none opened
//! split-after-open          daughters open (they hold references)
//! merge-after-references    merged region's manifest written, meta unchanged
//! merge-after-meta          meta names the merged region, not opened
//! janitor-after-delete      a parent's files removed, meta still lists it
//! increment-after-apply     a gRPC increment or append applied (its
//!                           edit in the WAL), not answered
//! ```
//!
//! This module never does anything else.

use std::sync::OnceLock;

/// The environment variable naming the step to die at.
pub const ENV: &str = "FERROBASE_CRASH_AT";

/// Aborts the process when `step` is the one [`ENV`] names.
pub fn reached(step: &str) {
    static AT: OnceLock<Option<String>> = OnceLock::new();
    if AT.get_or_init(|| std::env::var(ENV).ok()).as_deref() == Some(step) {
        eprintln!("{ENV}={step}: aborting here");
        std::process::abort();
    }
}
