//! Ethernet links between NIC ports: 100 Gb/s pacing including 24 bytes of per-frame overhead
//! (preamble+SFD 8, FCS 4, inter-frame gap 12), a fixed latency, seeded fault injection and an
//! optional pcap tap. Frames are store-and-forward: a frame is on the far side `latency` cycles
//! after its last byte left the sender, then streamed one beat (64 bytes) a cycle into the
//! receiver's `s_axis_rx`.
//!
//! Every [`Link`] is one direction of a cable and has its own [`LinkConfig`] (`Link::cfg`, a
//! copy of `WorldConfig::link` at construction; change it per direction afterwards). The fault
//! knobs are probabilities per frame, drawn from the world's one ChaCha8 generator in the
//! world's fixed stepping order, so the same seed gives the same faults:
//! * `loss`: the frame is dropped after the tap (the pcap still shows it);
//! * `bit_flip`: one random bit of the frame is inverted;
//! * `duplicate`: the frame is delivered twice;
//! * `reorder`: the frame is held back and delivered right after the next one (it waits for
//!   that next frame);
//! * `stall`: the sender's `m_axis_tx_tready` is held low in a cycle (MAC backpressure).
//!
//! Receive side ([`RxMode`]): `Pfc` (the default) pauses the link while the NIC holds
//! `s_axis_rx_tready` low, so no frame is ever lost; `Drop` models the board: the CMAC cannot
//! be paused, arriving frames enter an RX FIFO of `fifo_bytes` (counted in 64-byte beats, as
//! the board's `rnic_cdc_axis_rx` stores them) that drains into `s_axis_rx` one beat a cycle
//! while `tready` is high, and a frame that does not fit when it arrives is discarded and
//! counted (`LinkStats::rx_fifo_drops`). Frames leave the FIFO in arrival order.

use crate::model::{Model, ports::i, ports::o};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rnic_abi::roce::WIRE_OVERHEAD_BYTES;
use std::collections::VecDeque;

/// Bytes of one beat of the 512-bit streams.
pub const BEAT_BYTES: usize = 64;

/// Beats a frame of `len` bytes occupies in a 64-byte-wide FIFO.
pub fn beats(len: usize) -> usize {
    len.div_ceil(BEAT_BYTES).max(1)
}

/// How the receiving end of a link copes with a NIC that holds `s_axis_rx_tready` low.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxMode {
    /// The link pauses (frames queue on the wire, none is lost): the stand-in for the PFC
    /// pause of a lossless RoCE fabric.
    Pfc,
    /// The board: an RX FIFO of `fifo_bytes` (whole 64-byte beats) in front of the NIC; a frame
    /// that finds too little room when it arrives is dropped whole and counted.
    Drop { fifo_bytes: usize },
}

/// Link parameters.
#[derive(Debug, Clone, Copy)]
pub struct LinkConfig {
    /// Line rate in Gb/s.
    pub gbps: f64,
    /// Cycles from the last byte sent to the frame being available at the receiver.
    pub latency: u64,
    /// Probability a frame is lost.
    pub loss: f64,
    /// Probability a frame gets one flipped bit.
    pub bit_flip: f64,
    /// Probability a frame is delivered twice.
    pub duplicate: f64,
    /// Probability a frame is held back and delivered after the next one.
    pub reorder: f64,
    /// Probability the sender's tready is held low in a cycle it would be high (MAC stalls).
    pub stall: f64,
    /// What the receiving end does while the NIC is not ready.
    pub rx: RxMode,
    /// Lose exactly the frame with this index (0 = the first frame sent on the link): a
    /// deterministic single loss, for measuring recovery.
    pub drop_nth: Option<u64>,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            gbps: 100.0,
            latency: 25,
            loss: 0.0,
            bit_flip: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            stall: 0.0,
            rx: RxMode::Pfc,
            drop_nth: None,
        }
    }
}

impl LinkConfig {
    /// The board's receive side: [`RxMode::Drop`] with the board RX FIFO's depth
    /// ([`rnic_abi::params::BOARD_RX_FIFO_BYTES`], the constant the RTL's FIFO is sized from).
    pub fn board() -> Self {
        LinkConfig {
            rx: RxMode::Drop {
                fifo_bytes: rnic_abi::params::BOARD_RX_FIFO_BYTES,
            },
            ..LinkConfig::default()
        }
    }
}

/// A frame on the wire, with the cycle its last byte was sent.
#[derive(Debug, Clone)]
pub struct WireFrame {
    /// Cycle of the frame's last beat on the sender's `m_axis_tx`.
    pub sent_at: u64,
    /// Cycle of its first beat.
    pub started_at: u64,
    pub data: Vec<u8>,
    /// What the link's fault model did to it ("" = delivered as sent; "lost", "flipped",
    /// "duplicated", "reordered"): a debugging aid for traces.
    pub fault: &'static str,
}

/// Counters of one link.
#[derive(Debug, Clone, Copy, Default)]
pub struct LinkStats {
    pub frames: u64,
    pub bytes: u64,
    pub lost: u64,
    pub flipped: u64,
    pub duplicated: u64,
    pub reordered: u64,
    /// Cycles the receiver held a presented beat (its `s_axis_rx_tready` low): link-level
    /// flow control, standing in for the PFC pause a lossless RoCE fabric sends.
    pub rx_stall_cycles: u64,
    /// Frames discarded because the RX FIFO had no room for them ([`RxMode::Drop`]).
    pub rx_fifo_drops: u64,
    /// Frames queued from outside ([`Link::inject`], [`Link::inject_paced`]).
    pub injected: u64,
}

/// One direction of a cable: from NIC `from`'s TX to NIC `to`'s RX.
pub struct Link {
    pub cfg: LinkConfig,
    pub from: usize,
    pub to: usize,
    /// bytes of credit (the line rate adds `bytes_per_cycle` a cycle)
    credit: f64,
    clock_hz: f64,
    tready: bool,
    assembling: Vec<u8>,
    in_flight: VecDeque<(u64, Vec<u8>)>,
    held: Option<Vec<u8>>,
    /// Frames in the modelled RX FIFO ([`RxMode::Drop`]), in arrival order.
    fifo: VecDeque<Vec<u8>>,
    /// Beats the RX FIFO holds: the frames in `fifo` and what is left of `rx_frame` when it
    /// came from the FIFO.
    fifo_beats: usize,
    /// The frame being streamed into the receiver and the bytes already taken.
    rx_frame: Option<(Vec<u8>, usize)>,
    rx_from_fifo: bool,
    /// First cycle the receive side of the wire is free for a paced injection.
    inject_free: u64,
    /// Bytes of the beat presented this cycle (0: none).
    rx_n: usize,
    /// Cycle of the first beat of the frame being assembled.
    tx_start: u64,
    /// Cycles at which the receiver took the last beat of a frame (kept when `log_rx`).
    pub rx_ends: Vec<u64>,
    pub log_rx: bool,
    /// Frames the RX FIFO dropped for want of room ([`RxMode::Drop`]), with the cycle (kept
    /// when `log_rx_drops`; a debugging aid for traces).
    pub rx_dropped: Vec<(u64, Vec<u8>)>,
    pub log_rx_drops: bool,
    /// Frames sent, for the pcap tap and tests (drained by the world).
    pub tap: Vec<WireFrame>,
    /// Frames sent are only tapped, never delivered (the far side is a test or a tool reading
    /// the tap, see `World::detach_port`).
    pub sink: bool,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(cfg: LinkConfig, from: usize, to: usize, clock_hz: f64) -> Link {
        Link {
            cfg,
            from,
            to,
            credit: 0.0,
            clock_hz,
            tready: false,
            assembling: Vec::new(),
            in_flight: VecDeque::new(),
            held: None,
            fifo: VecDeque::new(),
            fifo_beats: 0,
            rx_frame: None,
            rx_from_fifo: false,
            inject_free: 0,
            rx_n: 0,
            tx_start: 0,
            rx_ends: Vec::new(),
            log_rx: false,
            rx_dropped: Vec::new(),
            log_rx_drops: false,
            tap: Vec::new(),
            sink: false,
            stats: LinkStats::default(),
        }
    }

    /// Line-rate bytes per cycle (from `cfg.gbps`, so a changed rate takes effect).
    fn bytes_per_cycle(&self) -> f64 {
        self.cfg.gbps * 1e9 / 8.0 / self.clock_hz
    }

    /// Drive the sender's tready.
    pub fn drive_tx(&mut self, m: &mut Model, rng: &mut ChaCha8Rng) {
        self.credit = (self.credit + self.bytes_per_cycle()).min(64.0);
        self.tready =
            self.credit > 0.0 && !(self.cfg.stall > 0.0 && rng.random_bool(self.cfg.stall));
        m.set_bit(i::M_AXIS_TX_TREADY, self.tready);
    }

    /// Take the sender's beat, if one was transferred this cycle.
    pub fn observe_tx(&mut self, m: &Model, now: u64, rng: &mut ChaCha8Rng) {
        if !(self.tready && m.bit(o::M_AXIS_TX_TVALID)) {
            return;
        }
        let keep = m.get(o::M_AXIS_TX_TKEEP);
        let mut beat = [0u8; 64];
        m.get_bytes(o::M_AXIS_TX_TDATA, &mut beat);
        let n = keep.count_ones() as usize;
        if self.assembling.is_empty() {
            self.tx_start = now;
        }
        self.assembling.extend_from_slice(&beat[..n]);
        self.credit -= n as f64;
        if m.bit(o::M_AXIS_TX_TLAST) {
            self.credit -= WIRE_OVERHEAD_BYTES as f64;
            let mut frame = std::mem::take(&mut self.assembling);
            self.stats.frames += 1;
            self.stats.bytes += frame.len() as u64;
            self.tap.push(WireFrame {
                sent_at: now,
                started_at: self.tx_start,
                data: frame.clone(),
                fault: "",
            });
            if self.sink {
                return;
            }
            if self.cfg.drop_nth == Some(self.stats.frames - 1)
                || (self.cfg.loss > 0.0 && rng.random_bool(self.cfg.loss))
            {
                self.stats.lost += 1;
                self.mark("lost");
                return;
            }
            if self.cfg.bit_flip > 0.0 && rng.random_bool(self.cfg.bit_flip) && !frame.is_empty() {
                let bit = rng.random_range(0..frame.len() * 8);
                frame[bit / 8] ^= 1 << (bit % 8);
                self.stats.flipped += 1;
                self.mark("flipped");
            }
            let at = now + self.cfg.latency;
            if self.cfg.duplicate > 0.0 && rng.random_bool(self.cfg.duplicate) {
                self.stats.duplicated += 1;
                self.mark("duplicated");
                self.in_flight.push_back((at, frame.clone()));
            }
            if self.held.is_none() && self.cfg.reorder > 0.0 && rng.random_bool(self.cfg.reorder) {
                // hold this one back: it goes out right after the next frame
                self.stats.reordered += 1;
                self.mark("reordered");
                self.held = Some(frame);
                return;
            }
            self.in_flight.push_back((at, frame));
            if let Some(h) = self.held.take() {
                self.in_flight.push_back((at, h));
            }
        }
    }

    fn mark(&mut self, fault: &'static str) {
        if let Some(f) = self.tap.last_mut() {
            f.fault = fault;
        }
    }

    /// Drive the receiver's s_axis_rx for this cycle: a beat a cycle while the receiver is
    /// ready. [`RxMode::Pfc`]: a receiver holding `tready` low pauses the link (frames queue
    /// behind it, none is lost). [`RxMode::Drop`]: every frame whose arrival time has come
    /// enters the RX FIFO if it fits whole, else it is dropped; the FIFO feeds the receiver.
    pub fn drive_rx(&mut self, m: &mut Model, now: u64) {
        self.rx_n = 0;
        if let RxMode::Drop { fifo_bytes } = self.cfg.rx {
            let cap = fifo_bytes / BEAT_BYTES;
            while self.in_flight.front().is_some_and(|(t, _)| *t <= now) {
                let (_, f) = self.in_flight.pop_front().expect("checked non-empty");
                let n = beats(f.len());
                if f.is_empty() || self.fifo_beats + n > cap {
                    self.stats.rx_fifo_drops += 1;
                    if self.log_rx_drops {
                        self.rx_dropped.push((now, f));
                    }
                    continue;
                }
                self.fifo_beats += n;
                self.fifo.push_back(f);
            }
        }
        if self.rx_frame.is_none() {
            if let Some(f) = self.fifo.pop_front() {
                self.rx_frame = Some((f, 0));
                self.rx_from_fifo = true;
            } else {
                while self.in_flight.front().is_some_and(|(t, _)| *t <= now) {
                    let (_, f) = self.in_flight.pop_front().expect("checked non-empty");
                    // an empty frame has no beat to present: nothing arrives
                    if !f.is_empty() {
                        self.rx_frame = Some((f, 0));
                        self.rx_from_fifo = false;
                        break;
                    }
                }
            }
        }
        let Some((f, pos)) = &mut self.rx_frame else {
            m.set_bit(i::S_AXIS_RX_TVALID, false);
            return;
        };
        let n = (f.len() - *pos).min(BEAT_BYTES);
        m.set_bytes(i::S_AXIS_RX_TDATA, &f[*pos..*pos + n]);
        m.set(
            i::S_AXIS_RX_TKEEP,
            if n == 64 { u64::MAX } else { (1u64 << n) - 1 },
        );
        m.set_bit(i::S_AXIS_RX_TLAST, *pos + n == f.len());
        m.set_bit(i::S_AXIS_RX_TUSER, false);
        m.set_bit(i::S_AXIS_RX_TVALID, true);
        self.rx_n = n;
    }

    /// After the edge: the presented beat is consumed if the receiver was ready.
    pub fn observe_rx(&mut self, m: &Model, now: u64) {
        if self.rx_n == 0 {
            return;
        }
        if !m.bit(o::S_AXIS_RX_TREADY) {
            self.stats.rx_stall_cycles += 1;
            return;
        }
        if self.rx_from_fifo {
            self.fifo_beats = self.fifo_beats.saturating_sub(1);
        }
        if let Some((f, pos)) = &mut self.rx_frame {
            *pos += self.rx_n;
            if *pos >= f.len() {
                self.rx_frame = None;
                if self.log_rx {
                    self.rx_ends.push(now);
                }
            }
        }
    }

    /// Beats held in the RX FIFO ([`RxMode::Drop`]).
    pub fn rx_fifo_beats(&self) -> usize {
        self.fifo_beats
    }

    /// Take the next frame whose arrival time has come (a port outside the world, e.g.
    /// [`crate::extport`], drains a link whose `to` is no NIC this way).
    pub fn take_arrived(&mut self, now: u64) -> Option<Vec<u8>> {
        if self.in_flight.front().is_some_and(|(t, _)| *t <= now) {
            self.in_flight.pop_front().map(|(_, f)| f)
        } else {
            None
        }
    }

    /// Queue a frame from outside the world for the receiver, available from cycle `at`
    /// (frames are delivered in queue order).
    pub fn inject(&mut self, at: u64, frame: Vec<u8>) {
        self.stats.injected += 1;
        self.in_flight.push_back((at, frame));
    }

    /// Queue a frame from outside as if it came over the wire at line rate: it arrives at
    /// `now` or, when earlier injections still occupy the wire, right after the last of them
    /// (its bytes plus the 24 bytes of per-frame overhead at `cfg.gbps`). Returns the cycle it
    /// is available at the receiver.
    pub fn inject_paced(&mut self, now: u64, frame: Vec<u8>) -> u64 {
        let at = now.max(self.inject_free);
        let wire = ((frame.len() + WIRE_OVERHEAD_BYTES) as f64 / self.bytes_per_cycle()).ceil();
        self.inject_free = at + wire as u64;
        self.inject(at, frame);
        at
    }

    /// Frames queued or being delivered.
    pub fn busy(&self) -> bool {
        !self.in_flight.is_empty()
            || self.rx_frame.is_some()
            || !self.fifo.is_empty()
            || !self.assembling.is_empty()
            || self.held.is_some()
    }
}
