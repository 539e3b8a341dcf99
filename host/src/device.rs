//! The device trait: what the driver needs from a card, whatever carries it. Implemented by the
//! VFIO backend (`crate::vfio`) for real hardware and by `rnic-sim` for the Verilated RTL.

use crate::error::{Error, Result};

/// The two BARs of an rnic card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bar {
    /// BAR0: registers (AXI4-Lite `s_axil` on the engine).
    Regs,
    /// BAR2: WQE ring memory (AXI4 `s_axi_wqe` on the engine).
    Rings,
}

impl Bar {
    /// PCI BAR index.
    pub fn index(self) -> u32 {
        match self {
            Bar::Regs => rnic_abi::pcie::BAR_REGS,
            Bar::Rings => rnic_abi::pcie::BAR_RINGS,
        }
    }
}

/// A backend's raw handle to a DMA mapping: device-visible at `iova`, `len` bytes. A handle,
/// not the memory: read and write it through [`Device::dma_read`] / [`Device::dma_write`].
/// This is the backend level (what a [`Device`] implementation hands out and takes back); verbs
/// users get an owned [`crate::verbs::DmaRegion`] from `Context::alloc_buf`, and only that can be
/// registered as a memory region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DmaRegion {
    /// Backend-specific id.
    pub id: u64,
    /// I/O virtual address the device uses.
    pub iova: u64,
    /// Length in bytes.
    pub len: usize,
}

impl DmaRegion {
    /// Check that `[off, off+len)` lies inside the buffer.
    pub fn check(&self, off: usize, len: usize) -> Result<()> {
        match off.checked_add(len) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(Error::DmaRange {
                off,
                len,
                size: self.len,
            }),
        }
    }
}

/// What the driver needs from a device. All methods take `&mut self`: a device is driven by one
/// thread (share it behind a lock if needed). Implementations check every offset and length and
/// return errors, never panic.
pub trait Device {
    /// One line describing the backend and the device (PCI address, or simulator instance).
    fn describe(&self) -> String;
    /// Size of a BAR in bytes.
    fn bar_len(&self, bar: Bar) -> u64;
    /// 32-bit read at a 4-byte-aligned offset.
    fn read32(&mut self, bar: Bar, off: u64) -> Result<u32>;
    /// 32-bit write at a 4-byte-aligned offset.
    fn write32(&mut self, bar: Bar, off: u64, val: u32) -> Result<()>;
    /// Write one 64-byte WQE at a 64-byte-aligned BAR2 offset, as one burst (write-combined on
    /// hardware). Ordered before any later doorbell write on the same device.
    fn push_wqe(&mut self, off: u64, wqe: &[u8; 64]) -> Result<()>;
    /// Allocate and map a DMA buffer of `len` bytes (zeroed), page aligned.
    fn dma_alloc(&mut self, len: usize) -> Result<DmaRegion>;
    /// Unmap and free a DMA buffer.
    fn dma_free(&mut self, buf: DmaRegion) -> Result<()>;
    /// Copy from a DMA buffer.
    fn dma_read(&mut self, buf: &DmaRegion, off: usize, out: &mut [u8]) -> Result<()>;
    /// Read one byte of a DMA buffer with a single volatile load (on hardware): the CQ owner
    /// byte, read before the rest of the CQE. The default goes through `dma_read` (enough for
    /// backends whose DMA memory is not shared with a running device, such as the simulator,
    /// where the device only runs inside `relax`).
    fn dma_read_u8(&mut self, buf: &DmaRegion, off: usize) -> Result<u8> {
        let mut b = [0u8; 1];
        self.dma_read(buf, off, &mut b)?;
        Ok(b[0])
    }
    /// Copy into a DMA buffer.
    fn dma_write(&mut self, buf: &DmaRegion, off: usize, data: &[u8]) -> Result<()>;
    /// Let time pass while polling: the simulator advances the world by a few cycles; hardware
    /// spins briefly.
    fn relax(&mut self);
    /// Device time in nanoseconds (simulated time in the simulator, monotonic clock on
    /// hardware). Driver timeouts use it, so they are deterministic in simulation.
    fn now_ns(&mut self) -> u64;
    /// Wait for interrupt `vector` up to `timeout_ns`; true if it fired.
    fn wait_irq(&mut self, vector: u32, timeout_ns: u64) -> Result<bool>;
}

/// Check a BAR access against the BAR size and alignment (shared by the backends).
pub fn check_bar(bar: Bar, bar_len: u64, off: u64, len: u64) -> Result<()> {
    let aligned = off.is_multiple_of(len.max(1));
    match off.checked_add(len) {
        Some(end) if end <= bar_len && aligned => Ok(()),
        _ => Err(Error::BarRange {
            bar,
            off,
            len,
            bar_len,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_checks() {
        assert!(check_bar(Bar::Regs, 0x1_0000, 0xFFFC, 4).is_ok());
        assert!(check_bar(Bar::Regs, 0x1_0000, 0x1_0000, 4).is_err());
        assert!(check_bar(Bar::Regs, 0x1_0000, 2, 4).is_err(), "misaligned");
        assert!(
            check_bar(Bar::Regs, 0x1_0000, u64::MAX - 1, 4).is_err(),
            "overflow"
        );
        assert!(check_bar(Bar::Rings, 1 << 21, 64, 64).is_ok());
        assert!(check_bar(Bar::Rings, 1 << 21, 32, 64).is_err());
    }

    #[test]
    fn dma_range_checks() {
        let b = DmaRegion {
            id: 1,
            iova: 0x1000,
            len: 100,
        };
        assert!(b.check(0, 100).is_ok());
        assert!(b.check(100, 0).is_ok());
        assert!(b.check(99, 2).is_err());
        assert!(b.check(usize::MAX, 2).is_err());
    }
}
