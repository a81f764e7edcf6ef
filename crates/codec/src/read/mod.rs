//! Reading (stub).
