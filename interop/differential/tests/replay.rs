//! Replays every saved input of `cases/` (made by `krec-diff --save-kinds`, with Kafka 4.4.0's
//! verdict recorded next to it): krecords must still agree with Kafka on each, or differ only
//! as a pinned, documented difference says. So a disagreement that was fixed stays fixed, and
//! no Java is needed to check it.

use krecords_differential::compare::{classify, pinned};
use krecords_differential::ours;
use serde_json::Value;
use std::path::PathBuf;

#[test]
fn every_saved_case_agrees_with_kafkas_recorded_verdict() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cases");
    let mut bins: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    bins.sort();
    assert!(bins.len() >= 100, "only {} saved cases", bins.len());
    let mut failures = Vec::new();
    let (mut agreed, mut pins) = (0, 0);
    for bin in &bins {
        let bytes = std::fs::read(bin).unwrap();
        let meta: Value =
            serde_json::from_str(&std::fs::read_to_string(bin.with_extension("json")).unwrap())
                .unwrap();
        let kafka = &meta["kafka"];
        let now = ours::verdict(&bytes);
        let (class, detail) = classify(&now, kafka);
        if class.agrees() {
            agreed += 1;
        } else if pinned(&bytes, class, &now, kafka).is_some() {
            pins += 1;
        } else {
            failures.push(format!(
                "{}: {} ({}): {detail}",
                bin.file_name().unwrap().to_string_lossy(),
                class.name(),
                meta["origin"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} saved cases disagree with Kafka:\n{}",
        failures.len(),
        bins.len(),
        failures.join("\n")
    );
    assert!(agreed > 0 && pins > 0, "agreed {agreed}, pinned {pins}");
}
