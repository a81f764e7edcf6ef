//! A storage that reads another one and never changes it: every write lands in memory.
//!
//! [`crate::Log::open_read_only`] opens a log through [`ReadOnlyStorage`], so that everything
//! opening a log may do to its directory — recovering a torn tail, rebuilding an index, writing
//! a producer state snapshot, removing stray snapshots or the clean shutdown marker — happens in
//! memory and the directory is left exactly as it was (names, sizes, contents, modification
//! times). Files of the base storage are opened read-only, so this works on a read-only mount or
//! a directory without write permission.
//!
//! Each base file's length is taken once, when it is first opened: later appends by a writer in
//! another process are not seen, so a reader works on a consistent prefix of the log. Written
//! bytes are kept as copy-on-write pages of [`PAGE`] bytes; truncating a base file only lowers
//! the length it shows, so a recovery that cuts a 1 GiB segment costs no memory.

use super::{DirLock, LockWait, Storage, StorageFile};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// Size of a copy-on-write page.
pub const PAGE: u64 = 64 * 1024;

/// What a path names in the overlay.
#[derive(Debug, Clone)]
enum Node {
    /// The base file at this path (not opened yet).
    Base(PathBuf),
    /// A file opened or written through the overlay.
    File(Arc<Mutex<CowData>>),
    /// Removed or renamed away.
    Gone,
}

#[derive(Debug, Default)]
struct Overlay {
    nodes: HashMap<PathBuf, Node>,
    dirs: HashSet<PathBuf>,
}

/// A read-only view of `base` with writes kept in memory. See the module documentation.
///
/// # Examples
///
/// ```
/// use krecords_log::storage::{MemStorage, ReadOnlyStorage, Storage, StorageFile};
/// use std::path::Path;
/// use std::sync::Arc;
///
/// let base = MemStorage::new();
/// base.create_dir_all(Path::new("/d")).unwrap();
/// base.create(Path::new("/d/a")).unwrap().write_at(b"on disk", 0).unwrap();
///
/// let view = ReadOnlyStorage::new(Arc::new(base.clone()));
/// let f = view.open(Path::new("/d/a")).unwrap();
/// f.write_at(b"IN", 0).unwrap();
/// f.set_len(4).unwrap();
/// view.remove(Path::new("/d/a")).unwrap();
/// // The base storage is unchanged.
/// assert_eq!(base.file_bytes(Path::new("/d/a")).unwrap(), b"on disk");
/// ```
#[derive(Debug, Clone)]
pub struct ReadOnlyStorage {
    base: Arc<dyn Storage>,
    overlay: Arc<Mutex<Overlay>>,
}

impl ReadOnlyStorage {
    /// A read-only view of `base`.
    pub fn new(base: Arc<dyn Storage>) -> Self {
        ReadOnlyStorage {
            base,
            overlay: Arc::new(Mutex::new(Overlay::default())),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Overlay> {
        self.overlay.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The node of `path`, opening a base file into the overlay on first use.
    fn file(&self, o: &mut Overlay, path: &Path) -> io::Result<Arc<Mutex<CowData>>> {
        let base_path = match o.nodes.get(path) {
            Some(Node::File(f)) => return Ok(f.clone()),
            Some(Node::Gone) => return Err(not_found(path)),
            Some(Node::Base(p)) => p.clone(),
            None => path.to_path_buf(),
        };
        let file = self.base.open_read(&base_path)?;
        let len = file.len()?;
        let data = Arc::new(Mutex::new(CowData {
            base: Some(file),
            base_len: len,
            len,
            pages: BTreeMap::new(),
            modified_ms: None,
            base_path: Some(base_path),
        }));
        o.nodes.insert(path.to_path_buf(), Node::File(data.clone()));
        Ok(data)
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{} not found", path.display()),
    )
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl Storage for ReadOnlyStorage {
    fn create(&self, path: &Path) -> io::Result<Box<dyn StorageFile>> {
        let data = Arc::new(Mutex::new(CowData {
            base: None,
            base_len: 0,
            len: 0,
            pages: BTreeMap::new(),
            modified_ms: Some(now_ms()),
            base_path: None,
        }));
        self.lock()
            .nodes
            .insert(path.to_path_buf(), Node::File(data.clone()));
        Ok(Box::new(CowFile(data)))
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn StorageFile>> {
        let mut o = self.lock();
        Ok(Box::new(CowFile(self.file(&mut o, path)?)))
    }

    fn modified(&self, path: &Path) -> Option<std::time::SystemTime> {
        // A file written or removed in memory is not the base's.
        let base = match self.lock().nodes.get(path) {
            None => path.to_path_buf(),
            Some(Node::Base(p)) => p.clone(),
            Some(_) => return None,
        };
        self.base.modified(&base)
    }

    fn exists(&self, path: &Path) -> io::Result<bool> {
        let o = self.lock();
        match o.nodes.get(path) {
            Some(Node::Gone) => Ok(false),
            Some(_) => Ok(true),
            None if o.dirs.contains(path) => Ok(true),
            None => self.base.exists(path),
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut o = self.lock();
        let node = match o.nodes.get(from) {
            Some(Node::Gone) => return Err(not_found(from)),
            Some(n) => n.clone(),
            None if self.base.exists(from)? => Node::Base(from.to_path_buf()),
            None => return Err(not_found(from)),
        };
        o.nodes.insert(to.to_path_buf(), node);
        o.nodes.insert(from.to_path_buf(), Node::Gone);
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        if !self.exists(path)? {
            return Err(not_found(path));
        }
        self.lock().nodes.insert(path.to_path_buf(), Node::Gone);
        Ok(())
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let o = self.lock();
        let mut names: Vec<String> = match self.base.list_dir(dir) {
            Ok(names) => names,
            Err(e) if e.kind() == io::ErrorKind::NotFound && o.dirs.contains(dir) => Vec::new(),
            Err(e) => return Err(e),
        };
        names.retain(|n| !matches!(o.nodes.get(&dir.join(n)), Some(Node::Gone)));
        for (path, node) in &o.nodes {
            if matches!(node, Node::Gone) || path.parent() != Some(dir) {
                continue;
            }
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                names.push(name.to_owned());
            }
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
        Ok(())
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut o = self.lock();
        for d in dir.ancestors() {
            if !d.as_os_str().is_empty() {
                o.dirs.insert(d.to_path_buf());
            }
        }
        Ok(())
    }

    fn modified_ms(&self, path: &Path) -> io::Result<i64> {
        let o = self.lock();
        match o.nodes.get(path) {
            Some(Node::Gone) => Err(not_found(path)),
            Some(Node::Base(p)) => self.base.modified_ms(p),
            Some(Node::File(f)) => {
                let data = f.lock().unwrap_or_else(|e| e.into_inner());
                match (data.modified_ms, &data.base_path) {
                    (Some(ms), _) => Ok(ms),
                    (None, Some(p)) => self.base.modified_ms(p),
                    (None, None) => Ok(0),
                }
            }
            None => self.base.modified_ms(path),
        }
    }

    /// Always granted: a view takes no lock on the base, and writes through it stay in memory.
    fn lock_file(&self, _lock_file: &Path, _wait: LockWait) -> io::Result<Option<DirLock>> {
        Ok(Some(DirLock::new("read-only view")))
    }
}

/// A file of the overlay: a base file (maybe none) seen up to `base_len`, with written pages
/// on top.
#[derive(Debug)]
struct CowData {
    base: Option<Box<dyn StorageFile>>,
    /// Bytes of the base file still visible (lowered by truncation, never raised).
    base_len: u64,
    /// The length the file shows.
    len: u64,
    /// Written pages by page number, each [`PAGE`] bytes.
    pages: BTreeMap<u64, Box<[u8]>>,
    /// Set once written.
    modified_ms: Option<i64>,
    /// Where the base file is, for its modification time.
    base_path: Option<PathBuf>,
}

impl CowData {
    /// Fills `buf` (within the base part) with the base file's bytes at `pos`, zeros past it.
    fn read_base(&self, buf: &mut [u8], pos: u64) -> io::Result<()> {
        let in_base = usize::try_from(self.base_len.saturating_sub(pos))
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let (head, tail) = buf.split_at_mut(in_base);
        let mut got = 0usize;
        if let Some(base) = &self.base {
            // A writer may shrink a file after we took its length (it trims a preallocated
            // index when it rolls): what is gone reads as the zeros it held.
            while got < head.len() {
                match base.read_at(&mut head[got..], pos.saturating_add(got as u64))? {
                    0 => break,
                    n => got = got.saturating_add(n),
                }
            }
        }
        head[got..].fill(0);
        tail.fill(0);
        Ok(())
    }

    fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        if pos >= self.len {
            return Ok(0);
        }
        let n = usize::try_from(self.len - pos)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        let buf = &mut buf[..n];
        if self.pages.is_empty() {
            self.read_base(buf, pos)?;
            return Ok(n);
        }
        let mut done = 0usize;
        while done < n {
            let at = pos + done as u64;
            let page = at / PAGE;
            let in_page = (at % PAGE) as usize;
            let take = (n - done).min(PAGE as usize - in_page);
            let out = &mut buf[done..done + take];
            match self.pages.get(&page) {
                Some(bytes) => out.copy_from_slice(&bytes[in_page..in_page + take]),
                None => self.read_base(out, at)?,
            }
            done += take;
        }
        Ok(n)
    }

    fn page_mut(&mut self, page: u64) -> io::Result<&mut [u8]> {
        if !self.pages.contains_key(&page) {
            let mut bytes = vec![0u8; PAGE as usize].into_boxed_slice();
            self.read_base(&mut bytes, page * PAGE)?;
            self.pages.insert(page, bytes);
        }
        self.pages
            .get_mut(&page)
            .map(|p| &mut p[..])
            .ok_or_else(|| io::Error::other("page vanished"))
    }

    fn write_at(&mut self, buf: &[u8], pos: u64) -> io::Result<()> {
        let end = pos
            .checked_add(buf.len() as u64)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "write past 2^64"))?;
        let mut done = 0usize;
        while done < buf.len() {
            let at = pos + done as u64;
            let in_page = (at % PAGE) as usize;
            let take = (buf.len() - done).min(PAGE as usize - in_page);
            let page = self.page_mut(at / PAGE)?;
            page[in_page..in_page + take].copy_from_slice(&buf[done..done + take]);
            done += take;
        }
        self.len = self.len.max(end);
        self.modified_ms = Some(now_ms());
        Ok(())
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        if len < self.len {
            self.base_len = self.base_len.min(len);
            let first_gone = len.div_ceil(PAGE);
            self.pages.retain(|&p, _| p < first_gone);
            let cut = (len % PAGE) as usize;
            if cut != 0 {
                if let Some(page) = self.pages.get_mut(&(len / PAGE)) {
                    page[cut..].fill(0);
                }
            }
        }
        self.len = len;
        self.modified_ms = Some(now_ms());
        Ok(())
    }
}

#[derive(Debug)]
struct CowFile(Arc<Mutex<CowData>>);

impl CowFile {
    fn data(&self) -> MutexGuard<'_, CowData> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl StorageFile for CowFile {
    fn len(&self) -> io::Result<u64> {
        Ok(self.data().len)
    }

    fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        self.data().read_at(buf, pos)
    }

    fn write_at(&self, buf: &[u8], pos: u64) -> io::Result<()> {
        self.data().write_at(buf, pos)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.data().set_len(len)
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{FsStorage, MemStorage};
    use proptest::prelude::*;

    fn base_with(bytes: &[u8]) -> (MemStorage, ReadOnlyStorage) {
        let base = MemStorage::new();
        base.create_dir_all(Path::new("/d")).unwrap();
        base.put_file(Path::new("/d/f"), bytes);
        let view = ReadOnlyStorage::new(Arc::new(base.clone()));
        (base, view)
    }

    fn read_all(f: &dyn StorageFile) -> Vec<u8> {
        let mut v = vec![0u8; f.len().unwrap() as usize];
        f.read_exact_at(&mut v, 0).unwrap();
        v
    }

    proptest! {
        /// Any sequence of writes and length changes through the view reads back as the same
        /// sequence applied to a plain buffer, and the base never changes.
        #[test]
        fn behaves_like_a_buffer(
            initial in proptest::collection::vec(any::<u8>(), 0..300_000),
            ops in proptest::collection::vec(
                (0u64..400_000, proptest::collection::vec(any::<u8>(), 0..70_000), any::<bool>()),
                0..8,
            ),
        ) {
            let (base, view) = base_with(&initial);
            let f = view.open(Path::new("/d/f")).unwrap();
            let mut model = initial.clone();
            for (pos, bytes, truncate) in ops {
                if truncate {
                    let len = pos as usize;
                    f.set_len(pos).unwrap();
                    model.resize(len, 0);
                } else {
                    f.write_at(&bytes, pos).unwrap();
                    let end = pos as usize + bytes.len();
                    if model.len() < end {
                        model.resize(end, 0);
                    }
                    model[pos as usize..end].copy_from_slice(&bytes);
                }
                prop_assert_eq!(read_all(f.as_ref()), model.clone());
            }
            prop_assert_eq!(base.file_bytes(Path::new("/d/f")).unwrap(), initial);
        }
    }

    #[test]
    fn names_change_only_in_the_view() {
        let (base, view) = base_with(b"x");
        let d = Path::new("/d");
        view.create(&d.join("new")).unwrap();
        view.rename(&d.join("f"), &d.join("g")).unwrap();
        assert_eq!(view.list_dir(d).unwrap(), vec!["g", "new"]);
        assert_eq!(read_all(view.open(&d.join("g")).unwrap().as_ref()), b"x");
        assert!(!view.exists(&d.join("f")).unwrap());
        view.remove(&d.join("g")).unwrap();
        assert!(view.open(&d.join("g")).is_err());
        assert_eq!(base.list_dir(d).unwrap(), vec!["f"]);
    }

    #[test]
    fn a_base_file_shrunk_later_reads_as_zeros_past_its_end() {
        let (base, view) = base_with(&[7u8; 100]);
        let f = view.open(Path::new("/d/f")).unwrap();
        base.open(Path::new("/d/f")).unwrap().set_len(40).unwrap();
        let all = read_all(f.as_ref());
        assert_eq!(all.len(), 100);
        assert!(all[..40].iter().all(|&b| b == 7));
        assert!(all[40..].iter().all(|&b| b == 0));
    }

    #[test]
    fn base_length_is_taken_at_first_open() {
        let (base, view) = base_with(b"abc");
        let f = view.open(Path::new("/d/f")).unwrap();
        base.open(Path::new("/d/f"))
            .unwrap()
            .write_at(b"def", 3)
            .unwrap();
        assert_eq!(read_all(f.as_ref()), b"abc");
        assert_eq!(
            read_all(view.open(Path::new("/d/f")).unwrap().as_ref()),
            b"abc"
        );
    }

    #[test]
    fn reads_files_without_write_permission() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, b"hello").unwrap();
        let mut perms = std::fs::metadata(&p).unwrap().permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(&p, perms).unwrap();
        let view = ReadOnlyStorage::new(Arc::new(FsStorage));
        let f = view.open(&p).unwrap();
        f.write_at(b"J", 0).unwrap();
        assert_eq!(read_all(f.as_ref()), b"Jello");
        assert_eq!(std::fs::read(&p).unwrap(), b"hello");
    }
}
