//! RDMA verbs over an rnic device, in the shape of rdma-core / the `ibverbs` crate:
//! [`Context`] -> [`ProtectionDomain`] -> [`MemoryRegion`] and [`QueuePair`] (RC), and
//! [`CompletionQueue`]s polled for [`WorkCompletion`]s.
//!
//! ```text
//! let ctx = Context::open(dev, PortAddr::sim(1)?)?;
//! let pd = ctx.alloc_pd()?;
//! let cq = ctx.create_cq(64)?;
//! let buf = ctx.alloc_buf(4096)?;
//! let mr = pd.reg_mr(&buf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE)?;
//! let qp = pd.create_qp(&cq, &cq, QpCaps::default())?;
//! // exchange qp.endpoint()? with the peer out of band, then
//! qp.connect(&remote, &ConnectAttr::default())?;
//! qp.post_send(&[SendWr::new(1, SendOp::Send).sge(mr.sge(0, 64)?)])?;
//! let wc = cq.wait(1, 10_000_000)?;
//! ```
//!
//! Send operations ([`SendOp`]): SEND and RDMA WRITE, with or without immediate data, and RDMA
//! READ (`SendOp::RdmaRead { remote_addr, rkey }`: the SGE is where the data lands, so its MR
//! needs LOCAL_WRITE; the peer's MR needs REMOTE_READ and its QP REMOTE_READ access; the
//! completion is [`WcOpcode::RdmaRead`]), and the atomics COMPARE & SWAP and FETCH & ADD
//! (`SendOp::CompareSwap { remote_addr, rkey, compare, swap }`,
//! `SendOp::FetchAdd { remote_addr, rkey, add }`) on a little-endian u64 at an 8-byte aligned
//! remote address (REMOTE_ATOMIC on the peer's MR and QP); the original value lands in the
//! 8-byte SGE (LOCAL_WRITE), the completion is [`WcOpcode::CompSwap`] / [`WcOpcode::FetchAdd`].
//! The requester keeps at most `max_rd_atomic` (<= the build's `rd_atomic`: 128 in the
//! standard build, 16 in the 16k-QP build) READs and atomics outstanding.
//!
//! Everything is checked here before it reaches the device; every bad argument and every call
//! in the wrong QP state is an [`Error`], never a panic. Objects borrow the [`Context`]; a
//! [`QueuePair`] borrows its PD and CQs, so they outlive it; a [`MemoryRegion`] shares its
//! [`DmaBuf`] (never unmapped behind a live MR or CQ: see `buf.rs`). Objects release their
//! device resources on drop (a device error there is counted in [`Context::drop_errors`], and
//! what the device may still use stays mapped) or explicitly through
//! `dereg`/`destroy`/`dealloc` (errors returned). One thread drives a context (it is not
//! `Sync`); the device is behind a `RefCell`, so re-entrant use is reported as
//! [`Error::ContextBusy`].
//!
//! Send-queue accounting follows rdma-core: a posted WQE stays outstanding until a signaled
//! completion at or after it is polled (RC completes in order), so a QP whose WQEs are all
//! unsignaled fills up. When a completion with an error status arrives the QP goes to the
//! error state; its remaining WQEs (send and receive) are then returned as `WR_FLUSH_ERR`
//! completions by the CQ they belong to (the hardware leaves flushing to the driver).

mod buf;
mod context;
mod cq;
#[cfg(test)]
mod fake;
mod pd;
mod qp;
#[cfg(test)]
mod safety_tests;
#[cfg(test)]
mod tests;
mod types;

pub use buf::DmaBuf;
pub use context::Context;
pub use cq::CompletionQueue;
pub use pd::{MemoryRegion, ProtectionDomain};
pub use qp::QueuePair;
pub use types::*;

use buf::BufKind;
use context::{QpSw, Resources, SqEntry};

use crate::device::Device;
use crate::driver::{DeviceInfo, Rnic};
use crate::error::{Error, Result};
use rnic_abi::params::BuildParams;
use rnic_abi::queue::{
    ATOMIC_RESOURCES, CqContext, Cqe, MAX_RD_ATOMIC, MrEntry, QpContext, RqState, WQE_INLINE_BYTES,
    Wqe, access, cqe_flag, make_key, qp_state, wc_op, wc_status, wqe_flag, wqe_op,
};
use rnic_abi::regs::{ctx as ctxreg, db};
use rnic_abi::roce;
use std::cell::{RefCell, RefMut};
use std::collections::VecDeque;
use std::fmt;
use std::net::Ipv4Addr;

/// First QP number handed out (0 and 1 are the special QPs of InfiniBand).
pub const FIRST_QPN: u32 = 2;
/// Bytes of one CQE in the host ring.
pub const CQE_BYTES: usize = Cqe::SIZE;
/// Largest CQ: 2^15 entries (the CQ doorbell carries a 16-bit consumer index, so a ring must
/// be at most half of its range for the full/empty distinction to survive the truncation).
pub const MAX_CQ_ENTRIES: u32 = 1 << 15;
/// Largest message (IBTA: 2^31 bytes).
pub const MAX_MSG_BYTES: u64 = 1 << 31;
/// QP transport type in `QpContext.qp_type`.
pub const QP_TYPE_RC: u8 = 2;
/// `CqContext.flags`: valid, interrupt on completion.
pub const CQ_FLAG_VALID: u8 = 1 << 0;
pub const CQ_FLAG_IRQ: u8 = 1 << 1;
/// `MrEntry.flags`: valid.
pub const MR_FLAG_VALID: u32 = 1 << 0;
