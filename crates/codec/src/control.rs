//! Control records: the records of a control batch (attributes bit 5).
//!
//! ```text
//! key:   version: i16 (0), type: i16      0 abort, 1 commit, 2 leader change, 3 snapshot header,
//!                                         4 snapshot footer, 5 kraft version, 6 kraft voters
//! value of an abort/commit (end transaction marker):
//!        version: i16 (0), coordinator epoch: i32
//! ```
//!
//! As in Kafka's `ControlRecordType.parse`, a key shorter than 4 bytes or with a negative version
//! is invalid, a newer version is read as far as the fields this version knows, and an unknown type
//! is [`ControlRecordType::Unknown`].

use crate::{Error, Result};

/// Size of a control record key: version + type.
pub const KEY_SIZE: usize = 4;
/// Size of an end transaction marker value (version 0): version + coordinator epoch.
pub const END_TXN_MARKER_SIZE: usize = 6;

/// Splits `bytes` into a non-negative `i16` version and the `N` bytes after it, as Kafka reads a
/// control record key or an end transaction marker (`what`); more bytes are a newer version's
/// fields and are ignored. `null` is the reason given for `None`.
fn parse_versioned<const N: usize>(
    bytes: Option<&[u8]>,
    at: usize,
    null: &str,
    what: &str,
) -> Result<(i16, [u8; N])> {
    let invalid = |reason: String| Error::InvalidRecord { at, reason };
    let bytes = bytes.ok_or_else(|| invalid(null.into()))?;
    let (Some(v), Some(rest)) = (
        bytes.first_chunk::<2>(),
        bytes.get(2..).and_then(|r| r.first_chunk::<N>()),
    ) else {
        return Err(invalid(format!(
            "{what} has {} bytes, expected at least {}",
            bytes.len(),
            N + 2
        )));
    };
    let version = i16::from_be_bytes(*v);
    if version < 0 {
        return Err(invalid(format!("invalid {what} version {version}")));
    }
    Ok((version, *rest))
}

/// The type of a control record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    /// 0: a transaction was aborted.
    Abort,
    /// 1: a transaction was committed.
    Commit,
    /// 2: KRaft leader change.
    LeaderChange,
    /// 3: KRaft snapshot header.
    SnapshotHeader,
    /// 4: KRaft snapshot footer.
    SnapshotFooter,
    /// 5: KRaft version.
    KRaftVersion,
    /// 6: KRaft voters.
    KRaftVoters,
    /// Any other type id.
    Unknown(i16),
}

impl ControlRecordType {
    /// The type for an id.
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => ControlRecordType::Abort,
            1 => ControlRecordType::Commit,
            2 => ControlRecordType::LeaderChange,
            3 => ControlRecordType::SnapshotHeader,
            4 => ControlRecordType::SnapshotFooter,
            5 => ControlRecordType::KRaftVersion,
            6 => ControlRecordType::KRaftVoters,
            other => ControlRecordType::Unknown(other),
        }
    }

    /// The type id.
    pub fn id(self) -> i16 {
        match self {
            ControlRecordType::Abort => 0,
            ControlRecordType::Commit => 1,
            ControlRecordType::LeaderChange => 2,
            ControlRecordType::SnapshotHeader => 3,
            ControlRecordType::SnapshotFooter => 4,
            ControlRecordType::KRaftVersion => 5,
            ControlRecordType::KRaftVoters => 6,
            ControlRecordType::Unknown(id) => id,
        }
    }

    /// Lowercase name as in our JSON: `abort`, `commit`, `leader_change`, ..., `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            ControlRecordType::Abort => "abort",
            ControlRecordType::Commit => "commit",
            ControlRecordType::LeaderChange => "leader_change",
            ControlRecordType::SnapshotHeader => "snapshot_header",
            ControlRecordType::SnapshotFooter => "snapshot_footer",
            ControlRecordType::KRaftVersion => "kraft_version",
            ControlRecordType::KRaftVoters => "kraft_voters",
            ControlRecordType::Unknown(_) => "unknown",
        }
    }

    /// Kafka's enum name: `ABORT`, `COMMIT`, ..., `UNKNOWN`.
    pub fn kafka_name(self) -> &'static str {
        match self {
            ControlRecordType::Abort => "ABORT",
            ControlRecordType::Commit => "COMMIT",
            ControlRecordType::LeaderChange => "LEADER_CHANGE",
            ControlRecordType::SnapshotHeader => "SNAPSHOT_HEADER",
            ControlRecordType::SnapshotFooter => "SNAPSHOT_FOOTER",
            ControlRecordType::KRaftVersion => "KRAFT_VERSION",
            ControlRecordType::KRaftVoters => "KRAFT_VOTERS",
            ControlRecordType::Unknown(_) => "UNKNOWN",
        }
    }

    /// Whether this type ends a transaction (abort or commit).
    pub fn is_end_txn(self) -> bool {
        matches!(self, ControlRecordType::Abort | ControlRecordType::Commit)
    }

    /// Parses a name as printed by [`Self::name`] or Kafka (`commit`, `COMMIT`).
    pub fn from_name(name: &str) -> Option<Self> {
        (0..=6)
            .map(Self::from_id)
            .find(|t| t.name().eq_ignore_ascii_case(name) || t.kafka_name() == name)
    }
}

/// A decoded control record key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlRecordKey {
    /// Key version (0 today).
    pub version: i16,
    /// Record type.
    pub kind: ControlRecordType,
}

impl ControlRecordKey {
    /// Parses a control record key; `at` is the absolute position of the key for errors.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRecord`] for a null key, fewer than 4 bytes, or a negative version.
    pub fn parse(key: Option<&[u8]>, at: usize) -> Result<Self> {
        let (version, [t0, t1]) = parse_versioned(
            key,
            at,
            "control record has a null key",
            "control record key",
        )?;
        let kind = ControlRecordType::from_id(i16::from_be_bytes([t0, t1]));
        Ok(ControlRecordKey { version, kind })
    }

    /// The 4 key bytes.
    pub fn to_bytes(self) -> [u8; 4] {
        let v = self.version.to_be_bytes();
        let t = self.kind.id().to_be_bytes();
        [v[0], v[1], t[0], t[1]]
    }
}

/// The value of an abort or commit control record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndTxnMarker {
    /// Marker version (0 today).
    pub version: i16,
    /// Epoch of the transaction coordinator that wrote the marker.
    pub coordinator_epoch: i32,
}

impl EndTxnMarker {
    /// Parses the value of an abort/commit record; `at` is its absolute position for errors.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRecord`] for a null value, fewer than 6 bytes, or a negative version.
    pub fn parse(value: Option<&[u8]>, at: usize) -> Result<Self> {
        let (version, epoch) = parse_versioned(
            value,
            at,
            "end transaction marker has a null value",
            "end transaction marker",
        )?;
        Ok(EndTxnMarker {
            version,
            coordinator_epoch: i32::from_be_bytes(epoch),
        })
    }

    /// The 6 value bytes (version 0).
    pub fn to_bytes(self) -> [u8; 6] {
        let v = self.version.to_be_bytes();
        let e = self.coordinator_epoch.to_be_bytes();
        [v[0], v[1], e[0], e[1], e[2], e[3]]
    }
}

/// A reader over a flexible-version Kafka message (compact arrays, tagged fields), bounded by
/// its input.
struct Flexible<'a> {
    buf: &'a [u8],
    pos: usize,
    at: usize,
}

impl<'a> Flexible<'a> {
    /// A reader at the start of a record value (a null one reads as empty) found at `at`.
    fn new(value: Option<&'a [u8]>, at: usize) -> Self {
        Flexible {
            buf: value.unwrap_or(&[]),
            pos: 0,
            at,
        }
    }

    fn err(&self, what: &str) -> Error {
        Error::InvalidRecord {
            at: self.at,
            reason: format!(
                "control record value: {what} at byte {} of {}",
                self.pos,
                self.buf.len()
            ),
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        match end.and_then(|e| self.buf.get(self.pos..e)) {
            Some(s) => {
                self.pos += n;
                Ok(s)
            }
            None => Err(self.err(&format!("{what} cut short"))),
        }
    }

    fn i16(&mut self, what: &str) -> Result<i16> {
        let b = self.take(2, what)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self, what: &str) -> Result<i32> {
        let b = self.take(4, what)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i64(&mut self, what: &str) -> Result<i64> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    fn uvarint(&mut self, what: &str) -> Result<u32> {
        let rest = self.buf.get(self.pos..).unwrap_or(&[]);
        let (v, n) =
            crate::varint::read_unsigned_varint(rest, self.at).map_err(|_| self.err(what))?;
        self.pos += n;
        Ok(v)
    }

    /// A compact array length (stored + 1; 0 is null), checked against the bytes left given
    /// each element takes at least `min_size` bytes.
    fn compact_len(&mut self, min_size: usize, what: &str) -> Result<usize> {
        let n = self.uvarint(what)?;
        let n = n
            .checked_sub(1)
            .ok_or_else(|| self.err(&format!("null {what}")))? as usize;
        if n.saturating_mul(min_size) > self.buf.len() - self.pos {
            return Err(self.err(&format!("{what} of {n} elements does not fit")));
        }
        Ok(n)
    }

    /// Skips tagged fields.
    fn tagged_fields(&mut self) -> Result<()> {
        let count = self.uvarint("tagged field count")?;
        for _ in 0..count {
            self.uvarint("tag")?;
            let size = self.uvarint("tagged field size")? as usize;
            self.take(size, "tagged field")?;
        }
        Ok(())
    }
}

/// The value of a KRaft LEADER_CHANGE control record (Kafka's `LeaderChangeMessage`, version 0,
/// a flexible message: compact arrays and tagged fields).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderChange {
    /// Message version field.
    pub version: i16,
    /// The new leader.
    pub leader_id: i32,
    /// Voter ids.
    pub voters: Vec<i32>,
    /// Ids of the voters that granted the leadership.
    pub granting_voters: Vec<i32>,
}

impl LeaderChange {
    /// Parses the record value; `at` is its absolute position for errors.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRecord`] for a null or malformed value.
    pub fn parse(value: Option<&[u8]>, at: usize) -> Result<Self> {
        let mut r = Flexible::new(value, at);
        let version = r.i16("version")?;
        let leader_id = r.i32("leader id")?;
        let voter_list = |r: &mut Flexible<'_>, what| -> Result<Vec<i32>> {
            let n = r.compact_len(5, what)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(r.i32("voter id")?);
                r.tagged_fields()?;
            }
            Ok(v)
        };
        let voters = voter_list(&mut r, "voters")?;
        let granting_voters = voter_list(&mut r, "granting voters")?;
        r.tagged_fields()?;
        Ok(LeaderChange {
            version,
            leader_id,
            voters,
            granting_voters,
        })
    }

    /// JSON as Kafka's `LeaderChangeMessageJsonConverter` writes it (what kafka-dump-log prints).
    pub fn to_json(&self) -> String {
        let list = |v: &[i32]| {
            v.iter()
                .map(|id| format!("{{\"voterId\":{id}}}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        format!(
            "{{\"version\":{},\"leaderId\":{},\"voters\":[{}],\"grantingVoters\":[{}]}}",
            self.version,
            self.leader_id,
            list(&self.voters),
            list(&self.granting_voters)
        )
    }
}

/// The value of a KRaft SNAPSHOT_HEADER control record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotHeader {
    /// Message version field.
    pub version: i16,
    /// Timestamp of the last record in the snapshot.
    pub last_contained_log_timestamp: i64,
}

impl SnapshotHeader {
    /// Parses the record value.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRecord`] for a malformed value.
    pub fn parse(value: Option<&[u8]>, at: usize) -> Result<Self> {
        let mut r = Flexible::new(value, at);
        let version = r.i16("version")?;
        let last_contained_log_timestamp = r.i64("last contained log timestamp")?;
        r.tagged_fields()?;
        Ok(SnapshotHeader {
            version,
            last_contained_log_timestamp,
        })
    }

    /// JSON as Kafka's converter writes it.
    pub fn to_json(&self) -> String {
        format!(
            "{{\"version\":{},\"lastContainedLogTimestamp\":{}}}",
            self.version, self.last_contained_log_timestamp
        )
    }
}

/// Decodes a KRaft control record value to the JSON kafka-dump-log prints after the type name,
/// for the types whose layout is fixed (leader change, snapshot header and footer, kraft
/// version); `None` for other types.
///
/// # Errors
///
/// [`Error::InvalidRecord`] for a malformed value.
pub fn kraft_json(
    kind: ControlRecordType,
    value: Option<&[u8]>,
    at: usize,
) -> Result<Option<String>> {
    Ok(match kind {
        ControlRecordType::LeaderChange => Some(LeaderChange::parse(value, at)?.to_json()),
        ControlRecordType::SnapshotHeader => Some(SnapshotHeader::parse(value, at)?.to_json()),
        ControlRecordType::SnapshotFooter => {
            let mut r = Flexible::new(value, at);
            let version = r.i16("version")?;
            r.tagged_fields()?;
            Some(format!("{{\"version\":{version}}}"))
        }
        ControlRecordType::KRaftVersion => {
            let mut r = Flexible::new(value, at);
            let version = r.i16("version")?;
            let kraft = r.i16("kraft version")?;
            r.tagged_fields()?;
            Some(format!(
                "{{\"version\":{version},\"kRaftVersion\":{kraft}}}"
            ))
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_like_kafka() {
        let k = ControlRecordKey::parse(Some(&[0, 0, 0, 1]), 0).unwrap();
        assert_eq!(k.kind, ControlRecordType::Commit);
        assert_eq!(k.to_bytes(), [0, 0, 0, 1]);
        let k = ControlRecordKey::parse(Some(&[0, 1, 0, 9, 7]), 0).unwrap();
        assert_eq!((k.version, k.kind), (1, ControlRecordType::Unknown(9)));
        assert!(matches!(
            ControlRecordKey::parse(Some(&[0, 0, 0]), 5),
            Err(Error::InvalidRecord { at: 5, .. })
        ));
        assert!(ControlRecordKey::parse(Some(&[0xff, 0xff, 0, 0]), 0).is_err());
        assert!(ControlRecordKey::parse(None, 0).is_err());
        let m = EndTxnMarker::parse(Some(&[0, 0, 0, 0, 0, 7]), 0).unwrap();
        assert_eq!(m.coordinator_epoch, 7);
        assert_eq!(m.to_bytes(), [0, 0, 0, 0, 0, 7]);
        assert!(EndTxnMarker::parse(Some(&[0, 0, 0]), 0).is_err());
    }

    #[test]
    fn leader_change_as_kafka_prints_it() {
        let value = hex_bytes("000000000001030000000100000000020002000000010000");
        let lc = LeaderChange::parse(Some(&value), 0).unwrap();
        assert_eq!(lc.voters, vec![1, 2]);
        assert_eq!(
            lc.to_json(),
            r#"{"version":0,"leaderId":1,"voters":[{"voterId":1},{"voterId":2}],"grantingVoters":[{"voterId":1}]}"#
        );
        // Cut short anywhere: an error, never a panic.
        for n in 0..value.len() {
            assert!(LeaderChange::parse(Some(&value[..n]), 0).is_err());
        }
        // A huge compact array length fails before allocating.
        assert!(LeaderChange::parse(Some(&hex_bytes("000000000001ffffffff0f")), 0).is_err());
    }

    fn hex_bytes(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}
