//! Where each source of a target partition stopped: the metadata of the job group's committed
//! offset of that partition, `{"format":"krec-ship/1","positions":{SOURCE-ID: NEXT-OFFSET}}`.

use crate::{Error, Result};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Metadata format tag of the committed positions.
pub const POSITIONS_TAG: &str = "krec-ship/1";

/// The positions of one target partition's sources: source id → next source offset (the
/// offset after the last source record shipped).
///
/// ```
/// use krecords_ship::Positions;
///
/// let mut p = Positions::default();
/// p.0.insert("/data/orders-0".into(), 42);
/// let text = p.to_metadata();
/// assert_eq!(text, r#"{"format":"krec-ship/1","positions":{"/data/orders-0":42}}"#);
/// assert_eq!(Positions::from_metadata(Some(&text), "orders/0").unwrap(), p);
/// assert!(Positions::from_metadata(Some("consumer-7"), "orders/0").is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Positions(pub BTreeMap<String, i64>);

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
        if v.get("format").and_then(Value::as_str) != Some(POSITIONS_TAG) {
            return Err(Error::usage(format!(
                "{what}: the group's committed metadata is not krec ship's: another job name?"
            )));
        }
        let mut out = BTreeMap::new();
        if let Some(m) = v.get("positions").and_then(Value::as_object) {
            for (k, v) in m {
                if let Some(n) = v.as_i64() {
                    out.insert(k.clone(), n);
                }
            }
        }
        Ok(Positions(out))
    }

    /// The metadata to commit.
    pub fn to_metadata(&self) -> String {
        json!({ "format": POSITIONS_TAG, "positions": self.0 }).to_string()
    }

    /// The position of `source` (0 when it has none).
    pub fn get(&self, source: &str) -> i64 {
        self.0.get(source).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_and_foreign_metadata_is_refused() {
        let mut m = Positions::default();
        m.0.insert("/data/a-0".to_owned(), 42);
        m.0.insert("kafka://h:1/t/0".to_owned(), 7);
        let text = m.to_metadata();
        assert_eq!(Positions::from_metadata(Some(&text), "x").unwrap(), m);
        assert!(Positions::from_metadata(None, "x").unwrap().0.is_empty());
        assert!(Positions::from_metadata(Some("consumer-7"), "x").is_err());
        assert!(Positions::from_metadata(Some("{\"format\":\"other\"}"), "x").is_err());
    }
}
