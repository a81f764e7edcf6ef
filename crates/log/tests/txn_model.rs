//! Model-based test of idempotent and transactional producers: random produce, retry, zombie,
//! sequence gap, epoch bump, commit, abort (with current, stale and new coordinator epochs),
//! roll and restart (clean, or a crash) against a small reference model of Kafka's rules.
//!
//! Every response is checked (the offsets, `duplicate`, or the Kafka error name), and after every
//! step the producer state of every producer, the last stable offset, the aborted transactions
//! of the transaction indexes, and what read_uncommitted and read_committed consumers see (in
//! one fetch, and page by page) are compared with the model.
//!
//! The model keeps what Kafka keeps: up to five batches per producer, reduced to the last one
//! by a snapshot. A clean restart loads the snapshot written at close; a crash recovers the
//! active segment and replays it on top of the snapshot taken when that segment rolled (or the
//! whole log when it never rolled), so the model remembers the reduced state at each roll.

use crate::util::*;
use krecords_log::storage::CrashMode;
use krecords_log::transaction::AbortedTxn;
use krecords_log::{AppendInfo, AppendOrigin, Error, IsolationLevel, Log};
use proptest::prelude::*;
use std::collections::{BTreeMap, VecDeque};

const PRODUCERS: usize = 3;

fn pid(p: usize) -> i64 {
    100 + p as i64
}

#[derive(Debug, Clone)]
enum Op {
    /// The client's next batch.
    Produce {
        p: usize,
        records: usize,
        txn: bool,
    },
    /// A batch without a producer id.
    Plain {
        records: usize,
    },
    /// One of the client's earlier batches again, exactly.
    Retry {
        p: usize,
        back: usize,
    },
    /// A batch at the epoch before the client's.
    Zombie {
        p: usize,
    },
    /// A batch that skips a sequence number.
    Gap {
        p: usize,
    },
    /// The client gets a new epoch (InitProducerId) and starts again at sequence 0.
    Bump {
        p: usize,
    },
    /// The coordinator ends the client's transaction. `coord`: 0..=3 its current epoch, 4 a
    /// stale one, 5 a new one. `epoch`: 0 the epoch before the client's (a zombie marker), 1
    /// the next one (the marker bumps the epoch), others the client's.
    EndTxn {
        p: usize,
        commit: bool,
        coord: u8,
        epoch: u8,
    },
    Roll,
    Restart {
        crash: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        30 => (0..PRODUCERS, 1usize..4, any::<bool>())
            .prop_map(|(p, records, txn)| Op::Produce { p, records, txn }),
        4 => (1usize..3).prop_map(|records| Op::Plain { records }),
        10 => (0..PRODUCERS, 0usize..8).prop_map(|(p, back)| Op::Retry { p, back }),
        2 => (0..PRODUCERS).prop_map(|p| Op::Zombie { p }),
        2 => (0..PRODUCERS).prop_map(|p| Op::Gap { p }),
        3 => (0..PRODUCERS).prop_map(|p| Op::Bump { p }),
        12 => (0..PRODUCERS, any::<bool>(), 0u8..6, 0u8..10)
            .prop_map(|(p, commit, coord, epoch)| Op::EndTxn { p, commit, coord, epoch }),
        3 => Just(Op::Roll),
        5 => any::<bool>().prop_map(|crash| Op::Restart { crash }),
    ]
}

/// A batch a client sent.
#[derive(Debug, Clone)]
struct Sent {
    epoch: i16,
    seq: i32,
    values: Vec<String>,
    txn: bool,
}

/// The producer side: what a client believes.
#[derive(Debug, Clone)]
struct Client {
    epoch: i16,
    seq: i32,
    coordinator_epoch: i32,
    sent: Vec<Sent>,
}

fn increment(seq: i32, by: i32) -> i32 {
    if seq > i32::MAX - by {
        by - (i32::MAX - seq) - 1
    } else {
        seq + by
    }
}

/// One of a producer's remembered batches.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Meta {
    first_seq: i32,
    last_seq: i32,
    first: i64,
    last: i64,
}

/// The log's view of one producer.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Producer {
    epoch: i16,
    coordinator_epoch: i32,
    txn_first: Option<i64>,
    batches: VecDeque<Meta>,
}

const EMPTY: Producer = Producer {
    epoch: -1,
    coordinator_epoch: -1,
    txn_first: None,
    batches: VecDeque::new(),
};

type State = BTreeMap<i64, Producer>;

#[derive(Debug, Clone)]
enum Kind {
    Plain,
    Data {
        pid: i64,
        epoch: i16,
        first_seq: i32,
        last_seq: i32,
        txn: bool,
    },
    Marker {
        pid: i64,
        epoch: i16,
        coordinator_epoch: i32,
        commit: bool,
    },
}

/// A batch in the log.
#[derive(Debug, Clone)]
struct Stored {
    base: i64,
    last: i64,
    kind: Kind,
    values: Vec<String>,
}

/// What a request should get.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Response {
    Appended { base: i64, last: i64 },
    Duplicate { base: i64, last: i64 },
    Refused(&'static str),
}

fn response(r: Result<AppendInfo, Error>) -> Response {
    match r {
        Ok(i) if i.duplicate => Response::Duplicate {
            base: i.base_offset,
            last: i.last_offset,
        },
        Ok(i) => Response::Appended {
            base: i.base_offset,
            last: i.last_offset,
        },
        Err(e) => Response::Refused(e.kafka_name()),
    }
}

/// Applies a stored batch to producer state with no checks (what a replay does).
fn apply(state: &mut State, b: &Stored) {
    match b.kind {
        Kind::Plain => {}
        Kind::Data {
            pid,
            epoch,
            first_seq,
            last_seq,
            txn,
        } => {
            let e = state.entry(pid).or_insert(EMPTY);
            if e.epoch != epoch {
                e.batches.clear();
                e.epoch = epoch;
            }
            if e.batches.len() == 5 {
                e.batches.pop_front();
            }
            e.batches.push_back(Meta {
                first_seq,
                last_seq,
                first: b.base,
                last: b.last,
            });
            if txn && e.txn_first.is_none() {
                e.txn_first = Some(b.base);
            }
        }
        Kind::Marker {
            pid,
            epoch,
            coordinator_epoch,
            ..
        } => {
            let e = state.entry(pid).or_insert(EMPTY);
            if e.epoch != epoch {
                e.batches.clear();
                e.epoch = epoch;
            }
            e.coordinator_epoch = coordinator_epoch;
            e.txn_first = None;
        }
    }
}

/// What a snapshot keeps: the last batch of each producer.
fn reduce(state: &State) -> State {
    state
        .iter()
        .map(|(&pid, e)| {
            let mut e = e.clone();
            while e.batches.len() > 1 {
                e.batches.pop_front();
            }
            (pid, e)
        })
        .collect()
}

/// Transactions derived from the log: the aborted ones (as the index lists them), whether each
/// stored batch is committed data, and the first offset of the earliest open transaction.
struct Derived {
    aborted: Vec<AbortedTxn>,
    committed: Vec<bool>,
    first_unstable: Option<i64>,
}

fn derive(history: &[Stored]) -> Derived {
    // Open transactions: first offset → (producer, indexes of its batches).
    let mut ongoing: BTreeMap<i64, (i64, Vec<usize>)> = BTreeMap::new();
    let mut aborted = Vec::new();
    let mut committed = vec![false; history.len()];
    for (i, b) in history.iter().enumerate() {
        match b.kind {
            Kind::Plain => committed[i] = true,
            Kind::Data { pid, txn, .. } => {
                if !txn {
                    committed[i] = true;
                } else if let Some((_, (_, batches))) =
                    ongoing.iter_mut().find(|(_, (p, _))| *p == pid)
                {
                    batches.push(i);
                } else {
                    ongoing.insert(b.base, (pid, vec![i]));
                }
            }
            Kind::Marker { pid, commit, .. } => {
                let Some(first) = ongoing
                    .iter()
                    .find(|(_, (p, _))| *p == pid)
                    .map(|(&f, _)| f)
                else {
                    continue;
                };
                let lso = ongoing
                    .iter()
                    .find(|(_, (p, _))| *p != pid)
                    .map_or(b.base + 1, |(&f, _)| f);
                let (_, batches) = ongoing.remove(&first).unwrap();
                if commit {
                    for j in batches {
                        committed[j] = true;
                    }
                } else {
                    aborted.push(AbortedTxn {
                        producer_id: pid,
                        first_offset: first,
                        last_offset: b.base,
                        last_stable_offset: lso,
                    });
                }
            }
        }
    }
    Derived {
        aborted,
        committed,
        first_unstable: ongoing.keys().next().copied(),
    }
}

struct Model {
    history: Vec<Stored>,
    state: State,
    segment_bases: Vec<i64>,
    /// The reduced state written to the snapshot at each roll.
    snapshot_at: BTreeMap<i64, State>,
    /// Everything below this offset is synced.
    durable: i64,
    /// `flush.messages=1`: every append is synced.
    flush_every_append: bool,
}

impl Model {
    fn end(&self) -> i64 {
        self.history.last().map_or(0, |b| b.last + 1)
    }

    fn data(&self, pid: i64, epoch: i16, first_seq: i32, count: usize, txn: bool) -> Response {
        let last_seq = increment(first_seq, count as i32 - 1);
        let empty = EMPTY;
        let current = self.state.get(&pid).unwrap_or(&empty);
        if current.epoch == epoch {
            if let Some(m) = current
                .batches
                .iter()
                .find(|m| m.first_seq == first_seq && m.last_seq == last_seq)
            {
                return Response::Duplicate {
                    base: m.first,
                    last: m.last,
                };
            }
        }
        if epoch < current.epoch {
            return Response::Refused("INVALID_PRODUCER_EPOCH");
        }
        if epoch != current.epoch {
            if first_seq != 0 && current.epoch != -1 {
                return Response::Refused("OUT_OF_ORDER_SEQUENCE_NUMBER");
            }
        } else {
            let last = current.batches.back().map_or(-1, |m| m.last_seq);
            let follows =
                i64::from(first_seq) == i64::from(last) + 1 || (first_seq == 0 && last == i32::MAX);
            if !follows {
                return Response::Refused("OUT_OF_ORDER_SEQUENCE_NUMBER");
            }
        }
        if current.txn_first.is_some() && !txn {
            return Response::Refused("INVALID_TXN_STATE");
        }
        let base = self.end();
        Response::Appended {
            base,
            last: base + count as i64 - 1,
        }
    }

    fn marker(&self, pid: i64, epoch: i16, coordinator_epoch: i32) -> Response {
        let empty = EMPTY;
        let current = self.state.get(&pid).unwrap_or(&empty);
        if epoch < current.epoch {
            return Response::Refused("INVALID_PRODUCER_EPOCH");
        }
        if current.coordinator_epoch > coordinator_epoch {
            return Response::Refused("TRANSACTION_COORDINATOR_FENCED");
        }
        let base = self.end();
        Response::Appended { base, last: base }
    }

    fn store(&mut self, kind: Kind, values: Vec<String>) {
        let base = self.end();
        let count = values.len().max(1) as i64;
        let b = Stored {
            base,
            last: base + count - 1,
            kind,
            values,
        };
        apply(&mut self.state, &b);
        self.history.push(b);
        if self.flush_every_append {
            self.durable = self.end();
        }
    }

    fn roll(&mut self) {
        let end = self.end();
        if end > *self.segment_bases.last().unwrap() {
            self.segment_bases.push(end);
            self.snapshot_at.insert(end, reduce(&self.state));
            self.durable = end;
        }
    }

    fn clean_restart(&mut self) {
        self.state = reduce(&self.state);
        self.durable = self.end();
    }

    /// After a crash the log ends at the last synced offset; the active segment is replayed on
    /// top of its snapshot.
    fn crash(&mut self) {
        self.history.retain(|b| b.last < self.durable);
        let base = *self.segment_bases.last().unwrap();
        let mut state = if base > 0 {
            self.snapshot_at[&base].clone()
        } else {
            State::new()
        };
        for b in self.history.iter().filter(|b| b.base >= base) {
            apply(&mut state, b);
        }
        self.state = state;
        self.durable = self.end();
    }

    fn check(&self, log: &Log, pages: bool) -> Result<(), TestCaseError> {
        prop_assert_eq!(log.log_end_offset(), self.end());
        // Producer state, producer by producer.
        let states = log.producer_states();
        prop_assert_eq!(
            states.iter().map(|s| s.producer_id).collect::<Vec<_>>(),
            self.state.keys().copied().collect::<Vec<_>>()
        );
        for s in &states {
            let m = &self.state[&s.producer_id];
            let got: Vec<Meta> = s
                .batches
                .iter()
                .map(|b| Meta {
                    first_seq: b.first_seq(),
                    last_seq: b.last_seq,
                    first: b.first_offset(),
                    last: b.last_offset,
                })
                .collect();
            prop_assert_eq!(
                (
                    s.producer_epoch,
                    s.coordinator_epoch,
                    s.current_txn_first_offset
                ),
                (m.epoch, m.coordinator_epoch, m.txn_first),
                "producer {}",
                s.producer_id
            );
            prop_assert_eq!(&got, &m.batches.iter().cloned().collect::<Vec<_>>());
        }
        let derived = derive(&self.history);
        let lso = derived.first_unstable.unwrap_or(self.end());
        prop_assert_eq!(log.last_stable_offset(), lso);
        prop_assert_eq!(log.first_unstable_offset(), derived.first_unstable);
        prop_assert_eq!(log.aborted_txns(), derived.aborted.clone());
        // What consumers see.
        let mut all = Vec::new();
        let mut committed = Vec::new();
        for (i, b) in self.history.iter().enumerate() {
            if matches!(b.kind, Kind::Marker { .. }) {
                continue;
            }
            for (k, v) in b.values.iter().enumerate() {
                let rec = (b.base + k as i64, v.clone());
                if b.last < lso && derived.committed[i] {
                    committed.push(rec.clone());
                }
                all.push(rec);
            }
        }
        let seen = |c: krecords_log::consumer::Consumed| -> Vec<(i64, String)> {
            c.records
                .into_iter()
                .map(|r| (r.offset, String::from_utf8(r.value.unwrap()).unwrap()))
                .collect()
        };
        let ru = log
            .consume(0, usize::MAX, IsolationLevel::ReadUncommitted)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(seen(ru), all.clone());
        let rc = log
            .consume(0, usize::MAX, IsolationLevel::ReadCommitted)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(seen(rc), committed.clone());
        if pages {
            // One batch per fetch, as a consumer with a tiny fetch size pages through.
            for (isolation, expected, stop) in [
                (IsolationLevel::ReadCommitted, &committed, lso),
                (IsolationLevel::ReadUncommitted, &all, self.end()),
            ] {
                let mut got = Vec::new();
                let mut offset = 0;
                while offset < stop {
                    let c = log
                        .consume(offset, 1, isolation)
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert!(c.next_offset > offset, "stuck at {}", offset);
                    offset = c.next_offset;
                    got.extend(seen(c));
                }
                prop_assert_eq!(offset, stop);
                prop_assert_eq!(&got, expected);
            }
        }
        Ok(())
    }
}

fn run(ops: Vec<Op>, flush_every_append: bool) -> Result<(), TestCaseError> {
    let m = mem();
    let flush = if flush_every_append {
        "1"
    } else {
        "9223372036854775807"
    };
    let mut log = Some(m.create(&[("flush.messages", flush)]));
    let mut model = Model {
        history: Vec::new(),
        state: State::new(),
        segment_bases: vec![0],
        snapshot_at: BTreeMap::new(),
        durable: 0,
        flush_every_append,
    };
    let mut clients: Vec<Client> = (0..PRODUCERS)
        .map(|p| Client {
            epoch: [0, 3, 0][p],
            // Producer 2 starts near the top to wrap around.
            seq: [0, 100, i32::MAX - 4][p],
            coordinator_epoch: 0,
            sent: Vec::new(),
        })
        .collect();
    let mut attempt = 0usize;
    let mut values = |n: usize| -> Vec<String> {
        attempt += 1;
        (0..n).map(|i| format!("a{attempt}-r{i}")).collect()
    };
    for op in ops {
        let l = log.as_mut().expect("log is open");
        let mut pages = false;
        match op {
            Op::Produce { p, records, txn } => {
                let c = &mut clients[p];
                let sent = Sent {
                    epoch: c.epoch,
                    seq: c.seq,
                    values: values(records),
                    txn,
                };
                if send(l, &mut model, pid(p), &sent)? {
                    c.seq = increment(c.seq, records as i32);
                }
                c.sent.push(sent);
            }
            Op::Retry { p, back } => {
                let c = &clients[p];
                if c.sent.is_empty() {
                    continue;
                }
                let sent = c.sent[c.sent.len() - 1 - back % c.sent.len()].clone();
                send(l, &mut model, pid(p), &sent)?;
            }
            Op::Zombie { p } => {
                let c = &clients[p];
                if c.epoch == 0 {
                    continue;
                }
                let sent = Sent {
                    epoch: c.epoch - 1,
                    seq: c.seq,
                    values: values(1),
                    txn: false,
                };
                send(l, &mut model, pid(p), &sent)?;
            }
            Op::Gap { p } => {
                let c = &clients[p];
                let sent = Sent {
                    epoch: c.epoch,
                    seq: increment(c.seq, 1),
                    values: values(1),
                    txn: false,
                };
                send(l, &mut model, pid(p), &sent)?;
            }
            Op::Plain { records } => {
                let vs = values(records);
                let refs: Vec<&str> = vs.iter().map(String::as_str).collect();
                let expected = Response::Appended {
                    base: model.end(),
                    last: model.end() + records as i64 - 1,
                };
                let got = response(l.append(&v2(NOW, &refs), AppendOrigin::Client));
                prop_assert_eq!(&got, &expected);
                model.store(Kind::Plain, vs);
            }
            Op::Bump { p } => {
                let c = &mut clients[p];
                c.epoch += 1;
                c.seq = 0;
            }
            Op::EndTxn {
                p,
                commit,
                coord,
                epoch,
            } => {
                let c = &mut clients[p];
                let coordinator_epoch = match coord {
                    4 => c.coordinator_epoch - 1,
                    5 => {
                        c.coordinator_epoch += 1;
                        c.coordinator_epoch
                    }
                    _ => c.coordinator_epoch,
                };
                let bump = epoch == 1;
                let epoch = match epoch {
                    0 if c.epoch > 0 => c.epoch - 1,
                    1 => c.epoch + 1,
                    _ => c.epoch,
                };
                let expected = model.marker(pid(p), epoch, coordinator_epoch);
                let got = response(l.append_end_txn(pid(p), epoch, coordinator_epoch, commit, NOW));
                prop_assert_eq!(&got, &expected, "end txn {:?}", op);
                if let Response::Appended { .. } = got {
                    model.store(
                        Kind::Marker {
                            pid: pid(p),
                            epoch,
                            coordinator_epoch,
                            commit,
                        },
                        Vec::new(),
                    );
                    if bump {
                        c.epoch = epoch;
                        c.seq = 0;
                    }
                }
            }
            Op::Roll => {
                l.roll().map_err(|e| TestCaseError::fail(e.to_string()))?;
                model.roll();
                pages = true;
            }
            Op::Restart { crash } => {
                let l = log.take().expect("log is open");
                if crash {
                    drop(l);
                    m.storage.crash_with(CrashMode::DropUnsynced);
                    model.crash();
                } else {
                    l.close().map_err(|e| TestCaseError::fail(e.to_string()))?;
                    model.clean_restart();
                }
                let reopened = m.open();
                prop_assert_eq!(reopened.recovery_info().clean_shutdown, !crash);
                log = Some(reopened);
                pages = true;
            }
        }
        model.check(log.as_ref().expect("log is open"), pages)?;
    }
    let log = log.expect("log is open");
    model.check(&log, true)?;
    log.verify_indexes()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    Ok(())
}

/// Sends a client batch; checks the response against the model and records it. Returns whether
/// the batch was appended as new.
fn send(log: &mut Log, model: &mut Model, pid: i64, s: &Sent) -> Result<bool, TestCaseError> {
    let refs: Vec<&str> = s.values.iter().map(String::as_str).collect();
    let expected = model.data(pid, s.epoch, s.seq, s.values.len(), s.txn);
    let got = response(log.append(
        &idem(pid, s.epoch, s.seq, s.txn, &refs),
        AppendOrigin::Client,
    ));
    prop_assert_eq!(&got, &expected, "producer {} sending {:?}", pid, s);
    if let Response::Appended { .. } = got {
        model.store(
            Kind::Data {
                pid,
                epoch: s.epoch,
                first_seq: s.seq,
                last_seq: increment(s.seq, s.values.len() as i32 - 1),
                txn: s.txn,
            },
            s.values.clone(),
        );
        return Ok(true);
    }
    Ok(false)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn producer_model_every_append_synced(ops in proptest::collection::vec(op(), 1..60)) {
        run(ops, true)?;
    }

    #[test]
    fn producer_model_crashes_lose_unsynced_batches(ops in proptest::collection::vec(op(), 1..60)) {
        run(ops, false)?;
    }
}

/// A fixed scenario touching every op kind, so a model mistake shows without shrinking.
#[test]
fn producer_model_walkthrough() {
    use Op::*;
    let ops = vec![
        Produce {
            p: 0,
            records: 2,
            txn: true,
        },
        Produce {
            p: 1,
            records: 1,
            txn: true,
        },
        Plain { records: 1 },
        Retry { p: 0, back: 0 },
        EndTxn {
            p: 0,
            commit: false,
            coord: 0,
            epoch: 2,
        },
        Roll,
        Produce {
            p: 2,
            records: 3,
            txn: false,
        },
        Produce {
            p: 2,
            records: 3,
            txn: false,
        },
        Gap { p: 2 },
        Bump { p: 1 },
        Zombie { p: 1 },
        EndTxn {
            p: 1,
            commit: true,
            coord: 5,
            epoch: 2,
        },
        EndTxn {
            p: 1,
            commit: true,
            coord: 4,
            epoch: 2,
        },
        Restart { crash: true },
        Retry { p: 2, back: 0 },
        Produce {
            p: 0,
            records: 1,
            txn: true,
        },
        Restart { crash: false },
        Retry { p: 2, back: 1 },
        EndTxn {
            p: 0,
            commit: true,
            coord: 0,
            epoch: 1,
        },
        Produce {
            p: 0,
            records: 1,
            txn: false,
        },
        Restart { crash: true },
    ];
    run(ops.clone(), true).unwrap();
    run(ops, false).unwrap();
}
