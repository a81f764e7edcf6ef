//! Where each source of a target partition stopped: the metadata of the job group's committed
//! offset of that partition,
//! `{"format":"krec-ship/2","positions":{SOURCE-ID: NEXT-OFFSET},"aliases":{PLACE: SOURCE-ID}}`.
//!
//! A source is identified by what it holds ([`crate::Source`]'s identity: the topic id and
//! partition of a Kafka partition directory or a live partition, the first entry of a log or
//! of segment files), so a moved or copied source resumes and two different sources never
//! share a position. `aliases` maps where a source was (its canonical path) to its identity,
//! for one case only: a log without a topic id whose first entry retention has since removed.
//! `krec-ship/1` metadata (keys were places) is read as a list of aliases' positions.

use crate::{Error, Result};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Metadata format tag of the committed positions.
pub const POSITIONS_TAG: &str = "krec-ship/2";
/// The tag of the first format, whose keys were places (paths, URLs); still read.
const POSITIONS_TAG_V1: &str = "krec-ship/1";

/// The positions of one target partition's sources.
///
/// ```
/// use krecords_ship::Positions;
///
/// let mut p = Positions::default();
/// p.set(None, "topic:bF2mVp1_Rv6x9Nq3Z0a1Yw/3", "/data/orders-3", 42);
/// let text = p.to_metadata();
/// assert_eq!(
///     text,
///     r#"{"format":"krec-ship/2","positions":{"topic:bF2mVp1_Rv6x9Nq3Z0a1Yw/3":42},"aliases":{}}"#
/// );
/// let back = Positions::from_metadata(Some(&text), "orders/0").unwrap();
/// assert_eq!(back, p);
/// // A copy elsewhere has the same identity: it resumes.
/// assert_eq!(back.resolve("topic:bF2mVp1_Rv6x9Nq3Z0a1Yw/3", "/copy/orders-3", None).map(|r| r.1), Some(42));
/// assert!(Positions::from_metadata(Some("consumer-7"), "orders/0").is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Positions {
    /// Source identity → next source offset (the offset after the last source record
    /// shipped).
    pub positions: BTreeMap<String, i64>,
    /// A source's place (canonical path) → its identity.
    pub aliases: BTreeMap<String, String>,
}

impl Positions {
    /// Parses committed metadata (`None`: nothing committed yet, no positions). `what` names
    /// the partition and group in errors.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] for metadata that is not krec ship's (another job name?).
    pub fn from_metadata(meta: Option<&str>, what: &str) -> Result<Positions> {
        let Some(meta) = meta else {
            return Ok(Positions::default());
        };
        let v: Value = serde_json::from_str(meta).map_err(|_| {
            Error::usage(format!(
                "{what}: the group's committed metadata is not krec ship's ({meta:?}): another job name?"
            ))
        })?;
        let format = v.get("format").and_then(Value::as_str);
        if format != Some(POSITIONS_TAG) && format != Some(POSITIONS_TAG_V1) {
            return Err(Error::usage(format!(
                "{what}: the group's committed metadata is not krec ship's: another job name?"
            )));
        }
        let mut out = Positions::default();
        if let Some(m) = v.get("positions").and_then(Value::as_object) {
            for (k, v) in m {
                if let Some(n) = v.as_i64() {
                    out.positions.insert(k.clone(), n);
                }
            }
        }
        if let Some(m) = v.get("aliases").and_then(Value::as_object) {
            for (k, v) in m {
                if let Some(id) = v.as_str() {
                    out.aliases.insert(k.clone(), id.to_owned());
                }
            }
        }
        Ok(out)
    }

    /// The metadata to commit.
    pub fn to_metadata(&self) -> String {
        json!({ "format": POSITIONS_TAG, "positions": self.positions, "aliases": self.aliases })
            .to_string()
    }

    /// The key and position of a source whose identity is `id`, found at `place` (its
    /// canonical path or URL), whose data starts at `log_start` when it is a log identified
    /// by its first entry: its own position; else the position krec-ship/1 metadata kept for
    /// `place`; else, when `place` was last seen holding a log identified by a first entry at
    /// an offset below `log_start` (retention removed it since), that log's position. `None`:
    /// the source was never shipped, it starts at its beginning.
    pub fn resolve(&self, id: &str, place: &str, log_start: Option<i64>) -> Option<(&str, i64)> {
        if let Some((k, p)) = self.positions.get_key_value(id) {
            return Some((k, *p));
        }
        if let Some((k, p)) = self.positions.get_key_value(place) {
            return Some((k, *p));
        }
        let old = self.aliases.get(place)?;
        let first = log_first_offset(old)?;
        if log_start? > first {
            return self
                .positions
                .get_key_value(old)
                .map(|(k, p)| (k.as_str(), *p));
        }
        None
    }

    /// Records `next` for the source `id` at `place`, whose position was kept under `old`
    /// (from [`Positions::resolve`]) when that differs: the old key goes. A log known by its
    /// first entry also gets `place` as an alias.
    pub fn set(&mut self, old: Option<&str>, id: &str, place: &str, next: i64) {
        if let Some(old) = old.filter(|o| *o != id) {
            self.positions.remove(old);
        }
        self.positions.insert(id.to_owned(), next);
        // Only a log known by its first entry needs its place (see `resolve`).
        if log_first_offset(id).is_some() {
            self.aliases.insert(place.to_owned(), id.to_owned());
        }
    }

    /// The position of the source whose key is `key` (0 when it has none).
    pub fn get(&self, key: &str) -> i64 {
        self.positions.get(key).copied().unwrap_or(0)
    }
}

/// The identity of a log by its first entry: `log:FIRST_OFFSET@CRC` (CRC in hex).
pub(crate) fn log_identity(first_offset: i64, crc: u32) -> String {
    format!("log:{first_offset}@{crc:08x}")
}

/// The first offset of a [`log_identity`].
fn log_first_offset(id: &str) -> Option<i64> {
    id.strip_prefix("log:")?.split_once('@')?.0.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_and_foreign_metadata_is_refused() {
        let mut m = Positions::default();
        m.set(None, "topic:AAAAAAAAAAAAAAAAAAAAAA/0", "/data/a-0", 42);
        m.set(None, "kafka:AAAAAAAAAAAAAAAAAAAAAA/7", "kafka://h:1/t/0", 7);
        let text = m.to_metadata();
        assert_eq!(Positions::from_metadata(Some(&text), "x").unwrap(), m);
        assert!(Positions::from_metadata(None, "x")
            .unwrap()
            .positions
            .is_empty());
        assert!(Positions::from_metadata(Some("consumer-7"), "x").is_err());
        assert!(Positions::from_metadata(Some("{\"format\":\"other\"}"), "x").is_err());
    }

    #[test]
    fn version_1_metadata_resumes_by_place_and_moves_to_the_identity() {
        let v1 = r#"{"format":"krec-ship/1","positions":{"/data/a-0":42}}"#;
        let mut p = Positions::from_metadata(Some(v1), "x").unwrap();
        let id = log_identity(0, 0xabcd);
        let (key, next) = p.resolve(&id, "/data/a-0", Some(0)).unwrap();
        assert_eq!((key, next), ("/data/a-0", 42));
        let key = key.to_owned();
        p.set(Some(&key), &id, "/data/a-0", 50);
        assert_eq!(p.positions.len(), 1);
        assert_eq!(
            p.resolve(&id, "/elsewhere", Some(0)),
            Some((id.as_str(), 50))
        );
    }

    #[test]
    fn a_place_resumes_a_log_only_when_retention_explains_the_new_first_entry() {
        let mut p = Positions::default();
        let old = log_identity(0, 0x1111);
        p.set(None, &old, "/data/a-0", 900);
        let new = log_identity(500, 0x2222);
        // The first entry is now at 500: the one at 0 was removed; the same log.
        assert_eq!(
            p.resolve(&new, "/data/a-0", Some(500)),
            Some((old.as_str(), 900))
        );
        // Another log at the same place that still starts at 0: a different source.
        let other = log_identity(0, 0x3333);
        assert_eq!(p.resolve(&other, "/data/a-0", Some(0)), None);
        // Another place: nothing.
        assert_eq!(p.resolve(&new, "/data/b-0", Some(500)), None);
    }
}
