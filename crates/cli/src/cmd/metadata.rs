//! `krec metadata` (kcat -L) and `krec offsets` (kcat -Q, GetOffsetShell): a cluster's
//! brokers, topics, partitions and offsets, from a live cluster or a stopped broker's files,
//! through krecords-admin.

use crate::args::Format;
use crate::kafka::{ClientArgs, KafkaUrl};
use crate::outcome::{Failure, Outcome};
use krecords_admin::Cluster;
use krecords_client::{Client, ClientConfig};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Brokers, controller, topics and partitions (leader, replicas, ISR, offline) of a cluster.
///
/// SOURCE is a live cluster, kafka://HOST[:PORT][,HOST[:PORT]...][/TOPIC[/PARTITION]] (port
/// 9092 by default; with a PARTITION, that partition only), or a stopped broker's log.dirs root
/// (or one TOPIC-N partition directory of it: that partition only). Live, the answer is a
/// Metadata request's;
/// offline, it is the broker's KRaft metadata log (__cluster_metadata-0: its newest snapshot,
/// then the records after it) replayed to its last state, with the cluster id of
/// meta.properties, the quorum's last leader as the controller, and for each partition whether
/// this disk holds its directory (partitions on the disk that the metadata does not name are
/// listed too, with no leader). The text and JSON forms are the same for both, so the answer of
/// a running cluster and that of a dead broker's disks compare line by line.
///
/// A partition with no leader is offline ("OFFLINE" in the text); a replica out of the ISR
/// makes it under-replicated ("UNDER-REPLICATED"). Internal topics (__consumer_offsets, ...)
/// are shown with --all.
///
/// Exit codes: 0 answered; 1 answered, but with --offsets a partition's data is damaged (its
/// row says "damaged" and a warning names the damage, as in offsets); 2 usage, an unreachable
/// broker, an unreadable directory (a partition whose files cannot be read; the rest is answered).
///
/// Examples:
///   krec metadata kafka://localhost:9092
///   krec metadata kafka://localhost:9092 --topic 'orders-*' --offsets --format json
///   krec metadata /var/lib/kafka/data --all     # a stopped broker's disk
///   krec metadata kafka://b1:9093 -X security.protocol=SASL_SSL -F client.properties
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    #[command(flatten)]
    select: Select,
    /// Each partition's earliest offset, high watermark and last stable offset too.
    #[arg(long)]
    offsets: bool,
    /// Text: a header, then one line per partition; JSON: one object {"source","live",
    /// "cluster_id","controller","brokers","topics","warnings"}.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Per partition: earliest offset, latest (high watermark), last stable offset, and with
/// --time the first offset at or after a time.
///
/// SOURCE is as for `krec metadata`: kafka://HOST[:PORT][/TOPIC[/PARTITION]] (ListOffsets on the
/// partitions' leaders: earliest, latest at read_uncommitted, latest at read_committed, and the
/// offset for --time) or a stopped broker's log.dirs root (the same from each partition
/// directory's files and indexes; one TOPIC-N directory of it answers for that partition).
/// Internal topics with --all. A partition whose files cannot be read (damage in the middle of
/// its log, which Kafka's recovery would cut with the intact entries after it) shows "-" and a
/// warning naming the damage. The files are read as a broker's restart reads them: after a
/// clean shutdown the offsets come from the indexes and nothing is scanned, so damage there
/// is found by `krec verify`, which checks every byte.
///
/// Text: TOPIC PARTITION EARLIEST LATEST STABLE [AT_TIME], one line per partition ("-" where
/// there is no answer: a partition not on this disk, a time after the last record; then why,
/// when its files could not be read). JSON: one object per partition per line:
/// {"topic","partition","earliest","latest","last_stable","at_time","error"} ("error": null,
/// or why the partition has no answer).
///
/// Exit codes: 0 answered; 1 answered, but a partition's data is damaged (its offsets show
/// "-" and a warning names the damage); 2 usage, an unreachable broker, an unreadable
/// directory (a partition whose files cannot be read: the others are answered).
///
/// Examples:
///   krec offsets kafka://localhost:9092/orders
///   krec offsets kafka://localhost:9092 --time 2026-12-03T10:00:00Z
///   krec offsets /var/lib/kafka/data --topic 'orders*' --format json
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct OffsetsArgs {
    #[command(flatten)]
    select: Select,
    /// Also the first offset whose timestamp is at or after T: epoch ms (0 or more), @ and
    /// epoch ms (as --start and the other positions take a time), or ISO 8601.
    #[arg(long, value_name = "T", value_parser = crate::time_fmt::parse_lookup_time, allow_negative_numbers = true)]
    time: Option<i64>,
    /// Text: aligned columns; JSON: one object per partition per line.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// The source and topic selection `krec metadata` and `krec offsets` share.
#[derive(clap::Args)]
pub struct Select {
    /// kafka://HOST[:PORT][/TOPIC[/PARTITION]], a broker's log.dirs root, or one TOPIC-N directory.
    #[arg(value_name = "SOURCE")]
    source: PathBuf,
    /// Only topics whose name matches GLOB (`*`, `?`, `[...]`); repeatable. Globs matching no
    /// topic are exit 2, naming the topics there are (as in dump and verify).
    #[arg(long, value_name = "GLOB")]
    topic: Vec<String>,
    /// Internal topics too (__consumer_offsets, __transaction_state, ...).
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    client: ClientArgs,
}

/// What a SOURCE argument names.
enum Target {
    /// A live cluster: its servers, and the URL's topic if any.
    Live(krecords_source::ClusterUrl),
    /// A broker's root directory.
    Root(PathBuf),
}

fn target(source: &Path) -> Result<Target, Failure> {
    match source.to_str().and_then(KafkaUrl::parse_cluster) {
        None => Ok(Target::Root(source.to_path_buf())),
        Some(url) => Ok(Target::Live(url.map_err(Failure::Usage)?)),
    }
}

fn admin_failure(e: krecords_admin::Error) -> Failure {
    match e {
        krecords_admin::Error::Io { what, source } => Failure::Io(source, what),
        krecords_admin::Error::Source(e) => Failure::from(e),
        e => match e.class() {
            krecords_source::ErrorClass::Data => Failure::Data(e.to_string()),
            _ => Failure::Usage(e.to_string()),
        },
    }
}

/// The cluster of `source`, filtered, with offsets when `offsets`.
fn load(select: &Select, offsets: Option<Option<i64>>) -> Result<Cluster, Failure> {
    let (globs, all) = (&select.topic, select.all);
    krecords_source::partition_filter(std::slice::from_ref(&select.source), globs, None)?;
    match target(&select.source)? {
        Target::Root(root) => {
            select.client.warn_unused(&[]);
            krecords_admin::offline::load(&root, globs, all, offsets).map_err(admin_failure)
        }
        Target::Live(url) => {
            let globs: Vec<String> = globs.iter().cloned().chain(url.topic.clone()).collect();
            let (config, rt, name) = live_setup(&url.servers, &select.client)?;
            let one = url.topic.as_deref().zip(url.partition);
            let load = krecords_admin::live::load(config, name.clone(), &globs, all, offsets, one);
            rt.block_on(load).map_err(|e| match e {
                krecords_admin::Error::Client(e) => client_failure(e, &name),
                e => admin_failure(e),
            })
        }
    }
}

/// The client configuration for `servers`, a runtime, and the cluster's name for messages.
fn live_setup(
    servers: &str,
    client: &ClientArgs,
) -> Result<(ClientConfig, tokio::runtime::Runtime, String), Failure> {
    let mut config = client.config()?;
    config
        .set("bootstrap.servers", servers)
        .map_err(|e| Failure::Usage(format!("kafka://{servers}: {e}")))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Io(e, "cannot start the runtime".into()))?;
    Ok((config, rt, format!("kafka://{servers}")))
}

/// A client error of the cluster `name`, its message prefixed with the name.
fn client_failure(e: krecords_client::Error, name: &str) -> Failure {
    match admin_failure(krecords_admin::Error::Client(e)) {
        Failure::Usage(m) => Failure::Usage(format!("{name}: {m}")),
        Failure::Data(m) => Failure::Data(format!("{name}: {m}")),
        Failure::Io(e, w) => Failure::Io(e, format!("{name}: {w}")),
    }
}

fn warn(cluster: &Cluster) {
    for w in &cluster.warnings {
        eprintln!("krec: warning: {w}");
    }
}

/// Runs `krec metadata`.
pub fn run(args: Args, out: &mut impl Write) -> Result<Outcome, Failure> {
    let offsets = args.offsets.then_some(None);
    let mut cluster = load(&args.select, offsets)?;
    // Offline without a metadata log, leader -1 means unknown (said here, where leaders are
    // shown; offsets and groups do not need them).
    if let Target::Root(root) = target(&args.select.source)? {
        let missing = krecords_admin::offline::missing_metadata(&root);
        cluster.warnings.extend(missing);
    }
    warn(&cluster);
    match args.format {
        Format::Json => cluster.write_json(out)?,
        Format::Text => cluster.write_text(out)?,
    }
    Ok(Outcome::answered_but(cluster.unanswered))
}

/// Runs `krec offsets`.
pub fn run_offsets(args: OffsetsArgs, out: &mut impl Write) -> Result<Outcome, Failure> {
    let cluster = load(&args.select, Some(args.time))?;
    warn(&cluster);
    match args.format {
        Format::Json => cluster.write_offsets_json(out)?,
        Format::Text => cluster.write_offsets_text(args.time.is_some(), out)?,
    }
    Ok(Outcome::answered_but(cluster.unanswered))
}

/// Consumer groups: members, committed offsets and lag per partition and in total, from a
/// stopped broker's files or a live cluster.
///
/// Offline (SOURCE a broker's log.dirs root, or one __consumer_offsets-N directory of it for that
/// partition's groups): every __consumer_offsets-N directory on the disk read at read_committed
/// and decoded (GroupMetadata with members and assignments, consumer-protocol group records,
/// offset commits and their tombstones), each group in the state Kafka's coordinator loads it in
/// (Empty without members, else Stable; consumer-protocol groups Assigning or Reconciling too),
/// its last commits with their times, and lag against the end offset of its partition's
/// directory on the disk: how far behind it was when the broker stopped ("-": not on the disk).
///
/// Live (kafka://HOST[:PORT]): the GROUPs named, or every group of the cluster (ListGroups;
/// share groups are listed with their state); kafka://HOST[:PORT]/TOPIC[/PARTITION]: the rows
/// of that topic (glob) or partition only, of the groups that have one (a commit, an assigned
/// partition: who consumes the topic), or of the GROUPs named, total lag over those rows;
/// each group's state and members from its coordinator (ConsumerGroupDescribe for a
/// consumer-protocol group, DescribeGroups for a classic one), its committed offsets by
/// OffsetFetch for every topic, and lag against ListOffsets latest: the rows of
/// kafka-consumer-groups --describe (a partition assigned to a member but never committed
/// shows COMMITTED and LAG "-").
///
/// Text: GROUP TOPIC PARTITION COMMITTED END LAG CONSUMER_ID HOST CLIENT_ID COMMITTED_AT,
/// then a line per group with its kind, state, generation or epoch, members, partitions and
/// total lag; JSON: one object per group per line {"group","kind","state","protocol_type",
/// "generation","members":[{"member_id","client_id","host","assignment":{TOPIC:[P...]}}],
/// "offsets":[{"topic","partition","committed","metadata","commit_time","end","lag",
/// "member_id","host","client_id"}],"total_lag"} (metadata: the string committed, "" when
/// empty, null when absent; total_lag: the sum of the positive known lags, the records still
/// to read: a negative lag, committed past the end, adds nothing; null when no lag is known,
/// where the text line says "-"; the text says "at least N" when some are not).
///
/// A damaged batch in a __consumer_offsets partition (a bad CRC, records that do not parse, a
/// malformed entry) ends that partition's replay, as Kafka's broker loads nothing past it (its
/// log recovery truncates the log at the first corrupt batch): the groups shown have the
/// partition's commits from before the damage only, none at or after it (so an offset whose
/// deletion is in the damaged batch still shows), and a warning names the file, the byte and
/// the offset of the damage and what is wrong.
///
/// Exit codes: 0 answered (a root without __consumer_offsets partitions: no group, and a
/// warning saying so); 1 answered, but a __consumer_offsets partition could not be read
/// whole (damage in the middle of its log, as above); 2 usage, a GROUP named that is not in
/// SOURCE (no committed offsets and no group metadata there; live: unknown to the
/// coordinator, which answers Dead; nothing is printed then, not even the groups found), an
/// unreachable broker, an unreadable directory.
///
/// Examples:
///   krec groups /var/lib/kafka/data                 # a stopped broker's disk: all groups
///   krec groups /var/lib/kafka/data orders-app --format json
///   krec groups kafka://localhost:9092              # every group of a live cluster
///   krec groups kafka://localhost:9092 orders-app
///   krec groups kafka://localhost:9092/orders       # the groups consuming orders
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct GroupsArgs {
    /// A broker's log.dirs root, or kafka://HOST[:PORT][/TOPIC[/PARTITION]].
    #[arg(value_name = "SOURCE")]
    source: PathBuf,
    /// Only these groups (default: every group).
    #[arg(value_name = "GROUP")]
    groups: Vec<String>,
    /// Text: one line per partition and a total per group; JSON: one object per group per line.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    client: ClientArgs,
}

/// Runs `krec groups`.
pub fn run_groups(args: GroupsArgs, out: &mut impl Write) -> Result<Outcome, Failure> {
    let (mut outcome, mut live) = (Outcome::Ok, None);
    let groups = match target(&args.source)? {
        Target::Root(root) => {
            args.client.warn_unused(&[]);
            let found = krecords_admin::groups::describe_root(&root).map_err(admin_failure)?;
            for w in found.warnings {
                eprintln!("krec: warning: {w}");
            }
            // Groups without some of their commits: shown, and the exit code says so.
            if !found.unread.is_empty() {
                outcome = Outcome::DataProblem;
            }
            found.groups
        }
        Target::Live(url) => {
            let (config, rt, name) = live_setup(&url.servers, &args.client)?;
            live = Some(url);
            rt.block_on(async {
                let c = Client::connect(config).await?;
                krecords_admin::groups::describe_live_named(&c, &args.groups).await
            })
            .map_err(|e| client_failure(e, &name))?
        }
    };
    let source = args.source.display().to_string();
    let groups = krecords_admin::groups::answer(groups, &args.groups, live.as_ref(), &source)
        .map_err(admin_failure)?;
    match args.format {
        Format::Json => krecords_admin::text::write_groups_json(&groups, out)?,
        Format::Text => krecords_admin::text::write_groups_text(&groups, out)?,
    }
    Ok(outcome)
}
