//! The IOMMU side of a VFIO container: what IOVAs it allows (VFIO_IOMMU_GET_INFO with its
//! capability chain) and a small first-fit IOVA allocator inside those ranges.

use crate::error::{Error, Result};
use std::ops::Range;
use std::os::fd::AsRawFd;
use vfio_bindings::bindings::vfio::{
    VFIO_BASE, VFIO_IOMMU_INFO_CAPS, VFIO_IOMMU_INFO_PGSIZES, VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE,
    VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL, VFIO_TYPE,
};

vmm_sys_util::ioctl_io_nr!(VFIO_IOMMU_GET_INFO, VFIO_TYPE as u32, VFIO_BASE + 12);

/// What the container's IOMMU reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IommuInfo {
    /// Supported IOMMU page sizes (bit n set: 2^n bytes).
    pub pgsizes: u64,
    /// IOVA ranges that can be mapped (end exclusive). Without the capability: everything.
    pub ranges: Vec<Range<u64>>,
    /// How many more DMA mappings the container accepts (the kernel's dma_entry_limit minus
    /// the mappings in place), if the kernel reports it.
    pub dma_avail: Option<u32>,
}

impl IommuInfo {
    /// Smallest IOMMU page size (at least 4 KiB): IOVA and length alignment of a mapping.
    pub fn page_size(&self) -> u64 {
        let p = self.pgsizes & self.pgsizes.wrapping_neg();
        p.max(4096)
    }

    /// The ranges as text for messages.
    pub fn ranges_text(&self) -> String {
        let v: Vec<String> = self
            .ranges
            .iter()
            .map(|r| format!("{:#x}..{:#x}", r.start, r.end))
            .collect();
        if v.is_empty() {
            "no IOVA at all".into()
        } else {
            v.join(", ")
        }
    }

    /// Is `[iova, iova+len)` inside one allowed range?
    pub fn allows(&self, iova: u64, len: u64) -> bool {
        match iova.checked_add(len) {
            Some(end) => self.ranges.iter().any(|r| r.start <= iova && end <= r.end),
            None => false,
        }
    }
}

/// Query the IOMMU of a container that has a group attached and its IOMMU type set.
pub fn query(container: &impl AsRawFd) -> Result<IommuInfo> {
    // The header of struct vfio_iommu_type1_info: argsz u32, flags u32, iova_pgsizes u64,
    // cap_offset u32, pad u32 (24 bytes). A u64 buffer keeps the 8-byte alignment the kernel's
    // structures expect.
    let mut argsz = 24u32;
    for _ in 0..2 {
        let mut buf = vec![0u64; (argsz as usize).div_ceil(8)];
        buf[0] = argsz as u64; // little endian: argsz in the low u32, flags 0
        // SAFETY: VFIO_IOMMU_GET_INFO reads argsz and writes at most argsz bytes into the
        // buffer, which is at least argsz bytes long and lives across the call.
        let rc = unsafe {
            vmm_sys_util::ioctl::ioctl_with_mut_ptr(
                container,
                VFIO_IOMMU_GET_INFO(),
                buf.as_mut_ptr(),
            )
        };
        if rc < 0 {
            return Err(Error::Vfio(format!(
                "VFIO_IOMMU_GET_INFO failed: {} (is a group attached to the container?)",
                std::io::Error::last_os_error()
            )));
        }
        let bytes: Vec<u8> = buf.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let need = u32_at(&bytes, 0).unwrap_or(0);
        if need > argsz && argsz == 24 {
            argsz = need; // the capability chain does not fit: ask again with the size it needs
            continue;
        }
        return Ok(parse(&bytes));
    }
    Err(Error::Vfio(
        "VFIO_IOMMU_GET_INFO keeps asking for a bigger buffer".into(),
    ))
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(off..off + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(off..off + 8)?.try_into().ok()?))
}
fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(off..off + 2)?.try_into().ok()?))
}

/// Parse a vfio_iommu_type1_info buffer (header + capability chain). Malformed chains are cut
/// short, never read out of bounds.
pub fn parse(b: &[u8]) -> IommuInfo {
    let flags = u32_at(b, 4).unwrap_or(0);
    let pgsizes = if flags & VFIO_IOMMU_INFO_PGSIZES != 0 {
        u64_at(b, 8).unwrap_or(0)
    } else {
        0
    };
    let mut info = IommuInfo {
        pgsizes,
        ranges: std::iter::once(0..u64::MAX).collect(),
        dma_avail: None,
    };
    if flags & VFIO_IOMMU_INFO_CAPS == 0 {
        return info;
    }
    let mut off = u32_at(b, 16).unwrap_or(0) as usize;
    let mut hops = 0;
    while off != 0 && hops < 16 {
        hops += 1;
        let (Some(id), Some(next)) = (u16_at(b, off), u32_at(b, off + 4)) else {
            break;
        };
        if id as u32 == VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE {
            let n = u32_at(b, off + 8).unwrap_or(0) as usize;
            let mut ranges = Vec::new();
            for i in 0..n.min(1024) {
                let base = off + 16 + 16 * i;
                let (Some(s), Some(e)) = (u64_at(b, base), u64_at(b, base + 8)) else {
                    break;
                };
                ranges.push(s..e.saturating_add(1)); // the kernel's end is inclusive
            }
            info.ranges = ranges;
        } else if id as u32 == VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL {
            info.dma_avail = u32_at(b, off + 8);
        }
        if next as usize <= off {
            break;
        }
        off = next as usize;
    }
    info
}

/// First-fit IOVA allocator over the allowed ranges intersected with a window.
#[derive(Debug, Clone)]
pub struct IovaAllocator {
    free_space: Vec<Range<u64>>,
    page: u64,
    used: Vec<Range<u64>>,
}

impl IovaAllocator {
    /// `window`: where the caller wants its IOVAs (e.g. below a device's DMA address limit).
    pub fn new(info: &IommuInfo, window: Range<u64>) -> Self {
        let page = info.page_size();
        let mut free_space = Vec::new();
        for r in &info.ranges {
            let s = r.start.max(window.start).max(page); // never hand out IOVA 0
            let e = r.end.min(window.end);
            let s = s.div_ceil(page).saturating_mul(page);
            let e = e / page * page;
            if s < e {
                free_space.push(s..e);
            }
        }
        IovaAllocator {
            free_space,
            page,
            used: Vec::new(),
        }
    }

    /// Page size (alignment of every IOVA and length).
    pub fn page(&self) -> u64 {
        self.page
    }

    /// Pick a free, page-aligned IOVA range of `len` bytes (rounded up to pages).
    pub fn alloc(&mut self, len: u64) -> Option<u64> {
        let len = len.checked_next_multiple_of(self.page)?.max(self.page);
        for r in &self.free_space {
            let mut at = r.start;
            loop {
                let end = at.checked_add(len)?;
                if end > r.end {
                    break;
                }
                match self.used.iter().find(|u| u.start < end && at < u.end) {
                    Some(u) => at = u.end,
                    None => {
                        self.insert(at..end);
                        return Some(at);
                    }
                }
            }
        }
        None
    }

    /// Reserve an IOVA range the caller chose; false if it overlaps a range in use.
    pub fn reserve(&mut self, iova: u64, len: u64) -> bool {
        let Some(end) = iova.checked_add(len) else {
            return false;
        };
        if self.used.iter().any(|u| u.start < end && iova < u.end) {
            return false;
        }
        self.insert(iova..end);
        true
    }

    fn insert(&mut self, r: Range<u64>) {
        let at = self.used.partition_point(|u| u.start < r.start);
        self.used.insert(at, r);
    }

    /// Give a range back.
    pub fn release(&mut self, iova: u64) {
        self.used.retain(|u| u.start != iova);
    }

    /// Ranges in use.
    pub fn in_use(&self) -> &[Range<u64>] {
        &self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info_bytes(ranges: &[(u64, u64)], avail: Option<u32>) -> Vec<u8> {
        let mut b = vec![0u8; 24];
        b[4..8].copy_from_slice(&(VFIO_IOMMU_INFO_PGSIZES | VFIO_IOMMU_INFO_CAPS).to_ne_bytes());
        b[8..16].copy_from_slice(&0x4020_1000u64.to_ne_bytes());
        b[16..20].copy_from_slice(&24u32.to_ne_bytes());
        // IOVA range cap
        let next = if avail.is_some() {
            24 + 16 + 16 * ranges.len() as u32
        } else {
            0
        };
        b.extend_from_slice(&(VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE as u16).to_ne_bytes());
        b.extend_from_slice(&1u16.to_ne_bytes());
        b.extend_from_slice(&next.to_ne_bytes());
        b.extend_from_slice(&(ranges.len() as u32).to_ne_bytes());
        b.extend_from_slice(&0u32.to_ne_bytes());
        for (s, e) in ranges {
            b.extend_from_slice(&s.to_ne_bytes());
            b.extend_from_slice(&e.to_ne_bytes());
        }
        if let Some(a) = avail {
            b.extend_from_slice(&(VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL as u16).to_ne_bytes());
            b.extend_from_slice(&1u16.to_ne_bytes());
            b.extend_from_slice(&0u32.to_ne_bytes());
            b.extend_from_slice(&a.to_ne_bytes());
            b.extend_from_slice(&0u32.to_ne_bytes());
        }
        let n = b.len() as u32;
        b[0..4].copy_from_slice(&n.to_ne_bytes());
        b
    }

    #[test]
    fn parses_ranges_and_avail() {
        let b = info_bytes(
            &[(0, 0xfedf_ffff), (0xfef0_0000, 0x7f_ffff_ffff)],
            Some(65000),
        );
        let i = parse(&b);
        assert_eq!(i.page_size(), 4096);
        assert_eq!(i.ranges, vec![0..0xfee0_0000, 0xfef0_0000..0x80_0000_0000]);
        assert_eq!(i.dma_avail, Some(65000));
        assert!(i.allows(0x1000, 0x2000));
        assert!(!i.allows(0xfee0_0000, 0x1000));
        assert!(!i.allows(0x7f_ffff_f000, 0x2000));
        assert!(!i.allows(u64::MAX, 2));
    }

    #[test]
    fn truncated_chain_is_safe() {
        let b = info_bytes(&[(0, 0xffff)], None);
        for n in 0..b.len() {
            let _ = parse(&b[..n]);
        }
    }

    #[test]
    fn allocator_first_fit_and_window() {
        let i = parse(&info_bytes(
            &[(0, 0xfedf_ffff), (0xfef0_0000, 0x7f_ffff_ffff)],
            None,
        ));
        let mut a = IovaAllocator::new(&i, 0x10_0000..0x1000_0000);
        let x = a.alloc(1).unwrap();
        let y = a.alloc(0x2000).unwrap();
        assert_eq!((x, y), (0x10_0000, 0x10_1000));
        a.release(x);
        assert_eq!(a.alloc(0x1000), Some(0x10_0000));
        assert_eq!(a.alloc(0x2000), Some(0x10_3000));
        assert!(a.alloc(0x1000_0000).is_none());
        assert!(!a.reserve(0x10_1000, 0x1000));
        assert!(a.reserve(0x20_0000, 0x1000));
        // the window straddling the MSI hole is cut at the hole
        let mut b = IovaAllocator::new(&i, 0xfed0_0000..0xff00_0000);
        assert_eq!(b.alloc(0x10_0000), Some(0xfed0_0000));
        assert_eq!(b.alloc(0x10_0000), Some(0xfef0_0000));
    }
}
