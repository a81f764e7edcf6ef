//! `krec demo`: builds a small mixed-format partition in a temporary folder and walks through it.
//!
//! The partition tells the story of a topic that lived through format upgrades: a v0 segment
//! (Kafka 0.8/0.9), a v1 segment (0.10, timestamps), and a v2 segment (0.11+) with compression,
//! an idempotent producer, and a committed and an aborted transaction.

use crate::{Failure, Outcome};
use krecords_codec::control::{ControlRecordKey, ControlRecordType, EndTxnMarker};
use krecords_codec::write::{LegacyBuilder, Record, V2Builder};
use krecords_codec::{Compression, Header};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Build a sample mixed-format partition in a temporary folder and show it.
///
/// Examples:
///   krec demo                      # build, then show dump, explain and stats
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

/// Writes the sample partition into `dir`; returns the segment paths.
pub fn build_partition(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::Io(e, format!("cannot create {}", dir.display())))?;
    let value = |i: usize| {
        format!(
            "{{\"order\":{i},\"item\":\"widget-{}\",\"qty\":{}}}",
            i % 7,
            i % 5 + 1
        )
    };
    let mut segments = Vec::new();

    // v0: before 0.10, no timestamps; one gzip wrapper after two plain messages.
    let mut seg = Vec::new();
    let mut b = LegacyBuilder::new(0, 0).map_err(codec_err)?;
    for i in 0..2 {
        let v = value(i);
        b.append(&Record::new(
            -1,
            Some(format!("user-{i}").as_bytes()),
            Some(v.as_bytes()),
        ))
        .map_err(codec_err)?;
    }
    b.finish_into(&mut seg).map_err(codec_err)?;
    let mut b = LegacyBuilder::new(0, 2)
        .and_then(|b| b.compression(Compression::Gzip, None))
        .map_err(codec_err)?;
    for i in 2..5 {
        let v = value(i);
        b.append(&Record::new(
            -1,
            Some(format!("user-{i}").as_bytes()),
            Some(v.as_bytes()),
        ))
        .map_err(codec_err)?;
    }
    b.finish_into(&mut seg).map_err(codec_err)?;
    let next = 5;
    segments.push(write_segment(dir, 0, &seg)?);

    // v1: 0.10 added timestamps.
    let base = next;
    let mut seg = Vec::new();
    let mut b = LegacyBuilder::new(1, base).map_err(codec_err)?;
    for i in 0..5 {
        let v = value(base as usize + i);
        b.append(&Record::new(
            T0 + i as i64,
            Some(format!("user-{i}").as_bytes()),
            Some(v.as_bytes()),
        ))
        .map_err(codec_err)?;
    }
    b.finish_into(&mut seg).map_err(codec_err)?;
    segments.push(write_segment(dir, base, &seg)?);

    // v2: batches with headers, an idempotent producer, and two transactions.
    let mut offset = base + 5;
    let v2_base = offset;
    let mut seg = Vec::new();
    let trace = [Header {
        key: b"trace-id",
        value: Some(b"4bf92f35"),
    }];
    let mut b = V2Builder::new(offset)
        .compression(Compression::Lz4, None)
        .producer(1000, 0, 0);
    for i in 0..10 {
        let v = value(offset as usize + i);
        b.append(
            &Record::new(T0 + 100 + i as i64, Some(b"user-1"), Some(v.as_bytes()))
                .with_headers(&trace),
        )
        .map_err(codec_err)?;
    }
    offset = b.next_offset();
    b.finish_into(&mut seg).map_err(codec_err)?;
    for (pid, commit) in [(2000i64, true), (2001, false)] {
        let mut b = V2Builder::new(offset)
            .producer(pid, 0, 0)
            .transactional(true);
        for i in 0..3 {
            let v = format!("{{\"txn\":{pid},\"step\":{i}}}");
            b.append(&Record::new(
                T0 + 200 + i,
                Some(b"account-9"),
                Some(v.as_bytes()),
            ))
            .map_err(codec_err)?;
        }
        offset = b.next_offset();
        b.finish_into(&mut seg).map_err(codec_err)?;
        let kind = if commit {
            ControlRecordType::Commit
        } else {
            ControlRecordType::Abort
        };
        let mut m = V2Builder::new(offset)
            .control(true)
            .transactional(true)
            .producer(pid, 0, -1);
        m.append_control(
            T0 + 300,
            &ControlRecordKey { version: 0, kind }.to_bytes(),
            &EndTxnMarker {
                version: 0,
                coordinator_epoch: 5,
            }
            .to_bytes(),
        )
        .map_err(codec_err)?;
        offset += 1;
        m.finish_into(&mut seg).map_err(codec_err)?;
    }
    segments.push(write_segment(dir, v2_base, &seg)?);
    Ok(segments)
}

fn write_segment(dir: &Path, base: i64, bytes: &[u8]) -> Result<PathBuf, Failure> {
    let path = dir.join(format!("{base:020}.log"));
    std::fs::write(&path, bytes)
        .map_err(|e| Failure::Io(e, format!("cannot write {}", path.display())))?;
    Ok(path)
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
    let segments = build_partition(&partition)?;
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
        "#   {} v1 (Kafka 0.10): timestamps",
        file_name(&segments[1])
    )?;
    writeln!(
        out,
        "#   {} v2 (Kafka 0.11+): lz4 batch with headers from an idempotent producer,",
        file_name(&segments[2])
    )?;
    writeln!(
        out,
        "#       then a committed and an aborted transaction with their markers"
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
