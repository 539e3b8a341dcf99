//! Ethernet links between NIC ports: 100 Gb/s pacing including 24 bytes of per-frame overhead
//! (preamble+SFD 8, FCS 4, inter-frame gap 12), a fixed latency, seeded fault injection (loss,
//! bit flips, duplication, reordering) and an optional pcap tap. Frames are store-and-forward: a frame is on the far
//! side `latency` cycles after its last byte left the sender, then streamed one beat a cycle.

use crate::model::{Model, ports::i, ports::o};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rnic_abi::roce::WIRE_OVERHEAD_BYTES;
use std::collections::VecDeque;

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
}

/// One direction of a cable: from NIC `from`'s TX to NIC `to`'s RX.
pub struct Link {
    pub cfg: LinkConfig,
    pub from: usize,
    pub to: usize,
    /// bytes of credit (the line rate adds `bytes_per_cycle` a cycle)
    credit: f64,
    bytes_per_cycle: f64,
    tready: bool,
    assembling: Vec<u8>,
    in_flight: VecDeque<(u64, Vec<u8>)>,
    held: Option<Vec<u8>>,
    rx_frame: Option<(Vec<u8>, usize)>,
    /// Bytes of the beat presented this cycle (0: none).
    rx_n: usize,
    /// Cycle of the first beat of the frame being assembled.
    tx_start: u64,
    /// Cycles at which the receiver took the last beat of a frame (kept when `log_rx`).
    pub rx_ends: Vec<u64>,
    pub log_rx: bool,
    /// Frames sent, for the pcap tap and tests (drained by the world).
    pub tap: Vec<WireFrame>,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(cfg: LinkConfig, from: usize, to: usize, clock_hz: f64) -> Link {
        Link {
            cfg,
            from,
            to,
            credit: 0.0,
            bytes_per_cycle: cfg.gbps * 1e9 / 8.0 / clock_hz,
            tready: false,
            assembling: Vec::new(),
            in_flight: VecDeque::new(),
            held: None,
            rx_frame: None,
            rx_n: 0,
            tx_start: 0,
            rx_ends: Vec::new(),
            log_rx: false,
            tap: Vec::new(),
            stats: LinkStats::default(),
        }
    }

    /// Drive the sender's tready.
    pub fn drive_tx(&mut self, m: &mut Model, rng: &mut ChaCha8Rng) {
        self.credit = (self.credit + self.bytes_per_cycle).min(64.0);
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
            });
            if self.cfg.loss > 0.0 && rng.random_bool(self.cfg.loss) {
                self.stats.lost += 1;
                return;
            }
            if self.cfg.bit_flip > 0.0 && rng.random_bool(self.cfg.bit_flip) && !frame.is_empty() {
                let bit = rng.random_range(0..frame.len() * 8);
                frame[bit / 8] ^= 1 << (bit % 8);
                self.stats.flipped += 1;
            }
            let at = now + self.cfg.latency;
            if self.cfg.duplicate > 0.0 && rng.random_bool(self.cfg.duplicate) {
                self.stats.duplicated += 1;
                self.in_flight.push_back((at, frame.clone()));
            }
            if self.held.is_none() && self.cfg.reorder > 0.0 && rng.random_bool(self.cfg.reorder) {
                // hold this one back: it goes out right after the next frame
                self.stats.reordered += 1;
                self.held = Some(frame);
                return;
            }
            self.in_flight.push_back((at, frame));
            if let Some(h) = self.held.take() {
                self.in_flight.push_back((at, h));
            }
        }
    }

    /// Drive the receiver's s_axis_rx for this cycle: a beat a cycle while the receiver is
    /// ready. A receiver holding `tready` low pauses the link (frames queue behind it, none is
    /// lost): the simulator's stand-in for the priority flow control (PFC) a lossless RoCE
    /// fabric uses; a real MAC cannot be stalled, so the board top drops on a full RX FIFO.
    pub fn drive_rx(&mut self, m: &mut Model, now: u64) {
        self.rx_n = 0;
        if self.rx_frame.is_none() && self.in_flight.front().is_some_and(|(t, _)| *t <= now) {
            let (_, f) = self.in_flight.pop_front().expect("checked non-empty");
            self.rx_frame = Some((f, 0));
        }
        let Some((f, pos)) = &mut self.rx_frame else {
            m.set_bit(i::S_AXIS_RX_TVALID, false);
            return;
        };
        let n = (f.len() - *pos).min(64);
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

    /// Take the next frame whose arrival time has come (a port outside the world, e.g.
    /// [`crate::extport`], drains a link whose `to` is no NIC this way).
    pub fn take_arrived(&mut self, now: u64) -> Option<Vec<u8>> {
        if self.in_flight.front().is_some_and(|(t, _)| *t <= now) {
            self.in_flight.pop_front().map(|(_, f)| f)
        } else {
            None
        }
    }

    /// Queue a frame from outside the world for the receiver, available from cycle `at`.
    pub fn inject(&mut self, at: u64, frame: Vec<u8>) {
        self.in_flight.push_back((at, frame));
    }

    /// Frames queued or being delivered.
    pub fn busy(&self) -> bool {
        !self.in_flight.is_empty()
            || self.rx_frame.is_some()
            || !self.assembling.is_empty()
            || self.held.is_some()
    }
}
