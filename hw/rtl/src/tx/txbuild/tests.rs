//! Block tests of `TxBuild` (Verilator), with `TxReq` in front of it (`TxPair`) and the
//! `rsp` descriptors (ACK/NAK, READ RESPONSE) driven by the test as `RdResp` builds them
//! (its model, `rdresp::tests::expand`).

use super::*;
use crate::common::bus::{CTX_SRC_TX, CplM, CtxPortM, CtxSnoopS, PiSnoopS, RingPortM, RspJobS};
use crate::common::testutil::*;
use crate::tx::rdresp::tests::{Desc, Job, expand, mtu_bytes, rand_job};
use crate::tx::txreq::tests::*;
use crate::tx::txreq::{TxDescM, TxDescS, TxReq};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rnic_abi::queue::wqe_op;
use std::collections::{HashMap, VecDeque};

/// txreq and txbuild joined as rnic_top will join them.
#[derive(LogicBlock, Default)]
struct TxPair {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub kick_valid: Signal<In, Bit>,
    pub kick_qpn: Signal<In, Bits<16>>,
    pub ctx: CtxPortM,
    pub sn: CtxSnoopS,
    pub pisn: PiSnoopS,
    pub ring: RingPortM,
    pub cpl: CplM,
    pub rd: DmaRdM,
    pub rsp: TxDescS,
    pub dbg: StreamS,
    pub tx: StreamM,
    pub cnt_wqe: Signal<Out, Bits<32>>,
    pub cnt_wqe_err: Signal<Out, Bits<32>>,
    pub cnt_tx_pkts: Signal<Out, Bits<32>>,
    pub cnt_tx_acks: Signal<Out, Bits<32>>,
    /// txreq's `pkt` handshake, for the priority check
    pub mon_pkt_valid: Signal<Out, Bit>,
    pub mon_pkt_ready: Signal<Out, Bit>,
    req: TxReq,
    bld: TxBuild,
}

impl Logic for TxPair {
    #[hdl_gen]
    fn update(&mut self) {
        self.req.clock.next = self.clock.val();
        self.req.rst.next = self.rst.val();
        self.bld.clock.next = self.clock.val();
        self.bld.rst.next = self.rst.val();
        self.req.kick_valid.next = self.kick_valid.val();
        self.req.kick_qpn.next = self.kick_qpn.val();
        // no ACK processor here: no restarts, the timer always takes its arm
        self.req.rs.valid.next = false;
        self.req.rs.qpn.next = 0.into();
        self.req.rs.psn.next = 0.into();
        self.req.arm.ready.next = true;
        CtxPortM::link(&mut self.ctx, &mut self.req.ctx);
        CtxSnoopS::link(&mut self.sn, &mut self.req.sn);
        PiSnoopS::link(&mut self.pisn, &mut self.req.pisn);
        RingPortM::link(&mut self.ring, &mut self.req.ring);
        CplM::link(&mut self.cpl, &mut self.req.cpl);
        TxDescM::join(&mut self.req.pkt, &mut self.bld.pkt);
        DmaRdM::link(&mut self.rd, &mut self.bld.rd);
        TxDescS::link(&mut self.rsp, &mut self.bld.rsp);
        StreamS::link(&mut self.dbg, &mut self.bld.dbg);
        StreamM::link(&mut self.tx, &mut self.bld.tx);
        self.cnt_wqe.next = self.req.cnt_wqe.val();
        self.cnt_wqe_err.next = self.req.cnt_wqe_err.val();
        self.cnt_tx_pkts.next = self.bld.cnt_tx_pkts.val();
        self.cnt_tx_acks.next = self.bld.cnt_tx_acks.val();
        self.mon_pkt_valid.next = self.req.pkt.valid.val();
        self.mon_pkt_ready.next = self.bld.pkt.ready.val();
    }
}

fn be(f: &[u8], o: usize, n: usize) -> u64 {
    f[o..o + n].iter().fold(0, |a, b| a << 8 | *b as u64)
}

/// The traffic class the tests give QP `qpn` (low bits set too: they must not reach the wire).
fn tclass(qpn: u32) -> u8 {
    (qpn as u8).wrapping_mul(37) ^ 0x5B
}

/// IPv4 TOS of a frame sent for traffic class `tc`: DSCP bits 7:2, ECN ECT(0).
fn wire_tos(tc: u8) -> u8 {
    (tc & 0xFC) | rnic_abi::roce::ECN_ECT0
}

/// A decoded RoCE v2 frame: the packet, plus the AETH if any (ACKNOWLEDGE, READ RESPONSE
/// FIRST / LAST / ONLY). Decoded by hand from the
/// specs (IEEE 802.3, RFC 791/768, IBTA Vol. 1 ch. 9 and A17), independent of the
/// generator: every constant field and both checksums are asserted here.
fn decode(f: &[u8]) -> (Pkt, Option<(u8, u32)>) {
    assert!(f.len() >= 58, "frame of {} bytes", f.len());
    assert_eq!(&f[12..14], &[0x08, 0x00], "ethertype");
    assert_eq!(f[14], 0x45, "IPv4 version/IHL");
    assert_eq!(f[15] & 3, rnic_abi::roce::ECN_ECT0, "TOS: ECN field ECT(0)");
    let tot = be(f, 16, 2) as usize;
    assert_eq!(tot, f.len() - 14, "IPv4 total length");
    assert_eq!(be(f, 18, 2), 0, "IPv4 identification");
    assert_eq!(be(f, 20, 2), 0x4000, "IPv4 flags DF, offset 0");
    assert_eq!(f[22], 64, "TTL");
    assert_eq!(f[23], 17, "protocol UDP");
    let mut sum: u32 = (0..10).map(|i| be(f, 14 + 2 * i, 2) as u32).sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    assert_eq!(sum, 0xFFFF, "IPv4 header checksum");
    assert_eq!(be(f, 36, 2), 4791, "UDP destination port");
    assert_eq!(be(f, 38, 2) as usize, tot - 20, "UDP length");
    assert_eq!(be(f, 40, 2), 0, "UDP checksum");
    let op = f[42];
    assert_eq!(f[43] & 0x4F, 0, "BTH M and TVer");
    assert_eq!(be(f, 44, 2), 0xFFFF, "P_Key");
    assert_eq!(f[46], 0, "BTH reserved byte");
    assert_eq!(f[50] & 0x7F, 0, "BTH reserved bits");
    assert!(crate::net::icrc::icrc_matches(f), "ICRC");
    // IBTA table 38 (RC): which extension headers each opcode carries
    let reth = matches!(op, 0x06 | 0x0A | 0x0B);
    let imm = matches!(op, 0x03 | 0x05 | 0x09 | 0x0B);
    let aeth = matches!(op, 0x0D | 0x0F | 0x10 | 0x11);
    assert!(op <= 0x11 && op != 0x0C, "opcode {op:#x}");
    let mut o = 54;
    let r = reth.then(|| {
        o += 16;
        (be(f, 54, 8), be(f, 62, 4) as u32, be(f, 66, 4) as u32)
    });
    let a = aeth.then(|| {
        o += 4;
        (f[54], be(f, 55, 3) as u32)
    });
    let i = imm.then(|| {
        o += 4;
        be(f, o - 4, 4) as u32
    });
    let pad = (f[43] >> 4 & 3) as usize;
    let end = f.len() - 4 - pad;
    assert!(end >= o, "payload length");
    assert!(
        f[end..f.len() - 4].iter().all(|b| *b == 0),
        "pad bytes zero"
    );
    let mac = |k: usize| {
        let mut m = [0u8; 6];
        m.copy_from_slice(&f[k..k + 6]);
        m
    };
    (
        Pkt {
            dmac: mac(0),
            smac: mac(6),
            sip: be(f, 26, 4) as u32,
            dip: be(f, 30, 4) as u32,
            sport: be(f, 34, 2) as u16,
            opcode: op,
            se: f[43] & 0x80 != 0,
            pad: pad as u8,
            dqpn: be(f, 47, 3) as u32,
            ackreq: f[50] & 0x80 != 0,
            ack_free: false,
            psn: be(f, 51, 3) as u32,
            reth: r,
            imm: i,
            payload: f[o..end].to_vec(),
        },
        a,
    )
}

/// Stalls of every port and the extra traffic.
#[derive(Clone)]
struct Cfg {
    stall: f64,
    tready_stall: f64,
    /// responder jobs (ACK/NAK, READ) from this cycle on, driven on `rsp` as `RdResp`'s
    /// descriptors
    rsps: Vec<(u64, Job)>,
    dbgs: Vec<(u64, Vec<u8>, bool)>,
    /// MR table index whose whole range answers DMA reads with `dat_err`
    bad_mr: Option<u32>,
}

/// The frame an `rsp` descriptor must become (decoded), with its IPv4 TOS byte.
type RspFrame = (Pkt, Option<(u8, u32)>, u8);

fn rsp_frame(d: &Desc, mem: &HashMap<u64, u8>) -> RspFrame {
    let mac = |v: u64| {
        let mut a = [0u8; 6];
        for (i, b) in a.iter_mut().enumerate() {
            *b = (v >> (40 - 8 * i)) as u8;
        }
        a
    };
    let p = Pkt {
        dmac: mac(d.dmac),
        smac: mac(d.smac),
        sip: d.sip,
        dip: d.dip,
        sport: d.sport,
        opcode: d.opcode,
        se: d.se,
        pad: d.pad,
        dqpn: d.dqpn,
        ackreq: d.ackreq,
        ack_free: false,
        psn: d.psn,
        reth: None,
        imm: None,
        payload: (0..d.paylen as u64).map(|k| mem[&(d.addr + k)]).collect(),
    };
    let aeth = d
        .has_imm
        .then_some(((d.imm >> 24) as u8, d.imm & 0xFF_FFFF));
    (p, aeth, wire_tos(d.tos))
}

fn is_ack(op: u8) -> bool {
    op == rnic_abi::roce::opcode::ACKNOWLEDGE || op == rnic_abi::roce::opcode::ATOMIC_ACKNOWLEDGE
}

struct Run {
    data: Vec<Pkt>,
    dbgs: Vec<(Vec<u8>, bool)>,
    /// cycle of every tx beat, tvalid-low cycles with something queued
    beats: Vec<(u64, bool)>,
    /// longest wait of an `rsp` descriptor (valid to ready), cycles
    rsp_wait: u64,
    /// kinds of the frames in `tx` order: 0 debug, 1 request, 2 ACK, 3 READ response
    order: Vec<u8>,
    /// every RoCE frame (requests and responses) as sent
    frames: Vec<Vec<u8>>,
    /// data frames sent with `tuser` (payload read error)
    bad_frames: usize,
    /// cycles with both `rsp` and txreq's `pkt` valid, and of those with `rsp` taken
    both_valid: u64,
    rsp_wins: u64,
}

fn run_pair(s: &Setup, kicks: &[(u64, u32, u16)], cfg: &Cfg, seed: u64) -> Run {
    let mut m = model(TxPair::default(), "txpair");
    let mut r = rng(seed);
    let mut ctx = CtxModel::new("ctx", cfg.stall)
        .with_snoop("sn", CTX_SRC_TX)
        .with_pi_snoop("pisn");
    let mut ring = RingModel::new("ring", cfg.stall);
    let mut cpl = CplSink::new("cpl", cfg.stall);
    let mut dma = DmaRdModel::new("rd", cfg.stall);
    dma.mem = s.mem.clone();
    if let Some(i) = cfg.bad_mr {
        let mr = s.mrs[&i];
        dma.bad.push((mr.iova, mr.iova + mr.length));
    }
    let mut user_frames = 0;
    load(s, &mut ctx, &mut ring);
    // every QP gets its own traffic class (the setup's contexts have 0)
    let tc_off = rnic_abi::queue::QpContext::field("traffic_class")
        .unwrap()
        .offset;
    let mut by_rqpn = std::collections::HashMap::new();
    for (qpn, q) in &s.qps {
        let mut rec = ctx.get(*qpn);
        rec[tc_off] = tclass(*qpn);
        ctx.rec.insert(*qpn, rec);
        by_rqpn.insert(q.remote_qpn & 0xFF_FFFF, *qpn);
    }
    let e = expect_all(s);
    let total: usize = e.pkts.values().map(|v| v.len()).sum();
    reset(&mut m);
    // txreq's reset sweep: every QP number is scheduled once and dropped at its context read
    m.set("tx_tready", 1);
    crate::tx::txreq::tests::drain_reset_sweep(&mut m);
    let t0 = m.cycle;
    let mut pending = kicks.to_vec();
    let mut kick_next = None;
    let mut rsps: VecDeque<(u64, Desc)> = cfg
        .rsps
        .iter()
        .flat_map(|(t, j)| expand(j).into_iter().map(|d| (*t, d)))
        .collect();
    let n_rsp = rsps.len();
    let n_ack = rsps.iter().filter(|d| is_ack(d.1.opcode)).count();
    let mut rsp_want: Vec<RspFrame> = vec![];
    let mut rsp_seen: Vec<RspFrame> = vec![];
    let mut rsp_cmds = 0;
    let mut dbgs: VecDeque<(u64, Vec<u8>, bool)> = cfg.dbgs.iter().cloned().collect();
    let mut dbg_beat = 0usize;
    let mut rsp_since: Option<u64> = None;
    let mut run = Run {
        data: vec![],
        dbgs: vec![],
        beats: vec![],
        rsp_wait: 0,
        order: vec![],
        frames: vec![],
        bad_frames: 0,
        both_valid: 0,
        rsp_wins: 0,
    };
    let mut cur: Vec<u8> = vec![];
    let mut held: Option<(Vec<u8>, u64, bool)> = None;
    let mut quiet = 0;
    loop {
        let now = m.cycle - t0;
        m.set("kick_valid", 0);
        if let Some(q) = kick_next.take() {
            m.set("kick_valid", 1);
            m.set("kick_qpn", q as u64);
        } else if let Some(i) = pending.iter().position(|k| k.0 <= now) {
            let (_, q, n) = pending.remove(i);
            post(&mut ctx, q, n);
            kick_next = Some(q);
        }
        // response descriptors: random idle between them, held once offered
        let rv = rsps.front().is_some_and(|d| d.0 <= now)
            && (rsp_since.is_some() || !chance(&mut r, cfg.stall));
        m.set("rsp_valid", rv as u64);
        if let Some((_, d)) = rsps.front() {
            d.drive(&mut m, "rsp");
        }
        if rv && rsp_since.is_none() {
            rsp_since = Some(now);
        }
        // debug frames
        let dv = dbgs.front().is_some_and(|d| d.0 <= now) && !chance(&mut r, cfg.stall);
        m.set("dbg_tvalid", dv as u64);
        if let Some((_, f, user)) = dbgs.front() {
            let c = &f[64 * dbg_beat..(64 * dbg_beat + 64).min(f.len())];
            m.set_bytes("dbg_tdata", c);
            m.set(
                "dbg_tkeep",
                if c.len() == 64 {
                    u64::MAX
                } else {
                    (1 << c.len()) - 1
                },
            );
            let last = 64 * dbg_beat + 64 >= f.len();
            m.set("dbg_tlast", last as u64);
            m.set("dbg_tuser", (last && *user) as u64);
        }
        ctx.drive(&mut m, &mut r);
        ring.drive(&mut m, &mut r);
        cpl.drive(&mut m, &mut r);
        dma.drive(&mut m, &mut r);
        let tready = !chance(&mut r, cfg.tready_stall);
        m.set("tx_tready", tready as u64);
        m.tick();
        ctx.observe(&mut m);
        ring.observe(&mut m);
        cpl.observe(&mut m);
        let ncmd = dma.cmds.len();
        dma.observe(&mut m, &mut r);
        // priority: never a pkt descriptor while an rsp descriptor is offered
        if rv && m.bit("mon_pkt_valid") {
            run.both_valid += 1;
            assert!(!m.bit("mon_pkt_ready"), "pkt taken over rsp at cycle {now}");
            run.rsp_wins += m.bit("rsp_ready") as u64;
        }
        if rv && m.bit("rsp_ready") {
            let d = rsps.pop_front().unwrap().1;
            if d.paylen > 0 {
                rsp_cmds += 1;
                assert_eq!(
                    (ncmd + 1, dma.cmds.last()),
                    (dma.cmds.len(), Some(&(d.addr, d.paylen))),
                    "payload read of an rsp descriptor at its intake"
                );
            }
            rsp_want.push(rsp_frame(&d, &s.mem));
            run.rsp_wait = run.rsp_wait.max(now - rsp_since.take().unwrap());
        }
        if dv && m.bit("dbg_tready") {
            dbg_beat += 1;
            if 64 * dbg_beat >= dbgs[0].1.len() {
                dbgs.pop_front();
                dbg_beat = 0;
            }
        }
        // the MAC side: AXI-Stream rules and frame collection
        let tv = m.bit("tx_tvalid");
        let data = m.get_bytes("tx_tdata");
        let keep = m.get("tx_tkeep");
        let last = m.bit("tx_tlast");
        if let Some((d, k, l)) = held.take() {
            assert!(tv, "tvalid dropped without tready at cycle {now}");
            assert_eq!(
                (&d, k, l),
                (&data, keep, last),
                "beat changed while stalled"
            );
        }
        run.beats.push((now, tv));
        if tv && !tready {
            held = Some((data.clone(), keep, last));
        }
        if tv && tready {
            quiet = 0;
            assert!(
                keep != 0 && (keep == u64::MAX || keep & (keep + 1) == 0),
                "tkeep {keep:#x}"
            );
            assert!(last || keep == u64::MAX, "partial beat before tlast");
            cur.extend_from_slice(&data[..keep.count_ones() as usize]);
            if last {
                let f = std::mem::take(&mut cur);
                let user = m.bit("tx_tuser");
                if f[12..14] == [0x08, 0x00] {
                    user_frames += user as usize;
                    let (p, a) = decode(&f);
                    run.frames.push(f.clone());
                    if p.opcode >= 0x0D {
                        run.order.push(if is_ack(p.opcode) { 2 } else { 3 });
                        let i = rsp_seen.len();
                        assert!(i < rsp_want.len(), "response frame before its descriptor");
                        let got = (p, a, f[15]);
                        assert_eq!(got, rsp_want[i], "response frame {i}");
                        rsp_seen.push(got);
                    } else {
                        run.order.push(1);
                        assert!(a.is_none());
                        let q = by_rqpn[&p.dqpn];
                        assert_eq!(f[15], wire_tos(tclass(q)), "TOS of QP {q}'s packet");
                        run.data.push(p);
                    }
                } else {
                    run.order.push(0);
                    run.dbgs.push((f, user));
                }
            }
        }
        quiet += 1;
        if pending.is_empty()
            && kick_next.is_none()
            && rsps.is_empty()
            && dbgs.is_empty()
            && run.data.len() >= total
            && rsp_seen.len() >= n_rsp
            && cpl.got.len() >= e.cpls.len()
            && quiet > 300
        {
            break;
        }
        assert!(
            now < 2_000_000,
            "timeout: {} of {total} packets, {} of {n_rsp} responses",
            run.data.len(),
            rsp_seen.len()
        );
    }
    assert_eq!(
        rsp_seen, rsp_want,
        "response frames = rsp descriptors, in order"
    );
    check_per_qp(s, &run.data, &e);
    // the traffic classes are untouched; back to the setup's values for check_end
    for (qpn, q) in &s.qps {
        let mut rec = ctx.get(*qpn);
        assert_eq!(rec[tc_off], tclass(*qpn), "QP {qpn} traffic_class");
        rec[tc_off] = q.traffic_class;
        ctx.rec.insert(*qpn, rec);
    }
    check_end(s, &e, &ctx, &cpl, (m.get("cnt_wqe"), m.get("cnt_wqe_err")));
    let want_dbg: Vec<(Vec<u8>, bool)> = cfg.dbgs.iter().map(|d| (d.1.clone(), d.2)).collect();
    assert_eq!(run.dbgs, want_dbg, "debug frames passed through");
    assert_eq!(
        m.get("cnt_tx_pkts") as usize,
        total + n_rsp - n_ack,
        "cnt_tx_pkts"
    );
    assert_eq!(m.get("cnt_tx_acks") as usize, n_ack, "cnt_tx_acks");
    // one DMA read per packet with DMA payload, at the packet's address
    let want_cmds: usize = s
        .qps
        .iter()
        .flat_map(|(q, c)| {
            let mut q0 = *c;
            s.wqes[q].iter().map_while(move |w| {
                let r = expect_wqe(s, &q0, w).ok()?;
                q0.sq_psn = (q0.sq_psn + r.len() as u32) & 0xFF_FFFF;
                let inline = w.flags & rnic_abi::queue::wqe_flag::INLINE != 0;
                Some(if inline {
                    0
                } else {
                    r.iter().filter(|p| !p.payload.is_empty()).count()
                })
            })
        })
        .sum();
    assert_eq!(dma.cmds.len(), want_cmds + rsp_cmds, "DMA read commands");
    let want_user = dma
        .cmds
        .iter()
        .filter(|(a, l)| dma.bad.iter().any(|b| *a < b.1 && b.0 < a + *l as u64))
        .count();
    assert_eq!(
        user_frames, want_user,
        "frames marked bad (tuser) after dat_err"
    );
    run.bad_frames = user_frames;
    for (a, l) in &dma.cmds {
        assert!(
            *l as usize <= 4096
                && s.mem.contains_key(a)
                && s.mem.contains_key(&(a + *l as u64 - 1))
        );
    }
    run
}

/// The decoder is an oracle that can fail: any single flipped bit of a sent frame is
/// either rejected (constant field, checksum, ICRC) or decodes to a different packet.
fn flips_are_caught(frames: &[Vec<u8>], r: &mut ChaCha8Rng) {
    for f in frames.iter().step_by(3) {
        let good = decode(f);
        for _ in 0..4 {
            let mut g = f.clone();
            let i = r.random_range(0..g.len());
            g[i] ^= 1 << r.random_range(0..8);
            let res = std::panic::catch_unwind(|| decode(&g));
            assert!(
                res.is_err() || res.unwrap() != good,
                "flip at byte {i} not seen"
            );
        }
    }
}

/// A random ACK/NAK job.
fn rand_ack(r: &mut ChaCha8Rng) -> Job {
    rand_job(r, 0.0, 0)
}

/// A random READ job whose bytes are in one of the setup's good MRs.
fn rand_read(s: &Setup, r: &mut ChaCha8Rng, len: u32, mtu: u8) -> Job {
    let mr = s.mrs[&GOOD_MRS[r.random_range(0..GOOD_MRS.len())]];
    let off = r.random_range(0..=MR_LEN - len as u64);
    let mut j = rand_job(r, 1.0, 0);
    j.len = len;
    j.mtu = mtu;
    j.va = mr.iova + off;
    j
}

fn rand_dbg(r: &mut ChaCha8Rng) -> (Vec<u8>, bool) {
    let len = r.random_range(60..300);
    let mut f: Vec<u8> = (0..len).map(|_| r.random()).collect();
    f[12] = 0x88;
    f[13] = 0xB5;
    (f, r.random_bool(0.3))
}

/// Every length at every MTU, all four opcodes, inline, with stalls on every port, ACKs,
/// a few READ responses and debug frames mixed in.
fn lengths_at(mtu: u8, seed: u64, stall: f64) {
    let mut r = rng(seed);
    let mut s = new_setup(&mut r);
    let mut kicks = vec![];
    for qi in 0..2u32 {
        let qpn = 20 + qi;
        let psn0 = if qi == 0 {
            0xFF_FFF8
        } else {
            r.random_range(0..0xFF_FFFF)
        };
        let ci = r.random();
        add_qp(&mut s, &mut r, qpn, mtu, psn0, ci);
        let mut n = 0;
        for (li, &len) in LENGTHS.iter().enumerate() {
            if (li as u32 + qi) % 2 == 1 && len > 300 {
                continue; // share the long ones between the QPs
            }
            let op = ((li as u32 + qi + mtu as u32) % 4) as u8;
            let inline = len <= 16 && (li as u32 + qi).is_multiple_of(2);
            let w = gen_wqe(&s, &mut r, Some(op), len, inline, None);
            s.wqes.get_mut(&qpn).unwrap().push(w);
            n += 1;
        }
        kicks.push((qi as u64 * 30, qpn, n));
    }
    let mut rsps = vec![];
    let mut t = 0;
    for i in 0..14 {
        t += r.random_range(0..400);
        let j = match i {
            3 => rand_read(&s, &mut r, 3 * mtu_bytes(mtu) + 1, mtu),
            9 => rand_read(&s, &mut r, 7, mtu),
            _ => rand_ack(&mut r),
        };
        rsps.push((t, j));
    }
    let mut dbgs = vec![];
    let mut t = 0;
    for _ in 0..4 {
        t += r.random_range(0..1500);
        let (f, u) = rand_dbg(&mut r);
        dbgs.push((t, f, u));
    }
    let cfg = Cfg {
        stall,
        tready_stall: stall,
        rsps,
        dbgs,
        bad_mr: None,
    };
    let run = run_pair(&s, &kicks, &cfg, seed + 1);
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    flips_are_caught(&run.frames, &mut r);
    std::panic::set_hook(prev);
}

#[test]
fn frames_mtu256() {
    lengths_at(1, 100, 0.2);
}

#[test]
fn frames_mtu1024() {
    lengths_at(3, 200, 0.3);
}

#[test]
fn frames_mtu4096() {
    lengths_at(5, 300, 0.1);
    lengths_at(5, 310, 0.0);
}

/// READ RESPONSE FIRST / MIDDLE / LAST / ONLY frames (payload from the DMA read model, every
/// length class incl. non-multiples of 4 with pad, every MTU) and ACKs on `rsp`, interleaved
/// with request packets from txreq on `pkt`, random backpressure everywhere: every response
/// frame byte-checked (headers, AETH on F/L/O only, payload, pad, lengths, checksum, ICRC),
/// `rsp` wins over `pkt` whenever both are offered.
#[test]
fn frames_read_responses_with_requests() {
    for (seed, stall) in [(600u64, 0.3), (610, 0.05)] {
        let mut r = rng(seed);
        let mut s = new_setup(&mut r);
        let mut kicks = vec![];
        for qi in 0..3u32 {
            let qpn = 30 + qi;
            let (psn, ci) = (r.random_range(0..0xFF_FFFF), r.random());
            add_qp(&mut s, &mut r, qpn, [1, 3, 5][qi as usize], psn, ci);
            for _ in 0..6 {
                let len = r.random_range(0..9000);
                let w = gen_wqe(&s, &mut r, None, len, false, None);
                s.wqes.get_mut(&qpn).unwrap().push(w);
            }
            kicks.push((qi as u64 * 50, qpn, 6));
        }
        let mut rsps = vec![];
        let mut t = 0;
        for mtu in 1..=5u8 {
            let mb = mtu_bytes(mtu);
            let lens = [
                0,
                1,
                2,
                3,
                4,
                5,
                63,
                64,
                mb - 1,
                mb,
                mb + 1,
                2 * mb + 3,
                r.random_range(0..20_000),
            ];
            for len in lens {
                t += r.random_range(0..150);
                rsps.push((t, rand_read(&s, &mut r, len, mtu)));
                if r.random_bool(0.3) {
                    rsps.push((t, rand_ack(&mut r)));
                }
            }
        }
        let cfg = Cfg {
            stall,
            tready_stall: stall,
            rsps,
            dbgs: vec![],
            bad_mr: None,
        };
        let run = run_pair(&s, &kicks, &cfg, seed + 1);
        let ops: Vec<u8> = run.frames.iter().map(|f| f[42]).collect();
        for op in 0x0D..=0x11 {
            assert!(ops.contains(&op), "no frame with opcode {op:#x}");
        }
        let mids = run.frames.iter().filter(|f| f[42] == 0x0E).count();
        assert!(mids > 10, "{mids} READ RESPONSE MIDDLE frames");
        let first_rd = run.order.iter().position(|k| *k == 3).unwrap();
        let last_rd = run.order.iter().rposition(|k| *k == 3).unwrap();
        let between = run.order[first_rd..last_rd]
            .iter()
            .filter(|k| **k == 1)
            .count();
        eprintln!(
            "stall {stall}: {} frames, {between} requests among the READ responses; rsp and pkt both valid {} cycles, rsp taken in {}",
            run.order.len(),
            run.both_valid,
            run.rsp_wins
        );
        assert!(between > 5, "requests and READ responses not interleaved");
        assert!(run.rsp_wins > 5, "rsp over pkt never exercised");
    }
}

/// Errors (completion + QP ERR) among good traffic on other QPs, several QPs at once.
#[test]
fn frames_errors_and_many_qps() {
    let mut r = rng(400);
    let mut s = new_setup(&mut r);
    let mut kicks = vec![];
    let bads = [
        Some(Bad::Opcode),
        Some(Bad::KeyGen),
        Some(Bad::Bounds),
        None,
        Some(Bad::MrPd),
        None,
    ];
    for (i, b) in bads.iter().enumerate() {
        let qpn = 3 * i as u32 + 1;
        let (psn, ci) = (r.random_range(0..0xFF_FFFF), r.random());
        add_qp(&mut s, &mut r, qpn, [1, 2, 3, 4, 5][i % 5], psn, ci);
        for j in 0..4 {
            let len = r.random_range(0..5000);
            let bad = if j == 2 { *b } else { None };
            let w = gen_wqe(&s, &mut r, None, len, false, bad);
            s.wqes.get_mut(&qpn).unwrap().push(w);
        }
        kicks.push((0, qpn, 4));
    }
    let mut rsps: Vec<(u64, Job)> = (0..6).map(|i| (i * 97, rand_ack(&mut r))).collect();
    // a READ from the MR whose reads fail: its response frames go out marked bad
    let mr = s.mrs[&GOOD_MRS[1]];
    let mut j = rand_read(&s, &mut r, 3000, 3);
    j.va = mr.iova + 100;
    rsps.push((300, j));
    let cfg = Cfg {
        stall: 0.2,
        tready_stall: 0.2,
        rsps,
        dbgs: vec![],
        bad_mr: Some(GOOD_MRS[1]),
    };
    let run = run_pair(&s, &kicks, &cfg, 401);
    assert!(run.bad_frames > 3, "no payload read error exercised");
}

/// Cycles from the second frame's first beat to the last beat of `n` frames of `b` beats.
fn span_after_first(run: &Run, n: usize, b: usize) -> u64 {
    let valid: Vec<u64> = run.beats.iter().filter(|x| x.1).map(|x| x.0).collect();
    assert_eq!(valid.len(), n * b);
    valid[n * b - 1] + 1 - valid[b]
}

/// Throughput: 16 back-to-back 4 KiB packets (one 64 KiB WRITE, MTU 4096) with no stalls,
/// the same for the 16 READ RESPONSEs of a 64 KiB READ, then 40 ACKs in a row: cycles per
/// frame and idle cycles on `tx`; then the priority of `rsp` over a stream of requests.
#[test]
fn throughput_4k_and_acks() {
    let mut r = rng(500);
    let mut s = new_setup(&mut r);
    add_qp(&mut s, &mut r, 5, 5, 1000, 0);
    let w = gen_wqe(&s, &mut r, Some(wqe_op::SEND), 65536, false, None);
    s.wqes.get_mut(&5).unwrap().push(w);
    let cfg = Cfg {
        stall: 0.0,
        tready_stall: 0.0,
        rsps: vec![],
        dbgs: vec![],
        bad_mr: None,
    };
    let run = run_pair(&s, &[(0, 5, 1)], &cfg, 501);
    // 54 + 4096 + 4 bytes = 65 beats per frame, 16 frames
    let cycles = span_after_first(&run, 16, 65);
    eprintln!(
        "4 KiB SEND packets 2..16: {cycles} cycles for {} beats ({:.2} cycles/packet)",
        15 * 65,
        cycles as f64 / 15.0,
    );
    assert!(
        cycles <= 15 * 65 + 15,
        "more than one idle cycle per 4 KiB packet"
    );
    // READ RESPONSEs: 54 (+ 4 AETH on FIRST / LAST) + 4096 + 4 bytes = 65 beats
    let s2 = new_setup(&mut r);
    let cfg = Cfg {
        rsps: vec![(0, rand_read(&s2, &mut r, 65536, 5))],
        ..cfg
    };
    let run = run_pair(&s2, &[], &cfg, 504);
    let cycles = span_after_first(&run, 16, 65);
    eprintln!(
        "4 KiB READ RESPONSE packets 2..16: {cycles} cycles for {} beats ({:.2} cycles/packet)",
        15 * 65,
        cycles as f64 / 15.0,
    );
    assert!(
        cycles <= 15 * 65 + 15,
        "more than one idle cycle per 4 KiB READ RESPONSE"
    );
    // ACKs back to back (one beat each)
    let cfg = Cfg {
        rsps: (0..40).map(|_| (0, rand_ack(&mut r))).collect(),
        ..cfg
    };
    let run = run_pair(&s2, &[], &cfg, 502);
    let valid: Vec<u64> = run.beats.iter().filter(|b| b.1).map(|b| b.0).collect();
    assert_eq!(valid.len(), 40);
    let span = valid[39] + 1 - valid[0];
    eprintln!(
        "40 ACK frames: {span} cycles from the first beat to the last; first at cycle {}",
        valid[0]
    );
    assert!(span <= 40 + 6, "ACK frames not back to back: {span} cycles");
    // priority: two 64 KiB SENDs keep `pkt` valid with the descriptor FIFO full; an ACK
    // takes the next free slot (it waits at most about one frame), so it overtakes the
    // request packets still waiting in txreq but not those already queued; a debug frame
    // waits for all descriptor frames
    let w = gen_wqe(&s, &mut r, Some(wqe_op::SEND), 65536, false, None);
    s.wqes.get_mut(&5).unwrap().push(w);
    let (f, u) = rand_dbg(&mut r);
    let cfg = Cfg {
        rsps: [300u64, 700, 730, 1100]
            .iter()
            .map(|t| (*t, rand_ack(&mut r)))
            .collect(),
        dbgs: vec![(20, f, u)],
        ..cfg
    };
    let run = run_pair(&s, &[(0, 5, 2)], &cfg, 503);
    eprintln!(
        "longest ACK wait for the descriptor FIFO behind 4 KiB frames: {} cycles; frame order {:?}",
        run.rsp_wait, run.order
    );
    assert!(
        run.rsp_wait <= 65 + 10,
        "ACK waited {} cycles",
        run.rsp_wait
    );
    assert!(run.rsp_wins >= 4, "rsp over pkt: {}", run.rsp_wins);
    assert_eq!(run.order.last(), Some(&0), "debug frame last");
    let first_ack = run.order.iter().position(|k| *k == 2).unwrap();
    // behind it: the frames sent until it arrived (cycle 300, 65 cycles each), the wait for
    // a slot, 16 queued descriptors, the staged header
    assert!(
        first_ack <= 300 / 65 + 1 + 16 + 1,
        "first ACK after {first_ack} frames"
    );
    assert!(
        run.order[first_ack..].iter().filter(|k| **k == 1).count() > 10,
        "the ACKs did not overtake the waiting requests: {:?}",
        run.order
    );
}

/// rdresp and txbuild joined as rnic_top will join them (no request traffic).
#[derive(LogicBlock, Default)]
struct RspPair {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub job: RspJobS,
    pub pkt: TxDescS,
    pub rd: DmaRdM,
    pub dbg: StreamS,
    pub tx: StreamM,
    pub cnt_rd_pkts: Signal<Out, Bits<32>>,
    pub cnt_tx_pkts: Signal<Out, Bits<32>>,
    pub cnt_tx_acks: Signal<Out, Bits<32>>,
    rsg: crate::tx::rdresp::RdResp,
    bld: TxBuild,
}

impl Logic for RspPair {
    #[hdl_gen]
    fn update(&mut self) {
        self.rsg.clock.next = self.clock.val();
        self.rsg.rst.next = self.rst.val();
        self.bld.clock.next = self.clock.val();
        self.bld.rst.next = self.rst.val();
        RspJobS::link(&mut self.job, &mut self.rsg.job);
        TxDescM::join(&mut self.rsg.desc, &mut self.bld.rsp);
        TxDescS::link(&mut self.pkt, &mut self.bld.pkt);
        DmaRdM::link(&mut self.rd, &mut self.bld.rd);
        StreamS::link(&mut self.dbg, &mut self.bld.dbg);
        StreamM::link(&mut self.tx, &mut self.bld.tx);
        self.cnt_rd_pkts.next = self.rsg.cnt_rd_pkts.val();
        self.cnt_tx_pkts.next = self.bld.cnt_tx_pkts.val();
        self.cnt_tx_acks.next = self.bld.cnt_tx_acks.val();
    }
}

/// Jobs through rdresp and txbuild: returns the frames and the cycles of the `tx` beats.
fn run_rsp_pair(s: &Setup, jobs: &[Job], stall: f64, seed: u64) -> (Vec<Vec<u8>>, Vec<u64>) {
    let mut m = model(RspPair::default(), "rsppair");
    let mut r = rng(seed);
    let mut dma = DmaRdModel::new("rd", stall);
    dma.mem = s.mem.clone();
    let want: Vec<RspFrame> = jobs
        .iter()
        .flat_map(expand)
        .map(|d| rsp_frame(&d, &s.mem))
        .collect();
    reset(&mut m);
    m.set("pkt_valid", 0);
    m.set("dbg_tvalid", 0);
    let mut q: VecDeque<Job> = jobs.iter().cloned().collect();
    let (mut frames, mut beats, mut cur) = (vec![], vec![], vec![]);
    let t0 = m.cycle;
    while frames.len() < want.len() {
        let now = m.cycle - t0;
        let jv = !q.is_empty() && !chance(&mut r, stall);
        m.set("job_valid", jv as u64);
        if let Some(j) = q.front() {
            j.drive(&mut m, "job");
        }
        dma.drive(&mut m, &mut r);
        let tready = !chance(&mut r, stall);
        m.set("tx_tready", tready as u64);
        m.tick();
        dma.observe(&mut m, &mut r);
        if jv && m.bit("job_ready") {
            q.pop_front();
        }
        if m.bit("tx_tvalid") && tready {
            beats.push(now);
            let keep = m.get("tx_tkeep");
            cur.extend_from_slice(&m.get_bytes("tx_tdata")[..keep.count_ones() as usize]);
            if m.bit("tx_tlast") {
                let f: Vec<u8> = std::mem::take(&mut cur);
                let (p, a) = decode(&f);
                let i = frames.len();
                assert_eq!((p, a, f[15]), want[i], "response frame {i}");
                frames.push(f);
            }
        }
        assert!(
            now < 2_000_000,
            "timeout: {} of {} frames",
            frames.len(),
            want.len()
        );
    }
    m.set("job_valid", 0);
    for _ in 0..100 {
        m.tick();
        assert!(!m.bit("tx_tvalid"), "extra frame");
    }
    let acks = jobs.iter().filter(|j| !j.read).count();
    assert_eq!(m.get("cnt_tx_acks") as usize, acks, "cnt_tx_acks");
    assert_eq!(
        m.get("cnt_tx_pkts") as usize,
        want.len() - acks,
        "cnt_tx_pkts"
    );
    assert_eq!(
        m.get("cnt_rd_pkts") as usize,
        want.len() - acks,
        "cnt_rd_pkts"
    );
    (frames, beats)
}

/// rdresp -> txbuild as in rnic_top: random READ and ACK jobs become the right frames
/// under random stalls, and four 64 KiB READs at MTU 4096 stream at line rate (at most one
/// idle cycle per 4 KiB READ RESPONSE).
#[test]
fn rdresp_into_txbuild() {
    let mut r = rng(700);
    let s = new_setup(&mut r);
    let jobs: Vec<Job> = (0..60)
        .map(|i| {
            if i % 3 == 0 {
                rand_ack(&mut r)
            } else {
                let mtu = r.random_range(1..=5);
                let len = r.random_range(0..12_000);
                rand_read(&s, &mut r, len, mtu)
            }
        })
        .collect();
    run_rsp_pair(&s, &jobs, 0.3, 701);
    let jobs: Vec<Job> = (0..4).map(|_| rand_read(&s, &mut r, 65536, 5)).collect();
    let (_, beats) = run_rsp_pair(&s, &jobs, 0.0, 702);
    assert_eq!(beats.len(), 64 * 65);
    let cycles = beats[64 * 65 - 1] + 1 - beats[65];
    eprintln!(
        "4 x 64 KiB READ, frames 2..64: {cycles} cycles for {} beats; first beat at cycle {}",
        63 * 65,
        beats[0]
    );
    assert!(cycles <= 63 * 65 + 63, "READ responses not at line rate");
}
