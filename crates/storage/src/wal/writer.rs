//! Group commit: many appenders, one write(2) and at most one fdatasync
//! per batch.
//!
//! Three locks, each held briefly and never across a syscall that other
//! appenders would wait on to *buffer*:
//! - `pending`: the encode buffer. Appenders encode their records straight
//!   into it; positions are logical byte offsets (`end` = bytes ever
//!   buffered), which serve as commit tickets.
//! - `state`: how far the log is written / synced, who leads, whether the
//!   log failed. Waiters sleep on `done`.
//! - `io`: the segment file. Only the leader holds it, for write, sync and
//!   roll; appenders never touch it, so they keep buffering meanwhile.
//!
//! Leader/follower: a waiter whose ticket is not yet covered becomes the
//! leader if there is none, swaps the whole pending buffer out (everything
//! buffered so far, its own bytes included), writes it with one write(2),
//! fdatasyncs if any buffered appender asked for FSYNC_WAL, publishes the
//! new positions and wakes everyone. An I/O error fails every waiter not
//! yet covered and makes the log refuse all later appends: a log that lost
//! bytes must never acknowledge again.
//!
//! Resuming after an I/O error (a full disk freed, HBase's "writes succeed
//! again once space is back"): at most once per [`RESUME_INTERVAL`], an
//! appender that meets the refusal tries [`Writer::try_resume`]. It cuts
//! the failed segment back to its last whole batch before the failure
//! (every byte after it belongs to callers that were told "failed", so none
//! may be replayed later), syncs it, and starts a new segment. Everything
//! buffered during the failure is dropped, and the *generation* advances:
//! a ticket of an older generation counts as written only if that
//! generation got past it before it ended, so nobody whose bytes were
//! dropped or cut off is acknowledged. A fenced log never resumes.
//!
//! Fencing: after every batch write or sync, and before anyone is told,
//! the leader checks that its claim on the WAL directory still holds
//! ([`DirClaim`]: same device and inode under the same path on a local
//! root, its `OWNER` object on S3). In distributed mode the master fences
//! a dead server's WAL directory before splitting it, so a server that was
//! only paused (its lease expired, its regions reassigned) and then resumes
//! fails that check and acknowledges nothing more: either its bytes were
//! written before the fence, and the split reads them, or the check sees
//! the fence and the batch fails like a failed write.
//!
//! This module never reads segments and never decides which ones to
//! delete (see `tracker`); it only tells the tracker where batches went.

use super::WalEdit;
use super::record::{self, MAX_PAYLOAD, TooLarge};
use super::segment::{self, HEADER_LEN};
use super::stats::Counters;
use super::tracker::Tracker;
use crate::error::{Result, StorageError};
use crate::fs::{DirClaim, LogWriter, Storage};
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// ASYNC_WAL appenders wake the flusher early once this much is buffered,
/// so the background write overlaps with the producer.
pub(crate) const ASYNC_KICK_BYTES: usize = 1 << 20;
/// ... and wait for a write themselves past this much: bounded memory.
pub(crate) const ASYNC_MAX_BYTES: usize = 64 << 20;
/// A batch buffer larger than this is not kept for reuse. As large as an
/// ASYNC_WAL backlog may grow: a buffer dropped after every batch is
/// re-faulted from the OS on the next (a few % of a bulk load's CPU).
const MAX_IDLE_BUFFER: usize = ASYNC_MAX_BYTES;
/// How often an appender may try to resume a failed log (module docs).
pub(crate) const RESUME_INTERVAL: Duration = Duration::from_secs(1);

/// Why the log takes no more appends.
#[derive(Clone, Debug)]
enum Refusal {
    Closed,
    Failed(Failure),
}

/// A write, sync or roll failure, kept so every later caller gets it.
#[derive(Clone, Debug)]
struct Failure {
    path: PathBuf,
    kind: io::ErrorKind,
    message: String,
    /// The failure was the fence (module docs), not an I/O error.
    fenced: bool,
}

impl Failure {
    fn of(e: &StorageError, fallback: &Path) -> Failure {
        match e {
            StorageError::Io { path, source } => Failure {
                path: path.clone(),
                kind: source.kind(),
                message: source.to_string(),
                fenced: false,
            },
            StorageError::Fenced(m) => Failure {
                path: fallback.to_path_buf(),
                kind: io::ErrorKind::Other,
                message: m.clone(),
                fenced: true,
            },
            other => Failure {
                path: fallback.to_path_buf(),
                kind: io::ErrorKind::Other,
                message: other.to_string(),
                fenced: false,
            },
        }
    }

    fn to_error(&self) -> StorageError {
        if self.fenced {
            return StorageError::Fenced(self.message.clone());
        }
        let msg = format!(
            "WAL refuses writes after a failed write or sync: {}",
            self.message
        );
        StorageError::io(&self.path, io::Error::new(self.kind, msg))
    }
}

struct Pending {
    buf: Vec<u8>,
    /// region → max seq of the edits in `buf`, handed to the tracker.
    regions: HashMap<u64, u64>,
    /// Logical offset after the last buffered byte.
    end: u64,
    /// Highest ticket some waiter needs fdatasynced.
    fsync_upto: u64,
    /// The flusher was already woken for this buffer.
    kicked: bool,
    refusal: Option<Refusal>,
    /// Advanced by each resume (module docs).
    generation: u64,
    /// When a resume may next be tried.
    next_resume: Instant,
}

struct CommitState {
    written: u64,
    synced: u64,
    leader: bool,
    failed: Option<Failure>,
    /// The generation positions refer to (module docs).
    generation: u64,
    /// The failure that ended the previous generation, for its late waiters.
    ended: Option<Failure>,
    /// (generation, written, synced) where recent generations ended: a
    /// waiter of one of them whose bytes were written before the failure
    /// is still told so.
    ended_at: std::collections::VecDeque<(u64, u64, u64)>,
}

struct IoState {
    /// `None` after close.
    file: Option<Box<dyn LogWriter>>,
    seg_id: u64,
    seg_path: PathBuf,
    seg_len: u64,
    written: u64,
    synced: u64,
    /// The batch being written; swapped with `Pending::buf` so both
    /// buffers are reused rather than reallocated.
    batch: Vec<u8>,
    batch_regions: HashMap<u64, u64>,
}

/// What [`Writer::buffer`] did.
pub(crate) struct Buffered {
    /// The ticket: the append is written once `written >= end`.
    pub end: u64,
    /// ASYNC_WAL only: wake the flusher now.
    pub kick: bool,
    /// ASYNC_WAL only: too much is buffered; wait for the write.
    pub must_wait: bool,
    /// The generation `end` belongs to (module docs).
    pub generation: u64,
}

/// The group-commit writer of the current segment.
pub(crate) struct Writer {
    fs: Arc<dyn Storage>,
    dir: PathBuf,
    /// This writer's hold on `dir`: the fence (module docs).
    claim: Box<dyn DirClaim>,
    roll_size: u64,
    pending: Mutex<Pending>,
    state: Mutex<CommitState>,
    done: Condvar,
    io: Mutex<IoState>,
    tracker: Arc<Tracker>,
    counters: Arc<Counters>,
    /// Tests make the next batch writes fail, as a full disk would.
    #[cfg(test)]
    pub(crate) fail_writes: std::sync::atomic::AtomicBool,
    /// Tests hold resumes off (or allow them at once).
    #[cfg(test)]
    pub(crate) resume_interval: Mutex<Duration>,
}

impl Writer {
    /// A writer appending to the freshly created segment `(id, file, path)`.
    pub(crate) fn new(
        (fs, dir, claim): (Arc<dyn Storage>, &Path, Box<dyn DirClaim>),
        roll_size: u64,
        segment: (u64, Box<dyn LogWriter>, PathBuf),
        tracker: Arc<Tracker>,
        counters: Arc<Counters>,
    ) -> Writer {
        let (seg_id, file, seg_path) = segment;
        Writer {
            fs,
            dir: dir.to_path_buf(),
            claim,
            roll_size,
            pending: Mutex::new(Pending {
                buf: Vec::new(),
                regions: HashMap::new(),
                end: 0,
                fsync_upto: 0,
                kicked: false,
                refusal: None,
                generation: 0,
                next_resume: Instant::now(),
            }),
            state: Mutex::new(CommitState {
                written: 0,
                synced: 0,
                leader: false,
                failed: None,
                generation: 0,
                ended: None,
                ended_at: std::collections::VecDeque::new(),
            }),
            done: Condvar::new(),
            io: Mutex::new(IoState {
                file: Some(file),
                seg_id,
                seg_path,
                seg_len: HEADER_LEN,
                written: 0,
                synced: 0,
                batch: Vec::new(),
                batch_regions: HashMap::new(),
            }),
            tracker,
            counters,
            #[cfg(test)]
            fail_writes: std::sync::atomic::AtomicBool::new(false),
            #[cfg(test)]
            resume_interval: Mutex::new(RESUME_INTERVAL),
        }
    }

    fn closed_error(&self) -> StorageError {
        StorageError::Closed(format!("WAL {}", self.dir.display()))
    }

    /// Encodes `edits` into the pending buffer as one unit (all or none).
    pub(crate) fn buffer(&self, edits: &[WalEdit], fsync: bool) -> Result<Buffered> {
        let mut guard = self.pending.lock();
        match &guard.refusal {
            Some(Refusal::Closed) => return Err(self.closed_error()),
            Some(Refusal::Failed(f)) => {
                let failure = f.to_error();
                if f.fenced || Instant::now() < guard.next_resume {
                    return Err(failure);
                }
                guard.next_resume = Instant::now() + self.resume_interval();
                drop(guard);
                if let Err(e) = self.try_resume() {
                    tracing::warn!(error = %e, "WAL still cannot resume after its failed write");
                    return Err(failure);
                }
                guard = self.pending.lock();
                if guard.refusal.is_some() {
                    return Err(failure);
                }
            }
            None => {}
        }
        let p = &mut *guard;
        let start = p.buf.len();
        // One reservation for the whole call: growing a multi-megabyte
        // buffer by doubling copies it and faults fresh pages in each time.
        p.buf
            .reserve(edits.iter().map(record::max_encoded_len).sum::<usize>());
        for edit in edits {
            if let Err(TooLarge(n)) = record::encode(edit, &mut p.buf) {
                p.buf.truncate(start);
                return Err(StorageError::InvalidRequest(format!(
                    "WAL edit (region {}, seq {}) encodes to {n} bytes, over the {MAX_PAYLOAD}-byte record limit",
                    edit.region_id, edit.seq
                )));
            }
        }
        for edit in edits {
            let max = p.regions.entry(edit.region_id).or_insert(edit.seq);
            *max = (*max).max(edit.seq);
        }
        p.end += (p.buf.len() - start) as u64;
        if fsync {
            p.fsync_upto = p.end;
        }
        let kick = !p.kicked && p.buf.len() >= ASYNC_KICK_BYTES;
        p.kicked |= kick;
        let buffered = Buffered {
            end: p.end,
            kick,
            must_wait: p.buf.len() >= ASYNC_MAX_BYTES,
            generation: p.generation,
        };
        drop(guard);
        self.counters.add_appends(edits.len() as u64);
        Ok(buffered)
    }

    /// Writes (and with `fsync`, syncs) everything buffered so far.
    pub(crate) fn flush(&self, fsync: bool) -> Result<()> {
        let (end, generation) = {
            let mut p = self.pending.lock();
            if fsync {
                p.fsync_upto = p.end;
            }
            (p.end, p.generation)
        };
        self.wait(end, generation, fsync)
    }

    /// Returns once ticket `end` is written (and synced, with `fsync`),
    /// leading batches as needed. The caller must have buffered `end` with
    /// the same `fsync` (so `fsync_upto >= end`), or the loop cannot finish.
    /// A ticket of an earlier `generation` fails: its bytes were dropped.
    pub(crate) fn wait(&self, end: u64, generation: u64, fsync: bool) -> Result<()> {
        let mut st = self.state.lock();
        loop {
            if st.generation != generation {
                let done = st.ended_at.iter().any(|&(g, written, synced)| {
                    g == generation && (if fsync { synced } else { written }) >= end
                });
                if done {
                    return Ok(());
                }
                return Err(st
                    .ended
                    .as_ref()
                    .map(Failure::to_error)
                    .unwrap_or_else(|| self.closed_error()));
            }
            let reached = if fsync { st.synced } else { st.written };
            if reached >= end {
                return Ok(());
            }
            if let Some(f) = &st.failed {
                return Err(f.to_error());
            }
            if st.leader {
                self.done.wait(&mut st);
                continue;
            }
            st.leader = true;
            let result = MutexGuard::unlocked(&mut st, || self.lead());
            st.leader = false;
            // Waiters re-check under `state` once we release it (below, by
            // waiting, or on return), so they see the updated positions.
            self.done.notify_all();
            match result {
                Ok((written, synced)) => {
                    st.written = st.written.max(written);
                    st.synced = st.synced.max(synced);
                }
                Err(e) => {
                    st.failed = Some(Failure::of(&e, &self.dir));
                    return Err(e);
                }
            }
        }
    }

    /// One group commit. Returns the new (written, synced) positions.
    fn lead(&self) -> Result<(u64, u64)> {
        let mut guard = self.io.lock();
        let io = &mut *guard;
        let (end, want_sync) = {
            let mut p = self.pending.lock();
            std::mem::swap(&mut p.buf, &mut io.batch);
            std::mem::swap(&mut p.regions, &mut io.batch_regions);
            p.kicked = false;
            (p.end, p.fsync_upto > io.synced)
        };
        let result = self
            .write_batch(io, end, want_sync)
            .map_err(|e| self.explain_failure(e));
        if let Err(e) = &result {
            // Refuse new appends before anyone is told: no later append may
            // be acknowledged after bytes were lost.
            let mut p = self.pending.lock();
            p.refusal = Some(Refusal::Failed(Failure::of(e, &io.seg_path)));
            p.next_resume = Instant::now() + self.resume_interval();
            drop(p);
            tracing::error!(error = %e, "WAL write failed; the WAL refuses further appends");
        }
        result
    }

    fn write_batch(&self, io: &mut IoState, end: u64, want_sync: bool) -> Result<(u64, u64)> {
        if !io.batch.is_empty() && io.seg_len >= self.roll_size && io.seg_len > HEADER_LEN {
            self.roll(io)?;
        }
        // Where a resume cuts the segment back to (module docs): the bytes
        // of this batch are nobody's acknowledged write until it is done.
        let before = io.seg_len;
        let result = self.write_and_sync(io, end, want_sync);
        if result.is_err() {
            io.seg_len = before;
        }
        result?;
        self.check_fence()?;
        Ok((io.written, io.synced))
    }

    fn write_and_sync(&self, io: &mut IoState, end: u64, want_sync: bool) -> Result<()> {
        if !io.batch.is_empty() {
            self.write_current_batch(io, end)?;
        }
        if want_sync && io.synced < io.written {
            self.sync_file(io)?;
        }
        Ok(())
    }

    /// Appends the swapped-out batch to the current segment.
    fn write_current_batch(&self, io: &mut IoState, end: u64) -> Result<()> {
        // Booked before the write, so a concurrent mark_flushed can never
        // see these bytes on disk without their regions pinning the file.
        self.tracker.record_batch(io.seg_id, &io.batch_regions);
        let file = io.file.as_mut().ok_or_else(|| self.closed_error())?;
        #[cfg(test)]
        if self.fail_writes.load(std::sync::atomic::Ordering::SeqCst) {
            // All but the last byte reaches the file, as with ENOSPC.
            let part = io.batch.get(..io.batch.len() - 1).unwrap_or_default();
            file.append(part)?;
            return Err(StorageError::io(
                &io.seg_path,
                io::Error::other("injected write failure"),
            ));
        }
        file.append(&io.batch)?;
        let n = io.batch.len() as u64;
        io.seg_len += n;
        io.written = end;
        self.counters.add_batch(n);
        io.batch.clear();
        io.batch_regions.clear();
        if io.batch.capacity() > MAX_IDLE_BUFFER {
            io.batch = Vec::new();
        }
        Ok(())
    }

    fn resume_interval(&self) -> Duration {
        #[cfg(test)]
        return *self.resume_interval.lock();
        #[cfg(not(test))]
        RESUME_INTERVAL
    }

    /// Resumes a log refused after an I/O error (module docs): cuts the
    /// failed segment back to its last good batch, starts a new segment and
    /// a new generation. Fails (and the log stays refused) while the
    /// storage still fails, or when the directory was fenced.
    pub(crate) fn try_resume(&self) -> Result<()> {
        let mut guard = self.io.lock();
        let io = &mut *guard;
        {
            let p = self.pending.lock();
            match &p.refusal {
                Some(Refusal::Failed(f)) if !f.fenced => {}
                _ => return Ok(()),
            }
            // A leader still reporting its failure: try again later.
            if self.state.lock().leader {
                return Ok(());
            }
        }
        self.check_fence()?;
        io.file = None;
        self.fs.truncate_log(&io.seg_path, io.seg_len)?;
        let id = io.seg_id + 1;
        let (file, path) = segment::create(&*self.fs, &self.dir, id)?;
        tracing::warn!(
            cut = %self.fs.display(&io.seg_path),
            at = io.seg_len,
            next = id,
            "WAL resumed after a failed write: the failed batch was cut off and a new segment started"
        );
        io.file = Some(file);
        io.seg_id = id;
        io.seg_path = path.clone();
        io.seg_len = HEADER_LEN;
        io.batch.clear();
        io.batch_regions.clear();
        self.counters.inc_rolls();
        self.tracker.rolled(id, path);
        let mut p = self.pending.lock();
        let mut st = self.state.lock();
        let ended = match p.refusal.take() {
            Some(Refusal::Failed(f)) => Some(f),
            other => {
                p.refusal = other;
                None
            }
        };
        p.buf.clear();
        p.regions.clear();
        p.kicked = false;
        p.fsync_upto = p.end;
        p.generation += 1;
        // Where the ended generation got to, for its late waiters.
        if st.ended_at.len() >= 16 {
            st.ended_at.pop_front();
        }
        let reached = (st.generation, st.written, st.synced);
        st.ended_at.push_back(reached);
        io.written = p.end;
        io.synced = p.end;
        st.written = p.end;
        st.synced = p.end;
        st.failed = None;
        st.generation = p.generation;
        st.ended = ended;
        Ok(())
    }

    /// A write or sync that failed because the directory was fenced is
    /// reported as the fence: on HDFS the fence takes the segment's lease
    /// away, so the write itself fails before the claim is checked.
    fn explain_failure(&self, e: StorageError) -> StorageError {
        if matches!(e, StorageError::Fenced(_)) {
            return e;
        }
        match self.claim.still_held() {
            Ok(false) => StorageError::Fenced(format!("{} ({e})", self.fenced_message())),
            _ => e,
        }
    }

    /// Fails if the WAL directory was fenced or removed (module docs).
    fn check_fence(&self) -> Result<()> {
        if self.claim.still_held()? {
            return Ok(());
        }
        Err(StorageError::Fenced(self.fenced_message()))
    }

    fn fenced_message(&self) -> String {
        format!(
            "the WAL directory {} was fenced or removed (the master is splitting this \
             server's WAL: its lease expired); this server acknowledges no more writes",
            self.fs.display(&self.dir)
        )
    }

    fn sync_file(&self, io: &mut IoState) -> Result<()> {
        let file = io.file.as_mut().ok_or_else(|| self.closed_error())?;
        let started = std::time::Instant::now();
        file.sync()?;
        // A histogram, not a counter: a sync's tail latency is what a
        // SYNC_WAL writer waits on (docs/metrics.md).
        metrics::histogram!(crate::wal::SYNC_SECONDS).record(started.elapsed());
        io.synced = io.written;
        self.counters.inc_syncs();
        Ok(())
    }

    /// Starts the next segment. The finished one is synced first, so every
    /// segment but the current is durable and only the current can tear.
    fn roll(&self, io: &mut IoState) -> Result<()> {
        if io.synced < io.written {
            self.sync_file(io)?;
        }
        let id = io.seg_id + 1;
        let (file, path) = segment::create(&*self.fs, &self.dir, id)?;
        tracing::debug!(
            from = io.seg_id,
            to = id,
            bytes = io.seg_len,
            "WAL: rolled segment"
        );
        io.file = Some(file);
        io.seg_id = id;
        io.seg_path = path.clone();
        io.seg_len = HEADER_LEN;
        self.counters.inc_rolls();
        self.tracker.rolled(id, path);
        Ok(())
    }

    /// Runs `f(current segment id, bytes written to it)` while no batch is
    /// being written, so the pair is consistent with the tracker.
    pub(crate) fn with_position<R>(&self, f: impl FnOnce(u64, u64) -> R) -> R {
        let io = self.io.lock();
        f(io.seg_id, io.seg_len)
    }

    /// Refuses new appends, then writes and syncs everything buffered and
    /// releases the file. Idempotent.
    pub(crate) fn close(&self) -> Result<()> {
        {
            let mut p = self.pending.lock();
            match &p.refusal {
                Some(Refusal::Closed) => return Ok(()),
                Some(Refusal::Failed(f)) => return Err(f.to_error()),
                None => p.refusal = Some(Refusal::Closed),
            }
        }
        let result = self.flush(true);
        self.io.lock().file = None;
        result
    }
}
