//! Context store: QP/CQ/MR/RQ-state records shared by the engines.

pub mod ctxstore;
