//! Data-path block `txreq`: see docs/DATAPATH.md (being built).
