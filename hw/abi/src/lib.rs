//! # rnic-abi: the one hardware/software contract of rnic
//!
//! Register map (BAR0, self-describing blocks), doorbell layout, BAR2 ring layout, WQE/CQE/QP
//! context/CQ context/MR entry layouts, RoCE constants, PCIe identity and build parameters.
//! The RTL (`rnic-rtl`) takes its offsets and field slices from here; the driver (`rnic`)
//! encodes and decodes with the same definitions; `docs/REGISTERS.md` is generated from here
//! (`cargo run -p rnic-abi --bin rnic-regdoc`). Nothing here depends on anything.

pub mod dmatest;
pub mod layout;
pub mod params;
pub mod pcie;
pub mod queue;
pub mod regdoc;
pub mod regs;
pub mod roce;

/// Bytes per WQE ring slot.
pub const WQE_BYTES: usize = 64;
/// Bytes per CQE.
pub const CQE_BYTES: usize = 32;

const _: () = assert!(queue::Wqe::SIZE == WQE_BYTES);
const _: () = assert!(queue::Cqe::SIZE == CQE_BYTES);
const _: () = assert!(queue::QpContext::SIZE == 4 * regs::ctx::DATA_WORDS as usize);
const _: () = assert!(queue::CqContext::SIZE == 4 * regs::ctx::DATA_WORDS as usize);
const _: () = assert!(queue::MrEntry::SIZE == 4 * regs::ctx::DATA_WORDS as usize);
const _: () = assert!(params::DEFAULT.datapath_bits as usize == 8 * WQE_BYTES);
