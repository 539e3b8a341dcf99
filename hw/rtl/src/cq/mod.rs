//! Completions: CQEs into host-memory rings.

pub mod cplq;
pub mod cqwriter;
