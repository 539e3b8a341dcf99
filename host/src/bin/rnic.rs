//! `rnic`: find rnic cards and show what the driver reads from them.
//!
//! * `rnic list [--id VVVV:DDDD]`: PCI devices with our vendor/device id (from rnic-abi), their
//!   driver, IOMMU group, and whether the VFIO backend can open them.
//! * `rnic info [--pci BDF] [--raw]`: open a card through VFIO and print what the driver reads
//!   (register blocks, versions, build parameters), plus the VFIO view (BARs, IOMMU, interrupts).
//!   `--raw` skips the rnic driver and only prints the VFIO view and the first BAR0 words, for
//!   any PCI device bound to vfio-pci.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use rnic::vfio::{BarSpec, IrqMode, PciAddr, PciInfo, VfioDevice, VfioOptions, find_by_id, sysfs};
use rnic::{Bar, Device, Rnic};

#[derive(Parser)]
#[command(
    name = "rnic",
    version,
    about = "rnic RoCE v2 NIC: find cards and read what the driver sees"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List PCI devices with the rnic vendor/device id and whether VFIO can open them.
    List {
        /// Vendor:device id to look for instead of rnic's (hex, e.g. 10ee:7f52).
        #[arg(long, value_parser = parse_id)]
        id: Option<(u16, u16)>,
    },
    /// Open a card through VFIO and print what the driver reads from it.
    Info {
        /// PCI address (dddd:bb:dd.f); default: the one rnic card bound to vfio-pci.
        #[arg(long)]
        pci: Option<String>,
        /// Only the VFIO view (BARs, IOMMU, interrupts, first BAR0 words): any vfio-pci device.
        #[arg(long, requires = "pci")]
        raw: bool,
    },
}

fn parse_id(s: &str) -> std::result::Result<(u16, u16), String> {
    let (v, d) = s
        .split_once(':')
        .ok_or_else(|| format!("'{s}': expected VVVV:DDDD (hex)"))?;
    let h =
        |x: &str| u16::from_str_radix(x, 16).map_err(|_| format!("'{x}' is not a 16-bit hex id"));
    Ok((h(v)?, h(d)?))
}

fn status(d: &PciInfo) -> String {
    match sysfs::precheck(&d.addr) {
        Ok(_) => "ready (vfio-pci)".into(),
        Err(rnic::Error::IommuOff { .. }) => "IOMMU off (no IOMMU group)".into(),
        Err(rnic::Error::NotBoundToVfio { driver, .. }) => {
            format!("not bound to vfio-pci (driver: {driver})")
        }
        Err(rnic::Error::GroupNotViable { group, why, .. }) => {
            format!("group {group} not viable: {why}")
        }
        Err(e) => e.to_string(),
    }
}

fn list(id: Option<(u16, u16)>) -> Result<()> {
    let (v, d) = id.unwrap_or((rnic_abi::pcie::VENDOR_ID, rnic_abi::pcie::DEVICE_ID));
    let devs = find_by_id(v, d)?;
    if devs.is_empty() {
        println!("no rnic card ({v:04x}:{d:04x}) found on the PCI bus");
        return Ok(());
    }
    println!(
        "{:<14} {:<10} {:<10} {:<6} status",
        "address", "id", "driver", "group"
    );
    for x in &devs {
        let g = x.group.map_or("-".to_string(), |g| g.to_string());
        println!(
            "{:<14} {:04x}:{:04x}  {:<10} {:<6} {}",
            x.addr,
            x.vendor,
            x.device,
            x.driver_name(),
            g,
            status(x)
        );
    }
    Ok(())
}

fn print_vfio(dev: &VfioDevice) -> Result<()> {
    println!("{}", dev.describe());
    for i in 0..6 {
        let r = dev.region(i);
        if r.size > 0 {
            println!(
                "  BAR{i}: {:#x} bytes, VFIO flags {:#x}{}",
                r.size,
                r.flags,
                if r.mappable() { " (mmap)" } else { "" }
            );
        }
    }
    println!("  command register {:#06x}", dev.command()?);
    let io = dev.iommu();
    println!(
        "  IOMMU page {:#x}, IOVA ranges {}, DMA mappings left {:?}",
        io.page_size(),
        io.ranges_text(),
        io.dma_avail
    );
    println!(
        "  BAR2 mapping: uncached (VFIO maps every BAR UC; write combining is not available through VFIO)"
    );
    Ok(())
}

fn info(pci: Option<String>, raw: bool) -> Result<()> {
    if raw {
        let addr = PciAddr::parse(pci.as_deref().unwrap_or_default())?;
        let opts = VfioOptions {
            regs: BarSpec {
                index: 0,
                min_len: 4,
            },
            rings: None,
            iova_window: 0..u64::MAX,
            irq: IrqMode::None,
            max_vectors: 0,
            reset_on_open: false,
        };
        let mut dev = VfioDevice::open(&addr, opts)
            .with_context(|| format!("opening {addr} through VFIO"))?;
        print_vfio(&dev)?;
        let n = dev.bar_len(Bar::Regs).min(16);
        let words: Vec<String> = (0..n / 4)
            .map(|i| dev.read32(Bar::Regs, 4 * i).map(|w| format!("{w:#010x}")))
            .collect::<rnic::Result<_>>()?;
        println!("  BAR0[0x00..{n:#x}]: {}", words.join(" "));
        dev.close()?;
        return Ok(());
    }
    let dev = match &pci {
        Some(p) => VfioDevice::open(&PciAddr::parse(p)?, VfioOptions::rnic()),
        None => VfioDevice::open_rnic(),
    }
    .context("opening the rnic card through VFIO")?;
    print_vfio(&dev)?;
    let nic = Rnic::open(dev).context("reading the card's register blocks")?;
    println!("{}", nic.info());
    Ok(())
}

fn main() {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::List { id } => list(id),
        Cmd::Info { pci, raw } => info(pci, raw),
    };
    if let Err(e) = r {
        eprintln!("rnic: {e:#}");
        std::process::exit(1);
    }
}
