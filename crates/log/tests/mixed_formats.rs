//! mixed_formats tests.
use crate::util::*;
