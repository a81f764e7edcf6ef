//! A stopped broker's view of its cluster: `load` (`describe_root`) replays the KRaft metadata
//! log of a `log.dirs` root and lists the partitions the disk holds, with their offsets.
//!
//! Run: `cargo run -p krecords-admin --example describe_root [ROOT]` (without ROOT, the CLI
//! tests' fixture of a 4.4 broker's internal topics).

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/fixtures/internal"),
        PathBuf::from,
    );
    // As `krec metadata ROOT --all --offsets` loads it: every topic, internal ones too, with
    // each on-disk partition's offsets.
    let cluster = krecords_admin::offline::load(&root, &[], true, Some(None))?;
    println!("controller: {:?}", cluster.controller);
    for b in &cluster.brokers {
        println!(
            "broker {} at {}:{} fenced={:?}",
            b.node_id, b.host, b.port, b.fenced
        );
    }
    for t in &cluster.topics {
        for p in &t.partitions {
            println!(
                "{}/{}: leader {} replicas {:?} isr {:?} on disk {:?} offsets {:?}",
                t.name, p.partition, p.leader, p.replicas, p.isr, p.on_disk, p.offsets
            );
        }
    }
    for w in &cluster.warnings {
        println!("warning: {w}");
    }
    Ok(())
}
