//! Reliable RC over a faulty fabric: the engine's own retransmission (go-back-N on sequence
//! NAKs and ACK timeouts, RNR waits), with two simulated NICs driven through the verbs API.
//! Every message must complete successfully exactly once, with the destination memory equal to
//! the model byte for byte and nothing written outside the MRs and CQ rings.

use rnic::verbs::{
    AccessFlags, CompletionQueue, ConnectAttr, Context, MemoryRegion, Mtu, ProtectionDomain,
    QpCaps, QueuePair, RecvWr, RtsAttr, SendOp, SendWr, WcOpcode, WcStatus, WorkCompletion,
};
use rnic_sim::world::CLOCK_HZ;
use rnic_sim::{SimNic, WorldConfig};
use rnic_tests::{audit_dma_writes, audit_mark, connect_qps, pattern, verbs_pair};
use std::collections::HashMap;

type Ctx = Context<SimNic>;

const SLOT: usize = 16 * 1024;
/// Messages in flight per QP (= destination slots per QP).
const DEPTH: usize = 16;
const LENS: [usize; 14] = [
    0, 1, 63, 64, 65, 255, 256, 257, 1000, 4095, 4096, 4097, 9000, 16384,
];

struct Side<'c> {
    ctx: &'c Ctx,
    pd: ProtectionDomain<'c, SimNic>,
    cq: CompletionQueue<'c, SimNic>,
    src: MemoryRegion<'c, SimNic>,
    dst: MemoryRegion<'c, SimNic>,
}

impl<'c> Side<'c> {
    fn new(ctx: &'c Ctx, qps: usize) -> Side<'c> {
        let pd = ctx.alloc_pd().expect("pd");
        let cq = ctx.create_cq(4096).expect("cq");
        let bytes = qps * DEPTH * SLOT;
        let sbuf = ctx.alloc_buf(bytes).expect("src");
        let dbuf = ctx.alloc_buf(bytes).expect("dst");
        let src = pd.reg_mr(&sbuf, AccessFlags::empty()).expect("src mr");
        let dst = pd
            .reg_mr(&dbuf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE)
            .expect("dst mr");
        Side {
            ctx,
            pd,
            cq,
            src,
            dst,
        }
    }
    fn qp(&self) -> QueuePair<'_, SimNic> {
        let caps = QpCaps {
            max_send_wr: 64,
            max_recv_wr: 64,
            ..QpCaps::default()
        };
        self.pd.create_qp(&self.cq, &self.cq, caps).expect("qp")
    }
    fn allowed(&self) -> Vec<(u64, usize)> {
        let r = self.cq.ring();
        vec![(self.dst.iova(), self.dst.len()), (r.iova(), r.len())]
    }
}

fn attr(mtu: Mtu, timeout: u8, retry_cnt: u8, rnr_retry: u8) -> ConnectAttr {
    ConnectAttr {
        access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
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

fn counters(ctx: &Ctx) -> HashMap<&'static str, u32> {
    ctx.engine_counters()
        .expect("counters")
        .into_iter()
        .collect()
}

/// One message in flight: its QP pair, slot, kind and bytes.
#[derive(Clone)]
struct Msg {
    pair: usize,
    slot: usize,
    kind: u8,
    data: Vec<u8>,
    wr_id: u64,
    req_done: bool,
    recv_done: bool,
}

impl Msg {
    fn consumes_recv(&self) -> bool {
        self.kind != 0 // 0 WRITE, 1 WRITE_IMM, 2 SEND, 3 SEND_IMM
    }
    fn imm(&self) -> Option<u32> {
        [1, 3]
            .contains(&self.kind)
            .then_some(self.wr_id as u32 ^ 0x5A5A_0000)
    }
}

/// What a lossy run measured.
struct Outcome {
    cycles: u64,
    bytes: u64,
    a: HashMap<&'static str, u32>,
    b: HashMap<&'static str, u32>,
}

/// `n` messages of mixed kinds and sizes over `qps` QP pairs (even pairs A -> B, odd B -> A),
/// at most DEPTH in flight per pair; checks every completion and every destination byte.
fn lossy_run(cfg: WorldConfig, qps: usize, n: usize, seed: u64) -> Outcome {
    let (w, ca, cb) = verbs_pair(cfg);
    let a = Side::new(&ca, qps);
    let b = Side::new(&cb, qps);
    let pairs: Vec<(QueuePair<SimNic>, QueuePair<SimNic>)> =
        (0..qps).map(|_| (a.qp(), b.qp())).collect();
    for (k, (qa, qb)) in pairs.iter().enumerate() {
        let mtu = [Mtu::Mtu1024, Mtu::Mtu256, Mtu::Mtu4096, Mtu::Mtu512][k % 4];
        connect_qps(qa, qb, &attr(mtu, 4, 7, 7)).expect("connect");
    }
    let marks = (audit_mark(&w, 0), audit_mark(&w, 1));
    let t0 = w.borrow().cycle;
    let mut next = vec![0usize; qps];
    let mut inflight: HashMap<u64, Msg> = HashMap::new();
    let mut per_pair = vec![0usize; qps];
    let per = n.div_ceil(qps);
    let mut done = 0usize;
    let mut bytes = 0u64;
    let mut wc = vec![WorkCompletion::default(); 256];
    let mut last_progress = ca.now_ns().unwrap();
    while done < n {
        // post while there is room
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
                let h = seed ^ (k as u64) << 32 ^ i as u64;
                let len = LENS[(h.wrapping_mul(0x9E37_79B9) >> 7) as usize % LENS.len()];
                let kind = ((h >> 3) % 4) as u8;
                let m = Msg {
                    pair: k,
                    slot,
                    kind,
                    data: pattern(h, len),
                    wr_id: (k as u64) << 40 | i as u64,
                    req_done: false,
                    recv_done: kind == 0,
                };
                s.src.write(slot * SLOT, &m.data).unwrap();
                let addr = d.dst.remote_addr(slot * SLOT).unwrap();
                if m.consumes_recv() {
                    let sge = (kind != 1).then(|| d.dst.sge(slot * SLOT, len).unwrap());
                    qd.post_recv(&[RecvWr {
                        wr_id: m.wr_id,
                        sge,
                    }])
                    .unwrap();
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
                        imm: m.imm().unwrap(),
                    },
                    2 => SendOp::Send,
                    _ => SendOp::SendWithImm(m.imm().unwrap()),
                };
                let mut wr = SendWr::new(m.wr_id, op);
                if len > 0 {
                    wr = wr.sge(s.src.sge(slot * SLOT, len).unwrap());
                }
                qs.post_send(&[wr]).unwrap();
                per_pair[k] += 1;
                inflight.insert(m.wr_id, m);
            }
        }
        // completions of both sides
        let mut got = 0;
        for (side, cq) in [(0usize, &a.cq), (1, &b.cq)] {
            let k = cq.poll(&mut wc).unwrap();
            got += k;
            for c in &wc[..k] {
                let m = inflight
                    .get_mut(&c.wr_id)
                    .unwrap_or_else(|| panic!("completion for an unknown or finished WR: {c:?}"));
                assert_eq!(c.status, WcStatus::Success, "{c:?}");
                let sender = if m.pair % 2 == 0 { 0 } else { 1 };
                if c.opcode.is_recv() {
                    assert_ne!(side, sender, "receive completion on the sender: {c:?}");
                    assert!(!m.recv_done, "second receive completion: {c:?}");
                    assert_eq!(c.byte_len as usize, m.data.len(), "{c:?}");
                    assert_eq!(c.imm_data, m.imm(), "{c:?}");
                    let want = if m.kind == 1 {
                        WcOpcode::RecvRdmaWithImm
                    } else {
                        WcOpcode::Recv
                    };
                    assert_eq!(c.opcode, want);
                    m.recv_done = true;
                } else {
                    assert_eq!(side, sender, "send completion on the receiver: {c:?}");
                    assert!(!m.req_done, "second send completion: {c:?}");
                    m.req_done = true;
                }
                if m.req_done && m.recv_done {
                    let m = inflight.remove(&c.wr_id).unwrap();
                    // the destination holds the message exactly
                    let d = if m.pair % 2 == 0 { &b } else { &a };
                    let mut buf = vec![0u8; m.data.len()];
                    let t = d.ctx.now_ns().unwrap();
                    loop {
                        d.dst.read(m.slot * SLOT, &mut buf).unwrap();
                        if buf == m.data {
                            break;
                        }
                        assert!(
                            d.ctx.now_ns().unwrap() - t < 1_000_000,
                            "pair {} WR {:#x}: destination differs",
                            m.pair,
                            m.wr_id
                        );
                        d.ctx.relax().unwrap();
                    }
                    per_pair[m.pair] -= 1;
                    done += 1;
                    bytes += m.data.len() as u64;
                }
            }
        }
        let now = ca.now_ns().unwrap();
        if got > 0 {
            last_progress = now;
        } else {
            assert!(
                now - last_progress < 20_000_000,
                "no completion for 20 ms of device time: {done} of {n} done, {} in flight; \
                 A {:?} B {:?}",
                inflight.len(),
                counters(&ca),
                counters(&cb)
            );
            ca.relax().unwrap();
        }
        // the wire record grows with every frame: keep the memory flat on long runs
        w.borrow_mut().wire.clear();
    }
    let cycles = w.borrow().cycle - t0;
    for (i, s) in [&a, &b].iter().enumerate() {
        let m = if i == 0 { marks.0 } else { marks.1 };
        audit_dma_writes(&w, i, m, &s.allowed()).unwrap_or_else(|e| panic!("NIC {i}: {e}"));
    }
    // nothing else completes afterwards (no late duplicate completions)
    for _ in 0..20_000 {
        ca.relax().unwrap();
    }
    assert_eq!(a.cq.poll(&mut wc).unwrap(), 0, "late completion on A");
    assert_eq!(b.cq.poll(&mut wc).unwrap(), 0, "late completion on B");
    Outcome {
        cycles,
        bytes,
        a: counters(&ca),
        b: counters(&cb),
    }
}

fn faulty(seed: u64, loss: f64) -> WorldConfig {
    let mut cfg = WorldConfig {
        seed,
        ..WorldConfig::default()
    };
    cfg.link.loss = loss;
    cfg.link.duplicate = loss / 2.0;
    cfg.link.reorder = loss / 2.0;
    cfg.link.bit_flip = loss / 2.0;
    cfg
}

fn report(name: &str, o: &Outcome) {
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
    ];
    let f = |c: &HashMap<&str, u32>| {
        keys.iter()
            .map(|k| format!("{k}={}", c.get(k).copied().unwrap_or(0)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "{name}: {} cycles, {} bytes ({:.2} Gb/s at {} MHz)\n  A: {}\n  B: {}",
        o.cycles,
        o.bytes,
        o.bytes as f64 * 8.0 / (o.cycles as f64 / CLOCK_HZ) / 1e9,
        CLOCK_HZ / 1e6,
        f(&o.a),
        f(&o.b)
    );
}

/// Loss, duplication, reordering and bit flips in both directions on 16 QP pairs running in
/// both directions at once: every message completes once, memory equals the model.
#[test]
fn lossy_fabric_mixed_traffic_completes_exactly_once() {
    let o = lossy_run(faulty(11, 0.01), 16, 10_000, 7);
    report("1% loss", &o);
    let sum = |k: &str| o.a.get(k).copied().unwrap_or(0) + o.b.get(k).copied().unwrap_or(0);
    assert!(sum("restarts") > 0, "the faults caused no retransmission");
    assert_eq!(sum("retry_exc"), 0);
}

/// A SEND posted before the peer's receive waits out RNR NAKs (rnr_retry 7) and completes
/// once the receive is posted; with rnr_retry 0 it ends in RNR_RETRY_EXC_ERR.
#[test]
fn rnr_retry_waits_for_the_receive() {
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let a = Side::new(&ca, 2);
    let b = Side::new(&cb, 2);
    let (qa, qb) = (a.qp(), b.qp());
    connect_qps(&qa, &qb, &attr(Mtu::Mtu1024, 10, 7, 7)).expect("connect");
    let marks = (audit_mark(&w, 0), audit_mark(&w, 1));
    let data = pattern(5, 3000);
    a.src.write(0, &data).unwrap();
    qa.post_send(&[SendWr::new(1, SendOp::Send).sge(a.src.sge(0, 3000).unwrap())])
        .unwrap();
    // 200 us of device time without a receive: RNR NAKs every 10 us (min_rnr_timer 1)
    let t0 = ca.now_ns().unwrap();
    while ca.now_ns().unwrap() - t0 < 200_000 {
        ca.relax().unwrap();
    }
    let mut wc = vec![WorkCompletion::default(); 4];
    assert_eq!(
        a.cq.poll(&mut wc).unwrap(),
        0,
        "completed without a receive"
    );
    let rnr = counters(&ca)["rnr_rx"];
    assert!(rnr >= 5, "only {rnr} RNR NAKs in 200 us");
    assert_eq!(counters(&cb)["nak_rnr"], rnr);
    qb.post_recv(&[RecvWr::new(9, b.dst.sge(0, 4096).unwrap())])
        .unwrap();
    let wa = a.cq.wait(1, 2_000_000).expect("send completion");
    assert_eq!((wa[0].wr_id, wa[0].status), (1, WcStatus::Success));
    let wb = b.cq.wait(1, 2_000_000).expect("recv completion");
    assert_eq!((wb[0].wr_id, wb[0].byte_len), (9, 3000));
    let mut got = vec![0u8; 3000];
    b.dst.read(0, &mut got).unwrap();
    assert_eq!(got, data);

    // rnr_retry 0: the first RNR NAK ends it
    let (qa2, qb2) = (a.qp(), b.qp());
    connect_qps(&qa2, &qb2, &attr(Mtu::Mtu1024, 10, 7, 0)).expect("connect");
    qa2.post_send(&[SendWr::new(2, SendOp::Send).sge(a.src.sge(0, 64).unwrap())])
        .unwrap();
    let wa = a.cq.wait(1, 2_000_000).expect("error completion");
    assert_eq!((wa[0].wr_id, wa[0].status), (2, WcStatus::RnrRetryExcErr));
    for (i, s) in [&a, &b].iter().enumerate() {
        let m = if i == 0 { marks.0 } else { marks.1 };
        audit_dma_writes(&w, i, m, &s.allowed()).unwrap_or_else(|e| panic!("NIC {i}: {e}"));
    }
}

/// A peer that stops answering: RETRY_EXC_ERR after retry_cnt retransmissions, each after the
/// local ACK timeout (4.096 us x 2^timeout), at the time IBTA gives in simulated cycles.
#[test]
fn silent_peer_ends_in_retry_exc_err_on_time() {
    for (timeout, retry_cnt) in [(4u8, 3u8), (6, 1), (5, 0)] {
        let (w, ca, cb) = verbs_pair(WorldConfig::default());
        let a = Side::new(&ca, 1);
        let b = Side::new(&cb, 1);
        let (qa, qb) = (a.qp(), b.qp());
        connect_qps(&qa, &qb, &attr(Mtu::Mtu1024, timeout, retry_cnt, 7)).expect("connect");
        // the peer's QP goes away: its packets are dropped unanswered
        qb.modify_to_err().unwrap();
        let t0 = w.borrow().cycle;
        qa.post_send(&[SendWr::new(
            7,
            SendOp::RdmaWrite {
                remote_addr: b.dst.remote_addr(0).unwrap(),
                rkey: b.dst.rkey(),
            },
        )
        .sge(a.src.sge(0, 5000).unwrap())])
            .unwrap();
        let wa = a.cq.wait(1, 50_000_000).expect("error completion");
        let t = w.borrow().cycle - t0;
        assert_eq!((wa[0].wr_id, wa[0].status), (7, WcStatus::RetryExcErr));
        let unit = rnic_abi::roce::ack_timeout_cycles(timeout, rnic_abi::params::DEFAULT.clock_khz)
            .unwrap();
        let want = unit * (retry_cnt as u64 + 1);
        // each timeout fires within one timer scan (num_qps cycles) plus the pipeline
        let slack = (retry_cnt as u64 + 1) * (rnic_abi::params::DEFAULT.num_qps as u64 + 200) + 500;
        println!(
            "timeout {timeout} retry_cnt {retry_cnt}: RETRY_EXC_ERR after {t} cycles (IBTA {want})"
        );
        assert!(
            t >= want && t <= want + slack,
            "RETRY_EXC_ERR after {t} cycles, want {want}..{}",
            want + slack
        );
        let c = counters(&ca);
        assert_eq!(c["timeouts"], retry_cnt as u32 + 1);
        assert_eq!(c["restarts"], retry_cnt as u32);
        assert_eq!(c["retry_exc"], 1);
    }
}
