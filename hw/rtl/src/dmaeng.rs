//! Data-path block `dmaeng`: see docs/DATAPATH.md (being built).
