//! Where the objects are: a small trait with the three reads the remote tier needs, and the
//! plugin's filesystem backend (`storage/filesystem/.../FileSystemStorage.java`: the object
//! `key` is the file `<root>/<key>`).
//!
//! The trait mirrors `object_store`'s `get`, `get_range` and `list` so that an object-store
//! backed implementation is a thin adapter: keys are `/`-separated strings, ranges are byte
//! ranges, and a listing gives each object's key and size.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::error::{Error, Result};

/// One object of a listing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectMeta {
    /// Its key.
    pub key: String,
    /// Its size in bytes.
    pub size: u64,
}

/// Read access to an object store.
pub trait Storage {
    /// The whole object `key`, refused if larger than `limit` bytes (checked before reading).
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`], [`Error::TooLarge`] or [`Error::Io`].
    fn get(&self, key: &str, limit: u64) -> Result<Bytes>;

    /// Bytes `range` of object `key`; exactly `range.end - range.start` bytes.
    ///
    /// # Errors
    ///
    /// [`Error::Truncated`] if the object ends before `range.end`; [`Error::NotFound`] or
    /// [`Error::Io`].
    fn get_range(&self, key: &str, range: Range<u64>) -> Result<Bytes>;

    /// The size of object `key`.
    ///
    /// # Errors
    ///
    /// [`Error::NotFound`] or [`Error::Io`].
    fn size(&self, key: &str) -> Result<u64>;

    /// Every object whose key starts with `prefix`, sorted by key.
    ///
    /// # Errors
    ///
    /// [`Error::Io`].
    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>>;
}

/// A reference or shared pointer to a storage is one.
macro_rules! forward_storage {
    ($($ptr:ty),*) => {$(
        impl<S: Storage + ?Sized> Storage for $ptr {
            fn get(&self, key: &str, limit: u64) -> Result<Bytes> {
                (**self).get(key, limit)
            }
            fn get_range(&self, key: &str, range: Range<u64>) -> Result<Bytes> {
                (**self).get_range(key, range)
            }
            fn size(&self, key: &str) -> Result<u64> {
                (**self).size(key)
            }
            fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
                (**self).list(prefix)
            }
        }
    )*};
}

forward_storage!(&S, std::sync::Arc<S>);

/// The plugin's filesystem backend: object `key` is the file `root/key`.
#[derive(Debug, Clone)]
pub struct FileSystemStorage {
    root: PathBuf,
}

impl FileSystemStorage {
    /// Objects under `root` (`rsm.config.storage.root`).
    pub fn new(root: impl Into<PathBuf>) -> FileSystemStorage {
        FileSystemStorage { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file of `key`. Keys with empty, `.` or `..` elements or a leading `/` are refused,
    /// so that a key never leaves the root.
    ///
    /// # Errors
    ///
    /// [`Error::BadKey`].
    pub fn path(&self, key: &str) -> Result<PathBuf> {
        if key.is_empty()
            || key
                .split('/')
                .any(|p| p.is_empty() || p == "." || p == "..")
        {
            return Err(Error::BadKey {
                key: key.to_string(),
                reason: "not a relative path of plain names".into(),
            });
        }
        Ok(self.root.join(key))
    }

    /// Writes object `key` (creating its directories), as the plugin's `upload` does. For tests
    /// and fixtures.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] or [`Error::BadKey`].
    pub fn put(&self, key: &str, bytes: &[u8]) -> Result<()> {
        let path = self.path(key)?;
        let io = |op, path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { op, path, source }
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        std::fs::write(&path, bytes).map_err(io("write", &path))
    }

    fn open(&self, key: &str) -> Result<(File, u64)> {
        let path = self.path(key)?;
        let file = File::open(&path).map_err(|source| not_found_or(key, "open", &path, source))?;
        let size = file
            .metadata()
            .map_err(|source| Error::Io {
                op: "stat",
                path: path.clone(),
                source,
            })?
            .len();
        Ok((file, size))
    }
}

fn not_found_or(key: &str, op: &'static str, path: &Path, source: std::io::Error) -> Error {
    if source.kind() == std::io::ErrorKind::NotFound {
        Error::NotFound {
            key: key.to_string(),
        }
    } else {
        Error::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Reads up to `len` bytes, fewer only at the end of the file.
fn read_up_to(file: &mut File, len: u64) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    file.take(len).read_to_end(&mut out)?;
    Ok(out)
}

impl Storage for FileSystemStorage {
    fn get(&self, key: &str, limit: u64) -> Result<Bytes> {
        let (mut file, size) = self.open(key)?;
        if size > limit {
            return Err(Error::TooLarge {
                key: key.to_string(),
                size,
                limit,
            });
        }
        // One byte more than the limit: a file that grew since the stat is still refused.
        let bytes = read_up_to(&mut file, limit.saturating_add(1)).map_err(|source| Error::Io {
            op: "read",
            path: self.root.join(key),
            source,
        })?;
        let got = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if got > limit {
            return Err(Error::TooLarge {
                key: key.to_string(),
                size: got,
                limit,
            });
        }
        Ok(Bytes::from(bytes))
    }

    fn get_range(&self, key: &str, range: Range<u64>) -> Result<Bytes> {
        let (mut file, size) = self.open(key)?;
        let needed = range.end.saturating_sub(range.start);
        if range.end > size {
            return Err(Error::Truncated {
                key: key.to_string(),
                at: range.start,
                needed,
                available: size.saturating_sub(range.start),
            });
        }
        let io = |source| Error::Io {
            op: "read",
            path: self.root.join(key),
            source,
        };
        file.seek(SeekFrom::Start(range.start)).map_err(io)?;
        let bytes = read_up_to(&mut file, needed).map_err(io)?;
        let got = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        if got != needed {
            return Err(Error::Truncated {
                key: key.to_string(),
                at: range.start,
                needed,
                available: got,
            });
        }
        Ok(Bytes::from(bytes))
    }

    fn size(&self, key: &str) -> Result<u64> {
        let path = self.path(key)?;
        let meta =
            std::fs::metadata(&path).map_err(|source| not_found_or(key, "stat", &path, source))?;
        Ok(meta.len())
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        // Walk the deepest directory the prefix names, then filter by the whole prefix.
        let dir_part = prefix
            .rfind('/')
            .and_then(|i| prefix.get(..i))
            .unwrap_or("");
        let start = if dir_part.is_empty() {
            self.root.clone()
        } else {
            match self.path(dir_part) {
                Ok(p) => p,
                Err(_) => return Ok(Vec::new()),
            }
        };
        let mut out = Vec::new();
        let mut stack = vec![(start, dir_part.to_string())];
        while let Some((dir, key_dir)) = stack.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => {
                    return Err(Error::Io {
                        op: "list",
                        path: dir,
                        source,
                    })
                }
            };
            for entry in entries {
                let entry = entry.map_err(|source| Error::Io {
                    op: "list",
                    path: dir.clone(),
                    source,
                })?;
                let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                    continue; // not UTF-8: no object key names it
                };
                let key = if key_dir.is_empty() {
                    name
                } else {
                    format!("{key_dir}/{name}")
                };
                let file_type = entry.file_type().map_err(|source| Error::Io {
                    op: "stat",
                    path: entry.path(),
                    source,
                })?;
                if file_type.is_dir() {
                    // Only directories that can hold keys with the prefix.
                    let as_prefix = format!("{key}/");
                    if as_prefix.starts_with(prefix) || prefix.starts_with(&as_prefix) {
                        stack.push((entry.path(), key));
                    }
                } else if file_type.is_file() && key.starts_with(prefix) {
                    let size = entry
                        .metadata()
                        .map_err(|source| Error::Io {
                            op: "stat",
                            path: entry.path(),
                            source,
                        })?
                        .len();
                    out.push(ObjectMeta { key, size });
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filesystem_storage_reads_ranges_and_lists_by_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let s = FileSystemStorage::new(dir.path());
        s.put("p/t-x/0/a.log", b"0123456789").unwrap();
        s.put("p/t-x/0/b.log", b"ab").unwrap();
        s.put("p/u-y/1/c.log", b"c").unwrap();
        s.put("q/d.log", b"d").unwrap();
        assert_eq!(&s.get_range("p/t-x/0/a.log", 2..5).unwrap()[..], b"234");
        let err = s.get_range("p/t-x/0/a.log", 8..12).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Truncated {
                    at: 8,
                    needed: 4,
                    available: 2,
                    ..
                }
            ),
            "{err}"
        );
        assert!(matches!(
            s.get("p/t-x/0/a.log", 9),
            Err(Error::TooLarge { size: 10, .. })
        ));
        assert!(matches!(s.get("p/none", 9), Err(Error::NotFound { .. })));
        assert!(matches!(
            s.get("../etc/passwd", 9),
            Err(Error::BadKey { .. })
        ));
        let keys = |p: &str| {
            s.list(p)
                .unwrap()
                .into_iter()
                .map(|m| m.key)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys("p/"),
            ["p/t-x/0/a.log", "p/t-x/0/b.log", "p/u-y/1/c.log"]
        );
        assert_eq!(keys("p/t"), ["p/t-x/0/a.log", "p/t-x/0/b.log"]);
        assert_eq!(
            keys(""),
            ["p/t-x/0/a.log", "p/t-x/0/b.log", "p/u-y/1/c.log", "q/d.log"]
        );
        assert!(keys("nothing/here/").is_empty());
        assert_eq!(
            s.list("p/t-x/0/a").unwrap(),
            [ObjectMeta {
                key: "p/t-x/0/a.log".into(),
                size: 10
            }]
        );
    }
}
