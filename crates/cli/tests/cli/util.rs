//! Running the binary and the shared fixtures.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;

/// docs/design.md's two-record "hello"/"world" v2 batch as kafka-python 3.0.12 writes it
/// (85 bytes).
pub const HELLO_HEX: &str = "0000000000000000000000490000000002dbda21c90000000000010000018f125c74000000018f125c7400ffffffffffffffffffffffffffff0000000216000000010a68656c6c6f0016000002010a776f726c6400";

/// The records of the hello/world batch as `krec build` input.
pub const HELLO_INPUT: &str =
    "{\"timestamp\":1714000000000,\"value\":\"hello\"}\n{\"timestamp\":1714000000000,\"value\":\"world\"}\n";

/// `krec build` of a commit marker of producer 1, epoch 0 (more options may follow).
pub const COMMIT_MARKER: [&str; 7] = [
    "build",
    "--control",
    "commit",
    "--producer-id",
    "1",
    "--producer-epoch",
    "0",
];

/// The outcome of one run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Run {
    /// Stdout as text (lossy: some runs write binary entries).
    pub fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Asserts exit 0 and returns stdout as text.
    #[track_caller]
    pub fn ok(&self) -> String {
        assert_eq!(self.code, 0, "exit code; stderr: {}", self.stderr);
        self.out()
    }

    /// Asserts exit `code` with `needle` in stderr and returns the run.
    #[track_caller]
    pub fn fails(&self, code: i32, needle: &str) -> &Self {
        assert_eq!(self.code, code, "{}", self.stderr);
        assert!(self.stderr.contains(needle), "{}", self.stderr);
        self
    }

    /// Asserts exit `code` with `needle` in stdout (where verify and explain report problems)
    /// and returns the run.
    #[track_caller]
    pub fn reports(&self, code: i32, needle: &str) -> &Self {
        let out = self.out();
        assert_eq!(self.code, code, "exit code; stdout: {out}");
        assert!(out.contains(needle), "{out}");
        self
    }

    /// Asserts stderr is one line.
    #[track_caller]
    pub fn one_line(&self) {
        assert_eq!(self.stderr.lines().count(), 1, "{}", self.stderr);
    }

    /// Stdout parsed as one JSON value.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.out()))
    }

    /// Stdout parsed as JSON lines.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.out()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

/// The `krec` binary under test.
pub fn krec() -> Command {
    // KREC_TEST_BIN runs the tests against another build (an older binary, to show which
    // tests it fails); by default, this crate's.
    Command::new(
        std::env::var_os("KREC_TEST_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_krec").into()),
    )
}

/// A started `krec` and the thread writing its standard input.
pub type Started = (Child, JoinHandle<()>);

/// Starts `cmd` with piped standard streams and `stdin` written from a thread.
pub fn start(cmd: &mut Command, stdin: Vec<u8>) -> Started {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn krec");
    let mut input = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    (child, writer)
}

/// Waits for a [`start`]ed `krec` and collects its outcome.
pub fn finish((child, writer): Started) -> Run {
    let out = child.wait_with_output().expect("wait for krec");
    writer.join().expect("stdin writer");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `krec args...` in `dir` with `stdin`.
pub fn run_in(dir: &Path, args: &[&str], stdin: &[u8]) -> Run {
    finish(start(krec().args(args).current_dir(dir), stdin.to_vec()))
}

/// Runs `krec args...` in the current directory with no input.
pub fn run(args: &[&str]) -> Run {
    run_in(Path::new("."), args, b"")
}

/// A temporary directory and helpers for files in it.
pub struct Dir {
    pub tmp: tempfile::TempDir,
}

impl Dir {
    pub fn new() -> Self {
        Dir {
            tmp: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// The path as a string argument.
    pub fn arg(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }

    pub fn write(&self, name: &str, bytes: &[u8]) -> String {
        std::fs::write(self.path(name), bytes).expect("write fixture");
        self.arg(name)
    }

    pub fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path(name)).expect("read output")
    }

    /// Runs krec in this directory.
    pub fn run(&self, args: &[&str], stdin: &[u8]) -> Run {
        run_in(self.tmp.path(), args, stdin)
    }

    /// Writes docs/design.md's hello/world batch as `name` (with `krec build`) and returns its
    /// path.
    pub fn hello(&self, name: &str) -> String {
        let r = self.run(
            &["build", "--partition-leader-epoch", "0", "--output", name],
            HELLO_INPUT.as_bytes(),
        );
        r.ok();
        self.arg(name)
    }

    /// Runs `krec gen` with `args` into `name` and returns its path.
    pub fn gen(&self, name: &str, args: &[&str]) -> String {
        let mut all = vec!["gen", "--output", name];
        all.extend_from_slice(args);
        self.run(&all, b"").ok();
        self.arg(name)
    }

    /// `all.log`, 20,000 records of 200 random bytes (over 4 MB, too big for a disk that
    /// `run_with_file_limit` fills), and an empty directory `small` to write into.
    pub fn big_log_and_small_dir(&self) -> String {
        let args = [
            "--records",
            "20000",
            "--value-size",
            "200",
            "--content",
            "random",
        ];
        let all = self.gen("all.log", &args);
        std::fs::create_dir(self.path("small")).unwrap();
        all
    }
}

impl Dir {
    /// A cleanly closed partition directory `name` of `records` JSON records (keys `k<i>`,
    /// values `value-<i>`) in batches of 5 (offsets 5i..=5i+4), in segments of 20 records
    /// (bases 0, 20, 40, ...). Returns its path.
    pub fn partition(&self, name: &str, records: usize) -> String {
        let log = self.arg(name);
        self.run(
            &["log", "create", &log, "--config", "segment.bytes=700"],
            b"",
        )
        .ok();
        let lines: String = (0..records)
            .map(|i| format!("{{\"key\":\"k{i}\",\"value\":\"value-{i}\"}}\n"))
            .collect();
        self.run(
            &["log", "append", &log, "--records-per-batch", "5"],
            lines.as_bytes(),
        )
        .ok();
        log
    }

    /// Changes the bytes of segment `base` of the partition directory `name`; returns the
    /// segment's path.
    pub fn damage_segment(&self, name: &str, base: i64, f: impl FnOnce(&mut Vec<u8>)) -> String {
        let segment = format!("{name}/{base:020}.log");
        let mut bytes = self.read(&segment);
        f(&mut bytes);
        self.write(&segment, &bytes)
    }
}

/// Renames the third segment of partition directory `dir` (files `.log`, `.index`,
/// `.timeindex`) one offset below its base, so that it overlaps the segment before: a
/// directory a broker refuses. Returns (the base it is now named for, its real base).
pub fn misname_third_segment(d: &Dir, dir: &str) -> (i64, i64) {
    let mut bases: Vec<i64> = std::fs::read_dir(d.path(dir))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".log").map(|b| b.parse().unwrap())
        })
        .collect();
    bases.sort();
    assert!(bases.len() >= 3, "{bases:?}");
    let (named, real) = (bases[2] - 1, bases[2]);
    for ext in ["log", "index", "timeindex"] {
        let from = d.path(&format!("{dir}/{real:020}.{ext}"));
        if from.exists() {
            std::fs::rename(&from, d.path(&format!("{dir}/{named:020}.{ext}"))).unwrap();
        }
    }
    (named, real)
}

/// Every path below `dir` (directories and files, depth first).
pub fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut all = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            all.push(e.path());
            all.extend(walk(&e.path()));
        }
    }
    all
}

/// The base offsets of the segments in `krec log info`'s JSON.
pub fn segment_bases(info: &serde_json::Value) -> Vec<i64> {
    ints(info["segments"].as_array().unwrap(), "base_offset")
}

/// The integer `field` of each of `values`.
pub fn ints(values: &[serde_json::Value], field: &str) -> Vec<i64> {
    values.iter().map(|v| v[field].as_i64().unwrap()).collect()
}

/// The offsets of the records of JSON entry lines (`dump --deep --format json`).
pub fn record_offsets(lines: &[serde_json::Value]) -> Vec<i64> {
    lines
        .iter()
        .flat_map(|l| l["records"].as_array().unwrap().clone())
        .map(|r| r["offset"].as_i64().unwrap())
        .collect()
}

/// CRC-32C (Castagnoli), bit by bit, independent of the codec.
pub fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Bytes of a zigzag varint or varlong, computed independently of the codec.
pub fn zigzag_len(v: i64) -> usize {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    let mut n = 1;
    while z >= 0x80 {
        z >>= 7;
        n += 1;
    }
    n
}

/// Runs `krec args...` in `d` with `stdin`, its files limited to `blocks` blocks of `ulimit -f`
/// (512 or 1024 bytes, by the shell) and SIGXFSZ ignored: a write past the limit fails with
/// "File too large", as one on a full disk fails with "No space left on device".
pub fn run_with_file_limit(d: &Dir, blocks: u64, args: &[&str], stdin: &[u8]) -> Run {
    let script = format!("trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" \"$@\"");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(script)
        .arg(krec().get_program())
        .args(args)
        .current_dir(d.tmp.path());
    finish(start(&mut cmd, stdin.to_vec()))
}

/// Runs `args` as [`run_with_file_limit`] does and checks that it fails with exit 2 and
/// "cannot write FILE: File too large", leaving `file`'s earlier bytes (`earlier`) as they were
/// and no temporary file beside it.
pub fn fails_keeping_earlier(d: &Dir, blocks: u64, args: &[&str], stdin: &[u8], file: &str) {
    let r = run_with_file_limit(d, blocks, args, stdin);
    r.fails(2, &format!("cannot write {file}: File too large"));
    let kept = d.read(file);
    assert!(
        kept == b"earlier",
        "{file} was changed: {} bytes",
        kept.len()
    );
    assert_eq!(temporaries(d, "."), Vec::<String>::new());
}

/// The names in `d`'s directory `dir` that are temporary outputs (`.NAME.krec-tmp-PID`).
pub fn temporaries(d: &Dir, dir: &str) -> Vec<String> {
    std::fs::read_dir(d.path(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("krec-tmp"))
        .collect()
}
