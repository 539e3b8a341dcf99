//! Every QP of the default build at once (issue 12): 2048 QPs per NIC, of which the driver
//! keeps QP 0 and 1, so 2046 connected pairs. Standard-ring QPs and the deep-ring QPs (the
//! last `deep_qps` QP numbers) carry WRITEs round robin; goodput and message rate are checked
//! as shares of the wire limit and of the cycles per message (simulated cycles, never wall
//! clock), and every byte lands where it should (the rig's DMA audit).

use rnic::verbs::{Mtu, QpCaps};
use rnic_abi::params::DEFAULT;
use rnic_sim::WorldConfig;
use rnic_sim::demo::{BenchOp, Rig, wire_limit_gbps};
use rnic_tests::verbs_pair;

/// 4 KiB WRITEs, 4 per QP with 4 outstanding each (2 over the 16k-QP build's 16,382 pairs,
/// as many as the rig's CQ holds), round robin over all 2046 pairs: at least
/// 97% of the wire limit (the floor); then 64-byte WRITEs, one outstanding per QP
/// (every message on another QP: txreq reads the next QP's context ahead, ackproc the next
/// ACK's, every record read by the responder): at most 7.5 cycles per message over the whole
/// run (13.06 before the read-ahead, 9.25 after; 8.45 with the context store's second port,
/// 8.69 with the responder's early Emit exit; 7.67 with ackproc's first WQE read asked for
/// with the take, 5 cycles per ACK on other QPs; 7.60 with txreq reading the next QP's first
/// WQE ahead too, 4 cycles per turn; 7.13 since the context store serves a waiting writer on
/// port A and a reader on port B in the same cycle; 6.04 since the responder reads a QP's two
/// records at once (6 cycles per frame on another QP) and an event queue lets the ACK
/// processor read the next ACK's record ahead; 5.88 since the responder reads the next
/// frame's records while a frame is in Decide (4 cycles per frame on another QP when the
/// next one is queued; A's transmit side and its context store, 4.33 writes per message,
/// paced it); 5.63 since the CQ table has a RAM bank of its own (the producer write-backs
/// and CQ doorbells no longer take the QP table's write port); 5.21 since the ACK processor
/// takes the next ACK in the write-back's cycle (4 cycles per ACK on another QP); 5.12 with
/// txreq's write-back ahead of the doorbell unit's writes; 5.13 with SQ doorbells in the
/// store's `sq_pi` bank (the store's waits fell, not the row: txreq's 4-cycle turn and its
/// late read-ahead paced it); 5.07 with the next QP's first WQE read from Check and from the
/// record's read data; 4.46 since A's responder takes an ACK on another QP in 3 cycles (the
/// QpContext read ahead taken as it comes: it took 5 and paced the row, the ACK frames
/// queued on the link in front of it while txreq ran ahead); 4.26 since the ACK processor
/// reads an ACK's first WQE from the event's hint while its write-back waits for the next
/// record; 4.14 by stop 59; 4.04 since the ring memory serves the ACK processor's reads
/// before txreq's (an ACK walk's reads ahead excepted): budget 4.3, 58.1 Mpps or more.
#[test]
fn every_qp_at_line_rate() {
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let rig = Rig::new(&w, &ca, &cb, 2 * 1024 * 1024).expect("rig");
    let mut pairs = Vec::new();
    while let Ok(p) = rig.connect_with(Mtu::Mtu4096, QpCaps::default()) {
        pairs.push(p);
    }
    let want = (DEFAULT.num_qps - 2) as usize;
    assert_eq!(pairs.len(), want, "QP pairs made");
    // the standard rings ran out first, then the deep-ring QPs were handed out
    assert!(DEFAULT.is_deep(pairs.last().unwrap().0.qpn()));
    assert!(!DEFAULT.is_deep(pairs[0].0.qpn()));
    let refs: Vec<_> = pairs.iter().map(|(a, b)| (a, b)).collect();

    let r = rig
        .measure_spread(&refs, BenchOp::Write, 4096, 4, Rig::all_qp_depth(want))
        .expect("4 KiB spread");
    rig.audit().expect("audit after 4 KiB");
    let limit = wire_limit_gbps(BenchOp::Write, 4096, 4096);
    let share = r.gbps() / limit;
    assert_eq!(r.iters, 4 * want);
    assert!(
        share >= 0.97,
        "4 KiB over {want} QPs: {:.2} Gb/s = {:.1}% of {limit:.2} ({} cycles)",
        r.gbps(),
        100.0 * share,
        r.cycles
    );

    let before = [ctx_counters(&ca), ctx_counters(&cb)];
    let mmio0 = w.borrow().nics[0].mmio.stats;
    let r = rig
        .measure_spread(&refs, BenchOp::Write, 64, 4, 1)
        .expect("64 B spread");
    rig.audit().expect("audit after 64 B");
    let per = r.cycles as f64 / r.iters as f64;
    // the context store's load per message on both NICs (engstat ctx_* counters)
    for (name, ctx, b) in [("A", &ca, &before[0]), ("B", &cb, &before[1])] {
        let d: Vec<String> = ctx_counters(ctx)
            .iter()
            .zip(b)
            .map(|((n, v), (_, v0))| {
                format!("{n} {:.2}", v.wrapping_sub(*v0) as f64 / r.iters as f64)
            })
            .collect();
        eprintln!(
            "64 B over {want} QPs, NIC {name} per message: {}",
            d.join(", ")
        );
    }
    let m1 = w.borrow().nics[0].mmio.stats;
    eprintln!(
        "64 B over {want} QPs, A's BARs per message: {:.2} busy cycles, {:.2} reads, {:.2} writes, {:.2} pushes",
        (m1.busy_cycles - mmio0.busy_cycles) as f64 / r.iters as f64,
        (m1.reads - mmio0.reads) as f64 / r.iters as f64,
        (m1.writes - mmio0.writes) as f64 / r.iters as f64,
        (m1.pushes - mmio0.pushes) as f64 / r.iters as f64,
    );
    assert!(
        per <= 4.3,
        "64 B over {want} QPs: {per:.2} cycles per message, {:.2} Mpps ({} messages in {} cycles)",
        r.mpps(),
        r.iters,
        r.cycles
    );
    eprintln!(
        "every_qp_at_line_rate: 4 KiB {:.1}% of the wire limit; 64 B {per:.2} cycles per message",
        100.0 * share
    );

    // 64-byte READs the same way: the NIC's READ rate (A's requests, B's responses and host
    // reads, A's placement), not one QP's max_rd_atomic over a round trip
    let r = rig
        .measure_spread(&refs, BenchOp::Read, 64, 4, 1)
        .expect("64 B READ spread");
    rig.audit().expect("audit after 64 B READs");
    let per_rd = r.cycles as f64 / r.iters as f64;
    eprintln!(
        "every_qp_at_line_rate: 64 B READs {per_rd:.2} cycles per message, {:.2} Mpps",
        r.mpps()
    );
    assert!(
        per_rd <= READ_SPREAD_BUDGET,
        "64 B READs over {want} QPs: {per_rd:.2} cycles per message ({} in {} cycles)",
        r.iters,
        r.cycles
    );
}

/// Cycles per 64-byte READ round robin over every QP, one outstanding on each: 14.19 at stop
/// 37 (17.6 Mpps), bound by A's responder, which waited about 10 cycles per READ RESPONSE on
/// another QP for the ACK processor's verdict (its QP record and WQE reads) before it placed
/// the payload; B answers faster (a READ request takes its responder 3 to 4 cycles). 10.09
/// (24.8 Mpps) since the responder hands the next READ RESPONSE's event to the ACK processor
/// while it waits for the verdict of the one before, so the ACK processor reads that QP's
/// record ahead. 8.09 (30.9 Mpps) since the ACK processor's completion of a READ WQE waits
/// for `placed` itself (no Placed state) and does its Post work in place. 7.09 (35.3 Mpps)
/// since a walk that stops at its first WQE, a READ, decides the READ in that cycle (6 cycles
/// per READ RESPONSE on another QP in the block) and the next event's record is read ahead
/// in the READ states too. 6.60 (37.9 Mpps) since an event taken while its record read
/// ahead is still coming (44% of them) asks for its first WQE in CtxWait, not in the walk.
/// 5.80 (43.1 Mpps) since every event carries its QP's `sq_ack_ci` as a hint, from which the
/// ACK processor reads the event's first WQE before or with its take, and the responder
/// sends the next READ RESPONSE's event early in Emit too. 5.60 (44.6 Mpps) since a READ
/// RESPONSE whose event did not go early offers it from the responder's Idle when its
/// records are read ahead (the early event came for one frame in two), and the ACK
/// processor retires a READ in its verdict's cycle also when it is the QP's only WQE sent.
/// 5.18 (48.3 Mpps) since the ACK processor keeps the QP record the responder reads for a
/// READ RESPONSE as its own read ahead (the event of such a frame came too late for a read of
/// the ACK processor's own, which then took two cycles in CtxWait). 4.86 (51.5 Mpps) since
/// the responder reads the frame behind's record in the head's Idle (a cycle before its
/// Decide would) and the ACK processor reads a shared record's first WQE itself (from the
/// record's `sq_ack_ci`) while it decides the event ahead, so that walk decides in its first
/// cycle. 4.54 (55.0 Mpps) since the ring memory serves the ACK processor's reads before
/// txreq's (they waited 0.40 cycles per READ for the port; then the walk took 1.5 cycles a
/// READ, its WQE a cycle late in every other one); 4.04 (61.8 Mpps) since the ACK processor
/// reads that WQE from the responder's record as its data comes (`px_hx`): budget 4.3.
const READ_SPREAD_BUDGET: f64 = 4.3;

/// The context store's counters (engstat `ctx_*`) of one NIC.
fn ctx_counters(ctx: &rnic::verbs::Context<rnic_sim::SimNic>) -> Vec<(&'static str, u32)> {
    let all = ctx.engine_counters().expect("engine counters");
    all.into_iter()
        .filter(|(n, _)| n.starts_with("ctx_"))
        .collect()
}

/// One QP with deep rings (512-deep SQ and RQ, a deep-ring QP number) and 256 64-byte
/// WRITEs (then SENDs, 12,288 of each) outstanding: the outstanding WQEs cover the ~500-cycle round trip, so
/// the NIC's per-message cost on one QP bounds the rate, not the ring. Cycles per 64 B WRITE:
/// 17.8 with 32 outstanding on a 64-deep ring; 16.33 with 256 when every message asked for an
/// ACK; 12.33 with ACK coalescing; 8.25 since txreq chains WQEs of one QP from its kept context
/// (a doorbell for the QP does not break the chain), the responder and cqwriter keep their
/// records, and txbuild reads 64 packets ahead; 7.30 with txreq's kept MR; 7.06 with ackproc
/// at 5 cycles per ACK; 4.86 since txreq reads the next WQE ahead and checks it on the kept MR
/// a cycle early (3 cycles per WQE), follows the ACK processor's writes to the QP's record
/// instead of breaking its chain on them, and cqwriter takes a completion every 2 to 3 cycles
/// (5 before); 4.15 since the host-memory model takes 64 outstanding reads (32 held one
/// payload read per 4.7 cycles; B's responder, 4 cycles per WRITE ONLY frame, then bound it);
/// 4.07 since the responder takes a WRITE of the same QP straight from Emit (3 cycles; A's
/// txreq, 3.77 cycles per frame, bounded it); 4.31 since the CQ table's own RAM bank lets
/// txreq run at about 3.55 cycles per frame: A's completion path (cqwriter at 3 cycles per
/// CQE, ackproc's gaps between ACKs) is then saturated, completions lag their ACKs by about
/// 740 cycles, 256 outstanding no longer cover that and A's SQ runs dry about 150 times
/// (docs/BENCHMARKS.md, stop 35); 4.16 since cqwriter queues two data beats and no longer
/// waits in Issue for the DMA engine to take the one before; 4.14 with the ACK processor
/// taking the next ACK in its write-back's cycle; 3.46 (72.2 Mpps) since a 16-entry queue
/// (`cq::cplq`) lets the ACK processor's walk run ahead of cqwriter (the walk had waited on
/// each CQE write, 3.4 cycles per WQE, busy 92% of the time), txreq's Check no longer waits
/// after a doorbell's `sq_pi` write and txreq's write-back goes before the doorbell unit's
/// writes (frames 3, 3, 3, 4 cycles apart, 3.25 over frames 1000 to 3000, asserted at 3.3:
/// the wire limit of a 64-byte WRITE ONLY frame is 3.24): budget 3.7. SEND: 16.34, then 12.2 (the
/// responder's records kept), 9.16 (its receive WQE read with the decision, its MR kept),
/// 8.16 (the responder's Emit leaves in the cycle its last item is taken), 6.15 (the
/// responder reads the next receive WQE ahead and takes the kept MR from the WQE's read data:
/// 6 cycles per SEND), 3.49 (71.7 Mpps, frames 3.17 cycles apart in the steady state;
/// wire limit 2.92) since the responder takes a SEND ONLY in 3 cycles (its next receive WQE
/// read ahead from Decide, straight from Emit to Decide) and the host port's AXI mux lets
/// write addresses run ahead of their data (a burst was locked from AW to WLAST, 3 cycles for
/// one beat: B's payload and CQE writes held a SEND to 6 cycles). Then 3.40 for WRITE and
/// 3.38 for SEND (frames 3.25 and 3.15 apart in the steady state) since cqwriter keeps 128
/// CQE writes in flight instead of 32 (32 per ~110-cycle write round trip held it to 3.4
/// cycles per CQE: the completions fell ~570 cycles behind and the SQ ran dry at the device
/// every few hundred messages after the first 7,000) and the DMA engine 128 write commands
/// waiting for B instead of 64; the rest is the first frame's ~500 cycles and the last
/// completion's ~110 over 4,096 messages. The run is 12,288 messages since stop 38 (the SQ
/// ran dry only after the first 7,000): 3.30 cycles per WRITE (75.8 Mpps) and 3.28 per SEND
/// (76.2): budget 3.35 for both; the steady state is asserted for both at most 3.3 cycles
/// apart and not below the wire limit, and no WRITE frame leaves more than 4 cycles after
/// the one before it (the wire limit's 3-3-3-4 pattern: the SQ never runs dry; with 32 CQE
/// writes in flight, gaps of 6 to 11 cycles came every few hundred frames after frame
/// 7,400). SEND frames still leave gaps of up to ~18 cycles after frame ~5,000: B's
/// responder (3 cycles per SEND ONLY plus its waits in Emit) is slower than A's sender, so
/// B's completions and ACKs fall behind until the 256 outstanding no longer cover the loop.
#[test]
fn one_deep_qp_message_rate() {
    for (op, budget) in [(BenchOp::Write, 3.35), (BenchOp::Send, 3.35)] {
        let (w, ca, cb) = verbs_pair(WorldConfig::default());
        let rig = Rig::new(&w, &ca, &cb, 64 * 1024).expect("rig");
        let deep = QpCaps {
            max_send_wr: DEFAULT.deep_depth,
            max_recv_wr: DEFAULT.deep_depth,
            ..QpCaps::default()
        };
        let (qa, qb) = rig.connect_with(Mtu::Mtu4096, deep).expect("connect");
        assert!(DEFAULT.is_deep(qa.qpn()) && DEFAULT.is_deep(qb.qpn()));
        let c0 = w.borrow().cycle;
        let r = rig.measure(&qa, &qb, op, 64, 12288, 256).expect("measure");
        rig.audit().expect("audit");
        // the steady state: A's request frames (link 0) 1000 to 3000 of the run
        let sent: Vec<u64> = w
            .borrow()
            .wire
            .iter()
            .filter(|(l, f)| *l == 0 && f.sent_at >= c0)
            .map(|(_, f)| f.sent_at)
            .collect();
        assert_eq!(sent.len(), 12288, "one frame per message");
        let steady = (sent[3000] - sent[1000]) as f64 / 2000.0;
        eprintln!(
            "one_deep_qp_message_rate: {} frames {steady:.3} cycles apart in the steady state",
            op.name()
        );
        // one frame per message near the wire limit: 64 bytes of goodput at
        // `wire_limit_gbps`, 4 ns a cycle (3.24 cycles for a 64-byte WRITE ONLY, 2.92 for a
        // SEND ONLY)
        let wire = 64.0 * 8.0 / wire_limit_gbps(op, 64, 4096) / 4.0;
        assert!(
            steady <= 3.3 && steady >= wire,
            "{} frames {steady:.3} cycles apart (wire limit {wire:.3})",
            op.name()
        );
        let max_gap = sent.windows(2).map(|p| p[1] - p[0]).max().unwrap_or(0);
        eprintln!(
            "one_deep_qp_message_rate: {} frames at most {max_gap} cycles apart",
            op.name()
        );
        if op == BenchOp::Write {
            assert!(
                max_gap <= 4,
                "WRITE frames {max_gap} cycles apart: the SQ ran dry at the device"
            );
        }
        let per = r.cycles as f64 / r.iters as f64;
        eprintln!(
            "one_deep_qp_message_rate: {per:.2} cycles per 64 B {}, {:.2} Mpps",
            op.name(),
            r.mpps()
        );
        assert!(
            per <= budget,
            "64 B {}s, 256 outstanding on one QP: {per:.2} cycles per message ({} in {} cycles)",
            op.name(),
            r.iters,
            r.cycles
        );
    }
}
