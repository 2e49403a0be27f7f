//! [`LocalFs`]: a local (or NFS-style shared) directory through `std::fs`.
//!
//! Durability is the POSIX recipe: data is fsynced before it is renamed
//! into place, and the directory is fsynced after a create, rename or
//! delete, so a crash leaves the old or the new file, never a half one.
//! The WAL fence is the directory's identity: [`LocalFs::fence_dir`]
//! renames it, and a claim compares `(device, inode)` under the old path.

use super::{DirClaim, FileWriter, LogWriter, RandomRead, Storage};
use crate::error::{Result, StorageError};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// See the module docs.
#[derive(Clone, Debug)]
pub struct LocalFs {
    root: PathBuf,
}

impl LocalFs {
    /// A root directory (an absolute path given to a call is used as is).
    pub fn new(root: impl Into<PathBuf>) -> LocalFs {
        LocalFs { root: root.into() }
    }

    /// No root: every path is used as given, a relative one relative to
    /// the working directory (tools and tests that name files directly).
    pub fn as_given() -> LocalFs {
        LocalFs::new("")
    }

    fn resolve(&self, path: &Path) -> PathBuf {
        self.root.join(path)
    }

    /// Opens a file for reading, with its length.
    fn open_with_len(&self, path: &Path) -> Result<(File, u64)> {
        let path = self.resolve(path);
        let file = File::open(&path).map_err(|e| StorageError::io(&path, e))?;
        let len = file
            .metadata()
            .map_err(|e| StorageError::io(&path, e))?
            .len();
        Ok((file, len))
    }
}

/// fsyncs a directory, so creates, renames and deletes in it survive a crash.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StorageError::io(dir, e))
}

/// Runs `f`; when it fails because the parent directory is missing,
/// creates the parents and runs it again (object stores have no
/// directories, so callers never make them first).
fn with_parents<T>(path: &Path, f: impl Fn() -> io::Result<T>) -> io::Result<T> {
    match f() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir)?;
            }
            f()
        }
        other => other,
    }
}

fn sync_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => sync_dir(dir),
        _ => Ok(()),
    }
}

/// `<name>.tmp` beside `path` (never `with_extension`: `MANIFEST.<epoch>`
/// files of two owners must not share a temp file).
fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

impl Storage for LocalFs {
    fn reads_are_local(&self) -> bool {
        true
    }

    fn url(&self) -> String {
        if self.root.as_os_str().is_empty() {
            return "file:// (paths as given)".to_string();
        }
        format!("file://{}", self.root.display())
    }

    fn display(&self, path: &Path) -> String {
        self.resolve(path).display().to_string()
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        let dir = self.resolve(dir);
        fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let dir = self.resolve(dir);
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StorageError::io(&dir, e)),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| StorageError::io(&dir, e))?;
            if let Some(name) = entry.file_name().to_str() {
                names.push(name.to_string());
            }
        }
        names.sort_unstable();
        Ok(names)
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        let path = self.resolve(path);
        path.try_exists().map_err(|e| StorageError::io(&path, e))
    }

    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        let path = self.resolve(path);
        match fs::read(&path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StorageError::io(&path, e)),
        }
    }

    fn open(&self, path: &Path) -> Result<Arc<dyn RandomRead>> {
        let (file, len) = self.open_with_len(path)?;
        Ok(Arc::new(LocalFile { file, len }))
    }

    fn create(&self, path: &Path) -> Result<Box<dyn FileWriter>> {
        let path = self.resolve(path);
        let tmp = tmp_path(&path);
        let file =
            with_parents(&tmp, || File::create(&tmp)).map_err(|e| StorageError::io(&tmp, e))?;
        Ok(Box::new(LocalWriter {
            out: Some(BufWriter::with_capacity(256 << 10, file)),
            tmp,
            path,
        }))
    }

    fn put(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let mut w = self.create(path)?;
        w.write_all(bytes)
            .map_err(|e| StorageError::io(self.resolve(path), e))?;
        w.finish()
    }

    fn put_new(&self, path: &Path, bytes: &[u8]) -> Result<bool> {
        let path = self.resolve(path);
        let open = || OpenOptions::new().write(true).create_new(true).open(&path);
        let mut f = match with_parents(&path, open) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
            Err(e) => return Err(StorageError::io(&path, e)),
        };
        f.write_all(bytes)
            .and_then(|()| f.sync_all())
            .map_err(|e| StorageError::io(&path, e))?;
        sync_parent(&path)?;
        Ok(true)
    }

    fn delete(&self, path: &Path) -> Result<()> {
        let path = self.resolve(path);
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StorageError::io(&path, e)),
        }
    }

    fn delete_all(&self, dir: &Path) -> Result<()> {
        let dir = self.resolve(dir);
        match fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StorageError::io(&dir, e)),
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let (src, dst) = (self.resolve(from), self.resolve(to));
        with_parents(&dst, || fs::rename(&src, &dst)).map_err(|e| StorageError::io(&src, e))?;
        // Both directories: the new name must survive a crash, and the old
        // one must not come back beside it.
        sync_parent(&dst)?;
        sync_parent(&src)
    }

    fn create_log(&self, path: &Path, header: &[u8]) -> Result<Box<dyn LogWriter>> {
        let path = self.resolve(path);
        let open = || OpenOptions::new().write(true).create_new(true).open(&path);
        let mut file = with_parents(&path, open).map_err(|e| StorageError::io(&path, e))?;
        file.write_all(header)
            .and_then(|()| file.sync_data())
            .map_err(|e| StorageError::io(&path, e))?;
        sync_parent(&path)?;
        Ok(Box::new(LocalLog { file, path }))
    }

    fn open_log(&self, path: &Path) -> Result<(Box<dyn Read + Send>, u64)> {
        let (file, len) = self.open_with_len(path)?;
        Ok((Box::new(file), len))
    }

    fn truncate_log(&self, path: &Path, len: u64) -> Result<()> {
        let path = self.resolve(path);
        let file = OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| StorageError::io(&path, e))?;
        file.set_len(len)
            .and_then(|()| file.sync_all())
            .map_err(|e| StorageError::io(&path, e))
    }

    fn log_exists(&self, path: &Path) -> Result<bool> {
        self.exists(path)
    }

    fn delete_log(&self, path: &Path) -> Result<()> {
        self.delete(path)
    }

    fn claim_dir(&self, dir: &Path) -> Result<Box<dyn DirClaim>> {
        let dir = self.resolve(dir);
        fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
        let id = dir_id(&dir).map_err(|e| StorageError::io(&dir, e))?;
        Ok(Box::new(LocalClaim { dir, id }))
    }

    fn fence_dir(&self, dir: &Path, to: &Path) -> Result<()> {
        let (dir, to) = (self.resolve(dir), self.resolve(to));
        fs::rename(&dir, &to).map_err(|e| {
            StorageError::io(
                &dir,
                io::Error::new(
                    e.kind(),
                    format!("fencing (rename to {}): {e}", to.display()),
                ),
            )
        })?;
        sync_parent(&to)
    }

    fn lock_dir(&self, dir: &Path) -> Result<Option<Box<dyn Send + Sync>>> {
        let path = self.resolve(dir).join("LOCK");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| StorageError::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Box::new(file))),
            Err(TryLockError::WouldBlock) => Err(StorageError::io(
                &path,
                io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "directory is already open (by this or another process)",
                ),
            )),
            Err(TryLockError::Error(e)) => Err(StorageError::io(&path, e)),
        }
    }
}

#[derive(Debug)]
struct LocalFile {
    file: File,
    len: u64,
}

impl RandomRead for LocalFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    fn len(&self) -> u64 {
        self.len
    }
}

struct LocalWriter {
    /// `None` once finished.
    out: Option<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
}

impl Write for LocalWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.out {
            Some(out) => out.write(buf),
            None => Err(io::Error::other("file already finished")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.out {
            Some(out) => out.flush(),
            None => Ok(()),
        }
    }
}

impl FileWriter for LocalWriter {
    fn finish(mut self: Box<Self>) -> Result<()> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        let file = out
            .into_inner()
            .map_err(|e| StorageError::io(&self.tmp, e.into_error()))?;
        file.sync_all()
            .map_err(|e| StorageError::io(&self.tmp, e))?;
        drop(file);
        fs::rename(&self.tmp, &self.path).map_err(|e| StorageError::io(&self.path, e))?;
        sync_parent(&self.path)
    }
}

impl Drop for LocalWriter {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            // Unfinished: the temp file is garbage.
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

struct LocalLog {
    file: File,
    path: PathBuf,
}

impl LogWriter for LocalLog {
    fn append(&mut self, batch: &[u8]) -> Result<()> {
        self.file
            .write_all(batch)
            .map_err(|e| StorageError::io(&self.path, e))
    }

    fn sync(&mut self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| StorageError::io(&self.path, e))
    }
}

/// `(device, inode)` of a directory.
fn dir_id(dir: &Path) -> io::Result<(u64, u64)> {
    let m = fs::metadata(dir)?;
    Ok((m.dev(), m.ino()))
}

struct LocalClaim {
    dir: PathBuf,
    id: (u64, u64),
}

impl DirClaim for LocalClaim {
    fn still_held(&self) -> Result<bool> {
        match dir_id(&self.dir) {
            Ok(id) => Ok(id == self.id),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(StorageError::io(&self.dir, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_as_given_stay_relative_or_absolute() {
        let fs = LocalFs::as_given();
        assert_eq!(fs.display(Path::new("rel/x.sf")), "rel/x.sf");
        assert_eq!(fs.display(Path::new("/abs/x.sf")), "/abs/x.sf");
        let rooted = LocalFs::new("/data");
        assert_eq!(rooted.display(Path::new("t/r")), "/data/t/r");
    }

    #[test]
    fn files_appear_only_when_finished_and_fences_are_seen() {
        let tmp = tempfile::tempdir().unwrap();
        let fs = LocalFs::new(tmp.path());
        let mut w = fs.create(Path::new("a/x")).unwrap();
        w.write_all(b"hello").unwrap();
        assert!(!fs.exists(Path::new("a/x")).unwrap());
        w.finish().unwrap();
        assert_eq!(fs.read(Path::new("a/x")).unwrap().unwrap(), b"hello");
        assert_eq!(fs.list(Path::new("a")).unwrap(), vec!["x".to_string()]);
        let r = fs.open(Path::new("a/x")).unwrap();
        let mut buf = [0u8; 3];
        r.read_exact_at(&mut buf, 2).unwrap();
        assert_eq!(&buf, b"llo");
        assert_eq!(
            r.read_exact_at(&mut buf, 4).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );

        // An unfinished writer leaves nothing.
        let mut w = fs.create(Path::new("a/y")).unwrap();
        w.write_all(b"partial").unwrap();
        drop(w);
        assert_eq!(fs.list(Path::new("a")).unwrap(), vec!["x".to_string()]);

        assert!(fs.put_new(Path::new("a/e"), b"1").unwrap());
        assert!(!fs.put_new(Path::new("a/e"), b"2").unwrap());
        assert_eq!(fs.read(Path::new("a/e")).unwrap().unwrap(), b"1");

        let claim = fs.claim_dir(Path::new("wal/s1")).unwrap();
        assert!(claim.still_held().unwrap());
        fs.fence_dir(Path::new("wal/s1"), Path::new("wal/s1.splitting"))
            .unwrap();
        assert!(!claim.still_held().unwrap());
        // Recreated under the old name: still not this claim's directory.
        fs.create_dir_all(Path::new("wal/s1")).unwrap();
        assert!(!claim.still_held().unwrap());
    }
}
