//! `krec produce` (kcat -P): JSON lines or plain lines into a topic, through
//! krecords_client::produce_records; existing batch files through
//! krecords_client::produce_batches.

use crate::args::{parse_compression, Format};
use crate::bytes_fmt::BytesFormat;
use crate::kafka::{ClientArgs, KafkaUrl};
use crate::outcome::{Failure, Outcome};
use crate::time_fmt::now_ms;
use krecords_client::{
    produce_batches, produce_records, written_per_partition, Client, ProduceError, ProduceOptions,
    ProduceRecord, Written,
};
use krecords_codec::build::{read_json_produce_records, read_value_lines, JsonLinesError};
use krecords_source::batches::SendableBatches;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;

/// Produce records to a topic (as kcat -P), idempotently or in one transaction.
///
/// TARGET is kafka://HOST[:PORT][,HOST[:PORT]...]/TOPIC[/PARTITION] (the port defaults to
/// 9092). Records are read from stdin (or --input) as JSON lines, the `krec build` input with
/// one more optional field, "partition":
///   {"key":"user-1","value":"hello","headers":[{"key":"h","value":"v"}],"timestamp":1714000000000,"partition":3}
/// Keys, values and header values are read per --bytes; a missing key is a null key, a missing
/// timestamp is now. With --lines, each line is one value (no key), taken as it is.
///
/// A record goes to the partition it names, else to TARGET's partition, else to the partition
/// Kafka's Java producer would pick: murmur2 of the key modulo the partition count for a keyed
/// record; records without a key stick to one partition per batch (--records-per-batch), then
/// move on to the next.
///
/// With --batches, the v2 batches of existing segment files or partition directories are sent
/// as they are to TARGET's partition (their records and compression untouched; the producer's
/// id, epoch and sequences are patched in), as a read_committed consumer reads them: aborted
/// transactions' batches are left out and an open transaction's, and all after, are not sent
/// (said on stderr); control batches are skipped, entries whose CRC fails and v0/v1 entries
/// refused
/// (`krec convert --magic 2` first, or `krec ship`, which also resumes exactly once).
///
/// Records are sent by an idempotent producer with acks=all (a retried batch is never
/// written twice), each batch visible once acknowledged. With --transactional-id, all of them
/// are sent in one transaction: a consumer at read_committed sees all of them or none. Every
/// line is read and checked before anything is sent. The report gives, per partition, the
/// records written and the offsets they got.
///
/// Exit codes: 0 every record written; 1 a --batches input that cannot be sent (a corrupt or
/// v0/v1 entry); 2 usage (a bad line, a partition the topic does not have, an unknown topic),
/// an unreachable broker, a refused write. In a transaction nothing is visible after an
/// error; without one, the batches acknowledged before it are.
///
/// Examples:
///   echo '{"key":"k1","value":"hello"}' | krec produce kafka://localhost:9092/events
///   krec produce kafka://localhost:9092/events --lines --compression zstd:3 < values.txt
///   krec produce kafka://localhost:9092/events/2 --input records.jsonl --format json
///   krec produce kafka://b1:9093/events -F client.properties --transactional-id loader-1 < records.jsonl
///   krec produce kafka://localhost:9092/events/0 --batches /backup/events-0
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// kafka://HOST[:PORT]/TOPIC[/PARTITION].
    #[arg(value_name = "TARGET")]
    target: String,
    /// Read records from this file instead of stdin.
    #[arg(long)]
    input: Option<PathBuf>,
    /// One value per line (no key, no headers) instead of JSON lines.
    #[arg(long)]
    lines: bool,
    /// How keys, values and header values are given in JSON lines.
    #[arg(long, value_enum, default_value_t = BytesFormat::Utf8)]
    bytes: BytesFormat,
    /// Codec, optionally with a level: none, gzip[:1-9], snappy, lz4 (its default level only),
    /// zstd[:-131072-22].
    #[arg(long, default_value = "none")]
    compression: String,
    /// Records per batch; keyless records stick to one partition for this many.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    records_per_batch: u32,
    /// Send the v2 batches of these segment files or partition directories as they are, to
    /// TARGET's partition, instead of records from stdin.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["input", "lines", "compression", "records_per_batch"])]
    batches: Vec<PathBuf>,
    /// Send every record in one transaction of this transactional id (all or none), instead
    /// of idempotently without a transaction.
    #[arg(long)]
    transactional_id: Option<String>,
    /// Text: one line per partition and a total; JSON: one object per partition per line,
    /// {"topic","partition","records","batches","first_offset","last_offset"}.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    client: ClientArgs,
}

/// Runs the subcommand.
pub fn run(args: Args, stdout: &mut impl Write) -> Result<Outcome, Failure> {
    let url = KafkaUrl::parse(&args.target)
        .unwrap_or_else(|| Err(format!("{}: the target must be kafka://", args.target)))
        .map_err(Failure::Usage)?;
    let mut config = args.client.config()?;
    config
        .set("bootstrap.servers", &url.servers)
        .map_err(|e| Failure::Usage(format!("{}: {e}", args.target)))?;
    let how = match &args.transactional_id {
        Some(tid) => format!("in one committed transaction of {tid}"),
        None => "idempotently, acks=all".to_owned(),
    };
    if !args.batches.is_empty() {
        let acks = send_batches(&args, &url, config)?;
        report(
            stdout,
            &url.topic,
            &written_per_partition(&acks),
            &how,
            args.format,
        )?;
        return Ok(Outcome::Ok);
    }
    let (compression, level) = parse_compression(&args.compression)?;
    let records = read_input(&args)?;
    let mut opts = ProduceOptions {
        transactional_id: args.transactional_id.clone(),
        partition: url.partition,
        ..ProduceOptions::idempotent()
    };
    opts.compression = compression;
    opts.level = level;
    opts.records_per_batch = usize::try_from(args.records_per_batch).unwrap_or(1000);
    // The keyless records' first partition varies between runs, as the Java producer's.
    opts.sticky_start = u32::try_from(now_ms().rem_euclid(1 << 20)).unwrap_or(0);

    let name = format!("kafka://{}", url.servers);
    let acks = runtime()?
        .block_on(async {
            let client = Client::connect(config).await?;
            produce_records(&client, &url.topic, records, &opts).await
        })
        .map_err(|e| produce_failure(e, &name))?;

    let written = written_per_partition(&acks);
    report(stdout, &url.topic, &written, &how, args.format)?;
    Ok(Outcome::Ok)
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Io(e, "cannot start the runtime".into()))
}

/// `--batches`: every v2 data batch of the files, in order, to the URL's partition.
fn send_batches(
    args: &Args,
    url: &KafkaUrl,
    config: krecords_client::ClientConfig,
) -> Result<Vec<krecords_client::Produced>, Failure> {
    let Some(partition) = url.partition else {
        return Err(Failure::Usage(format!(
            "{}: --batches sends batches as they are, to one partition: name it \
             (kafka://HOST:PORT/TOPIC/PARTITION)",
            args.target
        )));
    };
    let mut batches = SendableBatches::open(&args.batches)?;
    // The input's error, kept for its class (damage exit 1, an unreadable file exit 2).
    let mut failed = None;
    let mut next = || {
        batches
            .next_batch(&mut |n| eprintln!("krec: warning: {n}"))
            .map_err(|e| {
                let m = e.to_string();
                failed = Some(e);
                ProduceError::Input(m)
            })
    };
    let name = format!("kafka://{}", url.servers);
    let sent = runtime()?.block_on(async {
        let client = Client::connect(config).await?;
        produce_batches(
            &client,
            &url.topic,
            partition,
            args.transactional_id.as_deref(),
            &mut next,
        )
        .await
    });
    match (sent, failed) {
        (Err(ProduceError::Input(_)), Some(e)) => Err(e.into()),
        (sent, _) => sent.map_err(|e| produce_failure(e, &name)),
    }
}

fn produce_failure(e: ProduceError, name: &str) -> Failure {
    match e {
        ProduceError::Input(m) => Failure::Data(m),
        ProduceError::Client(e) => match krecords_admin::Error::Client(e) {
            e if e.class() == krecords_source::ErrorClass::Data => {
                Failure::Data(format!("{name}: {e}"))
            }
            e => Failure::Usage(format!("{name}: {e}")),
        },
        e => Failure::Usage(format!("{name}: {e}")),
    }
}

fn read_input(args: &Args) -> Result<Vec<ProduceRecord>, Failure> {
    let reader: Box<dyn BufRead> = match &args.input {
        Some(p) => Box::new(std::io::BufReader::new(
            std::fs::File::open(p)
                .map_err(|e| Failure::Io(e, format!("cannot open {}", p.display())))?,
        )),
        None => Box::new(std::io::stdin().lock()),
    };
    let read = match args.lines {
        true => read_value_lines(reader, now_ms()),
        false => read_json_produce_records(reader, args.bytes.into(), now_ms()),
    };
    let records = read.map_err(|e| match e {
        JsonLinesError::Io(e) => Failure::Io(e, "cannot read input".into()),
        line @ JsonLinesError::Line { .. } => Failure::Usage(line.to_string()),
    })?;
    Ok(records
        .into_iter()
        .map(|(line, partition, record)| ProduceRecord {
            partition,
            record,
            line: Some(line),
        })
        .collect())
}

fn report(
    out: &mut impl Write,
    topic: &str,
    written: &BTreeMap<i32, Written>,
    how: &str,
    format: Format,
) -> Result<(), Failure> {
    let offset = |o: Option<i64>| o.map_or(serde_json::Value::Null, serde_json::Value::from);
    match format {
        Format::Json => {
            for (p, w) in written {
                let line = serde_json::json!({
                    "topic": topic,
                    "partition": p,
                    "records": w.records,
                    "batches": w.batches,
                    "first_offset": offset(w.first_offset),
                    "last_offset": offset(w.last_offset),
                });
                writeln!(out, "{line}")?;
            }
        }
        Format::Text => {
            let mut total = 0i64;
            for (p, w) in written {
                total = total.saturating_add(w.records);
                writeln!(out, "{topic}/{p}: {w}")?;
            }
            writeln!(
                out,
                "produced {total} {} to {topic} {how}",
                if total == 1 { "record" } else { "records" }
            )?;
        }
    }
    Ok(())
}
