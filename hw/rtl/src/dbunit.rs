//! Data-path block `dbunit`: see docs/DATAPATH.md (being built).
