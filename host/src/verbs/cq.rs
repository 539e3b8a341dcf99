//! Completion queues.

use super::*;

// ------------------------------------------------------------------------------------------
// completion queues

/// A completion queue: a ring of 32-byte CQEs in host memory written by the device.
pub struct CompletionQueue<'c, D: Device> {
    pub(super) ctx: &'c Context<D>,
    pub(super) cqn: u32,
    pub(super) buf: DmaBuf,
    pub(super) log2: u8,
    /// Host consumer index (free-running).
    pub(super) ci: u32,
    /// Consumer index last told to the device.
    pub(super) db_ci: u32,
    pub(super) live: bool,
}

impl<'c, D: Device> CompletionQueue<'c, D> {
    pub fn cqn(&self) -> u32 {
        self.cqn
    }
    pub fn entries(&self) -> u32 {
        1 << self.log2
    }
    /// The CQE ring (for tests and debugging).
    pub fn ring(&self) -> DmaBuf {
        self.buf
    }
    /// Completions consumed so far (the consumer index).
    pub fn consumed(&self) -> u32 {
        self.ci
    }

    /// Poll up to `wc.len()` completions without waiting; returns how many were filled.
    /// Device CQEs first (in ring order), then, once the ring is empty, `WR_FLUSH_ERR`
    /// completions for the WQEs of QPs in the error state that use this CQ.
    pub fn poll(&mut self, wc: &mut [WorkCompletion]) -> Result<usize> {
        let mut n = 0;
        let entries = self.entries();
        while n < wc.len() {
            let slot = (self.ci & (entries - 1)) as usize;
            let mut raw = [0u8; CQE_BYTES];
            self.ctx.read_buf(&self.buf, slot * CQE_BYTES, &mut raw)?;
            if !cqe_is_new(raw[27], self.ci, self.log2) {
                break;
            }
            let c = Cqe::decode(&raw);
            let w = WorkCompletion::from_cqe(&c);
            self.account(&w)?;
            wc[n] = w;
            n += 1;
            self.ci = self.ci.wrapping_add(1);
            // tell the device early when a large batch crosses half the ring
            if self.ci.wrapping_sub(self.db_ci) >= entries.div_ceil(2) {
                self.ring_doorbell()?;
            }
        }
        if n > 0 && self.ci != self.db_ci {
            self.ring_doorbell()?;
        }
        if n < wc.len() {
            n += self.flush(&mut wc[n..])?;
        }
        Ok(n)
    }

    pub(super) fn ring_doorbell(&mut self) -> Result<()> {
        self.ctx.nic()?.doorbell(db::CQ, self.cqn, self.ci as u16)?;
        self.db_ci = self.ci;
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
        &mut self,
        wc: &mut [WorkCompletion],
        min: usize,
        timeout_ns: u64,
    ) -> Result<usize> {
        if min > wc.len() {
            return Err(Error::InvalidArgument(format!(
                "waiting for {min} completions with room for {}",
                wc.len()
            )));
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
    pub fn wait(&mut self, n: usize, timeout_ns: u64) -> Result<Vec<WorkCompletion>> {
        let mut wc = vec![WorkCompletion::default(); n];
        let got = self.poll_wait(&mut wc, n, timeout_ns)?;
        wc.truncate(got);
        Ok(wc)
    }

    /// Destroy the CQ; an error if QPs still use it.
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    pub(super) fn release(&mut self) -> Result<()> {
        if !self.live {
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
        self.ctx.free_buf(self.buf)?;
        self.ctx.res()?.cqs[self.cqn as usize] = None;
        self.live = false;
        Ok(())
    }
}

impl<D: Device> Drop for CompletionQueue<'_, D> {
    fn drop(&mut self) {
        let _ = self.release();
    }
}
