//! Fetches one partition from the earliest offset to the high watermark and discards the bytes:
//! the raw Fetch rate of `krecords-client`, the ceiling for any command reading a live topic
//! (`scripts/bench-live.sh` compares `krec stats kafka://…` with it).
//!
//! ```text
//! cargo run --release -p krecords-client --example fetch_rate -- localhost:9092 events 0 [NAME=VALUE...]
//! ```
//!
//! Prints one line: bytes, seconds, MB/s (10^6 bytes per second). Extra arguments are client
//! properties under librdkafka's names (`security.protocol=SSL`, ...).

use krecords_client::{Client, ClientConfig, IsolationLevel, OffsetSpec};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [servers, topic, partition, properties @ ..] = args.as_slice() else {
        eprintln!("usage: fetch_rate HOST:PORT TOPIC PARTITION [NAME=VALUE...]");
        std::process::exit(2);
    };
    let partition: i32 = partition.parse()?;
    let mut config = ClientConfig::default();
    config.set("bootstrap.servers", servers)?;
    for p in properties {
        config.set_pair(p)?;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let client = Client::connect(config).await?;
        let isolation = IsolationLevel::ReadUncommitted;
        let start = client
            .list_offsets(topic, partition, OffsetSpec::Earliest, isolation)
            .await?
            .offset
            .unwrap_or(0);
        let began = Instant::now();
        let mut bytes = 0u64;
        let mut stream = client.stream_partition(topic, partition, start, None, isolation);
        while let Some(chunk) = stream.next_chunk().await? {
            bytes += chunk.records.len() as u64;
        }
        let secs = began.elapsed().as_secs_f64();
        println!(
            "{bytes} bytes in {secs:.3} s: {:.1} MB/s",
            bytes as f64 / secs / 1e6
        );
        Ok(())
    })
}
