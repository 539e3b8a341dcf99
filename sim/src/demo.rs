//! The spine demo (the main job): two NICs, both opened through the driver, device info, the
//! DMA self-test on each, a frame across the link, a pcap of the wire, simulated cycles and
//! simulation speed.

use crate::device::{SimNic, world};
use crate::error::ensure;
use crate::pcap::to_pcap;
use crate::world::{NS_PER_CYCLE, WorldConfig};
use rnic::{Device, Rnic};
use rnic_abi::dmatest;
use std::fmt::Write;

/// What the demo measured.
#[derive(Debug, Clone)]
pub struct DemoReport {
    pub text: String,
    pub cycles: u64,
    pub wall_seconds: f64,
    pub pcap: Vec<u8>,
}

/// A test frame: broadcast-free unicast from `src` to `dst`, local experimental EtherType
/// 0x88B5, `len` bytes in all, payload a counter.
pub fn test_frame(dst: [u8; 6], src: [u8; 6], len: usize, tag: u8) -> Vec<u8> {
    let mut f = Vec::with_capacity(len);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x88, 0xB5]);
    let mut k = 0u8;
    while f.len() < len {
        f.push(tag ^ k);
        k = k.wrapping_add(1);
    }
    f.truncate(len);
    f
}

/// Run the demo.
pub fn run(cfg: WorldConfig) -> Result<DemoReport, crate::Error> {
    let t0 = std::time::Instant::now();
    let w = world(cfg);
    let mut out = String::new();
    let mut a = Rnic::open(SimNic::new(&w, 0)?)?;
    let mut b = Rnic::open(SimNic::new(&w, 1)?)?;
    for (name, nic) in [("A", &mut a), ("B", &mut b)] {
        writeln!(out, "NIC {name}: {}", nic.device().describe())?;
        writeln!(out, "{}", nic.info())?;
    }
    // DMA self-test on both NICs: an unaligned buffer spanning a 4 KiB boundary
    for (name, nic) in [("A", &mut a), ("B", &mut b)] {
        let buf = nic.device().dma_alloc(3 * 4096)?;
        let (off, len, seed) = (4096 - 37, 5000usize, 0x5A);
        let wr = nic.dmatest_write(&buf, off, len, seed)?;
        let mut host = vec![0u8; buf.len];
        nic.device().dma_read(&buf, 0, &mut host)?;
        let bad = (0..buf.len).filter(|&k| {
            let want = if k >= off && k < off + len {
                dmatest::pattern_byte(seed, (k - off) as u64)
            } else {
                0
            };
            host[k] != want
        });
        let bad = bad.count();
        let want_sum = dmatest::pattern_checksum(buf.iova + off as u64, len as u64, seed);
        ensure!(
            bad == 0,
            "NIC {name}: DMA self-test wrote {bad} wrong bytes"
        );
        ensure!(
            wr.checksum == want_sum,
            "NIC {name}: write checksum {:#x}, expected {want_sum:#x}",
            wr.checksum
        );
        let rd = nic.dmatest_read(&buf, off, len, seed)?;
        ensure!(
            rd.mismatches == 0 && rd.checksum == want_sum,
            "NIC {name}: read-back mismatches {} checksum {:#x}",
            rd.mismatches,
            rd.checksum
        );
        writeln!(
            out,
            "NIC {name}: DMA self-test {len} B at IOVA {:#x}: write {} cycles, read+verify {} cycles, checksum {:#010x}, 0 mismatches",
            buf.iova + off as u64,
            wr.cycles,
            rd.cycles,
            rd.checksum
        )?;
        nic.device().dma_free(buf)?;
    }
    // a frame across the link, A -> B
    let frame = test_frame(
        [0x02, 0, 0, 0, 0, 0x0B],
        [0x02, 0, 0, 0, 0, 0x0A],
        1000,
        0xA5,
    );
    let c0 = w.borrow().cycle;
    a.mac_send(&frame)?;
    let got = b.mac_recv(1, 1_000_000)?;
    let c1 = w.borrow().cycle;
    ensure!(
        got == frame,
        "frame arrived changed ({} bytes sent, {} received)",
        frame.len(),
        got.len()
    );
    let ca = a.mac_counters()?;
    let cb = b.mac_counters()?;
    writeln!(
        out,
        "frame A->B: {} bytes arrived unchanged ({} cycles from the first TX register write to the RX read-back); A tx {} / B rx {}",
        got.len(),
        c1 - c0,
        ca.tx_frames,
        cb.rx_frames
    )?;
    let rx = b.rx_stats()?;
    let drops: Vec<String> = rx
        .drops
        .iter()
        .filter(|d| d.1 > 0)
        .map(|(n, c)| format!("{n} {c}"))
        .collect();
    writeln!(
        out,
        "B RX checks (RoCE v2 parser + ICRC): {} good RoCE, {} bad ICRC, parser drops: {} (the demo frame is not RoCE)",
        rx.roce_ok,
        rx.icrc_bad,
        if drops.is_empty() {
            "none".to_string()
        } else {
            drops.join(", ")
        }
    )?;
    let wall = t0.elapsed().as_secs_f64();
    let cycles = w.borrow().cycle;
    let frames: Vec<_> = w.borrow().wire.iter().map(|(_, f)| f.clone()).collect();
    let pcap = to_pcap(frames.iter())?;
    writeln!(
        out,
        "simulated {} cycles = {:.1} us at 250 MHz in {:.2} s wall: {:.0} cycles/s (two-NIC world)",
        cycles,
        cycles as f64 * NS_PER_CYCLE / 1000.0,
        wall,
        cycles as f64 / wall
    )?;
    Ok(DemoReport {
        text: out,
        cycles,
        wall_seconds: wall,
        pcap,
    })
}
