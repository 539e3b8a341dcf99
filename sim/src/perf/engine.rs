//! The one place rnic-perf uses the verbs API (`rnic::verbs`): resources, connection, the
//! traffic loops of each test, for any [`Device`] (the simulator or VFIO).
//!
//! Buffer layout (as perftest's, so a perftest peer's addressing fits): one MR of
//! `2 * qps * slot` bytes, QP i sends from slot i and is written to / receives into slot
//! `qps + i`, whose address is what we advertise (and what a peer's READs read: the server
//! fills it with the data pattern for the read tests). Our own READs land in slot `qps + i`.
//!
//! Atomics as perftest's `ib_atomic_bw` / `ib_atomic_lat` post them: 8 bytes, FETCH_AND_ADD of 1
//! (default) or CMP_AND_SWAP with compare 0 and swap 0 (`-A CMP_AND_SWAP`); the bandwidth test
//! steps the remote address by a cache line (64 B) through the peer's cycle buffer (4 KiB: 64
//! words) and the original value lands in the same position of our send slot; the latency
//! test uses the first word; both hand shake as read_bw / read_lat. The MR and the QPs allow REMOTE_ATOMIC, so an rnic-perf server
//! needs nothing more than its MR. `--verify` (client): every FETCH_AND_ADD's original value
//! must be the previous one of that word plus 1; CMP_AND_SWAP is chained instead (the first
//! round learns each word with perftest's 0/0, later ones compare with the word's value and
//! swap in value + 1, every 4th round with a compare that does not match: the original must be
//! the word's value either way, memory changed only by the matching ones); at the end one more
//! atomic per word (FETCH_AND_ADD of 1 as the others, or a CMP_AND_SWAP of the value with
//! itself) checks the final value.

use super::oob::{BwReport, Dest, Incoming, Oob};
use super::{ATOMIC_SIZE, AtomicType, Mode, Params, Report, Row, TestKind};
use anyhow::{Context as _, anyhow, bail};
use rnic::Device;
use rnic::verbs::{
    AccessFlags, CompletionQueue, ConnectAttr, Context, CqAttr, Endpoint, MemoryRegion, Mtu,
    PortAddr, QpCaps, QueuePair, RecvWr, RtsAttr, SendOp, SendWr, WcOpcode, WorkCompletion,
};
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// How the engine finds a peer's MAC from its IPv4 address.
pub type Resolver<'a> = &'a dyn Fn(Ipv4Addr) -> Option<[u8; 6]>;

/// The access of our MR and QPs.
fn access() -> AccessFlags {
    AccessFlags::LOCAL_WRITE
        | AccessFlags::REMOTE_WRITE
        | AccessFlags::REMOTE_READ
        | AccessFlags::REMOTE_ATOMIC
}

/// perftest's cache line: the step of the atomic bandwidth test's remote address.
const CACHE_LINE: usize = 64;

/// Wall-clock limit of one wait for the peer inside a traffic loop.
const STALL: Duration = Duration::from_secs(120);

/// The QPs borrow the CQ and the PD (`rnic::verbs` ownership), so both live outside the rig.
struct Rig<'r, 'c, D: Device> {
    ctx: &'c Context<D>,
    cq: &'r CompletionQueue<'c, D>,
    qps: Vec<QueuePair<'r, D>>,
    mr: MemoryRegion<'c, D>,
    slot: usize,
    /// Outstanding send WQEs per QP (`--tx-depth`, at most what its send ring holds).
    tx_depth: u32,
    rem: Vec<Dest>,
    /// Completions seen, errors among them.
    wc_ok: u64,
    wc_err: Vec<String>,
}

impl<'c, D: Device> Rig<'_, 'c, D> {
    fn send_off(&self, q: usize) -> usize {
        q * self.slot
    }
    fn recv_off(&self, q: usize) -> usize {
        (self.qps.len() + q) * self.slot
    }

    fn my_dest(&self, q: usize) -> anyhow::Result<Dest> {
        let ep = self.qps[q].endpoint()?;
        Ok(Dest {
            lid: 0,
            // our responder's resources (the device's RD_ATOMIC register: the build's
            // rd_atomic, 16 in the 16k-QP build): the peer's max_rd_atomic
            out_reads: self.ctx.params().rd_atomic,
            qpn: ep.qpn,
            psn: ep.psn,
            rkey: self.mr.rkey(),
            vaddr: self.mr.remote_addr(self.recv_off(q))?,
            gid: Dest::gid_v4(ep.ipv4),
            srqn: 0,
        })
    }

    /// Poll the CQ once; every completion is checked.
    fn poll(&mut self, wc: &mut [WorkCompletion]) -> anyhow::Result<usize> {
        let n = self.cq.poll(wc)?;
        for w in &wc[..n] {
            if w.is_ok() {
                self.wc_ok += 1;
            } else if self.wc_err.len() < 16 {
                self.wc_err.push(format!(
                    "wr_id {} QP {} {:?}: {:?} (vendor {:#x})",
                    w.wr_id, w.qp_num, w.opcode, w.status, w.vendor_err
                ));
            }
        }
        if !self.wc_err.is_empty() {
            bail!("completion errors: {}", self.wc_err.join("; "));
        }
        Ok(n)
    }

    fn post_recv(&self, q: usize, size: usize, id: u64) -> anyhow::Result<()> {
        let sge = self.mr.sge(self.recv_off(q), size.max(1))?;
        self.qps[q].post_recv(&[RecvWr::new(id, sge)])?;
        Ok(())
    }

    fn read_u64(&self, off: usize) -> anyhow::Result<u64> {
        let mut b = [0u8; 8];
        self.mr.read(off, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn read_byte(&self, off: usize) -> anyhow::Result<u8> {
        let mut b = [0u8; 1];
        self.mr.read(off, &mut b)?;
        Ok(b[0])
    }
}

/// Sizes of the run: 2..=2^23 with -a (perftest's RUN_ALL), else the one size.
fn sizes(p: &Params) -> Vec<u64> {
    if p.test.is_atomic() {
        vec![ATOMIC_SIZE]
    } else if p.all {
        (1..24)
            .map(|i| 1u64 << i)
            .filter(|s| *s <= p.max_size)
            .collect()
    } else {
        vec![p.size]
    }
}

/// Run one side of a test: connect through `oob`, run the traffic, report.
pub fn run<D: Device>(
    dev: D,
    port: PortAddr,
    p: &Params,
    mut oob: Oob,
    resolve: Resolver<'_>,
) -> anyhow::Result<Report> {
    let t_wall = Instant::now();
    // -m in bytes -> ibv_mtu code for the exchange; the peer may lower it (oob checks 1..=5)
    let want = Mtu::from_bytes(p.mtu)?;
    let mtu_e = oob
        .preamble(u32::from(want.code()))
        .context("perftest preamble (versions, system data, MTU)")?;
    let path_mtu = Mtu::ALL[mtu_e.clamp(1, 5) as usize - 1];
    let mtu = path_mtu.bytes();
    let ctx = Context::open(dev, port)?;
    let pd = ctx.alloc_pd()?;
    let params = ctx.params();
    // deep rings (a deep-ring QP number each) while there are enough of them for every QP,
    // else the standard rings every QP number has
    let (sq_max, rx_depth) = if p.qps <= params.deep_qps {
        (params.max_depth(), params.max_depth())
    } else {
        (params.sq_depth, params.rq_depth)
    };
    let tx_depth = p.tx_depth.min(sq_max).max(1);
    let cq = ctx.create_cq_with(CqAttr {
        entries: 4096,
        irq: false,
        irq_vector: 0,
    })?;
    let max_size = sizes(p).into_iter().max().unwrap_or(1) as usize;
    let slot = max_size
        .max(oob.cycle_buffer as usize)
        .max(64)
        .next_multiple_of(64);
    let buf = ctx.alloc_buf(2 * p.qps as usize * slot)?;
    // every remote access (perftest registers the one of its verb): a server serves any test
    let mr = pd.reg_mr(&buf, access())?;
    let mut qps = Vec::new();
    for _ in 0..p.qps {
        qps.push(pd.create_qp(
            &cq,
            &cq,
            QpCaps {
                max_send_wr: tx_depth,
                max_recv_wr: rx_depth,
                sq_sig_all: false,
                ..QpCaps::default()
            },
        )?);
    }
    let mut rig = Rig {
        ctx: &ctx,
        cq: &cq,
        qps,
        mr,
        slot,
        tx_depth,
        rem: Vec::new(),
        wc_ok: 0,
        wc_err: Vec::new(),
    };
    // fill the send slots with a pattern (the data run checks it on the far side)
    for q in 0..rig.qps.len() {
        let pat = crate::demo::pattern(q as u64 + 1, slot);
        rig.mr.write(rig.send_off(q), &pat)?;
        // what a peer's READs read
        if matches!(p.test, TestKind::ReadBw | TestKind::ReadLat) && p.mode() == Mode::Server {
            rig.mr
                .write(rig.recv_off(q), &crate::demo::pattern(1, slot))?;
        }
        // what a peer's atomics work on: zero, so the server can count the FETCH_AND_ADDs
        if p.test.is_atomic() && p.mode() == Mode::Server {
            rig.mr.write(rig.recv_off(q), &vec![0u8; slot])?;
        }
    }
    let counters0 = atomic_counters(&ctx)?;
    for q in 0..rig.qps.len() {
        let mine = rig.my_dest(q)?;
        let rem = oob.keys(&mine).context("exchanging QP keys")?;
        rig.rem.push(rem);
    }
    let peer_ip = rig.rem[0].ipv4().ok_or_else(|| {
        anyhow!(
            "the peer's GID {:02x?} is not IPv4-mapped (use a RoCE v2 IPv4 GID index, -x)",
            rig.rem[0].gid
        )
    })?;
    let peer_mac = resolve(peer_ip)
        .ok_or_else(|| anyhow!("no MAC for the peer {peer_ip} (ARP unanswered)"))?;
    for q in 0..rig.qps.len() {
        let r = rig.rem[q];
        let ep = Endpoint {
            qpn: r.qpn,
            psn: r.psn,
            ipv4: peer_ip,
            mac: peer_mac,
        };
        rig.qps[q].connect(
            &ep,
            &ConnectAttr {
                access: access(),
                path_mtu,
                // as perftest: what we advertised as responder (the device's depth,
                // `for_device`), and the peer's as requester
                rts: RtsAttr {
                    max_rd_atomic: r.out_reads.clamp(1, 255) as u8,
                    ..RtsAttr::default()
                },
                ..ConnectAttr::for_device(&rig.ctx.params())
            },
        )?;
    }
    // receives are posted before anyone sends
    if matches!(p.test, TestKind::SendBw | TestKind::SendLat) {
        for q in 0..rig.qps.len() {
            for k in 0..rx_depth {
                rig.post_recv(q, max_size, k as u64)?;
            }
        }
    }
    let my0 = rig.my_dest(0)?;
    // the hand shake after RTR
    oob.keys(&my0).context("hand shake after connecting")?;
    let mut report = Report {
        test: p.test,
        mode: p.mode(),
        mtu,
        qps: p.qps,
        tx_depth,
        remote_version: oob.remote_version.clone(),
        peer: format!("{peer_ip}"),
        rows: Vec::new(),
        completions: 0,
        wall_seconds: 0.0,
        verified: 0,
        atomic_note: None,
    };
    match p.mode() {
        Mode::Client => client(&mut rig, p, &mut oob, &my0, &mut report)?,
        Mode::Server => {
            serve(&mut rig, p, &mut oob, &my0, &mut report)?;
            if p.test.is_atomic() {
                server_atomics(&rig, p, counters0, &mut report)?;
            }
            report.completions = rig.wc_ok;
            report.wall_seconds = t_wall.elapsed().as_secs_f64();
            oob.finish();
            return Ok(report);
        }
    }
    report.completions = rig.wc_ok;
    oob.close(&my0, p.test.is_lat())
        .context("closing hand shake")?;
    report.wall_seconds = t_wall.elapsed().as_secs_f64();
    Ok(report)
}

fn client<D: Device>(
    rig: &mut Rig<'_, '_, D>,
    p: &Params,
    oob: &mut Oob,
    my0: &Dest,
    report: &mut Report,
) -> anyhow::Result<()> {
    match p.test {
        TestKind::WriteBw | TestKind::ReadBw => {
            // perftest's write_bw and read_bw hand shake once more before the traffic
            oob.keys(my0)?;
            let op = if p.test == TestKind::ReadBw {
                BwOp::Read
            } else {
                BwOp::Write
            };
            for s in sizes(p) {
                report.rows.push(bw_loop(rig, p, s, op)?);
                if op == BwOp::Read && p.verify {
                    verify_read(rig, s as usize, report)?;
                }
            }
            oob.keys(my0)?;
            let last = report.rows.last().cloned().unwrap_or_default();
            oob.bw_reports(&BwReport {
                size: last.bytes,
                iters: last.iters,
                bw_peak: last.gbps,
                bw_avg: last.gbps,
                msg_rate: last.mpps,
            })?;
        }
        TestKind::SendBw => {
            // perftest's send_bw exchanges the keys once more after connecting
            for q in 0..rig.qps.len() {
                let d = rig.my_dest(q)?;
                oob.keys(&d)?;
            }
            for s in sizes(p) {
                oob.keys(my0)?;
                report.rows.push(bw_loop(rig, p, s, BwOp::Send)?);
                if p.all {
                    oob.keys(my0)?;
                }
            }
        }
        TestKind::WriteLat | TestKind::SendLat => {
            // perftest's latency tests hand shake twice more before the traffic
            oob.keys(my0)?;
            oob.keys(my0)?;
            // who sends first: the server in write_lat, the client in send_lat (perftest)
            let active = p.test == TestKind::SendLat;
            for s in sizes(p) {
                report.rows.push(lat_loop(rig, p, s, active)?);
            }
        }
        TestKind::ReadLat => {
            // as the other latency tests: two hand shakes before the traffic; the server
            // is passive (its NIC answers the READs)
            oob.keys(my0)?;
            oob.keys(my0)?;
            for s in sizes(p) {
                report.rows.push(read_lat_loop(rig, p, s)?);
                if p.verify {
                    verify_read(rig, s.max(1) as usize, report)?;
                }
            }
        }
        TestKind::AtomicBw => {
            // perftest 6.06's atomic_bw hand shakes once more before the traffic, as read_bw
            // (the atomic_bw.c of other versions does not: rxe's 6.06 server then fails with
            // "Couldn't read remote address")
            oob.keys(my0)?;
            let words = (oob.cycle_buffer as usize / CACHE_LINE).clamp(1, rig.slot / CACHE_LINE);
            let (row, checked) = atomic_bw_loop(rig, p, words)?;
            report.rows.push(row);
            note_atomics(p, checked, report);
            oob.keys(my0)?;
            let last = report.rows.last().cloned().unwrap_or_default();
            oob.bw_reports(&BwReport {
                size: last.bytes,
                iters: last.iters,
                bw_peak: last.gbps,
                bw_avg: last.gbps,
                msg_rate: last.mpps,
            })?;
        }
        TestKind::AtomicLat => {
            // as read_lat (its twin in perftest): two hand shakes before the traffic; the
            // server is passive (its NIC executes the atomics)
            oob.keys(my0)?;
            oob.keys(my0)?;
            let (row, checked) = atomic_lat_loop(rig, p)?;
            report.rows.push(row);
            note_atomics(p, checked, report);
        }
    }
    Ok(())
}

/// The responder's atomic counters (`rx_atomic` executed, `atom_dup`, `atom_miss`).
fn atomic_counters<D: Device>(ctx: &Context<D>) -> anyhow::Result<[u64; 3]> {
    let c = ctx.engine_counters()?;
    let get = |n: &str| c.iter().find(|x| x.0 == n).map(|x| x.1 as u64).unwrap_or(0);
    Ok([get("rx_atomic"), get("atom_dup"), get("atom_miss")])
}

/// Server of an atomic test: what the peer's atomics did to the (zeroed) advertised slots.
/// Every executed FETCH_AND_ADD (of perftest, and of rnic-perf) adds 1, perftest's
/// CMP_AND_SWAP (0 -> 0) writes 0: with `--verify` the sum of all words must be the executed
/// count, or 0 (so a CMP_AND_SWAP server checks for perftest's client; rnic-perf's `--verify`
/// client chains its compares and does change the words).
fn server_atomics<D: Device>(
    rig: &Rig<'_, '_, D>,
    p: &Params,
    before: [u64; 3],
    report: &mut Report,
) -> anyhow::Result<()> {
    let now = atomic_counters(rig.ctx)?;
    let d = |i: usize| now[i].wrapping_sub(before[i]) & 0xffff_ffff;
    let mut sum = 0u64;
    for q in 0..rig.qps.len() {
        let mut b = vec![0u8; rig.slot];
        rig.mr.read(rig.recv_off(q), &mut b)?;
        for w in b.chunks_exact(8) {
            sum = sum.wrapping_add(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
    }
    let want = match p.atomic {
        AtomicType::FetchAdd => d(0),
        AtomicType::CmpSwap => 0,
    };
    let ok = sum == want && d(0) > 0;
    if p.verify && !ok {
        bail!(
            "atomics: {} executed, but the words of the advertised slots sum to {sum}, expected {want} ({})",
            d(0),
            p.atomic.name()
        );
    }
    report.verified = if ok { d(0) } else { 0 };
    report.atomic_note = Some(format!(
        "atomics: {} executed by the responder, {} duplicates answered from the saved results, {} dropped; the advertised words sum to {sum} ({}{})",
        d(0),
        d(1),
        d(2),
        p.atomic.name(),
        if p.verify { ", checked: ok" } else { "" }
    ));
    Ok(())
}

fn note_atomics(p: &Params, checked: u64, report: &mut Report) {
    report.verified = checked;
    report.atomic_note = Some(if p.verify {
        format!(
            "atomics: {} {checked} original values and the final value of every word checked: ok",
            p.atomic.name()
        )
    } else {
        format!("atomics: {} (not checked: --verify)", p.atomic.name())
    });
}

/// A posted atomic and the original value it must return (`None`: not known).
type Posted = (SendOp, Option<u64>);

/// What `--verify` knows of one remote word: its value, once an atomic returned it.
#[derive(Debug, Clone, Copy, Default)]
struct Word {
    value: Option<u64>,
}

/// The atomic to post on a word, and the original value it must return (`None`: not known).
fn atomic_op(
    p: &Params,
    w: Word,
    round: u64,
    remote_addr: u64,
    rkey: u32,
) -> (SendOp, Option<u64>) {
    match (p.atomic, p.verify, w.value) {
        (AtomicType::FetchAdd, _, v) => (
            SendOp::FetchAdd {
                remote_addr,
                rkey,
                add: 1,
            },
            v,
        ),
        (AtomicType::CmpSwap, true, Some(v)) => {
            // every 4th round a compare that does not match: nothing is written
            let compare = if round.is_multiple_of(4) {
                v ^ 0x5a5a_5a5a_5a5a_5a5a
            } else {
                v
            };
            (
                SendOp::CompareSwap {
                    remote_addr,
                    rkey,
                    compare,
                    swap: v.wrapping_add(1),
                },
                Some(v),
            )
        }
        (AtomicType::CmpSwap, _, v) => (
            SendOp::CompareSwap {
                remote_addr,
                rkey,
                compare: 0,
                swap: 0,
            },
            if p.verify { None } else { v },
        ),
    }
}

/// The word's value after an atomic that returned `orig`.
fn after(op: &SendOp, orig: u64) -> u64 {
    match *op {
        SendOp::FetchAdd { add, .. } => orig.wrapping_add(add),
        SendOp::CompareSwap { compare, swap, .. } if compare == orig => swap,
        _ => orig,
    }
}

/// Atomic bandwidth loop (perftest's atomic_bw): `iters` atomics per QP on `words` words of the
/// peer's buffer, a cache line apart, at most `tx_depth` (and `words`) outstanding each, every
/// one signaled and checked. Returns the row and the original values checked (`--verify`).
fn atomic_bw_loop<D: Device>(
    rig: &mut Rig<'_, '_, D>,
    p: &Params,
    words: usize,
) -> anyhow::Result<(Row, u64)> {
    let nq = rig.qps.len();
    let iters = p.iters;
    // a word is used again only once its previous atomic completed (what --verify needs)
    let depth = (rig.tx_depth as u64).min(words as u64);
    let mut posted = vec![0u64; nq];
    let mut done = vec![0u64; nq];
    let mut state = vec![vec![Word::default(); words]; nq];
    // per QP, per outstanding WQE (by wr_id % words): the op and the expected original
    let mut inflight: Vec<Vec<Option<Posted>>> = vec![vec![None; words]; nq];
    let mut checked = 0u64;
    let t0 = rig.ctx.now_ns()?;
    let w0 = Instant::now();
    let deadline = p.duration.map(|d| w0 + Duration::from_secs_f64(d));
    let mut wc = vec![WorkCompletion::default(); 64];
    let mut last_progress = Instant::now();
    let qpn_index: Vec<u32> = rig.qps.iter().map(|q| q.qpn()).collect();
    let want_op = match p.atomic {
        AtomicType::FetchAdd => WcOpcode::FetchAdd,
        AtomicType::CmpSwap => WcOpcode::CompSwap,
    };
    loop {
        let stop_posting = deadline.is_some_and(|d| Instant::now() >= d);
        let mut any = false;
        for q in 0..nq {
            while (deadline.is_some() && !stop_posting || deadline.is_none() && posted[q] < iters)
                && posted[q] - done[q] < depth
            {
                let n = posted[q];
                let k = (n % words as u64) as usize;
                let remote = rig.rem[q].vaddr + (k * CACHE_LINE) as u64;
                let (op, want) =
                    atomic_op(p, state[q][k], n / words as u64, remote, rig.rem[q].rkey);
                let sge = rig
                    .mr
                    .sge(rig.send_off(q) + k * CACHE_LINE, ATOMIC_SIZE as usize)?;
                inflight[q][k] = Some((op, want));
                rig.qps[q].post_send(&[SendWr::new(n, op).sge(sge)])?;
                posted[q] += 1;
                any = true;
            }
        }
        let n = rig.poll(&mut wc)?;
        for w in &wc[..n] {
            let Some(q) = qpn_index.iter().position(|x| *x == w.qp_num) else {
                continue;
            };
            if w.opcode != want_op || w.wr_id != done[q] {
                bail!(
                    "atomic_bw: QP {q}: completion {:?} wr_id {}, expected {want_op:?} wr_id {}",
                    w.opcode,
                    w.wr_id,
                    done[q]
                );
            }
            let k = (w.wr_id % words as u64) as usize;
            let (op, want) = inflight[q][k]
                .take()
                .ok_or_else(|| anyhow!("atomic_bw: QP {q}: completion of a WQE not posted"))?;
            if p.verify {
                let orig = rig.read_u64(rig.send_off(q) + k * CACHE_LINE)?;
                if let Some(v) = want
                    && orig != v
                {
                    bail!(
                        "atomic_bw: QP {q} atomic {} ({op:?}): original value {orig:#x}, expected {v:#x}",
                        w.wr_id
                    );
                }
                state[q][k].value = Some(after(&op, orig));
                checked += 1;
            }
            done[q] += 1;
        }
        if n > 0 || any {
            last_progress = Instant::now();
        }
        let all_done = (0..nq).all(|q| done[q] == posted[q])
            && (stop_posting || deadline.is_none() && (0..nq).all(|q| posted[q] >= iters));
        if all_done {
            break;
        }
        if last_progress.elapsed() > STALL {
            bail!(
                "no completion for {} s ({} of {} done on QP 0)",
                STALL.as_secs(),
                done[0],
                posted[0]
            );
        }
        if n == 0 {
            rig.ctx.relax()?;
        }
    }
    let ns = rig.ctx.now_ns()?.saturating_sub(t0).max(1);
    let msgs: u64 = done.iter().sum();
    let row = Row::bw(
        ATOMIC_SIZE,
        msgs / nq as u64,
        msgs,
        ns,
        w0.elapsed().as_secs_f64(),
    );
    if p.verify {
        for (q, words) in state.iter().enumerate() {
            for (k, w) in words.iter().enumerate() {
                if let Some(v) = w.value {
                    let remote = rig.rem[q].vaddr + (k * CACHE_LINE) as u64;
                    let got = atomic_read(rig, p, q, remote, rig.send_off(q) + k * CACHE_LINE, v)?;
                    if got != v {
                        bail!("atomic_bw: QP {q} word {k}: final value {got:#x}, expected {v:#x}");
                    }
                }
            }
        }
    }
    Ok((row, checked))
}

/// One more atomic of the test's kind, waited for: the word's current value. FETCH_AND_ADD
/// adds 1 as every other one does (so a server's count of executed adds stays the sum of its
/// words); CMP_AND_SWAP compares with `guess` and swaps in `guess` (no change).
fn atomic_read<D: Device>(
    rig: &mut Rig<'_, '_, D>,
    p: &Params,
    q: usize,
    remote_addr: u64,
    local: usize,
    guess: u64,
) -> anyhow::Result<u64> {
    let rkey = rig.rem[q].rkey;
    let op = match p.atomic {
        AtomicType::FetchAdd => SendOp::FetchAdd {
            remote_addr,
            rkey,
            add: 1,
        },
        AtomicType::CmpSwap => SendOp::CompareSwap {
            remote_addr,
            rkey,
            compare: guess,
            swap: guess,
        },
    };
    let sge = rig.mr.sge(local, ATOMIC_SIZE as usize)?;
    let id = u64::MAX - 1;
    rig.qps[q].post_send(&[SendWr::new(id, op).sge(sge)])?;
    let mut wc = vec![WorkCompletion::default(); 16];
    let t = Instant::now();
    loop {
        let n = rig.poll(&mut wc)?;
        if wc[..n].iter().any(|w| w.wr_id == id) {
            break;
        }
        if n == 0 {
            if t.elapsed() > STALL {
                bail!(
                    "atomic: final read of QP {q} not completed for {} s",
                    STALL.as_secs()
                );
            }
            rig.ctx.relax()?;
        }
    }
    rig.read_u64(local)
}

/// Atomic latency (perftest's atomic_lat): one atomic at a time on the peer's first word,
/// posted -> completed, in device time; the peer's NIC executes it by itself.
fn atomic_lat_loop<D: Device>(rig: &mut Rig<'_, '_, D>, p: &Params) -> anyhow::Result<(Row, u64)> {
    let mut wc = vec![WorkCompletion::default(); 16];
    let mut samples_ns = Vec::with_capacity(p.iters as usize);
    let mut samples_wall = Vec::with_capacity(p.iters as usize);
    let remote = rig.rem[0].vaddr;
    let rkey = rig.rem[0].rkey;
    let local = rig.send_off(0);
    let mut word = Word::default();
    let mut checked = 0u64;
    let w0 = Instant::now();
    for k in 0..p.iters {
        let (op, want) = atomic_op(p, word, k, remote, rkey);
        let sge = rig.mr.sge(local, ATOMIC_SIZE as usize)?;
        let t = (rig.ctx.now_ns()?, Instant::now());
        rig.qps[0].post_send(&[SendWr::new(k, op).sge(sge)])?;
        let t_wait = Instant::now();
        loop {
            let n = rig.poll(&mut wc)?;
            if wc[..n]
                .iter()
                .any(|w| matches!(w.opcode, WcOpcode::FetchAdd | WcOpcode::CompSwap))
            {
                break;
            }
            if n == 0 {
                if t_wait.elapsed() > STALL {
                    bail!(
                        "atomic_lat: atomic {k} not completed for {} s",
                        STALL.as_secs()
                    );
                }
                rig.ctx.relax()?;
            }
        }
        samples_ns.push(rig.ctx.now_ns()?.saturating_sub(t.0));
        samples_wall.push(t.1.elapsed().as_secs_f64() * 1e6);
        if p.verify {
            let orig = rig.read_u64(local)?;
            if let Some(v) = want
                && orig != v
            {
                bail!("atomic_lat: atomic {k} ({op:?}): original value {orig:#x}, expected {v:#x}");
            }
            word.value = Some(after(&op, orig));
            checked += 1;
        }
    }
    let row = Row::lat(
        ATOMIC_SIZE,
        p.iters,
        &mut samples_ns,
        &mut samples_wall,
        w0.elapsed().as_secs_f64(),
    );
    if p.verify
        && let Some(v) = word.value
    {
        let got = atomic_read(rig, p, 0, remote, local, v)?;
        if got != v {
            bail!("atomic_lat: final value {got:#x}, expected {v:#x}");
        }
    }
    Ok((row, checked))
}

/// What a bandwidth loop posts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BwOp {
    Write,
    Send,
    /// RDMA READ of the peer's advertised slot into our slot `qps + i`.
    Read,
}

/// A READ's landing slot holds the pattern an rnic-perf server (or tests/interop's rxe side)
/// put in its advertised slot.
fn verify_read<D: Device>(
    rig: &mut Rig<'_, '_, D>,
    size: usize,
    report: &mut Report,
) -> anyhow::Result<()> {
    let want = crate::demo::pattern(1, size);
    for q in 0..rig.qps.len() {
        let mut got = vec![0u8; size];
        rig.mr.read(rig.recv_off(q), &mut got)?;
        if let Some(k) = (0..size).find(|k| got[*k] != want[*k]) {
            bail!(
                "READ data check: QP {q} byte {k} of {size}: {:#04x}, expected {:#04x}",
                got[k],
                want[k]
            );
        }
        report.verified += 1;
    }
    Ok(())
}

/// Requester bandwidth loop: `iters` messages per QP, at most `tx_depth` outstanding each,
/// every one signaled and checked.
fn bw_loop<D: Device>(
    rig: &mut Rig<'_, '_, D>,
    p: &Params,
    size: u64,
    bop: BwOp,
) -> anyhow::Result<Row> {
    let nq = rig.qps.len();
    let iters = p.iters;
    let depth = rig.tx_depth as u64;
    let mut posted = vec![0u64; nq];
    let mut done = vec![0u64; nq];
    let t0 = rig.ctx.now_ns()?;
    let w0 = Instant::now();
    let deadline = p.duration.map(|d| w0 + Duration::from_secs_f64(d));
    let mut wc = vec![WorkCompletion::default(); 64];
    let mut last_progress = Instant::now();
    let qpn_index: Vec<u32> = rig.qps.iter().map(|q| q.qpn()).collect();
    loop {
        let stop_posting = deadline.is_some_and(|d| Instant::now() >= d);
        let mut any = false;
        for q in 0..nq {
            while (deadline.is_some() && !stop_posting || deadline.is_none() && posted[q] < iters)
                && posted[q] - done[q] < depth
            {
                let n = posted[q];
                let (op, off) = match bop {
                    BwOp::Send => (SendOp::Send, rig.send_off(q)),
                    BwOp::Write => (
                        SendOp::RdmaWrite {
                            remote_addr: rig.rem[q].vaddr,
                            rkey: rig.rem[q].rkey,
                        },
                        rig.send_off(q),
                    ),
                    BwOp::Read => (
                        SendOp::RdmaRead {
                            remote_addr: rig.rem[q].vaddr,
                            rkey: rig.rem[q].rkey,
                        },
                        rig.recv_off(q),
                    ),
                };
                let sge = rig.mr.sge(off, size as usize)?;
                let wr = if size == 0 {
                    SendWr::new(n, op)
                } else {
                    SendWr::new(n, op).sge(sge)
                };
                rig.qps[q].post_send(&[wr])?;
                posted[q] += 1;
                any = true;
            }
        }
        let n = rig.poll(&mut wc)?;
        for w in &wc[..n] {
            if let Some(q) = qpn_index.iter().position(|x| *x == w.qp_num) {
                done[q] += 1;
            }
        }
        if n > 0 || any {
            last_progress = Instant::now();
        }
        let all_done = (0..nq).all(|q| done[q] == posted[q])
            && (stop_posting || deadline.is_none() && (0..nq).all(|q| posted[q] >= iters));
        if all_done {
            break;
        }
        if last_progress.elapsed() > STALL {
            bail!(
                "no completion for {} s ({} of {} done on QP 0)",
                STALL.as_secs(),
                done[0],
                posted[0]
            );
        }
        if n == 0 {
            rig.ctx.relax()?;
        }
    }
    let ns = rig.ctx.now_ns()?.saturating_sub(t0).max(1);
    let msgs: u64 = done.iter().sum();
    Ok(Row::bw(
        size,
        msgs / nq as u64,
        msgs,
        ns,
        w0.elapsed().as_secs_f64(),
    ))
}

/// READ latency (perftest's read_lat): one READ at a time, posted -> completed, in device
/// time; the peer's NIC answers by itself.
fn read_lat_loop<D: Device>(
    rig: &mut Rig<'_, '_, D>,
    p: &Params,
    size: u64,
) -> anyhow::Result<Row> {
    let size = size.max(1);
    let mut wc = vec![WorkCompletion::default(); 16];
    let mut samples_ns = Vec::with_capacity(p.iters as usize);
    let mut samples_wall = Vec::with_capacity(p.iters as usize);
    let w0 = Instant::now();
    for k in 0..p.iters {
        let sge = rig.mr.sge(rig.recv_off(0), size as usize)?;
        let op = SendOp::RdmaRead {
            remote_addr: rig.rem[0].vaddr,
            rkey: rig.rem[0].rkey,
        };
        let t = (rig.ctx.now_ns()?, Instant::now());
        rig.qps[0].post_send(&[SendWr::new(k, op).sge(sge)])?;
        let t_wait = Instant::now();
        loop {
            let n = rig.poll(&mut wc)?;
            if wc[..n].iter().any(|w| w.opcode == WcOpcode::RdmaRead) {
                break;
            }
            if n == 0 {
                if t_wait.elapsed() > STALL {
                    bail!("read_lat: READ {k} not completed for {} s", STALL.as_secs());
                }
                rig.ctx.relax()?;
            }
        }
        samples_ns.push(rig.ctx.now_ns()?.saturating_sub(t.0));
        samples_wall.push(t.1.elapsed().as_secs_f64() * 1e6);
    }
    Ok(Row::lat(
        size,
        p.iters,
        &mut samples_ns,
        &mut samples_wall,
        w0.elapsed().as_secs_f64(),
    ))
}

/// Ping-pong latency loop (`active`: we send first). WRITE: the peer's counter lands in the
/// last byte of our receive slot; SEND: a receive completion.
fn lat_loop<D: Device>(
    rig: &mut Rig<'_, '_, D>,
    p: &Params,
    size: u64,
    active: bool,
) -> anyhow::Result<Row> {
    let write = p.test == TestKind::WriteLat;
    let size = size.max(1);
    let iters = p.iters;
    let poll_off = rig.recv_off(0) + size as usize - 1;
    let send_last = rig.send_off(0) + size as usize - 1;
    let mut wc = vec![WorkCompletion::default(); 16];
    let mut samples_ns = Vec::with_capacity(iters as usize);
    let mut samples_wall = Vec::with_capacity(iters as usize);
    let (mut scnt, mut rcnt) = (0u64, 0u64);
    let mut recv_done = 0u64;
    let mut t_send = (0u64, Instant::now());
    let w0 = Instant::now();
    while scnt < iters || rcnt < iters {
        if rcnt < iters && !(scnt < 1 && active) {
            rcnt += 1;
            let t_wait = Instant::now();
            loop {
                if write {
                    if rig.read_byte(poll_off)? == rcnt as u8 {
                        break;
                    }
                } else if recv_done >= rcnt {
                    break;
                }
                let n = rig.poll(&mut wc)?;
                for w in &wc[..n] {
                    if w.opcode.is_recv() {
                        recv_done += 1;
                        rig.post_recv(0, size as usize, recv_done)?;
                    }
                }
                if n == 0 {
                    if t_wait.elapsed() > STALL {
                        bail!(
                            "latency test: no message {rcnt} from the peer for {} s",
                            STALL.as_secs()
                        );
                    }
                    rig.ctx.relax()?;
                }
            }
            if scnt > 0 {
                samples_ns.push(rig.ctx.now_ns()?.saturating_sub(t_send.0));
                samples_wall.push(t_send.1.elapsed().as_secs_f64() * 1e6);
            }
        }
        if scnt < iters {
            scnt += 1;
            rig.mr.write(send_last, &[scnt as u8])?;
            let sge = rig.mr.sge(rig.send_off(0), size as usize)?;
            let op = if write {
                SendOp::RdmaWrite {
                    remote_addr: rig.rem[0].vaddr,
                    rkey: rig.rem[0].rkey,
                }
            } else {
                SendOp::Send
            };
            t_send = (rig.ctx.now_ns()?, Instant::now());
            rig.qps[0].post_send(&[SendWr::new(scnt, op).sge(sge)])?;
            // wait for its completion (every send is signaled)
            let t_wait = Instant::now();
            let mut sent = false;
            while !sent {
                let n = rig.poll(&mut wc)?;
                for w in &wc[..n] {
                    if w.opcode.is_recv() {
                        recv_done += 1;
                        rig.post_recv(0, size as usize, recv_done)?;
                    } else if matches!(w.opcode, WcOpcode::Send | WcOpcode::RdmaWrite) {
                        sent = true;
                    }
                }
                if n == 0 {
                    if t_wait.elapsed() > STALL {
                        bail!(
                            "latency test: send {scnt} not completed for {} s",
                            STALL.as_secs()
                        );
                    }
                    rig.ctx.relax()?;
                }
            }
        }
    }
    // the passive side measures nothing per round trip
    Ok(Row::lat(
        size,
        iters,
        &mut samples_ns,
        &mut samples_wall,
        w0.elapsed().as_secs_f64(),
    ))
}

/// Server side: answer whatever the client's perftest sends over TCP, while the NIC and this
/// loop serve the traffic: the responder does WRITEs by itself, receives are reposted, the
/// latency tests echo.
fn serve<D: Device>(
    rig: &mut Rig<'_, '_, D>,
    p: &Params,
    oob: &mut Oob,
    my0: &Dest,
    report: &mut Report,
) -> anyhow::Result<()> {
    let mut wc = vec![WorkCompletion::default(); 64];
    let size = sizes(p).into_iter().max().unwrap_or(1).max(1) as usize;
    let t0 = rig.ctx.now_ns()?;
    let w0 = Instant::now();
    let mut recvs = 0u64;
    let mut bytes = 0u64;
    let mut echo_n = 0u64;
    let mut last_seen = 0u8;
    let mut last_msg = Instant::now();
    let poll_off = rig.recv_off(0) + p.size.max(1) as usize - 1;
    let lat_write = p.test == TestKind::WriteLat && !p.all;
    let mut round = 0u32;
    // hand shakes answered here (after the one following RTR)
    let mut hand_shakes = 0u32;
    loop {
        round = round.wrapping_add(1);
        if round.is_multiple_of(4) {
            match oob.poll_incoming()? {
                None => {}
                Some(Incoming::Keys(_)) => {
                    oob.answer(&my0.encode())?;
                    last_msg = Instant::now();
                    hand_shakes += 1;
                }
                Some(Incoming::Other(b)) => {
                    // a bandwidth report field: answer with ours (same size, zero)
                    oob.answer(&vec![0u8; b.len()])?;
                    last_msg = Instant::now();
                }
                Some(Incoming::Done) | Some(Incoming::Closed) => break,
            }
        }
        let n = rig.poll(&mut wc)?;
        for w in &wc[..n] {
            if w.opcode.is_recv() {
                recvs += 1;
                bytes += w.byte_len as u64;
                let q = rig
                    .qps
                    .iter()
                    .position(|x| x.qpn() == w.qp_num)
                    .unwrap_or(0);
                if p.verify {
                    let mut got = vec![0u8; w.byte_len as usize];
                    rig.mr.read(rig.recv_off(q), &mut got)?;
                    let want = crate::demo::pattern(1, got.len());
                    if let Some(k) = (0..got.len()).find(|k| got[*k] != want[*k]) {
                        bail!(
                            "data check: message {recvs} byte {k}: {:#04x}, expected {:#04x}",
                            got[k],
                            want[k]
                        );
                    }
                    report.verified += 1;
                }
                rig.post_recv(q, size, recvs)?;
                if p.test == TestKind::SendLat {
                    echo_n += 1;
                    let sge = rig.mr.sge(rig.send_off(0), w.byte_len.max(1) as usize)?;
                    rig.qps[0].post_send(&[SendWr::new(echo_n, SendOp::Send).sge(sge)])?;
                }
            }
        }
        // perftest's write_lat: the server writes first (k = 1..iters), then waits for the
        // client's k before writing k + 1. Its first WRITE must not reach the client before its
        // QP is in RTR (rxe drops it silently, and without retransmission the test hangs):
        // the client's hand shake before the traffic comes after its RTR.
        if lat_write && hand_shakes >= 1 {
            let b = rig.read_byte(poll_off)?;
            let want_next = echo_n == 0 || (b == echo_n as u8 && b != last_seen);
            if want_next && echo_n < p.iters {
                if echo_n > 0 {
                    last_seen = b;
                }
                echo_n += 1;
                rig.mr.write(
                    rig.send_off(0) + p.size.max(1) as usize - 1,
                    &[echo_n as u8],
                )?;
                let sge = rig.mr.sge(rig.send_off(0), p.size.max(1) as usize)?;
                rig.qps[0].post_send(&[SendWr::new(
                    echo_n,
                    SendOp::RdmaWrite {
                        remote_addr: rig.rem[0].vaddr,
                        rkey: rig.rem[0].rkey,
                    },
                )
                .sge(sge)])?;
            }
        }
        if n == 0 {
            if last_msg.elapsed() > Duration::from_secs(3600) {
                bail!("the client said nothing for an hour");
            }
            rig.ctx.relax()?;
        }
    }
    let ns = rig.ctx.now_ns()?.saturating_sub(t0).max(1);
    if matches!(p.test, TestKind::SendBw) {
        let msg = bytes.checked_div(recvs).unwrap_or(p.size);
        let r = Row::bw(
            msg,
            recvs / p.qps.max(1) as u64,
            recvs,
            ns,
            w0.elapsed().as_secs_f64(),
        );
        report.rows.push(r);
    } else if matches!(p.test, TestKind::SendLat | TestKind::WriteLat) {
        report.rows.push(Row {
            bytes: p.size,
            iters: echo_n,
            ..Row::default()
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(atomic: AtomicType, verify: bool) -> Params {
        Params {
            test: TestKind::AtomicBw,
            size: ATOMIC_SIZE,
            all: false,
            max_size: 1 << 23,
            iters: 10,
            qps: 1,
            mtu: 1024,
            tx_depth: 64,
            duration: None,
            server: Some("x".into()),
            port: 1,
            verify,
            atomic,
        }
    }

    /// What --verify expects of the word it works on, as the responder's semantics say.
    #[test]
    fn atomic_ops_and_expected_originals() {
        // FETCH_AND_ADD of 1: the original is the last value, the word becomes + 1
        let p = params(AtomicType::FetchAdd, true);
        let (op, want) = atomic_op(&p, Word { value: Some(41) }, 3, 0x1000, 7);
        assert_eq!(
            op,
            SendOp::FetchAdd {
                remote_addr: 0x1000,
                rkey: 7,
                add: 1
            }
        );
        assert_eq!((want, after(&op, 41)), (Some(41), 42));
        // CMP_AND_SWAP: perftest's 0/0 while the word is unknown (or without --verify)
        let p = params(AtomicType::CmpSwap, true);
        let (op, want) = atomic_op(&p, Word::default(), 0, 0x1000, 7);
        assert!(matches!(
            op,
            SendOp::CompareSwap {
                compare: 0,
                swap: 0,
                ..
            }
        ));
        assert_eq!((want, after(&op, 5), after(&op, 0)), (None, 5, 0));
        // then chained: a matching compare swaps in value + 1 ...
        let (op, want) = atomic_op(&p, Word { value: Some(5) }, 1, 0x1000, 7);
        assert!(matches!(
            op,
            SendOp::CompareSwap {
                compare: 5,
                swap: 6,
                ..
            }
        ));
        assert_eq!((want, after(&op, 5)), (Some(5), 6));
        // ... every 4th round one that does not match: the word stays
        let (op, want) = atomic_op(&p, Word { value: Some(5) }, 4, 0x1000, 7);
        assert!(matches!(op, SendOp::CompareSwap { swap: 6, .. }));
        assert_eq!((want, after(&op, 5)), (Some(5), 5));
        // without --verify always perftest's values
        let p = params(AtomicType::CmpSwap, false);
        let (op, _) = atomic_op(&p, Word { value: Some(5) }, 1, 0x1000, 7);
        assert!(matches!(
            op,
            SendOp::CompareSwap {
                compare: 0,
                swap: 0,
                ..
            }
        ));
    }

    #[test]
    fn atomic_tests_have_perftest_defaults() {
        assert_eq!(TestKind::parse("atomic_lat"), Some(TestKind::AtomicLat));
        assert!(TestKind::AtomicLat.is_lat() && TestKind::AtomicBw.is_atomic());
        assert_eq!(TestKind::AtomicBw.defaults(), (8, 5000));
        assert_eq!(TestKind::AtomicLat.defaults(), (8, 1000));
        assert_eq!(AtomicType::parse("CMP_AND_SWAP"), Some(AtomicType::CmpSwap));
        assert_eq!(AtomicType::parse("cas"), None);
        assert_eq!(sizes(&params(AtomicType::FetchAdd, false)), vec![8]);
    }
}
