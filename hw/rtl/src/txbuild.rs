//! Data-path block `txbuild`: see docs/DATAPATH.md (being built).
