//! Integration tests of krecords-remote: segments written by krecords-log, uploaded as the
//! plugin uploads them, read back; hostile objects.

mod util;

mod hostile;
#[cfg(feature = "object-store")]
mod objstore;
mod roundtrip;
mod verify;
