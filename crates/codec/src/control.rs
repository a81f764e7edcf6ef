//! Control records (stub).
