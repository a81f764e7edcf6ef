//! A `kafka://` topic as a `krecords-sql` table, on crates/testkit's fake cluster: the answers
//! are computed from the records appended, and the pushed-down partition, offset and time
//! filters show in the fetches the broker sees.

mod common;

use datafusion::arrow::array::RecordBatch;
use krecords_source::ClientConfig;
use krecords_sql::{datafusion, new_context, KrecTable, TableOptions};
use krecords_testkit::FakeCluster;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

const T0: i64 = 1_714_000_000_000;
/// Batches per partition, records per batch.
const BATCHES: i64 = 40;
const PER_BATCH: i64 = 5;

/// The record at offset `o` of partition `p`: (timestamp, key, value).
fn record(p: i32, o: i64) -> (i64, String, String) {
    (
        T0 + o * 1000,
        format!("k{}", (o + i64::from(p)) % 7),
        format!("p{p}-v{o}"),
    )
}

fn cluster() -> FakeCluster {
    let cluster = FakeCluster::start(&[("t", 2)]);
    for p in 0..2 {
        let batches = krecords_testkit::batches::numbered(BATCHES, PER_BATCH, |o| {
            let (ts, k, v) = record(p, o);
            (ts, k.into_bytes(), v.into_bytes())
        });
        cluster.append("t", p, &batches);
    }
    cluster
}

/// Runs `sql` on the topic `t` of `cluster` as the table `t`: rows as strings, and the
/// partitions the scan opened.
fn query(cluster: &FakeCluster, sql: &str) -> (Vec<Vec<String>>, u64) {
    let url = PathBuf::from(format!("kafka://{}/t", cluster.addr()));
    let table = KrecTable::open(&[url], TableOptions::strings(), &mut || {
        Ok(ClientConfig::default())
    })
    .unwrap();
    let counters = table.counters();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let batches: Vec<RecordBatch> = rt
        .block_on(async {
            let ctx = new_context()?;
            ctx.register_table("t", Arc::new(table))?;
            ctx.sql(sql).await?.collect().await
        })
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    (common::rows_of(&batches), counters.read().0)
}

fn rows(cluster: &FakeCluster, sql: &str) -> Vec<Vec<String>> {
    query(cluster, sql).0
}

#[test]
fn group_by_key_over_a_live_topic() {
    let c = cluster();
    let got = rows(
        &c,
        "SELECT partition, key, count(*), max(offset) FROM t GROUP BY partition, key \
         ORDER BY partition, key",
    );
    let mut want: BTreeMap<(i32, String), (i64, i64)> = BTreeMap::new();
    for p in 0..2 {
        for o in 0..BATCHES * PER_BATCH {
            let e = want.entry((p, record(p, o).1)).or_default();
            e.0 += 1;
            e.1 = e.1.max(o);
        }
    }
    let want: Vec<Vec<String>> = want
        .into_iter()
        .map(|((p, k), (n, max))| vec![p.to_string(), k, n.to_string(), max.to_string()])
        .collect();
    assert_eq!(got, want);
}

#[test]
fn filters_on_partition_offset_and_time_are_pushed_to_the_broker() {
    let c = cluster();
    let (got, partitions) = query(
        &c,
        "SELECT offset, value FROM t WHERE partition = 1 AND offset >= 17 AND offset < 21 \
         ORDER BY offset",
    );
    let want: Vec<Vec<String>> = (17..21)
        .map(|o| vec![o.to_string(), record(1, o).2])
        .collect();
    assert_eq!(got, want);
    assert_eq!(partitions, 1, "partition 0 is not read");

    // A time lower bound starts at its first offset (ListOffsets by time).
    let from = record(0, 150).0;
    let (got, partitions) = query(
        &c,
        &format!(
            "SELECT count(*), min(offset) FROM t WHERE partition = 0 AND timestamp >= \
             to_timestamp_millis({from})"
        ),
    );
    let n = BATCHES * PER_BATCH - 150;
    assert_eq!(got, vec![vec![n.to_string(), "150".to_string()]]);
    assert_eq!(partitions, 1);
}

/// `register_with` opens the topic from inside the caller's runtime (DataFusion's, a
/// multi-threaded one, or a current-thread one): the sources layer waits for the broker on a
/// thread of its own there instead of nesting runtimes.
#[test]
fn a_live_topic_registers_from_inside_a_runtime() {
    let c = cluster();
    let source = format!("kafka://{}/t", c.addr());
    let multi = tokio::runtime::Runtime::new().unwrap();
    let single = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for rt in [multi, single] {
        let batches: Vec<RecordBatch> = rt
            .block_on(async {
                let ctx = new_context()?;
                krecords_sql::register_with(
                    &ctx,
                    "t",
                    &source,
                    TableOptions::strings(),
                    &mut || Ok(ClientConfig::default()),
                    krecords_source::RemoteOptions::default(),
                )
                .await?;
                ctx.sql("SELECT count(*) FROM t").await?.collect().await
            })
            .unwrap();
        let want = (2 * BATCHES * PER_BATCH).to_string();
        assert_eq!(common::rows_of(&batches), vec![vec![want]]);
    }
}
