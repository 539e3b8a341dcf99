//! Protection domains and memory regions.

use super::*;

// ------------------------------------------------------------------------------------------
// protection domain and memory regions

/// A protection domain: MRs and QPs of one PD only work together.
pub struct ProtectionDomain<'c, D: Device> {
    pub(super) ctx: &'c Context<D>,
    pub(super) pd: u32,
    pub(super) live: bool,
}

impl<'c, D: Device> ProtectionDomain<'c, D> {
    /// The PD number the device sees.
    pub fn pd_num(&self) -> u32 {
        self.pd
    }

    /// Register a whole DMA buffer.
    pub fn reg_mr(&self, buf: &DmaBuf, access: AccessFlags) -> Result<MemoryRegion<'c, D>> {
        self.reg_mr_range(buf, 0, buf.len, access)
    }

    /// Register `[off, off+len)` of a DMA buffer. The MR's address (what the peer uses in
    /// RDMA WRITEs) is the IOVA of its first byte. Remote write needs local write (IBTA).
    pub fn reg_mr_range(
        &self,
        buf: &DmaBuf,
        off: usize,
        len: usize,
        access: AccessFlags,
    ) -> Result<MemoryRegion<'c, D>> {
        buf.check(off, len)?;
        if len == 0 {
            return Err(Error::InvalidArgument("memory region of 0 bytes".into()));
        }
        AccessFlags::from_bits(access.bits())?;
        if (access.contains(AccessFlags::REMOTE_WRITE)
            || access.contains(AccessFlags::REMOTE_ATOMIC))
            && !access.contains(AccessFlags::LOCAL_WRITE)
        {
            return Err(Error::InvalidArgument(
                "remote write/atomic access needs LOCAL_WRITE too".into(),
            ));
        }
        let iova = buf
            .iova
            .checked_add(off as u64)
            .filter(|i| i.checked_add(len as u64).is_some())
            .ok_or_else(|| {
                Error::InvalidArgument(format!("IOVA {:#x} + {off} + {len} overflows", buf.iova))
            })?;
        let (index, key) = {
            let mut r = self.ctx.res()?;
            let Some(i) = r.mrs.iter().position(|m| !m.used) else {
                return Err(Error::OutOfResources {
                    what: "memory-region table entries",
                    limit: self.ctx.params.num_mrs,
                });
            };
            let slot = &mut r.mrs[i];
            // generation 0 is never used, so key 0 (a zeroed WQE) is never valid
            slot.generation = match slot.generation.wrapping_add(1) {
                0 => 1,
                g => g,
            };
            slot.used = true;
            let key = make_key(i as u32, slot.generation);
            *r.pd_users(self.pd)? += 1;
            (i as u32, key)
        };
        let rec = MrEntry {
            key,
            pd: self.pd,
            iova,
            length: len as u64,
            access: access.bits(),
            flags: MR_FLAG_VALID,
        };
        if let Err(e) = self.ctx.write_ctx(ctxreg::TABLE_MR, index, &rec.encode()) {
            let mut r = self.ctx.res()?;
            r.mrs[index as usize].used = false;
            if let Ok(u) = r.pd_users(self.pd) {
                *u -= 1;
            }
            return Err(e);
        }
        Ok(MemoryRegion {
            ctx: self.ctx,
            index,
            key,
            pd: self.pd,
            buf: *buf,
            off,
            len,
            iova,
            access,
            live: true,
        })
    }

    /// Create an RC queue pair in this PD, in state RESET.
    pub fn create_qp(
        &self,
        send_cq: &CompletionQueue<'c, D>,
        recv_cq: &CompletionQueue<'c, D>,
        caps: QpCaps,
    ) -> Result<QueuePair<'c, D>> {
        let p = self.ctx.params;
        let bad = |what: String| Err(Error::InvalidArgument(what));
        if caps.max_send_wr == 0 || caps.max_send_wr > p.sq_depth {
            return bad(format!(
                "max_send_wr {}: must be 1..={} (SQ depth)",
                caps.max_send_wr, p.sq_depth
            ));
        }
        if caps.max_recv_wr == 0 || caps.max_recv_wr > p.rq_depth {
            return bad(format!(
                "max_recv_wr {}: must be 1..={} (RQ depth)",
                caps.max_recv_wr, p.rq_depth
            ));
        }
        if caps.max_send_sge > 1 || caps.max_recv_sge > 1 {
            return bad(format!(
                "{} send / {} receive SGEs: the engine takes one per WQE",
                caps.max_send_sge, caps.max_recv_sge
            ));
        }
        if caps.max_inline_data as usize > WQE_INLINE_BYTES {
            return bad(format!(
                "max_inline_data {}: at most {WQE_INLINE_BYTES}",
                caps.max_inline_data
            ));
        }
        if !std::ptr::eq(send_cq.ctx, self.ctx) || !std::ptr::eq(recv_cq.ctx, self.ctx) {
            return bad("the CQs belong to another context".into());
        }
        let qpn = {
            let mut r = self.ctx.res()?;
            r.pd_users(self.pd)?;
            let Some(q) = (FIRST_QPN as usize..r.qps.len()).find(|&q| r.qps[q].is_none()) else {
                return Err(Error::OutOfResources {
                    what: "queue pairs",
                    limit: p.num_qps.saturating_sub(FIRST_QPN),
                });
            };
            r.qps[q] = Some(QpSw {
                pd: self.pd,
                send_cqn: send_cq.cqn,
                recv_cqn: recv_cq.cqn,
                caps,
                state: QpState::Reset,
                local_psn: default_psn(q as u32, &self.ctx.port),
                remote: None,
                path_mtu: None,
                access: AccessFlags::empty(),
                sq_pi: 0,
                rq_pi: 0,
                sq: VecDeque::new(),
                rq: VecDeque::new(),
            });
            *r.pd_users(self.pd)? += 1;
            for cqn in [send_cq.cqn, recv_cq.cqn] {
                if let Some(Some(u)) = r.cqs.get_mut(cqn as usize) {
                    *u += 1;
                }
            }
            q as u32
        };
        let qp = QueuePair {
            ctx: self.ctx,
            qpn,
            live: true,
        };
        // the device record may hold an old QP: start from a clean RESET
        qp.write_reset_records()?;
        Ok(qp)
    }

    /// Free the PD; an error if MRs or QPs still use it.
    pub fn dealloc(mut self) -> Result<()> {
        self.release()
    }

    pub(super) fn release(&mut self) -> Result<()> {
        if !self.live {
            return Ok(());
        }
        let mut r = self.ctx.res()?;
        let users = *r.pd_users(self.pd)?;
        if users > 0 {
            return Err(Error::InUse {
                what: format!("protection domain {}", self.pd),
                users,
                by: "memory regions / queue pairs",
            });
        }
        r.pds.retain(|(n, _)| *n != self.pd);
        self.live = false;
        Ok(())
    }
}

impl<D: Device> Drop for ProtectionDomain<'_, D> {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

/// A registered memory region: key = table index << 8 | generation (lkey = rkey).
pub struct MemoryRegion<'c, D: Device> {
    pub(super) ctx: &'c Context<D>,
    pub(super) index: u32,
    pub(super) key: u32,
    pub(super) pd: u32,
    pub(super) buf: DmaBuf,
    pub(super) off: usize,
    pub(super) len: usize,
    pub(super) iova: u64,
    pub(super) access: AccessFlags,
    pub(super) live: bool,
}

impl<'c, D: Device> MemoryRegion<'c, D> {
    pub fn lkey(&self) -> u32 {
        self.key
    }
    pub fn rkey(&self) -> u32 {
        self.key
    }
    /// IOVA of the first byte (the address a peer writes to).
    pub fn iova(&self) -> u64 {
        self.iova
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn access(&self) -> AccessFlags {
        self.access
    }
    pub fn pd_num(&self) -> u32 {
        self.pd
    }
    /// The buffer the MR lies in.
    pub fn buf(&self) -> DmaBuf {
        self.buf
    }

    pub(super) fn check(&self, off: usize, len: usize) -> Result<()> {
        match off.checked_add(len) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(Error::InvalidArgument(format!(
                "[{off}, {off}+{len}) is outside the memory region of {} bytes",
                self.len
            ))),
        }
    }

    /// An SGE for `[off, off+len)` of the MR.
    pub fn sge(&self, off: usize, len: usize) -> Result<Sge> {
        self.check(off, len)?;
        if len as u64 > MAX_MSG_BYTES {
            return Err(Error::InvalidArgument(format!(
                "SGE of {len} bytes: messages are at most {MAX_MSG_BYTES}"
            )));
        }
        Ok(Sge {
            addr: self.iova + off as u64,
            length: len as u32,
            lkey: self.key,
        })
    }

    /// The remote address of byte `off` (for the peer's RDMA WRITE).
    pub fn remote_addr(&self, off: usize) -> Result<u64> {
        self.check(off, 0)?;
        Ok(self.iova + off as u64)
    }

    /// Host write into the MR.
    pub fn write(&self, off: usize, data: &[u8]) -> Result<()> {
        self.check(off, data.len())?;
        self.ctx.write_buf(&self.buf, self.off + off, data)
    }

    /// Host read from the MR.
    pub fn read(&self, off: usize, out: &mut [u8]) -> Result<()> {
        self.check(off, out.len())?;
        self.ctx.read_buf(&self.buf, self.off + off, out)
    }

    /// Deregister: the entry becomes invalid and the key stale (the next MR in this slot gets
    /// another generation).
    pub fn dereg(mut self) -> Result<()> {
        self.release()
    }

    pub(super) fn release(&mut self) -> Result<()> {
        if !self.live {
            return Ok(());
        }
        self.ctx
            .write_ctx(ctxreg::TABLE_MR, self.index, &MrEntry::default().encode())?;
        let mut r = self.ctx.res()?;
        r.mrs[self.index as usize].used = false;
        if let Ok(u) = r.pd_users(self.pd) {
            *u = u.saturating_sub(1);
        }
        self.live = false;
        Ok(())
    }
}

impl<D: Device> Drop for MemoryRegion<'_, D> {
    fn drop(&mut self) {
        let _ = self.release();
    }
}
