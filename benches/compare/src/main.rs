//! Comparison harness (in progress).
fn main() {}
