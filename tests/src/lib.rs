//! Shared helpers for the host-driver tests against the simulated RTL.

use rnic::device::{Bar, Device, DmaBuf};
use rnic::{Result, Rnic};
use rnic_sim::{SharedWorld, SimNic, WorldConfig, world};

/// A two-NIC world with both NICs opened through the driver.
pub fn pair(cfg: WorldConfig) -> (SharedWorld, Rnic<SimNic>, Rnic<SimNic>) {
    let w = world(cfg);
    let a = Rnic::open(SimNic::new(&w, 0).expect("nic 0")).expect("open NIC A");
    let b = Rnic::open(SimNic::new(&w, 1).expect("nic 1")).expect("open NIC B");
    (w, a, b)
}

/// The configurations every system test runs under: plain, and with random idle and
/// backpressure on every valid/ready interface the world drives.
pub fn configs() -> Vec<(&'static str, WorldConfig)> {
    vec![
        ("plain", WorldConfig::default()),
        (
            "stressed",
            WorldConfig {
                seed: 7,
                ..WorldConfig::default()
            }
            .stressed(0.3),
        ),
    ]
}

/// A device wrapper that replaces the value read at one BAR0 offset: a stand-in for a wrong
/// card (wrong magic, unknown major version) in front of the real simulated one.
pub struct PatchedDevice<D: Device> {
    pub inner: D,
    pub off: u64,
    pub value: u32,
}

impl<D: Device> Device for PatchedDevice<D> {
    fn describe(&self) -> String {
        format!("patched({})", self.inner.describe())
    }
    fn bar_len(&self, bar: Bar) -> u64 {
        self.inner.bar_len(bar)
    }
    fn read32(&mut self, bar: Bar, off: u64) -> Result<u32> {
        let v = self.inner.read32(bar, off)?;
        Ok(if bar == Bar::Regs && off == self.off {
            self.value
        } else {
            v
        })
    }
    fn write32(&mut self, bar: Bar, off: u64, val: u32) -> Result<()> {
        self.inner.write32(bar, off, val)
    }
    fn push_wqe(&mut self, off: u64, wqe: &[u8; 64]) -> Result<()> {
        self.inner.push_wqe(off, wqe)
    }
    fn dma_alloc(&mut self, len: usize) -> Result<DmaBuf> {
        self.inner.dma_alloc(len)
    }
    fn dma_free(&mut self, buf: DmaBuf) -> Result<()> {
        self.inner.dma_free(buf)
    }
    fn dma_read(&mut self, buf: &DmaBuf, off: usize, out: &mut [u8]) -> Result<()> {
        self.inner.dma_read(buf, off, out)
    }
    fn dma_write(&mut self, buf: &DmaBuf, off: usize, data: &[u8]) -> Result<()> {
        self.inner.dma_write(buf, off, data)
    }
    fn relax(&mut self) {
        self.inner.relax()
    }
    fn now_ns(&mut self) -> u64 {
        self.inner.now_ns()
    }
    fn wait_irq(&mut self, vector: u32, timeout_ns: u64) -> Result<bool> {
        self.inner.wait_irq(vector, timeout_ns)
    }
}
