//! Generator of `docs/REGISTERS.md` from the contract.

use crate::layout::FieldDesc;
use crate::{params, pcie, queue, regs};
use std::fmt::Write;

fn table(out: &mut String, title: &str, size: usize, fields: &[FieldDesc]) {
    let _ = writeln!(out, "### {title} ({size} bytes)\n");
    let _ = writeln!(
        out,
        "| byte offset | bits | field | meaning |\n|---|---|---|---|"
    );
    for f in fields {
        let _ = writeln!(
            out,
            "| {} | {} | `{}` | {} |",
            f.offset, f.bits, f.name, f.doc
        );
    }
    out.push('\n');
}

/// The whole register document as Markdown.
pub fn markdown() -> String {
    let mut o = String::new();
    o.push_str("# rnic register map and host/device layouts\n\n");
    o.push_str("Generated from the `rnic-abi` crate by `cargo run -p rnic-abi --bin rnic-regdoc`; do not edit by hand\n");
    o.push_str("(the test `regdoc_is_fresh` fails when this file is stale).\n\n");
    let p = params::DEFAULT;
    o.push_str("## PCIe identity\n\n| item | value |\n|---|---|\n");
    let _ = writeln!(
        o,
        "| vendor:device | `{:04x}:{:04x}` |",
        pcie::VENDOR_ID,
        pcie::DEVICE_ID
    );
    let _ = writeln!(
        o,
        "| subsystem | `{:04x}:{:04x}` |",
        pcie::SUBSYSTEM_VENDOR_ID,
        pcie::SUBSYSTEM_ID
    );
    let _ = writeln!(o, "| class | `{:06x}` |", pcie::CLASS_CODE);
    let _ = writeln!(
        o,
        "| BAR0 (registers, AXI4-Lite `s_axil`) | {} bytes |",
        pcie::BAR0_BYTES
    );
    let _ = writeln!(
        o,
        "| BAR2 (WQE rings, AXI4 `s_axi_wqe`) | {} bytes |\n",
        pcie::BAR2_BYTES
    );
    o.push_str("## Build parameters (default build)\n\n| parameter | value |\n|---|---|\n");
    let _ = writeln!(
        o,
        "| QPs | {} |\n| CQs | {} |\n| MR entries | {} |\n| SQ depth | {} |\n| RQ depth | {} |\n| max MTU | {} |\n| datapath | {} bits |\n| nominal clock | {} kHz |\n| ring memory | {} bytes |\n",
        p.num_qps,
        p.num_cqs,
        p.num_mrs,
        p.sq_depth,
        p.rq_depth,
        p.max_mtu,
        p.datapath_bits,
        p.clock_khz,
        p.ring_bytes()
    );
    o.push_str("## BAR0: self-describing blocks\n\n");
    o.push_str("Every block begins with `TYPE` (+0x0), `VERSION` (+0x4: major 31:16, minor 15:0) and `NEXT` (+0x8: BAR0 offset of the next block, 0 = last).\n");
    o.push_str("All registers are 32-bit; reserved offsets read 0 and ignore writes.\n\n");
    for b in regs::BLOCKS {
        let _ = writeln!(
            o,
            "### Block `{}` at 0x{:04x}: type 0x{:04x}, version {}.{}, next 0x{:04x}\n",
            b.name, b.base, b.kind, b.major, b.minor, b.next
        );
        let _ = writeln!(o, "{}\n", b.doc);
        o.push_str("| offset | name | access | meaning |\n|---|---|---|---|\n");
        let _ = writeln!(
            o,
            "| 0x{:04x} | TYPE | RO | 0x{:04x} |",
            b.base + regs::BLK_TYPE,
            b.kind
        );
        let _ = writeln!(
            o,
            "| 0x{:04x} | VERSION | RO | 0x{:08x} |",
            b.base + regs::BLK_VERSION,
            b.version_word()
        );
        let _ = writeln!(
            o,
            "| 0x{:04x} | NEXT | RO | 0x{:04x} |",
            b.base + regs::BLK_NEXT,
            b.next
        );
        for r in b.regs {
            let _ = writeln!(
                o,
                "| 0x{:04x} | {} | {} | {} |",
                r.offset,
                r.name,
                r.access.as_str(),
                r.doc
            );
        }
        for w in b.windows {
            let _ = writeln!(
                o,
                "| 0x{:04x}..0x{:04x} | {} (window) | {} | {} |",
                w.offset,
                w.offset + w.bytes - 1,
                w.name,
                w.access.as_str(),
                w.doc
            );
        }
        o.push('\n');
    }
    o.push_str("## BAR2: WQE rings\n\n");
    let _ = writeln!(
        o,
        "Slot `i` of QP `q`'s send queue is at `(q * {sq} + i % {sq}) * 64`; receive queues follow all send queues: `({n} * {sq} + q * {rq} + i % {rq}) * 64`.",
        sq = p.sq_depth,
        rq = p.rq_depth,
        n = p.num_qps
    );
    o.push_str("The host writes whole 64-byte WQEs (write-combined bursts), then rings the doorbell with the new producer index.\n\n");
    o.push_str("## Doorbell word\n\nBits 15:0 queue number, bits 31:16 new producer index (SQ/RQ) or consumer index (CQ), modulo 2^16.\n\n");
    o.push_str("## Records\n\n");
    table(&mut o, "WQE", queue::Wqe::SIZE, queue::Wqe::FIELDS);
    table(&mut o, "CQE", queue::Cqe::SIZE, queue::Cqe::FIELDS);
    table(
        &mut o,
        "QP context (context table 0)",
        queue::QpContext::SIZE,
        queue::QpContext::FIELDS,
    );
    table(
        &mut o,
        "CQ context (context table 1)",
        queue::CqContext::SIZE,
        queue::CqContext::FIELDS,
    );
    table(
        &mut o,
        "MR entry (context table 2)",
        queue::MrEntry::SIZE,
        queue::MrEntry::FIELDS,
    );
    o.push_str("## DMA self-test pattern and checksum\n\nByte `i` of the buffer is `(SEED + i) mod 256`. The checksum walks the 64-byte-aligned beats covering the buffer, zeroes bytes outside it, folds each beat to 32 bits by XOR of its 16 little-endian words and accumulates `acc = rotl(acc, 1) ^ fold` (reference: `rnic_abi::dmatest::checksum`).\n");
    o
}
