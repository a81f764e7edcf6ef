//! The text and JSON Lines forms of the answers, as `krec metadata`, `krec offsets` and
//! `krec groups` print them, so that every front end prints the same lines.

use crate::groups::Group;
use crate::{Cluster, Offsets};
use std::fmt::Write as _;
use std::io::{self, Write};

/// Node ids joined by commas.
fn ids(v: &[i32]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    let parts: Vec<String> = v.iter().map(i32::to_string).collect();
    parts.join(",")
}

/// A number, or `-` when there is none.
fn opt(v: Option<i64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

impl Cluster {
    /// Writes the cluster as `krec metadata` prints it: a head, the brokers, then each topic
    /// and its partitions (leader, epoch, replicas, ISR, offsets when read, OFFLINE and
    /// UNDER-REPLICATED flags).
    pub fn write_text(&self, out: &mut impl Write) -> io::Result<()> {
        let c = self;
        let what = if c.live {
            "live cluster"
        } else {
            "broker files"
        };
        writeln!(out, "Metadata of {} ({what})", c.source)?;
        writeln!(
            out,
            "cluster id: {}  controller: {}",
            c.cluster_id.as_deref().unwrap_or("-"),
            c.controller.map_or_else(|| "-".into(), |n| n.to_string())
        )?;
        writeln!(out, "{}:", count(c.brokers.len(), "broker"))?;
        for b in &c.brokers {
            let mut extra = String::new();
            if let Some(r) = &b.rack {
                let _ = write!(extra, " rack {r}");
            }
            if b.fenced == Some(true) {
                extra.push_str(" (fenced)");
            }
            writeln!(
                out,
                "  broker {} at {}:{}{extra}",
                b.node_id, b.host, b.port
            )?;
        }
        let offline: usize = c
            .topics
            .iter()
            .map(|t| t.partitions.iter().filter(|p| p.is_offline()).count())
            .sum();
        writeln!(
            out,
            "{}, {}:",
            count(c.topics.len(), "topic"),
            count(offline, "offline partition")
        )?;
        for t in &c.topics {
            let n = t.partitions.len();
            let mut head = format!(
                "  topic \"{}\" with {n} partition{}",
                t.name,
                if n == 1 { "" } else { "s" }
            );
            if let Some(id) = &t.id {
                let _ = write!(head, " id {id}");
            }
            if t.internal {
                head.push_str(" (internal)");
            }
            if let Some(e) = &t.error {
                let _ = write!(head, ": {e}");
            }
            writeln!(out, "{head}")?;
            for p in &t.partitions {
                let mut line = format!(
                    "    partition {}, leader {}, epoch {}, replicas: {}, isrs: {}",
                    p.partition,
                    p.leader,
                    p.leader_epoch,
                    ids(&p.replicas),
                    ids(&p.isr)
                );
                if !p.offline_replicas.is_empty() {
                    let _ = write!(line, ", offline: {}", ids(&p.offline_replicas));
                }
                if let Some(o) = &p.offsets {
                    let _ = write!(
                        line,
                        ", offsets: {}..{} stable {}",
                        o.earliest,
                        o.latest,
                        opt(o.last_stable)
                    );
                }
                if p.on_disk == Some(false) {
                    line.push_str(", not on this disk");
                }
                if p.is_offline() {
                    line.push_str(" OFFLINE");
                } else if p.is_under_replicated() {
                    line.push_str(" UNDER-REPLICATED");
                }
                // A word of the error when the whole of it is a warning, as `krec offsets`.
                if let Some(e) = p.row_error() {
                    let _ = write!(line, ": {e}");
                }
                writeln!(out, "{line}")?;
            }
        }
        Ok(())
    }

    /// Each partition's (topic, partition, offsets, error), in topic order.
    fn offset_rows(&self) -> impl Iterator<Item = (&str, i32, Option<Offsets>, Option<&str>)> {
        self.topics.iter().flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| (t.name.as_str(), p.partition, p.offsets, p.error.as_deref()))
        })
    }

    /// Each partition's error as a table row says it ([`crate::Partition::row_error`]).
    fn offset_row_errors(&self) -> impl Iterator<Item = Option<&str>> {
        self.topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(crate::Partition::row_error))
    }

    /// Writes the partitions' offsets as `krec offsets --format json` prints them: one object
    /// per partition per line, {"topic","partition","earliest","latest","last_stable",
    /// "at_time","error"}.
    pub fn write_offsets_json(&self, out: &mut impl Write) -> io::Result<()> {
        for (topic, partition, o, error) in self.offset_rows() {
            let v = serde_json::json!({
                "topic": topic,
                "partition": partition,
                "earliest": o.map(|o| o.earliest),
                "latest": o.map(|o| o.latest),
                "last_stable": o.and_then(|o| o.last_stable),
                "at_time": o.and_then(|o| o.at_time),
                "error": error,
            });
            writeln!(out, "{v}")?;
        }
        Ok(())
    }

    /// Writes the partitions' offsets as `krec offsets` prints them: an aligned table
    /// TOPIC PARTITION EARLIEST LATEST STABLE, with AT_TIME when `at_time` (the offsets were
    /// looked up for a time), and a partition's error at the end of its line (a word of it,
    /// `damaged`, when the whole error is one of [`Cluster::warnings`]).
    pub fn write_offsets_text(&self, at_time: bool, out: &mut impl Write) -> io::Result<()> {
        let rows: Vec<_> = self
            .offset_rows()
            .zip(self.offset_row_errors())
            .map(|((t, p, o, _), e)| (t, p, o, e))
            .collect();
        let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(5).max(5);
        let mut head = format!(
            "{:width$}  {:>9}  {:>12}  {:>12}  {:>12}",
            "TOPIC", "PARTITION", "EARLIEST", "LATEST", "STABLE"
        );
        if at_time {
            let _ = write!(head, "  {:>12}", "AT_TIME");
        }
        writeln!(out, "{}", head.trim_end())?;
        for (topic, partition, o, error) in rows {
            let cell = |f: fn(&Offsets) -> Option<i64>| opt(o.as_ref().and_then(f));
            let mut line = format!(
                "{topic:width$}  {partition:>9}  {:>12}  {:>12}  {:>12}",
                cell(|o| Some(o.earliest)),
                cell(|o| Some(o.latest)),
                cell(|o| o.last_stable),
            );
            if at_time {
                let _ = write!(line, "  {:>12}", cell(|o| o.at_time));
            }
            if let Some(e) = error {
                let _ = write!(line, "  {e}");
            }
            writeln!(out, "{line}")?;
        }
        Ok(())
    }
}

/// Writes groups as `krec groups` prints them: a tab-separated table GROUP TOPIC PARTITION
/// COMMITTED END LAG COMMITTED_AT (ISO 8601), each group's rows followed by a `#` total line
/// (the total lag `-` when no partition's lag is known, `at least N (K of unknown lag)` when
/// some are not).
pub fn write_groups_text(groups: &[Group], out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "GROUP\tTOPIC\tPARTITION\tCOMMITTED\tEND\tLAG\tCONSUMER_ID\tHOST\tCLIENT_ID\tCOMMITTED_AT"
    )?;
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    for g in groups {
        for o in &g.offsets {
            writeln!(
                out,
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                g.group,
                o.topic,
                o.partition,
                opt(o.committed),
                opt(o.end),
                opt(o.lag),
                text(&o.member_id),
                text(&o.host),
                text(&o.client_id),
                o.commit_time
                    .map_or_else(|| "-".into(), krecords_source::time::iso)
            )?;
        }
        let mut what = String::new();
        if let Some(k) = &g.kind {
            what.push_str(&format!("{k} group, "));
        }
        if let Some(state) = &g.state {
            what.push_str(&format!("{state}, "));
        }
        if let Some(gen) = g.generation {
            let word = if g.kind.as_deref() == Some("consumer") {
                "epoch"
            } else {
                "generation"
            };
            what.push_str(&format!("{word} {gen}, "));
        }
        // A sum of no known lag is not 0, and a sum of some is a lower bound.
        let unknown = g.offsets.iter().filter(|o| o.lag.is_none()).count();
        let total = match (g.total_lag, unknown) {
            (None, _) => "-".to_owned(),
            (Some(t), 0) => t.to_string(),
            (Some(t), n) => format!("at least {t} ({n} of unknown lag)"),
        };
        let past = g
            .offsets
            .iter()
            .filter(|o| o.lag.is_some_and(|l| l < 0))
            .count();
        let past = match past {
            0 => String::new(),
            n => format!(
                "; {} committed past the end (negative lag: records the group read are gone, \
                 the log truncated or the topic created again)",
                count(n, "partition")
            ),
        };
        writeln!(
            out,
            "# {}: {what}{}, {}, total lag {total}{past}",
            g.group,
            count(g.members.len(), "member"),
            count(g.offsets.len(), "partition"),
        )?;
    }
    Ok(())
}

/// "1 member", "2 members".
fn count(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// Writes groups as `krec groups --format json` prints them: one JSON object per group per
/// line.
pub fn write_groups_json(groups: &[Group], out: &mut impl Write) -> io::Result<()> {
    for g in groups {
        serde_json::to_writer(&mut *out, g)?;
        writeln!(out)?;
    }
    Ok(())
}
