use rnic_abi::queue::*;
use rnic_abi::{dmatest, params, regs};

#[test]
fn regdoc_is_fresh() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/REGISTERS.md");
    let have =
        std::fs::read_to_string(&path).expect("docs/REGISTERS.md missing: run `make regdoc`");
    assert!(
        have == rnic_abi::regdoc::markdown(),
        "docs/REGISTERS.md is stale: run `make regdoc`"
    );
}

#[test]
fn wqe_roundtrip_and_offsets() {
    let w = Wqe {
        opcode: wqe_op::RDMA_WRITE,
        flags: wqe_flag::SIGNALED,
        length: 0x1234_5678,
        wr_id: 0xDEAD_BEEF_0102_0304,
        remote_addr: 0x1122_3344_5566_7788,
        rkey: 0xAABB_CCDD,
        inline_data: *b"0123456789abcdef",
        ..Default::default()
    };
    let b = w.encode();
    assert_eq!(b.len(), 64);
    assert_eq!(b[0], wqe_op::RDMA_WRITE);
    assert_eq!(&b[4..8], &0x1234_5678u32.to_le_bytes());
    assert_eq!(&b[32..40], &0x1122_3344_5566_7788u64.to_le_bytes());
    assert_eq!(&b[48..64], b"0123456789abcdef");
    assert_eq!(Wqe::decode(&b), w);
    assert_eq!(Wqe::field("rkey").unwrap().bit_offset(), 320);
}

#[test]
fn cqe_and_contexts_roundtrip() {
    let c = Cqe {
        wr_id: 7,
        byte_len: 4096,
        qp_num: 3,
        flags: cqe_flag::OWNER,
        ..Default::default()
    };
    assert_eq!(Cqe::decode(&c.encode()), c);
    let q = QpContext {
        state: qp_state::RTS,
        dest_mac: [1, 2, 3, 4, 5, 6],
        sq_psn: 0xABCDEF,
        ..Default::default()
    };
    assert_eq!(QpContext::decode(&q.encode()), q);
    let m = MrEntry {
        key: make_key(5, 9),
        length: 1 << 40,
        ..Default::default()
    };
    assert_eq!(key_parts(MrEntry::decode(&m.encode()).key), (5, 9));
}

#[test]
fn layout_checker_rejects_overlap() {
    use rnic_abi::layout::{FieldDesc, check_fields};
    let a = FieldDesc {
        name: "a",
        offset: 0,
        bits: 32,
        doc: "",
    };
    let b = FieldDesc {
        name: "b",
        offset: 2,
        bits: 16,
        doc: "",
    };
    assert!(!check_fields(&[a, b], 8));
    assert!(!check_fields(&[a], 3));
    assert!(check_fields(&[a], 4));
}

#[test]
fn block_chain_is_walkable() {
    let mut off = 0u32;
    let mut seen = 0;
    loop {
        let b = regs::BLOCKS
            .iter()
            .find(|b| b.base == off)
            .expect("chain points at a block");
        seen += 1;
        if b.next == 0 {
            break;
        }
        off = b.next;
    }
    assert_eq!(seen, regs::BLOCKS.len());
}

/// The QPN masks the RTL tests instead of compares agree with the compares on every QPN of
/// the build and past it.
#[test]
fn qpn_masks_match_the_compares() {
    let p = params::DEFAULT;
    for qpn in (0..p.num_qps + 70).chain([0x1234, 0xff_ffff]) {
        assert_eq!(qpn & p.qpn_high_mask() == 0, qpn < p.num_qps, "qpn {qpn}");
        if qpn < p.num_qps {
            let m = p.deep_qpn_mask();
            assert_eq!(qpn & m == m, p.is_deep(qpn), "qpn {qpn}");
        }
    }
    let none = params::BuildParams { deep_qps: 0, ..p };
    assert!((0..none.num_qps).all(|q| q & none.deep_qpn_mask() != none.deep_qpn_mask()));
}

#[test]
fn ring_slots_and_doorbells() {
    let p = params::DEFAULT;
    let d0 = p.first_deep_qpn();
    assert!(p.deep_qps > 0 && d0 == p.num_qps - p.deep_qps);
    // standard SQ rings, standard RQ rings, deep SQ rings, deep RQ rings
    assert_eq!(p.sq_slot(0, 0), 0);
    assert_eq!(p.sq_slot(1, 0), 64 * p.sq_depth);
    assert_eq!(p.sq_slot(0, p.sq_depth), 0, "index wraps");
    assert_eq!(p.rq_slot(0, 0), p.num_qps * p.sq_depth * 64);
    assert_eq!(p.rq_slot(1, p.rq_depth + 1), p.rq_slot(1, 1), "index wraps");
    let deep_sq = p.num_qps * (p.sq_depth + p.rq_depth) * 64;
    assert_eq!(p.sq_slot(d0, 0), deep_sq);
    assert_eq!(p.sq_slot(d0 + 1, 0), deep_sq + 64 * p.deep_depth);
    assert_eq!(
        p.sq_slot(d0, p.deep_depth + 3),
        p.sq_slot(d0, 3),
        "index wraps"
    );
    assert_eq!(p.rq_slot(d0, 0), deep_sq + p.deep_qps * p.deep_depth * 64);
    assert_eq!(
        p.rq_slot(p.num_qps - 1, p.deep_depth - 1) + 64,
        p.ring_bytes()
    );
    assert_eq!(p.sq_depth_of(d0 - 1), p.sq_depth);
    assert_eq!(p.sq_depth_of(d0), p.deep_depth);
    assert_eq!(p.rq_depth_of(p.num_qps - 1), p.deep_depth);
    assert_eq!(p.max_depth(), p.deep_depth);
    assert_eq!(p.checked_ring_bytes(), Some(p.ring_bytes()));
    assert!(p.ring_bytes().is_power_of_two());
    // every region starts at a multiple of its size: a slot is base | qp part | index
    for base in [p.region_base(1), p.region_base(2), p.region_base(3)] {
        assert_eq!(base % (p.deep_qps * p.deep_depth), 0);
    }
    assert_eq!(
        regs::db::unpack(regs::db::word(0x1234, 0xBEEF)),
        (0x1234, 0xBEEF)
    );
}

#[test]
fn dmatest_checksum_reference() {
    // one aligned beat of pattern 0..63: fold = XOR of words
    let sum = dmatest::pattern_checksum(0x1000, 64, 0);
    let mut fold = 0u32;
    for w in 0..16u32 {
        let b = 4 * w;
        fold ^= u32::from_le_bytes([b as u8, (b + 1) as u8, (b + 2) as u8, (b + 3) as u8]);
    }
    assert_eq!(sum, fold);
    // unaligned: bytes outside the range are zero
    let s1 = dmatest::checksum(0x1003, 1, |_| 0xAB);
    assert_eq!(s1, 0xAB00_0000);
    assert_eq!(dmatest::checksum(0, 0, |_| 1), 0);
}

/// Byte-enable masks for masked context writes come from the field tables: each field's bytes,
/// nothing else, for every layout the mailbox writes.
#[test]
fn byte_masks_follow_the_field_tables() {
    use rnic_abi::layout::fields_mask;
    use rnic_abi::queue::{CqContext, MrEntry, QpContext, RqState};
    for fields in [
        QpContext::FIELDS,
        RqState::FIELDS,
        CqContext::FIELDS,
        MrEntry::FIELDS,
    ] {
        let mut all = 0u64;
        for f in fields {
            let m = fields_mask(fields, &[f.name]);
            let want: u64 = (f.offset..f.offset + f.bits / 8).map(|b| 1u64 << b).sum();
            assert_eq!(m, want, "{}", f.name);
            assert_eq!(m, f.byte_mask());
            assert_eq!(all & m, 0, "{} overlaps", f.name);
            all |= m;
        }
    }
    assert_eq!(QpContext::byte_mask(&["state"]), 1);
    assert_eq!(
        QpContext::byte_mask(&["sq_psn", "una_psn"]),
        0xFF << 8,
        "bytes 8..16"
    );
    assert_eq!(QpContext::byte_mask(&[]), 0);
}

/// The engstat register row names every counter of `eng::COUNTERS`, in order (the row is text,
/// so this keeps it from falling behind when a counter is added).
#[test]
fn engstat_row_lists_every_counter() {
    use rnic_abi::regs::{BLOCKS, eng};
    let b = BLOCKS
        .iter()
        .find(|b| b.name == "engstat")
        .expect("engstat block");
    let r = &b.regs[0];
    assert_eq!(r.name, format!("CNT0..CNT{}", eng::COUNTERS.len() - 1));
    let names: Vec<&str> = eng::COUNTERS.iter().map(|c| c.0).collect();
    assert_eq!(r.doc, format!("{}.", names.join(", ")));
}
