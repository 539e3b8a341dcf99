//! Block-test harness pieces (compiled for tests only): building a block as a Verilated
//! shared library, seeded randomness for idle cycles and backpressure, the register-bus
//! driver, and a host-memory AXI4 slave with independent random stalls on every channel.

#![allow(dead_code)] // not every test binary uses every model

use crate::common::vlt::DynModel;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_hdl::prelude::Block;
use std::collections::{HashMap, VecDeque};

/// Generate, lint, verilate and load a block; panics with Verilator's output on failure.
pub fn model<B: Block>(mut b: B, top: &str) -> DynModel {
    DynModel::build(&mut b, top, "clock").unwrap_or_else(|e| panic!("building {top}: {e}"))
}

/// The same block in the form synthesis sees (`` `ifdef VERILATOR `` sections not taken:
/// [`DynModel::build_synth_form`]).
pub fn model_synth_form<B: Block>(mut b: B, top: &str) -> DynModel {
    DynModel::build_synth_form(&mut b, top, "clock")
        .unwrap_or_else(|e| panic!("building {top} (synthesis form): {e}"))
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

/// What [`queue_stress`] saw: entries taken out, of those the ones that went straight
/// through an empty queue in their cycle, and cycles the queue was full.
pub struct QueueStress {
    pub got: u64,
    pub thru: u64,
    pub full: u64,
}

/// A valid/ready queue block under random idle and random backpressure, in phases where the
/// consumer is faster (offer 0.4, ready 0.7) and slower (0.8, 0.3) than the producer, for
/// `cycles` cycles. Ports `{i}valid`/`{i}ready` in, `{o}valid`/`{o}ready` out (`i`, `o`: the
/// prefixes); `make` draws an entry, `set` drives it on the input ports, `check` asserts the
/// output ports show it. Asserts that every entry comes out once and in order, that
/// `{o}valid` is high exactly while an entry is held, and that at most `depth` are held. For
/// a first-word fall-through queue: an entry taken in a cycle may leave in that cycle.
pub fn queue_stress<T: Clone>(
    m: &mut DynModel,
    seed: u64,
    cycles: u64,
    ports: (&str, &str, usize),
    make: impl FnMut(&mut ChaCha8Rng) -> T,
    set: impl Fn(&mut DynModel, &T),
    check: impl Fn(&DynModel, &T),
) -> QueueStress {
    stress(m, seed, cycles, ports, false, make, set, check)
}

/// [`queue_stress`] for a queue whose outputs are registers: an entry taken in a cycle is
/// held (and `{o}valid` shows it) from the next cycle on, so `thru` stays 0.
pub fn reg_queue_stress<T: Clone>(
    m: &mut DynModel,
    seed: u64,
    cycles: u64,
    ports: (&str, &str, usize),
    make: impl FnMut(&mut ChaCha8Rng) -> T,
    set: impl Fn(&mut DynModel, &T),
    check: impl Fn(&DynModel, &T),
) -> QueueStress {
    stress(m, seed, cycles, ports, true, make, set, check)
}

/// A registered queue at full rate: an entry offered (`set` drives its payload) and the
/// consumer ready in every cycle for `cycles` cycles; `{i}ready` must stay high, and
/// `{o}valid` is counted. Returns the cycles with an entry out.
pub fn full_rate<T>(
    m: &mut DynModel,
    seed: u64,
    cycles: u64,
    (i, o): (&str, &str),
    mut make: impl FnMut(&mut ChaCha8Rng) -> T,
    set: impl Fn(&mut DynModel, &T),
) -> u64 {
    let mut r = rng(seed);
    let mut outs = 0;
    for c in 0..cycles {
        let e = make(&mut r);
        set(m, &e);
        m.set(&format!("{i}valid"), 1);
        m.set(&format!("{o}ready"), 1);
        m.tick();
        assert!(m.bit(&format!("{i}ready")), "not ready in cycle {c}");
        outs += m.bit(&format!("{o}valid")) as u64;
    }
    outs
}

#[allow(clippy::too_many_arguments)]
fn stress<T: Clone>(
    m: &mut DynModel,
    seed: u64,
    cycles: u64,
    (i, o, depth): (&str, &str, usize),
    registered: bool,
    mut make: impl FnMut(&mut ChaCha8Rng) -> T,
    set: impl Fn(&mut DynModel, &T),
    check: impl Fn(&DynModel, &T),
) -> QueueStress {
    let mut r = rng(seed);
    let mut held = VecDeque::new();
    let mut st = QueueStress {
        got: 0,
        thru: 0,
        full: 0,
    };
    let mut cur: Option<T> = None;
    for cyc in 0..cycles {
        let (p_offer, p_ready) = if cyc % 6000 < 3000 {
            (0.4, 0.7)
        } else {
            (0.8, 0.3)
        };
        if cur.is_none() && chance(&mut r, p_offer) {
            cur = Some(make(&mut r));
        }
        m.set(&format!("{i}valid"), cur.is_some() as u64);
        if let Some(e) = &cur {
            set(m, e);
        }
        let rdy = chance(&mut r, p_ready);
        m.set(&format!("{o}ready"), rdy as u64);
        let was_empty = held.is_empty();
        m.tick();
        let in_ready = m.bit(&format!("{i}ready"));
        st.full += !in_ready as u64;
        let offered = in_ready && cur.is_some();
        let mut taken = if in_ready { cur.take() } else { None };
        if !registered && let Some(e) = taken.take() {
            held.push_back(e);
        }
        let valid = m.bit(&format!("{o}valid"));
        assert_eq!(
            valid,
            !held.is_empty(),
            "valid while (and only while) one is held"
        );
        // (`valid` is `!held.is_empty()`, asserted above)
        if rdy && let Some(e) = held.pop_front() {
            check(m, &e);
            st.got += 1;
            st.thru += (was_empty && offered) as u64;
        }
        // (a registered queue holds this cycle's entry from the next cycle on)
        if let Some(e) = taken {
            held.push_back(e);
        }
        assert!(held.len() <= depth, "{} entries held", held.len());
    }
    st
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
/// every channel, a random read latency, and protocol checks (4 KiB boundaries, WLAST, and an
/// AR / AW offered and not taken stays offered with the same address and length).
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
    /// the AR and AW offered last cycle and not taken (address, length)
    held: [Option<(u64, u64)>; 2],
}

impl MemSlave {
    /// This cycle's ARREADY and AWREADY (as driven).
    pub fn ready_ar_aw(&self) -> (bool, bool) {
        (self.drv[3], self.drv[0])
    }

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
            held: [None; 2],
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
        // AXI: a valid address stays valid and unchanged until its handshake
        for (k, (ch, rdy)) in [("ar", arready), ("aw", awready)].into_iter().enumerate() {
            let v = m.bit(&self.n(&format!("{ch}valid")));
            let cur = (
                m.get(&self.n(&format!("{ch}addr"))),
                m.get(&self.n(&format!("{ch}len"))),
            );
            let held = &mut self.held[k];
            if let Some(h) = *held {
                assert!(v, "{ch}valid dropped before its handshake (cycle {now})");
                assert_eq!(
                    cur, h,
                    "{ch} address changed under a held valid (cycle {now})"
                );
            }
            *held = (v && !rdy).then_some(cur);
        }
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

/// Every frame of the SoftRoCE capture kept in the repository
/// (`tests/vectors/rxe-perftest-mtu1024.pcap`, see its README), in order. Panics (fails the
/// test) when the capture is missing.
pub fn vector_frames() -> Vec<Vec<u8>> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/vectors/rxe-perftest-mtu1024.pcap");
    let file = std::fs::File::open(&path)
        .unwrap_or_else(|e| panic!("the SoftRoCE vectors {}: {e}", path.display()));
    let mut rd = pcap_file::pcap::PcapReader::new(file).expect("pcap header");
    let mut out = vec![];
    while let Some(p) = rd.next_packet() {
        out.push(p.expect("pcap record").data.into_owned());
    }
    out
}

/// Read a little-endian field of up to 8 bytes from a record image.
pub fn le(rec: &[u8], off: usize, bytes: usize) -> u64 {
    (0..bytes).fold(0, |a, k| a | (rec[off + k] as u64) << (8 * k))
}

/// The context store seen from a client's [`crate::common::bus::CtxPortM`] (ports `<p>_req`, ...):
/// grants with random stalls, answers reads 2 cycles after the grant, applies byte-enabled
/// writes, and logs every write (record index, byte-enable mask) for the tests to check.
/// Call `drive` before `tick` and `observe` after it.
pub struct CtxModel {
    pub p: &'static str,
    pub rec: HashMap<u32, [u8; 64]>,
    pub stall: f64,
    pub writes: Vec<(u32, u64)>,
    /// Reads taken, by record.
    pub reads: Vec<u32>,
    pending: VecDeque<(u64, [u8; 64])>,
    /// The grant driven in the current cycle (set by `drive`).
    pub gnt: bool,
    /// The write snoop (`CtxSnoopS` port prefix, the client's own `src`) and its queue:
    /// (record, byte enables, writer), one shown per cycle with the record's bytes as they
    /// are when shown (a write queued behind others never shows older bytes than the store
    /// holds).
    snoop: Option<(&'static str, u64)>,
    snq: VecDeque<(u32, u64, u64)>,
    /// A second, read-only client port ([`crate::common::bus::CtxRdM`], its prefix): its own
    /// random grants and read queue on the same records. A write and a read of one record in
    /// one cycle read the written bytes (the store defers such a read to after the write).
    rd2: Option<&'static str>,
    /// The `sq_pi` write snoop ([`crate::common::bus::PiSnoopS`] port prefix) and its queue
    /// of QP numbers, one shown per cycle with the record's `sq_pi` as it is when shown.
    pisn: Option<&'static str>,
    piq: VecDeque<u32>,
    gnt2: bool,
    pending2: VecDeque<(u64, [u8; 64])>,
}

impl CtxModel {
    pub fn new(p: &'static str, stall: f64) -> Self {
        CtxModel {
            p,
            rec: HashMap::new(),
            stall,
            writes: vec![],
            reads: vec![],
            pending: VecDeque::new(),
            gnt: false,
            snoop: None,
            snq: VecDeque::new(),
            rd2: None,
            pisn: None,
            piq: VecDeque::new(),
            gnt2: false,
            pending2: VecDeque::new(),
        }
    }
    /// Serve the client's read-only port `prefix` too (same stall probability).
    pub fn with_rd_port(mut self, prefix: &'static str) -> Self {
        self.rd2 = Some(prefix);
        self
    }
    /// Drive the client's write-snoop port `prefix` too (the client is writer `own`): its own
    /// writes and [`CtxModel::write`]s show there a cycle after they were applied.
    pub fn with_snoop(mut self, prefix: &'static str, own: u64) -> Self {
        self.snoop = Some((prefix, own));
        self
    }
    /// Drive the client's `sq_pi` snoop port `prefix` too (see [`CtxModel::write_pi`]).
    pub fn with_pi_snoop(mut self, prefix: &'static str) -> Self {
        self.pisn = Some(prefix);
        self
    }
    /// The doorbell unit sets QP `qpn`'s `QpContext.sq_pi` to `idx` now (the store's `sq_pi`
    /// bank), shown on the `sq_pi` snoop port.
    pub fn write_pi(&mut self, qpn: u32, idx: u16) {
        let off = crate::common::bus::field(rnic_abi::queue::QpContext::FIELDS, "sq_pi").offset;
        let mut rec = self.get(qpn);
        rec[off..off + 2].copy_from_slice(&idx.to_le_bytes());
        self.rec.insert(qpn, rec);
        if self.pisn.is_some() {
            self.piq.push_back(qpn);
        }
    }
    /// Another writer (`src`) writes the bytes `be` of record `idx` now (as the store applies
    /// a write it took), shown on the snoop port.
    pub fn write(&mut self, idx: u32, data: &[u8; 64], be: u64, src: u64) {
        let mut rec = self.get(idx);
        for k in 0..64 {
            if be >> k & 1 == 1 {
                rec[k] = data[k];
            }
        }
        self.rec.insert(idx, rec);
        if self.snoop.is_some() {
            self.snq.push_back((idx, be, src));
        }
    }
    /// A whole record written by the driver (the BAR0 mailbox).
    pub fn put(&mut self, idx: u32, data: [u8; 64]) {
        self.write(idx, &data, u64::MAX, crate::common::bus::CTX_SRC_HOST);
    }
    /// [`CtxModel::write`] of a whole new record, with the byte enables of the bytes that
    /// differ.
    pub fn write_diff(&mut self, idx: u32, data: &[u8; 64], src: u64) {
        let old = self.get(idx);
        let be = (0..64).fold(0u64, |m, k| m | (((old[k] != data[k]) as u64) << k));
        self.write(idx, data, be, src);
    }
    fn n(&self, s: &str) -> String {
        format!("{}_{s}", self.p)
    }
    pub fn get(&self, idx: u32) -> [u8; 64] {
        self.rec.get(&idx).copied().unwrap_or([0; 64])
    }
    pub fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
        self.gnt = !chance(r, self.stall);
        m.set(&self.n("gnt"), self.gnt as u64);
        let due = self.pending.front().is_some_and(|x| x.0 == m.cycle);
        m.set(&self.n("rvalid"), due as u64);
        if due {
            let d = self.pending.pop_front().unwrap().1;
            m.set_bytes(&self.n("rdata"), &d);
        }
        if let Some(p2) = self.rd2 {
            self.gnt2 = !chance(r, self.stall);
            m.set(&format!("{p2}_gnt"), self.gnt2 as u64);
            let due = self.pending2.front().is_some_and(|x| x.0 == m.cycle);
            m.set(&format!("{p2}_rvalid"), due as u64);
            if due {
                let d = self.pending2.pop_front().unwrap().1;
                m.set_bytes(&format!("{p2}_rdata"), &d);
            }
        }
        if let Some(pp) = self.pisn {
            let w = self.piq.pop_front();
            m.set(&format!("{pp}_we"), w.is_some() as u64);
            if let Some(qpn) = w {
                let off =
                    crate::common::bus::field(rnic_abi::queue::QpContext::FIELDS, "sq_pi").offset;
                m.set(&format!("{pp}_qpn"), qpn as u64);
                m.set(&format!("{pp}_idx"), le(&self.get(qpn), off, 2));
            }
        }
        if let Some((sp, _)) = self.snoop {
            let w = self.snq.pop_front();
            m.set(&format!("{sp}_we"), w.is_some() as u64);
            if let Some((idx, be, src)) = w {
                m.set(&format!("{sp}_addr"), idx as u64);
                m.set(&format!("{sp}_wbe"), be);
                m.set(&format!("{sp}_src"), src);
                m.set_bytes(&format!("{sp}_wdata"), &self.get(idx));
            }
        }
    }
    pub fn observe(&mut self, m: &mut DynModel) {
        self.observe_main(m);
        if let Some(p2) = self.rd2
            && self.gnt2
            && m.bit(&format!("{p2}_req"))
        {
            let idx = m.get(&format!("{p2}_addr")) as u32;
            self.reads.push(idx);
            self.pending2.push_back((m.cycle + 1, self.get(idx)));
        }
    }
    fn observe_main(&mut self, m: &mut DynModel) {
        if !(self.gnt && m.bit(&self.n("req"))) {
            return;
        }
        let idx = m.get(&self.n("addr")) as u32;
        if m.bit(&self.n("we")) {
            let d = m.get_bytes(&self.n("wdata"));
            let be = m.get(&self.n("wbe"));
            let mut rec = self.get(idx);
            for k in 0..64 {
                if be >> k & 1 == 1 {
                    rec[k] = d[k];
                }
            }
            self.rec.insert(idx, rec);
            self.writes.push((idx, be));
            if let Some((_, own)) = self.snoop {
                self.snq.push_back((idx, be, own));
            }
        } else {
            // taken in cycle m.cycle - 1 (tick already advanced): data in that cycle + 2
            self.reads.push(idx);
            self.pending.push_back((m.cycle + 1, self.get(idx)));
        }
    }
}

/// The ring memory seen from a client's [`crate::common::bus::RingPortM`]: `slots` holds 64-byte
/// WQE slots by index; same timing as [`CtxModel`].
pub struct RingModel {
    pub p: &'static str,
    pub slots: HashMap<u32, [u8; 64]>,
    pub stall: f64,
    pub reads: u64,
    /// The slots read, in order.
    pub read_slots: Vec<u32>,
    pending: VecDeque<(u64, [u8; 64])>,
    gnt: bool,
}

impl RingModel {
    pub fn new(p: &'static str, stall: f64) -> Self {
        RingModel {
            p,
            slots: HashMap::new(),
            stall,
            reads: 0,
            read_slots: vec![],
            pending: VecDeque::new(),
            gnt: false,
        }
    }
    fn n(&self, s: &str) -> String {
        format!("{}_{s}", self.p)
    }
    pub fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
        self.gnt = !chance(r, self.stall);
        m.set(&self.n("gnt"), self.gnt as u64);
        let due = self.pending.front().is_some_and(|x| x.0 == m.cycle);
        m.set(&self.n("rvalid"), due as u64);
        if due {
            let d = self.pending.pop_front().unwrap().1;
            m.set_bytes(&self.n("rdata"), &d);
        }
    }
    pub fn observe(&mut self, m: &mut DynModel) {
        if self.gnt && m.bit(&self.n("req")) {
            let slot = m.get(&self.n("slot")) as u32;
            self.reads += 1;
            self.read_slots.push(slot);
            let d = self.slots.get(&slot).copied().unwrap_or([0; 64]);
            self.pending.push_back((m.cycle + 1, d));
        }
    }
}

/// The DMA engine seen from a read client ([`crate::common::bus::DmaRdM`], ports `<p>_cmd_*`,
/// `<p>_dat_*`): takes commands with random stalls, returns packed data after a random
/// latency with random gaps, in command order. `bad` ranges answer with `dat_err`.
pub struct DmaRdModel {
    pub p: &'static str,
    pub mem: HashMap<u64, u8>,
    pub stall: f64,
    pub cmds: Vec<(u64, u32)>,
    pub bad: Vec<(u64, u64)>,
    q: VecDeque<(u64, u64, u32, u32)>,
    drv: (bool, bool),
}

impl DmaRdModel {
    pub fn new(p: &'static str, stall: f64) -> Self {
        DmaRdModel {
            p,
            mem: HashMap::new(),
            stall,
            cmds: vec![],
            bad: vec![],
            q: VecDeque::new(),
            drv: (false, false),
        }
    }
    fn n(&self, s: &str) -> String {
        format!("{}_{s}", self.p)
    }
    pub fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
        let cmd_ready = self.q.len() < 16 && !chance(r, self.stall);
        let dv = self.q.front().is_some_and(|x| x.0 <= m.cycle) && !chance(r, self.stall);
        self.drv = (cmd_ready, dv);
        m.set(&self.n("cmd_ready"), cmd_ready as u64);
        m.set(&self.n("dat_valid"), dv as u64);
        if let Some(&(_, addr, len, beat)) = self.q.front() {
            let off = 64 * beat as u64;
            let n = (len as u64 - off).min(64);
            let data: Vec<u8> = (0..64)
                .map(|k| {
                    if k < n {
                        *self.mem.get(&(addr + off + k)).unwrap_or(&0)
                    } else {
                        0
                    }
                })
                .collect();
            m.set_bytes(&self.n("dat_data"), &data);
            m.set(
                &self.n("dat_keep"),
                if n == 64 { u64::MAX } else { (1u64 << n) - 1 },
            );
            m.set(&self.n("dat_last"), (off + n == len as u64) as u64);
            let err = self
                .bad
                .iter()
                .any(|&(a, b)| addr + off < b && a < addr + off + n);
            m.set(&self.n("dat_err"), err as u64);
        }
    }
    pub fn observe(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
        let (cr, dv) = self.drv;
        if cr && m.bit(&self.n("cmd_valid")) {
            let addr = m.get(&self.n("cmd_addr"));
            let len = m.get(&self.n("cmd_len")) as u32;
            assert!((1..=8192).contains(&len), "DMA read length {len}");
            self.cmds.push((addr, len));
            self.q
                .push_back((m.cycle + r.random_range(5..60), addr, len, 0));
        }
        if dv && m.bit(&self.n("dat_ready")) {
            let f = &mut self.q[0];
            f.3 += 1;
            if 64 * f.3 as u64 >= f.2 as u64 {
                self.q.pop_front();
            }
        }
    }
}

/// The DMA engine seen from a write client ([`crate::common::bus::DmaWrM`]): takes commands and data
/// with random stalls, writes `mem`, pulses `done` some cycles after a command's last beat.
/// Records every write command (address, length) in order, and the cycle it was taken.
pub struct DmaWrModel {
    pub p: &'static str,
    pub mem: HashMap<u64, u8>,
    pub stall: f64,
    /// Cycles from a command's last data beat to its `done` (uniform in the range; 3..30
    /// unless set).
    pub done_lat: std::ops::Range<u64>,
    pub cmds: Vec<(u64, u32)>,
    pub cmd_cycles: Vec<u64>,
    open: VecDeque<(u64, u32, u32)>,
    done_at: VecDeque<u64>,
    drv: (bool, bool),
}

impl DmaWrModel {
    pub fn new(p: &'static str, stall: f64) -> Self {
        DmaWrModel {
            p,
            mem: HashMap::new(),
            stall,
            done_lat: 3..30,
            cmds: vec![],
            cmd_cycles: vec![],
            open: VecDeque::new(),
            done_at: VecDeque::new(),
            drv: (false, false),
        }
    }
    fn n(&self, s: &str) -> String {
        format!("{}_{s}", self.p)
    }
    /// Commands whose `done` has not pulsed yet.
    pub fn busy(&self) -> bool {
        !self.open.is_empty() || !self.done_at.is_empty()
    }
    pub fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
        let cr = self.open.len() < 8 && !chance(r, self.stall);
        let dr = !self.open.is_empty() && !chance(r, self.stall);
        self.drv = (cr, dr);
        m.set(&self.n("cmd_ready"), cr as u64);
        m.set(&self.n("dat_ready"), dr as u64);
        let done = self.done_at.front().is_some_and(|&t| t <= m.cycle);
        if done {
            self.done_at.pop_front();
        }
        m.set(&self.n("done"), done as u64);
        m.set(&self.n("err"), 0);
    }
    pub fn observe(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
        let (cr, dr) = self.drv;
        if cr && m.bit(&self.n("cmd_valid")) {
            let addr = m.get(&self.n("cmd_addr"));
            let len = m.get(&self.n("cmd_len")) as u32;
            assert!((1..=8192).contains(&len), "DMA write length {len}");
            self.cmds.push((addr, len));
            self.cmd_cycles.push(m.cycle);
            self.open.push_back((addr, len, 0));
        }
        if dr && m.bit(&self.n("dat_valid")) {
            let d = m.get_bytes(&self.n("dat_data"));
            let (addr, len, beat) = self.open[0];
            let off = 64 * beat as u64;
            let n = (len as u64 - off).min(64);
            for k in 0..n {
                self.mem.insert(addr + off + k, d[k as usize]);
            }
            let last = off + n == len as u64;
            assert_eq!(
                m.bit(&self.n("dat_last")),
                last,
                "dat_last on beat {beat} of a {len}-byte write"
            );
            if last {
                self.open.pop_front();
                self.done_at
                    .push_back(m.cycle + r.random_range(self.done_lat.clone()));
            } else {
                self.open[0].2 += 1;
            }
        }
    }
}

/// A completion sink ([`crate::common::bus::CplS`] seen from the source, ports `<p>_valid`, ...):
/// random backpressure, every completion decoded into an ABI `Cqe` (owner bit clear) plus
/// its CQ number.
pub struct CplSink {
    pub p: &'static str,
    pub stall: f64,
    pub got: Vec<(u16, rnic_abi::queue::Cqe)>,
    ready: bool,
}

impl CplSink {
    pub fn new(p: &'static str, stall: f64) -> Self {
        CplSink {
            p,
            stall,
            got: vec![],
            ready: false,
        }
    }
    fn n(&self, s: &str) -> String {
        format!("{}_{s}", self.p)
    }
    pub fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
        self.ready = !chance(r, self.stall);
        m.set(&self.n("ready"), self.ready as u64);
    }
    pub fn observe(&mut self, m: &mut DynModel) {
        if self.ready && m.bit(&self.n("valid")) {
            let g = |s: &str| m.get(&self.n(s));
            let c = rnic_abi::queue::Cqe {
                wr_id: g("wr_id"),
                byte_len: g("byte_len") as u32,
                imm_data: g("imm") as u32,
                qp_num: g("qpn") as u32,
                src_qp: g("src_qp") as u32,
                opcode: g("opcode") as u8,
                status: g("status") as u8,
                vendor_err: 0,
                flags: g("flags") as u8,
                sq_index: g("wqe_idx") as u16,
                reserved: 0,
            };
            self.got.push((g("cqn") as u16, c));
        }
    }
}
