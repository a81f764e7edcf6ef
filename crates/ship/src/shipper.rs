//! The shipper: lanes of sources per target partition, the transaction loop, the report.

use crate::positions::Positions;
use crate::source::{Reader, Source};
use crate::{Error, Result};
use krecords_client::{
    Client, ClientConfig, IsolationLevel, OffsetSpec, OffsetToCommit, TransactionalProducer,
};
use krecords_log::ship::{plan, Plan, PlanOptions, ShipKind};
use std::collections::{BTreeMap, VecDeque};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// The topic shipped into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `host:port[,host:port…]`.
    pub servers: String,
    /// The topic.
    pub topic: String,
    /// The partition every source goes to; `None`: each source's own (`NAME-N`, or a kafka://
    /// source's partition).
    pub partition: Option<i32>,
}

impl Target {
    /// The target `kafka://SERVERS/TOPIC[/PARTITION]`.
    pub fn new(
        servers: impl Into<String>,
        topic: impl Into<String>,
        partition: Option<i32>,
    ) -> Self {
        Target {
            servers: servers.into(),
            topic: topic.into(),
            partition,
        }
    }

    /// `kafka://SERVERS/TOPIC`, as errors and the report name it.
    pub fn name(&self) -> String {
        format!("kafka://{}/{}", self.servers, self.topic)
    }
}

/// A job's names on the target cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The job name.
    pub name: String,
    /// Its transactional id, `krec-ship-NAME`.
    pub transactional_id: String,
    /// Its consumer group (where the positions are committed), `krec-ship-NAME`.
    pub group: String,
}

impl Job {
    /// The job `name`.
    ///
    /// ```
    /// assert_eq!(krecords_ship::Job::new("orders").group, "krec-ship-orders");
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        let id = format!("krec-ship-{name}");
        Job {
            name,
            transactional_id: id.clone(),
            group: id,
        }
    }
}

/// How a job ships.
#[derive(Debug, Clone)]
pub struct ShipOptions {
    /// The job name (default: the target topic).
    pub job: Option<String>,
    /// How batches are planned (recompression).
    pub plan: PlanOptions,
    /// Source bytes per target transaction (a crash costs at most one transaction of work);
    /// every transaction reads at least one fetch (0 counts as 1).
    pub txn_bytes: u64,
    /// Target partitions shipped at once, each on a connection of its own; with `follow`,
    /// all of them.
    pub parallel: usize,
    /// Keep shipping what is appended to the sources, polling every `poll`; the job ends when
    /// the event callback breaks (or the process is stopped: a later run resumes exactly).
    pub follow: bool,
    /// Poll interval of `follow`.
    pub poll: Duration,
    /// A graceful stop (set by a SIGTERM or Ctrl-C handler, say): once it is true, the job
    /// stops reading, commits what it has sent with its positions, and returns its report
    /// with [`Report::stopped`] set. `None`: the job stops only at its sources' end (or when
    /// the event callback breaks).
    pub stop: Option<Arc<AtomicBool>>,
    /// The client configuration of the target (its `bootstrap.servers` is set from the
    /// target).
    pub target_config: ClientConfig,
    /// The client configuration of kafka:// sources (`bootstrap.servers` from each source).
    pub source_config: ClientConfig,
}

impl Default for ShipOptions {
    fn default() -> Self {
        ShipOptions {
            job: None,
            plan: PlanOptions::default(),
            txn_bytes: 64 << 20,
            parallel: 4,
            follow: false,
            poll: Duration::from_millis(500),
            stop: None,
            target_config: ClientConfig::default(),
            source_config: ClientConfig::default(),
        }
    }
}

/// Where a job is, for a progress line.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Progress {
    /// Records planned for shipping so far.
    pub records: u64,
    /// Source bytes read so far.
    pub bytes: u64,
    /// Time since the job started.
    pub elapsed: Duration,
    /// Committed source records not read yet, over the lanes shipping (as of their last fetch).
    pub lag: i64,
    /// Lanes (target partitions) with data to ship.
    pub shipping: usize,
    /// Lanes in all, shipping, idle or waiting for their turn.
    pub partitions: usize,
}

/// What the shipper tells its caller while it works.
#[derive(Debug)]
pub enum Event<'a> {
    /// After each round of fetches (at least once per transaction).
    Progress(&'a Progress),
    /// A local source stopped at its last stable offset below its high watermark: a
    /// transaction is still open there; what follows waits for its end (a later run ships it).
    Stalled {
        /// The source's id.
        source: &'a str,
        /// Where reading stopped.
        last_stable_offset: i64,
        /// The source's high watermark.
        high_watermark: i64,
    },
}

/// Per target partition totals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionReport {
    /// The ids of the sources read for it, in order.
    pub sources: Vec<String>,
    /// Transactions committed with its positions.
    pub transactions: u64,
    /// Batches shipped as they are.
    pub batches_as_is: u64,
    /// Batches rebuilt from v2 batches.
    pub batches_rebatched: u64,
    /// Batches up-converted from v0/v1 entries.
    pub batches_upconverted: u64,
    /// Control batches skipped.
    pub batches_skipped_control: u64,
    /// Batches of aborted transactions skipped.
    pub batches_skipped_aborted: u64,
    /// Records shipped.
    pub records: u64,
    /// Bytes of the batches shipped.
    pub bytes: u64,
    /// Source bytes read.
    pub source_bytes: u64,
    /// The target offset of the first record shipped (`None`: nothing new).
    pub target_first_offset: Option<i64>,
    /// The target offset of the last record shipped.
    pub target_last_offset: Option<i64>,
    /// Batches the target had already (a retried Produce whose first answer was lost).
    pub duplicate_batches: u64,
}

impl PartitionReport {
    fn add_plan(&mut self, p: &Plan) {
        self.batches_skipped_control += p.skipped_control;
        self.batches_skipped_aborted += p.skipped_aborted;
        self.source_bytes += p.source_bytes;
        for b in &p.batches {
            match b.kind {
                ShipKind::AsIs => self.batches_as_is += 1,
                ShipKind::Rebatched => self.batches_rebatched += 1,
                ShipKind::UpConverted => self.batches_upconverted += 1,
            }
            self.records += b.records as u64;
            self.bytes += b.bytes.len() as u64;
        }
    }
}

/// What a job did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The job's names.
    pub job: Job,
    /// `kafka://SERVERS/TOPIC`.
    pub target: String,
    /// The job's producer id.
    pub producer_id: i64,
    /// Its epoch.
    pub producer_epoch: i16,
    /// Per target partition.
    pub partitions: BTreeMap<i32, PartitionReport>,
    /// Time the job took.
    pub elapsed: Duration,
    /// Whether the job stopped before its sources' end: by [`ShipOptions::stop`] (what was
    /// in flight was committed first) or by the event callback (its open transaction, if
    /// any, was left open: the next run of the job aborts it and ships its data again).
    pub stopped: bool,
}

/// What the lanes share while shipping.
struct Context<'a> {
    rt: &'a Runtime,
    /// The client configuration for kafka:// sources.
    source_config: &'a ClientConfig,
    options: PlanOptions,
    /// The target topic.
    topic: &'a str,
    follow: bool,
    producer: TransactionalProducer,
    /// Per target partition: each source's position (what is committed, plus what this
    /// transaction moved).
    positions: BTreeMap<i32, Positions>,
    totals: BTreeMap<i32, PartitionReport>,
}

/// A failed step: the target's errors are named after the target by the caller.
enum StepError {
    Client(krecords_client::Error),
    Other(Error),
}

impl From<Error> for StepError {
    fn from(e: Error) -> Self {
        StepError::Other(e)
    }
}

/// Ships `sources` into `target` (see the crate documentation), calling `on_event` as it
/// goes; `ControlFlow::Break` from it stops the job where it is.
///
/// # Errors
///
/// [`Error::Usage`] when the target cannot be reached, lacks the topic or a partition, or
/// holds another job's positions in the group; errors of the sources; a client error of the
/// target ends the job (the committed transactions stay, the open one is aborted by the next
/// run).
pub fn ship(
    target: &Target,
    sources: Vec<Source>,
    options: &ShipOptions,
    mut on_event: impl FnMut(Event<'_>) -> ControlFlow<()>,
) -> Result<Report> {
    let started = Instant::now();
    let job = Job::new(options.job.clone().unwrap_or_else(|| target.topic.clone()));
    let tname = target.name();
    let mut config = options.target_config.clone();
    config
        .set("bootstrap.servers", &target.servers)
        .map_err(|e| Error::usage(format!("{tname}: {e}")))?;
    // One I/O thread: the target partitions' Produce tasks write and read there while this
    // thread reads and plans the sources.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| Error::Io {
            context: "cannot start the I/O runtime".into(),
            source: e,
        })?;
    let fail = |e: krecords_client::Error| Error::client(&tname, &e);
    let client = rt.block_on(Client::connect(config)).map_err(fail)?;
    check_topic(&rt, &client, target, &sources)?;

    // Fence an older run and abort its open transaction, then read where the last commit ended.
    let producer: TransactionalProducer = rt
        .block_on(client.transactional_producer(&job.transactional_id))
        .map_err(fail)?;
    let mut partitions: Vec<i32> = sources.iter().map(|s| s.partition).collect();
    partitions.sort_unstable();
    partitions.dedup();
    let committed = rt
        .block_on(client.offset_fetch(&job.group, &target.topic, &partitions, true))
        .map_err(fail)?;
    let mut positions: BTreeMap<i32, Positions> = BTreeMap::new();
    for p in &partitions {
        let meta = committed
            .iter()
            .find(|c| c.partition == *p)
            .and_then(|c| c.metadata.as_deref());
        let what = format!("{tname}/{p} group {}", job.group);
        positions.insert(*p, Positions::from_metadata(meta, &what)?);
    }

    // One lane per target partition (its sources in order); up to `parallel` lanes are
    // shipped at once, each on its own connection, in shared transactions.
    let mut by_partition: BTreeMap<i32, Vec<&Source>> = BTreeMap::new();
    for s in &sources {
        by_partition.entry(s.partition).or_default().push(s);
    }
    let mut waiting: VecDeque<Lane> = by_partition
        .into_iter()
        .map(|(partition, sources)| Lane::new(partition, sources))
        .collect();
    // `follow` keeps every lane open: each follows its last source.
    let parallel = if options.follow {
        waiting.len()
    } else {
        options.parallel.max(1)
    };
    let mut active: Vec<Lane> = Vec::new();
    let mut cx = Context {
        rt: &rt,
        source_config: &options.source_config,
        options: options.plan,
        topic: &target.topic,
        follow: options.follow,
        producer,
        positions,
        totals: BTreeMap::new(),
    };
    let mut shipped_bytes = 0u64;
    let mut stopped = false;
    let stop_requested = || {
        options
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    };
    // Per target partition, its next offset once this job's last transaction there is
    // committed (its records, then the commit marker): the group's committed offset, so that
    // the job's group shows no lag once everything is shipped.
    let mut target_next: BTreeMap<i32, i64> = BTreeMap::new();
    // At least a byte: a transaction takes at least one fetch.
    let txn_bytes = options.txn_bytes.max(1);
    'job: loop {
        while active.len() < parallel {
            let Some(lane) = waiting.pop_front() else {
                break;
            };
            active.push(lane);
        }
        // One transaction: fetches up to `txn_bytes` of source data, a fetch per lane in turn,
        // each batch sent as soon as it is planned (the next fetch is read while the broker
        // appends), then every lane's position and the commit.
        let mut txn_source_bytes = 0u64;
        while txn_source_bytes < txn_bytes {
            let mut read_any = false;
            for lane in active.iter_mut().filter(|l| !l.idle) {
                let budget = usize::try_from(txn_bytes - txn_source_bytes).unwrap_or(usize::MAX);
                let step = lane
                    .step(&mut cx, budget, &mut on_event)
                    .map_err(|e| match e {
                        StepError::Client(e) => fail(e),
                        StepError::Other(e) => e,
                    })?;
                if let Some(n) = step {
                    txn_source_bytes += n;
                    read_any = true;
                }
                if txn_source_bytes >= txn_bytes {
                    break;
                }
            }
            let progress = Progress {
                records: cx.totals.values().map(|t| t.records).sum(),
                bytes: shipped_bytes + txn_source_bytes,
                elapsed: started.elapsed(),
                lag: active.iter().map(|l| l.lag).sum(),
                shipping: active.iter().filter(|l| !l.idle).count(),
                partitions: active.len() + waiting.len(),
            };
            if on_event(Event::Progress(&progress)).is_break() {
                // The batches sent so far reach the broker before the job stops, uncommitted: a
                // later run fences this producer and its open transaction is aborted, the same
                // state a crash after the sends leaves (and no Produce is cut off mid-flight).
                if cx.producer.in_transaction() {
                    rt.block_on(cx.producer.flush()).map_err(fail)?;
                }
                stopped = true;
                break 'job;
            }
            if !read_any || stop_requested() {
                break;
            }
        }
        // Also when nothing was produced (only control or aborted batches read): the positions
        // move on in a transaction of their own.
        // The source positions go in the commit's metadata; the committed offset is the
        // target's position.
        let moved: Vec<(i32, String)> = active
            .iter()
            .filter(|l| l.moved)
            .map(|l| {
                let positions = cx.positions.get(&l.partition).cloned();
                (l.partition, positions.unwrap_or_default().to_metadata())
            })
            .collect();
        if !moved.is_empty() {
            let producer = &mut cx.producer;
            if !producer.in_transaction() {
                producer.begin().map_err(fail)?;
            }
            let (client, topic, target_next) = (&client, &target.topic, &mut target_next);
            let produced = rt
                .block_on(async {
                    let produced = producer.flush().await?;
                    for pr in &produced {
                        if let Some(b) = pr.base_offset {
                            let next = b.saturating_add(i64::from(pr.records)).saturating_add(1);
                            let e = target_next.entry(pr.partition).or_insert(next);
                            *e = (*e).max(next);
                        }
                    }
                    let mut offsets = Vec::with_capacity(moved.len());
                    for (partition, metadata) in moved {
                        let offset = match target_next.get(&partition) {
                            Some(o) => *o,
                            // Nothing shipped there by this run yet: the target's end now.
                            None => client
                                .list_offsets(
                                    topic,
                                    partition,
                                    OffsetSpec::Latest,
                                    IsolationLevel::ReadUncommitted,
                                )
                                .await?
                                .offset
                                .unwrap_or(0),
                        };
                        offsets.push(OffsetToCommit {
                            topic: topic.clone(),
                            partition,
                            offset,
                            metadata: Some(metadata),
                        });
                    }
                    producer.send_offsets(&job.group, &offsets).await?;
                    producer.commit().await?;
                    Ok(produced)
                })
                .map_err(fail)?;
            for pr in produced {
                let t = cx.totals.entry(pr.partition).or_default();
                match pr.base_offset {
                    Some(b) => {
                        t.target_first_offset.get_or_insert(b);
                        t.target_last_offset = Some(b + i64::from(pr.records) - 1);
                    }
                    None => t.duplicate_batches += 1,
                }
            }
            for lane in active.iter_mut().filter(|l| l.moved) {
                lane.moved = false;
                cx.totals.entry(lane.partition).or_default().transactions += 1;
            }
            shipped_bytes += txn_source_bytes;
        }
        if stop_requested() {
            stopped = true;
            break;
        }
        if options.follow {
            // Each idle lane looks again `poll` after it found nothing; when all are idle,
            // sleep until the first of those moments.
            let poll = options.poll;
            if active.iter().all(|l| l.idle) {
                let wait = active
                    .iter()
                    .filter_map(|l| l.idle_since)
                    .map(|t| poll.saturating_sub(t.elapsed()))
                    .min()
                    .unwrap_or(poll);
                std::thread::sleep(wait);
            }
            for lane in &mut active {
                if lane.idle_since.is_some_and(|t| t.elapsed() >= poll) {
                    lane.wake();
                }
            }
        } else {
            active.retain(|l| !l.idle);
            if active.is_empty() && waiting.is_empty() {
                break;
            }
        }
    }
    drop(active);
    drop(waiting);
    let Context {
        producer, totals, ..
    } = cx;
    Ok(Report {
        job,
        target: tname,
        producer_id: producer.producer_id(),
        producer_epoch: producer.epoch(),
        partitions: totals,
        elapsed: started.elapsed(),
        stopped,
    })
}

/// The target topic must exist with every partition the sources need.
fn check_topic(rt: &Runtime, client: &Client, target: &Target, sources: &[Source]) -> Result<()> {
    let tname = target.name();
    let md = rt
        .block_on(client.metadata(Some(&[target.topic.as_str()])))
        .map_err(|e| Error::client(&tname, &e))?;
    let unknown = Some(krecords_client::kafka_protocol::ResponseError::UnknownTopicOrPartition);
    match md.topics.iter().find(|t| t.name == target.topic) {
        None => Err(Error::usage(format!(
            "{tname}: the topic does not exist (UNKNOWN_TOPIC_OR_PARTITION)"
        ))),
        Some(t) if t.error.and_then(|c| c.response_error()) == unknown => Err(Error::usage(
            format!("{tname}: the topic does not exist (UNKNOWN_TOPIC_OR_PARTITION)"),
        )),
        Some(t) if t.error.is_some() => {
            let code = t.error.map(|c| c.name()).unwrap_or_default();
            Err(Error::usage(format!(
                "{tname}: the topic cannot be used: {code}"
            )))
        }
        Some(t) => {
            for s in sources {
                if !t.partitions.iter().any(|p| p.partition == s.partition) {
                    return Err(Error::usage(format!(
                        "{tname}: the topic has {} partitions, {} needs partition {}",
                        t.partitions.len(),
                        s.id,
                        s.partition
                    )));
                }
            }
            Ok(())
        }
    }
}

/// The sources of one target partition, shipped one after the other.
struct Lane<'a> {
    partition: i32,
    sources: Vec<&'a Source>,
    /// The source being read: an index into `sources`.
    current: usize,
    reader: Option<Reader<'a>>,
    /// Where reading continues in the current source.
    pos: i64,
    /// The current source's identity, and the key its position was found under (when it
    /// differs: metadata of an older format, a log whose first entry retention removed).
    identity: String,
    found_key: Option<String>,
    /// Read to the end of its last source (until the next `follow` poll).
    idle: bool,
    /// When it became idle (`follow` polls again `poll` later).
    idle_since: Option<Instant>,
    /// Positions moved since the last commit.
    moved: bool,
    /// Committed source records not read yet, as of the last fetch.
    lag: i64,
}

impl<'a> Lane<'a> {
    fn new(partition: i32, sources: Vec<&'a Source>) -> Self {
        Lane {
            partition,
            sources,
            current: 0,
            reader: None,
            pos: 0,
            identity: String::new(),
            found_key: None,
            idle: false,
            idle_since: None,
            moved: false,
            lag: 0,
        }
    }

    /// Reads one fetch of the current source (moving on to the next source at the end of
    /// one), plans it and sends its batches. The source bytes read, or `None` once the last
    /// source has nothing more (the lane is then idle).
    fn step(
        &mut self,
        cx: &mut Context<'_>,
        budget: usize,
        on_event: &mut impl FnMut(Event<'_>) -> ControlFlow<()>,
    ) -> Result<Option<u64>, StepError> {
        loop {
            let Some(&source) = self.sources.get(self.current) else {
                self.set_idle();
                return Ok(None);
            };
            let reader = match &mut self.reader {
                Some(r) => r,
                None => {
                    let mut reader = Reader::open(source, cx.rt, cx.source_config)?;
                    let identity = reader.identity(cx.rt, &source.id)?;
                    let found = cx
                        .positions
                        .get(&self.partition)
                        .and_then(|p| p.resolve(&identity.id, &source.id, identity.log_start));
                    self.pos = found.map_or(0, |f| f.1);
                    self.found_key = found.map(|f| f.0.to_owned());
                    self.identity = identity.id;
                    cx.totals
                        .entry(self.partition)
                        .or_default()
                        .sources
                        .push(source.id.clone());
                    self.reader.insert(reader)
                }
            };
            let Some(f) = reader.next(cx.rt, self.pos, budget, &source.id)? else {
                self.lag = 0;
                let last = self.current + 1 == self.sources.len();
                if last && cx.follow {
                    self.set_idle();
                    return Ok(None);
                }
                if let Some((lso, hw)) = reader.stalled() {
                    // A note only: the job goes on with the next source.
                    let _ = on_event(Event::Stalled {
                        source: &source.id,
                        last_stable_offset: lso,
                        high_watermark: hw,
                    });
                }
                self.current += 1;
                self.reader = None;
                continue;
            };
            let p = plan(&f.bytes, self.pos, &f.aborted, &cx.options)
                .map_err(|e| Error::log(&source.id, &e))?;
            cx.totals.entry(self.partition).or_default().add_plan(&p);
            let next = p.next_offset.max(f.next_offset).max(self.pos);
            self.lag = f.end.map_or(0, |end| (end - next).max(0));
            if next != self.pos {
                self.pos = next;
                self.moved = true;
                cx.positions.entry(self.partition).or_default().set(
                    self.found_key.as_deref(),
                    &self.identity,
                    &source.id,
                    next,
                );
                self.found_key = Some(self.identity.clone());
            }
            let read = p.source_bytes.max(1);
            if p.batches.is_empty() {
                return Ok(Some(read));
            }
            let producer = &mut cx.producer;
            if !producer.in_transaction() {
                producer.begin().map_err(StepError::Client)?;
            }
            let (topic, partition) = (cx.topic, self.partition);
            // Batches shipped as is are cut out of the fetch's buffer, not copied: the producer
            // patches their headers in place.
            let batches = p.into_bytes(f.bytes);
            cx.rt
                .block_on(async {
                    for b in batches {
                        producer.send(topic, partition, b).await?;
                    }
                    Ok(())
                })
                .map_err(StepError::Client)?;
            return Ok(Some(read));
        }
    }

    fn set_idle(&mut self) {
        self.idle = true;
        self.idle_since = Some(Instant::now());
    }

    /// After a `follow` poll interval: look for appended data again.
    fn wake(&mut self) {
        if let Some(r) = self.reader.as_mut() {
            r.refresh();
        }
        self.idle = false;
        self.idle_since = None;
    }
}
