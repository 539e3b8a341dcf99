//! # rnic-rtl: the rnic engine in rust-hdl, and the Verilog generator
//!
//! One block per file, grouped by pipeline stage (`hostif`, `ctx`, `tx`, `rx`, `dma`, `cq`,
//! `net`, `debug`, `board`, `common`); `top::RnicTop` assembles them into `rnic_top`. Every offset, field and
//! size comes from `rnic-abi`. `vgen` emits `$`-free Verilog; `vlt` builds Verilator models
//! (the simulator's and the block tests').

use rnic_abi::params;

pub mod board;
pub mod common;
pub mod cq;
pub mod ctx;
pub mod debug;
pub mod dma;
pub mod hostif;
pub mod net;
pub mod rx;
pub mod top;
pub mod tx;

// the paths other crates use (sim/build.rs, the bins, hw/rtl/tests)
pub use board::cdc_fifo;
pub use common::bus::{BAR2_ADDR_BITS, RING_SLOT_BITS};
pub use common::{vgen, vlt};

/// Name of the top module.
pub const TOP: &str = "rnic_top";

/// The Verilog of `rnic_top` for the default build (`$`-free, one file, all modules).
pub fn top_verilog() -> Result<String, vgen::GenError> {
    let mut top = top::RnicTop::new(&params::DEFAULT);
    vgen::verilog(&mut top, TOP)
}
