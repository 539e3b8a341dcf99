//! The error type of the `rnic` crate.
use crate::device::Bar;

/// Everything the driver can fail with. Every variant says what went wrong and, where there is
/// one, what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "{bar:?} access at offset {off:#x} ({len} bytes) is outside the BAR ({bar_len:#x} bytes) or misaligned"
    )]
    BarRange {
        bar: Bar,
        off: u64,
        len: u64,
        bar_len: u64,
    },
    #[error(
        "not an rnic device: magic {found:#010x} at BAR0+0x0c (expected {expected:#010x}); wrong device or PCI function?"
    )]
    NotRnic { found: u32, expected: u32 },
    #[error("device block at BAR0+{off:#x} has type {found:#06x}, expected {expected:#06x}")]
    WrongBlock { off: u32, found: u16, expected: u16 },
    #[error(
        "register block '{block}' has major version {found}, this driver supports {supported}; update the driver or the bitstream"
    )]
    UnsupportedVersion {
        block: &'static str,
        found: u16,
        supported: u16,
    },
    #[error("register block chain is broken at BAR0+{off:#x}: {why}")]
    BrokenChain { off: u32, why: String },
    #[error("required register block '{0}' not found on the device")]
    MissingBlock(&'static str),
    // ---- bad arguments: one variant per kind of mistake, so callers can match on them
    #[error("{what} {value}: must be {min}..={max}")]
    OutOfRange {
        what: &'static str,
        value: u64,
        min: u64,
        max: u64,
    },
    #[error("{what} {index} does not exist")]
    NoSuchObject { what: &'static str, index: u64 },
    #[error("no engine counter {0:?}")]
    NoSuchCounter(String),
    #[error("access flags {bits:#x}: unknown bits {unknown:#x}")]
    UnknownAccessFlags { bits: u32, unknown: u32 },
    #[error("remote write/atomic access needs LOCAL_WRITE too")]
    RemoteAccessNeedsLocalWrite,
    #[error("path MTU {bytes}: must be 256, 512, 1024, 2048 or 4096")]
    BadMtu { bytes: u32 },
    #[error("path MTU {mtu} is above the device's {max}")]
    MtuAboveDevice { mtu: u32, max: u32 },
    #[error("{what} {addr} is not a unicast address (multicast, broadcast or zero)")]
    NotUnicast { what: &'static str, addr: String },
    #[error("endpoint of {len} bytes: expected {expected}")]
    EndpointLength { len: usize, expected: usize },
    #[error("endpoint tag/version {tag:#04x}/{version}: expected {want_tag:#04x}/{want_version}")]
    EndpointVersion {
        tag: u8,
        version: u8,
        want_tag: u8,
        want_version: u8,
    },
    #[error("{what} {value:#x} is wider than 24 bits")]
    Wider24 { what: &'static str, value: u32 },
    #[error("CQ of {entries} entries: must be a power of two in 1..={max}")]
    BadCqSize { entries: u32, max: u32 },
    #[error("interrupt vector {vector}: the device has {count}")]
    NoSuchVector { vector: u32, count: u32 },
    #[error("memory region of 0 bytes")]
    EmptyRegion,
    #[error("{what}: {addr:#x} + {len} bytes overflows the 64-bit address space")]
    AddressOverflow {
        what: &'static str,
        addr: u64,
        len: u64,
    },
    #[error("[{off}, {off}+{len}) is outside the memory region of {size} bytes")]
    OutsideRegion { off: usize, len: usize, size: usize },
    #[error("message of {len} bytes: messages are at most {max}")]
    MessageTooLong { len: u64, max: u64 },
    #[error("work request {wr_id}: both an SGE and inline data")]
    SgeAndInline { wr_id: u64 },
    #[error("work request {wr_id}: {len} inline bytes, the QP allows {max}")]
    InlineTooLong { wr_id: u64, len: usize, max: usize },
    #[error("work request {wr_id}: an RDMA READ cannot carry inline data")]
    InlineRead { wr_id: u64 },
    #[error(
        "work request {wr_id}: the RDMA READ target MR (lkey {lkey:#x}) was registered without LOCAL_WRITE"
    )]
    ReadNeedsLocalWrite { wr_id: u64, lkey: u32 },
    #[error("work request {wr_id}: an atomic cannot carry inline data")]
    InlineAtomic { wr_id: u64 },
    #[error(
        "work request {wr_id}: an atomic's local SGE (where the original value lands) must be exactly 8 bytes, not {len}"
    )]
    AtomicLength { wr_id: u64, len: u64 },
    #[error("work request {wr_id}: atomic remote address {remote_addr:#x} is not 8-byte aligned")]
    AtomicMisaligned { wr_id: u64, remote_addr: u64 },
    #[error(
        "work request {wr_id}: the atomic's local MR (lkey {lkey:#x}) was registered without LOCAL_WRITE (the original value is written there)"
    )]
    AtomicNeedsLocalWrite { wr_id: u64, lkey: u32 },
    #[error("work request {wr_id}: the QP was created with max_{queue}_sge 0")]
    NoSgeAllowed { wr_id: u64, queue: &'static str },
    #[error("{0} belongs to another context")]
    ForeignObject(&'static str),
    #[error("a completion queue's ring cannot be registered as a memory region")]
    NotRegistrable,
    #[error("waiting for {min} completions with room for {room}")]
    WaitTooMany { min: usize, room: usize },
    #[error(
        "'{0}' is not a PCI address: expected dddd:bb:dd.f or bb:dd.f (hex), as printed by lspci -D"
    )]
    BadPciAddress(String),
    #[error("IOVA {iova:#x} is not aligned to the IOMMU page size {page:#x}")]
    IovaMisaligned { iova: u64, page: u64 },
    #[error("IOVA range {iova:#x}+{len:#x} overlaps a mapped buffer")]
    IovaOverlap { iova: u64, len: u64 },
    #[error("DMA buffer of {len} bytes: must be 1..={max}")]
    BadDmaLength { len: usize, max: usize },
    // ---- what the device reports
    #[error("the device reports {name} = {value}: {why}; wrong device, or a broken bitstream")]
    BadDeviceParam {
        name: &'static str,
        value: u64,
        why: &'static str,
    },
    #[error("DMA buffer access out of range: offset {off} + {len} bytes > buffer of {size} bytes")]
    DmaRange { off: usize, len: usize, size: usize },
    #[error("unknown or freed DMA buffer (id {0})")]
    UnknownBuffer(u64),
    #[error("timed out after {ns} ns waiting for {what}")]
    Timeout { what: &'static str, ns: u64 },
    #[error("device reported an error: {0}")]
    Device(String),
    #[error("VFIO: {0}")]
    Vfio(String),
    #[error(
        "VFIO is not available: {path} does not exist; load the driver (modprobe vfio-pci) and bind the card to it (docs/VFIO.md)"
    )]
    NoVfio { path: String },
    #[error(
        "PCI device {bdf} has no IOMMU group, so the IOMMU is off: enable VT-d / AMD-Vi in the firmware and boot Linux with intel_iommu=on (Intel) or amd_iommu=on (AMD)"
    )]
    IommuOff { bdf: String },
    #[error("PCI device {bdf} is not bound to vfio-pci (driver: {driver}); bind it: {fix}")]
    NotBoundToVfio {
        bdf: String,
        driver: String,
        fix: String,
    },
    #[error(
        "IOMMU group {group} of {bdf} is not viable: {why}; bind every device of the group to vfio-pci, or unbind them from their drivers"
    )]
    GroupNotViable {
        bdf: String,
        group: u32,
        why: String,
    },
    #[error(
        "permission denied opening {path}: run as root, or give your user the group file (chown USER {path}) and a memlock limit for DMA (ulimit -l)"
    )]
    PermissionDenied { path: String },
    #[error(
        "BAR{index} of {bdf} is {found:#x} bytes, the driver needs at least {needed:#x}: wrong device or PCI function, or a bitstream with a smaller BAR (check lspci -vv -s {bdf})"
    )]
    BarTooSmall {
        bdf: String,
        index: u32,
        found: u64,
        needed: u64,
    },
    #[error(
        "IOVA range {iova:#x}..{end:#x} is outside what the IOMMU allows ({allowed}); choose an IOVA inside those ranges, or let dma_alloc pick one"
    )]
    IovaOutOfRange {
        iova: u64,
        end: u64,
        allowed: String,
    },
    #[error("QP {qpn} is in state {state}: {what}")]
    QpState {
        qpn: u32,
        state: &'static str,
        what: String,
    },
    #[error(
        "{queue} queue of QP {qpn} is full: {outstanding} work requests outstanding + {posting} posted > {depth}; poll the completion queue (only a signaled completion frees send WQEs)"
    )]
    QueueFull {
        qpn: u32,
        queue: &'static str,
        outstanding: usize,
        posting: usize,
        depth: u32,
    },
    #[error("out of {what}: all {limit} are in use; destroy some first")]
    OutOfResources { what: &'static str, limit: u32 },
    #[error(
        "DMA buffer at IOVA {iova:#x} is still used by {users} memory region(s) / completion queue(s); it is freed when the last of them goes"
    )]
    BufferInUse { iova: u64, users: usize },
    #[error("{what} is still used by {users} {by}; destroy those first")]
    InUse {
        what: String,
        users: u32,
        by: &'static str,
    },
    #[error(
        "the verbs context is already in use (re-entrant call from inside with_nic?); drive a context from one place at a time"
    )]
    ContextBusy,
    #[error("backend: {0}")]
    Backend(String),
    #[error("I/O error while {what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, Error>;
