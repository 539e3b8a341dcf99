//! Frames crafted by scapy (`tests/oracle/craft.py`, not by our frame builder) fed into NIC B's
//! receive port: a valid WRITE ONLY lands in memory and is ACKed, a SEND ONLY consumes a
//! receive WQE and completes it, and a bad ICRC, a stale rkey, an out-of-bounds address and
//! unknown QPs are dropped or NAKed as IBTA says, with memory untouched and the counters
//! moved. NIC B is set up through the low-level driver (context records written directly), so
//! this checks the responder against the specification without the verbs layer.

use rnic::Rnic;
use rnic::device::{Device, DmaRegion};
use rnic_abi::queue::{
    CqContext, Cqe, MrEntry, QpContext, RqState, Wqe, access, aeth, cqe_flag, make_key, qp_state,
    wc_op, wc_status, wqe_op,
};
use rnic_abi::regs::{ctx, db};
use rnic_abi::roce::opcode;
use rnic_sim::{SimNic, WorldConfig};
use rnic_tests::{oracle, pair};

const MAC_A: [u8; 6] = [2, 0, 0, 0, 0, 1];
const MAC_B: [u8; 6] = [2, 0, 0, 0, 0, 2];
const IP_A: u32 = 0x0A00_0001;
const IP_B: u32 = 0x0A00_0002;
const PD: u32 = 1;
const PEER_QPN: u32 = 0x11;
/// Traffic class of B's QPs: the IPv4 TOS of B's frames is its DSCP with ECN ECT(0).
const TCLASS: u8 = 0x69;
/// IBTA RNR timer code of B's QPs.
const RNR_CODE: u8 = 0x12;

struct Setup {
    wbuf: DmaRegion,
    rbuf: DmaRegion,
    cq: DmaRegion,
    wkey: u32,
}

fn qp(b: &mut Rnic<SimNic>, qpn: u32, rq_psn: u32) {
    let q = QpContext {
        state: qp_state::RTS,
        qp_type: 2,
        path_mtu: 5,
        access: access::REMOTE_WRITE as u8,
        remote_qpn: PEER_QPN,
        sq_psn: 7,
        una_psn: 7,
        dest_mac: MAC_A,
        udp_sport: 0xC001,
        dest_ip: IP_A,
        src_ip: IP_B,
        pd: PD,
        send_cqn: 0,
        recv_cqn: 0,
        src_mac: MAC_B,
        min_rnr_timer: RNR_CODE,
        traffic_class: TCLASS,
        ..Default::default()
    };
    b.write_context(ctx::TABLE_QP, qpn, &q.encode()).unwrap();
    let r = RqState {
        rq_psn,
        ..Default::default()
    };
    b.write_context(ctx::TABLE_RQS, qpn, &r.encode()).unwrap();
}

fn setup(b: &mut Rnic<SimNic>) -> Setup {
    let wbuf = b.device().dma_alloc(8192).unwrap();
    let rbuf = b.device().dma_alloc(4096).unwrap();
    let cq = b.device().dma_alloc(16 * Cqe::SIZE).unwrap();
    let wkey = make_key(1, 0x5A);
    let mr = MrEntry {
        key: wkey,
        pd: PD,
        iova: wbuf.iova,
        length: 4096, // the second page of wbuf is outside the MR
        access: access::REMOTE_WRITE | access::LOCAL_WRITE,
        flags: 1,
    };
    b.write_context(ctx::TABLE_MR, 1, &mr.encode()).unwrap();
    let rkey = make_key(2, 0x33);
    let mr2 = MrEntry {
        key: rkey,
        pd: PD,
        iova: rbuf.iova,
        length: 4096,
        access: access::LOCAL_WRITE,
        flags: 1,
    };
    b.write_context(ctx::TABLE_MR, 2, &mr2.encode()).unwrap();
    let cqc = CqContext {
        base_iova: cq.iova,
        log2_entries: 4,
        flags: 1,
        ..Default::default()
    };
    b.write_context(ctx::TABLE_CQ, 0, &cqc.encode()).unwrap();
    qp(b, 2, 100);
    qp(b, 3, 500);
    let recv = Wqe {
        opcode: wqe_op::RECV,
        length: 4096,
        wr_id: 0xABC,
        local_addr: rbuf.iova,
        lkey: rkey,
        ..Default::default()
    };
    b.push_rq_wqe(2, 0, &recv).unwrap();
    b.doorbell(db::RQ, 2, 1).unwrap();
    Setup {
        wbuf,
        rbuf,
        cq,
        wkey,
    }
}

fn mac(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn ip(a: u32) -> String {
    std::net::Ipv4Addr::from(a).to_string()
}

/// One frame spec for craft.py (A -> B).
fn spec(dqpn: u32, psn: u32, op: u8, payload: &[u8], extra: &str) -> String {
    let hex: String = payload.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        r#"{{"dmac":"{}","smac":"{}","sip":"{}","dip":"{}","sport":49153,"dqpn":{dqpn},"psn":{psn},"opcode":{op},"ackreq":true,"payload":"{hex}"{extra}}}"#,
        mac(MAC_B),
        mac(MAC_A),
        ip(IP_A),
        ip(IP_B)
    )
}

fn reth(va: u64, rkey: u32, len: usize) -> String {
    format!(r#","reth":{{"va":{va},"rkey":{rkey},"dmalen":{len}}}"#)
}

/// Frames B sent (link 1), from index `from`.
fn sent_by_b(b: &mut Rnic<SimNic>, from: usize) -> Vec<Vec<u8>> {
    let w = b.device().world().clone();
    let w = w.borrow();
    w.wire
        .iter()
        .filter(|(l, _)| *l == 1)
        .skip(from)
        .map(|(_, f)| f.data.clone())
        .collect()
}

/// (opcode, PSN, AETH syndrome, MSN) of an ACKNOWLEDGE frame.
fn ack_fields(f: &[u8]) -> (u8, u32, u8, u32) {
    assert!(f.len() >= 62, "ACK frame of {} bytes", f.len());
    (
        f[42],
        u32::from_be_bytes([0, f[51], f[52], f[53]]),
        f[54],
        u32::from_be_bytes([0, f[55], f[56], f[57]]),
    )
}

fn wait_frames(b: &mut Rnic<SimNic>, from: usize, n: usize) -> Vec<Vec<u8>> {
    for _ in 0..400 {
        let got = sent_by_b(b, from);
        if got.len() >= n {
            return got;
        }
        b.device().world().borrow_mut().run(250);
    }
    sent_by_b(b, from)
}

fn settle(b: &mut Rnic<SimNic>) {
    b.device().world().borrow_mut().run(3000);
}

fn qp_state_of(b: &mut Rnic<SimNic>, qpn: u32) -> u8 {
    QpContext::decode(&b.read_context(ctx::TABLE_QP, qpn).unwrap()).state
}

/// Put QP `qpn` back to RTS by a byte-masked write of `state` (what a test may do to keep
/// using a QP the responder moved to ERR; the other fields stay as they are).
fn revive(b: &mut Rnic<SimNic>, qpn: u32) {
    let q = QpContext {
        state: qp_state::RTS,
        ..Default::default()
    };
    let f = QpContext::field("state").unwrap();
    b.write_context_masked(ctx::TABLE_QP, qpn, &q.encode(), 1 << f.offset)
        .unwrap();
}

fn mem(b: &mut Rnic<SimNic>, buf: &DmaRegion) -> Vec<u8> {
    let mut v = vec![0; buf.len];
    b.device().dma_read(buf, 0, &mut v).unwrap();
    v
}

#[test]
fn scapy_frames_land_ack_nak_and_drop_as_specified() {
    let (_w, mut a, mut b) = pair(WorldConfig::default());
    let s = setup(&mut b);
    let base = b.engine_counters().unwrap();
    let cnt = |b: &mut Rnic<SimNic>, n: &str| {
        b.engine_counter(n).unwrap() - base.iter().find(|x| x.0 == n).unwrap().1
    };

    // 1. WRITE ONLY, 37 bytes at an unaligned address: lands, ACK PSN 100 MSN 1
    let p1: Vec<u8> = (0..37u8)
        .map(|i| i.wrapping_mul(7).wrapping_add(3))
        .collect();
    let f = oracle::craft(&format!(
        "[{}]",
        spec(
            2,
            100,
            opcode::WRITE_ONLY,
            &p1,
            &reth(s.wbuf.iova + 5, s.wkey, 37)
        )
    ));
    a.mac_send(&f[0]).unwrap();
    let acks = wait_frames(&mut b, 0, 1);
    assert_eq!(acks.len(), 1, "one ACK for the WRITE");
    assert_eq!(
        ack_fields(&acks[0]),
        (opcode::ACKNOWLEDGE, 100, aeth::ACK, 1)
    );
    let mut want_w = vec![0u8; 8192];
    want_w[5..42].copy_from_slice(&p1);
    assert_eq!(mem(&mut b, &s.wbuf), want_w, "WRITE payload placement");

    // 2. SEND ONLY, 20 bytes: consumes the receive WQE, CQE in CQ 0 slot 0, ACK 101 MSN 2
    let p2: Vec<u8> = (100..120u8).collect();
    let f = oracle::craft(&format!("[{}]", spec(2, 101, opcode::SEND_ONLY, &p2, "")));
    a.mac_send(&f[0]).unwrap();
    let acks = wait_frames(&mut b, 1, 1);
    assert_eq!(
        ack_fields(&acks[0]),
        (opcode::ACKNOWLEDGE, 101, aeth::ACK, 2)
    );
    settle(&mut b);
    let r = mem(&mut b, &s.rbuf);
    assert_eq!(&r[..20], &p2[..]);
    assert!(r[20..].iter().all(|&x| x == 0), "nothing past the SEND");
    let c = mem(&mut b, &s.cq);
    let cqe = Cqe::decode(c[..32].try_into().unwrap());
    assert_eq!(
        (cqe.wr_id, cqe.byte_len, cqe.opcode, cqe.status),
        (0xABC, 20, wc_op::RECV, wc_status::SUCCESS),
        "{cqe:?}"
    );
    assert_eq!((cqe.qp_num, cqe.src_qp), (2, PEER_QPN), "{cqe:?}");
    assert_ne!(
        cqe.flags & cqe_flag::OWNER,
        0,
        "owner bit of the first pass"
    );
    assert!(c[32..].iter().all(|&x| x == 0), "one CQE only");
    assert_eq!(cnt(&mut b, "rx_req"), 2);
    assert_eq!(cnt(&mut b, "cqe"), 1);

    // 3. bad ICRC: dropped silently, counted
    let f = oracle::craft(&format!(
        r#"[{}]"#,
        spec(
            2,
            102,
            opcode::WRITE_ONLY,
            &p1,
            &(reth(s.wbuf.iova + 100, s.wkey, 37) + r#","bad_icrc":true"#)
        )
    ));
    a.mac_send(&f[0]).unwrap();
    settle(&mut b);
    assert_eq!(sent_by_b(&mut b, 2).len(), 0, "no answer to a bad ICRC");
    assert_eq!(cnt(&mut b, "drop_icrc"), 1);

    // 4. stale rkey (wrong generation): NAK remote access error, nothing written
    let stale = make_key(1, 0x5B);
    let f = oracle::craft(&format!(
        "[{}]",
        spec(
            2,
            102,
            opcode::WRITE_ONLY,
            &p1,
            &reth(s.wbuf.iova + 200, stale, 37)
        )
    ));
    a.mac_send(&f[0]).unwrap();
    let naks = wait_frames(&mut b, 2, 1);
    let (op, psn, syn, _) = ack_fields(&naks[0]);
    assert_eq!(
        (op, psn, syn),
        (opcode::ACKNOWLEDGE, 102, aeth::NAK_REM_ACCESS)
    );
    assert_eq!(cnt(&mut b, "nak_acc"), 1);

    // 5. out of bounds (QP 3): 16 bytes from 6 bytes before the MR's end
    let f = oracle::craft(&format!(
        "[{}]",
        spec(
            3,
            500,
            opcode::WRITE_ONLY,
            &[0xEE; 16],
            &reth(s.wbuf.iova + 4090, s.wkey, 16)
        )
    ));
    a.mac_send(&f[0]).unwrap();
    let naks = wait_frames(&mut b, 3, 1);
    let (op, psn, syn, _) = ack_fields(&naks[0]);
    assert_eq!(
        (op, psn, syn),
        (opcode::ACKNOWLEDGE, 500, aeth::NAK_REM_ACCESS)
    );
    assert_eq!(cnt(&mut b, "nak_acc"), 2);

    // 6. unknown QPs: one in RESET, one beyond the table: dropped, counted, no answer
    let f = oracle::craft(&format!(
        "[{},{}]",
        spec(
            200,
            1,
            opcode::WRITE_ONLY,
            &p1,
            &reth(s.wbuf.iova, s.wkey, 37)
        ),
        spec(5000, 1, opcode::SEND_ONLY, &p2, "")
    ));
    a.mac_send(&f[0]).unwrap();
    a.mac_send(&f[1]).unwrap();
    settle(&mut b);
    assert_eq!(sent_by_b(&mut b, 4).len(), 0, "no answer to unknown QPs");
    assert_eq!(cnt(&mut b, "drop_qp"), 2);

    // memory: exactly the WRITE and the SEND, nothing else, anywhere
    assert_eq!(mem(&mut b, &s.wbuf), want_w, "bad frames wrote nothing");
    let w = b.device().world().clone();
    let w = w.borrow();
    let ok_ranges = [(s.wbuf.iova + 5, 37), (s.rbuf.iova, 20), (s.cq.iova, 32)];
    if let Err(e) = w.audit_dma_writes(1, 0, &ok_ranges) {
        panic!("DMA writes outside the expected ranges: {e}");
    }
    // every frame B sent (ACKs and NAKs) decodes in tshark and carries a right ICRC
    let pcap =
        rnic_sim::pcap::to_pcap(w.wire.iter().filter(|(l, _)| *l == 1).map(|(_, f)| f)).unwrap();
    assert_eq!(oracle::check_capture("crafted", &pcap), 4);
}

/// Issue 10: frames a hostile peer crafts (scapy) against QP 3, path MTU 4096, a 128 KiB MR.
/// The 0-byte WRITE ONLY with PadCnt 3 and a RETH DMA length near 64 KiB that used to hang the
/// NIC is dropped by the parser and the next WRITE lands where it says; a WRITE ONLY shorter
/// than its DMA length is NAKed (invalid request); a zero-length WRITE with rkey 0 is ACKed;
/// a foreign P_Key, destination IPv4 or MAC and a UDP length past (or short of) the IPv4
/// payload are dropped silently and counted; memory holds exactly the two good WRITEs. (The
/// invalid request moves the QP to ERR, class C: the test revives it.)
#[test]
fn scapy_hostile_frames_dropped_or_naked() {
    let (_w, mut a, mut b) = pair(WorldConfig::default());
    let _s = setup(&mut b);
    let big = b.device().dma_alloc(0x2_0000).unwrap();
    let bkey = make_key(3, 0x77);
    let mr = MrEntry {
        key: bkey,
        pd: PD,
        iova: big.iova,
        length: 0x2_0000,
        access: access::REMOTE_WRITE,
        flags: 1,
    };
    b.write_context(ctx::TABLE_MR, 3, &mr.encode()).unwrap();
    let base = b.engine_counters().unwrap();
    let cnt = |b: &mut Rnic<SimNic>, n: &str| {
        b.engine_counter(n).unwrap() - base.iter().find(|x| x.0 == n).unwrap().1
    };
    let p1: Vec<u8> = (0..37u8)
        .map(|i| i.wrapping_mul(11).wrapping_add(1))
        .collect();
    let p2: Vec<u8> = (0..64u8).map(|i| i ^ 0x5A).collect();
    let w = |psn: u32, va: u64, key: u32, pay: &[u8], len: usize, extra: &str| {
        spec(
            3,
            psn,
            opcode::WRITE_ONLY,
            pay,
            &(reth(va, key, len) + extra),
        )
    };
    let frames = oracle::craft(&format!(
        "[{}]",
        [
            // 0: the frame that hung the NIC
            w(500, big.iova + 0x8000, bkey, &[], 0xFFFD, r#","padcnt":3"#),
            // 1: a valid WRITE, ACK 500 MSN 1
            w(500, big.iova + 0x100, bkey, &p1, 37, ""),
            // 2: shorter than its DMA length: NAK invalid request 501
            w(501, big.iova + 0x400, bkey, &p2[..40], 64, ""),
            // 3: zero length, rkey 0, address 0: ACK 501 MSN 2
            w(501, 0, 0, &[], 0, ""),
            // 4..7: foreign P_Key, destination IPv4, destination MAC, UDP length: dropped
            w(502, big.iova + 0x800, bkey, &p2, 64, r#","pkey":4660"#),
            w(502, big.iova + 0x800, bkey, &p2, 64, "").replace(&ip(IP_B), "10.0.0.9"),
            w(502, big.iova + 0x800, bkey, &p2, 64, "").replacen(
                &mac(MAC_B),
                "02:00:00:00:00:09",
                1
            ),
            w(
                502,
                big.iova + 0x800,
                bkey,
                &p2,
                64,
                r#","udp_len_delta":4"#
            ),
            // 8: a UDP length shorter than the IPv4 payload: dropped
            w(
                502,
                big.iova + 0x800,
                bkey,
                &p2,
                64,
                r#","udp_len_delta":-4"#
            ),
            // 9: a valid WRITE, ACK 502 MSN 3
            w(502, big.iova + 0x1000, bkey, &p2, 64, ""),
        ]
        .join(",")
    ));
    assert_eq!(frames.len(), 10);
    let mut got = vec![];
    for (i, f) in frames.iter().enumerate() {
        a.mac_send(f).unwrap();
        settle(&mut b);
        got.push(sent_by_b(&mut b, 0).len());
        if i == 2 {
            // the invalid request (class C) moved QP 3 to ERR; revive it for the rest
            assert_eq!(qp_state_of(&mut b, 3), qp_state::ERR);
            revive(&mut b, 3);
        }
    }
    let answers: Vec<(u8, u32, u8, u32)> =
        sent_by_b(&mut b, 0).iter().map(|f| ack_fields(f)).collect();
    assert_eq!(
        answers,
        [
            (opcode::ACKNOWLEDGE, 500, aeth::ACK, 1),
            (opcode::ACKNOWLEDGE, 501, aeth::NAK_INV_REQ, 1),
            (opcode::ACKNOWLEDGE, 501, aeth::ACK, 2),
            (opcode::ACKNOWLEDGE, 502, aeth::ACK, 3),
        ],
        "answers after each frame: {got:?}"
    );
    let mut want = vec![0u8; big.len];
    want[0x100..0x100 + 37].copy_from_slice(&p1);
    want[0x1000..0x1040].copy_from_slice(&p2);
    assert_eq!(mem(&mut b, &big), want, "exactly the two good WRITEs");
    assert_eq!(cnt(&mut b, "rx_req"), 3);
    assert_eq!(cnt(&mut b, "drop_parse"), 3);
    assert_eq!(cnt(&mut b, "nak_inv"), 1);
    assert_eq!(cnt(&mut b, "drop_pkey"), 1);
    assert_eq!(cnt(&mut b, "drop_addr"), 2);
    let w = b.device().world().clone();
    let w = w.borrow();
    let ok_ranges = [(big.iova + 0x100, 37), (big.iova + 0x1000, 64)];
    if let Err(e) = w.audit_dma_writes(1, 0, &ok_ranges) {
        panic!("DMA writes outside the expected ranges: {e}");
    }
}

/// Duplicate requests a requester retransmits without AckReq (as rxe does on the middle
/// packets of a SEND): ACKed with PSN = rq_psn - 1 and the current MSN; memory, completions
/// and the responder state unchanged. B's ACK frames carry TOS = DSCP of the QP's traffic
/// class with ECN ECT(0).
#[test]
fn scapy_duplicates_acked_without_ackreq() {
    let (_w, mut a, mut b) = pair(WorldConfig::default());
    let s = setup(&mut b);
    let base = b.engine_counters().unwrap();
    let cnt = |b: &mut Rnic<SimNic>, n: &str| {
        b.engine_counter(n).unwrap() - base.iter().find(|x| x.0 == n).unwrap().1
    };
    let p1: Vec<u8> = (0..40u8).map(|i| i ^ 0xA5).collect();
    let p2: Vec<u8> = (0..24u8).collect();
    let junk = [0xEEu8; 40];
    let wr = |psn, pay: &[u8], extra: &str| {
        spec(
            2,
            psn,
            opcode::WRITE_ONLY,
            pay,
            &(reth(s.wbuf.iova + 8, s.wkey, pay.len()) + extra),
        )
    };
    let no_ack = r#","ackreq":false"#;
    let frames = oracle::craft(&format!(
        "[{}]",
        [
            wr(100, &p1, ""),
            spec(2, 101, opcode::SEND_ONLY, &p2, ""),
            // duplicates, no AckReq: other data, same PSNs
            wr(100, &junk, no_ack),
            spec(2, 101, opcode::SEND_ONLY, &junk[..24], no_ack),
            // and a duplicate with AckReq
            wr(100, &junk, ""),
        ]
        .join(",")
    ));
    for f in &frames[..2] {
        a.mac_send(f).unwrap();
    }
    let got = wait_frames(&mut b, 0, 2);
    settle(&mut b);
    let (w0, r0, c0) = (
        mem(&mut b, &s.wbuf),
        mem(&mut b, &s.rbuf),
        mem(&mut b, &s.cq),
    );
    let rqs0 = b.read_context(ctx::TABLE_RQS, 2).unwrap();
    assert_eq!(&w0[8..48], &p1[..]);
    assert_eq!(&r0[..24], &p2[..]);
    for f in &frames[2..] {
        a.mac_send(f).unwrap();
    }
    let got2 = wait_frames(&mut b, 2, 3);
    settle(&mut b);
    let answers: Vec<_> = got.iter().chain(&got2[..]).map(|f| ack_fields(f)).collect();
    assert_eq!(
        answers,
        [
            (opcode::ACKNOWLEDGE, 100, aeth::ACK, 1),
            (opcode::ACKNOWLEDGE, 101, aeth::ACK, 2),
            (opcode::ACKNOWLEDGE, 101, aeth::ACK, 2),
            (opcode::ACKNOWLEDGE, 101, aeth::ACK, 2),
            (opcode::ACKNOWLEDGE, 101, aeth::ACK, 2),
        ]
    );
    assert_eq!(sent_by_b(&mut b, 0).len(), 5, "one answer per frame");
    for f in got.iter().chain(&got2[..]) {
        assert_eq!(f[15], (TCLASS & 0xFC) | rnic_abi::roce::ECN_ECT0, "TOS");
    }
    assert_eq!(mem(&mut b, &s.wbuf), w0, "duplicates wrote nothing");
    assert_eq!(mem(&mut b, &s.rbuf), r0, "duplicates wrote nothing");
    assert_eq!(mem(&mut b, &s.cq), c0, "no completion for a duplicate");
    assert_eq!(b.read_context(ctx::TABLE_RQS, 2).unwrap(), rqs0);
    assert_eq!(cnt(&mut b, "rx_dup"), 3);
    assert_eq!(cnt(&mut b, "rx_req"), 2);
    assert_eq!(cnt(&mut b, "cqe"), 1);
}

/// A class C error (a WRITE ONLY with a payload shorter than its RETH DMA length): NAK
/// invalid request, the QP ends in ERR, and a later valid request for it is dropped (no
/// answer, nothing written, drop_qp). A CNP for a valid QP is counted (rx_cnp) and dropped.
#[test]
fn scapy_class_c_error_moves_qp_to_err() {
    let (_w, mut a, mut b) = pair(WorldConfig::default());
    let s = setup(&mut b);
    let base = b.engine_counters().unwrap();
    let cnt = |b: &mut Rnic<SimNic>, n: &str| {
        b.engine_counter(n).unwrap() - base.iter().find(|x| x.0 == n).unwrap().1
    };
    let p: Vec<u8> = (0..64u8).collect();
    let frames = oracle::craft(&format!(
        "[{}]",
        [
            spec(2, 0, opcode::CNP, &[0; 16], r#","ackreq":false"#),
            spec(
                3,
                500,
                opcode::WRITE_ONLY,
                &p[..40],
                &reth(s.wbuf.iova, s.wkey, 64)
            ),
            spec(
                3,
                500,
                opcode::WRITE_ONLY,
                &p,
                &reth(s.wbuf.iova, s.wkey, 64)
            ),
        ]
        .join(",")
    ));
    a.mac_send(&frames[0]).unwrap();
    settle(&mut b);
    assert_eq!(sent_by_b(&mut b, 0).len(), 0, "a CNP is not answered");
    assert_eq!(cnt(&mut b, "rx_cnp"), 1);
    assert_eq!(qp_state_of(&mut b, 2), qp_state::RTS);
    a.mac_send(&frames[1]).unwrap();
    let naks = wait_frames(&mut b, 0, 1);
    assert_eq!(
        ack_fields(&naks[0]),
        (opcode::ACKNOWLEDGE, 500, aeth::NAK_INV_REQ, 0)
    );
    settle(&mut b);
    assert_eq!(qp_state_of(&mut b, 3), qp_state::ERR, "QP in ERR");
    a.mac_send(&frames[2]).unwrap();
    settle(&mut b);
    assert_eq!(sent_by_b(&mut b, 0).len(), 1, "no answer once in ERR");
    assert!(
        mem(&mut b, &s.wbuf).iter().all(|&x| x == 0),
        "nothing written"
    );
    assert_eq!(cnt(&mut b, "nak_inv"), 1);
    assert_eq!(cnt(&mut b, "drop_qp"), 1);
    assert_eq!(cnt(&mut b, "rx_req"), 0);
    let w = b.device().world().clone();
    let w = w.borrow();
    if let Err(e) = w.audit_dma_writes(1, 0, &[]) {
        panic!("DMA writes: {e}");
    }
}

/// RNR NAK: a SEND to a QP without a posted receive WQE is answered with AETH syndrome
/// 0x20 | min_rnr_timer (the QP's IBTA RNR timer code); the QP stays in RTS and the SEND is
/// accepted once a WQE is posted.
#[test]
fn scapy_rnr_nak_carries_timer_code() {
    let (_w, mut a, mut b) = pair(WorldConfig::default());
    let s = setup(&mut b);
    let p: Vec<u8> = (0..12u8).collect();
    let f = oracle::craft(&format!("[{}]", spec(3, 500, opcode::SEND_ONLY, &p, "")));
    a.mac_send(&f[0]).unwrap();
    let naks = wait_frames(&mut b, 0, 1);
    assert_eq!(
        ack_fields(&naks[0]),
        (opcode::ACKNOWLEDGE, 500, 0x20 | RNR_CODE, 0)
    );
    settle(&mut b);
    assert_eq!(qp_state_of(&mut b, 3), qp_state::RTS);
    let recv = Wqe {
        opcode: wqe_op::RECV,
        length: 64,
        wr_id: 0xDEF,
        local_addr: s.rbuf.iova + 0x100,
        lkey: make_key(2, 0x33),
        ..Default::default()
    };
    b.push_rq_wqe(3, 0, &recv).unwrap();
    b.doorbell(db::RQ, 3, 1).unwrap();
    a.mac_send(&f[0]).unwrap();
    let acks = wait_frames(&mut b, 1, 1);
    assert_eq!(
        ack_fields(&acks[0]),
        (opcode::ACKNOWLEDGE, 500, aeth::ACK, 1)
    );
    settle(&mut b);
    assert_eq!(&mem(&mut b, &s.rbuf)[0x100..0x10C], &p[..]);
}

/// A WRITE ONLY of 4096 bytes (a 4170-byte frame, more than the 2048-byte MAC-debug window
/// takes) built by `rnic_tests::craft` and queued straight into NIC B's receive port with
/// `World::inject_rx`, through the board's RX FIFO: it lands in memory, is ACKed (PSN 100,
/// MSN 1), and nothing was dropped on the way.
#[test]
fn inject_rx_write_only_4096_lands_and_is_acked() {
    use rnic_sim::eth::LinkConfig;
    use rnic_tests::craft;
    let (w, _a, mut b) = pair(WorldConfig {
        link: LinkConfig::board(),
        ..WorldConfig::default()
    });
    let s = setup(&mut b);
    let payload = rnic_tests::pattern(4096, 4096);
    let h = craft::Hdr {
        dmac: MAC_B,
        smac: MAC_A,
        sip: IP_A.into(),
        dip: IP_B.into(),
        sport: 0xC001,
        dqpn: 2,
        psn: 100,
        ackreq: true,
    };
    let f = craft::frame(
        &h,
        opcode::WRITE_ONLY,
        &craft::reth(s.wbuf.iova, s.wkey, 4096),
        &payload,
    );
    assert_eq!(f.len(), 14 + 20 + 8 + 12 + 16 + 4096 + 4);
    assert!(a_cannot_send(&f));
    let mark = w.borrow().wire.len();
    w.borrow_mut().inject_rx(1, f).unwrap();
    let mut acks = Vec::new();
    for _ in 0..400 {
        acks = w
            .borrow()
            .sent_by(1, mark)
            .iter()
            .map(|f| f.data.clone())
            .collect();
        if !acks.is_empty() {
            break;
        }
        w.borrow_mut().run(250);
    }
    assert_eq!(acks.len(), 1, "one ACK for the WRITE");
    assert_eq!(
        ack_fields(&acks[0]),
        (opcode::ACKNOWLEDGE, 100, aeth::ACK, 1)
    );
    settle(&mut b);
    let m = mem(&mut b, &s.wbuf);
    assert!(m[..4096] == payload[..], "WRITE payload placement");
    assert!(m[4096..].iter().all(|&x| x == 0), "nothing past the MR");
    let st = w.borrow().links[0].stats;
    assert_eq!((st.injected, st.rx_fifo_drops), (1, 0), "{st:?}");
    assert_eq!(b.engine_counter("rx_req").unwrap(), 1);
    if let Err(e) = w.borrow().audit_dma_writes(1, 0, &[(s.wbuf.iova, 4096)]) {
        panic!("DMA writes outside the WRITE: {e}");
    }
}

/// The MAC-debug path refuses the frame (why the test above needs `inject_rx`).
fn a_cannot_send(f: &[u8]) -> bool {
    f.len() > rnic_abi::regs::mac::BUF_BYTES as usize
}

/// RDMA READ REQUESTs crafted by scapy (IBTA 9.7.4.1.4 / 9.7.5.1.3): an in-sequence READ is
/// answered with READ RESPONSE FIRST + LAST (AETH ACK with the new MSN on both, payload from
/// the MR, the first one exactly one path MTU); a duplicate READ that re-requests only the
/// rest from the missing PSN is executed again (RESPONSE ONLY with that PSN, no state change);
/// a zero-length READ with rkey 0 gets a RESPONSE ONLY without payload; a WRITE after them is
/// ACKed after the responses (one ordered stream); a READ with a wrong rkey gets NAK remote
/// access and moves the QP to ERR; a READ to a QP without REMOTE_READ likewise. Memory is
/// never written by a READ, no completion is made, every frame B sent passes both oracles.
#[test]
fn scapy_read_requests_answered_as_specified() {
    let (w, mut a, mut b) = pair(WorldConfig::default());
    let s = setup(&mut b);
    // QP 4: READ and WRITE allowed, MTU 4096, expects PSN 100; MR 3: remote read of wbuf
    qp(&mut b, 4, 100);
    qp(&mut b, 5, 300);
    let mut q = QpContext::decode(&b.read_context(ctx::TABLE_QP, 4).unwrap());
    q.access = (access::REMOTE_WRITE | access::REMOTE_READ) as u8;
    b.write_context(ctx::TABLE_QP, 4, &q.encode()).unwrap();
    let rdkey = make_key(3, 0x44);
    let mr = MrEntry {
        key: rdkey,
        pd: PD,
        iova: s.wbuf.iova,
        length: 8192,
        access: access::REMOTE_READ | access::REMOTE_WRITE,
        flags: 1,
    };
    b.write_context(ctx::TABLE_MR, 3, &mr.encode()).unwrap();
    let data: Vec<u8> = (0..8192u32).map(|i| (i * 13 + 7) as u8).collect();
    b.device().dma_write(&s.wbuf, 0, &data).unwrap();
    let base = b.engine_counters().unwrap();
    let cnt = |b: &mut Rnic<SimNic>, n: &str| {
        b.engine_counter(n).unwrap() - base.iter().find(|x| x.0 == n).unwrap().1
    };
    let va = s.wbuf.iova + 3;
    let rd = |qpn, psn, va: u64, key, len: usize| {
        spec(qpn, psn, opcode::READ_REQUEST, &[], &reth(va, key, len))
    };
    let frames = oracle::craft(&format!(
        "[{}]",
        [
            rd(4, 100, va, rdkey, 5000),
            // the requester lost the LAST and re-requests from PSN 101 (IBTA 9.7.4.1.4)
            rd(4, 101, va + 4096, rdkey, 904),
            rd(4, 102, 0, 0, 0),
            spec(
                4,
                103,
                opcode::WRITE_ONLY,
                &[9u8; 16],
                &reth(s.wbuf.iova + 4096 + 1000, rdkey, 16)
            ),
            rd(4, 104, va, rdkey ^ 0x100, 64),
            rd(5, 300, va, rdkey, 64),
        ]
        .join(",")
    ));
    let from = sent_by_b(&mut b, 0).len();
    for f in &frames[..4] {
        a.mac_send(f).unwrap();
    }
    let got = wait_frames(&mut b, from, 5);
    settle(&mut b);
    let got: Vec<_> = got
        .iter()
        .map(|f| rnic_tests::parse_roce(f).expect("RoCE frame"))
        .collect();
    let shape: Vec<_> = got
        .iter()
        .map(|p| (p.opcode, p.psn, p.ext.clone(), p.payload.len()))
        .collect();
    let aeth_msn = |m: u32| {
        let mut v = vec![aeth::ACK];
        v.extend_from_slice(&m.to_be_bytes()[1..]);
        v
    };
    assert_eq!(
        shape,
        [
            (opcode::READ_RESPONSE_FIRST, 100, aeth_msn(1), 4096),
            (opcode::READ_RESPONSE_LAST, 101, aeth_msn(1), 904),
            // the duplicate: executed again from its own RETH, MSN unchanged
            (opcode::READ_RESPONSE_ONLY, 101, aeth_msn(1), 904),
            (opcode::READ_RESPONSE_ONLY, 102, aeth_msn(2), 0),
            (opcode::ACKNOWLEDGE, 103, aeth_msn(3), 0),
        ],
        "B's answers in order"
    );
    assert_eq!(got[0].payload, data[3..4099], "FIRST payload");
    assert_eq!(got[1].payload, data[4099..5003], "LAST payload");
    assert_eq!(got[2].payload, data[4099..5003], "re-requested payload");
    for p in &got {
        assert_eq!(p.dqpn, PEER_QPN, "responses go to the peer QP");
    }
    // the bad rkey and the QP without REMOTE_READ: NAK remote access, QP to ERR
    for (k, (f, qpn)) in [(&frames[4], 4u32), (&frames[5], 5)]
        .into_iter()
        .enumerate()
    {
        let n0 = sent_by_b(&mut b, 0).len();
        a.mac_send(f).unwrap();
        let nak = wait_frames(&mut b, n0, 1);
        settle(&mut b);
        assert_eq!(nak.len(), 1, "case {k}: one answer");
        let (op, _, syn, _) = ack_fields(&nak[0]);
        assert_eq!(
            (op, syn),
            (opcode::ACKNOWLEDGE, aeth::NAK_REM_ACCESS),
            "case {k}"
        );
        assert_eq!(
            qp_state_of(&mut b, qpn),
            qp_state::ERR,
            "case {k}: QP {qpn} state"
        );
    }
    let mut want = data.clone();
    want[4096 + 1000..4096 + 1016].fill(9);
    assert_eq!(mem(&mut b, &s.wbuf), want, "only the WRITE changed memory");
    assert!(mem(&mut b, &s.cq).iter().all(|&x| x == 0), "no completion");
    assert_eq!(cnt(&mut b, "rx_read"), 3);
    assert_eq!(cnt(&mut b, "nak_acc"), 2);
    let pcap = rnic_sim::pcap::to_pcap(
        w.borrow()
            .wire
            .iter()
            .filter(|(l, _)| *l == 1)
            .map(|(_, f)| f),
    )
    .unwrap();
    assert!(oracle::check_capture("crafted-read", &pcap) >= 7);
}

/// An AtomicETH (IBTA 9.3.5, big-endian): VA, R_Key, Swap (or Add) Data, Compare Data. Packed
/// here from the field layout, not by our frame builder; craft.py puts it where a payload goes
/// (right after the BTH) and scapy computes the ICRC.
fn atomic_eth(va: u64, rkey: u32, swap_add: u64, compare: u64) -> Vec<u8> {
    let mut v = va.to_be_bytes().to_vec();
    v.extend_from_slice(&rkey.to_be_bytes());
    v.extend_from_slice(&swap_add.to_be_bytes());
    v.extend_from_slice(&compare.to_be_bytes());
    v
}

/// A QP of B like `qp`, with the access bits `acc` (e.g. REMOTE_ATOMIC).
fn qp_with(b: &mut Rnic<SimNic>, qpn: u32, rq_psn: u32, acc: u32) {
    qp(b, qpn, rq_psn);
    let mut q = QpContext::decode(&b.read_context(ctx::TABLE_QP, qpn).unwrap());
    q.access = acc as u8;
    b.write_context(ctx::TABLE_QP, qpn, &q.encode()).unwrap();
}

fn word(m: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(m[off..off + 8].try_into().unwrap())
}

/// ATOMIC requests crafted by scapy (IBTA 9.4.5, 9.7.5.1.4, o9-28): COMPARE_SWAP with an equal
/// and an unequal compare, FETCH_ADD: each answered with ATOMIC ACKNOWLEDGE (PSN the request's,
/// AETH ACK with the new MSN, AtomicAckETH the original value) and executed on the
/// little-endian u64 in memory; a duplicate FETCH_ADD (the same PSN again) is answered with the
/// saved original and not executed again; after `ATOMIC_RESOURCES` newer atomics the oldest one's duplicate
/// has no saved result and gets no answer (`atom_miss`); a misaligned VA gets NAK invalid
/// request, a QP or an MR without REMOTE_ATOMIC and a VA past the MR's end NAK remote access
/// (each such QP to ERR); an atomic with a payload after its AtomicETH, or a short AtomicETH, is
/// dropped by the parser (no answer, no PSN consumed: the valid one after them is answered).
/// Memory changes only as the executed atomics say; no completion; both oracles accept every
/// frame B sent and every well-formed one A sent.
#[test]
fn scapy_atomic_requests_answered_as_specified() {
    let (w, mut a, mut b) = pair(WorldConfig::default());
    let s = setup(&mut b);
    let atomic = access::REMOTE_ATOMIC | access::REMOTE_WRITE;
    // QP 6: atomics allowed, expects PSN 1000; QPs 7..=10 for the error cases
    qp_with(&mut b, 6, 1000, atomic);
    qp_with(&mut b, 7, 2000, atomic);
    qp_with(&mut b, 8, 3000, atomic);
    qp_with(&mut b, 9, 4000, atomic);
    qp_with(&mut b, 10, 5000, atomic);
    // MR 4: the first page of wbuf for atomics (MR 1, the same page, has no REMOTE_ATOMIC)
    let akey = make_key(4, 0x66);
    let mr = MrEntry {
        key: akey,
        pd: PD,
        iova: s.wbuf.iova,
        length: 4096,
        access: access::REMOTE_ATOMIC | access::LOCAL_WRITE,
        flags: 1,
    };
    b.write_context(ctx::TABLE_MR, 4, &mr.encode()).unwrap();
    let mut init = vec![0u8; 8192];
    init[0x100..0x108].copy_from_slice(&5u64.to_le_bytes());
    init[0x108..0x110].copy_from_slice(&0x1111u64.to_le_bytes());
    init[0x110..0x118].copy_from_slice(&100u64.to_le_bytes());
    init[0xff8..0x1000].copy_from_slice(&u64::MAX.to_le_bytes());
    b.device().dma_write(&s.wbuf, 0, &init).unwrap();
    let base = b.engine_counters().unwrap();
    let cnt = |b: &mut Rnic<SimNic>, n: &str| {
        b.engine_counter(n).unwrap() - base.iter().find(|x| x.0 == n).unwrap().1
    };
    let va = |off: u64| s.wbuf.iova + off;
    let cas = |qpn, psn, off, key, compare, swap| {
        spec(
            qpn,
            psn,
            opcode::COMPARE_SWAP,
            &atomic_eth(va(off), key, swap, compare),
            "",
        )
    };
    let fadd = |qpn, psn, off, key, add| {
        spec(
            qpn,
            psn,
            opcode::FETCH_ADD,
            &atomic_eth(va(off), key, add, 0),
            "",
        )
    };
    let mut specs = vec![
        cas(6, 1000, 0x100, akey, 5, 9),
        cas(6, 1001, 0x108, akey, 7, 0x2222),
        fadd(6, 1002, 0x110, akey, 0x10),
        // the last word of the MR, wrapping
        fadd(6, 1003, 0xff8, akey, 2),
    ];
    // R newer FETCH_ADDs on one word (R = the saved results per QP, ATOMIC_RESOURCES): PSN
    // 1004..1004 + R
    let r = rnic_abi::queue::ATOMIC_RESOURCES;
    let t = 4 + r as usize;
    for k in 0..r {
        specs.push(fadd(6, 1004 + k, 0x118, akey, 1));
    }
    let tail = [
        fadd(7, 2000, 0x104, akey, 1),   // misaligned
        fadd(2, 100, 0x100, akey, 1),    // QP 2 has no REMOTE_ATOMIC
        fadd(8, 3000, 0x100, s.wkey, 1), // MR 1 has no REMOTE_ATOMIC
        fadd(9, 4000, 0x1000, akey, 1),  // [va, va + 8) past the MR
        // a payload after the AtomicETH, then an AtomicETH 8 bytes short
        {
            let mut e = atomic_eth(va(0x100), akey, 1, 0);
            e.extend_from_slice(&[0xEE; 4]);
            spec(10, 5000, opcode::FETCH_ADD, &e, "")
        },
        spec(
            10,
            5000,
            opcode::FETCH_ADD,
            &atomic_eth(va(0x100), akey, 1, 0)[..20],
            "",
        ),
        fadd(10, 5000, 0x120, akey, 3),
    ];
    specs.extend(tail);
    let frames = oracle::craft(&format!("[{}]", specs.join(",")));
    assert_eq!(frames.len(), t + 7);
    let parse = |v: &[Vec<u8>]| -> Vec<rnic_tests::RocePkt> {
        v.iter()
            .map(|f| rnic_tests::parse_roce(f).expect("RoCE frame"))
            .collect()
    };
    let fields = |p: &rnic_tests::RocePkt| {
        let ae = p.aeth().expect("AETH");
        (p.opcode, p.psn, ae.syndrome, ae.msn, p.atomic_orig())
    };
    let ack = |psn, msn, orig| (opcode::ATOMIC_ACKNOWLEDGE, psn, aeth::ACK, msn, Some(orig));

    // 1. CMP_SWAP equal (5 -> 9), unequal (0x1111 stays), FETCH_ADD 100 + 0x10, and the MR's
    //    last word (u64::MAX + 2 wraps to 1)
    let from = sent_by_b(&mut b, 0).len();
    for f in &frames[..4] {
        a.mac_send(f).unwrap();
    }
    let got = parse(&wait_frames(&mut b, from, 4));
    settle(&mut b);
    let shape: Vec<_> = got.iter().map(fields).collect();
    assert_eq!(
        shape,
        [
            ack(1000, 1, 5),
            ack(1001, 2, 0x1111),
            ack(1002, 3, 100),
            ack(1003, 4, u64::MAX),
        ],
        "B's ATOMIC ACKNOWLEDGEs"
    );
    for p in &got {
        assert_eq!(p.dqpn, PEER_QPN, "answers go to the peer QP");
        assert!(p.payload.is_empty(), "no payload after the AtomicAckETH");
    }
    let m = mem(&mut b, &s.wbuf);
    assert_eq!(
        (
            word(&m, 0x100),
            word(&m, 0x108),
            word(&m, 0x110),
            word(&m, 0xff8)
        ),
        (9, 0x1111, 100 + 0x10, 1),
        "memory after the atomics"
    );

    // 2. the FETCH_ADD of PSN 1002 again: the saved original, not executed again
    let n0 = sent_by_b(&mut b, 0).len();
    a.mac_send(&frames[2]).unwrap();
    let dup = parse(&wait_frames(&mut b, n0, 1));
    settle(&mut b);
    assert_eq!(dup.len(), 1, "one answer to the duplicate");
    let (op, psn, syn, _msn, orig) = fields(&dup[0]);
    assert_eq!(
        (op, psn, syn, orig),
        (opcode::ATOMIC_ACKNOWLEDGE, 1002, aeth::ACK, Some(100)),
        "the duplicate's answer: the saved original value"
    );
    assert_eq!(
        word(&mem(&mut b, &s.wbuf), 0x110),
        100 + 0x10,
        "executed once"
    );

    // 3. R newer atomics, then a duplicate of PSN 1000: no saved result, no answer
    let n0 = sent_by_b(&mut b, 0).len();
    for f in &frames[4..t] {
        a.mac_send(f).unwrap();
    }
    let got = parse(&wait_frames(&mut b, n0, r as usize));
    settle(&mut b);
    let shape: Vec<_> = got.iter().map(fields).collect();
    let want: Vec<_> = (0..r).map(|k| ack(1004 + k, 5 + k, k as u64)).collect();
    assert_eq!(shape, want, "R FETCH_ADDs on one word");
    assert_eq!(word(&mem(&mut b, &s.wbuf), 0x118), r as u64);
    let n0 = sent_by_b(&mut b, 0).len();
    a.mac_send(&frames[0]).unwrap();
    settle(&mut b);
    settle(&mut b);
    assert_eq!(
        sent_by_b(&mut b, n0).len(),
        0,
        "a duplicate older than R newer atomics: no answer"
    );
    assert_eq!(word(&mem(&mut b, &s.wbuf), 0x100), 9, "not executed again");
    assert_eq!(qp_state_of(&mut b, 6), qp_state::RTS, "QP 6 still RTS");

    // 4. errors: misaligned -> NAK invalid request; no REMOTE_ATOMIC on the QP or the MR, out
    //    of bounds -> NAK remote access; each QP to ERR
    for (k, (f, qpn, want)) in [
        (t, 7u32, aeth::NAK_INV_REQ),
        (t + 1, 2, aeth::NAK_REM_ACCESS),
        (t + 2, 8, aeth::NAK_REM_ACCESS),
        (t + 3, 9, aeth::NAK_REM_ACCESS),
    ]
    .into_iter()
    .enumerate()
    {
        let n0 = sent_by_b(&mut b, 0).len();
        a.mac_send(&frames[f]).unwrap();
        let nak = wait_frames(&mut b, n0, 1);
        settle(&mut b);
        assert_eq!(nak.len(), 1, "case {k}: one answer");
        let (op, _, syn, _) = ack_fields(&nak[0]);
        assert_eq!((op, syn), (opcode::ACKNOWLEDGE, want), "case {k}");
        assert_eq!(
            qp_state_of(&mut b, qpn),
            qp_state::ERR,
            "case {k}: QP {qpn}"
        );
    }

    // 5. malformed atomics: dropped by the parser; the valid one after them is answered
    let drops0 = cnt(&mut b, "drop_parse");
    let n0 = sent_by_b(&mut b, 0).len();
    for f in &frames[t + 4..t + 6] {
        a.mac_send(f).unwrap();
        settle(&mut b);
    }
    assert_eq!(
        sent_by_b(&mut b, n0).len(),
        0,
        "malformed atomics: no answer"
    );
    assert_eq!(
        cnt(&mut b, "drop_parse") - drops0,
        2,
        "both dropped by the parser"
    );
    a.mac_send(&frames[t + 6]).unwrap();
    let got = parse(&wait_frames(&mut b, n0, 1));
    settle(&mut b);
    assert_eq!(
        got.iter().map(fields).collect::<Vec<_>>(),
        [ack(5000, 1, 0)],
        "the valid FETCH_ADD after the malformed ones"
    );

    let m = mem(&mut b, &s.wbuf);
    let mut want = init.clone();
    want[0x100..0x108].copy_from_slice(&9u64.to_le_bytes());
    want[0x110..0x118].copy_from_slice(&(100u64 + 0x10).to_le_bytes());
    want[0x118..0x120].copy_from_slice(&u64::from(r).to_le_bytes());
    want[0x120..0x128].copy_from_slice(&3u64.to_le_bytes());
    want[0xff8..0x1000].copy_from_slice(&1u64.to_le_bytes());
    assert_eq!(m, want, "memory: only the executed atomics");
    assert!(mem(&mut b, &s.cq).iter().all(|&x| x == 0), "no completion");
    assert_eq!(cnt(&mut b, "rx_atomic"), 4 + r + 1, "executed");
    assert_eq!(
        cnt(&mut b, "atom_dup"),
        1,
        "answered from the saved results"
    );
    assert_eq!(cnt(&mut b, "atom_miss"), 1, "no saved result");
    assert_eq!(cnt(&mut b, "nak_inv"), 1);
    assert_eq!(cnt(&mut b, "nak_acc"), 3);
    let wb = w.borrow();
    let pcap =
        rnic_sim::pcap::to_pcap(wb.wire.iter().filter(|(l, _)| *l == 1).map(|(_, f)| f)).unwrap();
    // A's frames too, but the two malformed ones (86 bytes is a well-formed atomic request)
    let pcap_a = rnic_sim::pcap::to_pcap(
        wb.wire
            .iter()
            .filter(|(l, f)| *l == 0 && f.data.len() == 86)
            .map(|(_, f)| f),
    )
    .unwrap();
    drop(wb);
    assert!(oracle::check_capture("crafted-atomic-b", &pcap) >= 26);
    assert!(oracle::check_capture("crafted-atomic-a", &pcap_a) >= 25);
}
