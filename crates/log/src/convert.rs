//! Which files of a partition directory a conversion to another message format keeps.
//!
//! Converting a partition (`krec convert DIR OUT --magic M`) rewrites every segment under the
//! same name and copies the configuration with `message.format.version` set to the target
//! format's; the indexes are not copied but rebuilt by recovering the new directory. For magic 2
//! the files whose offsets still hold are copied too: each segment's `.txnindex`, the
//! `leader-epoch-checkpoint` and the producer snapshots. For v0/v1 they no longer apply (no
//! transactions, producer state or leader epochs there) and are left out. [`plan`] reads the
//! directory through a [`Storage`] and says all of this; the caller converts the entries (the
//! codec's `Converter`) and copies the files.

use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::files::{
    self, LEADER_EPOCH_CHECKPOINT_FILE, LOG_SUFFIX, SNAPSHOT_SUFFIX, TXN_INDEX_SUFFIX,
};
use crate::storage::Storage;
use std::path::Path;

/// One segment of a [`ConversionPlan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentPlan {
    /// The segment's base offset.
    pub base_offset: i64,
    /// Its file name, the same in the input and the output directory.
    pub name: String,
    /// A file to copy unchanged right after the segment is converted, when it exists (its
    /// `.txnindex`, for magic 2).
    pub copy_with: Option<String>,
}

/// What converting a partition directory writes (see the [module](self) docs).
#[derive(Debug, Clone)]
pub struct ConversionPlan {
    /// The segments to convert, in offset order (empty: the directory holds no segment).
    pub segments: Vec<SegmentPlan>,
    /// Files to copy unchanged after the segments, when they exist, in name order.
    pub copy_after: Vec<String>,
    /// The configuration to write first: the input's `krec-log.json` (the default without one,
    /// and unread when there is no segment), with `message.format.version` set to the target
    /// format's.
    pub config: LogConfig,
}

/// Plans the conversion of the partition directory `dir` to message format `magic` (0, 1 or 2).
///
/// # Errors
///
/// The directory cannot be listed, or its `krec-log.json` cannot be read or is not a valid
/// configuration.
///
/// # Examples
///
/// ```
/// use krecords_log::convert;
/// use krecords_log::storage::{MemStorage, Storage};
/// use std::path::Path;
///
/// let st = MemStorage::new();
/// let dir = Path::new("/p");
/// st.create_dir_all(dir).unwrap();
/// for name in ["00000000000000000000.log", "00000000000000000000.index",
///              "00000000000000000000.txnindex", "00000000000000000000.snapshot",
///              "leader-epoch-checkpoint"] {
///     st.create(&dir.join(name)).unwrap();
/// }
/// let v2 = convert::plan(&st, dir, 2).unwrap();
/// assert_eq!(v2.segments[0].copy_with.as_deref(), Some("00000000000000000000.txnindex"));
/// assert_eq!(v2.copy_after, ["00000000000000000000.snapshot", "leader-epoch-checkpoint"]);
/// assert_eq!(v2.config.to_json()["message.format.version"], "3.0");
///
/// let v1 = convert::plan(&st, dir, 1).unwrap();
/// assert_eq!(v1.segments[0].copy_with, None);
/// assert!(v1.copy_after.is_empty());
/// assert_eq!(v1.config.to_json()["message.format.version"], "0.10.2");
/// ```
pub fn plan(storage: &dyn Storage, dir: &Path, magic: u8) -> Result<ConversionPlan> {
    let names = storage
        .list_dir(dir)
        .map_err(|e| Error::io("list", dir, e))?;
    let mut segments: Vec<SegmentPlan> = names
        .iter()
        .filter_map(|n| {
            let base_offset = files::parse_file_name(n, LOG_SUFFIX)?;
            Some(SegmentPlan {
                base_offset,
                name: n.clone(),
                copy_with: (magic == 2).then(|| files::file_name(base_offset, TXN_INDEX_SUFFIX)),
            })
        })
        .collect();
    segments.sort_by_key(|s| s.base_offset);
    let copy_after = if magic == 2 {
        names
            .iter()
            .filter(|n| {
                *n == LEADER_EPOCH_CHECKPOINT_FILE
                    || files::parse_file_name(n, SNAPSHOT_SUFFIX).is_some()
            })
            .cloned()
            .collect()
    } else {
        Vec::new()
    };
    let mut config = if segments.is_empty() {
        LogConfig::default()
    } else {
        files::read_config(storage, dir)?.unwrap_or_default()
    };
    config.set("message.format.version", format_version(magic))?;
    Ok(ConversionPlan {
        segments,
        copy_after,
        config,
    })
}

/// The `message.format.version` that makes a log write `magic` (0.9.0, 0.10.2, or 3.0 for 2).
///
/// ```
/// assert_eq!(krecords_log::convert::format_version(1), "0.10.2");
/// ```
pub fn format_version(magic: u8) -> &'static str {
    match magic {
        0 => "0.9.0",
        1 => "0.10.2",
        _ => "3.0",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemStorage;

    fn dir_with(names: &[(&str, &[u8])]) -> (MemStorage, &'static Path) {
        let st = MemStorage::new();
        let dir = Path::new("/p");
        st.create_dir_all(dir).unwrap();
        for (name, bytes) in names {
            st.create(&dir.join(name))
                .unwrap()
                .write_at(bytes, 0)
                .unwrap();
        }
        (st, dir)
    }

    #[test]
    fn segments_in_offset_order_with_their_txnindex_for_magic_2_only() {
        let (st, dir) = dir_with(&[
            ("00000000000000000100.log", b""),
            ("00000000000000000007.log", b""),
            ("00000000000000000007.index", b""),
            ("00000000000000000007.timeindex", b""),
            ("00000000000000000100.txnindex", b""),
            ("00000000000000000042.snapshot", b""),
            ("leader-epoch-checkpoint", b""),
            ("krec-recovery-point", b""),
            ("krec-clean-shutdown", b""),
            ("x.log", b""),
            ("00000000000000000009.log.deleted", b""),
            ("00000000000000000009.snapshot.tmp", b""),
        ]);
        let p = plan(&st, dir, 2).unwrap();
        let names: Vec<_> = p.segments.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["00000000000000000007.log", "00000000000000000100.log"]
        );
        assert_eq!(
            p.segments.iter().map(|s| s.base_offset).collect::<Vec<_>>(),
            [7, 100]
        );
        assert_eq!(
            p.segments[1].copy_with.as_deref(),
            Some("00000000000000000100.txnindex")
        );
        assert_eq!(
            p.copy_after,
            ["00000000000000000042.snapshot", "leader-epoch-checkpoint"]
        );
        for magic in [0, 1] {
            let p = plan(&st, dir, magic).unwrap();
            assert_eq!(p.segments.len(), 2);
            assert!(p.segments.iter().all(|s| s.copy_with.is_none()));
            assert!(p.copy_after.is_empty());
            assert_eq!(
                p.config.to_json()["message.format.version"],
                format_version(magic)
            );
        }
    }

    #[test]
    fn the_configuration_is_the_inputs_with_the_target_format() {
        let mut config = LogConfig::default();
        config.set("segment.bytes", "12345").unwrap();
        let json = serde_json::to_vec(&config.to_json()).unwrap();
        let (st, dir) = dir_with(&[("00000000000000000000.log", b""), ("krec-log.json", &json)]);
        let p = plan(&st, dir, 1).unwrap();
        assert_eq!(p.config.to_json()["segment.bytes"], 12345);
        assert_eq!(p.config.to_json()["message.format.version"], "0.10.2");
    }

    #[test]
    fn a_broken_configuration_is_an_error_only_beside_segments() {
        let (st, dir) = dir_with(&[("krec-log.json", b"{not json")]);
        let p = plan(&st, dir, 2).unwrap();
        assert!(p.segments.is_empty());
        st.create(&dir.join("00000000000000000000.log")).unwrap();
        let e = plan(&st, dir, 2).unwrap_err();
        assert!(
            e.to_string().starts_with("/p/krec-log.json: not JSON"),
            "{e}"
        );
    }
}
