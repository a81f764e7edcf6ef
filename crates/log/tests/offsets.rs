//! offsets tests.
use crate::util::*;
