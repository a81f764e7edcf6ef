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
            Class::RefereeCrash => "referee-crash",
        }
    }

    /// Whether the readers agreed.
    pub fn agrees(self) -> bool {
        matches!(self, Class::AgreeAccept | Class::AgreeReject)
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
