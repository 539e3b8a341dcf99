//! rnic-vm-guest: the checks that run inside the test VM (see tests/vm/run.sh).
//!
//! `rnic-vm-guest MODE`, MODE one of:
//! * `novfio`  before the vfio modules are loaded: opening fails with "no /dev/vfio".
//! * `main`    IOMMU on, edu bound to vfio-pci: registers, DMA both ways, blocked DMA,
//!   interrupts, every error path, teardown, and the `rnic` CLI.
//! * `noiommu` booted without an IOMMU: opening fails with "IOMMU off".
//! * `asuser BDF` (internal) try to open BDF; print the error.
//!
//! Prints `PASS name: detail` / `FAIL name: detail` per check and `guest MODE: N passed, M
//! failed`; exits non-zero if any check failed.

mod edu;

use edu::Edu;
use rnic::vfio::{BarSpec, PciAddr, PciInfo, VfioDevice, find_by_id};
use rnic::{Bar, Device, Rnic};
use std::os::unix::process::CommandExt;
use std::process::Command;

const SEC: u64 = 1_000_000_000;

struct Tally {
    pass: u32,
    fail: u32,
}

impl Tally {
    fn check(&mut self, name: &str, ok: bool, detail: impl AsRef<str>) {
        let d = detail.as_ref().replace('\n', " | ");
        if ok {
            self.pass += 1;
            println!("PASS {name}: {d}");
        } else {
            self.fail += 1;
            println!("FAIL {name}: {d}");
        }
    }

    /// Expect an error whose message contains every one of `needles`.
    fn expect_err<T>(&mut self, name: &str, r: rnic::Result<T>, needles: &[&str]) {
        match r {
            Ok(_) => self.check(name, false, "succeeded, expected an error"),
            Err(e) => {
                let m = e.to_string();
                let missing: Vec<&&str> = needles.iter().filter(|n| !m.contains(**n)).collect();
                self.check(
                    name,
                    missing.is_empty(),
                    format!(
                        "error: {m}{}",
                        if missing.is_empty() {
                            String::new()
                        } else {
                            format!(" (missing {missing:?})")
                        }
                    ),
                );
            }
        }
    }
}

fn pci(vendor: u16, device: u16) -> Vec<PciInfo> {
    find_by_id(vendor, device).unwrap_or_default()
}

fn group_size(info: &PciInfo) -> usize {
    info.group
        .and_then(|g| std::fs::read_dir(format!("/sys/kernel/iommu_groups/{g}/devices")).ok())
        .map_or(0, |d| d.count())
}

/// Lines of /proc/self/maps that belong to VFIO (BAR mappings).
fn vfio_maps() -> Vec<String> {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("vfio"))
        .map(str::to_string)
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("");
    let mut t = Tally { pass: 0, fail: 0 };
    match mode {
        "novfio" => novfio(&mut t),
        "main" => main_checks(&mut t),
        "noiommu" => noiommu(&mut t),
        "asuser" => {
            let r = PciAddr::parse(args.get(2).map(String::as_str).unwrap_or(""))
                .and_then(|a| VfioDevice::open(&a, edu::options()));
            match r {
                Ok(_) => println!("OPENED"),
                Err(e) => println!("ERROR {e}"),
            }
            return;
        }
        _ => {
            eprintln!("usage: rnic-vm-guest novfio|main|noiommu");
            std::process::exit(2);
        }
    }
    println!("guest {mode}: {} passed, {} failed", t.pass, t.fail);
    std::process::exit(if t.fail == 0 { 0 } else { 1 });
}

fn novfio(t: &mut Tally) {
    let edus = pci(edu::VENDOR, edu::DEVICE);
    t.check(
        "novfio-find",
        !edus.is_empty(),
        format!("{} edu devices", edus.len()),
    );
    let Some(e) = edus.first() else { return };
    t.expect_err(
        "novfio-open",
        VfioDevice::open(&e.addr, edu::options()),
        &["/dev/vfio/vfio does not exist", "modprobe vfio-pci"],
    );
    t.expect_err(
        "novfio-check-available",
        rnic::vfio::check_available(),
        &["/dev/vfio/vfio does not exist"],
    );
}

fn noiommu(t: &mut Tally) {
    let edus = pci(edu::VENDOR, edu::DEVICE);
    let Some(e) = edus.first() else {
        t.check("noiommu-find", false, "no edu device");
        return;
    };
    t.check(
        "noiommu-no-group",
        e.group.is_none(),
        format!("{} group {:?} driver {}", e.addr, e.group, e.driver_name()),
    );
    t.expect_err(
        "noiommu-open",
        VfioDevice::open(&e.addr, edu::options()),
        &["has no IOMMU group", "IOMMU is off", "intel_iommu=on"],
    );
    t.expect_err(
        "noiommu-open-by-id",
        VfioDevice::open_by_id(edu::VENDOR, edu::DEVICE, edu::options()),
        &["IOMMU is off"],
    );
    let out = Command::new("rnic")
        .args(["list", "--id", "1234:11e8"])
        .output();
    let text = out
        .as_ref()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    t.check(
        "noiommu-cli-list",
        text.contains(e.addr.as_str()) && text.contains("IOMMU off"),
        text.trim(),
    );
}

fn main_checks(t: &mut Tally) {
    // --- the devices QEMU was given (tests/vm/run.sh): edu alone in its group (the device
    // under test), edu + pci-serial behind a conventional bridge (one non-viable group),
    // pci-testdev with no driver.
    let edus = pci(edu::VENDOR, edu::DEVICE);
    let main_edu = edus
        .iter()
        .find(|d| d.is_vfio() && group_size(d) == 1)
        .cloned();
    let shared_edu = edus.iter().find(|d| group_size(d) > 1).cloned();
    let serial = pci(0x1b36, 0x0002).into_iter().next();
    let testdev = pci(0x1b36, 0x0005).into_iter().next();
    t.check(
        "topology",
        main_edu.is_some() && shared_edu.is_some() && serial.is_some() && testdev.is_some(),
        format!(
            "edu {:?}, shared-group edu {:?}, serial {:?}, testdev {:?}",
            main_edu
                .as_ref()
                .map(|d| (d.addr.to_string(), d.group, d.driver_name().to_string())),
            shared_edu
                .as_ref()
                .map(|d| (d.addr.to_string(), d.group, d.driver_name().to_string())),
            serial
                .as_ref()
                .map(|d| (d.addr.to_string(), d.driver_name().to_string())),
            testdev
                .as_ref()
                .map(|d| (d.addr.to_string(), d.driver_name().to_string()))
        ),
    );
    let Some(main_edu) = main_edu else { return };
    let addr = main_edu.addr.clone();

    // --- error paths that need the group closed
    if let Some(d) = &testdev {
        t.expect_err(
            "err-unbound",
            VfioDevice::open(&d.addr, edu::options()),
            &[
                "is not bound to vfio-pci (driver: none)",
                "driver_override",
                "drivers_probe",
            ],
        );
    }
    if let Some(d) = &serial {
        t.expect_err(
            "err-bound-elsewhere",
            VfioDevice::open(&d.addr, edu::options()),
            &["is not bound to vfio-pci (driver: serial)", "driver/unbind"],
        );
    }
    if let (Some(d), Some(s)) = (&shared_edu, &serial) {
        t.expect_err(
            "err-group-not-viable",
            VfioDevice::open(&d.addr, edu::options()),
            &["is not viable", &format!("{} is bound to serial", s.addr)],
        );
    }
    t.expect_err(
        "err-open-by-id-ambiguous",
        VfioDevice::open_by_id(edu::VENDOR, edu::DEVICE, edu::options()),
        &["bound to vfio-pci", "pick one by PCI address"],
    );
    t.expect_err(
        "err-no-such-device",
        VfioDevice::open(
            &PciAddr::parse("0000:7f:1f.7").unwrap_or(addr.clone()),
            edu::options(),
        ),
        &["no PCI device at 0000:7f:1f.7"],
    );
    t.expect_err(
        "err-no-card",
        VfioDevice::open_rnic(),
        &["no PCI device 10ee:7f52 found"],
    );
    let mut big = edu::options();
    big.regs.min_len = 2 << 20;
    t.expect_err(
        "err-bar-too-small",
        VfioDevice::open(&addr, big),
        &[
            "BAR0 of",
            "is 0x100000 bytes, the driver needs at least 0x200000",
        ],
    );
    let mut rings = edu::options();
    rings.rings = Some(BarSpec {
        index: 2,
        min_len: 4096,
    });
    t.expect_err(
        "err-bar-missing",
        VfioDevice::open(&addr, rings),
        &["BAR2 of", "is 0x0 bytes"],
    );
    t.check(
        "err-paths-leave-nothing-mapped",
        vfio_maps().is_empty(),
        format!("{:?}", vfio_maps()),
    );
    let me = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "rnic-vm-guest".into());
    match Command::new(&me)
        .args(["asuser", addr.as_str()])
        .uid(65534)
        .gid(65534)
        .output()
    {
        Ok(o) => {
            let s = String::from_utf8_lossy(&o.stdout).trim().to_string();
            t.check(
                "err-permission-denied",
                s.contains("permission denied opening /dev/vfio/") && s.contains("run as root"),
                s,
            );
        }
        Err(e) => t.check(
            "err-permission-denied",
            false,
            format!("could not run as uid 65534: {e}"),
        ),
    }

    // --- open the device under test
    let dev = match VfioDevice::open(&addr, edu::options()) {
        Ok(d) => d,
        Err(e) => {
            t.check("open", false, e.to_string());
            return;
        }
    };
    t.check("open-after-failed-opens", true, dev.describe());
    let r0 = dev.region(0);
    t.check(
        "bar0-region",
        r0.size == 1 << 20 && r0.mappable(),
        format!(
            "BAR0 size {:#x} flags {:#x} offset {:#x}",
            r0.size, r0.flags, r0.offset
        ),
    );
    let cmd = dev.command().unwrap_or(0);
    t.check(
        "bus-master-on",
        cmd & 0x6 == 0x6,
        format!("command register {cmd:#06x}"),
    );
    let io = dev.iommu().clone();
    t.check(
        "iommu-ranges",
        io.page_size() == 4096 && !io.ranges.is_empty() && !io.allows(0xfee0_0000, 4096),
        format!(
            "page {:#x}, allowed {}, dma_avail {:?}",
            io.page_size(),
            io.ranges_text(),
            io.dma_avail
        ),
    );
    let (kind, n) = dev.irqs();
    t.check("irq-wired", n == 1, format!("{kind:?} x{n}"));
    let mut e = Edu::new(dev);

    // --- registers through the mmapped BAR
    let id = e.id();
    t.check(
        "reg-id",
        matches!(id, Ok(edu::ID_VALUE)),
        format!("{id:x?}"),
    );
    let mut live_ok = true;
    let mut seen = Vec::new();
    for v in [0x1234_5678u32, 0, 0xffff_ffff, 0xa5a5_5a5a] {
        let r = e.liveness(v).unwrap_or(v);
        live_ok &= r == !v;
        seen.push(format!("{v:#x}->{r:#x}"));
    }
    t.check("reg-scratch-liveness", live_ok, seen.join(" "));
    t.expect_err(
        "bar-out-of-range",
        e.dev.read32(Bar::Regs, 1 << 20),
        &["outside the BAR"],
    );
    t.expect_err(
        "bar-misaligned",
        e.dev.write32(Bar::Regs, 2, 0),
        &["misaligned"],
    );
    t.expect_err(
        "bar-absent",
        e.dev.push_wqe(0, &[0u8; 64]),
        &["Rings access", "0x0 bytes"],
    );

    // --- DMA through the IOMMU, both directions, across page boundaries
    let avail0 = e.dev.dma_avail().ok().flatten();
    let buf = match e.dev.dma_alloc(3 * 4096) {
        Ok(b) => b,
        Err(err) => {
            t.check("dma-alloc", false, err.to_string());
            return;
        }
    };
    let avail1 = e.dev.dma_avail().ok().flatten();
    t.check(
        "dma-alloc",
        buf.iova % 4096 == 0
            && (0x10_0000..0x1000_0000).contains(&buf.iova)
            && avail1.zip(avail0).is_some_and(|(a, b)| a + 1 == b),
        format!(
            "iova {:#x} len {:#x}; mappings left {avail0:?} -> {avail1:?}",
            buf.iova, buf.len
        ),
    );
    let pat = |i: usize| (i as u8).wrapping_mul(13) ^ 0x5a;
    let src: Vec<u8> = (0..buf.len).map(pat).collect();
    let (h2d_off, d2h_off, n) = (0xc00usize, 0x1c00usize, 0x800usize); // 0xc00..0x1400 and 0x1c00..0x2400 cross pages
    let ok_w = e.dev.dma_write(&buf, 0, &src).is_ok();
    let ok1 = e
        .dma(
            buf.iova + h2d_off as u64,
            edu::DEV_BUF,
            n as u32,
            false,
            false,
            5 * SEC,
        )
        .unwrap_or(false);
    let ok_z = e.dev.dma_write(&buf, 0, &vec![0u8; buf.len]).is_ok();
    let ok2 = e
        .dma(
            edu::DEV_BUF,
            buf.iova + d2h_off as u64,
            n as u32,
            true,
            false,
            5 * SEC,
        )
        .unwrap_or(false);
    let mut got = vec![0u8; buf.len];
    let ok_r = e.dev.dma_read(&buf, 0, &mut got).is_ok();
    let want = |i: usize| {
        if (d2h_off..d2h_off + n).contains(&i) {
            pat(i - d2h_off + h2d_off)
        } else {
            0
        }
    };
    let bad = (0..buf.len).filter(|&i| got[i] != want(i)).count();
    t.check(
        "dma-host-to-device",
        ok_w && ok1,
        format!(
            "{n:#x} bytes from iova {:#x} (crosses a page) into the device, done={ok1}",
            buf.iova + h2d_off as u64
        ),
    );
    t.check(
        "dma-device-to-host-verified",
        ok_z && ok2 && ok_r && bad == 0,
        format!(
            "{n:#x} bytes back to iova {:#x} (crosses a page), {bad} of {} bytes differ",
            buf.iova + d2h_off as u64,
            buf.len
        ),
    );

    // --- DMA to an IOVA that is not mapped: blocked by the IOMMU, buffer untouched
    let before = got.clone();
    let hole = buf.iova + buf.len as u64 + 0x10_0000; // in the window, never mapped
    let ok3 = e
        .dma(edu::DEV_BUF, hole, 0x100, true, false, 5 * SEC)
        .unwrap_or(false);
    let ok4 = e
        .dma(
            edu::DEV_BUF,
            buf.iova + buf.len as u64,
            0x100,
            true,
            false,
            5 * SEC,
        )
        .unwrap_or(false); // just past the buffer
    let mut after = vec![0u8; buf.len];
    let _ = e.dev.dma_read(&buf, 0, &mut after);
    let id2 = e.id().unwrap_or(0);
    t.check(
        "dma-unmapped-iova-blocked",
        ok3 && ok4 && after == before && id2 == edu::ID_VALUE,
        format!("DMA to {hole:#x} and {:#x} (unmapped) finished={}, mapped buffer unchanged={}, device alive={}", buf.iova + buf.len as u64, ok3 && ok4, after == before, id2 == edu::ID_VALUE),
    );

    // --- interrupts through eventfds
    let _ = e.ack();
    let quiet = e.dev.wait_irq(0, 50_000_000);
    t.check(
        "irq-none-pending",
        matches!(quiet, Ok(false)),
        format!("{quiet:?}"),
    );
    let _ = e.raise(1);
    let fired = e.dev.wait_irq(0, 2 * SEC);
    let st = e.ack().unwrap_or(0);
    t.check(
        "irq-raise-eventfd",
        matches!(fired, Ok(true)) && st & 1 == 1,
        format!("wait_irq {fired:?}, status {st:#x}"),
    );
    let _ = e.raise(1);
    let fired = e.dev.wait_irq(0, u64::MAX); // "forever": must not overflow the clock
    let st = e.ack().unwrap_or(0);
    t.check(
        "irq-wait-unbounded",
        matches!(fired, Ok(true)) && st & 1 == 1,
        format!("wait_irq {fired:?}, status {st:#x}"),
    );
    let ok5 = e
        .dma(buf.iova, edu::DEV_BUF, 64, false, true, 5 * SEC)
        .unwrap_or(false);
    let fired = e.dev.wait_irq(0, 2 * SEC);
    let st = e.ack().unwrap_or(0);
    t.check(
        "irq-dma-done-eventfd",
        ok5 && matches!(fired, Ok(true)) && st & edu::IRQ_DMA != 0,
        format!("wait_irq {fired:?}, status {st:#x}"),
    );
    t.expect_err(
        "irq-bad-vector",
        e.dev.wait_irq(3, 1000),
        &["interrupt vector 3"],
    );

    // --- IOVA checks and mapping accounting
    let a = e.dev.dma_avail().ok().flatten();
    t.expect_err(
        "err-iova-msi-window",
        e.dev.dma_map_at(0xfee0_0000, 4096),
        &["IOVA range 0xfee00000..0xfee01000 is outside what the IOMMU allows"],
    );
    t.expect_err(
        "err-iova-too-high",
        e.dev.dma_map_at(1 << 60, 4096),
        &["is outside what the IOMMU allows"],
    );
    t.expect_err(
        "err-iova-overlap",
        e.dev.dma_map_at(buf.iova, 4096),
        &["overlaps"],
    );
    let b = e.dev.dma_avail().ok().flatten();
    t.check(
        "err-iova-leaves-no-mapping",
        a.is_some() && a == b,
        format!("mappings left {a:?} -> {b:?}"),
    );
    let at = e.dev.dma_map_at(0x0800_0000, 4096);
    let c = e.dev.dma_avail().ok().flatten();
    let freed = at.map(|x| e.dev.dma_free(x));
    let d = e.dev.dma_avail().ok().flatten();
    t.check(
        "dma-map-at-and-free",
        matches!(freed, Ok(Ok(()))) && c.zip(b).is_some_and(|(c, b)| c + 1 == b) && d == b,
        format!("map_at 0x8000000 + free: mappings left {b:?} -> {c:?} -> {d:?}"),
    );
    t.expect_err(
        "err-double-free",
        e.dev.dma_free(rnic::DmaRegion {
            id: 999,
            iova: 0,
            len: 1,
        }),
        &["unknown or freed DMA buffer"],
    );

    // --- reset
    match e.dev.reset() {
        Ok(()) => {
            let id = e.id().unwrap_or(0);
            let cmd = e.dev.command().unwrap_or(0);
            t.check(
                "reset",
                id == edu::ID_VALUE && cmd & 0x6 == 0x6,
                format!("reset ok; id {id:#x}, command {cmd:#06x}"),
            );
        }
        Err(err) => {
            let m = err.to_string();
            t.check(
                "reset",
                m.contains("does not support reset"),
                format!("error: {m}"),
            );
        }
    }

    // --- teardown: close with a buffer still mapped; nothing stays mapped, group reusable
    let dev = e.dev;
    let closed = dev.close();
    t.check(
        "close-with-live-buffer",
        closed.is_ok() && vfio_maps().is_empty(),
        format!("{closed:?}, vfio maps left {:?}", vfio_maps()),
    );
    match VfioDevice::open(&addr, edu::options()) {
        Ok(d) => {
            let a = d.dma_avail().ok().flatten();
            t.check(
                "reopen-clean",
                d.dma_mapped().is_empty() && a.is_some_and(|a| a >= 65535),
                format!("mappings left {a:?}"),
            );
            // The same driver code as on the card: rnic's open refuses edu by its magic.
            let r = Rnic::open(d);
            t.expect_err(
                "driver-open-refuses-edu",
                r.map(|_| ()),
                &["not an rnic device"],
            );
        }
        Err(err) => t.check("reopen-clean", false, err.to_string()),
    }
    t.check(
        "drop-unmaps-bars",
        vfio_maps().is_empty(),
        format!("{:?}", vfio_maps()),
    );

    // --- the rnic CLI against the same devices
    let run = |args: &[&str]| -> (bool, String) {
        match Command::new("rnic").args(args).output() {
            Ok(o) => (
                o.status.success(),
                format!(
                    "{}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                ),
            ),
            Err(err) => (false, format!("cannot run rnic: {err}")),
        }
    };
    let (ok, out) = run(&["list", "--id", "1234:11e8"]);
    t.check(
        "cli-list",
        ok && out.contains(addr.as_str()) && out.contains("ready") && out.contains("not viable"),
        out.trim(),
    );
    let (ok, out) = run(&["list"]);
    t.check(
        "cli-list-none",
        ok && out.contains("no rnic card"),
        out.trim(),
    );
    let (ok, out) = run(&["info", "--pci", addr.as_str()]);
    t.check(
        "cli-info-not-rnic",
        !ok && out.contains("BAR2 of") && out.contains(addr.as_str()),
        out.trim(),
    );
    let (ok, out) = run(&["info", "--pci", addr.as_str(), "--raw"]);
    t.check(
        "cli-info-raw",
        ok && out.contains("BAR0") && out.contains("IOVA") && out.contains("0x010000ed"),
        out.trim(),
    );
    let (ok, out) = run(&["info"]);
    t.check(
        "cli-info-no-card",
        !ok && out.contains("no PCI device 10ee:7f52 found"),
        out.trim(),
    );
}
