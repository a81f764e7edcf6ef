//! A job's [`Report`] as `krec ship` prints it: one JSON object, or lines for people.

use crate::Report;
use serde_json::{json, Value};
use std::fmt::Write;

impl Report {
    /// The report as one JSON object (`krec ship --format json`): the job's names, the
    /// target, the producer, per target partition the counters of [`crate::PartitionReport`],
    /// the time taken and whether the job was stopped.
    pub fn to_json(&self) -> Value {
        let partitions: Vec<Value> = self
            .partitions
            .iter()
            .map(|(p, t)| {
                json!({
                    "partition": p,
                    "sources": t.sources,
                    "transactions": t.transactions,
                    "batches_as_is": t.batches_as_is,
                    "batches_rebatched": t.batches_rebatched,
                    "batches_upconverted": t.batches_upconverted,
                    "batches_skipped_control": t.batches_skipped_control,
                    "batches_skipped_aborted": t.batches_skipped_aborted,
                    "records": t.records,
                    "bytes": t.bytes,
                    "source_bytes": t.source_bytes,
                    "target_first_offset": t.target_first_offset,
                    "target_last_offset": t.target_last_offset,
                    "duplicate_batches": t.duplicate_batches,
                })
            })
            .collect();
        json!({
            "job": self.job.name,
            "transactional_id": self.job.transactional_id,
            "group": self.job.group,
            "target": self.target,
            "producer_id": self.producer_id,
            "producer_epoch": self.producer_epoch,
            "partitions": partitions,
            "elapsed_ms": u64::try_from(self.elapsed.as_millis()).unwrap_or(u64::MAX),
            "stopped": self.stopped,
        })
    }

    /// The report for people: a line per target partition (records, transactions, the target
    /// offsets, how batches were shipped and what was skipped), and a line when a signal
    /// stopped the job.
    pub fn to_text(&self) -> String {
        let s = |n: u64| if n == 1 { "" } else { "s" };
        let mut out = String::new();
        for (p, t) in &self.partitions {
            let range = match (t.target_first_offset, t.target_last_offset) {
                (Some(a), Some(b)) => format!("offsets {a}..={b}"),
                _ => "nothing new".to_owned(),
            };
            let _ = writeln!(
                out,
                "{}/{p}: {} record{} in {} transaction{}, {range}; batches: {} as is, {} re-batched, \
                 {} up-converted; skipped: {} control, {} aborted",
                self.target,
                t.records,
                s(t.records),
                t.transactions,
                s(t.transactions),
                t.batches_as_is,
                t.batches_rebatched,
                t.batches_upconverted,
                t.batches_skipped_control,
                t.batches_skipped_aborted
            );
        }
        if self.stopped {
            out.push_str(
                "stopped by a signal: what was sent is committed; run the job again to continue\n",
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::{Job, PartitionReport, Report};
    use std::time::Duration;

    #[test]
    fn text_and_json_name_every_counter() {
        let mut r = Report {
            job: Job::new("j"),
            target: "kafka://b:9092/t".into(),
            producer_id: 7,
            producer_epoch: 2,
            partitions: Default::default(),
            elapsed: Duration::from_millis(1500),
            stopped: true,
        };
        r.partitions.insert(
            0,
            PartitionReport {
                records: 1,
                transactions: 2,
                target_first_offset: Some(10),
                target_last_offset: Some(10),
                batches_as_is: 1,
                ..PartitionReport::default()
            },
        );
        r.partitions.insert(1, PartitionReport::default());
        assert_eq!(
            r.to_text(),
            "kafka://b:9092/t/0: 1 record in 2 transactions, offsets 10..=10; batches: 1 as is, 0 \
             re-batched, 0 up-converted; skipped: 0 control, 0 aborted\n\
             kafka://b:9092/t/1: 0 records in 0 transactions, nothing new; batches: 0 as is, 0 \
             re-batched, 0 up-converted; skipped: 0 control, 0 aborted\n\
             stopped by a signal: what was sent is committed; run the job again to continue\n"
        );
        let j = r.to_json();
        assert_eq!(j["group"], "krec-ship-j");
        assert_eq!(j["elapsed_ms"], 1500);
        assert_eq!(j["stopped"], true);
        assert_eq!(j["partitions"][0]["target_first_offset"], 10);
        assert_eq!(
            j["partitions"][1]["target_first_offset"],
            serde_json::Value::Null
        );
    }
}
