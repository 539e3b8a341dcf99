//! The verbs [`Context`] and the software state shared by the objects it hands out.

use super::*;

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
}

#[derive(Debug, Default)]
pub(super) struct Resources {
    pub(super) next_pd: u32,
    /// Live PDs: (pd number, users).
    pub(super) pds: Vec<(u32, u32)>,
    pub(super) mrs: Vec<MrSlot>,
    /// CQ users (QPs) per CQ number; None = free.
    pub(super) cqs: Vec<Option<u32>>,
    pub(super) qps: Vec<Option<QpSw>>,
}

impl Resources {
    pub(super) fn pd_users(&mut self, pd: u32) -> Result<&mut u32> {
        self.pds
            .iter_mut()
            .find(|(n, _)| *n == pd)
            .map(|(_, u)| u)
            .ok_or_else(|| {
                Error::InvalidArgument(format!("protection domain {pd} is not allocated"))
            })
    }
    pub(super) fn qp(&mut self, qpn: u32) -> Result<&mut QpSw> {
        self.qps
            .get_mut(qpn as usize)
            .and_then(|q| q.as_mut())
            .ok_or_else(|| Error::InvalidArgument(format!("QP {qpn} does not exist")))
    }
}

/// A verbs context: one opened device, its port addresses and the resource tables.
pub struct Context<D: Device> {
    pub(super) nic: RefCell<Rnic<D>>,
    pub(super) params: BuildParams,
    pub(super) port: PortAddr,
    pub(super) res: RefCell<Resources>,
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
        })
    }

    /// Give the device back (all objects are gone: they borrow the context).
    pub fn into_nic(self) -> Rnic<D> {
        self.nic.into_inner()
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

    /// Run `f` on the driver (registers, counters, the device itself).
    pub fn with_nic<R>(&self, f: impl FnOnce(&mut Rnic<D>) -> Result<R>) -> Result<R> {
        f(&mut *self.nic()?)
    }

    /// Allocate a zeroed DMA buffer (register it with [`ProtectionDomain::reg_mr`]).
    pub fn alloc_buf(&self, len: usize) -> Result<DmaBuf> {
        self.nic()?.device().dma_alloc(len)
    }

    pub fn free_buf(&self, buf: DmaBuf) -> Result<()> {
        self.nic()?.device().dma_free(buf)
    }

    pub fn write_buf(&self, buf: &DmaBuf, off: usize, data: &[u8]) -> Result<()> {
        self.nic()?.device().dma_write(buf, off, data)
    }

    pub fn read_buf(&self, buf: &DmaBuf, off: usize, out: &mut [u8]) -> Result<()> {
        self.nic()?.device().dma_read(buf, off, out)
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
        while pd == 0 || r.pds.iter().any(|(n, _)| *n == pd) {
            pd = pd.wrapping_add(1);
        }
        r.next_pd = pd.wrapping_add(1);
        r.pds.push((pd, 0));
        Ok(ProtectionDomain {
            ctx: self,
            pd,
            live: true,
        })
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
            return Err(Error::InvalidArgument(format!(
                "CQ of {} entries: must be a power of two in 1..={MAX_CQ_ENTRIES}",
                attr.entries
            )));
        }
        if attr.irq_vector != 0 {
            return Err(Error::InvalidArgument(format!(
                "interrupt vector {}: the engine has one (0)",
                attr.irq_vector
            )));
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
            let mut nic = self.nic()?;
            let buf = nic.device().dma_alloc(attr.entries as usize * CQE_BYTES)?;
            let rec = CqContext {
                base_iova: buf.iova,
                log2_entries: log2,
                flags: CQ_FLAG_VALID | if attr.irq { CQ_FLAG_IRQ } else { 0 },
                irq_vector: attr.irq_vector,
                producer: 0,
                consumer: 0,
            };
            if let Err(e) = nic.write_context(ctxreg::TABLE_CQ, cqn, &rec.encode()) {
                let _ = nic.device().dma_free(buf);
                return Err(e);
            }
            Ok(buf)
        })();
        match made {
            Ok(buf) => Ok(CompletionQueue {
                ctx: self,
                cqn,
                buf,
                log2,
                ci: 0,
                db_ci: 0,
                live: true,
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
}
