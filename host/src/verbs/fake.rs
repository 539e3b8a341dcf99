//! Test helpers shared by the verbs unit tests: [`Fake`], a device that implements the register
//! map's identity, the context mailbox, the rings and DMA memory (no data path: the tests play
//! the hardware's part by writing CQEs into the ring), and [`LoopNic`], a behavioural two-NIC
//! loopback over two fakes (SEND, WRITE, READ and the atomics CMP_SWAP / FETCH_ADD).
use super::*;
use crate::device::{Bar, DmaRegion};
use rnic_abi::params::{self, DEFAULT};
use rnic_abi::regs::{self, ctx as cr, dev};
use std::collections::HashMap;

#[derive(Default)]
pub(super) struct Fake {
    pub(super) ctx_data: [u32; 16],
    pub(super) ctx_status: u32,
    /// WBE_LO/WBE_HI (all ones after reset, as in the RTL).
    pub(super) ctx_wbe: Option<u64>,
    /// Mailbox commands run (op, table, index, byte enables): to check what a modify writes.
    pub(super) ctx_log: Vec<(u32, u32, u32, u64)>,
    /// Play the engine: bump `sq_psn` of this QP at every mailbox read of its context (traffic
    /// advancing between a driver's read and write).
    pub(super) engine_bumps_qp: Option<u32>,
    /// A CQE write the device makes while the host reads: (buffer id, entry offset, entry).
    /// It lands when a `dma_read` reaches the entry's owner byte, after the bytes before it
    /// were copied out (a host reading the whole entry at once sees it torn).
    pub(super) racing_cqe: Option<(u64, usize, [u8; 32])>,
    /// What the engine last wrote into (sq_psn, sq_ci, una_psn) of `engine_bumps_qp`.
    pub(super) engine_last: Option<(u32, u16, u32)>,
    /// Refuse every mailbox write (a device error).
    pub(super) fail_ctx_writes: bool,
    /// Build parameters to report instead of the defaults.
    pub(super) params: Option<params::BuildParams>,
    /// STATUS.READY only from this device time on (None: always ready).
    pub(super) ready_at_ns: Option<u64>,
    pub(super) tables: HashMap<(u32, u32), [u8; 64]>,
    pub(super) rings: HashMap<u64, [u8; 64]>,
    pub(super) doorbells: Vec<(u32, u32)>,
    pub(super) bufs: HashMap<u64, (u64, Vec<u8>)>,
    pub(super) next_id: u64,
    pub(super) now: u64,
}

impl Fake {
    pub(super) fn exec(&mut self, cmd: u32) {
        let (op, table, index) = (cmd & 3, (cmd >> 4) & 0xF, cmd >> 16);
        let limit = match table {
            cr::TABLE_QP | cr::TABLE_RQS => DEFAULT.num_qps,
            cr::TABLE_CQ => DEFAULT.num_cqs,
            cr::TABLE_MR => DEFAULT.num_mrs,
            _ => 0,
        };
        if index >= limit || !(op == cr::OP_READ || op == cr::OP_WRITE) {
            self.ctx_status = cr::STATUS_ERROR;
            return;
        }
        if op == cr::OP_WRITE && self.fail_ctx_writes {
            self.ctx_status = cr::STATUS_ERROR;
            return;
        }
        self.ctx_status = 0;
        if table == cr::TABLE_QP && self.engine_bumps_qp == Some(index) {
            // traffic: the engine advances the QP between any two mailbox commands
            let mut qc = QpContext::decode(&self.rec(table, index));
            qc.sq_psn = (qc.sq_psn + 1) & roce::PSN_MASK;
            qc.sq_ci = qc.sq_ci.wrapping_add(1);
            qc.una_psn = (qc.una_psn + 1) & roce::PSN_MASK;
            self.engine_last = Some((qc.sq_psn, qc.sq_ci, qc.una_psn));
            self.put(table, index, qc.encode());
        }
        let wbe = if op == cr::OP_WRITE && cmd & cr::CMD_MASKED != 0 {
            self.ctx_wbe.unwrap_or(u64::MAX)
        } else {
            u64::MAX
        };
        self.ctx_log.push((op, table, index, wbe));
        if op == cr::OP_WRITE {
            let mut rec = self.tables.get(&(table, index)).copied().unwrap_or([0; 64]);
            for (i, w) in self.ctx_data.iter().enumerate() {
                for (k, b) in w.to_le_bytes().into_iter().enumerate() {
                    if wbe >> (4 * i + k) & 1 != 0 {
                        rec[4 * i + k] = b;
                    }
                }
            }
            self.tables.insert((table, index), rec);
        } else {
            let rec = self.tables.get(&(table, index)).copied().unwrap_or([0; 64]);
            for (i, w) in self.ctx_data.iter_mut().enumerate() {
                *w = u32::from_le_bytes(rec[4 * i..4 * i + 4].try_into().unwrap());
            }
        }
    }
    pub(super) fn buf(&mut self, b: &DmaRegion) -> Result<&mut Vec<u8>> {
        match self.bufs.get_mut(&b.id) {
            Some((iova, v)) if *iova == b.iova => Ok(v),
            _ => Err(Error::UnknownBuffer(b.id)),
        }
    }
}

impl Device for Fake {
    fn describe(&self) -> String {
        "fake".into()
    }
    fn bar_len(&self, bar: Bar) -> u64 {
        match bar {
            Bar::Regs => rnic_abi::pcie::BAR0_BYTES,
            Bar::Rings => rnic_abi::pcie::BAR2_BYTES,
        }
    }
    fn read32(&mut self, bar: Bar, off: u64) -> Result<u32> {
        let off = off as u32;
        if bar == Bar::Rings {
            let slot = self
                .rings
                .get(&(off as u64 & !63))
                .copied()
                .unwrap_or([0; 64]);
            let i = (off & 63) as usize;
            return Ok(u32::from_le_bytes(slot[i..i + 4].try_into().unwrap()));
        }
        for b in regs::BLOCKS {
            if off == b.base + regs::BLK_TYPE {
                return Ok(b.kind as u32);
            }
            if off == b.base + regs::BLK_VERSION {
                return Ok(b.version_word());
            }
            if off == b.base + regs::BLK_NEXT {
                return Ok(b.next);
            }
        }
        let p = self.params.unwrap_or(DEFAULT);
        Ok(match off {
            dev::MAGIC => dev::MAGIC_VALUE,
            dev::STATUS if self.ready_at_ns.is_some_and(|t| self.now < t) => 0,
            dev::STATUS => dev::STATUS_READY,
            dev::HW_VERSION => params::HW_VERSION,
            dev::NUM_QPS => p.num_qps,
            dev::NUM_CQS => p.num_cqs,
            dev::NUM_MRS => p.num_mrs,
            dev::SQ_DEPTH => p.sq_depth,
            dev::RQ_DEPTH => p.rq_depth,
            dev::DEEP_QPS => p.deep_qps,
            dev::DEEP_DEPTH => p.deep_depth,
            dev::MAX_MTU => p.max_mtu,
            dev::DATAPATH_BITS => p.datapath_bits,
            dev::CLOCK_KHZ => p.clock_khz,
            dev::RD_ATOMIC => p.rd_atomic,
            // as the device computes it (0 when it overflows: the fake must not panic on bad
            // parameters)
            dev::RING_BYTES => p.checked_ring_bytes().unwrap_or(0),
            cr::STATUS => self.ctx_status,
            cr::WBE_LO => self.ctx_wbe.unwrap_or(u64::MAX) as u32,
            cr::WBE_HI => (self.ctx_wbe.unwrap_or(u64::MAX) >> 32) as u32,
            o if (cr::DATA..cr::DATA + 64).contains(&o) => {
                self.ctx_data[((o - cr::DATA) / 4) as usize]
            }
            _ => 0,
        })
    }
    fn write32(&mut self, bar: Bar, off: u64, val: u32) -> Result<()> {
        if bar == Bar::Regs {
            let off = off as u32;
            match off {
                cr::CMD => self.exec(val),
                cr::WBE_LO => {
                    let w = self.ctx_wbe.unwrap_or(u64::MAX);
                    self.ctx_wbe = Some((w & !0xFFFF_FFFF) | val as u64);
                }
                cr::WBE_HI => {
                    let w = self.ctx_wbe.unwrap_or(u64::MAX);
                    self.ctx_wbe = Some((w & 0xFFFF_FFFF) | (val as u64) << 32);
                }
                o if (cr::DATA..cr::DATA + 64).contains(&o) => {
                    self.ctx_data[((o - cr::DATA) / 4) as usize] = val
                }
                db::SQ | db::RQ | db::CQ => self.doorbells.push((off, val)),
                _ => {}
            }
        }
        Ok(())
    }
    fn push_wqe(&mut self, off: u64, wqe: &[u8; 64]) -> Result<()> {
        crate::device::check_bar(Bar::Rings, self.bar_len(Bar::Rings), off, 64)?;
        self.rings.insert(off, *wqe);
        Ok(())
    }
    fn dma_alloc(&mut self, len: usize) -> Result<DmaRegion> {
        self.next_id += 1;
        let iova = 0x1_0000_0000 + self.next_id * 0x100_0000;
        self.bufs.insert(self.next_id, (iova, vec![0; len]));
        Ok(DmaRegion {
            id: self.next_id,
            iova,
            len,
        })
    }
    fn dma_free(&mut self, buf: DmaRegion) -> Result<()> {
        self.buf(&buf)?;
        self.bufs.remove(&buf.id);
        Ok(())
    }
    fn dma_read(&mut self, buf: &DmaRegion, off: usize, out: &mut [u8]) -> Result<()> {
        buf.check(off, out.len())?;
        if let Some((id, at, cqe)) = self.racing_cqe {
            let owner = at + super::cq::CQE_FLAGS_OFF;
            let end = off + out.len();
            if id == buf.id && off <= owner && owner < end {
                // the bytes before the owner byte are copied out before the device's write
                let split = owner - off;
                let v = self.buf(buf)?;
                out[..split].copy_from_slice(&v[off..owner]);
                v[at..at + 32].copy_from_slice(&cqe);
                out[split..].copy_from_slice(&v[owner..end]);
                self.racing_cqe = None;
                return Ok(());
            }
        }
        let v = self.buf(buf)?;
        out.copy_from_slice(&v[off..off + out.len()]);
        Ok(())
    }
    fn dma_write(&mut self, buf: &DmaRegion, off: usize, data: &[u8]) -> Result<()> {
        buf.check(off, data.len())?;
        let v = self.buf(buf)?;
        v[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }
    fn relax(&mut self) {
        self.now += 64;
    }
    fn now_ns(&mut self) -> u64 {
        self.now
    }
    fn wait_irq(&mut self, _vector: u32, _timeout_ns: u64) -> Result<bool> {
        Ok(false)
    }
}

pub(super) fn open() -> Context<Fake> {
    Context::open(Fake::default(), PortAddr::sim(1).unwrap()).unwrap()
}

pub(super) fn table(c: &Context<Fake>, t: u32, i: u32) -> [u8; 64] {
    c.with_nic(|n| Ok(n.device().tables.get(&(t, i)).copied().unwrap_or([0; 64])))
        .unwrap()
}

pub(super) fn doorbells(c: &Context<Fake>) -> Vec<(u32, u32)> {
    c.with_nic(|n| Ok(std::mem::take(&mut n.device().doorbells)))
        .unwrap()
}

pub(super) fn ring_wqe(c: &Context<Fake>, off: u32) -> Wqe {
    let raw = c
        .with_nic(|n| Ok(n.device().rings.get(&(off as u64)).copied()))
        .unwrap()
        .expect("no WQE in that slot");
    Wqe::decode(&raw)
}

/// Play the device: write CQE number `pi` (free-running) with the owner bit of its pass.
pub(super) fn hw_cqe(c: &Context<Fake>, cq: &CompletionQueue<Fake>, pi: u32, mut cqe: Cqe) {
    let log2 = cq.entries().trailing_zeros() as u8;
    cqe.flags = (cqe.flags & !cqe_flag::OWNER) | owner_flag_for(pi, log2);
    let slot = (pi & (cq.entries() - 1)) as usize;
    c.write_buf(cq.ring(), slot * CQE_BYTES, &cqe.encode())
        .unwrap();
}

pub(super) fn peer() -> Endpoint {
    Endpoint {
        qpn: 9,
        psn: 0x00AB_CDEF,
        ipv4: Ipv4Addr::new(10, 0, 0, 2),
        mac: [2, 0, 0, 0, 0, 2],
    }
}

pub(super) fn send_cqe(qpn: u32, wr_id: u64, status: u8) -> Cqe {
    Cqe {
        wr_id,
        qp_num: qpn,
        src_qp: 9,
        opcode: wc_op::SEND,
        status,
        ..Default::default()
    }
}

// ---- a behavioural two-NIC loopback following docs/DATAPATH.md: it reads exactly the
// records the driver writes (QP context, responder state, CQ context, MR entries, WQE
// slots, doorbells) and executes each posted WQE at its doorbell, so the driver's record
// contents are checked against the contract before the RTL exists.

use std::rc::Rc;

impl Fake {
    pub(super) fn rec(&self, t: u32, i: u32) -> [u8; 64] {
        self.tables.get(&(t, i)).copied().unwrap_or([0; 64])
    }
    pub(super) fn put(&mut self, t: u32, i: u32, r: [u8; 64]) {
        self.tables.insert((t, i), r);
    }
    pub(super) fn mem(&mut self, iova: u64, len: usize) -> Option<&mut [u8]> {
        self.bufs.values_mut().find_map(|(base, v)| {
            let off = iova.checked_sub(*base)? as usize;
            (off + len <= v.len()).then(|| &mut v[off..off + len])
        })
    }
    /// MR check as the engine does it: valid, key, PD, access, bounds.
    pub(super) fn mr_ok(&self, key: u32, pd: u32, need: u32, addr: u64, len: u64) -> bool {
        let (idx, _) = rnic_abi::queue::key_parts(key);
        if idx >= DEFAULT.num_mrs {
            return false;
        }
        let m = MrEntry::decode(&self.rec(cr::TABLE_MR, idx));
        m.flags & MR_FLAG_VALID != 0
            && m.key == key
            && m.pd == pd
            && m.access & need == need
            && addr >= m.iova
            && addr + len <= m.iova + m.length
    }
    /// cqwriter: one CQE into the ring of `cqn`.
    pub(super) fn cqe(&mut self, cqn: u16, mut c: Cqe) {
        let mut cq = CqContext::decode(&self.rec(cr::TABLE_CQ, cqn as u32));
        assert!(
            cq.flags & CQ_FLAG_VALID != 0,
            "completion for invalid CQ {cqn}"
        );
        let n = 1u32 << cq.log2_entries;
        let used = (cq.producer as u16).wrapping_sub(cq.consumer as u16) as u32;
        assert!(
            used < n,
            "CQ {cqn} overflow: the driver's consumer doorbells lag"
        );
        c.flags |= owner_flag_for(cq.producer, cq.log2_entries);
        let slot = (cq.producer & (n - 1)) as u64;
        self.mem(cq.base_iova + 32 * slot, 32)
            .expect("CQ ring mapped")
            .copy_from_slice(&c.encode());
        cq.producer += 1;
        self.put(cr::TABLE_CQ, cqn as u32, cq.encode());
    }
    /// dbunit: the doorbell's index into the context record.
    pub(super) fn apply_doorbell(&mut self, reg: u32, word: u32) {
        let (q, idx) = db::unpack(word);
        let q = q as u32;
        match reg {
            db::SQ => {
                let mut c = QpContext::decode(&self.rec(cr::TABLE_QP, q));
                c.sq_pi = idx;
                self.put(cr::TABLE_QP, q, c.encode());
            }
            db::RQ => {
                let mut r = RqState::decode(&self.rec(cr::TABLE_RQS, q));
                r.rq_pi = idx;
                self.put(cr::TABLE_RQS, q, r.encode());
            }
            _ => {
                let mut c = CqContext::decode(&self.rec(cr::TABLE_CQ, q));
                c.consumer = (c.consumer & !0xFFFF) | idx as u32;
                self.put(cr::TABLE_CQ, q, c.encode());
            }
        }
    }
}

#[derive(Default)]
pub(super) struct Net {
    pub(super) nics: [Fake; 2],
}

impl Net {
    /// txreq + rxresp + ackproc for QP `qpn` of NIC `k`, run to completion at once.
    pub(super) fn run_sq(&mut self, k: usize, qpn: u32) {
        let [a, b] = &mut self.nics;
        let (me, peer) = if k == 0 { (a, b) } else { (b, a) };
        loop {
            let mut qc = QpContext::decode(&me.rec(cr::TABLE_QP, qpn));
            if qc.state != qp_state::RTS || qc.sq_ci == qc.sq_pi {
                return;
            }
            let off = DEFAULT.sq_slot(qpn, qc.sq_ci as u32) as u64;
            let w = Wqe::decode(&me.rings[&off]);
            let len = w.length as usize;
            let is_read = w.opcode == wqe_op::RDMA_READ;
            let atomic = matches!(w.opcode, wqe_op::ATOMIC_CMP_SWAP | wqe_op::ATOMIC_FETCH_ADD);
            let err_op = match w.opcode {
                wqe_op::RDMA_READ => wc_op::RDMA_READ,
                wqe_op::ATOMIC_CMP_SWAP => wc_op::COMP_SWAP,
                wqe_op::ATOMIC_FETCH_ADD => wc_op::FETCH_ADD,
                _ => wc_op::SEND,
            };
            let fail = |me: &mut Fake, qc: &mut QpContext, status: u8| {
                me.cqe(
                    qc.send_cqn,
                    Cqe {
                        wr_id: w.wr_id,
                        qp_num: qpn,
                        src_qp: qc.remote_qpn,
                        status,
                        opcode: err_op,
                        ..Default::default()
                    },
                );
                qc.state = qp_state::ERR;
                qc.sq_ci = qc.sq_ci.wrapping_add(1);
                me.put(cr::TABLE_QP, qpn, qc.encode());
            };
            // the peer's responder for this QP: connected back to us, ready, in step
            let responder = |peer: &Fake, qc: &QpContext| {
                let pq = qc.remote_qpn;
                let pc = QpContext::decode(&peer.rec(cr::TABLE_QP, pq));
                assert!(
                    pc.state == qp_state::RTR || pc.state == qp_state::RTS,
                    "peer QP {pq} not ready"
                );
                assert_eq!(pc.remote_qpn, qpn, "peer's remote QPN");
                let rs = RqState::decode(&peer.rec(cr::TABLE_RQS, pq));
                assert_eq!(rs.rq_psn, qc.sq_psn, "PSNs agree");
                (pq, pc, rs)
            };
            // the responder took the message (n PSNs, one MSN) and its ACK came back: both
            // sides step on and the WQE completes (a CQE if signaled)
            let retire = |me: &mut Fake,
                          peer: &mut Fake,
                          qc: &mut QpContext,
                          pq: u32,
                          mut rs: RqState,
                          n: u32,
                          byte_len: u32,
                          opcode: u8| {
                rs.rq_psn = (rs.rq_psn + n) & roce::PSN_MASK;
                rs.msn += 1;
                peer.put(cr::TABLE_RQS, pq, rs.encode());
                qc.sq_psn = (qc.sq_psn + n) & roce::PSN_MASK;
                qc.una_psn = qc.sq_psn;
                qc.sq_ci = qc.sq_ci.wrapping_add(1);
                qc.sq_ack_ci = qc.sq_ci;
                me.put(cr::TABLE_QP, qpn, qc.encode());
                if w.flags & wqe_flag::SIGNALED != 0 {
                    me.cqe(
                        qc.send_cqn,
                        Cqe {
                            wr_id: w.wr_id,
                            byte_len,
                            qp_num: qpn,
                            src_qp: qc.remote_qpn,
                            opcode,
                            ..Default::default()
                        },
                    );
                }
            };
            if atomic {
                // txreq's checks (8-byte local buffer with LOCAL_WRITE), then the peer's
                // responder (alignment: NAK invalid request; QP and MR REMOTE_ATOMIC, rkey,
                // bounds: NAK remote access), the atomic on the little-endian u64, and
                // ackproc writing the original value into the local buffer
                let n8 = rnic_abi::queue::ATOMIC_BYTES;
                if w.flags & wqe_flag::INLINE != 0 {
                    fail(me, &mut qc, wc_status::LOC_QP_OP_ERR);
                    return;
                }
                if w.length != n8 {
                    fail(me, &mut qc, wc_status::LOC_LEN_ERR);
                    return;
                }
                if !me.mr_ok(w.lkey, qc.pd, access::LOCAL_WRITE, w.local_addr, n8 as u64) {
                    fail(me, &mut qc, wc_status::LOC_PROT_ERR);
                    return;
                }
                let (pq, pc, rs) = responder(peer, &qc);
                if !w.remote_addr.is_multiple_of(n8 as u64) {
                    fail(me, &mut qc, wc_status::REM_INV_REQ_ERR);
                    return;
                }
                let ok = pc.access as u32 & access::REMOTE_ATOMIC != 0
                    && peer.mr_ok(
                        w.rkey,
                        pc.pd,
                        access::REMOTE_ATOMIC,
                        w.remote_addr,
                        n8 as u64,
                    );
                if !ok {
                    fail(me, &mut qc, wc_status::REM_ACCESS_ERR);
                    return;
                }
                let compare = u64::from_le_bytes(w.inline_data[..8].try_into().unwrap());
                let operand = u64::from_le_bytes(w.inline_data[8..].try_into().unwrap());
                let word = peer.mem(w.remote_addr, 8).unwrap();
                let orig = u64::from_le_bytes((&*word).try_into().unwrap());
                let new = if w.opcode == wqe_op::ATOMIC_FETCH_ADD {
                    orig.wrapping_add(operand)
                } else if orig == compare {
                    operand
                } else {
                    orig
                };
                word.copy_from_slice(&new.to_le_bytes());
                me.mem(w.local_addr, 8)
                    .unwrap()
                    .copy_from_slice(&orig.to_le_bytes());
                retire(me, peer, &mut qc, pq, rs, 1, n8, err_op);
                continue;
            }
            if is_read {
                // txreq's checks, then the peer's responder (REMOTE_READ), then ackproc
                // placing the data and completing the WQE
                if w.flags & wqe_flag::INLINE != 0 {
                    fail(me, &mut qc, wc_status::LOC_QP_OP_ERR);
                    return;
                }
                if len > 0
                    && !me.mr_ok(w.lkey, qc.pd, access::LOCAL_WRITE, w.local_addr, len as u64)
                {
                    fail(me, &mut qc, wc_status::LOC_PROT_ERR);
                    return;
                }
                let (pq, pc, rs) = responder(peer, &qc);
                let ok = pc.access as u32 & access::REMOTE_READ != 0
                    && (len == 0
                        || peer.mr_ok(
                            w.rkey,
                            pc.pd,
                            access::REMOTE_READ,
                            w.remote_addr,
                            len as u64,
                        ));
                if !ok {
                    fail(me, &mut qc, wc_status::REM_ACCESS_ERR);
                    return;
                }
                if len > 0 {
                    let data = peer.mem(w.remote_addr, len).unwrap().to_vec();
                    me.mem(w.local_addr, len).unwrap().copy_from_slice(&data);
                }
                let n = len.div_ceil(128 << qc.path_mtu).max(1) as u32;
                retire(me, peer, &mut qc, pq, rs, n, w.length, wc_op::RDMA_READ);
                continue;
            }
            let payload = if w.flags & wqe_flag::INLINE != 0 {
                assert_eq!(w.inline_len as u32, w.length);
                w.inline_data[..len].to_vec()
            } else if len > 0 {
                if !me.mr_ok(w.lkey, qc.pd, 0, w.local_addr, len as u64) {
                    fail(me, &mut qc, wc_status::LOC_PROT_ERR);
                    return;
                }
                me.mem(w.local_addr, len).unwrap().to_vec()
            } else {
                Vec::new()
            };
            // the responder
            let (pq, pc, mut rs) = responder(peer, &qc);
            assert_eq!(pc.dest_ip, qc.src_ip, "addresses cross");
            assert_eq!(pc.dest_mac, qc.src_mac, "addresses cross");
            let n = len.div_ceil(128 << qc.path_mtu).max(1) as u32;
            let is_write = matches!(w.opcode, wqe_op::RDMA_WRITE | wqe_op::RDMA_WRITE_IMM);
            let imm = matches!(w.opcode, wqe_op::SEND_IMM | wqe_op::RDMA_WRITE_IMM);
            if is_write {
                let ok = pc.access as u32 & access::REMOTE_WRITE != 0
                    && (len == 0
                        || peer.mr_ok(
                            w.rkey,
                            pc.pd,
                            access::REMOTE_WRITE,
                            w.remote_addr,
                            len as u64,
                        ));
                if !ok {
                    fail(me, &mut qc, wc_status::REM_ACCESS_ERR);
                    return;
                }
            }
            let consumes = !is_write || imm;
            if consumes && rs.rq_ci == rs.rq_pi {
                fail(me, &mut qc, wc_status::RNR_RETRY_EXC_ERR);
                return;
            }
            let target = if is_write {
                Some(w.remote_addr)
            } else {
                let r = Wqe::decode(&peer.rings[&(DEFAULT.rq_slot(pq, rs.rq_ci as u32) as u64)]);
                if len > r.length as usize
                    || (len > 0
                        && !peer.mr_ok(
                            r.lkey,
                            pc.pd,
                            access::LOCAL_WRITE,
                            r.local_addr,
                            len as u64,
                        ))
                {
                    peer.cqe(
                        pc.recv_cqn,
                        Cqe {
                            wr_id: r.wr_id,
                            qp_num: pq,
                            src_qp: qpn,
                            status: wc_status::LOC_LEN_ERR,
                            opcode: wc_op::RECV,
                            ..Default::default()
                        },
                    );
                    fail(me, &mut qc, wc_status::REM_INV_REQ_ERR);
                    return;
                }
                Some(r.local_addr)
            };
            if let Some(t) = target.filter(|_| len > 0) {
                peer.mem(t, len).unwrap().copy_from_slice(&payload);
            }
            if consumes {
                let r = Wqe::decode(&peer.rings[&(DEFAULT.rq_slot(pq, rs.rq_ci as u32) as u64)]);
                rs.rq_ci = rs.rq_ci.wrapping_add(1);
                peer.cqe(
                    pc.recv_cqn,
                    Cqe {
                        wr_id: r.wr_id,
                        byte_len: len as u32,
                        imm_data: w.imm_data,
                        qp_num: pq,
                        src_qp: pc.remote_qpn,
                        opcode: if is_write {
                            wc_op::RECV_RDMA_WITH_IMM
                        } else {
                            wc_op::RECV
                        },
                        flags: if imm { cqe_flag::WITH_IMM } else { 0 },
                        ..Default::default()
                    },
                );
            }
            let op = if is_write {
                wc_op::RDMA_WRITE
            } else {
                wc_op::SEND
            };
            retire(me, peer, &mut qc, pq, rs, n, w.length, op);
        }
    }
}

pub(super) struct LoopNic {
    net: Rc<RefCell<Net>>,
    k: usize,
}

impl Device for LoopNic {
    fn describe(&self) -> String {
        format!("loopback NIC {}", self.k)
    }
    fn bar_len(&self, bar: Bar) -> u64 {
        self.net.borrow().nics[self.k].bar_len(bar)
    }
    fn read32(&mut self, bar: Bar, off: u64) -> Result<u32> {
        self.net.borrow_mut().nics[self.k].read32(bar, off)
    }
    fn write32(&mut self, bar: Bar, off: u64, val: u32) -> Result<()> {
        let mut net = self.net.borrow_mut();
        net.nics[self.k].write32(bar, off, val)?;
        let off = off as u32;
        if bar == Bar::Regs && matches!(off, db::SQ | db::RQ | db::CQ) {
            net.nics[self.k].doorbells.clear();
            net.nics[self.k].apply_doorbell(off, val);
            if off == db::SQ {
                net.run_sq(self.k, db::unpack(val).0 as u32);
            }
        }
        Ok(())
    }
    fn push_wqe(&mut self, off: u64, wqe: &[u8; 64]) -> Result<()> {
        self.net.borrow_mut().nics[self.k].push_wqe(off, wqe)
    }
    fn dma_alloc(&mut self, len: usize) -> Result<DmaRegion> {
        // disjoint IOVAs per NIC
        let mut net = self.net.borrow_mut();
        let f = &mut net.nics[self.k];
        let mut b = f.dma_alloc(len)?;
        let (_, v) = f.bufs.remove(&b.id).unwrap();
        b.iova += (self.k as u64) << 40;
        f.bufs.insert(b.id, (b.iova, v));
        Ok(b)
    }
    fn dma_free(&mut self, buf: DmaRegion) -> Result<()> {
        self.net.borrow_mut().nics[self.k].dma_free(buf)
    }
    fn dma_read(&mut self, buf: &DmaRegion, off: usize, out: &mut [u8]) -> Result<()> {
        self.net.borrow_mut().nics[self.k].dma_read(buf, off, out)
    }
    fn dma_write(&mut self, buf: &DmaRegion, off: usize, data: &[u8]) -> Result<()> {
        self.net.borrow_mut().nics[self.k].dma_write(buf, off, data)
    }
    fn relax(&mut self) {
        self.net.borrow_mut().nics[self.k].relax()
    }
    fn now_ns(&mut self) -> u64 {
        self.net.borrow_mut().nics[self.k].now_ns()
    }
    fn wait_irq(&mut self, _v: u32, _t: u64) -> Result<bool> {
        Ok(false)
    }
}

pub(super) fn loop_pair() -> (Context<LoopNic>, Context<LoopNic>) {
    let net = Rc::new(RefCell::new(Net::default()));
    let a = Context::open(
        LoopNic {
            net: net.clone(),
            k: 0,
        },
        PortAddr::sim(1).unwrap(),
    )
    .unwrap();
    let b = Context::open(LoopNic { net, k: 1 }, PortAddr::sim(2).unwrap()).unwrap();
    (a, b)
}
