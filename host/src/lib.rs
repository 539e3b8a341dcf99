//! # rnic: the host driver
//!
//! * [`device::Device`]: what the driver needs from a card (BAR access, WQE pushes, DMA memory,
//!   time). Implemented for real hardware by [`vfio`] and for the Verilated RTL by `rnic-sim`.
//! * [`driver::Rnic`]: open (walks the self-describing register blocks, checks versions, reads
//!   the build parameters), the DMA self-test, the MAC debug path.
//! * [`verbs`]: RDMA verbs in the shape of rdma-core: [`Context`], [`ProtectionDomain`],
//!   [`MemoryRegion`], [`CompletionQueue`], RC [`QueuePair`] (SEND/WRITE with or without
//!   immediate, RDMA READ, inline, signaled/unsignaled), [`Endpoint`] exchange.
//!
//! The layouts all come from `rnic-abi`; nothing here re-declares an offset.

pub mod device;
pub mod driver;
pub mod error;
pub mod verbs;
pub mod vfio;

pub use device::{Bar, Device, DmaRegion};
pub use driver::{DeviceInfo, Rnic, RxStats};
pub use error::{Error, Result};
pub use verbs::{
    AccessFlags, CompletionQueue, ConnectAttr, Context, CqAttr, DmaBuf, Endpoint, InitAttr,
    MemoryRegion, Mtu, PortAddr, ProtectionDomain, QpCaps, QpState, QueuePair, RecvWr, RtrAttr,
    RtsAttr, SendOp, SendWr, Sge, WcOpcode, WcStatus, WorkCompletion,
};
