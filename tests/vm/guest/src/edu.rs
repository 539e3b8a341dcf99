//! Test-only adapter: QEMU's `edu` teaching device (docs/specs/edu.rst in QEMU) driven through
//! the rnic `Device` trait. It knows edu's registers; the VFIO backend knows nothing of edu.

use rnic::vfio::{BarSpec, IrqMode, VfioOptions};
use rnic::{Bar, Device, Result};

pub const VENDOR: u16 = 0x1234;
pub const DEVICE: u16 = 0x11e8;

/// edu BAR0 registers (all used with 32-bit accesses).
pub const ID: u64 = 0x00; // 0x010000ed: version 1.0, 0xed
pub const LIVENESS: u64 = 0x04; // reads back the inverse of what was written
pub const IRQ_STATUS: u64 = 0x24;
pub const IRQ_RAISE: u64 = 0x60;
pub const IRQ_ACK: u64 = 0x64;
pub const DMA_SRC: u64 = 0x80; // a 32-bit write sets the whole (zero-extended) address
pub const DMA_DST: u64 = 0x88;
pub const DMA_CNT: u64 = 0x90;
pub const DMA_CMD: u64 = 0x98; // bit0 start/busy, bit1 direction (1: edu -> RAM), bit2 irq when done
pub const ID_VALUE: u32 = 0x0100_00ed;
/// The DMA buffer inside the device (4 KiB).
pub const DEV_BUF: u64 = 0x4_0000;
/// IRQ status bit of "DMA done".
pub const IRQ_DMA: u32 = 0x100;

/// How to open edu through the VFIO backend: BAR0 (1 MiB) is the register BAR, no ring BAR;
/// IOVAs below 256 MiB because edu masks DMA addresses to 28 bits; MSI (edu has no MSI-X).
pub fn options() -> VfioOptions {
    VfioOptions {
        regs: BarSpec {
            index: 0,
            min_len: 1 << 20,
        },
        rings: None,
        iova_window: 0x10_0000..0x1000_0000,
        irq: IrqMode::Auto,
        max_vectors: 1,
        reset_on_open: false,
    }
}

/// edu over any `Device`.
pub struct Edu<D: Device> {
    pub dev: D,
}

impl<D: Device> Edu<D> {
    pub fn new(dev: D) -> Self {
        Edu { dev }
    }

    pub fn id(&mut self) -> Result<u32> {
        self.dev.read32(Bar::Regs, ID)
    }

    /// Write the liveness register, return what it reads back (the inverse when alive).
    pub fn liveness(&mut self, v: u32) -> Result<u32> {
        self.dev.write32(Bar::Regs, LIVENESS, v)?;
        self.dev.read32(Bar::Regs, LIVENESS)
    }

    /// One DMA transfer; waits for the engine (edu runs it from a 100 ms timer). `to_ram`:
    /// device buffer -> host memory. Returns whether it finished within `timeout_ns`.
    pub fn dma(
        &mut self,
        src: u64,
        dst: u64,
        len: u32,
        to_ram: bool,
        irq: bool,
        timeout_ns: u64,
    ) -> Result<bool> {
        let w = |d: &mut D, off, v: u64| d.write32(Bar::Regs, off, v as u32);
        w(&mut self.dev, DMA_SRC, src)?;
        w(&mut self.dev, DMA_DST, dst)?;
        w(&mut self.dev, DMA_CNT, len as u64)?;
        let cmd = 1 | if to_ram { 2 } else { 0 } | if irq { 4 } else { 0 };
        self.dev.write32(Bar::Regs, DMA_CMD, cmd)?;
        let t0 = self.dev.now_ns();
        loop {
            if self.dev.read32(Bar::Regs, DMA_CMD)? & 1 == 0 {
                return Ok(true);
            }
            if self.dev.now_ns().saturating_sub(t0) > timeout_ns {
                return Ok(false);
            }
            self.dev.relax();
        }
    }

    /// Raise interrupt status bits (edu signals MSI when they go from zero to non-zero).
    pub fn raise(&mut self, bits: u32) -> Result<()> {
        self.dev.write32(Bar::Regs, IRQ_RAISE, bits)
    }

    /// Read and acknowledge the interrupt status.
    pub fn ack(&mut self) -> Result<u32> {
        let st = self.dev.read32(Bar::Regs, IRQ_STATUS)?;
        self.dev.write32(Bar::Regs, IRQ_ACK, st)?;
        Ok(st)
    }
}
