//! Test helpers shared by the krecords crates (dev-dependency only).
