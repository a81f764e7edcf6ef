//! [`Sources`]' rule, each partition read once however many arguments name it, for a command
//! that walks its arguments itself (`krec verify`: a broker's root is checked whole, with its
//! own files, not as a list of partitions).

use crate::spec::{classify_dir, DirKind, SourceSpec};
use crate::Sources;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

impl Sources {
    /// `paths` with the arguments that name nothing new left out, as [`Sources::open`] would
    /// read them, each partition once; `note` is given the notes it gives ([`Sources::notes`]:
    /// the partitions and files named more than once), for a command to say as the others say
    /// them (`krec verify ROOT ROOT` as `krec dump ROOT ROOT`). Left out: a root named again
    /// (the same directory, links resolved), a partition directory named before or in a root
    /// among `paths` (checked with it), a file named before or read with a partition directory
    /// among `paths`. `-`, URLs, patterns and paths that do
    /// not open are kept as they are (the command says what is wrong with them), and so is
    /// everything when fewer than two local paths are given or they do not open as sources.
    ///
    /// ```
    /// use krecords_source::Sources;
    ///
    /// let root = tempfile::tempdir().unwrap();
    /// let dir = root.path().join("t-0");
    /// std::fs::create_dir(&dir).unwrap();
    /// std::fs::write(dir.join("00000000000000000000.log"), b"").unwrap();
    /// let mut notes = Vec::new();
    /// let twice = [dir.clone(), dir.join("."), "-".into()];
    /// let kept = Sources::paths_once(&twice, &mut |n| notes.push(n.to_owned()));
    /// assert_eq!(kept, [dir.clone(), "-".into()]);
    /// let said = format!("{}: named more than once, read once", dir.join(".").display());
    /// assert_eq!(notes, [said]);
    /// ```
    pub fn paths_once(paths: &[PathBuf], note: &mut dyn FnMut(&str)) -> Vec<PathBuf> {
        let unchanged = || paths.to_vec();
        let local: Vec<PathBuf> = paths
            .iter()
            .filter(|p| matches!(SourceSpec::parse(p), Ok(SourceSpec::Path(_))) && p.exists())
            .cloned()
            .collect();
        if local.len() < 2 {
            return unchanged();
        }
        let Ok(sources) = Sources::open_local(&local) else {
            return unchanged();
        };
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let kind = |p: &Path| p.is_dir().then(|| classify_dir(p).ok()).flatten();
        // The partition directories of the roots named: checked with their root.
        let mut in_roots = HashSet::new();
        for p in &local {
            if let Some(DirKind::Root(parts)) = kind(p) {
                in_roots.extend(parts.iter().map(|d| canonical(&d.path)));
            }
        }
        // The files read on their own, not with a partition directory named.
        let alone: HashSet<PathBuf> = sources
            .partitions
            .iter()
            .filter(|p| p.dir().is_none())
            .flat_map(|p| p.files())
            .map(|f| canonical(f))
            .collect();
        let mut seen = HashSet::new();
        sources.notes().iter().for_each(|n| note(n));
        paths
            .iter()
            .filter(|p| {
                if !local.contains(p) {
                    return true;
                }
                let c = canonical(p);
                let first = seen.insert(c.clone());
                match kind(p) {
                    Some(DirKind::Root(_)) => first,
                    Some(_) => first && !in_roots.contains(&c),
                    None => first && alone.contains(&c),
                }
            })
            .cloned()
            .collect()
    }
}
