//! Data-path block `rxresp`: see docs/DATAPATH.md (being built).
