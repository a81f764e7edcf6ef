//! `krec demo`: builds a small mixed-format partition in a temporary folder and walks through it.
//!
//! The partition tells the story of a topic that lived through format upgrades, written by the
//! log engine as a broker would have written it: a log created with `message.format.version`
//! 0.9 (v0 data), upgraded to 0.10 (v1, timestamps), then to 3.0 (v2, with compression, an
//! idempotent producer whose retry the log answers as a duplicate, and two transactions, one
//! committed and one aborted, ended by the coordinator's markers), one segment per format.

use crate::outcome::{Failure, Outcome};
use krecords_codec::write::{LegacyBuilder, NewRecord, V2Builder};
use krecords_codec::{Compression, Header};
use krecords_log::{AppendInfo, AppendOrigin, Log, LogConfig};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Build a sample mixed-format partition in a temporary folder and show it.
///
/// Examples:
///   krec demo                      # build, then show dump, explain, stats, reads and verify
///   krec demo --keep --dir /tmp/x  # keep the files to explore them yourself
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Folder to build the partition in (default: a new temporary folder).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Keep the folder afterwards.
    #[arg(long)]
    keep: bool,
}

const T0: i64 = 1_714_000_000_000;

fn codec_err(e: krecords_codec::Error) -> Failure {
    Failure::Data(e.to_string())
}

fn log_err(e: krecords_log::Error) -> Failure {
    if e.is_storage_error() {
        Failure::Io(std::io::Error::other(e.to_string()), String::new())
    } else {
        Failure::Data(e.to_string())
    }
}

/// Sets `message.format.version`, as an operator upgrading a topic would.
fn upgrade(log: &mut Log, version: &str) -> Result<(), Failure> {
    let mut config = log.config().clone();
    config
        .set("message.format.version", version)
        .map_err(log_err)?;
    log.update_config(config).map_err(log_err)
}

/// Appends what a producer sent; the log assigns the offsets.
fn produce(log: &mut Log, bytes: &[u8]) -> Result<AppendInfo, Failure> {
    log.append(bytes, AppendOrigin::Client).map_err(log_err)
}

/// The sample partition, as built.
pub struct Partition {
    /// The `.log` files, oldest first.
    pub segments: Vec<PathBuf>,
    /// What the log answered to the idempotent producer's retry.
    pub retry: AppendInfo,
}

/// The producer ids of the committed and the aborted transaction.
const COMMITTED_PID: i64 = 2000;
const ABORTED_PID: i64 = 2001;

/// Writes the sample partition into `dir` with the log engine.
pub fn build_partition(dir: &Path) -> Result<Partition, Failure> {
    if dir.join(krecords_log::files::CONFIG_FILE).exists() {
        return Err(Failure::Usage(format!(
            "{} already holds a log; remove it or choose another --dir",
            dir.display()
        )));
    }
    let value = |i: usize| {
        format!(
            "{{\"order\":{i},\"item\":\"widget-{}\",\"qty\":{}}}",
            i % 7,
            i % 5 + 1
        )
    };
    let key = |i: usize| format!("user-{i}");
    let config = LogConfig::from_pairs([("message.format.version", "0.9.0")]).map_err(log_err)?;
    let mut log = Log::create(dir, config).map_err(log_err)?;

    // Kafka 0.8/0.9 (v0): no timestamps; two plain messages, then a gzip wrapper of three.
    let mut b = LegacyBuilder::new(0, 0).map_err(codec_err)?;
    for i in 0..2 {
        let (k, v) = (key(i), value(i));
        b.append(&NewRecord::new(-1, Some(k.as_bytes()), Some(v.as_bytes())))
            .map_err(codec_err)?;
    }
    produce(&mut log, &b.finish().map_err(codec_err)?)?;
    let mut b = LegacyBuilder::new(0, 0)
        .and_then(|b| b.compression(Compression::Gzip, None))
        .map_err(codec_err)?;
    for i in 2..5 {
        let (k, v) = (key(i), value(i));
        b.append(&NewRecord::new(-1, Some(k.as_bytes()), Some(v.as_bytes())))
            .map_err(codec_err)?;
    }
    produce(&mut log, &b.finish().map_err(codec_err)?)?;
    log.roll().map_err(log_err)?;

    // Kafka 0.10 (v1): timestamps.
    upgrade(&mut log, "0.10.2")?;
    let mut b = LegacyBuilder::new(1, 0).map_err(codec_err)?;
    for i in 5..10 {
        let (k, v) = (key(i - 5), value(i));
        b.append(&NewRecord::new(
            T0 + i as i64,
            Some(k.as_bytes()),
            Some(v.as_bytes()),
        ))
        .map_err(codec_err)?;
    }
    produce(&mut log, &b.finish().map_err(codec_err)?)?;
    log.roll().map_err(log_err)?;

    // Kafka 0.11+ (v2): batches with headers, an idempotent producer and its retry, zstd, and
    // two transactions.
    upgrade(&mut log, "3.0")?;
    let trace = [Header {
        key: b"trace-id",
        value: Some(b"4bf92f35"),
    }];
    let mut b = V2Builder::new(0)
        .compression(Compression::Lz4, None)
        .producer(1000, 0, 0);
    for i in 10..20 {
        let v = value(i);
        b.append(
            &NewRecord::new(T0 + 100 + i as i64, Some(b"user-1"), Some(v.as_bytes()))
                .with_headers(&trace),
        )
        .map_err(codec_err)?;
    }
    let idempotent = b.finish().map_err(codec_err)?;
    produce(&mut log, &idempotent)?;
    // The producer did not hear back and sends the batch again: the log recognises the
    // sequence numbers, answers with the original offsets and writes nothing.
    let retry = produce(&mut log, &idempotent)?;
    let mut b = V2Builder::new(0).compression(Compression::Zstd, None);
    for i in 20..23 {
        let (k, v) = (key(i % 3), value(i));
        b.append(&NewRecord::new(
            T0 + 200 + i as i64,
            Some(k.as_bytes()),
            Some(v.as_bytes()),
        ))
        .map_err(codec_err)?;
    }
    produce(&mut log, &b.finish().map_err(codec_err)?)?;
    // Two transactional producers write interleaved; the coordinator commits the first and
    // aborts the second (COMMIT and ABORT marker batches; the abort goes into the .txnindex).
    for (seq, step) in [(0, "reserve"), (1, "charge")] {
        for pid in [COMMITTED_PID, ABORTED_PID] {
            let mut b = V2Builder::new(0).producer(pid, 0, seq).transactional(true);
            let v = format!("{{\"txn\":{pid},\"step\":\"{step}\"}}");
            b.append(&NewRecord::new(
                T0 + 300 + i64::from(seq),
                Some(b"user-2"),
                Some(v.as_bytes()),
            ))
            .map_err(codec_err)?;
            produce(&mut log, &b.finish().map_err(codec_err)?)?;
        }
    }
    for (pid, commit) in [(COMMITTED_PID, true), (ABORTED_PID, false)] {
        log.append_end_txn(pid, 0, 0, commit, T0 + 310)
            .map_err(log_err)?;
    }
    let segments = log.segment_files().into_iter().map(|s| s.0).collect();
    log.close().map_err(log_err)?;
    Ok(Partition { segments, retry })
}

/// Runs `krec ARGS...` (this same binary) and copies its stdout, after a `$ krec ...` line.
fn show(out: &mut impl Write, args: &[&str], head: Option<usize>) -> Result<bool, Failure> {
    let exe = std::env::current_exe()
        .map_err(|e| Failure::Io(e, "cannot find the krec binary".into()))?;
    let shown: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    writeln!(
        out,
        "\n$ krec {}{}",
        shown.join(" "),
        head.map_or(String::new(), |n| format!(" | head -{n}"))
    )?;
    out.flush()?;
    let run = std::process::Command::new(exe)
        .args(args)
        .output()
        .map_err(|e| Failure::Io(e, "cannot run krec".into()))?;
    let text = String::from_utf8_lossy(&run.stdout);
    let mut lines = text.lines();
    for line in lines.by_ref().take(head.unwrap_or(usize::MAX)) {
        writeln!(out, "{line}")?;
    }
    if lines.next().is_some() {
        writeln!(out, "...")?;
    }
    out.write_all(&run.stderr)?;
    Ok(run.status.success())
}

/// Runs the demo.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let (dir, temp) = match &args.dir {
        Some(d) => (d.clone(), false),
        None => {
            let d = std::env::temp_dir().join(format!("krec-demo-{}", std::process::id()));
            (d, !args.keep)
        }
    };
    let partition = dir.join("orders-0");
    let Partition { segments, retry } = build_partition(&partition)?;
    let p = partition.display().to_string();
    let seg = |i: usize| segments[i].display().to_string();
    writeln!(
        out,
        "# krec demo: a partition that lived through Kafka's format upgrades"
    )?;
    writeln!(out, "# built in {p}:")?;
    writeln!(
        out,
        "#   {} v0 (Kafka 0.8/0.9): no timestamps; two plain messages and a gzip wrapper",
        file_name(&segments[0])
    )?;
    writeln!(
        out,
        "#   {} v1 (Kafka 0.10, message.format.version upgraded): timestamps",
        file_name(&segments[1])
    )?;
    writeln!(
        out,
        "#   {} v2 (Kafka 0.11+, upgraded again): an lz4 batch with headers from an",
        file_name(&segments[2])
    )?;
    writeln!(
        out,
        "#       idempotent producer (its retry was answered as a duplicate of offsets {}..{}:",
        retry.base_offset, retry.last_offset
    )?;
    writeln!(
        out,
        "#       nothing written), a zstd batch, and two interleaved transactions: producer {COMMITTED_PID}"
    )?;
    writeln!(
        out,
        "#       committed, producer {ABORTED_PID} aborted (the markers are control batches)"
    )?;
    writeln!(
        out,
        "# written through the log engine (krec log): indexes, time indexes and checkpoints included"
    )?;
    let mut ok = true;
    writeln!(
        out,
        "\n# 1. Every entry of every segment, the way kafka-dump-log prints it:"
    )?;
    ok &= show(out, &["dump", "--deep", "--print-data", &p], None)?;
    writeln!(
        out,
        "\n# 2. The same as JSON Lines, for scripts (first entry of the v2 segment):"
    )?;
    ok &= show(
        out,
        &["dump", "--deep", "--format", "json", &seg(2)],
        Some(1),
    )?;
    writeln!(
        out,
        "\n# 3. The bytes of the v1 segment's first message, field by field:"
    )?;
    ok &= show(out, &["explain", &seg(1), "--count", "1"], None)?;
    writeln!(
        out,
        "\n# 4. What the data costs now, and what v0/v1/v2 and each codec would make of it:"
    )?;
    ok &= show(out, &["stats", "--what-if", &p], None)?;
    writeln!(
        out,
        "\n# 5. What consumers see of the v2 segment's tail: read_uncommitted gets the aborted"
    )?;
    writeln!(
        out,
        "#    transaction's records too; read_committed drops them; neither sees the markers:"
    )?;
    let tail = (retry.last_offset + 1).to_string();
    for isolation in ["read-uncommitted", "read-committed"] {
        ok &= show(
            out,
            &[
                "log",
                "read",
                &p,
                "--offset",
                &tail,
                "--isolation",
                isolation,
            ],
            Some(8),
        )?;
    }
    writeln!(
        out,
        "\n# 6. Every CRC, record, offset and index entry checked (exit 1 on any problem):"
    )?;
    ok &= show(out, &["verify", &p], None)?;
    if temp {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        writeln!(out, "\n# files kept in {p}")?;
    }
    Ok(if ok {
        Outcome::Ok
    } else {
        Outcome::DataProblem
    })
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_string()
}
