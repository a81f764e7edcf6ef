//! Classifying the two verdicts of one input.

use serde_json::Value;

/// How the two readers' verdicts relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Both accept, every field equal.
    AgreeAccept,
    /// Both reject (the reasons may be worded differently).
    AgreeReject,
    /// (a) Kafka accepts, krecords rejects.
    KafkaOnly,
    /// (b) krecords accepts, Kafka rejects.
    OursOnly,
    /// (c) Both accept, some field differs.
    FieldsDiffer,
    /// (d) Both refuse a produce, with different Kafka error names.
    ErrorsDiffer,
    /// The referee crashed on the input (out of memory, stack overflow): reported, never
    /// counted as agreement.
    RefereeCrash,
}

impl Class {
    /// The short name used in reports and saved case files.
    pub fn name(self) -> &'static str {
        match self {
            Class::AgreeAccept => "agree-accept",
            Class::AgreeReject => "agree-reject",
            Class::KafkaOnly => "a-kafka-accepts",
            Class::OursOnly => "b-krecords-accepts",
            Class::FieldsDiffer => "c-fields-differ",
            Class::ErrorsDiffer => "d-errors-differ",
            Class::RefereeCrash => "referee-crash",
        }
    }

    /// Whether the readers agreed.
    pub fn agrees(self) -> bool {
        matches!(self, Class::AgreeAccept | Class::AgreeReject)
    }
}

/// Documented, deliberate differences from Kafka's reader. Each has a test of its own in
/// `tests/pinned.rs`; `krec-diff` counts a disagreement it explains as passed and names it.
pub const PINNED: [(&str, &str); 3] = [
    (
        "kafka-int-overflow-on-size",
        "an entry size within 12 of i32::MAX overflows Kafka's int arithmetic \
         (ByteBufferLogInputStream: size + LOG_OVERHEAD), which throws IllegalArgumentException; \
         krecords reads such an entry as a partial tail, like any other size beyond the input",
    ),
    (
        "lz4-match-offset-0",
        "an LZ4 match offset of 0 is invalid in the LZ4 block format; lz4-java copies from the \
         byte it is about to write (whatever the reused buffer held), krecords refuses it",
    ),
    (
        "zstd-frame-cut-short",
        "Kafka reads a zstd batch as a stream and stops after the declared records, so a \
         damaged frame whose records decode is taken; krecords decompresses the whole section \
         and refuses a frame that ends early or holds less content than it declares",
    ),
];

/// Documented differences from a Kafka broker's produce path (`UnifiedLog.appendAsLeader`,
/// after `ProduceRequest.validateRecords`); each has a test in `tests/pinned.rs`.
pub const PINNED_PRODUCE: [(&str, &str); 8] = [
    (
        "kafka-internal-exception",
        "Kafka answers UNKNOWN_SERVER_ERROR because a Java runtime exception escapes its parsers \
         (IllegalArgumentException from ByteBuffer.limit on a bad length or an int overflow, \
         IndexOutOfBoundsException, 'Unknown compression type id', UnsupportedOperationException \
         'key is skipped in PartialDefaultRecord'); krecords answers with the specific error, or \
         takes a batch that only Kafka's internal error refused",
    ),
    (
        "framing-checks-first",
        "krecords checks an entry's structure when it frames the entries of an append (v0/v1 key \
         and value lengths, a v2 batch length shorter than its header, a wrapper's CRC), Kafka \
         only later: its shallow checks of the whole append (a v2 base offset other than 0, \
         more than one batch) come first there, so Kafka says INVALID_RECORD where krecords says \
         CORRUPT_MESSAGE; both refuse",
    ),
    (
        "stream-order",
        "Kafka parses records while it decompresses, so in a corrupt compressed section a bad \
         record can fail (INVALID_RECORD, CORRUPT_MESSAGE) before the codec's own check (a gzip \
         trailer CRC) does; krecords decompresses first (UNKNOWN_SERVER_ERROR, as Kafka answers \
         undecodable data); both refuse",
    ),
    (
        "kafka-skips-record-bodies",
        "for a compressed v2 batch it keeps as it is, Kafka's validator reads records with \
         skipKeyValueIterator and does not check that a record's body fits the section (it reads \
         timestamps, so with a bad timestamp too it says INVALID_TIMESTAMP); \
         krecords validates every record and refuses a batch no consumer could read",
    ),
    (
        "inner-crc-before-wrapper-offset",
        "krecords checks each inner message of a v1 wrapper (its CRC) as it reads it; Kafka reads \
         every inner offset first and checks the wrapper offset against the last one, so with a \
         damaged inner message Kafka says INVALID_RECORD where krecords says CORRUPT_MESSAGE; \
         both refuse",
    ),
    (
        "inner-crc-first",
        "an inner message of a v0/v1 wrapper whose CRC fails and whose magic differs from the \
         wrapper's (or that is itself compressed): Kafka reports the magic or the compression \
         (INVALID_RECORD), krecords the CRC (CORRUPT_MESSAGE), as Kafka itself does for a magic \
         outside 0..=2; both refuse",
    ),
    (
        "kafka-frames-all-inner-messages-first",
        "Kafka's v1 wrapper iterator frames every inner message before it checks any, so an \
         inner size below 14 further on is CORRUPT_MESSAGE there; krecords checks each inner \
         message as it reaches it and reports the first problem (INVALID_RECORD for an inner \
         message that is itself compressed); both refuse",
    ),
    (
        "lz4-match-offset-0",
        "as for reading: an LZ4 match offset of 0 is refused here (UNKNOWN_SERVER_ERROR, as for any \
         undecodable data)",
    ),
];

/// The name of the pinned produce difference that explains a disagreement, if one does.
pub fn pinned_produce(class: Class, ours: &Value, kafka: &Value) -> Option<&'static str> {
    let msg = |v: &Value| v["message"].as_str().unwrap_or("").to_owned();
    let exception = kafka["exception"].as_str().unwrap_or("");
    let internal = kafka["error"] == "UNKNOWN_SERVER_ERROR"
        && (matches!(
            exception,
            "IllegalArgumentException"
                | "IndexOutOfBoundsException"
                | "ArrayIndexOutOfBoundsException"
                | "BufferUnderflowException"
                | "NegativeArraySizeException"
                | "IllegalStateException"
        ) || (exception == "UnsupportedOperationException"
            && msg(kafka).contains("is skipped in PartialDefaultRecord")));
    match class {
        Class::ErrorsDiffer | Class::OursOnly if internal => Some(PINNED_PRODUCE[0].0),
        Class::ErrorsDiffer
            if ours["error"] == "CORRUPT_MESSAGE"
                && kafka["error"] == "INVALID_RECORD"
                && [
                    "more than one batch",
                    "baseOffset of the record batch",
                    "exactly one",
                    "Invalid wrapper compressionType",
                ]
                .iter()
                .any(|m| msg(kafka).contains(m)) =>
        {
            Some(PINNED_PRODUCE[1].0)
        }
        Class::ErrorsDiffer
            if ours["error"] == "UNKNOWN_SERVER_ERROR"
                && msg(ours).contains("cannot be decompressed")
                && matches!(
                    kafka["error"].as_str(),
                    Some("INVALID_RECORD" | "CORRUPT_MESSAGE")
                ) =>
        {
            Some(PINNED_PRODUCE[2].0)
        }
        Class::KafkaOnly | Class::ErrorsDiffer
            if ours["error"] == "INVALID_RECORD"
                && msg(ours).contains("in the decompressed records")
                && (class == Class::KafkaOnly || kafka["error"] == "INVALID_TIMESTAMP") =>
        {
            Some(PINNED_PRODUCE[3].0)
        }
        Class::ErrorsDiffer
            if msg(ours).contains("inner message")
                && msg(kafka).contains("Record size is less than the minimum record overhead") =>
        {
            Some(PINNED_PRODUCE[6].0)
        }
        Class::ErrorsDiffer
            if ours["error"] == "CORRUPT_MESSAGE"
                && msg(kafka)
                    .contains("Found invalid wrapper offset in compressed v1 message set") =>
        {
            Some(PINNED_PRODUCE[4].0)
        }
        Class::ErrorsDiffer
            if ours["error"] == "CORRUPT_MESSAGE"
                && msg(ours).contains("crc mismatch")
                && (msg(kafka).contains("magic does not match outer magic")
                    || msg(kafka).contains("Inner messages must not be compressed")) =>
        {
            Some(PINNED_PRODUCE[5].0)
        }
        Class::KafkaOnly if msg(ours).contains("0 is not a valid match offset") => {
            Some(PINNED_PRODUCE[7].0)
        }
        _ => None,
    }
}

/// The name of the pinned difference that explains a disagreement, if one does.
pub fn pinned(bytes: &[u8], class: Class, ours: &Value, kafka: &Value) -> Option<&'static str> {
    let text = |v: &Value| v["message"].as_str().unwrap_or("").to_owned();
    match class {
        Class::OursOnly
            if kafka["error"] == "IllegalArgumentException"
                && text(kafka).starts_with("newLimit < 0")
                && has_overflowing_size(bytes) =>
        {
            Some(PINNED[0].0)
        }
        Class::KafkaOnly if text(ours).contains("0 is not a valid match offset") => {
            Some(PINNED[1].0)
        }
        Class::KafkaOnly
            if text(ours).contains("zstd frame is cut short")
                || (text(ours).contains("invalid zstd data: zstd frame")
                    && text(ours).contains("bytes of content but holds")) =>
        {
            Some(PINNED[2].0)
        }
        _ => None,
    }
}

/// Whether an entry of `bytes`, walked by size fields, has a size Kafka's `size + 12`
/// overflows.
fn has_overflowing_size(bytes: &[u8]) -> bool {
    let mut at = 0usize;
    while let Some(b) = bytes.get(at + 8..at + 12) {
        let size = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        if size > i32::MAX - 12 {
            return true;
        }
        if size < 14 {
            return false;
        }
        at += 12 + size as usize;
    }
    false
}

/// Compares the produce verdicts: both refuse with the same Kafka error name, or both accept
/// and assign the same offsets.
pub fn classify_produce(ours: &Value, kafka: &Value) -> (Class, String) {
    match classify(ours, kafka) {
        (Class::AgreeReject, _) if ours["error"] != kafka["error"] => (
            Class::ErrorsDiffer,
            format!(
                "{} vs {}: {}",
                ours["error"], kafka["error"], kafka["message"]
            ),
        ),
        other => other,
    }
}

/// Compares our verdict with Kafka's. For [`Class::FieldsDiffer`] the second value names the
/// first field that differs.
pub fn classify(ours: &Value, kafka: &Value) -> (Class, String) {
    if kafka.get("crash").is_some() {
        return (Class::RefereeCrash, kafka["crash"].to_string());
    }
    let accepted = |v: &Value| v["accept"].as_bool().unwrap_or(false);
    match (accepted(ours), accepted(kafka)) {
        (false, false) => (Class::AgreeReject, String::new()),
        (false, true) => (Class::KafkaOnly, ours["message"].to_string()),
        (true, false) => (Class::OursOnly, kafka["message"].to_string()),
        (true, true) => match first_difference("", ours, kafka) {
            None => (Class::AgreeAccept, String::new()),
            Some(d) => (Class::FieldsDiffer, d),
        },
    }
}

/// The path of the first difference between `a` and `b`, if any. Numbers compare by value
/// (Java's longs and our unsigned CRCs print alike).
fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let vb = y.get(k).unwrap_or(&Value::Null);
                if let Some(d) = first_difference(&format!("{path}.{k}"), va, vb) {
                    return Some(d);
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("{path}.{k}: missing on our side"))
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} items vs {}", x.len(), y.len()));
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (va, vb))| first_difference(&format!("{path}[{i}]"), va, vb))
        }
        (Value::Number(x), Value::Number(y)) => {
            let same = match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(p), Some(q), _, _) => p == q,
                (_, _, Some(p), Some(q)) => p == q,
                _ => x == y,
            };
            (!same).then(|| format!("{path}: {a} vs {b}"))
        }
        _ => (a != b).then(|| format!("{path}: {a} vs {b}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classes() {
        let acc = json!({"accept": true, "batches": [{"crc": 5}], "records": []});
        let acc2 = json!({"accept": true, "batches": [{"crc": 6}], "records": []});
        let rej = json!({"accept": false, "error": "X", "message": "m"});
        assert_eq!(classify(&acc, &acc).0, Class::AgreeAccept);
        assert_eq!(classify(&rej, &rej).0, Class::AgreeReject);
        assert_eq!(classify(&rej, &acc).0, Class::KafkaOnly);
        assert_eq!(classify(&acc, &rej).0, Class::OursOnly);
        let (c, d) = classify(&acc, &acc2);
        assert_eq!(c, Class::FieldsDiffer);
        assert_eq!(d, ".batches[0].crc: 5 vs 6");
        assert_eq!(
            classify(&acc, &json!({"crash": "java.lang.OutOfMemoryError"})).0,
            Class::RefereeCrash
        );
    }
}
