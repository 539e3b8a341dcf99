//! # rnic: the host driver
//!
//! * [`device::Device`]: what the driver needs from a card (BAR access, WQE pushes, DMA memory,
//!   time). Implemented for real hardware by [`vfio`] and for the Verilated RTL by `rnic-sim`.
//! * [`driver::Rnic`]: open (walks the self-describing register blocks, checks versions, reads
//!   the build parameters), the DMA self-test, the MAC debug path.
//!
//! The layouts all come from `rnic-abi`; nothing here re-declares an offset.

pub mod device;
pub mod driver;
pub mod error;
pub mod vfio;

pub use device::{Bar, Device, DmaBuf};
pub use driver::{DeviceInfo, Rnic, RxStats};
pub use error::{Error, Result};
