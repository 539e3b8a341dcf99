//! Data-path block `cqwriter`: see docs/DATAPATH.md (being built).
