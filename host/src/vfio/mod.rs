//! VFIO backend (real hardware). Placeholder until the VFIO issue lands: opening fails with a
//! clear error.
use crate::error::{Error, Result};

/// Fails: the VFIO backend is not built yet.
pub fn check_available() -> Result<()> {
    if !std::path::Path::new("/dev/vfio/vfio").exists() {
        return Err(Error::Vfio("/dev/vfio/vfio does not exist: load the vfio-pci module (modprobe vfio-pci) and enable the IOMMU (intel_iommu=on or amd_iommu=on)".into()));
    }
    Ok(())
}
