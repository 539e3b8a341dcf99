//! Data-path block `ackproc`: see docs/DATAPATH.md (being built).
