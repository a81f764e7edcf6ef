//! crash tests.
use crate::util::*;
