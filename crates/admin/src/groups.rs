//! Consumer groups: committed offsets and lag, from a stopped broker's `__consumer_offsets`
//! partitions (the group coordinator's records, read at read_committed and decoded by
//! krecords-topics) or from a live cluster (OffsetFetch and ListOffsets).
//!
//! Offline, "lag" is what the group was behind when the broker stopped: each committed offset
//! against the end offset of the partition's directory on the same disk.

use crate::model::{Cluster, Offsets};
use crate::Error;
use krecords_codec::read::Step;
use krecords_source::{IsolationLevel, ReadOptions, Sources};
use krecords_topics::{parse, Kind, Node, Part};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A consumer group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    /// The group id.
    pub group: String,
    /// `classic` (the JoinGroup protocol, GroupMetadata records) or `consumer` (KIP-848:
    /// ConsumerGroupMetadata records); `None` when only offsets are known.
    pub kind: Option<String>,
    /// The state as the coordinator reports it (`Stable`, `Empty`, `PreparingRebalance`,
    /// `Dead`, ...). Offline, the state Kafka's coordinator gives the group when it loads
    /// `__consumer_offsets` ([`GroupLog::into_groups`]): `Empty` or `Stable` for a classic
    /// group, `Empty`, `Assigning`, `Reconciling` or `Stable` for a consumer-protocol one.
    pub state: Option<String>,
    /// Classic groups: the protocol type (`consumer`, `connect`, ...).
    pub protocol_type: Option<String>,
    /// Classic groups: the generation; consumer groups: the group epoch.
    pub generation: Option<i32>,
    /// The members (classic: of the last GroupMetadata; consumer: members not removed).
    pub members: Vec<Member>,
    /// One row per partition that has a committed offset or is assigned to a member, sorted
    /// by topic and partition (kafka-consumer-groups --describe's rows).
    pub offsets: Vec<GroupOffset>,
    /// The sum of the known lags that are above 0 (the records still to read; a partition
    /// committed past its end has none to read); `None` when no row's lag is known (a group
    /// with no rows has 0).
    pub total_lag: Option<i64>,
}

impl Group {
    /// Whether the coordinator does not know the group: state `Dead` (Kafka's answer for a
    /// group id it has never seen, or has forgotten), with no member and no committed offset.
    /// A `Dead` group with commits (one that only ever committed offsets) is known.
    pub fn is_unknown(&self) -> bool {
        self.state.as_deref() == Some("Dead") && self.members.is_empty() && self.offsets.is_empty()
    }
}

/// The groups `names` asks for, as `krec groups SOURCE GROUP...` shows them: with no name,
/// every group and nothing missing; otherwise the groups named that exist (not
/// [`Group::is_unknown`]), in `groups`' order, and the names that are not among them, in
/// `names`' order (a name given twice is missing twice).
pub fn select<S: AsRef<str>>(mut groups: Vec<Group>, names: &[S]) -> (Vec<Group>, Vec<String>) {
    if names.is_empty() {
        return (groups, Vec::new());
    }
    groups.retain(|g| names.iter().any(|n| n.as_ref() == g.group) && !g.is_unknown());
    let missing = names
        .iter()
        .map(AsRef::as_ref)
        .filter(|n| !groups.iter().any(|g| g.group == *n))
        .map(str::to_owned)
        .collect();
    (groups, missing)
}

/// The groups as `krec groups kafka://HOST/TOPIC[/PARTITION]` shows them: each group's rows of
/// the topics matching the glob `topic` only (of partition `partition` only, when given),
/// its total lag over those rows; with `keep_all` (groups named on the command line) every
/// group stays, else only those with such a row (that committed an offset of the topic, or
/// have a member assigned one of its partitions), as `kafka-consumer-groups --describe`
/// rows filtered to one topic. Members stay as they are.
///
/// # Errors
///
/// [`Error::Usage`]: the glob does not parse.
pub fn of_topic(
    groups: Vec<Group>,
    topic: &str,
    partition: Option<i32>,
    keep_all: bool,
) -> Result<Vec<Group>, Error> {
    let filter = krecords_log::data_dir::PartitionFilter::new(Some(topic), partition)
        .map_err(Error::select)?;
    let mut out = Vec::new();
    for mut g in groups {
        g.offsets.retain(|o| {
            filter.matches_topic(&o.topic) && partition.is_none_or(|p| p == o.partition)
        });
        if !keep_all && g.offsets.is_empty() {
            continue;
        }
        g.total_lag = total_lag(&g.offsets);
        out.push(g);
    }
    Ok(out)
}

/// The groups `krec groups SOURCE [GROUP...]` prints of `groups` (all of `source`'s): the
/// groups `names` ([`select`]), then for a `kafka://HOST/TOPIC[/PARTITION]` source (`url`
/// with a topic) their rows of that topic or partition ([`of_topic`]: the groups named stay,
/// others only with such a row).
///
/// # Errors
///
/// [`Error::Usage`]: groups named that are not in `source` (no committed offsets, no group
/// metadata), checked before anything is printed (no header or rows of the others ahead of
/// the error) and before the topic; a topic glob that does not parse.
pub fn answer<S: AsRef<str>>(
    groups: Vec<Group>,
    names: &[S],
    url: Option<&krecords_source::ClusterUrl>,
    source: &str,
) -> Result<Vec<Group>, Error> {
    let (groups, missing) = select(groups, names);
    if !missing.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no such group in {source} (no committed offsets, no group metadata)",
            missing.join(", ")
        )));
    }
    match url.and_then(|u| Some((u.topic.as_deref()?, u.partition))) {
        Some((t, p)) => of_topic(groups, t, p, !names.is_empty()),
        None => Ok(groups),
    }
}

/// A member of a group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    /// The member id (kafka-consumer-groups' CONSUMER-ID).
    pub member_id: String,
    /// The client id, when known.
    pub client_id: Option<String>,
    /// The client's host as the broker saw it (`/127.0.0.1`), when known.
    pub host: Option<String>,
    /// The partitions assigned to it, by topic (empty when unknown).
    pub assignment: BTreeMap<String, Vec<i32>>,
}

impl Member {
    fn id_only(member_id: String) -> Member {
        Member {
            member_id,
            client_id: None,
            host: None,
            assignment: BTreeMap::new(),
        }
    }
}

/// A group's row for one partition: its committed offset and the member it is assigned to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupOffset {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The committed offset (`None`: assigned to a member, nothing committed yet).
    pub committed: Option<i64>,
    /// The metadata string committed with it (`""` when committed empty; `None` when absent).
    pub metadata: Option<String>,
    /// When it was committed (ms since the epoch), when known.
    pub commit_time: Option<i64>,
    /// The partition's end offset (high watermark), when known.
    pub end: Option<i64>,
    /// `end - committed`, when both are known, as `kafka-consumer-groups --describe` computes
    /// it: below 0 when the committed offset is past the end (records the group had read are
    /// gone: the log was truncated, after an unclean leader election say, or the topic was
    /// deleted and created again).
    pub lag: Option<i64>,
    /// The member the partition is assigned to (CONSUMER-ID), when one is.
    pub member_id: Option<String>,
    /// That member's host.
    pub host: Option<String>,
    /// That member's client id.
    pub client_id: Option<String>,
}

impl GroupOffset {
    /// A row for a committed offset (or an assigned partition without one), lag against `end`.
    fn new(
        (topic, partition): (String, i32),
        commit: Option<Commit>,
        end: Option<i64>,
    ) -> GroupOffset {
        let (committed, metadata, commit_time) = match commit {
            Some((o, m, t)) => (Some(o), m, t),
            None => (None, None, None),
        };
        GroupOffset {
            lag: end.zip(committed).map(|(e, c)| e.saturating_sub(c)),
            topic,
            partition,
            committed,
            metadata,
            commit_time,
            end,
            member_id: None,
            host: None,
            client_id: None,
        }
    }
}

/// The rows of a group: every committed offset and every partition assigned to a member
/// (with that member's id, host and client id), sorted by topic and partition.
fn rows(
    commits: BTreeMap<(String, i32), Commit>,
    members: &[Member],
    mut end: impl FnMut(&str, i32) -> Option<i64>,
) -> Vec<GroupOffset> {
    let mut owner: BTreeMap<(String, i32), &Member> = BTreeMap::new();
    for m in members {
        for (t, ps) in &m.assignment {
            for &p in ps {
                owner.insert((t.clone(), p), m);
            }
        }
    }
    let mut keys: Vec<(String, i32)> = commits.keys().cloned().collect();
    keys.extend(owner.keys().filter(|k| !commits.contains_key(*k)).cloned());
    keys.sort();
    let mut commits = commits;
    keys.into_iter()
        .map(|k| {
            let e = end(&k.0, k.1);
            let m = owner.get(&k);
            let mut row = GroupOffset::new(k.clone(), commits.remove(&k), e);
            if let Some(m) = m {
                row.member_id = Some(m.member_id.clone());
                row.host.clone_from(&m.host);
                row.client_id.clone_from(&m.client_id);
            }
            row
        })
        .collect()
}

/// The sum of the known lags above 0: `None` when there are rows and none has a known lag.
fn total_lag(rows: &[GroupOffset]) -> Option<i64> {
    if !rows.is_empty() && rows.iter().all(|o| o.lag.is_none()) {
        return None;
    }
    Some(
        rows.iter()
            .filter_map(|o| o.lag)
            .map(|l| l.max(0))
            .fold(0i64, i64::saturating_add),
    )
}

/// A commit: offset, metadata, commit time.
type Commit = (i64, Option<String>, Option<i64>);

#[derive(Debug, Default)]
struct GroupState {
    kind: Option<String>,
    protocol_type: Option<String>,
    generation: Option<i32>,
    members: Vec<Member>,
    offsets: BTreeMap<(String, i32), Commit>,
    /// Consumer-protocol groups: the target assignment's epoch
    /// (ConsumerGroupTargetAssignmentMetadata; 0 until one, as Kafka starts it; -1 deleted).
    assignment_epoch: i32,
    /// Consumer-protocol groups: each member's epoch and [member state][MEMBER_STABLE]
    /// (ConsumerGroupCurrentMemberAssignment; a member without one has epoch 0 and is
    /// stable, Kafka's defaults).
    member_epochs: BTreeMap<String, (i64, i64)>,
    /// Consumer-protocol groups: each member's assigned partitions by topic id
    /// (ConsumerGroupCurrentMemberAssignment's `assignedPartitions`), named by
    /// [`GroupLog::name_topics`].
    assigned: BTreeMap<String, BTreeMap<String, Vec<i32>>>,
}

/// The member state `STABLE` of a ConsumerGroupCurrentMemberAssignment record (Kafka's
/// `MemberState`: 0 stable, 1 unrevoked partitions, 2 unreleased partitions).
const MEMBER_STABLE: i64 = 0;

/// The member epoch of a member whose assignment was deleted (Kafka's
/// `LEAVE_GROUP_MEMBER_EPOCH`).
const LEAVE_GROUP_MEMBER_EPOCH: i64 = -1;

impl GroupState {
    /// The state Kafka's group coordinator gives the group when it loads it from
    /// `__consumer_offsets`. A classic group (GroupMetadataManager's `loadGroup`, 4.x's
    /// `ClassicGroup`): `Empty` without members, else `Stable`; a group that only committed
    /// offsets is an empty classic group. A consumer-protocol group (4.x's `ConsumerGroup`
    /// `maybeUpdateGroupState`): `Empty` without members, `Assigning` while the group epoch
    /// is past the target assignment's, `Reconciling` while a member is not stable at the
    /// target assignment's epoch, else `Stable`.
    fn state(&self) -> &'static str {
        if self.members.is_empty() {
            return "Empty";
        }
        // Members of another kind than classic are a consumer-protocol group's (member
        // records before the group's own, when a log ends between them).
        if self.kind.as_deref() == Some("classic") {
            return "Stable";
        }
        let target = self.assignment_epoch;
        if self.generation.unwrap_or(0) > target {
            return "Assigning";
        }
        let reconciled = |m: &Member| {
            let (epoch, state) = self
                .member_epochs
                .get(&m.member_id)
                .copied()
                .unwrap_or((0, MEMBER_STABLE));
            epoch == i64::from(target) && state == MEMBER_STABLE
        };
        if self.members.iter().all(reconciled) {
            "Stable"
        } else {
            "Reconciling"
        }
    }
}

/// The coordinator's records replayed: group id → its state.
#[derive(Debug, Default)]
pub struct GroupLog {
    groups: BTreeMap<String, GroupState>,
    /// Records that could not be decoded.
    pub skipped: u64,
}

fn field<'a>(n: Option<&'a Node>, name: &str) -> Option<&'a Node> {
    n?.get(name)
}

fn string(n: Option<&Node>, name: &str) -> Option<String> {
    field(n, name)?.as_str().map(str::to_owned)
}

fn int(n: Option<&Node>, name: &str) -> Option<i64> {
    field(n, name)?.as_int()
}

impl GroupLog {
    /// Applies one `__consumer_offsets` record (its raw key and value).
    pub fn apply(&mut self, key: Option<&[u8]>, value: Option<&[u8]>, offset: i64) {
        let parsed = parse(Kind::Offsets, key, value, offset);
        let Some(Part::Json(k)) = &parsed.key else {
            self.skipped = self.skipped.saturating_add(1);
            return;
        };
        let ty = k.get("type").and_then(Node::as_str).unwrap_or_default();
        let kd = k.get("data");
        let tombstone = matches!(parsed.payload, Some(Part::Tombstone));
        let vd = parsed.payload.as_ref().and_then(Part::data);
        if !tombstone && vd.is_none() {
            self.skipped = self.skipped.saturating_add(1);
            return;
        }
        match ty {
            // OffsetCommitKey (0: the legacy one).
            "0" | "1" => {
                let (Some(g), Some(t), Some(p)) = (
                    string(kd, "group"),
                    string(kd, "topic"),
                    int(kd, "partition").and_then(|p| i32::try_from(p).ok()),
                ) else {
                    return;
                };
                let state = self.groups.entry(g).or_default();
                if tombstone {
                    state.offsets.remove(&(t, p));
                } else if let Some(o) = int(vd, "offset") {
                    let meta = string(vd, "metadata");
                    state
                        .offsets
                        .insert((t, p), (o, meta, int(vd, "commitTimestamp")));
                }
            }
            // GroupMetadataKey: a classic group.
            "2" => {
                let Some(g) = string(kd, "group") else { return };
                if tombstone {
                    if let Some(s) = self.groups.get_mut(&g) {
                        s.kind = None;
                        s.members.clear();
                    }
                    return;
                }
                let s = self.groups.entry(g).or_default();
                s.kind = Some("classic".into());
                s.protocol_type = string(vd, "protocolType");
                s.generation = int(vd, "generation").and_then(|v| i32::try_from(v).ok());
                s.members = match field(vd, "members") {
                    Some(Node::Arr(m)) => m.iter().filter_map(classic_member).collect(),
                    _ => Vec::new(),
                };
            }
            // ConsumerGroupMetadataKey: a consumer-protocol group's epoch.
            "3" => {
                let Some(g) = string(kd, "groupId") else {
                    return;
                };
                if tombstone {
                    if let Some(s) = self.groups.get_mut(&g) {
                        s.kind = None;
                    }
                    return;
                }
                let s = self.groups.entry(g).or_default();
                s.kind = Some("consumer".into());
                s.generation = int(vd, "epoch").and_then(|v| i32::try_from(v).ok());
            }
            // ConsumerGroupTargetAssignmentMetadataKey: the target assignment's epoch.
            "6" => {
                let Some(g) = string(kd, "groupId") else {
                    return;
                };
                let epoch = match tombstone {
                    true => Some(-1),
                    false => int(vd, "assignmentEpoch").and_then(|v| i32::try_from(v).ok()),
                };
                if let Some(epoch) = epoch {
                    self.groups.entry(g).or_default().assignment_epoch = epoch;
                }
            }
            // ConsumerGroupCurrentMemberAssignmentKey: a member's epoch and state.
            "8" => {
                let (Some(g), Some(m)) = (string(kd, "groupId"), string(kd, "memberId")) else {
                    return;
                };
                let s = self.groups.entry(g).or_default();
                let state = int(vd, "state").unwrap_or(MEMBER_STABLE);
                let kept = s.member_epochs.get(&m).map_or(MEMBER_STABLE, |e| e.1);
                let epoch = match tombstone {
                    true => (LEAVE_GROUP_MEMBER_EPOCH, kept),
                    false => (int(vd, "memberEpoch").unwrap_or(0), state),
                };
                if tombstone {
                    s.assigned.remove(&m);
                } else {
                    s.assigned.insert(m.clone(), topic_partitions(vd));
                }
                s.member_epochs.insert(m, epoch);
            }
            // ConsumerGroupMemberMetadataKey: a member joins or leaves.
            "5" => {
                let (Some(g), Some(m)) = (string(kd, "groupId"), string(kd, "memberId")) else {
                    return;
                };
                let s = self.groups.entry(g).or_default();
                s.members.retain(|x| x.member_id != m);
                if tombstone {
                    s.member_epochs.remove(&m);
                    s.assigned.remove(&m);
                } else {
                    let mut member = Member::id_only(m);
                    member.client_id = string(vd, "clientId");
                    member.host = string(vd, "clientHost");
                    s.members.push(member);
                }
            }
            _ => {}
        }
    }

    /// Reads a `__consumer_offsets` partition directory at read_committed (offsets committed
    /// in an aborted transaction left out) and applies its records, up to the first damaged
    /// batch (a bad CRC, records that do not parse, a malformed or truncated entry): nothing
    /// at or after it is applied, as Kafka's broker loads none of it (its log recovery
    /// truncates the log at the first corrupt batch, and reading one fails the load).
    ///
    /// # Errors
    ///
    /// The directory cannot be read as a log; the damage, with its file, byte position and
    /// offset (what was applied before it stays applied).
    pub fn replay_dir(&mut self, dir: &Path) -> Result<(), Error> {
        let sources = Sources::open(&[dir.to_path_buf()], &mut || {
            Err(krecords_source::Error::Usage(
                "not a kafka:// source".into(),
            ))
        })?;
        let options = ReadOptions {
            isolation: IsolationLevel::ReadCommitted,
            ..ReadOptions::default()
        };
        let mut reader = sources.read(0, &options)?;
        let mut scratch = Vec::new();
        let io = |e| Error::io(format!("cannot read {}", dir.display()), e);
        let damage = |what: String| Error::Source(krecords_source::Error::Data(what));
        while let Some(file) = reader.next_file()? {
            loop {
                let b = match reader.next_entry().map_err(io)? {
                    Step::Entry(b) => b,
                    Step::End => break,
                    Step::Error(e) => {
                        let at = reader.position();
                        return Err(damage(format!("{}: byte {at}: {e}", file.name)));
                    }
                    Step::Partial(p) => {
                        return Err(damage(format!(
                            "{}: byte {}: {} bytes of a truncated entry",
                            file.name, p.position, p.bytes
                        )));
                    }
                };
                // The CRC and the records of the whole batch are checked before any of it
                // is applied.
                let records = b
                    .checked_records(&mut scratch, krecords_codec::DEFAULT_DECOMPRESS_LIMIT)
                    .and_then(|rs| rs.collect::<Result<Vec<_>, _>>());
                let records = match records {
                    Ok(records) => records,
                    Err(e) => {
                        let offset = b.first_offset().unwrap_or_else(|| b.last_offset());
                        // A limit (a batch that decompresses past it) is no damage, but
                        // stops the replay all the same.
                        let what = if e.is_corruption() {
                            "is damaged"
                        } else {
                            "cannot be read"
                        };
                        return Err(damage(format!(
                            "{}: the batch at offset {offset} {what}: {e}",
                            file.name
                        )));
                    }
                };
                if b.is_control() {
                    continue;
                }
                for r in records {
                    self.apply(r.key(), r.value(), r.offset());
                }
            }
        }
        Ok(())
    }

    /// Names the topics of the consumer-protocol members' assignments, which their records
    /// give by topic id: `names` maps a topic id as Kafka prints it to its name (the metadata
    /// log's TopicRecords, a partition directory's `partition.metadata`). Until this is called
    /// those members have no [`Member::assignment`]. Returns the topic ids assigned that
    /// `names` does not know (sorted, each once): their partitions stay out of the
    /// assignments.
    pub fn name_topics(&mut self, names: &BTreeMap<String, String>) -> Vec<String> {
        let mut unknown = std::collections::BTreeSet::new();
        for s in self.groups.values_mut() {
            for m in &mut s.members {
                let Some(by_id) = s.assigned.get(&m.member_id) else {
                    continue;
                };
                m.assignment.clear();
                for (id, ps) in by_id {
                    match names.get(id) {
                        Some(name) => {
                            let list = m.assignment.entry(name.clone()).or_default();
                            list.extend(ps);
                            list.sort_unstable();
                            list.dedup();
                        }
                        None => {
                            unknown.insert(id.clone());
                        }
                    }
                }
            }
        }
        unknown.into_iter().collect()
    }

    /// The groups, with lag against `ends` ((topic, partition) → end offset), each in the
    /// state Kafka's group coordinator gives it when it loads these records (a restarted
    /// broker's answer before any member heartbeats: [`Group::state`]). A group whose
    /// metadata was deleted (a tombstone, `Dead` to Kafka) and that has no committed offset
    /// is not among them.
    pub fn into_groups(self, ends: &BTreeMap<(String, i32), i64>) -> Vec<Group> {
        self.groups
            .into_iter()
            .filter(|(_, s)| s.kind.is_some() || !s.offsets.is_empty())
            .map(|(group, s)| {
                let state = Some(s.state().to_owned());
                let offsets = rows(s.offsets, &s.members, |t, p| {
                    ends.get(&(t.to_owned(), p)).copied()
                });
                Group {
                    group,
                    kind: s.kind,
                    state,
                    protocol_type: s.protocol_type,
                    generation: s.generation,
                    members: s.members,
                    total_lag: total_lag(&offsets),
                    offsets,
                }
            })
            .collect()
    }
}

/// A classic group's member from its GroupMetadata value: id, client id, host and, for the
/// consumer protocol, the partitions assigned.
fn classic_member(m: &Node) -> Option<Member> {
    let mut member = Member::id_only(m.get("memberId")?.as_str()?.to_owned());
    member.client_id = string(Some(m), "clientId");
    member.host = string(Some(m), "clientHost");
    if let Some(Node::Arr(tps)) = field(field(Some(m), "assignment"), "assignedPartitions") {
        for tp in tps {
            let (Some(t), Some(Node::Arr(ps))) = (string(Some(tp), "topic"), tp.get("partitions"))
            else {
                continue;
            };
            let list = member.assignment.entry(t).or_default();
            list.extend(
                ps.iter()
                    .filter_map(Node::as_int)
                    .filter_map(|p| i32::try_from(p).ok()),
            );
            list.sort_unstable();
        }
    }
    Some(member)
}

/// The partitions of an `assignedPartitions` array (`[{"topicId":..,"partitions":[..]}]`)
/// by topic id.
fn topic_partitions(vd: Option<&Node>) -> BTreeMap<String, Vec<i32>> {
    let mut out: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    if let Some(Node::Arr(tps)) = field(vd, "assignedPartitions") {
        for tp in tps {
            let (Some(id), Some(Node::Arr(ps))) =
                (string(Some(tp), "topicId"), tp.get("partitions"))
            else {
                continue;
            };
            out.entry(id).or_default().extend(
                ps.iter()
                    .filter_map(Node::as_int)
                    .filter_map(|p| i32::try_from(p).ok()),
            );
        }
    }
    out
}

/// Topic id (as Kafka prints it) → name, of every topic of `cluster` whose id is known.
pub fn topic_names(cluster: &Cluster) -> BTreeMap<String, String> {
    cluster
        .topics
        .iter()
        .filter_map(|t| Some((t.id.clone()?, t.name.clone())))
        .collect()
}

/// The end offsets of every partition of `cluster` that has offsets.
pub fn ends_of(cluster: &Cluster) -> BTreeMap<(String, i32), i64> {
    let mut ends = BTreeMap::new();
    for t in &cluster.topics {
        for p in &t.partitions {
            if let Some(Offsets { latest, .. }) = p.offsets {
                ends.insert((t.name.clone(), p.partition), latest);
            }
        }
    }
    ends
}

/// What [`describe_root`] found.
#[derive(Debug, Clone, Default)]
pub struct RootGroups {
    /// The groups, with lag.
    pub groups: Vec<Group>,
    /// What could not be read or decoded, one line each.
    pub warnings: Vec<String>,
    /// The `__consumer_offsets-N` directories that could not be read whole (a damaged batch
    /// in the middle of the log, an unreadable file): the groups shown have their commits
    /// from before the damage only ([`GroupLog::replay_dir`]).
    pub unread: Vec<std::path::PathBuf>,
}

/// A stopped broker's consumer groups: every `__consumer_offsets-N` directory under `root`
/// replayed, lag against the end offsets of the partition directories on the same disk.
/// `path` may be a root or one of its `__consumer_offsets-N` directories (then only that
/// partition's groups, with lag against the whole root). A root without any
/// `__consumer_offsets-N` directory has no groups, and a warning says why.
///
/// # Errors
///
/// `path` is neither a broker's root nor a `__consumer_offsets-N` directory, a directory
/// cannot be read.
pub fn describe_root(path: &Path) -> Result<RootGroups, Error> {
    let crate::offline::RootPath { root, partition } = crate::offline::root_of(path)?;
    let only = match partition {
        Some((topic, p)) if topic == "__consumer_offsets" => Some(p),
        Some(_) => {
            return Err(Error::Usage(format!(
                "{}: consumer groups are in __consumer_offsets: give the broker's log.dirs \
                 root ({}) or one of its __consumer_offsets-N directories",
                path.display(),
                root.display()
            )))
        }
        None => None,
    };
    let root = root.as_path();
    let mut cluster = crate::offline::describe_root(root)?;
    crate::offline::fill_offsets(&mut cluster, root, None);
    let mut log = GroupLog::default();
    let mut warnings = std::mem::take(&mut cluster.warnings);
    let mut unread = Vec::new();
    let mut replayed = 0;
    for t in cluster
        .topics
        .iter()
        .filter(|t| t.name == "__consumer_offsets")
    {
        let wanted = |p: &&crate::model::Partition| {
            p.on_disk == Some(true) && only.is_none_or(|o| o == p.partition)
        };
        for p in t.partitions.iter().filter(wanted) {
            replayed += 1;
            let dir = root.join(format!("__consumer_offsets-{}", p.partition));
            if let Err(e) = log.replay_dir(&dir) {
                warnings.push(format!(
                    "{}: {e}; the groups shown have this partition's commits from before it \
                     only: none at or after it are applied (Kafka's log recovery truncates \
                     the log at its first corrupt batch)",
                    dir.display()
                ));
                unread.push(dir);
            }
        }
    }
    if log.skipped > 0 {
        warnings.push(format!(
            "{} __consumer_offsets records could not be decoded",
            log.skipped
        ));
    }
    let unknown = log.name_topics(&topic_names(&cluster));
    if !unknown.is_empty() {
        warnings.push(format!(
            "members are assigned partitions of topics whose names are not on this disk \
             (neither in its metadata log nor in a partition.metadata): topic ids {}; those \
             partitions are left out of the assignments",
            unknown.join(", ")
        ));
    }
    if replayed == 0 {
        warnings.push(format!(
            "{}: no __consumer_offsets partitions here, so no consumer group can be known (a \
             broker with several log.dirs keeps them in one of its roots)",
            root.display()
        ));
    }
    Ok(RootGroups {
        groups: log.into_groups(&ends_of(&cluster)),
        warnings,
        unread,
    })
}

/// A live group as `kafka-consumer-groups --describe` shows it: its state, kind and members
/// from the coordinator (ConsumerGroupDescribe, or DescribeGroups for a classic group), its
/// committed offsets (OffsetFetch for every topic of the cluster), and lag against each
/// partition's latest offset (ListOffsets); one row per committed or assigned partition,
/// with the member it is assigned to.
///
/// # Errors
///
/// The client's errors (GROUP_AUTHORIZATION_FAILED, an unreachable coordinator, ...).
pub async fn describe_live(
    client: &krecords_client::Client,
    group: &str,
) -> Result<Group, krecords_client::Error> {
    let described = client.describe_group(group).await?;
    let members: Vec<Member> = described
        .members
        .into_iter()
        .map(|m| Member {
            member_id: m.member_id,
            client_id: Some(m.client_id),
            host: Some(m.host),
            assignment: m.assignment,
        })
        .collect();
    let metadata = client.metadata(None).await?;
    let mut commits = BTreeMap::new();
    for t in metadata.topics.iter().filter(|t| t.error.is_none()) {
        let partitions: Vec<i32> = t.partitions.iter().map(|p| p.partition).collect();
        for c in client
            .offset_fetch(group, &t.name, &partitions, false)
            .await?
        {
            if let Some(committed) = c.offset.filter(|&o| o >= 0) {
                // A commit's metadata is a string on the broker (OffsetCommitValue's, "" when
                // committed empty or null), as offline; the client answers "" as none.
                let metadata = Some(c.metadata.unwrap_or_default());
                commits.insert((t.name.clone(), c.partition), (committed, metadata, None));
            }
        }
    }
    let mut ends = BTreeMap::new();
    let mut keys: Vec<(String, i32)> = commits.keys().cloned().collect();
    for m in &members {
        for (t, ps) in &m.assignment {
            keys.extend(ps.iter().map(|&p| (t.clone(), p)));
        }
    }
    for (t, p) in keys {
        if ends.contains_key(&(t.clone(), p)) {
            continue;
        }
        let end = client
            .list_offsets(
                &t,
                p,
                krecords_client::OffsetSpec::Latest,
                krecords_client::IsolationLevel::ReadUncommitted,
            )
            .await?
            .offset;
        ends.insert((t, p), end);
    }
    let offsets = rows(commits, &members, |t, p| {
        ends.get(&(t.to_owned(), p)).copied().flatten()
    });
    Ok(Group {
        group: group.to_owned(),
        kind: Some(described.group_type),
        state: Some(described.state),
        protocol_type: described.protocol_type,
        generation: described.epoch,
        members,
        total_lag: total_lag(&offsets),
        offsets,
    })
}

/// Every group of a live cluster (ListGroups on every broker), sorted by id, each described
/// as [`describe_live`] does; share groups (KIP-932), which commit no offsets, are listed with
/// their state only.
///
/// # Errors
///
/// The client's errors.
pub async fn describe_all_live(
    client: &krecords_client::Client,
) -> Result<Vec<Group>, krecords_client::Error> {
    let mut out = Vec::new();
    for g in client.list_groups().await? {
        if g.group_type.as_deref() == Some("share") {
            out.push(Group {
                group: g.group,
                kind: Some("share".into()),
                state: g.state,
                protocol_type: Some(g.protocol_type).filter(|t| !t.is_empty()),
                generation: None,
                members: Vec::new(),
                offsets: Vec::new(),
                total_lag: Some(0),
            });
        } else {
            out.push(describe_live(client, &g.group).await?);
        }
    }
    Ok(out)
}

/// The groups `names` of a live cluster, each by [`describe_live`], in `names`' order; every
/// group of the cluster ([`describe_all_live`]) when `names` is empty. A group the
/// coordinator does not know comes back [`Group::is_unknown`] (see [`select`]).
///
/// # Errors
///
/// The client's errors.
pub async fn describe_live_named<S: AsRef<str>>(
    client: &krecords_client::Client,
    names: &[S],
) -> Result<Vec<Group>, krecords_client::Error> {
    if names.is_empty() {
        return describe_all_live(client).await;
    }
    let mut out = Vec::new();
    for g in names {
        out.push(describe_live(client, g.as_ref()).await?);
    }
    Ok(out)
}
