//! The host's side of the BARs: an AXI4-Lite master on `s_axil` (BAR0) and an AXI4 master on
//! `s_axi_wqe` (BAR2). Operations start strictly in issue order, which is the ordering PCIe
//! gives posted writes (a WQE push lands before the doorbell that follows it). Reads pay an
//! extra PCIe round trip and start only when every earlier write's B response is back.
//! Writes (BAR0 writes and BAR2 WQE pushes) are posted: the driver does not wait for them, and
//! each reaches the device `write_latency` cycles after it was issued (the flight of a posted
//! PCIe write from the root complex to the endpoint); writes issued back to back stream, as
//! a PCIe bridge issues them: the next one's AW/W is offered in the cycle after the last was
//! taken, without waiting for its B (the B responses are counted and taken as they come). Valid signals start after a
//! random idle delay and ready signals see random backpressure, both from the world's seeded
//! RNG.

use crate::model::{Model, ports::i, ports::o};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};

/// One host access.
#[derive(Debug, Clone)]
pub enum MmioOp {
    /// 32-bit read: BAR0 if `bar0`, else BAR2.
    Read { bar0: bool, off: u64 },
    /// 32-bit write.
    Write { bar0: bool, off: u64, val: u32 },
    /// 64-byte BAR2 burst.
    Push { off: u64, data: Box<[u8; 64]> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Delay(u32),
    Addr { a_done: bool, w_done: bool },
    Resp,
    Latency(u64),
}

/// MMIO timing and stress.
#[derive(Debug, Clone, Copy)]
pub struct MmioConfig {
    /// Extra cycles a read takes (PCIe round trip), beyond the AXI handshakes.
    pub read_latency: u64,
    /// Cycles from the driver issuing a posted write to the write reaching the device's AXI
    /// port (about half the read round trip).
    pub write_latency: u64,
    /// Probability of idle cycles before asserting valid, and of holding ready low.
    pub jitter: f64,
}

impl Default for MmioConfig {
    fn default() -> Self {
        MmioConfig {
            read_latency: 150,
            write_latency: 75,
            jitter: 0.0,
        }
    }
}

pub struct Mmio {
    pub cfg: MmioConfig,
    /// (ticket, op, the cycle the driver issued it).
    queue: VecDeque<(u64, MmioOp, u64)>,
    /// The current cycle (as last observed).
    now: u64,
    cur: Option<(u64, MmioOp)>,
    /// The cycle the driver issued `cur`.
    cur_issued: u64,
    phase: Phase,
    result: u32,
    next_ticket: u64,
    done: HashMap<u64, u32>,
    /// Tickets below this have all completed.
    completed_upto: u64,
    ready_b: bool,
    ready_r: bool,
    /// (cycle, BAR0 offset, cycle the driver issued it) of every BAR0 write the device
    /// accepted (address and data both taken), kept when `log_writes` (latency measurements).
    pub bar0_writes: Vec<(u64, u32, u64)>,
    pub log_writes: bool,
    /// Writes taken whose B response has not come yet: BAR0, BAR2.
    b_pending: [u64; 2],
    /// Load on the host's side of the BARs: cycles with an access on the bus (offered or
    /// waiting for its read data), and accesses finished (reads, writes, 64-byte pushes).
    pub stats: MmioStats,
}

/// See [`Mmio::stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MmioStats {
    pub busy_cycles: u64,
    pub reads: u64,
    pub writes: u64,
    pub pushes: u64,
}

impl Mmio {
    pub fn new(cfg: MmioConfig) -> Self {
        Mmio {
            cfg,
            queue: VecDeque::new(),
            now: 0,
            cur: None,
            cur_issued: 0,
            phase: Phase::Idle,
            result: 0,
            next_ticket: 1,
            done: HashMap::new(),
            completed_upto: 1,
            ready_b: false,
            ready_r: false,
            bar0_writes: Vec::new(),
            log_writes: false,
            b_pending: [0, 0],
            stats: MmioStats::default(),
        }
    }

    /// Queue an operation; returns its ticket.
    pub fn submit(&mut self, op: MmioOp) -> u64 {
        let t = self.next_ticket;
        self.next_ticket += 1;
        self.queue.push_back((t, op, self.now));
        t
    }

    /// The result of a completed read (or 0 for a completed write), once.
    pub fn take(&mut self, ticket: u64) -> Option<u32> {
        self.done.remove(&ticket)
    }

    /// Nothing queued or in flight (every write's B response back).
    pub fn idle(&self) -> bool {
        self.cur.is_none() && self.queue.is_empty() && self.b_pending == [0, 0]
    }

    fn finish(&mut self, val: u32, keep: bool) {
        if let Some((t, _)) = self.cur.take() {
            if keep {
                self.done.insert(t, val);
            }
            self.completed_upto = t + 1;
        }
        self.phase = Phase::Idle;
    }

    /// Drive the masters' outputs (model inputs) for this cycle.
    pub fn drive(&mut self, m: &mut Model, rng: &mut ChaCha8Rng) {
        let jit = self.cfg.jitter;
        // a posted write reaches the device `write_latency` after it was issued
        let due = |(_, op, issued): &(u64, MmioOp, u64)| match op {
            MmioOp::Read { .. } => *issued,
            MmioOp::Write { .. } | MmioOp::Push { .. } => issued + self.cfg.write_latency,
        };
        // a read waits for the B responses of the writes before it
        let can = |(_, op, _): &(u64, MmioOp, u64)| {
            !matches!(op, MmioOp::Read { .. }) || self.b_pending == [0, 0]
        };
        if self.cur.is_none()
            && self
                .queue
                .front()
                .is_some_and(|q| due(q) <= self.now && can(q))
            && let Some((t, op, issued)) = self.queue.pop_front()
        {
            self.cur = Some((t, op));
            self.cur_issued = issued;
            let d = if jit > 0.0 && rng.random_bool(jit) {
                rng.random_range(1..4)
            } else {
                0
            };
            self.phase = if d > 0 {
                Phase::Delay(d)
            } else {
                Phase::Addr {
                    a_done: false,
                    w_done: false,
                }
            };
        }
        if let Phase::Delay(d) = self.phase {
            self.phase = if d <= 1 {
                Phase::Addr {
                    a_done: false,
                    w_done: false,
                }
            } else {
                Phase::Delay(d - 1)
            };
        }
        self.ready_b = !(jit > 0.0 && rng.random_bool(jit));
        self.ready_r = !(jit > 0.0 && rng.random_bool(jit));
        // defaults: nothing valid
        for p in [
            i::S_AXIL_AWVALID,
            i::S_AXIL_WVALID,
            i::S_AXIL_ARVALID,
            i::S_AXI_WQE_AWVALID,
            i::S_AXI_WQE_WVALID,
            i::S_AXI_WQE_ARVALID,
        ] {
            m.set_bit(p, false);
        }
        m.set_bit(i::S_AXIL_BREADY, self.ready_b);
        m.set_bit(i::S_AXIL_RREADY, self.ready_r);
        m.set_bit(i::S_AXI_WQE_BREADY, self.ready_b);
        m.set_bit(i::S_AXI_WQE_RREADY, self.ready_r);
        let Phase::Addr { a_done, w_done } = self.phase else {
            return;
        };
        let Some((_, op)) = &self.cur else { return };
        match op {
            MmioOp::Read { bar0: true, off } => {
                m.set(i::S_AXIL_ARADDR, *off);
                m.set_bit(i::S_AXIL_ARVALID, true);
            }
            MmioOp::Write {
                bar0: true,
                off,
                val,
            } => {
                m.set(i::S_AXIL_AWADDR, *off);
                m.set_bit(i::S_AXIL_AWVALID, !a_done);
                m.set(i::S_AXIL_WDATA, *val as u64);
                m.set(i::S_AXIL_WSTRB, 0xF);
                m.set_bit(i::S_AXIL_WVALID, !w_done);
            }
            MmioOp::Read { bar0: false, off } => {
                m.set(i::S_AXI_WQE_ARADDR, off & !63);
                m.set(i::S_AXI_WQE_ARLEN, 0);
                m.set(i::S_AXI_WQE_ARSIZE, 6);
                m.set(i::S_AXI_WQE_ARBURST, 1);
                m.set(i::S_AXI_WQE_ARID, 0);
                m.set_bit(i::S_AXI_WQE_ARVALID, true);
            }
            MmioOp::Write {
                bar0: false,
                off,
                val,
            } => {
                let mut beat = [0u8; 64];
                let lane = (off & 63) as usize;
                beat[lane..lane + 4].copy_from_slice(&val.to_le_bytes());
                Self::drive_wqe_write(m, off & !63, &beat, 0xF << lane, a_done, w_done);
            }
            MmioOp::Push { off, data } => {
                Self::drive_wqe_write(m, *off, data, u64::MAX, a_done, w_done)
            }
        }
    }

    fn drive_wqe_write(
        m: &mut Model,
        addr: u64,
        beat: &[u8; 64],
        strb: u64,
        a_done: bool,
        w_done: bool,
    ) {
        m.set(i::S_AXI_WQE_AWADDR, addr);
        m.set(i::S_AXI_WQE_AWLEN, 0);
        m.set(i::S_AXI_WQE_AWSIZE, 6);
        m.set(i::S_AXI_WQE_AWBURST, 1);
        m.set(i::S_AXI_WQE_AWID, 0);
        m.set_bit(i::S_AXI_WQE_AWVALID, !a_done);
        m.set_bytes(i::S_AXI_WQE_WDATA, beat);
        m.set(i::S_AXI_WQE_WSTRB, strb);
        m.set_bit(i::S_AXI_WQE_WLAST, true);
        m.set_bit(i::S_AXI_WQE_WVALID, !w_done);
    }

    /// Observe this cycle's handshakes.
    pub fn observe(&mut self, m: &Model, now: u64) {
        self.now = now + 1;
        // B responses of posted writes, whenever they come
        if m.bit(o::S_AXIL_BVALID) && self.ready_b {
            self.b_pending[0] = self.b_pending[0].saturating_sub(1);
        }
        if m.bit(o::S_AXI_WQE_BVALID) && self.ready_b {
            self.b_pending[1] = self.b_pending[1].saturating_sub(1);
        }
        let Some((_, op)) = &self.cur else { return };
        if matches!(self.phase, Phase::Addr { .. } | Phase::Resp) {
            self.stats.busy_cycles += 1;
        }
        let bar0 = match op {
            MmioOp::Read { bar0, .. } | MmioOp::Write { bar0, .. } => *bar0,
            MmioOp::Push { .. } => false,
        };
        let is_read = matches!(op, MmioOp::Read { .. });
        let off = match op {
            MmioOp::Read { off, .. } | MmioOp::Write { off, .. } | MmioOp::Push { off, .. } => *off,
        };
        match self.phase {
            Phase::Addr { a_done, w_done } => {
                if is_read {
                    let fired = if bar0 {
                        m.bit(o::S_AXIL_ARREADY)
                    } else {
                        m.bit(o::S_AXI_WQE_ARREADY)
                    };
                    if fired {
                        self.phase = Phase::Resp;
                    }
                } else {
                    let (aw, w) = if bar0 {
                        (o::S_AXIL_AWREADY, o::S_AXIL_WREADY)
                    } else {
                        (o::S_AXI_WQE_AWREADY, o::S_AXI_WQE_WREADY)
                    };
                    let a = a_done || m.bit(aw);
                    let wd = w_done || m.bit(w);
                    if a && wd && bar0 && self.log_writes {
                        self.bar0_writes.push((now, off as u32, self.cur_issued));
                    }
                    if a && wd {
                        if matches!(op, MmioOp::Push { .. }) {
                            self.stats.pushes += 1;
                        } else {
                            self.stats.writes += 1;
                        }
                        // posted: done once taken; its B is counted
                        self.b_pending[if bar0 { 0 } else { 1 }] += 1;
                        self.finish(0, false);
                    } else {
                        self.phase = Phase::Addr {
                            a_done: a,
                            w_done: wd,
                        };
                    }
                }
            }
            Phase::Resp => {
                // only reads wait here (writes finish when taken)
                let (v, fired) = if bar0 {
                    (
                        m.get(o::S_AXIL_RDATA) as u32,
                        m.bit(o::S_AXIL_RVALID) && self.ready_r,
                    )
                } else {
                    let mut beat = [0u8; 64];
                    m.get_bytes(o::S_AXI_WQE_RDATA, &mut beat);
                    let l = (off & 60) as usize;
                    (
                        u32::from_le_bytes([beat[l], beat[l + 1], beat[l + 2], beat[l + 3]]),
                        m.bit(o::S_AXI_WQE_RVALID) && self.ready_r,
                    )
                };
                if fired {
                    self.result = v;
                    self.phase = Phase::Latency(self.cfg.read_latency);
                }
            }
            Phase::Latency(n) => {
                if n <= 1 {
                    self.stats.reads += 1;
                    let r = self.result;
                    self.finish(r, true);
                } else {
                    self.phase = Phase::Latency(n - 1);
                }
            }
            Phase::Idle | Phase::Delay(_) => {}
        }
    }
}
