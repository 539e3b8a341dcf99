//! What sysfs says about PCI devices: addresses, ids, drivers, IOMMU groups. Used to find a card
//! and to explain, before any ioctl, why it cannot be opened. No `unsafe` here.

use crate::error::{Error, Result};
use std::fmt;
use std::path::{Path, PathBuf};

/// Root of the PCI device tree in sysfs.
pub const PCI_DEVICES: &str = "/sys/bus/pci/devices";
/// Root of the IOMMU groups in sysfs.
pub const IOMMU_GROUPS: &str = "/sys/kernel/iommu_groups";
/// The VFIO container device.
pub const VFIO_CONTAINER: &str = "/dev/vfio/vfio";

/// A PCI address in canonical form `dddd:bb:dd.f`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PciAddr(String);

impl PciAddr {
    /// Parse `dddd:bb:dd.f` or `bb:dd.f` (domain 0 implied), hex digits, any case.
    pub fn parse(s: &str) -> Result<Self> {
        let bad = || Error::BadPciAddress(s.to_string());
        let s = s.trim();
        let parts: Vec<&str> = s.split(':').collect();
        let (dom, bus, devfn) = match parts.as_slice() {
            [d, b, df] => (*d, *b, *df),
            [b, df] => ("0000", *b, *df),
            _ => return Err(bad()),
        };
        let (dev, func) = devfn.split_once('.').ok_or_else(bad)?;
        let hex = |t: &str, max_len: usize| -> Result<u32> {
            if t.is_empty() || t.len() > max_len || !t.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(bad());
            }
            u32::from_str_radix(t, 16).map_err(|_| bad())
        };
        let (dom, bus, dev, func) = (hex(dom, 4)?, hex(bus, 2)?, hex(dev, 2)?, hex(func, 1)?);
        if dev > 0x1f || func > 7 {
            return Err(bad());
        }
        Ok(PciAddr(format!("{dom:04x}:{bus:02x}:{dev:02x}.{func:x}")))
    }

    /// The canonical string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The device's sysfs directory.
    pub fn sysfs(&self) -> PathBuf {
        Path::new(PCI_DEVICES).join(&self.0)
    }
}

impl fmt::Display for PciAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One PCI device as sysfs shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PciInfo {
    pub addr: PciAddr,
    pub vendor: u16,
    pub device: u16,
    /// Name of the bound kernel driver, if any.
    pub driver: Option<String>,
    /// IOMMU group number; `None` when the IOMMU is off.
    pub group: Option<u32>,
}

impl PciInfo {
    /// Read a device's sysfs entries.
    pub fn read(addr: &PciAddr) -> Result<Self> {
        let dir = addr.sysfs();
        if !dir.exists() {
            return Err(Error::Vfio(format!(
                "no PCI device at {addr} ({} does not exist): check the address with lspci -D, or use `rnic list`",
                dir.display()
            )));
        }
        Ok(PciInfo {
            addr: addr.clone(),
            vendor: read_hex(&dir.join("vendor"))?,
            device: read_hex(&dir.join("device"))?,
            driver: link_name(&dir.join("driver")),
            group: link_name(&dir.join("iommu_group")).and_then(|g| g.parse().ok()),
        })
    }

    /// The driver name for messages.
    pub fn driver_name(&self) -> &str {
        self.driver.as_deref().unwrap_or("none")
    }

    /// Bound to vfio-pci?
    pub fn is_vfio(&self) -> bool {
        self.driver.as_deref() == Some("vfio-pci")
    }
}

fn read_hex(p: &Path) -> Result<u16> {
    let s = std::fs::read_to_string(p).map_err(|source| Error::Io {
        what: format!("reading {}", p.display()),
        source,
    })?;
    let t = s.trim().trim_start_matches("0x");
    u16::from_str_radix(t, 16).map_err(|_| {
        Error::Vfio(format!(
            "{} holds '{}', not a hex id",
            p.display(),
            s.trim()
        ))
    })
}

fn link_name(p: &Path) -> Option<String> {
    let target = std::fs::read_link(p).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

/// All PCI devices with the given vendor/device id, sorted by address.
pub fn find_by_id(vendor: u16, device: u16) -> Result<Vec<PciInfo>> {
    let dir = match std::fs::read_dir(PCI_DEVICES) {
        Ok(d) => d,
        Err(source) => {
            return Err(Error::Io {
                what: format!("listing {PCI_DEVICES} (is sysfs mounted?)"),
                source,
            });
        }
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(addr) = PciAddr::parse(&name) else {
            continue;
        };
        if let Ok(info) = PciInfo::read(&addr)
            && info.vendor == vendor
            && info.device == device
        {
            out.push(info);
        }
    }
    out.sort_by(|a, b| a.addr.cmp(&b.addr));
    Ok(out)
}

/// The shell commands that bind `addr` to vfio-pci.
pub fn bind_fix(info: &PciInfo) -> String {
    let a = &info.addr;
    let mut s = String::from("modprobe vfio-pci; ");
    s += &format!("echo vfio-pci > {PCI_DEVICES}/{a}/driver_override; ");
    if info.driver.is_some() {
        s += &format!("echo {a} > {PCI_DEVICES}/{a}/driver/unbind; ");
    }
    s += &format!("echo {a} > /sys/bus/pci/drivers_probe");
    s
}

/// Drivers the kernel accepts in a viable group besides vfio-pci (bridges and the stub).
const VIABLE_DRIVERS: &[&str] = &["vfio-pci", "pci-stub", "pcieport"];

/// Why the IOMMU group is not viable, from sysfs, or `None` if it looks viable.
pub fn group_problem(group: u32) -> Option<String> {
    let dir = Path::new(IOMMU_GROUPS)
        .join(group.to_string())
        .join("devices");
    let mut bad = Vec::new();
    for e in std::fs::read_dir(&dir).ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(addr) = PciAddr::parse(&name) else {
            continue;
        };
        let Ok(info) = PciInfo::read(&addr) else {
            continue;
        };
        if let Some(d) = &info.driver
            && !VIABLE_DRIVERS.contains(&d.as_str())
        {
            bad.push(format!("{addr} is bound to {d}"));
        }
    }
    bad.sort();
    if bad.is_empty() {
        None
    } else {
        Some(bad.join(", "))
    }
}

/// Everything that can be checked before touching /dev/vfio: the device exists, the IOMMU is on,
/// it is bound to vfio-pci, its group is viable, the VFIO device nodes exist.
pub fn precheck(addr: &PciAddr) -> Result<PciInfo> {
    let info = PciInfo::read(addr)?;
    if !Path::new(VFIO_CONTAINER).exists() {
        return Err(Error::NoVfio {
            path: VFIO_CONTAINER.into(),
        });
    }
    let Some(group) = info.group else {
        return Err(Error::IommuOff {
            bdf: addr.to_string(),
        });
    };
    if !info.is_vfio() {
        return Err(Error::NotBoundToVfio {
            bdf: addr.to_string(),
            driver: info.driver_name().into(),
            fix: bind_fix(&info),
        });
    }
    if let Some(why) = group_problem(group) {
        return Err(Error::GroupNotViable {
            bdf: addr.to_string(),
            group,
            why,
        });
    }
    let node = format!("/dev/vfio/{group}");
    if !Path::new(&node).exists() {
        return Err(Error::NoVfio { path: node });
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_addresses() {
        assert_eq!(
            PciAddr::parse("0000:01:00.0").unwrap().as_str(),
            "0000:01:00.0"
        );
        assert_eq!(PciAddr::parse("3B:00.1").unwrap().as_str(), "0000:3b:00.1");
        assert_eq!(PciAddr::parse("1:2:3.4").unwrap().as_str(), "0001:02:03.4");
        for bad in [
            "",
            "0000:01:00",
            "00:20.0",
            "00:1f.8",
            "x:00:00.0",
            "0:0:0:0.0",
            "00000:00:00.0",
        ] {
            let e = PciAddr::parse(bad).unwrap_err().to_string();
            assert!(e.contains("not a PCI address"), "{bad}: {e}");
        }
    }

    #[test]
    fn missing_device_is_a_clear_error() {
        let e = PciInfo::read(&PciAddr::parse("7fff:ff:1f.7").unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no PCI device at 7fff:ff:1f.7"), "{e}");
    }

    #[test]
    fn bind_fix_names_the_steps() {
        let info = PciInfo {
            addr: PciAddr::parse("00:03.0").unwrap(),
            vendor: 1,
            device: 2,
            driver: Some("serial".into()),
            group: Some(3),
        };
        let f = bind_fix(&info);
        assert!(
            f.contains("driver_override")
                && f.contains("driver/unbind")
                && f.contains("drivers_probe"),
            "{f}"
        );
    }
}
