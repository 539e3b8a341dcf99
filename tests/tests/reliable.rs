//! Reliable RC over a faulty fabric: the engine's own retransmission (go-back-N on sequence
//! NAKs and ACK timeouts, RNR waits), with two simulated NICs driven through the verbs API.
//! Every message must complete successfully exactly once, with the destination memory equal to
//! the model byte for byte and nothing written outside the MRs and CQ rings; every atomic
//! executes exactly once (its original value and the final atomic words equal the model).

use rnic::verbs::{
    AccessFlags, CompletionQueue, Context, MemoryRegion, Mtu, ProtectionDomain, QpCaps, QueuePair,
    RecvWr, SendOp, SendWr, WcStatus, WorkCompletion,
};
use rnic_sim::lossy::{self, attr};
use rnic_sim::{SimNic, WorldConfig};
use rnic_tests::{audit_dma_writes, audit_mark, connect_qps, pattern, verbs_pair};
use std::collections::HashMap;

type Ctx = Context<SimNic>;

/// Small per-test rig: a PD, a CQ, a source and a destination MR.
struct Side<'c> {
    pd: ProtectionDomain<'c, SimNic>,
    cq: CompletionQueue<'c, SimNic>,
    src: MemoryRegion<'c, SimNic>,
    dst: MemoryRegion<'c, SimNic>,
}

impl<'c> Side<'c> {
    fn new(ctx: &'c Ctx) -> Side<'c> {
        let pd = ctx.alloc_pd().expect("pd");
        let cq = ctx.create_cq(64).expect("cq");
        let sbuf = ctx.alloc_buf(64 * 1024).expect("src");
        let dbuf = ctx.alloc_buf(64 * 1024).expect("dst");
        let src = pd.reg_mr(&sbuf, AccessFlags::empty()).expect("src mr");
        let dst = pd
            .reg_mr(&dbuf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE)
            .expect("dst mr");
        Side { pd, cq, src, dst }
    }
    fn qp(&self) -> QueuePair<'_, SimNic> {
        self.pd
            .create_qp(&self.cq, &self.cq, QpCaps::default())
            .expect("qp")
    }
    fn allowed(&self) -> Vec<(u64, usize)> {
        let r = self.cq.ring();
        vec![(self.dst.iova(), self.dst.len()), (r.iova(), r.len())]
    }
}

fn counters(ctx: &Ctx) -> HashMap<&'static str, u32> {
    ctx.engine_counters()
        .expect("counters")
        .into_iter()
        .collect()
}

/// Loss, duplication, reordering and bit flips in both directions on 16 QP pairs running in
/// both directions at once (10,000 messages of WRITE, WRITE_IMM, SEND, SEND_IMM, READ,
/// FETCH_ADD and CMP_SWAP): every message completes successfully exactly once, every
/// destination byte equals the model, every atomic returns the model's original value and the
/// atomic words end at the model's values (an atomic executed twice or never would show), the
/// DMA audit is clean (`rnic_sim::lossy`).
#[test]
fn lossy_fabric_mixed_traffic_completes_exactly_once() {
    let o = lossy::run(
        lossy::faulty(11, 0.01),
        lossy::Workload::mixed(16, 10_000, 7),
        |_| {},
    )
    .unwrap_or_else(|e| panic!("{e}"));
    println!("{}", lossy::report("1% loss", &o));
    assert_eq!(o.messages, 10_000);
    // 2 of the 7 kinds are atomics; CMP_SWAPs both swap and fail
    assert!(o.atomics > 2000, "only {} atomics", o.atomics);
    assert!(
        o.swaps > 300 && o.swaps < o.atomics / 2,
        "{} swaps",
        o.swaps
    );
    // executed once each: duplicates are answered from the saved results
    assert_eq!(o.sum("rx_atomic"), o.atomics as u64, "atomics executed");
    println!(
        "atomics: {} ({} swapped), duplicates answered {}, unanswerable {}",
        o.atomics,
        o.swaps,
        o.sum("atom_dup"),
        o.sum("atom_miss")
    );
    assert!(o.sum("restarts") > 0, "the faults caused no retransmission");
    assert!(
        o.links
            .iter()
            .all(|l| l.lost > 0 && l.duplicated > 0 && l.reordered > 0 && l.flipped > 0)
    );
    assert_eq!(o.sum("retry_exc"), 0);
    println!(
        "RX FIFO drops: A->B {}, B->A {}",
        o.links[0].rx_fifo_drops, o.links[1].rx_fifo_drops
    );
}

/// A SEND posted before the peer's receive waits out RNR NAKs (rnr_retry 7) and completes
/// once the receive is posted; with rnr_retry 0 it ends in RNR_RETRY_EXC_ERR.
#[test]
fn rnr_retry_waits_for_the_receive() {
    let (w, ca, cb) = verbs_pair(WorldConfig::default());
    let a = Side::new(&ca);
    let b = Side::new(&cb);
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
    // every RNR NAK B sent reached A; those arriving during a wait are ignored there
    assert!(counters(&cb)["nak_rnr"] >= rnr);
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
/// local ACK timeout (4.096 us x 2^timeout) plus the timer's jitter (less than half of it),
/// in simulated cycles: never earlier than IBTA gives.
#[test]
fn silent_peer_ends_in_retry_exc_err_on_time() {
    for (timeout, retry_cnt) in [(4u8, 3u8), (6, 1), (5, 0)] {
        let (w, ca, cb) = verbs_pair(WorldConfig::default());
        let a = Side::new(&ca);
        let b = Side::new(&cb);
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
        // each timeout fires within its jitter (< unit / 2) and one timer scan (num_qps
        // cycles) plus the pipeline
        let slack = (retry_cnt as u64 + 1)
            * (unit / 2 + rnic_abi::params::DEFAULT.num_qps as u64 + 200)
            + 500;
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
