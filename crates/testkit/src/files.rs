//! The state of a directory on disk, to check that something changed nothing.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

/// Every entry of `dir`: name → (size, contents, modification time); a subdirectory's contents
/// are empty.
pub fn dir_state(dir: &Path) -> BTreeMap<String, (u64, Vec<u8>, SystemTime)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            let name = e.file_name().into_string().unwrap();
            let bytes = if meta.is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (name, (meta.len(), bytes, meta.modified().unwrap()))
        })
        .collect()
}
