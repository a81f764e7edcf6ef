//! A storage of one directory that holds exactly the files it was given, each read from wherever
//! it really is: a list of segment files, possibly from several directories, seen as one log
//! directory without creating a link or touching any of them (see
//! [`crate::Log::open_segment_files`]).
//!
//! Only reading is possible: creating, renaming or removing a file is refused (a log opened over
//! it goes through a [`super::ReadOnlyStorage`], which keeps such changes in memory).

use super::{DirLock, FsStorage, LockWait, Storage, StorageFile};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// A directory `dir` whose entries are the given files: `dir/NAME` reads the real file named for
/// `NAME`. Nothing else exists in it.
///
/// # Examples
///
/// ```
/// use krecords_log::storage::{ListedStorage, Storage, StorageFile};
/// use std::path::Path;
///
/// let real = tempfile::tempdir().unwrap();
/// std::fs::write(real.path().join("somewhere.bin"), b"bytes").unwrap();
/// let view = ListedStorage::new(
///     "/virtual",
///     [("a".to_owned(), real.path().join("somewhere.bin"))],
/// );
/// assert_eq!(view.list_dir(Path::new("/virtual")).unwrap(), ["a"]);
/// let f = view.open_read(Path::new("/virtual/a")).unwrap();
/// assert_eq!(f.len().unwrap(), 5);
/// assert!(view.create(Path::new("/virtual/b")).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct ListedStorage {
    dir: PathBuf,
    files: BTreeMap<String, PathBuf>,
}

impl ListedStorage {
    /// The directory `dir` holding `files`: (name in `dir`, real path).
    pub fn new(
        dir: impl Into<PathBuf>,
        files: impl IntoIterator<Item = (String, PathBuf)>,
    ) -> Self {
        ListedStorage {
            dir: dir.into(),
            files: files.into_iter().collect(),
        }
    }

    /// The real path of `path`, when it names one of the files.
    fn real(&self, path: &Path) -> Option<&Path> {
        if path.parent() != Some(self.dir.as_path()) {
            return None;
        }
        let name = path.file_name()?.to_str()?;
        self.files.get(name).map(PathBuf::as_path)
    }

    fn real_or_not_found(&self, path: &Path) -> io::Result<&Path> {
        self.real(path).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is not one of the listed files", path.display()),
            )
        })
    }
}

fn read_only() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "a list of files is read only",
    )
}

impl Storage for ListedStorage {
    fn create(&self, _path: &Path) -> io::Result<Box<dyn StorageFile>> {
        Err(read_only())
    }

    /// Opens the real file for reading only (writes through it fail).
    fn open(&self, path: &Path) -> io::Result<Box<dyn StorageFile>> {
        self.open_read(path)
    }

    fn open_read(&self, path: &Path) -> io::Result<Box<dyn StorageFile>> {
        FsStorage.open_read(self.real_or_not_found(path)?)
    }

    fn exists(&self, path: &Path) -> io::Result<bool> {
        Ok(path == self.dir || self.real(path).is_some())
    }

    fn rename(&self, _from: &Path, _to: &Path) -> io::Result<()> {
        Err(read_only())
    }

    fn remove(&self, _path: &Path) -> io::Result<()> {
        Err(read_only())
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        if dir != self.dir {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{} is not the listed files' directory", dir.display()),
            ));
        }
        Ok(self.files.keys().cloned().collect())
    }

    fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
        Ok(())
    }

    fn create_dir_all(&self, _dir: &Path) -> io::Result<()> {
        Err(read_only())
    }

    fn modified_ms(&self, path: &Path) -> io::Result<i64> {
        FsStorage.modified_ms(self.real_or_not_found(path)?)
    }

    /// Always granted: nothing is written.
    fn lock_file(&self, _lock_file: &Path, _wait: LockWait) -> io::Result<Option<DirLock>> {
        Ok(Some(DirLock::new("listed files")))
    }
}
