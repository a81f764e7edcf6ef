//! roll tests.
use crate::util::*;
