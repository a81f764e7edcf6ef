//! retention tests.
use crate::util::*;
