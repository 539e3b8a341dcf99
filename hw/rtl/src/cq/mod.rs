//! Completions: CQEs into host-memory rings.

pub mod cqwriter;
