//! `krec demo`: builds a small mixed-format partition in a temporary folder and walks through it.
//!
//! The partition tells the story of a topic that lived through format upgrades: a v0 segment
//! (Kafka 0.8/0.9), a v1 segment (0.10, timestamps), and a v2 segment (0.11+) with compression,
//! an idempotent producer, and a committed and an aborted transaction.

use crate::{Failure, Outcome};
use krecords_codec::control::{ControlRecordKey, ControlRecordType, EndTxnMarker};
use krecords_codec::write::{LegacyBuilder, Record, V2Builder};
use krecords_codec::{Compression, Header, TimestampType};
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
    std::fs::create_dir_all(dir).map_err(|e| Failure::Io(e, format!("cannot create {}", dir.display())))?;
    let value = |i: usize| format!("{{\"order\":{i},\"item\":\"widget-{}\",\"qty\":{}}}", i % 7, i % 5 + 1);
    let mut segments = Vec::new();

    // v0: before 0.10, no timestamps; one gzip wrapper after two plain messages.
    let mut seg = Vec::new();
    let mut b = LegacyBuilder::new(0, 0).map_err(codec_err)?;
    for i in 0..2 {
        let v = value(i);
        b.append(&Record::new(-1, Some(format!("user-{i}").as_bytes()), Some(v.as_bytes()))).map_err(codec_err)?;
    }
    b.finish_into(&mut seg).map_err(codec_err)?;
    let mut next = 2;
    if let Ok(b) = LegacyBuilder::new(0, next).and_then(|b| b.compression(Compression::Gzip, None)) {
        let mut b = b;
        for i in 2..5 {
            let v = value(i);
            b.append(&Record::new(-1, Some(format!("user-{i}").as_bytes()), Some(v.as_bytes()))).map_err(codec_err)?;
        }
        let mut wrapped = Vec::new();
        if b.finish_into(&mut wrapped).is_ok() {
            seg.extend_from_slice(&wrapped);
            next = 5;
        }
    }
    segments.push(write_segment(dir, 0, &seg)?);

    // v1: 0.10 added timestamps.
    let base = next;
    let mut seg = Vec::new();
    let mut b = LegacyBuilder::new(1, base).map_err(codec_err)?;
    for i in 0..5 {
        let v = value(base as usize + i);
        b.append(&Record::new(T0 + i as i64, Some(format!("user-{i}").as_bytes()), Some(v.as_bytes()))).map_err(codec_err)?;
    }
    b.finish_into(&mut seg).map_err(codec_err)?;
    segments.push(write_segment(dir, base, &seg)?);

    // v2: batches with headers, an idempotent producer, and two transactions.
    let mut offset = base + 5;
    let v2_base = offset;
    let mut seg = Vec::new();
    let trace = [Header { key: b"trace-id", value: Some(b"4bf92f35") }];
    let mut b = V2Builder::new(offset).compression(Compression::Lz4, None).producer(1000, 0, 0);
    for i in 0..10 {
        let v = value(offset as usize + i);
        b.append(&Record::new(T0 + 100 + i as i64, Some(b"user-1"), Some(v.as_bytes())).with_headers(&trace))
            .map_err(codec_err)?;
    }
    offset = b.next_offset();
    let mut batch = Vec::new();
    if b.finish_into(&mut batch).is_err() {
        // Without a codec, keep the demo going uncompressed.
        let mut b = V2Builder::new(offset - 10).producer(1000, 0, 0);
        for i in 0..10 {
            let v = value(i);
            b.append(&Record::new(T0 + 100 + i as i64, Some(b"user-1"), Some(v.as_bytes())).with_headers(&trace))
                .map_err(codec_err)?;
        }
        batch.clear();
        b.finish_into(&mut batch).map_err(codec_err)?;
    }
    seg.extend_from_slice(&batch);
    for (pid, commit) in [(2000i64, true), (2001, false)] {
        let mut b = V2Builder::new(offset).producer(pid, 0, 0).transactional(true);
        for i in 0..3 {
            let v = format!("{{\"txn\":{pid},\"step\":{i}}}");
            b.append(&Record::new(T0 + 200 + i, Some(b"account-9"), Some(v.as_bytes()))).map_err(codec_err)?;
        }
        offset = b.next_offset();
        b.finish_into(&mut seg).map_err(codec_err)?;
        let kind = if commit { ControlRecordType::Commit } else { ControlRecordType::Abort };
        let mut m = V2Builder::new(offset).control(true).transactional(true).producer(pid, 0, -1);
        m.append_control(
            T0 + 300,
            &ControlRecordKey { version: 0, kind }.to_bytes(),
            &EndTxnMarker { version: 0, coordinator_epoch: 5 }.to_bytes(),
        )
        .map_err(codec_err)?;
        offset += 1;
        m.finish_into(&mut seg).map_err(codec_err)?;
    }
    let _ = TimestampType::CreateTime;
    segments.push(write_segment(dir, v2_base, &seg)?);
    Ok(segments)
}

fn write_segment(dir: &Path, base: i64, bytes: &[u8]) -> Result<PathBuf, Failure> {
    let path = dir.join(format!("{base:020}.log"));
    std::fs::write(&path, bytes).map_err(|e| Failure::Io(e, format!("cannot write {}", path.display())))?;
    Ok(path)
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
    writeln!(out, "# krec demo: a partition that lived through Kafka's format upgrades")?;
    writeln!(out, "# built in {}", partition.display())?;
    for s in &segments {
        let len = std::fs::metadata(s).map(|m| m.len()).unwrap_or(0);
        writeln!(out, "#   {} ({len} bytes)", s.file_name().and_then(|n| n.to_str()).unwrap_or(""))?;
    }
    writeln!(out, "\n$ krec dump --deep --print-data {}", partition.display())?;
    let dump = crate::dump::Args::for_demo(vec![partition.clone()], crate::dump::Format::Text);
    let outcome = crate::dump::run(dump, out)?;
    writeln!(out, "\n$ krec dump --deep --format json {} | head -1", segments[2].display())?;
    let mut json = Vec::new();
    crate::dump::run(crate::dump::Args::for_demo(vec![segments[2].clone()], crate::dump::Format::Json), &mut json)?;
    if let Some(line) = json.split(|&b| b == b'\n').next() {
        out.write_all(line)?;
        writeln!(out)?;
    }
    if temp {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        writeln!(out, "\n# files kept in {}", partition.display())?;
    }
    Ok(outcome)
}
