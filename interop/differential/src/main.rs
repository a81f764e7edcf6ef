//! `krec-diff`: krecords against Kafka's own reader on generated inputs.
//!
//! ```text
//! krec-diff --java-cp 'interop/java/target/lib/*:interop/java/target/classes' \
//!           [--cases 20000] [--seed 1] [--save DIR] [--save-kinds DIR] [--vectors DIR]
//!           [--referee-heap 6g] [--mode read|produce]
//! ```
//!
//! Starts the referee (`java ... dev.krecords.interop.Referee read|produce`), streams the inputs
//! to it, computes krecords' verdict for each (`--mode read`: as a consumer reads them, against
//! Kafka's reader; `--mode produce`: appended to a new log by a client, against a new
//! `UnifiedLog`'s `appendAsLeader`, error names compared), and prints the count of every class, then every kind of
//! disagreement (class, krecords' error, Kafka's exception) with its count and first input.
//! `--save DIR` writes up to five inputs of each kind as `KIND-N.bin` with a `.json` of both
//! verdicts (copy them to `interop/differential/cases/` to replay them in `cargo test`);
//! `--save-kinds DIR` does the same for the first three inputs of every kind, agreements included (the
//! replay corpus: one input per way of being accepted or refused). Disagreements that a
//! documented difference explains (`compare::PINNED`) count as passed and are listed by name.
//! The referee gets `--referee-heap` (default 6g): Kafka's v0/v1 reader allocates whatever an
//! inner message's size says, up to 2 GiB, before it reads it, and runs out of memory on a
//! smaller heap. Ends with `N passed, N failed` (failed: unexplained disagreements and referee
//! crashes) and exits 1 when any case failed.

use krecords_differential::compare::{
    classify, classify_produce, pinned, pinned_produce, Class, PINNED, PINNED_PRODUCE,
};
use krecords_differential::gen::Seeds;
use krecords_differential::ours;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

struct Args {
    cases: u64,
    seed: u64,
    java_cp: String,
    save: Option<PathBuf>,
    vectors: PathBuf,
    referee_heap: String,
    save_kinds: Option<PathBuf>,
    produce: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        cases: 20_000,
        seed: 1,
        java_cp: String::new(),
        save: None,
        vectors: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/kafka-java"),
        referee_heap: "6g".into(),
        save_kinds: None,
        produce: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--cases" => a.cases = value()?.parse().map_err(|e| format!("--cases: {e}"))?,
            "--seed" => a.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--java-cp" => a.java_cp = value()?,
            "--save" => a.save = Some(PathBuf::from(value()?)),
            "--vectors" => a.vectors = PathBuf::from(value()?),
            "--referee-heap" => a.referee_heap = value()?,
            "--save-kinds" => a.save_kinds = Some(PathBuf::from(value()?)),
            "--mode" => match value()?.as_str() {
                "read" => a.produce = false,
                "produce" => a.produce = true,
                m => return Err(format!("--mode read|produce, not {m}")),
            },
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.java_cp.is_empty() {
        return Err("--java-cp is required (interop/java's classes and jars)".into());
    }
    Ok(a)
}

/// The entries of every Kafka-made vector (`"hex"` of each JSON file).
fn load_vectors(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    for p in paths {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        if let Some(h) = v["hex"].as_str() {
            if let Ok(bytes) = hex::decode(h) {
                let name = p
                    .file_stem()
                    .map_or(String::new(), |s| s.to_string_lossy().into());
                out.push((name, bytes));
            }
        }
    }
    Ok(out)
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("krec-diff: {e}");
            ExitCode::from(2)
        }
    }
}

/// One kind of disagreement: its class and both sides' error names.
type Kind = (Class, String, String);

fn run() -> Result<bool, String> {
    let args = parse_args()?;
    let seeds = Seeds::new(load_vectors(&args.vectors)?);
    eprintln!(
        "krec-diff: {} cases, seed {}, {} seed inputs",
        args.cases,
        args.seed,
        seeds.len()
    );
    let heap = format!("-Xmx{}", args.referee_heap);
    let mut referee = Command::new("java")
        .args([
            heap.as_str(),
            "-cp",
            &args.java_cp,
            "dev.krecords.interop.Referee",
            if args.produce { "produce" } else { "read" },
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the referee: {e}"))?;
    let stdin = referee.stdin.take().ok_or("no referee stdin")?;
    let stdout = referee.stdout.take().ok_or("no referee stdout")?;
    let (cases, seed) = (args.cases, args.seed);
    let feeder = std::thread::scope(|scope| -> Result<_, String> {
        let seeds = &seeds;
        let writer = scope.spawn(move || -> std::io::Result<()> {
            let mut w = BufWriter::new(stdin);
            for i in 0..cases {
                let c = seeds.case(seed, i);
                w.write_all(&(c.bytes.len() as u32).to_be_bytes())?;
                w.write_all(&c.bytes)?;
            }
            w.flush()
        });
        let result = compare_all(&args, seeds, BufReader::new(stdout));
        let fed = writer.join().map_err(|_| "the feeding thread panicked")?;
        Ok((result, fed))
    })?;
    let (result, fed) = feeder;
    let status = referee.wait().map_err(|e| e.to_string())?;
    if let Err(e) = fed {
        return Err(format!(
            "writing to the referee failed: {e} (referee {status})"
        ));
    }
    result
}

fn compare_all(args: &Args, seeds: &Seeds, referee: impl BufRead) -> Result<bool, String> {
    let mut counts: BTreeMap<Class, u64> = BTreeMap::new();
    let mut kinds: BTreeMap<Kind, (u64, u64, String)> = BTreeMap::new();
    let mut saved: BTreeMap<Kind, usize> = BTreeMap::new();
    let mut saved_kinds: BTreeMap<Kind, usize> = BTreeMap::new();
    let mut pins: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut lines = referee.lines();
    let mode = if args.produce { "produce" } else { "read" };
    for i in 0..args.cases {
        let line = match lines.next() {
            Some(Ok(l)) => l,
            Some(Err(e)) => return Err(format!("reading the referee: {e}")),
            None => return Err(format!("the referee stopped answering at case {i}")),
        };
        let kafka: Value =
            serde_json::from_str(&line).map_err(|e| format!("referee line {i}: {e}: {line}"))?;
        let case = seeds.case(args.seed, i);
        let (ours, (class, detail)) = if args.produce {
            let ours = ours::produce(&case.bytes);
            let c = classify_produce(&ours, &kafka);
            (ours, c)
        } else {
            let ours = ours::verdict(&case.bytes);
            let c = classify(&ours, &kafka);
            (ours, c)
        };
        *counts.entry(class).or_default() += 1;
        let kind = (
            class,
            ours["error"].as_str().unwrap_or("").to_owned(),
            kafka["error"]
                .as_str()
                .or(kafka["crash"].as_str())
                .unwrap_or("")
                .to_owned(),
        );
        if let Some(dir) = &args.save_kinds {
            let n = saved_kinds.entry(kind.clone()).or_default();
            if *n < 3 {
                *n += 1;
                save(mode, dir, &kind, i, &case, &ours, &kafka)?;
            }
        }
        if !class.agrees() {
            let pin = if args.produce {
                pinned_produce(class, &ours, &kafka)
            } else {
                pinned(&case.bytes, class, &ours, &kafka)
            };
            if let Some(name) = pin {
                *pins.entry(name).or_default() += 1;
                continue;
            }
            let e = kinds.entry(kind.clone()).or_insert((0, i, detail));
            e.0 += 1;
            if let Some(dir) = &args.save {
                let n = saved.entry(kind.clone()).or_default();
                if *n < 5 {
                    *n += 1;
                    save(mode, dir, &kind, i, &case, &ours, &kafka)?;
                }
            }
        }
        if (i + 1) % 10_000 == 0 {
            eprintln!("krec-diff: {} cases", i + 1);
        }
    }
    println!(
        "cases per class ({} cases, seed {}):",
        args.cases, args.seed
    );
    for (class, n) in &counts {
        println!("  {:<20} {n}", class.name());
    }
    let pinned_list: &[(&str, &str)] = if args.produce {
        &PINNED_PRODUCE
    } else {
        &PINNED
    };
    for (name, why) in pinned_list {
        if let Some(n) = pins.get(name) {
            println!("  pinned {name}: {n} ({why})");
        }
    }
    if !kinds.is_empty() {
        println!("disagreements (class, krecords error, Kafka exception: count, first case):");
    }
    for ((class, ours, kafka), (n, first, detail)) in &kinds {
        let case = seeds.case(args.seed, *first);
        println!(
            "  {} | {ours} | {kafka}: {n}, first case {first} ({}): {}",
            class.name(),
            case.origin,
            detail.chars().take(300).collect::<String>()
        );
    }
    let failed: u64 = kinds.values().map(|k| k.0).sum();
    println!("{} passed, {failed} failed", args.cases - failed);
    Ok(failed == 0)
}

fn save(
    mode: &str,
    dir: &Path,
    kind: &Kind,
    index: u64,
    case: &krecords_differential::gen::Case,
    ours: &Value,
    kafka: &Value,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let stem = format!("{}-{}", kind.0.name(), index);
    let bin = dir.join(format!("{stem}.bin"));
    std::fs::write(&bin, &case.bytes).map_err(|e| format!("{}: {e}", bin.display()))?;
    let meta = json!({
        "origin": case.origin,
        "mode": mode,
        "class": kind.0.name(),
        "krecords": ours,
        "kafka": kafka,
    });
    let path = dir.join(format!("{stem}.json"));
    let text = serde_json::to_string_pretty(&meta).unwrap_or_default();
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
}
