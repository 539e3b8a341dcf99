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
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
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
