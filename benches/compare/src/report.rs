//! Rows, ratios, goals, and their text and JSON renderings.

use std::fmt::Write as _;

use serde_json::json;

use crate::measure::Timing;

/// What a row measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Decode,
    Encode,
    /// A machine limit on the decode workload's bytes.
    Limit,
    /// A limit for the encode workload (memcpy of the same bytes).
    EncodeLimit,
    /// Appending pre-built batches to a log (`log-append`).
    Append,
    /// The limit of `log-append`: raw sequential write of the same bytes.
    AppendLimit,
    /// Reading a whole log back (`log-read`).
    Read,
    /// The limit of `log-read`: raw sequential read of the segment files.
    ReadLimit,
    /// Dumping a segment file with a command line tool (`dump-*`), one process per pass.
    Dump,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Decode => "decode",
            Op::Encode => "encode",
            Op::Limit => "limit",
            Op::EncodeLimit => "limit(enc)",
            Op::Append => "append",
            Op::Read => "read",
            // The log workloads have one kind of limit each, so plain "limit" is unambiguous.
            Op::AppendLimit | Op::ReadLimit => "limit",
            Op::Dump => "dump",
        }
    }

    /// The op of the krecords row a row's ratio is taken against.
    fn baseline(self) -> Op {
        match self {
            Op::Decode | Op::Limit => Op::Decode,
            Op::Encode | Op::EncodeLimit => Op::Encode,
            Op::Append | Op::AppendLimit => Op::Append,
            Op::Read | Op::ReadLimit => Op::Read,
            Op::Dump => Op::Dump,
        }
    }
}

/// How a row ended.
#[derive(Debug, Clone)]
pub(crate) enum Outcome {
    Timed(Timing),
    /// Not run, with the reason (e.g. `java` missing).
    Skipped(String),
    /// Ran but failed or disagreed with the expected records.
    Failed(String),
}

/// One line of the table.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub workload: String,
    pub op: Op,
    pub implementation: String,
    /// Bytes every throughput of this workload is counted in: the workload's v2 entries as
    /// written (compressed for compressed workloads), so MB/s compare directly within a workload.
    pub bytes: u64,
    pub records: u64,
    pub outcome: Outcome,
    /// Shown in the note column of a timed row (e.g. the peak RSS of a process).
    pub detail: Option<String>,
}

/// The name of our implementation in the decode and encode rows.
pub(crate) const OURS: &str = "krecords";
/// Our implementation in the `log-append` rows.
pub(crate) const OURS_APPEND: &str = "krecords-log Log::append";
/// Our implementation in the `log-read` rows.
pub(crate) const OURS_READ: &str = "krecords-log Log::read";
/// Our implementation in the `dump-*` rows.
pub(crate) const OURS_DUMP: &str = "krec dump --deep";

/// Whether `implementation` names one of ours (the baseline of its workload's ratios).
fn is_ours(implementation: &str) -> bool {
    [OURS, OURS_APPEND, OURS_READ, OURS_DUMP].contains(&implementation)
}

impl Row {
    fn timing(&self) -> Option<&Timing> {
        match &self.outcome {
            Outcome::Timed(t) if t.median > 0.0 => Some(t),
            _ => None,
        }
    }

    fn mb_s(&self) -> Option<f64> {
        self.timing().map(|t| self.bytes as f64 / t.median / 1e6)
    }

    fn records_s(&self) -> Option<f64> {
        self.timing().map(|t| self.records as f64 / t.median)
    }

    fn note(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Timed(_) => self.detail.as_deref(),
            Outcome::Skipped(s) | Outcome::Failed(s) => Some(s),
        }
    }

    fn status(&self) -> &'static str {
        match &self.outcome {
            Outcome::Timed(_) => "ok",
            Outcome::Skipped(_) => "skipped",
            Outcome::Failed(_) => "failed",
        }
    }
}

/// `this time / our time` for the same workload: for a peer, how many times faster we are
/// (us/peer); for a limit, the fraction of the limit we reach (us/limit).
pub(crate) fn ratio(rows: &[Row], row: &Row) -> Option<f64> {
    let base_op = row.op.baseline();
    if is_ours(&row.implementation) && row.op == base_op {
        return None;
    }
    let ours = rows
        .iter()
        .find(|r| r.workload == row.workload && r.op == base_op && is_ours(&r.implementation))?;
    Some(row.timing()?.median / ours.timing()?.median)
}

fn find<'a>(
    rows: &'a [Row],
    workload: &str,
    op: Op,
    implementation_prefix: &str,
) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.workload == workload && r.op == op && r.implementation.starts_with(implementation_prefix)
    })
}

/// One goal of issue 8 on one workload.
#[derive(Debug, Clone)]
pub(crate) struct Goal {
    pub goal: String,
    pub workload: String,
    /// Measured ratio (see [`ratio`]).
    pub ratio: Option<f64>,
    /// The ratio that meets the goal.
    pub target: f64,
    /// Why there is no ratio.
    pub note: Option<String>,
}

impl Goal {
    fn status(&self) -> &'static str {
        match self.ratio {
            Some(r) if r >= self.target => "met",
            Some(_) => "missed",
            None => "not measured",
        }
    }
}

/// The goals of issue 8, evaluated on `rows`. The headline workload is `v2-none-100B`; the
/// other sizes are listed too.
pub(crate) fn goals(rows: &[Row]) -> Vec<Goal> {
    let mut out = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for r in rows {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    let mut goal = |goal: &str, workload: &str, op: Op, prefix: &str, target: f64| {
        let row = find(rows, workload, op, prefix);
        let ratio = row.and_then(|r| ratio(rows, r));
        let note = match (row, ratio) {
            (_, Some(_)) => None,
            (Some(r), None) => Some(r.note().unwrap_or("no timing").to_owned()),
            (None, None) => Some(format!("no {prefix} row")),
        };
        out.push(Goal {
            goal: goal.into(),
            workload: workload.into(),
            ratio,
            target,
            note,
        });
    };
    for w in workloads.iter().filter(|w| w.starts_with("v2-none-")) {
        goal(
            "decode >= 5x kafka-protocol",
            w,
            Op::Decode,
            "kafka-protocol",
            5.0,
        );
        goal("decode >= 2x Java (Kafka)", w, Op::Decode, "java", 2.0);
        goal(
            "decode >= 50% of memory read bandwidth",
            w,
            Op::Limit,
            "memory read",
            0.5,
        );
        goal(
            "encode >= 3x kafka-protocol",
            w,
            Op::Encode,
            "kafka-protocol",
            3.0,
        );
    }
    for w in workloads
        .iter()
        .filter(|w| w.starts_with("v2-") && !w.starts_with("v2-none-"))
    {
        goal(
            "compressed decode >= 90% of raw codec",
            w,
            Op::Limit,
            "raw ",
            0.9,
        );
    }
    for w in workloads.iter().filter(|w| **w == "log-append") {
        goal(
            "log append >= 80% of raw sequential write",
            w,
            Op::AppendLimit,
            "raw sequential write",
            0.8,
        );
    }
    for w in workloads.iter().filter(|w| w.starts_with("dump-")) {
        goal(
            "krec dump --deep >= 20x kafka-dump-log",
            w,
            Op::Dump,
            "kafka-dump-log",
            20.0,
        );
    }
    out
}

fn fmt_rate(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v >= 1e9 => format!("{:.2}G", v / 1e9),
        Some(v) if v >= 1e6 => format!("{:.2}M", v / 1e6),
        Some(v) if v >= 1e3 => format!("{:.1}k", v / 1e3),
        Some(v) => format!("{v:.0}"),
    }
}

/// The table as text.
pub(crate) fn table(rows: &[Row], goals: &[Goal]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<18} {:<10} {:<34} {:>9} {:>9} {:>7} {:>9}  note",
        "workload", "op", "implementation", "MB/s", "rec/s", "spread", "us/this"
    );
    let mut last = "";
    for r in rows {
        if r.workload != last && !last.is_empty() {
            s.push('\n');
        }
        last = &r.workload;
        let mb = r.mb_s().map_or("-".into(), |v| format!("{v:.0}"));
        let spread = r
            .timing()
            .map_or("-".into(), |t| format!("{:.0}%", t.spread() * 100.0));
        let ratio = ratio(rows, r).map_or("-".into(), |x| format!("{x:.2}x"));
        let note = match (r.status(), r.note()) {
            ("ok", Some(detail)) => detail.to_owned(),
            ("ok", None) => String::new(),
            (status, Some(n)) => format!("{status}: {n}"),
            (status, None) => status.into(),
        };
        let _ = writeln!(
            s,
            "{:<18} {:<10} {:<34} {:>9} {:>9} {:>7} {:>9}  {note}",
            r.workload,
            r.op.name(),
            r.implementation,
            mb,
            fmt_rate(r.records_s()),
            spread,
            ratio
        );
    }
    let _ = writeln!(s, "\nGoals (ratios as in `us/this`):");
    let _ = writeln!(
        s,
        "{:<42} {:<18} {:>9} {:>7}  status",
        "goal", "workload", "measured", "target"
    );
    for g in goals {
        let measured = g.ratio.map_or("-".into(), |x| format!("{x:.2}x"));
        let status = match &g.note {
            Some(n) if g.ratio.is_none() => format!("{}: {n}", g.status()),
            _ => g.status().into(),
        };
        let _ = writeln!(
            s,
            "{:<42} {:<18} {:>9} {:>6.2}x  {status}",
            g.goal, g.workload, measured, g.target
        );
    }
    s
}

/// One JSON object per row, then one per goal.
pub(crate) fn json_lines(rows: &[Row], goals: &[Goal]) -> String {
    let mut s = String::new();
    for r in rows {
        let t = r.timing();
        let v = json!({
            "workload": r.workload,
            "op": r.op.name(),
            "implementation": r.implementation,
            "status": r.status(),
            "note": r.note(),
            "bytes": r.bytes,
            "records": r.records,
            "secs_per_pass": t.map(|t| t.median),
            "secs_min": t.map(|t| t.min),
            "secs_max": t.map(|t| t.max),
            "runs": t.map(|t| t.runs),
            "mb_s": r.mb_s(),
            "records_s": r.records_s(),
            "ratio_us_over_this": ratio(rows, r),
        });
        let _ = writeln!(s, "{v}");
    }
    for g in goals {
        let v = json!({
            "goal": g.goal,
            "workload": g.workload,
            "ratio": g.ratio,
            "target": g.target,
            "status": g.status(),
            "note": g.note,
        });
        let _ = writeln!(s, "{v}");
    }
    s
}
