//! Benchmarks in simulated cycles (deterministic) plus the simulator's own speed (wall clock,
//! reported, never asserted).

use crate::device::{SimNic, world};
use crate::world::{NS_PER_CYCLE, WorldConfig};
use rnic::{Device, Rnic};
use std::fmt::Write;

/// Run the benchmarks; returns a Markdown report.
pub fn run(cfg: WorldConfig) -> Result<String, crate::Error> {
    let mut out = String::new();
    let w = world(cfg);
    let mut a = Rnic::open(SimNic::new(&w, 0)?)?;
    writeln!(
        out,
        "| measurement | simulated cycles | at 250 MHz |\n|---|---|---|"
    )?;
    // MMIO read round trip as the driver sees it
    let c0 = w.borrow().cycle;
    for _ in 0..100 {
        a.read_reg(rnic_abi::regs::dev::SCRATCH)?;
    }
    let per = (w.borrow().cycle - c0) as f64 / 100.0;
    writeln!(
        out,
        "| BAR0 register read (PCIe round trip model 150 cycles) | {per:.1} | {:.0} ns |",
        per * NS_PER_CYCLE
    )?;
    // DMA self-test throughput (engine-side cycles, from the device's CYCLES register)
    let buf = a.device().dma_alloc(64 * 1024)?;
    for len in [64usize, 4096, 65536] {
        let wr = a.dmatest_write(&buf, 0, len, 1)?;
        let rd = a.dmatest_read(&buf, 0, len, 1)?;
        for (dir, c) in [("write", wr.cycles), ("read+verify", rd.cycles)] {
            let gbps = len as f64 * 8.0 / (c as f64 * NS_PER_CYCLE);
            writeln!(
                out,
                "| DMA self-test {dir} {len} B | {c} | {:.0} ns, {gbps:.1} Gb/s |",
                c as f64 * NS_PER_CYCLE
            )?;
        }
    }
    drop(a);
    // simulator speed: a two-NIC world, idle and with frames on both links
    let w2 = world(WorldConfig {
        seed: cfg.seed,
        ..cfg
    });
    let mut b0 = Rnic::open(SimNic::new(&w2, 0)?)?;
    let t = std::time::Instant::now();
    let n = 200_000;
    w2.borrow_mut().run(n);
    let idle = n as f64 / t.elapsed().as_secs_f64();
    let frame = crate::demo::test_frame([2, 0, 0, 0, 0, 0xB], [2, 0, 0, 0, 0, 0xA], 1500, 3);
    let t = std::time::Instant::now();
    let c0 = w2.borrow().cycle;
    for _ in 0..20 {
        b0.mac_send(&frame)?;
        b0.mac_tx_wait()?;
    }
    let busy = (w2.borrow().cycle - c0) as f64 / t.elapsed().as_secs_f64();
    writeln!(
        out,
        "\nSimulator speed (wall clock, this machine): two-NIC world idle {idle:.0} cycles/s; with the driver sending 1500-byte frames {busy:.0} cycles/s."
    )?;
    Ok(out)
}
