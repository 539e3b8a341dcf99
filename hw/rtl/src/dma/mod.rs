//! Host-memory DMA: the data path's AXI4 master, the m_axi mux, the DMA self-test.

pub mod axmux;
pub mod burst;
pub mod dmaeng;
pub mod dmalanes;
pub mod dmatest;
