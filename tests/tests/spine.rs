//! The spine, end to end: the real driver against the Verilated RTL in a simulated world.

use rnic::Error;
use rnic::device::{Bar, Device};
use rnic_abi::queue::{CqContext, MrEntry, QpContext, Wqe, wqe_op};
use rnic_abi::regs::{self, ctx, db, dev, dmat, mac};
use rnic_abi::{dmatest, params};
use rnic_sim::demo::test_frame;
use rnic_sim::hostmem::IOVA_BASE;
use rnic_sim::{SimNic, WorldConfig, world};
use rnic_tests::{PatchedDevice, configs, pair};

#[test]
fn identity_matches_the_contract() {
    let (_w, a, _b) = pair(WorldConfig::default());
    let info = a.info();
    assert_eq!(info.params, params::DEFAULT);
    assert_eq!(info.ring_bytes, params::DEFAULT.ring_bytes());
    assert_eq!(info.hw_version, (0, 1, 0));
    let kinds: Vec<u16> = info.blocks.iter().map(|b| b.1).collect();
    let want: Vec<u16> = regs::BLOCKS.iter().map(|b| b.kind).collect();
    assert_eq!(kinds, want);
}

#[test]
fn registers_scratch_and_reserved() {
    for (name, cfg) in configs() {
        let (_w, mut a, _b) = pair(cfg);
        for v in [0u32, 0xFFFF_FFFF, 0xDEAD_BEEF, 0x1234_5678, 0x8000_0001] {
            a.write_reg(dev::SCRATCH, v).unwrap();
            assert_eq!(a.read_reg(dev::SCRATCH).unwrap(), v, "{name}: scratch");
        }
        // read-only identity does not change on a write; reserved offsets read 0
        a.write_reg(dev::MAGIC, 0).unwrap();
        assert_eq!(a.read_reg(dev::MAGIC).unwrap(), dev::MAGIC_VALUE, "{name}");
        a.write_reg(dev::RD_ATOMIC, 0).unwrap();
        assert_eq!(
            a.read_reg(dev::RD_ATOMIC).unwrap(),
            rnic_abi::queue::ATOMIC_RESOURCES,
            "{name}: RD_ATOMIC"
        );
        for off in [0x60u32, 0x64, 0x7F0, 0x2000, 0xFFFC] {
            assert_eq!(
                a.read_reg(off).unwrap(),
                0,
                "{name}: reserved offset {off:#x}"
            );
        }
        // the cycle counter advances
        let c0 = a.cycles().unwrap();
        let c1 = a.cycles().unwrap();
        assert!(c1 > c0, "{name}: cycle counter {c0} -> {c1}");
    }
}

#[test]
fn wqe_pushes_land_in_ring_memory() {
    let p = params::DEFAULT;
    for (name, cfg) in configs() {
        let (_w, mut a, _b) = pair(cfg);
        let slots = [
            (0u32, 0u32, false),
            (0, 1, false),
            (3, 63, false),
            (255, 5, false),
            (0, 0, true),
            (255, 63, true),
            (17, 64 + 2, false),
        ];
        let mut wqes = Vec::new();
        for (k, &(qpn, idx, rq)) in slots.iter().enumerate() {
            let w = Wqe {
                opcode: if rq { wqe_op::RECV } else { wqe_op::RDMA_WRITE },
                wr_id: 0x1000 + k as u64,
                length: 4096 * k as u32 + 1,
                remote_addr: 0xABCD_0000 + k as u64,
                rkey: k as u32,
                slots: 1,
                ..Default::default()
            };
            if rq {
                a.push_rq_wqe(qpn, idx, &w).unwrap()
            } else {
                a.push_sq_wqe(qpn, idx, &w).unwrap()
            }
            wqes.push(w);
        }
        for (k, &(qpn, idx, rq)) in slots.iter().enumerate() {
            let off = if rq {
                p.rq_slot(qpn, idx)
            } else {
                p.sq_slot(qpn, idx)
            } as u64;
            let mut got = [0u8; 64];
            for wd in 0..16 {
                let v = a.device().read32(Bar::Rings, off + 4 * wd).unwrap();
                got[4 * wd as usize..4 * wd as usize + 4].copy_from_slice(&v.to_le_bytes());
            }
            assert_eq!(
                Wqe::decode(&got),
                wqes[k],
                "{name}: slot {k} at BAR2+{off:#x}"
            );
        }
        // neighbours untouched
        for off in [p.sq_slot(0, 2), p.sq_slot(3, 62), p.rq_slot(0, 1)] {
            assert_eq!(
                a.device().read32(Bar::Rings, off as u64).unwrap(),
                0,
                "{name}: BAR2+{off:#x} should be empty"
            );
        }
        // a 32-bit BAR2 write lands in its word only
        a.device()
            .write32(Bar::Rings, p.sq_slot(9, 0) as u64 + 8, 0xCAFE_F00D)
            .unwrap();
        assert_eq!(
            a.device()
                .read32(Bar::Rings, p.sq_slot(9, 0) as u64 + 8)
                .unwrap(),
            0xCAFE_F00D
        );
        assert_eq!(
            a.device()
                .read32(Bar::Rings, p.sq_slot(9, 0) as u64 + 4)
                .unwrap(),
            0
        );
    }
}

#[test]
fn dma_selftest_writes_exactly_the_pattern() {
    for (name, cfg) in configs() {
        let (w, mut a, _b) = pair(cfg);
        let buf = a.device().dma_alloc(80 * 1024).unwrap();
        // (offset, length): one byte, one aligned beat, unaligned, across 4 KiB pages, the max
        for (k, &(off, len)) in [
            (0usize, 1usize),
            (64, 64),
            (5, 70),
            (4096 - 37, 5000),
            (1, 65536),
            (8191, 2),
        ]
        .iter()
        .enumerate()
        {
            let seed = 0x30 + k as u8;
            let before = vec![0xEEu8; buf.len];
            a.device().dma_write(&buf, 0, &before).unwrap();
            let audit0 = w.borrow().nics[0].mem.audit.len();
            let r = a.dmatest_write(&buf, off, len, seed).unwrap();
            let iova = buf.iova + off as u64;
            assert_eq!(
                r.checksum,
                dmatest::pattern_checksum(iova, len as u64, seed),
                "{name}: checksum off {off} len {len}"
            );
            let mut host = vec![0u8; buf.len];
            a.device().dma_read(&buf, 0, &mut host).unwrap();
            for (i, &b) in host.iter().enumerate() {
                let want = if i >= off && i < off + len {
                    dmatest::pattern_byte(seed, (i - off) as u64)
                } else {
                    0xEE
                };
                assert_eq!(b, want, "{name}: byte {i} (off {off} len {len})");
            }
            // the host-memory audit: exactly LEN bytes written, all inside the target range
            let wb = w.borrow();
            let written: Vec<u64> = wb.nics[0].mem.audit[audit0..]
                .iter()
                .flat_map(|r| r.bytes.iter().map(|(a, _)| *a))
                .collect();
            assert_eq!(written.len(), len, "{name}: bytes written");
            assert!(
                written.iter().all(|&x| x >= iova && x < iova + len as u64),
                "{name}: a write outside the range"
            );
            assert!(
                wb.nics[0].mem.faults.is_empty(),
                "{name}: IOMMU faults {:?}",
                wb.nics[0].mem.faults
            );
            drop(wb);
            let rd = a.dmatest_read(&buf, off, len, seed).unwrap();
            assert_eq!(
                (rd.mismatches, rd.checksum),
                (0, r.checksum),
                "{name}: read-back of off {off} len {len}"
            );
        }
        // corrupt one byte: the read-back finds it
        a.device()
            .dma_write(&buf, 4096 - 37 + 100, &[0x00])
            .unwrap();
        a.dmatest_write(&buf, 4096 - 37, 5000, 0x11).unwrap();
        a.device()
            .dma_write(&buf, 4096 - 37 + 100, &[0x00])
            .unwrap();
        let rd = a.dmatest_read(&buf, 4096 - 37, 5000, 0x11).unwrap();
        assert_eq!(rd.mismatches, 1, "{name}");
        assert_ne!(
            a.read_reg(dmat::STATUS).unwrap() & dmat::STATUS_MISMATCH,
            0,
            "{name}"
        );
    }
}

#[test]
fn dma_selftest_cycle_budget() {
    // 4 KiB aligned write and read-back under the default PCIe model (read latency 150 cycles,
    // 52 B/cycle): a regression guard in simulated cycles, never wall clock.
    let (_w, mut a, _b) = pair(WorldConfig::default());
    let buf = a.device().dma_alloc(4096).unwrap();
    let wr = a.dmatest_write(&buf, 0, 4096, 1).unwrap();
    let rd = a.dmatest_read(&buf, 0, 4096, 1).unwrap();
    // 64 beats at 52/64 beat per cycle is ~79 cycles of data + 100 cycles of write latency
    assert!(
        wr.cycles <= 200,
        "4 KiB DMA write took {} cycles",
        wr.cycles
    );
    // 150 cycles latency + ~79 cycles of data
    assert!(rd.cycles <= 260, "4 KiB DMA read took {} cycles", rd.cycles);
}

#[test]
fn dma_to_unmapped_iova_is_refused_and_reported() {
    let (w, mut a, _b) = pair(WorldConfig::default());
    let buf = a.device().dma_alloc(4096).unwrap();
    a.device().dma_write(&buf, 0, &[0x77; 4096]).unwrap();
    // the guard page right after the buffer is not mapped
    let iova = buf.iova + 4096;
    a.write_reg(dmat::IOVA_LO, iova as u32).unwrap();
    a.write_reg(dmat::IOVA_HI, (iova >> 32) as u32).unwrap();
    a.write_reg(dmat::LEN, 128).unwrap();
    a.write_reg(dmat::CTRL, dmat::CTRL_WRITE).unwrap();
    let mut st = 0;
    for _ in 0..200 {
        st = a.read_reg(dmat::STATUS).unwrap();
        if st & dmat::STATUS_DONE != 0 {
            break;
        }
    }
    assert_ne!(st & dmat::STATUS_BUS_ERROR, 0, "status {st:#x}");
    let mut host = vec![0u8; 4096];
    a.device().dma_read(&buf, 0, &mut host).unwrap();
    assert!(host.iter().all(|&b| b == 0x77), "mapped buffer changed");
    let wb = w.borrow();
    assert!(!wb.nics[0].mem.faults.is_empty());
    assert!(
        wb.nics[0]
            .mem
            .audit
            .iter()
            .all(|r| r.bytes.iter().all(|(x, _)| *x < iova))
    );
    drop(wb);
    // and through the driver: a buffer freed behind the driver's back (its IOVA unmapped)
    // makes the device report a bus error, which the driver returns as an error
    let freed = a.device().dma_alloc(4096).unwrap();
    let stale = freed;
    a.device().dma_free(freed).unwrap();
    match a.dmatest_write(&stale, 0, 64, 0) {
        Err(Error::Device(m)) => assert!(m.contains("bus error"), "{m}"),
        other => panic!("expected a bus error, got {other:?}"),
    }
    // below the IOVA window nothing is mapped either
    assert!(w.borrow().nics[0].mem.mapping(IOVA_BASE - 1).is_none());
}

#[test]
fn dma_selftest_bad_arguments() {
    let (_w, mut a, _b) = pair(WorldConfig::default());
    let buf = a.device().dma_alloc(4096).unwrap();
    assert!(matches!(
        a.dmatest_write(&buf, 0, 0, 0),
        Err(Error::OutOfRange { .. })
    ));
    assert!(matches!(
        a.dmatest_write(&buf, 0, 70000, 0),
        Err(Error::OutOfRange { .. })
    ));
    assert!(matches!(
        a.dmatest_write(&buf, 4000, 200, 0),
        Err(Error::DmaRange { .. })
    ));
    // straight to the registers: the device refuses too
    a.write_reg(dmat::LEN, 0).unwrap();
    a.write_reg(dmat::CTRL, dmat::CTRL_WRITE).unwrap();
    assert_ne!(a.read_reg(dmat::STATUS).unwrap() & dmat::STATUS_BAD_ARG, 0);
    a.write_reg(dmat::LEN, dmat::MAX_LEN + 1).unwrap();
    a.write_reg(dmat::CTRL, dmat::CTRL_READ).unwrap();
    assert_ne!(a.read_reg(dmat::STATUS).unwrap() & dmat::STATUS_BAD_ARG, 0);
    // an IOVA range that wraps the 64-bit space
    a.write_reg(dmat::IOVA_LO, 0xFFFF_FFC0).unwrap();
    a.write_reg(dmat::IOVA_HI, 0xFFFF_FFFF).unwrap();
    a.write_reg(dmat::LEN, 128).unwrap();
    a.write_reg(dmat::CTRL, dmat::CTRL_WRITE).unwrap();
    assert_ne!(a.read_reg(dmat::STATUS).unwrap() & dmat::STATUS_BAD_ARG, 0);
}

#[test]
fn frames_cross_the_link_unchanged() {
    for (name, cfg) in configs() {
        let (w, mut a, mut b) = pair(cfg);
        let mut n = 0;
        for (k, len) in [14usize, 60, 63, 64, 65, 127, 128, 1514, 2047, 2048]
            .into_iter()
            .enumerate()
        {
            let f = test_frame([2, 0, 0, 0, 0, 0xB], [2, 0, 0, 0, 0, 0xA], len, k as u8);
            a.mac_send(&f).unwrap();
            n += 1;
            assert_eq!(
                b.mac_recv(n, 2_000_000).unwrap(),
                f,
                "{name}: A->B frame of {len} bytes"
            );
            let g = test_frame([2, 0, 0, 0, 0, 0xA], [2, 0, 0, 0, 0, 0xB], len, !k as u8);
            b.mac_send(&g).unwrap();
            assert_eq!(
                a.mac_recv(n, 2_000_000).unwrap(),
                g,
                "{name}: B->A frame of {len} bytes"
            );
        }
        let (ca, cb) = (a.mac_counters().unwrap(), b.mac_counters().unwrap());
        assert_eq!(
            (ca.tx_frames, ca.rx_frames, cb.tx_frames, cb.rx_frames),
            (n, n, n, n),
            "{name}"
        );
        let bytes: u32 = [14, 60, 63, 64, 65, 127, 128, 1514, 2047, 2048]
            .iter()
            .sum();
        assert_eq!(cb.rx_bytes, bytes, "{name}");
        assert_eq!(
            w.borrow().wire.len(),
            2 * n as usize,
            "{name}: frames on the wire"
        );
    }
}

#[test]
fn mac_debug_rejects_bad_lengths() {
    let (_w, mut a, _b) = pair(WorldConfig::default());
    assert!(matches!(
        a.mac_send(&[0u8; 13]),
        Err(Error::OutOfRange { .. })
    ));
    assert!(matches!(
        a.mac_send(&vec![0u8; 2049]),
        Err(Error::OutOfRange { .. })
    ));
    a.write_reg(mac::TX_LEN, 5000).unwrap();
    a.write_reg(mac::TX_CTRL, mac::TX_CTRL_SEND).unwrap();
    let st = a.read_reg(mac::TX_STATUS).unwrap();
    assert_eq!(
        st & (mac::TX_STATUS_BAD_LEN | mac::TX_STATUS_BUSY),
        mac::TX_STATUS_BAD_LEN
    );
    assert_eq!(a.mac_counters().unwrap().tx_frames, 0);
}

#[test]
fn same_seed_same_cycles_same_pcap() {
    let cfg = WorldConfig {
        seed: 42,
        ..WorldConfig::default()
    }
    .stressed(0.2);
    let r1 = rnic_sim::demo::spine(cfg).unwrap();
    let r2 = rnic_sim::demo::spine(cfg).unwrap();
    assert_eq!(r1.cycles, r2.cycles);
    assert_eq!(r1.pcap, r2.pcap);
    assert_eq!(
        r1.pcap.len(),
        24 + 16 + 1000,
        "pcap header, one record header, the 1000-byte frame"
    );
    let r3 = rnic_sim::demo::spine(WorldConfig { seed: 43, ..cfg }).unwrap();
    assert_ne!(
        r1.cycles, r3.cycles,
        "another seed gives another random idle/backpressure pattern"
    );
}

#[test]
fn wrong_device_or_major_version_is_refused() {
    let w = world(WorldConfig {
        nics: 1,
        ..Default::default()
    });
    let bad_magic = PatchedDevice {
        inner: SimNic::new(&w, 0).unwrap(),
        off: dev::MAGIC as u64,
        value: 0x1234_5678,
    };
    match rnic::Rnic::open(bad_magic) {
        Err(e @ Error::NotRnic { .. }) => {
            assert!(e.to_string().contains("not an rnic device"), "{e}")
        }
        other => panic!("expected NotRnic, got {:?}", other.err()),
    }
    let bad_major = PatchedDevice {
        inner: SimNic::new(&w, 0).unwrap(),
        off: (dev::BASE + regs::BLK_VERSION) as u64,
        value: 0x0002_0000,
    };
    match rnic::Rnic::open(bad_major) {
        Err(
            e @ Error::UnsupportedVersion {
                found: 2,
                supported: 1,
                ..
            },
        ) => assert!(e.to_string().contains("major version 2"), "{e}"),
        other => panic!("expected UnsupportedVersion, got {:?}", other.err()),
    }
    let bad_block = PatchedDevice {
        inner: SimNic::new(&w, 0).unwrap(),
        off: (mac::BASE + regs::BLK_VERSION) as u64,
        value: 0x0009_0000,
    };
    assert!(matches!(
        rnic::Rnic::open(bad_block),
        Err(Error::UnsupportedVersion {
            block: "macdbg",
            ..
        })
    ));
    let loop_chain = PatchedDevice {
        inner: SimNic::new(&w, 0).unwrap(),
        off: (db::BASE + regs::BLK_NEXT) as u64,
        value: 0,
    };
    assert!(matches!(
        rnic::Rnic::open(loop_chain),
        Err(Error::MissingBlock(_))
    ));
}

#[test]
fn out_of_range_and_bad_arguments_are_errors() {
    let (_w, mut a, _b) = pair(WorldConfig::default());
    let d = a.device();
    assert!(matches!(
        d.read32(Bar::Regs, 0x1_0000),
        Err(Error::BarRange { .. })
    ));
    assert!(matches!(
        d.read32(Bar::Regs, 0x3),
        Err(Error::BarRange { .. })
    ));
    assert!(matches!(
        d.write32(Bar::Regs, u64::MAX - 1, 0),
        Err(Error::BarRange { .. })
    ));
    assert!(matches!(
        d.read32(Bar::Rings, rnic_abi::pcie::BAR2_BYTES),
        Err(Error::BarRange { .. })
    ));
    assert!(matches!(
        d.push_wqe(32, &[0; 64]),
        Err(Error::BarRange { .. })
    ));
    assert!(matches!(
        d.push_wqe(rnic_abi::pcie::BAR2_BYTES, &[0; 64]),
        Err(Error::BarRange { .. })
    ));
    assert!(matches!(d.dma_alloc(0), Err(Error::BadDmaLength { .. })));
    let buf = d.dma_alloc(100).unwrap();
    assert!(matches!(
        d.dma_read(&buf, 90, &mut [0; 20]),
        Err(Error::DmaRange { .. })
    ));
    assert!(matches!(
        d.dma_write(&buf, usize::MAX, &[1]),
        Err(Error::DmaRange { .. })
    ));
    d.dma_free(buf).unwrap();
    assert!(matches!(d.dma_free(buf), Err(Error::UnknownBuffer(_))));
    assert!(matches!(
        d.wait_irq(3, 100),
        Err(Error::NoSuchVector { .. })
    ));
    assert!(SimNic::new(d.world(), 5).is_err());
    let p = params::DEFAULT;
    assert!(matches!(
        a.doorbell(db::SQ, p.num_qps, 1),
        Err(Error::NoSuchObject { .. })
    ));
    assert!(matches!(
        a.doorbell(0x1234, 0, 1),
        Err(Error::NoSuchObject { .. })
    ));
    assert!(matches!(
        a.push_sq_wqe(p.num_qps, 0, &Wqe::default()),
        Err(Error::NoSuchObject { .. })
    ));
    assert!(matches!(
        a.read_context(ctx::TABLE_MR, p.num_mrs),
        Err(Error::OutOfRange { .. })
    ));
    assert!(matches!(
        a.read_context(7, 0),
        Err(Error::NoSuchObject { .. })
    ));
}

#[test]
fn context_store_roundtrip_and_device_checks() {
    let p = params::DEFAULT;
    let (_w, mut a, _b) = pair(WorldConfig::default().stressed(0.2));
    let q0 = QpContext {
        state: 3,
        qp_type: 2,
        path_mtu: 5,
        remote_qpn: 0x12345,
        sq_psn: 0xABCDEF,
        dest_mac: [2, 0, 0, 0, 0, 0xB],
        udp_sport: 0xC123,
        dest_ip: 0x0A00_0002,
        ..Default::default()
    };
    let q_last = QpContext {
        remote_qpn: 7,
        una_psn: 99,
        ..q0
    };
    let cq = CqContext {
        base_iova: 0x1_2345_6000,
        log2_entries: 10,
        flags: 1,
        ..Default::default()
    };
    let mr = MrEntry {
        key: rnic_abi::queue::make_key(p.num_mrs - 1, 3),
        pd: 4,
        iova: 0x1_0000_0000,
        length: 1 << 20,
        access: 7,
        flags: 1,
    };
    a.write_context(ctx::TABLE_QP, 0, &q0.encode()).unwrap();
    a.write_context(ctx::TABLE_QP, p.num_qps - 1, &q_last.encode())
        .unwrap();
    a.write_context(ctx::TABLE_CQ, 0, &cq.encode()).unwrap();
    a.write_context(ctx::TABLE_MR, p.num_mrs - 1, &mr.encode())
        .unwrap();
    assert_eq!(
        QpContext::decode(&a.read_context(ctx::TABLE_QP, 0).unwrap()),
        q0
    );
    assert_eq!(
        QpContext::decode(&a.read_context(ctx::TABLE_QP, p.num_qps - 1).unwrap()),
        q_last
    );
    assert_eq!(
        CqContext::decode(&a.read_context(ctx::TABLE_CQ, 0).unwrap()),
        cq
    );
    assert_eq!(
        MrEntry::decode(&a.read_context(ctx::TABLE_MR, p.num_mrs - 1).unwrap()),
        mr
    );
    assert_eq!(
        a.read_context(ctx::TABLE_QP, 1).unwrap(),
        [0u8; 64],
        "untouched entry"
    );
    // the device checks too: out-of-range index and bad table set the error bit
    a.write_reg(
        ctx::CMD,
        ctx::cmd(ctx::OP_READ, ctx::TABLE_QP, p.num_qps as u16),
    )
    .unwrap();
    assert_ne!(a.read_reg(ctx::STATUS).unwrap() & ctx::STATUS_ERROR, 0);
    a.write_reg(ctx::CMD, ctx::cmd(ctx::OP_WRITE, 9, 0))
        .unwrap();
    assert_ne!(a.read_reg(ctx::STATUS).unwrap() & ctx::STATUS_ERROR, 0);
}

#[test]
fn doorbells_are_counted_and_recorded() {
    let (_w, mut a, _b) = pair(WorldConfig::default());
    a.doorbell(db::SQ, 5, 17).unwrap();
    a.doorbell(db::RQ, 255, 0xFFFF).unwrap();
    a.doorbell(db::CQ, 3, 2).unwrap();
    assert_eq!(a.read_reg(db::COUNT).unwrap(), 3);
    assert_eq!(a.read_reg(db::LAST).unwrap(), db::word(3, 2));
    assert_eq!(a.read_reg(db::LAST_KIND).unwrap(), db::KIND_CQ);
    a.write_reg(dev::CONTROL, dev::CONTROL_SOFT_RESET).unwrap();
    assert_eq!(
        a.read_reg(db::COUNT).unwrap(),
        0,
        "soft reset clears the counters"
    );
}

#[test]
fn interrupts_fire_and_clear() {
    let (_w, mut a, mut b) = pair(WorldConfig::default());
    a.write_reg(dev::IRQ_ENABLE, dev::IRQ_DMATEST_DONE).unwrap();
    assert!(
        !a.device().wait_irq(0, 2_000).unwrap(),
        "no interrupt before any cause"
    );
    let buf = a.device().dma_alloc(4096).unwrap();
    a.dmatest_write(&buf, 0, 256, 0).unwrap();
    assert!(a.device().wait_irq(0, 10_000).unwrap());
    assert_eq!(a.read_reg(dev::IRQ_STATUS).unwrap(), dev::IRQ_DMATEST_DONE);
    a.write_reg(dev::IRQ_STATUS, dev::IRQ_DMATEST_DONE).unwrap();
    assert_eq!(a.read_reg(dev::IRQ_STATUS).unwrap(), 0);
    assert!(!a.device().wait_irq(0, 2_000).unwrap(), "cleared");
    // MAC RX cause on the other NIC, masked until enabled
    let f = test_frame([2, 0, 0, 0, 0, 0xB], [2, 0, 0, 0, 0, 0xA], 100, 1);
    a.mac_send(&f).unwrap();
    b.mac_recv(1, 1_000_000).unwrap();
    assert_eq!(b.read_reg(dev::IRQ_STATUS).unwrap(), dev::IRQ_MAC_RX);
    assert!(!b.device().wait_irq(0, 1_000).unwrap(), "masked");
    b.write_reg(dev::IRQ_ENABLE, dev::IRQ_ALL).unwrap();
    assert!(b.device().wait_irq(0, 10_000).unwrap());
}

#[test]
fn pcap_decodes_in_tshark() {
    let r = rnic_sim::demo::spine(WorldConfig::default()).unwrap();
    let dir = std::env::temp_dir().join(format!("rnic-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("demo.pcap");
    std::fs::write(&path, &r.pcap).unwrap();
    let out = std::process::Command::new("tshark")
        .args(["-r"])
        .arg(&path)
        .args([
            "-T",
            "fields",
            "-e",
            "frame.len",
            "-e",
            "eth.type",
            "-e",
            "_ws.malformed",
        ])
        .output()
        .expect("tshark is installed by scripts/setup.sh");
    assert!(
        out.status.success(),
        "tshark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "one frame in the demo capture: {text}");
    let cols: Vec<&str> = lines[0].split('\t').collect();
    assert_eq!(cols[0], "1000");
    assert_eq!(cols[1], "0x88b5");
    assert!(
        cols.get(2).is_none_or(|m| m.is_empty()),
        "malformed: {text}"
    );
}

#[test]
fn link_fault_injection_is_seeded() {
    use rnic_sim::eth::LinkConfig;
    let send = |link: LinkConfig, n: usize| {
        let cfg = WorldConfig {
            seed: 5,
            link,
            ..WorldConfig::default()
        };
        let (w, mut a, mut b) = pair(cfg);
        let mut got = Vec::new();
        for k in 0..n {
            a.mac_send(&test_frame(
                [2, 0, 0, 0, 0, 0xB],
                [2, 0, 0, 0, 0, 0xA],
                64,
                k as u8,
            ))
            .unwrap();
            a.mac_tx_wait().unwrap();
            w.borrow_mut().run(200);
            got.push(b.mac_counters().unwrap().rx_frames);
        }
        let s = w.borrow().links[0].stats;
        (got, s)
    };
    let (rx, s) = send(
        LinkConfig {
            loss: 1.0,
            ..Default::default()
        },
        3,
    );
    assert_eq!((rx.last().copied(), s.lost), (Some(0), 3));
    let (rx, s) = send(
        LinkConfig {
            duplicate: 1.0,
            ..Default::default()
        },
        3,
    );
    assert_eq!((rx.last().copied(), s.duplicated), (Some(6), 3));
    let (rx, s) = send(
        LinkConfig {
            bit_flip: 1.0,
            ..Default::default()
        },
        2,
    );
    assert_eq!(
        (rx.last().copied(), s.flipped),
        (Some(2), 2),
        "flipped frames still arrive (the MAC has no FCS check here)"
    );
    let (_, s1) = send(
        LinkConfig {
            loss: 0.5,
            reorder: 0.3,
            ..Default::default()
        },
        12,
    );
    let (_, s2) = send(
        LinkConfig {
            loss: 0.5,
            reorder: 0.3,
            ..Default::default()
        },
        12,
    );
    assert_eq!(
        (s1.lost, s1.reordered),
        (s2.lost, s2.reordered),
        "same seed, same faults"
    );
    assert!(s1.lost > 0 && s1.lost < 12);
}

/// The board receive mode: frames that arrive together fill the RX FIFO (counted in 64-byte
/// beats) and the one that does not fit is dropped whole and counted, as is a frame larger
/// than the FIFO; the rest reach the NIC in order. The tap still shows every frame sent.
#[test]
fn board_rx_fifo_drops_what_does_not_fit() {
    use rnic_sim::eth::{LinkConfig, RxMode};
    let w = world(WorldConfig {
        nics: 1,
        link: LinkConfig {
            rx: RxMode::Drop { fifo_bytes: 1024 },
            ..LinkConfig::default()
        },
        ..WorldConfig::default()
    });
    let (_, rx) = w.borrow_mut().detach_port(0).unwrap();
    let mut b = rnic::Rnic::open(SimNic::new(&w, 0).unwrap()).unwrap();
    let base = b.mac_counters().unwrap().rx_frames;
    {
        let mut w = w.borrow_mut();
        let now = w.cycle;
        // 16 beats of room: four frames of 4 beats fit, the fifth does not
        for k in 0..5u8 {
            w.links[rx].inject(
                now,
                test_frame([2, 0, 0, 0, 0, 9], [2, 0, 0, 0, 0, 8], 256, k),
            );
        }
        // 2000 bytes: 32 beats, never fits
        w.links[rx].inject(
            now + 1,
            test_frame([2, 0, 0, 0, 0, 9], [2, 0, 0, 0, 0, 8], 2000, 9),
        );
        w.run(2000);
        let st = w.links[rx].stats;
        assert_eq!((st.injected, st.rx_fifo_drops), (6, 2), "{st:?}");
        assert_eq!(w.links[rx].rx_fifo_beats(), 0);
    }
    assert_eq!(b.mac_counters().unwrap().rx_frames - base, 4);
    // paced injections (line rate) and the default FIFO: nothing is dropped
    let mut w2 = w.borrow_mut();
    w2.links[rx].cfg = LinkConfig::board();
    for k in 0..20u8 {
        w2.inject_rx(
            0,
            test_frame([2, 0, 0, 0, 0, 9], [2, 0, 0, 0, 0, 8], 1500, k),
        )
        .unwrap();
    }
    assert!(w2.inject_rx(0, vec![0; 9001]).is_err());
    assert!(w2.inject_rx(0, Vec::new()).is_err());
    assert!(w2.inject_rx(3, vec![0; 64]).is_err());
    w2.run(5000);
    assert_eq!(w2.links[rx].stats.rx_fifo_drops, 2);
    drop(w2);
    assert_eq!(b.mac_counters().unwrap().rx_frames - base, 24);
}

/// RoCE v2 frames captured from Linux SoftRoCE, sent through NIC A's MAC debug path: NIC B's RX
/// checks (header parser + ICRC) accept every one; corrupted copies are dropped and counted
/// under the right reason.
#[test]
fn rx_checks_accept_softroce_frames_and_count_drops() {
    let path = rnic_tests::vectors();
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = pcap_file::pcap::PcapReader::new(&data[..]).expect("pcap");
    let mut roce = Vec::new();
    while let Some(p) = reader.next_packet() {
        let f = p.expect("packet").data.to_vec();
        if rnic_tests::parse_roce(&f).is_some() {
            roce.push(f);
        }
    }
    assert_eq!(roce.len(), 180);
    let (_w, mut a, mut b) = pair(WorldConfig::default());
    let mut sent = 0;
    // every 6th frame keeps the test short; all opcodes of the capture still occur
    let picks: Vec<&Vec<u8>> = roce.iter().step_by(6).collect();
    for f in &picks {
        a.mac_send(f).unwrap();
        sent += 1;
        b.mac_recv(sent, 2_000_000).unwrap();
    }
    let st = b.rx_stats().unwrap();
    assert_eq!(st.roce_ok, picks.len() as u32, "{st:?}");
    assert_eq!(
        (st.icrc_bad, st.drops.iter().map(|d| d.1).sum::<u32>()),
        (0, 0),
        "{st:?}"
    );
    let last = picks.last().unwrap();
    assert_eq!(st.last_opcode, last[42]);
    assert_eq!(
        st.last_qpn,
        u32::from_be_bytes([0, last[47], last[48], last[49]])
    );
    assert_eq!(
        st.last_psn,
        u32::from_be_bytes([0, last[51], last[52], last[53]])
    );
    // a flipped payload bit: headers fine, ICRC wrong
    let mut bad = picks[3].clone();
    let n = bad.len();
    bad[n - 10] ^= 0x10;
    a.mac_send(&bad).unwrap();
    sent += 1;
    b.mac_recv(sent, 2_000_000).unwrap();
    // wrong UDP destination port (the UDP checksum is 0, the IPv4 header is unchanged)
    let mut port = picks[4].clone();
    port[37] ^= 1;
    a.mac_send(&port).unwrap();
    sent += 1;
    b.mac_recv(sent, 2_000_000).unwrap();
    // not IPv4 at all
    a.mac_send(&test_frame(
        [2, 0, 0, 0, 0, 0xB],
        [2, 0, 0, 0, 0, 0xA],
        100,
        9,
    ))
    .unwrap();
    sent += 1;
    b.mac_recv(sent, 2_000_000).unwrap();
    let st2 = b.rx_stats().unwrap();
    assert_eq!(st2.roce_ok, st.roce_ok, "{st2:?}");
    assert_eq!(st2.icrc_bad, 1, "{st2:?}");
    assert_eq!(st2.drops_for("udp_port"), 1, "{st2:?}");
    assert_eq!(st2.drops_for("ethertype"), 1, "{st2:?}");
    assert_eq!(st2.drops.iter().map(|d| d.1).sum::<u32>(), 2, "{st2:?}");
}
