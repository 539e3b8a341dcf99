//! Benchmarks in simulated cycles (deterministic) plus the simulator's own speed (wall clock,
//! reported, never asserted).

use crate::demo::{BenchOp, Rig, wire_limit_gbps};
use crate::device::{SimNic, world};
use crate::world::{NS_PER_CYCLE, WorldConfig};
use rnic::verbs::{Context, Mtu, PortAddr};
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

    // RDMA between two NICs through the verbs API
    let w2 = world(cfg);
    let ca = Context::new(Rnic::open(SimNic::new(&w2, 0)?)?, PortAddr::sim(1)?)?;
    let cb = Context::new(Rnic::open(SimNic::new(&w2, 1)?)?, PortAddr::sim(2)?)?;
    let mut rig = Rig::new(&w2, &ca, &cb, 64 * 1024 + 4096)?;
    let (qa, qb) = rig.connect(Mtu::Mtu4096)?;
    writeln!(
        out,
        "\nRC A -> B through the verbs API, path MTU 4096, 32 WQEs outstanding, all signaled; goodput = message bytes / (cycles from the first post to the last completion) at 250 MHz; wire limit = payload / (payload + 54 header + 16 RETH on the first packet + 4 ICRC + 24 preamble/FCS/IFG per packet) x 100 Gb/s, per message.\n"
    )?;
    writeln!(
        out,
        "| op | bytes | messages | cycles | cycles/msg | goodput | wire limit | share of the wire limit | Mpps |\n|---|---|---|---|---|---|---|---|---|"
    )?;
    let t = std::time::Instant::now();
    let c0 = w2.borrow().cycle;
    for (op, size, iters) in [
        (BenchOp::Write, 4096usize, 256usize),
        (BenchOp::Write, 65536, 32),
        (BenchOp::Send, 4096, 256),
        (BenchOp::Send, 65536, 32),
        (BenchOp::Write, 64, 256),
    ] {
        let r = rig.measure(&qa, &qb, op, size, iters, 32)?;
        rig.audit()?;
        w2.borrow_mut().wire.clear();
        let limit = wire_limit_gbps(op, size, 4096);
        writeln!(
            out,
            "| {} | {size} | {iters} | {} | {:.1} | {:.2} Gb/s | {limit:.2} Gb/s | {:.1}% | {:.3} |",
            op.name(),
            r.cycles,
            r.cycles_per_msg(),
            r.gbps(),
            100.0 * r.gbps() / limit,
            r.mpps()
        )?;
    }
    let rdma_speed = (w2.borrow().cycle - c0) as f64 / t.elapsed().as_secs_f64();
    qa.destroy()?;
    qb.destroy()?;
    drop(rig);
    drop((ca, cb));

    // simulator speed: a two-NIC world, idle and with frames on both links
    let w3 = world(cfg);
    let mut b0 = Rnic::open(SimNic::new(&w3, 0)?)?;
    let t = std::time::Instant::now();
    let n = 200_000;
    w3.borrow_mut().run(n);
    let idle = n as f64 / t.elapsed().as_secs_f64();
    let frame = crate::demo::test_frame([2, 0, 0, 0, 0, 0xB], [2, 0, 0, 0, 0, 0xA], 1500, 3);
    let t = std::time::Instant::now();
    let c0 = w3.borrow().cycle;
    for _ in 0..20 {
        b0.mac_send(&frame)?;
        b0.mac_tx_wait()?;
    }
    let busy = (w3.borrow().cycle - c0) as f64 / t.elapsed().as_secs_f64();
    writeln!(
        out,
        "\nSimulator speed (wall clock, this machine): two-NIC world idle {idle:.0} cycles/s; with the driver sending 1500-byte frames {busy:.0} cycles/s; during the RDMA runs above {rdma_speed:.0} cycles/s."
    )?;
    Ok(out)
}
