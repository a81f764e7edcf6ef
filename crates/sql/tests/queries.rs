//! `krecords-sql` queries on partition directories made here, each answer computed
//! independently from the records written; and the pushdown of projections and of partition,
//! offset and time filters, shown by what the scans read.

mod common;

use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::datatypes::{Int64Type, TimestampMillisecondType};
use datafusion::prelude::SessionContext;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_codec::Header;
use krecords_log::{AppendOrigin, Log, LogConfig};
use krecords_sql::{datafusion, new_context, KrecTable, ScanCounters, TableOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const T0: i64 = 1_714_000_000_000;
const PARTITIONS: i32 = 3;
const PER_PARTITION: i64 = 400;

/// A header: key, value (null kept).
type Head = (String, Option<String>);

/// One record as written (committed, so a read_committed consumer sees it).
#[derive(Debug, Clone)]
struct Rec {
    partition: i32,
    offset: i64,
    timestamp: i64,
    key: Option<String>,
    value: Option<String>,
    /// (key, value) in order, duplicates and null values kept.
    headers: Vec<Head>,
}

fn record(partition: i32, i: i64) -> (i64, Option<String>, Option<String>, Vec<Head>) {
    let n = i + i64::from(partition) * 7;
    let timestamp = T0 + i64::from(partition) * 30_000 + i * 1_500;
    let key = (n % 13 != 0).then(|| format!("k{}", n % 23));
    let value = (n % 11 != 0).then(|| format!("{{\"user\":\"u{}\",\"amount\":{}}}", n % 5, n % 97));
    let mut headers = Vec::new();
    if n % 3 == 0 {
        headers.push(("trace".to_string(), Some(format!("t{n}"))));
    }
    if n % 4 == 0 {
        headers.push(("trace".to_string(), None));
        headers.push(("source".to_string(), Some("app".to_string())));
    }
    (timestamp, key, value, headers)
}

/// `DIR/orders-P` for each partition (small segments: many files each) and `DIR/users-0`, with
/// an aborted transaction in `orders-0` that read_committed leaves out.
fn make_data(dir: &Path) -> (Vec<PathBuf>, Vec<Rec>) {
    let config = LogConfig {
        segment_bytes: 1024,
        index_interval_bytes: 128,
        ..LogConfig::default()
    };
    let mut recs = Vec::new();
    let mut parts = Vec::new();
    for p in 0..PARTITIONS {
        let path = dir.join(format!("orders-{p}"));
        let mut log = Log::create(&path, config.clone()).unwrap();
        let mut offset = 0;
        let mut i = 0;
        while i < PER_PARTITION {
            if p == 0 && i == 100 {
                let mut b = V2Builder::new(0).producer(9, 0, 0).transactional(true);
                for v in ["aborted-1", "aborted-2", "aborted-3"] {
                    b.append(&NewRecord::new(T0, Some(b"k0"), Some(v.as_bytes())))
                        .unwrap();
                }
                log.append(&b.finish().unwrap(), AppendOrigin::Client)
                    .unwrap();
                log.append_end_txn(9, 0, 0, false, T0).unwrap();
                offset += 4;
            }
            let mut b = V2Builder::new(0);
            for j in i..(i + 10) {
                let (timestamp, key, value, headers) = record(p, j);
                let hs: Vec<Header<'_>> = headers
                    .iter()
                    .map(|(k, v)| Header {
                        key: k.as_bytes(),
                        value: v.as_deref().map(str::as_bytes),
                    })
                    .collect();
                b.append(
                    &NewRecord::new(
                        timestamp,
                        key.as_deref().map(str::as_bytes),
                        value.as_deref().map(str::as_bytes),
                    )
                    .with_headers(&hs),
                )
                .unwrap();
                recs.push(Rec {
                    partition: p,
                    offset,
                    timestamp,
                    key,
                    value,
                    headers,
                });
                offset += 1;
            }
            log.append(&b.finish().unwrap(), AppendOrigin::Client)
                .unwrap();
            i += 10;
        }
        log.close().unwrap();
        parts.push(path);
    }
    let users = dir.join("users-0");
    let mut log = Log::create(&users, LogConfig::default()).unwrap();
    let mut b = V2Builder::new(0);
    for u in 0..4 {
        let (k, v) = (format!("u{u}"), format!("{{\"name\":\"name-{u}\"}}"));
        b.append(&NewRecord::new(T0, Some(k.as_bytes()), Some(v.as_bytes())))
            .unwrap();
    }
    log.append(&b.finish().unwrap(), AppendOrigin::Client)
        .unwrap();
    log.close().unwrap();
    parts.push(users);
    (parts, recs)
}

struct Fixture {
    _dir: tempfile::TempDir,
    ctx: SessionContext,
    rt: tokio::runtime::Runtime,
    recs: Vec<Rec>,
    orders: Arc<ScanCounters>,
    orders_dirs: Vec<PathBuf>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let (mut parts, recs) = make_data(dir.path());
    let users = parts.pop().unwrap();
    let orders = KrecTable::open(&parts, TableOptions::strings(), &mut || unreachable!()).unwrap();
    let users = KrecTable::open(&[users], TableOptions::strings(), &mut || unreachable!()).unwrap();
    let counters = orders.counters();
    let ctx = new_context().unwrap();
    ctx.register_table("orders", Arc::new(orders)).unwrap();
    ctx.register_table("users", Arc::new(users)).unwrap();
    Fixture {
        _dir: dir,
        ctx,
        rt: tokio::runtime::Runtime::new().unwrap(),
        recs,
        orders: counters,
        orders_dirs: parts,
    }
}

impl Fixture {
    fn query(&self, sql: &str) -> Vec<RecordBatch> {
        self.rt
            .block_on(async { self.ctx.sql(sql).await?.collect().await })
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Rows of the result as strings, one `Vec` per row (null: "NULL").
    fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        common::rows_of(&self.query(sql))
    }

    fn plan(&self, sql: &str) -> String {
        self.rt.block_on(async {
            let plan = self
                .ctx
                .sql(sql)
                .await
                .unwrap()
                .create_physical_plan()
                .await
                .unwrap();
            let text = datafusion::physical_plan::displayable(plan.as_ref())
                .indent(true)
                .to_string();
            text
        })
    }
}

fn null_or(s: &Option<String>) -> String {
    s.clone().unwrap_or_else(|| "NULL".into())
}

#[test]
fn group_by_key_counts_every_committed_record() {
    let f = fixture();
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for r in &f.recs {
        *want.entry(null_or(&r.key)).or_default() += 1;
    }
    let got: BTreeMap<String, u64> = f
        .rows("SELECT key, count(*) FROM orders GROUP BY key")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect();
    assert_eq!(got, want);
    assert!(!got.values().any(|_| got.contains_key("aborted-1")));
}

#[test]
fn count_distinct_keys_and_total() {
    let f = fixture();
    let distinct: BTreeSet<&String> = f.recs.iter().filter_map(|r| r.key.as_ref()).collect();
    let rows = f.rows("SELECT count(DISTINCT key), count(*), count(key) FROM orders");
    let keyed = f.recs.iter().filter(|r| r.key.is_some()).count();
    assert_eq!(
        rows,
        vec![vec![
            distinct.len().to_string(),
            f.recs.len().to_string(),
            keyed.to_string()
        ]]
    );
}

#[test]
fn tombstone_ratio_per_partition() {
    let f = fixture();
    let rows = f.rows(
        "SELECT partition, sum(CASE WHEN value IS NULL THEN 1 ELSE 0 END), count(*) \
         FROM orders GROUP BY partition ORDER BY partition",
    );
    let want: Vec<Vec<String>> = (0..PARTITIONS)
        .map(|p| {
            let of: Vec<&Rec> = f.recs.iter().filter(|r| r.partition == p).collect();
            let tomb = of.iter().filter(|r| r.value.is_none()).count();
            vec![p.to_string(), tomb.to_string(), of.len().to_string()]
        })
        .collect();
    assert_eq!(rows, want);
}

#[test]
fn time_buckets_of_a_minute() {
    let f = fixture();
    let mut want: BTreeMap<i64, u64> = BTreeMap::new();
    for r in &f.recs {
        *want
            .entry(r.timestamp.div_euclid(60_000) * 60_000)
            .or_default() += 1;
    }
    let mut got = BTreeMap::new();
    for b in
        f.query("SELECT date_trunc('minute', timestamp) AS m, count(*) AS n FROM orders GROUP BY m")
    {
        let m = b.column(0).as_primitive::<TimestampMillisecondType>();
        let n = b.column(1).as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            got.insert(m.value(i), n.value(i) as u64);
        }
    }
    assert_eq!(got, want);
}

#[test]
fn header_filters_see_duplicates_and_null_values() {
    let f = fixture();
    let headers = |pred: &dyn Fn(&Head) -> bool| {
        f.recs
            .iter()
            .flat_map(|r| r.headers.iter())
            .filter(|h| pred(h))
            .count()
            .to_string()
    };
    let q = |cond: &str| {
        f.rows(&format!(
            "SELECT count(*) FROM (SELECT unnest(headers) AS h FROM orders) WHERE {cond}"
        ))
    };
    assert_eq!(
        q("h['key'] = 'trace'"),
        vec![vec![headers(&|h| h.0 == "trace")]]
    );
    assert_eq!(
        q("h['key'] = 'trace' AND h['value'] IS NULL"),
        vec![vec![headers(&|h| h.0 == "trace" && h.1.is_none())]]
    );
    let with_source = f
        .recs
        .iter()
        .filter(|r| r.headers.iter().any(|h| h.0 == "source"))
        .count();
    let got = f.rows(
        "SELECT count(*) FROM (SELECT p, o FROM \
         (SELECT orders.partition AS p, orders.offset AS o, unnest(headers) AS h FROM orders) \
         WHERE h['key'] = 'source' GROUP BY p, o)",
    );
    assert_eq!(got, vec![vec![with_source.to_string()]]);
}

#[test]
fn json_values_and_a_join_of_two_topics() {
    let f = fixture();
    let amount: i64 = f
        .recs
        .iter()
        .filter_map(|r| r.value.as_ref())
        .map(|v| {
            let a = v.split("\"amount\":").nth(1).unwrap().trim_end_matches('}');
            a.parse::<i64>().unwrap()
        })
        .sum();
    assert_eq!(
        f.rows("SELECT sum(json_get_int(value, 'amount')) FROM orders"),
        vec![vec![amount.to_string()]]
    );
    // users holds u0..u3: u4's orders have no match.
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for r in &f.recs {
        let Some(v) = &r.value else { continue };
        let user = v
            .split("\"user\":\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        if user != "u4" {
            *want.entry(format!("name-{}", &user[1..])).or_default() += 1;
        }
    }
    let got: BTreeMap<String, u64> = f
        .rows(
            "SELECT json_get_str(u.value, 'name') AS name, count(*) FROM orders o \
             JOIN users u ON json_get_str(o.value, 'user') = u.key GROUP BY name",
        )
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn an_offset_range_reads_only_the_segments_that_hold_it() {
    let f = fixture();
    let files = krecords_source::dir_logs(&f.orders_dirs[1]).unwrap().len() as u64;
    assert!(files > 10, "{files} segments");
    let rows = f.rows(
        "SELECT count(*), min(offset), max(offset) FROM orders \
         WHERE partition = 1 AND offset >= 200 AND offset < 215",
    );
    assert_eq!(
        rows,
        vec![vec!["15".to_string(), "200".into(), "214".into()]]
    );
    let (partitions, read, entries) = f.orders.read();
    assert_eq!(partitions, 1, "only partition 1 is opened");
    assert!(read <= 2, "{read} of {files} segments read");
    assert!(entries <= 3, "{entries} entries read");

    // The whole partition, for comparison.
    f.rows("SELECT count(*) FROM orders WHERE partition = 1");
    let (_, all, _) = f.orders.read();
    assert_eq!(all - read, files);
}

#[test]
fn a_time_range_starts_at_its_first_offset() {
    let f = fixture();
    let (lo, hi) = (T0 + 30_000 + 300 * 1_500, T0 + 30_000 + 320 * 1_500);
    let want: Vec<i64> = f
        .recs
        .iter()
        .filter(|r| r.partition == 1 && r.timestamp >= lo && r.timestamp < hi)
        .map(|r| r.offset)
        .collect();
    let iso = |ms: i64| krecords_source::time::iso(ms);
    let rows = f.rows(&format!(
        "SELECT offset FROM orders WHERE partition = 1 AND timestamp >= '{}' AND timestamp < '{}' \
         ORDER BY offset",
        iso(lo),
        iso(hi)
    ));
    let got: Vec<i64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(got, want);
    let files = krecords_source::dir_logs(&f.orders_dirs[1]).unwrap().len() as u64;
    let (_, read, _) = f.orders.read();
    // From the segment holding the start to the end of the partition: an upper time bound is
    // not an end offset (timestamps need not grow with offsets).
    assert!(read < files / 2, "{read} of {files} segments read");
}

#[test]
fn only_the_columns_asked_for_are_built() {
    let f = fixture();
    let plan = f.plan("SELECT count(*) FROM orders");
    assert!(
        plan.contains("KrecScanExec: partitions=3, columns=[]"),
        "{plan}"
    );
    let plan = f.plan("SELECT key FROM orders WHERE offset > 5 AND partition IN (0, 2)");
    assert!(
        plan.contains("partitions=2, columns=[partition, offset, key]"),
        "{plan}"
    );
    assert!(
        plan.contains("offsets=Interval { lo: Some(6), hi: None }"),
        "{plan}"
    );
    assert_eq!(
        f.rows("SELECT count(*) FROM orders"),
        vec![vec![f.recs.len().to_string()]]
    );
}

#[test]
fn read_uncommitted_shows_the_aborted_records() {
    let dir = tempfile::tempdir().unwrap();
    let (parts, recs) = make_data(dir.path());
    let options = TableOptions {
        isolation: krecords_source::IsolationLevel::ReadUncommitted,
        ..TableOptions::strings()
    };
    let table = KrecTable::open(&parts[..1], options, &mut || unreachable!()).unwrap();
    let ctx = new_context().unwrap();
    ctx.register_table("t", Arc::new(table)).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let batches = rt
        .block_on(async {
            ctx.sql("SELECT count(*) FROM t WHERE value LIKE 'aborted%'")
                .await?
                .collect()
                .await
        })
        .unwrap();
    assert_eq!(batches[0].column(0).as_primitive::<Int64Type>().value(0), 3);
    let committed = recs.iter().filter(|r| r.partition == 0).count() as i64;
    let batches = rt
        .block_on(async { ctx.sql("SELECT count(*) FROM t").await?.collect().await })
        .unwrap();
    assert_eq!(
        batches[0].column(0).as_primitive::<Int64Type>().value(0),
        committed + 3
    );
}

#[test]
fn a_corrupt_segment_is_a_data_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("00000000000000000000.log");
    let mut b = V2Builder::new(0);
    b.append(&NewRecord::new(T0, None, Some(b"v"))).unwrap();
    let mut bytes = b.finish().unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let table = KrecTable::open(&[file], TableOptions::default(), &mut || unreachable!()).unwrap();
    let ctx = new_context().unwrap();
    ctx.register_table("t", Arc::new(table)).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let e = rt
        .block_on(async { ctx.sql("SELECT count(*) FROM t").await?.collect().await })
        .unwrap_err();
    let source = krecords_sql::source_error(&e).unwrap_or_else(|| panic!("{e:?}"));
    assert_eq!(
        source.class(),
        krecords_source::ErrorClass::Data,
        "{source}"
    );
    assert!(
        source.to_string().contains("entry at byte 0: crc mismatch"),
        "{source}"
    );
}
