//! MAC debug path: sends the frame the host wrote into the TX window on `m_axis_tx`, and
//! counts, measures and captures the frames arriving on `s_axis_rx` (the receive side never
//! backpressures: a MAC cannot wait). Registers: BAR0 block `macdbg`.

use crate::common::beram::BeRam;
use crate::common::bus::reg_addr;
use crate::common::bus::{RegBusS, StreamM, StreamS};
use crate::common::popcount::Popcount64;
use rnic_abi::regs::mac;
use rust_hdl::prelude::*;

/// BAR0 window select: address bits 15:11 (2 KiB windows).
fn win(v: u32) -> Constant<Bits<5>> {
    Constant::new(((v >> 11) as u64).into())
}

#[derive(LogicBlock)]
pub struct MacDebug {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub soft_reset: Signal<In, Bit>,
    pub bus: RegBusS,
    pub tx: StreamM,
    pub rx: StreamS,
    /// One-cycle pulse per good frame received.
    pub rx_pulse: Signal<Out, Bit>,
    txram: BeRam<5>,
    rxram: BeRam<5>,
    a_tx_len: Constant<Bits<16>>,
    a_tx_ctrl: Constant<Bits<16>>,
    a_tx_status: Constant<Bits<16>>,
    a_tx_frames: Constant<Bits<16>>,
    a_rx_frames: Constant<Bits<16>>,
    a_rx_bytes: Constant<Bits<16>>,
    a_rx_last_len: Constant<Bits<16>>,
    a_rx_errors: Constant<Bits<16>>,
    w_tx: Constant<Bits<5>>,
    w_rx: Constant<Bits<5>>,
    min_len: Constant<Bits<32>>,
    max_len: Constant<Bits<32>>,
    ones64: Constant<Bits<64>>,
    nibble: Constant<Bits<64>>,
    zero32: Constant<Bits<32>>,
    rdata: DFF<Bits<32>>,
    rx_rd: DFF<Bit>,
    rx_off: DFF<Bits<9>>,
    tx_len: DFF<Bits<32>>,
    tx_busy: DFF<Bit>,
    tx_bad_len: DFF<Bit>,
    tx_ok: DFF<Bit>,
    tx_beat: DFF<Bits<6>>,
    tx_frames: DFF<Bits<32>>,
    rx_beat: DFF<Bits<16>>,
    rx_len: DFF<Bits<32>>,
    rx_frames: DFF<Bits<32>>,
    rx_bytes: DFF<Bits<32>>,
    rx_last_len: DFF<Bits<32>>,
    rx_errors: DFF<Bits<32>>,
    // RX input register stage: the MAC's beat, one cycle later
    in_v: DFF<Bit>,
    in_d: DFF<Bits<512>>,
    in_k: DFF<Bits<64>>,
    in_l: DFF<Bit>,
    in_u: DFF<Bit>,
    rep: [Signal<Local, Bits<512>>; 5],
    /// the registered beat's tkeep popcount (an adder tree), registered again (`pc_r`) with
    /// the beat's valid/last/error (`s2_*`): the byte counts add it a cycle later, so no
    /// adder follows the tree in its cycle
    pc: Popcount64,
    pc_r: DFF<Bits<7>>,
    s2_v: DFF<Bit>,
    s2_l: DFF<Bit>,
    s2_u: DFF<Bit>,
    tx_last_beat: Signal<Local, Bits<6>>,
    tx_len_m1: Signal<Local, Bits<32>>,
    tx_is_last: Signal<Local, Bit>,
    frame_len: Signal<Local, Bits<32>>,
}

impl Default for MacDebug {
    fn default() -> Self {
        MacDebug {
            clock: Default::default(),
            rst: Default::default(),
            soft_reset: Default::default(),
            bus: Default::default(),
            tx: Default::default(),
            rx: Default::default(),
            rx_pulse: Default::default(),
            txram: Default::default(),
            rxram: Default::default(),
            a_tx_len: reg_addr(mac::TX_LEN),
            a_tx_ctrl: reg_addr(mac::TX_CTRL),
            a_tx_status: reg_addr(mac::TX_STATUS),
            a_tx_frames: reg_addr(mac::TX_FRAMES),
            a_rx_frames: reg_addr(mac::RX_FRAMES),
            a_rx_bytes: reg_addr(mac::RX_BYTES),
            a_rx_last_len: reg_addr(mac::RX_LAST_LEN),
            a_rx_errors: reg_addr(mac::RX_ERRORS),
            w_tx: win(mac::TX_BUF),
            w_rx: win(mac::RX_BUF),
            min_len: Constant::new((mac::MIN_LEN as u64).into()),
            max_len: Constant::new((mac::BUF_BYTES as u64).into()),
            ones64: Constant::new(u64::MAX.into()),
            nibble: Constant::new(0xFu64.into()),
            zero32: Constant::new(0u64.into()),
            rdata: Default::default(),
            rx_rd: Default::default(),
            rx_off: Default::default(),
            tx_len: Default::default(),
            tx_busy: Default::default(),
            tx_bad_len: Default::default(),
            tx_ok: Default::default(),
            tx_beat: Default::default(),
            tx_frames: Default::default(),
            rx_beat: Default::default(),
            rx_len: Default::default(),
            rx_frames: Default::default(),
            rx_bytes: Default::default(),
            rx_last_len: Default::default(),
            rx_errors: Default::default(),
            in_v: Default::default(),
            in_d: Default::default(),
            in_k: Default::default(),
            in_l: Default::default(),
            in_u: Default::default(),
            rep: Default::default(),
            pc: Default::default(),
            pc_r: Default::default(),
            s2_v: Default::default(),
            s2_l: Default::default(),
            s2_u: Default::default(),
            tx_last_beat: Default::default(),
            tx_len_m1: Default::default(),
            tx_is_last: Default::default(),
            frame_len: Default::default(),
        }
    }
}

impl Logic for MacDebug {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, rdata, rx_rd, rx_off, tx_len, tx_busy, tx_bad_len, tx_ok, tx_beat,
            tx_frames
        );
        dff_setup!(
            self,
            clock,
            rx_beat,
            rx_len,
            rx_frames,
            rx_bytes,
            rx_last_len,
            rx_errors
        );
        dff_setup!(
            self, clock, in_v, in_d, in_k, in_l, in_u, pc_r, s2_v, s2_l, s2_u
        );
        self.txram.clock.next = self.clock.val();
        self.rxram.clock.next = self.clock.val();
        self.rx_pulse.next = false;
        // ---------------- register reads (+ RX window, registered RAM read)
        self.rdata.d.next = 0.into();
        self.rx_rd.d.next =
            self.bus.rd.val() && (self.bus.addr.val().get_bits::<5>(11) == self.w_rx.val());
        self.rx_off.d.next = bit_cast::<9, 4>(self.bus.addr.val().get_bits::<4>(2)) << 5;
        self.rxram.read_address.next = self.bus.addr.val().get_bits::<5>(6);
        if self.bus.rd.val() {
            if self.bus.addr.val() == self.a_tx_len.val() {
                self.rdata.d.next = self.tx_len.q.val();
            } else if self.bus.addr.val() == self.a_tx_status.val() {
                self.rdata.d.next = self
                    .zero32
                    .val()
                    .replace_bit(0, self.tx_busy.q.val())
                    .replace_bit(1, self.tx_bad_len.q.val());
            } else if self.bus.addr.val() == self.a_tx_frames.val() {
                self.rdata.d.next = self.tx_frames.q.val();
            } else if self.bus.addr.val() == self.a_rx_frames.val() {
                self.rdata.d.next = self.rx_frames.q.val();
            } else if self.bus.addr.val() == self.a_rx_bytes.val() {
                self.rdata.d.next = self.rx_bytes.q.val();
            } else if self.bus.addr.val() == self.a_rx_last_len.val() {
                self.rdata.d.next = self.rx_last_len.q.val();
            } else if self.bus.addr.val() == self.a_rx_errors.val() {
                self.rdata.d.next = self.rx_errors.q.val();
            }
        }
        if self.rx_rd.q.val() {
            self.bus.rdata.next = self.rdata.q.val()
                | self
                    .rxram
                    .read_data
                    .val()
                    .get_bits::<32>(self.rx_off.q.val().index());
        } else {
            self.bus.rdata.next = self.rdata.q.val();
        }
        // ---------------- TX window writes: one 32-bit word into its lanes of a 512-bit entry
        self.rep[0].next = bit_cast::<512, 32>(self.bus.wdata.val());
        self.rep[1].next = self.rep[0].val() | (self.rep[0].val() << 32);
        self.rep[2].next = self.rep[1].val() | (self.rep[1].val() << 64);
        self.rep[3].next = self.rep[2].val() | (self.rep[2].val() << 128);
        self.rep[4].next = self.rep[3].val() | (self.rep[3].val() << 256);
        self.txram.write_data.next = self.rep[4].val();
        self.txram.write_address.next = self.bus.addr.val().get_bits::<5>(6);
        self.txram.write_enable.next = 0.into();
        if self.bus.wr.val() && (self.bus.addr.val().get_bits::<5>(11) == self.w_tx.val()) {
            self.txram.write_enable.next =
                self.nibble.val() << (bit_cast::<64, 4>(self.bus.addr.val().get_bits::<4>(2)) << 2);
        }
        // ---------------- TX control
        if self.bus.wr.val() && !self.tx_busy.q.val() {
            if self.bus.addr.val() == self.a_tx_len.val() {
                self.tx_len.d.next = self.bus.wdata.val();
            } else if self.bus.addr.val() == self.a_tx_ctrl.val() && self.bus.wdata.val().get_bit(0)
            {
                if (self.tx_len.q.val() < self.min_len.val())
                    || (self.tx_len.q.val() > self.max_len.val())
                {
                    self.tx_bad_len.d.next = true;
                } else {
                    self.tx_bad_len.d.next = false;
                    self.tx_busy.d.next = true;
                    self.tx_beat.d.next = 0.into();
                }
            }
        }
        self.tx_len_m1.next = self.tx_len.q.val() - 1;
        self.tx_last_beat.next = self.tx_len_m1.val().get_bits::<6>(6);
        self.tx_is_last.next = self.tx_beat.q.val() == self.tx_last_beat.val();
        self.txram.read_address.next = self.tx_beat.q.val().get_bits::<5>(0);
        self.tx_ok.d.next = self.tx_busy.q.val();
        self.tx.tvalid.next = self.tx_busy.q.val() && self.tx_ok.q.val();
        self.tx.tdata.next = self.txram.read_data.val();
        self.tx.tlast.next = self.tx_is_last.val();
        self.tx.tuser.next = false;
        self.tx.tkeep.next = self.ones64.val();
        if self.tx_is_last.val() && self.tx_len.q.val().get_bits::<6>(0).any() {
            self.tx.tkeep.next =
                !(self.ones64.val() << bit_cast::<64, 6>(self.tx_len.q.val().get_bits::<6>(0)));
        }
        if self.tx.tvalid.val() && self.tx.tready.val() {
            self.tx_ok.d.next = false;
            self.tx_beat.d.next = self.tx_beat.q.val() + 1;
            if self.tx_is_last.val() {
                self.tx_busy.d.next = false;
                self.tx_frames.d.next = self.tx_frames.q.val() + 1;
            }
        }
        // ---------------- RX: capture up to 32 beats, count bytes (tkeep popcount)
        self.rx.tready.next = true;
        self.in_v.d.next = self.rx.tvalid.val();
        self.in_d.d.next = self.rx.tdata.val();
        self.in_k.d.next = self.rx.tkeep.val();
        self.in_l.d.next = self.rx.tlast.val();
        self.in_u.d.next = self.rx.tuser.val();
        // popcount of the registered beat's tkeep (stage 1), its sum into the frame's length
        // a cycle later (stage 2)
        self.pc.i.next = self.in_k.q.val();
        self.pc_r.d.next = self.pc.n.val();
        self.s2_v.d.next = self.in_v.q.val();
        self.s2_l.d.next = self.in_l.q.val();
        self.s2_u.d.next = self.in_u.q.val();
        self.frame_len.next = self.rx_len.q.val() + bit_cast::<32, 7>(self.pc_r.q.val());
        self.rxram.write_address.next = self.rx_beat.q.val().get_bits::<5>(0);
        self.rxram.write_data.next = self.in_d.q.val();
        self.rxram.write_enable.next = 0.into();
        if self.in_v.q.val() {
            if self.rx_beat.q.val() < 32 {
                self.rxram.write_enable.next = self.in_k.q.val();
            }
            self.rx_beat.d.next = self.rx_beat.q.val() + 1;
            if self.in_l.q.val() {
                self.rx_beat.d.next = 0.into();
            }
        }
        if self.s2_v.q.val() {
            self.rx_len.d.next = self.frame_len.val();
            if self.s2_l.q.val() {
                self.rx_len.d.next = 0.into();
                if self.s2_u.q.val() {
                    self.rx_errors.d.next = self.rx_errors.q.val() + 1;
                } else {
                    self.rx_frames.d.next = self.rx_frames.q.val() + 1;
                    self.rx_bytes.d.next = self.rx_bytes.q.val() + self.frame_len.val();
                    self.rx_last_len.d.next = self.frame_len.val();
                    self.rx_pulse.next = true;
                }
            }
        }
        if self.rst.val() || self.soft_reset.val() {
            self.tx_busy.d.next = false;
            self.tx_bad_len.d.next = false;
            self.tx_frames.d.next = 0.into();
            self.rx_frames.d.next = 0.into();
            self.rx_bytes.d.next = 0.into();
            self.rx_last_len.d.next = 0.into();
            self.rx_errors.d.next = 0.into();
            self.rx_beat.d.next = 0.into();
            self.rx_len.d.next = 0.into();
        }
        if self.rst.val() {
            self.in_v.d.next = false;
            self.s2_v.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;

    fn frame(r: &mut rand_chacha::ChaCha8Rng, len: usize) -> Vec<u8> {
        (0..len).map(|_| r.random()).collect()
    }

    /// TX under random tready backpressure; RX with random idle cycles inside frames, MAC
    /// error frames, and frames longer than the capture window.
    #[test]
    fn tx_backpressure_and_rx_gaps() {
        let mut m = model(MacDebug::default(), "macdbg");
        let mut r = rng(21);
        reset(&mut m);
        let mut sent = 0u32;
        for (k, len) in [14usize, 63, 64, 65, 200, 1514, 2047, 2048]
            .into_iter()
            .enumerate()
        {
            let p = [0.0, 0.5, 0.8][k % 3];
            let f = frame(&mut r, len);
            for (i, c) in f.chunks(4).enumerate() {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                bus_write(&mut m, mac::TX_BUF + 4 * i as u32, u32::from_le_bytes(w));
            }
            bus_write(&mut m, mac::TX_LEN, len as u32);
            bus_write(&mut m, mac::TX_CTRL, mac::TX_CTRL_SEND);
            let mut got = Vec::new();
            let mut prev: Option<Vec<u8>> = None;
            for _ in 0..2000 {
                let ready = !chance(&mut r, p);
                m.set("tx_tready", ready as u64);
                m.tick();
                if m.bit("tx_tvalid") {
                    let d = m.get_bytes("tx_tdata");
                    if let Some(pv) = &prev {
                        assert_eq!(pv, &d, "TDATA changed while TVALID was held");
                    }
                    prev = Some(d.clone());
                    if ready {
                        prev = None;
                        let keep = m.get("tx_tkeep");
                        let n = keep.count_ones() as usize;
                        assert_eq!(
                            keep,
                            if n == 64 { u64::MAX } else { (1 << n) - 1 },
                            "contiguous TKEEP"
                        );
                        got.extend_from_slice(&d[..n]);
                        if m.bit("tx_tlast") {
                            break;
                        }
                    }
                }
            }
            m.set("tx_tready", 0);
            sent += 1;
            assert_eq!(got, f, "frame of {len} bytes");
            assert_eq!(bus_read(&mut m, mac::TX_FRAMES), sent);
        }
        // RX
        let (mut good, mut bytes, mut bad) = (0u32, 0u32, 0u32);
        for (k, len) in [14usize, 64, 65, 1000, 2048, 3000, 100]
            .into_iter()
            .enumerate()
        {
            let f = frame(&mut r, len);
            let err = k == 5;
            let beats: Vec<&[u8]> = f.chunks(64).collect();
            for (i, b) in beats.iter().enumerate() {
                while chance(&mut r, 0.5) {
                    m.set("rx_tvalid", 0);
                    m.tick();
                }
                m.set("rx_tvalid", 1);
                m.set_bytes("rx_tdata", b);
                m.set(
                    "rx_tkeep",
                    if b.len() == 64 {
                        u64::MAX
                    } else {
                        (1 << b.len()) - 1
                    },
                );
                m.set("rx_tlast", (i == beats.len() - 1) as u64);
                m.set("rx_tuser", (err && i == beats.len() - 1) as u64);
                m.tick();
                assert!(m.bit("rx_tready"), "the RX side never backpressures");
            }
            m.set("rx_tvalid", 0);
            // the counters take a frame's last beat two cycles after it (input register,
            // then the byte count a cycle after its popcount)
            m.tick();
            m.tick();
            if err {
                bad += 1;
            } else {
                good += 1;
                bytes += len as u32;
                assert_eq!(bus_read(&mut m, mac::RX_LAST_LEN), len as u32);
                let n = len.min(mac::BUF_BYTES as usize);
                let mut cap = Vec::new();
                for i in 0..n.div_ceil(4) {
                    cap.extend_from_slice(
                        &bus_read(&mut m, mac::RX_BUF + 4 * i as u32).to_le_bytes(),
                    );
                }
                assert_eq!(&cap[..n], &f[..n], "captured frame of {len} bytes");
            }
            assert_eq!(bus_read(&mut m, mac::RX_FRAMES), good);
            assert_eq!(bus_read(&mut m, mac::RX_BYTES), bytes);
            assert_eq!(bus_read(&mut m, mac::RX_ERRORS), bad);
        }
        // bad lengths are refused
        bus_write(&mut m, mac::TX_LEN, 13);
        bus_write(&mut m, mac::TX_CTRL, mac::TX_CTRL_SEND);
        assert_eq!(bus_read(&mut m, mac::TX_STATUS), mac::TX_STATUS_BAD_LEN);
    }
}
