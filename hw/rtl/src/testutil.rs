//! Block-test harness pieces (compiled for tests only): building a block as a Verilated
//! shared library, seeded randomness for idle cycles and backpressure, the register-bus
//! driver, and a host-memory AXI4 slave with independent random stalls on every channel.

use crate::vlt::DynModel;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::Block;
use std::collections::{HashMap, VecDeque};

/// Generate, lint, verilate and load a block; panics with Verilator's output on failure.
pub fn model<B: Block>(mut b: B, top: &str) -> DynModel {
    DynModel::build(&mut b, top, "clock").unwrap_or_else(|e| panic!("building {top}: {e}"))
}

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// True with probability `p` (random idle / backpressure).
pub fn chance(r: &mut ChaCha8Rng, p: f64) -> bool {
    p > 0.0 && r.random_bool(p)
}

/// Hold reset for a few cycles.
pub fn reset(m: &mut DynModel) {
    m.set("rst", 1);
    for _ in 0..3 {
        m.tick();
    }
    m.set("rst", 0);
}

/// One register-bus write pulse.
pub fn bus_write(m: &mut DynModel, addr: u32, data: u32) {
    m.set("bus_addr", addr as u64);
    m.set("bus_wdata", data as u64);
    m.set("bus_wr", 1);
    m.tick();
    m.set("bus_wr", 0);
}

/// One register-bus read: the pulse, then the answer one cycle later.
pub fn bus_read(m: &mut DynModel, addr: u32) -> u32 {
    m.set("bus_addr", addr as u64);
    m.set("bus_rd", 1);
    m.tick();
    m.set("bus_rd", 0);
    m.tick();
    m.get("bus_rdata") as u32
}

/// Host memory behind an AXI4 slave (ports `<p>_aw*`, `<p>_w*`, ...), with random stalls on
/// every channel, a random read latency, and protocol checks (4 KiB boundaries, WLAST).
pub struct MemSlave {
    pub p: &'static str,
    pub mem: HashMap<u64, u8>,
    pub stall: f64,
    aw: VecDeque<(u64, u32)>,
    w_beat: u32,
    reads: VecDeque<(u64, u32, u64)>,
    b: VecDeque<u64>,
    pub beats_written: u64,
    pub bursts: u64,
    drv: [bool; 5],
}

impl MemSlave {
    pub fn new(p: &'static str, stall: f64) -> Self {
        MemSlave {
            p,
            mem: HashMap::new(),
            stall,
            aw: VecDeque::new(),
            w_beat: 0,
            reads: VecDeque::new(),
            b: VecDeque::new(),
            beats_written: 0,
            bursts: 0,
            drv: [false; 5],
        }
    }
    fn n(&self, s: &str) -> String {
        format!("{}_{s}", self.p)
    }
    /// Drive this cycle's slave outputs.
    pub fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
        let now = m.cycle;
        let awready = self.aw.len() < 4 && !chance(r, self.stall);
        let wready = !self.aw.is_empty() && !chance(r, self.stall);
        let bvalid = self.b.front().is_some_and(|t| *t <= now) && !chance(r, self.stall);
        let arready = self.reads.len() < 8 && !chance(r, self.stall);
        let rvalid = self.reads.front().is_some_and(|x| x.2 <= now) && !chance(r, self.stall);
        self.drv = [awready, wready, bvalid, arready, rvalid];
        m.set(&self.n("awready"), awready as u64);
        m.set(&self.n("wready"), wready as u64);
        m.set(&self.n("bvalid"), bvalid as u64);
        m.set(&self.n("bresp"), 0);
        m.set(&self.n("arready"), arready as u64);
        m.set(&self.n("rvalid"), rvalid as u64);
        m.set(&self.n("rresp"), 0);
        if let Some(&(addr, beats, _)) = self.reads.front() {
            let data: Vec<u8> = (0..64)
                .map(|k| *self.mem.get(&(addr + k)).unwrap_or(&0))
                .collect();
            m.set_bytes(&self.n("rdata"), &data);
            m.set(&self.n("rlast"), (beats == 1) as u64);
        }
    }
    /// Observe this cycle's handshakes.
    pub fn observe(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
        let now = m.cycle;
        let [awready, wready, bvalid, arready, rvalid] = self.drv;
        if awready && m.bit(&self.n("awvalid")) {
            let addr = m.get(&self.n("awaddr"));
            let beats = m.get(&self.n("awlen")) as u32 + 1;
            assert_eq!(addr % 64, 0, "unaligned AW");
            assert_eq!(m.get(&self.n("awsize")), 6);
            assert!(
                addr / 4096 == (addr + 64 * beats as u64 - 1) / 4096,
                "AW burst at {addr:#x} x{beats} crosses 4 KiB"
            );
            self.aw.push_back((addr, beats));
            self.bursts += 1;
        }
        if wready && m.bit(&self.n("wvalid")) {
            let (addr, beats) = self.aw[0];
            let data = m.get_bytes(&self.n("wdata"));
            let strb = m.get(&self.n("wstrb"));
            let base = addr + 64 * self.w_beat as u64;
            for k in 0..64 {
                if strb >> k & 1 == 1 {
                    self.mem.insert(base + k, data[k as usize]);
                }
            }
            self.w_beat += 1;
            self.beats_written += 1;
            assert_eq!(
                m.bit(&self.n("wlast")),
                self.w_beat == beats,
                "WLAST on beat {} of {beats}",
                self.w_beat
            );
            if self.w_beat == beats {
                self.aw.pop_front();
                self.w_beat = 0;
                self.b.push_back(now + r.random_range(1..20));
            }
        }
        if bvalid && m.bit(&self.n("bready")) {
            self.b.pop_front();
        }
        if arready && m.bit(&self.n("arvalid")) {
            let addr = m.get(&self.n("araddr"));
            let beats = m.get(&self.n("arlen")) as u32 + 1;
            assert!(
                addr / 4096 == (addr + 64 * beats as u64 - 1) / 4096,
                "AR burst crosses 4 KiB"
            );
            self.reads
                .push_back((addr, beats, now + r.random_range(2..40)));
        }
        if rvalid && m.bit(&self.n("rready")) {
            let f = &mut self.reads[0];
            f.0 += 64;
            f.1 -= 1;
            if f.1 == 0 {
                self.reads.pop_front();
            }
        }
    }
}

/// Every frame of the shared SoftRoCE capture (`shared/vectors/rxe-perftest-mtu1024.pcap`), in
/// order. Panics (fails the test) when the capture is missing: CI has `../shared`.
pub fn vector_frames() -> Vec<Vec<u8>> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/vectors/rxe-perftest-mtu1024.pcap");
    let file = std::fs::File::open(&path)
        .unwrap_or_else(|e| panic!("the shared vectors {}: {e}", path.display()));
    let mut rd = pcap_file::pcap::PcapReader::new(file).expect("pcap header");
    let mut out = vec![];
    while let Some(p) = rd.next_packet() {
        out.push(p.expect("pcap record").data.into_owned());
    }
    out
}
