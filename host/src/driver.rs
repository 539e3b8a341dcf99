//! The driver proper: open a device, read what it is, and use the spine's engines (DMA
//! self-test, MAC debug path, doorbells, context store, WQE rings).

use crate::device::{Bar, Device, DmaRegion};
use crate::error::{Error, Result};
use rnic_abi::params::BuildParams;
use rnic_abi::regs::{self, ctx, db, dev, dmat, mac, rxs};

/// What `open()` read from the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Engine version: (major, minor, patch).
    pub hw_version: (u8, u8, u16),
    /// Device block version (major, minor).
    pub abi_version: (u16, u16),
    /// Build parameters reported by the device.
    pub params: BuildParams,
    /// Bytes of BAR2 ring memory.
    pub ring_bytes: u32,
    /// Blocks found on the chain: (name, type, major, minor, offset).
    pub blocks: Vec<(&'static str, u16, u16, u16, u32)>,
}

impl std::fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = &self.params;
        writeln!(
            f,
            "rnic engine {}.{}.{}, register ABI {}.{}",
            self.hw_version.0,
            self.hw_version.1,
            self.hw_version.2,
            self.abi_version.0,
            self.abi_version.1
        )?;
        writeln!(
            f,
            "  QPs {} ({} with deep rings)  CQs {}  MRs {}  SQ/RQ depth {}/{} (deep {})  max MTU {}  READ/atomic depth {}",
            p.num_qps,
            p.deep_qps,
            p.num_cqs,
            p.num_mrs,
            p.sq_depth,
            p.rq_depth,
            p.deep_depth,
            p.max_mtu,
            p.rd_atomic
        )?;
        writeln!(
            f,
            "  datapath {} bits at {} MHz  ring memory {} KiB",
            p.datapath_bits,
            p.clock_khz / 1000,
            self.ring_bytes / 1024
        )?;
        write!(f, "  blocks:")?;
        for (name, kind, maj, min, off) in &self.blocks {
            write!(f, " {name}@{off:#06x}(type {kind:#x} v{maj}.{min})")?;
        }
        Ok(())
    }
}

/// Result of a DMA self-test operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaTestResult {
    pub checksum: u32,
    pub mismatches: u32,
    pub cycles: u32,
}

/// Counters of the MAC debug path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MacCounters {
    pub tx_frames: u32,
    pub rx_frames: u32,
    pub rx_bytes: u32,
    pub rx_errors: u32,
}

/// Counters of the RX checks (header parser + ICRC) and the last good RoCE frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RxStats {
    pub roce_ok: u32,
    pub icrc_bad: u32,
    pub last_opcode: u8,
    pub last_qpn: u32,
    pub last_psn: u32,
    /// Parser drops per reason, named as in `rnic_abi::regs::rxs::DROP_REASONS`.
    pub drops: Vec<(&'static str, u32)>,
}

impl RxStats {
    /// Drops for one reason (0 for an unknown name).
    pub fn drops_for(&self, reason: &str) -> u32 {
        self.drops
            .iter()
            .find(|(n, _)| *n == reason)
            .map_or(0, |(_, c)| *c)
    }
}

/// Largest table the driver accepts from a device: the context mailbox carries a 16-bit index.
pub const MAX_TABLE_ENTRIES: u32 = 1 << 16;
/// Largest SQ/RQ depth: ring indices are free-running 16-bit numbers, and the full/empty
/// distinction needs a ring of at most half their range.
pub const MAX_QUEUE_DEPTH: u32 = 1 << 15;

/// Check the build parameters a device reports before anything is sized or indexed by them:
/// a zero or oversized table, a queue depth that is zero or not a power of two, an MTU the
/// transport does not have or a ring memory whose size overflows is a typed error, never a
/// panic, a division by zero or a huge allocation.
pub fn check_params(p: &BuildParams) -> Result<()> {
    let bad = |name: &'static str, value: u32, why: &'static str| {
        Err(Error::BadDeviceParam {
            name,
            value: value as u64,
            why,
        })
    };
    for (name, v) in [
        ("NUM_QPS", p.num_qps),
        ("NUM_CQS", p.num_cqs),
        ("NUM_MRS", p.num_mrs),
    ] {
        if v == 0 || v > MAX_TABLE_ENTRIES {
            return bad(name, v, "a table must have 1..=65536 entries");
        }
    }
    for (name, v) in [
        ("SQ_DEPTH", p.sq_depth),
        ("RQ_DEPTH", p.rq_depth),
        ("DEEP_DEPTH", p.deep_depth),
    ] {
        if !v.is_power_of_two() || v > MAX_QUEUE_DEPTH {
            return bad(name, v, "a queue depth must be a power of two in 1..=32768");
        }
    }
    if p.deep_qps >= p.num_qps || !(p.deep_qps == 0 || p.deep_qps.is_power_of_two()) {
        return bad(
            "DEEP_QPS",
            p.deep_qps,
            "deep-ring QPs must be 0 or a power of two below NUM_QPS",
        );
    }
    if rnic_abi::roce::mtu_bytes_to_enum(p.max_mtu).is_none() {
        return bad("MAX_MTU", p.max_mtu, "not an IBTA MTU (256..4096)");
    }
    if !p.rd_atomic.is_power_of_two() || p.rd_atomic > rnic_abi::params::RD_ATOMIC_MAX {
        return bad(
            "RD_ATOMIC",
            p.rd_atomic,
            "outstanding READ/atomic operations per QP must be a power of two in 1..=128",
        );
    }
    if p.checked_ring_bytes().is_none() {
        return bad(
            "NUM_QPS",
            p.num_qps,
            "the ring regions (QPs x (SQ + RQ depth) + deep QPs x 2 x deep depth, 64 bytes a WQE) overflow 32 bits",
        );
    }
    Ok(())
}

/// An opened rnic device.
pub struct Rnic<D: Device> {
    dev: D,
    info: DeviceInfo,
}

/// Driver-side timeouts, in device nanoseconds.
const CMD_TIMEOUT_NS: u64 = 1_000_000;
/// STATUS.READY after a reset: about 5 x `num_qps` cycles (1.3 ms for 65,536 QPs at 250 MHz).
const READY_TIMEOUT_NS: u64 = 20_000_000;
const DMA_TIMEOUT_NS: u64 = 20_000_000;

impl<D: Device> Rnic<D> {
    /// Open a device: walk the register blocks, check magic and versions, read the build
    /// parameters, then wait until the engine reports STATUS.READY (the per-QP state it
    /// sweeps after a reset). Refuses anything that is not an rnic of a major version this
    /// driver knows.
    pub fn open(mut dev: D) -> Result<Self> {
        let info = Self::probe(&mut dev)?;
        let mut r = Rnic { dev, info };
        r.wait_until("engine ready (STATUS.READY)", READY_TIMEOUT_NS, |s| {
            Ok(s.read_reg(dev::STATUS)? & dev::STATUS_READY != 0)
        })?;
        Ok(r)
    }

    fn probe(dev: &mut D) -> Result<DeviceInfo> {
        let r = |dev: &mut D, off: u32| dev.read32(Bar::Regs, off as u64);
        let ty = r(dev, dev::BASE + regs::BLK_TYPE)?;
        let magic = r(dev, dev::MAGIC)?;
        if magic != dev::MAGIC_VALUE {
            return Err(Error::NotRnic {
                found: magic,
                expected: dev::MAGIC_VALUE,
            });
        }
        if ty as u16 != regs::kind::DEVICE || ty >> 16 != 0 {
            return Err(Error::WrongBlock {
                off: dev::BASE,
                found: ty as u16,
                expected: regs::kind::DEVICE,
            });
        }
        // walk the chain
        let mut blocks = Vec::new();
        let mut off = 0u32;
        let mut visited = 0;
        loop {
            if visited >= 64 {
                return Err(Error::BrokenChain {
                    off,
                    why: "more than 64 blocks (loop?)".into(),
                });
            }
            visited += 1;
            if off as u64 + 0xC > dev.bar_len(Bar::Regs) || !off.is_multiple_of(4) {
                return Err(Error::BrokenChain {
                    off,
                    why: "NEXT points outside BAR0 or is misaligned".into(),
                });
            }
            let kind = r(dev, off + regs::BLK_TYPE)? as u16;
            let ver = r(dev, off + regs::BLK_VERSION)?;
            let next = r(dev, off + regs::BLK_NEXT)?;
            let (major, minor) = ((ver >> 16) as u16, ver as u16);
            let known = regs::BLOCKS.iter().find(|b| b.kind == kind);
            let name = known.map_or("unknown", |b| b.name);
            if let Some(b) = known
                && major != b.major
            {
                return Err(Error::UnsupportedVersion {
                    block: b.name,
                    found: major,
                    supported: b.major,
                });
            }
            blocks.push((name, kind, major, minor, off));
            if next == 0 {
                break;
            }
            if next <= off {
                return Err(Error::BrokenChain {
                    off,
                    why: format!("NEXT {next:#x} does not move forward"),
                });
            }
            off = next;
        }
        for b in regs::BLOCKS {
            if !blocks.iter().any(|(_, k, ..)| *k == b.kind) {
                return Err(Error::MissingBlock(b.name));
            }
        }
        let hw = r(dev, dev::HW_VERSION)?;
        let params = BuildParams {
            num_qps: r(dev, dev::NUM_QPS)?,
            num_cqs: r(dev, dev::NUM_CQS)?,
            num_mrs: r(dev, dev::NUM_MRS)?,
            sq_depth: r(dev, dev::SQ_DEPTH)?,
            rq_depth: r(dev, dev::RQ_DEPTH)?,
            deep_qps: r(dev, dev::DEEP_QPS)?,
            deep_depth: r(dev, dev::DEEP_DEPTH)?,
            max_mtu: r(dev, dev::MAX_MTU)?,
            datapath_bits: r(dev, dev::DATAPATH_BITS)?,
            clock_khz: r(dev, dev::CLOCK_KHZ)?,
            rd_atomic: r(dev, dev::RD_ATOMIC)?,
        };
        check_params(&params)?;
        let ring_bytes = r(dev, dev::RING_BYTES)?;
        if Some(ring_bytes) != params.checked_ring_bytes()
            || ring_bytes as u64 > dev.bar_len(Bar::Rings)
        {
            return Err(Error::Device(format!(
                "ring memory of {ring_bytes} bytes does not match the build parameters ({}) or BAR2 ({} bytes)",
                params.checked_ring_bytes().unwrap_or(0),
                dev.bar_len(Bar::Rings)
            )));
        }
        let dev_block = blocks[0];
        Ok(DeviceInfo {
            hw_version: ((hw >> 24) as u8, (hw >> 16) as u8, hw as u16),
            abi_version: (dev_block.2, dev_block.3),
            params,
            ring_bytes,
            blocks,
        })
    }

    /// What `open()` read.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The underlying device.
    pub fn device(&mut self) -> &mut D {
        &mut self.dev
    }

    /// Give the device back.
    pub fn into_device(self) -> D {
        self.dev
    }

    /// Read a BAR0 register.
    pub fn read_reg(&mut self, off: u32) -> Result<u32> {
        self.dev.read32(Bar::Regs, off as u64)
    }

    /// Write a BAR0 register.
    pub fn write_reg(&mut self, off: u32, val: u32) -> Result<()> {
        self.dev.write32(Bar::Regs, off as u64, val)
    }

    /// Read the device's free-running cycle counter.
    pub fn cycles(&mut self) -> Result<u64> {
        let lo = self.read_reg(dev::CYCLE_LO)?;
        let hi = self.read_reg(dev::CYCLE_HI)?;
        Ok(((hi as u64) << 32) | lo as u64)
    }

    fn wait_until(
        &mut self,
        what: &'static str,
        timeout_ns: u64,
        mut done: impl FnMut(&mut Self) -> Result<bool>,
    ) -> Result<()> {
        let t0 = self.dev.now_ns();
        loop {
            if done(self)? {
                return Ok(());
            }
            let now = self.dev.now_ns();
            if now.saturating_sub(t0) > timeout_ns {
                return Err(Error::Timeout { what, ns: now - t0 });
            }
            self.dev.relax();
        }
    }

    /// Push a WQE into ring slot `idx` of QP `qpn`'s send queue (no doorbell).
    pub fn push_sq_wqe(&mut self, qpn: u32, idx: u32, wqe: &rnic_abi::queue::Wqe) -> Result<()> {
        let p = self.info.params;
        if qpn >= p.num_qps {
            return Err(Error::NoSuchObject {
                what: "QP",
                index: qpn as u64,
            });
        }
        self.dev.push_wqe(p.sq_slot(qpn, idx) as u64, &wqe.encode())
    }

    /// Push a WQE into ring slot `idx` of QP `qpn`'s receive queue (no doorbell).
    pub fn push_rq_wqe(&mut self, qpn: u32, idx: u32, wqe: &rnic_abi::queue::Wqe) -> Result<()> {
        let p = self.info.params;
        if qpn >= p.num_qps {
            return Err(Error::NoSuchObject {
                what: "QP",
                index: qpn as u64,
            });
        }
        self.dev.push_wqe(p.rq_slot(qpn, idx) as u64, &wqe.encode())
    }

    /// Ring a doorbell: `kind` is one of `db::SQ`, `db::RQ`, `db::CQ`.
    pub fn doorbell(&mut self, kind: u32, queue: u32, index: u16) -> Result<()> {
        let p = self.info.params;
        let limit = match kind {
            db::SQ | db::RQ => p.num_qps,
            db::CQ => p.num_cqs,
            _ => {
                return Err(Error::NoSuchObject {
                    what: "doorbell register",
                    index: kind as u64,
                });
            }
        };
        if queue >= limit {
            return Err(Error::NoSuchObject {
                what: "queue",
                index: queue as u64,
            });
        }
        self.write_reg(kind, db::word(queue as u16, index))
    }

    fn ctx_limit(&self, table: u32) -> Result<u32> {
        let p = self.info.params;
        match table {
            ctx::TABLE_QP => Ok(p.num_qps),
            ctx::TABLE_CQ => Ok(p.num_cqs),
            ctx::TABLE_MR => Ok(p.num_mrs),
            ctx::TABLE_RQS => Ok(p.num_qps),
            _ => Err(Error::NoSuchObject {
                what: "context table",
                index: table as u64,
            }),
        }
    }

    /// Run a mailbox command: `cmd` is `ctx::cmd(..)` (or a masked write) for index 0; the
    /// index is checked and filled in here.
    fn ctx_command(&mut self, cmd: u32, table: u32, index: u32) -> Result<()> {
        let op = cmd & 3;
        let limit = self.ctx_limit(table)?;
        if index >= limit {
            return Err(Error::OutOfRange {
                what: "context index",
                value: index as u64,
                min: 0,
                max: limit as u64 - 1,
            });
        }
        self.write_reg(ctx::CMD, cmd | ((index & 0xFFFF) << 16))?;
        self.wait_until("context command", CMD_TIMEOUT_NS, |s| {
            Ok(s.read_reg(ctx::STATUS)? & ctx::STATUS_BUSY == 0)
        })?;
        if self.read_reg(ctx::STATUS)? & ctx::STATUS_ERROR != 0 {
            return Err(Error::Device(format!(
                "context command op {op} table {table} index {index} failed"
            )));
        }
        Ok(())
    }

    /// Write a 64-byte record into a context table (`ctx::TABLE_*`).
    pub fn write_context(&mut self, table: u32, index: u32, rec: &[u8; 64]) -> Result<()> {
        self.write_context_masked(table, index, rec, u64::MAX)
    }

    /// Write only the bytes of a record whose bit is set in `mask` (bit i = byte i; build it
    /// with the layout's `byte_mask`), leaving the others as the engine wrote them. Only the
    /// enabled words are staged; an all-ones mask is a plain write.
    pub fn write_context_masked(
        &mut self,
        table: u32,
        index: u32,
        rec: &[u8; 64],
        mask: u64,
    ) -> Result<()> {
        self.ctx_limit(table)?;
        for (i, w) in rec.chunks_exact(4).enumerate() {
            if (mask >> (4 * i)) & 0xF == 0 {
                continue;
            }
            self.write_reg(
                ctx::DATA + 4 * i as u32,
                u32::from_le_bytes([w[0], w[1], w[2], w[3]]),
            )?;
        }
        if mask == u64::MAX {
            return self.ctx_command(ctx::cmd(ctx::OP_WRITE, table, 0), table, index);
        }
        self.write_reg(ctx::WBE_LO, mask as u32)?;
        self.write_reg(ctx::WBE_HI, (mask >> 32) as u32)?;
        self.ctx_command(ctx::cmd_masked_write(table, 0), table, index)
    }

    /// Read a 64-byte record from a context table.
    pub fn read_context(&mut self, table: u32, index: u32) -> Result<[u8; 64]> {
        self.ctx_command(ctx::cmd(ctx::OP_READ, table, 0), table, index)?;
        let mut rec = [0u8; 64];
        for i in 0..16 {
            let w = self.read_reg(ctx::DATA + 4 * i as u32)?;
            rec[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        Ok(rec)
    }

    fn dmatest_run(
        &mut self,
        ctrl: u32,
        buf: &DmaRegion,
        off: usize,
        len: usize,
        seed: u8,
    ) -> Result<DmaTestResult> {
        if len == 0 || len > dmat::MAX_LEN as usize {
            return Err(Error::OutOfRange {
                what: "DMA self-test length",
                value: len as u64,
                min: 1,
                max: dmat::MAX_LEN as u64,
            });
        }
        buf.check(off, len)?;
        let iova = buf.iova + off as u64;
        self.write_reg(dmat::IOVA_LO, iova as u32)?;
        self.write_reg(dmat::IOVA_HI, (iova >> 32) as u32)?;
        self.write_reg(dmat::LEN, len as u32)?;
        self.write_reg(dmat::SEED, seed as u32)?;
        self.write_reg(dmat::CTRL, ctrl)?;
        self.wait_until("DMA self-test", DMA_TIMEOUT_NS, |s| {
            let st = s.read_reg(dmat::STATUS)?;
            Ok(st & dmat::STATUS_BUSY == 0 && st & (dmat::STATUS_DONE | dmat::STATUS_BAD_ARG) != 0)
        })?;
        let st = self.read_reg(dmat::STATUS)?;
        if st & dmat::STATUS_BAD_ARG != 0 {
            return Err(Error::Device("DMA self-test refused its arguments".into()));
        }
        if st & dmat::STATUS_BUS_ERROR != 0 {
            return Err(Error::Device(format!(
                "DMA self-test got a bus error at IOVA {iova:#x}"
            )));
        }
        Ok(DmaTestResult {
            checksum: self.read_reg(dmat::CHECKSUM)?,
            mismatches: self.read_reg(dmat::MISMATCH)?,
            cycles: self.read_reg(dmat::CYCLES)?,
        })
    }

    /// DMA self-test, write direction: the device writes `len` pattern bytes at `buf+off`.
    pub fn dmatest_write(
        &mut self,
        buf: &DmaRegion,
        off: usize,
        len: usize,
        seed: u8,
    ) -> Result<DmaTestResult> {
        self.dmatest_run(dmat::CTRL_WRITE, buf, off, len, seed)
    }

    /// DMA self-test, read direction: the device reads `len` bytes at `buf+off`, compares them
    /// with the pattern, and reports mismatches and the checksum.
    pub fn dmatest_read(
        &mut self,
        buf: &DmaRegion,
        off: usize,
        len: usize,
        seed: u8,
    ) -> Result<DmaTestResult> {
        self.dmatest_run(dmat::CTRL_READ, buf, off, len, seed)
    }

    /// Send one Ethernet frame (without FCS) through the MAC debug path.
    pub fn mac_send(&mut self, frame: &[u8]) -> Result<()> {
        let n = frame.len();
        if n < mac::MIN_LEN as usize || n > mac::BUF_BYTES as usize {
            return Err(Error::OutOfRange {
                what: "debug frame length",
                value: n as u64,
                min: mac::MIN_LEN as u64,
                max: mac::BUF_BYTES as u64,
            });
        }
        self.wait_until("MAC debug TX idle", CMD_TIMEOUT_NS, |s| {
            Ok(s.read_reg(mac::TX_STATUS)? & mac::TX_STATUS_BUSY == 0)
        })?;
        for (i, c) in frame.chunks(4).enumerate() {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            self.write_reg(mac::TX_BUF + 4 * i as u32, u32::from_le_bytes(w))?;
        }
        self.write_reg(mac::TX_LEN, n as u32)?;
        self.write_reg(mac::TX_CTRL, mac::TX_CTRL_SEND)?;
        if self.read_reg(mac::TX_STATUS)? & mac::TX_STATUS_BAD_LEN != 0 {
            return Err(Error::Device(
                "MAC debug path refused the frame length".into(),
            ));
        }
        Ok(())
    }

    /// Wait until the TX debug path has sent its frame.
    pub fn mac_tx_wait(&mut self) -> Result<()> {
        self.wait_until("MAC debug TX", CMD_TIMEOUT_NS, |s| {
            Ok(s.read_reg(mac::TX_STATUS)? & mac::TX_STATUS_BUSY == 0)
        })
    }

    /// Counters of the MAC debug path.
    pub fn mac_counters(&mut self) -> Result<MacCounters> {
        Ok(MacCounters {
            tx_frames: self.read_reg(mac::TX_FRAMES)?,
            rx_frames: self.read_reg(mac::RX_FRAMES)?,
            rx_bytes: self.read_reg(mac::RX_BYTES)?,
            rx_errors: self.read_reg(mac::RX_ERRORS)?,
        })
    }

    /// The RX check counters.
    pub fn rx_stats(&mut self) -> Result<RxStats> {
        let mut drops = Vec::with_capacity(rxs::DROP_REASONS.len());
        for (i, name) in rxs::DROP_REASONS.iter().enumerate() {
            drops.push((*name, self.read_reg(rxs::DROP + 4 * i as u32)?));
        }
        Ok(RxStats {
            roce_ok: self.read_reg(rxs::ROCE_OK)?,
            icrc_bad: self.read_reg(rxs::ICRC_BAD)?,
            last_opcode: self.read_reg(rxs::LAST_OPCODE)? as u8,
            last_qpn: self.read_reg(rxs::LAST_QPN)?,
            last_psn: self.read_reg(rxs::LAST_PSN)?,
            drops,
        })
    }

    /// The data-path event counters (`engstat` block), by name, in ABI order.
    pub fn engine_counters(&mut self) -> Result<Vec<(&'static str, u32)>> {
        let mut out = Vec::with_capacity(regs::eng::COUNTERS.len());
        for (i, (name, _)) in regs::eng::COUNTERS.iter().enumerate() {
            out.push((*name, self.read_reg(regs::eng::CNT + 4 * i as u32)?));
        }
        Ok(out)
    }

    /// One data-path event counter by its ABI name (`regs::eng::COUNTERS`).
    pub fn engine_counter(&mut self, name: &str) -> Result<u32> {
        let i = regs::eng::COUNTERS
            .iter()
            .position(|(n, _)| *n == name)
            .ok_or_else(|| Error::NoSuchCounter(name.to_string()))?;
        self.read_reg(regs::eng::CNT + 4 * i as u32)
    }

    /// Wait for the RX frame counter to reach `count`, then return the last captured frame.
    pub fn mac_recv(&mut self, count: u32, timeout_ns: u64) -> Result<Vec<u8>> {
        self.wait_until("MAC debug RX frame", timeout_ns, |s| {
            Ok(s.read_reg(mac::RX_FRAMES)? >= count)
        })?;
        let n = (self.read_reg(mac::RX_LAST_LEN)? as usize).min(mac::BUF_BYTES as usize);
        let mut out = Vec::with_capacity(n);
        for i in 0..n.div_ceil(4) {
            out.extend_from_slice(&self.read_reg(mac::RX_BUF + 4 * i as u32)?.to_le_bytes());
        }
        out.truncate(n);
        Ok(out)
    }
}
