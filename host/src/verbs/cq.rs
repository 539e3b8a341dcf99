//! Completion queues.
//!
//! Polling reads a CQE in two steps: first the owner byte alone (one volatile load on
//! hardware, `Device::dma_read_u8`), then, only if it says the entry is new, an acquire fence
//! and the rest of the entry. The device writes a CQE's other bytes before (or with) its owner
//! byte, so the fence keeps the reads of wr_id, status, ... from being satisfied before the
//! owner read: a torn entry (new owner bit, stale wr_id) is never accepted. Offsets come from
//! the CQE layout's field table.

use super::buf::DmaBuf;
use super::*;
use std::cell::Cell;
use std::sync::atomic::{Ordering, fence};

/// Byte offset of the CQE's one-byte `flags` field (the owner bit), from the layout.
const CQE_FLAGS_MASK: u64 = Cqe::byte_mask(&["flags"]);
const _: () = assert!(CQE_FLAGS_MASK.count_ones() == 1, "CQE flags is one byte");
pub(super) const CQE_FLAGS_OFF: usize = CQE_FLAGS_MASK.trailing_zeros() as usize;

// ------------------------------------------------------------------------------------------
// completion queues

/// A completion queue: a ring of 32-byte CQEs in host memory written by the device. Polled
/// through `&self` (as in the `ibverbs` crate), so the QPs that borrow it do not stop it
/// from being polled; they do stop it from being dropped or destroyed.
pub struct CompletionQueue<'c, D: Device> {
    pub(super) ctx: &'c Context<D>,
    pub(super) cqn: u32,
    /// The ring (None once destroyed).
    pub(super) buf: Option<DmaBuf>,
    pub(super) log2: u8,
    /// Host consumer index (free-running).
    pub(super) ci: Cell<u32>,
    /// Consumer index last told to the device.
    pub(super) db_ci: Cell<u32>,
}

impl<'c, D: Device> CompletionQueue<'c, D> {
    pub fn cqn(&self) -> u32 {
        self.cqn
    }
    pub fn entries(&self) -> u32 {
        1 << self.log2
    }
    /// The CQE ring (for tests and debugging; it cannot be registered as a memory region).
    pub fn ring(&self) -> &DmaBuf {
        self.buf.as_ref().expect("a live CQ holds its ring")
    }
    /// Completions consumed so far (the consumer index).
    pub fn consumed(&self) -> u32 {
        self.ci.get()
    }

    /// The CQE at free-running index `ci` if the device has written it (owner bit of this
    /// pass), read in the order the module docs describe.
    fn read_cqe(&self, ci: u32) -> Result<Option<Cqe>> {
        let off = (ci & (self.entries() - 1)) as usize * CQE_BYTES;
        let ring = self.ring().region();
        let owner = self
            .ctx
            .nic()?
            .device()
            .dma_read_u8(ring, off + CQE_FLAGS_OFF)?;
        if !cqe_is_new(owner, ci, self.log2) {
            return Ok(None);
        }
        // Acquire: the CQE reads below happen after the owner read above (which saw the
        // device's final write of this entry), so they see the entry the owner bit belongs to.
        fence(Ordering::Acquire);
        let mut raw = [0u8; CQE_BYTES];
        self.ctx.nic()?.device().dma_read(ring, off, &mut raw)?;
        raw[CQE_FLAGS_OFF] = owner;
        Ok(Some(Cqe::decode(&raw)))
    }

    /// Poll up to `wc.len()` completions without waiting; returns how many were filled.
    /// Device CQEs first (in ring order), then, once the ring is empty, `WR_FLUSH_ERR`
    /// completions for the WQEs of QPs in the error state that use this CQ.
    pub fn poll(&self, wc: &mut [WorkCompletion]) -> Result<usize> {
        let mut n = 0;
        let entries = self.entries();
        while n < wc.len() {
            let Some(c) = self.read_cqe(self.ci.get())? else {
                break;
            };
            let w = WorkCompletion::from_cqe(&c);
            self.account(&w)?;
            wc[n] = w;
            n += 1;
            self.ci.set(self.ci.get().wrapping_add(1));
            // tell the device early when a large batch crosses half the ring
            if self.ci.get().wrapping_sub(self.db_ci.get()) >= entries.div_ceil(2) {
                self.ring_doorbell()?;
            }
        }
        if n > 0 && self.ci.get() != self.db_ci.get() {
            self.ring_doorbell()?;
        }
        if n < wc.len() {
            n += self.flush(&mut wc[n..])?;
        }
        Ok(n)
    }

    fn ring_doorbell(&self) -> Result<()> {
        self.ctx
            .nic()?
            .doorbell(db::CQ, self.cqn, self.ci.get() as u16)?;
        self.db_ci.set(self.ci.get());
        Ok(())
    }

    /// Free the WQEs a completion covers; an error status puts the QP in ERR.
    pub(super) fn account(&self, w: &WorkCompletion) -> Result<()> {
        let mut r = self.ctx.res()?;
        let Some(Some(q)) = r.qps.get_mut(w.qp_num as usize) else {
            return Ok(()); // not ours (stale QP): nothing to account
        };
        if w.opcode.is_recv() {
            if q.recv_cqn == self.cqn {
                q.rq.pop_front();
            }
        } else if q.send_cqn == self.cqn {
            let upto = if w.is_ok() {
                // in-order RC: everything up to the oldest signaled WQE is done
                q.sq.iter().position(|e| e.signaled || q.caps.sq_sig_all)
            } else {
                q.sq.iter().position(|e| e.wr_id == w.wr_id)
            };
            let k = upto.unwrap_or(0).min(q.sq.len());
            q.sq.drain(..(k + 1).min(q.sq.len()));
        }
        if !w.is_ok() {
            q.state = QpState::Err;
        }
        Ok(())
    }

    /// WR_FLUSH_ERR completions for QPs in ERR that use this CQ.
    pub(super) fn flush(&self, wc: &mut [WorkCompletion]) -> Result<usize> {
        let mut r = self.ctx.res()?;
        let mut n = 0;
        for (qpn, q) in r.qps.iter_mut().enumerate() {
            let Some(q) = q else { continue };
            if q.state != QpState::Err {
                continue;
            }
            let src_qp = q.remote.map_or(0, |e| e.qpn);
            while n < wc.len() && q.send_cqn == self.cqn {
                let Some(e) = q.sq.pop_front() else { break };
                wc[n] = WorkCompletion {
                    wr_id: e.wr_id,
                    status: WcStatus::WrFlushErr,
                    opcode: e.op,
                    byte_len: e.length,
                    imm_data: None,
                    qp_num: qpn as u32,
                    src_qp,
                    vendor_err: 0,
                };
                n += 1;
            }
            while n < wc.len() && q.recv_cqn == self.cqn {
                let Some(wr_id) = q.rq.pop_front() else { break };
                wc[n] = WorkCompletion {
                    wr_id,
                    status: WcStatus::WrFlushErr,
                    opcode: WcOpcode::Recv,
                    byte_len: 0,
                    imm_data: None,
                    qp_num: qpn as u32,
                    src_qp,
                    vendor_err: 0,
                };
                n += 1;
            }
        }
        Ok(n)
    }

    /// Poll until at least `min` completions are in `wc` (at most `wc.len()`), letting device
    /// time pass between polls; [`Error::Timeout`] after `timeout_ns` of device time.
    pub fn poll_wait(
        &self,
        wc: &mut [WorkCompletion],
        min: usize,
        timeout_ns: u64,
    ) -> Result<usize> {
        if min > wc.len() {
            return Err(Error::WaitTooMany {
                min,
                room: wc.len(),
            });
        }
        let t0 = self.ctx.now_ns()?;
        let mut got = 0;
        loop {
            got += self.poll(&mut wc[got..])?;
            if got >= min {
                return Ok(got);
            }
            let now = self.ctx.now_ns()?;
            if now.saturating_sub(t0) > timeout_ns {
                return Err(Error::Timeout {
                    what: "completions",
                    ns: now - t0,
                });
            }
            self.ctx.relax()?;
        }
    }

    /// Wait for exactly `n` completions.
    pub fn wait(&self, n: usize, timeout_ns: u64) -> Result<Vec<WorkCompletion>> {
        let mut wc = vec![WorkCompletion::default(); n];
        let got = self.poll_wait(&mut wc, n, timeout_ns)?;
        wc.truncate(got);
        Ok(wc)
    }

    /// Destroy the CQ: its context is invalidated, then its ring unmapped. QPs borrow the
    /// CQ, so none can use it here (one leaked with `mem::forget` still counts: then
    /// [`Error::InUse`], and nothing is freed).
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    pub(super) fn release(&mut self) -> Result<()> {
        if self.buf.is_none() {
            return Ok(());
        }
        {
            let r = self.ctx.res()?;
            if let Some(Some(users)) = r.cqs.get(self.cqn as usize)
                && *users > 0
            {
                return Err(Error::InUse {
                    what: format!("completion queue {}", self.cqn),
                    users: *users,
                    by: "queue pairs",
                });
            }
        }
        self.ctx
            .write_ctx(ctxreg::TABLE_CQ, self.cqn, &CqContext::default().encode())?;
        // the device no longer knows the ring: unmap it
        drop(self.buf.take());
        self.ctx.res()?.cqs[self.cqn as usize] = None;
        self.ctx.reap()
    }
}

impl<D: Device> Drop for CompletionQueue<'_, D> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            // The device may still write this ring (its context could not be invalidated, or
            // a leaked QP uses it): keep it mapped for good rather than free it behind the
            // device, and count the error.
            if let Some(buf) = self.buf.take() {
                buf.leak();
            }
            self.ctx.note_drop_error(&e);
        }
    }
}
