//! Block tests of `RxResp` (Verilator): frames in, context/ring/DMA/CQ models around it.

use super::*;
use crate::common::bus::{RSP_FIRST, RSP_LAST, RSP_MIDDLE, RSP_ONLY};
use crate::common::testutil::{
    CplSink, CtxModel, DmaWrModel, RingModel, chance, model, reset, rng,
};
use crate::common::vlt::DynModel;
use crate::net::icrc;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rnic_abi::params::DEFAULT as P;
use rnic_abi::queue::{
    Cqe, MrEntry, QpContext, RqState, Wqe, access, aeth, cqe_flag, make_key, qp_state, wc_op,
    wc_status, wqe_op,
};
use rnic_abi::roce::opcode;
use std::collections::{HashMap, VecDeque};

const QPN: u32 = 5;
/// A QP number past the build's QPs (an unknown QP: dropped and counted).
const UNKNOWN_QP: u32 = P.num_qps + 44;
const RQPN: u32 = 0x77;
const PD: u32 = 7;
const RCQN: u16 = 9;
const MR_IDX: u32 = 3;
const MR_IOVA: u64 = 0x10_0000;
const MR_LEN: u64 = 0x4_0000;
const RBUF_MR: u32 = 4;
const RBUF_IOVA: u64 = 0x80_0000;
const PSN0: u32 = 0xFF_FFF0; // wraps during the tests
const DMAC: [u8; 6] = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];
const SMAC: [u8; 6] = [0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE];
const SIP: u32 = 0x0A00_0001;
const DIP: u32 = 0x0A00_0002;
const SPORT: u16 = 0xC123;
/// QP traffic class (passed to txbuild as is: the header generator masks the ECN bits).
const TCLASS: u8 = 0x69;
/// IBTA RNR timer code of the test QPs (the RNR NAK carries it).
const RNR_CODE: u8 = 0x0C;

fn rkey() -> u32 {
    make_key(MR_IDX, 0x5A)
}
fn lkey() -> u32 {
    make_key(RBUF_MR, 0x21)
}

/// One RoCE v2 packet as the test's encoder builds it (IBTA 9.2-9.3, A17; RFC 791/768).
#[derive(Clone, Debug, Default)]
struct Pkt {
    op: u8,
    qpn: u32,
    psn: u32,
    ackreq: bool,
    reth: Option<(u64, u32, u32)>,
    aeth: Option<(u8, u32)>,
    imm: Option<u32>,
    /// AtomicETH (va, rkey, swap/add, compare) and AtomicAckETH (the original value).
    ateth: Option<(u64, u32, u64, u64)>,
    aack: Option<u64>,
    payload: Vec<u8>,
}

/// Encode a frame: Ethernet + IPv4 + UDP + BTH + RETH/AETH/ImmDt + payload + pad + ICRC,
/// then Ethernet padding to 60 bytes.
fn encode(p: &Pkt) -> Vec<u8> {
    let pad = (4 - p.payload.len() % 4) % 4;
    let ext = 16 * p.reth.is_some() as usize
        + 4 * p.aeth.is_some() as usize
        + 4 * p.imm.is_some() as usize
        + 28 * p.ateth.is_some() as usize
        + 8 * p.aack.is_some() as usize;
    let udp_len = 8 + 12 + ext + p.payload.len() + pad + 4;
    let tot = 20 + udp_len;
    let mut f = vec![];
    f.extend(SMAC); // the peer sends to our MAC: any value works for the RX path
    f.extend(DMAC);
    f.extend([0x08, 0x00]);
    f.extend([0x45, 0x00]);
    f.extend((tot as u16).to_be_bytes());
    f.extend([0x00, 0x00, 0x40, 0x00, 64, 17, 0, 0]);
    f.extend(DIP.to_be_bytes());
    f.extend(SIP.to_be_bytes());
    let mut sum: u32 = f[14..34]
        .chunks(2)
        .map(|w| u16::from_be_bytes([w[0], w[1]]) as u32)
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    f[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f.extend(0xD000u16.to_be_bytes());
    f.extend(4791u16.to_be_bytes());
    f.extend((udp_len as u16).to_be_bytes());
    f.extend([0, 0]);
    f.push(p.op);
    f.push((pad as u8) << 4);
    f.extend([0xFF, 0xFF, 0]);
    f.extend(&p.qpn.to_be_bytes()[1..]);
    f.push((p.ackreq as u8) << 7);
    f.extend(&p.psn.to_be_bytes()[1..]);
    if let Some((va, rk, len)) = p.reth {
        f.extend(va.to_be_bytes());
        f.extend(rk.to_be_bytes());
        f.extend(len.to_be_bytes());
    }
    if let Some((syn, msn)) = p.aeth {
        f.push(syn);
        f.extend(&msn.to_be_bytes()[1..]);
    }
    if let Some(v) = p.aack {
        f.extend(v.to_be_bytes());
    }
    if let Some((va, rk, swap, cmp)) = p.ateth {
        f.extend(va.to_be_bytes());
        f.extend(rk.to_be_bytes());
        f.extend(swap.to_be_bytes());
        f.extend(cmp.to_be_bytes());
    }
    if let Some(i) = p.imm {
        f.extend(i.to_be_bytes());
    }
    f.extend(&p.payload);
    f.extend(std::iter::repeat_n(0, pad));
    let c = icrc::icrc(&f).unwrap();
    f.extend(c.to_le_bytes());
    while f.len() < 60 {
        f.push(0);
    }
    f
}

#[derive(Clone, Debug, PartialEq)]
struct AckOut {
    dmac: u64,
    smac: u64,
    sip: u32,
    dip: u32,
    sport: u16,
    tos: u8,
    dqpn: u32,
    psn: u32,
    syn: u8,
    msn: u32,
    /// READ job fields (0 on ACK/NAK jobs).
    read: bool,
    va: u64,
    len: u32,
    mtu: u8,
    /// ATOMIC ACKNOWLEDGE job and its original value.
    atomic: bool,
    orig: u64,
}

/// One request on `atom` (the responder -> atomic unit port).
#[derive(Clone, Debug, PartialEq)]
struct AtomIn {
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

/// Saved atomic results per QP (`RqState.atom_head` wraps at it).
const AR: usize = rnic_abi::queue::ATOMIC_RESOURCES as usize;

/// The test's atomic unit (the `AtomReqS` side, the contract in `common::bus`): takes one
/// request, executes it on the DMA model's memory (little-endian u64s) once its random
/// latency has passed and every earlier DMA write has completed (new), or searches the QP's
/// saved results (duplicate), then pulses `done`.
#[derive(Default)]
struct AtomUnit {
    /// Requests seen, in order.
    reqs: Vec<AtomIn>,
    /// The request being served and the cycle from which it may complete.
    pend: Option<(AtomIn, u64)>,
    /// Saved results per QP: `ATOMIC_RESOURCES` slots of (psn, orig) (`None`: never written).
    ring: HashMap<u32, [Option<(u32, u64)>; AR]>,
    /// Addresses whose access fails (`err`).
    bad: Vec<u64>,
    /// Longest latency in cycles.
    lat: u64,
    ready: bool,
    /// The done pulse driven this cycle.
    done: bool,
}

/// A READ RESPONSE event on `ackev`: (qpn, psn, syndrome, msn, rpos, plen).
type RdEv = (u32, u32, u8, u32, u8, u32);

struct Bench {
    m: DynModel,
    r: ChaCha8Rng,
    ctx: CtxModel,
    ring: RingModel,
    dma: DmaWrModel,
    cpl: CplSink,
    /// Every job on `rsp` (ACK/NAKs and READs), in order.
    acks: Vec<AckOut>,
    /// ACKNOWLEDGE events (`rsp` = 0) and READ RESPONSE events (`rsp` = 1) on `ackev`.
    aevs: Vec<(u32, u32, u8, u32)>,
    /// The cycle of each ACKNOWLEDGE event in `aevs`.
    aev_cycles: Vec<u64>,
    revs: Vec<RdEv>,
    /// Verdicts at least `vd_min` cycles apart (as the ACK processor's, one per event
    /// decided), and the cycle each was taken in.
    vd_min: u64,
    vd_cycles: Vec<u64>,
    /// ATOMIC ACKNOWLEDGE events (`rsp` = 1, `atom` = 1; rpos ONLY and plen 8 checked).
    atevs: Vec<(u32, u32, u8, u32)>,
    atom: AtomUnit,
    /// The verdict stub (ackproc's side of `rdv`): planned verdicts (ok, addr) in event
    /// order (none left: !ok); the events waiting for their verdicts (ok, addr, plen; at
    /// most 4, ackproc's event queue: a READ RESPONSE's event may come while the one before
    /// waits for its verdict); an ok verdict waiting for `placed` (plen); `placed` pulses
    /// seen.
    verdicts: VecDeque<(bool, u64)>,
    vd_wait: VecDeque<(bool, u64, u32)>,
    place_wait: Option<u32>,
    placed: usize,
    /// READ RESPONSE / ATOMIC ACKNOWLEDGE events taken while a verdict was still open (the
    /// responder's early events, `ev_early`)
    early_evs: usize,
    beats: VecDeque<([u8; 64], u64, bool, bool, usize)>,
    idle: f64,
    stall: f64,
    /// The responder job sink (rdresp's job FIFO): `sink_len` jobs of `sink_cap` held,
    /// `rsp.ready` = not full (so it falls only through a push), one job drained per cycle
    /// with probability 1 - `sink_stall`, none while `sink_hold` (the link blocked).
    sink_cap: usize,
    sink_len: usize,
    sink_stall: f64,
    sink_hold: bool,
    /// Frames may be dropped for a full sink (`cnt_drop_busy`); else `run` checks it is 0.
    drops_ok: bool,
    ack_ready: bool,
    aev_ready: bool,
    /// cycle of each frame's last beat, by frame number
    last_at: Vec<u64>,
    /// cycles of the first DMA data beat / command of each payload
    dat_first: Vec<u64>,
    cmd_at: Vec<u64>,
    prev_cv: bool,
    prev_dv: bool,
    frames: usize,
    /// beats of each frame, by frame number
    frame_beats: Vec<usize>,
    /// cycles a beat was held by flow control (tready low)
    held: u64,
    /// each posted receive WQE's buffer, by wr_id: a receive completion with payload comes
    /// with or after the DMA command that writes the message's last byte (checked in `cycle`)
    rbuf: HashMap<u64, u64>,
    /// The QpContext reads shown to the ACK processor (`ackev_xq_g`, their QP numbers in
    /// order); the one shown last cycle (its record on `ackev_xq_d` now, checked in `cycle`)
    xq_seen: Vec<u32>,
    /// The cycle of each read in `xq_seen` (`ackev_xq_g`: the cycle after its grant).
    xq_cycles: Vec<u64>,
    xq_prev: Option<u32>,
}

fn mac48(m: [u8; 6]) -> u64 {
    m.iter().fold(0, |a, b| a << 8 | *b as u64)
}

impl Bench {
    fn new(seed: u64, idle: f64, stall: f64) -> Bench {
        let mut m = model(RxResp::default(), "rxresp_block");
        reset(&mut m);
        let mut b = Bench {
            m,
            r: rng(seed),
            ctx: CtxModel::new("ctx", stall)
                .with_snoop("sn", crate::common::bus::CTX_SRC_RX)
                .with_rd_port("ctxb"),
            ring: RingModel::new("ring", stall),
            dma: DmaWrModel::new("wr", stall),
            cpl: CplSink::new("cpl", stall),
            acks: vec![],
            aevs: vec![],
            aev_cycles: vec![],
            vd_min: 0,
            vd_cycles: vec![],
            revs: vec![],
            atevs: vec![],
            atom: AtomUnit {
                lat: 20,
                ..Default::default()
            },
            verdicts: VecDeque::new(),
            vd_wait: VecDeque::new(),
            place_wait: None,
            placed: 0,
            early_evs: 0,
            beats: VecDeque::new(),
            idle,
            stall,
            sink_cap: 64,
            sink_len: 0,
            sink_stall: stall,
            sink_hold: false,
            drops_ok: false,
            ack_ready: false,
            aev_ready: false,
            last_at: vec![],
            dat_first: vec![],
            cmd_at: vec![],
            prev_cv: false,
            prev_dv: false,
            frames: 0,
            frame_beats: vec![],
            held: 0,
            rbuf: HashMap::new(),
            xq_seen: vec![],
            xq_cycles: vec![],
            xq_prev: None,
        };
        b.set_qp(
            QPN,
            rnic_abi::queue::qp_state::RTS,
            (access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC) as u8,
        );
        b.set_rqs(QPN, PSN0, 0);
        b.set_mr(
            MR_IDX,
            MrEntry {
                key: rkey(),
                pd: PD,
                iova: MR_IOVA,
                length: MR_LEN,
                access: access::REMOTE_WRITE
                    | access::LOCAL_WRITE
                    | access::REMOTE_READ
                    | access::REMOTE_ATOMIC,
                flags: 1,
            },
        );
        b.set_mr(
            RBUF_MR,
            MrEntry {
                key: lkey(),
                pd: PD,
                iova: RBUF_IOVA,
                length: 0x10_0000,
                access: access::LOCAL_WRITE,
                flags: 1,
            },
        );
        b
    }
    fn set_qp(&mut self, qpn: u32, state: u8, acc: u8) {
        let q = QpContext {
            state,
            qp_type: 2,
            path_mtu: 3,
            access: acc,
            remote_qpn: RQPN,
            dest_mac: DMAC,
            udp_sport: SPORT,
            dest_ip: DIP,
            src_ip: SIP,
            pd: PD,
            send_cqn: 1,
            recv_cqn: RCQN,
            src_mac: SMAC,
            min_rnr_timer: RNR_CODE,
            traffic_class: TCLASS,
            ..Default::default()
        };
        self.ctx.put(qpn, q.encode());
    }
    fn qp(&self, qpn: u32) -> QpContext {
        QpContext::decode(&self.ctx.get(qpn))
    }
    /// Run; QP `qpn` must have been moved to ERR by a byte-enable write of `state` alone
    /// (and no other QP context write); then put it back to RTS (as a test harness only can)
    /// so that the next case runs on a live QP.
    fn expect_err_then_revive(&mut self, qpn: u32) {
        self.expect_err(qpn);
        let mut rec = self.ctx.get(qpn);
        rec[QpContext::field("state").unwrap().offset] = qp_state::RTS;
        self.ctx.put(qpn, rec);
    }
    /// Run; QP `qpn` must have been moved to ERR by a byte-enable write of `state` alone
    /// (and no other QP context write).
    fn expect_err(&mut self, qpn: u32) {
        self.run();
        assert_eq!(self.qp(qpn).state, qp_state::ERR, "QP {qpn} in ERR");
        let st_be = 1u64 << QpContext::field("state").unwrap().offset;
        let qp_writes: Vec<_> = self.ctx.writes.iter().filter(|w| w.0 < P.num_qps).collect();
        assert_eq!(qp_writes, [&(qpn, st_be)], "one byte-enable write of state");
        self.ctx.writes.retain(|w| w.0 >= P.num_qps);
    }
    /// Run; no QP context was written (no class A/C error).
    fn expect_no_qp_write(&mut self) {
        self.run();
        assert!(
            self.ctx.writes.iter().all(|w| w.0 >= P.num_qps),
            "QP context written: {:?}",
            self.ctx.writes
        );
    }
    /// Set QP `qpn`'s path MTU (IBTA enum: 3 = 1024, 5 = 4096).
    fn set_mtu(&mut self, qpn: u32, e: u8) {
        let mut rec = self.ctx.get(qpn);
        rec[QpContext::field("path_mtu").unwrap().offset] = e;
        self.ctx.put(qpn, rec);
    }
    fn set_rqs(&mut self, qpn: u32, psn: u32, pi: u16) {
        let s = RqState {
            rq_psn: psn,
            rq_pi: pi,
            ..Default::default()
        };
        self.ctx.put(P.ctx_base(3) + qpn, s.encode());
    }
    fn rqs(&self, qpn: u32) -> RqState {
        RqState::decode(&self.ctx.get(P.ctx_base(3) + qpn))
    }
    fn set_mr(&mut self, idx: u32, e: MrEntry) {
        self.ctx.put(P.ctx_base(2) + idx, e.encode());
    }
    /// Post receive WQE `idx` of QP `qpn` and advance rq_pi to idx + 1 (a doorbell).
    fn post_recv(&mut self, qpn: u32, idx: u16, addr: u64, len: u32, wr_id: u64) {
        let w = Wqe {
            opcode: wqe_op::RECV,
            slots: 1,
            length: len,
            wr_id,
            local_addr: addr,
            lkey: lkey(),
            ..Default::default()
        };
        self.ring
            .slots
            .insert(P.rq_slot(qpn, idx as u32) / 64, w.encode());
        self.rbuf.insert(wr_id, addr);
        let a = P.ctx_base(3) + qpn;
        let mut rec = self.ctx.get(a);
        let f = RqState::field("rq_pi").unwrap();
        rec[f.offset..f.offset + 2].copy_from_slice(&(idx.wrapping_add(1)).to_le_bytes());
        // as the doorbell unit writes it
        self.ctx
            .write(a, &rec, 3 << f.offset, crate::common::bus::CTX_SRC_DBU);
    }
    fn send_frame(&mut self, f: &[u8], user: bool) {
        let n = f.len().div_ceil(64);
        for i in 0..n {
            let c = &f[64 * i..(64 * i + 64).min(f.len())];
            let mut d = [0u8; 64];
            self.r.fill(&mut d[..]);
            d[..c.len()].copy_from_slice(c);
            let keep = if c.len() == 64 {
                u64::MAX
            } else {
                (1u64 << c.len()) - 1
            };
            self.beats
                .push_back((d, keep, i + 1 == n, user && i + 1 == n, self.frames));
        }
        self.frames += 1;
        self.frame_beats.push(n);
    }
    fn send(&mut self, p: &Pkt) {
        let f = encode(p);
        self.send_frame(&f, false);
    }
    fn cycle(&mut self) {
        let go = !self.beats.is_empty() && !chance(&mut self.r, self.idle);
        let mut last_frame = None;
        if go {
            let (d, k, l, u, fno) = *self.beats.front().unwrap();
            self.m.set_bytes("rx_tdata", &d);
            self.m.set("rx_tkeep", k);
            self.m.set("rx_tlast", l as u64);
            self.m.set("rx_tuser", u as u64);
            if l {
                last_frame = Some(fno);
            }
        } else {
            let mut d = [0u8; 64];
            self.r.fill(&mut d[..]);
            self.m.set_bytes("rx_tdata", &d);
            self.m.set("rx_tkeep", self.r.random());
            self.m.set("rx_tlast", self.r.random::<bool>() as u64);
            self.m.set("rx_tuser", self.r.random::<bool>() as u64);
        }
        self.m.set("rx_tvalid", go as u64);
        self.ctx.drive(&mut self.m, &mut self.r);
        self.ring.drive(&mut self.m, &mut self.r);
        self.dma.drive(&mut self.m, &mut self.r);
        self.cpl.drive(&mut self.m, &mut self.r);
        // the job sink: a FIFO drained at random (ready = not full)
        let drain = !chance(&mut self.r, self.sink_stall);
        if drain && !self.sink_hold && self.sink_len > 0 {
            self.sink_len -= 1;
        }
        self.ack_ready = self.sink_len < self.sink_cap;
        // ackproc behind its 4-entry event queue: events queue while verdicts are open; the
        // verdicts come in event order, each after the one before it was placed
        self.aev_ready = !chance(&mut self.r, self.stall) && self.vd_wait.len() < 4;
        self.m.set("rsp_ready", self.ack_ready as u64);
        self.m.set("ackev_ready", self.aev_ready as u64);
        let give = !self.vd_wait.is_empty()
            && self.place_wait.is_none()
            && self
                .vd_cycles
                .last()
                .is_none_or(|&c| self.m.cycle >= c + self.vd_min)
            && !chance(&mut self.r, self.stall);
        self.m.set("rdv_valid", give as u64);
        if let (true, Some(&(ok, addr, _))) = (give, self.vd_wait.front()) {
            self.m.set("rdv_ok", ok as u64);
            self.m.set("rdv_addr", addr);
        } else {
            self.m.set("rdv_ok", self.r.random::<bool>() as u64);
            self.m.set("rdv_addr", self.r.random());
        }
        // the atomic unit: ready when idle; done once the latency passed and the DMA writes
        // issued before have completed
        self.atom.ready = self.atom.pend.is_none() && !chance(&mut self.r, self.stall);
        self.m.set("atom_ready", self.atom.ready as u64);
        self.atom.done = self
            .atom
            .pend
            .as_ref()
            .is_some_and(|(_, t)| *t <= self.m.cycle && !self.dma.busy());
        let (mut found, mut err, mut orig) = (
            self.r.random::<bool>(),
            self.r.random::<bool>(),
            self.r.random::<u64>(),
        );
        if self.atom.done {
            let (q, _) = self.atom.pend.take().unwrap();
            (found, err, orig) = self.atom_exec(&q);
        }
        self.m.set("atom_done", self.atom.done as u64);
        self.m.set("atom_found", found as u64);
        self.m.set("atom_err", err as u64);
        self.m.set("atom_orig", orig);
        // a QpContext read shown to the ACK processor: its record on `ackev_xq_d` in the next
        // cycle (the port's read data)
        if let Some(q) = self.xq_prev.take() {
            assert_eq!(
                self.m.get_bytes("ackev_xq_d"),
                self.ctx.get(P.ctx_base(0) + q).to_vec(),
                "xq_d of QP {q}"
            );
        }
        if self.m.bit("ackev_xq_g") {
            let q = self.m.get("ackev_xq_qpn") as u32;
            self.xq_seen.push(q);
            self.xq_cycles.push(self.m.cycle);
            self.xq_prev = Some(q);
        }
        let now = self.m.cycle;
        self.m.tick();
        // a beat is taken when tready is high (flow control holds a frame's first beat)
        if go && !self.m.bit("rx_tready") {
            self.held += 1;
            last_frame = None;
        } else if go {
            self.beats.pop_front();
        }
        if let Some(f) = last_frame {
            assert_eq!(self.last_at.len(), f);
            self.last_at.push(now);
        }
        self.ctx.observe(&mut self.m);
        self.ring.observe(&mut self.m);
        // commands and payloads are separated by at least one idle cycle: rising edges
        let (cv, dv) = (self.m.bit("wr_cmd_valid"), self.m.bit("wr_dat_valid"));
        if cv && !self.prev_cv {
            self.cmd_at.push(now);
        }
        if dv && !self.prev_dv {
            self.dat_first.push(now);
        }
        (self.prev_cv, self.prev_dv) = (cv, dv);
        let ncmd = self.dma.cmds.len();
        self.dma.observe(&mut self.m, &mut self.r);
        let cmd_taken = self.dma.cmds.len() > ncmd;
        let ncpl = self.cpl.got.len();
        self.cpl.observe(&mut self.m);
        // a SEND's receive completion never passes its payload's write command (the CQE's
        // write must land after the data: the same AXI ID, the engine takes the command first)
        if let Some((_, c)) = self.cpl.got.get(ncpl)
            && c.opcode == wc_op::RECV
            && c.status == 0
            && c.byte_len > 0
        {
            let end = self.rbuf.get(&c.wr_id).map(|a| a + c.byte_len as u64);
            assert!(
                self.dma
                    .cmds
                    .iter()
                    .any(|&(a, l)| Some(a + l as u64) == end),
                "completion of wr_id {:#x} before its payload's DMA command",
                c.wr_id
            );
        }
        // the verdict stub: `placed` once per ok verdict, in the cycle its DMA command is
        // taken (at once for an empty payload), never without one
        if self.m.bit("rdv_placed") {
            let plen = self
                .place_wait
                .take()
                .expect("rdv.placed without an ok verdict");
            assert!(plen == 0 || cmd_taken, "placed in the command's cycle");
            self.placed += 1;
        }
        if give && self.m.bit("rdv_ready") {
            self.vd_cycles.push(self.m.cycle);
            let (ok, _, plen) = self.vd_wait.pop_front().unwrap();
            if ok {
                self.place_wait = Some(plen);
            }
        }
        if self.m.bit("rsp_valid") {
            // the push never waits: a job is offered only when the sink has room
            assert!(
                self.ack_ready,
                "rsp.valid without rsp.ready at cycle {now}: the responder waits for the job sink"
            );
            self.sink_len += 1;
            let g = |s: &str| self.m.get(&format!("rsp_{s}"));
            self.acks.push(AckOut {
                dmac: g("dmac"),
                smac: g("smac"),
                sip: g("sip") as u32,
                dip: g("dip") as u32,
                sport: g("sport") as u16,
                tos: g("tos") as u8,
                dqpn: g("dqpn") as u32,
                psn: g("psn") as u32,
                syn: g("syndrome") as u8,
                msn: g("msn") as u32,
                read: g("read") != 0,
                va: g("va"),
                len: g("len") as u32,
                mtu: g("mtu") as u8,
                atomic: g("atomic") != 0,
                orig: g("orig"),
            });
        }
        if self.atom.ready && self.m.bit("atom_valid") {
            let g = |s: &str| self.m.get(&format!("atom_{s}"));
            let q = AtomIn {
                qpn: g("qpn") as u32,
                psn: g("psn") as u32,
                dup: g("dup") != 0,
                fa: g("fa") != 0,
                addr: g("addr"),
                swap: g("swap"),
                cmp: g("cmp"),
                head: g("head") as u8,
                cnt: g("cnt") as u8,
            };
            self.atom.reqs.push(q.clone());
            let lat = self.r.random_range(1..=self.atom.lat);
            self.atom.pend = Some((q, now + lat));
        }
        if self.aev_ready && self.m.bit("ackev_valid") {
            let g = |s: &str| self.m.get(&format!("ackev_{s}"));
            if g("rsp") != 0 && (!self.vd_wait.is_empty() || self.place_wait.is_some()) {
                self.early_evs += 1;
            }
            let ev = (
                g("qpn") as u32,
                g("psn") as u32,
                g("syndrome") as u8,
                g("msn") as u32,
            );
            if g("rsp") != 0 && g("atom") != 0 {
                assert_eq!(
                    (g("rpos"), g("plen")),
                    (RSP_ONLY, 8),
                    "ATOMIC ACKNOWLEDGE event"
                );
                self.atevs.push(ev);
                let (ok, addr) = self.verdicts.pop_front().unwrap_or((false, 0));
                self.vd_wait.push_back((ok, addr, 8));
            } else if g("rsp") != 0 {
                let plen = g("plen") as u32;
                self.revs
                    .push((ev.0, ev.1, ev.2, ev.3, g("rpos") as u8, plen));
                let (ok, addr) = self.verdicts.pop_front().unwrap_or((false, 0));
                self.vd_wait.push_back((ok, addr, plen));
            } else {
                assert_eq!(
                    (g("rpos"), g("plen"), g("atom")),
                    (0, 0, 0),
                    "ACKNOWLEDGE event"
                );
                self.aevs.push(ev);
                self.aev_cycles.push(now);
            }
        }
    }
    /// Run until every beat is in and the block has been quiet for a while.
    fn run(&mut self) {
        let mut quiet = 0;
        let mut n = 0;
        while quiet < 200 {
            self.cycle();
            n += 1;
            assert!(n < 2_000_000, "no progress");
            let busy = !self.beats.is_empty()
                || self.m.bit("wr_dat_valid")
                || self.m.bit("ctx_req")
                || self.m.bit("ctxb_req")
                || self.m.bit("ring_req")
                || self.m.bit("cpl_valid")
                || self.m.bit("rsp_valid")
                || self.m.bit("ackev_valid")
                || !self.vd_wait.is_empty()
                || self.place_wait.is_some()
                || self.atom.pend.is_some()
                || self.m.bit("atom_valid");
            quiet = if busy { 0 } else { quiet + 1 };
        }
        if !self.drops_ok {
            assert_eq!(
                self.cnt("cnt_drop_busy"),
                0,
                "frames dropped for a full job sink"
            );
        }
    }
    /// The ATOMIC ACKNOWLEDGE job for an atomic at `psn`.
    fn atjob(&self, psn: u32, msn: u32, orig: u64) -> AckOut {
        AckOut {
            atomic: true,
            orig,
            ..self.ack(psn, aeth::ACK, msn)
        }
    }
    /// Host memory as the atomic unit sees it (little-endian u64; absent bytes 0).
    fn mem64(&self, a: u64) -> u64 {
        let mut b = [0u8; 8];
        for (k, x) in b.iter_mut().enumerate() {
            *x = *self.dma.mem.get(&(a + k as u64)).unwrap_or(&0);
        }
        u64::from_le_bytes(b)
    }
    fn set_mem64(&mut self, a: u64, v: u64) {
        for (k, x) in v.to_le_bytes().iter().enumerate() {
            self.dma.mem.insert(a + k as u64, *x);
        }
    }
    /// Overwrite QP `qpn`'s saved-result ring state (atom_head, atom_cnt).
    fn set_atom_ring(&mut self, qpn: u32, head: u8, cnt: u8) {
        let a = P.ctx_base(3) + qpn;
        let mut rec = self.ctx.get(a);
        rec[RqState::field("atom_head").unwrap().offset] = head;
        rec[RqState::field("atom_cnt").unwrap().offset] = cnt;
        self.ctx.put(a, rec);
    }
    /// The atomic unit's work on one request: (found, err, orig) for its `done`.
    fn atom_exec(&mut self, q: &AtomIn) -> (bool, bool, u64) {
        let ring = self.atom.ring.entry(q.qpn).or_insert([None; AR]);
        if q.dup {
            for i in 1..=q.cnt as usize {
                let slot = (q.head as usize + AR - i) % AR;
                if let Some((p, o)) = ring[slot]
                    && p == q.psn
                {
                    return (true, false, o);
                }
            }
            return (false, false, self.r.random());
        }
        assert_eq!(q.addr % 8, 0, "atomic address aligned");
        if self.atom.bad.contains(&q.addr) {
            return (false, true, self.r.random());
        }
        let mut b = [0u8; 8];
        for (k, x) in b.iter_mut().enumerate() {
            *x = *self.dma.mem.get(&(q.addr + k as u64)).unwrap_or(&0);
        }
        let orig = u64::from_le_bytes(b);
        let new = if q.fa {
            Some(orig.wrapping_add(q.swap))
        } else {
            (orig == q.cmp).then_some(q.swap)
        };
        if let Some(v) = new {
            for (k, x) in v.to_le_bytes().iter().enumerate() {
                self.dma.mem.insert(q.addr + k as u64, *x);
            }
        }
        ring[q.head as usize] = Some((q.psn, orig));
        (true, false, orig)
    }
    fn dump(&self, what: &str) {
        let c: Vec<String> = CNTS
            .iter()
            .map(|c| format!("{}={}", &c[4..], self.m.get(c)))
            .collect();
        eprintln!(
            "{what}: cycle {} frames {} {}; rqs {:?}",
            self.m.cycle,
            self.frames,
            c.join(" "),
            self.rqs(QPN)
        );
    }
    fn cnt(&self, n: &str) -> u64 {
        self.m.get(n)
    }
    fn ack(&self, psn: u32, syn: u8, msn: u32) -> AckOut {
        AckOut {
            dmac: mac48(DMAC),
            smac: mac48(SMAC),
            sip: SIP,
            dip: DIP,
            sport: SPORT,
            tos: TCLASS,
            dqpn: RQPN,
            psn: psn & 0xFF_FFFF,
            syn,
            msn,
            read: false,
            va: 0,
            len: 0,
            mtu: 0,
            atomic: false,
            orig: 0,
        }
    }
    /// The READ job for a request at `psn` (the test QPs' path MTU enum is 3).
    fn rdjob(&self, psn: u32, va: u64, len: u32, msn: u32) -> AckOut {
        AckOut {
            read: true,
            va,
            len,
            mtu: 3,
            ..self.ack(psn, aeth::ACK, msn)
        }
    }
}

const CNTS: [&str; 11] = [
    "cnt_rx_req",
    "cnt_rx_dup",
    "cnt_nak_seq",
    "cnt_nak_acc",
    "cnt_nak_inv",
    "cnt_nak_rnr",
    "cnt_drop_qp",
    "cnt_drop_opcode",
    "cnt_drop_icrc",
    "cnt_drop_parse",
    "cnt_drop_buf",
];

fn psn(i: u32) -> u32 {
    PSN0.wrapping_add(i) & 0xFF_FFFF
}

fn bytes(r: &mut ChaCha8Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| r.random()).collect()
}

/// WRITE ONLY of several lengths at unaligned VAs and a FIRST/MIDDLE/LAST message land at
/// the right bytes; ACKs on AckReq with PSN and MSN; RqState advanced.
#[test]
fn writes_land() {
    for (seed, idle, stall) in [(1, 0.0, 0.0), (2, 0.4, 0.3)] {
        let mut b = Bench::new(seed, idle, stall);
        b.set_mtu(QPN, 5); // WRITE ONLY up to 4096 bytes
        let mut r = rng(seed + 100);
        let mut want: HashMap<u64, u8> = HashMap::new();
        let mut want_cmds = vec![];
        let mut want_acks = vec![];
        let mut i = 0;
        let mut va = MR_IOVA + 3;
        for len in [1usize, 63, 64, 65, 4095, 4096, 2, 100] {
            let data = bytes(&mut r, len);
            let ackreq = i % 2 == 0;
            b.send(&Pkt {
                op: opcode::WRITE_ONLY,
                qpn: QPN,
                psn: psn(i),
                ackreq,
                reth: Some((va, rkey(), len as u32)),
                payload: data.clone(),
                ..Default::default()
            });
            for (k, d) in data.iter().enumerate() {
                want.insert(va + k as u64, *d);
            }
            want_cmds.push((va, len as u32));
            if ackreq {
                want_acks.push(b.ack(psn(i), aeth::ACK, i + 1));
            }
            i += 1;
            va += len as u64 + 1 + r.random_range(0..200);
        }
        // FIRST / MIDDLE / MIDDLE / LAST (1024-byte MTU), ack on the last only
        b.run();
        b.set_mtu(QPN, 3);
        let total = 3 * 1024 + 77;
        let data = bytes(&mut r, total);
        for (j, op) in [
            opcode::WRITE_FIRST,
            opcode::WRITE_MIDDLE,
            opcode::WRITE_MIDDLE,
            opcode::WRITE_LAST,
        ]
        .into_iter()
        .enumerate()
        {
            let chunk = data[1024 * j..(1024 * (j + 1)).min(total)].to_vec();
            b.send(&Pkt {
                op,
                qpn: QPN,
                psn: psn(i),
                ackreq: j == 3,
                reth: (j == 0).then_some((va, rkey(), total as u32)),
                payload: chunk.clone(),
                ..Default::default()
            });
            want_cmds.push((va + 1024 * j as u64, chunk.len() as u32));
            i += 1;
        }
        want_acks.push(b.ack(psn(i - 1), aeth::ACK, 9));
        for (k, d) in data.iter().enumerate() {
            want.insert(va + k as u64, *d);
        }
        b.run();
        b.dump("writes_land");
        assert_eq!(b.dma.cmds, want_cmds, "seed {seed}");
        assert_eq!(b.dma.mem.len(), want.len(), "bytes written");
        for (a, d) in &want {
            assert_eq!(b.dma.mem.get(a), Some(d), "byte at {a:#x}");
        }
        assert_eq!(b.acks, want_acks);
        let s = b.rqs(QPN);
        assert_eq!((s.rq_psn, s.msn, s.flags), (psn(i), 9, 0));
        assert_eq!(b.cnt("cnt_rx_req"), i as u64);
        assert!(b.cpl.got.is_empty());
        for c in [
            "cnt_rx_dup",
            "cnt_nak_seq",
            "cnt_nak_acc",
            "cnt_nak_inv",
            "cnt_nak_rnr",
            "cnt_drop_qp",
            "cnt_drop_opcode",
            "cnt_drop_icrc",
            "cnt_drop_parse",
            "cnt_drop_buf",
        ] {
            assert_eq!(b.cnt(c), 0, "{c}");
        }
        // RqState writes never touch rq_pi
        let f = RqState::field("rq_pi").unwrap();
        for (idx, be) in &b.ctx.writes {
            assert_eq!(*idx, P.ctx_base(3) + QPN);
            assert_eq!(be >> f.offset & 3, 0);
        }
    }
}

/// An ACKNOWLEDGE frame (AETH syndrome `syn`, MSN `msn`) to `qpn`.
fn ack_frame(qpn: u32, psn: u32, syn: u8, msn: u32) -> Pkt {
    Pkt {
        op: opcode::ACKNOWLEDGE,
        qpn,
        psn,
        aeth: Some((syn, msn)),
        ..Default::default()
    }
}

/// A READ RESPONSE ONLY frame to `qpn` (AETH ACK, MSN `msn`) carrying `payload`.
fn rd_rsp_only(qpn: u32, psn: u32, msn: u32, payload: &[u8]) -> Pkt {
    Pkt {
        op: opcode::READ_RESPONSE_ONLY,
        qpn,
        psn,
        aeth: Some((aeth::ACK, msn)),
        payload: payload.to_vec(),
        ..Default::default()
    }
}

fn wr_only(q: u32, i: u32, va: u64, key: u32, data: &[u8], ackreq: bool) -> Pkt {
    Pkt {
        op: opcode::WRITE_ONLY,
        qpn: q,
        psn: psn(i),
        ackreq,
        reth: Some((va, key, data.len() as u32)),
        payload: data.to_vec(),
        ..Default::default()
    }
}

fn cqe(wr_id: u64, byte_len: u32, imm: Option<u32>, op: u8, status: u8, idx: u16) -> Cqe {
    Cqe {
        wr_id,
        byte_len,
        imm_data: imm.unwrap_or(0),
        qp_num: QPN,
        src_qp: RQPN,
        opcode: op,
        status,
        vendor_err: 0,
        flags: if imm.is_some() { cqe_flag::WITH_IMM } else { 0 },
        sq_index: idx,
        reserved: 0,
    }
}

/// SEND (multi-packet with ImmDt, single, zero-length Ethernet-padded) into receive WQEs,
/// WRITE_ONLY_IMM and WRITE FIRST + LAST_IMM consuming receive WQEs: data placement,
/// completions (byte_len, imm, WITH_IMM, src_qp, wr_id, wqe_idx), ACKs, rq_ci.
#[test]
fn sends_and_write_imm() {
    for (seed, idle, stall) in [(3, 0.0, 0.0), (4, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        let a0 = RBUF_IOVA + 5;
        let a1 = RBUF_IOVA + 0x2001;
        let a4 = RBUF_IOVA + 0x3000;
        b.post_recv(QPN, 0, a0, 5000, 0x1000);
        b.post_recv(QPN, 1, a1, 100, 0x1001);
        b.post_recv(QPN, 2, 0, 0, 0x1002);
        b.post_recv(QPN, 3, 0, 0, 0x1003);
        b.post_recv(QPN, 4, a4, 64, 0x1004);
        let mut want: HashMap<u64, u8> = HashMap::new();
        let mut put = |a: u64, d: &[u8]| {
            for (k, x) in d.iter().enumerate() {
                want.insert(a + k as u64, *x);
            }
        };
        let mut acks = vec![];
        let mut cpls = vec![];
        // SEND FIRST / MIDDLE / LAST_IMM
        let m = bytes(&mut r, 2348);
        let imm0 = 0xDEAD_BEEF;
        for (j, (op, lo, hi)) in [
            (opcode::SEND_FIRST, 0, 1024),
            (opcode::SEND_MIDDLE, 1024, 2048),
            (opcode::SEND_LAST_IMM, 2048, 2348),
        ]
        .into_iter()
        .enumerate()
        {
            b.send(&Pkt {
                op,
                qpn: QPN,
                psn: psn(j as u32),
                ackreq: j == 2,
                imm: (j == 2).then_some(imm0),
                payload: m[lo..hi].to_vec(),
                ..Default::default()
            });
        }
        put(a0, &m);
        acks.push(b.ack(psn(2), aeth::ACK, 1));
        cpls.push(cqe(0x1000, 2348, Some(imm0), wc_op::RECV, 0, 0));
        // SEND ONLY
        let d1 = bytes(&mut r, 17);
        b.send(&Pkt {
            op: opcode::SEND_ONLY,
            qpn: QPN,
            psn: psn(3),
            ackreq: true,
            payload: d1.clone(),
            ..Default::default()
        });
        put(a1, &d1);
        acks.push(b.ack(psn(3), aeth::ACK, 2));
        cpls.push(cqe(0x1001, 17, None, wc_op::RECV, 0, 1));
        // WRITE ONLY IMM
        let d2 = bytes(&mut r, 50);
        let va2 = MR_IOVA + 0x777;
        let mut p = wr_only(QPN, 4, va2, rkey(), &d2, false);
        p.op = opcode::WRITE_ONLY_IMM;
        p.imm = Some(0x1234_5678);
        b.send(&p);
        put(va2, &d2);
        cpls.push(cqe(
            0x1002,
            50,
            Some(0x1234_5678),
            wc_op::RECV_RDMA_WITH_IMM,
            0,
            2,
        ));
        // WRITE FIRST + LAST_IMM
        let d3 = bytes(&mut r, 1034);
        let va3 = MR_IOVA + 0x2003;
        let mut p = wr_only(QPN, 5, va3, rkey(), &d3[..1024], false);
        p.op = opcode::WRITE_FIRST;
        p.reth = Some((va3, rkey(), 1034));
        b.send(&p);
        b.send(&Pkt {
            op: opcode::WRITE_LAST_IMM,
            qpn: QPN,
            psn: psn(6),
            ackreq: true,
            imm: Some(7),
            payload: d3[1024..].to_vec(),
            ..Default::default()
        });
        put(va3, &d3);
        acks.push(b.ack(psn(6), aeth::ACK, 4));
        cpls.push(cqe(0x1003, 1034, Some(7), wc_op::RECV_RDMA_WITH_IMM, 0, 3));
        // zero-length SEND ONLY: a 58-byte frame padded to 60 with junk padding bytes
        let mut f = encode(&Pkt {
            op: opcode::SEND_ONLY,
            qpn: QPN,
            psn: psn(7),
            ackreq: true,
            ..Default::default()
        });
        assert_eq!(f.len(), 60);
        f[58] = 0x5A;
        f[59] = 0xA5;
        b.send_frame(&f, false);
        acks.push(b.ack(psn(7), aeth::ACK, 5));
        cpls.push(cqe(0x1004, 0, None, wc_op::RECV, 0, 4));
        b.run();
        b.dump("sends_and_write_imm");
        assert_eq!(b.dma.mem.len(), want.len(), "bytes written");
        for (a, d) in &want {
            assert_eq!(b.dma.mem.get(a), Some(d), "byte at {a:#x}");
        }
        assert_eq!(b.acks, acks);
        let got: Vec<Cqe> = b.cpl.got.iter().map(|x| x.1).collect();
        assert_eq!(got, cpls);
        assert!(b.cpl.got.iter().all(|x| x.0 == RCQN));
        let s = b.rqs(QPN);
        assert_eq!(
            (s.rq_psn, s.msn, s.rq_ci, s.rq_pi, s.flags),
            (psn(8), 5, 5, 5, 0)
        );
        assert_eq!(b.cnt("cnt_rx_req"), 8);
        for c in &CNTS[1..] {
            assert_eq!(b.cnt(c), 0, "{c}");
        }
    }
}

/// Duplicate (with and without AckReq) and future PSNs, access errors (rkey, PD, bounds, MR
/// access, QP access, the rest of a failed WRITE), opcode-sequence error, RNR, receive
/// overflow: the right ACK/NAK each, nothing written where it must not be, RqState and
/// counters; every class A/C error (NAK access / invalid request) moves the QP to ERR (the
/// test revives it for the next case), PSN sequence NAKs and RNR NAKs do not.
#[test]
fn psn_and_naks() {
    for (seed, idle, stall) in [(5, 0.0, 0.0), (6, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        let mr = |b: &mut Bench, idx: u32, pd: u32, acc: u32| {
            b.set_mr(
                idx,
                MrEntry {
                    key: make_key(idx, 1),
                    pd,
                    iova: MR_IOVA,
                    length: MR_LEN,
                    access: acc,
                    flags: 1,
                },
            );
            make_key(idx, 1)
        };
        let k_pd = mr(&mut b, 6, PD + 1, access::REMOTE_WRITE);
        let k_acc = mr(&mut b, 7, PD, access::LOCAL_WRITE | access::REMOTE_READ);
        b.set_qp(6, qp_state::RTR, 0);
        b.set_rqs(6, 40, 0);
        let mut want: HashMap<u64, u8> = HashMap::new();
        let mut acks = vec![];
        let va = MR_IOVA + 0x100;
        let mut good = |b: &mut Bench, i: u32, a: u64, r: &mut ChaCha8Rng| {
            let d = bytes(r, 33);
            b.send(&wr_only(QPN, i, a, rkey(), &d, true));
            for (k, x) in d.iter().enumerate() {
                want.insert(a + k as u64, *x);
            }
        };
        let junk = bytes(&mut r, 40);
        good(&mut b, 0, va, &mut r);
        acks.push(b.ack(psn(0), aeth::ACK, 1));
        b.send(&wr_only(QPN, 0, va + 0x1000, rkey(), &junk, true)); // duplicate
        acks.push(b.ack(psn(0), aeth::ACK, 1));
        b.send(&wr_only(QPN, 0, va + 0x1000, rkey(), &junk, false)); // duplicate, no AckReq
        acks.push(b.ack(psn(0), aeth::ACK, 1));
        b.send(&wr_only(QPN, 3, va + 0x1000, rkey(), &junk, true)); // future
        acks.push(b.ack(psn(1), aeth::NAK_PSN_SEQ_ERR, 1));
        b.send(&wr_only(QPN, 4, va + 0x1000, rkey(), &junk, true)); // future, silent
        good(&mut b, 1, va + 0x200, &mut r);
        acks.push(b.ack(psn(1), aeth::ACK, 2));
        b.send(&wr_only(QPN, 5, va + 0x1000, rkey(), &junk, false)); // future: NAK again
        acks.push(b.ack(psn(2), aeth::NAK_PSN_SEQ_ERR, 2));
        b.expect_no_qp_write();
        // access errors: each NAKed, PSN consumed, QP to ERR
        let bad_gen = make_key(MR_IDX, 0x5B);
        b.send(&wr_only(QPN, 2, va + 0x1000, bad_gen, &junk, false));
        acks.push(b.ack(psn(2), aeth::NAK_REM_ACCESS, 2));
        b.expect_err_then_revive(QPN);
        b.send(&wr_only(QPN, 3, va + 0x1000, k_pd, &junk, false));
        acks.push(b.ack(psn(3), aeth::NAK_REM_ACCESS, 2));
        b.expect_err_then_revive(QPN);
        b.send(&wr_only(
            QPN,
            4,
            MR_IOVA + MR_LEN - 39,
            rkey(),
            &junk,
            false,
        ));
        acks.push(b.ack(psn(4), aeth::NAK_REM_ACCESS, 2));
        b.expect_err_then_revive(QPN);
        b.send(&wr_only(QPN, 5, va + 0x1000, k_acc, &junk, false));
        acks.push(b.ack(psn(5), aeth::NAK_REM_ACCESS, 2));
        b.expect_err_then_revive(QPN);
        // a WRITE FIRST failing: QP to ERR; its MIDDLE and LAST are then dropped (drop_qp)
        let big = bytes(&mut r, 256);
        let mut p = wr_only(QPN, 6, va + 0x1000, bad_gen, &big, false);
        p.op = opcode::WRITE_FIRST;
        p.reth = Some((va + 0x1000, bad_gen, 768));
        b.send(&p);
        acks.push(b.ack(psn(6), aeth::NAK_REM_ACCESS, 2));
        let mut p = wr_only(QPN, 7, 0, 0, &big, true);
        p.op = opcode::WRITE_MIDDLE;
        p.reth = None;
        b.send(&p);
        b.run();
        assert_eq!(b.cnt("cnt_drop_qp"), 1, "packet after the error dropped");
        b.expect_err_then_revive(QPN);
        // revived, the rest of the failed WRITE is consumed (WRITE_BAD), not written
        b.send(&p);
        p.op = opcode::WRITE_LAST;
        p.psn = psn(8);
        b.send(&p);
        // MIDDLE without a message in progress: invalid request, PSN not consumed
        p.op = opcode::WRITE_MIDDLE;
        p.psn = psn(9);
        b.send(&p);
        acks.push(b.ack(psn(9), aeth::NAK_INV_REQ, 2));
        b.expect_err_then_revive(QPN);
        // SEND without a receive WQE: RNR NAK with the QP's timer code, no state change
        let s = Pkt {
            op: opcode::SEND_ONLY,
            qpn: QPN,
            psn: psn(9),
            payload: junk[..20].to_vec(),
            ..Default::default()
        };
        b.send(&s);
        acks.push(b.ack(psn(9), aeth::KIND_RNR << 5 | RNR_CODE, 2));
        b.expect_no_qp_write();
        // QP without REMOTE_WRITE access (QP 6, RTR)
        b.send(&Pkt {
            psn: 40,
            ..wr_only(6, 0, va + 0x1000, rkey(), &junk, false)
        });
        let mut a6 = b.ack(40, aeth::NAK_REM_ACCESS, 0);
        a6.dqpn = RQPN;
        acks.push(a6);
        b.expect_err_then_revive(6);
        // receive overflow: a WQE of 10 bytes, a 20-byte SEND
        b.post_recv(QPN, 0, RBUF_IOVA, 10, 0x2000);
        b.send(&s);
        acks.push(b.ack(psn(9), aeth::NAK_INV_REQ, 2));
        b.expect_err_then_revive(QPN);
        good(&mut b, 9, va + 0x300, &mut r);
        acks.push(b.ack(psn(9), aeth::ACK, 3));
        b.expect_no_qp_write();
        b.dump("psn_and_naks");
        assert_eq!(b.acks, acks);
        assert_eq!(b.dma.cmds.len(), 3);
        assert_eq!(b.dma.mem.len(), want.len(), "bytes written");
        for (a, d) in &want {
            assert_eq!(b.dma.mem.get(a), Some(d), "byte at {a:#x}");
        }
        let got: Vec<Cqe> = b.cpl.got.iter().map(|x| x.1).collect();
        assert_eq!(
            got,
            [cqe(0x2000, 0, None, wc_op::RECV, wc_status::LOC_LEN_ERR, 0)]
        );
        let s = b.rqs(QPN);
        assert_eq!((s.rq_psn, s.msn, s.rq_ci, s.flags), (psn(10), 3, 1, 0));
        let s6 = b.rqs(6);
        assert_eq!((s6.rq_psn, s6.msn), (41, 0));
        let want_cnt = [3, 2, 2, 6, 2, 1, 1, 0, 0, 0, 0];
        for (c, w) in CNTS.iter().zip(want_cnt) {
            assert_eq!(b.cnt(c), w, "{c}");
        }
    }
}

/// Drops: unknown QP, QP not RTR/RTS, bad ICRC, MAC error (tuser), not IPv4; ACKNOWLEDGE
/// frames to ackev; the block still works afterwards.
#[test]
fn drops_and_ackev() {
    for (seed, idle, stall) in [(7, 0.0, 0.0), (8, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        b.set_qp(7, qp_state::INIT, access::REMOTE_WRITE as u8);
        let junk = bytes(&mut r, 100);
        let va = MR_IOVA + 0x40;
        b.send(&wr_only(UNKNOWN_QP, 0, va, rkey(), &junk, true)); // unknown QP
        b.send(&wr_only(7, 0, va, rkey(), &junk, true)); // QP in INIT
        let mut f = encode(&wr_only(QPN, 0, va, rkey(), &junk, true));
        f[80] ^= 0x10; // payload bit flip: ICRC bad
        b.send_frame(&f, false);
        let f = encode(&wr_only(QPN, 0, va, rkey(), &junk, true));
        b.send_frame(&f, true); // MAC error on the last beat
        let mut g = f.clone();
        g[12] = 0x86;
        g[13] = 0xDD; // IPv6 ethertype
        b.send_frame(&g, false);
        let mut aevs = vec![];
        b.set_qp(9, qp_state::RTS, 0);
        for (q, ps, syn, msn) in [
            (QPN, 0x123456, aeth::ACK, 77),
            (UNKNOWN_QP, 1, aeth::ACK, 1),
            (9, 0xFFFFFF, aeth::NAK_REM_ACCESS, 0xABCDEF),
        ] {
            b.send(&ack_frame(q, ps, syn, msn));
            if q < P.num_qps {
                aevs.push((q, ps, syn, msn));
            }
        }
        b.send(&wr_only(QPN, 0, va, rkey(), &junk, true));
        b.run();
        b.dump("drops_and_ackev");
        assert_eq!(b.aevs, aevs);
        assert_eq!(b.acks, [b.ack(psn(0), aeth::ACK, 1)]);
        assert_eq!(b.dma.cmds, [(va, 100)]);
        for (k, d) in junk.iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(va + k as u64)), Some(d));
        }
        let want_cnt = [1, 0, 0, 0, 0, 0, 3, 0, 1, 2, 0];
        for (c, w) in CNTS.iter().zip(want_cnt) {
            assert_eq!(b.cnt(c), w, "{c}");
        }
    }
}

/// ACKNOWLEDGE frames get the requests' P_Key and destination IPv4 / MAC checks before they
/// reach ackev (dropped and counted otherwise; the QP state is not checked here).
#[test]
fn ack_frames_checked() {
    for (seed, idle, stall) in [(31, 0.0, 0.0), (32, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        b.set_qp(8, qp_state::ERR, 0);
        let ack = |q: u32, ps: u32| ack_frame(q, ps, aeth::ACK, ps + 1);
        b.send(&ack(QPN, 1));
        b.send_frame(
            &encode_with(&ack(QPN, 2), |f| f[44..46].copy_from_slice(&[0x12, 0x34])),
            false,
        );
        b.send_frame(&encode_with(&ack(QPN, 3), |f| f[33] ^= 0x40), false); // IPv4 dst
        b.send_frame(&encode_with(&ack(QPN, 4), |f| f[1] ^= 0x01), false); // dst MAC
        b.send(&ack(8, 5)); // QP in ERR: ackproc's business
        b.send(&ack(QPN, 6));
        b.run();
        b.dump("ack_frames_checked");
        assert_eq!(
            b.aevs,
            [
                (QPN, 1, aeth::ACK, 2),
                (8, 5, aeth::ACK, 6),
                (QPN, 6, aeth::ACK, 7)
            ]
        );
        assert!(b.acks.is_empty());
        assert_eq!(nonzero(&b), [("cnt_drop_pkey", 1), ("cnt_drop_addr", 2)]);
    }
}

/// RoCE v2 CNPs (A17.9.3: BTH opcode 0x81, 16 reserved bytes): counted in `cnt_rx_cnp` and
/// dropped for a valid QP (no ACK, no state change); for an unknown QP, a QP not in RTR/RTS
/// or a foreign address dropped as any packet; requests around them unaffected.
#[test]
fn cnp_counted_and_dropped() {
    for (seed, idle, stall) in [(33, 0.0, 0.0), (34, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        b.set_qp(8, qp_state::INIT, 0);
        let cnp = |q: u32| Pkt {
            op: opcode::CNP,
            qpn: q,
            payload: vec![0; 16],
            ..Default::default()
        };
        let va = MR_IOVA + 0x100;
        let d = bytes(&mut r, 30);
        b.send(&cnp(QPN));
        b.send(&wr_only(QPN, 0, va, rkey(), &d, true));
        b.send(&cnp(QPN));
        b.send(&cnp(UNKNOWN_QP));
        b.send(&cnp(8));
        b.send_frame(&encode_with(&cnp(QPN), |f| f[33] ^= 0x40), false);
        b.run();
        b.dump("cnp_counted_and_dropped");
        assert_eq!(b.acks, [b.ack(psn(0), aeth::ACK, 1)]);
        assert_eq!(b.dma.cmds, [(va, 30)]);
        assert!(b.aevs.is_empty() && b.cpl.got.is_empty());
        assert_eq!(
            nonzero(&b),
            [
                ("cnt_rx_req", 1),
                ("cnt_drop_qp", 2),
                ("cnt_drop_addr", 1),
                ("cnt_rx_cnp", 2)
            ]
        );
        assert_eq!(b.rqs(QPN).rq_psn, psn(1));
    }
}

/// Duplicate SEND and WRITE packets (PSN before rq_psn, within the window) are ACKed again
/// whether or not AckReq is set, with PSN = rq_psn - 1 and the current MSN (as rxe): no
/// write, no completion, no RqState or QP change. Includes the middle packet of a SEND that
/// a requester retransmits without AckReq, and a PSN 2^23 - 1 behind.
#[test]
fn duplicates_acked_without_ackreq() {
    for (seed, idle, stall) in [(35, 0.0, 0.0), (36, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        b.post_recv(QPN, 0, RBUF_IOVA, 4096, 0x4000);
        let m = bytes(&mut r, 2100);
        let sends: Vec<Pkt> = [
            (opcode::SEND_FIRST, 0, 1024),
            (opcode::SEND_MIDDLE, 1024, 2048),
            (opcode::SEND_LAST, 2048, 2100),
        ]
        .into_iter()
        .enumerate()
        .map(|(j, (op, lo, hi))| Pkt {
            op,
            qpn: QPN,
            psn: psn(j as u32),
            ackreq: j == 2,
            payload: m[lo..hi].to_vec(),
            ..Default::default()
        })
        .collect();
        for p in &sends {
            b.send(p);
        }
        let va = MR_IOVA + 0x40;
        let d = bytes(&mut r, 50);
        b.send(&wr_only(QPN, 3, va, rkey(), &d, false));
        b.run();
        let rqs0 = b.ctx.get(P.ctx_base(3) + QPN);
        let (mem0, cmds0, cpl0) = (b.dma.mem.clone(), b.dma.cmds.clone(), b.cpl.got.len());
        assert_eq!(cpl0, 1);
        assert_eq!(b.acks, [b.ack(psn(2), aeth::ACK, 1)]);
        b.acks.clear();
        b.ctx.writes.clear();
        // duplicates: the SEND's middle and first (no AckReq), its last (AckReq), the WRITE
        // with other data (no AckReq), and the oldest PSN of the window
        let junk = bytes(&mut r, 1024);
        let mut mid = sends[1].clone();
        mid.payload = junk.clone();
        b.send(&mid);
        b.send(&sends[0]);
        b.send(&sends[2]);
        b.send(&wr_only(QPN, 3, va, rkey(), &junk[..50], false));
        let mut old = wr_only(QPN, 0, va, rkey(), &junk[..50], false);
        old.psn = psn(4).wrapping_sub(1 << 23) & 0xFF_FFFF;
        b.send(&old);
        b.run();
        b.dump("duplicates_acked_without_ackreq");
        assert_eq!(b.acks, vec![b.ack(psn(3), aeth::ACK, 2); 5]);
        assert_eq!(b.dma.mem, mem0, "memory unchanged");
        assert_eq!(b.dma.cmds, cmds0, "no DMA write");
        assert_eq!(b.cpl.got.len(), cpl0, "no completion");
        assert!(b.ctx.writes.is_empty(), "no context write");
        assert_eq!(b.ctx.get(P.ctx_base(3) + QPN), rqs0);
        assert_eq!(b.cnt("cnt_rx_dup"), 5);
        assert_eq!(b.cnt("cnt_rx_req"), 4);
    }
}

/// Class C errors in the middle of a multi-packet SEND (an opcode-sequence error: a new
/// SEND FIRST; a MIDDLE of the wrong length): NAK invalid request, the receive WQE being
/// filled completed with REM_INV_REQ_ERR (rxe's status; byte_len = bytes received so far),
/// rq_ci + 1, the QP moved to ERR by a byte-enable write of `state`; a later valid request
/// for the QP is dropped (drop_qp), not ACKed, not written.
#[test]
fn class_c_error_in_send_moves_qp_to_err() {
    for (case, (seed, idle, stall)) in [(37, 0.0, 0.0), (38, 0.5, 0.4)].into_iter().enumerate() {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        b.post_recv(QPN, 0, RBUF_IOVA, 4096, 0x5000);
        b.post_recv(QPN, 1, RBUF_IOVA + 0x2000, 4096, 0x5001);
        let m = bytes(&mut r, 2048);
        let pkt = |op, i: u32, pay: &[u8]| Pkt {
            op,
            qpn: QPN,
            psn: psn(i),
            payload: pay.to_vec(),
            ..Default::default()
        };
        b.send(&pkt(opcode::SEND_FIRST, 0, &m[..1024]));
        b.send(&pkt(opcode::SEND_MIDDLE, 1, &m[1024..2048]));
        // case 0: a new SEND FIRST in the middle; case 1: a MIDDLE of 100 bytes
        let bad = if case == 0 {
            pkt(opcode::SEND_FIRST, 2, &m[..1024])
        } else {
            pkt(opcode::SEND_MIDDLE, 2, &m[..100])
        };
        b.send(&bad);
        b.expect_err(QPN);
        // the QP is in ERR: a valid WRITE is dropped
        b.send(&wr_only(QPN, 2, MR_IOVA, rkey(), &m[..64], true));
        b.run();
        b.dump("class_c_error_in_send_moves_qp_to_err");
        assert_eq!(b.acks, [b.ack(psn(2), aeth::NAK_INV_REQ, 0)]);
        let got: Vec<Cqe> = b.cpl.got.iter().map(|x| x.1).collect();
        assert_eq!(
            got,
            [cqe(
                0x5000,
                2048,
                None,
                wc_op::RECV,
                wc_status::REM_INV_REQ_ERR,
                0
            )]
        );
        assert_eq!(b.dma.cmds, [(RBUF_IOVA, 1024), (RBUF_IOVA + 1024, 1024)]);
        let s = b.rqs(QPN);
        assert_eq!(
            (s.rq_psn, s.msn, s.rq_ci, s.flags, s.recv_off),
            (psn(2), 0, 1, 0, 0)
        );
        assert_eq!(
            nonzero(&b),
            [("cnt_rx_req", 2), ("cnt_nak_inv", 1), ("cnt_drop_qp", 1)]
        );
    }
}

/// RNR NAK: AETH syndrome 0x20 | (QpContext.min_rnr_timer & 0x1F) for several codes (bits
/// above the 5-bit code ignored); no QP state change.
#[test]
fn rnr_nak_timer_code() {
    let mut b = Bench::new(39, 0.3, 0.3);
    let off = QpContext::field("min_rnr_timer").unwrap().offset;
    let mut want = vec![];
    for code in [0u8, 1, 0x12, 0x1F, 0xE5] {
        let mut rec = b.ctx.get(QPN);
        rec[off] = code;
        b.ctx.put(QPN, rec);
        b.send(&Pkt {
            op: opcode::SEND_ONLY,
            qpn: QPN,
            psn: psn(0),
            ackreq: true,
            payload: vec![1, 2, 3, 4],
            ..Default::default()
        });
        want.push(b.ack(psn(0), 0x20 | (code & 0x1F), 0));
        b.expect_no_qp_write();
    }
    assert_eq!(b.acks, want);
    assert_eq!(b.qp(QPN).state, qp_state::RTS);
    assert_eq!(nonzero(&b), [("cnt_nak_rnr", 5)]);
}

/// The shared SoftRoCE capture through the block with no QP set up (all QPs in RESET, with
/// the capture's addresses): every RoCE frame passes the ICRC and the parser; ACKNOWLEDGEs
/// READ RESPONSEs and ATOMIC ACKNOWLEDGEs (their address checked) reach ackev (the verdict
/// stub drops the responses), requests (READ and atomics included) are dropped for the QP
/// state, non-IPv4 frames by the parser. (Idle between beats: back-to-back one-beat frames outrun
/// the FSM and fill the header FIFO.)
#[test]
fn vectors() {
    let v = crate::common::testutil::vector_frames();
    let mut b = Bench::new(9, 0.8, 0.2);
    b.ctx.rec.clear();
    let mut aevs = vec![];
    let mut revs = vec![];
    let mut atevs = vec![];
    let (mut parse, mut qp, mut addr) = (0, 0, 0);
    let be =
        |f: &[u8], a: usize, n: usize| f[a..a + n].iter().fold(0u32, |x, y| x << 8 | *y as u32);
    // each QP (still in RESET) gets the destination of the first ACK or READ RESPONSE to it
    // as its address; ACKs of another flow with the same QPN are then not addressed to it
    // (drop_addr)
    let mut own: HashMap<u32, (u32, [u8; 6])> = HashMap::new();
    for f in &v {
        if f[12..14] == [0x08, 0x00]
            && (f[42] == opcode::ACKNOWLEDGE
                || f[42] == opcode::ATOMIC_ACKNOWLEDGE
                || (opcode::READ_RESPONSE_FIRST..=opcode::READ_RESPONSE_ONLY).contains(&f[42]))
        {
            let mut m = [0u8; 6];
            m.copy_from_slice(&f[..6]);
            own.entry(be(f, 47, 3)).or_insert((be(f, 30, 4), m));
        }
    }
    for (q, (ip, m)) in &own {
        let c = QpContext {
            src_ip: *ip,
            src_mac: *m,
            ..Default::default()
        };
        b.ctx.put(*q, c.encode());
    }
    for f in &v {
        b.send_frame(f, false);
        if f[12..14] != [0x08, 0x00] {
            parse += 1;
            continue;
        }
        let (o, q) = (f[42], be(f, 47, 3));
        if o == opcode::ACKNOWLEDGE {
            if q >= P.num_qps {
                qp += 1;
            } else if own[&q].0 == be(f, 30, 4) && own[&q].1[..] == f[..6] {
                aevs.push((q, be(f, 51, 3), f[54], be(f, 55, 3)));
            } else {
                addr += 1;
            }
        } else if (opcode::READ_RESPONSE_FIRST..=opcode::READ_RESPONSE_ONLY).contains(&o) {
            if q >= P.num_qps {
                qp += 1;
            } else if own
                .get(&q)
                .is_some_and(|x| x.0 == be(f, 30, 4) && x.1[..] == f[..6])
            {
                let mid = o == opcode::READ_RESPONSE_MIDDLE;
                let hdr = 20 + 8 + 12 + 4 * (!mid as usize) + 4;
                let plen = be(f, 16, 2) - hdr as u32 - (f[43] as u32 >> 4 & 3);
                let (syn, msn) = if mid {
                    (aeth::ACK, 0)
                } else {
                    (f[54], be(f, 55, 3))
                };
                revs.push((
                    q,
                    be(f, 51, 3),
                    syn,
                    msn,
                    o - opcode::READ_RESPONSE_FIRST,
                    plen,
                ));
            } else {
                addr += 1;
            }
        } else if o == opcode::ATOMIC_ACKNOWLEDGE {
            if q >= P.num_qps {
                qp += 1;
            } else if own[&q].0 == be(f, 30, 4) && own[&q].1[..] == f[..6] {
                atevs.push((q, be(f, 51, 3), f[54], be(f, 55, 3)));
            } else {
                addr += 1;
            }
        } else {
            // requests (SEND, WRITE, READ, atomics): the QP is not in RTR/RTS
            qp += 1;
        }
    }
    b.run();
    b.dump("vectors");
    assert!(!aevs.is_empty() && !revs.is_empty() && !atevs.is_empty() && qp > 0 && addr > 0);
    assert_eq!(b.aevs, aevs);
    assert_eq!(b.revs, revs);
    assert_eq!(b.atevs, atevs);
    assert!(b.atom.reqs.is_empty());
    assert!(b.dma.cmds.is_empty() && b.placed == 0);
    assert_eq!(b.cnt("cnt_drop_addr"), addr);
    let want_cnt = [0, 0, 0, 0, 0, 0, qp, 0, 0, parse, 0];
    for (c, w) in CNTS.iter().zip(want_cnt) {
        assert_eq!(b.cnt(c), w, "{c}");
    }
}

/// Latency (MAC's last beat -> DMA command / first data beat) with idle ports, and
/// throughput: 4 KiB WRITE packets back to back at one beat per cycle are all accepted.
/// Then the same with a slow DMA engine: whole frames are dropped (cnt_drop_buf), never
/// corrupted.
#[test]
fn latency_and_throughput() {
    let mut b = Bench::new(10, 0.0, 0.0);
    b.set_mtu(QPN, 5);
    let mut r = rng(110);
    for (i, len) in [4096usize, 1, 100, 1000].into_iter().enumerate() {
        let d = bytes(&mut r, len);
        b.send(&wr_only(
            QPN,
            i as u32,
            MR_IOVA + 0x10000 * i as u64 + 9,
            rkey(),
            &d,
            false,
        ));
        b.run();
    }
    let lat_cmd: Vec<u64> = b
        .cmd_at
        .iter()
        .zip(&b.last_at)
        .map(|(c, l)| c - l)
        .collect();
    let lat_dat: Vec<u64> = b
        .dat_first
        .iter()
        .zip(&b.last_at)
        .map(|(c, l)| c - l)
        .collect();
    eprintln!("latency last beat -> DMA command {lat_cmd:?}, -> first data beat {lat_dat:?}");
    assert!(lat_dat.iter().all(|l| *l <= 40));
    // throughput: one 16-packet message of 4 KiB packets, no idle
    let mut b = Bench::new(11, 0.0, 0.0);
    b.set_mtu(QPN, 5);
    let n = 16;
    let total = 4096 * n;
    let data = bytes(&mut r, total);
    let va = MR_IOVA + 5;
    for j in 0..n {
        let op = if j == 0 {
            opcode::WRITE_FIRST
        } else if j + 1 == n {
            opcode::WRITE_LAST
        } else {
            opcode::WRITE_MIDDLE
        };
        b.send(&Pkt {
            op,
            qpn: QPN,
            psn: psn(j as u32),
            ackreq: j + 1 == n,
            reth: (j == 0).then_some((va, rkey(), total as u32)),
            payload: data[4096 * j..4096 * (j + 1)].to_vec(),
            ..Default::default()
        });
    }
    let beats_in = b.beats.len();
    b.run();
    b.dump("throughput");
    assert_eq!(b.cnt("cnt_drop_buf"), 0);
    assert_eq!(b.cnt("cnt_rx_req"), n as u64);
    for (k, d) in data.iter().enumerate() {
        assert_eq!(b.dma.mem.get(&(va + k as u64)), Some(d));
    }
    let span = b.cmd_at.len();
    assert_eq!(span, n);
    eprintln!(
        "throughput: {beats_in} input beats in {beats_in} cycles; payload beats streamed from cycle {} to the last frame's first data beat at {} (last input beat at {})",
        b.dat_first[0],
        b.dat_first[n - 1],
        b.last_at[n - 1]
    );
    assert!(
        b.dat_first[n - 1] - b.last_at[n - 1] <= 40,
        "the stream kept up"
    );
    // slow DMA: the input is held by flow control (no frame lost), everything lands
    let mut b = Bench::new(12, 0.0, 0.0);
    b.set_mtu(QPN, 5);
    b.dma.stall = 0.8;
    let mut want: HashMap<u64, u8> = HashMap::new();
    for j in 0..12u32 {
        let d = bytes(&mut r, 4000);
        let a = MR_IOVA + 0x1000 * j as u64;
        b.send(&wr_only(QPN, j, a, rkey(), &d, false));
        for (k, x) in d.iter().enumerate() {
            want.insert(a + k as u64, *x);
        }
    }
    b.run();
    b.dump("slow dma");
    assert_eq!(b.cnt("cnt_drop_buf"), 0);
    assert!(b.held > 0, "flow control held the input");
    assert_eq!(b.cnt("cnt_rx_req"), 12);
    assert_eq!(b.dma.mem.len(), want.len());
    for (a, d) in &b.dma.mem {
        assert_eq!(want.get(a), Some(d), "byte at {a:#x}");
    }
}

// ================================================================ wire-input checks (issue 10)

/// `encode(p)`, then `m` applied to the frame (without ICRC and Ethernet padding), then the
/// IPv4 checksum and the ICRC recomputed: a frame a hostile peer could send.
fn encode_with(p: &Pkt, m: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let mut f = encode(p);
    let tot = u16::from_be_bytes([f[16], f[17]]) as usize;
    f.truncate(14 + tot - 4);
    m(&mut f);
    f[24..26].copy_from_slice(&[0, 0]);
    let mut sum: u32 = f[14..34]
        .chunks(2)
        .map(|w| u16::from_be_bytes([w[0], w[1]]) as u32)
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    f[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    let c = icrc::icrc(&f).unwrap();
    f.extend(c.to_le_bytes());
    while f.len() < 60 {
        f.push(0);
    }
    f
}

/// Every counter of `CNTS`, the two address drops and the CNP / READ / atomic counters, as (name, value) for the non-zero ones.
fn nonzero(b: &Bench) -> Vec<(&'static str, u64)> {
    CNTS.iter()
        .copied()
        .chain([
            "cnt_drop_pkey",
            "cnt_drop_addr",
            "cnt_rx_cnp",
            "cnt_rx_read",
            "cnt_rx_atomic",
            "cnt_atom_dup",
            "cnt_atom_miss",
            "cnt_drop_busy",
        ])
        .map(|c| (c, b.cnt(c)))
        .filter(|x| x.1 != 0)
        .collect()
}

/// The frame that hung the NIC: a 0-byte WRITE ONLY with PadCnt 3 and a RETH DMA length of
/// 0xFFFD (payload minus pad underflowed to 0xFFFD) is dropped by the parser (payload
/// reason); the next valid WRITE is ACKed and lands at its own address, and the one after it.
#[test]
fn pad_underflow_frame_dropped() {
    for (seed, idle, stall) in [(21, 0.0, 0.0), (22, 0.4, 0.3)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        let va = MR_IOVA + 0x100;
        let mut p = wr_only(QPN, 0, va + 0x8000, rkey(), &[], true);
        p.reth = Some((va + 0x8000, rkey(), 0xFFFD));
        b.send_frame(&encode_with(&p, |f| f[43] |= 0x30), false);
        let d0 = bytes(&mut r, 100);
        let d1 = bytes(&mut r, 37);
        b.send(&wr_only(QPN, 0, va, rkey(), &d0, true));
        b.send(&wr_only(QPN, 1, va + 0x400, rkey(), &d1, true));
        b.run();
        b.dump("pad_underflow_frame_dropped");
        assert_eq!(
            b.acks,
            [b.ack(psn(0), aeth::ACK, 1), b.ack(psn(1), aeth::ACK, 2)]
        );
        assert_eq!(b.dma.cmds, [(va, 100), (va + 0x400, 37)]);
        assert_eq!(b.dma.mem.len(), 137);
        for (k, d) in d0.iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(va + k as u64)), Some(d));
        }
        for (k, d) in d1.iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(va + 0x400 + k as u64)), Some(d));
        }
        assert_eq!(
            nonzero(&b),
            [("cnt_rx_req", 2), ("cnt_drop_parse", 1)],
            "seed {seed}"
        );
    }
}

/// A UDP length running past the IPv4 payload: dropped by the parser.
#[test]
fn udp_len_past_ip_payload_dropped() {
    let mut b = Bench::new(23, 0.0, 0.0);
    let mut r = rng(123);
    let va = MR_IOVA + 0x100;
    let d = bytes(&mut r, 64);
    let p = wr_only(QPN, 0, va, rkey(), &d, true);
    b.send_frame(
        &encode_with(&p, |f| {
            let u = u16::from_be_bytes([f[38], f[39]]) + 4;
            f[38..40].copy_from_slice(&u.to_be_bytes());
        }),
        false,
    );
    b.send(&wr_only(QPN, 0, va + 0x200, rkey(), &d, true));
    b.run();
    assert_eq!(b.acks, [b.ack(psn(0), aeth::ACK, 1)]);
    assert_eq!(b.dma.cmds, [(va + 0x200, 64)]);
    assert_eq!(nonzero(&b), [("cnt_rx_req", 1), ("cnt_drop_parse", 1)]);
}

/// Packet lengths (path MTU 1024): WRITE ONLY shorter or longer than its RETH DMA length,
/// WRITE ONLY larger than the MTU, FIRST and MIDDLE not MTU-sized, a LAST whose message
/// total differs from the RETH length, SEND FIRST short: NAK invalid request each, nothing
/// written, PSN not consumed, QP to ERR (class C; revived by the test for the next case);
/// the valid packets around them are executed.
#[test]
fn packet_lengths_checked() {
    for (seed, idle, stall) in [(24, 0.0, 0.0), (25, 0.4, 0.3)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        let va = MR_IOVA + 0x100;
        let mut acks = vec![];
        let mut cmds = vec![];
        let d = bytes(&mut r, 3000);
        let nak = |b: &Bench, i| b.ack(psn(i), aeth::NAK_INV_REQ, 0);
        // WRITE ONLY shorter than its DMA length, longer, larger than the MTU
        let mut p = wr_only(QPN, 0, va, rkey(), &d[..40], true);
        p.reth = Some((va, rkey(), 64));
        b.send(&p);
        acks.push(nak(&b, 0));
        b.expect_err_then_revive(QPN);
        let mut p = wr_only(QPN, 0, va, rkey(), &d[..64], true);
        p.reth = Some((va, rkey(), 40));
        b.send(&p);
        acks.push(nak(&b, 0));
        b.expect_err_then_revive(QPN);
        b.send(&wr_only(QPN, 0, va, rkey(), &d[..1028], true));
        acks.push(nak(&b, 0));
        b.expect_err_then_revive(QPN);
        // WRITE FIRST of 512 bytes (not the MTU)
        let mut p = wr_only(QPN, 0, va, rkey(), &d[..512], true);
        p.op = opcode::WRITE_FIRST;
        p.reth = Some((va, rkey(), 2000));
        b.send(&p);
        acks.push(nak(&b, 0));
        b.expect_err_then_revive(QPN);
        // a good FIRST (1024 of 2000), a MIDDLE of 512, a LAST of 900 (976 left): NAKed;
        // then the right LAST
        let mut p = wr_only(QPN, 0, va, rkey(), &d[..1024], false);
        p.op = opcode::WRITE_FIRST;
        p.reth = Some((va, rkey(), 2000));
        b.send(&p);
        cmds.push((va, 1024));
        let mut p = wr_only(QPN, 1, 0, 0, &d[1024..1536], true);
        p.op = opcode::WRITE_MIDDLE;
        p.reth = None;
        b.send(&p);
        acks.push(nak(&b, 1));
        b.expect_err_then_revive(QPN);
        p.op = opcode::WRITE_LAST;
        p.payload = d[1024..1924].to_vec();
        b.send(&p);
        acks.push(nak(&b, 1));
        b.expect_err_then_revive(QPN);
        p.payload = d[1024..2000].to_vec();
        b.send(&p);
        cmds.push((va + 1024, 976));
        acks.push(b.ack(psn(1), aeth::ACK, 1));
        b.expect_no_qp_write();
        // SEND FIRST of 100 bytes (no receive WQE being filled yet: no completion)
        b.post_recv(QPN, 0, RBUF_IOVA, 4096, 0x3000);
        b.send(&Pkt {
            op: opcode::SEND_FIRST,
            qpn: QPN,
            psn: psn(2),
            ackreq: true,
            payload: d[..100].to_vec(),
            ..Default::default()
        });
        acks.push(b.ack(psn(2), aeth::NAK_INV_REQ, 1));
        b.expect_err_then_revive(QPN);
        b.dump("packet_lengths_checked");
        assert_eq!(b.acks, acks, "seed {seed}");
        assert_eq!(b.dma.cmds, cmds);
        assert_eq!(b.dma.mem.len(), 2000);
        for (k, x) in d[..2000].iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(va + k as u64)), Some(x));
        }
        assert!(b.cpl.got.is_empty());
        let s = b.rqs(QPN);
        assert_eq!((s.rq_psn, s.msn, s.rq_ci, s.flags), (psn(2), 1, 0, 0));
        assert_eq!(
            nonzero(&b),
            [("cnt_rx_req", 2), ("cnt_nak_inv", 7)],
            "seed {seed}"
        );
    }
}

/// A zero-length RDMA WRITE (RETH DMA length 0) with rkey 0 and address 0: no R_Key check
/// (C9-88), no DMA, ACKed; also with a valid rkey and a VA outside the MR.
#[test]
fn zero_length_write_no_rkey_check() {
    let mut b = Bench::new(26, 0.3, 0.3);
    b.send(&wr_only(QPN, 0, 0, 0, &[], true));
    b.send(&wr_only(
        QPN,
        1,
        MR_IOVA + MR_LEN + 0x1000,
        rkey(),
        &[],
        true,
    ));
    b.run();
    assert_eq!(
        b.acks,
        [b.ack(psn(0), aeth::ACK, 1), b.ack(psn(1), aeth::ACK, 2)]
    );
    assert!(b.dma.cmds.is_empty());
    assert!(b.dma.mem.is_empty());
    assert_eq!(nonzero(&b), [("cnt_rx_req", 2)]);
    assert_eq!(b.rqs(QPN).rq_psn, psn(2));
}

/// Requests with a P_Key that is not ours, or to an IPv4 address or MAC that is not ours:
/// silently dropped and counted; a limited-membership P_Key (0x7FFF) is accepted.
#[test]
fn foreign_pkey_ip_mac_dropped() {
    let mut b = Bench::new(27, 0.2, 0.2);
    let mut r = rng(127);
    let va = MR_IOVA + 0x100;
    let d = bytes(&mut r, 48);
    let p = wr_only(QPN, 0, va + 0x1000, rkey(), &d, true);
    b.send_frame(
        &encode_with(&p, |f| f[44..46].copy_from_slice(&[0x12, 0x34])),
        false,
    );
    b.send_frame(
        &encode_with(&p, |f| f[44..46].copy_from_slice(&[0x80, 0x00])),
        false,
    );
    b.send_frame(&encode_with(&p, |f| f[33] ^= 1), false); // IPv4 destination
    b.send_frame(&encode_with(&p, |f| f[5] ^= 1), false); // destination MAC
    b.send_frame(&encode_with(&p, |f| f[0] = 0xFF), false); // broadcast MAC
    let p = wr_only(QPN, 0, va, rkey(), &d, true);
    b.send_frame(
        &encode_with(&p, |f| f[44..46].copy_from_slice(&[0x7F, 0xFF])),
        false,
    );
    b.run();
    assert_eq!(b.acks, [b.ack(psn(0), aeth::ACK, 1)]);
    assert_eq!(b.dma.cmds, [(va, 48)]);
    assert_eq!(
        nonzero(&b),
        [
            ("cnt_rx_req", 1),
            ("cnt_drop_pkey", 2),
            ("cnt_drop_addr", 3)
        ]
    );
}

// ================================================================ RDMA READ (issue 10)

/// A READ REQUEST to QP `QPN` (AckReq set: it must not add an ACK).
fn rd_req(ps: u32, va: u64, key: u32, len: u32) -> Pkt {
    Pkt {
        op: opcode::READ_REQUEST,
        qpn: QPN,
        psn: ps,
        ackreq: true,
        reth: Some((va, key, len)),
        ..Default::default()
    }
}

/// READ REQUESTs in sequence (MTU 1024): one READ job each with the request's PSN, va,
/// length, the path MTU and the new MSN, no ACK (AckReq set or not); rq_psn advanced by
/// n = max(1, ceil(len / MTU)) (3000 -> 3, 1024 -> 1, 1025 -> 2, 0 -> 1, 2^31 -> 2^21), shown
/// by the WRITEs at the following PSNs being executed and ACKed; a zero-length READ with rkey
/// 0 and va 0 needs no MR; a future-PSN READ gets the PSN sequence NAK. No DMA for the READs,
/// no QP write.
#[test]
fn read_requests_in_sequence() {
    for (seed, idle, stall) in [(41, 0.0, 0.0), (42, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        let big = make_key(8, 3);
        b.set_mr(
            8,
            MrEntry {
                key: big,
                pd: PD,
                iova: 0x1_0000_0000,
                length: 1 << 32,
                access: access::REMOTE_READ,
                flags: 1,
            },
        );
        let va = MR_IOVA + 0x123;
        let d = bytes(&mut r, 40);
        let mut jobs = vec![];
        b.send(&wr_only(QPN, 0, va, rkey(), &d, true));
        jobs.push(b.ack(psn(0), aeth::ACK, 1));
        b.send(&rd_req(psn(1), va, rkey(), 3000));
        jobs.push(b.rdjob(psn(1), va, 3000, 2));
        b.send(&wr_only(QPN, 4, va + 0x400, rkey(), &d, true));
        jobs.push(b.ack(psn(4), aeth::ACK, 3));
        let mut p = rd_req(psn(5), va + 1, rkey(), 1024);
        p.ackreq = false;
        b.send(&p);
        jobs.push(b.rdjob(psn(5), va + 1, 1024, 4));
        b.send(&rd_req(psn(6), va + 2, rkey(), 1025));
        jobs.push(b.rdjob(psn(6), va + 2, 1025, 5));
        b.send(&rd_req(psn(8), 0, 0, 0));
        jobs.push(b.rdjob(psn(8), 0, 0, 6));
        b.send(&rd_req(psn(9), 0x1_0000_0000, big, 1 << 31));
        jobs.push(b.rdjob(psn(9), 0x1_0000_0000, 1 << 31, 7));
        let nxt = 9 + (1 << 21);
        b.send(&wr_only(QPN, nxt, va + 0x800, rkey(), &d, true));
        jobs.push(b.ack(psn(nxt), aeth::ACK, 8));
        // a future READ: NAK PSN sequence error (NAK_SENT); the READ at rq_psn clears it
        b.send(&rd_req(psn(nxt + 5), va, rkey(), 64));
        jobs.push(b.ack(psn(nxt + 1), aeth::NAK_PSN_SEQ_ERR, 8));
        b.send(&rd_req(psn(nxt + 1), va + 8, rkey(), 64));
        jobs.push(b.rdjob(psn(nxt + 1), va + 8, 64, 9));
        b.expect_no_qp_write();
        b.dump("read_requests_in_sequence");
        assert_eq!(b.acks, jobs, "seed {seed}");
        assert_eq!(
            b.dma.cmds,
            [(va, 40), (va + 0x400, 40), (va + 0x800, 40)],
            "only the WRITEs"
        );
        let s = b.rqs(QPN);
        assert_eq!((s.rq_psn, s.msn, s.flags), (psn(nxt + 2), 9, 0));
        assert_eq!(
            nonzero(&b),
            [("cnt_rx_req", 9), ("cnt_nak_seq", 1), ("cnt_rx_read", 6)]
        );
    }
}

/// READ REQUESTs failing their checks: bad key generation, key index beyond the MR table,
/// other PD, MR without REMOTE_READ, invalid MR, [va, va+len) past the MR's end or below its
/// start, QP without REMOTE_READ: NAK remote access error; DMA length 2^31 + 1: NAK invalid
/// request. Each moves the QP to ERR (revived by the test), sends no READ job and leaves
/// rq_psn where it was, so the same PSN with a good READ is answered afterwards.
#[test]
fn read_request_access_errors() {
    for (seed, idle, stall) in [(43, 0.0, 0.0), (44, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mr = |b: &mut Bench, idx: u32, pd: u32, acc: u32, flags: u32| {
            b.set_mr(
                idx,
                MrEntry {
                    key: make_key(idx, 1),
                    pd,
                    iova: MR_IOVA,
                    length: MR_LEN,
                    access: acc,
                    flags,
                },
            );
            make_key(idx, 1)
        };
        let k_pd = mr(&mut b, 6, PD + 1, access::REMOTE_READ, 1);
        let k_acc = mr(
            &mut b,
            7,
            PD,
            access::REMOTE_WRITE | access::LOCAL_WRITE | access::REMOTE_ATOMIC,
            1,
        );
        let k_inv = mr(&mut b, 9, PD, access::REMOTE_READ, 0);
        let va = MR_IOVA + 0x100;
        let mut jobs = vec![];
        let (acc, inv) = (aeth::NAK_REM_ACCESS, aeth::NAK_INV_REQ);
        for (a, key, len, syn) in [
            (va, make_key(MR_IDX, 0x5B), 64, acc),
            (va, make_key(P.num_mrs, 0x5A), 64, acc),
            (va, k_pd, 64, acc),
            (va, k_acc, 64, acc),
            (va, k_inv, 64, acc),
            (MR_IOVA + MR_LEN - 63, rkey(), 64, acc),
            (MR_IOVA - 1, rkey(), 64, acc),
            (va, rkey(), (1 << 31) + 1, inv),
        ] {
            b.send(&rd_req(psn(0), a, key, len));
            jobs.push(b.ack(psn(0), syn, 0));
            b.expect_err_then_revive(QPN);
        }
        // the QP without REMOTE_READ (the MR would allow it)
        let off = QpContext::field("access").unwrap().offset;
        let mut rec = b.ctx.get(QPN);
        rec[off] = (access::REMOTE_WRITE | access::REMOTE_ATOMIC) as u8;
        b.ctx.put(QPN, rec);
        b.send(&rd_req(psn(0), va, rkey(), 64));
        jobs.push(b.ack(psn(0), acc, 0));
        b.expect_err_then_revive(QPN);
        let mut rec = b.ctx.get(QPN);
        rec[off] = (access::REMOTE_WRITE | access::REMOTE_READ) as u8;
        b.ctx.put(QPN, rec);
        // the PSN was never consumed: a good READ at it is answered
        b.send(&rd_req(psn(0), va, rkey(), 64));
        jobs.push(b.rdjob(psn(0), va, 64, 1));
        b.expect_no_qp_write();
        b.dump("read_request_access_errors");
        assert_eq!(b.acks, jobs, "seed {seed}");
        assert!(b.dma.cmds.is_empty());
        let s = b.rqs(QPN);
        assert_eq!((s.rq_psn, s.msn, s.flags), (psn(1), 1, 0));
        assert_eq!(
            nonzero(&b),
            [
                ("cnt_rx_req", 1),
                ("cnt_nak_acc", 8),
                ("cnt_nak_inv", 1),
                ("cnt_rx_read", 1)
            ]
        );
    }
}

/// Duplicate READ REQUESTs (PSN before rq_psn): answered again from the request, with its
/// own PSN, va and length (the whole READ, or re-requested from its second packet) and the
/// current MSN; one failing the MR check is dropped silently; a zero-length one needs no MR.
/// No RqState or QP write, no DMA; all counted as duplicates.
#[test]
fn duplicate_read_answered_again() {
    for (seed, idle, stall) in [(47, 0.0, 0.0), (48, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        let va = MR_IOVA + 0x100;
        let d = bytes(&mut r, 77);
        b.send(&rd_req(psn(0), va, rkey(), 3000));
        b.send(&wr_only(QPN, 3, va + 0x1000, rkey(), &d, true));
        b.run();
        assert_eq!(
            b.acks,
            [b.rdjob(psn(0), va, 3000, 1), b.ack(psn(3), aeth::ACK, 2)]
        );
        let rqs0 = b.ctx.get(P.ctx_base(3) + QPN);
        b.acks.clear();
        b.ctx.writes.clear();
        b.send(&rd_req(psn(0), va, rkey(), 3000));
        b.send(&rd_req(psn(1), va + 1024, rkey(), 1976));
        b.send(&rd_req(psn(2), va, make_key(MR_IDX, 0x5B), 64)); // bad key: dropped
        b.send(&rd_req(psn(1), MR_IOVA + MR_LEN - 8, rkey(), 64)); // out of bounds: dropped
        b.send(&rd_req(psn(2), 0, 0, 0));
        b.run();
        b.dump("duplicate_read_answered_again");
        assert_eq!(
            b.acks,
            [
                b.rdjob(psn(0), va, 3000, 2),
                b.rdjob(psn(1), va + 1024, 1976, 2),
                b.rdjob(psn(2), 0, 0, 2)
            ],
            "seed {seed}"
        );
        assert!(b.ctx.writes.is_empty(), "no context write");
        assert_eq!(b.ctx.get(P.ctx_base(3) + QPN), rqs0);
        assert_eq!(b.dma.cmds, [(va + 0x1000, 77)]);
        assert_eq!(
            nonzero(&b),
            [("cnt_rx_req", 2), ("cnt_rx_dup", 5), ("cnt_rx_read", 4)]
        );
    }
}

/// A READ REQUEST while a multi-packet WRITE or SEND is in progress: NAK invalid request
/// (opcode sequence), QP to ERR, no READ job, PSN not consumed; the WRITE then completes
/// normally (revived QP); the SEND's receive WQE is completed with REM_INV_REQ_ERR.
#[test]
fn read_request_mid_message_nak() {
    for (seed, idle, stall) in [(49, 0.0, 0.0), (50, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        let va = MR_IOVA + 0x100;
        let d = bytes(&mut r, 2048);
        let mut p = wr_only(QPN, 0, va, rkey(), &d[..1024], false);
        p.op = opcode::WRITE_FIRST;
        p.reth = Some((va, rkey(), 2048));
        b.send(&p);
        b.send(&rd_req(psn(1), va, rkey(), 64));
        let mut jobs = vec![b.ack(psn(1), aeth::NAK_INV_REQ, 0)];
        b.expect_err_then_revive(QPN);
        b.send(&Pkt {
            op: opcode::WRITE_LAST,
            qpn: QPN,
            psn: psn(1),
            ackreq: true,
            payload: d[1024..].to_vec(),
            ..Default::default()
        });
        jobs.push(b.ack(psn(1), aeth::ACK, 1));
        b.expect_no_qp_write();
        b.post_recv(QPN, 0, RBUF_IOVA, 4096, 0x6000);
        b.send(&Pkt {
            op: opcode::SEND_FIRST,
            qpn: QPN,
            psn: psn(2),
            payload: d[..1024].to_vec(),
            ..Default::default()
        });
        b.send(&rd_req(psn(3), va, rkey(), 64));
        jobs.push(b.ack(psn(3), aeth::NAK_INV_REQ, 1));
        b.expect_err(QPN);
        b.dump("read_request_mid_message_nak");
        assert_eq!(b.acks, jobs, "seed {seed}");
        assert_eq!(
            b.dma.cmds,
            [(va, 1024), (va + 1024, 1024), (RBUF_IOVA, 1024)]
        );
        let got: Vec<Cqe> = b.cpl.got.iter().map(|x| x.1).collect();
        assert_eq!(
            got,
            [cqe(
                0x6000,
                1024,
                None,
                wc_op::RECV,
                wc_status::REM_INV_REQ_ERR,
                0
            )]
        );
        let s = b.rqs(QPN);
        assert_eq!((s.rq_psn, s.msn, s.rq_ci, s.flags), (psn(3), 1, 1, 0));
        assert_eq!(nonzero(&b), [("cnt_rx_req", 3), ("cnt_nak_inv", 2)]);
    }
}

/// READ RESPONSE frames (FIRST with payload, MIDDLE twice: a rejected and an accepted copy,
/// LAST with a pad byte, ONLY empty, ONLY with pad rejected, ONLY of 65 bytes, one to a QP in
/// ERR) reach ackev with `rsp` = 1, the position, the payload length without pad, PSN and the
/// AETH (MIDDLE: ACK, 0); each waits for the verdict stub: ok -> its payload bytes land at
/// the verdict's address exactly (one DMA write each, nothing else written), `placed` once
/// per ok verdict (checked in the bench: in the command's cycle); !ok -> nothing written,
/// the next frame processed. A response to a foreign address or an unknown QP is dropped
/// before ackev (no verdict). Plain ACKs around them: `rsp` = 0.
/// Early events: 64-byte READ RESPONSE ONLYs queued back to back, alternating between two
/// QPs (the next one's record read ahead, or the kept one), with a response to a foreign
/// IPv4 address and one with a foreign P_Key among them: responses' events go while the one
/// before waits for its verdict or placement (`ev_early`; 6 of 22 with no stalls), in frame
/// order with their own fields, exactly one per response that the dispatcher passes (none
/// for the foreign two); verdicts ok and !ok, placements where the verdicts say.
#[test]
fn early_read_response_events() {
    const Q2: u32 = 9;
    for (seed, stall) in [(61, 0.0), (62, 0.3)] {
        let mut b = Bench::new(seed, 0.0, stall);
        b.set_qp(Q2, qp_state::RTS, 0);
        let mut r = rng(seed + 100);
        let mut want_revs = vec![];
        let mut want_cmds = vec![];
        let mut want: HashMap<u64, u8> = HashMap::new();
        for i in 0..24u32 {
            let q = if i % 3 == 1 { Q2 } else { QPN };
            let d = bytes(&mut r, 64);
            let p = rd_rsp_only(q, 40 + i, i, &d);
            if i == 7 {
                b.send_frame(&encode_with(&p, |f| f[33] ^= 0x40), false); // foreign IPv4
                continue;
            }
            if i == 13 {
                // foreign P_Key
                b.send_frame(
                    &encode_with(&p, |f| f[44..46].copy_from_slice(&[0x12, 0x34])),
                    false,
                );
                continue;
            }
            b.send(&p);
            want_revs.push((q, 40 + i, aeth::ACK, i, RSP_ONLY as u8, 64));
            let a = 0x4000_0000 + 128 * i as u64;
            let ok = i % 5 != 3;
            b.verdicts.push_back((ok, a));
            if ok {
                want_cmds.push((a, 64));
                for (k, x) in d.iter().enumerate() {
                    want.insert(a + k as u64, *x);
                }
            }
        }
        b.expect_no_qp_write();
        b.dump("early_read_response_events");
        assert_eq!(b.revs, want_revs, "seed {seed}");
        assert!(b.verdicts.is_empty() && b.vd_wait.is_empty() && b.place_wait.is_none());
        assert_eq!(b.placed, want_cmds.len(), "one placed per ok verdict");
        assert_eq!(b.dma.cmds, want_cmds, "seed {seed}");
        assert_eq!(b.dma.mem.len(), want.len(), "bytes written");
        for (ad, x) in &want {
            assert_eq!(b.dma.mem.get(ad), Some(x), "byte at {ad:#x}");
        }
        assert_eq!(b.cnt("cnt_drop_addr"), 1);
        assert_eq!(b.cnt("cnt_drop_pkey"), 1);
        eprintln!(
            "early_read_response_events seed {seed}: {} early events",
            b.early_evs
        );
        // (the stub answers an event at once: the head waits in RspVd for a cycle or two,
        // so only a next response already queued, with its record at hand, goes early)
        assert!(
            b.early_evs >= 3,
            "seed {seed}: {} of 22 events early",
            b.early_evs
        );
    }
}

#[test]
fn read_responses_placed_on_verdict() {
    for (seed, idle, stall) in [(51, 0.0, 0.0), (52, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        b.set_qp(8, qp_state::ERR, 0);
        let rr = |op: u8, q: u32, ps: u32, a: Option<(u8, u32)>, pay: &[u8]| Pkt {
            op,
            qpn: q,
            psn: ps,
            aeth: a,
            payload: pay.to_vec(),
            ..Default::default()
        };
        let ack = |ps: u32, msn: u32| ack_frame(QPN, ps, aeth::ACK, msn);
        let (f, m, l, o) = (
            opcode::READ_RESPONSE_FIRST,
            opcode::READ_RESPONSE_MIDDLE,
            opcode::READ_RESPONSE_LAST,
            opcode::READ_RESPONSE_ONLY,
        );
        let d = bytes(&mut r, 3071);
        let junk = bytes(&mut r, 1024);
        let e = bytes(&mut r, 70);
        let (x1, x2, x3, x4, x5) = (
            0x4000_0003u64,
            0x4000_0403,
            0x4000_0803,
            0x5000_0000,
            0x6000_0031,
        );
        let mut want: HashMap<u64, u8> = HashMap::new();
        let mut put = |a: u64, p: &[u8]| {
            for (k, x) in p.iter().enumerate() {
                assert!(want.insert(a + k as u64, *x).is_none());
            }
        };
        b.send(&ack(10, 11));
        b.send(&rr(f, QPN, 20, Some((aeth::ACK, 5)), &d[..1024]));
        b.send(&rr(m, QPN, 21, None, &junk));
        b.send(&rr(m, QPN, 21, None, &d[1024..2048]));
        b.send(&rr(l, QPN, 22, Some((0x05, 6)), &d[2048..]));
        b.send(&rr(o, QPN, 23, Some((aeth::ACK, 7)), &[]));
        b.send(&rr(o, QPN, 24, Some((aeth::ACK, 8)), &e[..5]));
        b.send(&rr(o, QPN, 25, Some((aeth::ACK, 9)), &e[5..]));
        let far = rr(o, QPN, 26, Some((aeth::ACK, 10)), &e[..8]);
        b.send_frame(&encode_with(&far, |f| f[33] ^= 0x40), false); // foreign IPv4
        b.send(&rr(o, UNKNOWN_QP, 27, Some((aeth::ACK, 10)), &e[..8])); // unknown QP
        b.send(&rr(o, 8, 28, Some((aeth::ACK, 1)), &e[..8])); // QP in ERR: ackproc decides
        b.send(&ack(30, 12));
        b.verdicts.extend([
            (true, x1),
            (false, 0x7000_0000),
            (true, x2),
            (true, x3),
            (true, x4),
            (false, 0x7000_1000),
            (true, x5),
            (false, 0x7000_2000),
        ]);
        put(x1, &d[..1024]);
        put(x2, &d[1024..2048]);
        put(x3, &d[2048..]);
        put(x5, &e[5..]);
        b.expect_no_qp_write();
        b.dump("read_responses_placed_on_verdict");
        let (a, rp) = (aeth::ACK, |p: u64| p as u8);
        assert_eq!(
            b.revs,
            [
                (QPN, 20, a, 5, rp(RSP_FIRST), 1024),
                (QPN, 21, a, 0, rp(RSP_MIDDLE), 1024),
                (QPN, 21, a, 0, rp(RSP_MIDDLE), 1024),
                (QPN, 22, 0x05, 6, rp(RSP_LAST), 1023),
                (QPN, 23, a, 7, rp(RSP_ONLY), 0),
                (QPN, 24, a, 8, rp(RSP_ONLY), 5),
                (QPN, 25, a, 9, rp(RSP_ONLY), 65),
                (8, 28, a, 1, rp(RSP_ONLY), 8),
            ],
            "seed {seed}"
        );
        assert!(b.verdicts.is_empty() && b.vd_wait.is_empty() && b.place_wait.is_none());
        assert_eq!(b.aevs, [(QPN, 10, a, 11), (QPN, 30, a, 12)]);
        assert_eq!(b.placed, 5, "one placed per ok verdict");
        assert_eq!(
            b.dma.cmds,
            [(x1, 1024), (x2, 1024), (x3, 1023), (x5, 65)],
            "only the ok verdicts with payload"
        );
        assert_eq!(b.dma.mem.len(), want.len(), "bytes written");
        for (ad, x) in &want {
            assert_eq!(b.dma.mem.get(ad), Some(x), "byte at {ad:#x}");
        }
        assert!(b.acks.is_empty() && b.cpl.got.is_empty());
        assert_eq!(nonzero(&b), [("cnt_drop_qp", 1), ("cnt_drop_addr", 1)]);
    }
}

// ================================================================ atomics (issue 11)

/// A CMP_SWAP (`fa` false) or FETCH_ADD to QP `QPN` (AckReq set: it must not add an ACK).
fn at_req(fa: bool, ps: u32, va: u64, key: u32, swap: u64, cmp: u64) -> Pkt {
    Pkt {
        op: if fa {
            opcode::FETCH_ADD
        } else {
            opcode::COMPARE_SWAP
        },
        qpn: QPN,
        psn: ps,
        ackreq: true,
        ateth: Some((va, key, swap, cmp)),
        ..Default::default()
    }
}

#[allow(clippy::too_many_arguments)]
fn at_in(fa: bool, ps: u32, dup: bool, va: u64, swap: u64, cmp: u64, head: u8, cnt: u8) -> AtomIn {
    AtomIn {
        qpn: QPN,
        psn: ps,
        dup,
        fa,
        addr: va,
        swap,
        cmp,
        head,
        cnt,
    }
}

/// Atomics in sequence: a WRITE, then a CMP_SWAP on the bytes it just wrote (the unit model
/// executes only after the WRITE's DMA completed, so it sees them), CMP_SWAP equal (swapped)
/// and unequal (unchanged), FETCH_ADD (wrapping): the `atom` requests (qpn, psn, fa, addr,
/// swap, cmp, head/cnt of the ring), one ATOMIC ACKNOWLEDGE job each (PSN, the new MSN, the
/// original value; no ACK although AckReq is set), memory, `RqState` (rq_psn, msn,
/// atom_head/atom_cnt); then a full ring (head R - 1, count R = `ATOMIC_RESOURCES`): head
/// wraps to 0, count stays R.
#[test]
fn atomics_in_sequence() {
    for (seed, idle, stall) in [(61, 0.0, 0.0), (62, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        let a = MR_IOVA + 0x200;
        let w: u64 = r.random();
        let (y, z): (u64, u64) = (r.random(), u64::MAX - 5);
        b.send(&wr_only(QPN, 0, a, rkey(), &w.to_le_bytes(), true));
        b.send(&at_req(false, psn(1), a, rkey(), y, w)); // equal: swapped to y
        b.send(&at_req(false, psn(2), a, rkey(), 1, w)); // unequal: stays y
        b.send(&at_req(true, psn(3), a, rkey(), z, 0x55)); // y + z
        b.expect_no_qp_write();
        b.dump("atomics_in_sequence");
        assert_eq!(
            b.atom.reqs,
            [
                at_in(false, psn(1), false, a, y, w, 0, 0),
                at_in(false, psn(2), false, a, 1, w, 1, 1),
                at_in(true, psn(3), false, a, z, 0x55, 2, 2),
            ],
            "seed {seed}"
        );
        assert_eq!(
            b.acks,
            [
                b.ack(psn(0), aeth::ACK, 1),
                b.atjob(psn(1), 2, w),
                b.atjob(psn(2), 3, y),
                b.atjob(psn(3), 4, y),
            ]
        );
        assert_eq!(b.mem64(a), y.wrapping_add(z));
        assert_eq!(b.dma.cmds, [(a, 8)], "only the WRITE is a DMA write");
        let s = b.rqs(QPN);
        assert_eq!(
            (s.rq_psn, s.msn, s.flags, s.atom_head, s.atom_cnt),
            (psn(4), 4, 0, 3, 3)
        );
        assert_eq!(nonzero(&b), [("cnt_rx_req", 4), ("cnt_rx_atomic", 3)]);
        // the ring full: head R - 1 -> 0, count stays R (R = ATOMIC_RESOURCES)
        let r = rnic_abi::queue::ATOMIC_RESOURCES as u8;
        b.set_atom_ring(QPN, r - 1, r);
        b.acks.clear();
        b.send(&at_req(true, psn(4), a + 8, rkey(), 7, 0));
        b.expect_no_qp_write();
        assert_eq!(
            b.atom.reqs[3..],
            [at_in(true, psn(4), false, a + 8, 7, 0, r - 1, r)]
        );
        assert_eq!(b.acks, [b.atjob(psn(4), 5, 0)]);
        assert_eq!(b.mem64(a + 8), 7);
        let s = b.rqs(QPN);
        assert_eq!(
            (s.rq_psn, s.msn, s.atom_head, s.atom_cnt),
            (psn(5), 5, 0, r)
        );
    }
}

/// Atomics failing their checks, in the order: QP without REMOTE_ATOMIC (NAK remote access),
/// misaligned VA (NAK invalid request, even with a bad rkey), MR without REMOTE_ATOMIC, bad
/// key generation, key index beyond the MR table, other PD, invalid MR, [va, va+8) past the
/// MR's end (NAK remote access); a bus error in the unit (NAK remote operational error).
/// Each: its NAK job (the request's PSN, msn unchanged), QP to ERR, rq_psn kept, and no
/// `atom` request (but the bus-error one). Then the PSN is executed; then an atomic in the
/// middle of a multi-packet WRITE: NAK invalid request. A foreign P_Key or address: dropped.
#[test]
fn atomic_errors() {
    for (seed, idle, stall) in [(63, 0.0, 0.0), (64, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mr = |b: &mut Bench, idx: u32, pd: u32, acc: u32, flags: u32| {
            b.set_mr(
                idx,
                MrEntry {
                    key: make_key(idx, 1),
                    pd,
                    iova: MR_IOVA,
                    length: MR_LEN,
                    access: acc,
                    flags,
                },
            );
            make_key(idx, 1)
        };
        let k_pd = mr(&mut b, 6, PD + 1, access::REMOTE_ATOMIC, 1);
        let k_acc = mr(
            &mut b,
            7,
            PD,
            access::REMOTE_WRITE | access::LOCAL_WRITE | access::REMOTE_READ,
            1,
        );
        let k_inv = mr(&mut b, 9, PD, access::REMOTE_ATOMIC, 0);
        let va = MR_IOVA + 0x100;
        b.set_mem64(va, 0x1234);
        let (acc, inv) = (aeth::NAK_REM_ACCESS, aeth::NAK_INV_REQ);
        let mut jobs = vec![];
        // the QP without REMOTE_ATOMIC
        let off = QpContext::field("access").unwrap().offset;
        let mut rec = b.ctx.get(QPN);
        rec[off] = (access::REMOTE_WRITE | access::REMOTE_READ) as u8;
        b.ctx.put(QPN, rec);
        b.send(&at_req(true, psn(0), va, rkey(), 1, 0));
        jobs.push(b.ack(psn(0), acc, 0));
        b.expect_err_then_revive(QPN);
        let mut rec = b.ctx.get(QPN);
        rec[off] = (access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC) as u8;
        b.ctx.put(QPN, rec);
        for (a, key, syn) in [
            (va + 4, rkey(), inv),
            (va + 1, make_key(MR_IDX, 0x5B), inv),
            (va, k_acc, acc),
            (va, make_key(MR_IDX, 0x5B), acc),
            (va, make_key(P.num_mrs, 0x5A), acc),
            (va, k_pd, acc),
            (va, k_inv, acc),
            (MR_IOVA + MR_LEN, rkey(), acc),
            (MR_IOVA - 8, rkey(), acc),
        ] {
            b.send(&at_req(false, psn(0), a, key, 1, 0x1234));
            jobs.push(b.ack(psn(0), syn, 0));
            b.expect_err_then_revive(QPN);
        }
        assert!(b.atom.reqs.is_empty(), "no request after a failed check");
        assert_eq!(b.mem64(va), 0x1234);
        // a bus error in the unit: NAK remote operational error
        b.atom.bad.push(va);
        b.send(&at_req(true, psn(0), va, rkey(), 1, 0));
        jobs.push(b.ack(psn(0), aeth::NAK_REM_OP_ERR, 0));
        b.expect_err_then_revive(QPN);
        assert_eq!(b.atom.reqs, [at_in(true, psn(0), false, va, 1, 0, 0, 0)]);
        b.atom.bad.clear();
        // the PSN was never consumed: executed now
        b.send(&at_req(true, psn(0), va, rkey(), 1, 0));
        jobs.push(b.atjob(psn(0), 1, 0x1234));
        // foreign P_Key / IPv4 destination: dropped before anything
        let p = at_req(true, psn(1), va, rkey(), 1, 0);
        b.send_frame(
            &encode_with(&p, |f| f[44..46].copy_from_slice(&[0x12, 0x34])),
            false,
        );
        b.send_frame(&encode_with(&p, |f| f[33] ^= 1), false);
        b.expect_no_qp_write();
        assert_eq!(b.atom.reqs.len(), 2);
        assert_eq!(b.mem64(va), 0x1235);
        // in the middle of a multi-packet WRITE: opcode sequence error
        let d = [0u8; 1024];
        let mut w = wr_only(QPN, 1, va + 0x400, rkey(), &d, false);
        w.op = opcode::WRITE_FIRST;
        w.reth = Some((va + 0x400, rkey(), 2048));
        b.send(&w);
        b.send(&at_req(false, psn(2), va, rkey(), 1, 0x1235));
        jobs.push(b.ack(psn(2), inv, 1));
        b.expect_err(QPN);
        b.dump("atomic_errors");
        assert_eq!(b.acks, jobs, "seed {seed}");
        assert_eq!(b.atom.reqs.len(), 2);
        assert_eq!(b.mem64(va), 0x1235);
        let s = b.rqs(QPN);
        assert_eq!(
            (s.rq_psn, s.msn, s.atom_head, s.atom_cnt),
            (psn(2), 1, 1, 1)
        );
        assert_eq!(
            nonzero(&b),
            [
                ("cnt_rx_req", 2),
                ("cnt_nak_acc", 8),
                ("cnt_nak_inv", 3),
                ("cnt_drop_pkey", 1),
                ("cnt_drop_addr", 1),
                ("cnt_rx_atomic", 1)
            ]
        );
    }
}

/// Duplicate atomics (PSN before rq_psn): a look-up (`dup` = 1 with the ring's head/count),
/// never executed again (memory unchanged, whatever the duplicate's operands say): found ->
/// the saved original value with the request's PSN and the current MSN; not found (older
/// than the ring, or a PSN that was a WRITE) -> no job. No `RqState` write. A future-PSN
/// atomic: NAK PSN sequence error, no request to the unit.
#[test]
fn duplicate_atomics() {
    for (seed, idle, stall) in [(65, 0.0, 0.0), (66, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let va = MR_IOVA + 0x300;
        b.set_mem64(va, 100);
        let d = [7u8; 16];
        b.send(&wr_only(QPN, 0, va + 0x100, rkey(), &d, true));
        b.send(&at_req(true, psn(1), va, rkey(), 5, 0)); // 100 -> 105
        b.send(&at_req(false, psn(2), va, rkey(), 9, 105)); // 105 -> 9
        b.send(&at_req(true, psn(3), va, rkey(), 1, 0)); // 9 -> 10
        b.run();
        assert_eq!(b.mem64(va), 10);
        let rqs0 = b.ctx.get(P.ctx_base(3) + QPN);
        assert_eq!(
            b.acks[1..],
            [
                b.atjob(psn(1), 2, 100),
                b.atjob(psn(2), 3, 105),
                b.atjob(psn(3), 4, 9)
            ]
        );
        b.acks.clear();
        b.ctx.writes.clear();
        b.send(&at_req(false, psn(2), va, rkey(), 0, 10)); // would swap 10 -> 0
        b.send(&at_req(true, psn(1), va, rkey(), 1000, 0));
        b.send(&at_req(true, psn(0), va, rkey(), 1, 0)); // PSN of the WRITE: not found
        b.send(&at_req(true, psn(3), va, make_key(MR_IDX, 0x5B), 1, 0)); // key not checked
        b.run();
        assert!(b.ctx.writes.is_empty(), "no context write");
        assert_eq!(b.ctx.get(P.ctx_base(3) + QPN), rqs0);
        // a future atomic: NAK PSN sequence error
        b.send(&at_req(true, psn(9), va, rkey(), 1, 0));
        b.expect_no_qp_write();
        b.dump("duplicate_atomics");
        assert_eq!(
            b.atom.reqs[3..],
            [
                at_in(false, psn(2), true, va, 0, 10, 3, 3),
                at_in(true, psn(1), true, va, 1000, 0, 3, 3),
                at_in(true, psn(0), true, va, 1, 0, 3, 3),
                at_in(true, psn(3), true, va, 1, 0, 3, 3),
            ],
            "seed {seed}"
        );
        assert_eq!(
            b.acks,
            [
                b.atjob(psn(2), 4, 105),
                b.atjob(psn(1), 4, 100),
                b.atjob(psn(3), 4, 9),
                b.ack(psn(4), aeth::NAK_PSN_SEQ_ERR, 4),
            ]
        );
        assert_eq!(b.mem64(va), 10, "duplicates not executed");
        let s = b.rqs(QPN);
        assert_eq!(
            (s.rq_psn, s.msn, s.atom_head, s.atom_cnt),
            (psn(4), 4, 3, 3)
        );
        assert_eq!(
            nonzero(&b),
            [
                ("cnt_rx_req", 4),
                ("cnt_rx_dup", 4),
                ("cnt_nak_seq", 1),
                ("cnt_rx_atomic", 3),
                ("cnt_atom_dup", 3),
                ("cnt_atom_miss", 1)
            ]
        );
    }
}

/// ATOMIC ACKNOWLEDGE frames (0x12): to ackev with `rsp` = 1, `atom` = 1, rpos ONLY, plen 8
/// and the AETH (checked in the bench), then the verdict stub: ok -> one 8-byte DMA write at
/// the verdict's address holding the AtomicAckETH as a little-endian u64 (the wire's
/// big-endian bytes reversed), `placed` once; !ok -> nothing written. Foreign P_Key,
/// foreign IPv4 / MAC, unknown QP: dropped before ackev. A READ RESPONSE between them is
/// placed unreversed.
#[test]
fn atomic_ack_placed_on_verdict() {
    for (seed, idle, stall) in [(67, 0.0, 0.0), (68, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        let aa = |q: u32, ps: u32, syn: u8, msn: u32, v: u64| Pkt {
            op: opcode::ATOMIC_ACKNOWLEDGE,
            qpn: q,
            psn: ps,
            aeth: Some((syn, msn)),
            aack: Some(v),
            ..Default::default()
        };
        let v: Vec<u64> = (0..5).map(|_| r.random()).collect();
        let e = bytes(&mut r, 13);
        let (x1, x2, x3) = (0x4000_0008u64, 0x4000_0013, 0x5000_0000);
        b.send(&aa(QPN, 40, aeth::ACK, 3, v[0]));
        b.send(&aa(QPN, 41, aeth::ACK, 4, v[1])); // !ok
        b.send(&rd_rsp_only(QPN, 42, 5, &e));
        b.send(&aa(QPN, 43, 0x1F, 6, v[2])); // unaligned verdict address: placed as told
        let p = aa(QPN, 44, aeth::ACK, 7, v[3]);
        b.send_frame(
            &encode_with(&p, |f| f[44..46].copy_from_slice(&[0x12, 0x34])),
            false,
        );
        b.send_frame(&encode_with(&p, |f| f[33] ^= 0x40), false);
        b.send_frame(&encode_with(&p, |f| f[2] ^= 0x01), false);
        b.send(&aa(UNKNOWN_QP, 45, aeth::ACK, 7, v[3]));
        b.send(&aa(QPN, 46, aeth::ACK, 8, v[4]));
        b.verdicts.extend([
            (true, x1),
            (false, 0x7000_0000),
            (true, x3),
            (true, x2),
            (false, 0x7000_1000),
        ]);
        b.expect_no_qp_write();
        b.dump("atomic_ack_placed_on_verdict");
        assert_eq!(
            b.atevs,
            [
                (QPN, 40, aeth::ACK, 3),
                (QPN, 41, aeth::ACK, 4),
                (QPN, 43, 0x1F, 6),
                (QPN, 46, aeth::ACK, 8)
            ],
            "seed {seed}"
        );
        assert_eq!(b.revs, [(QPN, 42, aeth::ACK, 5, RSP_ONLY as u8, 13)]);
        assert!(b.verdicts.is_empty() && b.vd_wait.is_empty() && b.place_wait.is_none());
        assert_eq!(b.placed, 3);
        assert_eq!(b.dma.cmds, [(x1, 8), (x3, 13), (x2, 8)]);
        assert_eq!(b.dma.mem.len(), 8 + 13 + 8, "bytes written");
        assert_eq!(b.mem64(x1), v[0], "host order");
        assert_eq!(b.mem64(x2), v[2]);
        for (k, x) in e.iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(x3 + k as u64)), Some(x));
        }
        assert!(b.acks.is_empty() && b.atom.reqs.is_empty() && b.aevs.is_empty());
        assert_eq!(
            nonzero(&b),
            [
                ("cnt_drop_qp", 1),
                ("cnt_drop_pkey", 1),
                ("cnt_drop_addr", 2)
            ]
        );
    }
}

/// Cycles per atomic request in the responder, without the unit's latency: back-to-back
/// FETCH_ADDs with idle ports and a one-cycle unit; the interval between two requests to the
/// unit minus the unit's time (request taken -> `done`). 13 when every request read its QP,
/// RqState and MR records; 6 with the records kept; 5 since Emit leaves in the cycle its last
/// item is taken, the budget.
#[test]
fn atomic_cycle_budget() {
    let mut b = Bench::new(69, 0.0, 0.0);
    b.atom.lat = 1;
    let va = MR_IOVA + 0x800;
    let n = 16;
    for i in 0..n {
        b.send(&at_req(true, psn(i), va, rkey(), 1, 0));
    }
    // the cycles of each request taken and each done, from the bench's record
    let mut taken = vec![];
    let mut done = vec![];
    let mut quiet = 0;
    while quiet < 200 {
        let k = b.atom.reqs.len();
        let pend = b.atom.pend.is_some();
        let c = b.m.cycle;
        b.cycle();
        if b.atom.reqs.len() > k {
            taken.push(c);
        }
        if pend && b.atom.pend.is_none() {
            done.push(c);
        }
        let busy = !b.beats.is_empty() || b.atom.pend.is_some() || b.m.bit("rsp_valid");
        quiet = if busy { 0 } else { quiet + 1 };
    }
    assert_eq!((taken.len(), done.len()), (n as usize, n as usize));
    assert_eq!(b.mem64(va), n as u64);
    let per: Vec<u64> = (1..n as usize)
        .map(|i| (taken[i] - taken[i - 1]) - (done[i - 1] - taken[i - 1]))
        .collect();
    eprintln!("atomic_cycle_budget: responder cycles per atomic (without the unit) {per:?}");
    let worst = *per.iter().max().unwrap();
    assert!(worst <= 5, "{worst} cycles per atomic");
}

// ======================================================= responder job queue full (drop_busy)

/// Frames to QP `QPN` (at rq_psn = psn(`i`), no message in progress) each of which needs a
/// responder job: WRITE ONLY with AckReq, SEND ONLY with AckReq, READ, CMP_SWAP, FETCH_ADD
/// (atomics on `a_at`), a future PSN, duplicates of the WRITE / READ / FETCH_ADD at psn(0..2),
/// a WRITE with a bad rkey (NAK remote access, class C), a SEND to QP 6 without a receive
/// WQE (RNR NAK), a WRITE MIDDLE without a WRITE in progress (NAK invalid request).
fn job_frames(i: u32, a_at: u64, junk: &[u8]) -> Vec<Pkt> {
    let va0 = MR_IOVA + 0x100;
    let mut mid = wr_only(QPN, i, 0, 0, &junk[..1024], false);
    mid.op = opcode::WRITE_MIDDLE;
    mid.reth = None;
    vec![
        wr_only(QPN, i, MR_IOVA + 0x2000, rkey(), &junk[..50], true),
        Pkt {
            op: opcode::SEND_ONLY,
            qpn: QPN,
            psn: psn(i),
            ackreq: true,
            payload: junk[..30].to_vec(),
            ..Default::default()
        },
        rd_req(psn(i), va0, rkey(), 100),
        at_req(false, psn(i), a_at, rkey(), 7, 501),
        at_req(true, psn(i), a_at, rkey(), 1000, 0),
        wr_only(QPN, i + 5, MR_IOVA + 0x3000, rkey(), &junk[..20], false),
        wr_only(QPN, 0, MR_IOVA + 0x3000, rkey(), &junk[..40], false),
        rd_req(psn(1), va0, rkey(), 64),
        at_req(true, psn(2), a_at, rkey(), 1, 0),
        wr_only(
            QPN,
            i,
            MR_IOVA + 0x2000,
            make_key(MR_IDX, 0x5B),
            &junk[..50],
            false,
        ),
        Pkt {
            op: opcode::SEND_ONLY,
            qpn: 6,
            psn: 0,
            payload: junk[..20].to_vec(),
            ..Default::default()
        },
        mid,
    ]
}

/// The job sink full (the link blocked) for thousands of cycles while a mix of frames
/// arrives: each frame needing a responder job (`job_frames`, a WRITE MIDDLE with AckReq, a
/// READ in the middle of a WRITE) is dropped without a trace (no memory write, no DMA
/// command, no completion, no QP context write, RqState as the executed frames left it, no
/// request to the atomic unit, no job) and counted in `cnt_drop_busy` alone; the frames that
/// need no job (SEND ONLY and a WRITE FIRST / MIDDLE / LAST message without AckReq,
/// ACKNOWLEDGEs, CNPs, a duplicate READ failing its checks) are executed. The header FIFO
/// keeps draining: per-frame cycle budget on the input. Then the sink drains and the last
/// dropped burst, sent again with the same PSNs, is executed and answered in order.
#[test]
fn full_job_queue_drops_job_frames() {
    for (seed, stall) in [(71, 0.0), (72, 0.3)] {
        let mut b = Bench::new(seed, 0.0, stall);
        let mut r = rng(seed + 100);
        b.drops_ok = true;
        b.set_qp(6, qp_state::RTS, access::REMOTE_WRITE as u8);
        b.set_rqs(6, 0, 0);
        let va0 = MR_IOVA + 0x100;
        let a_at = MR_IOVA + 0x800;
        let rounds = 12u32;
        for k in 0..rounds as u16 + 1 {
            b.post_recv(
                QPN,
                k,
                RBUF_IOVA + 0x1000 * k as u64,
                256,
                0x7000 + k as u64,
            );
        }
        b.set_mem64(a_at, 500);
        // executed with room in the sink: the requests the duplicates repeat
        let d0 = bytes(&mut r, 40);
        b.send(&wr_only(QPN, 0, va0, rkey(), &d0, true));
        b.send(&rd_req(psn(1), va0, rkey(), 64));
        b.send(&at_req(true, psn(2), a_at, rkey(), 1, 0));
        b.run();
        assert_eq!(
            b.acks,
            [
                b.ack(psn(0), aeth::ACK, 1),
                b.rdjob(psn(1), va0, 64, 2),
                b.atjob(psn(2), 3, 500)
            ]
        );
        // the link blocked: three ACKs fill the sink (capacity 3), which then never drains
        b.sink_cap = 3;
        b.sink_len = 0;
        b.sink_hold = true;
        for i in 3..6 {
            let d = bytes(&mut r, 8);
            b.send(&wr_only(QPN, i, va0 + 0x40 * i as u64, rkey(), &d, true));
        }
        b.run();
        assert_eq!((b.acks.len(), b.sink_len), (6, 3), "the sink is full");
        b.acks.clear();
        b.ctx.writes.clear();
        let mut want_mem = b.dma.mem.clone();
        let mut want_cmds = b.dma.cmds.clone();
        let mut want_cpl: Vec<Cqe> = b.cpl.got.iter().map(|x| x.1).collect();
        let nreq0 = b.atom.reqs.len();
        let rqs0 = b.rqs(QPN);
        let rqs6 = b.ctx.get(P.ctx_base(3) + 6);
        assert_eq!((rqs0.rq_psn, rqs0.msn), (psn(6), 6));
        let (first, c0) = (b.frames, b.m.cycle);
        let junk = bytes(&mut r, 1024);
        let mut drops = 0u64;
        let mut want_aevs = vec![];
        let (mut i, mut msn) = (6u32, 6u32);
        for k in 0..rounds {
            let fs = job_frames(i, a_at, &junk);
            drops += fs.len() as u64;
            for f in &fs {
                b.send(f);
            }
            // needing no job: executed whatever the sink says
            b.send(&ack_frame(QPN, 100 + k, aeth::ACK, k));
            want_aevs.push((QPN, 100 + k, aeth::ACK, k));
            let sd = bytes(&mut r, 30);
            b.send(&Pkt {
                op: opcode::SEND_ONLY,
                qpn: QPN,
                psn: psn(i),
                payload: sd.clone(),
                ..Default::default()
            });
            let ra = RBUF_IOVA + 0x1000 * k as u64;
            for (j, x) in sd.iter().enumerate() {
                want_mem.insert(ra + j as u64, *x);
            }
            want_cmds.push((ra, 30));
            want_cpl.push(cqe(0x7000 + k as u64, 30, None, wc_op::RECV, 0, k as u16));
            let wd = bytes(&mut r, 3072);
            let wa = MR_IOVA + 0x8000 + 0x1000 * k as u64;
            let mut w = wr_only(QPN, i + 1, wa, rkey(), &wd[..1024], false);
            w.op = opcode::WRITE_FIRST;
            w.reth = Some((wa, rkey(), 3072));
            b.send(&w);
            // a READ in the middle of the WRITE: NAK invalid request, dropped
            b.send(&rd_req(psn(i + 2), va0, rkey(), 64));
            let mut m = wr_only(QPN, i + 2, 0, 0, &wd[1024..2048], true);
            m.op = opcode::WRITE_MIDDLE;
            m.reth = None;
            b.send(&m); // AckReq: dropped
            drops += 2;
            m.ackreq = false;
            b.send(&m);
            b.send(&Pkt {
                op: opcode::CNP,
                qpn: QPN,
                payload: vec![0; 16],
                ..Default::default()
            });
            b.send(&rd_req(psn(1), va0, make_key(MR_IDX, 0x5B), 64));
            let mut l = wr_only(QPN, i + 3, 0, 0, &wd[2048..], false);
            l.op = opcode::WRITE_LAST;
            l.reth = None;
            b.send(&l);
            for (j, x) in wd.iter().enumerate() {
                want_mem.insert(wa + j as u64, *x);
            }
            want_cmds.extend([(wa, 1024), (wa + 1024, 1024), (wa + 2048, 1024)]);
            i += 4;
            msn += 2;
        }
        // the burst sent again below, once dropped here (the first one in sequence, the rest
        // future PSNs)
        let q = i;
        let sd = bytes(&mut r, 30);
        let ds = bytes(&mut r, 50);
        let burst = [
            wr_only(QPN, q, MR_IOVA + 0x2000, rkey(), &ds, true),
            Pkt {
                op: opcode::SEND_ONLY,
                qpn: QPN,
                psn: psn(q + 1),
                ackreq: true,
                payload: sd.clone(),
                ..Default::default()
            },
            rd_req(psn(q + 2), va0, rkey(), 100),
            at_req(false, psn(q + 3), a_at, rkey(), 7, 501),
            at_req(true, psn(q + 4), a_at, rkey(), 1000, 0),
            wr_only(QPN, 0, MR_IOVA + 0x3000, rkey(), &junk[..40], false),
            rd_req(psn(1), va0, rkey(), 64),
            at_req(true, psn(2), a_at, rkey(), 1, 0),
            Pkt {
                op: opcode::SEND_ONLY,
                qpn: 6,
                psn: 0,
                payload: junk[..20].to_vec(),
                ..Default::default()
            },
            wr_only(QPN, q + 9, MR_IOVA + 0x3000, rkey(), &junk[..20], false),
        ];
        for f in &burst {
            b.send(f);
        }
        drops += burst.len() as u64;
        b.run();
        let span = b.m.cycle - c0;
        // every frame consumed within a budget: the input never waits long for the FIFO
        let gaps: Vec<u64> = (first + 1..b.frames)
            .map(|f| b.last_at[f] - b.last_at[f - 1] - b.frame_beats[f] as u64)
            .collect();
        let worst = *gaps.iter().max().unwrap();
        eprintln!(
            "full_job_queue_drops_job_frames: {} frames in {span} cycles with the sink full; \
             worst input wait before a frame {worst} cycles",
            b.frames - first
        );
        // (2500+ cycles before the responder kept its records across frames, ~1800 since)
        assert!(span > 1500, "a long stretch");
        assert!(worst <= 64, "input held {worst} cycles before a frame");
        b.dump("full_job_queue_drops_job_frames");
        assert!(b.acks.is_empty(), "nothing pushed into the full sink");
        assert_eq!(b.atom.reqs.len(), nreq0, "the atomic unit never asked");
        assert_eq!(b.mem64(a_at), 501);
        assert_eq!(b.dma.cmds, want_cmds, "only the executed frames' DMA");
        assert_eq!(b.dma.mem, want_mem, "memory: only the executed frames");
        let got: Vec<Cqe> = b.cpl.got.iter().map(|x| x.1).collect();
        assert_eq!(got, want_cpl, "completions: only the executed SENDs");
        assert_eq!(b.aevs, want_aevs);
        assert!(
            b.ctx.writes.iter().all(|w| w.0 == P.ctx_base(3) + QPN),
            "only QPN's RqState written: {:?}",
            b.ctx.writes
        );
        assert_eq!(b.qp(QPN).state, qp_state::RTS);
        assert_eq!(b.qp(6).state, qp_state::RTS);
        assert_eq!(b.ctx.get(P.ctx_base(3) + 6), rqs6);
        let s = b.rqs(QPN);
        assert_eq!(
            (s.rq_psn, s.msn, s.rq_ci, s.flags, s.atom_head, s.atom_cnt),
            (psn(q), msn, rounds as u16, 0, 1, 1)
        );
        let rx_req = 6 + 4 * rounds as u64;
        let n = rounds as u64;
        assert_eq!(
            nonzero(&b),
            [
                ("cnt_rx_req", rx_req),
                ("cnt_rx_dup", n),
                ("cnt_rx_cnp", n),
                ("cnt_rx_read", 1),
                ("cnt_rx_atomic", 1),
                ("cnt_drop_busy", drops)
            ]
        );
        // the link moves again: the sink drains, the burst is sent again and answered
        b.sink_hold = false;
        while b.sink_len > 0 {
            b.cycle();
        }
        b.ctx.writes.clear();
        for f in &burst {
            b.send(f);
        }
        b.expect_no_qp_write();
        let mut rnr = b.ack(0, aeth::KIND_RNR << 5 | RNR_CODE, 0);
        rnr.dqpn = RQPN;
        assert_eq!(
            b.acks,
            [
                b.ack(psn(q), aeth::ACK, msn + 1),
                b.ack(psn(q + 1), aeth::ACK, msn + 2),
                b.rdjob(psn(q + 2), va0, 100, msn + 3),
                b.atjob(psn(q + 3), msn + 4, 501),
                b.atjob(psn(q + 4), msn + 5, 7),
                b.ack(psn(q + 4), aeth::ACK, msn + 5),
                b.rdjob(psn(1), va0, 64, msn + 5),
                b.atjob(psn(2), msn + 5, 500),
                rnr,
                b.ack(psn(q + 5), aeth::NAK_PSN_SEQ_ERR, msn + 5),
            ],
            "seed {seed}"
        );
        assert_eq!(b.mem64(a_at), 1007);
        for (j, x) in ds.iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(MR_IOVA + 0x2000 + j as u64)), Some(x));
        }
        let ra = RBUF_IOVA + 0x1000 * rounds as u64;
        for (j, x) in sd.iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(ra + j as u64)), Some(x));
        }
        assert_eq!(
            b.cpl.got.last().unwrap().1,
            cqe(0x7000 + n, 30, None, wc_op::RECV, 0, rounds as u16)
        );
        let s = b.rqs(QPN);
        assert_eq!(
            (s.rq_psn, s.msn, s.rq_ci, s.flags, s.atom_head, s.atom_cnt),
            (
                psn(q + 5),
                msn + 5,
                rounds as u16 + 1,
                rnic_abi::queue::rqs_flag::NAK_SENT,
                3,
                3
            )
        );
        assert_eq!(
            nonzero(&b),
            [
                ("cnt_rx_req", rx_req + 5),
                ("cnt_rx_dup", n + 3),
                ("cnt_nak_seq", 1),
                ("cnt_nak_rnr", 1),
                ("cnt_rx_cnp", n),
                ("cnt_rx_read", 3),
                ("cnt_rx_atomic", 3),
                ("cnt_atom_dup", 1),
                ("cnt_drop_busy", drops)
            ]
        );
    }
}

/// A long random run against a small job sink (capacity 2) drained at random and slowly:
/// batches of frames whose job needs do not depend on what was dropped before them
/// (duplicate WRITE / READ / FETCH_ADD: a job each; in-sequence WRITE ONLY without AckReq and
/// ACKNOWLEDGEs: none), each batch ended by one in-sequence request that needs a job (WRITE
/// ONLY with AckReq, READ or FETCH_ADD), sent again in the next batch while it is dropped (a
/// requester's retransmission, with the same PSN). Per batch: jobs pushed + `cnt_drop_busy`
/// = the job-needing frames, the pushed jobs in order among the expected ones, the final
/// request executed (rq_psn + 1) exactly when its job was pushed; no push ever waits (the
/// bench). At the end memory and RqState as the executed frames left them.
#[test]
fn random_job_sink_backpressure() {
    for (seed, idle, stall) in [(75, 0.2, 0.2), (76, 0.5, 0.4)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        b.drops_ok = true;
        let va0 = MR_IOVA + 0x100;
        let a_at = MR_IOVA + 0x800;
        b.send(&wr_only(QPN, 0, va0, rkey(), &[1; 16], true));
        b.send(&rd_req(psn(1), va0, rkey(), 64));
        b.send(&at_req(true, psn(2), a_at, rkey(), 1, 0));
        b.run();
        assert_eq!(b.acks.len(), 3);
        b.sink_cap = 2;
        b.sink_stall = 0.97;
        let mut want_mem = b.dma.mem.clone();
        let (mut i, mut msn, mut cur) = (3u32, 3u32, 1u64);
        let mut va = MR_IOVA + 0x1000;
        let (mut rx_req, mut atoms) = (3u64, 1u32);
        let (mut fin_exec, mut fin_drop, mut jobs_all) = (0, 0, 0u64);
        // the final request pending retransmission: (frame, its job, kind, data / addend)
        let mut pending: Option<(Pkt, AckOut, u8, Vec<u8>, u64)> = None;
        for batch in 0..300 {
            let (p0, d0) = (b.acks.len(), b.cnt("cnt_drop_busy"));
            let mut expect: Vec<AckOut> = vec![];
            for _ in 0..r.random_range(0..6) {
                match r.random_range(0..5) {
                    0 => {
                        b.send(&wr_only(QPN, 0, va0 + 0x40, rkey(), &[9; 8], false));
                        expect.push(b.ack(psn(i.wrapping_sub(1)), aeth::ACK, msn));
                    }
                    1 => {
                        b.send(&rd_req(psn(1), va0, rkey(), 64));
                        expect.push(b.rdjob(psn(1), va0, 64, msn));
                    }
                    // (the saved result of psn(2) stays in the unit's slots: at least 16)
                    2 if atoms < 16 => {
                        b.send(&at_req(true, psn(2), a_at, rkey(), 5, 0));
                        expect.push(b.atjob(psn(2), msn, 0));
                    }
                    // no job: always executed; not while a final request is pending (the
                    // requester resends from its PSN)
                    3 if pending.is_none() => {
                        let n = r.random_range(1..200);
                        let d = bytes(&mut r, n);
                        b.send(&wr_only(QPN, i, va, rkey(), &d, false));
                        for (j, x) in d.iter().enumerate() {
                            want_mem.insert(va + j as u64, *x);
                        }
                        va += 0x100;
                        i += 1;
                        msn += 1;
                        rx_req += 1;
                    }
                    _ => b.send(&ack_frame(QPN, batch, aeth::ACK, 0)),
                }
            }
            let fin = pending
                .take()
                .unwrap_or_else(|| match r.random_range(0..3) {
                    0 => {
                        let n = r.random_range(1..300);
                        let d = bytes(&mut r, n);
                        let p = wr_only(QPN, i, va, rkey(), &d, true);
                        va += 0x200;
                        (p, b.ack(psn(i), aeth::ACK, msn + 1), 0, d, 0)
                    }
                    1 => {
                        let n = r.random_range(0..=1024);
                        let p = rd_req(psn(i), va0, rkey(), n);
                        (p, b.rdjob(psn(i), va0, n, msn + 1), 1, vec![], 0)
                    }
                    _ => {
                        let add = r.random_range(1..1000u64);
                        let p = at_req(true, psn(i), a_at, rkey(), add, 0);
                        (p, b.atjob(psn(i), msn + 1, cur), 2, vec![], add)
                    }
                });
            b.send(&fin.0);
            b.run();
            let pushed = b.acks[p0..].to_vec();
            let drops = b.cnt("cnt_drop_busy") - d0;
            let n_jobs = expect.len() as u64 + 1;
            jobs_all += n_jobs;
            assert_eq!(
                pushed.len() as u64 + drops,
                n_jobs,
                "batch {batch}: pushes + drops = job-needing frames"
            );
            let executed = b.rqs(QPN).rq_psn == psn(i + 1);
            assert!(executed || b.rqs(QPN).rq_psn == psn(i), "batch {batch}");
            assert_eq!(pushed.last() == Some(&fin.1), executed, "batch {batch}");
            let mut left = expect.iter();
            let n = pushed.len() - executed as usize;
            for j in &pushed[..n] {
                assert!(left.any(|w| w == j), "batch {batch}: unexpected job {j:?}");
            }
            if executed {
                fin_exec += 1;
                i += 1;
                msn += 1;
                rx_req += 1;
                match fin.2 {
                    0 => {
                        let a = fin.0.reth.unwrap().0;
                        for (j, x) in fin.3.iter().enumerate() {
                            want_mem.insert(a + j as u64, *x);
                        }
                    }
                    2 => {
                        cur += fin.4;
                        atoms += 1;
                        for (j, x) in cur.to_le_bytes().iter().enumerate() {
                            want_mem.insert(a_at + j as u64, *x);
                        }
                    }
                    _ => {}
                }
            } else {
                fin_drop += 1;
                pending = Some(fin);
            }
            assert_eq!(b.dma.mem, want_mem, "batch {batch}: memory");
        }
        b.dump("random_job_sink_backpressure");
        let drops = b.cnt("cnt_drop_busy");
        eprintln!(
            "random_job_sink_backpressure: {jobs_all} job-needing frames, {} jobs pushed, \
             {drops} dropped; final requests executed {fin_exec}, dropped {fin_drop}",
            b.acks.len() - 3
        );
        assert_eq!((b.acks.len() - 3) as u64 + drops, jobs_all);
        assert!(
            drops > 20 && fin_drop > 5 && fin_exec > 20,
            "the sink was full often"
        );
        let s = b.rqs(QPN);
        assert_eq!((s.rq_psn, s.msn, s.flags), (psn(i), msn, 0));
        assert_eq!(b.cnt("cnt_rx_req"), rx_req);
        assert_eq!(b.mem64(a_at), cur);
        assert!(b.ctx.writes.iter().all(|w| w.0 == P.ctx_base(3) + QPN));
    }
}

// ======================================================= kept records

/// The responder keeps the QP's context, RqState and MR from one frame to the next (no
/// context reads for a stream on one QP), and follows every other writer through the store's
/// snoop: the driver's new MR (the next WRITE is NAKed), a doorbell's rq_pi (merged: the
/// SEND that got an RNR NAK is taken when sent again), another engine's `state` = ERR (the
/// next frame is dropped), the requester's own fields (ignored: the stream goes on reading
/// nothing).
#[test]
fn kept_records_follow_other_writers() {
    for (seed, idle, stall) in [(81, 0.0, 0.0), (82, 0.3, 0.3)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        let d = bytes(&mut r, 64);
        let mut want_acks = vec![];
        // a stream of WRITEs on one QP: the records are read for the first frame only
        for i in 0..16u32 {
            b.send(&wr_only(
                QPN,
                i,
                MR_IOVA + 64 * i as u64,
                rkey(),
                &d,
                i == 15,
            ));
        }
        want_acks.push(b.ack(psn(15), aeth::ACK, 16));
        b.run();
        assert_eq!(b.ctx.reads.len(), 3, "seed {seed}: reads {:?}", b.ctx.reads);
        // the requester's fields of the QP (as txreq / ackproc write them): still no read
        let mut rec = b.ctx.get(QPN);
        let f = QpContext::field("sq_psn").unwrap();
        rec[f.offset] ^= 0x55;
        b.ctx
            .write(QPN, &rec, 1 << f.offset, crate::common::bus::CTX_SRC_TX);
        b.send(&wr_only(QPN, 16, MR_IOVA + 0x2000, rkey(), &d, true));
        want_acks.push(b.ack(psn(16), aeth::ACK, 17));
        b.run();
        assert_eq!(b.ctx.reads.len(), 3, "seed {seed}: reads {:?}", b.ctx.reads);
        // a receive WQE posted (the doorbell's rq_pi merged) after an RNR NAK
        let sd = bytes(&mut r, 40);
        let send = Pkt {
            op: opcode::SEND_ONLY,
            qpn: QPN,
            psn: psn(17),
            ackreq: true,
            payload: sd.clone(),
            ..Default::default()
        };
        b.send(&send);
        want_acks.push(b.ack(psn(17), 0x20 | (RNR_CODE & 0x1F), 17));
        b.run();
        b.post_recv(QPN, 0, RBUF_IOVA, 256, 0x9000);
        b.send(&send);
        want_acks.push(b.ack(psn(17), aeth::ACK, 18));
        b.run();
        // one read: the receive WQE's MR (the WQE itself comes from the ring)
        assert_eq!(
            b.ctx.reads.len(),
            3 + 1,
            "seed {seed}: reads {:?}",
            b.ctx.reads
        );
        assert_eq!(
            b.cpl.got.iter().map(|x| x.1).collect::<Vec<Cqe>>(),
            [cqe(0x9000, 40, None, wc_op::RECV, 0, 0)],
            "seed {seed}"
        );
        for (j, x) in sd.iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(RBUF_IOVA + j as u64)), Some(x));
        }
        // a WRITE keeps its MR again; then the driver re-registers that MR with another key:
        // the old R_Key is refused
        b.send(&wr_only(QPN, 18, MR_IOVA, rkey(), &d, true));
        want_acks.push(b.ack(psn(18), aeth::ACK, 19));
        b.run();
        let mut mr = MrEntry::decode(&b.ctx.get(P.ctx_base(2) + MR_IDX));
        mr.key = make_key(MR_IDX, 0x77);
        b.set_mr(MR_IDX, mr);
        b.send(&wr_only(QPN, 19, MR_IOVA, rkey(), &d, true));
        want_acks.push(b.ack(psn(19), aeth::NAK_REM_ACCESS, 19));
        b.expect_err_then_revive(QPN);
        assert_eq!(b.acks, want_acks, "seed {seed}");
        // another engine moves the QP to ERR (state alone): the next frame is dropped
        let mut rec = b.ctx.get(QPN);
        rec[QpContext::field("state").unwrap().offset] = qp_state::ERR;
        b.ctx.write(
            QPN,
            &rec,
            1 << QpContext::field("state").unwrap().offset,
            crate::common::bus::CTX_SRC_ACK,
        );
        let dropped = b.cnt("cnt_drop_qp");
        b.send(&wr_only(QPN, 20, MR_IOVA, rkey(), &d, true));
        b.run();
        assert_eq!(b.cnt("cnt_drop_qp"), dropped + 1, "seed {seed}");
        assert_eq!(b.acks, want_acks, "seed {seed}");
    }
}

/// Read ahead: WRITEs alternating between two QPs (each frame's records are read while the
/// frame before it is in Decide, `p_*`). At each cycle offset of a window, the ACK
/// processor moves QP 2 to ERR (its QpContext `state`). A record read ahead before the
/// write is never used after it: no payload command of QP 2 comes later
/// than `LAT` cycles after the write (the latest a frame that passed Idle before it issues
/// its command), once one frame of QP 2 is refused every later one is, and a later write
/// leaves no fewer executed. The offsets cover three periods of the stream, so the write
/// hits a read-ahead between its read and its use (checked: without the snoop's clear of
/// `p_q_v` this test fails). (An RqState write by the driver races with the responder's
/// own write-back of that record by design, so it is no oracle here; `p_s_v` is cleared on
/// the same snoop, by any other writer's write, the doorbell's rq_pi included.)
#[test]
fn read_ahead_follows_other_writers() {
    const LAT: u64 = 4;
    let (q1, q2) = (QPN + 1, QPN + 2);
    let mut worst = 0;
    let mut cut = vec![];
    // the stream settles at 4 cycles per frame (8 per QP 2 frame): three periods
    for off in 10..34u64 {
        let mut b = Bench::new(90 + off, 0.0, 0.0);
        for q in [q1, q2] {
            b.set_qp(
                q,
                qp_state::RTS,
                (access::REMOTE_WRITE | access::REMOTE_READ) as u8,
            );
            b.set_rqs(q, PSN0, 0);
        }
        let mut r = rng(190 + off);
        let d = bytes(&mut r, 64);
        let n = 24u32;
        let va = |i: u32| MR_IOVA + 64 * i as u64;
        for i in 0..n {
            b.send(&wr_only(
                [q1, q2][i as usize % 2],
                i / 2,
                va(i),
                rkey(),
                &d,
                false,
            ));
        }
        for _ in 0..off {
            b.cycle();
        }
        let w = b.m.cycle;
        let mut rec = b.ctx.get(q2);
        let f = QpContext::field("state").unwrap();
        rec[f.offset] = qp_state::ERR;
        b.ctx
            .write(q2, &rec, 1 << f.offset, crate::common::bus::CTX_SRC_ACK);
        b.run();
        // QP 2's frames executed (their payload commands), in order
        let done: Vec<bool> = (0..n)
            .filter(|i| i % 2 == 1)
            .map(|i| b.dma.cmds.iter().any(|c| c.0 == va(i)))
            .collect();
        let k = done.iter().take_while(|x| **x).count();
        assert!(
            done[k..].iter().all(|x| !x),
            "offset {off}: QP 2 executed {done:?}"
        );
        for (c, at) in b.dma.cmds.iter().zip(&b.dma.cmd_cycles) {
            let i = ((c.0 - MR_IOVA) / 64) as u32;
            if i % 2 == 1 {
                worst = worst.max(at.saturating_sub(w));
                assert!(
                    *at <= w + LAT,
                    "offset {off}: QP 2 frame {i} executed at {at}, the write at {w}"
                );
            }
        }
        // QP 1 goes on untouched
        for i in (0..n).filter(|i| i % 2 == 0) {
            assert!(
                b.dma.cmds.iter().any(|c| c.0 == va(i)),
                "offset {off}: QP 1 frame {i}"
            );
        }
        cut.push(k);
    }
    eprintln!(
        "read_ahead_follows_other_writers: QP 2 frames executed per offset {cut:?}, the latest command {worst} cycles after the write"
    );
    // later writes leave more of QP 2's frames executed
    assert!(cut.windows(2).all(|p| p[0] <= p[1]), "{cut:?}");
    assert!(cut[0] < *cut.last().unwrap(), "{cut:?}");
}

/// Receive-WQE read-ahead (`wa_*`): a SEND that completes WQE `ci` reads WQE `ci + 1` in
/// Check when it is posted (not the kept rq_pi). Cases, each on SEND ONLYs of one QP:
/// - the RQ holds one WQE more than the SENDs: every SEND lands in its own WQE's buffer with
///   its wr_id, and the read-ahead never reads past rq_pi (the ring model logs the slots
///   read: the SEND that takes the last posted WQE does not read the next slot; the Idle
///   pre-read of an RNR-bound SEND's own slot does, and is unused);
/// - the RQ runs dry (RNR NAK, no state change), then a doorbell posts the WQE: the SEND
///   sent again takes it;
/// - the driver rewrites the QP's RqState (a reset to the same indices) and puts a new WQE
///   in the slot read ahead; a WRITE reads the records again, then a SEND on the kept
///   records uses the new WQE, not the one read ahead (checked: without clearing `wa_v`
///   when the RqState is read again this case fails).
#[test]
fn wqe_read_ahead_is_current() {
    for (seed, idle, stall) in [(95, 0.0, 0.0), (96, 0.3, 0.3)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        let d = bytes(&mut r, 48);
        let send = |i: u32| Pkt {
            op: opcode::SEND_ONLY,
            qpn: QPN,
            psn: psn(i),
            ackreq: true,
            payload: d.clone(),
            ..Default::default()
        };
        let buf = |i: u64| RBUF_IOVA + 0x100 * i;
        // 6 WQEs posted, 5 SENDs
        for i in 0..6u16 {
            b.post_recv(QPN, i, buf(i as u64), 256, 0x7000 + i as u64);
        }
        for i in 0..5 {
            b.send(&send(i));
        }
        b.run();
        let mut want: Vec<Cqe> = (0..5u64)
            .map(|i| cqe(0x7000 + i, 48, None, wc_op::RECV, 0, i as u16))
            .collect();
        assert_eq!(
            b.cpl.got.iter().map(|x| x.1).collect::<Vec<_>>(),
            want,
            "seed {seed}"
        );
        for i in 0..5u64 {
            for (k, x) in d.iter().enumerate() {
                assert_eq!(b.dma.mem.get(&(buf(i) + k as u64)), Some(x), "seed {seed}");
            }
        }
        let rq6 = P.rq_slot(QPN, 6) / 64;
        assert!(
            !b.ring.read_slots.contains(&rq6),
            "seed {seed}: read past rq_pi"
        );
        // the sixth SEND takes WQE 5 (read ahead), the seventh finds the RQ empty: RNR
        b.send(&send(5));
        b.run();
        // (WQE 6 is not posted: SEND 5 did not read it ahead)
        assert!(
            !b.ring.read_slots.contains(&rq6),
            "seed {seed}: read past rq_pi"
        );
        b.send(&send(6));
        b.run();
        want.push(cqe(0x7005, 48, None, wc_op::RECV, 0, 5));
        assert_eq!(
            b.cpl.got.iter().map(|x| x.1).collect::<Vec<_>>(),
            want,
            "seed {seed}"
        );
        assert_eq!(
            b.acks.last().unwrap().syn & 0xE0,
            0x20,
            "seed {seed}: RNR NAK"
        );
        // posted now: the SEND sent again takes it
        b.post_recv(QPN, 6, buf(6), 256, 0x7006);
        b.send(&send(6));
        b.run();
        want.push(cqe(0x7006, 48, None, wc_op::RECV, 0, 6));
        assert_eq!(
            b.cpl.got.iter().map(|x| x.1).collect::<Vec<_>>(),
            want,
            "seed {seed}"
        );
        // WQE 7 posted and read ahead by a SEND; then the driver rewrites the RqState (the
        // same indices, as a reset would leave them) and slot 7 holds a new WQE
        b.post_recv(QPN, 7, buf(7), 256, 0x7007);
        b.post_recv(QPN, 8, buf(8), 256, 0x7008);
        b.send(&send(7));
        b.run();
        want.push(cqe(0x7007, 48, None, wc_op::RECV, 0, 7));
        let a = P.ctx_base(3) + QPN;
        let rec = b.ctx.get(a);
        b.ctx.put(a, rec);
        b.post_recv(QPN, 8, buf(9), 256, 0x7009);
        // a WRITE reads the records again (the kept RqState was dropped by that write),
        // then the SEND finds them kept, its WQE index that of the one read ahead
        b.send(&wr_only(QPN, 8, MR_IOVA, rkey(), &d, true));
        b.send(&send(9));
        b.run();
        want.push(cqe(0x7009, 48, None, wc_op::RECV, 0, 8));
        assert_eq!(
            b.cpl.got.iter().map(|x| x.1).collect::<Vec<_>>(),
            want,
            "seed {seed}"
        );
        for (k, x) in d.iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(buf(9) + k as u64)), Some(x), "seed {seed}");
        }
        assert_eq!(
            b.dma.mem.get(&buf(8)),
            None,
            "seed {seed}: the stale WQE's buffer"
        );
    }
}

/// WRITE ONLY with immediate on the kept records whose receive WQE was read ahead: its
/// bounds check is its RETH's, never the WQE's buffer. The second WRITE (in the MR, its WQE's
/// buffer outside it) must land; the third (past the MR's end, its WQE's buffer inside it)
/// must get NAK remote access error, nothing written, QP to ERR. (When taking the read-ahead
/// WQE also loaded its range for the check, the second was NAKed and the third written.)
#[test]
fn write_imm_checks_its_reth_with_a_read_ahead_wqe() {
    for (seed, idle, stall) in [(97, 0.0, 0.0), (98, 0.3, 0.3)] {
        let mut b = Bench::new(seed, idle, stall);
        let mut r = rng(seed + 100);
        b.post_recv(QPN, 0, RBUF_IOVA, 256, 0x8000);
        b.post_recv(QPN, 1, RBUF_IOVA + 0x100, 256, 0x8001);
        b.post_recv(QPN, 2, MR_IOVA, 4096, 0x8002);
        b.post_recv(QPN, 3, RBUF_IOVA + 0x300, 256, 0x8003);
        let d = bytes(&mut r, 50);
        let vas = [MR_IOVA + 0x100, MR_IOVA + 0x200, MR_IOVA + MR_LEN - 16];
        for (i, va) in vas.iter().enumerate() {
            let mut p = wr_only(QPN, i as u32, *va, rkey(), &d, i == 2);
            p.op = opcode::WRITE_ONLY_IMM;
            p.imm = Some(0x4400 + i as u32);
            b.send(&p);
        }
        b.run();
        for va in &vas[..2] {
            for (k, x) in d.iter().enumerate() {
                assert_eq!(b.dma.mem.get(&(va + k as u64)), Some(x), "seed {seed}");
            }
        }
        assert_eq!(b.dma.mem.len(), 2 * d.len(), "seed {seed}: bytes written");
        let got: Vec<Cqe> = b.cpl.got.iter().map(|x| x.1).collect();
        assert_eq!(
            got,
            vec![
                cqe(0x8000, 50, Some(0x4400), wc_op::RECV_RDMA_WITH_IMM, 0, 0),
                cqe(0x8001, 50, Some(0x4401), wc_op::RECV_RDMA_WITH_IMM, 0, 1),
            ],
            "seed {seed}"
        );
        assert_eq!(
            b.acks,
            vec![b.ack(psn(2), aeth::NAK_REM_ACCESS, 2)],
            "seed {seed}"
        );
        assert_eq!(b.cnt("cnt_nak_acc"), 1, "seed {seed}");
    }
}

// ======================================================= per-packet cycle budgets

/// Steady-state cycles per frame of a back-to-back stream (idle ports, a ready sink, and an
/// ackproc stub that answers a verdict in the cycle after the event): the interval between
/// the payload DMA commands the responder issues for the second half's frames (one per
/// frame). Until stop 32 this measured the interval of the frames' last input beats, which
/// the input sets while the 16-entry header FIFO fills: a 64-byte WRITE ONLY (3 input
/// beats) read 3 cycles although the responder took 4 (Idle, Decide, Check, Emit), which
/// the two-NIC run showed (B's payload writes exactly 4 cycles apart). History under that
/// measure: 13 cycles per 64-byte WRITE ONLY and 11 per READ RESPONSE MIDDLE before the QP
/// read was asked for from Idle; then 10 and 9; 5 and 5 with the records kept from frame to
/// frame; 3 and 5 with Emit's early exit.
fn stream_cycles(b: &mut Bench, n: usize) -> u64 {
    b.run();
    assert_eq!(b.frames, n, "every frame taken");
    let c = &b.dma.cmd_cycles;
    assert_eq!(c.len(), n, "a payload command per frame");
    let h = n / 2;
    (c[n - 1] - c[h]) / (n - 1 - h) as u64
}

/// 64-byte WRITE ONLY frames on one QP into its kept MR: 4 cycles per frame (Idle, Decide,
/// Check, Emit) measured on the DMA commands; 3 since the next frame goes from Emit straight
/// to Decide (`em_fast`), the budget: the frame's 3 input beats (3.24 cycles of a 100 Gb/s
/// wire).
#[test]
fn write_stream_cycle_budget() {
    let mut b = Bench::new(71, 0.0, 0.0);
    let n = 64;
    let mut r = rng(72);
    let d = bytes(&mut r, 64);
    for i in 0..n {
        b.send(&wr_only(QPN, i, MR_IOVA + 64 * i as u64, rkey(), &d, false));
    }
    let per = stream_cycles(&mut b, n as usize);
    eprintln!("write_stream_cycle_budget: {per} cycles per 64-byte WRITE ONLY (3 input beats)");
    for i in 0..n as u64 {
        for (k, x) in d.iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(MR_IOVA + 64 * i + k as u64)), Some(x));
        }
    }
    assert!(per <= 3, "{per} cycles per WRITE ONLY");
}

/// 64-byte WRITE ONLY frames round robin over 16 QPs (every frame on another QP: the QP
/// records are read for each; the MR is the kept one): cycles per frame. 10 when Decide
/// waited a cycle after the last record came; 9 without; 8 with the kept MR taken for a
/// frame whose QP records are read (`hitm`); 7 with Emit's early exit; 6 since the QP's
/// two records are read at once (measured on the DMA commands since stop 33); 4 since the
/// next frame's records are read while this one is in Decide (`p_*`: its Idle takes them
/// as kept records), the budget.
#[test]
fn write_stream_many_qps_cycle_budget() {
    let mut b = Bench::new(77, 0.0, 0.0);
    let nq = 16u32;
    for q in 1..nq {
        b.set_qp(
            QPN + q,
            rnic_abi::queue::qp_state::RTS,
            (access::REMOTE_WRITE | access::REMOTE_READ) as u8,
        );
        b.set_rqs(QPN + q, PSN0, 0);
    }
    let n = 64u32;
    let mut r = rng(78);
    let d = bytes(&mut r, 64);
    for i in 0..n {
        b.send(&wr_only(
            QPN + i % nq,
            i / nq,
            MR_IOVA + 64 * i as u64,
            rkey(),
            &d,
            false,
        ));
    }
    let per = stream_cycles(&mut b, n as usize);
    eprintln!("write_stream_many_qps_cycle_budget: {per} cycles per 64-byte WRITE ONLY");
    for i in 0..n as u64 {
        for (k, x) in d.iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(MR_IOVA + 64 * i + k as u64)), Some(x));
        }
    }
    for q in 0..nq {
        assert_eq!(b.rqs(QPN + q).rq_psn, psn(n / nq), "QP {}", QPN + q);
    }
    assert!(per <= 4, "{per} cycles per WRITE ONLY over {nq} QPs");
}

/// SEND ONLY frames of 64 bytes on one QP into one MR's receive WQEs: with the records kept,
/// the receive WQE is read with the decision to take them and its MR is the kept one (no
/// context read): 9 cycles per SEND (Idle, Decide, WqeWait, MrRd, MrKeep, Check, Emit's
/// payload command then its completion, ...); 12 when the WQE was read after the decision and
/// its MR read every time; 8 since Emit leaves in the cycle its completion is taken; 7 since
/// WqeWait goes straight to MrKeep when the WQE's L_Key (on the ring's read data) names the
/// kept MR; 6 since a SEND that completes its WQE reads the next one ahead in Check (the next
/// SEND takes it in Idle: Idle, Decide, MrKeep, Check, Emit's command, its completion); 3
/// since the read-ahead is asked for in Decide, the WQE's range is registered with it (Decide
/// compares it with the kept MR: no MrKeep), the completion goes with its command and the
/// next SEND ONLY goes from Emit straight to Decide with the read-ahead WQE (Decide, Check,
/// Emit), the budget (measured on the DMA commands, `stream_cycles`). A 64-byte SEND ONLY is
/// 2 input beats; on a 100 Gb/s wire it takes 2.92 cycles.
#[test]
fn send_stream_cycle_budget() {
    let mut b = Bench::new(75, 0.0, 0.0);
    // (the QP's RQ ring holds 16)
    let n = 16u32;
    let mut r = rng(76);
    let d = bytes(&mut r, 64);
    for i in 0..n {
        b.post_recv(
            QPN,
            i as u16,
            RBUF_IOVA + 0x100 * i as u64,
            256,
            0x5000 + i as u64,
        );
        b.send(&Pkt {
            op: opcode::SEND_ONLY,
            qpn: QPN,
            psn: psn(i),
            payload: d.clone(),
            ..Default::default()
        });
    }
    let per = stream_cycles(&mut b, n as usize);
    eprintln!("send_stream_cycle_budget: {per} cycles per 64-byte SEND ONLY");
    let got: Vec<Cqe> = b.cpl.got.iter().map(|x| x.1).collect();
    assert_eq!(got.len(), n as usize);
    for (i, c) in got.iter().enumerate() {
        assert_eq!(
            *c,
            cqe(0x5000 + i as u64, 64, None, wc_op::RECV, 0, i as u16)
        );
        for (k, x) in d.iter().enumerate() {
            assert_eq!(
                b.dma.mem.get(&(RBUF_IOVA + 0x100 * i as u64 + k as u64)),
                Some(x)
            );
        }
    }
    assert!(per <= 3, "{per} cycles per SEND ONLY");
}

/// 256-byte READ RESPONSE MIDDLE frames (5 input beats each): 5 cycles per frame, the
/// budget (the input bounds it).
#[test]
fn read_response_stream_cycle_budget() {
    let mut b = Bench::new(73, 0.0, 0.0);
    let n = 64;
    let mut r = rng(74);
    let d = bytes(&mut r, 256);
    for i in 0..n {
        b.send(&Pkt {
            op: opcode::READ_RESPONSE_MIDDLE,
            qpn: QPN,
            psn: 100 + i,
            payload: d.clone(),
            ..Default::default()
        });
        b.verdicts.push_back((true, 0x4000_0000 + 256 * i as u64));
    }
    let per = stream_cycles(&mut b, n as usize);
    eprintln!("read_response_stream_cycle_budget: {per} cycles per 256-byte READ RESPONSE MIDDLE");
    for (k, x) in d.iter().enumerate() {
        assert_eq!(
            b.dma
                .mem
                .get(&(0x4000_0000 + 256 * (n as u64 - 1) + k as u64)),
            Some(x)
        );
    }
    assert!(per <= 5, "{per} cycles per READ RESPONSE");
}

/// A bench with QPs `QPN .. QPN + nq` in RTS (`QPN` is set up by `Bench::new`).
fn bench_many_qps(seed: u64, idle: f64, stall: f64, nq: u32) -> Bench {
    let mut b = Bench::new(seed, idle, stall);
    for q in 1..nq {
        b.set_qp(QPN + q, qp_state::RTS, 0);
    }
    b
}

/// 64-byte READ RESPONSE ONLY frames round robin over 16 QPs (every frame on another QP, as
/// when many QPs have one READ outstanding each), the verdict stub answering each event in
/// the next cycle: cycles per frame on the DMA commands. Each frame's records are read ahead
/// while the one before is in Decide; 4.48 when its event went early for about one frame in
/// two and from RspEv after Decide for the others (Idle, Decide, RspEv, RspVd, Emit); 4.00
/// since Idle offers it when the records are read ahead (`ie_ok`: Idle, Decide, RspVd,
/// Emit), the budget. Every event once, in frame order, with its fields; every payload at its
/// verdict's address.
#[test]
fn read_responses_many_qps_cycle_budget() {
    let nq = 16u32;
    let mut b = bench_many_qps(81, 0.0, 0.0, nq);
    let n = 64u32;
    let mut r = rng(82);
    let mut want_revs = vec![];
    let mut frames = vec![];
    for i in 0..n {
        let q = QPN + i % nq;
        let d = bytes(&mut r, 64);
        b.send(&rd_rsp_only(q, 300 + i, i, &d));
        want_revs.push((q, 300 + i, aeth::ACK, i, RSP_ONLY as u8, 64));
        let a = 0x4000_0000 + 128 * i as u64;
        b.verdicts.push_back((true, a));
        frames.push((a, d));
    }
    stream_cycles(&mut b, n as usize);
    let c = &b.dma.cmd_cycles;
    let h = c.len() / 2;
    let per = (c[c.len() - 1] - c[h]) as f64 / (c.len() - 1 - h) as f64;
    eprintln!(
        "read_responses_many_qps_cycle_budget: {per:.2} cycles per 64-byte READ RESPONSE ONLY"
    );
    b.expect_no_qp_write();
    assert_eq!(b.revs, want_revs);
    assert_eq!(b.placed, n as usize, "one placed per verdict");
    // every frame's QpContext read shown to the ACK processor, in order (each frame is on
    // another QP than the one before: none is kept)
    let qs: Vec<u32> = want_revs.iter().map(|e| e.0).collect();
    assert_eq!(b.xq_seen, qs, "the QpContext reads shown");
    for (a, d) in &frames {
        for (k, x) in d.iter().enumerate() {
            assert_eq!(
                b.dma.mem.get(&(a + k as u64)),
                Some(x),
                "byte at {:#x}",
                a + k as u64
            );
        }
    }
    assert!(
        per <= 4.0,
        "{per} cycles per READ RESPONSE ONLY over {nq} QPs"
    );
}

/// READ RESPONSE ONLY frames round robin over 16 QPs behind an ACK processor that gives a
/// verdict every 5 cycles at most (as `allqps`'s, which decides one event per 4-5 cycles),
/// so the frames queue: the record of the frame behind the head is read in the head's Idle
/// (`pf_idle`), not in its Decide, and shown to the ACK processor (`ackev_xq_*`) that much
/// sooner before the head's verdict, which it needs 3 cycles ahead to read the frame
/// behind's first WQE before the verdict after it. Every event once, in order, every read
/// shown, every payload placed.
#[test]
fn read_responses_many_qps_records_read_in_idle() {
    let nq = 16u32;
    let mut b = bench_many_qps(83, 0.0, 0.0, nq);
    b.vd_min = 5;
    let n = 64u32;
    let mut r = rng(84);
    let mut want = vec![];
    for i in 0..n {
        let q = QPN + i % nq;
        b.send(&rd_rsp_only(q, 300 + i, i, &bytes(&mut r, 64)));
        want.push((q, 300 + i, aeth::ACK, i, RSP_ONLY as u8, 64));
        b.verdicts.push_back((true, 0x4000_0000 + 128 * i as u64));
    }
    stream_cycles(&mut b, n as usize);
    assert_eq!(b.revs, want);
    assert_eq!(b.placed, n as usize, "one placed per verdict");
    let qs: Vec<u32> = want.iter().map(|e| e.0).collect();
    assert_eq!(b.xq_seen, qs, "the QpContext reads shown");
    // frame i's record shown before frame i - 1's verdict, over the second half
    let ahead: Vec<i64> = (n as usize / 2..n as usize)
        .map(|i| b.vd_cycles[i - 1] as i64 - b.xq_cycles[i] as i64)
        .collect();
    let (lo, hi) = (ahead.iter().min().unwrap(), ahead.iter().max().unwrap());
    eprintln!(
        "read_responses_many_qps_records_read_in_idle: each record shown {lo}-{hi} cycles \
         before the verdict of the frame ahead"
    );
    // (2 when read in Decide)
    assert!(
        *lo >= 3,
        "records shown {lo}-{hi} cycles before the verdict ahead"
    );
}

/// ACKNOWLEDGE frames round robin over 16 QPs (every frame on another QP, as when many QPs
/// have one message in flight each): cycles between their events on `ackev` in the steady
/// state. 5 when the QpContext read ahead in Decide came in the next frame's Idle and was
/// not used (an ACK spends no cycle between Decide and Emit: Idle, WaitCtx x 2, Decide,
/// Emit); 3 since that Idle takes it from the store's read data (`p_qnow`): Idle, Decide,
/// Emit, the budget. With random idle input and a stalled `ackev`, every event still comes
/// once, in order, with its fields.
#[test]
fn ack_stream_many_qps_cycle_budget() {
    for (seed, idle, stall) in [(75, 0.0, 0.0), (76, 0.3, 0.3), (79, 0.6, 0.5)] {
        let nq = 16u32;
        let mut b = bench_many_qps(seed, idle, stall, nq);
        let n = 96u32;
        let mut want = vec![];
        for i in 0..n {
            let q = QPN + i % nq;
            let ps = 1000 + i;
            b.send(&ack_frame(q, ps, aeth::ACK, i));
            want.push((q, ps, aeth::ACK, i));
        }
        b.run();
        assert_eq!(b.aevs, want, "seed {seed}: every ACK event once, in order");
        assert!(b.acks.is_empty() && b.cpl.got.is_empty());
        // (an ACKNOWLEDGE's QpContext read is not shown to the ACK processor)
        assert!(b.xq_seen.is_empty(), "seed {seed}: {:?} shown", b.xq_seen);
        if idle == 0.0 && stall == 0.0 {
            let c = &b.aev_cycles;
            let h = c.len() / 2;
            let per = (c[c.len() - 1] - c[h]) as f64 / (c.len() - 1 - h) as f64;
            eprintln!("ack_stream_many_qps_cycle_budget: {per:.2} cycles per ACK over {nq} QPs");
            assert!(per <= 3.0, "{per} cycles per ACK over {nq} QPs");
        }
    }
}

/// ACK frames alternating between two QPs while another writer (the driver's mailbox)
/// changes QP 2's source IPv4 address at a swept offset: QP 2's ACKs are delivered up to
/// the write and dropped (not addressed to us) after it, never judged on the record read
/// before it, whether that record was read ahead and registered, taken as it came
/// (`p_qnow`), or read in Idle; QP 1's all go on. An ACK's event leaves in Emit, the cycle
/// after Decide, which judged it on the record registered in Idle: a write seen in cycle w
/// lets only a frame already in Decide at w, judged before it, deliver (at w + 1); one in
/// Idle at w must not take the record read before it (a delivery at w + 2 fails; it does
/// without the `sn_pq` test beside `p_qnow`).
#[test]
fn ack_read_ahead_follows_other_writers() {
    const LAT: u64 = 1;
    let (q1, q2) = (QPN + 1, QPN + 2);
    let mut cut = vec![];
    let mut worst = 0;
    // the stream settles at 3 cycles per frame: two periods of both QPs and more
    for off in 10..30u64 {
        let mut b = Bench::new(120 + off, 0.0, 0.0);
        for q in [q1, q2] {
            b.set_qp(q, qp_state::RTS, 0);
        }
        let n = 24u32;
        for i in 0..n {
            b.send(&ack_frame([q1, q2][i as usize % 2], 500 + i, aeth::ACK, i));
        }
        for _ in 0..off {
            b.cycle();
        }
        let w = b.m.cycle;
        let mut rec = b.ctx.get(q2);
        let f = QpContext::field("src_ip").unwrap();
        rec[f.offset] ^= 0x5a;
        b.ctx
            .write(q2, &rec, f.byte_mask(), crate::common::bus::CTX_SRC_HOST);
        b.run();
        let got: Vec<u32> = b.aevs.iter().map(|e| e.1 - 500).collect();
        let q2_got: Vec<u32> = got.iter().copied().filter(|i| i % 2 == 1).collect();
        let k = q2_got.len() as u32;
        assert_eq!(
            q2_got,
            (0..k).map(|j| 2 * j + 1).collect::<Vec<_>>(),
            "offset {off}: QP 2's ACKs delivered are a prefix"
        );
        for (e, at) in b.aevs.iter().zip(&b.aev_cycles) {
            if (e.1 - 500) % 2 == 1 {
                worst = worst.max(at.saturating_sub(w));
                assert!(
                    *at <= w + LAT,
                    "offset {off}: QP 2's ACK {} delivered at {at}, the write at {w}",
                    e.1 - 500
                );
            }
        }
        let q1_got = got.iter().filter(|i| *i % 2 == 0).count() as u32;
        assert_eq!(q1_got, n / 2, "offset {off}: QP 1's ACKs");
        assert_eq!(b.cnt("cnt_drop_addr"), (n / 2 - k) as u64, "offset {off}");
        cut.push(k);
    }
    eprintln!(
        "ack_read_ahead_follows_other_writers: QP 2 ACKs delivered per offset {cut:?}, the latest {worst} cycles after the write"
    );
    assert!(cut.windows(2).all(|p| p[0] <= p[1]), "{cut:?}");
    assert!(cut[0] < *cut.last().unwrap(), "{cut:?}");
}
