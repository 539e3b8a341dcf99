//! Pure-software tests of the verbs layer (devices in `fake.rs`).

use super::fake::*;
use super::*;
use rnic_abi::params::DEFAULT;
use rnic_abi::regs::ctx as cr;

#[test]
fn access_flags_are_checked() {
    assert!(AccessFlags::from_bits(0x10).is_err());
    let rw = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
    assert_eq!(rw.bits(), 3);
    assert!(rw.contains(AccessFlags::REMOTE_WRITE));
    assert_eq!(rw.remote(), AccessFlags::REMOTE_WRITE);
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let buf = c.alloc_buf(4096).unwrap();
    // remote write without local write (IBTA), empty MR, out of range
    assert!(matches!(
        pd.reg_mr(&buf, AccessFlags::REMOTE_WRITE),
        Err(Error::RemoteAccessNeedsLocalWrite)
    ));
    assert!(pd.reg_mr_range(&buf, 10, 0, rw).is_err());
    assert!(pd.reg_mr_range(&buf, 4000, 97, rw).is_err());
    assert!(pd.reg_mr_range(&buf, usize::MAX, 2, rw).is_err());
    assert!(pd.reg_mr_range(&buf, 4000, 96, rw).is_ok());
}

#[test]
fn endpoint_encoding_roundtrips_and_rejects_garbage() {
    let e = peer();
    let b = e.to_bytes();
    assert_eq!(b.len(), Endpoint::BYTES);
    assert_eq!(Endpoint::from_bytes(&b).unwrap(), e);
    assert!(Endpoint::from_bytes(&b[..19]).is_err());
    for (i, v) in [(0usize, b'X'), (1, 2), (2, 1), (6, 1), (14, 1), (10, 0xE0)] {
        let mut bad = b;
        bad[i] = v;
        assert!(Endpoint::from_bytes(&bad).is_err(), "byte {i} = {v:#x}");
    }
    let mut zero_ip = b;
    zero_ip[10..14].fill(0);
    assert!(Endpoint::from_bytes(&zero_ip).is_err());
    assert!(e.to_string().contains("10.0.0.2"));
}

#[test]
fn addresses_mtu_and_sport() {
    let a = PortAddr::sim(3).unwrap();
    assert_eq!(a.mac, [2, 0, 0, 0, 0, 3]);
    assert_eq!(a.ipv4, Ipv4Addr::new(10, 0, 0, 3));
    assert!(PortAddr::sim(0).is_err() && PortAddr::sim(255).is_err());
    assert!(
        PortAddr::new([1, 0, 0, 0, 0, 1], a.ipv4).is_err(),
        "multicast"
    );
    assert!(PortAddr::new([2, 0, 0, 0, 0, 1], Ipv4Addr::UNSPECIFIED).is_err());
    for m in Mtu::ALL {
        assert_eq!(Mtu::from_bytes(m.bytes()).unwrap(), m);
        assert_eq!(roce::mtu_enum_to_bytes(m.code()), Some(m.bytes()));
    }
    assert!(Mtu::from_bytes(1500).is_err());
    let mut seen = std::collections::HashSet::new();
    for l in 0..64 {
        for r in 0..64 {
            let p = udp_sport(l, r);
            assert!(p >= 0xC000);
            seen.insert(p);
        }
    }
    assert!(seen.len() > 3500, "sport spread {}", seen.len());
    assert_eq!(udp_sport(5, 7), udp_sport(5, 7));
}

#[test]
fn qp_state_machine() {
    use QpState::{Init, Reset, Rtr, Rts};
    let all = [Reset, Init, Rtr, Rts, QpState::Err];
    let ok = [
        (Reset, Init),
        (Init, Init),
        (Init, Rtr),
        (Rtr, Rts),
        (Rts, Rts),
    ];
    for a in all {
        for b in all {
            let want = ok.contains(&(a, b)) || b == Reset || b == QpState::Err;
            assert_eq!(a.can_go_to(b), want, "{a} -> {b}");
        }
    }
    // through the API, on a fake device
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(16).unwrap();
    let qp = pd.create_qp(&cq, &cq, QpCaps::default()).unwrap();
    let rtr = RtrAttr {
        remote: peer(),
        path_mtu: Mtu::Mtu1024,
        max_dest_rd_atomic: 1,
        min_rnr_timer: 12,
        traffic_class: 0,
    };
    assert!(matches!(qp.modify_to_rtr(&rtr), Err(Error::QpState { .. })));
    assert!(matches!(
        qp.modify_to_rts(&RtsAttr::default()),
        Err(Error::QpState { .. })
    ));
    qp.modify_to_init(&InitAttr {
        access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
    })
    .unwrap();
    assert!(qp.modify_to_rts(&RtsAttr::default()).is_err());
    qp.modify_to_rtr(&rtr).unwrap();
    assert!(qp.modify_to_init(&InitAttr::default()).is_err());
    assert!(
        qp.modify_to_rts(&RtsAttr {
            retry_cnt: 8,
            ..Default::default()
        })
        .is_err()
    );
    qp.modify_to_rts(&RtsAttr::default()).unwrap();
    assert!(qp.set_local_psn(5).is_err(), "PSN fixed in RTS");
    assert_eq!(qp.state().unwrap(), Rts);
    qp.modify_to_err().unwrap();
    assert_eq!(
        QpContext::decode(&table(&c, cr::TABLE_QP, qp.qpn())).state,
        qp_state::ERR
    );
    qp.modify_to_reset().unwrap();
    assert_eq!(qp.state().unwrap(), Reset);
    assert_eq!(
        QpContext::decode(&table(&c, cr::TABLE_QP, qp.qpn())).state,
        qp_state::RESET
    );
}

#[test]
fn modify_writes_the_contexts() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let scq = c.create_cq(16).unwrap();
    let rcq = c.create_cq(32).unwrap();
    let qp = pd.create_qp(&scq, &rcq, QpCaps::default()).unwrap();
    assert_eq!(qp.qpn(), FIRST_QPN);
    qp.set_local_psn(0xFF_FFFE).unwrap();
    assert!(qp.set_local_psn(1 << 24).is_err());
    let ep = qp.endpoint().unwrap();
    assert_eq!(
        (ep.qpn, ep.psn, ep.ipv4, ep.mac),
        (2, 0xFF_FFFE, Ipv4Addr::new(10, 0, 0, 1), [2, 0, 0, 0, 0, 1])
    );
    // receive WQEs posted in INIT survive RTR's read-modify-write
    qp.modify_to_init(&InitAttr {
        access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
    })
    .unwrap();
    qp.post_recv(&[RecvWr {
        wr_id: 1,
        sge: None,
    }])
    .unwrap();
    assert_eq!(doorbells(&c), vec![(db::RQ, db::word(qp.qpn() as u16, 1))]);
    // the device's doorbell unit would have written rq_pi; the fake does not, and RTR
    // must set it from the driver's view
    let attr = ConnectAttr {
        path_mtu: Mtu::Mtu1024,
        rts: RtsAttr {
            timeout: 17,
            retry_cnt: 3,
            rnr_retry: 6,
            max_rd_atomic: 1,
        },
        ..Default::default()
    };
    qp.modify_to_rtr(&RtrAttr {
        remote: peer(),
        path_mtu: attr.path_mtu,
        max_dest_rd_atomic: 1,
        min_rnr_timer: 12,
        traffic_class: 0,
    })
    .unwrap();
    let rs = RqState::decode(&table(&c, cr::TABLE_RQS, 2));
    assert_eq!(
        (rs.rq_psn, rs.rq_pi, rs.rq_ci, rs.msn),
        (0xAB_CDEF, 1, 0, 0)
    );
    qp.modify_to_rts(&attr.rts).unwrap();
    let qc = QpContext::decode(&table(&c, cr::TABLE_QP, 2));
    let want = QpContext {
        state: qp_state::RTS,
        qp_type: QP_TYPE_RC,
        path_mtu: 3,
        access: access::REMOTE_WRITE as u8,
        remote_qpn: 9,
        sq_psn: 0xFF_FFFE,
        una_psn: 0xFF_FFFE,
        dest_mac: [2, 0, 0, 0, 0, 2],
        udp_sport: udp_sport(2, 9),
        dest_ip: 0x0A00_0002,
        src_ip: 0x0A00_0001,
        pd: pd.pd_num(),
        send_cqn: scq.cqn() as u16,
        recv_cqn: rcq.cqn() as u16,
        retry_cnt: 3,
        rnr_retry: 6,
        timeout: 17,
        max_rd_atomic: 1,
        retry_left: 3,
        rnr_left: 6,
        min_rnr_timer: 12,
        max_dest_rd_atomic: 1,
        ack_psn_lo: 0xFFFD,
        src_mac: [2, 0, 0, 0, 0, 1],
        ..Default::default()
    };
    assert_eq!(qc, want);
    // path MTU above the device's maximum is refused; a bad remote endpoint too
    let qp2 = pd.create_qp(&scq, &rcq, QpCaps::default()).unwrap();
    assert_eq!(qp2.qpn(), 3);
    qp2.modify_to_init(&InitAttr::default()).unwrap();
    let mut bad = peer();
    bad.qpn = 1 << 24;
    assert!(
        qp2.modify_to_rtr(&RtrAttr {
            remote: bad,
            path_mtu: Mtu::Mtu256,
            max_dest_rd_atomic: 0,
            min_rnr_timer: 12,
            traffic_class: 0,
        })
        .is_err()
    );
    // destroy clears the records and frees the QPN
    qp.destroy().unwrap();
    assert_eq!(table(&c, cr::TABLE_QP, 2), [0; 64]);
    let qp3 = pd.create_qp(&scq, &rcq, QpCaps::default()).unwrap();
    assert_eq!(qp3.qpn(), 2);
}

#[test]
fn qp_caps_are_checked() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(8).unwrap();
    let bad = [
        QpCaps {
            max_send_wr: DEFAULT.max_depth() + 1,
            ..Default::default()
        },
        QpCaps {
            max_send_wr: 0,
            ..Default::default()
        },
        QpCaps {
            max_recv_wr: DEFAULT.max_depth() + 1,
            ..Default::default()
        },
        QpCaps {
            max_send_sge: 2,
            ..Default::default()
        },
        QpCaps {
            max_recv_sge: 2,
            ..Default::default()
        },
        QpCaps {
            max_inline_data: 17,
            ..Default::default()
        },
    ];
    for caps in bad {
        assert!(
            matches!(pd.create_qp(&cq, &cq, caps), Err(Error::OutOfRange { .. })),
            "{caps:?}"
        );
    }
    let full = QpCaps {
        max_send_wr: DEFAULT.sq_depth,
        max_recv_wr: DEFAULT.rq_depth,
        ..Default::default()
    };
    // every QPN from 2 up, then out of resources
    let mut qps = Vec::new();
    for q in FIRST_QPN..DEFAULT.num_qps {
        let qp = pd.create_qp(&cq, &cq, full).unwrap();
        assert_eq!(qp.qpn(), q);
        qps.push(qp);
    }
    assert!(matches!(
        pd.create_qp(&cq, &cq, full),
        Err(Error::OutOfResources { .. })
    ));
    // the CQ and the PD are in use: the QPs borrow them (dealloc while they live does not
    // compile), so they go first
    drop(qps);
    assert!(matches!(pd.dealloc(), Err(Error::InUse { .. }) | Ok(())));
}

/// Caps above the standard rings take the deep-ring QP numbers (the last `deep_qps`), the
/// standard ones take the lowest free number; when the deep ones are used up, a deep request
/// is out of resources while a standard one still gets a QP.
#[test]
fn deep_rings_come_from_the_deep_qps() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(8).unwrap();
    let deep = QpCaps {
        max_send_wr: DEFAULT.deep_depth,
        max_recv_wr: DEFAULT.rq_depth + 1,
        ..Default::default()
    };
    let std = QpCaps::default();
    assert!(std.max_send_wr <= DEFAULT.sq_depth && std.max_recv_wr <= DEFAULT.rq_depth);
    let s0 = pd.create_qp(&cq, &cq, std).unwrap();
    assert_eq!(s0.qpn(), FIRST_QPN);
    let mut deeps = Vec::new();
    for i in 0..DEFAULT.deep_qps {
        let qp = pd.create_qp(&cq, &cq, deep).unwrap();
        assert_eq!(qp.qpn(), DEFAULT.first_deep_qpn() + i);
        assert!(DEFAULT.is_deep(qp.qpn()));
        deeps.push(qp);
    }
    match pd.create_qp(&cq, &cq, deep) {
        Err(Error::OutOfResources { what, limit }) => {
            assert!(what.contains("deep"), "{what}");
            assert_eq!(limit, DEFAULT.deep_qps);
        }
        other => panic!("a 65th deep QP: {:?}", other.map(|q| q.qpn())),
    }
    let s1 = pd.create_qp(&cq, &cq, std).unwrap();
    assert_eq!(s1.qpn(), FIRST_QPN + 1);
    // a freed deep QP number is taken again
    let q = deeps.remove(3);
    let n = q.qpn();
    drop(q);
    assert_eq!(pd.create_qp(&cq, &cq, deep).unwrap().qpn(), n);
}

#[test]
fn in_use_objects_cannot_be_destroyed() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(8).unwrap();
    let cq_other = c.create_cq(8).unwrap();
    let qp = pd.create_qp(&cq, &cq_other, QpCaps::default()).unwrap();
    // (destroying `cq` here does not compile: the QP borrows it; see the compile_fail
    // doctests of `ProtectionDomain::create_qp`)
    let pd2 = c.alloc_pd().unwrap();
    assert_ne!(pd2.pd_num(), pd.pd_num());
    let buf = c.alloc_buf(64).unwrap();
    let mr = pd2.reg_mr(&buf, AccessFlags::empty()).unwrap();
    assert!(matches!(pd2.dealloc(), Err(Error::InUse { .. })));
    mr.dereg().unwrap();
    qp.destroy().unwrap();
    cq_other.destroy().unwrap();
    assert_eq!(
        CqContext::decode(&table(&c, cr::TABLE_CQ, 1)).flags,
        0,
        "destroyed CQ invalid"
    );
}

#[test]
fn mr_keys_generations_and_entries() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let buf = c.alloc_buf(3 * 4096).unwrap();
    let rw = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
    let mr = pd.reg_mr_range(&buf, 100, 5000, rw).unwrap();
    assert_eq!(mr.lkey(), make_key(0, 1));
    assert_eq!(mr.iova(), buf.iova() + 100);
    let e = MrEntry::decode(&table(&c, cr::TABLE_MR, 0));
    assert_eq!(
        e,
        MrEntry {
            key: make_key(0, 1),
            pd: pd.pd_num(),
            iova: buf.iova() + 100,
            length: 5000,
            access: 3,
            flags: MR_FLAG_VALID
        }
    );
    let mr2 = pd.reg_mr(&buf, AccessFlags::empty()).unwrap();
    assert_eq!(mr2.lkey(), make_key(1, 1));
    // SGEs are bounds-checked against the MR
    assert_eq!(
        mr.sge(10, 20).unwrap(),
        Sge {
            addr: buf.iova() + 110,
            length: 20,
            lkey: mr.lkey()
        }
    );
    assert!(mr.sge(4990, 11).is_err());
    assert!(mr.write(4999, &[1, 2]).is_err());
    mr.write(4998, &[1, 2]).unwrap();
    let mut back = [0u8; 2];
    c.read_buf(&buf, 100 + 4998, &mut back).unwrap();
    assert_eq!(back, [1, 2]);
    let old = mr.lkey();
    mr.dereg().unwrap();
    assert_eq!(table(&c, cr::TABLE_MR, 0), [0; 64], "entry invalidated");
    // the slot is reused with a new generation: the old key is stale
    let mr3 = pd.reg_mr(&buf, rw).unwrap();
    assert_eq!(mr3.lkey(), make_key(0, 2));
    assert_ne!(mr3.lkey(), old);
    // dropping deregisters too
    drop(mr3);
    assert_eq!(table(&c, cr::TABLE_MR, 0), [0; 64]);
    // generation never 0, even after 255 reuses
    for _ in 0..300 {
        let m = pd.reg_mr(&buf, rw).unwrap();
        assert_ne!(m.lkey() & 0xFF, 0);
    }
    // the table fills up
    let mut all = Vec::new();
    loop {
        match pd.reg_mr(&buf, rw) {
            Ok(m) => all.push(m),
            Err(Error::OutOfResources { limit, .. }) => {
                assert_eq!(limit, DEFAULT.num_mrs);
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    // (slot 0 used all 255 generations above and is retired)
    let retired = 1;
    assert_eq!(all.len() + 1 + retired, DEFAULT.num_mrs as usize);
}

#[test]
fn cq_creation_is_checked_and_written() {
    let c = open();
    for bad in [0u32, 3, 100, MAX_CQ_ENTRIES * 2] {
        assert!(c.create_cq(bad).is_err(), "{bad}");
    }
    assert!(
        c.create_cq_with(CqAttr {
            entries: 8,
            irq: true,
            irq_vector: 1
        })
        .is_err()
    );
    let cq = c
        .create_cq_with(CqAttr {
            entries: 64,
            irq: true,
            irq_vector: 0,
        })
        .unwrap();
    let rec = CqContext::decode(&table(&c, cr::TABLE_CQ, cq.cqn()));
    assert_eq!(
        rec,
        CqContext {
            base_iova: cq.ring().iova(),
            log2_entries: 6,
            flags: CQ_FLAG_VALID | CQ_FLAG_IRQ,
            irq_vector: 0,
            producer: 0,
            consumer: 0
        }
    );
    assert_eq!(cq.ring().len(), 64 * 32);
    let one = c.create_cq(1).unwrap();
    assert_eq!(one.entries(), 1);
}

#[test]
fn cq_phase_bit_over_several_wraps() {
    assert!(cqe_is_new(cqe_flag::OWNER, 0, 3));
    assert!(!cqe_is_new(0, 0, 3));
    assert!(cqe_is_new(0, 8, 3));
    assert!(!cqe_is_new(cqe_flag::OWNER, 8, 3));
    assert!(cqe_is_new(cqe_flag::OWNER, 16, 3));
    let c = open();
    let cq = c.create_cq(8).unwrap();
    let mut wc = [WorkCompletion::default(); 16];
    assert_eq!(cq.poll(&mut wc).unwrap(), 0, "zeroed ring is empty");
    assert!(doorbells(&c).is_empty(), "no doorbell without progress");
    let mut pi = 0u32;
    let mut ci = 0u64;
    // batches of 1..7 over 6 passes; stale entries of the last pass never show up
    for batch in [1u32, 7, 3, 5, 8, 2, 6, 4, 7, 5] {
        for _ in 0..batch {
            let mut e = send_cqe(77, pi as u64, 0);
            e.byte_len = pi;
            if pi.is_multiple_of(3) {
                e.flags = cqe_flag::WITH_IMM;
                e.imm_data = 0x1000 + pi;
                e.opcode = wc_op::RECV;
            }
            hw_cqe(&c, &cq, pi, e);
            pi += 1;
        }
        let n = cq.poll(&mut wc).unwrap();
        assert_eq!(n as u32, batch);
        for w in &wc[..n] {
            assert_eq!(w.wr_id, ci);
            assert_eq!(w.byte_len as u64, ci);
            assert_eq!(w.qp_num, 77);
            if ci.is_multiple_of(3) {
                assert_eq!(w.imm_data, Some(0x1000 + ci as u32));
                assert_eq!(w.opcode, WcOpcode::Recv);
            } else {
                assert_eq!(w.imm_data, None);
                assert_eq!(w.opcode, WcOpcode::Send);
            }
            ci += 1;
        }
        assert_eq!(cq.poll(&mut wc).unwrap(), 0, "nothing new after the batch");
        let d = doorbells(&c);
        assert_eq!(
            d.last().copied(),
            Some((db::CQ, db::word(cq.cqn() as u16, pi as u16))),
            "consumer index told to the device"
        );
    }
    assert_eq!(cq.consumed(), pi);
    // a slice smaller than what is ready: the rest stays for the next poll
    for _ in 0..5 {
        hw_cqe(&c, &cq, pi, send_cqe(77, pi as u64, 0));
        pi += 1;
    }
    assert_eq!(cq.poll(&mut wc[..2]).unwrap(), 2);
    assert_eq!(cq.poll(&mut wc).unwrap(), 3);
    assert_eq!(wc[0].wr_id, pi as u64 - 3);
    // poll_wait times out in device time, without panicking
    let t = cq.poll_wait(&mut wc, 1, 10_000);
    assert!(matches!(t, Err(Error::Timeout { .. })));
    assert!(cq.poll_wait(&mut wc[..1], 2, 10).is_err(), "min > room");
}

fn rts<'c: 'r, 'r>(
    c: &'c Context<Fake>,
    pd: &'r ProtectionDomain<'c, Fake>,
    cq: &'r CompletionQueue<'c, Fake>,
    caps: QpCaps,
) -> QueuePair<'r, Fake> {
    let qp = pd.create_qp(cq, cq, caps).unwrap();
    qp.connect(&peer(), &ConnectAttr::default()).unwrap();
    doorbells(c);
    qp
}

#[test]
fn post_send_builds_wqes_and_rings_the_doorbell() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(64).unwrap();
    let buf = c.alloc_buf(8192).unwrap();
    let mr = pd
        .reg_mr(&buf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE)
        .unwrap();
    let qp = pd.create_qp(&cq, &cq, QpCaps::default()).unwrap();
    let wr = SendWr::new(5, SendOp::Send).sge(mr.sge(1, 100).unwrap());
    // not in RTS yet
    assert!(matches!(qp.post_send(&[wr]), Err(Error::QpState { .. })));
    qp.connect(&peer(), &ConnectAttr::default()).unwrap();
    doorbells(&c);
    let q = qp.qpn();
    let p = DEFAULT;
    qp.post_send(&[
        wr,
        SendWr::new(
            6,
            SendOp::RdmaWriteWithImm {
                remote_addr: 0xAB00,
                rkey: 0x1234,
                imm: 0xFEED,
            },
        )
        .sge(mr.sge(7, 4097).unwrap())
        .unsignaled(),
        SendWr::new(7, SendOp::SendWithImm(0x55))
            .inline(b"hello, rdma!")
            .solicited(),
        SendWr::new(8, SendOp::Send),
    ])
    .unwrap();
    assert_eq!(doorbells(&c), vec![(db::SQ, db::word(q as u16, 4))]);
    let w0 = ring_wqe(&c, p.sq_slot(q, 0));
    assert_eq!(
        w0,
        Wqe {
            opcode: wqe_op::SEND,
            flags: wqe_flag::SIGNALED,
            slots: 1,
            length: 100,
            wr_id: 5,
            local_addr: buf.iova() + 1,
            lkey: mr.lkey(),
            ..Default::default()
        }
    );
    let w1 = ring_wqe(&c, p.sq_slot(q, 1));
    assert_eq!(
        (
            w1.opcode,
            w1.flags,
            w1.length,
            w1.remote_addr,
            w1.rkey,
            w1.imm_data
        ),
        (wqe_op::RDMA_WRITE_IMM, 0, 4097, 0xAB00, 0x1234, 0xFEED)
    );
    let w2 = ring_wqe(&c, p.sq_slot(q, 2));
    assert_eq!(
        (w2.opcode, w2.flags, w2.inline_len, w2.length, w2.imm_data),
        (
            wqe_op::SEND_IMM,
            wqe_flag::SIGNALED | wqe_flag::INLINE | wqe_flag::SOLICITED,
            12,
            12,
            0x55
        )
    );
    assert_eq!(&w2.inline_data[..12], b"hello, rdma!");
    assert_eq!(&w2.inline_data[12..], &[0; 4]);
    let w3 = ring_wqe(&c, p.sq_slot(q, 3));
    assert_eq!((w3.length, w3.lkey, w3.local_addr), (0, 0, 0));
    // bad requests: nothing posted, no doorbell
    let long = [0u8; 17];
    for bad in [
        SendWr::new(9, SendOp::Send).inline(&long),
        SendWr::new(9, SendOp::Send)
            .inline(b"x")
            .sge(mr.sge(0, 1).unwrap()),
        SendWr::new(9, SendOp::Send).sge(Sge {
            addr: u64::MAX,
            length: 2,
            lkey: 1,
        }),
        SendWr::new(
            9,
            SendOp::RdmaWrite {
                remote_addr: u64::MAX - 1,
                rkey: 1,
            },
        )
        .sge(mr.sge(0, 10).unwrap()),
    ] {
        assert!(
            matches!(
                qp.post_send(&[bad]),
                Err(Error::SgeAndInline { .. }
                    | Error::InlineTooLong { .. }
                    | Error::NoSgeAllowed { .. }
                    | Error::AddressOverflow { .. }
                    | Error::MessageTooLong { .. })
            ),
            "{bad:?}"
        );
    }
    // a good one followed by a bad one: none of them is posted
    assert!(
        qp.post_send(&[wr, SendWr::new(9, SendOp::Send).inline(&long)])
            .is_err()
    );
    assert!(doorbells(&c).is_empty());
    assert_eq!(qp.outstanding().unwrap(), (4, 0));
    // the QP's inline limit
    let small = pd
        .create_qp(
            &cq,
            &cq,
            QpCaps {
                max_inline_data: 4,
                ..Default::default()
            },
        )
        .unwrap();
    small.connect(&peer(), &ConnectAttr::default()).unwrap();
    assert!(
        small
            .post_send(&[SendWr::new(1, SendOp::Send).inline(b"12345")])
            .is_err()
    );
    small
        .post_send(&[SendWr::new(1, SendOp::Send).inline(b"1234")])
        .unwrap();
}

#[test]
fn send_queue_is_freed_by_signaled_completions() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(16).unwrap();
    let caps = QpCaps {
        max_send_wr: 8,
        ..Default::default()
    };
    let qp = rts(&c, &pd, &cq, caps);
    let q = qp.qpn();
    let un = |id| SendWr::new(id, SendOp::Send).unsignaled();
    let sig = |id| SendWr::new(id, SendOp::Send);
    qp.post_send(&[un(0), un(1), un(2), sig(3), un(4)]).unwrap();
    // 5 + 4 > 8: full, and nothing is posted
    let e = qp.post_send(&[un(5), un(6), un(7), un(8)]);
    assert!(matches!(
        e,
        Err(Error::QueueFull {
            outstanding: 5,
            posting: 4,
            depth: 8,
            ..
        })
    ));
    qp.post_send(&[un(5), sig(6), un(7)]).unwrap();
    assert!(matches!(
        qp.post_send(&[un(8)]),
        Err(Error::QueueFull { .. })
    ));
    // the device completes wr 3 (signaled): 0..=3 are free
    hw_cqe(&c, &cq, 0, send_cqe(q, 3, wc_status::SUCCESS));
    let w = cq.wait(1, 1_000_000).unwrap();
    assert_eq!((w[0].wr_id, w[0].status), (3, WcStatus::Success));
    assert_eq!(qp.outstanding().unwrap(), (4, 0));
    qp.post_send(&[un(8), un(9), un(10), un(11)]).unwrap();
    assert_eq!(qp.outstanding().unwrap(), (8, 0));
    hw_cqe(&c, &cq, 1, send_cqe(q, 6, wc_status::SUCCESS));
    cq.wait(1, 1_000_000).unwrap();
    assert_eq!(qp.outstanding().unwrap(), (5, 0), "4, 5, 6 freed");
    let sq: Vec<_> = doorbells(&c)
        .into_iter()
        .filter(|d| d.0 == db::SQ)
        .collect();
    assert_eq!(sq.last().copied(), Some((db::SQ, db::word(q as u16, 12))));
    // complete the rest, then run the indices past the SQ depth and the u16 range
    hw_cqe(&c, &cq, 2, send_cqe(q, 11, wc_status::SUCCESS));
    cq.wait(1, 1_000_000).unwrap();
    for (pi, k) in (3u32..).zip(12..(1u64 << 16) + 40) {
        qp.post_send(&[sig(k)]).unwrap();
        hw_cqe(&c, &cq, pi, send_cqe(q, k, wc_status::SUCCESS));
        assert_eq!(cq.wait(1, 1_000_000).unwrap()[0].wr_id, k);
    }
    let last = doorbells(&c).into_iter().rfind(|d| d.0 == db::SQ).unwrap();
    let n = (1u32 << 16) + 40;
    assert_eq!(last, (db::SQ, db::word(q as u16, n as u16)));
    let w = ring_wqe(&c, DEFAULT.sq_slot(q, n - 1));
    assert_eq!(w.wr_id, n as u64 - 1);
    assert_eq!(qp.outstanding().unwrap(), (0, 0));
}

#[test]
fn error_completion_moves_the_qp_to_err_and_flushes() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(16).unwrap();
    let qp = rts(&c, &pd, &cq, QpCaps::default());
    let q = qp.qpn();
    qp.post_recv(&[
        RecvWr {
            wr_id: 100,
            sge: None,
        },
        RecvWr {
            wr_id: 101,
            sge: None,
        },
    ])
    .unwrap();
    qp.post_send(&[
        SendWr::new(1, SendOp::Send),
        SendWr::new(2, SendOp::Send).unsignaled(),
        SendWr::new(3, SendOp::Send),
    ])
    .unwrap();
    // success for 1, REM_ACCESS_ERR for the unsignaled 2 (errors always complete)
    hw_cqe(&c, &cq, 0, send_cqe(q, 1, wc_status::SUCCESS));
    hw_cqe(&c, &cq, 1, send_cqe(q, 2, wc_status::REM_ACCESS_ERR));
    let w = cq.wait(5, 1_000_000).unwrap();
    let got: Vec<(u64, WcStatus)> = w.iter().map(|w| (w.wr_id, w.status)).collect();
    assert_eq!(
        got,
        vec![
            (1, WcStatus::Success),
            (2, WcStatus::RemAccessErr),
            (3, WcStatus::WrFlushErr),
            (100, WcStatus::WrFlushErr),
            (101, WcStatus::WrFlushErr),
        ]
    );
    assert_eq!(w[4].opcode, WcOpcode::Recv);
    assert_eq!(w[2].src_qp, 9);
    assert_eq!(qp.state().unwrap(), QpState::Err);
    assert_eq!(qp.outstanding().unwrap(), (0, 0));
    assert!(matches!(
        qp.post_send(&[SendWr::new(4, SendOp::Send)]),
        Err(Error::QpState { .. })
    ));
    let mut wc = [WorkCompletion::default(); 4];
    assert_eq!(cq.poll(&mut wc).unwrap(), 0);
    // back to work through RESET
    qp.modify_to_reset().unwrap();
    qp.connect(&peer(), &ConnectAttr::default()).unwrap();
    qp.post_send(&[SendWr::new(4, SendOp::Send)]).unwrap();
}

#[test]
fn post_recv_checks() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(16).unwrap();
    let buf = c.alloc_buf(4096).unwrap();
    let mr = pd.reg_mr(&buf, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = pd
        .create_qp(
            &cq,
            &cq,
            QpCaps {
                max_recv_wr: 2,
                ..Default::default()
            },
        )
        .unwrap();
    let r = RecvWr::new(1, mr.sge(0, 4096).unwrap());
    assert!(matches!(qp.post_recv(&[r]), Err(Error::QpState { .. })));
    qp.modify_to_init(&InitAttr::default()).unwrap();
    assert!(matches!(
        qp.post_recv(&[r, r, r]),
        Err(Error::QueueFull { .. })
    ));
    qp.post_recv(&[r, r]).unwrap();
    let w = ring_wqe(&c, DEFAULT.rq_slot(qp.qpn(), 1));
    assert_eq!(
        (w.opcode, w.length, w.local_addr, w.lkey, w.wr_id),
        (wqe_op::RECV, 4096, buf.iova(), mr.lkey(), 1)
    );
    assert_eq!(doorbells(&c), vec![(db::RQ, db::word(qp.qpn() as u16, 2))]);
}

#[test]
fn objects_release_on_drop() {
    let c = open();
    {
        let pd = c.alloc_pd().unwrap();
        let cq = c.create_cq(8).unwrap();
        let _qp = pd.create_qp(&cq, &cq, QpCaps::default()).unwrap();
        // dropped in reverse order: QP, CQ, PD
    }
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(8).unwrap();
    assert_eq!(cq.cqn(), 0, "CQ number reused");
    let qp = pd.create_qp(&cq, &cq, QpCaps::default()).unwrap();
    assert_eq!(qp.qpn(), FIRST_QPN, "QPN reused");
    // re-entrant use is an error, not a panic
    let r = c.with_nic(|_| c.alloc_buf(64).map(|_| ()));
    assert!(matches!(r, Err(Error::ContextBusy)));
}

#[test]
fn loopback_model_runs_every_operation_through_the_records() {
    let (ca, cb) = loop_pair();
    let (pa, pb) = (ca.alloc_pd().unwrap(), cb.alloc_pd().unwrap());
    // small CQs and queues so that rings and CQs wrap many times
    let (qa_cq, qb_cq) = (ca.create_cq(8).unwrap(), cb.create_cq(4).unwrap());
    let src = pa
        .reg_mr(&ca.alloc_buf(70_000).unwrap(), AccessFlags::empty())
        .unwrap();
    let dst = pb
        .reg_mr(
            &cb.alloc_buf(70_000).unwrap(),
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        )
        .unwrap();
    let caps = QpCaps {
        max_send_wr: 4,
        max_recv_wr: 2,
        ..QpCaps::default()
    };
    let qa = pa.create_qp(&qa_cq, &qa_cq, caps).unwrap();
    let qb = pb.create_qp(&qb_cq, &qb_cq, caps).unwrap();
    qa.set_local_psn(roce::PSN_MASK - 20).unwrap();
    let (ea, eb) = (qa.endpoint().unwrap(), qb.endpoint().unwrap());
    let attr = ConnectAttr {
        path_mtu: Mtu::Mtu1024,
        ..ConnectAttr::default()
    };
    qa.connect(&Endpoint::from_bytes(&eb.to_bytes()).unwrap(), &attr)
        .unwrap();
    qb.connect(&ea, &attr).unwrap();
    let kinds = |i: u64, len: usize| match i % 4 {
        0 => SendOp::Send,
        1 => SendOp::SendWithImm(i as u32 ^ 0xABCD),
        2 => SendOp::RdmaWrite {
            remote_addr: dst.remote_addr(3).unwrap(),
            rkey: dst.rkey(),
        },
        _ => SendOp::RdmaWriteWithImm {
            remote_addr: dst.remote_addr(70_000 - len).unwrap(),
            rkey: dst.rkey(),
            imm: i as u32,
        },
    };
    let mut wc = [WorkCompletion::default(); 8];
    let mut packets = 0u32;
    for i in 0..300u64 {
        let len = [0usize, 1, 16, 1023, 1025, 4096, 65536][i as usize % 7];
        packets += len.div_ceil(1024).max(1) as u32;
        let op = kinds(i, len);
        let data: Vec<u8> = (0..len).map(|k| (k as u64 * 7 + i) as u8).collect();
        src.write(11, &data).unwrap();
        let recv = !matches!(op, SendOp::RdmaWrite { .. });
        if recv {
            let sge = matches!(op, SendOp::Send | SendOp::SendWithImm(_))
                .then(|| dst.sge(100, len).unwrap());
            qb.post_recv(&[RecvWr {
                wr_id: 1000 + i,
                sge,
            }])
            .unwrap();
        }
        let mut wr = SendWr::new(i, op);
        if len > 0 && len <= 16 && i % 3 == 0 {
            wr = wr.inline(&data);
        } else if len > 0 {
            wr = wr.sge(src.sge(11, len).unwrap());
        }
        // every third WQE unsignaled: the next signaled one frees it
        if i % 3 == 1 {
            wr = wr.unsignaled();
        }
        qa.post_send(&[wr]).unwrap();
        if i % 3 != 1 {
            let n = qa_cq.poll(&mut wc).unwrap();
            assert_eq!(n, 1, "message {i}");
            let want_op = if matches!(op, SendOp::Send | SendOp::SendWithImm(_)) {
                WcOpcode::Send
            } else {
                WcOpcode::RdmaWrite
            };
            assert_eq!(
                (wc[0].wr_id, wc[0].status, wc[0].opcode, wc[0].byte_len),
                (i, WcStatus::Success, want_op, len as u32)
            );
            assert_eq!(qa.outstanding().unwrap().0, 0);
        }
        if recv {
            let n = qb_cq.poll(&mut wc).unwrap();
            assert_eq!(n, 1, "message {i} at the responder");
            let imm = match op {
                SendOp::SendWithImm(x) | SendOp::RdmaWriteWithImm { imm: x, .. } => Some(x),
                _ => None,
            };
            assert_eq!(
                (
                    wc[0].wr_id,
                    wc[0].byte_len,
                    wc[0].imm_data,
                    wc[0].src_qp,
                    wc[0].qp_num
                ),
                (1000 + i, len as u32, imm, qa.qpn(), qb.qpn())
            );
        }
        let at = match op {
            SendOp::RdmaWrite { .. } => 3,
            SendOp::RdmaWriteWithImm { .. } => 70_000 - len,
            _ => 100,
        };
        let mut got = vec![0u8; len];
        dst.read(at, &mut got).unwrap();
        assert_eq!(got, data, "message {i}: {op:?} {len} B");
    }
    assert_eq!(qa_cq.consumed(), 200);
    // the PSN wrapped on the way
    let (hw, _) = qa.query_device().unwrap();
    assert_eq!(hw.sq_psn, (roce::PSN_MASK - 20 + packets) & roce::PSN_MASK);
    // a bad rkey: REM_ACCESS_ERR, the next WQE flushed, then RESET and back to work
    let bad = SendWr::new(
        7,
        SendOp::RdmaWrite {
            remote_addr: dst.iova(),
            rkey: dst.rkey() ^ 1,
        },
    )
    .sge(src.sge(0, 10).unwrap())
    .unsignaled();
    qa.post_send(&[bad, SendWr::new(8, SendOp::Send)]).unwrap();
    let w = qa_cq.wait(2, 1000).unwrap();
    assert_eq!(
        (w[0].wr_id, w[0].status, w[1].wr_id, w[1].status),
        (7, WcStatus::RemAccessErr, 8, WcStatus::WrFlushErr)
    );
    assert_eq!(qa.state().unwrap(), QpState::Err);
    // SEND with no receive posted: RNR
    qa.modify_to_reset().unwrap();
    qb.modify_to_reset().unwrap();
    let (ea, eb) = (qa.endpoint().unwrap(), qb.endpoint().unwrap());
    qa.connect(&eb, &attr).unwrap();
    qb.connect(&ea, &attr).unwrap();
    qa.post_send(&[SendWr::new(9, SendOp::Send)]).unwrap();
    let w = qa_cq.wait(1, 1000).unwrap();
    assert_eq!((w[0].wr_id, w[0].status), (9, WcStatus::RnrRetryExcErr));
    // a bad lkey: LOC_PROT_ERR
    qa.modify_to_reset().unwrap();
    qa.connect(&eb, &attr).unwrap();
    let mut sge = src.sge(0, 10).unwrap();
    sge.lkey ^= 0x100;
    qa.post_send(&[SendWr::new(10, SendOp::Send).sge(sge)])
        .unwrap();
    let w = qa_cq.wait(1, 1000).unwrap();
    assert_eq!((w[0].wr_id, w[0].status), (10, WcStatus::LocProtErr));
}

#[test]
fn post_send_rdma_read_wqes_and_checks() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(64).unwrap();
    let buf = c.alloc_buf(8192).unwrap();
    let mr = pd
        .reg_mr(&buf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ)
        .unwrap();
    // readable by the peer, but not a READ target here
    let ro = pd
        .reg_mr(&c.alloc_buf(4096).unwrap(), AccessFlags::REMOTE_READ)
        .unwrap();
    let qp = rts(&c, &pd, &cq, QpCaps::default());
    let (q, p) = (qp.qpn(), DEFAULT);
    let read = |remote_addr| SendOp::RdmaRead {
        remote_addr,
        rkey: 0x00AB_CD01,
    };
    qp.post_send(&[
        SendWr::new(21, read(0x7000_0000_1234)).sge(mr.sge(5, 5000).unwrap()),
        // 0 bytes: no SGE (an SGE of length 0 into any MR is fine too)
        SendWr::new(22, read(0x99)).unsignaled(),
        SendWr::new(23, read(0x98)).sge(ro.sge(0, 0).unwrap()),
        // an lkey the driver does not know is the engine's to refuse (LOC_PROT_ERR)
        SendWr::new(24, read(0x97)).sge(Sge {
            addr: 0x1000,
            length: 8,
            lkey: 0x7F05,
        }),
    ])
    .unwrap();
    assert_eq!(doorbells(&c), vec![(db::SQ, db::word(q as u16, 4))]);
    let want = Wqe {
        opcode: wqe_op::RDMA_READ,
        flags: wqe_flag::SIGNALED,
        slots: 1,
        length: 5000,
        wr_id: 21,
        local_addr: buf.iova() + 5,
        lkey: mr.lkey(),
        remote_addr: 0x7000_0000_1234,
        rkey: 0x00AB_CD01,
        ..Default::default()
    };
    assert_eq!(ring_wqe(&c, p.sq_slot(q, 0)), want);
    // the bytes in the ring are the ABI encoding: opcode 4 at the opcode field
    let raw = c
        .with_nic(|n| Ok(n.device().rings[&(p.sq_slot(q, 0) as u64)]))
        .unwrap();
    assert_eq!(raw, want.encode());
    assert_eq!(raw[Wqe::field("opcode").unwrap().offset], 4);
    let w1 = ring_wqe(&c, p.sq_slot(q, 1));
    assert_eq!(
        (w1.opcode, w1.flags, w1.length, w1.lkey, w1.remote_addr),
        (wqe_op::RDMA_READ, 0, 0, 0, 0x99)
    );
    assert_eq!(ring_wqe(&c, p.sq_slot(q, 2)).length, 0);
    assert_eq!(ring_wqe(&c, p.sq_slot(q, 3)).lkey, 0x7F05);
    assert_eq!(qp.outstanding().unwrap(), (4, 0));
    // a flushed READ completes as a READ
    let sq = c.res().unwrap().qps[q as usize].as_ref().unwrap().sq[0].op;
    assert_eq!(sq, WcOpcode::RdmaRead);
    // bad READs: nothing posted, no doorbell
    let good = SendWr::new(30, SendOp::Send).sge(mr.sge(0, 8).unwrap());
    for (bad, what) in [
        (
            SendWr::new(31, read(0x10)).inline(b"data"),
            "inline data on a READ",
        ),
        (
            SendWr::new(32, read(0x10)).sge(ro.sge(0, 100).unwrap()),
            "READ into an MR without LOCAL_WRITE",
        ),
        (
            SendWr::new(33, read(u64::MAX - 10)).sge(mr.sge(0, 100).unwrap()),
            "remote address overflow",
        ),
    ] {
        let e = qp.post_send(&[good, bad]).unwrap_err();
        match (bad.wr_id, &e) {
            (31, Error::InlineRead { wr_id: 31 }) => {}
            (32, Error::ReadNeedsLocalWrite { wr_id: 32, lkey }) => assert_eq!(*lkey, ro.lkey()),
            (33, Error::AddressOverflow { .. }) => {}
            _ => panic!("{what}: {e:?}"),
        }
        assert!(!e.to_string().is_empty());
    }
    assert!(doorbells(&c).is_empty());
    assert_eq!(qp.outstanding().unwrap(), (4, 0));
    // an empty inline slice is still inline: refused too
    assert!(matches!(
        qp.post_send(&[SendWr::new(34, read(0)).inline(b"")]),
        Err(Error::InlineRead { wr_id: 34 })
    ));
}

#[test]
fn connect_writes_the_rd_atomic_limits() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(16).unwrap();
    let d = ConnectAttr::default();
    let l = rnic_abi::queue::ATOMIC_RESOURCES as u8;
    assert_eq!((d.max_dest_rd_atomic, d.rts.max_rd_atomic), (l, l));
    assert_eq!(u32::from(l), c.params().rd_atomic);
    let qp = pd.create_qp(&cq, &cq, QpCaps::default()).unwrap();
    qp.connect(&peer(), &d).unwrap();
    let qc = QpContext::decode(&table(&c, cr::TABLE_QP, qp.qpn()));
    assert_eq!((qc.max_dest_rd_atomic, qc.max_rd_atomic), (l, l));
    // any u8 (IBTA allows up to 255)
    let qp2 = pd.create_qp(&cq, &cq, QpCaps::default()).unwrap();
    qp2.connect(
        &peer(),
        &ConnectAttr {
            max_dest_rd_atomic: 255,
            rts: RtsAttr {
                max_rd_atomic: 3,
                ..RtsAttr::default()
            },
            ..d
        },
    )
    .unwrap();
    let qc = QpContext::decode(&table(&c, cr::TABLE_QP, qp2.qpn()));
    assert_eq!((qc.max_dest_rd_atomic, qc.max_rd_atomic), (255, 3));
    // RTS->RTS rewrites max_rd_atomic only
    qp2.modify_to_rts(&RtsAttr {
        max_rd_atomic: 9,
        ..RtsAttr::default()
    })
    .unwrap();
    let qc = QpContext::decode(&table(&c, cr::TABLE_QP, qp2.qpn()));
    assert_eq!((qc.max_dest_rd_atomic, qc.max_rd_atomic), (255, 9));
}

/// On a device of another build (`RD_ATOMIC` 16, as the 16k-QP build's; the fake's BAR2 is
/// the standard build's, so its other parameters are those) `ConnectAttr::for_device` takes
/// both READ/atomic depths from the device, and they reach the QP context.
#[test]
fn connect_attr_for_a_16_deep_device() {
    assert_eq!(rnic_abi::params::QPS16K.rd_atomic, 16);
    let p = rnic_abi::params::BuildParams {
        rd_atomic: 16,
        ..rnic_abi::params::STANDARD
    };
    let c = Context::open(
        Fake {
            params: Some(p),
            ..Default::default()
        },
        PortAddr::sim(1).unwrap(),
    )
    .unwrap();
    assert_eq!(c.params().rd_atomic, 16);
    let d = ConnectAttr::for_device(&c.params());
    assert_eq!((d.max_dest_rd_atomic, d.rts.max_rd_atomic), (16, 16));
    assert_eq!(RtsAttr::for_device(&c.params()).max_rd_atomic, 16);
    // the rest as the defaults
    assert_eq!(
        ConnectAttr {
            max_dest_rd_atomic: ATOMIC_RESOURCES as u8,
            rts: RtsAttr::default(),
            ..d
        },
        ConnectAttr::default()
    );
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(16).unwrap();
    let qp = pd.create_qp(&cq, &cq, QpCaps::default()).unwrap();
    qp.connect(&peer(), &d).unwrap();
    let qc = QpContext::decode(&table(&c, cr::TABLE_QP, qp.qpn()));
    assert_eq!((qc.max_dest_rd_atomic, qc.max_rd_atomic), (16, 16));
}

#[test]
fn loopback_model_rdma_read() {
    let (ca, cb) = loop_pair();
    let (pa, pb) = (ca.alloc_pd().unwrap(), cb.alloc_pd().unwrap());
    let (cqa, cqb) = (ca.create_cq(8).unwrap(), cb.create_cq(8).unwrap());
    let dst = pa
        .reg_mr(&ca.alloc_buf(70_000).unwrap(), AccessFlags::LOCAL_WRITE)
        .unwrap();
    let src = pb
        .reg_mr(&cb.alloc_buf(70_000).unwrap(), AccessFlags::REMOTE_READ)
        .unwrap();
    let no_rr = pb
        .reg_mr(
            &cb.alloc_buf(4096).unwrap(),
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        )
        .unwrap();
    let qa = pa.create_qp(&cqa, &cqa, QpCaps::default()).unwrap();
    let qb = pb.create_qp(&cqb, &cqb, QpCaps::default()).unwrap();
    qa.set_local_psn(roce::PSN_MASK - 3).unwrap();
    let attr = ConnectAttr {
        access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
        path_mtu: Mtu::Mtu1024,
        ..ConnectAttr::default()
    };
    let (ea, eb) = (qa.endpoint().unwrap(), qb.endpoint().unwrap());
    qa.connect(&eb, &attr).unwrap();
    qb.connect(&ea, &attr).unwrap();
    let data: Vec<u8> = (0..70_000u32).map(|k| (k * 13 + 1) as u8).collect();
    src.write(0, &data).unwrap();
    let mut psns = 0;
    for (i, len) in [0usize, 1, 1024, 1025, 65536].into_iter().enumerate() {
        let mut wr = SendWr::new(
            i as u64,
            SendOp::RdmaRead {
                remote_addr: src.remote_addr(7 + i).unwrap(),
                rkey: src.rkey(),
            },
        );
        if len > 0 {
            wr = wr.sge(dst.sge(100, len).unwrap());
        }
        qa.post_send(&[wr]).unwrap();
        let w = cqa.wait(1, 1000).unwrap();
        assert_eq!(
            (w[0].wr_id, w[0].status, w[0].opcode, w[0].byte_len),
            (i as u64, WcStatus::Success, WcOpcode::RdmaRead, len as u32)
        );
        let mut got = vec![0u8; len];
        dst.read(100, &mut got).unwrap();
        assert_eq!(got, data[7 + i..7 + i + len], "READ of {len} B");
        psns += len.div_ceil(1024).max(1) as u32;
    }
    // no receive consumed, no responder completion
    assert_eq!(cqb.poll(&mut [WorkCompletion::default(); 4]).unwrap(), 0);
    let (hw, _) = qa.query_device().unwrap();
    assert_eq!(hw.sq_psn, (roce::PSN_MASK - 3 + psns) & roce::PSN_MASK);
    // the peer's MR without REMOTE_READ: REM_ACCESS_ERR, completed as a READ
    qa.post_send(&[SendWr::new(
        9,
        SendOp::RdmaRead {
            remote_addr: no_rr.remote_addr(0).unwrap(),
            rkey: no_rr.rkey(),
        },
    )
    .sge(dst.sge(0, 10).unwrap())])
        .unwrap();
    let w = cqa.wait(1, 1000).unwrap();
    assert_eq!(
        (w[0].wr_id, w[0].status, w[0].opcode),
        (9, WcStatus::RemAccessErr, WcOpcode::RdmaRead)
    );
}

#[test]
fn post_send_atomic_wqes_and_checks() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(64).unwrap();
    let buf = c.alloc_buf(8192).unwrap();
    let mr = pd.reg_mr(&buf, AccessFlags::LOCAL_WRITE).unwrap();
    let ro = pd
        .reg_mr(&c.alloc_buf(4096).unwrap(), AccessFlags::REMOTE_READ)
        .unwrap();
    let qp = rts(&c, &pd, &cq, QpCaps::default());
    let (q, p) = (qp.qpn(), DEFAULT);
    let cas = |remote_addr| SendOp::CompareSwap {
        remote_addr,
        rkey: 0x00AB_CD01,
        compare: 0x0102_0304_0506_0708,
        swap: 0xF1F2_F3F4_F5F6_F7F8,
    };
    let fadd = |remote_addr| SendOp::FetchAdd {
        remote_addr,
        rkey: 0x0012_3402,
        add: 0x8000_0000_0000_0001,
    };
    qp.post_send(&[
        // the local buffer need not be aligned
        SendWr::new(41, cas(0x7000_0000_1238)).sge(mr.sge(3, 8).unwrap()),
        SendWr::new(42, fadd(0x40))
            .sge(mr.sge(16, 8).unwrap())
            .unsignaled(),
    ])
    .unwrap();
    assert_eq!(doorbells(&c), vec![(db::SQ, db::word(q as u16, 2))]);
    let mut inline = [0u8; 16];
    inline[..8].copy_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
    inline[8..].copy_from_slice(&0xF1F2_F3F4_F5F6_F7F8u64.to_le_bytes());
    let want = Wqe {
        opcode: wqe_op::ATOMIC_CMP_SWAP,
        flags: wqe_flag::SIGNALED,
        slots: 1,
        length: 8,
        wr_id: 41,
        local_addr: buf.iova() + 3,
        lkey: mr.lkey(),
        remote_addr: 0x7000_0000_1238,
        rkey: 0x00AB_CD01,
        inline_data: inline,
        ..Default::default()
    };
    assert_eq!(ring_wqe(&c, p.sq_slot(q, 0)), want);
    let raw = c
        .with_nic(|n| Ok(n.device().rings[&(p.sq_slot(q, 0) as u64)]))
        .unwrap();
    assert_eq!(raw, want.encode());
    // the ABI's bytes: opcode 5, compare at 48..56 and swap at 56..64, little-endian
    assert_eq!(raw[0], 5);
    assert_eq!(raw[48..56], [8, 7, 6, 5, 4, 3, 2, 1]);
    assert_eq!(
        raw[56..64],
        [0xF8, 0xF7, 0xF6, 0xF5, 0xF4, 0xF3, 0xF2, 0xF1]
    );
    assert_eq!(raw[2], 0, "no inline length");
    let w1 = ring_wqe(&c, p.sq_slot(q, 1));
    let mut add = [0u8; 16];
    add[8..].copy_from_slice(&0x8000_0000_0000_0001u64.to_le_bytes());
    assert_eq!(
        (w1.opcode, w1.flags, w1.length, w1.remote_addr, w1.rkey),
        (wqe_op::ATOMIC_FETCH_ADD, 0, 8, 0x40, 0x0012_3402)
    );
    assert_eq!((w1.inline_data, w1.inline_len), (add, 0));
    let r = c.res().unwrap();
    let sq = &r.qps[q as usize].as_ref().unwrap().sq;
    assert_eq!(
        (sq[0].op, sq[1].op),
        (WcOpcode::CompSwap, WcOpcode::FetchAdd)
    );
    assert_eq!(sq[0].length, 8);
    drop(r);
    // bad atomics: nothing posted, no doorbell
    let good = SendWr::new(50, SendOp::Send).sge(mr.sge(0, 8).unwrap());
    let bads = [
        SendWr::new(51, cas(0x10)).inline(&[0; 8]),
        SendWr::new(52, fadd(0x10)),
        SendWr::new(53, cas(0x10)).sge(mr.sge(0, 4).unwrap()),
        SendWr::new(54, fadd(0x10)).sge(mr.sge(0, 16).unwrap()),
        SendWr::new(55, cas(0x14)).sge(mr.sge(0, 8).unwrap()),
        SendWr::new(56, fadd(0x1001)).sge(mr.sge(0, 8).unwrap()),
        SendWr::new(57, cas(0x10)).sge(ro.sge(0, 8).unwrap()),
        SendWr::new(58, fadd(u64::MAX - 7)).sge(mr.sge(0, 8).unwrap()),
    ];
    for bad in bads {
        let e = qp.post_send(&[good, bad]).unwrap_err();
        match (bad.wr_id, &e) {
            (51, Error::InlineAtomic { wr_id: 51 }) => {}
            (52, Error::AtomicLength { wr_id: 52, len: 0 }) => {}
            (53, Error::AtomicLength { wr_id: 53, len: 4 }) => {}
            (54, Error::AtomicLength { wr_id: 54, len: 16 }) => {}
            (
                55,
                Error::AtomicMisaligned {
                    remote_addr: 0x14, ..
                },
            ) => {}
            (
                56,
                Error::AtomicMisaligned {
                    remote_addr: 0x1001,
                    ..
                },
            ) => {}
            (57, Error::AtomicNeedsLocalWrite { wr_id: 57, lkey }) => assert_eq!(*lkey, ro.lkey()),
            (58, Error::AddressOverflow { .. }) => {}
            _ => panic!("WR {}: {e:?}", bad.wr_id),
        }
        assert!(!e.to_string().is_empty());
    }
    assert!(
        Error::AtomicLength { wr_id: 1, len: 4 }
            .to_string()
            .contains("exactly 8 bytes")
    );
    assert!(doorbells(&c).is_empty());
    assert_eq!(qp.outstanding().unwrap(), (2, 0));
    // the test hatch skips only the alignment check
    qp.post_send_unaligned_atomics(&[SendWr::new(59, cas(0x14)).sge(mr.sge(0, 8).unwrap())])
        .unwrap();
    assert_eq!(ring_wqe(&c, p.sq_slot(q, 2)).remote_addr, 0x14);
    assert!(matches!(
        qp.post_send_unaligned_atomics(&[SendWr::new(60, cas(0x14)).sge(mr.sge(0, 4).unwrap())]),
        Err(Error::AtomicLength { wr_id: 60, len: 4 })
    ));
}

#[test]
fn loopback_model_atomics() {
    let (ca, cb) = loop_pair();
    let (pa, pb) = (ca.alloc_pd().unwrap(), cb.alloc_pd().unwrap());
    let (cqa, cqb) = (ca.create_cq(16).unwrap(), cb.create_cq(8).unwrap());
    let local = pa
        .reg_mr(&ca.alloc_buf(4096).unwrap(), AccessFlags::LOCAL_WRITE)
        .unwrap();
    let target = pb
        .reg_mr(
            &cb.alloc_buf(4096).unwrap(),
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_ATOMIC,
        )
        .unwrap();
    let no_atomic = pb
        .reg_mr(
            &cb.alloc_buf(4096).unwrap(),
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        )
        .unwrap();
    let qa = pa.create_qp(&cqa, &cqa, QpCaps::default()).unwrap();
    let qb = pb.create_qp(&cqb, &cqb, QpCaps::default()).unwrap();
    let attr = ConnectAttr {
        access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_ATOMIC,
        path_mtu: Mtu::Mtu256,
        ..ConnectAttr::default()
    };
    let (ea, eb) = (qa.endpoint().unwrap(), qb.endpoint().unwrap());
    qa.connect(&eb, &attr).unwrap();
    qb.connect(&ea, &attr).unwrap();
    let psn0 = qa.query_device().unwrap().0.sq_psn;
    let at = 4096 - 8;
    target.write(at, &100u64.to_le_bytes()).unwrap();
    let ra = target.remote_addr(at).unwrap();
    let rkey = target.rkey();
    let ops = [
        // (op, original returned, value afterwards)
        (
            SendOp::FetchAdd {
                remote_addr: ra,
                rkey,
                add: 5,
            },
            100u64,
            105,
        ),
        (
            SendOp::CompareSwap {
                remote_addr: ra,
                rkey,
                compare: 105,
                swap: 7,
            },
            105,
            7,
        ),
        (
            SendOp::CompareSwap {
                remote_addr: ra,
                rkey,
                compare: 8,
                swap: 9,
            },
            7,
            7,
        ),
        (
            SendOp::FetchAdd {
                remote_addr: ra,
                rkey,
                add: u64::MAX,
            },
            7,
            6,
        ),
    ];
    for (i, (op, orig, after)) in ops.into_iter().enumerate() {
        local.write(0, &[0xEE; 32]).unwrap();
        qa.post_send(&[SendWr::new(i as u64, op).sge(local.sge(5, 8).unwrap())])
            .unwrap();
        let w = cqa.wait(1, 1000).unwrap();
        assert_eq!(
            (w[0].wr_id, w[0].status, w[0].opcode, w[0].byte_len),
            (i as u64, WcStatus::Success, op.wc_opcode(), 8)
        );
        let mut got = [0u8; 32];
        local.read(0, &mut got).unwrap();
        assert_eq!(got[5..13], orig.to_le_bytes(), "{op:?}: original value");
        assert!(got[..5].iter().chain(&got[13..]).all(|&x| x == 0xEE));
        let mut now = [0u8; 8];
        target.read(at, &mut now).unwrap();
        assert_eq!(u64::from_le_bytes(now), after, "{op:?}: remote value");
    }
    assert_eq!(
        qa.query_device().unwrap().0.sq_psn,
        psn0 + 4,
        "one PSN each"
    );
    assert_eq!(cqb.poll(&mut [WorkCompletion::default(); 4]).unwrap(), 0);
    // an MR without REMOTE_ATOMIC: REM_ACCESS_ERR, completed as the atomic
    qa.post_send(&[SendWr::new(
        9,
        SendOp::FetchAdd {
            remote_addr: no_atomic.remote_addr(0).unwrap(),
            rkey: no_atomic.rkey(),
            add: 1,
        },
    )
    .sge(local.sge(0, 8).unwrap())])
        .unwrap();
    let w = cqa.wait(1, 1000).unwrap();
    assert_eq!(
        (w[0].wr_id, w[0].status, w[0].opcode),
        (9, WcStatus::RemAccessErr, WcOpcode::FetchAdd)
    );
    let mut z = [0u8; 8];
    no_atomic.read(0, &mut z).unwrap();
    assert_eq!(z, [0; 8], "memory untouched");
    // a misaligned remote address (past the driver's check): REM_INV_REQ_ERR; a QP without
    // REMOTE_ATOMIC: REM_ACCESS_ERR; memory untouched either way
    for (i, (access, off, status)) in [
        (attr.access, at + 4 - 8, WcStatus::RemInvReqErr),
        (
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            at,
            WcStatus::RemAccessErr,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let qa = pa.create_qp(&cqa, &cqa, QpCaps::default()).unwrap();
        let qb = pb.create_qp(&cqb, &cqb, QpCaps::default()).unwrap();
        let at2 = ConnectAttr { access, ..attr };
        let (ea, eb) = (qa.endpoint().unwrap(), qb.endpoint().unwrap());
        qa.connect(&eb, &at2).unwrap();
        qb.connect(&ea, &at2).unwrap();
        let wr = SendWr::new(
            20 + i as u64,
            SendOp::CompareSwap {
                remote_addr: target.remote_addr(off).unwrap(),
                rkey,
                compare: 6,
                swap: 1,
            },
        )
        .sge(local.sge(0, 8).unwrap());
        qa.post_send_unaligned_atomics(&[wr]).unwrap();
        let w = cqa.wait(1, 1000).unwrap();
        assert_eq!(
            (w[0].wr_id, w[0].status, w[0].opcode),
            (20 + i as u64, status, WcOpcode::CompSwap)
        );
        let mut now = [0u8; 16];
        target.read(at - 8, &mut now).unwrap();
        assert_eq!(now[8..], 6u64.to_le_bytes(), "memory untouched");
    }
}
