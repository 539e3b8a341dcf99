//! VFIO backend: a PCI device driven from user space through Linux VFIO (legacy container/group
//! API) with the IOMMU translating every DMA.
//!
//! [`VfioDevice`] knows PCI and VFIO, nothing about any particular card: which BAR carries the
//! registers and which the rings, how big they must be, which IOVAs the device can reach and
//! which interrupts to enable come from [`VfioOptions`] ([`VfioOptions::rnic`] for our card).
//! It implements [`Device`](crate::device::Device), so the same driver code runs on it as on the
//! simulator.
//!
//! What happens on [`VfioDevice::open`]: sysfs pre-checks (device exists, `/dev/vfio/vfio`
//! exists, IOMMU on, bound to vfio-pci, group viable) so each failure is a precise error; then
//! container + group + device fd (vfio-ioctls), the IOMMU's allowed IOVA ranges
//! (`VFIO_IOMMU_GET_INFO`), the BARs mmapped with memmap2 and checked against minimum sizes,
//! memory decoding and bus mastering switched on in the command register, and MSI-X (else MSI)
//! vectors wired to eventfds. Teardown (drop or [`VfioDevice::close`]) disables interrupts and
//! bus mastering, unmaps every DMA mapping, unmaps the BARs and releases the group, in that order.
//!
//! `unsafe` in the crate lives here only (this file, `iommu.rs`), each block with its reason.

pub mod iommu;
pub mod sysfs;

pub use iommu::{IommuInfo, IovaAllocator};
pub use sysfs::{PciAddr, PciInfo, find_by_id};

use crate::device::{Bar, Device, DmaRegion, check_bar};
use crate::error::{Error, Result};
use memmap2::{MmapOptions, MmapRaw};
use std::collections::BTreeMap;
use std::fs::File;
use std::ops::Range;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::atomic::{Ordering, fence};
use std::time::Instant;
use vfio_bindings::bindings::vfio::{
    VFIO_BASE, VFIO_PCI_CONFIG_REGION_INDEX, VFIO_PCI_MSI_IRQ_INDEX, VFIO_PCI_MSIX_IRQ_INDEX,
    VFIO_REGION_INFO_FLAG_MMAP, VFIO_TYPE,
};
use vfio_ioctls::{VfioContainer, VfioError, VfioOps};
use vmm_sys_util::eventfd::{EFD_NONBLOCK, EventFd};

vmm_sys_util::ioctl_io_nr!(VFIO_DEVICE_RESET, VFIO_TYPE as u32, VFIO_BASE + 11);

/// PCI command register offset and the bits the driver sets.
const PCI_COMMAND: u64 = 0x04;
const PCI_COMMAND_MEMORY: u16 = 1 << 1;
const PCI_COMMAND_MASTER: u16 = 1 << 2;

/// Which BAR carries what, and how big it must at least be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarSpec {
    /// PCI BAR index (0..=5).
    pub index: u32,
    /// Minimum size in bytes; a smaller BAR is refused with [`Error::BarTooSmall`].
    pub min_len: u64,
}

/// Which interrupts to enable at open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqMode {
    /// MSI-X if the device has it, else MSI, else none.
    Auto,
    /// MSI-X only (error if absent).
    MsiX,
    /// MSI only (error if absent).
    Msi,
    /// No interrupts; `wait_irq` fails.
    None,
}

/// The interrupt kind in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqKind {
    MsiX,
    Msi,
    None,
}

/// How to open a device. [`VfioOptions::rnic`] is our card; tests against other devices
/// describe theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VfioOptions {
    /// BAR behind [`Bar::Regs`].
    pub regs: BarSpec,
    /// BAR behind [`Bar::Rings`]; `None` for devices without one (accesses are then refused).
    pub rings: Option<BarSpec>,
    /// Where DMA buffers get their IOVAs (intersected with what the IOMMU allows): put the
    /// device's DMA address limit here.
    pub iova_window: Range<u64>,
    /// Interrupts to enable.
    pub irq: IrqMode,
    /// At most this many vectors.
    pub max_vectors: u32,
    /// Reset the device (VFIO_DEVICE_RESET) right after opening it.
    pub reset_on_open: bool,
}

impl VfioOptions {
    /// Our card: BAR0 registers and BAR2 ring memory of the sizes `rnic-abi` gives, 64-bit
    /// DMA (the engine's `m_axi` address is 64 bits), MSI-X preferred.
    pub fn rnic() -> Self {
        VfioOptions {
            regs: BarSpec {
                index: rnic_abi::pcie::BAR_REGS,
                min_len: rnic_abi::pcie::BAR0_BYTES,
            },
            rings: Some(BarSpec {
                index: rnic_abi::pcie::BAR_RINGS,
                min_len: rnic_abi::pcie::BAR2_BYTES,
            }),
            iova_window: 0x1_0000_0000..u64::MAX,
            irq: IrqMode::Auto,
            max_vectors: 32,
            reset_on_open: false,
        }
    }
}

/// A BAR mapped into this process.
struct BarMap {
    index: u32,
    len: u64,
    map: MmapRaw,
}

/// One DMA buffer: anonymous memory pinned and mapped at `iova` by the IOMMU.
struct DmaMapping {
    iova: u64,
    /// Bytes mapped (the request rounded up to IOMMU pages).
    mapped: usize,
    /// Bytes the user asked for.
    len: usize,
    mem: MmapRaw,
}

/// A region of the VFIO device (BAR, ROM, config space) as the kernel reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionInfo {
    pub index: u32,
    pub flags: u32,
    pub size: u64,
    pub offset: u64,
}

impl RegionInfo {
    /// Can the region be mmapped (VFIO_REGION_INFO_FLAG_MMAP)?
    pub fn mappable(&self) -> bool {
        self.flags & VFIO_REGION_INFO_FLAG_MMAP != 0
    }
}

/// A PCI device opened through VFIO. Fields drop top to bottom after [`Drop::drop`] has
/// disabled interrupts and unmapped the DMA: BAR maps and the dup'ed device fd must be gone
/// before the vfio-ioctls device releases the group, and the container goes last.
pub struct VfioDevice {
    regs: Option<BarMap>,
    rings: Option<BarMap>,
    file: File,
    irq_fds: Vec<EventFd>,
    irq_kind: IrqKind,
    dma: BTreeMap<u64, DmaMapping>,
    next_id: u64,
    iova: IovaAllocator,
    iommu: IommuInfo,
    vdev: vfio_ioctls::VfioDevice,
    container: Arc<VfioContainer>,
    info: PciInfo,
    opts: VfioOptions,
    t0: Instant,
    closed: bool,
}

/// The errno behind a vfio-ioctls error, if it carries one.
fn errno_of(e: &VfioError) -> Option<i32> {
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return io.raw_os_error();
        }
        if let Some(sys) = s.downcast_ref::<vmm_sys_util::errno::Error>() {
            return Some(sys.errno());
        }
        src = s.source();
    }
    None
}

/// A vfio-ioctls error as text with its cause.
fn vfio_text(e: &VfioError) -> String {
    match std::error::Error::source(e) {
        Some(s) => format!("{e}: {s}"),
        None => e.to_string(),
    }
}

impl VfioDevice {
    /// Open the device at `addr` (e.g. `0000:01:00.0`).
    pub fn open(addr: &PciAddr, opts: VfioOptions) -> Result<Self> {
        let info = sysfs::precheck(addr)?;
        let group = info.group.unwrap_or(0);
        let bdf = addr.to_string();

        let container = match VfioContainer::new(None) {
            Ok(c) => Arc::new(c),
            Err(e) => {
                return Err(match errno_of(&e) {
                    Some(libc::EACCES) | Some(libc::EPERM) => Error::PermissionDenied {
                        path: sysfs::VFIO_CONTAINER.into(),
                    },
                    Some(libc::ENOENT) | Some(libc::ENODEV) => Error::NoVfio {
                        path: sysfs::VFIO_CONTAINER.into(),
                    },
                    _ => Error::Vfio(format!("opening the VFIO container: {}", vfio_text(&e))),
                });
            }
        };
        let vdev = match vfio_ioctls::VfioDevice::new(
            &addr.sysfs(),
            container.clone() as Arc<dyn VfioOps>,
            false,
        ) {
            Ok(d) => d,
            Err(e) => {
                let node = format!("/dev/vfio/{group}");
                return Err(match (&e, errno_of(&e)) {
                    (VfioError::OpenGroup(..), Some(libc::EACCES) | Some(libc::EPERM)) => Error::PermissionDenied { path: node },
                    (VfioError::OpenGroup(..), Some(libc::EBUSY)) => Error::Vfio(format!(
                        "{node} is busy: another process (another rnic instance, a VM) has the group open; stop it first"
                    )),
                    (VfioError::OpenGroup(..), Some(libc::ENOENT)) => Error::NoVfio { path: node },
                    (VfioError::GroupViable, _) => Error::GroupNotViable {
                        bdf,
                        group,
                        why: "the kernel reports a device of the group bound to a driver other than vfio-pci".into(),
                    },
                    _ => Error::Vfio(format!("opening {bdf} (group {group}): {}", vfio_text(&e))),
                });
            }
        };
        // A second handle on the device fd, for config space pread/pwrite and the BAR mmaps.
        // SAFETY: the raw fd belongs to `vdev`, which is alive for this call; it is only
        // borrowed to dup() it.
        let file = unsafe { BorrowedFd::borrow_raw(vdev.as_raw_fd()) }
            .try_clone_to_owned()
            .map(File::from)
            .map_err(|source| Error::Io {
                what: format!("duplicating the VFIO device fd of {bdf}"),
                source,
            })?;
        let iommu = iommu::query(&*container)?;
        let iova = IovaAllocator::new(&iommu, opts.iova_window.clone());

        let mut dev = VfioDevice {
            regs: None,
            rings: None,
            file,
            irq_fds: Vec::new(),
            irq_kind: IrqKind::None,
            dma: BTreeMap::new(),
            next_id: 1,
            iova,
            iommu,
            vdev,
            container,
            info,
            opts: opts.clone(),
            t0: Instant::now(),
            closed: false,
        };
        // From here on every early return drops `dev`, which tears down what was set up.
        if opts.reset_on_open {
            dev.reset()?;
        }
        dev.regs = Some(dev.map_bar(opts.regs)?);
        if let Some(r) = opts.rings {
            dev.rings = Some(dev.map_bar(r)?);
        }
        dev.set_command(PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, true)?;
        dev.enable_irqs(opts.irq, opts.max_vectors)?;
        Ok(dev)
    }

    /// Open the one device with this vendor/device id that is bound to vfio-pci. With several
    /// candidates, asks for an address; with none bound, explains how to bind.
    pub fn open_by_id(vendor: u16, device: u16, opts: VfioOptions) -> Result<Self> {
        let all = find_by_id(vendor, device)?;
        let bound: Vec<&PciInfo> = all.iter().filter(|d| d.is_vfio()).collect();
        match (all.len(), bound.len()) {
            (0, _) => Err(Error::Vfio(format!(
                "no PCI device {vendor:04x}:{device:04x} found: is the card seated, the bitstream loaded and the link up? (lspci -nn -d {vendor:04x}:{device:04x})"
            ))),
            (_, 1) => Self::open(&bound[0].addr, opts),
            (_, 0) => Self::open(&all[0].addr, opts), // fails with the precise reason (not bound, IOMMU off...)
            _ => Err(Error::Vfio(format!(
                "{} devices {vendor:04x}:{device:04x} are bound to vfio-pci ({}): pick one by PCI address",
                bound.len(),
                bound
                    .iter()
                    .map(|d| d.addr.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Open our card by the ids in `rnic-abi`.
    pub fn open_rnic() -> Result<Self> {
        Self::open_by_id(
            rnic_abi::pcie::VENDOR_ID,
            rnic_abi::pcie::DEVICE_ID,
            VfioOptions::rnic(),
        )
    }

    fn bdf(&self) -> &str {
        self.info.addr.as_str()
    }

    /// What sysfs said about the device at open.
    pub fn pci_info(&self) -> &PciInfo {
        &self.info
    }

    /// The options it was opened with.
    pub fn options(&self) -> &VfioOptions {
        &self.opts
    }

    /// Region info of a VFIO region index (BARs 0..=5, ROM 6, config 7).
    pub fn region(&self, index: u32) -> RegionInfo {
        RegionInfo {
            index,
            flags: self.vdev.get_region_flags(index),
            size: self.vdev.get_region_size(index),
            offset: self.vdev.get_region_offset(index),
        }
    }

    fn map_bar(&self, spec: BarSpec) -> Result<BarMap> {
        if spec.index > 5 {
            return Err(Error::OutOfRange {
                what: "BAR index",
                value: spec.index as u64,
                min: 0,
                max: 5,
            });
        }
        let r = self.region(spec.index);
        if r.size < spec.min_len || r.size == 0 {
            return Err(Error::BarTooSmall {
                bdf: self.bdf().into(),
                index: spec.index,
                found: r.size,
                needed: spec.min_len.max(1),
            });
        }
        if r.flags & VFIO_REGION_INFO_FLAG_MMAP == 0 {
            return Err(Error::Vfio(format!(
                "BAR{} of {} cannot be mmapped (VFIO region flags {:#x}): a BAR smaller than a page, or an I/O BAR",
                spec.index,
                self.bdf(),
                r.flags
            )));
        }
        let len = usize::try_from(r.size).map_err(|_| {
            Error::Vfio(format!(
                "BAR{} is too big for this address space",
                spec.index
            ))
        })?;
        // A raw mapping (memmap2 hands out no references to it): device memory that is only
        // touched through raw pointers with volatile accesses (read32/write32/push_wqe).
        let map = MmapOptions::new()
            .offset(r.offset)
            .len(len)
            .map_raw(&self.file)
            .map_err(|source| Error::Io {
                what: format!(
                    "mmapping BAR{} of {} ({len:#x} bytes)",
                    spec.index,
                    self.bdf()
                ),
                source,
            })?;
        Ok(BarMap {
            index: spec.index,
            len: r.size,
            map,
        })
    }

    /// Read `buf.len()` bytes of PCI config space at `off`.
    pub fn config_read(&self, off: u64, buf: &mut [u8]) -> Result<()> {
        let r = self.region(VFIO_PCI_CONFIG_REGION_INDEX);
        self.file
            .read_exact_at(buf, r.offset + off)
            .map_err(|source| Error::Io {
                what: format!("reading config space of {} at {off:#x}", self.bdf()),
                source,
            })
    }

    /// Write PCI config space at `off`.
    pub fn config_write(&self, off: u64, data: &[u8]) -> Result<()> {
        let r = self.region(VFIO_PCI_CONFIG_REGION_INDEX);
        self.file
            .write_all_at(data, r.offset + off)
            .map_err(|source| Error::Io {
                what: format!("writing config space of {} at {off:#x}", self.bdf()),
                source,
            })
    }

    /// The PCI command register.
    pub fn command(&self) -> Result<u16> {
        let mut b = [0u8; 2];
        self.config_read(PCI_COMMAND, &mut b)?;
        Ok(u16::from_le_bytes(b))
    }

    fn set_command(&self, bits: u16, on: bool) -> Result<()> {
        let c = self.command()?;
        let n = if on { c | bits } else { c & !bits };
        self.config_write(PCI_COMMAND, &n.to_le_bytes())?;
        let back = self.command()?;
        if (back & bits != 0) != on || (on && back & bits != bits) {
            return Err(Error::Vfio(format!(
                "command register of {} reads {back:#06x} after writing {n:#06x}",
                self.bdf()
            )));
        }
        Ok(())
    }

    fn enable_irqs(&mut self, mode: IrqMode, max: u32) -> Result<()> {
        let count = |idx| self.vdev.get_irq_info(idx).map_or(0, |i| i.count);
        let (msix, msi) = (
            count(VFIO_PCI_MSIX_IRQ_INDEX),
            count(VFIO_PCI_MSI_IRQ_INDEX),
        );
        let kind = match mode {
            IrqMode::None => return Ok(()),
            IrqMode::Auto if msix > 0 => IrqKind::MsiX,
            IrqMode::Auto if msi > 0 => IrqKind::Msi,
            IrqMode::Auto => return Ok(()),
            IrqMode::MsiX if msix > 0 => IrqKind::MsiX,
            IrqMode::Msi if msi > 0 => IrqKind::Msi,
            _ => {
                return Err(Error::Vfio(format!(
                    "{} has no {mode:?} capability (MSI-X vectors {msix}, MSI vectors {msi})",
                    self.bdf()
                )));
            }
        };
        let n = if kind == IrqKind::MsiX { msix } else { msi }.min(max.max(1));
        let mut fds = Vec::new();
        for _ in 0..n {
            fds.push(EventFd::new(EFD_NONBLOCK).map_err(|source| Error::Io {
                what: "creating an eventfd".into(),
                source,
            })?);
        }
        let refs: Vec<&EventFd> = fds.iter().collect();
        let r = if kind == IrqKind::MsiX {
            self.vdev.enable_msix(refs)
        } else {
            self.vdev.enable_msi(refs)
        };
        r.map_err(|e| {
            Error::Vfio(format!(
                "enabling {n} {kind:?} vectors on {}: {}",
                self.bdf(),
                vfio_text(&e)
            ))
        })?;
        self.irq_fds = fds;
        self.irq_kind = kind;
        Ok(())
    }

    fn disable_irqs(&mut self) -> Result<()> {
        let r = match self.irq_kind {
            IrqKind::MsiX => self.vdev.disable_msix(),
            IrqKind::Msi => self.vdev.disable_msi(),
            IrqKind::None => Ok(()),
        };
        self.irq_kind = IrqKind::None;
        self.irq_fds.clear();
        r.map_err(|e| {
            Error::Vfio(format!(
                "disabling interrupts of {}: {}",
                self.bdf(),
                vfio_text(&e)
            ))
        })
    }

    /// Interrupt kind and number of vectors wired to eventfds.
    pub fn irqs(&self) -> (IrqKind, u32) {
        (self.irq_kind, self.irq_fds.len() as u32)
    }

    /// Reset the device (function-level or whatever reset the kernel has for it), then switch
    /// memory decoding and bus mastering back on.
    pub fn reset(&mut self) -> Result<()> {
        // SAFETY: VFIO_DEVICE_RESET takes no argument; the fd is our open VFIO device.
        let rc = unsafe { vmm_sys_util::ioctl::ioctl(&self.file, VFIO_DEVICE_RESET()) };
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EINVAL) | Some(libc::ENOTTY) => Error::Vfio(format!(
                    "{} does not support reset (no FLR, PM or bus reset available to the kernel): reload the bitstream or power-cycle the host",
                    self.bdf()
                )),
                _ => Error::Vfio(format!("resetting {}: {e}", self.bdf())),
            });
        }
        if self.regs.is_some() {
            self.set_command(PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, true)?;
        }
        Ok(())
    }

    /// What the IOMMU allows, as read at open.
    pub fn iommu(&self) -> &IommuInfo {
        &self.iommu
    }

    /// How many more DMA mappings the container accepts, asked now (it falls as buffers are
    /// mapped and rises as they are unmapped: a leak shows here).
    pub fn dma_avail(&self) -> Result<Option<u32>> {
        Ok(iommu::query(&*self.container)?.dma_avail)
    }

    /// IOVA ranges mapped by this device object.
    pub fn dma_mapped(&self) -> Vec<Range<u64>> {
        self.dma
            .values()
            .map(|m| m.iova..m.iova + m.mapped as u64)
            .collect()
    }

    /// Allocate a buffer and map it at an IOVA the caller chooses. The range must be IOMMU-page
    /// aligned and inside what the IOMMU allows ([`Error::IovaOutOfRange`] otherwise).
    pub fn dma_map_at(&mut self, iova: u64, len: usize) -> Result<DmaRegion> {
        let page = self.iova.page();
        let mapped = self.round(len)?;
        if !iova.is_multiple_of(page) {
            return Err(Error::IovaMisaligned { iova, page });
        }
        if !self.iommu.allows(iova, mapped as u64) {
            return Err(Error::IovaOutOfRange {
                iova,
                end: iova.saturating_add(mapped as u64),
                allowed: self.iommu.ranges_text(),
            });
        }
        if !self.iova.reserve(iova, mapped as u64) {
            return Err(Error::IovaOverlap {
                iova,
                len: mapped as u64,
            });
        }
        self.map_buffer(iova, len, mapped)
    }

    fn round(&self, len: usize) -> Result<usize> {
        let page = self.iova.page() as usize;
        if len == 0 {
            return Err(Error::BadDmaLength {
                len,
                max: isize::MAX as usize & !(page - 1),
            });
        }
        len.checked_next_multiple_of(page)
            .ok_or(Error::BadDmaLength {
                len,
                max: isize::MAX as usize & !(page - 1),
            })
    }

    /// Map `mapped` bytes of fresh memory at `iova`, already reserved in the allocator.
    fn map_buffer(&mut self, iova: u64, len: usize, mapped: usize) -> Result<DmaRegion> {
        let mem = match MmapOptions::new().len(mapped).map_anon() {
            Ok(m) => MmapRaw::from(m),
            Err(source) => {
                self.iova.release(iova);
                return Err(Error::Io {
                    what: format!("allocating {mapped} bytes for DMA"),
                    source,
                });
            }
        };
        // SAFETY: `mem` is a fresh anonymous mapping of `mapped` bytes that this object owns and
        // keeps alive until the IOVA range is unmapped (dma_free / teardown unmap first, then
        // drop the memory). No reference to it is ever created: dma_read/dma_write copy through
        // raw pointers, and the device accesses it by DMA.
        let r = unsafe { self.container.vfio_dma_map(iova, mapped, mem.as_mut_ptr()) };
        if let Err(e) = r {
            self.iova.release(iova);
            return Err(match errno_of(&e) {
                Some(libc::ENOMEM) | Some(libc::EAGAIN) => Error::Vfio(format!(
                    "the kernel could not pin {mapped} bytes for DMA at IOVA {iova:#x}: raise the locked-memory limit (ulimit -l, or LimitMEMLOCK in the service)"
                )),
                Some(libc::ENOSPC) => Error::Vfio("the container has no DMA mappings left (vfio_iommu_type1 dma_entry_limit): free buffers first".into()),
                Some(libc::EEXIST) => Error::Vfio(format!("IOVA {iova:#x}+{mapped:#x} is already mapped in this container")),
                _ => Error::Vfio(format!("mapping {mapped} bytes at IOVA {iova:#x}: {}", vfio_text(&e))),
            });
        }
        let id = self.next_id;
        self.next_id += 1;
        self.dma.insert(
            id,
            DmaMapping {
                iova,
                mapped,
                len,
                mem,
            },
        );
        Ok(DmaRegion { id, iova, len })
    }

    fn mapping(&self, buf: &DmaRegion) -> Result<&DmaMapping> {
        match self.dma.get(&buf.id) {
            Some(m) if m.iova == buf.iova && m.len == buf.len => Ok(m),
            _ => Err(Error::UnknownBuffer(buf.id)),
        }
    }

    fn bar_map(&self, bar: Bar) -> Option<&BarMap> {
        match bar {
            Bar::Regs => self.regs.as_ref(),
            Bar::Rings => self.rings.as_ref(),
        }
    }

    fn bar_ptr(&self, bar: Bar, off: u64, len: u64) -> Result<*mut u8> {
        let m = self.bar_map(bar);
        check_bar(bar, m.map_or(0, |m| m.len), off, len)?;
        let m = m.ok_or(Error::BarRange {
            bar,
            off,
            len,
            bar_len: 0,
        })?;
        // check_bar proved off + len <= the mapping length, so the offset fits in usize.
        Ok(m.map.as_mut_ptr().wrapping_add(off as usize))
    }

    /// Undo everything: interrupts off, bus mastering off, every DMA mapping unmapped, BARs
    /// unmapped. Called by drop; call it yourself to see errors. Memory whose IOVA could not
    /// be unmapped is leaked on purpose, never freed under a live mapping.
    pub fn close(mut self) -> Result<()> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        let mut first_err = self.disable_irqs().err();
        if self.regs.is_some()
            && let Err(e) = self.set_command(PCI_COMMAND_MASTER, false)
        {
            first_err.get_or_insert(e);
        }
        for (_, m) in std::mem::take(&mut self.dma) {
            match self.container.vfio_dma_unmap(m.iova, m.mapped) {
                Ok(()) => drop(m.mem),
                Err(e) => {
                    std::mem::forget(m.mem);
                    first_err.get_or_insert(Error::Vfio(format!(
                        "unmapping IOVA {:#x}: {}",
                        m.iova,
                        vfio_text(&e)
                    )));
                }
            }
            self.iova.release(m.iova);
        }
        self.regs = None;
        self.rings = None;
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for VfioDevice {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}

impl std::fmt::Debug for VfioDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Device for VfioDevice {
    fn describe(&self) -> String {
        let bar = |m: &Option<BarMap>| {
            m.as_ref()
                .map_or("-".to_string(), |m| format!("BAR{} {:#x}", m.index, m.len))
        };
        format!(
            "vfio {} [{:04x}:{:04x}] iommu_group {} regs {} rings {} irq {:?} x{}",
            self.info.addr,
            self.info.vendor,
            self.info.device,
            self.info.group.unwrap_or(0),
            bar(&self.regs),
            bar(&self.rings),
            self.irq_kind,
            self.irq_fds.len()
        )
    }

    fn bar_len(&self, bar: Bar) -> u64 {
        self.bar_map(bar).map_or(0, |m| m.len)
    }

    fn read32(&mut self, bar: Bar, off: u64) -> Result<u32> {
        let p = self.bar_ptr(bar, off, 4)?;
        // SAFETY: bar_ptr checked that [off, off+4) lies inside the live BAR mapping and is
        // 4-byte aligned; MMIO is read with one volatile 32-bit load.
        let v = unsafe { std::ptr::read_volatile(p.cast::<u32>()) };
        // Orders this MMIO read before every later memory access, in particular reads of DMA
        // buffers (dma_read): a status register saying "done" must be seen before the data.
        fence(Ordering::SeqCst);
        Ok(v)
    }

    fn write32(&mut self, bar: Bar, off: u64, val: u32) -> Result<()> {
        let p = self.bar_ptr(bar, off, 4)?;
        // Orders every earlier store (DMA buffer contents from dma_write, WQEs) before this MMIO
        // store, so a doorbell or "start" register never overtakes the data it announces.
        fence(Ordering::SeqCst);
        // SAFETY: bar_ptr checked bounds and alignment inside the live BAR mapping.
        unsafe { std::ptr::write_volatile(p.cast::<u32>(), val) };
        Ok(())
    }

    fn push_wqe(&mut self, off: u64, wqe: &[u8; 64]) -> Result<()> {
        let p = self.bar_ptr(Bar::Rings, off, 64)?;
        for (i, w) in wqe.chunks_exact(8).enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            // SAFETY: bar_ptr checked that [off, off+64) is inside the live BAR2 mapping and
            // 64-byte aligned, so each 8-byte store at p + 8*i is in bounds and aligned.
            unsafe { std::ptr::write_volatile(p.add(8 * i).cast::<u64>(), u64::from_le_bytes(b)) };
        }
        // Orders the 64 WQE bytes (possibly held in a write-combining buffer when BAR2 is
        // mapped WC) before any later store, in particular the doorbell write to BAR0. On
        // x86-64 this must be SFENCE: WC stores are not ordered by the TSO rules.
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SFENCE only needs SSE, which every x86-64 CPU has; it touches no memory.
        unsafe {
            std::arch::x86_64::_mm_sfence()
        };
        #[cfg(not(target_arch = "x86_64"))]
        fence(Ordering::SeqCst);
        Ok(())
    }

    fn dma_alloc(&mut self, len: usize) -> Result<DmaRegion> {
        let mapped = self.round(len)?;
        let Some(iova) = self.iova.alloc(mapped as u64) else {
            return Err(Error::Vfio(format!(
                "no free IOVA space for {mapped:#x} bytes in window {:#x}..{:#x} (allowed: {}); free buffers or widen the window",
                self.opts.iova_window.start,
                self.opts.iova_window.end,
                self.iommu.ranges_text()
            )));
        };
        self.map_buffer(iova, len, mapped)
    }

    fn dma_free(&mut self, buf: DmaRegion) -> Result<()> {
        self.mapping(&buf)?;
        let Some(m) = self.dma.remove(&buf.id) else {
            return Err(Error::UnknownBuffer(buf.id));
        };
        if let Err(e) = self.container.vfio_dma_unmap(m.iova, m.mapped) {
            let msg = format!(
                "unmapping IOVA {:#x}: {}; the buffer stays mapped",
                m.iova,
                vfio_text(&e)
            );
            self.dma.insert(buf.id, m);
            return Err(Error::Vfio(msg));
        }
        self.iova.release(m.iova);
        drop(m.mem);
        Ok(())
    }

    fn dma_read(&mut self, buf: &DmaRegion, off: usize, out: &mut [u8]) -> Result<()> {
        buf.check(off, out.len())?;
        let m = self.mapping(buf)?;
        // SAFETY: buf.check and mapping() proved [off, off+len) lies inside the live mapping
        // (len <= mapped). The source is DMA memory read through a raw pointer, the
        // destination a distinct Rust slice. The device may be writing concurrently; the
        // driver protocol (status read in read32 + fence) makes it finished with these bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(m.mem.as_ptr().add(off), out.as_mut_ptr(), out.len())
        };
        Ok(())
    }

    fn dma_read_u8(&mut self, buf: &DmaRegion, off: usize) -> Result<u8> {
        buf.check(off, 1)?;
        let m = self.mapping(buf)?;
        // SAFETY: buf.check and mapping() proved that byte `off` lies inside the live mapping.
        // One volatile load: the compiler may neither split, repeat nor move it, so the CQ
        // poll's acquire fence that follows orders every later read of the CQE after it.
        Ok(unsafe { std::ptr::read_volatile(m.mem.as_ptr().add(off)) })
    }

    fn dma_write(&mut self, buf: &DmaRegion, off: usize, data: &[u8]) -> Result<()> {
        buf.check(off, data.len())?;
        let m = self.mapping(buf)?;
        // SAFETY: bounds as in dma_read; the destination is the mapping's memory, reached only
        // through raw pointers, the source a distinct slice.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), m.mem.as_mut_ptr().add(off), data.len())
        };
        Ok(())
    }

    fn relax(&mut self) {
        for _ in 0..64 {
            std::hint::spin_loop();
        }
        std::thread::yield_now();
    }

    fn now_ns(&mut self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn wait_irq(&mut self, vector: u32, timeout_ns: u64) -> Result<bool> {
        if self.irq_fds.is_empty() {
            return Err(Error::Vfio(format!(
                "interrupts are not enabled on {} (the device has no MSI/MSI-X, or it was opened with IrqMode::None)",
                self.bdf()
            )));
        }
        let Some(efd) = self.irq_fds.get(vector as usize) else {
            return Err(Error::NoSuchVector {
                vector,
                count: self.irq_fds.len() as u32,
            });
        };
        // A timeout too large for the clock means "wait as long as it takes".
        let deadline = Instant::now().checked_add(std::time::Duration::from_nanos(timeout_ns));
        loop {
            match efd.read() {
                Ok(_) => return Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(source) => {
                    return Err(Error::Io {
                        what: format!("reading the eventfd of vector {vector}"),
                        source,
                    });
                }
            }
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => std::time::Duration::from_secs(3600),
            };
            if left.is_zero() {
                return Ok(false);
            }
            let ts = libc::timespec {
                tv_sec: left.as_secs() as libc::time_t,
                tv_nsec: left.subsec_nanos() as libc::c_long,
            };
            let mut pfd = libc::pollfd {
                fd: efd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: pfd and ts are valid for the call; one pollfd; no signal mask change.
            let rc = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
            if rc < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(Error::Io {
                        what: format!("waiting for interrupt vector {vector}"),
                        source: e,
                    });
                }
            }
        }
    }
}

/// Fails with a clear error when VFIO cannot be used on this machine at all.
pub fn check_available() -> Result<()> {
    if !std::path::Path::new(sysfs::VFIO_CONTAINER).exists() {
        return Err(Error::NoVfio {
            path: sysfs::VFIO_CONTAINER.into(),
        });
    }
    Ok(())
}
