//! Host interface: BAR0 register bus, doorbells, BAR2 WQE rings.

pub mod axil;
pub mod dbunit;
pub mod devregs;
pub mod ringmem;
