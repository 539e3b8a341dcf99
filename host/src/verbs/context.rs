//! The verbs [`Context`] and the software state shared by the objects it hands out.

use super::buf::{BufKind, Reaper};
use super::*;
use std::cell::Cell;
use std::rc::Rc;

// software state shared by the objects

#[derive(Debug, Clone, Copy)]
pub(super) struct SqEntry {
    pub(super) wr_id: u64,
    pub(super) signaled: bool,
    pub(super) op: WcOpcode,
    pub(super) length: u32,
}

#[derive(Debug)]
pub(super) struct QpSw {
    pub(super) pd: u32,
    pub(super) send_cqn: u32,
    pub(super) recv_cqn: u32,
    pub(super) caps: QpCaps,
    pub(super) state: QpState,
    pub(super) local_psn: u32,
    pub(super) remote: Option<Endpoint>,
    pub(super) path_mtu: Option<Mtu>,
    pub(super) access: AccessFlags,
    pub(super) sq_pi: u16,
    pub(super) rq_pi: u16,
    pub(super) sq: VecDeque<SqEntry>,
    pub(super) rq: VecDeque<u64>,
}

#[derive(Debug, Default)]
pub(super) struct MrSlot {
    pub(super) generation: u8,
    pub(super) used: bool,
    /// The access flags of the live registration (post_send checks a READ's target MR).
    pub(super) access: AccessFlags,
    /// Every generation of this slot's key has been handed out: the slot is never used
    /// again, so no key it ever had can become valid again.
    pub(super) retired: bool,
}

/// A live protection domain number.
#[derive(Debug)]
pub(super) struct PdEntry {
    pub(super) num: u32,
    /// MRs and QPs in this PD.
    pub(super) users: u32,
    /// The `ProtectionDomain` handle is gone; the number is freed with its last MR.
    pub(super) dropped: bool,
}

#[derive(Debug, Default)]
pub(super) struct Resources {
    pub(super) next_pd: u32,
    /// Live PDs.
    pub(super) pds: Vec<PdEntry>,
    pub(super) mrs: Vec<MrSlot>,
    /// CQ users (QPs) per CQ number; None = free.
    pub(super) cqs: Vec<Option<u32>>,
    pub(super) qps: Vec<Option<QpSw>>,
}

impl Resources {
    pub(super) fn pd_users(&mut self, pd: u32) -> Result<&mut u32> {
        self.pds
            .iter_mut()
            .find(|e| e.num == pd)
            .map(|e| &mut e.users)
            .ok_or(Error::NoSuchObject {
                what: "protection domain",
                index: pd as u64,
            })
    }
    /// One user of a PD gone; a dropped PD's number is freed with its last user.
    pub(super) fn pd_unuse(&mut self, pd: u32) {
        if let Some(i) = self.pds.iter().position(|e| e.num == pd) {
            let e = &mut self.pds[i];
            e.users = e.users.saturating_sub(1);
            if e.users == 0 && e.dropped {
                self.pds.swap_remove(i);
            }
        }
    }
    pub(super) fn qp(&mut self, qpn: u32) -> Result<&mut QpSw> {
        self.qps
            .get_mut(qpn as usize)
            .and_then(|q| q.as_mut())
            .ok_or(Error::NoSuchObject {
                what: "QP",
                index: qpn as u64,
            })
    }
}

/// A verbs context: one opened device, its port addresses and the resource tables.
pub struct Context<D: Device> {
    pub(super) nic: RefCell<Rnic<D>>,
    pub(super) params: BuildParams,
    pub(super) port: PortAddr,
    pub(super) res: RefCell<Resources>,
    pub(super) reaper: Rc<Reaper>,
    drop_errors: Cell<u32>,
    last_drop_error: RefCell<Option<String>>,
}

impl<D: Device> Context<D> {
    /// Open a device ([`Rnic::open`]) and make a context with the given port addresses.
    pub fn open(dev: D, port: PortAddr) -> Result<Self> {
        Self::new(Rnic::open(dev)?, port)
    }

    /// A context over an opened device.
    pub fn new(nic: Rnic<D>, port: PortAddr) -> Result<Self> {
        PortAddr::new(port.mac, port.ipv4)?;
        let params = nic.info().params;
        // the tables below are sized by what the device says: never trust it blindly
        crate::driver::check_params(&params)?;
        let res = Resources {
            next_pd: 1,
            pds: Vec::new(),
            mrs: (0..params.num_mrs).map(|_| MrSlot::default()).collect(),
            cqs: vec![None; params.num_cqs as usize],
            qps: (0..params.num_qps).map(|_| None).collect(),
        };
        Ok(Context {
            nic: RefCell::new(nic),
            params,
            port,
            res: RefCell::new(res),
            reaper: Rc::default(),
            drop_errors: Cell::new(0),
            last_drop_error: RefCell::new(None),
        })
    }

    /// Give the device back (all objects are gone: they borrow the context). Buffers whose
    /// last owner is gone are unmapped first; `DmaBuf`s still held stay mapped. Use
    /// [`Context::close`] to learn about an unmap that failed.
    pub fn into_nic(self) -> Rnic<D> {
        // A failed unmap leaves the mapping in the backend (mapped memory, never a dangling
        // IOVA); `close` reports it.
        let _ = self.reap();
        self.nic.into_inner()
    }

    /// Like [`Context::into_nic`], but an error if unmapping a released buffer failed (the
    /// device is then dropped with the rest of its mappings).
    pub fn close(self) -> Result<Rnic<D>> {
        self.reap()?;
        Ok(self.nic.into_inner())
    }

    /// Unmap the allocations whose last owner is gone. Returns the first error (the others
    /// are counted in [`Context::drop_errors`]); a buffer the device refused to unmap stays
    /// mapped.
    pub(super) fn reap(&self) -> Result<()> {
        let pending = self.reaper.take();
        if pending.is_empty() {
            return Ok(());
        }
        let mut nic = self.nic()?;
        let mut first = Ok(());
        for region in pending {
            if let Err(e) = nic.device().dma_free(region) {
                if first.is_ok() {
                    first = Err(e);
                } else {
                    self.note_drop_error(&e);
                }
            }
        }
        first
    }

    /// Device errors met where nothing can return them (drops, background unmaps): they are
    /// counted here, never swallowed. Use the objects' explicit `destroy`/`dereg`/`dealloc`
    /// to get them as results instead.
    pub fn drop_errors(&self) -> u32 {
        self.drop_errors.get()
    }

    /// The last error counted by [`Context::drop_errors`].
    pub fn last_drop_error(&self) -> Option<String> {
        self.last_drop_error.borrow().clone()
    }

    pub(super) fn note_drop_error(&self, e: &Error) {
        self.drop_errors
            .set(self.drop_errors.get().saturating_add(1));
        *self.last_drop_error.borrow_mut() = Some(e.to_string());
    }

    pub fn params(&self) -> BuildParams {
        self.params
    }

    pub fn port(&self) -> PortAddr {
        self.port
    }

    /// What the driver read at open.
    pub fn info(&self) -> Result<DeviceInfo> {
        Ok(self.nic()?.info().clone())
    }

    pub(super) fn nic(&self) -> Result<RefMut<'_, Rnic<D>>> {
        self.nic.try_borrow_mut().map_err(|_| Error::ContextBusy)
    }

    pub(super) fn res(&self) -> Result<RefMut<'_, Resources>> {
        self.res.try_borrow_mut().map_err(|_| Error::ContextBusy)
    }

    /// The RX parser/ICRC counters (BAR0 `rxstat`): read-only.
    pub fn rx_stats(&self) -> Result<crate::driver::RxStats> {
        self.nic()?.rx_stats()
    }

    /// The data-path event counters (BAR0 `engstat`), by name: read-only.
    pub fn engine_counters(&self) -> Result<Vec<(&'static str, u32)>> {
        self.nic()?.engine_counters()
    }

    /// Run `f` on the driver (registers, contexts, the device itself). Test-only: raw
    /// access to the driver could write a QP context or an MR entry behind the verbs' checks,
    /// so callers of the safe API get the read-only views above instead; the unit tests use
    /// it to look at the fake device.
    #[cfg(test)]
    pub(crate) fn with_nic<R>(&self, f: impl FnOnce(&mut Rnic<D>) -> Result<R>) -> Result<R> {
        f(&mut *self.nic()?)
    }

    /// Allocate a zeroed DMA buffer (register it with [`ProtectionDomain::reg_mr`]).
    pub fn alloc_buf(&self, len: usize) -> Result<DmaBuf> {
        self.alloc(len, BufKind::User)
    }

    pub(super) fn alloc(&self, len: usize, kind: BufKind) -> Result<DmaBuf> {
        self.reap()?;
        let region = self.nic()?.device().dma_alloc(len)?;
        Ok(DmaBuf::new(region, kind, &self.reaper))
    }

    /// Free a buffer. If memory regions or a CQ still use it, [`Error::BufferInUse`]: nothing
    /// is unmapped behind them (the allocation is freed when the last of them goes).
    pub fn free_buf(&self, buf: DmaBuf) -> Result<()> {
        self.check_buf(&buf)?;
        let users = buf.other_users();
        if users > 0 {
            return Err(Error::BufferInUse {
                iova: buf.iova(),
                users,
            });
        }
        drop(buf);
        self.reap()
    }

    fn check_buf(&self, buf: &DmaBuf) -> Result<()> {
        if buf.belongs_to(&self.reaper) {
            Ok(())
        } else {
            Err(Error::ForeignObject("the DMA buffer"))
        }
    }

    pub fn write_buf(&self, buf: &DmaBuf, off: usize, data: &[u8]) -> Result<()> {
        self.check_buf(buf)?;
        self.nic()?.device().dma_write(buf.region(), off, data)
    }

    pub fn read_buf(&self, buf: &DmaBuf, off: usize, out: &mut [u8]) -> Result<()> {
        self.check_buf(buf)?;
        self.nic()?.device().dma_read(buf.region(), off, out)
    }

    /// Let device time pass (the simulator advances the world).
    pub fn relax(&self) -> Result<()> {
        self.nic()?.device().relax();
        Ok(())
    }

    /// Device time in nanoseconds.
    pub fn now_ns(&self) -> Result<u64> {
        Ok(self.nic()?.device().now_ns())
    }

    /// Allocate a protection domain (numbers from 1 upward).
    pub fn alloc_pd(&self) -> Result<ProtectionDomain<'_, D>> {
        let mut r = self.res()?;
        let mut pd = r.next_pd;
        // skip numbers still in use after a wrap
        while pd == 0 || r.pds.iter().any(|e| e.num == pd) {
            pd = pd.wrapping_add(1);
        }
        r.next_pd = pd.wrapping_add(1);
        r.pds.push(PdEntry {
            num: pd,
            users: 0,
            dropped: false,
        });
        Ok(ProtectionDomain { ctx: self, pd })
    }

    /// Create a completion queue of `entries` CQEs (a power of two), no interrupt.
    pub fn create_cq(&self, entries: u32) -> Result<CompletionQueue<'_, D>> {
        self.create_cq_with(CqAttr {
            entries,
            irq: false,
            irq_vector: 0,
        })
    }

    /// Create a completion queue.
    pub fn create_cq_with(&self, attr: CqAttr) -> Result<CompletionQueue<'_, D>> {
        if !attr.entries.is_power_of_two() || attr.entries > MAX_CQ_ENTRIES {
            return Err(Error::BadCqSize {
                entries: attr.entries,
                max: MAX_CQ_ENTRIES,
            });
        }
        if attr.irq_vector != 0 {
            return Err(Error::NoSuchVector {
                vector: attr.irq_vector as u32,
                count: 1,
            });
        }
        let log2 = attr.entries.trailing_zeros() as u8;
        let cqn = {
            let mut r = self.res()?;
            let Some(n) = r.cqs.iter().position(|c| c.is_none()) else {
                return Err(Error::OutOfResources {
                    what: "completion queues",
                    limit: self.params.num_cqs,
                });
            };
            r.cqs[n] = Some(0);
            n as u32
        };
        let made = (|| {
            let buf = self.alloc(attr.entries as usize * CQE_BYTES, BufKind::CqRing)?;
            let rec = CqContext {
                base_iova: buf.iova(),
                log2_entries: log2,
                flags: CQ_FLAG_VALID | if attr.irq { CQ_FLAG_IRQ } else { 0 },
                irq_vector: attr.irq_vector,
                producer: 0,
                consumer: 0,
            };
            // on an error the ring is dropped, and unmapped at the next reap
            self.write_ctx(ctxreg::TABLE_CQ, cqn, &rec.encode())?;
            Ok(buf)
        })();
        match made {
            Ok(buf) => Ok(CompletionQueue {
                ctx: self,
                cqn,
                buf: Some(buf),
                log2,
                ci: Cell::new(0),
                db_ci: Cell::new(0),
            }),
            Err(e) => {
                self.res()?.cqs[cqn as usize] = None;
                Err(e)
            }
        }
    }

    pub(super) fn write_ctx(&self, table: u32, index: u32, rec: &[u8; 64]) -> Result<()> {
        self.nic()?.write_context(table, index, rec)
    }

    /// Write only the bytes of `rec` enabled in `mask` (the fields the driver owns).
    pub(super) fn write_ctx_masked(
        &self,
        table: u32,
        index: u32,
        rec: &[u8; 64],
        mask: u64,
    ) -> Result<()> {
        self.nic()?.write_context_masked(table, index, rec, mask)
    }
}
