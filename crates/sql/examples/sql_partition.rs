//! A DataFusion `SessionContext` with a krec table: writes a partition directory with
//! krecords-log (JSON values, some tombstones, small segments), registers it as the table
//! `events`, and runs a few queries: the hottest keys, the tombstone ratio, a JSON field, and
//! an offset range (which reads only the segments that hold it).
//!
//! Run with `cargo run -p krecords-sql --example sql_partition` (no input needed).

use datafusion::arrow::util::pretty::pretty_format_batches;
use krecords_codec::write::{NewRecord, V2Builder};
use krecords_log::{AppendOrigin, Log, LogConfig};
use krecords_sql::{datafusion, new_context, KrecTable, TableOptions};
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let part = dir.path().join("events-0");
    let config = LogConfig {
        segment_bytes: 16 << 10,
        ..LogConfig::default()
    };
    let mut log = Log::create(&part, config)?;
    for batch in 0..100i64 {
        let mut b = V2Builder::new(0);
        for i in 0..20 {
            let n = batch * 20 + i;
            let key = format!("user-{}", (n * n) % 7);
            let value = format!("{{\"page\":\"/p/{}\",\"ms\":{}}}", n % 3, n % 250);
            let value = (n % 9 != 0).then_some(value);
            b.append(&NewRecord::new(
                1_714_000_000_000 + n * 100,
                Some(key.as_bytes()),
                value.as_deref().map(str::as_bytes),
            ))?;
        }
        log.append(&b.finish()?, AppendOrigin::Client)?;
    }
    log.close()?;

    let table = KrecTable::open(&[part], TableOptions::strings(), &mut || {
        Err(krecords_source::Error::Usage("no kafka:// here".into()))
    })?;
    let counters = table.counters();
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let ctx = new_context()?;
        ctx.register_table("events", Arc::new(table))?;
        for sql in [
            "SELECT key, count(*) AS n FROM events GROUP BY key ORDER BY n DESC, key LIMIT 3",
            "SELECT count(*) AS records, avg(CASE WHEN value IS NULL THEN 1.0 ELSE 0.0 END) AS \
             tombstone_ratio FROM events",
            "SELECT json_get_str(value, 'page') AS page, avg(json_get_int(value, 'ms')) AS ms \
             FROM events WHERE value IS NOT NULL GROUP BY page ORDER BY page",
            "SELECT min(offset), max(offset), count(*) FROM events WHERE offset BETWEEN 1000 AND 1009",
        ] {
            let before = counters.read().1;
            let batches = ctx.sql(sql).await?.collect().await?;
            println!("{sql}\n{}", pretty_format_batches(&batches)?);
            println!("({} segment files read)\n", counters.read().1 - before);
        }
        Ok::<_, datafusion::error::DataFusionError>(())
    })?;
    Ok(())
}
