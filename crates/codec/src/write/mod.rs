//! Writing (stub).
