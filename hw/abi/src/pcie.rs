//! PCIe identity of the card and its BARs. Used by the board flow (Vivado Tcl reads
//! `docs`/generated values from here) and by the driver's device discovery.

/// PCI vendor id (Xilinx: the id the PCIe IP ships with; boards keep it).
pub const VENDOR_ID: u16 = 0x10EE;
/// PCI device id chosen for rnic.
pub const DEVICE_ID: u16 = 0x7F52;
pub const SUBSYSTEM_VENDOR_ID: u16 = 0x10EE;
pub const SUBSYSTEM_ID: u16 = 0x0001;
/// Class code: network controller, other (0x0280).
pub const CLASS_CODE: u32 = 0x02_80_00;
/// BAR0: registers (AXI4-Lite), bytes.
pub const BAR0_BYTES: u64 = crate::regs::BAR0_BYTES as u64;
/// BAR2: WQE ring memory (AXI4), bytes; prefetchable, 64-bit, write-combined by the driver.
pub const BAR2_BYTES: u64 = crate::params::DEFAULT.ring_bytes() as u64;
/// The PCI BAR indices.
pub const BAR_REGS: u32 = 0;
pub const BAR_RINGS: u32 = 2;
