//! RDMA end to end: two simulated NICs, each driven through the verbs API (`rnic::verbs`),
//! RC SEND / SEND_WITH_IMM / RDMA_WRITE / RDMA_WRITE_WITH_IMM across sizes, alignments, path
//! MTUs and several QPs at once. Every byte is verified at the destination (and the bytes
//! around it are checked untouched), every completion is checked on both sides, the packets on
//! the wire are parsed and checked against the path MTU, and the host-memory audit checks that
//! the devices wrote nothing outside the registered MRs and CQ rings.

use rnic::verbs::{
    AccessFlags, CompletionQueue, ConnectAttr, Context, MemoryRegion, Mtu, ProtectionDomain,
    QpCaps, QueuePair, RecvWr, SendOp, SendWr, WcOpcode, WcStatus, WorkCompletion,
};
use rnic::{Error, QpState};
use rnic_abi::roce::{PSN_MASK, opcode as op};
use rnic_sim::{SharedWorld, SimNic, WorldConfig};
use rnic_tests::{
    audit_dma_writes, configs, connect_qps, counters, marks, pattern, roce_sent, verbs_pair,
    wire_mark,
};

/// Device-time budget for one wait (4 ms = 1M cycles).
const WAIT_NS: u64 = 4_000_000;
/// Bytes around every destination that must stay untouched.
const GUARD: usize = 64;
const FILL: u8 = 0xEE;

const SIZES: [usize; 9] = [1, 63, 64, 65, 4095, 4096, 4097, 65536, 0];

type Ctx = Context<SimNic>;

/// One NIC's resources for a test.
struct Side<'c> {
    ctx: &'c Ctx,
    /// Source buffer: local read only (the device may never write it).
    src: MemoryRegion<'c, SimNic>,
    /// Destination buffer: local + remote write.
    dst: MemoryRegion<'c, SimNic>,
    cq: CompletionQueue<'c, SimNic>,
    pd: ProtectionDomain<'c, SimNic>,
}

impl<'c> Side<'c> {
    fn new(ctx: &'c Ctx, bytes: usize, cq_entries: u32) -> Side<'c> {
        let pd = ctx.alloc_pd().expect("pd");
        let cq = ctx.create_cq(cq_entries).expect("cq");
        let sbuf = ctx.alloc_buf(bytes).expect("src buf");
        let dbuf = ctx.alloc_buf(bytes).expect("dst buf");
        let src = pd.reg_mr(&sbuf, AccessFlags::empty()).expect("src mr");
        let dst = pd
            .reg_mr(&dbuf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE)
            .expect("dst mr");
        Side {
            ctx,
            src,
            dst,
            cq,
            pd,
        }
    }

    fn qp(&self, caps: QpCaps) -> QueuePair<'_, SimNic> {
        self.pd.create_qp(&self.cq, &self.cq, caps).expect("qp")
    }

    /// Where the device may write on this NIC: the writable MR and the CQ ring.
    fn allowed(&self) -> Vec<(u64, usize)> {
        let r = self.cq.ring();
        vec![(self.dst.iova(), self.dst.len()), (r.iova(), r.len())]
    }
}

fn attr(mtu: Mtu) -> ConnectAttr {
    ConnectAttr {
        path_mtu: mtu,
        ..ConnectAttr::default()
    }
}

fn caps() -> QpCaps {
    QpCaps {
        max_send_wr: 64,
        max_recv_wr: 64,
        ..QpCaps::default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Send,
    SendImm,
    Write,
    WriteImm,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Send, Kind::SendImm, Kind::Write, Kind::WriteImm];
    fn consumes_recv(self) -> bool {
        self != Kind::Write
    }
    fn is_write(self) -> bool {
        matches!(self, Kind::Write | Kind::WriteImm)
    }
    fn imm(self, seed: u64) -> Option<u32> {
        matches!(self, Kind::SendImm | Kind::WriteImm).then_some(0xC0DE_0000 ^ seed as u32)
    }
}

/// One message from `a` (qa) to `b` (qb).
#[derive(Debug, Clone, Copy)]
struct Msg {
    kind: Kind,
    len: usize,
    src_off: usize,
    dst_off: usize,
    seed: u64,
    signaled: bool,
    inline: bool,
}

impl Msg {
    fn new(kind: Kind, len: usize, src_off: usize, dst_off: usize, seed: u64) -> Msg {
        Msg {
            kind,
            len,
            src_off,
            dst_off,
            seed,
            signaled: true,
            inline: false,
        }
    }
    fn wr_id(&self) -> u64 {
        0x5EED_0000_0000 | self.seed
    }
    fn data(&self) -> Vec<u8> {
        pattern(self.seed, self.len)
    }
}

/// Stage a message: source bytes written, destination window filled, receive WQE posted (if
/// the message consumes one), send WQE posted.
fn post_msg(a: &Side, b: &Side, qa: &QueuePair<SimNic>, qb: &QueuePair<SimNic>, m: &Msg) {
    let data = m.data();
    a.src.write(m.src_off, &data).expect("write src");
    let lo = m.dst_off.saturating_sub(GUARD);
    let hi = (m.dst_off + m.len + GUARD).min(b.dst.len());
    b.dst
        .write(lo, &vec![FILL; hi - lo])
        .expect("fill destination");
    if m.kind.consumes_recv() {
        let sge = (m.kind != Kind::WriteImm).then(|| b.dst.sge(m.dst_off, m.len).expect("sge"));
        qb.post_recv(&[RecvWr {
            wr_id: m.wr_id() ^ 0xFFFF_0000_0000_0000,
            sge,
        }])
        .expect("post_recv");
    }
    let op = match m.kind {
        Kind::Send => SendOp::Send,
        Kind::SendImm => SendOp::SendWithImm(m.kind.imm(m.seed).unwrap()),
        Kind::Write => SendOp::RdmaWrite {
            remote_addr: b.dst.remote_addr(m.dst_off).unwrap(),
            rkey: b.dst.rkey(),
        },
        Kind::WriteImm => SendOp::RdmaWriteWithImm {
            remote_addr: b.dst.remote_addr(m.dst_off).unwrap(),
            rkey: b.dst.rkey(),
            imm: m.kind.imm(m.seed).unwrap(),
        },
    };
    let mut wr = SendWr::new(m.wr_id(), op);
    if m.inline {
        wr = wr.inline(&data);
    } else if m.len > 0 {
        wr = wr.sge(a.src.sge(m.src_off, m.len).expect("src sge"));
    }
    if !m.signaled {
        wr = wr.unsignaled();
    }
    qa.post_send(&[wr]).expect("post_send");
}

/// The completion the requester must see for `m`.
fn want_send_wc(m: &Msg, qa: u32, got: &WorkCompletion) -> WorkCompletion {
    WorkCompletion {
        wr_id: m.wr_id(),
        status: WcStatus::Success,
        opcode: if m.kind.is_write() {
            WcOpcode::RdmaWrite
        } else {
            WcOpcode::Send
        },
        byte_len: m.len as u32,
        imm_data: None,
        qp_num: qa,
        // src_qp is only defined for receive completions (ibv_wc); not checked here
        src_qp: got.src_qp,
        vendor_err: 0,
    }
}

/// The completion the responder must see for `m`.
fn want_recv_wc(m: &Msg, qa: u32, qb: u32) -> WorkCompletion {
    WorkCompletion {
        wr_id: m.wr_id() ^ 0xFFFF_0000_0000_0000,
        status: WcStatus::Success,
        opcode: if m.kind == Kind::WriteImm {
            WcOpcode::RecvRdmaWithImm
        } else {
            WcOpcode::Recv
        },
        byte_len: m.len as u32,
        imm_data: m.kind.imm(m.seed),
        qp_num: qb,
        src_qp: qa,
        vendor_err: 0,
    }
}

/// Wait until the destination holds the message (WRITE data may land after the ACK has
/// completed the requester's WQE), and the guard bytes around it are untouched.
fn check_dst(b: &Side, m: &Msg, what: &str) {
    let data = m.data();
    let lo = m.dst_off.saturating_sub(GUARD);
    let hi = (m.dst_off + m.len + GUARD).min(b.dst.len());
    let t0 = b.ctx.now_ns().unwrap();
    loop {
        let mut got = vec![0u8; hi - lo];
        b.dst.read(lo, &mut got).unwrap();
        let body = &got[m.dst_off - lo..m.dst_off - lo + m.len];
        let guards_ok = got[..m.dst_off - lo].iter().all(|&x| x == FILL)
            && got[m.dst_off - lo + m.len..].iter().all(|&x| x == FILL);
        assert!(
            guards_ok,
            "{what}: bytes around the destination were written"
        );
        if body == &data[..] {
            return;
        }
        if b.ctx.now_ns().unwrap() - t0 > WAIT_NS {
            let first = body.iter().zip(&data).position(|(x, y)| x != y).unwrap();
            panic!(
                "{what}: destination differs from byte {first} on ({} of {} bytes differ)",
                body.iter().zip(&data).filter(|(x, y)| x != y).count(),
                m.len
            );
        }
        b.ctx.relax().unwrap();
    }
}

fn wait_wc(cq: &CompletionQueue<SimNic>, n: usize, what: &str) -> Vec<WorkCompletion> {
    match cq.wait(n, WAIT_NS) {
        Ok(w) => w,
        Err(e) => panic!(
            "{what}: waiting for {n} completions on CQ {}: {e}",
            cq.cqn()
        ),
    }
}

/// Nothing more arrives on `cq` within `ns` of device time.
fn assert_cq_quiet(cq: &CompletionQueue<SimNic>, ns: u64, what: &str) {
    let mut wc = [WorkCompletion::default(); 4];
    match cq.poll_wait(&mut wc, 1, ns) {
        Err(Error::Timeout { .. }) => {}
        Ok(n) => panic!("{what}: unexpected completions {:?}", &wc[..n]),
        Err(e) => panic!("{what}: {e}"),
    }
}

/// Run one message to completion and check everything about it.
#[allow(clippy::too_many_arguments)]
fn run_msg(
    a: &Side,
    b: &Side,
    qa: &QueuePair<SimNic>,
    qb: &QueuePair<SimNic>,
    m: &Msg,
    what: &str,
) {
    post_msg(a, b, qa, qb, m);
    let w = match a.cq.wait(1, WAIT_NS) {
        Ok(w) => w,
        Err(e) => panic!(
            "{what}: requester completion: {e}\nA: {}\nB: {}",
            counters(a.ctx),
            counters(b.ctx)
        ),
    };
    assert_eq!(
        w[0],
        want_send_wc(m, qa.qpn(), &w[0]),
        "{what}: requester CQE"
    );
    if m.kind.consumes_recv() {
        let w = wait_wc(&b.cq, 1, what);
        assert_eq!(
            w[0],
            want_recv_wc(m, qa.qpn(), qb.qpn()),
            "{what}: responder CQE"
        );
    }
    check_dst(b, m, what);
    assert_eq!(qa.outstanding().unwrap(), (0, 0), "{what}: requester queue");
    assert_eq!(qb.outstanding().unwrap(), (0, 0), "{what}: responder queue");
}

fn audit(w: &SharedWorld, marks: (usize, usize), a: &Side, b: &Side, what: &str) {
    for (nic, mark, s) in [(0, marks.0, a), (1, marks.1, b)] {
        if let Err(e) = audit_dma_writes(w, nic, mark, &s.allowed()) {
            panic!("{what}: {e}");
        }
        // whatever the test provokes, these never count on a clean link
        let never = [
            "db_bad",
            "drop_icrc",
            "drop_parse",
            "cq_overflow",
            "cq_invalid",
            "dma_bus_err",
        ];
        for (name, v) in s.ctx.engine_counters().unwrap() {
            assert!(
                !never.contains(&name) || v == 0,
                "{what}: NIC {nic} engine counter {name} = {v}"
            );
        }
    }
}

/// Every kind at every size, unaligned source and destination, MTU 1024, on one QP pair.
fn all_sizes(kinds: &[Kind]) {
    for (name, cfg) in configs() {
        let (w, ca, cb) = verbs_pair(cfg);
        let a = Side::new(&ca, 256 * 1024, 64);
        let b = Side::new(&cb, 256 * 1024, 64);
        let (qa, qb) = (a.qp(caps()), b.qp(caps()));
        connect_qps(&qa, &qb, &attr(Mtu::Mtu1024)).expect("connect");
        let m0 = marks(&w);
        let mut seed = 1;
        for &kind in kinds {
            for &len in &SIZES {
                if len == 0 && kind.is_write() {
                    continue; // zero-length messages: SEND only
                }
                // source and destination misaligned differently, and across pages
                let (src_off, dst_off) = (4096 - 3 + (seed as usize % 7), 64 + 13 * seed as usize);
                let m = Msg::new(kind, len, src_off, dst_off, seed);
                run_msg(&a, &b, &qa, &qb, &m, &format!("{name}: {kind:?} {len} B"));
                seed += 1;
            }
        }
        assert_cq_quiet(&b.cq, 20_000, name);
        audit(&w, m0, &a, &b, name);
    }
}

#[test]
fn send_and_send_with_imm_all_sizes() {
    all_sizes(&[Kind::Send, Kind::SendImm]);
}

#[test]
fn rdma_write_and_write_with_imm_all_sizes() {
    all_sizes(&[Kind::Write, Kind::WriteImm]);
}

#[test]
fn inline_sends_and_writes() {
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let a = Side::new(&ca, 64 * 1024, 64);
    let b = Side::new(&cb, 64 * 1024, 64);
    let (qa, qb) = (a.qp(caps()), b.qp(caps()));
    connect_qps(&qa, &qb, &attr(Mtu::Mtu4096)).expect("connect");
    let m0 = marks(&w);
    for (k, len) in [1usize, 7, 15, 16].into_iter().enumerate() {
        for kind in Kind::ALL {
            let seed = 100 + 4 * k as u64 + kind as u64;
            let mut m = Msg::new(kind, len, 0, 3 + 100 * seed as usize, seed);
            m.inline = true;
            run_msg(&a, &b, &qa, &qb, &m, &format!("inline {kind:?} {len} B"));
        }
    }
    audit(&w, m0, &a, &b, "inline");
}

/// Packets on the wire follow the path MTU: n = max(1, ceil(len / mtu)) packets, full ones
/// first, consecutive PSNs, the right opcodes and headers, AckReq on the last; the payload on
/// the wire is the message.
#[test]
fn path_mtus_split_messages_into_packets() {
    for (name, cfg) in configs() {
        let (w, ca, cb) = verbs_pair(cfg);
        let a = Side::new(&ca, 128 * 1024, 64);
        let b = Side::new(&cb, 128 * 1024, 64);
        let mut seed = 500;
        for mtu in [Mtu::Mtu256, Mtu::Mtu1024, Mtu::Mtu4096] {
            let (qa, qb) = (a.qp(caps()), b.qp(caps()));
            connect_qps(&qa, &qb, &attr(mtu)).expect("connect");
            let m0 = marks(&w);
            let mb = mtu.bytes() as usize;
            for len in [1, mb - 1, mb, mb + 1, 3 * mb + 5, 65536] {
                for kind in Kind::ALL {
                    let what = format!("{name}: MTU {mb} {kind:?} {len} B");
                    let wire0 = wire_mark(&w);
                    let m = Msg::new(kind, len, 1 + seed as usize % 61, 7, seed);
                    run_msg(&a, &b, &qa, &qb, &m, &what);
                    let pkts: Vec<_> = roce_sent(&w, 0, wire0)
                        .into_iter()
                        .filter(|p| p.opcode != op::ACKNOWLEDGE)
                        .collect();
                    let n = len.div_ceil(mb).max(1);
                    assert_eq!(pkts.len(), n, "{what}: packets");
                    let data = m.data();
                    let mut off = 0;
                    for (i, p) in pkts.iter().enumerate() {
                        let last = i == n - 1;
                        let want_len = if last { len - off } else { mb };
                        assert_eq!(p.payload.len(), want_len, "{what}: packet {i} payload");
                        assert_eq!(
                            p.payload,
                            data[off..off + want_len],
                            "{what}: packet {i} bytes"
                        );
                        off += want_len;
                        assert_eq!(p.dqpn, qb.qpn(), "{what}: dest QP");
                        assert_eq!(
                            p.psn,
                            (pkts[0].psn + i as u32) & PSN_MASK,
                            "{what}: PSN of packet {i}"
                        );
                        assert_eq!(p.src_ip, [10, 0, 0, 1]);
                        assert_eq!(p.dst_ip, [10, 0, 0, 2]);
                        assert!(p.udp_sport >= 0xC000, "{what}: UDP source port");
                        if last {
                            assert!(p.ackreq, "{what}: AckReq on the last packet");
                        }
                        let want_op = opcode_of(m.kind, i, n);
                        assert_eq!(p.opcode, want_op, "{what}: opcode of packet {i}");
                        if let Some(imm) = m.kind.imm(m.seed).filter(|_| last) {
                            let e = &p.ext[p.ext.len() - 4..];
                            assert_eq!(e, imm.to_be_bytes(), "{what}: ImmDt");
                        }
                        if m.kind.is_write() && i == 0 {
                            let reth = &p.ext[..16];
                            let va = u64::from_be_bytes(reth[..8].try_into().unwrap());
                            let rkey = u32::from_be_bytes(reth[8..12].try_into().unwrap());
                            let dlen = u32::from_be_bytes(reth[12..16].try_into().unwrap());
                            assert_eq!(
                                (va, rkey, dlen as usize),
                                (b.dst.remote_addr(7).unwrap(), b.dst.rkey(), len),
                                "{what}: RETH"
                            );
                        }
                    }
                    seed += 1;
                }
            }
            audit(&w, m0, &a, &b, &format!("{name}: MTU {mb}"));
            qa.destroy().unwrap();
            qb.destroy().unwrap();
        }
    }
}

fn opcode_of(kind: Kind, i: usize, n: usize) -> u8 {
    let (first, middle, last, only, last_imm, only_imm) = if kind.is_write() {
        (
            op::WRITE_FIRST,
            op::WRITE_MIDDLE,
            op::WRITE_LAST,
            op::WRITE_ONLY,
            op::WRITE_LAST_IMM,
            op::WRITE_ONLY_IMM,
        )
    } else {
        (
            op::SEND_FIRST,
            op::SEND_MIDDLE,
            op::SEND_LAST,
            op::SEND_ONLY,
            op::SEND_LAST_IMM,
            op::SEND_ONLY_IMM,
        )
    };
    let imm = matches!(kind, Kind::SendImm | Kind::WriteImm);
    match (n, i) {
        (1, _) if imm => only_imm,
        (1, _) => only,
        (_, 0) => first,
        (n, i) if i == n - 1 && imm => last_imm,
        (n, i) if i == n - 1 => last,
        _ => middle,
    }
}

/// 1 MiB WRITE and SEND (once, plain world): 256 packets at MTU 4096, one message each way.
#[test]
fn one_mib_write_and_send() {
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let mib = 1 << 20;
    let a = Side::new(&ca, mib + 8192, 16);
    let b = Side::new(&cb, mib + 8192, 16);
    let (qa, qb) = (a.qp(caps()), b.qp(caps()));
    connect_qps(&qa, &qb, &attr(Mtu::Mtu4096)).expect("connect");
    let m0 = marks(&w);
    for (k, kind) in [Kind::Write, Kind::Send, Kind::WriteImm]
        .into_iter()
        .enumerate()
    {
        let m = Msg::new(kind, mib, 5 + k, 4096 + 11 * k, 900 + k as u64);
        run_msg(&a, &b, &qa, &qb, &m, &format!("1 MiB {kind:?}"));
    }
    audit(&w, m0, &a, &b, "1 MiB");
}

/// Several QPs in both directions with work interleaved on shared CQs; one of them starts just
/// below the PSN wrap. Completions are matched by wr_id and QP.
#[test]
fn several_qps_at_once() {
    for (name, cfg) in configs() {
        let (w, ca, cb) = verbs_pair(cfg);
        let a = Side::new(&ca, 512 * 1024, 256);
        let b = Side::new(&cb, 512 * 1024, 256);
        // QP pairs 0, 1: A -> B; 2, 3: B -> A
        let pairs: Vec<(QueuePair<SimNic>, QueuePair<SimNic>)> =
            (0..4).map(|_| (a.qp(caps()), b.qp(caps()))).collect();
        pairs[1].0.set_local_psn(PSN_MASK - 3).unwrap();
        for (k, (qa, qb)) in pairs.iter().enumerate() {
            let mtu = [Mtu::Mtu1024, Mtu::Mtu256, Mtu::Mtu4096, Mtu::Mtu512][k];
            connect_qps(qa, qb, &attr(mtu)).expect("connect");
        }
        let m0 = marks(&w);
        // per QP pair: 6 messages of mixed kinds and sizes in disjoint 16 KiB windows
        let mut plan = Vec::new();
        for round in 0..6usize {
            for k in 0..4usize {
                let seed = 1000 + (round * 4 + k) as u64;
                let kind = Kind::ALL[(round + k) % 4];
                let len = [1usize, 777, 4096, 9000, 64, 12345][(round + 2 * k) % 6];
                let slot = (k * 6 + round) * 16 * 1024;
                plan.push((k, Msg::new(kind, len, slot + k, slot + 3 * k + 1, seed)));
            }
        }
        for (k, m) in &plan {
            let (qa, qb) = &pairs[*k];
            if *k < 2 {
                post_msg(&a, &b, qa, qb, m);
            } else {
                post_msg(&b, &a, qb, qa, m);
            }
        }
        // every side's CQ sees its requester and responder completions
        let count = |dir_ab: bool, recv: bool| {
            plan.iter()
                .filter(|(k, m)| (*k < 2) == dir_ab && (!recv || m.kind.consumes_recv()))
                .count()
        };
        let n_a = count(true, false) + count(false, true);
        let n_b = count(false, false) + count(true, true);
        let wa = wait_wc(&a.cq, n_a, name);
        let wb = wait_wc(&b.cq, n_b, name);
        for (k, m) in &plan {
            let (qa, qb) = &pairs[*k];
            let (req, resp, rq, sq) = if *k < 2 {
                (&wa, &wb, qb, qa)
            } else {
                (&wb, &wa, qa, qb)
            };
            let what = format!("{name}: QP pair {k} {:?} {} B", m.kind, m.len);
            let s = req
                .iter()
                .find(|w| w.wr_id == m.wr_id())
                .unwrap_or_else(|| panic!("{what}: no requester completion"));
            assert_eq!(*s, want_send_wc(m, sq.qpn(), s), "{what}");
            if m.kind.consumes_recv() {
                let want = want_recv_wc(m, sq.qpn(), rq.qpn());
                let r = resp
                    .iter()
                    .find(|w| w.wr_id == want.wr_id)
                    .unwrap_or_else(|| panic!("{what}: no responder completion"));
                assert_eq!(*r, want, "{what}");
            }
            if *k < 2 {
                check_dst(&b, m, &what);
            } else {
                check_dst(&a, m, &what);
            }
        }
        // completions of one QP arrive in posting order
        for (k, (qa, qb)) in pairs.iter().enumerate() {
            let sq = if k < 2 { qa.qpn() } else { qb.qpn() };
            let cq = if k < 2 { &wa } else { &wb };
            let ids: Vec<u64> = cq
                .iter()
                .filter(|w| w.qp_num == sq && !w.opcode.is_recv())
                .map(|w| w.wr_id)
                .collect();
            let want: Vec<u64> = plan
                .iter()
                .filter(|(j, _)| *j == k)
                .map(|(_, m)| m.wr_id())
                .collect();
            assert_eq!(ids, want, "{name}: QP pair {k} completion order");
        }
        audit(&w, m0, &a, &b, name);
    }
}

/// Unsignaled WQEs produce no completion; the signaled one after them frees them all.
#[test]
fn unsignaled_wqes_complete_silently() {
    for (name, cfg) in configs() {
        let (w, ca, cb) = verbs_pair(cfg);
        let a = Side::new(&ca, 64 * 1024, 64);
        let b = Side::new(&cb, 64 * 1024, 64);
        let qcaps = QpCaps {
            max_send_wr: 16,
            ..caps()
        };
        let (qa, qb) = (a.qp(qcaps), b.qp(qcaps));
        connect_qps(&qa, &qb, &attr(Mtu::Mtu1024)).expect("connect");
        let m0 = marks(&w);
        for round in 0..3u64 {
            let msgs: Vec<Msg> = (0..10u64)
                .map(|i| {
                    let seed = 2000 + 10 * round + i;
                    let mut m = Msg::new(
                        Kind::Write,
                        1500,
                        2048 * i as usize,
                        2048 * i as usize + 5,
                        seed,
                    );
                    m.signaled = i == 9;
                    m
                })
                .collect();
            for m in &msgs {
                post_msg(&a, &b, &qa, &qb, m);
            }
            assert_eq!(qa.outstanding().unwrap().0, 10);
            // 10 + 7 > 16: the queue is full until the signaled completion arrives
            let more: Vec<SendWr> = (0..7)
                .map(|i| SendWr::new(i, SendOp::Send).unsignaled())
                .collect();
            assert!(matches!(qa.post_send(&more), Err(Error::QueueFull { .. })));
            let wc = wait_wc(&a.cq, 1, name);
            assert_eq!(wc[0], want_send_wc(&msgs[9], qa.qpn(), &wc[0]), "{name}");
            assert_eq!(qa.outstanding().unwrap().0, 0, "{name}: all freed");
            assert_cq_quiet(&a.cq, 20_000, name);
            for m in &msgs {
                check_dst(&b, m, name);
            }
        }
        audit(&w, m0, &a, &b, name);
    }
}

/// A WRITE the responder refuses completes with REM_ACCESS_ERR at the requester (signaled or
/// not), nothing is written, the QP goes to ERR and its later WQEs are flushed. Cases: a wrong
/// key, a stale key (deregistered and re-registered MR), a range outside the MR, an MR without
/// remote write access.
#[test]
fn bad_rkey_is_a_remote_access_error() {
    for (name, cfg) in configs() {
        let (w, ca, cb) = verbs_pair(cfg);
        let a = Side::new(&ca, 64 * 1024, 64);
        let b = Side::new(&cb, 64 * 1024, 64);
        let ro_buf = cb.alloc_buf(4096).unwrap();
        let ro = b.pd.reg_mr(&ro_buf, AccessFlags::LOCAL_WRITE).unwrap();
        let stale_buf = cb.alloc_buf(4096).unwrap();
        let stale =
            b.pd.reg_mr(
                &stale_buf,
                AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            )
            .unwrap();
        let (stale_key, stale_va) = (stale.rkey(), stale.iova());
        stale.dereg().unwrap();
        let fresh =
            b.pd.reg_mr(
                &stale_buf,
                AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            )
            .unwrap();
        assert_ne!(fresh.rkey(), stale_key, "generation bumped");
        let m0 = marks(&w);
        let cases: [(&str, u64, u32, bool); 5] = [
            ("wrong key", b.dst.iova(), b.dst.rkey() ^ 0x7F00, true),
            ("stale key", stale_va, stale_key, true),
            (
                "past the end",
                b.dst.iova() + b.dst.len() as u64 - 100,
                b.dst.rkey(),
                true,
            ),
            ("no remote write", ro.iova(), ro.rkey(), true),
            (
                "wrong generation, unsignaled",
                b.dst.iova(),
                b.dst.rkey() ^ 0x01,
                false,
            ),
        ];
        for (k, (case, va, rkey, signaled)) in cases.into_iter().enumerate() {
            let what = format!("{name}: {case}");
            let (qa, qb) = (a.qp(caps()), b.qp(caps()));
            connect_qps(&qa, &qb, &attr(Mtu::Mtu1024)).expect("connect");
            for s in [&b.dst, &fresh, &ro] {
                s.write(0, &vec![FILL; s.len()]).unwrap();
            }
            a.src.write(0, &pattern(k as u64, 200)).unwrap();
            let mut bad = SendWr::new(
                77,
                SendOp::RdmaWrite {
                    remote_addr: va,
                    rkey,
                },
            )
            .sge(a.src.sge(0, 200).unwrap());
            if !signaled {
                bad = bad.unsignaled();
            }
            let after = SendWr::new(78, SendOp::Send).sge(a.src.sge(0, 8).unwrap());
            qa.post_send(&[bad, after]).unwrap();
            let wc = wait_wc(&a.cq, 2, &what);
            assert_eq!(
                (wc[0].wr_id, wc[0].status, wc[0].qp_num),
                (77, WcStatus::RemAccessErr, qa.qpn()),
                "{what}: {:?}",
                wc[0]
            );
            assert_eq!(
                (wc[1].wr_id, wc[1].status),
                (78, WcStatus::WrFlushErr),
                "{what}: the WQE after it is flushed"
            );
            assert_eq!(qa.state().unwrap(), QpState::Err, "{what}");
            let (hw, _) = qa.query_device().unwrap();
            assert_eq!(
                hw.state,
                rnic_abi::queue::qp_state::ERR,
                "{what}: device QP state"
            );
            for s in [&b.dst, &fresh, &ro] {
                let mut got = vec![0u8; s.len()];
                s.read(0, &mut got).unwrap();
                assert!(
                    got.iter().all(|&x| x == FILL),
                    "{what}: responder memory written"
                );
            }
            assert_cq_quiet(&b.cq, 10_000, &what);
            qa.destroy().unwrap();
            qb.destroy().unwrap();
        }
        audit(&w, m0, &a, &b, name);
    }
}

/// A bad lkey on the requester: LOC_PROT_ERR, nothing sent, the QP goes to ERR.
#[test]
fn bad_lkey_is_a_local_protection_error() {
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let a = Side::new(&ca, 16 * 1024, 16);
    let b = Side::new(&cb, 16 * 1024, 16);
    let (qa, qb) = (a.qp(caps()), b.qp(caps()));
    connect_qps(&qa, &qb, &attr(Mtu::Mtu1024)).expect("connect");
    let wire0 = wire_mark(&w);
    let mut sge = a.src.sge(0, 100).unwrap();
    sge.lkey ^= 0x200;
    let wr = SendWr::new(
        5,
        SendOp::RdmaWrite {
            remote_addr: b.dst.iova(),
            rkey: b.dst.rkey(),
        },
    )
    .sge(sge);
    qa.post_send(&[wr]).unwrap();
    let wc = wait_wc(&a.cq, 1, "bad lkey");
    assert_eq!((wc[0].wr_id, wc[0].status), (5, WcStatus::LocProtErr));
    assert_eq!(qa.state().unwrap(), QpState::Err);
    assert!(
        roce_sent(&w, 0, wire0).is_empty(),
        "nothing may be sent for a WQE failing its local check"
    );
}

/// A SEND larger than the posted receive buffer: the responder completes its receive WQE with
/// LOC_LEN_ERR, the requester gets REM_INV_REQ_ERR; nothing past the buffer is written.
#[test]
fn receive_buffer_too_small_is_an_error() {
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let a = Side::new(&ca, 16 * 1024, 16);
    let b = Side::new(&cb, 16 * 1024, 16);
    let (qa, qb) = (a.qp(caps()), b.qp(caps()));
    connect_qps(&qa, &qb, &attr(Mtu::Mtu1024)).expect("connect");
    let m0 = marks(&w);
    b.dst.write(0, &vec![FILL; b.dst.len()]).unwrap();
    qb.post_recv(&[RecvWr::new(9, b.dst.sge(100, 1000).unwrap())])
        .unwrap();
    qa.post_send(&[SendWr::new(8, SendOp::Send).sge(a.src.sge(0, 3000).unwrap())])
        .unwrap();
    let wa = wait_wc(&a.cq, 1, "short receive");
    assert_eq!((wa[0].wr_id, wa[0].status), (8, WcStatus::RemInvReqErr));
    let wb = wait_wc(&b.cq, 1, "short receive");
    assert_eq!((wb[0].wr_id, wb[0].status), (9, WcStatus::LocLenErr));
    let mut got = vec![0u8; b.dst.len()];
    b.dst.read(0, &mut got).unwrap();
    assert!(got[..100].iter().all(|&x| x == FILL));
    assert!(
        got[1100..].iter().all(|&x| x == FILL),
        "written past the receive buffer"
    );
    audit(&w, m0, &a, &b, "short receive");
}

/// A SEND with no receive WQE posted: RNR NAK; without retransmission (not built yet) the
/// requester completes it with RNR_RETRY_EXC_ERR.
#[test]
fn send_without_receive_is_rnr_error() {
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let a = Side::new(&ca, 16 * 1024, 16);
    let b = Side::new(&cb, 16 * 1024, 16);
    let (qa, qb) = (a.qp(caps()), b.qp(caps()));
    // no RNR retries: the first RNR NAK ends the WQE (tests/tests/reliable.rs waits them out)
    let mut at = attr(Mtu::Mtu1024);
    at.rts.rnr_retry = 0;
    connect_qps(&qa, &qb, &at).expect("connect");
    let m0 = marks(&w);
    qa.post_send(&[SendWr::new(3, SendOp::Send).sge(a.src.sge(0, 64).unwrap())])
        .unwrap();
    let wa = wait_wc(&a.cq, 1, "RNR");
    assert_eq!((wa[0].wr_id, wa[0].status), (3, WcStatus::RnrRetryExcErr));
    audit(&w, m0, &a, &b, "RNR");
}

/// Argument and state checks through the real device (the unit tests cover them against a
/// fake device; here the same calls must fail before touching the simulated NIC's data path).
#[test]
fn verbs_argument_checks_on_the_simulated_nic() {
    let (_w, ca, cb) = verbs_pair(WorldConfig::default());
    let a = Side::new(&ca, 4096, 16);
    let b = Side::new(&cb, 4096, 16);
    assert!(ca.create_cq(48).is_err());
    let p = ca.params();
    assert!(
        a.pd.create_qp(
            &a.cq,
            &a.cq,
            QpCaps {
                max_send_wr: p.max_depth() + 1,
                ..caps()
            }
        )
        .is_err()
    );
    let (qa, qb) = (a.qp(caps()), b.qp(caps()));
    let wr = SendWr::new(1, SendOp::Send).inline(b"hi");
    assert!(matches!(qa.post_send(&[wr]), Err(Error::QpState { .. })));
    connect_qps(&qa, &qb, &attr(Mtu::Mtu4096)).unwrap();
    // the device holds what the driver wrote
    let (hw, rs) = qa.query_device().unwrap();
    let eb = qb.endpoint().unwrap();
    assert_eq!(hw.state, rnic_abi::queue::qp_state::RTS);
    assert_eq!(hw.remote_qpn, qb.qpn());
    assert_eq!(hw.sq_psn, qa.local_psn().unwrap());
    assert_eq!(rs.rq_psn, eb.psn);
    assert_eq!(hw.dest_mac, [2, 0, 0, 0, 0, 2]);
    assert_eq!(hw.src_mac, [2, 0, 0, 0, 0, 1]);
    // doorbells land in the records (the doorbell unit writes the producer indices)
    qb.post_recv(&[
        RecvWr::new(1, b.dst.sge(0, 64).unwrap()),
        RecvWr::new(2, b.dst.sge(64, 64).unwrap()),
        RecvWr::new(3, b.dst.sge(128, 64).unwrap()),
    ])
    .unwrap();
    qa.post_send(&[SendWr::new(4, SendOp::Send).inline(b"hi")])
        .unwrap();
    let (hw, _) = qa.query_device().unwrap();
    assert_eq!(hw.sq_pi, 1, "SQ doorbell -> QpContext.sq_pi");
    let (_, rs) = qb.query_device().unwrap();
    assert_eq!(rs.rq_pi, 3, "RQ doorbell -> RqState.rq_pi");
    let big = [0u8; 17];
    assert!(
        qa.post_send(&[SendWr::new(1, SendOp::Send).inline(&big)])
            .is_err()
    );
    assert!(a.src.sge(4000, 97).is_err());
    assert!(matches!(
        qa.modify_to_rtr(&rnic::RtrAttr {
            remote: eb,
            path_mtu: Mtu::Mtu1024,
            max_dest_rd_atomic: 1,
            min_rnr_timer: 12,
            traffic_class: 0,
        }),
        Err(Error::QpState { .. })
    ));
}

/// The RDMA demo (a quick plan of the same code as `make run`): deterministic under random
/// backpressure (same seed, same cycles, same pcap), every row verified inside the demo, and its
/// capture passes the independent oracles (scapy + zlib ICRC on every frame, tshark finds no
/// malformed frame).
#[test]
fn rdma_demo_is_deterministic_and_its_capture_passes_the_oracles() {
    let cfg = WorldConfig {
        seed: 42,
        ..WorldConfig::default()
    }
    .stressed(0.2);
    let plan = rnic_sim::demo::Plan::quick();
    let r1 = rnic_sim::demo::run_plan(cfg, &plan).unwrap_or_else(|e| panic!("demo: {e}"));
    let r2 = rnic_sim::demo::run_plan(cfg, &plan).unwrap();
    assert_eq!(r1.cycles, r2.cycles, "same seed, same cycles");
    assert_eq!(r1.pcap, r2.pcap, "same seed, same capture");
    assert_eq!(
        r1.rows.len(),
        plan.mtus.len() * plan.sizes.len() * plan.ops.len()
    );
    for r in &r1.rows {
        assert!(r.cycles > 0 && r.gbps() > 0.0, "{r:?}");
    }
    let roce = rnic_tests::oracle::check_capture("rdma-demo", &r1.pcap);
    assert!(roce > 50, "RoCE frames in the capture: {roce}");
}

/// Cycle budgets (deterministic: simulated cycles, never wall clock): 4 KiB and 64 KiB WRITEs
/// at MTU 4096 with 32 outstanding reach 97% / 98% of the 100 GbE wire limit, as
/// measured by `make bench` (97.9% / 98.9% today); a regression in the pipeline fails here.
#[test]
fn write_goodput_cycle_budget() {
    use rnic_sim::demo::{BenchOp, Rig, wire_limit_gbps};
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let rig = Rig::new(&w, &ca, &cb, 64 * 1024 + 4096).expect("rig");
    let (qa, qb) = rig.connect(Mtu::Mtu4096).expect("connect");
    for (size, iters, floor) in [(4096usize, 256usize, 0.97), (65536, 32, 0.98)] {
        let r = rig
            .measure(&qa, &qb, BenchOp::Write, size, iters, 32)
            .expect("measure");
        let share = r.gbps() / wire_limit_gbps(BenchOp::Write, size, 4096);
        assert!(
            share >= floor,
            "{size} B WRITEs: {:.2} Gb/s = {:.1}% of the wire limit ({} cycles for {iters})",
            r.gbps(),
            100.0 * share,
            r.cycles
        );
        rig.audit().expect("audit");
    }
}

/// Small path MTUs on the board's receive side (an RX FIFO of 32 KiB that drops a frame it
/// has no room for, no pause): 64 KiB WRITEs, SENDs and READs at MTU 256 and 512, 32
/// outstanding, reach 97% of the wire limit (99.6-99.7% today) and no frame is dropped by
/// either RX FIFO. READ at MTU 256 measured 48% with link pause and hung without it
/// (3,725 READ RESPONSEs dropped) while the ACK processor spent 10 cycles on every
/// response of a 5-cycle frame; its burst shortcut takes 2.
#[test]
fn small_mtu_goodput_on_a_drop_link_cycle_budget() {
    use rnic_sim::demo::{BenchOp, Rig, wire_limit_gbps};
    let cfg = WorldConfig {
        link: rnic_sim::eth::LinkConfig::board(),
        ..WorldConfig::default()
    };
    let (w, ca, cb) = verbs_pair(cfg);
    let rig = Rig::new(&w, &ca, &cb, 64 * 1024 + 4096).expect("rig");
    for mtu in [Mtu::Mtu256, Mtu::Mtu512] {
        let (qa, qb) = rig.connect(mtu).expect("connect");
        for op in [BenchOp::Write, BenchOp::Send, BenchOp::Read] {
            let r = rig
                .measure(&qa, &qb, op, 65536, 32, 32)
                .unwrap_or_else(|e| panic!("{mtu:?} {}: {e}", op.name()));
            let share = r.gbps() / wire_limit_gbps(op, 65536, mtu.bytes() as usize);
            let drops: Vec<u64> = w
                .borrow()
                .links
                .iter()
                .map(|l| l.stats.rx_fifo_drops)
                .collect();
            assert!(
                share >= 0.97 && drops == [0, 0],
                "{mtu:?} {}: {:.2} Gb/s = {:.1}% of the wire limit, RX FIFO drops {drops:?}",
                op.name(),
                r.gbps(),
                100.0 * share
            );
            rig.audit().expect("audit");
            w.borrow_mut().wire.clear();
        }
        qa.destroy().expect("destroy");
        qb.destroy().expect("destroy");
    }
}

/// RTS->RTS while RDMA WRITEs are in flight (issue 9): the driver writes only the attributes
/// it owns (a masked context-mailbox write), so the PSNs and indices the engine advances in
/// the meantime are never rolled back. Every modify lands mid-traffic, the QP context's
/// engine-owned fields only move forward across it, the new attributes are stored, and all
/// traffic completes with every byte in place and the final PSN/index state exact.
#[test]
fn modify_rts_to_rts_under_traffic_keeps_engine_fields() {
    use rnic::verbs::RtsAttr;
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let (n, len) = (32usize, 32 * 1024);
    let pkts = (len / 256) as u32;
    let stride = len + 4 * GUARD;
    let a = Side::new(&ca, n * stride + 4096, 64);
    let b = Side::new(&cb, n * stride + 4096, 64);
    let (qa, qb) = (a.qp(caps()), b.qp(caps()));
    connect_qps(&qa, &qb, &attr(Mtu::Mtu256)).expect("connect");
    let m0 = marks(&w);
    let psn0 = qa.query_device().unwrap().0.sq_psn;
    // distinct source and destination windows: all of them are in flight together
    let msgs: Vec<Msg> = (0..n)
        .map(|k| {
            Msg::new(
                Kind::Write,
                len,
                k * len,
                2 * GUARD + k * stride,
                900 + k as u64,
            )
        })
        .collect();
    for m in &msgs {
        post_msg(&a, &b, &qa, &qb, m);
    }
    let dist = |from: u32, to: u32| to.wrapping_sub(from) & PSN_MASK;
    let mut mid_traffic = 0;
    let mut before = qa.query_device().unwrap().0;
    for k in 0..24u8 {
        let attr = RtsAttr {
            timeout: 8 + k % 20,
            retry_cnt: k % 8,
            rnr_retry: 7 - k % 8,
            ..RtsAttr::default()
        };
        qa.modify_to_rts(&attr).expect("RTS->RTS");
        let after = qa.query_device().unwrap().0;
        let what = format!("modify {k}");
        if before.sq_ack_ci != before.sq_pi {
            mid_traffic += 1;
        }
        // forward only (and never past what was posted)
        assert!(
            dist(before.sq_psn, after.sq_psn)
                <= dist(before.sq_psn, psn0.wrapping_add(pkts * n as u32)),
            "{what}: sq_psn went back from {:#x} to {:#x}",
            before.sq_psn,
            after.sq_psn
        );
        assert!(
            dist(before.una_psn, after.una_psn) <= dist(before.una_psn, after.sq_psn),
            "{what}: una_psn went back from {:#x} to {:#x}",
            before.una_psn,
            after.una_psn
        );
        assert!(
            after.sq_ci.wrapping_sub(before.sq_ci) <= n as u16,
            "{what}: sq_ci went back from {} to {}",
            before.sq_ci,
            after.sq_ci
        );
        assert!(
            after.sq_ack_ci.wrapping_sub(before.sq_ack_ci) <= n as u16,
            "{what}: sq_ack_ci went back from {} to {}",
            before.sq_ack_ci,
            after.sq_ack_ci
        );
        assert_eq!(after.sq_pi, n as u16, "{what}: sq_pi");
        assert_eq!(
            (after.state, after.timeout, after.retry_cnt, after.rnr_retry),
            (
                rnic_abi::queue::qp_state::RTS,
                attr.timeout,
                attr.retry_cnt,
                attr.rnr_retry
            ),
            "{what}: state and the new attributes"
        );
        before = after;
    }
    assert!(
        mid_traffic >= 4,
        "only {mid_traffic} modifies landed while WQEs were in flight"
    );
    let wc = wait_wc(&a.cq, n, "RTS->RTS under traffic");
    for (m, w) in msgs.iter().zip(&wc) {
        assert_eq!(
            *w,
            want_send_wc(m, qa.qpn(), w),
            "completion of {:#x}",
            m.wr_id()
        );
    }
    for m in &msgs {
        check_dst(&b, m, &format!("WRITE {:#x}", m.wr_id()));
    }
    // the engine's final state: exactly n WQEs of `pkts` packets each, all acknowledged
    let qc = qa.query_device().unwrap().0;
    let psn_end = psn0.wrapping_add(pkts * n as u32) & PSN_MASK;
    assert_eq!(
        (qc.sq_psn, qc.una_psn, qc.sq_ci, qc.sq_ack_ci, qc.sq_pi),
        (psn_end, psn_end, n as u16, n as u16, n as u16),
        "final requester state"
    );
    assert_eq!(qa.state().unwrap(), QpState::Rts);
    assert_cq_quiet(&a.cq, 20_000, "RTS->RTS under traffic");
    audit(&w, m0, &a, &b, "RTS->RTS under traffic");
}
