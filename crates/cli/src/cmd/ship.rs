//! `krec ship SOURCE… kafka://HOST:PORT/TOPIC[/PARTITION]`: copy committed source data into a
//! Kafka topic exactly once, in target transactions, without re-encoding.
//!
//! Argument parsing and printing only: the engine (sources, resume positions, lanes, the
//! transaction loop) is the `krecords-ship` library, [`krecords_ship::ship`]; see its
//! documentation for the protocol.

use crate::args::{parse_compression, Format};
use crate::kafka::{ClientArgs, KafkaUrl};
use crate::outcome::{Failure, Outcome};
use crate::progress::Progress;
use krecords_client::ClientConfig;
use krecords_ship::{ship, Error, Event, PlanOptions, ShipOptions, Sources, Target};
use std::io::Write;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::Duration;

/// Copy committed data from files, directories or another cluster into a topic, exactly once.
///
/// The data of local logs, partition directories, segment files or another cluster's partition
/// goes into a Kafka topic exactly once (transactions), keeping v2 batches' records bytes and
/// compression. Resumable: run it again with the same --job.
///
/// Isolation: read_committed, as a consumer hands data on: every source is read up to its last
/// stable offset, aborted transactions and transaction markers left out.
///
/// -X and -F (the client properties) apply to the target and to kafka:// sources;
/// --source-X and --source-F add properties for kafka:// sources only.
///
/// Positions: a job's consumer group (krec-ship-JOB) commits, per target partition, the
/// target's end offset (so `kafka-consumer-groups --describe` shows lag 0 once all is
/// shipped) with each source's next offset in the commit's metadata; a rerun reads them and
/// ships only what is new.
///
/// SIGTERM or Ctrl-C stops the job gracefully: what was sent is committed with its
/// positions, the report is printed and the exit code is 0 (SIGKILL ends it at once; a later
/// run still resumes exactly). -X socket.timeout.ms bounds each request.
///
/// Exit codes: 0 shipped (or stopped by a signal); 1 bad source data; 2 usage, an unreachable
/// cluster, a missing topic or partition, another job's group.
///
/// Examples:
///   krec ship /var/kafka/orders-3 kafka://backup:9092/orders
///   krec ship /var/kafka/orders-0 /var/kafka/orders-1 kafka://backup:9092/orders --job restore-1
///   krec ship kafka://old:9092/orders/0 kafka://new:9092/orders/0 --follow
///   krec ship /restore/*.log kafka://b:9092/orders/2 --compression zstd:3 --format json
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Sources then the target: SOURCE… kafka://HOST:PORT[,…]/TOPIC[/PARTITION]. A SOURCE is
    /// a log or partition directory (`NAME-N` goes to partition N unless the target names
    /// one), segment files (`.log`, grouped by directory), `-` (entries on standard input; the
    /// target must name the partition), or kafka://HOST:PORT/TOPIC/PARTITION of another
    /// cluster.
    // One or more values per occurrence (options may stand between the sources and the
    // target); `run` asks for at least two in all.
    #[arg(required = true, num_args = 1.., value_name = "SOURCE… TARGET")]
    paths: Vec<String>,
    /// Job name: the transactional id and consumer group are `krec-ship-JOB`; default: the
    /// target topic.
    #[arg(long)]
    job: Option<String>,
    #[command(flatten)]
    client: ClientArgs,
    /// A client property for kafka:// sources only, applied after -F and -X (a source cluster
    /// with other security settings than the target's).
    #[arg(long = "source-X", value_name = "NAME=VALUE")]
    source_property: Vec<String>,
    /// A file of NAME=VALUE lines for kafka:// sources only, read after -F and -X and before
    /// --source-X.
    #[arg(long = "source-F", value_name = "FILE")]
    source_config_file: Vec<PathBuf>,
    /// Output of the final report: a few lines for people, or one JSON object.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Keep shipping what is appended to the sources (polling every --poll-ms); stop with a
    /// signal (a later run resumes exactly).
    #[arg(long)]
    follow: bool,
    /// Poll interval of --follow, in ms.
    #[arg(long, default_value_t = 500, value_name = "MS")]
    poll_ms: u64,
    /// Recompress every batch in another codec with this one (none, gzip, snappy, lz4, zstd),
    /// with an optional level (zstd:3) for the batches it builds; default: keep.
    #[arg(long, value_name = "CODEC")]
    compression: Option<String>,
    /// Source bytes per target transaction (a crash costs at most one transaction of work).
    #[arg(long, default_value_t = 64 << 20, value_name = "BYTES")]
    txn_bytes: u64,
    /// Target partitions shipped at once, each on a connection of its own (a broker appends
    /// one connection's requests one at a time); with --follow, all of them.
    #[arg(long, default_value_t = 4, value_name = "N")]
    parallel: usize,
}

/// `base` with the --source-F files, then the --source-X properties, applied.
fn layered(
    mut base: ClientConfig,
    files: &[PathBuf],
    properties: &[String],
) -> Result<ClientConfig, Failure> {
    for f in files {
        base.apply_file(f)
            .map_err(|e| usage(format!("--source-F {}: {e}", f.display())))?;
    }
    for x in properties {
        base.set_pair(x)
            .map_err(|e| usage(format!("--source-X {x}: {e}")))?;
    }
    Ok(base)
}

fn usage(msg: impl Into<String>) -> Failure {
    Failure::Usage(msg.into())
}

/// A library error as a command failure (exit 2 for usage and I/O, 1 for bad data).
fn failure(e: Error) -> Failure {
    match e {
        Error::Usage(m) => Failure::Usage(m),
        Error::Data(m) => Failure::Data(m),
        Error::Io { context, source } => Failure::Io(source, context),
    }
}

/// Runs `krec ship`.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let target_config = args.client.config()?;
    let Some((target_arg, source_args)) = args.paths.split_last() else {
        return Err(usage("krec ship: SOURCE… TARGET"));
    };
    if source_args.is_empty() {
        return Err(usage(
            "krec ship: SOURCE… TARGET: name at least one source before the target",
        ));
    }
    let target = match KafkaUrl::parse(target_arg) {
        Some(r) => r.map_err(Failure::Usage)?,
        None => {
            return Err(usage(format!(
                "{target_arg}: the target must be kafka://HOST:PORT/TOPIC[/PARTITION]"
            )))
        }
    };
    let (compression, level) = match args.compression.as_deref().map(parse_compression) {
        Some(parsed) => {
            let (c, l) = parsed?;
            (Some(c), l)
        }
        None => (None, None),
    };
    let mut sources = Sources::new(target.partition);
    for a in source_args {
        if krecords_source::RemoteLocation::parse(a).is_some() {
            return Err(usage(format!(
                "{a}: krec ship does not read a remote tier location; krec convert its \
                 partitions into partition directories and ship those"
            )));
        }
        match KafkaUrl::parse(a) {
            Some(url) => {
                let url = url.map_err(Failure::Usage)?;
                sources
                    .add_kafka(a, &url.servers, &url.topic, url.partition)
                    .map_err(failure)?;
            }
            None => sources.add_path(a).map_err(failure)?,
        }
    }
    let sources = sources.finish().map_err(failure)?;
    let source_config = layered(
        target_config.clone(),
        &args.source_config_file,
        &args.source_property,
    )?;
    let mut options = ShipOptions {
        job: args.job,
        plan: PlanOptions { compression, level },
        txn_bytes: args.txn_bytes,
        parallel: args.parallel,
        follow: args.follow,
        poll: Duration::from_millis(args.poll_ms),
        stop: None,
        target_config,
        source_config,
    };
    options.stop = Some(crate::outcome::stop_on_signals(false)?);
    let target = Target::new(target.servers, target.topic, target.partition);
    let mut progress = Progress::new("ship", crate::progress::Unit::Bytes, u64::MAX, 0);
    let report = ship(&target, sources, &options, |event| {
        match event {
            Event::Progress(p) => progress.message(&format!(
                "ship: {} records, {} MiB, {:.1} MB/s, lag {} records, {} of {} partitions shipping",
                p.records,
                p.bytes >> 20,
                p.bytes as f64 / p.elapsed.as_secs_f64().max(1e-3) / 1e6,
                p.lag,
                p.shipping,
                p.partitions,
            )),
            Event::Stalled {
                source,
                last_stable_offset,
                high_watermark,
            } => eprintln!(
                "krec: note: {source}: stopped at offset {last_stable_offset}, the last stable offset (high watermark {high_watermark}): a transaction is still open there; run again once it has ended"
            ),
        }
        ControlFlow::Continue(())
    })
    .map_err(failure)?;
    progress.finish();
    match args.format {
        Format::Json => writeln!(out, "{}", report.to_json())?,
        Format::Text => out.write_all(report.to_text().as_bytes())?,
    }
    Ok(Outcome::Ok)
}
