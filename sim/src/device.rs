//! The simulator backend of the driver's device trait: BAR accesses become AXI transactions on
//! the Verilated engine, DMA buffers live in the NIC's host-memory model, and waiting advances
//! the whole world (every NIC and link), so several drivers share one deterministic timeline.

use crate::mmio::MmioOp;
use crate::world::{World, WorldConfig};
use rnic::device::{Bar, Device, DmaRegion, check_bar};
use rnic::error::{Error, Result};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// A shared world.
pub type SharedWorld = Rc<RefCell<World>>;

/// Build a world and share it.
pub fn world(cfg: WorldConfig) -> SharedWorld {
    Rc::new(RefCell::new(World::new(cfg)))
}

/// Cycles a single BAR access may take before the device is declared hung.
const MMIO_LIMIT_CYCLES: u64 = 200_000;
/// Largest DMA buffer the model hands out.
const MAX_DMA_BYTES: usize = 1 << 30;
/// Cycles one `relax()` advances.
pub const RELAX_CYCLES: u64 = 16;

/// NIC `idx` of a shared world, as a driver device.
pub struct SimNic {
    world: SharedWorld,
    idx: usize,
    bufs: HashMap<u64, DmaRegion>,
}

impl SimNic {
    pub fn new(world: &SharedWorld, idx: usize) -> Result<SimNic> {
        let n = world.borrow().nics.len();
        if idx >= n {
            return Err(Error::NoSuchObject {
                what: "simulated NIC",
                index: idx as u64,
            });
        }
        Ok(SimNic {
            world: world.clone(),
            idx,
            bufs: HashMap::new(),
        })
    }

    /// The world this NIC lives in.
    pub fn world(&self) -> &SharedWorld {
        &self.world
    }

    /// Index of this NIC in the world.
    pub fn index(&self) -> usize {
        self.idx
    }

    fn bar_op(&mut self, op: MmioOp, wait: bool) -> Result<u32> {
        let mut w = self.world.borrow_mut();
        let t = w.nics[self.idx].mmio.submit(op);
        if !wait {
            return Ok(0);
        }
        let start = w.cycle;
        loop {
            if let Some(v) = w.nics[self.idx].mmio.take(t) {
                return Ok(v);
            }
            if w.cycle - start > MMIO_LIMIT_CYCLES {
                return Err(Error::Timeout {
                    what: "BAR read (device not answering on AXI)",
                    ns: ((w.cycle - start) as f64 * crate::world::NS_PER_CYCLE) as u64,
                });
            }
            w.step();
        }
    }

    fn buf(&self, b: &DmaRegion) -> Result<()> {
        match self.bufs.get(&b.id) {
            Some(k) if k == b => Ok(()),
            _ => Err(Error::UnknownBuffer(b.id)),
        }
    }
}

impl Device for SimNic {
    fn describe(&self) -> String {
        let w = self.world.borrow();
        format!(
            "simulator: NIC {} of {} (Verilated rnic_top, seed {})",
            self.idx,
            w.nics.len(),
            w.cfg.seed
        )
    }

    fn bar_len(&self, bar: Bar) -> u64 {
        match bar {
            Bar::Regs => rnic_abi::pcie::BAR0_BYTES,
            Bar::Rings => rnic_abi::pcie::BAR2_BYTES,
        }
    }

    fn read32(&mut self, bar: Bar, off: u64) -> Result<u32> {
        check_bar(bar, self.bar_len(bar), off, 4)?;
        self.bar_op(
            MmioOp::Read {
                bar0: bar == Bar::Regs,
                off,
            },
            true,
        )
    }

    fn write32(&mut self, bar: Bar, off: u64, val: u32) -> Result<()> {
        check_bar(bar, self.bar_len(bar), off, 4)?;
        self.bar_op(
            MmioOp::Write {
                bar0: bar == Bar::Regs,
                off,
                val,
            },
            false,
        )
        .map(|_| ())
    }

    fn push_wqe(&mut self, off: u64, wqe: &[u8; 64]) -> Result<()> {
        check_bar(Bar::Rings, self.bar_len(Bar::Rings), off, 64)?;
        self.bar_op(
            MmioOp::Push {
                off,
                data: Box::new(*wqe),
            },
            false,
        )
        .map(|_| ())
    }

    fn dma_alloc(&mut self, len: usize) -> Result<DmaRegion> {
        if len == 0 || len > MAX_DMA_BYTES {
            return Err(Error::BadDmaLength {
                len,
                max: MAX_DMA_BYTES,
            });
        }
        let (id, iova) = self.world.borrow_mut().nics[self.idx]
            .mem
            .map(len as u64, true);
        let b = DmaRegion { id, iova, len };
        self.bufs.insert(id, b);
        Ok(b)
    }

    fn dma_free(&mut self, buf: DmaRegion) -> Result<()> {
        self.buf(&buf)?;
        self.bufs.remove(&buf.id);
        self.world.borrow_mut().nics[self.idx].mem.unmap(buf.id);
        Ok(())
    }

    fn dma_read(&mut self, buf: &DmaRegion, off: usize, out: &mut [u8]) -> Result<()> {
        self.buf(buf)?;
        buf.check(off, out.len())?;
        self.world.borrow().nics[self.idx]
            .mem
            .read(buf.iova + off as u64, out);
        Ok(())
    }

    fn dma_write(&mut self, buf: &DmaRegion, off: usize, data: &[u8]) -> Result<()> {
        self.buf(buf)?;
        buf.check(off, data.len())?;
        self.world.borrow_mut().nics[self.idx]
            .mem
            .write(buf.iova + off as u64, data);
        Ok(())
    }

    fn relax(&mut self) {
        self.world.borrow_mut().run(RELAX_CYCLES);
    }

    fn now_ns(&mut self) -> u64 {
        self.world.borrow().now_ns()
    }

    fn wait_irq(&mut self, vector: u32, timeout_ns: u64) -> Result<bool> {
        if vector != 0 {
            return Err(Error::NoSuchVector { vector, count: 1 });
        }
        let mut w = self.world.borrow_mut();
        let t0 = w.now_ns();
        loop {
            if w.nics[self.idx].irq {
                return Ok(true);
            }
            if w.now_ns() - t0 > timeout_ns {
                return Ok(false);
            }
            w.step();
        }
    }
}
