//! [`MemStorage`]: a storage root in memory, so the store file reader and
//! writer and the WAL run on fuzz input through their public entry points
//! (`open_on`, `create_on`, `Wal::open_on`, `split::read_wal_dir`) without
//! touching a disk: a file per execution would cost more than the decode.

use ferrobase_storage::error::{Result, StorageError};
use ferrobase_storage::fs::{DirClaim, FileWriter, LogWriter, RandomRead, Storage};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

type Files = Arc<Mutex<BTreeMap<PathBuf, Vec<u8>>>>;

/// Files and WAL segments, by path, in one map.
#[derive(Debug, Default, Clone)]
pub struct MemStorage {
    files: Files,
}

fn lock(files: &Files) -> MutexGuard<'_, BTreeMap<PathBuf, Vec<u8>>> {
    // A panic while the lock was held is already a finding; go on.
    files.lock().unwrap_or_else(|e| e.into_inner())
}

fn not_found(path: &Path) -> StorageError {
    StorageError::io(
        path,
        io::Error::new(io::ErrorKind::NotFound, "no such file"),
    )
}

impl MemStorage {
    pub fn new() -> MemStorage {
        MemStorage::default()
    }

    /// Stores `bytes` at `path` (replacing any file there).
    pub fn insert(&self, path: impl Into<PathBuf>, bytes: Vec<u8>) {
        lock(&self.files).insert(path.into(), bytes);
    }

    /// The bytes at `path`.
    pub fn get(&self, path: &Path) -> Option<Vec<u8>> {
        lock(&self.files).get(path).cloned()
    }
}

#[derive(Debug)]
struct MemFile(Vec<u8>);

impl RandomRead for MemFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|start| self.0.get(start..start.checked_add(buf.len())?))
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(src);
        Ok(())
    }

    fn len(&self) -> u64 {
        self.0.len() as u64
    }
}

struct MemWriter {
    files: Files,
    path: PathBuf,
    buf: Vec<u8>,
}

impl io::Write for MemWriter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl FileWriter for MemWriter {
    fn finish(self: Box<Self>) -> Result<()> {
        let MemWriter { files, path, buf } = *self;
        lock(&files).insert(path, buf);
        Ok(())
    }
}

struct MemLog {
    files: Files,
    path: PathBuf,
}

impl LogWriter for MemLog {
    fn append(&mut self, batch: &[u8]) -> Result<()> {
        lock(&self.files)
            .get_mut(&self.path)
            .ok_or_else(|| not_found(&self.path))?
            .extend_from_slice(batch);
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
}

struct Held;

impl DirClaim for Held {
    fn still_held(&self) -> Result<bool> {
        Ok(true)
    }
}

impl Storage for MemStorage {
    fn url(&self) -> String {
        "mem://".into()
    }

    fn display(&self, path: &Path) -> String {
        format!("mem://{}", path.display())
    }

    fn create_dir_all(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let files = lock(&self.files);
        let mut names: Vec<String> = files
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
            .collect();
        names.sort();
        Ok(names)
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        Ok(lock(&self.files).contains_key(path))
    }

    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        Ok(self.get(path))
    }

    fn open(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
        let bytes = self.get(path).ok_or_else(|| not_found(path))?;
        Ok(Arc::new(MemFile(bytes)))
    }

    fn create(&self, path: &Path) -> Result<Box<dyn FileWriter>> {
        Ok(Box::new(MemWriter {
            files: self.files.clone(),
            path: path.to_path_buf(),
            buf: Vec::new(),
        }))
    }

    fn put(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        self.insert(path, bytes.to_vec());
        Ok(())
    }

    fn put_new(&self, path: &Path, bytes: &[u8]) -> Result<bool> {
        let mut files = lock(&self.files);
        if files.contains_key(path) {
            return Ok(false);
        }
        files.insert(path.to_path_buf(), bytes.to_vec());
        Ok(true)
    }

    fn delete(&self, path: &Path) -> Result<()> {
        lock(&self.files).remove(path);
        Ok(())
    }

    fn delete_all(&self, dir: &Path) -> Result<()> {
        lock(&self.files).retain(|p, _| !p.starts_with(dir));
        Ok(())
    }

    fn create_log(&self, path: &Path, header: &[u8]) -> Result<Box<dyn LogWriter>> {
        self.insert(path, header.to_vec());
        Ok(Box::new(MemLog {
            files: self.files.clone(),
            path: path.to_path_buf(),
        }))
    }

    fn open_log(&self, path: &Path) -> Result<(Box<dyn io::Read + Send>, u64)> {
        let bytes = self.get(path).ok_or_else(|| not_found(path))?;
        let len = bytes.len() as u64;
        Ok((Box::new(io::Cursor::new(bytes)), len))
    }

    fn truncate_log(&self, path: &Path, len: u64) -> Result<()> {
        let mut files = lock(&self.files);
        let file = files.get_mut(path).ok_or_else(|| not_found(path))?;
        file.truncate(usize::try_from(len).unwrap_or(usize::MAX));
        Ok(())
    }

    fn log_exists(&self, path: &Path) -> Result<bool> {
        self.exists(path)
    }

    fn delete_log(&self, path: &Path) -> Result<()> {
        self.delete(path)
    }

    fn claim_dir(&self, _dir: &Path) -> Result<Box<dyn DirClaim>> {
        Ok(Box::new(Held))
    }

    fn fence_dir(&self, dir: &Path, to: &Path) -> Result<()> {
        let mut files = lock(&self.files);
        let moved: Vec<PathBuf> = files
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .cloned()
            .collect();
        for p in moved {
            if let (Some(bytes), Some(name)) = (files.remove(&p), p.file_name()) {
                files.insert(to.join(name), bytes);
            }
        }
        Ok(())
    }

    fn lock_dir(&self, _dir: &Path) -> Result<Option<Box<dyn Send + Sync>>> {
        Ok(None)
    }

    fn reads_are_local(&self) -> bool {
        true
    }
}
