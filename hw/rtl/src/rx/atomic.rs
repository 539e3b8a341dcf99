//! Data-path block `atomic`: the responder's atomic executor (docs/DATAPATH.md "atomic").
//!
//! One request at a time on `req` ([`AtomReqS`], its doc is the contract). A new atomic
//! (`dup` = 0) first waits until the responder's DMA write commands are all complete (a
//! counter, +1 per `dw_cmd`, -1 per `dw_done`, kept from reset), so its read cannot pass an
//! earlier WRITE's data; then it reads the 64-byte line holding `addr` on its own AXI4 master
//! `m` (one beat, ID 0), takes the little-endian u64 at byte `addr[5:0]`, computes FETCH_ADD
//! (`fa` = 1: orig + swap) or CMP_SWAP (`fa` = 0: swap if orig == cmp, else no write), writes
//! the new value back (one beat, strobes on the 8 bytes) and waits for B. Without a bus error
//! it saves {psn, orig} in slot `head` of the QP's ring of `ATOMIC_RESOURCES` results, then
//! pulses `done` (`found` = 1, `err`, `orig`). An R or B error gives `err` = 1 (an R error
//! writes nothing) and saves nothing.
//!
//! A duplicate (`dup` = 1) touches no memory: it reads the `cnt` newest slots of the QP
//! (`head`-1, `head`-2, ...) one per cycle (registered RAM reads, pipelined) and answers with
//! the first (newest) whose psn matches (`found` = 1 and its orig) or `found` = 0.
//!
//! The saved results are one simple dual-port RAM of `num_qps` x `ATOMIC_RESOURCES` entries
//! of 88 bits (`{orig, psn}`), addressed `{qpn, slot}`; no per-QP registers. (`ATOMIC_RESOURCES`
//! is the build's `rd_atomic`: 2048 x 128 in the standard build, 16,384 x 16 in the 16k one.)
//! QPNs are taken modulo `num_qps` (the responder only sends valid QPs).
//!
//! Cycles from the request handshake to `done` with a zero-latency memory (R the cycle after
//! AR, B the cycle after W): 5 for a new atomic (3 for a CMP_SWAP that does not match or an R
//! error), 2 + k for a duplicate found in the k-th newest slot, 2 + cnt when not found (2 for
//! cnt = 0). `req.ready` is high in idle only, so back-to-back requests start one cycle after
//! `done`.

use crate::common::bus::{ATOM_CNT_BITS, AtomReqS, HostAxiM};
use rnic_abi::params::{self, BuildParams};
use rnic_abi::queue::ATOMIC_RESOURCES;
use rust_hdl::prelude::*;

/// QPs of the default build.
pub const NQ: usize = params::DEFAULT.num_qps as usize;
/// Bits of a QP index.
pub const QB: usize = NQ.trailing_zeros() as usize;
/// Bits of a result slot index.
pub const SB: usize = ATOMIC_RESOURCES.trailing_zeros() as usize;
/// Address bits of the result RAM (`{qpn, slot}`).
pub const RB: usize = QB + SB;
/// Width of the outstanding-write counter.
const OB: usize = 16;

// the RAM address shifts the QPN by `c_sb` = SB (`#[hdl_gen]` cannot name a Rust const)
const _: () = assert!(ATOMIC_RESOURCES == 1 << SB && SB >= 1 && NQ == 1 << QB);
/// Bits of the slot count and of the search index (0..=`ATOMIC_RESOURCES`).
const CB: usize = ATOM_CNT_BITS;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum AtomState {
    Idle,
    /// Waiting for the responder's outstanding DMA writes.
    WaitW,
    Ar,
    R,
    /// AW and W offered together, each until taken.
    Aw,
    B,
    /// Duplicate search over the ring.
    Search,
    /// `done` pulse (and the RAM write of a new atomic's result).
    Done,
}

/// The block: see the module documentation.
#[derive(LogicBlock)]
pub struct AtomicUnit {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub req: AtomReqS,
    /// Own AXI4 master to host memory.
    pub m: HostAxiM,
    /// Pulses when the responder's DMA write client had a command taken.
    pub dw_cmd: Signal<In, Bit>,
    /// Pulses when one of those commands completed.
    pub dw_done: Signal<In, Bit>,
    ram: RAM<Bits<88>, RB>,
    st: DFF<AtomState>,
    outst: DFF<Bits<OB>>,
    qpn: DFF<Bits<QB>>,
    psn: DFF<Bits<24>>,
    fa: DFF<Bit>,
    base: DFF<Bits<64>>,
    off: DFF<Bits<3>>,
    swap: DFF<Bits<64>>,
    cmp: DFF<Bits<64>>,
    head: DFF<Bits<SB>>,
    ncnt: DFF<Bits<CB>>,
    orig: DFF<Bits<64>>,
    newv: DFF<Bits<64>>,
    err: DFF<Bit>,
    found: DFF<Bit>,
    save: DFF<Bit>,
    /// AR, AW and W offered and not yet taken: the valids come straight from flip-flops
    /// (set as the state enters Ar / Aw, cleared by the handshake), so axmux's arbitration
    /// and the engines behind it do not start at a decode of the state
    arv: DFF<Bit>,
    awv: DFF<Bit>,
    wv: DFF<Bit>,
    si: DFF<Bits<CB>>,
    rv: DFF<Bit>,
    amask: Constant<Bits<64>>,
    /// SB, the QPN's shift in the RAM address
    c_sb: Constant<Bits<8>>,
    strb8: Constant<Bits<64>>,
    sh_w: Signal<Local, Bits<9>>,
    sh_b: Signal<Local, Bits<6>>,
    rword: Signal<Local, Bits<64>>,
    slot: Signal<Local, Bits<SB>>,
    hit: Signal<Local, Bit>,
    out_z: Signal<Local, Bit>,
}

impl AtomicUnit {
    pub fn new(p: &BuildParams) -> Self {
        assert_eq!(
            p.num_qps as usize, NQ,
            "AtomicUnit's RAM is sized for the default build's QPs"
        );
        AtomicUnit {
            clock: Default::default(),
            rst: Default::default(),
            req: Default::default(),
            m: Default::default(),
            dw_cmd: Default::default(),
            dw_done: Default::default(),
            ram: Default::default(),
            st: Default::default(),
            outst: Default::default(),
            qpn: Default::default(),
            psn: Default::default(),
            fa: Default::default(),
            base: Default::default(),
            off: Default::default(),
            swap: Default::default(),
            cmp: Default::default(),
            head: Default::default(),
            ncnt: Default::default(),
            orig: Default::default(),
            newv: Default::default(),
            err: Default::default(),
            found: Default::default(),
            save: Default::default(),
            arv: Default::default(),
            awv: Default::default(),
            wv: Default::default(),
            si: Default::default(),
            rv: Default::default(),
            amask: Constant::new(0xFFFF_FFFF_FFFF_FFC0_u64.into()),
            c_sb: Constant::new((SB as u64).into()),
            strb8: Constant::new(0xFF_u64.into()),
            sh_w: Default::default(),
            sh_b: Default::default(),
            rword: Default::default(),
            slot: Default::default(),
            hit: Default::default(),
            out_z: Default::default(),
        }
    }
}

impl Default for AtomicUnit {
    fn default() -> Self {
        AtomicUnit::new(&params::DEFAULT)
    }
}

impl Logic for AtomicUnit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, outst, qpn, psn, fa, base, off, swap, cmp, head, ncnt, orig, newv,
            err, found, save, arv, awv, wv, si, rv
        );
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();

        // ---------------- the responder's outstanding DMA write commands
        if self.dw_cmd.val() && !self.dw_done.val() {
            self.outst.d.next = self.outst.q.val() + 1;
        } else if !self.dw_cmd.val() && self.dw_done.val() {
            self.outst.d.next = self.outst.q.val() - 1;
        }
        self.out_z.next = !self.outst.q.val().any();

        // ---------------- lane of the word: bit and byte shifts
        self.sh_w.next = bit_cast::<9, 3>(self.off.q.val()) << 6;
        self.sh_b.next = bit_cast::<6, 3>(self.off.q.val()) << 3;
        self.rword.next = self.m.rdata.val().get_bits::<64>(self.sh_w.val().index());

        // ---------------- AXI4 master: fixed fields, valids from their registers
        self.m.arid.next = 0.into();
        self.m.araddr.next = self.base.q.val();
        self.m.arlen.next = 0.into();
        self.m.arsize.next = 6.into();
        self.m.arburst.next = 1.into();
        self.m.arvalid.next = self.arv.q.val();
        self.m.rready.next = self.st.q.val() == AtomState::R;
        self.m.awid.next = 0.into();
        self.m.awaddr.next = self.base.q.val();
        self.m.awlen.next = 0.into();
        self.m.awsize.next = 6.into();
        self.m.awburst.next = 1.into();
        self.m.awvalid.next = self.awv.q.val();
        self.m.wdata.next = bit_cast::<512, 64>(self.newv.q.val()) << self.sh_w.val();
        self.m.wstrb.next = self.strb8.val() << self.sh_b.val();
        self.m.wlast.next = true;
        self.m.wvalid.next = self.wv.q.val();
        self.m.bready.next = self.st.q.val() == AtomState::B;

        // ---------------- request port and answer (registers)
        self.req.ready.next = self.st.q.val() == AtomState::Idle;
        self.req.done.next = self.st.q.val() == AtomState::Done;
        self.req.found.next = self.found.q.val();
        self.req.err.next = self.err.q.val();
        self.req.orig.next = self.orig.q.val();

        // ---------------- result RAM: read port for the search, write port in Done
        self.slot.next = self.head.q.val() - 1 - bit_cast::<SB, CB>(self.si.q.val());
        self.ram.read_address.next = (bit_cast::<RB, QB>(self.qpn.q.val()) << self.c_sb.val())
            | bit_cast::<RB, SB>(self.slot.val());
        self.hit.next =
            self.rv.q.val() && (self.ram.read_data.val().get_bits::<24>(0) == self.psn.q.val());
        self.ram.write_address.next = (bit_cast::<RB, QB>(self.qpn.q.val()) << self.c_sb.val())
            | bit_cast::<RB, SB>(self.head.q.val());
        self.ram.write_data.next =
            bit_cast::<88, 24>(self.psn.q.val()) | (bit_cast::<88, 64>(self.orig.q.val()) << 24);
        self.ram.write_enable.next = (self.st.q.val() == AtomState::Done) && self.save.q.val();
        self.rv.d.next = false;

        match self.st.q.val() {
            AtomState::Idle => {
                if self.req.valid.val() {
                    self.qpn.d.next = self.req.qpn.val().get_bits::<QB>(0);
                    self.psn.d.next = self.req.psn.val();
                    self.fa.d.next = self.req.fa.val();
                    self.base.d.next = self.req.addr.val() & self.amask.val();
                    self.off.d.next = self.req.addr.val().get_bits::<3>(3);
                    self.swap.d.next = self.req.swap.val();
                    self.cmp.d.next = self.req.cmp.val();
                    self.head.d.next = self.req.head.val();
                    self.ncnt.d.next = self.req.cnt.val();
                    self.orig.d.next = 0.into();
                    self.err.d.next = false;
                    self.found.d.next = false;
                    self.save.d.next = false;
                    self.si.d.next = 0.into();
                    if self.req.dup.val() {
                        self.st.d.next = AtomState::Search;
                    } else if self.out_z.val() && !self.dw_cmd.val() {
                        self.st.d.next = AtomState::Ar;
                        self.arv.d.next = true;
                    } else {
                        self.st.d.next = AtomState::WaitW;
                    }
                }
            }
            AtomState::WaitW => {
                if self.out_z.val() {
                    self.st.d.next = AtomState::Ar;
                    self.arv.d.next = true;
                }
            }
            AtomState::Ar => {
                if self.m.arready.val() {
                    self.arv.d.next = false;
                    self.st.d.next = AtomState::R;
                }
            }
            AtomState::R => {
                if self.m.rvalid.val() {
                    self.orig.d.next = self.rword.val();
                    self.found.d.next = true;
                    if self.fa.q.val() {
                        self.newv.d.next = self.rword.val() + self.swap.q.val();
                    } else {
                        self.newv.d.next = self.swap.q.val();
                    }
                    if self.m.rresp.val().any() {
                        self.err.d.next = true;
                        self.st.d.next = AtomState::Done;
                    } else if !self.fa.q.val() && (self.rword.val() != self.cmp.q.val()) {
                        self.save.d.next = true;
                        self.st.d.next = AtomState::Done;
                    } else {
                        self.st.d.next = AtomState::Aw;
                        self.awv.d.next = true;
                        self.wv.d.next = true;
                    }
                }
            }
            AtomState::Aw => {
                if self.m.awready.val() {
                    self.awv.d.next = false;
                }
                if self.m.wready.val() {
                    self.wv.d.next = false;
                }
                if (!self.awv.q.val() || self.m.awready.val())
                    && (!self.wv.q.val() || self.m.wready.val())
                {
                    self.st.d.next = AtomState::B;
                }
            }
            AtomState::B => {
                if self.m.bvalid.val() {
                    if self.m.bresp.val().any() {
                        self.err.d.next = true;
                    } else {
                        self.save.d.next = true;
                    }
                    self.st.d.next = AtomState::Done;
                }
            }
            AtomState::Search => {
                // issue the read of the si-th newest slot while any is left; check the
                // result of the previous read a cycle later
                if self.hit.val() {
                    self.found.d.next = true;
                    self.orig.d.next = self.ram.read_data.val().get_bits::<64>(24);
                    self.st.d.next = AtomState::Done;
                } else if self.si.q.val() < self.ncnt.q.val() {
                    self.rv.d.next = true;
                    self.si.d.next = self.si.q.val() + 1;
                } else {
                    self.st.d.next = AtomState::Done;
                }
            }
            AtomState::Done => {
                self.st.d.next = AtomState::Idle;
            }
            _ => {
                self.st.d.next = AtomState::Idle;
            }
        }

        if self.rst.val() {
            self.st.d.next = AtomState::Idle;
            self.outst.d.next = 0.into();
            self.rv.d.next = false;
            self.arv.d.next = false;
            self.awv.d.next = false;
            self.wv.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use crate::common::vlt::DynModel;
    use rand::Rng;
    use rand_chacha::ChaCha8Rng;
    use std::collections::{HashMap, HashSet, VecDeque};

    const R: usize = ATOMIC_RESOURCES as usize;

    /// Host memory behind `m` for the atomic unit: u64 words, random stalls on every channel,
    /// a read / write-response latency, error lines (`bad_r`: RRESP SLVERR; `bad_w`: BRESP
    /// SLVERR, nothing written), and protocol checks (fixed fields, one beat, strobes and
    /// data on exactly the word's lane, valid and payload held until ready).
    struct Slave {
        mem: HashMap<u64, u64>,
        stall: f64,
        lat: u64,
        bad_r: HashSet<u64>,
        bad_w: HashSet<u64>,
        reads: VecDeque<(u64, u64)>,
        aws: VecDeque<u64>,
        ws: VecDeque<(u64, u64)>,
        bs: VecDeque<(u64, u64)>,
        drv: [bool; 5],
        held: [Option<Vec<u8>>; 3],
        ars: u64,
        wbeats: u64,
    }

    impl Slave {
        fn new(stall: f64, lat: u64) -> Self {
            Slave {
                mem: HashMap::new(),
                stall,
                lat,
                bad_r: HashSet::new(),
                bad_w: HashSet::new(),
                reads: VecDeque::new(),
                aws: VecDeque::new(),
                ws: VecDeque::new(),
                bs: VecDeque::new(),
                drv: [false; 5],
                held: [None, None, None],
                ars: 0,
                wbeats: 0,
            }
        }
        fn word(&self, a: u64) -> u64 {
            *self.mem.get(&a).unwrap_or(&0)
        }
        fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
            let now = m.cycle;
            let arready = !chance(r, self.stall);
            let rvalid = self.reads.front().is_some_and(|x| x.1 <= now) && !chance(r, self.stall);
            let awready = self.aws.len() < 2 && !chance(r, self.stall);
            let wready = self.ws.len() < 2 && !chance(r, self.stall);
            let bvalid = self.bs.front().is_some_and(|x| x.0 <= now) && !chance(r, self.stall);
            self.drv = [arready, rvalid, awready, wready, bvalid];
            m.set("m_arready", arready as u64);
            m.set("m_rvalid", rvalid as u64);
            m.set("m_awready", awready as u64);
            m.set("m_wready", wready as u64);
            m.set("m_bvalid", bvalid as u64);
            m.set("m_rid", 0);
            m.set("m_bid", 0);
            m.set("m_rlast", 1);
            let (line, _) = self.reads.front().copied().unwrap_or((0, 0));
            let data: Vec<u8> = (0..8)
                .flat_map(|k| self.word(line + 8 * k).to_le_bytes())
                .collect();
            m.set_bytes("m_rdata", &data);
            m.set("m_rresp", if self.bad_r.contains(&line) { 2 } else { 0 });
            m.set("m_bresp", self.bs.front().map_or(0, |x| x.1));
        }
        /// Valid held until ready with a stable payload.
        fn hold(&mut self, i: usize, valid: bool, ready: bool, payload: Vec<u8>, ch: &str) {
            if let Some(p) = self.held[i].take() {
                assert!(valid, "{ch} valid dropped before ready");
                assert_eq!(p, payload, "{ch} payload changed before ready");
            }
            if valid && !ready {
                self.held[i] = Some(payload);
            }
        }
        fn observe(&mut self, m: &mut DynModel) {
            let now = m.cycle;
            let [arready, rvalid, awready, wready, bvalid] = self.drv;
            let arv = m.bit("m_arvalid");
            let ara = m.get("m_araddr");
            self.hold(0, arv, arready, ara.to_le_bytes().to_vec(), "AR");
            if arv && arready {
                assert_eq!(ara % 64, 0, "unaligned AR");
                assert_eq!(m.get("m_arlen"), 0);
                assert_eq!(m.get("m_arsize"), 6);
                assert_eq!(m.get("m_arburst"), 1);
                assert_eq!(m.get("m_arid"), 0);
                self.reads.push_back((ara, now + self.lat));
                self.ars += 1;
            }
            if rvalid {
                assert!(m.bit("m_rready"), "RREADY low while R is offered");
                self.reads.pop_front();
            }
            let awv = m.bit("m_awvalid");
            let awa = m.get("m_awaddr");
            self.hold(1, awv, awready, awa.to_le_bytes().to_vec(), "AW");
            if awv && awready {
                assert_eq!(awa % 64, 0, "unaligned AW");
                assert_eq!(m.get("m_awlen"), 0);
                assert_eq!(m.get("m_awsize"), 6);
                assert_eq!(m.get("m_awburst"), 1);
                assert_eq!(m.get("m_awid"), 0);
                self.aws.push_back(awa);
            }
            let wv = m.bit("m_wvalid");
            let mut wp = m.get_bytes("m_wdata");
            wp.extend(m.get("m_wstrb").to_le_bytes());
            self.hold(2, wv, wready, wp.clone(), "W");
            if wv && wready {
                assert!(m.bit("m_wlast"), "WLAST low on the only beat");
                let strb = m.get("m_wstrb");
                assert!(
                    (0..8).any(|k| strb == 0xFF << (8 * k)),
                    "WSTRB {strb:#x} is not one 8-byte lane"
                );
                let lane = strb.trailing_zeros() as usize / 8;
                for (i, b) in wp[..64].iter().enumerate() {
                    if i / 8 != lane {
                        assert_eq!(*b, 0, "WDATA byte {i} outside the word's lane");
                    }
                }
                let v = u64::from_le_bytes(wp[8 * lane..8 * lane + 8].try_into().unwrap());
                self.ws.push_back((8 * lane as u64, v));
                self.wbeats += 1;
            }
            while !self.aws.is_empty() && !self.ws.is_empty() {
                let line = self.aws.pop_front().unwrap();
                let (off, v) = self.ws.pop_front().unwrap();
                let bad = self.bad_w.contains(&line);
                if !bad {
                    self.mem.insert(line + off, v);
                }
                self.bs.push_back((now + self.lat, if bad { 2 } else { 0 }));
            }
            if bvalid {
                assert!(m.bit("m_bready"), "BREADY low while B is offered");
                self.bs.pop_front();
            }
        }
    }

    #[derive(Clone, Copy, Debug, Default)]
    struct Req {
        qpn: u32,
        psn: u32,
        dup: bool,
        fa: bool,
        addr: u64,
        swap: u64,
        cmp: u64,
        head: u8,
        cnt: u8,
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Resp {
        found: bool,
        err: bool,
        orig: u64,
    }

    /// The unit, its memory, the responder's write traffic and a request driver.
    struct Tb {
        m: DynModel,
        r: ChaCha8Rng,
        s: Slave,
        /// Responder DMA write commands outstanding (the model of the unit's counter).
        outst: u64,
        /// Random write traffic: dw_cmd only while no request is in flight, dw_done any time.
        traffic: f64,
        busy: bool,
        /// Cycles with AR valid.
        ar_cycles: u64,
    }

    impl Tb {
        fn new(seed: u64, stall: f64, lat: u64) -> Tb {
            let mut m = model(AtomicUnit::default(), "atomic_unit");
            reset(&mut m);
            Tb {
                m,
                r: rng(seed),
                s: Slave::new(stall, lat),
                outst: 0,
                traffic: 0.0,
                busy: false,
                ar_cycles: 0,
            }
        }
        /// One cycle with explicit write pulses; returns the sampled `req_done`.
        fn step_with(&mut self, cmd: bool, done: bool) -> bool {
            self.s.drive(&mut self.m, &mut self.r);
            self.m.set("dw_cmd", cmd as u64);
            self.m.set("dw_done", done as u64);
            self.m.tick();
            if self.m.bit("m_arvalid") {
                assert_eq!(self.outst, 0, "AR issued with responder writes outstanding");
                self.ar_cycles += 1;
            }
            self.s.observe(&mut self.m);
            self.outst = self.outst + cmd as u64 - done as u64;
            let d = self.m.bit("req_done");
            assert!(!d || self.busy, "done without a request");
            d
        }
        fn step(&mut self) -> bool {
            let cmd = !self.busy && chance(&mut self.r, self.traffic);
            let done = self.outst > 0 && chance(&mut self.r, self.traffic);
            self.step_with(cmd, done)
        }
        fn set_req(&mut self, q: &Req, valid: bool) {
            let m = &mut self.m;
            m.set("req_valid", valid as u64);
            m.set("req_qpn", q.qpn as u64);
            m.set("req_psn", q.psn as u64);
            m.set("req_dup", q.dup as u64);
            m.set("req_fa", q.fa as u64);
            m.set("req_addr", q.addr);
            m.set("req_swap", q.swap);
            m.set("req_cmp", q.cmp);
            m.set("req_head", q.head as u64);
            m.set("req_cnt", q.cnt as u64);
        }
        /// Present `q` (after random idle), wait for `done`; the answer and the cycles from
        /// the handshake to `done` (and from the last `done` to this handshake).
        fn exec(&mut self, q: &Req, idle: f64) -> (Resp, u64, u64) {
            while chance(&mut self.r, idle) {
                self.set_req(q, false);
                assert!(!self.step());
            }
            self.set_req(q, true);
            let t0 = self.m.cycle;
            loop {
                assert!(!self.step());
                if self.m.bit("req_ready") {
                    break;
                }
                assert!(self.m.cycle - t0 < 1000, "request never taken");
            }
            let hs = self.m.cycle;
            self.busy = true;
            // scrambled inputs after the handshake: the unit must have captured the request
            let junk = Req {
                qpn: 3,
                psn: 0xABCDEF,
                dup: !q.dup,
                fa: !q.fa,
                addr: 0x40,
                swap: 0x5555,
                cmp: 0x7777,
                head: 9,
                cnt: 11,
            };
            self.set_req(&junk, false);
            loop {
                let d = self.step();
                if d {
                    break;
                }
                assert!(!self.m.bit("req_ready"), "ready while busy");
                assert!(self.m.cycle - hs < 20_000, "no done for {q:?}");
            }
            let resp = Resp {
                found: self.m.bit("req_found"),
                err: self.m.bit("req_err"),
                orig: self.m.get("req_orig"),
            };
            self.busy = false;
            (resp, self.m.cycle - hs, hs - t0)
        }
    }

    /// A QP's result ring: slots {psn, orig}, head, cnt.
    type Ring = ([(u32, u64); R], u8, u8);

    /// Reference model: memory words and per-QP result rings.
    #[derive(Default)]
    struct Model {
        mem: HashMap<u64, u64>,
        ring: HashMap<u32, Ring>,
    }

    impl Model {
        fn hc(&self, qpn: u32) -> (u8, u8) {
            self.ring.get(&qpn).map_or((0, 0), |x| (x.1, x.2))
        }
        /// A new atomic without bus errors.
        fn exec(&mut self, q: &Req) -> Resp {
            let orig = *self.mem.get(&q.addr).unwrap_or(&0);
            if q.fa {
                self.mem.insert(q.addr, orig.wrapping_add(q.swap));
            } else if orig == q.cmp {
                self.mem.insert(q.addr, q.swap);
            }
            let e = self.ring.entry(q.qpn).or_insert(([(0, 0); R], 0, 0));
            e.0[e.1 as usize] = (q.psn, orig);
            e.1 = (e.1 + 1) % R as u8;
            e.2 = (e.2 + 1).min(R as u8);
            Resp {
                found: true,
                err: false,
                orig,
            }
        }
        fn lookup(&self, q: &Req) -> Resp {
            let e = self
                .ring
                .get(&q.qpn)
                .copied()
                .unwrap_or(([(0, 0); R], 0, 0));
            for i in 1..=q.cnt as usize {
                let (p, o) = e.0[(q.head as usize + R - i) % R];
                if p == q.psn {
                    return Resp {
                        found: true,
                        err: false,
                        orig: o,
                    };
                }
            }
            Resp {
                found: false,
                err: false,
                orig: 0,
            }
        }
    }

    const LINES: [u64; 4] = [0x1000, 0x1040, 0x2FC0, 0xFFFF_8000_0000_0040];

    fn fill(tb: &mut Tb, md: &mut Model) {
        for l in LINES {
            for k in 0..8 {
                let v: u64 = tb.r.random();
                tb.s.mem.insert(l + 8 * k, v);
                md.mem.insert(l + 8 * k, v);
            }
        }
    }

    fn new_req(md: &Model, qpn: u32, psn: u32, fa: bool, addr: u64, swap: u64, cmp: u64) -> Req {
        let (head, cnt) = md.hc(qpn);
        Req {
            qpn,
            psn,
            dup: false,
            fa,
            addr,
            swap,
            cmp,
            head,
            cnt,
        }
    }

    fn dup_req(md: &Model, qpn: u32, psn: u32) -> Req {
        let (head, cnt) = md.hc(qpn);
        Req {
            qpn,
            psn,
            dup: true,
            head,
            cnt,
            ..Default::default()
        }
    }

    /// Verilog generation and `verilator --lint-only -Wall` (project waivers).
    #[test]
    fn atomic_verilog_lints() {
        let v = crate::common::vgen::verilog(&mut AtomicUnit::default(), "atomic_unit")
            .expect("generation");
        let dir = std::env::temp_dir().join("rnic-atomic-lint");
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("atomic_unit.v");
        std::fs::write(&f, &v).unwrap();
        crate::common::vlt::lint(&f, "atomic_unit").unwrap_or_else(|e| panic!("{e}"));
    }

    /// Random FETCH_ADD / CMP_SWAP (equal and unequal) at random words of a small memory on
    /// several QPs, mixed with duplicates, random idle on `req`, random stalls and latency on
    /// every AXI channel and random responder write traffic; answers and memory against the
    /// model, AR never while writes are outstanding.
    #[test]
    fn atomic_random_vs_model() {
        let mut tb = Tb::new(11, 0.3, 3);
        tb.traffic = 0.15;
        let mut md = Model::default();
        fill(&mut tb, &mut md);
        let qps = [0u32, 1, 5, 255];
        let mut psn: HashMap<u32, u32> = qps
            .iter()
            .map(|&q| (q, (0xFF_FFF0 + q) & 0xFF_FFFF))
            .collect();
        let mut saved: HashMap<u32, Vec<u32>> = HashMap::new();
        let (mut n_fa, mut n_eq, mut n_ne, mut n_hit, mut n_miss) = (0, 0, 0, 0, 0);
        for i in 0..3000 {
            let qpn = qps[tb.r.random_range(0..qps.len())];
            let addr = LINES[tb.r.random_range(0..LINES.len())] + 8 * tb.r.random_range(0..8u64);
            let k = tb.r.random_range(0..100);
            let (q, want) = if k < 30 {
                let p = saved.get(&qpn).filter(|v| !v.is_empty()).map(|v| {
                    // mostly recent ones, sometimes older than the ring
                    let back = tb.r.random_range(1..=v.len().min(R + R / 2));
                    v[v.len() - back]
                });
                let p = p.unwrap_or(tb.r.random_range(0..1 << 24));
                let q = dup_req(&md, qpn, p);
                let w = md.lookup(&q);
                if w.found {
                    n_hit += 1;
                } else {
                    n_miss += 1;
                }
                (q, w)
            } else {
                let p = psn[&qpn];
                psn.insert(qpn, (p + tb.r.random_range(1..4)) & 0xFF_FFFF);
                saved.entry(qpn).or_default().push(p);
                let cur = md.mem[&addr];
                let q = if k < 65 {
                    n_fa += 1;
                    new_req(&md, qpn, p, true, addr, tb.r.random(), tb.r.random())
                } else if k < 85 {
                    n_eq += 1;
                    new_req(&md, qpn, p, false, addr, tb.r.random(), cur)
                } else {
                    n_ne += 1;
                    new_req(
                        &md,
                        qpn,
                        p,
                        false,
                        addr,
                        tb.r.random(),
                        cur ^ 1 << tb.r.random_range(0..64),
                    )
                };
                let w = md.exec(&q);
                (q, w)
            };
            let (got, _, _) = tb.exec(&q, 0.3);
            assert_eq!(got, want, "request {i}: {q:?}");
        }
        for (a, v) in &md.mem {
            assert_eq!(tb.s.word(*a), *v, "memory word {a:#x}");
        }
        assert!(
            n_fa > 800 && n_eq > 400 && n_ne > 300 && n_hit > 400 && n_miss > 100,
            "mix: fa {n_fa} eq {n_eq} ne {n_ne} hit {n_hit} miss {n_miss}"
        );
        // unequal CMP_SWAPs wrote nothing: one W beat per FETCH_ADD and equal CMP_SWAP
        assert_eq!(tb.s.wbeats, n_fa + n_eq);
        assert_eq!(tb.s.ars, n_fa + n_eq + n_ne);
    }

    /// Duplicates: each of the last R (`ATOMIC_RESOURCES`) results of a QP found with its
    /// orig, the (R + 1)-th newest gone (ring wrapped), nothing for cnt = 0 or outside cnt, no
    /// cross-QP hits, and the newest when one psn was saved twice.
    #[test]
    fn atomic_duplicates() {
        let mut tb = Tb::new(12, 0.2, 2);
        let mut md = Model::default();
        fill(&mut tb, &mut md);
        let mut hist: Vec<(u32, u64)> = vec![];
        // the ring wraps more than twice
        let n = 2 * R as u32 + 8;
        let last = 1000 + n - 1;
        for i in 0..n {
            let q = new_req(&md, 7, 1000 + i, true, 0x1008, i as u64 + 1, 0);
            let w = md.exec(&q);
            let (got, _, _) = tb.exec(&q, 0.2);
            assert_eq!(got, w);
            hist.push((1000 + i, w.orig));
        }
        // one result on another QP with a psn of QP 7's ring
        let q = new_req(&md, 8, last, true, 0x1010, 5, 0);
        md.exec(&q);
        tb.exec(&q, 0.0);
        let (head, cnt) = md.hc(7);
        assert_eq!((head as usize, cnt as usize), (n as usize % R, R));
        for back in 1..=R + 1 {
            let (p, o) = hist[hist.len() - back];
            let (got, _, _) = tb.exec(&dup_req(&md, 7, p), 0.2);
            let want = Resp {
                found: back <= R,
                err: false,
                orig: if back <= R { o } else { 0 },
            };
            assert_eq!(got, want, "{back}-th newest (psn {p})");
        }
        // cnt = 0, and a saved psn older than cnt
        let mut q = dup_req(&md, 7, last);
        q.cnt = 0;
        assert!(!tb.exec(&q, 0.0).0.found, "found with cnt 0");
        let mut q = dup_req(&md, 7, last - 4);
        q.cnt = 4;
        assert!(!tb.exec(&q, 0.0).0.found, "found outside cnt");
        q.cnt = 5;
        assert_eq!(tb.exec(&q, 0.0).0.orig, hist[n as usize - 5].1);
        // QP 8 holds only psn `last`; QP 9 nothing
        assert!(!tb.exec(&dup_req(&md, 8, last - 1), 0.0).0.found);
        let mut q = dup_req(&md, 9, last);
        q.cnt = R as u8;
        q.head = 0;
        // QP 9's slots were never written (contents undefined): only an answer, no hang
        tb.exec(&q, 0.0);
        // the same psn saved twice: the newest answers
        let q1 = new_req(&md, 7, 2000, true, 0x1008, 3, 0);
        let w1 = md.exec(&q1);
        assert_eq!(tb.exec(&q1, 0.0).0, w1);
        let q2 = new_req(&md, 7, 2000, true, 0x1008, 4, 0);
        let w2 = md.exec(&q2);
        assert_eq!(tb.exec(&q2, 0.0).0, w2);
        assert_ne!(w1.orig, w2.orig);
        assert_eq!(tb.exec(&dup_req(&md, 7, 2000), 0.0).0.orig, w2.orig);
        for (a, v) in &md.mem {
            assert_eq!(tb.s.word(*a), *v, "memory word {a:#x}");
        }
    }

    /// While responder writes are outstanding (dw_cmd without dw_done) no AR is issued; it is
    /// issued after the last dw_done. dw_cmd and dw_done in one cycle cancel, and a dw_cmd in
    /// the handshake cycle counts.
    #[test]
    fn atomic_waits_for_writes() {
        let mut tb = Tb::new(13, 0.0, 0);
        let mut md = Model::default();
        fill(&mut tb, &mut md);
        tb.set_req(&Req::default(), false);
        tb.step_with(true, false);
        tb.step_with(true, true);
        tb.step_with(false, false);
        assert_eq!(tb.outst, 1);
        let q = new_req(&md, 2, 77, true, 0x1040, 9, 0);
        let w = md.exec(&q);
        // handshake with a dw_cmd in the same cycle
        tb.set_req(&q, true);
        tb.step_with(true, false);
        assert!(tb.m.bit("req_ready"));
        tb.busy = true;
        tb.set_req(&q, false);
        assert_eq!(tb.outst, 2);
        for _ in 0..50 {
            assert!(!tb.step_with(false, false));
        }
        assert!(!tb.step_with(false, true));
        for _ in 0..50 {
            assert!(!tb.step_with(false, false));
        }
        assert_eq!(tb.ar_cycles, 0, "AR while writes were outstanding");
        assert!(!tb.step_with(false, true));
        let mut n = 0;
        while !tb.step_with(false, false) {
            n += 1;
            assert!(n < 10);
        }
        assert_eq!(tb.ar_cycles, 1);
        tb.busy = false;
        let got = Resp {
            found: tb.m.bit("req_found"),
            err: tb.m.bit("req_err"),
            orig: tb.m.get("req_orig"),
        };
        assert_eq!(got, w);
        assert_eq!(tb.s.word(0x1040), md.mem[&0x1040]);
    }

    /// RRESP error: err, no write, nothing saved; BRESP error: err, nothing saved.
    #[test]
    fn atomic_bus_errors() {
        let mut tb = Tb::new(14, 0.2, 2);
        let mut md = Model::default();
        fill(&mut tb, &mut md);
        // a full ring: slot `head` holds the oldest result
        for i in 0..R as u32 {
            let q = new_req(&md, 4, 100 + i, true, 0x1000, 1, 0);
            let w = md.exec(&q);
            assert_eq!(tb.exec(&q, 0.0).0, w);
        }
        let (head, _) = md.hc(4);
        let old = md.ring[&4].0[head as usize];
        tb.s.bad_r.insert(0x2FC0);
        tb.s.bad_w.insert(0x1040);
        let w0 = tb.s.wbeats;
        let before = tb.s.mem.clone();
        let q = new_req(&md, 4, 500, true, 0x2FC8, 1, 0);
        let g = tb.exec(&q, 0.0).0;
        assert!(g.err, "RRESP error not reported: {g:?}");
        assert_eq!(tb.s.wbeats, w0, "written after an R error");
        let q = new_req(&md, 4, 501, false, 0x1048, 1, before[&0x1048]);
        let g = tb.exec(&q, 0.0).0;
        assert!(g.err, "BRESP error not reported: {g:?}");
        assert_eq!(tb.s.wbeats, w0 + 1);
        assert_eq!(tb.s.mem, before);
        // nothing saved: slot `head` still holds its old result
        for p in [500, 501] {
            assert!(!tb.exec(&dup_req(&md, 4, p), 0.0).0.found, "psn {p} saved");
        }
        let g = tb.exec(&dup_req(&md, 4, old.0), 0.0).0;
        assert_eq!((g.found, g.orig), (true, old.1));
        // and the unit works on afterwards
        let q = new_req(&md, 4, 502, true, 0x1000, 1, 0);
        let w = md.exec(&q);
        assert_eq!(tb.exec(&q, 0.0).0, w);
    }

    /// Back-to-back requests with a zero-latency, never-stalling memory: the cycle counts of
    /// the module documentation, and the next request taken the cycle after `done`.
    #[test]
    fn atomic_back_to_back_cycles() {
        let mut tb = Tb::new(15, 0.0, 0);
        let mut md = Model::default();
        fill(&mut tb, &mut md);
        let mut first = true;
        for i in 0..20u32 {
            let fa = i % 2 == 0;
            let q = new_req(
                &md,
                3,
                i,
                fa,
                0x1000 + 8 * (i as u64 % 8),
                7,
                md.mem[&(0x1000 + 8 * (i as u64 % 8))],
            );
            let w = md.exec(&q);
            let (g, cyc, wait) = tb.exec(&q, 0.0);
            assert_eq!(g, w);
            assert_eq!(cyc, 5, "new atomic: handshake to done");
            assert!(first || wait == 1, "next request waited {wait}");
            first = false;
        }
        let q = new_req(&md, 3, 99, false, 0x1000, 7, !md.mem[&0x1000]);
        let w = md.exec(&q);
        let (g, cyc, wait) = tb.exec(&q, 0.0);
        assert_eq!((g, cyc, wait), (w, 3, 1), "unequal CMP_SWAP");
        for back in 1..=16u32 {
            let p = if back == 1 { 99 } else { 20 - (back - 1) };
            let (g, cyc, wait) = tb.exec(&dup_req(&md, 3, p), 0.0);
            assert!(g.found);
            assert_eq!(
                (cyc, wait),
                (2 + back as u64, 1),
                "duplicate {back}-th newest"
            );
        }
        let (g, cyc, _) = tb.exec(&dup_req(&md, 3, 5000), 0.0);
        // (21 results saved: all of them searched, or the R newest)
        assert_eq!((g.found, cyc), (false, 2 + md.hc(3).1 as u64));
        assert_eq!(md.hc(3).1 as usize, R.min(21));
        let mut q = dup_req(&md, 3, 5000);
        q.cnt = 0;
        assert_eq!(tb.exec(&q, 0.0).1, 2);
    }
}
