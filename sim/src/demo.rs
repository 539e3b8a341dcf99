//! The main demo (`make run`): two simulated NICs connected by a 100 GbE link, each driven
//! through the verbs API (`rnic::verbs`). A short showcase (SEND, SEND with immediate, RDMA
//! WRITE, WRITE with immediate, an inline SEND, each checked on both sides, with the packets
//! it put on the wire), then a perftest-like table: RDMA WRITE and SEND bandwidth and message
//! rate from 64 B to 1 MiB at two path MTUs, in simulated cycles at the nominal 250 MHz, every
//! row's data verified. The host-memory audit checks that the NICs wrote nothing outside the
//! registered MRs and the CQ rings; the wire goes to a pcap.
//!
//! The spine demo of issue 2 (DMA self-test and a raw frame across the link) is [`spine`].

use crate::device::{SharedWorld, SimNic, world};
use crate::error::{Error, ensure};
use crate::eth::WireFrame;
use crate::frame;
use crate::pcap::to_pcap;
use crate::world::{NS_PER_CYCLE, WorldConfig};
use indicatif::{ProgressBar, ProgressStyle};
use rnic::verbs::{
    AccessFlags, CompletionQueue, ConnectAttr, Context, MemoryRegion, Mtu, PortAddr,
    ProtectionDomain, QpCaps, QueuePair, RecvWr, SendOp, SendWr, WcOpcode, WcStatus,
    WorkCompletion,
};
use rnic::{Device, Rnic};
use rnic_abi::dmatest;
use std::fmt::Write;
use std::io::{IsTerminal, Write as _};

/// What the demo measured.
#[derive(Debug, Clone)]
pub struct DemoReport {
    pub text: String,
    pub cycles: u64,
    pub wall_seconds: f64,
    pub pcap: Vec<u8>,
    /// The benchmark table's rows.
    pub rows: Vec<Row>,
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

/// Deterministic bytes (xorshift64*), different for every seed.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

/// What a benchmark row sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchOp {
    Write,
    Send,
    /// RDMA READ: A reads B's buffer into its own (the data flows B -> A).
    Read,
    /// ATOMIC FETCH & ADD of 1 on a word of B's buffer (8 bytes; the original lands in A's).
    FetchAdd,
    /// ATOMIC COMPARE & SWAP on a word of B's buffer, chained: the i-th compares with i and
    /// swaps in i + 1, so every one matches.
    CmpSwap,
}

impl BenchOp {
    pub fn name(self) -> &'static str {
        match self {
            BenchOp::Write => "WRITE",
            BenchOp::Send => "SEND",
            BenchOp::Read => "READ",
            BenchOp::FetchAdd => "FETCH_ADD",
            BenchOp::CmpSwap => "CMP_SWAP",
        }
    }
    pub fn is_atomic(self) -> bool {
        matches!(self, BenchOp::FetchAdd | BenchOp::CmpSwap)
    }
}

/// Bytes on the wire (frame + preamble/FCS/IFG) of one atomic request: Ethernet+IPv4+UDP+BTH
/// (54), AtomicETH (28), ICRC (4); and of its ATOMIC ACKNOWLEDGE: AETH (4) + AtomicAckETH (8).
pub const ATOMIC_REQ_WIRE: usize = 54 + 28 + 4 + rnic_abi::roce::WIRE_OVERHEAD_BYTES;
pub const ATOMIC_ACK_WIRE: usize = 54 + 4 + 8 + 4 + rnic_abi::roce::WIRE_OVERHEAD_BYTES;

/// The wire's limit for atomics in one direction, millions of operations per second at 100
/// Gb/s: one request frame per operation.
pub fn atomic_wire_limit_mops() -> f64 {
    100e9 / 8.0 / ATOMIC_REQ_WIRE as f64 / 1e6
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub op: BenchOp,
    pub mtu: u32,
    pub bytes: usize,
    pub iters: usize,
    /// Simulated cycles from the first post to the last completion.
    pub cycles: u64,
}

impl Row {
    fn seconds(&self) -> f64 {
        self.cycles as f64 * NS_PER_CYCLE * 1e-9
    }
    /// Goodput (message bytes) in Gb/s at the nominal clock.
    pub fn gbps(&self) -> f64 {
        (self.bytes * self.iters) as f64 * 8.0 / self.seconds() / 1e9
    }
    /// Messages per second, millions.
    pub fn mpps(&self) -> f64 {
        self.iters as f64 / self.seconds() / 1e6
    }
    pub fn cycles_per_msg(&self) -> f64 {
        self.cycles as f64 / self.iters as f64
    }
}

/// The wire limit of one message: payload / (payload + per-packet headers) * 100 Gb/s, with
/// Ethernet+IPv4+UDP+BTH (54), a RETH (16) on the first packet of a WRITE, an AETH (4) on a
/// READ RESPONSE FIRST/LAST/ONLY, the ICRC (4), the pad to 4 bytes, the Ethernet minimum frame
/// of 60 bytes, and 24 bytes of preamble, FCS and inter-frame gap per packet (for a READ: of
/// the responses, the direction the data flows).
pub fn wire_limit_gbps(op: BenchOp, bytes: usize, mtu: usize) -> f64 {
    let n = bytes.div_ceil(mtu).max(1);
    let mut wire = 0usize;
    for i in 0..n {
        let payload = if i == n - 1 { bytes - i * mtu } else { mtu };
        let reth = match op {
            BenchOp::Write if i == 0 => 16,
            BenchOp::Read if i == 0 || i == n - 1 => 4,
            // the request's AtomicETH carries the 8 bytes (swap/add) of "payload"
            BenchOp::FetchAdd | BenchOp::CmpSwap => 28 - payload.min(8),
            _ => 0,
        };
        let frame = (54 + reth + payload.next_multiple_of(4) + 4).max(60);
        wire += frame + rnic_abi::roce::WIRE_OVERHEAD_BYTES;
    }
    bytes as f64 / wire as f64 * 100.0
}

/// Sizes, MTUs and iteration counts of the table.
#[derive(Debug, Clone)]
pub struct Plan {
    pub mtus: Vec<Mtu>,
    pub sizes: Vec<usize>,
    pub ops: Vec<BenchOp>,
    /// Iterations per row: bytes_per_row / size, clamped to min_iters..=max_iters.
    pub bytes_per_row: usize,
    pub min_iters: usize,
    pub max_iters: usize,
    /// Send WQEs kept outstanding (perftest's tx depth).
    pub depth: usize,
}

impl Plan {
    /// `make run`: WRITE, SEND and READ, 64 B .. 1 MiB, MTU 1024 and 4096.
    pub fn full() -> Plan {
        Plan {
            mtus: vec![Mtu::Mtu1024, Mtu::Mtu4096],
            sizes: (0..=7).map(|k| 64usize << (2 * k)).collect(),
            ops: vec![BenchOp::Write, BenchOp::Send, BenchOp::Read],
            bytes_per_row: 2 << 20,
            min_iters: 4,
            max_iters: 128,
            depth: 32,
        }
    }
    /// A few seconds: the same code paths on fewer rows (tests).
    pub fn quick() -> Plan {
        Plan {
            mtus: vec![Mtu::Mtu1024],
            sizes: vec![64, 4096, 65536],
            ops: vec![BenchOp::Write, BenchOp::Send, BenchOp::Read],
            bytes_per_row: 256 << 10,
            min_iters: 2,
            max_iters: 16,
            depth: 8,
        }
    }
    fn iters(&self, size: usize) -> usize {
        (self.bytes_per_row / size).clamp(self.min_iters, self.max_iters)
    }
}

/// Device time one benchmark row may take before the demo gives up (50 ms).
const ROW_TIMEOUT_NS: u64 = 50_000_000;
const FILL: u8 = 0xEE;
/// CQ entries of the rig's two CQs: more than every QP of the standard build with 4 WQEs
/// outstanding (the all-QP rows of `make bench`); in the 16k-QP build the largest CQ
/// (`MAX_CQ_ENTRIES`), so its all-QP rows keep at most 2 WQEs outstanding per QP.
const RIG_CQ_ENTRIES: u32 = {
    let want = 4 * rnic_abi::params::DEFAULT.num_qps * 2;
    if want < rnic::verbs::MAX_CQ_ENTRIES {
        want
    } else {
        rnic::verbs::MAX_CQ_ENTRIES
    }
};
/// Engine counters that must stay 0 in a run without injected errors.
pub const ERROR_COUNTERS: [&str; 17] = [
    "db_bad",
    "tx_wqe_err",
    "rx_dup",
    "nak_seq",
    "nak_acc",
    "nak_inv",
    "nak_rnr",
    "drop_qp",
    "drop_opcode",
    "drop_icrc",
    "drop_parse",
    "nak",
    "cq_overflow",
    "cq_invalid",
    "dma_bus_err",
    "drop_pkey",
    "drop_addr",
];
/// Frames kept in the pcap from each benchmark row (the showcase is kept whole).
const PCAP_FRAMES_PER_ROW: usize = 48;

/// B's destination MR and both QPs: local write and every remote access (WRITE, READ, atomics).
pub fn remote_access() -> AccessFlags {
    AccessFlags::LOCAL_WRITE
        | AccessFlags::REMOTE_WRITE
        | AccessFlags::REMOTE_READ
        | AccessFlags::REMOTE_ATOMIC
}

/// One row of the message-rate table (`Rig::measure_rate`): 8-byte operations on one or more
/// QP pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateRow {
    pub op: BenchOp,
    pub qps: usize,
    /// operations in all (every QP the same share)
    pub ops: usize,
    pub cycles: u64,
}

impl RateRow {
    /// Operations per second, millions, at the nominal clock.
    pub fn mops(&self) -> f64 {
        self.ops as f64 / (self.cycles as f64 * NS_PER_CYCLE * 1e-9) / 1e6
    }
    pub fn cycles_per_op(&self) -> f64 {
        self.cycles as f64 / self.ops as f64
    }
}

/// Two NICs' worth of verbs resources for one direction of traffic, A -> B.
pub struct Rig<'c> {
    pub world: SharedWorld,
    pub a: &'c Context<SimNic>,
    pub b: &'c Context<SimNic>,
    /// A's source buffer (local read only: the device may never write it).
    pub src: MemoryRegion<'c, SimNic>,
    /// B's destination (local + remote write), also what A's READs read (remote read).
    pub dst: MemoryRegion<'c, SimNic>,
    /// Where A's READs land (local write).
    pub a_dst: MemoryRegion<'c, SimNic>,
    pub a_cq: CompletionQueue<'c, SimNic>,
    pub b_cq: CompletionQueue<'c, SimNic>,
    pub a_pd: ProtectionDomain<'c, SimNic>,
    pub b_pd: ProtectionDomain<'c, SimNic>,
    audited: std::cell::Cell<u64>,
    seed: std::cell::Cell<u64>,
}

impl<'c> Rig<'c> {
    pub fn new(
        world: &SharedWorld,
        a: &'c Context<SimNic>,
        b: &'c Context<SimNic>,
        bytes: usize,
    ) -> Result<Rig<'c>, Error> {
        let a_pd = a.alloc_pd()?;
        let b_pd = b.alloc_pd()?;
        // room for one completion per WQE on every QP of the build (the all-QP rows)
        let a_cq = a.create_cq(RIG_CQ_ENTRIES)?;
        let b_cq = b.create_cq(RIG_CQ_ENTRIES)?;
        let src = a_pd.reg_mr(&a.alloc_buf(bytes)?, AccessFlags::empty())?;
        let dst = b_pd.reg_mr(&b.alloc_buf(bytes)?, remote_access())?;
        let a_dst = a_pd.reg_mr(&a.alloc_buf(bytes)?, AccessFlags::LOCAL_WRITE)?;
        Ok(Rig {
            world: world.clone(),
            a,
            b,
            src,
            dst,
            a_dst,
            a_cq,
            b_cq,
            a_pd,
            b_pd,
            audited: 0.into(),
            seed: 1000.into(),
        })
    }

    /// A connected QP pair (A's, B's) with 64-deep rings (deep-ring QP numbers).
    pub fn connect(
        &self,
        mtu: Mtu,
    ) -> Result<(QueuePair<'_, SimNic>, QueuePair<'_, SimNic>), Error> {
        self.connect_with(
            mtu,
            QpCaps {
                max_send_wr: 64,
                max_recv_wr: 64,
                ..QpCaps::default()
            },
        )
    }

    /// A connected QP pair (A's, B's) with these capabilities (`QpCaps::default()`: the
    /// standard rings every QP number has).
    pub fn connect_with(
        &self,
        mtu: Mtu,
        caps: QpCaps,
    ) -> Result<(QueuePair<'_, SimNic>, QueuePair<'_, SimNic>), Error> {
        self.connect_with_attr(
            caps,
            &ConnectAttr {
                path_mtu: mtu,
                access: remote_access(),
                ..ConnectAttr::default()
            },
        )
    }

    /// A connected QP pair (A's, B's) with these capabilities and connection attributes (both
    /// QPs the same).
    pub fn connect_with_attr(
        &self,
        caps: QpCaps,
        attr: &ConnectAttr,
    ) -> Result<(QueuePair<'_, SimNic>, QueuePair<'_, SimNic>), Error> {
        let qa = self.a_pd.create_qp(&self.a_cq, &self.a_cq, caps)?;
        let qb = self.b_pd.create_qp(&self.b_cq, &self.b_cq, caps)?;
        // the endpoints cross as bytes, as they would over a socket
        let ea = rnic::Endpoint::from_bytes(&qa.endpoint()?.to_bytes())?;
        let eb = rnic::Endpoint::from_bytes(&qb.endpoint()?.to_bytes())?;
        qa.connect(&eb, attr)?;
        qb.connect(&ea, attr)?;
        Ok((qa, qb))
    }

    fn cycle(&self) -> u64 {
        self.world.borrow().cycle
    }

    /// The host-memory audit since the last call: every byte the NICs wrote lies in B's
    /// destination MR or a CQ ring, and the IOMMU model saw no fault. Clears the audit log
    /// (it grows by 16 bytes per byte written). Returns the bytes audited so far.
    pub fn audit(&self) -> Result<u64, Error> {
        let allowed = [
            vec![
                (self.a_cq.ring().iova(), self.a_cq.ring().len()),
                (self.a_dst.iova(), self.a_dst.len()),
            ],
            vec![
                (self.dst.iova(), self.dst.len()),
                (self.b_cq.ring().iova(), self.b_cq.ring().len()),
            ],
        ];
        let mut w = self.world.borrow_mut();
        for (k, ok) in allowed.iter().enumerate() {
            self.audited
                .set(self.audited.get() + w.audit_dma_writes(k, 0, ok)?);
            w.nics[k].mem.audit.clear();
        }
        Ok(self.audited.get())
    }

    /// Wait until B's destination holds `want` at `off` and the byte after it is untouched.
    fn wait_dst(&self, off: usize, want: &[u8], what: &str) -> Result<(), Error> {
        let t0 = self.b.now_ns()?;
        let mut got = vec![0u8; want.len()];
        loop {
            self.dst.read(off, &mut got)?;
            if got == want {
                break;
            }
            if self.b.now_ns()? - t0 > ROW_TIMEOUT_NS {
                let bad = got.iter().zip(want).filter(|(x, y)| x != y).count();
                return Err(Error::Check(format!(
                    "{what}: {bad} of {} destination bytes wrong",
                    want.len()
                )));
            }
            self.b.relax()?;
        }
        let end = off + want.len();
        if end < self.dst.len() {
            let mut after = [0u8; 1];
            self.dst.read(end, &mut after)?;
            ensure!(
                after[0] == FILL,
                "{what}: byte after the destination written"
            );
        }
        Ok(())
    }

    /// Check that A's READ destination holds `want` at 0 and the byte after it is untouched
    /// (no waiting: a READ completes after its data was placed).
    fn check_read_dst(&self, want: &[u8], what: &str) -> Result<(), Error> {
        let mut got = vec![0u8; (want.len() + 1).min(self.a_dst.len())];
        self.a_dst.read(0, &mut got)?;
        ensure!(
            got[..want.len()] == want[..],
            "{what}: READ data differs from the source"
        );
        ensure!(
            got.len() == want.len() || got[want.len()] == FILL,
            "{what}: byte after the READ buffer written"
        );
        Ok(())
    }

    /// Message rate of 8-byte operations (FETCH_ADD, CMP_SWAP, or READ for comparison) on
    /// the QP pairs `pairs`, `iters` per QP with `depth` (at most 64) outstanding each: QP q
    /// works on the word at `64 q` of B's buffer, its originals (or READ data) land at
    /// `512 q + 8 (i % 64)` of A's. Every completion is checked (status, opcode, order); every
    /// atomic's original value too (FETCH_ADD of 1 and the chained CMP_SWAP both return i for
    /// the i-th on a word that starts at 0), and the final words (`iters`). Cycles from the
    /// first post to the last completion.
    pub fn measure_rate(
        &self,
        pairs: &[(&QueuePair<'_, SimNic>, &QueuePair<'_, SimNic>)],
        op: BenchOp,
        iters: usize,
        depth: usize,
    ) -> Result<RateRow, Error> {
        let what = format!("{} x {} QPs", op.name(), pairs.len());
        let depth = depth.clamp(1, 64);
        let nq = pairs.len();
        ensure!(
            nq * 512 <= self.a_dst.len() && nq * 64 <= self.dst.len(),
            "{what}: buffers too small"
        );
        let word = |q: usize| q * 64;
        let local = |q: usize, i: usize| q * 512 + 8 * (i % 64);
        let read_data = pattern(0xA7, 8);
        for q in 0..nq {
            if op == BenchOp::Read {
                self.dst.write(word(q), &read_data)?;
            } else {
                self.dst.write(word(q), &[0u8; 8])?;
            }
            self.a_dst.write(q * 512, &[FILL; 512])?;
        }
        let want_op = match op {
            BenchOp::FetchAdd => WcOpcode::FetchAdd,
            BenchOp::CmpSwap => WcOpcode::CompSwap,
            BenchOp::Read => WcOpcode::RdmaRead,
            _ => return Err(Error::Check(format!("{what}: not an 8-byte operation"))),
        };
        let wr = |q: usize, i: usize| -> Result<SendWr, Error> {
            let remote_addr = self.dst.iova() + word(q) as u64;
            let rkey = self.dst.rkey();
            let o = match op {
                BenchOp::FetchAdd => SendOp::FetchAdd {
                    remote_addr,
                    rkey,
                    add: 1,
                },
                BenchOp::CmpSwap => SendOp::CompareSwap {
                    remote_addr,
                    rkey,
                    compare: i as u64,
                    swap: i as u64 + 1,
                },
                _ => SendOp::RdmaRead { remote_addr, rkey },
            };
            Ok(SendWr::new(i as u64, o).sge(self.a_dst.sge(local(q, i), 8)?))
        };
        let qpns: Vec<u32> = pairs.iter().map(|p| p.0.qpn()).collect();
        let mut posted = vec![0usize; nq];
        let mut done = vec![0usize; nq];
        let mut wc = vec![WorkCompletion::default(); 64];
        let c0 = self.cycle();
        let t0 = self.a.now_ns()?;
        let mut c_end = c0;
        loop {
            for q in 0..nq {
                let room = (iters - posted[q]).min(depth - (posted[q] - done[q]));
                if room > 0 {
                    let wrs = (posted[q]..posted[q] + room)
                        .map(|i| wr(q, i))
                        .collect::<Result<Vec<_>, _>>()?;
                    pairs[q].0.post_send(&wrs)?;
                    posted[q] += room;
                }
            }
            let n = self.a_cq.poll(&mut wc)?;
            for w in &wc[..n] {
                let q = qpns.iter().position(|x| *x == w.qp_num);
                ensure!(
                    q.is_some_and(|q| w.wr_id == done[q] as u64)
                        && w.status == WcStatus::Success
                        && w.opcode == want_op
                        && w.byte_len == 8,
                    "{what}: requester completion {w:?}"
                );
                let q = q.expect("checked");
                let i = done[q];
                let mut got = [0u8; 8];
                self.a_dst.read(local(q, i), &mut got)?;
                if op == BenchOp::Read {
                    ensure!(got[..] == read_data[..], "{what}: READ {i} of QP {q}: data");
                } else {
                    ensure!(
                        u64::from_le_bytes(got) == i as u64,
                        "{what}: QP {q} atomic {i}: original value {:#x}, expected {i}",
                        u64::from_le_bytes(got)
                    );
                }
                done[q] += 1;
            }
            if n > 0 {
                c_end = self.cycle();
            }
            if done.iter().all(|d| *d == iters) {
                break;
            }
            if n == 0 {
                if self.a.now_ns()? - t0 > ROW_TIMEOUT_NS {
                    return Err(Error::Check(format!(
                        "{what}: {done:?} of {iters} per QP completed after {} us",
                        ROW_TIMEOUT_NS / 1000
                    )));
                }
                self.a.relax()?;
            }
        }
        for q in 0..nq {
            let mut got = [0u8; 8];
            self.dst.read(word(q), &mut got)?;
            let want = if op == BenchOp::Read {
                u64::from_le_bytes(read_data[..].try_into().expect("8 bytes"))
            } else {
                iters as u64
            };
            ensure!(
                u64::from_le_bytes(got) == want,
                "{what}: QP {q}'s word is {:#x} at the end, expected {want:#x}",
                u64::from_le_bytes(got)
            );
        }
        ensure!(
            self.a_cq.poll(&mut wc[..4])? == 0 && self.b_cq.poll(&mut wc[..4])? == 0,
            "{what}: completions left over"
        );
        Ok(RateRow {
            op,
            qps: nq,
            ops: iters * nq,
            cycles: c_end - c0,
        })
    }

    /// perftest-like: `iters` messages of `size` bytes A -> B, `depth` outstanding, every
    /// completion checked, the destination verified at the end (atomics: 8 bytes, through
    /// [`Rig::measure_rate`] on the one pair).
    pub fn measure(
        &self,
        qa: &QueuePair<'_, SimNic>,
        qb: &QueuePair<'_, SimNic>,
        op: BenchOp,
        size: usize,
        iters: usize,
        depth: usize,
    ) -> Result<Row, Error> {
        if op.is_atomic() {
            ensure!(size == 8, "{}: 8 bytes, not {size}", op.name());
            let r = self.measure_rate(&[(qa, qb)], op, iters, depth)?;
            return Ok(Row {
                op,
                mtu: qa
                    .query_device()
                    .map(|(q, _)| 128u32 << q.path_mtu)
                    .unwrap_or(0),
                bytes: size,
                iters,
                cycles: r.cycles,
            });
        }
        let what = format!("{} {size} B", op.name());
        self.seed.set(self.seed.get() + 1);
        let data = pattern(self.seed.get(), size);
        let fill_len = (size + 64).min(self.dst.len());
        let sge = if op == BenchOp::Read {
            // B's buffer is the source, A's the destination
            self.dst.write(0, &data)?;
            self.a_dst.write(0, &vec![FILL; fill_len])?;
            self.a_dst.sge(0, size)?
        } else {
            self.src.write(0, &data)?;
            self.dst.write(0, &vec![FILL; fill_len])?;
            self.src.sge(0, size)?
        };
        let wr = |i: usize| {
            let o = match op {
                BenchOp::Write => SendOp::RdmaWrite {
                    remote_addr: self.dst.iova(),
                    rkey: self.dst.rkey(),
                },
                BenchOp::Read => SendOp::RdmaRead {
                    remote_addr: self.dst.iova(),
                    rkey: self.dst.rkey(),
                },
                _ => SendOp::Send,
            };
            SendWr::new(i as u64, o).sge(sge)
        };
        // receive WQEs kept posted for SENDs: as many as may be outstanding (64 at least)
        let rq_depth = depth.max(64).min(iters);
        let mut rposted = 0;
        if op == BenchOp::Send {
            let rwr: Vec<RecvWr> = (0..rq_depth)
                .map(|i| RecvWr::new(i as u64, self.dst.sge(0, size).expect("in range")))
                .collect();
            qb.post_recv(&rwr)?;
            rposted = rq_depth;
        }
        let (mut posted, mut done, mut rdone) = (0usize, 0usize, 0usize);
        let mut wc = vec![WorkCompletion::default(); 64];
        let c0 = self.cycle();
        let t0 = self.a.now_ns()?;
        let mut c_end = c0;
        loop {
            let room = depth.min(iters - posted).min(depth - (posted - done));
            if room > 0 {
                let wrs: Vec<SendWr> = (posted..posted + room).map(wr).collect();
                qa.post_send(&wrs)?;
                posted += room;
            }
            let n = self.a_cq.poll(&mut wc)?;
            for w in &wc[..n] {
                ensure!(
                    w.status == WcStatus::Success
                        && w.wr_id == done as u64
                        && w.byte_len as usize == size
                        && w.qp_num == qa.qpn(),
                    "{what}: requester completion {w:?}, expected wr_id {done}"
                );
                done += 1;
            }
            let mut m = 0;
            if op == BenchOp::Send {
                m = self.b_cq.poll(&mut wc)?;
                for w in &wc[..m] {
                    ensure!(
                        w.status == WcStatus::Success
                            && w.opcode == WcOpcode::Recv
                            && w.wr_id == rdone as u64
                            && w.byte_len as usize == size
                            && w.src_qp == qa.qpn(),
                        "{what}: responder completion {w:?}, expected wr_id {rdone}"
                    );
                    rdone += 1;
                }
                let more = (iters - rposted).min(rdone + rq_depth - rposted);
                if more > 0 {
                    let rwr: Vec<RecvWr> = (rposted..rposted + more)
                        .map(|i| RecvWr::new(i as u64, self.dst.sge(0, size).expect("in range")))
                        .collect();
                    qb.post_recv(&rwr)?;
                    rposted += more;
                }
            }
            if n > 0 || m > 0 {
                c_end = self.cycle();
            }
            if done == iters && (op != BenchOp::Send || rdone == iters) {
                break;
            }
            if n == 0 && m == 0 {
                if self.a.now_ns()? - t0 > ROW_TIMEOUT_NS {
                    return Err(Error::Check(format!(
                        "{what}: {done}/{iters} requester and {rdone} responder completions after {} us",
                        ROW_TIMEOUT_NS / 1000
                    )));
                }
                self.a.relax()?;
            }
        }
        if op == BenchOp::Read {
            self.check_read_dst(&data, &what)?;
        } else {
            self.wait_dst(0, &data, &what)?;
        }
        ensure!(
            self.a_cq.poll(&mut wc[..4])? == 0 && self.b_cq.poll(&mut wc[..4])? == 0,
            "{what}: completions left over"
        );
        Ok(Row {
            op,
            mtu: qa
                .query_device()
                .map(|(q, _)| 128u32 << q.path_mtu)
                .unwrap_or(0),
            bytes: size,
            iters,
            cycles: c_end - c0,
        })
    }
}

impl Rig<'_> {
    /// The most WQEs [`Self::measure_spread`] can keep outstanding on each of `nq` QPs: the
    /// rig's CQ holds a completion for every one (4 or more in the standard build, 2 over
    /// every QP of the 16k-QP build).
    pub const fn max_spread_depth(nq: usize) -> usize {
        let n = if nq == 0 { 1 } else { nq };
        RIG_CQ_ENTRIES as usize / n
    }

    /// WQEs outstanding on each QP in the all-QP 4 KiB WRITE row (`make bench`, the
    /// `allqps` test): 4, or [`Self::max_spread_depth`] when that is less (2 over every QP
    /// of the 16k-QP build).
    pub const fn all_qp_depth(nq: usize) -> usize {
        let m = Self::max_spread_depth(nq);
        if m < 4 { m } else { 4 }
    }

    /// RDMA WRITEs (or READs) of `size` bytes spread round robin over `pairs` QP pairs:
    /// `per_qp` messages per QP with at most `depth` outstanding on each. A WRITE goes from A's
    /// source buffer into the QP's own slot of B's buffer; a READ brings B's slot into the QP's
    /// own slot of A's buffer (slots reused when there are more QPs than slots). Completions
    /// are checked per QP, in order; the data of every slot used is checked at the end. One
    /// `Row` for all (iters = every message).
    pub fn measure_spread(
        &self,
        pairs: &[(&QueuePair<'_, SimNic>, &QueuePair<'_, SimNic>)],
        op: BenchOp,
        size: usize,
        per_qp: usize,
        depth: usize,
    ) -> Result<Row, Error> {
        let nq = pairs.len();
        let what = format!("{} {size} B x {nq} QPs", op.name());
        ensure!(
            op == BenchOp::Write || op == BenchOp::Read,
            "{what}: WRITE or READ only"
        );
        let read = op == BenchOp::Read;
        // the destination: B's buffer for a WRITE, A's for a READ
        let (src, dst) = if read {
            (&self.dst, &self.a_dst)
        } else {
            (&self.src, &self.dst)
        };
        let slots = (dst.len() / size.max(1))
            .min(src.len() / size.max(1))
            .min(nq)
            .max(1);
        ensure!(
            size > 0 && size <= src.len() && size <= dst.len(),
            "{what}: size out of range"
        );
        self.seed.set(self.seed.get() + 1);
        let data = pattern(self.seed.get(), size);
        if read {
            src.write(0, &data.repeat(slots))?;
        } else {
            src.write(0, &data)?;
        }
        dst.write(0, &vec![FILL; (slots * size + 1).min(dst.len())])?;
        let depth = depth.clamp(1, 64);
        ensure!(
            depth <= Self::max_spread_depth(nq),
            "{what}: {depth} outstanding on each of {nq} QPs overflows the rig's CQ of {RIG_CQ_ENTRIES} entries"
        );
        let qpns: Vec<u32> = pairs.iter().map(|p| p.0.qpn()).collect();
        let mut posted = vec![0usize; nq];
        let mut done = vec![0usize; nq];
        let mut wc = vec![WorkCompletion::default(); 64];
        let c0 = self.cycle();
        let t0 = self.a.now_ns()?;
        let mut c_end = c0;
        loop {
            for (q, p) in pairs.iter().enumerate() {
                let room = (per_qp - posted[q]).min(depth - (posted[q] - done[q]));
                if room > 0 {
                    let slot = ((q % slots) * size) as u64;
                    let (sge, o) = if read {
                        (
                            self.a_dst.sge(slot as usize, size)?,
                            SendOp::RdmaRead {
                                remote_addr: self.dst.iova() + slot,
                                rkey: self.dst.rkey(),
                            },
                        )
                    } else {
                        (
                            self.src.sge(0, size)?,
                            SendOp::RdmaWrite {
                                remote_addr: self.dst.iova() + slot,
                                rkey: self.dst.rkey(),
                            },
                        )
                    };
                    let wrs: Vec<SendWr> = (posted[q]..posted[q] + room)
                        .map(|i| SendWr::new(i as u64, o).sge(sge))
                        .collect();
                    p.0.post_send(&wrs)?;
                    posted[q] += room;
                }
            }
            let n = self.a_cq.poll(&mut wc)?;
            for w in &wc[..n] {
                let q = qpns.iter().position(|x| *x == w.qp_num);
                ensure!(
                    q.is_some_and(|q| w.wr_id == done[q] as u64)
                        && w.status == WcStatus::Success
                        && w.opcode
                            == if read {
                                WcOpcode::RdmaRead
                            } else {
                                WcOpcode::RdmaWrite
                            }
                        && w.byte_len as usize == size,
                    "{what}: requester completion {w:?}"
                );
                done[q.expect("checked")] += 1;
            }
            if n > 0 {
                c_end = self.cycle();
            }
            if done.iter().all(|d| *d == per_qp) {
                break;
            }
            if n == 0 {
                if self.a.now_ns()? - t0 > ROW_TIMEOUT_NS {
                    return Err(Error::Check(format!(
                        "{what}: {} of {} completions after {} us",
                        done.iter().sum::<usize>(),
                        nq * per_qp,
                        ROW_TIMEOUT_NS / 1000
                    )));
                }
                self.a.relax()?;
            }
        }
        // every slot used holds the data, the byte after the last one is untouched
        if read {
            self.check_read_dst(&data.repeat(slots), &what)?;
        } else {
            self.wait_dst(0, &data.repeat(slots), &what)?;
        }
        Ok(Row {
            op,
            mtu: pairs[0]
                .0
                .query_device()
                .map(|(q, _)| 128u32 << q.path_mtu)
                .unwrap_or(0),
            bytes: size,
            iters: nq * per_qp,
            cycles: c_end - c0,
        })
    }
}

/// The showcase: one message of each kind A -> B at MTU 1024, both sides' completions printed
/// and checked, the destination verified.
fn showcase(rig: &Rig, out: &mut impl Write) -> Result<(), Error> {
    let (qa, qb) = rig.connect(Mtu::Mtu1024)?;
    writeln!(
        out,
        "connected: A {}  <->  B {}  (RC, path MTU 1024)",
        qa.endpoint()?,
        qb.endpoint()?
    )?;
    let dst_iova = rig.dst.iova();
    let inline_data = *b"inline, 12 B";
    #[allow(clippy::type_complexity)]
    let msgs: [(&str, SendOp, usize, usize, bool); 5] = [
        ("SEND", SendOp::Send, 100, 0, true),
        (
            "SEND with immediate",
            SendOp::SendWithImm(0x1234_5678),
            3000,
            8192,
            true,
        ),
        (
            "RDMA WRITE",
            SendOp::RdmaWrite {
                remote_addr: dst_iova + 16384 + 3,
                rkey: rig.dst.rkey(),
            },
            5000,
            16384 + 3,
            false,
        ),
        (
            "RDMA WRITE with immediate",
            SendOp::RdmaWriteWithImm {
                remote_addr: dst_iova + 32768,
                rkey: rig.dst.rkey(),
                imm: 0xCAFE_F00D,
            },
            64,
            32768,
            true,
        ),
        ("inline SEND", SendOp::Send, 12, 40960, true),
    ];
    for (k, (name, sop, len, dst_off, recv)) in msgs.into_iter().enumerate() {
        let inline = name.starts_with("inline");
        let data = if inline {
            inline_data.to_vec()
        } else {
            pattern(77 + k as u64, len)
        };
        rig.dst.write(dst_off, &vec![FILL; len + 1])?;
        let wire0 = rig.world.borrow().wire.len();
        let is_write = matches!(
            sop,
            SendOp::RdmaWrite { .. } | SendOp::RdmaWriteWithImm { .. }
        );
        if recv {
            let sge = (!is_write).then(|| rig.dst.sge(dst_off, len)).transpose()?;
            qb.post_recv(&[RecvWr {
                wr_id: 0xB000 + k as u64,
                sge,
            }])?;
        }
        let mut wr = SendWr::new(0xA000 + k as u64, sop);
        if inline {
            wr = wr.inline(&inline_data);
        } else {
            rig.src.write(0, &data)?;
            wr = wr.sge(rig.src.sge(0, len)?);
        }
        let c0 = rig.cycle();
        qa.post_send(&[wr])?;
        let wa = rig.a_cq.wait(1, ROW_TIMEOUT_NS)?;
        let ca = rig.cycle() - c0;
        ensure!(
            wa[0].status == WcStatus::Success && wa[0].wr_id == 0xA000 + k as u64,
            "{name}: requester completion {:?}",
            wa[0]
        );
        writeln!(
            out,
            "\n{name}, {len} B: A completion after {ca} cycles: wr_id {:#x} {:?} {:?} byte_len {}",
            wa[0].wr_id, wa[0].status, wa[0].opcode, wa[0].byte_len
        )?;
        if recv {
            let wb = rig.b_cq.wait(1, ROW_TIMEOUT_NS)?;
            let w = wb[0];
            let imm = match sop {
                SendOp::SendWithImm(i) | SendOp::RdmaWriteWithImm { imm: i, .. } => Some(i),
                _ => None,
            };
            ensure!(
                w.status == WcStatus::Success
                    && w.wr_id == 0xB000 + k as u64
                    && w.byte_len as usize == len
                    && w.imm_data == imm
                    && w.src_qp == qa.qpn()
                    && w.qp_num == qb.qpn(),
                "{name}: responder completion {w:?}"
            );
            writeln!(
                out,
                "  B completion: wr_id {:#x} {:?} {:?} byte_len {} imm {} src_qp {}",
                w.wr_id,
                w.status,
                w.opcode,
                w.byte_len,
                w.imm_data.map_or("-".to_string(), |i| format!("{i:#010x}")),
                w.src_qp
            )?;
        }
        rig.wait_dst(dst_off, &data, name)?;
        writeln!(out, "  {len} bytes verified at B+{dst_off:#x}")?;
        let frames: Vec<String> = rig.world.borrow().wire[wire0..]
            .iter()
            .filter_map(|(l, f)| {
                frame::describe(&f.data)
                    .map(|s| format!("  {} {s}", if *l == 0 { "A>" } else { "B>" }))
            })
            .collect();
        for f in frames {
            writeln!(out, "{f}")?;
        }
    }
    qa.destroy()?;
    qb.destroy()?;
    Ok(())
}

/// The demo's text: kept whole for the report and, when live, printed to stdout line by line
/// as it is produced (flushed at once; above the progress bar while one is shown).
struct Out {
    text: String,
    live: bool,
    /// How much of `text` is printed.
    printed: usize,
    bar: Option<ProgressBar>,
}

impl Out {
    fn new(live: bool) -> Out {
        Out {
            text: String::new(),
            live,
            printed: 0,
            bar: None,
        }
    }

    /// Print the complete lines not printed yet. Printing is best effort: a closed stdout
    /// (`| head`) does not stop the run, whose checks are the point.
    fn flush_lines(&mut self) {
        let Some(end) = self.text.rfind('\n').map(|i| i + 1) else {
            return;
        };
        if !self.live || end <= self.printed {
            return;
        }
        let chunk = &self.text[self.printed..end];
        let print = || {
            let mut o = std::io::stdout().lock();
            let _ = o.write_all(chunk.as_bytes());
            let _ = o.flush();
        };
        match &self.bar {
            Some(b) => b.suspend(print),
            None => print(),
        }
        self.printed = end;
    }
}

impl Write for Out {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.text.push_str(s);
        if s.contains('\n') {
            self.flush_lines();
        }
        Ok(())
    }
}

/// Run the demo with the full plan (`make run`), printing its text as it goes and, when
/// stderr is a terminal, a progress bar over the table.
pub fn run(cfg: WorldConfig) -> Result<DemoReport, Error> {
    run_with(cfg, &Plan::full(), true)
}

/// Run the demo with a given plan, quietly (the text is in the report).
pub fn run_plan(cfg: WorldConfig, plan: &Plan) -> Result<DemoReport, Error> {
    run_with(cfg, plan, false)
}

/// A verbs context on each NIC of a two-NIC world: NIC 0 is A (`PortAddr::sim(1)`), NIC 1 is B
/// (`PortAddr::sim(2)`).
pub fn contexts(w: &SharedWorld) -> Result<(Context<SimNic>, Context<SimNic>), Error> {
    let a = Context::new(Rnic::open(SimNic::new(w, 0)?)?, PortAddr::sim(1)?)?;
    let b = Context::new(Rnic::open(SimNic::new(w, 1)?)?, PortAddr::sim(2)?)?;
    Ok((a, b))
}

fn run_with(cfg: WorldConfig, plan: &Plan, live: bool) -> Result<DemoReport, Error> {
    let t0 = std::time::Instant::now();
    let w = world(cfg);
    let mut out = Out::new(live);
    let (a, b) = contexts(&w)?;
    let info = a.info()?;
    writeln!(
        out,
        "two simulated NICs: A {} / B {}",
        a.port().ipv4,
        b.port().ipv4
    )?;
    writeln!(out, "{info}")?;
    let max = plan.sizes.iter().copied().max().unwrap_or(4096);
    let rig = Rig::new(&w, &a, &b, max.max(64 * 1024) + 4096)?;
    showcase(&rig, &mut out)?;
    rig.audit()?;
    let mut pcap_frames: Vec<WireFrame> = w.borrow_mut().wire.drain(..).map(|(_, f)| f).collect();

    writeln!(
        out,
        "\nRC A -> B, {} outstanding, all signaled; cycles from the first post to the last completion, at 250 MHz",
        plan.depth
    )?;
    writeln!(
        out,
        " {:<6} {:>5} {:>9} {:>6} {:>10} {:>8} {:>11} {:>10}",
        "op", "MTU", "#bytes", "#iter", "BW[Gb/s]", "%wire", "rate[Mpps]", "cyc/msg"
    )?;
    let rows_total = plan.mtus.len() * plan.ops.len() * plan.sizes.len();
    if live && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(rows_total as u64);
        bar.set_style(
            ProgressStyle::with_template("[{bar:30}] {pos}/{len} rows, {elapsed} {msg}")
                .map_err(|e| Error::Check(format!("progress bar template: {e}")))?
                .progress_chars("=> "),
        );
        out.bar = Some(bar);
    }
    let mut rows = Vec::new();
    for &mtu in &plan.mtus {
        let (qa, qb) = rig.connect(mtu)?;
        for &bop in &plan.ops {
            for &size in &plan.sizes {
                let iters = plan.iters(size);
                if let Some(bar) = &out.bar {
                    bar.set_message(format!(
                        "{} {size} B x {iters} at MTU {}",
                        bop.name(),
                        mtu.bytes()
                    ));
                }
                let row = rig.measure(&qa, &qb, bop, size, iters, plan.depth)?;
                rig.audit()?;
                let mut wb = w.borrow_mut();
                pcap_frames.extend(
                    wb.wire
                        .iter()
                        .take(PCAP_FRAMES_PER_ROW)
                        .map(|(_, f)| f.clone()),
                );
                wb.wire.clear();
                drop(wb);
                writeln!(
                    out,
                    " {:<6} {:>5} {:>9} {:>6} {:>10.2} {:>7.1}% {:>11.3} {:>10.1}",
                    bop.name(),
                    mtu.bytes(),
                    size,
                    iters,
                    row.gbps(),
                    100.0 * row.gbps() / wire_limit_gbps(bop, size, mtu.bytes() as usize),
                    row.mpps(),
                    row.cycles_per_msg()
                )?;
                rows.push(row);
                if let Some(bar) = &out.bar {
                    bar.inc(1);
                }
            }
        }
        qa.destroy()?;
        qb.destroy()?;
    }
    if let Some(bar) = out.bar.take() {
        bar.finish_and_clear();
    }
    writeln!(
        out,
        "(%wire: goodput as a share of the 100 GbE limit for that message size and MTU: headers, ICRC, preamble/FCS/IFG per packet)"
    )?;
    let audited = rig.audit()?;
    writeln!(
        out,
        "\nhost-memory audit: {audited} bytes DMA-written, all inside B's registered MR or a CQ ring, no IOMMU faults"
    )?;
    for (name, ctx) in [("A", &a), ("B", &b)] {
        let rx = ctx.rx_stats()?;
        let drops: u32 = rx.drops.iter().map(|d| d.1).sum();
        writeln!(
            out,
            "NIC {name} RX checks: {} good RoCE frames, {} bad ICRC, {drops} parser drops",
            rx.roce_ok, rx.icrc_bad
        )?;
        ensure!(
            rx.icrc_bad == 0 && drops == 0,
            "NIC {name}: RX drops on a clean link"
        );
        let cnt = ctx.engine_counters()?;
        let shown: Vec<String> = cnt
            .iter()
            .filter(|c| c.1 != 0)
            .map(|(n, v)| format!("{n} {v}"))
            .collect();
        writeln!(out, "NIC {name} engine counters: {}", shown.join(", "))?;
        for (n, v) in &cnt {
            ensure!(
                *v == 0 || !ERROR_COUNTERS.contains(n),
                "NIC {name}: engine counter {n} = {v} on a clean run"
            );
        }
    }
    drop(rig);
    let wall = t0.elapsed().as_secs_f64();
    let cycles = w.borrow().cycle;
    let pcap = to_pcap(pcap_frames.iter())?;
    writeln!(
        out,
        "simulated {} cycles = {:.1} us at 250 MHz in {:.1} s wall: {:.0} cycles/s (two-NIC world)",
        cycles,
        cycles as f64 * NS_PER_CYCLE / 1000.0,
        wall,
        cycles as f64 / wall
    )?;
    writeln!(
        out,
        "pcap: the showcase's frames, then the first {PCAP_FRAMES_PER_ROW} frames of each table row ({} frames)",
        pcap_frames.len()
    )?;
    Ok(DemoReport {
        text: out.text,
        cycles,
        wall_seconds: wall,
        pcap,
        rows,
    })
}

/// The spine demo (issue 2): both NICs opened through the driver, the DMA self-test on each,
/// a raw frame across the link, a pcap of the wire, simulated cycles and simulation speed.
pub fn spine(cfg: WorldConfig) -> Result<DemoReport, Error> {
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
        rows: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_limit_is_exact() {
        // one 4096-byte WRITE at MTU 4096: 54 + 16 + 4096 + 4 = 4170 frame bytes + 24
        let l = wire_limit_gbps(BenchOp::Write, 4096, 4096);
        assert!((l - 4096.0 / 4194.0 * 100.0).abs() < 1e-9, "{l}");
        // 64 KiB: the first of 16 packets carries the RETH
        let l = wire_limit_gbps(BenchOp::Write, 65536, 4096);
        let wire = 16 * (54 + 4096 + 4 + 24) + 16;
        assert!((l - 65536.0 / wire as f64 * 100.0).abs() < 1e-9, "{l}");
        // a 1-byte SEND: padded to 4 (62-byte frame)
        let l = wire_limit_gbps(BenchOp::Send, 1, 1024);
        assert!((l - 1.0 / 86.0 * 100.0).abs() < 1e-9, "{l}");
        // a zero-length SEND is padded to the 60-byte minimum frame
        assert_eq!(wire_limit_gbps(BenchOp::Send, 0, 1024), 0.0);
        // 4097 bytes at MTU 4096: two packets
        let l = wire_limit_gbps(BenchOp::Send, 4097, 4096);
        let wire = (54 + 4096 + 4 + 24) + (62 + 24);
        assert!((l - 4097.0 / wire as f64 * 100.0).abs() < 1e-9, "{l}");
    }

    #[test]
    fn atomic_wire_sizes() {
        // request: 54 + AtomicETH 28 + ICRC 4 = 86-byte frame; ACK: 54 + 4 + 8 + 4 = 70
        assert_eq!(ATOMIC_REQ_WIRE, 86 + 24);
        assert_eq!(ATOMIC_ACK_WIRE, 70 + 24);
        let l = wire_limit_gbps(BenchOp::FetchAdd, 8, 4096);
        assert!((l - 8.0 / 110.0 * 100.0).abs() < 1e-9, "{l}");
        assert!((atomic_wire_limit_mops() - 12500.0 / 110.0).abs() < 1e-9);
    }

    #[test]
    fn error_counters_exist() {
        for n in ERROR_COUNTERS {
            assert!(
                rnic_abi::regs::eng::COUNTERS.iter().any(|c| c.0 == n),
                "{n}"
            );
        }
    }

    #[test]
    fn plans() {
        let p = Plan::full();
        assert_eq!(p.sizes.first(), Some(&64));
        assert_eq!(p.sizes.last(), Some(&(1 << 20)));
        assert_eq!(p.iters(64), 128);
        assert_eq!(p.iters(1 << 20), 4);
        let r = Row {
            op: BenchOp::Write,
            mtu: 4096,
            bytes: 4096,
            iters: 10,
            cycles: 1000,
        };
        // 40960 bytes in 4 us = 81.92 Gb/s; 10 messages in 4 us = 2.5 Mpps
        assert!((r.gbps() - 81.92).abs() < 1e-9);
        assert!((r.mpps() - 2.5).abs() < 1e-9);
        assert_eq!(r.cycles_per_msg(), 100.0);
    }
}
