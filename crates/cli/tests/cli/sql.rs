//! `krec sql`: the text, JSON and CSV outputs and the Parquet file of a query over a partition
//! directory, each answer computed from what a read_committed consumer gets; an exported
//! dataset as a table; the exit codes of a query DataFusion refuses (2) and a corrupt source (1).

use crate::export::{consumed, export, write_log};
use crate::util::{run, walk, Dir};
use std::collections::BTreeMap;
use std::path::Path;

/// A partition directory `events-0` of `d` (see [`write_log`]): key `key-{o % 13}`, value
/// `value-{o}`, some records in aborted transactions.
fn partition(d: &Dir) -> std::path::PathBuf {
    let part = d.path("events-0");
    write_log(&part, 12);
    part
}

/// Records per key of what a consumer of `part` gets, in key order.
fn per_key(part: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (o, _) in consumed(part) {
        *out.entry(format!("key-{}", o % 13)).or_default() += 1;
    }
    out
}

const PER_KEY: &str = "SELECT key, count(*) AS n FROM t GROUP BY key ORDER BY key";

/// Runs `krec sql QUERY --table t=SOURCE --key-format string --value-format string MORE...`.
fn sql(query: &str, source: &Path, more: &[&str]) -> crate::util::Run {
    let table = format!("t={}", source.display());
    let mut args = vec![
        "sql",
        query,
        "--table",
        &table,
        "--key-format",
        "string",
        "--value-format",
        "string",
    ];
    args.extend_from_slice(more);
    run(&args)
}

/// A text table as arrow's pretty printer draws it: cells left-aligned in columns as wide as
/// their widest cell.
fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].len())
                .chain([header[c].len()])
                .max()
                .unwrap()
        })
        .collect();
    let border: String = widths
        .iter()
        .map(|w| format!("+{}", "-".repeat(w + 2)))
        .collect::<String>()
        + "+\n";
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("| {c:<w$} "))
            .collect::<String>()
            + "|\n"
    };
    let mut out = border.clone();
    out += &line(header.to_vec());
    out += &border;
    for r in rows {
        out += &line(r.iter().map(String::as_str).collect());
    }
    out + &border
}

#[test]
fn sql_prints_a_text_table_json_lines_and_csv() {
    let d = Dir::new();
    let part = partition(&d);
    let want = per_key(&part);
    assert_eq!(want.len(), 13);

    let rows: Vec<Vec<String>> = want
        .iter()
        .map(|(k, n)| vec![k.clone(), n.to_string()])
        .collect();
    let text = sql(PER_KEY, &part, &[]).ok();
    assert_eq!(text, text_table(&["key", "n"], &rows));

    let json = sql(PER_KEY, &part, &["--format", "json"]).json_lines();
    let got: Vec<(String, u64)> = json
        .iter()
        .map(|v| {
            (
                v["key"].as_str().unwrap().to_string(),
                v["n"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want.clone().into_iter().collect::<Vec<_>>());

    let csv = sql(PER_KEY, &part, &["--format", "csv"]).ok();
    let mut expected = "key,n\n".to_string();
    for (k, n) in &want {
        expected += &format!("{k},{n}\n");
    }
    assert_eq!(csv, expected);
}

#[test]
fn sql_writes_a_parquet_file_that_reads_back() {
    let d = Dir::new();
    let part = partition(&d);
    let file = d.path("result.parquet");
    let query = "SELECT offset, value FROM t WHERE offset >= 100 ORDER BY offset";
    let r = sql(query, &part, &["--output", file.to_str().unwrap()]);
    assert_eq!(r.ok(), "", "nothing on stdout");
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    let mut got = Vec::new();
    for b in krecords_export::read_file(&file).unwrap() {
        let offsets = b.column(0).as_primitive::<Int64Type>();
        let values = b.column(1).as_string::<i32>();
        for i in 0..b.num_rows() {
            got.push((offsets.value(i), values.value(i).as_bytes().to_vec()));
        }
    }
    let want: Vec<_> = consumed(&part).into_iter().filter(|r| r.0 >= 100).collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

/// One .parquet file is a table of its own columns: a query's --output read back, and a file
/// of an exported dataset (it used to be read as segments: "truncated entry", exit 1).
#[test]
fn one_parquet_file_is_a_table() {
    let d = Dir::new();
    let part = partition(&d);
    let file = d.path("result.parquet");
    let query = "SELECT offset, value FROM t WHERE offset >= 100";
    sql(query, &part, &["--output", file.to_str().unwrap()]).ok();
    let want = consumed(&part).iter().filter(|r| r.0 >= 100).count();
    let count = "SELECT count(*) AS n, min(offset) AS lo FROM t";
    assert_eq!(
        sql(count, &file, &["--format", "csv"]).ok(),
        format!("n,lo\n{want},100\n")
    );
    let out = d.path("out");
    export(&part, &out, &[]).ok();
    let files: Vec<_> = walk(&out)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    let all = consumed(&part).len();
    let mut total = 0;
    for f in &files {
        let r = sql("SELECT count(*) AS n FROM t", f, &["--format", "csv"]);
        total += r.ok().lines().nth(1).unwrap().parse::<usize>().unwrap();
    }
    assert_eq!(total, all, "{files:?}");
}

#[test]
fn an_exported_dataset_is_a_table() {
    let d = Dir::new();
    let part = partition(&d);
    let out = d.path("out");
    export(&part, &out, &[]).ok();
    // The dataset's value column is binary: the query casts it.
    let query = "SELECT topic, partition, count(*) AS n, sum(offset) AS s, \
                 max(CAST(value AS VARCHAR)) AS v FROM t GROUP BY topic, partition";
    let all = consumed(&part);
    let sum: i64 = all.iter().map(|r| r.0).sum();
    let max = all.iter().map(|r| r.1.clone()).max().unwrap();
    let want = format!(
        "topic,partition,n,s,v\nevents,0,{},{sum},{}\n",
        all.len(),
        String::from_utf8(max).unwrap()
    );
    assert_eq!(sql(query, &out, &["--format", "csv"]).ok(), want);
    // The same query on the partition directory.
    assert_eq!(sql(query, &part, &["--format", "csv"]).ok(), want);
    // --isolation does not apply to a dataset (it holds what the export kept): said, not
    // silently ignored.
    let r = sql(
        query,
        &out,
        &["--format", "csv", "--isolation", "read-uncommitted"],
    );
    assert_eq!(r.ok(), want);
    let said = format!(
        "krec sql: table t: the dataset {} was exported at read_committed; its rows are what it \
         holds (--isolation applies to sources, not datasets)",
        out.display()
    );
    assert!(r.stderr.contains(&said), "{}", r.stderr);
}

/// A dataset exported at read_uncommitted was queried at the default read_committed without a
/// word (the note came only with --isolation): its level, from its files' metadata, is said
/// when it differs from the query's, and a dataset mixing levels is said to.
#[test]
fn a_dataset_exported_at_another_isolation_is_said() {
    let d = Dir::new();
    let part = partition(&d);
    let query = "SELECT count(*) AS n FROM t";
    let uncommitted = d.path("uncommitted");
    export(&part, &uncommitted, &["--isolation", "read-uncommitted"]).ok();
    let r = sql(query, &uncommitted, &["--format", "csv"]);
    r.ok();
    let said = format!(
        "krec sql: table t: the dataset {} was exported at read_uncommitted; its rows are what \
         it holds (--isolation applies to sources, not datasets)\n",
        uncommitted.display()
    );
    assert_eq!(r.stderr, said);
    // At the level it was exported at: said only when asked for.
    let r = sql(query, &uncommitted, &["--isolation", "read-uncommitted"]);
    r.ok();
    assert!(
        r.stderr
            .contains("isolation (read_uncommitted) kept, and --isolation does not apply"),
        "{}",
        r.stderr
    );
    let committed = d.path("committed");
    export(&part, &committed, &[]).ok();
    let r = sql(query, &committed, &[]);
    r.ok();
    assert_eq!(r.stderr, "");
    // Files of both levels in one dataset (put together by another tool: export refuses).
    let dir = committed.join("topic=events/partition=0");
    for f in std::fs::read_dir(uncommitted.join("topic=events/partition=0")).unwrap() {
        let f = f.unwrap();
        let name = f.file_name().to_string_lossy().replace("00000", "10000");
        std::fs::copy(f.path(), dir.join(name)).unwrap();
    }
    let r = sql(query, &committed, &[]);
    r.ok();
    assert!(
        r.stderr
            .contains("mixes files exported at read_committed (")
            && r.stderr.contains(") and read_uncommitted ("),
        "{}",
        r.stderr
    );
}

/// An Arrow IPC dataset is a table as a Parquet one is; a dataset of both formats is refused
/// (it used to read only the Parquet files: a count too small, silently).
#[test]
fn an_arrow_dataset_is_a_table_and_a_mixed_one_is_refused() {
    let d = Dir::new();
    let part = partition(&d);
    let all = consumed(&part);
    let out = d.path("arrow");
    export(&part, &out, &["--format", "arrow"]).ok();
    let query = "SELECT count(*) AS n, sum(offset) AS s, max(value) AS v FROM t";
    let sum: i64 = all.iter().map(|r| r.0).sum();
    let max = String::from_utf8(all.iter().map(|r| r.1.clone()).max().unwrap()).unwrap();
    let want = format!("n,s,v\n{},{sum},{max}\n", all.len());
    assert_eq!(sql(query, &out, &["--format", "csv"]).ok(), want);

    // A Parquet file put next to the Arrow ones (by another tool: krec export refuses).
    let mixed = d.path("mixed");
    let dir = mixed.join("topic=events/partition=0");
    std::fs::create_dir_all(&dir).unwrap();
    for f in std::fs::read_dir(out.join("topic=events/partition=0")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), dir.join(f.file_name())).unwrap();
    }
    let parquet = d.path("parquet");
    export(&part, &parquet, &[]).ok();
    for f in std::fs::read_dir(parquet.join("topic=events/partition=0")).unwrap() {
        let f = f.unwrap();
        let name = f.file_name().to_string_lossy().replace("00000", "10000");
        std::fs::copy(f.path(), dir.join(name)).unwrap();
    }
    let r = sql(query, &mixed, &[]);
    r.fails(2, "mixes");
    assert!(
        r.stderr.contains("Parquet") && r.stderr.contains("Arrow"),
        "{}",
        r.stderr
    );
}

/// `--key-format string` / `--value-format string` make a dataset's binary columns strings,
/// as they do a source's: bytes that are not UTF-8 are null and counted on stderr.
#[test]
fn key_and_value_formats_apply_to_a_dataset() {
    let d = Dir::new();
    let part = d.path("bytes-0");
    std::fs::create_dir(&part).unwrap();
    let mut b = krecords_codec::write::V2Builder::new(0);
    for (k, v) in [
        (&b"a"[..], &b"ok"[..]),
        (b"\xff", b"\xc3\x28"),
        (b"b", b"fine"),
    ] {
        b.append(&krecords_codec::write::NewRecord::new(1, Some(k), Some(v)))
            .unwrap();
    }
    std::fs::write(part.join("00000000000000000000.log"), b.finish().unwrap()).unwrap();
    let out = d.path("out");
    export(&part, &out, &[]).ok();
    let query = "SELECT offset, key, value, length(value) AS n FROM t ORDER BY offset";
    let want = "offset,key,value,n\n0,a,ok,2\n1,,,\n2,b,fine,4\n";
    for source in [&part, &out] {
        let r = sql(query, source, &["--format", "csv"]);
        assert_eq!(r.ok(), want, "{}", source.display());
        assert!(
            r.stderr.contains("1 key value(s) were not UTF-8")
                && r.stderr.contains("1 value value(s) were not UTF-8"),
            "{}: {}",
            source.display(),
            r.stderr
        );
    }
    // Without them the dataset's columns stay binary.
    let table = format!("t={}", out.display());
    let r = run(&[
        "sql",
        "SELECT arrow_typeof(key) AS k FROM t LIMIT 1",
        "-t",
        &table,
        "--format",
        "csv",
    ]);
    let types = r.ok();
    assert!(types.contains("Binary"), "{types}");
}

/// `--format csv` and the text table wrote a null key or value exactly as an empty one
/// (`0,,`): in CSV a null is an empty field and an empty string `""` (DuckDB's CSV), in the
/// table a null is `NULL`.
#[test]
fn a_null_is_told_from_an_empty_string() {
    let d = Dir::new();
    let part = d.path("empty-0");
    std::fs::create_dir(&part).unwrap();
    let mut b = krecords_codec::write::V2Builder::new(0);
    for (k, v) in [(Some(&b""[..]), None), (None, Some(&b""[..]))] {
        b.append(&krecords_codec::write::NewRecord::new(1, k, v))
            .unwrap();
    }
    std::fs::write(part.join("00000000000000000000.log"), b.finish().unwrap()).unwrap();
    let query = "SELECT \"offset\", key, value FROM t ORDER BY 1";
    let csv = sql(query, &part, &["--format", "csv"]).ok();
    assert_eq!(csv, "offset,key,value\n0,\"\",\n1,,\"\"\n");
    let rows = [["0", "", "NULL"], ["1", "NULL", ""]].map(|r| r.map(String::from).to_vec());
    let text = sql(query, &part, &[]).ok();
    assert_eq!(text, text_table(&["offset", "key", "value"], &rows));
    let json = sql(query, &part, &["--format", "json"]).ok();
    assert_eq!(
        json,
        "{\"offset\":0,\"key\":\"\",\"value\":null}\n{\"offset\":1,\"key\":null,\"value\":\"\"}\n"
    );
}

/// A result without rows still has its header, in every format that has one.
#[test]
fn an_empty_result_keeps_its_header() {
    let d = Dir::new();
    let part = partition(&d);
    let query = "SELECT offset, key FROM t WHERE offset < 0";
    assert_eq!(sql(query, &part, &["--format", "csv"]).ok(), "offset,key\n");
    let text = sql(query, &part, &[]).ok();
    assert!(text.contains("| offset | key |"), "{text}");
    assert_eq!(sql(query, &part, &["--format", "json"]).ok(), "");
    // An output that is a directory is refused before the query runs, naming a file.
    let dir = d.path("results");
    std::fs::create_dir(&dir).unwrap();
    sql(query, &part, &["-o", dir.to_str().unwrap()]).fails(2, "is a directory");
}

#[test]
fn a_query_datafusion_refuses_exits_2_with_its_message() {
    let d = Dir::new();
    let part = partition(&d);
    let r = sql("SELECT nope FROM t", &part, &[]);
    r.fails(2, "nope");
    assert!(r.stdout.is_empty());
    sql("SELEC 1", &part, &[]).fails(2, "SELEC");
    sql("SELECT * FROM missing", &part, &[]).fails(2, "missing' not found (the tables are: t)");
    // `offset` is an SQL keyword: after another column the parser takes it for OFFSET. The
    // error says how to name the column, and the quoted name works.
    sql("SELECT key, offset FROM t LIMIT 1", &part, &[])
        .fails(2, "offset is an SQL keyword: name the column \"offset\"");
    let quoted = sql(
        "SELECT key, \"offset\" FROM t ORDER BY 2 LIMIT 1",
        &part,
        &[],
    )
    .ok();
    assert!(quoted.contains("| key "), "{quoted}");
    // No hint where the word is quoted or part of another.
    let r = sql("SELEC \"offset\", my_offset FROM t", &part, &[]);
    r.fails(2, "SELEC");
    assert!(!r.stderr.contains("SQL keyword"), "{}", r.stderr);
    // CSV holds no lists: refused before anything is written.
    let r = sql("SELECT * FROM t", &part, &["--format", "csv"]);
    r.fails(2, "--format csv: column headers is a List");
    assert!(r.stdout.is_empty(), "{:?}", r.out());
}

/// DataFusion's settings come from its `DATAFUSION_*` environment variables; a value a
/// setting cannot take is a usage error naming it.
#[test]
fn datafusion_settings_come_from_the_environment() {
    let d = Dir::new();
    let part = partition(&d);
    let table = format!("t={}", part.display());
    let query = "SELECT value FROM information_schema.df_settings \
                 WHERE name = 'datafusion.execution.batch_size'";
    let with = |value: &str| {
        crate::util::finish(crate::util::start(
            crate::util::krec()
                .args(["sql", query, "--table", &table, "--format", "csv"])
                .env("DATAFUSION_EXECUTION_BATCH_SIZE", value),
            Vec::new(),
        ))
    };
    assert_eq!(with("1234").ok(), "value\n1234\n");
    assert_eq!(
        run(&["sql", query, "--table", &table, "--format", "csv"]).ok(),
        "value\n8192\n"
    );
    with("many").fails(2, "many");
}

#[test]
fn a_corrupt_source_exits_1() {
    let d = Dir::new();
    let part = partition(&d);
    let segments = krecords_source::dir_logs(&part).unwrap();
    let bad = segments.last().unwrap();
    let mut bytes = std::fs::read(bad).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(bad, &bytes).unwrap();
    sql("SELECT count(*) FROM t", &part, &[])
        .fails(1, &format!("{}: corrupt entry at byte 0", bad.display()));
}

/// A `kafka://` topic as a table: the sources layer opens it from inside DataFusion's runtime
/// (it once panicked there, "Cannot start a runtime from within a runtime"), and the answer
/// is computed from what was appended to the fake cluster; a partition filter reads one.
#[test]
fn a_live_topic_is_a_table() {
    let cluster = krecords_testkit::cluster::FakeCluster::start(&[("live", 2)]);
    for p in 0..2i64 {
        let batches = krecords_testkit::batches::numbered(10 + 5 * p, 20, |o| {
            (
                1_714_000_000_000 + o,
                format!("key-{}", o % 3).into_bytes(),
                format!("p{p}-{o}").into_bytes(),
            )
        });
        cluster.append("live", p as i32, &batches);
    }
    let url = std::path::PathBuf::from(format!("kafka://{}/live", cluster.addr()));
    let query = "SELECT partition, key, count(*) AS n, max(offset) AS m FROM t \
                 GROUP BY partition, key ORDER BY partition, key";
    let mut want = "partition,key,n,m\n".to_string();
    for p in 0..2i64 {
        let records = (10 + 5 * p) * 20;
        for k in 0..3 {
            let n = (0..records).filter(|o| o % 3 == k).count();
            let m = (0..records).filter(|o| o % 3 == k).max().unwrap();
            want += &format!("{p},key-{k},{n},{m}\n");
        }
    }
    assert_eq!(sql(query, &url, &["--format", "csv"]).ok(), want);
    let one = "SELECT count(*) AS n FROM t WHERE partition = 1";
    assert_eq!(sql(one, &url, &["--format", "csv"]).ok(), "n\n300\n");
    // A list of bootstrap servers: its commas are the URL's, not the table's list (the
    // table was split into `kafka://HOST` and `HOST/live`).
    let port = cluster.broker().port();
    let listed = format!("kafka://127.0.0.1:{port},localhost:{port}/live");
    let listed = std::path::PathBuf::from(listed);
    assert_eq!(sql(one, &listed, &["--format", "csv"]).ok(), "n\n300\n");
    // A topic the cluster does not have is the user's mistake: exit 2, named.
    let missing = std::path::PathBuf::from(format!("kafka://{}/nope", cluster.addr()));
    sql("SELECT count(*) FROM t", &missing, &[]).fails(2, "nope");
}

/// read_committed stops at an open transaction: `sql` answers for the records before it and
/// says where and why it stopped, as `dump` does; `export`'s summary says it too (both were
/// silent before).
#[test]
fn a_stop_at_the_last_stable_offset_is_said() {
    let d = Dir::new();
    let log = d.arg("open-0");
    d.run(&["log", "create", &log], b"").ok();
    let append = |more: &[&str], n: usize| {
        let lines: String = (0..n)
            .map(|i| format!("{{\"value\":\"v{i}\"}}\n"))
            .collect();
        let mut args = vec!["log", "append", log.as_str()];
        args.extend_from_slice(more);
        d.run(&args, lines.as_bytes()).ok();
    };
    append(&[], 3);
    append(
        &[
            "--producer-id",
            "9",
            "--producer-epoch",
            "0",
            "--transactional",
        ],
        2,
    );
    append(&[], 2);
    let r = sql("SELECT count(*) AS n FROM t", Path::new(&log), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.out().contains('3'), "{}", r.out());
    let said = "stopped at last stable offset 3; high watermark 7: an open transaction from \
                producer 9 since offset 3";
    assert!(r.stderr.contains(said), "{}", r.stderr);
    // With offset bounds pushed down that reach past it, too.
    let bounded = "SELECT count(*) AS n FROM t WHERE \"offset\" >= 1 AND \"offset\" < 100";
    let r = sql(bounded, Path::new(&log), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.out().contains('2'), "{}", r.out());
    assert!(r.stderr.contains(said), "{}", r.stderr);
    let out = d.arg("lake");
    let r = d.run(&["export", &log, "--output", &out], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.out().contains(said), "{}", r.out());
}

/// `--output` inside a source of the query (a segment of a partition directory named through
/// its log.dirs root, the segment file itself, a partition directory) is refused with the
/// words of `krec export`, before anything is read or written: the segment stays as it was
/// (it used to be overwritten, exit 0).
#[test]
fn sql_output_inside_a_source_is_refused() {
    let d = Dir::new();
    let part = partition(&d);
    let segment = krecords_source::dir_logs(&part).unwrap()[0].clone();
    let before = std::fs::read(&segment).unwrap();
    let root = d.path("");
    let seg = segment.to_str().unwrap();
    let query = "SELECT 1 AS x";
    let r = sql(query, &root, &["-o", seg]);
    r.fails(
        2,
        &format!(
            "the output {seg} is the source directory {} or inside it: its files would land in \
             the data read",
            root.display()
        ),
    );
    assert!(r.stdout.is_empty());
    sql(query, &part, &["-o", seg]).fails(2, "or inside it");
    sql(query, &segment, &["-o", seg]).fails(
        2,
        &format!("the output {seg} is the source file {seg}: writing it would destroy"),
    );
    // A new file inside the partition directory: a broker would take it for its own.
    let inside = part.join("result.parquet");
    sql(query, &part, &["-o", inside.to_str().unwrap()]).fails(2, "or inside it");
    assert!(!inside.exists());
    // A source among several, and one a glob pattern names.
    let table = format!("t={}", d.path("other").display());
    let glob = format!("u={}", d.path("events-*").display());
    std::fs::create_dir(d.path("other")).unwrap();
    run(&["sql", query, "--table", &table, "--table", &glob, "-o", seg]).fails(2, "or inside it");
    // A .parquet table is a source too.
    let file = d.path("result.parquet");
    sql("SELECT key FROM t", &part, &["-o", file.to_str().unwrap()]).ok();
    let f = file.to_str().unwrap();
    run(&["sql", "SELECT 1", "--table", &format!("t={f}"), "-o", f]).fails(2, "is the source file");
    assert_eq!(std::fs::read(&segment).unwrap(), before);
}

/// `--output` in a directory that does not exist is a usage error: no directory is created
/// (it used to create the missing parents).
#[test]
fn sql_output_needs_an_existing_directory() {
    let d = Dir::new();
    let part = partition(&d);
    let out = d.path("missing/deeper/out.parquet");
    sql("SELECT 1 AS x", &part, &["-o", out.to_str().unwrap()]).fails(
        2,
        &format!(
            "the directory {} does not exist (it is not created",
            d.path("missing/deeper").display()
        ),
    );
    assert!(!d.path("missing").exists());
}

/// The result is written under a temporary name and renamed when complete: a query that fails
/// while it runs leaves an existing output as it was and no temporary file; one that succeeds
/// replaces it (an existing Parquet file that is no source may be overwritten; another file
/// is refused).
#[test]
fn sql_output_is_written_whole_or_not_at_all() {
    let d = Dir::new();
    let part = partition(&d);
    let out = d.path("out/result.parquet");
    std::fs::create_dir(d.path("out")).unwrap();
    std::fs::write(&out, b"notes").unwrap();
    let o = out.to_str().unwrap();
    sql("SELECT 1 AS x", &part, &["-o", o]).fails(2, "exists and is not a Parquet file");
    assert_eq!(std::fs::read(&out).unwrap(), b"notes");
    std::fs::write(&out, b"PAR1 an earlier file").unwrap();
    sql(
        "SELECT \"offset\" / (\"offset\" - 100) AS x FROM t",
        &part,
        &["-o", o],
    )
    .fails(2, "Divide by zero");
    assert_eq!(std::fs::read(&out).unwrap(), b"PAR1 an earlier file");
    let names: Vec<_> = std::fs::read_dir(d.path("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["result.parquet"]);
    sql("SELECT count(*) AS n FROM t", &part, &["-o", o]).ok();
    let n = run(&[
        "sql",
        "SELECT n FROM t",
        "--table",
        &format!("t={o}"),
        "--format",
        "csv",
    ]);
    assert_eq!(n.ok(), format!("n\n{}\n", consumed(&part).len()));
    assert_eq!(std::fs::read_dir(d.path("out")).unwrap().count(), 1);
}

/// krec sql only reads: statements that write (COPY ... TO, INSERT) are usage errors saying
/// so (COPY used to overwrite a segment); DDL changes only the session and is allowed.
#[test]
fn sql_refuses_statements_that_write() {
    let d = Dir::new();
    let part = partition(&d);
    let segment = krecords_source::dir_logs(&part).unwrap()[0].clone();
    let before = std::fs::read(&segment).unwrap();
    let copy = format!(
        "COPY (SELECT \"offset\" FROM t) TO '{}' STORED AS CSV",
        segment.display()
    );
    let r = sql(&copy, &part, &[]);
    r.fails(
        2,
        "krec sql only reads: COPY writes (INSERT, UPDATE, DELETE, TRUNCATE and COPY are \
         refused); to write a result, use --output FILE.parquet",
    );
    assert!(r.stdout.is_empty());
    let elsewhere = format!("COPY (SELECT 1) TO '{}' STORED AS CSV", d.arg("x.csv"));
    sql(&elsewhere, &part, &[]).fails(2, "COPY writes");
    sql(&format!("EXPLAIN ANALYZE {elsewhere}"), &part, &[]).fails(2, "COPY writes");
    assert!(!d.path("x.csv").exists());
    sql("INSERT INTO t SELECT * FROM t", &part, &[]).fails(2, "INSERT writes");
    assert_eq!(std::fs::read(&segment).unwrap(), before);
    // They print nothing (the empty table of a result without columns was drawn `++`).
    assert_eq!(sql("CREATE VIEW v AS SELECT 1", &part, &[]).ok(), "");
    let ctas = "CREATE TABLE c AS SELECT key FROM t";
    assert_eq!(sql(ctas, &part, &[]).ok(), "");
    assert_eq!(sql(ctas, &part, &["--format", "csv"]).ok(), "");
}

/// A record whose timestamp no calendar date can show (`i64::MAX` ms): `--format csv` stopped
/// after the header and the row before it (exit 2, "row 0, column 1", counted in its batch),
/// the table and JSON wrote `ERROR: Cast error: ...` text in its place. Every format writes
/// its epoch milliseconds, says so on stderr, and exits 0.
#[test]
fn a_timestamp_past_the_calendar_is_written_as_its_epoch_milliseconds() {
    let d = Dir::new();
    let input = "{\"timestamp\":1714000000000,\"key\":\"a\",\"value\":\"x\"}\n\
                 {\"timestamp\":9223372036854775807,\"key\":\"b\",\"value\":\"y\"}\n";
    let built = d.run(&["build"], input.as_bytes());
    let segment = d.write("00000000000000000000.log", &built.stdout);
    let segment = Path::new(&segment);
    let query = "SELECT \"offset\", timestamp FROM t ORDER BY \"offset\"";
    let said = "1 date or time value(s) are outside the calendar's range";
    let csv = sql(query, segment, &["--format", "csv"]);
    assert_eq!(
        csv.ok(),
        "offset,timestamp\n0,2024-04-24T23:06:40Z\n1,9223372036854775807\n"
    );
    assert!(csv.stderr.contains(said), "{}", csv.stderr);
    let json = sql(query, segment, &["--format", "json"]);
    assert_eq!(
        json.ok(),
        "{\"offset\":0,\"timestamp\":\"2024-04-24T23:06:40Z\"}\n\
         {\"offset\":1,\"timestamp\":\"9223372036854775807\"}\n"
    );
    let table = sql(query, segment, &[]);
    let text = table.ok();
    assert!(text.contains("| 1      | 9223372036854775807  |"), "{text}");
    assert!(!text.contains("ERROR"), "{text}");
    assert!(table.stderr.contains(said), "{}", table.stderr);
}

/// `--output` on a full disk said `Parquet error: External: File too large` (the writer's
/// wrappers, no file named): it names the output as given.
#[test]
fn a_full_disk_names_the_parquet_output() {
    let d = Dir::new();
    let all = d.big_log_and_small_dir();
    let table = format!("t={all}");
    let args = [
        "sql",
        "SELECT * FROM t",
        "--table",
        &table,
        "--output",
        "small/r.parquet",
    ];
    let r = crate::util::run_with_file_limit(&d, 128, &args, b"");
    r.fails(
        2,
        "krec: cannot write small/r.parquet: File too large (os error 27)",
    )
    .one_line();
    assert!(!r.stderr.contains("Parquet error"), "{}", r.stderr);
    assert_eq!(crate::util::temporaries(&d, "small"), Vec::<String>::new());
    assert!(!d.path("small/r.parquet").exists());
}
