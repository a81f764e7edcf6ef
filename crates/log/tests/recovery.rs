//! recovery tests.
use crate::util::*;
