//! A live topic to a Parquet dataset, twice: the second run exports only what was appended in
//! between. The topic lives on the fake broker of krecords-testkit (no Kafka needed); point
//! the URL at a real broker to export a real topic.
//!
//! Run: `cargo run -p krecords-export --example topic_to_parquet`.

use arrow_array::cast::AsArray;
use krecords_export::{dataset_files, read_file, ExportOptions, Exporter};
use krecords_source::{ClientConfig, Sources};
use krecords_testkit::batches::{batch, marker};
use krecords_testkit::cluster::FakeCluster;
use std::error::Error;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn Error>> {
    let cluster = FakeCluster::start(&[("events", 2)]);
    for p in 0..2 {
        cluster.append(
            "events",
            p,
            &[batch(0, None, &["a", "b", "c"]), batch(3, None, &["d"])],
        );
    }
    let out = tempfile::tempdir()?;
    let url = PathBuf::from(format!("kafka://{}/events", cluster.addr()));

    let run = |label: &str| -> Result<(), Box<dyn Error>> {
        let sources = Sources::open(std::slice::from_ref(&url), &mut || {
            Ok(ClientConfig::default())
        })?;
        let mut exporter =
            Exporter::open(ExportOptions::new(out.path()), std::slice::from_ref(&url))?;
        for index in 0..sources.partitions.len() {
            exporter.export(&sources, index, &mut |_| {})?;
        }
        exporter.finish(&mut |_| {})?;
        let s = exporter.summary();
        println!(
            "{label}: {} records of {} partitions into {} files ({} bytes in, {} bytes out)",
            s.records, s.partitions, s.files, s.bytes_in, s.bytes_out
        );
        Ok(())
    };
    run("first run")?;
    // A committed transaction: its records are rows, its commit marker is not.
    cluster.append(
        "events",
        0,
        &[batch(4, Some(9), &["e", "f"]), marker(6, 9, true)],
    );
    run("second run")?;

    for p in 0..2 {
        let dir = out.path().join(format!("topic=events/partition={p}"));
        for (first, last, path) in dataset_files(&dir)? {
            let mut values = Vec::new();
            for b in read_file(&path)? {
                let v = b
                    .column_by_name("value")
                    .ok_or("no value column")?
                    .as_binary::<i32>();
                values.extend(
                    v.iter()
                        .map(|v| String::from_utf8_lossy(v.unwrap_or_default()).into_owned()),
                );
            }
            println!(
                "topic=events/partition={p}/{}: offsets {first}..={last}: {values:?}",
                path.file_name().unwrap_or_default().to_string_lossy()
            );
        }
    }
    Ok(())
}
