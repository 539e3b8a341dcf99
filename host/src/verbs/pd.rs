//! Protection domains and memory regions.
//!
//! Ownership: a [`QueuePair`] borrows its PD (it cannot be dropped while the QP lives); a
//! [`MemoryRegion`] keeps its PD's number alive (dropping the `ProtectionDomain` handle while
//! MRs live frees the number with the last of them; [`ProtectionDomain::dealloc`] reports
//! them as [`Error::InUse`]) and shares ownership of its buffer, which stays mapped until the
//! MR is deregistered. An MR slot whose 8-bit key generation is used up is retired, so no
//! key it ever had becomes valid again.

use super::*;

/// A protection domain: MRs and QPs of one PD only work together.
pub struct ProtectionDomain<'c, D: Device> {
    pub(super) ctx: &'c Context<D>,
    pub(super) pd: u32,
}

impl<'c, D: Device> ProtectionDomain<'c, D> {
    /// The PD number the device sees.
    pub fn pd_num(&self) -> u32 {
        self.pd
    }

    /// Register a whole DMA buffer.
    pub fn reg_mr(&self, buf: &DmaBuf, access: AccessFlags) -> Result<MemoryRegion<'c, D>> {
        self.reg_mr_range(buf, 0, buf.len(), access)
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
        if !buf.belongs_to(&self.ctx.reaper) {
            return Err(Error::ForeignObject("the DMA buffer"));
        }
        if buf.kind() != BufKind::User {
            return Err(Error::NotRegistrable);
        }
        buf.region().check(off, len)?;
        if len == 0 {
            return Err(Error::EmptyRegion);
        }
        AccessFlags::from_bits(access.bits())?;
        if (access.contains(AccessFlags::REMOTE_WRITE)
            || access.contains(AccessFlags::REMOTE_ATOMIC))
            && !access.contains(AccessFlags::LOCAL_WRITE)
        {
            return Err(Error::RemoteAccessNeedsLocalWrite);
        }
        let iova = buf
            .iova()
            .checked_add(off as u64)
            .filter(|i| i.checked_add(len as u64).is_some())
            .ok_or(Error::AddressOverflow {
                what: "memory region",
                addr: buf.iova(),
                len: off as u64 + len as u64,
            })?;
        let (index, key) = {
            let mut r = self.ctx.res()?;
            let Some(i) = r.mrs.iter().position(|m| !m.used && !m.retired) else {
                return Err(Error::OutOfResources {
                    what: "memory-region table entries",
                    limit: self.ctx.params.num_mrs,
                });
            };
            let slot = &mut r.mrs[i];
            // generations 1..=255: 0 is never used, so key 0 (a zeroed WQE) is never valid,
            // and a slot is retired after 255 instead of wrapping (release)
            slot.generation += 1;
            slot.used = true;
            slot.access = access;
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
            free_mr_slot(&mut r, index);
            r.pd_unuse(self.pd);
            return Err(e);
        }
        Ok(MemoryRegion {
            ctx: self.ctx,
            index,
            key,
            pd: self.pd,
            buf: Some(buf.share()),
            off,
            len,
            iova,
            access,
        })
    }

    /// Create an RC queue pair in this PD, in state RESET. The QP borrows the PD and both
    /// CQs: none of them can be dropped or destroyed while it lives.
    ///
    /// Ring memory (BAR2) holds two classes of rings: every QP number has standard rings of
    /// `sq_depth` / `rq_depth` WQEs, and the last `deep_qps` QP numbers have deep rings of
    /// `deep_depth` (see `BuildParams`). The QP gets the lowest free QP number whose rings
    /// hold `caps`: a standard one while they fit, else a deep one
    /// ([`Error::OutOfResources`] when none of those is free).
    ///
    /// ```
    /// # use rnic::verbs::*;
    /// # fn f<D: rnic::Device>(ctx: &Context<D>) -> rnic::Result<()> {
    /// let pd = ctx.alloc_pd()?;
    /// let cq = ctx.create_cq(8)?;
    /// let qp = pd.create_qp(&cq, &cq, QpCaps::default())?;
    /// drop(qp);
    /// drop(cq);
    /// # Ok(()) }
    /// ```
    /// A CQ cannot be dropped (or destroyed) while a QP uses it:
    /// ```compile_fail,E0505
    /// # use rnic::verbs::*;
    /// # fn f<D: rnic::Device>(ctx: &Context<D>) -> rnic::Result<()> {
    /// let pd = ctx.alloc_pd()?;
    /// let cq = ctx.create_cq(8)?;
    /// let qp = pd.create_qp(&cq, &cq, QpCaps::default())?;
    /// drop(cq);
    /// drop(qp);
    /// # Ok(()) }
    /// ```
    /// nor the PD:
    /// ```compile_fail,E0505
    /// # use rnic::verbs::*;
    /// # fn f<D: rnic::Device>(ctx: &Context<D>) -> rnic::Result<()> {
    /// let pd = ctx.alloc_pd()?;
    /// let cq = ctx.create_cq(8)?;
    /// let qp = pd.create_qp(&cq, &cq, QpCaps::default())?;
    /// pd.dealloc()?;
    /// drop(qp);
    /// # Ok(()) }
    /// ```
    pub fn create_qp<'r>(
        &'r self,
        send_cq: &'r CompletionQueue<'c, D>,
        recv_cq: &'r CompletionQueue<'c, D>,
        caps: QpCaps,
    ) -> Result<QueuePair<'r, D>> {
        let p = self.ctx.params;
        let range = |what, value: u32, min, max: u32| {
            Err(Error::OutOfRange {
                what,
                value: value as u64,
                min,
                max: max as u64,
            })
        };
        // ring memory is a pool of two classes: standard rings (sq_depth / rq_depth) and a few
        // QPs with deep rings (deep_depth), the last QP numbers
        let deep = if p.deep_qps > 0 { p.deep_depth } else { 0 };
        let sq_max = p.sq_depth.max(deep);
        let rq_max = p.rq_depth.max(deep);
        if caps.max_send_wr == 0 || caps.max_send_wr > sq_max {
            return range("max_send_wr", caps.max_send_wr, 1, sq_max);
        }
        if caps.max_recv_wr == 0 || caps.max_recv_wr > rq_max {
            return range("max_recv_wr", caps.max_recv_wr, 1, rq_max);
        }
        let fits_std = caps.max_send_wr <= p.sq_depth && caps.max_recv_wr <= p.rq_depth;
        // the engine takes one SGE per WQE
        if caps.max_send_sge > 1 {
            return range("max_send_sge", caps.max_send_sge, 0, 1);
        }
        if caps.max_recv_sge > 1 {
            return range("max_recv_sge", caps.max_recv_sge, 0, 1);
        }
        if caps.max_inline_data as usize > WQE_INLINE_BYTES {
            return range(
                "max_inline_data",
                caps.max_inline_data,
                0,
                WQE_INLINE_BYTES as u32,
            );
        }
        if !std::ptr::eq(send_cq.ctx, self.ctx) || !std::ptr::eq(recv_cq.ctx, self.ctx) {
            return Err(Error::ForeignObject("a completion queue"));
        }
        let qpn = {
            let mut r = self.ctx.res()?;
            r.pd_users(self.pd)?;
            // standard QP numbers first, then the deep ones: the first free QP whose rings
            // hold the capabilities
            let n = r.qps.len().min(p.num_qps as usize);
            let fits = |q: usize| {
                caps.max_send_wr <= p.sq_depth_of(q as u32)
                    && caps.max_recv_wr <= p.rq_depth_of(q as u32)
            };
            let Some(q) = (FIRST_QPN as usize..n).find(|&q| r.qps[q].is_none() && fits(q)) else {
                return Err(Error::OutOfResources {
                    what: if fits_std {
                        "queue pairs"
                    } else {
                        "queue pairs with deep rings (capabilities above the standard SQ/RQ depth)"
                    },
                    limit: if fits_std {
                        p.num_qps.saturating_sub(FIRST_QPN)
                    } else {
                        p.deep_qps
                    },
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

    /// Free the PD. [`Error::InUse`] while memory regions use it (QPs borrow it, so none
    /// can be alive here); the number is then freed with the last of them.
    pub fn dealloc(self) -> Result<()> {
        let mut r = self.ctx.res()?;
        let users = *r.pd_users(self.pd)?;
        if users > 0 {
            return Err(Error::InUse {
                what: format!("protection domain {}", self.pd),
                users,
                by: "memory regions",
            });
        }
        Ok(())
    }
}

impl<D: Device> Drop for ProtectionDomain<'_, D> {
    fn drop(&mut self) {
        // No device state: nothing can fail. Memory regions may outlive the handle; the
        // number stays taken until the last of them is deregistered.
        let Ok(mut r) = self.ctx.res() else {
            self.ctx.note_drop_error(&Error::ContextBusy);
            return;
        };
        if let Some(i) = r.pds.iter().position(|e| e.num == self.pd) {
            r.pds[i].dropped = true;
            if r.pds[i].users == 0 {
                r.pds.swap_remove(i);
            }
        }
    }
}

/// Free an MR slot; one whose last key generation (255) was used is retired for good.
pub(super) fn free_mr_slot(r: &mut Resources, index: u32) {
    let slot = &mut r.mrs[index as usize];
    slot.used = false;
    if slot.generation == u8::MAX {
        slot.retired = true;
    }
}

/// A registered memory region: key = table index << 8 | generation (lkey = rkey). It owns a
/// share of its buffer (mapped until the MR is gone) and keeps its PD number alive.
pub struct MemoryRegion<'c, D: Device> {
    pub(super) ctx: &'c Context<D>,
    pub(super) index: u32,
    pub(super) key: u32,
    pub(super) pd: u32,
    /// None once deregistered.
    pub(super) buf: Option<DmaBuf>,
    pub(super) off: usize,
    pub(super) len: usize,
    pub(super) iova: u64,
    pub(super) access: AccessFlags,
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
    pub fn buf(&self) -> &DmaBuf {
        self.buf.as_ref().expect("a live MR holds its buffer")
    }

    pub(super) fn check(&self, off: usize, len: usize) -> Result<()> {
        match off.checked_add(len) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(Error::OutsideRegion {
                off,
                len,
                size: self.len,
            }),
        }
    }

    /// An SGE for `[off, off+len)` of the MR.
    pub fn sge(&self, off: usize, len: usize) -> Result<Sge> {
        self.check(off, len)?;
        if len as u64 > MAX_MSG_BYTES {
            return Err(Error::MessageTooLong {
                len: len as u64,
                max: MAX_MSG_BYTES,
            });
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
        self.ctx.write_buf(self.buf(), self.off + off, data)
    }

    /// Host read from the MR.
    pub fn read(&self, off: usize, out: &mut [u8]) -> Result<()> {
        self.check(off, out.len())?;
        self.ctx.read_buf(self.buf(), self.off + off, out)
    }

    /// Deregister: the entry becomes invalid and the key stale (the next MR in this slot gets
    /// another generation, or the slot retires). On a device error the entry may still be
    /// valid, so the buffer stays mapped for good (never freed behind a valid key).
    pub fn dereg(mut self) -> Result<()> {
        self.release()
    }

    pub(super) fn release(&mut self) -> Result<()> {
        let Some(buf) = self.buf.take() else {
            return Ok(());
        };
        if let Err(e) =
            self.ctx
                .write_ctx(ctxreg::TABLE_MR, self.index, &MrEntry::default().encode())
        {
            buf.leak();
            return Err(e);
        }
        let mut r = self.ctx.res()?;
        free_mr_slot(&mut r, self.index);
        r.pd_unuse(self.pd);
        drop(r);
        // the key is invalid now: the buffer may go (if this was its last owner)
        drop(buf);
        self.ctx.reap()
    }
}

impl<D: Device> Drop for MemoryRegion<'_, D> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            self.ctx.note_drop_error(&e);
        }
    }
}
