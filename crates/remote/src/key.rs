//! Object names, as the plugin's `ObjectKeyFactory` builds them:
//!
//! ```text
//! <prefix><topic>-<topicId>/<partition>/<start offset, 20 digits>-<segment id>.<suffix>
//! someprefix/topic-MWJ6FHTfRYy67jzwZdeqSQ/7/00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.log
//! ```
//!
//! `topicId` and the segment id are Kafka `Uuid`s in their string form: 16 bytes in unpadded
//! base64url, always 22 characters (Kafka's `Uuid.toString`). Topic names may contain `-`, so
//! the topic id is the last 22 characters of the first path element. The suffix is `log`,
//! `indexes` or `rsm-manifest`.

use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;

use crate::error::{Error, Result};

/// Characters of a Kafka `Uuid` string: 16 bytes in unpadded base64url.
pub const UUID_CHARS: usize = 22;

/// Digits of the zero-padded start offset in a segment's name.
pub const OFFSET_DIGITS: usize = 20;

/// A Kafka `Uuid` (topic ids, remote segment ids), written as 22 characters of unpadded
/// base64url.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KafkaUuid(pub [u8; 16]);

impl KafkaUuid {
    /// Parses Kafka's string form.
    ///
    /// # Errors
    ///
    /// [`Error::BadKey`] unless `s` is 22 characters of base64url decoding to 16 bytes.
    pub fn parse(s: &str) -> Result<KafkaUuid> {
        let bad = |reason: &str| Error::BadKey {
            key: s.to_string(),
            reason: reason.to_string(),
        };
        if s.len() != UUID_CHARS {
            return Err(bad("a uuid is 22 characters of base64url"));
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(s)
            .map_err(|_| bad("a uuid is 22 characters of base64url"))?;
        let array: [u8; 16] = bytes
            .try_into()
            .map_err(|_| bad("a uuid decodes to 16 bytes"))?;
        Ok(KafkaUuid(array))
    }
}

impl fmt::Display for KafkaUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&URL_SAFE_NO_PAD.encode(self.0))
    }
}

impl FromStr for KafkaUuid {
    type Err = Error;
    fn from_str(s: &str) -> Result<KafkaUuid> {
        KafkaUuid::parse(s)
    }
}

/// The kind of object a key names: the segment's `.log`, its `.indexes` or its manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Suffix {
    /// `.log`: the segment's data, chunked and transformed.
    Log,
    /// `.indexes`: the five indexes, each transformed, concatenated.
    Indexes,
    /// `.rsm-manifest`: the JSON manifest.
    Manifest,
}

impl Suffix {
    /// All suffixes.
    pub const ALL: [Suffix; 3] = [Suffix::Log, Suffix::Indexes, Suffix::Manifest];

    /// The suffix as written after the dot.
    pub fn as_str(self) -> &'static str {
        match self {
            Suffix::Log => "log",
            Suffix::Indexes => "indexes",
            Suffix::Manifest => "rsm-manifest",
        }
    }
}

/// A topic partition of the remote tier: what the first two path elements name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RemotePartition {
    /// The topic's name.
    pub topic: String,
    /// The topic's id.
    pub topic_id: KafkaUuid,
    /// The partition number.
    pub partition: i32,
}

impl RemotePartition {
    /// The key prefix of the partition's objects, `<prefix><topic>-<topicId>/<partition>/`.
    pub fn key_prefix(&self, prefix: &str) -> String {
        format!(
            "{prefix}{}-{}/{}/",
            self.topic, self.topic_id, self.partition
        )
    }
}

impl fmt::Display for RemotePartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{} ({})", self.topic, self.partition, self.topic_id)
    }
}

/// The name of one object of one uploaded segment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectKey {
    /// The configured key prefix (`rsm.config.key.prefix`), possibly empty.
    pub prefix: String,
    /// The partition.
    pub partition: RemotePartition,
    /// The segment's base offset.
    pub start_offset: i64,
    /// The remote segment id (`RemoteLogSegmentId.id`).
    pub segment_id: KafkaUuid,
    /// Which object of the segment.
    pub suffix: Suffix,
}

impl ObjectKey {
    /// Parses `key` as an object of a segment, `prefix` being the configured key prefix.
    ///
    /// # Errors
    ///
    /// [`Error::BadKey`] naming the first element that does not fit.
    pub fn parse(prefix: &str, key: &str) -> Result<ObjectKey> {
        let bad = |reason: &str| Error::BadKey {
            key: key.to_string(),
            reason: reason.to_string(),
        };
        let rest = key
            .strip_prefix(prefix)
            .ok_or_else(|| bad("does not start with the prefix"))?;
        let mut parts = rest.split('/');
        let (Some(topic_part), Some(partition_part), Some(file), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad("expected <topic>-<topicId>/<partition>/<file>"));
        };
        let (topic, topic_id) = split_tail_uuid(topic_part).ok_or_else(|| {
            bad("the first element is not <topic>-<topicId> with a 22-character topic id")
        })?;
        if topic.is_empty() {
            return Err(bad("empty topic name"));
        }
        let partition = parse_partition(partition_part)
            .ok_or_else(|| bad("the partition is not a non-negative decimal number"))?;
        let (stem, suffix) = Suffix::ALL
            .iter()
            .find_map(|s| {
                file.strip_suffix(s.as_str())
                    .and_then(|f| f.strip_suffix('.'))
                    .map(|f| (f, *s))
            })
            .ok_or_else(|| bad("the suffix is not .log, .indexes or .rsm-manifest"))?;
        let (offset, segment_id) = split_tail_uuid(stem)
            .ok_or_else(|| bad("the file name is not <offset>-<segment id>"))?;
        if offset.len() != OFFSET_DIGITS || !offset.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("the start offset is not 20 digits"));
        }
        let start_offset: i64 = offset
            .parse()
            .map_err(|_| bad("the start offset is out of range"))?;
        Ok(ObjectKey {
            prefix: prefix.to_string(),
            partition: RemotePartition {
                topic: topic.to_string(),
                topic_id,
                partition,
            },
            start_offset,
            segment_id,
            suffix,
        })
    }

    /// The same segment's object of another kind.
    pub fn with_suffix(&self, suffix: Suffix) -> ObjectKey {
        ObjectKey {
            suffix,
            ..self.clone()
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{:020}-{}.{}",
            self.partition.key_prefix(&self.prefix),
            self.start_offset,
            self.segment_id,
            self.suffix.as_str()
        )
    }
}

/// Splits `<head>-<22-character uuid>`.
fn split_tail_uuid(s: &str) -> Option<(&str, KafkaUuid)> {
    let cut = s.len().checked_sub(UUID_CHARS)?;
    let (head, uuid) = (s.get(..cut)?, s.get(cut..)?);
    let head = head.strip_suffix('-')?;
    Some((head, KafkaUuid::parse(uuid).ok()?))
}

fn parse_partition(s: &str) -> Option<i32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_plugins_documented_example() {
        let text =
            "someprefix/topic-MWJ6FHTfRYy67jzwZdeqSQ/7/00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.log";
        let key = ObjectKey::parse("someprefix/", text).unwrap();
        assert_eq!(key.partition.topic, "topic");
        assert_eq!(key.partition.partition, 7);
        assert_eq!(key.start_offset, 1234);
        assert_eq!(key.suffix, Suffix::Log);
        assert_eq!(key.partition.topic_id.to_string(), "MWJ6FHTfRYy67jzwZdeqSQ");
        assert_eq!(key.segment_id.to_string(), "tqimKeZwStOEOwRzT3L5oQ");
        assert_eq!(key.to_string(), text);
        let manifest = key.with_suffix(Suffix::Manifest).to_string();
        assert!(manifest.ends_with("-tqimKeZwStOEOwRzT3L5oQ.rsm-manifest"));
        assert_eq!(ObjectKey::parse("someprefix/", &manifest).unwrap().suffix, Suffix::Manifest);
    }

    #[test]
    fn topic_names_and_ids_with_dashes() {
        // '-' and '_' are base64url characters: the id is found by length, not by the last dash.
        let id = KafkaUuid([0xfb; 16]);
        let seg = KafkaUuid([0xff; 16]);
        assert!(id.to_string().contains('-') || id.to_string().contains('_'));
        let key = ObjectKey {
            prefix: String::new(),
            partition: RemotePartition {
                topic: "a-b-c".into(),
                topic_id: id,
                partition: 0,
            },
            start_offset: 0,
            segment_id: seg,
            suffix: Suffix::Indexes,
        };
        assert_eq!(ObjectKey::parse("", &key.to_string()).unwrap(), key);
    }

    #[test]
    fn refuses_malformed_keys() {
        let good = "t-MWJ6FHTfRYy67jzwZdeqSQ/7/00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.log";
        assert!(ObjectKey::parse("", good).is_ok());
        for bad in [
            "t-MWJ6FHTfRYy67jzwZdeqSQ/7/00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.txt",
            "t-MWJ6FHTfRYy67jzwZdeqS/7/00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.log",
            "t-MWJ6FHTfRYy67jzwZdeqSQ/-7/00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.log",
            "t-MWJ6FHTfRYy67jzwZdeqSQ/7/0000000000000001234-tqimKeZwStOEOwRzT3L5oQ.log",
            "t-MWJ6FHTfRYy67jzwZdeqSQ/7/99999999999999999999-tqimKeZwStOEOwRzT3L5oQ.log",
            "-MWJ6FHTfRYy67jzwZdeqSQ/7/00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.log",
            "t-MWJ6FHTfRYy67jzwZdeqSQ/7/x/00000000000000001234-tqimKeZwStOEOwRzT3L5oQ.log",
            "t-MWJ6FHTfRYy67jzwZdeqSQ/7/00000000000000001234-tqimKeZwStOEOwRzT3L5o*.log",
            "",
        ] {
            let err = ObjectKey::parse("", bad).unwrap_err();
            assert!(matches!(err, Error::BadKey { .. }), "{bad}: {err}");
        }
        assert!(ObjectKey::parse("other/", good).is_err());
    }
}
