//! Owned DMA buffers. A [`DmaBuf`] is the only thing a memory region can be made of, and only
//! [`Context::alloc_buf`] makes one: it is not `Copy` or `Clone` and its fields are private, so
//! no caller can register a freed buffer or an IOVA of its choosing.
//!
//! The allocation is shared: the caller's `DmaBuf`, every memory region over it and the CQ
//! whose ring it is each hold a reference, and the memory goes back to the device only when the
//! last of them is gone. A freed IOVA is therefore never reachable through a live MR's key or a
//! live CQ's context. Dropped allocations are queued in the context and unmapped at its next
//! allocation, `free_buf`, CQ destroy or `into_nic` (a drop cannot reach the device).

use super::*;
use crate::device::DmaRegion;
use std::rc::Rc;

/// Where dropped allocations wait for the context to unmap them.
#[derive(Debug, Default)]
pub(super) struct Reaper {
    pending: RefCell<Vec<DmaRegion>>,
}

impl Reaper {
    pub(super) fn take(&self) -> Vec<DmaRegion> {
        std::mem::take(&mut *self.pending.borrow_mut())
    }
}

/// What a buffer is for: user buffers can be registered, CQ rings cannot (a peer must never
/// be able to write a completion ring).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BufKind {
    User,
    CqRing,
}

#[derive(Debug)]
pub(super) struct BufAlloc {
    pub(super) region: DmaRegion,
    pub(super) kind: BufKind,
    reaper: Rc<Reaper>,
}

impl Drop for BufAlloc {
    fn drop(&mut self) {
        // the last owner is gone: the context unmaps it at its next chance
        self.reaper.pending.borrow_mut().push(self.region);
    }
}

/// An owned, DMA-able host buffer of a [`Context`] (see the module docs for the ownership
/// rules). Read and write it with [`Context::read_buf`] / [`Context::write_buf`], register it
/// with [`ProtectionDomain::reg_mr`], free it with [`Context::free_buf`] or by dropping it.
///
/// ```
/// # use rnic::verbs::DmaBuf;
/// fn takes(_b: DmaBuf) {}
/// # fn f(b: DmaBuf) { takes(b) }
/// ```
/// A `DmaBuf` cannot be copied (so a copy cannot outlive a free):
/// ```compile_fail,E0382
/// # use rnic::verbs::DmaBuf;
/// fn takes(_b: DmaBuf) {}
/// fn f(b: DmaBuf) {
///     takes(b);
///     takes(b);
/// }
/// ```
/// and not built by hand (so no IOVA of the caller's choosing can be registered):
/// ```compile_fail,E0451
/// let _b = rnic::verbs::DmaBuf { alloc: todo!() };
/// ```
#[derive(Debug)]
pub struct DmaBuf {
    alloc: Rc<BufAlloc>,
}

impl DmaBuf {
    pub(super) fn new(region: DmaRegion, kind: BufKind, reaper: &Rc<Reaper>) -> DmaBuf {
        DmaBuf {
            alloc: Rc::new(BufAlloc {
                region,
                kind,
                reaper: reaper.clone(),
            }),
        }
    }

    /// Another owner of the same allocation (an MR's or a CQ's).
    pub(super) fn share(&self) -> DmaBuf {
        DmaBuf {
            alloc: self.alloc.clone(),
        }
    }

    /// Owners besides this one (memory regions, the CQ).
    pub(super) fn other_users(&self) -> usize {
        Rc::strong_count(&self.alloc) - 1
    }

    pub(super) fn region(&self) -> &DmaRegion {
        &self.alloc.region
    }

    pub(super) fn kind(&self) -> BufKind {
        self.alloc.kind
    }

    pub(super) fn belongs_to(&self, reaper: &Rc<Reaper>) -> bool {
        Rc::ptr_eq(&self.alloc.reaper, reaper)
    }

    /// Keep the allocation mapped for good (its device user could not be switched off).
    pub(super) fn leak(self) {
        std::mem::forget(self.alloc);
    }

    /// I/O virtual address of the first byte.
    pub fn iova(&self) -> u64 {
        self.alloc.region.iova
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.alloc.region.len
    }

    pub fn is_empty(&self) -> bool {
        self.alloc.region.len == 0
    }
}
