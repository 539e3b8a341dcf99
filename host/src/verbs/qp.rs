//! RC queue pairs: state transitions, posting work requests.

use super::*;

// What modify_qp writes of the QP context, from the layout's field table: only the fields the
// driver owns at each transition, never those the engine advances (sq_psn, sq_ci, una_psn,
// sq_ack_ci, sq_pi once traffic runs), which a read-modify-write would roll back.
const QPC_ACCESS: u64 = QpContext::byte_mask(&["access"]);
const QPC_STATE: u64 = QpContext::byte_mask(&["state"]);
const QPC_RTR: u64 = QpContext::byte_mask(&[
    "state",
    "path_mtu",
    "remote_qpn",
    "dest_mac",
    "udp_sport",
    "dest_ip",
    "sq_pi",
    "min_rnr_timer",
    "traffic_class",
    "max_dest_rd_atomic",
]);
pub(super) const QPC_RTS_ATTRS: u64 =
    QpContext::byte_mask(&["timeout", "retry_cnt", "rnr_retry", "max_rd_atomic"]);
const QPC_RTS_START: u64 = QPC_RTS_ATTRS
    | QpContext::byte_mask(&["state"])
    | QpContext::byte_mask(&rnic_abi::queue::QPC_REQUESTER_FIELDS);
const RQS_RTR: u64 = RqState::byte_mask(&["rq_psn", "rq_pi"]);

// ------------------------------------------------------------------------------------------
// queue pairs

/// An RC queue pair. It borrows its protection domain and both completion queues for `'r`
/// (see [`ProtectionDomain::create_qp`]), so they outlive it.
pub struct QueuePair<'r, D: Device> {
    pub(super) ctx: &'r Context<D>,
    pub(super) qpn: u32,
    pub(super) live: bool,
}

impl<'r, D: Device> QueuePair<'r, D> {
    pub fn qpn(&self) -> u32 {
        self.qpn
    }

    pub(super) fn with<R>(&self, f: impl FnOnce(&mut QpSw) -> Result<R>) -> Result<R> {
        let mut r = self.ctx.res()?;
        f(r.qp(self.qpn)?)
    }

    /// The driver's view of the state (the device moves a QP to ERR on its own; the driver
    /// learns it from the error completion).
    pub fn state(&self) -> Result<QpState> {
        self.with(|q| Ok(q.state))
    }

    /// Read the device's QP context and responder state.
    pub fn query_device(&self) -> Result<(QpContext, RqState)> {
        let mut nic = self.ctx.nic()?;
        let qc = QpContext::decode(&nic.read_context(ctxreg::TABLE_QP, self.qpn)?);
        let rs = RqState::decode(&nic.read_context(ctxreg::TABLE_RQS, self.qpn)?);
        Ok((qc, rs))
    }

    /// The first PSN this QP sends (after RTS).
    pub fn local_psn(&self) -> Result<u32> {
        self.with(|q| Ok(q.local_psn))
    }

    /// Choose the first PSN this QP sends: only before RTS.
    pub fn set_local_psn(&self, psn: u32) -> Result<()> {
        if psn > roce::PSN_MASK {
            return Err(Error::Wider24 {
                what: "PSN",
                value: psn,
            });
        }
        let qpn = self.qpn;
        self.with(|q| match q.state {
            QpState::Reset | QpState::Init | QpState::Rtr => {
                q.local_psn = psn;
                Ok(())
            }
            s => Err(Error::QpState {
                qpn,
                state: s.name(),
                what: "the first PSN is fixed once the QP is in RTS".into(),
            }),
        })
    }

    /// What the peer needs to connect to this QP.
    pub fn endpoint(&self) -> Result<Endpoint> {
        let port = self.ctx.port;
        Ok(Endpoint {
            qpn: self.qpn,
            psn: self.local_psn()?,
            ipv4: port.ipv4,
            mac: port.mac,
        })
    }

    /// The peer given at RTR.
    pub fn remote(&self) -> Result<Option<Endpoint>> {
        self.with(|q| Ok(q.remote))
    }

    /// Send / receive WQEs posted and not yet completed.
    pub fn outstanding(&self) -> Result<(usize, usize)> {
        self.with(|q| Ok((q.sq.len(), q.rq.len())))
    }

    pub(super) fn transition(&self, to: QpState) -> Result<QpState> {
        let qpn = self.qpn;
        self.with(|q| {
            if q.state.can_go_to(to) {
                Ok(q.state)
            } else {
                Err(Error::QpState {
                    qpn,
                    state: q.state.name(),
                    what: format!("cannot move to {to}"),
                })
            }
        })
    }

    /// Write only the driver-owned fields of the QP context (`mask` from the layout).
    fn write_qpc(&self, qc: &QpContext, mask: u64) -> Result<()> {
        self.ctx
            .write_ctx_masked(ctxreg::TABLE_QP, self.qpn, &qc.encode(), mask)
    }

    /// Write both records (responder state first: the QP context's state gates the data path).
    pub(super) fn write_records(&self, qc: &QpContext, rs: &RqState) -> Result<()> {
        let mut nic = self.ctx.nic()?;
        nic.write_context(ctxreg::TABLE_RQS, self.qpn, &rs.encode())?;
        nic.write_context(ctxreg::TABLE_QP, self.qpn, &qc.encode())
    }

    pub(super) fn base_context(&self, q: &QpSw, state: QpState) -> QpContext {
        let port = self.ctx.port;
        QpContext {
            state: state.code(),
            qp_type: QP_TYPE_RC,
            access: q.access.remote().bits() as u8,
            src_ip: u32::from(port.ipv4),
            src_mac: port.mac,
            pd: q.pd,
            send_cqn: q.send_cqn as u16,
            recv_cqn: q.recv_cqn as u16,
            sq_pi: q.sq_pi,
            sq_ci: q.sq_pi,
            sq_ack_ci: q.sq_pi,
            ..Default::default()
        }
    }

    pub(super) fn write_reset_records(&self) -> Result<()> {
        let qc = self.with(|q| {
            q.sq_pi = 0;
            q.rq_pi = 0;
            q.sq.clear();
            q.rq.clear();
            q.remote = None;
            q.path_mtu = None;
            Ok(self.base_context(q, QpState::Reset))
        })?;
        self.write_records(&qc, &RqState::default())
    }

    /// RESET->INIT (or INIT->INIT): the QP's remote access rights; receive WQEs may be posted
    /// from INIT on.
    pub fn modify_to_init(&self, attr: &InitAttr) -> Result<()> {
        AccessFlags::from_bits(attr.access.bits())?;
        let from = self.transition(QpState::Init)?;
        let qc = self.with(|q| {
            q.access = attr.access;
            Ok(self.base_context(q, QpState::Init))
        })?;
        if from == QpState::Reset {
            self.write_records(&qc, &RqState::default())?;
        } else {
            self.write_qpc(&qc, QPC_ACCESS)?;
        }
        self.with(|q| {
            q.state = QpState::Init;
            Ok(())
        })
    }

    /// INIT->RTR: the peer (its QPN, first PSN and addresses) and the path MTU.
    pub fn modify_to_rtr(&self, attr: &RtrAttr) -> Result<()> {
        attr.remote.check()?;
        if attr.min_rnr_timer > 31 {
            return Err(Error::OutOfRange {
                what: "min_rnr_timer",
                value: attr.min_rnr_timer as u64,
                min: 0,
                max: 31,
            });
        }
        let max_mtu = self.ctx.params.max_mtu;
        if attr.path_mtu.bytes() > max_mtu {
            return Err(Error::MtuAboveDevice {
                mtu: attr.path_mtu.bytes(),
                max: max_mtu,
            });
        }
        self.transition(QpState::Rtr)?;
        let (rq_pi, sq_pi) = self.with(|q| Ok((q.rq_pi, q.sq_pi)))?;
        let (mut qc, mut rs) = (QpContext::default(), RqState::default());
        let e = attr.remote;
        qc.state = qp_state::RTR;
        qc.path_mtu = attr.path_mtu.code();
        qc.remote_qpn = e.qpn;
        qc.dest_mac = e.mac;
        qc.dest_ip = u32::from(e.ipv4);
        qc.udp_sport = udp_sport(self.qpn, e.qpn);
        qc.sq_pi = sq_pi;
        qc.min_rnr_timer = attr.min_rnr_timer;
        qc.traffic_class = attr.traffic_class;
        qc.max_dest_rd_atomic = attr.max_dest_rd_atomic;
        rs.rq_psn = e.psn;
        rs.rq_pi = rq_pi; // the driver's index: safe against a doorbell still in flight
        // responder state first: the QP context's state gates the data path
        self.ctx
            .write_ctx_masked(ctxreg::TABLE_RQS, self.qpn, &rs.encode(), RQS_RTR)?;
        self.write_qpc(&qc, QPC_RTR)?;
        self.with(|q| {
            q.remote = Some(e);
            q.path_mtu = Some(attr.path_mtu);
            q.state = QpState::Rtr;
            Ok(())
        })
    }

    /// RTR->RTS (or RTS->RTS): start sending at the local PSN with the timeout and retry counts.
    pub fn modify_to_rts(&self, attr: &RtsAttr) -> Result<()> {
        for (what, value, max) in [
            ("timeout", attr.timeout, 31),
            ("retry_cnt", attr.retry_cnt, 7),
            ("rnr_retry", attr.rnr_retry, 7),
        ] {
            if value > max {
                return Err(Error::OutOfRange {
                    what,
                    value: value as u64,
                    min: 0,
                    max: max as u64,
                });
            }
        }
        let from = self.transition(QpState::Rts)?;
        let (psn, sq_pi) = self.with(|q| Ok((q.local_psn, q.sq_pi)))?;
        let mut qc = QpContext {
            state: qp_state::RTS,
            timeout: attr.timeout,
            retry_cnt: attr.retry_cnt,
            rnr_retry: attr.rnr_retry,
            max_rd_atomic: attr.max_rd_atomic,
            ..Default::default()
        };
        // RTR->RTS also starts the requester; RTS->RTS touches only the stored attributes:
        // not the state (the engine may have moved the QP to ERR) nor the PSNs and indices
        // the engine advances while traffic runs
        let mask = if from == QpState::Rtr {
            qc.sq_psn = psn;
            qc.una_psn = psn;
            qc.sq_pi = sq_pi;
            qc.sq_ci = sq_pi;
            qc.sq_ack_ci = sq_pi;
            qc.retry_left = attr.retry_cnt;
            qc.rnr_left = attr.rnr_retry;
            qc.ack_psn_lo = (psn.wrapping_sub(1) & 0xFFFF) as u16;
            QPC_RTS_START
        } else {
            QPC_RTS_ATTRS
        };
        self.write_qpc(&qc, mask)?;
        self.with(|q| {
            q.state = QpState::Rts;
            Ok(())
        })
    }

    /// RESET->INIT->RTR->RTS in one call.
    pub fn connect(&self, remote: &Endpoint, attr: &ConnectAttr) -> Result<()> {
        self.modify_to_init(&InitAttr {
            access: attr.access,
        })?;
        self.modify_to_rtr(&RtrAttr {
            remote: *remote,
            path_mtu: attr.path_mtu,
            max_dest_rd_atomic: attr.max_dest_rd_atomic,
            min_rnr_timer: attr.min_rnr_timer,
            traffic_class: attr.traffic_class,
        })?;
        self.modify_to_rts(&attr.rts)
    }

    /// Any state -> ERR: the device stops the QP; outstanding WQEs come back flushed.
    pub fn modify_to_err(&self) -> Result<()> {
        self.transition(QpState::Err)?;
        let qc = QpContext {
            state: qp_state::ERR,
            ..Default::default()
        };
        self.write_qpc(&qc, QPC_STATE)?;
        self.with(|q| {
            q.state = QpState::Err;
            Ok(())
        })
    }

    /// Any state -> RESET: outstanding WQEs are discarded (no completions), indices restart.
    pub fn modify_to_reset(&self) -> Result<()> {
        self.transition(QpState::Reset)?;
        self.write_reset_records()?;
        self.with(|q| {
            q.state = QpState::Reset;
            q.access = AccessFlags::empty();
            Ok(())
        })
    }

    pub(super) fn check_sge(sge: &Sge) -> Result<()> {
        if sge.addr.checked_add(sge.length as u64).is_none() {
            return Err(Error::AddressOverflow {
                what: "SGE",
                addr: sge.addr,
                len: sge.length as u64,
            });
        }
        if sge.length as u64 > MAX_MSG_BYTES {
            return Err(Error::MessageTooLong {
                len: sge.length as u64,
                max: MAX_MSG_BYTES,
            });
        }
        Ok(())
    }

    pub(super) fn build_send_wqe(q: &QpSw, wr: &SendWr, check_align: bool) -> Result<Wqe> {
        let mut w = Wqe {
            opcode: wr.op.wqe_opcode(),
            slots: 1,
            wr_id: wr.wr_id,
            ..Default::default()
        };
        if wr.signaled || q.caps.sq_sig_all {
            w.flags |= wqe_flag::SIGNALED;
        }
        if wr.solicited {
            w.flags |= wqe_flag::SOLICITED;
        }
        if matches!(wr.op, SendOp::RdmaRead { .. }) && wr.inline.is_some() {
            return Err(Error::InlineRead { wr_id: wr.wr_id });
        }
        if wr.op.is_atomic() {
            if wr.inline.is_some() {
                return Err(Error::InlineAtomic { wr_id: wr.wr_id });
            }
            let len = wr.sge.map_or(0, |s| s.length);
            if len != ATOMIC_BYTES {
                return Err(Error::AtomicLength {
                    wr_id: wr.wr_id,
                    len: len as u64,
                });
            }
            let remote_addr = wr.op.remote_addr().unwrap_or(0);
            if check_align && !remote_addr.is_multiple_of(ATOMIC_BYTES as u64) {
                return Err(Error::AtomicMisaligned {
                    wr_id: wr.wr_id,
                    remote_addr,
                });
            }
        }
        match (wr.sge, wr.inline) {
            (Some(_), Some(_)) => {
                return Err(Error::SgeAndInline { wr_id: wr.wr_id });
            }
            (None, Some(d)) => {
                let max = (q.caps.max_inline_data as usize).min(WQE_INLINE_BYTES);
                if d.len() > max {
                    return Err(Error::InlineTooLong {
                        wr_id: wr.wr_id,
                        len: d.len(),
                        max,
                    });
                }
                w.flags |= wqe_flag::INLINE;
                w.inline_len = d.len() as u8;
                w.length = d.len() as u32;
                w.inline_data[..d.len()].copy_from_slice(d);
            }
            (Some(s), None) => {
                Self::check_sge(&s)?;
                if q.caps.max_send_sge == 0 && s.length > 0 {
                    return Err(Error::NoSgeAllowed {
                        wr_id: wr.wr_id,
                        queue: "send",
                    });
                }
                w.length = s.length;
                w.local_addr = s.addr;
                w.lkey = s.lkey;
            }
            (None, None) => {}
        }
        match wr.op {
            SendOp::Send => {}
            SendOp::SendWithImm(imm) => w.imm_data = imm,
            SendOp::RdmaWrite { remote_addr, rkey } => {
                w.remote_addr = remote_addr;
                w.rkey = rkey;
            }
            SendOp::RdmaWriteWithImm {
                remote_addr,
                rkey,
                imm,
            } => {
                w.remote_addr = remote_addr;
                w.rkey = rkey;
                w.imm_data = imm;
            }
            SendOp::RdmaRead { remote_addr, rkey } => {
                w.remote_addr = remote_addr;
                w.rkey = rkey;
            }
            // the WQE's inline bytes carry the operands (never the INLINE flag)
            SendOp::CompareSwap {
                remote_addr,
                rkey,
                compare,
                swap,
            } => {
                w.remote_addr = remote_addr;
                w.rkey = rkey;
                w.inline_data[..8].copy_from_slice(&compare.to_le_bytes());
                w.inline_data[8..].copy_from_slice(&swap.to_le_bytes());
            }
            SendOp::FetchAdd {
                remote_addr,
                rkey,
                add,
            } => {
                w.remote_addr = remote_addr;
                w.rkey = rkey;
                w.inline_data[8..].copy_from_slice(&add.to_le_bytes());
            }
        }
        if let Some(remote_addr) = wr.op.remote_addr()
            && remote_addr.checked_add(w.length as u64).is_none()
        {
            return Err(Error::AddressOverflow {
                what: "remote address",
                addr: remote_addr,
                len: w.length as u64,
            });
        }
        Ok(w)
    }

    /// A READ or an atomic writes into its local MR: one of this context's live MRs without
    /// LOCAL_WRITE is an error here (an lkey the driver does not know is left to the engine's
    /// MR check, which completes the WQE with LOC_PROT_ERR, as for any other operation).
    fn check_read_targets(&self, wrs: &[SendWr], wqes: &[Wqe]) -> Result<()> {
        let r = self.ctx.res()?;
        for (wr, w) in wrs.iter().zip(wqes) {
            let atomic = wr.op.is_atomic();
            if !(w.opcode == wqe_op::RDMA_READ || atomic) || w.length == 0 {
                continue;
            }
            let (idx, generation) = rnic_abi::queue::key_parts(w.lkey);
            if let Some(m) = r.mrs.get(idx as usize)
                && m.used
                && m.generation == generation
                && !m.access.contains(AccessFlags::LOCAL_WRITE)
            {
                let (wr_id, lkey) = (wr.wr_id, w.lkey);
                return Err(if atomic {
                    Error::AtomicNeedsLocalWrite { wr_id, lkey }
                } else {
                    Error::ReadNeedsLocalWrite { wr_id, lkey }
                });
            }
        }
        Ok(())
    }

    /// Post send work requests: all or none (every request is checked first), one doorbell.
    /// The QP must be in RTS and have room for all of them.
    pub fn post_send(&self, wrs: &[SendWr]) -> Result<()> {
        self.post_send_checked(wrs, true)
    }

    /// [`QueuePair::post_send`] without the 8-byte alignment check of atomic remote addresses
    /// ([`Error::AtomicMisaligned`]), every other check kept: for tests of the device's own
    /// check (the responder NAKs a misaligned atomic as an invalid request, so the WQE completes
    /// with REM_INV_REQ_ERR). Not for applications.
    #[doc(hidden)]
    pub fn post_send_unaligned_atomics(&self, wrs: &[SendWr]) -> Result<()> {
        self.post_send_checked(wrs, false)
    }

    fn post_send_checked(&self, wrs: &[SendWr], check_align: bool) -> Result<()> {
        if wrs.is_empty() {
            return Ok(());
        }
        let qpn = self.qpn;
        let (first, wqes) = self.with(|q| {
            if q.state != QpState::Rts {
                return Err(Error::QpState {
                    qpn,
                    state: q.state.name(),
                    what: "send work requests need RTS".into(),
                });
            }
            if q.sq.len() + wrs.len() > q.caps.max_send_wr as usize {
                return Err(Error::QueueFull {
                    qpn,
                    queue: "send",
                    outstanding: q.sq.len(),
                    posting: wrs.len(),
                    depth: q.caps.max_send_wr,
                });
            }
            let wqes = wrs
                .iter()
                .map(|wr| Self::build_send_wqe(q, wr, check_align))
                .collect::<Result<Vec<_>>>()?;
            Ok((q.sq_pi, wqes))
        })?;
        self.check_read_targets(wrs, &wqes)?;
        let mut idx = first;
        {
            let mut nic = self.ctx.nic()?;
            for w in &wqes {
                nic.push_sq_wqe(qpn, idx as u32, w)?;
                idx = idx.wrapping_add(1);
            }
            nic.doorbell(db::SQ, qpn, idx)?;
        }
        self.with(|q| {
            for (wr, w) in wrs.iter().zip(&wqes) {
                q.sq.push_back(SqEntry {
                    wr_id: wr.wr_id,
                    signaled: w.flags & wqe_flag::SIGNALED != 0,
                    op: wr.op.wc_opcode(),
                    length: w.length,
                });
            }
            q.sq_pi = idx;
            Ok(())
        })
    }

    /// Post receive work requests (from INIT on): all or none, one doorbell.
    pub fn post_recv(&self, wrs: &[RecvWr]) -> Result<()> {
        if wrs.is_empty() {
            return Ok(());
        }
        let qpn = self.qpn;
        let (first, wqes) = self.with(|q| {
            if !matches!(q.state, QpState::Init | QpState::Rtr | QpState::Rts) {
                return Err(Error::QpState {
                    qpn,
                    state: q.state.name(),
                    what: "receive work requests need INIT, RTR or RTS".into(),
                });
            }
            if q.rq.len() + wrs.len() > q.caps.max_recv_wr as usize {
                return Err(Error::QueueFull {
                    qpn,
                    queue: "receive",
                    outstanding: q.rq.len(),
                    posting: wrs.len(),
                    depth: q.caps.max_recv_wr,
                });
            }
            let mut wqes = Vec::with_capacity(wrs.len());
            for wr in wrs {
                let mut w = Wqe {
                    opcode: wqe_op::RECV,
                    slots: 1,
                    wr_id: wr.wr_id,
                    ..Default::default()
                };
                if let Some(s) = wr.sge {
                    Self::check_sge(&s)?;
                    if q.caps.max_recv_sge == 0 && s.length > 0 {
                        return Err(Error::NoSgeAllowed {
                            wr_id: wr.wr_id,
                            queue: "recv",
                        });
                    }
                    w.length = s.length;
                    w.local_addr = s.addr;
                    w.lkey = s.lkey;
                }
                wqes.push(w);
            }
            Ok((q.rq_pi, wqes))
        })?;
        let mut idx = first;
        {
            let mut nic = self.ctx.nic()?;
            for w in &wqes {
                nic.push_rq_wqe(qpn, idx as u32, w)?;
                idx = idx.wrapping_add(1);
            }
            nic.doorbell(db::RQ, qpn, idx)?;
        }
        self.with(|q| {
            q.rq.extend(wrs.iter().map(|w| w.wr_id));
            q.rq_pi = idx;
            Ok(())
        })
    }

    /// Destroy the QP: the device records are cleared (state RESET) and the QPN is free.
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    pub(super) fn release(&mut self) -> Result<()> {
        if !self.live {
            return Ok(());
        }
        self.write_records(&QpContext::default(), &RqState::default())?;
        let mut r = self.ctx.res()?;
        if let Some(q) = r.qps[self.qpn as usize].take() {
            r.pd_unuse(q.pd);
            for cqn in [q.send_cqn, q.recv_cqn] {
                if let Some(Some(u)) = r.cqs.get_mut(cqn as usize) {
                    *u = u.saturating_sub(1);
                }
            }
        }
        self.live = false;
        Ok(())
    }
}

impl<D: Device> Drop for QueuePair<'_, D> {
    fn drop(&mut self) {
        // On an error the QP keeps its number and its CQs stay in use (they then refuse to
        // free their rings): counted, not hidden.
        if let Err(e) = self.release() {
            self.ctx.note_drop_error(&e);
        }
    }
}
