//! RDMA atomics end to end: two simulated NICs driven through the verbs API (`rnic::verbs`).
//! NIC A runs ATOMIC COMPARE & SWAP (succeeding and failing) and FETCH & ADD on little-endian
//! u64 words in NIC B's memory at every path MTU, at the start, middle and end of the MR, into
//! aligned and unaligned local buffers; the original value is checked in the local buffer (the
//! guard bytes around it untouched), the remote word and its neighbours after the operation,
//! the CQE (opcode, byte_len 8, status) and the wire field by field against IBTA 9.3.4/9.3.6
//! (one request with AtomicETH = the WQE's operands, one ATOMIC ACKNOWLEDGE with AETH and
//! AtomicAckETH = the original value, consecutive PSNs). Errors: a misaligned remote address
//! is NAKed as an invalid request (REM_INV_REQ_ERR), a wrong rkey, bounds, an MR or QP without
//! REMOTE_ATOMIC as a remote access error (REM_ACCESS_ERR), memory untouched. Atomicity: 8 QP
//! pairs FETCH_ADD one counter word per NIC from both directions at once, and the originals
//! returned are exactly the prefix sums of one serial order. Atomics mixed with READ, WRITE
//! and SEND on 8 QP pairs complete in order; a QP with max_rd_atomic 1 completes 64 posted
//! atomics with never more than one outstanding; duplicates fed into the responder are
//! answered from the saved results without executing again; the frames pass the oracles. The
//! host-memory audit checks that neither device wrote outside its writable MRs and CQ rings.

use rnic::verbs::{
    AccessFlags, CompletionQueue, ConnectAttr, Context, MemoryRegion, Mtu, ProtectionDomain,
    QpCaps, QueuePair, RecvWr, RtsAttr, SendOp, SendWr, WcOpcode, WcStatus, WorkCompletion,
};
use rnic_abi::queue::aeth;
use rnic_abi::roce::{PSN_MASK, opcode as op};
use rnic_sim::frame::AtomicEth;
use rnic_sim::{SharedWorld, SimNic, WorldConfig};
use rnic_tests::{
    audit_dma_writes, configs, connect_qps, counters, marks, pattern, roce_sent, verbs_pair,
    wire_mark,
};
use std::collections::HashMap;

/// Device-time budget for one wait (16 ms = 4M cycles).
const WAIT_NS: u64 = 16_000_000;
const GUARD: usize = 16;
const FILL: u8 = 0xEE;
/// Bytes of the atomic target MR.
const ATOM_BYTES: usize = 64 * 1024;

type Ctx = Context<SimNic>;

/// One NIC's resources: `atom` the words the peer's atomics operate on (REMOTE_ATOMIC),
/// `local` where this NIC's originals (and READ data, and the peer's WRITEs and SENDs) land
/// (LOCAL_WRITE | REMOTE_WRITE, no REMOTE_ATOMIC), `src` what the peer may READ and what this
/// NIC's WRITEs and SENDs send (REMOTE_READ, never written by the device).
struct Side<'c> {
    ctx: &'c Ctx,
    atom: MemoryRegion<'c, SimNic>,
    local: MemoryRegion<'c, SimNic>,
    src: MemoryRegion<'c, SimNic>,
    cq: CompletionQueue<'c, SimNic>,
    pd: ProtectionDomain<'c, SimNic>,
}

impl<'c> Side<'c> {
    fn new(ctx: &'c Ctx, bytes: usize, cq_entries: u32) -> Side<'c> {
        let pd = ctx.alloc_pd().expect("pd");
        let cq = ctx.create_cq(cq_entries).expect("cq");
        let atom = pd
            .reg_mr(
                &ctx.alloc_buf(ATOM_BYTES).expect("atom buf"),
                AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_ATOMIC,
            )
            .expect("atom mr");
        let local = pd
            .reg_mr(
                &ctx.alloc_buf(bytes).expect("local buf"),
                AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            )
            .expect("local mr");
        let src = pd
            .reg_mr(
                &ctx.alloc_buf(bytes).expect("src buf"),
                AccessFlags::REMOTE_READ,
            )
            .expect("src mr");
        Side {
            ctx,
            atom,
            local,
            src,
            cq,
            pd,
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
        vec![
            (self.atom.iova(), self.atom.len()),
            (self.local.iova(), self.local.len()),
            (r.iova(), r.len()),
        ]
    }

    fn word(&self, off: usize) -> u64 {
        let mut b = [0u8; 8];
        self.atom.read(off, &mut b).unwrap();
        u64::from_le_bytes(b)
    }
}

fn attr(mtu: Mtu) -> ConnectAttr {
    ConnectAttr {
        access: AccessFlags::LOCAL_WRITE
            | AccessFlags::REMOTE_WRITE
            | AccessFlags::REMOTE_READ
            | AccessFlags::REMOTE_ATOMIC,
        path_mtu: mtu,
        ..ConnectAttr::default()
    }
}

/// A QP on each side, connected at MTU 1024 with A's `max_rd_atomic` at `limit`.
fn limited_qps<'s>(
    a: &'s Side,
    b: &'s Side,
    limit: u8,
) -> (QueuePair<'s, SimNic>, QueuePair<'s, SimNic>) {
    let (qa, qb) = (a.qp(), b.qp());
    let mut at = attr(Mtu::Mtu1024);
    at.rts = RtsAttr {
        max_rd_atomic: limit,
        ..RtsAttr::default()
    };
    connect_qps(&qa, &qb, &at).expect("connect");
    (qa, qb)
}

fn wait_wc(
    a: &Side,
    b: &Side,
    cq: &CompletionQueue<SimNic>,
    n: usize,
    what: &str,
) -> Vec<WorkCompletion> {
    match cq.wait(n, WAIT_NS) {
        Ok(w) => w,
        Err(e) => panic!(
            "{what}: waiting for {n} completions: {e}\nA: {}\nB: {}",
            counters(a.ctx),
            counters(b.ctx)
        ),
    }
}

fn counter(ctx: &Ctx, name: &str) -> u32 {
    ctx.engine_counters()
        .unwrap()
        .into_iter()
        .find(|x| x.0 == name)
        .unwrap_or_else(|| panic!("no counter {name}"))
        .1
}

fn audit(w: &SharedWorld, marks: (usize, usize), a: &Side, b: &Side, what: &str) {
    for (nic, mark, s) in [(0, marks.0, a), (1, marks.1, b)] {
        if let Err(e) = audit_dma_writes(w, nic, mark, &s.allowed()) {
            panic!("{what}: {e}");
        }
        for (name, v) in s.ctx.engine_counters().unwrap() {
            let never = [
                "db_bad",
                "drop_icrc",
                "drop_parse",
                "cq_overflow",
                "dma_bus_err",
            ];
            assert!(
                !never.contains(&name) || v == 0,
                "{what}: NIC {nic} counter {name} = {v}"
            );
        }
    }
}

/// What one atomic does: its operation, what it must return and leave behind.
#[derive(Debug, Clone, Copy)]
struct Atomic {
    op: SendOp,
    /// The value at the remote address before.
    before: u64,
    /// ... and after.
    after: u64,
}

impl Atomic {
    fn opcode(&self) -> WcOpcode {
        match self.op {
            SendOp::CompareSwap { .. } => WcOpcode::CompSwap,
            _ => WcOpcode::FetchAdd,
        }
    }
    /// The AtomicETH the request must carry (FETCH_ADD: compare 0, as the WQE's).
    fn eth(&self) -> AtomicEth {
        match self.op {
            SendOp::CompareSwap {
                remote_addr,
                rkey,
                compare,
                swap,
            } => AtomicEth {
                va: remote_addr,
                rkey,
                swap_add: swap,
                compare,
            },
            SendOp::FetchAdd {
                remote_addr,
                rkey,
                add,
            } => AtomicEth {
                va: remote_addr,
                rkey,
                swap_add: add,
                compare: 0,
            },
            _ => unreachable!(),
        }
    }
}

/// The three kinds on the word at `off` of `b.atom` holding `before`: CMP_SWAP that swaps,
/// CMP_SWAP that does not, FETCH_ADD (wrapping past 2^64 for some values).
fn kinds(b: &Side, off: usize, before: u64, seed: u64) -> [Atomic; 3] {
    let remote_addr = b.atom.remote_addr(off).unwrap();
    let rkey = b.atom.rkey();
    let v = u64::from_le_bytes(pattern(seed ^ 0x5EED, 8)[..8].try_into().unwrap());
    [
        Atomic {
            op: SendOp::CompareSwap {
                remote_addr,
                rkey,
                compare: before,
                swap: v,
            },
            before,
            after: v,
        },
        Atomic {
            op: SendOp::CompareSwap {
                remote_addr,
                rkey,
                compare: before ^ (1 << (seed % 64)),
                swap: v,
            },
            before,
            after: before,
        },
        Atomic {
            op: SendOp::FetchAdd {
                remote_addr,
                rkey,
                add: v,
            },
            before,
            after: before.wrapping_add(v),
        },
    ]
}

/// The request A sent and the ATOMIC ACKNOWLEDGE B sent since `since`: exactly one each, the
/// request's AtomicETH = the WQE's operands, the ACK's PSN = the request's, AETH ACK, the
/// AtomicAckETH = the original value, AETH MSN = `msn` (the responder's messages on this QP so
/// far, this one included). Returns the request's PSN.
fn check_wire(w: &SharedWorld, since: usize, at: &Atomic, msn: u32, what: &str) -> u32 {
    let reqs = roce_sent(w, 0, since);
    assert_eq!(reqs.len(), 1, "{what}: packets sent by A: {reqs:?}");
    let r = &reqs[0];
    let want_op = match at.op {
        SendOp::CompareSwap { .. } => op::COMPARE_SWAP,
        _ => op::FETCH_ADD,
    };
    assert_eq!(r.opcode, want_op, "{what}: request opcode");
    assert!(r.ackreq, "{what}: request AckReq");
    assert!(r.payload.is_empty(), "{what}: request payload");
    assert_eq!(r.ext.len(), 28, "{what}: AtomicETH length");
    assert_eq!(r.atomic_eth(), Some(at.eth()), "{what}: AtomicETH");
    let rsp = roce_sent(w, 1, since);
    assert_eq!(rsp.len(), 1, "{what}: packets sent by B: {rsp:?}");
    let k = &rsp[0];
    assert_eq!(k.opcode, op::ATOMIC_ACKNOWLEDGE, "{what}: response opcode");
    assert_eq!(k.psn, r.psn, "{what}: ATOMIC ACKNOWLEDGE PSN");
    assert_eq!(k.ext.len(), 12, "{what}: AETH + AtomicAckETH");
    assert!(k.payload.is_empty(), "{what}: response payload");
    let a = k.aeth().expect("AETH");
    assert_eq!(a.syndrome, aeth::ACK, "{what}: AETH syndrome");
    assert_eq!(a.msn, msn, "{what}: AETH MSN");
    assert_eq!(k.atomic_orig(), Some(at.before), "{what}: AtomicAckETH");
    r.psn
}

/// Every kind at every path MTU, at the start, middle and end of the MR, into an aligned and
/// an unaligned local buffer, in both configurations (plain, and random idle/backpressure on
/// every interface the world drives).
#[test]
fn atomics_all_kinds_mtus_and_places() {
    for (name, cfg) in configs() {
        let (w, ca, cb) = verbs_pair(cfg);
        let a = Side::new(&ca, 64 * 1024, 64);
        let b = Side::new(&cb, 64 * 1024, 64);
        let qps: Vec<_> = Mtu::ALL
            .iter()
            .map(|&m| {
                let (qa, qb) = (a.qp(), b.qp());
                connect_qps(&qa, &qb, &attr(m)).expect("connect");
                (m, qa, qb)
            })
            .collect();
        let m0 = marks(&w);
        // the whole target MR holds a pattern: only the operated word may change
        let mut image = pattern(99, ATOM_BYTES);
        b.atom.write(0, &image).unwrap();
        let mut seed = 1u64;
        let mut n = 0;
        for (mtu, qa, _qb) in &qps {
            let mut psn = None;
            let mut msn = 0;
            for place in [0, ATOM_BYTES / 2 + 8, ATOM_BYTES - 8] {
                for local_off in [64usize, 64 * 3 + 5] {
                    for kind in 0..3 {
                        // CMP_SWAP that swaps, one that does not, FETCH_ADD, each on the
                        // word's current value
                        let before =
                            u64::from_le_bytes(image[place..place + 8].try_into().unwrap());
                        let at = kinds(&b, place, before, seed)[kind];
                        let what = format!(
                            "{name}: {:?} (kind {kind}) at MTU {}, remote offset {place}, local offset {local_off}",
                            at.opcode(),
                            mtu.bytes()
                        );
                        a.local
                            .write(local_off - GUARD, &[FILL; 8 + 2 * GUARD])
                            .unwrap();
                        let since = wire_mark(&w);
                        let wr_id = 0xA70_0000 + seed;
                        qa.post_send(&[
                            SendWr::new(wr_id, at.op).sge(a.local.sge(local_off, 8).unwrap())
                        ])
                        .expect("post atomic");
                        let wc = wait_wc(&a, &b, &a.cq, 1, &what);
                        assert_eq!(
                            wc[0],
                            WorkCompletion {
                                wr_id,
                                status: WcStatus::Success,
                                opcode: at.opcode(),
                                byte_len: 8,
                                imm_data: None,
                                qp_num: qa.qpn(),
                                src_qp: wc[0].src_qp,
                                vendor_err: 0,
                            },
                            "{what}: requester CQE"
                        );
                        let mut got = [0u8; 8 + 2 * GUARD];
                        a.local.read(local_off - GUARD, &mut got).unwrap();
                        assert_eq!(
                            got[GUARD..GUARD + 8],
                            at.before.to_le_bytes(),
                            "{what}: original value in the local buffer"
                        );
                        assert!(
                            got[..GUARD]
                                .iter()
                                .chain(&got[GUARD + 8..])
                                .all(|&x| x == FILL),
                            "{what}: guard bytes written: {got:02x?}"
                        );
                        image[place..place + 8].copy_from_slice(&at.after.to_le_bytes());
                        let mut now = vec![0u8; ATOM_BYTES];
                        b.atom.read(0, &mut now).unwrap();
                        assert_eq!(b.word(place), at.after, "{what}: remote word after");
                        assert!(now == image, "{what}: bytes around the remote word changed");
                        msn += 1;
                        let p = check_wire(&w, since, &at, msn, &what);
                        if let Some(prev) = psn {
                            assert_eq!(p, (prev + 1) & PSN_MASK, "{what}: consecutive PSNs");
                        }
                        psn = Some(p);
                        assert_eq!(qa.outstanding().unwrap(), (0, 0), "{what}: queue");
                        seed += 1;
                        n += 1;
                    }
                }
            }
        }
        // the responder completes nothing for an atomic
        let mut wc = [WorkCompletion::default(); 4];
        assert_eq!(b.cq.poll(&mut wc).unwrap(), 0, "{name}: responder CQEs");
        assert_eq!(counter(b.ctx, "rx_atomic"), n, "{name}: rx_atomic");
        for c in ["nak_acc", "nak_inv", "atom_dup", "atom_miss"] {
            assert_eq!(counter(b.ctx, c), 0, "{name}: {c}");
        }
        audit(&w, m0, &a, &b, name);
    }
}

/// Errors: the requester's WQE completes with the IBTA status, nothing lands in its buffer,
/// the target memory is untouched, the responder counted the NAK; for both kinds.
#[test]
fn atomic_errors() {
    // (what, remote address and rkey, whether the responder's QP allows atomics, status,
    // the responder's NAK counter)
    type Target = Box<dyn Fn(&Side) -> (u64, u32)>;
    let cases: [(&str, Target, bool, WcStatus, &str); 5] = [
        (
            "misaligned remote address",
            Box::new(|b| (b.atom.remote_addr(4).unwrap(), b.atom.rkey())),
            true,
            WcStatus::RemInvReqErr,
            "nak_inv",
        ),
        (
            "wrong rkey",
            Box::new(|b| (b.atom.remote_addr(8).unwrap(), b.atom.rkey() ^ 0x100)),
            true,
            WcStatus::RemAccessErr,
            "nak_acc",
        ),
        (
            "out of bounds",
            Box::new(|b| (b.atom.iova() + b.atom.len() as u64, b.atom.rkey())),
            true,
            WcStatus::RemAccessErr,
            "nak_acc",
        ),
        (
            "MR without REMOTE_ATOMIC",
            Box::new(|b| (b.local.remote_addr(8).unwrap(), b.local.rkey())),
            true,
            WcStatus::RemAccessErr,
            "nak_acc",
        ),
        (
            "QP without REMOTE_ATOMIC",
            Box::new(|b| (b.atom.remote_addr(8).unwrap(), b.atom.rkey())),
            false,
            WcStatus::RemAccessErr,
            "nak_acc",
        ),
    ];
    for (what, target, qp_atomic, status, nak) in cases {
        let (w, ca, cb) = verbs_pair(WorldConfig::default());
        let a = Side::new(&ca, 64 * 1024, 16);
        let b = Side::new(&cb, 64 * 1024, 16);
        let mut at = attr(Mtu::Mtu1024);
        if !qp_atomic {
            at.access = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
        }
        let m0 = marks(&w);
        let atom_image = pattern(7, ATOM_BYTES);
        b.atom.write(0, &atom_image).unwrap();
        let local_image = pattern(8, 4096);
        b.local.write(0, &local_image).unwrap();
        let (remote_addr, rkey) = target(&b);
        let ops = [
            SendOp::CompareSwap {
                remote_addr,
                rkey,
                compare: u64::from_le_bytes(atom_image[8..16].try_into().unwrap()),
                swap: 0x1234,
            },
            SendOp::FetchAdd {
                remote_addr,
                rkey,
                add: 1,
            },
        ];
        for (i, o) in ops.into_iter().enumerate() {
            let what = format!("{what}, {o:?}");
            // a fresh QP pair per kind: the error moves both QPs to ERR
            let (qa, qb) = (a.qp(), b.qp());
            connect_qps(&qa, &qb, &at).expect("connect");
            a.local.write(0, &[FILL; 64]).unwrap();
            let wr = SendWr::new(5 + i as u64, o).sge(a.local.sge(16, 8).unwrap());
            if status == WcStatus::RemInvReqErr {
                // the driver refuses it; the device's own check is reached through the hatch
                assert!(matches!(
                    qa.post_send(&[wr]),
                    Err(rnic::Error::AtomicMisaligned { .. })
                ));
                qa.post_send_unaligned_atomics(&[wr]).unwrap();
            } else {
                qa.post_send(&[wr]).unwrap();
            }
            let wc = wait_wc(&a, &b, &a.cq, 1, &what);
            assert_eq!(wc[0].status, status, "{what}: {:?}", wc[0]);
            let want_op = if i == 0 {
                WcOpcode::CompSwap
            } else {
                WcOpcode::FetchAdd
            };
            assert_eq!(wc[0].opcode, want_op, "{what}");
            let mut got = vec![0u8; 64];
            a.local.read(0, &mut got).unwrap();
            assert!(
                got.iter().all(|&x| x == FILL),
                "{what}: local buffer written"
            );
            let mut now = vec![0u8; ATOM_BYTES];
            b.atom.read(0, &mut now).unwrap();
            assert!(now == atom_image, "{what}: target MR changed");
            let mut now = vec![0u8; 4096];
            b.local.read(0, &mut now).unwrap();
            assert!(now == local_image, "{what}: the peer's other MR changed");
            assert_eq!(counter(b.ctx, nak), 1 + i as u32, "{what}: {nak}");
            assert_eq!(counter(b.ctx, "rx_atomic"), 0, "{what}: executed");
            // the NAK went out once, as the right syndrome
            let naks: Vec<_> = roce_sent(&w, 1, 0)
                .into_iter()
                .filter(|p| p.opcode == op::ACKNOWLEDGE && p.ext[0] >> 5 == aeth::KIND_NAK)
                .collect();
            let want = if status == WcStatus::RemInvReqErr {
                aeth::NAK_INV_REQ
            } else {
                aeth::NAK_REM_ACCESS
            };
            assert_eq!(naks.len(), 1 + i, "{what}: NAKs");
            assert_eq!(naks[i].ext[0], want, "{what}: NAK syndrome");
            drop((qa, qb));
        }
        audit(&w, m0, &a, &b, what);
    }
}

/// 8 QP pairs FETCH_ADD one counter word on each NIC from both directions at once (40 each per
/// QP, all posted before any completes): the counters end at their start plus the sum of the
/// adds, and on each NIC the originals returned are all distinct and are exactly the prefix
/// sums of one serial order (sorted, each original plus its own WR's add is the next original,
/// the last one plus its add the final value).
#[test]
fn concurrent_fetch_add_is_atomic() {
    const PER_QP: usize = 40;
    for (name, cfg) in configs() {
        let (w, ca, cb) = verbs_pair(cfg);
        let a = Side::new(&ca, 64 * 1024, 512);
        let b = Side::new(&cb, 64 * 1024, 512);
        let pairs: Vec<_> = (0..8)
            .map(|k| {
                let (qa, qb) = (a.qp(), b.qp());
                connect_qps(&qa, &qb, &attr(Mtu::ALL[k % 5])).expect("connect");
                (qa, qb)
            })
            .collect();
        let m0 = marks(&w);
        let word = 4096 + 8; // the counter word in each NIC's atom MR
        let start = [0x1000_0000_0000u64, 0x7777_0000];
        a.atom.write(word, &start[0].to_le_bytes()).unwrap();
        b.atom.write(word, &start[1].to_le_bytes()).unwrap();
        // (requester side, wr_id) -> add; local buffer of each op at (k * PER_QP + j) * 9 + 1
        let mut adds: [HashMap<u64, u64>; 2] = [HashMap::new(), HashMap::new()];
        for j in 0..PER_QP {
            for (k, (qa, qb)) in pairs.iter().enumerate() {
                for (r, (req, rsp, q)) in [(&a, &b, qa), (&b, &a, qb)].into_iter().enumerate() {
                    let wr_id = ((r * 8 + k) * PER_QP + j) as u64;
                    let add = 1 + (wr_id * 7919) % 100_003;
                    let off = (k * PER_QP + j) * 9 + 1;
                    q.post_send(&[SendWr::new(
                        wr_id,
                        SendOp::FetchAdd {
                            remote_addr: rsp.atom.remote_addr(word).unwrap(),
                            rkey: rsp.atom.rkey(),
                            add,
                        },
                    )
                    .sge(req.local.sge(off, 8).unwrap())])
                        .unwrap();
                    adds[r].insert(wr_id, add);
                }
            }
        }
        let n = 8 * PER_QP;
        let wa = wait_wc(&a, &b, &a.cq, n, name);
        let wb = wait_wc(&a, &b, &b.cq, n, name);
        for (r, (req, rsp, wcs)) in [(&a, &b, &wa), (&b, &a, &wb)].into_iter().enumerate() {
            let what = format!("{name}: FETCH_ADDs from NIC {r}");
            for (k, (qa, qb)) in pairs.iter().enumerate() {
                let q = if r == 0 { qa.qpn() } else { qb.qpn() };
                let ids: Vec<u64> = wcs
                    .iter()
                    .filter(|c| c.qp_num == q)
                    .map(|c| c.wr_id)
                    .collect();
                let want: Vec<u64> = (0..PER_QP)
                    .map(|j| ((r * 8 + k) * PER_QP + j) as u64)
                    .collect();
                assert_eq!(ids, want, "{what}: QP {k} completion order");
            }
            let mut orig: Vec<(u64, u64)> = wcs
                .iter()
                .map(|c| {
                    assert_eq!(
                        (c.status, c.opcode, c.byte_len),
                        (WcStatus::Success, WcOpcode::FetchAdd, 8),
                        "{what}: {c:?}"
                    );
                    let i = c.wr_id as usize % (8 * PER_QP);
                    let mut v = [0u8; 8];
                    req.local.read(i * 9 + 1, &mut v).unwrap();
                    (u64::from_le_bytes(v), adds[r][&c.wr_id])
                })
                .collect();
            orig.sort();
            let sum: u64 = adds[r].values().sum();
            let start = start[1 - r];
            assert_eq!(rsp.word(word), start + sum, "{what}: final counter");
            assert_eq!(
                orig[0].0, start,
                "{what}: the first original is the start value"
            );
            for i in 0..orig.len() {
                let next = orig.get(i + 1).map_or(start + sum, |x| x.0);
                assert_eq!(
                    orig[i].0 + orig[i].1,
                    next,
                    "{what}: original {i} + its add is not the next original (a lost or doubled add)"
                );
            }
        }
        audit(&w, m0, &a, &b, name);
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Read,
    Write,
    Send,
    FetchAdd,
    CmpSwap,
}

/// Both NICs at once on 8 QP pairs (4 each way), atomics mixed with READ / WRITE / SEND, many
/// outstanding: every message completes successfully, in posting order per QP, with the right
/// bytes; each pair's atomic words (its own) follow the model in posting order.
#[test]
fn atomics_mixed_with_read_write_send_both_directions() {
    for (name, cfg) in configs() {
        let (w, ca, cb) = verbs_pair(cfg);
        let a = Side::new(&ca, 1 << 20, 512);
        let b = Side::new(&cb, 1 << 20, 512);
        let mtus = [Mtu::Mtu1024, Mtu::Mtu4096, Mtu::Mtu256, Mtu::Mtu2048];
        let pairs: Vec<_> = (0..8)
            .map(|k| {
                let (qa, qb) = (a.qp(), b.qp());
                connect_qps(&qa, &qb, &attr(mtus[k % 4])).expect("connect");
                (qa, qb)
            })
            .collect();
        let m0 = marks(&w);
        // per pair k: words at k * 16 (FETCH_ADD) and k * 16 + 8 (CMP_SWAP) of the
        // responder's atom MR
        let mut model: Vec<[u64; 2]> = (0..8u64).map(|k| [(k << 40) | 0x100, (!k) << 8]).collect();
        for (k, m) in model.iter().enumerate() {
            let rs = if k < 4 { &b } else { &a };
            rs.atom.write(k * 16, &m[0].to_le_bytes()).unwrap();
            rs.atom.write(k * 16 + 8, &m[1].to_le_bytes()).unwrap();
        }
        struct M {
            k: usize,
            kind: Kind,
            len: usize,
            off: usize,
            seed: u64,
        }
        let mut plan = Vec::new();
        for round in 0..10usize {
            for k in 0..8usize {
                let kind = [
                    Kind::FetchAdd,
                    Kind::Read,
                    Kind::CmpSwap,
                    Kind::Write,
                    Kind::Send,
                ][(round + k) % 5];
                let len = match kind {
                    Kind::FetchAdd | Kind::CmpSwap => 8,
                    _ => [1usize, 4096, 777, 9000, 64, 12000, 5, 4097][(round + 3 * k) % 8],
                };
                let off = (k * 10 + round) * 12 * 1024 + k;
                plan.push(M {
                    k,
                    kind,
                    len,
                    off,
                    seed: 7000 + (round * 8 + k) as u64,
                });
            }
        }
        // (data lands in A?, bytes, offset in `local`)
        let mut expect = Vec::new();
        for m in &plan {
            let (qa, qb) = &pairs[m.k];
            let (rq, rs, q_req, q_rsp) = if m.k < 4 {
                (&a, &b, qa, qb)
            } else {
                (&b, &a, qb, qa)
            };
            let data = pattern(m.seed, m.len);
            let wr_id = m.seed;
            match m.kind {
                Kind::Read => {
                    rs.src.write(m.off, &data).unwrap();
                    q_req
                        .post_send(&[SendWr::new(
                            wr_id,
                            SendOp::RdmaRead {
                                remote_addr: rs.src.remote_addr(m.off).unwrap(),
                                rkey: rs.src.rkey(),
                            },
                        )
                        .sge(rq.local.sge(m.off, m.len).unwrap())])
                        .unwrap();
                    expect.push((m.k < 4, data, m.off));
                }
                Kind::FetchAdd | Kind::CmpSwap => {
                    let v = u64::from_le_bytes(data[..8].try_into().unwrap());
                    let word = &mut model[m.k];
                    let remote_addr = rs
                        .atom
                        .remote_addr(m.k * 16 + 8 * (m.kind == Kind::CmpSwap) as usize)
                        .unwrap();
                    let rkey = rs.atom.rkey();
                    let (op, orig) = if m.kind == Kind::FetchAdd {
                        let orig = word[0];
                        word[0] = orig.wrapping_add(v);
                        (
                            SendOp::FetchAdd {
                                remote_addr,
                                rkey,
                                add: v,
                            },
                            orig,
                        )
                    } else {
                        // every other CMP_SWAP of a pair fails
                        let orig = word[1];
                        let hit = m.seed % 2 == 0;
                        if hit {
                            word[1] = v;
                        }
                        let compare = if hit { orig } else { !orig };
                        (
                            SendOp::CompareSwap {
                                remote_addr,
                                rkey,
                                compare,
                                swap: v,
                            },
                            orig,
                        )
                    };
                    rq.local.write(m.off, &(!orig).to_le_bytes()).unwrap();
                    q_req
                        .post_send(&[SendWr::new(wr_id, op).sge(rq.local.sge(m.off, 8).unwrap())])
                        .unwrap();
                    expect.push((m.k < 4, orig.to_le_bytes().to_vec(), m.off));
                }
                Kind::Write | Kind::Send => {
                    rq.src.write(m.off, &data).unwrap();
                    let op = if m.kind == Kind::Write {
                        SendOp::RdmaWrite {
                            remote_addr: rs.local.remote_addr(m.off).unwrap(),
                            rkey: rs.local.rkey(),
                        }
                    } else {
                        q_rsp
                            .post_recv(&[RecvWr {
                                wr_id: wr_id | 1 << 40,
                                sge: Some(rs.local.sge(m.off, m.len).unwrap()),
                            }])
                            .unwrap();
                        SendOp::Send
                    };
                    q_req
                        .post_send(&[SendWr::new(wr_id, op).sge(rq.src.sge(m.off, m.len).unwrap())])
                        .unwrap();
                    expect.push((m.k >= 4, data, m.off));
                }
            }
        }
        let sends = |req_a: bool| {
            plan.iter()
                .filter(|m| (m.k < 4) != req_a && m.kind == Kind::Send)
                .count()
        };
        let n_a = plan.iter().filter(|m| m.k < 4).count() + sends(true);
        let n_b = plan.iter().filter(|m| m.k >= 4).count() + sends(false);
        let wa = wait_wc(&a, &b, &a.cq, n_a, name);
        let wb = wait_wc(&a, &b, &b.cq, n_b, name);
        for wc in wa.iter().chain(&wb) {
            assert_eq!(wc.status, WcStatus::Success, "{name}: {wc:?}");
        }
        for (k, (qa, qb)) in pairs.iter().enumerate() {
            let (cq, sq) = if k < 4 {
                (&wa, qa.qpn())
            } else {
                (&wb, qb.qpn())
            };
            let ids: Vec<u64> = cq
                .iter()
                .filter(|w| w.qp_num == sq && !w.opcode.is_recv())
                .map(|w| w.wr_id)
                .collect();
            let want: Vec<u64> = plan.iter().filter(|m| m.k == k).map(|m| m.seed).collect();
            assert_eq!(ids, want, "{name}: QP pair {k} completion order");
            for m in plan.iter().filter(|m| m.k == k) {
                let c = cq
                    .iter()
                    .find(|w| w.wr_id == m.seed && w.qp_num == sq)
                    .unwrap();
                let op = match m.kind {
                    Kind::Read => WcOpcode::RdmaRead,
                    Kind::Write => WcOpcode::RdmaWrite,
                    Kind::Send => WcOpcode::Send,
                    Kind::FetchAdd => WcOpcode::FetchAdd,
                    Kind::CmpSwap => WcOpcode::CompSwap,
                };
                assert_eq!(
                    (c.opcode, c.byte_len),
                    (op, m.len as u32),
                    "{name}: {:?}",
                    m.kind
                );
            }
        }
        for (in_a, data, off) in &expect {
            let s = if *in_a { &a } else { &b };
            let mut got = vec![0u8; data.len()];
            s.local.read(*off, &mut got).unwrap();
            assert_eq!(&got, data, "{name}: data at {off}");
        }
        for (k, m) in model.iter().enumerate() {
            let rs = if k < 4 { &b } else { &a };
            assert_eq!(
                [rs.word(k * 16), rs.word(k * 16 + 8)],
                *m,
                "{name}: pair {k}'s atomic words"
            );
        }
        audit(&w, m0, &a, &b, name);
    }
}

/// max_rd_atomic 1: 64 FETCH_ADDs posted at once all complete, in order, with the prefix sums,
/// and on the wire each request goes out only after the previous one's ATOMIC ACKNOWLEDGE
/// (never two outstanding). With the default (16) more than one is outstanding at some time.
#[test]
fn max_rd_atomic_limits_outstanding_atomics() {
    for (limit, expect_overlap) in [(1u8, false), (16, true)] {
        let what = format!("max_rd_atomic {limit}");
        let (w, ca, cb) = verbs_pair(WorldConfig::default());
        let a = Side::new(&ca, 64 * 1024, 128);
        let b = Side::new(&cb, 64 * 1024, 16);
        // B's QP lives to the end of the iteration (only A posts)
        let (qa, _qb) = limited_qps(&a, &b, limit);
        let m0 = marks(&w);
        let since = wire_mark(&w);
        b.atom.write(0, &5u64.to_le_bytes()).unwrap();
        let wrs: Vec<_> = (0..64u64)
            .map(|i| {
                SendWr::new(
                    i,
                    SendOp::FetchAdd {
                        remote_addr: b.atom.remote_addr(0).unwrap(),
                        rkey: b.atom.rkey(),
                        add: i + 1,
                    },
                )
                .sge(a.local.sge(8 * i as usize, 8).unwrap())
            })
            .collect();
        qa.post_send(&wrs).unwrap();
        let wc = wait_wc(&a, &b, &a.cq, 64, &what);
        let mut sum = 5u64;
        for (i, c) in wc.iter().enumerate() {
            assert_eq!(
                (c.wr_id, c.status, c.opcode, c.byte_len),
                (i as u64, WcStatus::Success, WcOpcode::FetchAdd, 8),
                "{what}"
            );
            let mut v = [0u8; 8];
            a.local.read(8 * i, &mut v).unwrap();
            assert_eq!(u64::from_le_bytes(v), sum, "{what}: original {i}");
            sum += i as u64 + 1;
        }
        assert_eq!(b.word(0), sum, "{what}: final value");
        // outstanding requests over time, from the wire record (in time order)
        let (mut out, mut most) = (0i32, 0i32);
        for (link, f) in w.borrow().wire.iter().skip(since) {
            if let Some(p) = rnic_sim::frame::parse_roce(&f.data) {
                match (link, p.opcode) {
                    (0, op::FETCH_ADD) => out += 1,
                    (1, op::ATOMIC_ACKNOWLEDGE) => out -= 1,
                    _ => {}
                }
                most = most.max(out);
            }
        }
        if expect_overlap {
            assert!(most > 1, "{what}: never more than {most} outstanding");
        } else {
            assert_eq!(most, 1, "{what}: atomics outstanding at once");
        }
        audit(&w, m0, &a, &b, &what);
    }
}

/// The atomic frames (both kinds of request and the ATOMIC ACKNOWLEDGEs) pass both
/// independent oracles: tshark's InfiniBand dissector and the scapy + spec ICRC check.
#[test]
fn atomic_frames_pass_the_oracles() {
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let a = Side::new(&ca, 64 * 1024, 16);
    let b = Side::new(&cb, 64 * 1024, 16);
    let (qa, qb) = (a.qp(), b.qp());
    connect_qps(&qa, &qb, &attr(Mtu::Mtu1024)).expect("connect");
    b.atom.write(0, &pattern(3, 64)).unwrap();
    let mut wrs = Vec::new();
    for (i, at) in kinds(&b, 16, b.word(16), 3).into_iter().enumerate() {
        wrs.push(SendWr::new(i as u64, at.op).sge(a.local.sge(8 * i + 1, 8).unwrap()));
    }
    qa.post_send(&wrs).unwrap();
    let wc = wait_wc(&a, &b, &a.cq, 3, "oracles");
    assert!(wc.iter().all(|w| w.status == WcStatus::Success), "{wc:?}");
    let pcap = rnic_sim::pcap::to_pcap(w.borrow().wire.iter().map(|(_, f)| f)).unwrap();
    let roce = rnic_tests::oracle::check_capture("atomic", &pcap);
    // 3 requests + 3 ATOMIC ACKNOWLEDGEs
    assert!(roce >= 6, "RoCE frames checked: {roce}");
}

/// Duplicates are answered from the saved results, never executed again (IBTA 9.7.7.2.6,
/// 9.4.5): after a FETCH_ADD, a CMP_SWAP and a FETCH_ADD on one word complete, their request
/// frames, taken from the wire, are fed into NIC B again (out of order: the last, the first,
/// the middle); each is answered with an ATOMIC ACKNOWLEDGE of its own PSN carrying its
/// original value, the word keeps its final value, and A completes nothing more.
#[test]
fn duplicate_atomics_are_answered_from_the_saved_results() {
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let a = Side::new(&ca, 64 * 1024, 16);
    let b = Side::new(&cb, 64 * 1024, 16);
    let (qa, qb) = (a.qp(), b.qp());
    connect_qps(&qa, &qb, &attr(Mtu::Mtu1024)).expect("connect");
    let m0 = marks(&w);
    let word = 40;
    b.atom.write(word, &100u64.to_le_bytes()).unwrap();
    let remote_addr = b.atom.remote_addr(word).unwrap();
    let rkey = b.atom.rkey();
    let ops = [
        SendOp::FetchAdd {
            remote_addr,
            rkey,
            add: 5,
        },
        SendOp::CompareSwap {
            remote_addr,
            rkey,
            compare: 105,
            swap: 7,
        },
        SendOp::FetchAdd {
            remote_addr,
            rkey,
            add: 1,
        },
    ];
    let origs = [100u64, 105, 7];
    let since = wire_mark(&w);
    let wrs: Vec<_> = ops
        .iter()
        .enumerate()
        .map(|(i, &o)| SendWr::new(i as u64, o).sge(a.local.sge(8 * i, 8).unwrap()))
        .collect();
    qa.post_send(&wrs).unwrap();
    let wc = wait_wc(&a, &b, &a.cq, 3, "originals");
    for (i, c) in wc.iter().enumerate() {
        assert_eq!((c.wr_id, c.status), (i as u64, WcStatus::Success));
        let mut v = [0u8; 8];
        a.local.read(8 * i, &mut v).unwrap();
        assert_eq!(u64::from_le_bytes(v), origs[i], "original {i}");
    }
    assert_eq!(b.word(word), 8);
    // the three request frames as A sent them
    let reqs: Vec<(u32, Vec<u8>)> = w
        .borrow()
        .wire
        .iter()
        .skip(since)
        .filter(|(l, _)| *l == 0)
        .filter_map(|(_, f)| {
            let p = rnic_sim::frame::parse_roce(&f.data)?;
            p.atomic_eth().map(|_| (p.psn, f.data.clone()))
        })
        .collect();
    assert_eq!(reqs.len(), 3, "atomic requests on the wire");
    for i in [2usize, 0, 1] {
        let what = format!("duplicate of request {i}");
        let mark = wire_mark(&w);
        w.borrow_mut().inject_rx(1, reqs[i].1.clone()).unwrap();
        let mut acks = Vec::new();
        for _ in 0..400 {
            acks = roce_sent(&w, 1, mark);
            if !acks.is_empty() {
                break;
            }
            w.borrow_mut().run(250);
        }
        assert_eq!(acks.len(), 1, "{what}: responses");
        let k = &acks[0];
        assert_eq!(
            (k.opcode, k.psn),
            (op::ATOMIC_ACKNOWLEDGE, reqs[i].0),
            "{what}"
        );
        assert_eq!(k.aeth().map(|x| x.syndrome), Some(aeth::ACK), "{what}");
        assert_eq!(k.atomic_orig(), Some(origs[i]), "{what}: saved original");
        assert_eq!(b.word(word), 8, "{what}: executed again");
    }
    assert_eq!(counter(b.ctx, "rx_atomic"), 3);
    assert_eq!(counter(b.ctx, "atom_dup"), 3);
    assert_eq!(counter(b.ctx, "atom_miss"), 0);
    // A ignores the answers to what it already completed
    for _ in 0..2000 {
        ca.relax().unwrap();
    }
    let mut more = [WorkCompletion::default(); 4];
    assert_eq!(a.cq.poll(&mut more).unwrap(), 0, "late completions on A");
    for (i, orig) in origs.iter().enumerate() {
        let mut v = [0u8; 8];
        a.local.read(8 * i, &mut v).unwrap();
        assert_eq!(u64::from_le_bytes(v), *orig, "original {i} rewritten");
    }
    audit(&w, m0, &a, &b, "duplicates");
}

/// ACK coalescing against the max_rd_atomic limit: WRITEs ask for an ACK only every K WQEs
/// (K = min(8, the largest power of two <= max_rd_atomic)) or when they are the last posted,
/// while a READ or atomic behind them waits until it is fewer than max_rd_atomic WQEs after
/// the last acknowledged one. Mixes of READ, WRITE and FETCH_ADD posted at once must complete
/// in order without a single timeout for every limit (a WRITE run longer than the limit
/// without AckReq would hold the READ behind it until the ACK timer), and with the default
/// limit B sends fewer ACKs than A sends WRITEs.
#[test]
fn ack_coalescing_never_holds_a_read() {
    for limit in [1u8, 2, 3, 5, 16] {
        let what = format!("max_rd_atomic {limit}");
        let (w, ca, cb) = verbs_pair(WorldConfig::default());
        let a = Side::new(&ca, 64 * 1024, 128);
        let b = Side::new(&cb, 64 * 1024, 16);
        // B's QP lives to the end of the iteration (only A posts)
        let (qa, _qb) = limited_qps(&a, &b, limit);
        let m0 = marks(&w);
        let since = wire_mark(&w);
        b.src.write(0, &pattern(9, 4096)).unwrap();
        // 60 WQEs: runs of 1..7 WRITEs between READs and FETCH_ADDs
        let (mut wrs, mut kinds, mut i) = (Vec::new(), Vec::new(), 0u64);
        let mut run = 1u64;
        while wrs.len() < 60 {
            for _ in 0..run {
                let op = SendOp::RdmaWrite {
                    remote_addr: b.local.remote_addr(64 * (i as usize % 512)).unwrap(),
                    rkey: b.local.rkey(),
                };
                wrs.push(SendWr::new(i, op).sge(a.src.sge(0, 64).unwrap()));
                kinds.push(WcOpcode::RdmaWrite);
                i += 1;
            }
            let (op, kind) = if run % 2 == 1 {
                let op = SendOp::RdmaRead {
                    remote_addr: b.src.remote_addr(0).unwrap(),
                    rkey: b.src.rkey(),
                };
                (op, WcOpcode::RdmaRead)
            } else {
                let op = SendOp::FetchAdd {
                    remote_addr: b.atom.remote_addr(0).unwrap(),
                    rkey: b.atom.rkey(),
                    add: 1,
                };
                (op, WcOpcode::FetchAdd)
            };
            let len = if kind == WcOpcode::RdmaRead { 64 } else { 8 };
            wrs.push(SendWr::new(i, op).sge(a.local.sge(64 * (i as usize % 512), len).unwrap()));
            kinds.push(kind);
            i += 1;
            run = run % 7 + 1;
        }
        qa.post_send(&wrs).unwrap();
        let wc = wait_wc(&a, &b, &a.cq, wrs.len(), &what);
        for (k, c) in wc.iter().enumerate() {
            assert_eq!(
                (c.wr_id, c.status, c.opcode),
                (k as u64, WcStatus::Success, kinds[k]),
                "{what}"
            );
        }
        assert_eq!(counter(a.ctx, "timeouts"), 0, "{what}: ACK timeouts");
        assert_eq!(counter(a.ctx, "restarts"), 0, "{what}: restarts");
        let writes = kinds.iter().filter(|k| **k == WcOpcode::RdmaWrite).count();
        let acks = w
            .borrow()
            .wire
            .iter()
            .skip(since)
            .filter(|(link, _)| *link == 1)
            .filter_map(|(_, f)| rnic_sim::frame::parse_roce(&f.data))
            .filter(|p| p.opcode == op::ACKNOWLEDGE)
            .count();
        if limit >= 8 {
            assert!(acks < writes, "{what}: {acks} ACKs for {writes} WRITEs");
        }
        audit(&w, m0, &a, &b, &what);
    }
}
