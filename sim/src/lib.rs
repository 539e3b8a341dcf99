//! # rnic-sim: the Verilated rnic engine in a deterministic simulated world
//!
//! * [`model`]: the Verilated `rnic_top` (built by build.rs from rnic-rtl's Verilog).
//! * Bus models: [`hostmem`] (AXI4 host memory behind PCIe, IOMMU map, audit), [`mmio`] (the
//!   host's BAR0/BAR2 masters), [`eth`] (100 GbE links, pacing, faults, pcap tap).
//! * [`frame`]: the RoCE v2 frame parser (demo output, system tests).
//! * [`world`]: N NICs and their links stepped cycle by cycle from one seed.
//! * [`device`]: the driver's `Device` trait on a simulated NIC.
//! * [`replay`]: a capture fed into one NIC's receive port, what it sends written out.
//! * [`fuzz`]: mutated RoCE v2 frames fed into one NIC's receive port, checked.

pub mod bench;
pub mod demo;
pub mod device;
pub mod error;
pub mod eth;
pub mod extport;
pub mod frame;
pub mod fuzz;
pub mod hostmem;
pub mod lossy;
pub mod mmio;
pub mod model;
pub mod pcap;
pub mod perf;
pub mod replay;
pub mod world;

pub use device::{SharedWorld, SimNic, world};
pub use error::Error;
pub use world::{World, WorldConfig};
