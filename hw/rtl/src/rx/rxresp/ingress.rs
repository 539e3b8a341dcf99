//! Ingress of [`super::RxResp`]: flow control, the packet buffer, the header parser and the
//! ICRC check on every received frame, the frame's verdict and the header FIFO whose head the
//! responder works on (see the module documentation of `rx::rxresp`).

use super::{BUF_BEATS, BUF_BITS, FIFO_DEPTH, HQ_BITS, MAX_BEATS, PTR_BITS, PktBufRdS, RxHdrM};
use crate::common::bus::{RxCheckM, StreamS};
use crate::common::fifo::PeekFifo;
use crate::net::icrc::Icrc;
use crate::rx::rxparse::{self, RxParse};
use rnic_abi::roce;
use rust_hdl::prelude::*;

/// Width of a header FIFO entry (see the packing in `update`).
const HDR_W: usize = 544;
/// Per-frame facts carried from the frame's last beat to the parser's result (4 cycles):
/// bit 0 admitted, bit 1 too long, bit 2 MAC error (`tuser`), bits 3.. buffer start,
/// bits 12.. buffer end.
const FACT_W: usize = 3 + 2 * PTR_BITS;

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

#[derive(LogicBlock)]
pub struct Ingress {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub rx: StreamS,
    /// Head of the header FIFO.
    pub head: RxHdrM,
    /// Read port of the packet buffer (the mover's).
    pub buf: PktBufRdS,
    /// The mover's free pointer: buffer beats before it may be overwritten.
    pub free_ptr: Signal<In, Bits<PTR_BITS>>,
    /// Every frame's parser + ICRC result (the `rxstat` counters).
    pub chk: RxCheckM,
    pub cnt_drop_icrc: Signal<Out, Bits<32>>,
    pub cnt_drop_parse: Signal<Out, Bits<32>>,
    pub cnt_drop_buf: Signal<Out, Bits<32>>,
    // ---- sub-blocks
    parse: RxParse,
    crc: Icrc,
    pbuf: RAM<Bits<512>, BUF_BITS>,
    hq: PeekFifo<HDR_W, HQ_BITS>,
    // ---- constants
    k_ip_len: Constant<Bits<10>>,
    k_eth: Constant<Bits<16>>,
    k_max_beats: Constant<Bits<11>>,
    k_room: Constant<Bits<PTR_BITS>>,
    k_fifo: Constant<Bits<5>>,
    k_ones64: Constant<Bits<64>>,
    // ---- registers
    mid_frame: DFF<Bit>,
    beat_no: DFF<Bits<11>>,
    admitted: DFF<Bit>,
    too_long: DFF<Bit>,
    frame_start: DFF<Bits<PTR_BITS>>,
    wr_ptr: DFF<Bits<PTR_BITS>>,
    crc_on: DFF<Bit>,
    crc_end_beat: DFF<Bits<11>>,
    crc_end_lane: DFF<Bits<6>>,
    hdr_credits: DFF<Bits<5>>,
    dly_valid: DFF<Bit>,
    dly_data: DFF<Bits<512>>,
    dly_keep: DFF<Bits<64>>,
    dly_last: DFF<Bit>,
    facts_d1: DFF<Bits<FACT_W>>,
    facts_d2: DFF<Bits<FACT_W>>,
    facts_d3: DFF<Bits<FACT_W>>,
    facts_d4: DFF<Bits<FACT_W>>,
    // the ICRC's registered input (its beat is `dly_data`)
    crc_v: DFF<Bit>,
    crc_last: DFF<Bit>,
    crc_keep: DFF<Bits<64>>,
    ct_drop_icrc: DFF<Bits<32>>,
    ct_drop_parse: DFF<Bits<32>>,
    ct_drop_buf: DFF<Bits<32>>,
    // ---- combinational
    first_beat: Signal<Local, Bit>,
    room: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    beat_idx: Signal<Local, Bits<11>>,
    ip_len: Signal<Local, Bits<16>>,
    crc_last_byte: Signal<Local, Bits<16>>,
    cur_crc_end_beat: Signal<Local, Bits<11>>,
    cur_crc_end_lane: Signal<Local, Bits<6>>,
    cur_crc_on: Signal<Local, Bit>,
    crc_cut: Signal<Local, Bit>,
    crc_keep_n: Signal<Local, Bits<64>>,
    buf_used: Signal<Local, Bits<PTR_BITS>>,
    cur_admitted: Signal<Local, Bit>,
    cur_too_long: Signal<Local, Bit>,
    buf_we: Signal<Local, Bit>,
    admit: Signal<Local, Bit>,
    facts_now: Signal<Local, Bits<FACT_W>>,
    fact_start: Signal<Local, Bits<PTR_BITS>>,
    fact_end: Signal<Local, Bits<PTR_BITS>>,
    verdict_drop: Signal<Local, Bit>,
    data_len: Signal<Local, Bits<16>>,
}

impl Ingress {
    pub fn new() -> Self {
        Ingress {
            clock: Default::default(),
            rst: Default::default(),
            rx: Default::default(),
            head: Default::default(),
            buf: Default::default(),
            free_ptr: Default::default(),
            chk: Default::default(),
            cnt_drop_icrc: Default::default(),
            cnt_drop_parse: Default::default(),
            cnt_drop_buf: Default::default(),
            parse: Default::default(),
            crc: Default::default(),
            pbuf: Default::default(),
            hq: Default::default(),
            k_ip_len: k(8 * (rxparse::IP_OFF as u64 + 2)),
            k_eth: k(roce::ETH_HDR_BYTES as u64),
            k_max_beats: k(MAX_BEATS as u64),
            k_room: k((BUF_BEATS - MAX_BEATS) as u64),
            k_fifo: k(FIFO_DEPTH as u64),
            k_ones64: k(u64::MAX),
            mid_frame: Default::default(),
            beat_no: Default::default(),
            admitted: Default::default(),
            too_long: Default::default(),
            frame_start: Default::default(),
            wr_ptr: Default::default(),
            crc_on: Default::default(),
            crc_end_beat: Default::default(),
            crc_end_lane: Default::default(),
            hdr_credits: Default::default(),
            dly_valid: Default::default(),
            dly_data: Default::default(),
            dly_keep: Default::default(),
            dly_last: Default::default(),
            facts_d1: Default::default(),
            facts_d2: Default::default(),
            facts_d3: Default::default(),
            facts_d4: Default::default(),
            crc_v: Default::default(),
            crc_last: Default::default(),
            crc_keep: Default::default(),
            ct_drop_icrc: Default::default(),
            ct_drop_parse: Default::default(),
            ct_drop_buf: Default::default(),
            first_beat: Default::default(),
            room: Default::default(),
            take: Default::default(),
            beat_idx: Default::default(),
            ip_len: Default::default(),
            crc_last_byte: Default::default(),
            cur_crc_end_beat: Default::default(),
            cur_crc_end_lane: Default::default(),
            cur_crc_on: Default::default(),
            crc_cut: Default::default(),
            crc_keep_n: Default::default(),
            buf_used: Default::default(),
            cur_admitted: Default::default(),
            cur_too_long: Default::default(),
            buf_we: Default::default(),
            admit: Default::default(),
            facts_now: Default::default(),
            fact_start: Default::default(),
            fact_end: Default::default(),
            verdict_drop: Default::default(),
            data_len: Default::default(),
        }
    }
}

impl Default for Ingress {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for Ingress {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            mid_frame,
            beat_no,
            admitted,
            too_long,
            frame_start,
            wr_ptr,
            crc_on,
            crc_end_beat,
            crc_end_lane,
            hdr_credits
        );
        dff_setup!(
            self,
            clock,
            dly_valid,
            dly_data,
            dly_keep,
            dly_last,
            facts_d1,
            facts_d2,
            facts_d3,
            facts_d4,
            crc_v,
            crc_last,
            crc_keep,
            ct_drop_icrc,
            ct_drop_parse,
            ct_drop_buf
        );
        self.parse.clock.next = self.clock.val();
        self.crc.clock.next = self.clock.val();
        self.hq.clock.next = self.clock.val();
        self.pbuf.read_clock.next = self.clock.val();
        self.pbuf.write_clock.next = self.clock.val();
        self.parse.rst.next = self.rst.val();
        self.crc.rst.next = self.rst.val();
        self.hq.rst.next = self.rst.val();

        // =========================================================== flow control
        self.first_beat.next = !self.mid_frame.q.val();
        // a frame starts only when the buffer has room for a maximum frame and the header
        // FIFO a slot; until then its first beat waits (tready low). In the simulator the link
        // pauses (PFC stand-in); on a board the MAC-side FIFO absorbs or drops. Mid-frame
        // beats are always taken (their room was reserved at the start).
        self.room.next = (self.wr_ptr.q.val() - self.free_ptr.val()) <= self.k_room.val()
            && self.hdr_credits.q.val() < self.k_fifo.val();
        self.rx.tready.next = !self.first_beat.val() || self.room.val();
        self.take.next = self.rx.tvalid.val() && (!self.first_beat.val() || self.room.val());
        self.beat_idx.next = self.beat_no.q.val();
        if self.first_beat.val() {
            self.beat_idx.next = 0.into();
        }

        // =========================================================== ICRC on the live beat
        // end of the ICRC-covered bytes: 14 + IPv4 total length (first beat's bytes 16..17)
        self.ip_len.next = (bit_cast::<16, 8>(
            self.rx
                .tdata
                .val()
                .get_bits::<8>(self.k_ip_len.val().index()),
        ) << 8)
            | bit_cast::<16, 8>(
                self.rx
                    .tdata
                    .val()
                    .get_bits::<8>(self.k_ip_len.val().index() + 8),
            );
        self.crc_last_byte.next = self.ip_len.val() + self.k_eth.val() - 1;
        self.cur_crc_end_beat.next = self.crc_end_beat.q.val();
        self.cur_crc_end_lane.next = self.crc_end_lane.q.val();
        self.cur_crc_on.next = self.crc_on.q.val();
        if self.first_beat.val() {
            self.cur_crc_end_beat.next =
                bit_cast::<11, 10>(self.crc_last_byte.val().get_bits::<10>(6));
            self.cur_crc_end_lane.next = self.crc_last_byte.val().get_bits::<6>(0);
            self.cur_crc_on.next = true;
        }
        self.crc_cut.next = self.beat_idx.val() == self.cur_crc_end_beat.val();
        self.crc_keep_n.next = bit_cast::<64, 6>(self.cur_crc_end_lane.val()) + 1;
        // the ICRC takes the beat from registers (`dly_data` and these): nothing between the
        // MAC's stream and its XOR tree but a flip-flop
        self.crc_v.d.next = self.take.val() && self.cur_crc_on.val() && !self.rst.val();
        self.crc_last.d.next = self.rx.tlast.val() || self.crc_cut.val();
        self.crc_keep.d.next = self.rx.tkeep.val();
        if self.crc_cut.val() {
            self.crc_keep.d.next =
                self.rx.tkeep.val() & !(self.k_ones64.val() << self.crc_keep_n.val());
        }
        self.crc.tdata.next = self.dly_data.q.val();
        self.crc.tvalid.next = self.crc_v.q.val();
        self.crc.tlast.next = self.crc_last.q.val();
        self.crc.tkeep.next = self.crc_keep.q.val();
        self.crc.rx.next = true;

        // =========================================================== packet buffer
        // admission at the first beat
        self.buf_used.next = self.wr_ptr.q.val() - self.free_ptr.val();
        self.cur_admitted.next = self.admitted.q.val();
        self.cur_too_long.next = self.too_long.q.val();
        if self.first_beat.val() {
            self.cur_admitted.next = self.buf_used.val() <= self.k_room.val()
                && self.hdr_credits.q.val() < self.k_fifo.val();
            self.cur_too_long.next = false;
        }
        if self.beat_idx.val() >= self.k_max_beats.val() {
            self.cur_too_long.next = true;
        }
        self.buf_we.next = self.take.val() && self.cur_admitted.val() && !self.cur_too_long.val();
        self.pbuf.write_address.next = self.wr_ptr.q.val().get_bits::<BUF_BITS>(0);
        self.pbuf.write_data.next = self.rx.tdata.val();
        self.pbuf.write_enable.next = self.buf_we.val();
        self.pbuf.read_address.next = self.buf.addr.val();
        self.buf.data.next = self.pbuf.read_data.val();
        self.admit.next = self.take.val() && self.first_beat.val() && self.cur_admitted.val();
        if self.buf_we.val() {
            self.wr_ptr.d.next = self.wr_ptr.q.val() + 1;
        }
        if self.take.val() {
            self.mid_frame.d.next = !self.rx.tlast.val();
            self.beat_no.d.next = self.beat_idx.val() + 1;
            self.admitted.d.next = self.cur_admitted.val();
            self.too_long.d.next = self.cur_too_long.val();
            self.crc_on.d.next = self.cur_crc_on.val() && !self.crc_cut.val();
            self.crc_end_beat.d.next = self.cur_crc_end_beat.val();
            self.crc_end_lane.d.next = self.cur_crc_end_lane.val();
            if self.first_beat.val() {
                self.frame_start.d.next = self.wr_ptr.q.val();
            }
        }
        // per-frame facts, delayed to the parser's result
        self.fact_start.next = self.frame_start.q.val();
        if self.first_beat.val() {
            self.fact_start.next = self.wr_ptr.q.val();
        }
        self.fact_end.next = self.wr_ptr.q.val();
        if self.buf_we.val() {
            self.fact_end.next = self.wr_ptr.q.val() + 1;
        }
        self.facts_now.next = bit_cast::<FACT_W, 1>(self.cur_admitted.val().into())
            | (bit_cast::<FACT_W, 1>(self.cur_too_long.val().into()) << 1)
            | (bit_cast::<FACT_W, 1>(self.rx.tuser.val().into()) << 2)
            | (bit_cast::<FACT_W, PTR_BITS>(self.fact_start.val()) << 3)
            | (bit_cast::<FACT_W, PTR_BITS>(self.fact_end.val()) << 12);
        self.facts_d1.d.next = self.facts_now.val();
        self.facts_d2.d.next = self.facts_d1.q.val();
        self.facts_d3.d.next = self.facts_d2.q.val();
        self.facts_d4.d.next = self.facts_d3.q.val();

        // =========================================================== parser
        // the parser sees the same registered copy as the ICRC (both results 4 cycles after
        // the MAC's last beat)
        self.dly_valid.d.next = self.take.val() && !self.rst.val();
        self.dly_data.d.next = self.rx.tdata.val();
        self.dly_keep.d.next = self.rx.tkeep.val();
        self.dly_last.d.next = self.rx.tlast.val();
        self.parse.tdata.next = self.dly_data.q.val();
        self.parse.tkeep.next = self.dly_keep.q.val();
        self.parse.tlast.next = self.dly_last.q.val();
        self.parse.tvalid.next = self.dly_valid.q.val();

        // =========================================================== verdict -> header FIFO
        self.verdict_drop.next = self.parse.drop.val()
            || !self.crc.icrc_ok.val()
            || self.facts_d4.q.val().get_bit(1)
            || self.facts_d4.q.val().get_bit(2);
        self.hq.wr.next = false;
        // the message bytes, without the pad: the responder's length checks start from it
        self.data_len.next = self.parse.pay_len.val() - bit_cast::<16, 2>(self.parse.pad_cnt.val());
        self.hq.din.next = bit_cast::<HDR_W, 64>(self.parse.reth_va.val())
            | (bit_cast::<HDR_W, 32>(self.parse.reth_rkey.val()) << 64)
            | (bit_cast::<HDR_W, 32>(self.parse.reth_len.val()) << 96)
            | (bit_cast::<HDR_W, 32>(self.parse.immdt.val()) << 128)
            | (bit_cast::<HDR_W, 24>(self.parse.psn.val()) << 160)
            | (bit_cast::<HDR_W, 8>(self.parse.opcode.val()) << 184)
            | (bit_cast::<HDR_W, 24>(self.parse.dest_qpn.val()) << 192)
            | (bit_cast::<HDR_W, 8>(self.parse.aeth_syndrome.val()) << 216)
            | (bit_cast::<HDR_W, 24>(self.parse.aeth_msn.val()) << 224)
            | (bit_cast::<HDR_W, 2>(self.parse.pad_cnt.val()) << 248)
            | (bit_cast::<HDR_W, 1>(self.parse.ack_req.val().into()) << 250)
            | (bit_cast::<HDR_W, 1>(self.verdict_drop.val().into()) << 251)
            | (bit_cast::<HDR_W, 16>(self.parse.pay_off.val()) << 256)
            | (bit_cast::<HDR_W, 16>(self.data_len.val()) << 272)
            | (bit_cast::<HDR_W, PTR_BITS>(self.facts_d4.q.val().get_bits::<PTR_BITS>(3)) << 288)
            | (bit_cast::<HDR_W, PTR_BITS>(self.facts_d4.q.val().get_bits::<PTR_BITS>(12)) << 297)
            | (bit_cast::<HDR_W, 16>(self.parse.pkey.val()) << 320)
            | (bit_cast::<HDR_W, 32>(self.parse.dst_ip.val()) << 336)
            | (bit_cast::<HDR_W, 48>(self.parse.dst_mac.val()) << 368)
            | (bit_cast::<HDR_W, 64>(self.parse.atom_swap.val()) << 416)
            | (bit_cast::<HDR_W, 64>(self.parse.atom_cmp.val()) << 480);
        if self.parse.hdr_valid.val() {
            if self.facts_d4.q.val().get_bit(0) {
                self.hq.wr.next = true;
                if self.parse.drop.val()
                    || self.facts_d4.q.val().get_bit(1)
                    || self.facts_d4.q.val().get_bit(2)
                {
                    self.ct_drop_parse.d.next = self.ct_drop_parse.q.val() + 1;
                } else if !self.crc.icrc_ok.val() {
                    self.ct_drop_icrc.d.next = self.ct_drop_icrc.q.val() + 1;
                }
            } else {
                self.ct_drop_buf.d.next = self.ct_drop_buf.q.val() + 1;
            }
        }

        // every frame's checks, for rxstat (the ICRC result is the same frame's: both are
        // valid 4 cycles after the last beat)
        self.chk.valid.next = self.parse.hdr_valid.val();
        self.chk.drop.next = self.parse.drop.val();
        self.chk.reason.next = self.parse.drop_reason.val();
        self.chk.icrc_ok.next = self.crc.icrc_ok.val();
        self.chk.opcode.next = self.parse.opcode.val();
        self.chk.qpn.next = self.parse.dest_qpn.val();
        self.chk.psn.next = self.parse.psn.val();

        // =========================================================== head of the FIFO
        self.head.valid.next = !self.hq.empty.val();
        self.head.va.next = self.hq.dout.val().get_bits::<64>(0);
        self.head.rkey.next = self.hq.dout.val().get_bits::<32>(64);
        self.head.rlen.next = self.hq.dout.val().get_bits::<32>(96);
        self.head.imm.next = self.hq.dout.val().get_bits::<32>(128);
        self.head.psn.next = self.hq.dout.val().get_bits::<24>(160);
        self.head.opcode.next = self.hq.dout.val().get_bits::<8>(184);
        self.head.qpn.next = self.hq.dout.val().get_bits::<24>(192);
        self.head.syndrome.next = self.hq.dout.val().get_bits::<8>(216);
        self.head.aeth_msn.next = self.hq.dout.val().get_bits::<24>(224);
        self.head.pad.next = self.hq.dout.val().get_bits::<2>(248);
        self.head.ackreq.next = self.hq.dout.val().get_bit(250);
        self.head.drop.next = self.hq.dout.val().get_bit(251);
        self.head.pay_off.next = self.hq.dout.val().get_bits::<16>(256);
        self.head.data_len.next = self.hq.dout.val().get_bits::<16>(272);
        self.head.buf_start.next = self.hq.dout.val().get_bits::<PTR_BITS>(288);
        self.head.buf_end.next = self.hq.dout.val().get_bits::<PTR_BITS>(297);
        self.head.pkey.next = self.hq.dout.val().get_bits::<16>(320);
        self.head.dip.next = self.hq.dout.val().get_bits::<32>(336);
        self.head.dmac.next = self.hq.dout.val().get_bits::<48>(368);
        self.head.swap.next = self.hq.dout.val().get_bits::<64>(416);
        self.head.cmp.next = self.hq.dout.val().get_bits::<64>(480);
        // the entry behind the head (the responder's next frame, `n_*`)
        self.head.n_valid.next = self.hq.two.val();
        self.head.n_va.next = self.hq.dout2.val().get_bits::<64>(0);
        self.head.n_rkey.next = self.hq.dout2.val().get_bits::<32>(64);
        self.head.n_rlen.next = self.hq.dout2.val().get_bits::<32>(96);
        self.head.n_psn.next = self.hq.dout2.val().get_bits::<24>(160);
        self.head.n_opcode.next = self.hq.dout2.val().get_bits::<8>(184);
        self.head.n_qpn.next = self.hq.dout2.val().get_bits::<24>(192);
        self.head.n_drop.next = self.hq.dout2.val().get_bit(251);
        self.head.n_pkey.next = self.hq.dout2.val().get_bits::<16>(320);
        self.head.n_syndrome.next = self.hq.dout2.val().get_bits::<8>(216);
        self.head.n_aeth_msn.next = self.hq.dout2.val().get_bits::<24>(224);
        self.head.n_data_len.next = self.hq.dout2.val().get_bits::<16>(272);
        self.head.n_dip.next = self.hq.dout2.val().get_bits::<32>(336);
        self.head.n_dmac.next = self.hq.dout2.val().get_bits::<48>(368);
        self.hq.rd.next = self.head.pop.val();
        // admission credits: + at an admitted first beat, - at a header pop
        if self.admit.val() && !self.head.pop.val() {
            self.hdr_credits.d.next = self.hdr_credits.q.val() + 1;
        } else if !self.admit.val() && self.head.pop.val() {
            self.hdr_credits.d.next = self.hdr_credits.q.val() - 1;
        }

        // =========================================================== counters, reset
        self.cnt_drop_icrc.next = self.ct_drop_icrc.q.val();
        self.cnt_drop_parse.next = self.ct_drop_parse.q.val();
        self.cnt_drop_buf.next = self.ct_drop_buf.q.val();
        if self.rst.val() {
            self.mid_frame.d.next = false;
            self.admitted.d.next = false;
            self.too_long.d.next = false;
            self.wr_ptr.d.next = 0.into();
            self.crc_on.d.next = false;
            self.hdr_credits.d.next = 0.into();
            self.ct_drop_icrc.d.next = 0.into();
            self.ct_drop_parse.d.next = 0.into();
            self.ct_drop_buf.d.next = 0.into();
        }
    }
}
