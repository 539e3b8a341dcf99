//! # rnic-rtl: the rnic engine in rust-hdl, and the Verilog generator
//!
//! One block per file; `top::RnicTop` assembles them into `rnic_top`. Every offset, field and
//! size comes from `rnic-abi`. `vgen` emits `$`-free Verilog; `vlt` builds Verilator models
//! (the simulator's and the block tests').

use rnic_abi::params;

pub mod ackproc;
pub mod axil;
pub mod axmux;
pub mod beram;
pub mod bus;
pub mod cdc_fifo;
pub mod cqwriter;
pub mod ctxstore;
pub mod dbunit;
pub mod devregs;
pub mod dmaeng;
pub mod dmalanes;
pub mod dmatest;
pub mod engstat;
pub mod fifo;
pub mod icrc;
pub mod macdbg;
pub mod reset_sync;
pub mod ringmem;
pub mod rxparse;
pub mod rxresp;
pub mod rxstat;
#[cfg(test)]
pub(crate) mod testutil;
pub mod top;
pub mod txbuild;
pub mod txreq;
pub mod vgen;
pub mod vlt;

/// Address bits of the ring RAM (64-byte slots) in the default build.
pub const RING_SLOT_BITS: usize = params::DEFAULT.ring_slots_log2() as usize;
/// BAR2 address width in bits.
pub const BAR2_ADDR_BITS: usize = RING_SLOT_BITS + 6;

/// Name of the top module.
pub const TOP: &str = "rnic_top";

/// The Verilog of `rnic_top` for the default build (`$`-free, one file, all modules).
pub fn top_verilog() -> Result<String, vgen::GenError> {
    let mut top = top::RnicTop::new(&params::DEFAULT);
    vgen::verilog(&mut top, TOP)
}
