//! The simulated world: N NICs (each a Verilated rnic_top with its host memory and MMIO
//! masters) and the links between their ports, stepped one clock cycle at a time in a fixed
//! order from one seed. Same seed, same configuration: same cycles, same pcap bytes.

use crate::error::Error;
use crate::eth::{Link, LinkConfig, WireFrame};
use crate::hostmem::{HostMem, MemConfig};
use crate::mmio::{Mmio, MmioConfig};
use crate::model::{Model, ports::i, ports::o};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Nominal core clock of the simulated engine.
pub const CLOCK_HZ: f64 = rnic_abi::params::DEFAULT.clock_khz as f64 * 1000.0;
/// Nanoseconds per cycle at the nominal clock.
pub const NS_PER_CYCLE: f64 = 1e9 / CLOCK_HZ;

/// Longest frame [`World::inject_rx`] takes: a 9000-byte jumbo frame (without FCS).
pub const MAX_INJECT_BYTES: usize = 9000;

/// World configuration.
#[derive(Debug, Clone, Copy)]
pub struct WorldConfig {
    pub seed: u64,
    pub nics: usize,
    pub mem: MemConfig,
    pub mmio: MmioConfig,
    pub link: LinkConfig,
    /// Cycles of reset at start.
    pub reset_cycles: u64,
}

impl Default for WorldConfig {
    fn default() -> Self {
        WorldConfig {
            seed: 1,
            nics: 2,
            mem: MemConfig::default(),
            mmio: MmioConfig::default(),
            link: LinkConfig::default(),
            reset_cycles: 4,
        }
    }
}

impl WorldConfig {
    /// Random idle and backpressure on every valid/ready interface the world drives.
    pub fn stressed(mut self, p: f64) -> Self {
        self.mem.stall = p;
        self.mmio.jitter = p;
        self.link.stall = p;
        self
    }
}

/// One NIC: the RTL, the host behind its PCIe port.
pub struct Nic {
    pub model: Model,
    pub mem: HostMem,
    pub mmio: Mmio,
    pub irq: bool,
}

/// The world.
pub struct World {
    pub cfg: WorldConfig,
    pub nics: Vec<Nic>,
    pub links: Vec<Link>,
    pub cycle: u64,
    rng: ChaCha8Rng,
    /// Every frame sent on any link, in send order: (link index, frame).
    pub wire: Vec<(usize, WireFrame)>,
    /// Things outside the world stepped with it, once a cycle after the NICs (e.g. an
    /// external Ethernet port, [`crate::extport`]).
    pub attached: Vec<Box<dyn Attachment>>,
}

/// Something outside the world that runs once a cycle, after the NICs and links.
pub trait Attachment {
    fn cycle(&mut self, w: &mut World);
}

impl World {
    /// Build a world; with two or more NICs, NIC k's port is cabled to NIC k^1's.
    pub fn new(cfg: WorldConfig) -> World {
        let nics: Vec<Nic> = (0..cfg.nics)
            .map(|_| Nic {
                model: Model::new(),
                mem: HostMem::new(cfg.mem),
                mmio: Mmio::new(cfg.mmio),
                irq: false,
            })
            .collect();
        let mut links = Vec::new();
        if cfg.nics >= 2 {
            for k in 0..cfg.nics {
                let peer = if k ^ 1 < cfg.nics { k ^ 1 } else { k };
                links.push(Link::new(cfg.link, k, peer, CLOCK_HZ));
            }
        } else if cfg.nics == 1 {
            // a loopback cable
            links.push(Link::new(cfg.link, 0, 0, CLOCK_HZ));
        }
        let mut w = World {
            cfg,
            nics,
            links,
            cycle: 0,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            wire: Vec::new(),
            attached: Vec::new(),
        };
        for n in &mut w.nics {
            n.model.set_bit(i::RST, true);
        }
        for _ in 0..cfg.reset_cycles {
            w.step();
        }
        for n in &mut w.nics {
            n.model.set_bit(i::RST, false);
        }
        w
    }

    /// Advance every NIC and link by one cycle.
    pub fn step(&mut self) {
        let now = self.cycle;
        for (k, n) in self.nics.iter_mut().enumerate() {
            n.mem.drive(&mut n.model, now, &mut self.rng);
            n.mmio.drive(&mut n.model, &mut self.rng);
            for l in self.links.iter_mut() {
                if l.from == k {
                    l.drive_tx(&mut n.model, &mut self.rng);
                }
                if l.to == k {
                    l.drive_rx(&mut n.model, now);
                }
            }
        }
        for n in &mut self.nics {
            n.model.tick();
        }
        for (k, n) in self.nics.iter_mut().enumerate() {
            n.mem.observe(&n.model, now);
            n.mmio.observe(&n.model, now);
            n.irq = n.model.bit(o::IRQ_REQ);
            for (li, l) in self.links.iter_mut().enumerate() {
                if l.from == k {
                    l.observe_tx(&n.model, now, &mut self.rng);
                    for f in l.tap.drain(..) {
                        self.wire.push((li, f));
                    }
                }
                if l.to == k {
                    l.observe_rx(&n.model, now);
                }
            }
        }
        if !self.attached.is_empty() {
            let mut att = std::mem::take(&mut self.attached);
            for a in att.iter_mut() {
                a.cycle(self);
            }
            self.attached = att;
        }
        self.cycle += 1;
    }

    /// Advance `n` cycles.
    pub fn run(&mut self, n: u64) {
        for _ in 0..n {
            self.step();
        }
    }

    /// Simulated time in nanoseconds.
    pub fn now_ns(&self) -> u64 {
        (self.cycle as f64 * NS_PER_CYCLE) as u64
    }

    /// Queue `frame` for NIC `nic`'s `s_axis_rx`, through the same receive path as the wire
    /// (the link whose far end is `nic`, including its [`crate::eth::RxMode::Drop`] FIFO): it
    /// arrives at line rate right after any frame injected before it, in order with the frames
    /// already on that link. Any size from 1 to [`MAX_INJECT_BYTES`] bytes (no padding, no
    /// FCS). With a peer NIC the frame joins the peer's link; [`World::detach_port`] makes the
    /// test the only sender.
    pub fn inject_rx(&mut self, nic: usize, frame: Vec<u8>) -> Result<u64, Error> {
        if nic >= self.nics.len() {
            return Err(Error::NoSuchNic {
                nic,
                nics: self.nics.len(),
            });
        }
        if frame.is_empty() || frame.len() > MAX_INJECT_BYTES {
            return Err(Error::FrameSize {
                len: frame.len(),
                max: MAX_INJECT_BYTES,
            });
        }
        let now = self.cycle;
        let Some(l) = self.links.iter_mut().find(|l| l.to == nic) else {
            return Err(Error::Check(format!("NIC {nic} has no receive link")));
        };
        Ok(l.inject_paced(now, frame))
    }

    /// Cable NIC `nic`'s port to the test instead of a NIC: the links to and from it are
    /// replaced by a transmit link that only taps (its frames appear in [`World::wire`] and
    /// [`World::sent_by`], nothing receives them) and a receive link fed by
    /// [`World::inject_rx`]; both keep `WorldConfig::link`. A peer that was cabled to `nic`
    /// is left without a port. Returns the indices of the (transmit, receive) links.
    pub fn detach_port(&mut self, nic: usize) -> Result<(usize, usize), Error> {
        if nic >= self.nics.len() {
            return Err(Error::NoSuchNic {
                nic,
                nics: self.nics.len(),
            });
        }
        use crate::extport::EXT;
        self.links.retain(|l| l.from != nic && l.to != nic);
        let mut tx = Link::new(self.cfg.link, nic, EXT, CLOCK_HZ);
        tx.sink = true;
        self.links.push(tx);
        self.links
            .push(Link::new(self.cfg.link, EXT, nic, CLOCK_HZ));
        Ok((self.links.len() - 2, self.links.len() - 1))
    }

    /// Frames NIC `nic` transmitted, in send order, from wire record `since` on (the
    /// [`World::wire`] entries of the links that currently start at `nic`).
    pub fn sent_by(&self, nic: usize, since: usize) -> Vec<&WireFrame> {
        self.wire
            .iter()
            .skip(since)
            .filter(|(li, _)| self.links.get(*li).is_some_and(|l| l.from == nic))
            .map(|(_, f)| f)
            .collect()
    }

    /// Nothing left in flight: all MMIO done, links empty.
    pub fn quiet(&self) -> bool {
        self.nics.iter().all(|n| n.mmio.idle()) && self.links.iter().all(|l| !l.busy())
    }

    /// The host-memory audit of NIC `nic` from its audit record `from` on: every byte the
    /// device DMA-wrote lies inside one of `allowed` (IOVA, length), and the IOMMU model saw no
    /// fault. Returns the number of bytes audited; the error names the first violations.
    pub fn audit_dma_writes(
        &self,
        nic: usize,
        from: usize,
        allowed: &[(u64, usize)],
    ) -> Result<u64, Error> {
        let mem = &self.nics[nic].mem;
        if !mem.faults.is_empty() {
            return Err(Error::Check(format!(
                "NIC {nic}: IOMMU faults (cycle, address, write): {:?}",
                &mem.faults[..mem.faults.len().min(8)]
            )));
        }
        let mut bad = Vec::new();
        let mut n = 0u64;
        for r in mem.audit.iter().skip(from) {
            for (a, _) in &r.bytes {
                n += 1;
                if !allowed.iter().any(|&(s, l)| *a >= s && *a < s + l as u64) {
                    bad.push((r.cycle, *a));
                }
            }
        }
        if bad.is_empty() {
            Ok(n)
        } else {
            Err(Error::Check(format!(
                "NIC {nic}: {} bytes DMA-written outside the registered MRs and CQ rings, first (cycle, IOVA): {:x?}",
                bad.len(),
                &bad[..bad.len().min(8)]
            )))
        }
    }
}
