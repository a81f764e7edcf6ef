//! Replays every saved input of `cases/` (read verdicts) and `cases-produce/` (produce
//! verdicts), made by `krec-diff --save-kinds` with Kafka 4.4.0's verdict recorded next to each:
//! krecords must still agree with Kafka on each, or differ only as a pinned, documented
//! difference says. So a disagreement that was fixed stays fixed, and no Java is needed to
//! check it.

use krecords_differential::compare::{classify, classify_produce, pinned, pinned_produce};
use krecords_differential::ours;
use serde_json::Value;
use std::path::PathBuf;

/// The verdict of every saved case of `dir`: (file, class agreed or pin name, detail).
pub fn replay(dir: &str) -> Vec<(String, Result<Option<&'static str>, String>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut bins: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    bins.sort();
    bins.iter()
        .map(|bin| {
            let bytes = std::fs::read(bin).unwrap();
            let meta: Value =
                serde_json::from_str(&std::fs::read_to_string(bin.with_extension("json")).unwrap())
                    .unwrap();
            let kafka = &meta["kafka"];
            let produce = meta["mode"] == "produce";
            let (now, (class, detail)) = if produce {
                let now = ours::produce(&bytes);
                let c = classify_produce(&now, kafka);
                (now, c)
            } else {
                let now = ours::verdict(&bytes);
                let c = classify(&now, kafka);
                (now, c)
            };
            let name = bin.file_name().unwrap().to_string_lossy().into_owned();
            let outcome = if class.agrees() {
                Ok(None)
            } else {
                let pin = if produce {
                    pinned_produce(class, &now, kafka)
                } else {
                    pinned(&bytes, class, &now, kafka)
                };
                pin.map(Some)
                    .ok_or(format!("{} ({}): {detail}", class.name(), meta["origin"]))
            };
            (name, outcome)
        })
        .collect()
}

fn check(dir: &str, at_least: usize) {
    let results = replay(dir);
    assert!(
        results.len() >= at_least,
        "only {} saved cases",
        results.len()
    );
    let failures: Vec<String> = results
        .iter()
        .filter_map(|(n, r)| r.as_ref().err().map(|e| format!("{n}: {e}")))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} saved cases disagree with Kafka:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
    assert!(results.iter().any(|(_, r)| matches!(r, Ok(None))));
    assert!(results.iter().any(|(_, r)| matches!(r, Ok(Some(_)))));
}

#[test]
fn every_saved_read_case_agrees_with_kafkas_recorded_verdict() {
    check("cases", 100);
}

#[test]
fn every_saved_produce_case_agrees_with_kafkas_recorded_verdict() {
    check("cases-produce", 60);
}
