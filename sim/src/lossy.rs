//! Mixed RC traffic over a faulty fabric, checked message by message: the workload behind the
//! loss tests (`tests/tests/reliable.rs`) and the loss rows of `make bench`.
//!
//! Two NICs, `qps` QP pairs (even pairs send A -> B, odd pairs B -> A, so both directions run at
//! once), path MTUs 1024/256/4096/512 by pair, RDMA WRITE, WRITE with immediate, SEND, SEND
//! with immediate and RDMA READ (the pair's requester reads the peer's source slot into its own
//! destination slot) of 0 B to 16 KiB, and the atomics FETCH_ADD and CMP_SWAP, at most
//! [`DEPTH`] messages in flight per pair (one destination slot each). Every completion is
//! checked (status, opcode, length, immediate, exactly one requester and one responder
//! completion per message), every destination slot must hold the message's bytes, the
//! host-memory audit must be clean and no completion may come late. Any violation is an
//! [`Error::Check`].
//!
//! The atomics prove exactly-once execution: each pair owns two 8-byte words in the
//! responder's atomic MR, touched by nothing else: a counter only that pair's FETCH_ADDs add
//! to, and a word only its CMP_SWAPs compare and swap. An RC QP executes in posting order, so
//! the model knows every original value when it posts (FETCH_ADD: the prefix sum; CMP_SWAP:
//! the current value, with a compare that is either that value, so it swaps, or a wrong one,
//! so it leaves the word alone). The original value lands in the requester's destination slot
//! and must equal the model's, and at the end both words of every pair must hold the model's
//! final values: an atomic executed twice (a duplicate not answered from the saved result) or
//! lost shows in both.

use crate::error::{Error, ensure};
use crate::world::CLOCK_HZ;
use crate::{SharedWorld, SimNic, WorldConfig};
use rnic::verbs::{
    AccessFlags, CompletionQueue, ConnectAttr, Context, Endpoint, MemoryRegion, Mtu,
    ProtectionDomain, QpCaps, QueuePair, RecvWr, RtsAttr, SendOp, SendWr, WcOpcode, WcStatus,
    WorkCompletion,
};
use std::collections::HashMap;

type Ctx = Context<SimNic>;

/// Bytes of one destination (and source) slot.
pub const SLOT: usize = 16 * 1024;
/// Messages in flight per QP pair (= its slots).
pub const DEPTH: usize = 16;
/// Message lengths, picked per message from its seed.
pub const LENS: [usize; 14] = [
    0, 1, 63, 64, 65, 255, 256, 257, 1000, 4095, 4096, 4097, 9000, 16384,
];

/// Bytes of a pair's atomic words (FETCH_ADD counter at +0, CMP_SWAP word at +8).
pub const ATOMIC_WORDS: usize = 16;

struct Side<'c> {
    ctx: &'c Ctx,
    pd: ProtectionDomain<'c, SimNic>,
    cq: CompletionQueue<'c, SimNic>,
    src: MemoryRegion<'c, SimNic>,
    dst: MemoryRegion<'c, SimNic>,
    /// The atomic words of the pairs this side answers (REMOTE_ATOMIC).
    atom: MemoryRegion<'c, SimNic>,
}

impl<'c> Side<'c> {
    fn new(ctx: &'c Ctx, qps: usize) -> Result<Side<'c>, Error> {
        let pd = ctx.alloc_pd()?;
        let cq = ctx.create_cq(4096)?;
        let bytes = qps * DEPTH * SLOT;
        let sbuf = ctx.alloc_buf(bytes)?;
        let dbuf = ctx.alloc_buf(bytes)?;
        // the device reads sources for WRITE/SEND (local) and for the peer's READs (remote)
        let src = pd.reg_mr(&sbuf, AccessFlags::REMOTE_READ)?;
        let dst = pd.reg_mr(&dbuf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE)?;
        let abuf = ctx.alloc_buf(qps * ATOMIC_WORDS)?;
        let atom = pd.reg_mr(&abuf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_ATOMIC)?;
        Ok(Side {
            ctx,
            pd,
            cq,
            src,
            dst,
            atom,
        })
    }
    fn qp(&self) -> Result<QueuePair<'_, SimNic>, Error> {
        let caps = QpCaps {
            max_send_wr: 64,
            max_recv_wr: 64,
            ..QpCaps::default()
        };
        Ok(self.pd.create_qp(&self.cq, &self.cq, caps)?)
    }
    fn allowed(&self) -> Vec<(u64, usize)> {
        let r = self.cq.ring();
        vec![
            (self.dst.iova(), self.dst.len()),
            (self.atom.iova(), self.atom.len()),
            (r.iova(), r.len()),
        ]
    }
}

/// Connection attributes: local ACK timeout exponent, retry counts; RNR timer code 1 (10 us).
pub fn attr(mtu: Mtu, timeout: u8, retry_cnt: u8, rnr_retry: u8) -> ConnectAttr {
    ConnectAttr {
        access: AccessFlags::LOCAL_WRITE
            | AccessFlags::REMOTE_WRITE
            | AccessFlags::REMOTE_READ
            | AccessFlags::REMOTE_ATOMIC,
        path_mtu: mtu,
        rts: RtsAttr {
            timeout,
            retry_cnt,
            rnr_retry,
            max_rd_atomic: 16,
        },
        min_rnr_timer: 1,
        ..ConnectAttr::default()
    }
}

/// Debugging aid of a failed traced run: silence both links (every frame lost), let the world
/// drain, then feed `frame` (the request the responder expects next, sent on `link`) into the
/// responder alone and print which of its counters move and its QP state after.
fn replay(
    w: &SharedWorld,
    responder: &Ctx,
    link: usize,
    frame: Option<Vec<u8>>,
) -> Result<(), Error> {
    let Some(f) = frame else {
        eprintln!("REPLAY: the expected request is not in the trace");
        return Ok(());
    };
    for l in w.borrow_mut().links.iter_mut() {
        l.cfg.loss = 1.0;
    }
    w.borrow_mut().run(20_000);
    let before = counters(responder)?;
    let now = w.borrow().cycle;
    w.borrow_mut().links[link].inject(now, f);
    w.borrow_mut().run(3000);
    for (k, v) in counters(responder)? {
        if before.get(k) != Some(&v) {
            eprintln!("REPLAY counter {k}: {:?} -> {v}", before.get(k));
        }
    }
    Ok(())
}

fn counters(ctx: &Ctx) -> Result<HashMap<&'static str, u32>, Error> {
    Ok(ctx.engine_counters()?.into_iter().collect())
}

/// One message in flight.
struct Msg {
    pair: usize,
    slot: usize,
    /// 0 WRITE, 1 WRITE_IMM, 2 SEND, 3 SEND_IMM, 4 READ, 5 FETCH_ADD, 6 CMP_SWAP (`data`: the
    /// original value the model expects, little-endian)
    kind: u8,
    data: Vec<u8>,
    wr_id: u64,
    req_done: bool,
    recv_done: bool,
}

impl Msg {
    fn consumes_recv(&self) -> bool {
        (1..=3).contains(&self.kind)
    }
    /// READ and the atomics bring data back into the requester's destination slot.
    fn lands_at_requester(&self) -> bool {
        self.kind >= 4
    }
    fn imm(&self) -> Option<u32> {
        [1, 3]
            .contains(&self.kind)
            .then_some(self.wr_id as u32 ^ 0x5A5A_0000)
    }
}

/// What a run measured.
pub struct Outcome {
    /// Simulated cycles from the first post to the last completion.
    pub cycles: u64,
    /// Message bytes delivered.
    pub bytes: u64,
    /// Messages completed.
    pub messages: usize,
    /// Of them atomics (FETCH_ADD, CMP_SWAP), and CMP_SWAPs that swapped.
    pub atomics: usize,
    pub swaps: usize,
    /// Engine counters of NIC A and NIC B at the end.
    pub a: HashMap<&'static str, u32>,
    pub b: HashMap<&'static str, u32>,
    /// Link statistics, A -> B and B -> A.
    pub links: Vec<crate::eth::LinkStats>,
}

impl Outcome {
    /// Goodput in Gb/s at the nominal clock.
    pub fn gbps(&self) -> f64 {
        self.bytes as f64 * 8.0 / (self.cycles as f64 / CLOCK_HZ) / 1e9
    }
    /// A counter summed over both NICs.
    pub fn sum(&self, k: &str) -> u64 {
        self.a.get(k).copied().unwrap_or(0) as u64 + self.b.get(k).copied().unwrap_or(0) as u64
    }
}

/// A world whose links lose `loss` of the frames and duplicate, reorder and flip a bit in
/// half as many, in both directions; the receive side is the board's (an RX FIFO that drops a
/// frame it has no room for, no pause), so congestion loses frames too.
pub fn faulty(seed: u64, loss: f64) -> WorldConfig {
    let mut cfg = WorldConfig {
        seed,
        link: crate::eth::LinkConfig::board(),
        ..WorldConfig::default()
    };
    cfg.link.loss = loss;
    cfg.link.duplicate = loss / 2.0;
    cfg.link.reorder = loss / 2.0;
    cfg.link.bit_flip = loss / 2.0;
    cfg
}

/// The traffic of a run.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// QP pairs (even ones send A -> B, odd ones B -> A).
    pub qps: usize,
    /// Messages in all.
    pub messages: usize,
    /// Seed of the message kinds, lengths and bytes.
    pub seed: u64,
    /// Local ACK timeout exponent of every QP (4.096 us x 2^timeout).
    pub timeout: u8,
    /// Only RDMA WRITEs of `write_len` bytes (else the mixed kinds and [`LENS`]).
    pub write_only: Option<usize>,
    /// FETCH_ADD and CMP_SWAP in the mix (2 of 7 kinds; else 5 kinds, no atomics).
    pub atomics: bool,
}

impl Workload {
    /// The mixed workload (all seven kinds, atomics included): `messages` over `qps` pairs,
    /// timeout 6 (262 us: above the queueing delay of 16 x 16 messages in flight on a 100 Gb/s
    /// link).
    pub fn mixed(qps: usize, messages: usize, seed: u64) -> Workload {
        Workload {
            qps,
            messages,
            seed,
            timeout: 6,
            write_only: None,
            atomics: true,
        }
    }
}

/// Run a workload (see the module documentation); `progress` is called every 1000 messages
/// with the number done.
pub fn run(
    cfg: WorldConfig,
    wl: Workload,
    mut progress: impl FnMut(usize),
) -> Result<Outcome, Error> {
    let Workload {
        qps,
        messages: n,
        seed,
        timeout,
        write_only,
        atomics,
    } = wl;
    let w: SharedWorld = crate::world(cfg);
    let trace_qp: Option<u32> = std::env::var("RNIC_TRACE_QP")
        .ok()
        .and_then(|s| s.parse().ok());
    let mut trace: std::collections::VecDeque<String> = Default::default();
    // the traced QP's request frames by (link, PSN), the last 4096 PSNs of each link
    // (replayed into the responder on a failed completion)
    let mut reqs: HashMap<(usize, u32), Vec<u8>> = HashMap::new();
    let mut stat_at = 0u64;
    let (ca, cb) = crate::demo::contexts(&w)?;
    let a = Side::new(&ca, qps)?;
    let b = Side::new(&cb, qps)?;
    let mut pairs = Vec::new();
    for k in 0..qps {
        let (qa, qb) = (a.qp()?, b.qp()?);
        let mtu = [Mtu::Mtu1024, Mtu::Mtu256, Mtu::Mtu4096, Mtu::Mtu512][k % 4];
        let at = attr(mtu, timeout, 7, 7);
        let ea = Endpoint::from_bytes(&qa.endpoint()?.to_bytes())?;
        let eb = Endpoint::from_bytes(&qb.endpoint()?.to_bytes())?;
        qa.connect(&eb, &at)?;
        qb.connect(&ea, &at)?;
        pairs.push((qa, qb));
    }
    // the DMA audit runs every 1000 messages over what was written since, then drops those
    // records (a long run writes gigabytes)
    let audit = |w: &SharedWorld, from: [usize; 2]| -> Result<(), Error> {
        let mut wb = w.borrow_mut();
        for (i, s) in [&a, &b].iter().enumerate() {
            wb.audit_dma_writes(i, from[i], &s.allowed())
                .map_err(|e| Error::Check(format!("NIC {i}: {e}")))?;
            wb.nics[i].mem.audit.clear();
        }
        Ok(())
    };
    let mut marks = {
        let wb = w.borrow();
        [wb.nics[0].mem.audit.len(), wb.nics[1].mem.audit.len()]
    };
    let t0 = w.borrow().cycle;
    let mut next = vec![0usize; qps];
    let mut inflight: HashMap<u64, Msg> = HashMap::new();
    let mut per_pair = vec![0usize; qps];
    let per = n.div_ceil(qps);
    let (mut done, mut bytes) = (0usize, 0u64);
    let mut wc = vec![WorkCompletion::default(); 256];
    let mut last_progress = ca.now_ns()?;
    // the model of the atomic words: per pair (FETCH_ADD counter, CMP_SWAP word), in the
    // responder's atomic MR at pair * ATOMIC_WORDS; seeded start values
    let mut model: Vec<[u64; 2]> = (0..qps)
        .map(|k| {
            let h = (seed ^ 0xA70A_11C5 ^ k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            [h, h.rotate_left(29) ^ 0x5555]
        })
        .collect();
    for (k, m) in model.iter().enumerate() {
        let d = if k % 2 == 0 { &b } else { &a };
        d.atom.write(k * ATOMIC_WORDS, &m[0].to_le_bytes())?;
        d.atom.write(k * ATOMIC_WORDS + 8, &m[1].to_le_bytes())?;
    }
    let (mut n_atomic, mut n_swap) = (0usize, 0usize);
    while done < n {
        for k in 0..qps {
            while per_pair[k] < DEPTH && next[k] < per && done + inflight.len() < n {
                let i = next[k];
                next[k] += 1;
                let (s, d, qs, qd) = if k % 2 == 0 {
                    (&a, &b, &pairs[k].0, &pairs[k].1)
                } else {
                    (&b, &a, &pairs[k].1, &pairs[k].0)
                };
                let slot = k * DEPTH + i % DEPTH;
                let h = seed ^ ((k as u64) << 32) ^ i as u64;
                let mut len = LENS[(h.wrapping_mul(0x9E37_79B9) >> 7) as usize % LENS.len()];
                let mut kind = ((h >> 3) % if atomics { 7 } else { 5 }) as u8;
                if let Some(l) = write_only {
                    (kind, len) = (0, l.min(SLOT));
                }
                let mut m = Msg {
                    pair: k,
                    slot,
                    kind,
                    data: crate::demo::pattern(h, len),
                    wr_id: ((k as u64) << 40) | i as u64,
                    req_done: false,
                    recv_done: !(1..=3).contains(&kind),
                };
                if kind >= 5 {
                    // an atomic on the pair's word in the peer's atomic MR; the original
                    // value lands in the requester's destination slot
                    let remote_addr = d
                        .atom
                        .remote_addr(k * ATOMIC_WORDS + 8 * (kind == 6) as usize)?;
                    let rkey = d.atom.rkey();
                    let operand = crate::demo::pattern(h ^ 0xA7, 8);
                    let operand = u64::from_le_bytes(operand[..8].try_into().unwrap());
                    let op = if kind == 5 {
                        let orig = model[k][0];
                        model[k][0] = orig.wrapping_add(operand);
                        m.data = orig.to_le_bytes().to_vec();
                        SendOp::FetchAdd {
                            remote_addr,
                            rkey,
                            add: operand,
                        }
                    } else {
                        let orig = model[k][1];
                        // a bit of a multiplicative hash of h (h's own low bits follow the kind's)
                        let swaps = h.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> 63 == 0;
                        let compare = if swaps {
                            model[k][1] = operand;
                            n_swap += 1;
                            orig
                        } else {
                            orig ^ (1 << ((h >> 12) % 64))
                        };
                        m.data = orig.to_le_bytes().to_vec();
                        SendOp::CompareSwap {
                            remote_addr,
                            rkey,
                            compare,
                            swap: operand,
                        }
                    };
                    // not the expected value beforehand: an atomic that never lands shows
                    let orig = u64::from_le_bytes(m.data[..8].try_into().unwrap());
                    s.dst.write(slot * SLOT, &(!orig).to_le_bytes())?;
                    let wr = SendWr::new(m.wr_id, op).sge(s.dst.sge(slot * SLOT, 8)?);
                    qs.post_send(&[wr])?;
                    if trace_qp == Some(qs.qpn()) {
                        let now = w.borrow().cycle;
                        trace.push_back(format!("{now} POST atomic wr {:#x}", m.wr_id));
                    }
                    n_atomic += 1;
                    per_pair[k] += 1;
                    inflight.insert(m.wr_id, m);
                    continue;
                }
                if kind == 4 {
                    // READ: the requester s reads the peer's source slot into its own
                    // destination slot
                    d.src.write(slot * SLOT, &m.data)?;
                    let op = SendOp::RdmaRead {
                        remote_addr: d.src.remote_addr(slot * SLOT)?,
                        rkey: d.src.rkey(),
                    };
                    let mut wr = SendWr::new(m.wr_id, op);
                    if len > 0 {
                        wr = wr.sge(s.dst.sge(slot * SLOT, len)?);
                    }
                    qs.post_send(&[wr])?;
                    if trace_qp == Some(qs.qpn()) {
                        let now = w.borrow().cycle;
                        trace.push_back(format!("{now} POST READ wr {:#x}", m.wr_id));
                    }
                    per_pair[k] += 1;
                    inflight.insert(m.wr_id, m);
                    continue;
                }
                s.src.write(slot * SLOT, &m.data)?;
                let addr = d.dst.remote_addr(slot * SLOT)?;
                if m.consumes_recv() {
                    let sge = if kind != 1 {
                        Some(d.dst.sge(slot * SLOT, len)?)
                    } else {
                        None
                    };
                    qd.post_recv(&[RecvWr {
                        wr_id: m.wr_id,
                        sge,
                    }])?;
                }
                let rkey = d.dst.rkey();
                let op = match kind {
                    0 => SendOp::RdmaWrite {
                        remote_addr: addr,
                        rkey,
                    },
                    1 => SendOp::RdmaWriteWithImm {
                        remote_addr: addr,
                        rkey,
                        imm: m.imm().unwrap_or(0),
                    },
                    2 => SendOp::Send,
                    _ => SendOp::SendWithImm(m.imm().unwrap_or(0)),
                };
                let mut wr = SendWr::new(m.wr_id, op);
                if len > 0 {
                    wr = wr.sge(s.src.sge(slot * SLOT, len)?);
                }
                qs.post_send(&[wr])?;
                if trace_qp == Some(qs.qpn()) {
                    let now = w.borrow().cycle;
                    trace.push_back(format!("{now} POST kind {kind} wr {:#x}", m.wr_id));
                }
                per_pair[k] += 1;
                inflight.insert(m.wr_id, m);
            }
        }
        let mut got = 0;
        for (side, cq) in [(0usize, &a.cq), (1, &b.cq)] {
            let k = cq.poll(&mut wc)?;
            got += k;
            for c in &wc[..k] {
                if trace_qp == Some(c.qp_num) {
                    let now = w.borrow().cycle;
                    trace.push_back(format!(
                        "{now} CQE side {side} wr {:#x} {:?} {:?} len {}",
                        c.wr_id, c.opcode, c.status, c.byte_len
                    ));
                }
                let Some(m) = inflight.get_mut(&c.wr_id) else {
                    if trace_qp.is_some() {
                        for t in &trace {
                            eprintln!("TRACE {t}");
                        }
                    }
                    return Err(Error::Check(format!(
                        "completion for an unknown or finished WR: {c:?}"
                    )));
                };
                if c.status != WcStatus::Success && trace_qp.is_some() {
                    for t in &trace {
                        eprintln!("TRACE {t}");
                    }
                    if let Some((qa, qb)) = pairs.iter().find(|(qa, _)| qa.qpn() == c.qp_num) {
                        let (sa, sb) = (qa.query_device(), qb.query_device());
                        eprintln!("STATE A {sa:?}");
                        eprintln!("STATE B {sb:?}");
                        // which counter moves when the responder gets its expected PSN again
                        let (responder, rs) = if side == 0 { (&cb, sb) } else { (&ca, sa) };
                        if let Ok((_, r)) = rs {
                            replay(&w, responder, side, reqs.get(&(side, r.rq_psn)).cloned())?;
                        }
                    }
                }
                ensure!(
                    c.status == WcStatus::Success,
                    "{c:?} after {done} messages; A {:?} B {:?}",
                    counters(&ca)?,
                    counters(&cb)?
                );
                let sender = m.pair % 2;
                // the completion names the QP its WR was posted on (the pair's QP on this side)
                let own = if side == 0 {
                    pairs[m.pair].0.qpn()
                } else {
                    pairs[m.pair].1.qpn()
                };
                ensure!(
                    c.qp_num == own,
                    "completion of pair {}'s WR on QP {} (want {own}): {c:?}",
                    m.pair,
                    c.qp_num
                );
                if c.opcode.is_recv() {
                    ensure!(side != sender, "receive completion on the sender: {c:?}");
                    ensure!(!m.recv_done, "second receive completion: {c:?}");
                    ensure!(c.byte_len as usize == m.data.len(), "length: {c:?}");
                    ensure!(c.imm_data == m.imm(), "immediate: {c:?}");
                    let want = if m.kind == 1 {
                        WcOpcode::RecvRdmaWithImm
                    } else {
                        WcOpcode::Recv
                    };
                    ensure!(c.opcode == want, "opcode: {c:?}");
                    m.recv_done = true;
                } else {
                    ensure!(side == sender, "send completion on the receiver: {c:?}");
                    ensure!(!m.req_done, "second send completion: {c:?}");
                    let want = match m.kind {
                        0 | 1 => WcOpcode::RdmaWrite,
                        4 => WcOpcode::RdmaRead,
                        5 => WcOpcode::FetchAdd,
                        6 => WcOpcode::CompSwap,
                        _ => WcOpcode::Send,
                    };
                    ensure!(c.opcode == want, "opcode: {c:?}");
                    ensure!(c.byte_len as usize == m.data.len(), "length: {c:?}");
                    m.req_done = true;
                }
                if m.req_done && m.recv_done {
                    let Some(m) = inflight.remove(&c.wr_id) else {
                        continue;
                    };
                    // the destination holds the message exactly (WRITE data may land a
                    // little after the ACK that completed the requester); a READ's and an
                    // atomic's original value land in the requester's own destination slot
                    let d = if (m.pair % 2 == 0) != m.lands_at_requester() {
                        &b
                    } else {
                        &a
                    };
                    let mut buf = vec![0u8; m.data.len()];
                    let t = d.ctx.now_ns()?;
                    loop {
                        d.dst.read(m.slot * SLOT, &mut buf)?;
                        if buf == m.data {
                            break;
                        }
                        ensure!(
                            d.ctx.now_ns()? - t < 1_000_000,
                            "pair {} WR {:#x}: destination differs from the model",
                            m.pair,
                            m.wr_id
                        );
                        d.ctx.relax()?;
                    }
                    per_pair[m.pair] -= 1;
                    done += 1;
                    bytes += m.data.len() as u64;
                    if done.is_multiple_of(1000) {
                        audit(&w, marks)?;
                        marks = [0, 0];
                        progress(done);
                    }
                }
            }
        }
        let now = ca.now_ns()?;
        if got > 0 {
            last_progress = now;
        } else {
            ensure!(
                now - last_progress < 20_000_000,
                "no completion for 20 ms of device time: {done} of {n} done, {} in flight; \
                 A {:?} B {:?}",
                inflight.len(),
                counters(&ca)?,
                counters(&cb)?
            );
            ca.relax()?;
        }
        // debugging aid: RNIC_TRACE_QP=n keeps the last 600 lines (frames of QP n in either
        // direction, its RX FIFO drops, link statistics); a failed completion prints them and
        // both sides' QP state
        if let Some(q) = trace_qp {
            let now = w.borrow().cycle;
            if now / 10_000 != stat_at / 10_000 {
                stat_at = now;
                let wb = w.borrow();
                let st: Vec<String> = wb
                    .links
                    .iter()
                    .map(|l| {
                        format!(
                            "frames {} stall {} fifo_drops {} fifo {}",
                            l.stats.frames,
                            l.stats.rx_stall_cycles,
                            l.stats.rx_fifo_drops,
                            l.rx_fifo_beats()
                        )
                    })
                    .collect();
                trace.push_back(format!("{now} STAT {st:?}"));
            }
            for (l, link) in w.borrow_mut().links.iter_mut().enumerate() {
                link.log_rx_drops = true;
                for (t, f) in link.rx_dropped.drain(..) {
                    if let Some(p) = crate::frame::parse_roce(&f)
                        && p.dqpn == q
                    {
                        trace.push_back(format!(
                            "{t} link {l} op {:02x} psn {:06x} RX-FIFO-FULL drop",
                            p.opcode, p.psn
                        ));
                    }
                }
            }
            for (l, f) in w.borrow().wire.iter() {
                if let Some(p) = crate::frame::parse_roce(&f.data)
                    && p.dqpn == q
                {
                    if p.opcode < rnic_abi::roce::opcode::READ_RESPONSE_FIRST {
                        reqs.insert((*l, p.psn), f.data.clone());
                        reqs.remove(&(*l, p.psn.wrapping_sub(4096) & 0xFF_FFFF));
                    }
                    let syn = if p.opcode == 0x11
                        || (0x0D..=0x10).contains(&p.opcode) && p.ext.len() >= 4
                    {
                        format!(" aeth {:02x}", p.ext[0])
                    } else {
                        String::new()
                    };
                    trace.push_back(format!(
                        "{} link {l} op {:02x} psn {:06x}{}{syn} len {}{} {}",
                        f.sent_at,
                        p.opcode,
                        p.psn,
                        if p.ackreq { " A" } else { "" },
                        p.payload.len(),
                        if crate::fuzz::icrc_ok(&f.data) {
                            ""
                        } else {
                            " BAD-ICRC"
                        },
                        f.fault
                    ));
                }
            }
            while trace.len() > 600 {
                trace.pop_front();
            }
        }
        // the wire record grows with every frame: keep memory flat on long runs
        w.borrow_mut().wire.clear();
    }
    let cycles = w.borrow().cycle - t0;
    audit(&w, marks)?;
    // every pair's atomic words hold the model's final values
    for (k, want) in model.iter().enumerate() {
        let d = if k % 2 == 0 { &b } else { &a };
        let mut got = [0u8; ATOMIC_WORDS];
        d.atom.read(k * ATOMIC_WORDS, &mut got)?;
        for (j, what) in ["FETCH_ADD counter", "CMP_SWAP word"].iter().enumerate() {
            let v = u64::from_le_bytes(got[8 * j..8 * j + 8].try_into().unwrap());
            ensure!(
                v == want[j],
                "pair {k}: {what} = {v:#x}, the model says {:#x}",
                want[j]
            );
        }
    }
    // nothing completes afterwards (no late duplicate completions)
    for _ in 0..20_000 {
        ca.relax()?;
    }
    ensure!(a.cq.poll(&mut wc)? == 0, "late completion on A");
    ensure!(b.cq.poll(&mut wc)? == 0, "late completion on B");
    let links = w.borrow().links.iter().map(|l| l.stats).collect();
    Ok(Outcome {
        cycles,
        bytes,
        messages: done,
        atomics: n_atomic,
        swaps: n_swap,
        a: counters(&ca)?,
        b: counters(&cb)?,
        links,
    })
}

/// One line per NIC with the retransmission counters.
pub fn report(name: &str, o: &Outcome) -> String {
    let keys = [
        "retx_psn",
        "restarts",
        "timeouts",
        "nak_seq_rx",
        "rnr_rx",
        "nak_seq",
        "rx_dup",
        "drop_icrc",
        "retry_exc",
        "rx_read",
        "rd_rsp",
        "rd_gap",
        "rd_drop",
        "rx_atomic",
        "atom_dup",
        "atom_miss",
    ];
    let f = |c: &HashMap<&str, u32>| {
        keys.iter()
            .map(|k| format!("{k}={}", c.get(k).copied().unwrap_or(0)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "{name}: {} messages ({} atomics, {} CMP_SWAPs swapped), {} cycles, {} bytes ({:.2} Gb/s at {} MHz)\n  A: {}\n  B: {}",
        o.messages,
        o.atomics,
        o.swaps,
        o.cycles,
        o.bytes,
        o.gbps(),
        CLOCK_HZ / 1e6,
        f(&o.a),
        f(&o.b)
    )
}
