//! Differential testing of krecords against Apache Kafka's own reader.
//!
//! [`gen`] makes inputs (mutated valid entries of every magic and codec, and random bytes),
//! [`ours`] says what krecords makes of each, the referee (`interop/java`,
//! `dev.krecords.interop.Referee`) says what Kafka 4.4.0 makes of it, and [`compare`] classifies
//! every disagreement. `krec-diff` (src/main.rs) runs it; `tests/replay.rs` replays every input
//! saved under `cases/` with Kafka's recorded verdict, so a fixed disagreement stays fixed.

pub mod compare;
pub mod gen;
pub mod ours;
