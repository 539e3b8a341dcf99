//! Host memory behind PCIe, as the engine's `m_axi` master sees it: an AXI4 slave with read
//! latency, write latency, bandwidth (token bucket, bytes per cycle), an outstanding-read
//! limit, and an IOMMU-like map of the IOVAs the driver registered. Accesses outside a mapped
//! buffer are refused (DECERR, nothing written) and recorded as faults. Every write is audited.

use crate::model::{Model, ports::i, ports::o};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, VecDeque};

/// PCIe / host-memory timing. Defaults approximate a PCIe Gen3 x16 card at 250 MHz.
#[derive(Debug, Clone, Copy)]
pub struct MemConfig {
    /// Cycles from AR to the first R beat.
    pub read_latency: u64,
    /// Cycles from the last W beat to B.
    pub write_latency: u64,
    /// Bytes per cycle each direction (13 GB/s at 250 MHz = 52).
    pub bytes_per_cycle: u32,
    /// Outstanding read bursts accepted. 64: a PCIe endpoint's non-posted requests in
    /// flight are bounded by its tags, and the UltraScale Gen3 integrated block tracks 64
    /// (6-bit tags, Xilinx PG156 "Tag Management for Non-Posted Transactions"; UltraScale+
    /// blocks allow more). It matches `dmaeng::RD_MAX_BURSTS`. Until stop 32 this was 32,
    /// which held 64-byte WRITEs from one QP to 150 / 32 = 4.7 cycles per payload read.
    pub max_reads: usize,
    /// Probability (per cycle) that rvalid/wready/bvalid are held low: random backpressure.
    pub stall: f64,
}

impl Default for MemConfig {
    fn default() -> Self {
        MemConfig {
            read_latency: 150,
            write_latency: 100,
            bytes_per_cycle: 52,
            max_reads: 64,
            stall: 0.0,
        }
    }
}

/// One DMA write as seen at the host: start address and the bytes written (strobed lanes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteRecord {
    pub cycle: u64,
    pub addr: u64,
    pub bytes: Vec<(u64, u8)>,
}

/// A buffer the driver mapped.
#[derive(Debug, Clone, Copy)]
pub struct Mapping {
    pub iova: u64,
    pub len: u64,
    pub writable: bool,
}

struct Burst {
    addr: u64,
    /// The burst's first (aligned) address.
    first: u64,
    beats: u32,
    ready_at: u64,
    ok: bool,
}

/// Host memory and its AXI4 slave port.
pub struct HostMem {
    pub cfg: MemConfig,
    /// Page number -> page (an FxHashMap: the DMA models look a page up for every beat).
    pages: FxHashMap<u64, Box<[u8; 4096]>>,
    maps: BTreeMap<u64, (Mapping, u64)>,
    next_iova: u64,
    next_id: u64,
    reads: VecDeque<Burst>,
    writes: VecDeque<Burst>,
    /// Write responses due: (cycle due, ok, the burst's first address).
    bresp: VecDeque<(u64, bool, u64)>,
    rd_tokens: i64,
    wr_tokens: i64,
    /// Every write that reached memory.
    pub audit: Vec<WriteRecord>,
    /// Every write response the device took: (the burst's first address, cycle of the B
    /// handshake), in order: when a write became visible to the host as complete. Recorded
    /// only while `log_b` is set (latency probes).
    pub b_log: Vec<(u64, u64)>,
    pub log_b: bool,
    /// Refused accesses: (cycle, address, is_write).
    pub faults: Vec<(u64, u64, bool)>,
    /// Bytes moved each direction.
    pub bytes_read: u64,
    pub bytes_written: u64,
    // outputs driven this cycle (remembered for the handshake)
    arready: bool,
    awready: bool,
    wready: bool,
    rvalid: bool,
    bvalid: bool,
}

/// IOVA space starts here (the IOMMU of the model maps nothing below).
pub const IOVA_BASE: u64 = 0x1_0000_0000;

impl HostMem {
    pub fn new(cfg: MemConfig) -> Self {
        HostMem {
            cfg,
            pages: FxHashMap::default(),
            maps: BTreeMap::new(),
            next_iova: IOVA_BASE,
            next_id: 1,
            reads: VecDeque::new(),
            writes: VecDeque::new(),
            bresp: VecDeque::new(),
            rd_tokens: 0,
            wr_tokens: 0,
            audit: Vec::new(),
            faults: Vec::new(),
            b_log: Vec::new(),
            log_b: false,
            bytes_read: 0,
            bytes_written: 0,
            arready: false,
            awready: false,
            wready: false,
            rvalid: false,
            bvalid: false,
        }
    }

    /// Map a new zeroed buffer of `len` bytes; returns (id, iova). Page aligned, with an
    /// unmapped guard page after every buffer.
    pub fn map(&mut self, len: u64, writable: bool) -> (u64, u64) {
        let iova = self.next_iova;
        let pages = len.div_ceil(4096).max(1);
        self.next_iova += (pages + 1) * 4096;
        let id = self.next_id;
        self.next_id += 1;
        for p in 0..pages {
            self.pages.insert(iova / 4096 + p, Box::new([0u8; 4096]));
        }
        self.maps.insert(
            iova,
            (
                Mapping {
                    iova,
                    len,
                    writable,
                },
                id,
            ),
        );
        (id, iova)
    }

    /// Unmap a buffer by id; false if unknown.
    pub fn unmap(&mut self, id: u64) -> bool {
        let Some((&iova, &(m, _))) = self.maps.iter().find(|(_, (_, mid))| *mid == id) else {
            return false;
        };
        self.maps.remove(&iova);
        for p in 0..m.len.div_ceil(4096).max(1) {
            self.pages.remove(&(iova / 4096 + p));
        }
        true
    }

    /// The mapping containing `addr`, if any.
    pub fn mapping(&self, addr: u64) -> Option<Mapping> {
        self.maps
            .range(..=addr)
            .next_back()
            .map(|(_, (m, _))| *m)
            .filter(|m| addr < m.iova + m.len)
    }

    /// Host CPU access (no simulated time): read bytes.
    pub fn read(&self, addr: u64, out: &mut [u8]) {
        // a page at a time (unmapped pages read as zero)
        let mut done = 0;
        while done < out.len() {
            let a = addr + done as u64;
            let off = (a % 4096) as usize;
            let n = (4096 - off).min(out.len() - done);
            match self.pages.get(&(a / 4096)) {
                Some(p) => out[done..done + n].copy_from_slice(&p[off..off + n]),
                None => out[done..done + n].fill(0),
            }
            done += n;
        }
    }

    /// Host CPU access: write bytes.
    pub fn write(&mut self, addr: u64, data: &[u8]) {
        // a page at a time (writes to unmapped pages are dropped)
        let mut done = 0;
        while done < data.len() {
            let a = addr + done as u64;
            let off = (a % 4096) as usize;
            let n = (4096 - off).min(data.len() - done);
            if let Some(p) = self.pages.get_mut(&(a / 4096)) {
                p[off..off + n].copy_from_slice(&data[done..done + n]);
            }
            done += n;
        }
    }

    pub fn byte(&self, a: u64) -> u8 {
        self.pages
            .get(&(a / 4096))
            .map_or(0, |p| p[(a % 4096) as usize])
    }

    fn set_byte(&mut self, a: u64, v: u8) {
        if let Some(p) = self.pages.get_mut(&(a / 4096)) {
            p[(a % 4096) as usize] = v;
        }
    }

    /// Does the IOMMU let `[addr, addr+len)` through? Page granular, like a real IOMMU: the
    /// pages must belong to one mapping (writable if `write`).
    fn allowed(&self, addr: u64, len: u64, write: bool) -> bool {
        self.maps
            .range(..=addr)
            .next_back()
            .map(|(_, (m, _))| *m)
            .is_some_and(|m| {
                addr + len <= m.iova + m.len.div_ceil(4096).max(1) * 4096 && (!write || m.writable)
            })
    }

    /// Drive the slave's outputs (the model's m_axi inputs) for this cycle.
    pub fn drive(&mut self, m: &mut Model, now: u64, rng: &mut ChaCha8Rng) {
        let bpc = self.cfg.bytes_per_cycle as i64;
        self.rd_tokens = (self.rd_tokens + bpc).min(4 * 64);
        self.wr_tokens = (self.wr_tokens + bpc).min(4 * 64);
        let stall = |rng: &mut ChaCha8Rng| self.cfg.stall > 0.0 && rng.random_bool(self.cfg.stall);
        self.arready = self.reads.len() < self.cfg.max_reads;
        self.awready = self.writes.len() < 8;
        self.wready = !self.writes.is_empty() && self.wr_tokens >= 64 && !stall(rng);
        self.rvalid = self.reads.front().is_some_and(|r| r.ready_at <= now)
            && self.rd_tokens >= 64
            && !stall(rng);
        self.bvalid = self.bresp.front().is_some_and(|(t, _, _)| *t <= now) && !stall(rng);
        m.set_bit(i::M_AXI_ARREADY, self.arready);
        m.set_bit(i::M_AXI_AWREADY, self.awready);
        m.set_bit(i::M_AXI_WREADY, self.wready);
        m.set_bit(i::M_AXI_RVALID, self.rvalid);
        m.set_bit(i::M_AXI_BVALID, self.bvalid);
        m.set(i::M_AXI_BID, 0);
        m.set(i::M_AXI_RID, 0);
        if self.bvalid {
            let ok = self.bresp[0].1;
            m.set(i::M_AXI_BRESP, if ok { 0 } else { 3 });
        }
        if self.rvalid {
            let r = &self.reads[0];
            let mut beat = [0u8; 64];
            if r.ok {
                self.read(r.addr, &mut beat);
            }
            m.set_bytes(i::M_AXI_RDATA, &beat);
            m.set(i::M_AXI_RRESP, if r.ok { 0 } else { 3 });
            m.set_bit(i::M_AXI_RLAST, r.beats == 1);
        }
    }

    /// Observe the handshakes of this cycle (the model's outputs sampled before the edge).
    pub fn observe(&mut self, m: &Model, now: u64) {
        if self.arready && m.bit(o::M_AXI_ARVALID) {
            let addr = m.get(o::M_AXI_ARADDR);
            let beats = m.get(o::M_AXI_ARLEN) as u32 + 1;
            let size = 1u64 << m.get(o::M_AXI_ARSIZE);
            let ok = self.allowed(addr & !(size - 1), beats as u64 * size, false);
            if !ok {
                self.faults.push((now, addr, false));
            }
            self.reads.push_back(Burst {
                addr: addr & !63,
                first: addr & !63,
                beats,
                ready_at: now + self.cfg.read_latency,
                ok,
            });
        }
        if self.rvalid && m.bit(o::M_AXI_RREADY) {
            self.rd_tokens -= 64;
            self.bytes_read += 64;
            let r = &mut self.reads[0];
            r.beats -= 1;
            r.addr += 64;
            if r.beats == 0 {
                self.reads.pop_front();
            }
        }
        if self.awready && m.bit(o::M_AXI_AWVALID) {
            let addr = m.get(o::M_AXI_AWADDR);
            let beats = m.get(o::M_AXI_AWLEN) as u32 + 1;
            self.writes.push_back(Burst {
                addr: addr & !63,
                first: addr & !63,
                beats,
                ready_at: 0,
                ok: true,
            });
        }
        if self.wready && m.bit(o::M_AXI_WVALID) {
            self.wr_tokens -= 64;
            let mut data = [0u8; 64];
            m.get_bytes(o::M_AXI_WDATA, &mut data);
            let strb = m.get(o::M_AXI_WSTRB);
            let last = m.bit(o::M_AXI_WLAST);
            let w = &mut self.writes[0];
            let base = w.addr;
            w.addr += 64;
            w.beats = w.beats.saturating_sub(1);
            let mut rec = WriteRecord {
                cycle: now,
                addr: base,
                bytes: Vec::new(),
            };
            let mut ok = true;
            for lane in 0..64u64 {
                if strb >> lane & 1 == 1 {
                    let a = base + lane;
                    if self.allowed(a, 1, true) {
                        rec.bytes.push((a, data[lane as usize]));
                    } else {
                        ok = false;
                    }
                }
            }
            if !ok {
                self.faults.push((now, base, true));
                self.writes[0].ok = false;
            }
            for (a, b) in &rec.bytes {
                self.set_byte(*a, *b);
            }
            self.bytes_written += rec.bytes.len() as u64;
            if !rec.bytes.is_empty() {
                self.audit.push(rec);
            }
            let w = &self.writes[0];
            if last || w.beats == 0 {
                let (ok, first) = (w.ok, w.first);
                self.bresp
                    .push_back((now + self.cfg.write_latency, ok, first));
                self.writes.pop_front();
            }
        }
        // the response is taken whatever `log_b` says (the pop comes first)
        if self.bvalid
            && m.bit(o::M_AXI_BREADY)
            && let Some((_, _, first)) = self.bresp.pop_front()
            && self.log_b
        {
            self.b_log.push((first, now));
        }
    }
}
