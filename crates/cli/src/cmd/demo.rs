//! `krec demo`: builds a small mixed-format partition ([`krecords_log::sample`]) in a temporary
//! folder and walks through it.

use crate::outcome::{Failure, Outcome};
use krecords_log::sample::{write_demo_partition, DemoPartition, ABORTED_PID, COMMITTED_PID};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Build a sample mixed-format partition in a temporary folder and show it.
///
/// The temporary folder is deleted at the end unless --keep; a folder named with --dir is
/// yours and is always kept.
///
/// Examples:
///   krec demo                  # build, then show dump, explain, stats, reads and verify
///   krec demo --keep           # the same, keeping the temporary folder to explore it
///   krec demo --dir /tmp/x     # build in /tmp/x/orders-0 (kept)
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Folder to build the partition in, as DIR/orders-0; it is kept afterwards (default: a
    /// new temporary folder, deleted at the end unless --keep).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Keep the temporary folder afterwards (a --dir folder is always kept).
    #[arg(long)]
    keep: bool,
}

/// Writes the sample partition into `dir` ([`write_demo_partition`]).
pub fn build_partition(dir: &Path) -> Result<DemoPartition, Failure> {
    if dir.join(krecords_log::files::CONFIG_FILE).exists() {
        return Err(Failure::Usage(format!(
            "{} already holds a log; remove it or choose another --dir",
            dir.display()
        )));
    }
    write_demo_partition(dir).map_err(|e| {
        if e.is_storage_error() {
            Failure::Io(std::io::Error::other(e.to_string()), String::new())
        } else {
            Failure::Data(e.to_string())
        }
    })
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

/// Removes the demo's temporary directory however the demo ends: a reader that stops early
/// (`krec demo | head`) makes the next write fail, and the demo returns before its end.
struct Cleanup(Option<PathBuf>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            // Already gone after a complete demo, which says so itself.
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Runs the demo.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    // A --dir folder is the user's: kept, with or without --keep.
    let (dir, temp) = match &args.dir {
        Some(d) => (d.clone(), false),
        None => {
            let d = std::env::temp_dir().join(format!("krec-demo-{}", std::process::id()));
            (d, !args.keep)
        }
    };
    let _cleanup = Cleanup(temp.then(|| dir.clone()));
    let partition = dir.join("orders-0");
    let DemoPartition { segments, retry } = build_partition(&partition)?;
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
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => writeln!(
                out,
                "\n# {} deleted; `krec demo --keep` keeps the files to explore them",
                dir.display()
            )?,
            Err(e) => writeln!(out, "\n# {} could not be deleted: {e}", dir.display())?,
        }
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
