//! Tests of the safety rules (issue 9: a host API that cannot be misused), one per rule; each
//! fails on the code before the rule (checked by reverting the fix). The compile-time rules
//! are `compile_fail` doctests on `DmaBuf` and `ProtectionDomain::create_qp`.

use super::fake::*;
use super::*;
use rnic_abi::params::{BuildParams, DEFAULT};
use rnic_abi::regs::ctx as cr;

/// A QP of `pd` on `cq`, connected to a made-up peer (RTS), doorbells drained.
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

/// Point 1: a buffer a live MR (or CQ) uses cannot be freed; nothing is unmapped behind it,
/// and it is unmapped once its last user goes. A CQ ring cannot be registered.
#[test]
fn buffers_in_use_are_not_freed() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(8).unwrap();
    let mapped = |c: &Context<Fake>, iova: u64| {
        c.with_nic(|n| Ok(n.device().bufs.values().any(|(i, _)| *i == iova)))
            .unwrap()
    };
    let buf = c.alloc_buf(4096).unwrap();
    let iova = buf.iova();
    let rw = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
    let mr = pd.reg_mr(&buf, rw).unwrap();
    assert!(matches!(
        c.free_buf(buf),
        Err(Error::BufferInUse { users: 1, .. })
    ));
    assert!(mapped(&c, iova), "still mapped: the MR's rkey reaches it");
    // the MR keeps working on its memory
    mr.write(0, &[7; 8]).unwrap();
    let mut back = [0u8; 8];
    mr.read(0, &mut back).unwrap();
    assert_eq!(back, [7; 8]);
    // a fresh allocation never gets that IOVA while the MR lives
    let other = c.alloc_buf(4096).unwrap();
    assert_ne!(other.iova(), iova);
    mr.dereg().unwrap();
    assert!(!mapped(&c, iova), "unmapped with its last user");
    c.free_buf(other).unwrap();
    // the CQ ring: not registrable, unmapped only when the CQ is destroyed
    let ring = cq.ring().iova();
    assert!(matches!(
        pd.reg_mr(cq.ring(), rw),
        Err(Error::NotRegistrable)
    ));
    assert!(mapped(&c, ring));
    cq.destroy().unwrap();
    assert!(!mapped(&c, ring));
    // a buffer of another context is refused
    let c2 = open();
    let foreign = c2.alloc_buf(64).unwrap();
    assert!(matches!(
        pd.reg_mr(&foreign, rw),
        Err(Error::ForeignObject(_))
    ));
    assert!(matches!(c.free_buf(foreign), Err(Error::ForeignObject(_))));
}

/// Point 2: the device writes a CQE while the host polls it. Reading the owner byte first and
/// the rest after it never yields the new owner bit with the old wr_id.
#[test]
fn cq_poll_never_accepts_a_torn_cqe() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(8).unwrap();
    let qp = rts(&c, &pd, &cq, QpCaps::default());
    qp.post_send(&[SendWr::new(77, SendOp::Send)]).unwrap();
    let mut cqe = send_cqe(qp.qpn(), 77, wc_status::SUCCESS);
    cqe.flags |= owner_flag_for(0, 3);
    let id = cq.ring().region().id;
    c.with_nic(|n| {
        n.device().racing_cqe = Some((id, 0, cqe.encode()));
        Ok(())
    })
    .unwrap();
    let mut wc = [WorkCompletion::default(); 4];
    let mut got = 0;
    for _ in 0..4 {
        got += cq.poll(&mut wc[got..]).unwrap();
    }
    assert_eq!(got, 1, "one completion");
    assert_eq!(wc[0].wr_id, 77, "the CQE's own wr_id, not the stale one");
    assert_eq!(wc[0].status, WcStatus::Success);
}

/// Point 3: modify QP writes only the fields the driver owns. The fake engine advances
/// sq_psn/sq_ci/una_psn between any two mailbox commands; RTS->RTS and ->ERR must not roll
/// them back, and their byte enables (from the layout) exclude them.
#[test]
fn modify_qp_does_not_roll_back_engine_fields() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let cq = c.create_cq(8).unwrap();
    let qp = rts(&c, &pd, &cq, QpCaps::default());
    let qpn = qp.qpn();
    c.with_nic(|n| {
        n.device().engine_bumps_qp = Some(qpn);
        n.device().ctx_log.clear();
        Ok(())
    })
    .unwrap();
    let attr = RtsAttr {
        timeout: 20,
        retry_cnt: 5,
        rnr_retry: 6,
        ..RtsAttr::default()
    };
    qp.modify_to_rts(&attr).unwrap();
    let engine = |c: &Context<Fake>| {
        c.with_nic(|n| Ok(n.device().engine_last))
            .unwrap()
            .expect("the engine ran")
    };
    let qc = QpContext::decode(&table(&c, cr::TABLE_QP, qpn));
    assert_eq!(
        (qc.sq_psn, qc.sq_ci, qc.una_psn),
        engine(&c),
        "RTS->RTS kept what the engine wrote"
    );
    assert_eq!(
        (qc.state, qc.timeout, qc.retry_cnt, qc.rnr_retry),
        (qp_state::RTS, 20, 5, 6)
    );
    let engine_owned = QpContext::byte_mask(&["sq_psn", "sq_ci", "una_psn", "sq_ack_ci", "sq_pi"]);
    let log = c
        .with_nic(|n| Ok(std::mem::take(&mut n.device().ctx_log)))
        .unwrap();
    let writes: Vec<u64> = log
        .iter()
        .filter(|(op, t, i, _)| *op == cr::OP_WRITE && *t == cr::TABLE_QP && *i == qpn)
        .map(|w| w.3)
        .collect();
    assert_eq!(writes, vec![super::qp::QPC_RTS_ATTRS], "one masked write");
    assert_eq!(writes[0] & engine_owned, 0);
    qp.modify_to_err().unwrap();
    let qc = QpContext::decode(&table(&c, cr::TABLE_QP, qpn));
    assert_eq!((qc.sq_psn, qc.sq_ci, qc.una_psn), engine(&c), "->ERR too");
    assert_eq!(qc.state, qp_state::ERR);
    assert_eq!((qc.timeout, qc.retry_cnt), (20, 5));
}

/// Point 4: errors met in Drop (no caller to return them to) are counted, not swallowed; an
/// MR whose entry could not be invalidated keeps its buffer mapped.
#[test]
fn errors_in_drop_are_counted_and_free_nothing() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let buf = c.alloc_buf(4096).unwrap();
    let iova = buf.iova();
    let mr = pd
        .reg_mr(&buf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE)
        .unwrap();
    drop(buf);
    let cq = c.create_cq(8).unwrap();
    let ring = cq.ring().iova();
    assert_eq!(c.drop_errors(), 0);
    c.with_nic(|n| {
        n.device().fail_ctx_writes = true;
        Ok(())
    })
    .unwrap();
    drop(mr);
    drop(cq);
    assert_eq!(c.drop_errors(), 2, "both failures counted");
    assert!(c.last_drop_error().is_some());
    c.with_nic(|n| {
        n.device().fail_ctx_writes = false;
        Ok(())
    })
    .unwrap();
    let _ = c.alloc_buf(64).unwrap(); // a reap point
    let still = c
        .with_nic(|n| {
            let b = &n.device().bufs;
            Ok((
                b.values().any(|(i, _)| *i == iova),
                b.values().any(|(i, _)| *i == ring),
            ))
        })
        .unwrap();
    assert_eq!(
        still,
        (true, true),
        "a possibly valid MR entry / CQ context keeps its memory"
    );
}

/// Point 5: what the device reports is checked before anything is sized or indexed by it.
#[test]
fn device_parameters_are_validated() {
    let bad = [
        BuildParams {
            num_qps: 0,
            ..DEFAULT
        },
        BuildParams {
            sq_depth: 0,
            ..DEFAULT
        },
        BuildParams {
            rq_depth: 3,
            ..DEFAULT
        },
        BuildParams {
            num_mrs: u32::MAX,
            ..DEFAULT
        },
        BuildParams {
            num_cqs: 1 << 20,
            ..DEFAULT
        },
        BuildParams {
            max_mtu: 100,
            ..DEFAULT
        },
        BuildParams {
            rd_atomic: 0,
            ..DEFAULT
        },
        BuildParams {
            rd_atomic: 256,
            ..DEFAULT
        },
        BuildParams {
            num_qps: 1 << 16,
            sq_depth: 1 << 15,
            rq_depth: 1 << 15,
            ..DEFAULT
        },
    ];
    for p in bad {
        let fake = Fake {
            params: Some(p),
            ..Default::default()
        };
        let r = Context::open(fake, PortAddr::sim(1).unwrap());
        assert!(
            matches!(r, Err(Error::BadDeviceParam { .. })),
            "{p:?}: {:?}",
            r.err()
        );
    }
}

/// Point 5 too: open() waits for STATUS.READY (the engine's work after a reset, about
/// 5 x `num_qps` cycles), and a device that never reports it is a clear timeout, not a hang.
#[test]
fn open_waits_for_status_ready() {
    let late = Fake {
        ready_at_ns: Some(400_000),
        ..Default::default()
    };
    Context::open(late, PortAddr::sim(1).unwrap()).expect("ready after 400 us");
    let never = Fake {
        ready_at_ns: Some(u64::MAX),
        ..Default::default()
    };
    match Context::open(never, PortAddr::sim(1).unwrap()) {
        Err(Error::Timeout { what, ns }) => {
            assert!(what.contains("STATUS.READY"), "{what}");
            assert!(ns >= 20_000_000, "gave up after {ns} ns");
        }
        r => panic!("a device never ready: {:?}", r.err()),
    }
}

/// Point 6: after 255 registrations in one MR slot, the slot retires instead of wrapping its
/// 8-bit generation, so no earlier key of it becomes valid again.
#[test]
fn mr_keys_never_repeat_in_a_slot() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let buf = c.alloc_buf(64).unwrap();
    // slot 0 cycles; every other slot is held
    let first = pd.reg_mr(&buf, AccessFlags::empty()).unwrap();
    let held: Vec<_> = (1..DEFAULT.num_mrs)
        .map(|_| pd.reg_mr(&buf, AccessFlags::empty()).unwrap())
        .collect();
    let mut keys = std::collections::HashSet::new();
    keys.insert(first.lkey());
    first.dereg().unwrap();
    loop {
        match pd.reg_mr(&buf, AccessFlags::empty()) {
            Ok(m) => {
                assert_eq!(rnic_abi::queue::key_parts(m.lkey()).0, 0, "slot 0");
                assert!(
                    keys.insert(m.lkey()),
                    "key {:#x} handed out twice",
                    m.lkey()
                );
                m.dereg().unwrap();
            }
            Err(Error::OutOfResources { .. }) => break,
            Err(e) => panic!("{e}"),
        }
        assert!(keys.len() <= 255, "slot 0 never retired");
    }
    assert_eq!(keys.len(), 255, "generations 1..=255, then retired");
    drop(held);
    // the other slots work on
    pd.reg_mr(&buf, AccessFlags::empty()).unwrap();
}

/// Point 7: argument errors are typed: a caller can match on what went wrong.
#[test]
fn argument_errors_are_typed() {
    let c = open();
    let pd = c.alloc_pd().unwrap();
    let buf = c.alloc_buf(64).unwrap();
    assert!(matches!(
        AccessFlags::from_bits(0x10),
        Err(Error::UnknownAccessFlags { unknown: 0x10, .. })
    ));
    assert!(matches!(
        Mtu::from_bytes(1000),
        Err(Error::BadMtu { bytes: 1000 })
    ));
    assert!(matches!(
        pd.reg_mr_range(&buf, 0, 0, AccessFlags::empty()),
        Err(Error::EmptyRegion)
    ));
    assert!(matches!(
        c.create_cq(3),
        Err(Error::BadCqSize { entries: 3, .. })
    ));
    assert!(matches!(
        pd.create_qp(
            &c.create_cq(4).unwrap(),
            &c.create_cq(4).unwrap(),
            QpCaps {
                max_send_wr: 0,
                ..Default::default()
            }
        ),
        Err(Error::OutOfRange {
            what: "max_send_wr",
            value: 0,
            ..
        })
    ));
    let mr = pd.reg_mr(&buf, AccessFlags::empty()).unwrap();
    assert!(matches!(
        mr.sge(60, 10),
        Err(Error::OutsideRegion {
            off: 60,
            len: 10,
            size: 64
        })
    ));
    assert!(matches!(
        Endpoint::from_bytes(&[0; 3]),
        Err(Error::EndpointLength { len: 3, .. })
    ));
}
