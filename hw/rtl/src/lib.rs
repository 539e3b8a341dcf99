//! # rnic-rtl: the rnic engine in rust-hdl, and the Verilog generator
pub mod cdc_fifo;
pub mod reset_sync;
