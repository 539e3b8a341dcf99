//! Shared by every block: port bundles and field helpers, the FIFOs (in registers / LUT RAM, and
//! in block RAM), the byte-enable RAM, Verilog generation and the Verilator plumbing (and, for
//! tests, the block-test harness).

pub mod bemerge;
pub mod beram;
pub mod bramfifo;
pub mod bus;
pub mod fifo;
pub mod ftfifo;
pub mod lutram;
pub mod popcount;
pub mod regslice;
pub mod ringslot;
#[cfg(test)]
pub(crate) mod testutil;
pub mod vgen;
pub mod vlt;
