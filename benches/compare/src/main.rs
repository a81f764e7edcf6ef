//! `krecords-compare`: the same Kafka record workloads through krecords and through its peers, in
//! one process run, next to the machine's limits measured on the same bytes.
//!
//! ```text
//! cargo run --release -p krecords-compare -- [--quick] [--json] [--workload NAME]... [--no-java]
//! ```
//!
//! Workloads: v2 batches of 1000 records with 10-byte, 100-byte and 10 KiB values, uncompressed
//! and with each codec (plus 100-byte values with two headers). Decode = check every batch's
//! CRC-32C and iterate every record touching offset, timestamp, key, value and headers; encode =
//! build the same batches. Peers: the `kafka-protocol` crate (RecordBatchDecoder/Encoder),
//! `rskafka`'s record batch parser, and Apache Kafka's Java reader (`JavaBench`, a child JVM on the
//! same bytes). Limits: memory read bandwidth (sum of the buffer as u64 words), CRC-32C of the
//! buffer, and each codec's raw decompression of the same compressed blocks without framing.
//!
//! Then, on the `v2-none-100B` bytes: `log-append` (krecords-log's `Log::append` of every batch
//! to a fresh log next to a raw sequential write of the same batches to a plain file),
//! `log-read` (`Log::read` of the whole log next to a raw sequential read of its segment files),
//! and `dump-*` (`krec dump --deep` against `kafka-dump-log --deep-iteration` on the same segment
//! file, `--dump-mib` to grow it).
//!
//! Every implementation's digest of what it read is compared with the inputs' before anything
//! is timed. `--quick` runs tiny workloads once each, to check that everything works; its
//! timings mean nothing. See BENCHMARKS.md at the repository root for results and method.

mod dump;
mod java;
mod limits;
mod log_rows;
mod measure;
mod ours;
mod peers;
mod report;
mod workload;

use std::path::PathBuf;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use clap::Parser;
use krecords_codec::Compression;

use measure::Plan;
use report::{Op, Outcome, Row, OURS};
use workload::{encode_ours, expected_digest, Digest, Inputs, Spec};

/// Command line.
#[derive(Debug, Parser)]
#[command(about = "krecords vs kafka-protocol, rskafka and Apache Kafka (Java), in one run")]
struct Args {
    /// Tiny workloads, one pass each: checks that everything runs (CI); timings are meaningless.
    #[arg(long)]
    quick: bool,
    /// JSON Lines (one object per row, then per goal) instead of the table.
    #[arg(long)]
    json: bool,
    /// Only workloads whose name contains this (repeatable), e.g. `none-100B`, `zstd`. The
    /// `log-append`, `log-read` and `dump` rows run when the filter matches their name or
    /// `v2-none-100B` (their bytes), e.g. `--workload log`, `--workload dump`.
    #[arg(long = "workload", value_name = "NAME")]
    workloads: Vec<String>,
    /// Skip the Java reader and kafka-dump-log.
    #[arg(long)]
    no_java: bool,
    /// Timed runs per measurement (median reported). Default 5 (quick: 1).
    #[arg(long)]
    runs: Option<usize>,
    /// Minimum seconds per timed run. Default 1 (quick: 0).
    #[arg(long)]
    min_time: Option<f64>,
    /// Seconds of JIT warm-up for Java. Default 5 (quick: 0.2).
    #[arg(long)]
    java_warmup: Option<f64>,
    /// Uncompressed bytes per workload buffer, in MiB (full mode). Default 64 (twice the L3).
    #[arg(long, default_value_t = 64)]
    size_mib: usize,
    /// Size of the segment the dump rows read, in MiB (e.g. 1024), made by repeating the
    /// `v2-none-100B` batches with increasing offsets. Default: those bytes once (about
    /// `--size-mib`; tiny with `--quick`).
    #[arg(long, value_name = "N")]
    dump_mib: Option<u64>,
    /// Timed runs of each dump tool (one process each, after an untimed one). Default: `--runs`.
    #[arg(long, value_name = "N")]
    dump_runs: Option<usize>,
    /// Repository root (for interop/java/target). Default: two levels above this crate.
    #[arg(long)]
    repo_root: Option<PathBuf>,
    /// Profiling aid: run only krecords' `decode` or `encode` of the first selected workload in a
    /// loop for `--min-time` seconds (default 10), and print its throughput. Run it under
    /// `perf record` or valgrind.
    #[arg(long, value_name = "OP", value_parser = ["decode", "encode"])]
    profile: Option<String>,
}

/// Settings derived from [`Args`].
#[derive(Debug, Clone)]
struct Options {
    quick: bool,
    plan: Plan,
    java_warmup: f64,
    java: Result<java::JavaSetup, String>,
    filters: Vec<String>,
    size_bytes: usize,
    /// `--dump-mib` in bytes.
    dump_bytes: Option<u64>,
    /// Timed runs of each dump tool.
    dump_runs: usize,
    /// The `krec` binary, or why the krec dump row is skipped.
    krec: Result<PathBuf, String>,
    /// Kafka's jars for kafka-dump-log, or why its row is skipped.
    kafka_tools: Result<dump::KafkaTools, String>,
}

fn main() {
    let args = Args::parse();
    let quick = args.quick;
    let mut plan = if quick { Plan::quick() } else { Plan::full() };
    if let Some(r) = args.runs {
        plan.runs = r.max(1);
    }
    if let Some(t) = args.min_time {
        plan.min_run = Duration::from_secs_f64(t.max(0.0));
    }
    let root = args
        .repo_root
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."));
    let java = if args.no_java {
        Err("--no-java".to_string())
    } else {
        java::JavaSetup::find(&root)
    };
    let kafka_tools = if args.no_java {
        Err("--no-java".to_string())
    } else {
        dump::KafkaTools::find(&root)
    };
    let options = Options {
        quick,
        plan,
        java_warmup: args.java_warmup.unwrap_or(if quick { 0.2 } else { 5.0 }),
        java,
        filters: args.workloads,
        size_bytes: args.size_mib.max(1) << 20,
        dump_bytes: args.dump_mib.map(|m| m.max(1) << 20),
        dump_runs: args.dump_runs.unwrap_or(plan.runs).max(1),
        krec: dump::find_krec(),
        kafka_tools,
    };
    if let Some(op) = &args.profile {
        let secs = args.min_time.unwrap_or(10.0);
        profile(&options, op, secs);
        return;
    }
    let load_before = loadavg();
    let rows = run(&options, &mut |msg| eprintln!("{msg}"));
    let goals = report::goals(&rows);
    if args.json {
        print!("{}", report::json_lines(&rows, &goals));
    } else {
        println!("{}", machine(&options, &load_before));
        print!("{}", report::table(&rows, &goals));
    }
}

/// Runs every selected workload; `progress` gets one line per measurement.
fn run(options: &Options, progress: &mut dyn FnMut(String)) -> Vec<Row> {
    let specs: Vec<Spec> = workload::specs(options.quick, options.size_bytes)
        .into_iter()
        .filter(|s| {
            options.filters.is_empty()
                || options
                    .filters
                    .iter()
                    .any(|f| s.name().contains(f.as_str()))
        })
        .collect();
    let mut rows = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        progress(format!("[{}/{}] {}", i + 1, specs.len(), spec.name()));
        run_workload(spec, options, &mut rows, progress);
    }
    run_log_and_dump(options, &mut rows, progress);
    rows
}

/// The workload the log and dump rows use: its batches are what a producer of 100-byte
/// records sends.
const LOG_WORKLOAD: &str = "v2-none-100B";

/// The `log-append`, `log-read` and `dump-*` rows, on the bytes of [`LOG_WORKLOAD`], for those
/// the filters select.
fn run_log_and_dump(options: &Options, rows: &mut Vec<Row>, progress: &mut dyn FnMut(String)) {
    let wants = |name: &str| {
        options.filters.is_empty()
            || options
                .filters
                .iter()
                .any(|f| name.contains(f.as_str()) || LOG_WORKLOAD.contains(f.as_str()))
    };
    let (append, read, dump) = (wants("log-append"), wants("log-read"), wants("dump"));
    if !(append || read || dump) {
        return;
    }
    let Some(spec) = workload::specs(options.quick, options.size_bytes)
        .into_iter()
        .find(|s| s.name() == LOG_WORKLOAD)
    else {
        return;
    };
    progress(format!("log and dump rows, on the {LOG_WORKLOAD} bytes"));
    let inputs = Inputs::new(&spec);
    let expected = expected_digest(&inputs);
    let mut bytes = Vec::new();
    encode_ours(&inputs, &mut bytes);
    if append || read {
        let bench = log_rows::LogBench {
            bytes: &bytes,
            expected,
            append,
            read,
        };
        let measured = log_rows::measure(&bench, &options.plan, progress);
        rows.extend(log_rows::rows(
            measured,
            bytes.len() as u64,
            spec.records() as u64,
        ));
    }
    if dump {
        rows.extend(dump::measure(
            dump::DumpBench {
                bytes: &bytes,
                target_bytes: options.dump_bytes,
                runs: options.dump_runs,
                krec: options.krec.clone(),
                kafka: options.kafka_tools.clone(),
            },
            progress,
        ));
    }
}

/// One measurement of a group: a pass to time, or the reason it is not timed.
struct Entry<'a> {
    op: Op,
    label: String,
    pass: Result<Box<dyn FnMut() -> u64 + 'a>, Outcome>,
}

impl<'a> Entry<'a> {
    fn new(op: Op, label: &str, pass: impl FnMut() -> u64 + 'a) -> Self {
        Entry {
            op,
            label: label.into(),
            pass: Ok(Box::new(pass)),
        }
    }

    /// An implementation's pass, timed only if `check` (its output, produced once before) is
    /// exactly the expected records.
    fn checked(
        op: Op,
        label: &str,
        expected: Digest,
        check: Result<Digest, String>,
        pass: impl FnMut() -> u64 + 'a,
    ) -> Self {
        let pass: Result<Box<dyn FnMut() -> u64 + 'a>, Outcome> = match check {
            Err(e) => Err(Outcome::Failed(e)),
            Ok(d) if d != expected => Err(Outcome::Failed(format!(
                "read {d:?}, expected {expected:?}"
            ))),
            Ok(_) => Ok(Box::new(pass)),
        };
        Entry {
            op,
            label: label.into(),
            pass,
        }
    }
}

/// Times a group of entries interleaved (see [`measure::measure_group`]) and returns their
/// outcomes in order.
fn time_group(plan: &Plan, entries: Vec<Entry<'_>>) -> Vec<(Op, String, Outcome)> {
    let mut passes: Vec<Box<dyn FnMut() -> u64 + '_>> = Vec::new();
    let mut slots = Vec::new();
    for e in entries {
        match e.pass {
            Ok(p) => {
                passes.push(p);
                slots.push((e.op, e.label, None));
            }
            Err(o) => slots.push((e.op, e.label, Some(o))),
        }
    }
    let mut timings = measure::measure_group(plan, &mut passes).into_iter();
    slots
        .into_iter()
        .map(|(op, label, o)| {
            let o =
                o.unwrap_or_else(|| Outcome::Timed(timings.next().expect("one timing per pass")));
            (op, label, o)
        })
        .collect()
}

/// Measures one workload: decode through every implementation next to the limits (one
/// interleaved group), Java, then encode (another group).
fn run_workload(
    spec: &Spec,
    options: &Options,
    rows: &mut Vec<Row>,
    progress: &mut dyn FnMut(String),
) {
    let plan = &options.plan;
    let name = spec.name();
    let inputs = Inputs::new(spec);
    let expected = expected_digest(&inputs);
    let mut buf = Vec::new();
    encode_ours(&inputs, &mut buf);
    let bytes = Bytes::from(buf);
    let n_bytes = bytes.len() as u64;
    let n_records = spec.records() as u64;
    let mut add = |op: Op, implementation: &str, outcome: Outcome| {
        rows.push(Row {
            workload: name.clone(),
            op,
            implementation: implementation.into(),
            bytes: n_bytes,
            records: n_records,
            outcome,
            detail: None,
        });
    };

    // Decode: every implementation's first pass is checked against the inputs' digest.
    progress("  decode: krecords, kafka-protocol, rskafka and limits, interleaved".into());
    let mut scratch = Vec::new();
    let mut framed_scratch = Vec::new();
    let mut group = vec![
        Entry::checked(
            Op::Decode,
            OURS,
            expected,
            ours::decode(&bytes, &mut scratch),
            || ours::decode(&bytes, &mut scratch).expect("checked").sum,
        ),
        Entry::checked(
            Op::Decode,
            "kafka-protocol 0.18",
            expected,
            peers::kp::decode(&bytes),
            || peers::kp::decode(&bytes).expect("checked").sum,
        ),
        Entry::checked(
            Op::Decode,
            "rskafka 0.6",
            expected,
            peers::rsk::decode(&bytes),
            || peers::rsk::decode(&bytes).expect("checked").sum,
        ),
        Entry::new(Op::Limit, "memory read (u64 sum)", || {
            limits::mem_sum(&bytes)
        }),
        Entry::new(Op::Limit, "crc32c (crc32c crate, SSE4.2)", || {
            limits::crc(&bytes)
        }),
        Entry::new(Op::Limit, "crc32c (crc-fast, VPCLMULQDQ)", || {
            limits::crc_fast(&bytes)
        }),
    ];
    if spec.codec != Compression::None {
        match limits::RawPayloads::new(&bytes, spec.codec) {
            Ok(mut raw) => {
                let label = raw.label();
                let bytes = &bytes;
                group.push(Entry::new(Op::Limit, label, move || {
                    raw.decompress_all(bytes)
                }));
            }
            Err(e) => group.push(Entry {
                op: Op::Limit,
                label: "raw codec".into(),
                pass: Err(Outcome::Failed(e)),
            }),
        }
    }
    if spec.codec != Compression::None {
        group.push(Entry::new(
            Op::Limit,
            "breakdown: krecords decompress only",
            || limits::framed_decompress(&bytes, spec.codec, &mut framed_scratch),
        ));
    }
    let decoded = time_group(plan, group);
    let (peers_and_ours, decode_limits) = decoded.split_at(3);
    for (op, label, o) in peers_and_ours {
        add(*op, label, o.clone());
    }

    let java_label = "java (Kafka 4.4.0 MemoryRecords)";
    let java_here = !options.quick
        || (spec.codec == Compression::None && spec.value_size == 100 && !spec.headers);
    let o = match (&options.java, java_here) {
        (Err(why), _) => Outcome::Skipped(format!("java: {why}")),
        (Ok(_), false) => {
            Outcome::Skipped("java: quick mode runs Java on v2-none-100B only".into())
        }
        (Ok(j), true) => {
            progress("  decode: java".into());
            match j.run(&bytes, plan, options.java_warmup) {
                Ok(r) if r.digest != expected => {
                    Outcome::Failed(format!("Java read {:?}, expected {expected:?}", r.digest))
                }
                Ok(r) => Outcome::Timed(r.timing),
                Err(e) => Outcome::Failed(e),
            }
        }
    };
    add(Op::Decode, java_label, o);
    for (op, label, o) in decode_limits {
        add(*op, label, o.clone());
    }

    // Encode: each output is read back by our decoder once and must give the inputs' digest.
    progress("  encode: krecords, memcpy, kafka-protocol, rskafka, interleaved".into());
    let kp_records = peers::kp::records(&inputs);
    let rsk_batches = peers::rsk::batches(&inputs);
    let mut ours_out = Vec::with_capacity(bytes.len());
    let mut copy_out = Vec::with_capacity(bytes.len());
    let mut kp_out = BytesMut::with_capacity(bytes.len());
    let mut rsk_out = Vec::with_capacity(bytes.len());
    encode_ours(&inputs, &mut ours_out);
    let ours_check = read_back(&ours_out);
    let kp_check =
        peers::kp::encode(&kp_records, spec.codec, &mut kp_out).and_then(|()| read_back(&kp_out));
    let rsk_check =
        peers::rsk::encode(&rsk_batches, &mut rsk_out).and_then(|()| read_back(&rsk_out));
    let group = vec![
        Entry::checked(Op::Encode, OURS, expected, ours_check, || {
            ours_out.clear();
            encode_ours(&inputs, &mut ours_out);
            ours_out.len() as u64
        }),
        Entry::new(Op::EncodeLimit, "memcpy of the output bytes", || {
            copy_out.clear();
            copy_out.extend_from_slice(&bytes);
            copy_out.len() as u64
        }),
        Entry::checked(
            Op::Encode,
            "kafka-protocol 0.18",
            expected,
            kp_check,
            || {
                kp_out.clear();
                peers::kp::encode(&kp_records, spec.codec, &mut kp_out).expect("checked");
                kp_out.len() as u64
            },
        ),
        Entry::checked(Op::Encode, "rskafka 0.6", expected, rsk_check, || {
            rsk_out.clear();
            peers::rsk::encode(&rsk_batches, &mut rsk_out).expect("checked");
            rsk_out.len() as u64
        }),
    ];
    for (op, label, o) in time_group(plan, group) {
        add(op, &label, o);
    }
}

/// What an encoder's output reads back as, through us.
fn read_back(out: &[u8]) -> Result<Digest, String> {
    ours::decode(out, &mut Vec::new())
}

/// `--profile`: only our decode or encode of the first selected workload, for `secs` seconds.
fn profile(options: &Options, op: &str, secs: f64) {
    let Some(spec) = workload::specs(options.quick, options.size_bytes)
        .into_iter()
        .find(|s| {
            options.filters.is_empty()
                || options
                    .filters
                    .iter()
                    .any(|f| s.name().contains(f.as_str()))
        })
    else {
        eprintln!("no workload matches");
        std::process::exit(2);
    };
    let inputs = Inputs::new(&spec);
    let mut bytes = Vec::new();
    encode_ours(&inputs, &mut bytes);
    let mut scratch = Vec::new();
    let mut out = Vec::with_capacity(bytes.len());
    let start = std::time::Instant::now();
    let mut passes = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        if op == "decode" {
            std::hint::black_box(ours::decode(&bytes, &mut scratch).expect("decode"));
        } else {
            out.clear();
            encode_ours(&inputs, &mut out);
            std::hint::black_box(out.len());
        }
        passes += 1;
    }
    let t = start.elapsed().as_secs_f64() / passes as f64;
    println!(
        "{} {op}: {passes} passes, {:.0} MB/s, {:.2}M records/s",
        spec.name(),
        bytes.len() as f64 / t / 1e6,
        spec.records() as f64 / t / 1e6
    );
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// The machine and settings, printed above the table.
fn machine(options: &Options, load_before: &str) -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "?".into());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .next()
                .map(|l| l.split_whitespace().nth(1).unwrap_or("0").to_owned())
        })
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or("?".into(), |kb| {
            format!("{:.1} GiB", kb as f64 / (1 << 20) as f64)
        });
    let rustc = std::process::Command::new("rustc")
        .arg("-V")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "?".into());
    let java = match &options.java {
        Ok(_) => java::JavaSetup::version().unwrap_or_else(|| "?".into()),
        Err(e) => format!("skipped ({e})"),
    };
    format!(
        "machine: {model}, {cores} cores, {mem}; {rustc}; java: {java}\n\
         plan: {} run(s) of >= {:.2} s after {:.2} s warm-up (Java: {:.1} s JIT warm-up), median reported; {}\n\
         load average before: {load_before}, after: {}\n\
         MB/s counts each workload's v2 bytes as written (compressed ones compressed), for every row of \
         that workload; us/this = this row's time / krecords' time (peers: how many times faster we are; \
         limits: the fraction of the limit we reach); spread = (slowest - fastest run) / median.\n",
        options.plan.runs,
        options.plan.min_run.as_secs_f64(),
        options.plan.warmup.as_secs_f64(),
        options.java_warmup,
        if options.quick { "QUICK MODE: timings are meaningless" } else { "full mode" },
        loadavg(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload::OwnedRecord;

    /// Every quick workload reads back identically (offsets, timestamps, keys, values, headers)
    /// through us, kafka-protocol and rskafka; what kafka-protocol and rskafka write reads back
    /// identically through us; and kafka-protocol writes the same uncompressed bytes as we do.
    #[test]
    fn implementations_agree_on_every_quick_workload() {
        for spec in workload::specs(true, 0) {
            let name = spec.name();
            let inputs = Inputs::new(&spec);
            let expected = OwnedRecord::expected(&inputs);
            let mut ours_bytes = Vec::new();
            encode_ours(&inputs, &mut ours_bytes);
            let bytes = Bytes::from(ours_bytes);
            assert_eq!(ours::collect(&bytes).unwrap(), expected, "{name}: krecords");
            assert_eq!(
                peers::kp::collect(&bytes).unwrap(),
                expected,
                "{name}: kafka-protocol"
            );
            assert_eq!(
                peers::rsk::collect(&bytes).unwrap(),
                expected,
                "{name}: rskafka"
            );

            let mut kp_out = BytesMut::new();
            peers::kp::encode(&peers::kp::records(&inputs), spec.codec, &mut kp_out).unwrap();
            assert_eq!(
                ours::collect(&kp_out).unwrap(),
                expected,
                "{name}: kafka-protocol's bytes"
            );
            if spec.codec == Compression::None {
                assert_eq!(
                    &kp_out[..],
                    &bytes[..],
                    "{name}: kafka-protocol writes other bytes"
                );
            }
            let mut rsk_out = Vec::new();
            peers::rsk::encode(&peers::rsk::batches(&inputs), &mut rsk_out).unwrap();
            assert_eq!(
                ours::collect(&rsk_out).unwrap(),
                expected,
                "{name}: rskafka's bytes"
            );

            if spec.codec != Compression::None {
                let mut raw = limits::RawPayloads::new(&bytes, spec.codec).unwrap();
                let uncompressed = ours_uncompressed_len(&inputs);
                assert_eq!(
                    raw.decompress_all(&bytes) as usize,
                    uncompressed,
                    "{name}: raw codec"
                );
            }
        }
    }

    /// Bytes of the uncompressed records sections of `inputs`' batches.
    fn ours_uncompressed_len(inputs: &Inputs) -> usize {
        let mut spec = inputs.spec.clone();
        spec.codec = Compression::None;
        let mut plain = Vec::new();
        encode_ours(&Inputs::new(&spec), &mut plain);
        plain.len() - spec.batches * krecords_codec::layout::v2::RECORDS_OFFSET
    }

    /// The whole quick run (without Java, which needs the Maven build) produces a timed row for
    /// every implementation and limit of every workload, the log rows, the dump rows (krec's
    /// timed when a `krec` binary was built next to the test, else skipped), and goals.
    #[test]
    fn quick_run_produces_every_row() {
        let options = Options {
            quick: true,
            plan: Plan::quick(),
            java_warmup: 0.0,
            java: Err("not in unit tests".into()),
            filters: Vec::new(),
            size_bytes: 0,
            dump_bytes: None,
            dump_runs: 1,
            krec: dump::find_krec(),
            kafka_tools: Err("not in unit tests".into()),
        };
        let rows = run(&options, &mut |_| {});
        let specs = workload::specs(true, 0);
        for spec in &specs {
            let name = spec.name();
            let of = |op: Op| {
                rows.iter()
                    .filter(|r| r.workload == name && r.op == op)
                    .collect::<Vec<_>>()
            };
            let decode = of(Op::Decode);
            assert_eq!(decode.len(), 4, "{name}");
            for r in &decode[..3] {
                assert!(matches!(r.outcome, Outcome::Timed(_)), "{name}: {r:?}");
            }
            assert!(
                matches!(decode[3].outcome, Outcome::Skipped(_)),
                "{name}: java"
            );
            let limits = of(Op::Limit);
            let want = if spec.codec == Compression::None {
                3
            } else {
                5
            };
            assert_eq!(limits.len(), want, "{name}");
            for r in of(Op::Limit)
                .into_iter()
                .chain(of(Op::Encode))
                .chain(of(Op::EncodeLimit))
            {
                assert!(matches!(r.outcome, Outcome::Timed(_)), "{name}: {r:?}");
            }
            assert_eq!(of(Op::Encode).len(), 3, "{name}");
        }
        let of = |workload: &str| {
            rows.iter()
                .filter(|r| r.workload.starts_with(workload))
                .map(|r| (r.op, r.implementation.as_str(), &r.outcome))
                .collect::<Vec<_>>()
        };
        for (workload, ops) in [
            ("log-append", [Op::Append, Op::AppendLimit]),
            ("log-read", [Op::Read, Op::ReadLimit]),
        ] {
            let got = of(workload);
            assert_eq!(got.len(), 2, "{workload}: {got:?}");
            for ((op, _, outcome), want) in got.iter().zip(ops) {
                assert_eq!(*op, want, "{workload}");
                assert!(matches!(outcome, Outcome::Timed(_)), "{workload}: {got:?}");
            }
        }
        let dump = of("dump-");
        assert_eq!(dump.len(), 2, "{dump:?}");
        assert_eq!(dump[0].1, report::OURS_DUMP);
        match &options.krec {
            Ok(_) => assert!(matches!(dump[0].2, Outcome::Timed(_)), "{dump:?}"),
            Err(_) => assert!(matches!(dump[0].2, Outcome::Skipped(_)), "{dump:?}"),
        }
        assert!(matches!(dump[1].2, Outcome::Skipped(_)), "{dump:?}");
        let goals = report::goals(&rows);
        assert!(goals
            .iter()
            .any(|g| g.workload == "v2-none-100B" && g.ratio.is_some()));
        assert!(goals
            .iter()
            .any(|g| g.workload == "log-append" && g.ratio.is_some()));
        assert!(goals
            .iter()
            .any(|g| g.workload.starts_with("dump-") && g.goal.contains("kafka-dump-log")));
        assert!(!goals.iter().any(|g| g.workload.starts_with("log-read")));
        assert_eq!(
            report::json_lines(&rows, &goals).lines().count(),
            rows.len() + goals.len()
        );
    }
}
