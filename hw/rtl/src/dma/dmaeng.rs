//! Data-path DMA engine `dmaeng` (docs/DATAPATH.md "dmaeng"): the AXI4 master to host memory
//! (`m`, 512-bit, 64-bit address, one ID) for one read client (`rd`: TX payload) and two write
//! clients (`wr0`: RX payload, `wr1`: CQEs).
//!
//! Reads: a command (any byte address, 1..=8192 bytes) is split into INCR bursts of 64-byte
//! beats that never cross 4 KiB (so at most 64 beats); the AR issuer runs ahead of the data
//! (up to [`RD_MAX_BURSTS`] bursts and as many commands outstanding, and within the completion
//! credits).
//!
//! Completion credits, as a PCIe endpoint's infinite completion credits: every R beat goes
//! into a read completion buffer of [`RD_BUF_BEATS`] beats (32 KiB: a [`BeRam`] for the data,
//! a 1-bit RAM for RRESP != OKAY). An AR burst of n beats is only issued while n beats of the
//! buffer are unreserved; the room is reserved at AR and freed when the beat leaves the buffer.
//! So `m.rready` is high in every cycle in which a burst is outstanding, independent of
//! `rd.dat_ready`: **R is never back-pressured** (and `m.bready` is always high, so B is never
//! back-pressured either). A stalled read client only stops new ARs. The buffer reads
//! show-ahead (its RAMs read the head after this cycle's pop), so the realigner sees one beat
//! per cycle, two cycles after its R beat; 512 beats of credit cover more than 400 cycles of
//! host read latency at one beat per cycle.
//!
//! The buffered beats of a command are realigned from the address alignment `lo` to byte 0 by
//! a byte funnel over the previous and the current beat, so output beat k = request bytes
//! 64k..64k+63; `dat_keep` on the last beat, `dat_last` per command, `dat_err` when the R beats
//! it came from had RRESP != OKAY. An unaligned command whose realigned data needs no more
//! output beats than bus beats (`lo + len` and `len` give the same beat count) needs one extra
//! output cycle after its last bus beat (no buffered beat is taken in it); every other case
//! runs at one beat per cycle.
//!
//! Writes: commands are taken round robin from `wr0`/`wr1`, one command at a time by the AW
//! issuer (the next one is taken in the cycle of the last AW of the current one). W data
//! follows AW order: a command FIFO tells the W stage which client's packed data to take;
//! a byte funnel shifts it up to the address alignment, `wstrb` masks the first and last beat.
//! A W beat is only sent for a burst whose AW was accepted. `done` pulses (registered) per
//! command, in order, once all its B responses are back, with `err` if any BRESP != OKAY.
//! Up to 128 write commands wait for their B responses ([`WR_OUT_BITS`]); the AW issuer
//! takes no command while that queue is full.
//!
//! The byte funnels are Verilog text generated from Rust ([`funnel_verilog`]) with a Rust
//! model ([`funnel_model`]).

use crate::common::beram::BeRam;
use crate::common::bus::{DmaRdS, DmaWrS, HostAxiM};
use crate::common::fifo::Fifo;
use crate::common::regslice::RegSlice;
use crate::dma::burst::BurstSplit;
use rust_hdl::prelude::*;
use std::fmt::Write;

/// Most read bursts in flight (AR accepted, last R beat not yet taken).
pub const RD_MAX_BURSTS: u64 = 1 << CMD_FIFO_BITS;

/// Address bits of the read completion buffer: 512 beats (32 KiB) of R data.
pub const RD_BUF_BITS: usize = 9;

/// Beats of the read completion buffer = read completion credits.
pub const RD_BUF_BEATS: u64 = 1 << RD_BUF_BITS;

/// The funnel function: byte k of the result is byte `sh + k` of the 128-byte value `{hi, lo}`
/// (`lo` = bytes 0..63), or 0 past byte 127 / for `sh > 64`.
pub fn funnel_model(lo: &[u8; 64], hi: &[u8; 64], sh: usize) -> [u8; 64] {
    let mut o = [0u8; 64];
    if sh <= 64 {
        for (k, b) in o.iter_mut().enumerate() {
            let s = sh + k;
            *b = if s < 64 { lo[s] } else { hi[s - 64] };
        }
    }
    o
}

/// Byte funnel shifter (64 byte lanes, shifts 0..=64).
#[derive(LogicBlock, Default)]
pub struct Funnel {
    pub lo: Signal<In, Bits<512>>,
    pub hi: Signal<In, Bits<512>>,
    pub sh: Signal<In, Bits<7>>,
    pub out: Signal<Out, Bits<512>>,
}

impl Logic for Funnel {
    fn update(&mut self) {
        let sh = self.sh.val().index();
        let (lo, hi) = (self.lo.val(), self.hi.val());
        let mut o = Bits::<512>::default();
        if sh <= 64 {
            for k in 0..64usize {
                let s = sh + k;
                let b = if s < 64 {
                    lo.get_bits::<8>(8 * s)
                } else {
                    hi.get_bits::<8>(8 * (s - 64))
                };
                o = o | (bit_cast::<512, 8>(b) << (8 * k as u64));
            }
        }
        self.out.next = o;
    }
    fn connect(&mut self) {
        self.out.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(funnel_verilog())
    }
}

/// The generated body of [`Funnel`]: a 65-way case over the shift of the 1024-bit `{hi, lo}`.
pub fn funnel_verilog() -> String {
    let mut s = String::from("wire [1023:0] both = {hi, lo};\nalways @(*) begin\n  case (sh)\n");
    for sh in 0..=64usize {
        let _ = writeln!(s, "    7'd{sh}: out = both[{}:{}];", 8 * sh + 511, 8 * sh);
    }
    s.push_str("    default: out = 512'd0;\n  endcase\nend\n");
    s
}

/// The AR slice's word: ARLEN (8 bits) above the burst's first 64-byte beat (58 bits).
const AR_WORD_BITS: usize = 66;

/// Address bits of the command FIFOs (`Fifo`s of 32-bit command words, LUT RAM): 64
/// entries, so 64 read bursts can be in flight.
pub const CMD_FIFO_BITS: usize = 6;

/// Address bits of the write-response queue (`bq`: per write command taken, its client and
/// burst count, until its B responses are back): 128 commands in flight. Posted writes need
/// no PCIe tag, so only the round trip to the B response bounds them: at the simulator's
/// host memory about 110 cycles, and a 64-byte SEND stream writes two commands per message
/// on the receiving side (payload, CQE) every 3 cycles, about 75 in flight; 64 held it.
pub const WR_OUT_BITS: usize = 7;

#[derive(LogicBlock)]
pub struct DmaEng {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub m: HostAxiM,
    pub rd: DmaRdS,
    pub wr0: DmaWrS,
    pub wr1: DmaWrS,
    pub cnt_rd_bursts: Signal<Out, Bits<32>>,
    pub cnt_wr_bursts: Signal<Out, Bits<32>>,
    pub cnt_bus_err: Signal<Out, Bits<32>>,
    ones64: Constant<Bits<64>>,
    zero32: Constant<Bits<32>>,
    c64: Constant<Bits<7>>,
    max_bursts: Constant<Bits<7>>,
    buf_beats: Constant<Bits<10>>,
    // ---------------- read: completion buffer (R beats, their RRESP != OKAY bit, credits)
    rbuf: BeRam<RD_BUF_BITS>,
    rbe: RAM<Bit, RD_BUF_BITS>,
    rb_wp: DFF<Bits<RD_BUF_BITS>>,
    rb_rp: DFF<Bits<RD_BUF_BITS>>,
    rb_cnt: DFF<Bits<10>>,
    rb_wl: DFF<Bit>,
    cr_used: DFF<Bits<10>>,
    m_fire: Signal<Local, Bit>,
    m_bad: Signal<Local, Bit>,
    rb_v: Signal<Local, Bit>,
    ar_n: Signal<Local, Bits<10>>,
    ar_room: Signal<Local, Bit>,
    // ---------------- read: AR issuer
    rq: Fifo<32, CMD_FIFO_BITS>,
    rfun: Funnel,
    /// the current read command's bursts
    ars: BurstSplit,
    /// the AR channel's register slice: `m.ar*` come from flip-flops, and the issuer sees a
    /// `ready` decoded from a register (the host port's ready, and the master mux's
    /// arbitration behind it, do not reach the credit check or the command intake)
    arsl: RegSlice<AR_WORD_BITS>,
    ar_v: Signal<Local, Bit>,
    ar_out: DFF<Bits<7>>,
    ar_fire: Signal<Local, Bit>,
    ar_final: Signal<Local, Bit>,
    ar_take: Signal<Local, Bit>,
    ar_lo: Signal<Local, Bits<6>>,
    ar_endrel: Signal<Local, Bits<15>>,
    ar_lenm1: Signal<Local, Bits<14>>,
    ar_na: Signal<Local, Bits<8>>,
    ar_no: Signal<Local, Bits<8>>,
    ar_entry: Signal<Local, Bits<32>>,
    // ---------------- read: R realigner (head of rq: lo 5:0, na-1 13:6, flush 14, end 20:15)
    rh_lo: Signal<Local, Bits<6>>,
    rh_na: Signal<Local, Bits<8>>,
    rh_fl: Signal<Local, Bit>,
    rh_endn: Signal<Local, Bits<6>>,
    r_j: DFF<Bits<8>>,
    r_flush: DFF<Bit>,
    r_h: DFF<Bits<512>>,
    r_herr: DFF<Bit>,
    r_can: Signal<Local, Bit>,
    r_rdy: Signal<Local, Bit>,
    r_fire: Signal<Local, Bit>,
    r_useh: Signal<Local, Bit>,
    r_lastin: Signal<Local, Bit>,
    r_bad: Signal<Local, Bit>,
    o_v: DFF<Bit>,
    o_data: DFF<Bits<512>>,
    o_keep: DFF<Bits<64>>,
    o_last: DFF<Bit>,
    o_err: DFF<Bit>,
    // ---------------- write: AW issuer and arbiter
    wq: Fifo<32, CMD_FIFO_BITS>,
    bq: Fifo<3, WR_OUT_BITS>,
    wfun: Funnel,
    /// the current write command's bursts
    aws: BurstSplit,
    aw_cnt: DFF<Bits<16>>,
    pref: DFF<Bit>,
    aw_fire: Signal<Local, Bit>,
    aw_final: Signal<Local, Bit>,
    wc_room: Signal<Local, Bit>,
    wc_sel: Signal<Local, Bit>,
    wc_take: Signal<Local, Bit>,
    wc_addr: Signal<Local, Bits<64>>,
    wc_len: Signal<Local, Bits<14>>,
    wc_endaddr: Signal<Local, Bits<64>>,
    wc_lo: Signal<Local, Bits<6>>,
    wc_endrel: Signal<Local, Bits<15>>,
    wc_lenm1: Signal<Local, Bits<14>>,
    wc_na: Signal<Local, Bits<8>>,
    wc_ni: Signal<Local, Bits<8>>,
    wc_entry: Signal<Local, Bits<32>>,
    wc_nb: Signal<Local, Bits<2>>,
    wc_bentry: Signal<Local, Bits<3>>,
    // ---------------- write: W stage (head of wq: client 0, lo 6:1, na-1 14:7, flush 15,
    // end 21:16, first beat address bits 27:22)
    wh_c: Signal<Local, Bit>,
    wh_lo: Signal<Local, Bits<6>>,
    wh_na: Signal<Local, Bits<8>>,
    wh_fl: Signal<Local, Bit>,
    wh_endn: Signal<Local, Bits<6>>,
    wh_fb: Signal<Local, Bits<6>>,
    w_j: DFF<Bits<8>>,
    w_prev: DFF<Bits<512>>,
    w_cnt: DFF<Bits<16>>,
    w_v: DFF<Bit>,
    w_data: DFF<Bits<512>>,
    w_strb: DFF<Bits<64>>,
    w_last: DFF<Bit>,
    w_inv: Signal<Local, Bit>,
    w_ind: Signal<Local, Bits<512>>,
    w_can: Signal<Local, Bit>,
    w_lastbeat: Signal<Local, Bit>,
    w_need: Signal<Local, Bit>,
    w_rdy: Signal<Local, Bit>,
    w_go: Signal<Local, Bit>,
    w_ba: Signal<Local, Bits<6>>,
    w_bl: Signal<Local, Bit>,
    w_s1: Signal<Local, Bits<64>>,
    // ---------------- write: B / done
    b_cnt: DFF<Bits<2>>,
    b_err: DFF<Bit>,
    bh_c: Signal<Local, Bit>,
    bh_nb: Signal<Local, Bits<2>>,
    b_bad: Signal<Local, Bit>,
    d0: DFF<Bit>,
    e0: DFF<Bit>,
    d1: DFF<Bit>,
    e1: DFF<Bit>,
    // ---------------- counters
    c_rd: DFF<Bits<32>>,
    c_wr: DFF<Bits<32>>,
    c_err: DFF<Bits<32>>,
}

impl Default for DmaEng {
    fn default() -> Self {
        DmaEng {
            clock: Default::default(),
            rst: Default::default(),
            m: Default::default(),
            rd: Default::default(),
            wr0: Default::default(),
            wr1: Default::default(),
            cnt_rd_bursts: Default::default(),
            cnt_wr_bursts: Default::default(),
            cnt_bus_err: Default::default(),
            ones64: Constant::new(u64::MAX.into()),
            zero32: Constant::new(0u64.into()),
            c64: Constant::new(64u64.into()),
            max_bursts: Constant::new(RD_MAX_BURSTS.into()),
            buf_beats: Constant::new(RD_BUF_BEATS.into()),
            rbuf: Default::default(),
            rbe: Default::default(),
            rb_wp: Default::default(),
            rb_rp: Default::default(),
            rb_cnt: Default::default(),
            rb_wl: Default::default(),
            cr_used: Default::default(),
            m_fire: Default::default(),
            m_bad: Default::default(),
            rb_v: Default::default(),
            ar_n: Default::default(),
            ar_room: Default::default(),
            rq: Default::default(),
            rfun: Default::default(),
            ars: Default::default(),
            arsl: Default::default(),
            ar_v: Default::default(),
            ar_out: Default::default(),
            ar_fire: Default::default(),
            ar_final: Default::default(),
            ar_take: Default::default(),
            ar_lo: Default::default(),
            ar_endrel: Default::default(),
            ar_lenm1: Default::default(),
            ar_na: Default::default(),
            ar_no: Default::default(),
            ar_entry: Default::default(),
            rh_lo: Default::default(),
            rh_na: Default::default(),
            rh_fl: Default::default(),
            rh_endn: Default::default(),
            r_j: Default::default(),
            r_flush: Default::default(),
            r_h: Default::default(),
            r_herr: Default::default(),
            r_can: Default::default(),
            r_rdy: Default::default(),
            r_fire: Default::default(),
            r_useh: Default::default(),
            r_lastin: Default::default(),
            r_bad: Default::default(),
            o_v: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            o_err: Default::default(),
            wq: Default::default(),
            bq: Default::default(),
            wfun: Default::default(),
            aws: Default::default(),
            aw_cnt: Default::default(),
            pref: Default::default(),
            aw_fire: Default::default(),
            aw_final: Default::default(),
            wc_room: Default::default(),
            wc_sel: Default::default(),
            wc_take: Default::default(),
            wc_addr: Default::default(),
            wc_len: Default::default(),
            wc_endaddr: Default::default(),
            wc_lo: Default::default(),
            wc_endrel: Default::default(),
            wc_lenm1: Default::default(),
            wc_na: Default::default(),
            wc_ni: Default::default(),
            wc_entry: Default::default(),
            wc_nb: Default::default(),
            wc_bentry: Default::default(),
            wh_c: Default::default(),
            wh_lo: Default::default(),
            wh_na: Default::default(),
            wh_fl: Default::default(),
            wh_endn: Default::default(),
            wh_fb: Default::default(),
            w_j: Default::default(),
            w_prev: Default::default(),
            w_cnt: Default::default(),
            w_v: Default::default(),
            w_data: Default::default(),
            w_strb: Default::default(),
            w_last: Default::default(),
            w_inv: Default::default(),
            w_ind: Default::default(),
            w_can: Default::default(),
            w_lastbeat: Default::default(),
            w_need: Default::default(),
            w_rdy: Default::default(),
            w_go: Default::default(),
            w_ba: Default::default(),
            w_bl: Default::default(),
            w_s1: Default::default(),
            b_cnt: Default::default(),
            b_err: Default::default(),
            bh_c: Default::default(),
            bh_nb: Default::default(),
            b_bad: Default::default(),
            d0: Default::default(),
            e0: Default::default(),
            d1: Default::default(),
            e1: Default::default(),
            c_rd: Default::default(),
            c_wr: Default::default(),
            c_err: Default::default(),
        }
    }
}

impl Logic for DmaEng {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, ar_out, r_j, r_flush, r_h, r_herr, o_v, o_data, o_keep, o_last, o_err,
            rb_wp, rb_rp, rb_cnt, rb_wl, cr_used
        );
        dff_setup!(
            self, clock, aw_cnt, pref, w_j, w_prev, w_cnt, w_v, w_data, w_strb, w_last, b_cnt,
            b_err, d0, e0, d1, e1, c_rd, c_wr, c_err
        );
        self.rq.clock.next = self.clock.val();
        self.wq.clock.next = self.clock.val();
        self.bq.clock.next = self.clock.val();
        self.rq.rst.next = self.rst.val();
        self.wq.rst.next = self.rst.val();
        self.bq.rst.next = self.rst.val();
        self.rq.wr.next = false;
        self.rq.rd.next = false;
        self.wq.wr.next = false;
        self.wq.rd.next = false;
        self.bq.wr.next = false;
        self.bq.rd.next = false;

        // ================= read: AR issuer
        // bursts: to the end of the command or of the 4 KiB page, whichever comes first
        // (`BurstSplit`, every output a register)
        self.ars.clock.next = self.clock.val();
        self.ars.rst.next = self.rst.val();
        // AR through the slice: {ARLEN, the burst's first beat}; one cycle later on the bus
        self.arsl.clock.next = self.clock.val();
        self.arsl.rst.next = self.rst.val();
        self.arsl.i_data.next = (bit_cast::<AR_WORD_BITS, 8>(self.ars.blen.val().get_bits::<8>(0))
            << 58)
            | bit_cast::<AR_WORD_BITS, 58>(self.ars.beat.val());
        self.m.arid.next = 0.into();
        self.m.araddr.next = bit_cast::<64, 58>(self.arsl.o_data.val().get_bits::<58>(0)) << 6;
        self.m.arlen.next = self.arsl.o_data.val().get_bits::<8>(58);
        self.m.arsize.next = 6.into();
        self.m.arburst.next = 1.into();
        self.m.arvalid.next = self.arsl.o_valid.val();
        self.arsl.o_ready.next = self.m.arready.val();
        // completion credits: the burst's beats must fit into the unreserved buffer room
        // (reserved, and the burst counted outstanding, as it enters the slice)
        self.ar_n.next = bit_cast::<10, 9>(self.ars.blen.val()) + 1;
        self.ar_room.next = (self.cr_used.q.val() + self.ar_n.val()) <= self.buf_beats.val();
        self.ar_v.next = self.ars.busy.val()
            && (self.ar_out.q.val() < self.max_bursts.val())
            && self.ar_room.val();
        self.arsl.i_valid.next = self.ar_v.val();
        self.ar_fire.next = self.ar_v.val() && self.arsl.i_ready.val();
        self.ar_final.next = self.ar_fire.val() && self.ars.last.val();
        self.ars.fire.next = self.ar_fire.val();
        if self.ar_fire.val() {
            self.c_rd.d.next = self.c_rd.q.val() + 1;
        }
        // command intake: one command per AR issuer run, its R-side record into rq
        self.rd.cmd_ready.next =
            (!self.ars.busy.val() || self.ar_final.val()) && !self.rq.full.val();
        self.ar_take.next = self.rd.cmd_valid.val() && self.rd.cmd_ready.val();
        self.ar_lo.next = self.rd.cmd_addr.val().get_bits::<6>(0);
        self.ar_lenm1.next = self.rd.cmd_len.val() - 1;
        self.ar_endrel.next =
            bit_cast::<15, 6>(self.ar_lo.val()) + bit_cast::<15, 14>(self.ar_lenm1.val());
        self.ar_na.next = self.ar_endrel.val().get_bits::<8>(6);
        self.ar_no.next = self.ar_lenm1.val().get_bits::<8>(6);
        self.ar_entry.next = bit_cast::<32, 6>(self.ar_lo.val())
            | (bit_cast::<32, 8>(self.ar_na.val()) << 6)
            | (bit_cast::<32, 6>(self.ar_lenm1.val().get_bits::<6>(0)) << 15);
        // unaligned, as many bus beats as output beats, more than one: the last output beat
        // comes from the last bus beat alone, one cycle after it (a single beat is direct)
        if (self.ar_lo.val() != 0)
            && (self.ar_na.val() == self.ar_no.val())
            && (self.ar_na.val() != 0)
        {
            self.rq.din.next = self.ar_entry.val().replace_bit(14, true);
        } else {
            self.rq.din.next = self.ar_entry.val();
        }
        self.ars.load.next = self.ar_take.val();
        self.ars.load_beat.next = self.rd.cmd_addr.val().get_bits::<58>(6);
        self.ars.load_na.next = self.ar_na.val();
        if self.ar_take.val() {
            self.rq.wr.next = true;
        }

        // ================= read: completion buffer
        // R is taken whenever a burst is outstanding; every beat has a reserved slot
        self.m.rready.next = self.ar_out.q.val() != 0;
        self.m_fire.next = self.m.rvalid.val() && self.m.rready.val();
        self.m_bad.next = self.m.rresp.val() != 0;
        self.rbuf.clock.next = self.clock.val();
        self.rbuf.write_address.next = self.rb_wp.q.val();
        self.rbuf.write_data.next = self.m.rdata.val();
        self.rbe.write_clock.next = self.clock.val();
        self.rbe.read_clock.next = self.clock.val();
        self.rbe.write_address.next = self.rb_wp.q.val();
        self.rbe.write_data.next = self.m_bad.val();
        self.rbe.write_enable.next = self.m_fire.val();
        if self.m_fire.val() {
            self.rbuf.write_enable.next = self.ones64.val();
            self.rb_wp.d.next = self.rb_wp.q.val() + 1;
        } else {
            self.rbuf.write_enable.next = 0.into();
        }
        self.rb_wl.d.next = self.m_fire.val();
        // show-ahead: the RAMs read the head after this cycle's pop, so their output is the
        // head beat in the next cycle; a beat written in the previous cycle is not yet in it
        self.rb_v.next =
            (self.rb_cnt.q.val() != 0) && !((self.rb_cnt.q.val() == 1) && self.rb_wl.q.val());

        // ================= read: R realigner
        self.rh_lo.next = self.rq.dout.val().get_bits::<6>(0);
        self.rh_na.next = self.rq.dout.val().get_bits::<8>(6);
        self.rh_fl.next = self.rq.dout.val().get_bit(14);
        self.rh_endn.next = !self.rq.dout.val().get_bits::<6>(15);
        self.r_can.next = !self.o_v.q.val() || self.rd.dat_ready.val();
        self.r_rdy.next = !self.rq.empty.val() && !self.r_flush.q.val() && self.r_can.val();
        self.r_fire.next = self.rb_v.val() && self.r_rdy.val();
        self.r_bad.next = self.rbe.read_data.val();
        if self.r_fire.val() {
            self.rb_rp.d.next = self.rb_rp.q.val() + 1;
            self.rbuf.read_address.next = self.rb_rp.q.val() + 1;
            self.rbe.read_address.next = self.rb_rp.q.val() + 1;
        } else {
            self.rbuf.read_address.next = self.rb_rp.q.val();
            self.rbe.read_address.next = self.rb_rp.q.val();
        }
        if self.m_fire.val() && !self.r_fire.val() {
            self.rb_cnt.d.next = self.rb_cnt.q.val() + 1;
        } else if !self.m_fire.val() && self.r_fire.val() {
            self.rb_cnt.d.next = self.rb_cnt.q.val() - 1;
        }
        if self.ar_fire.val() && self.r_fire.val() {
            self.cr_used.d.next = self.cr_used.q.val() + self.ar_n.val() - 1;
        } else if self.ar_fire.val() {
            self.cr_used.d.next = self.cr_used.q.val() + self.ar_n.val();
        } else if self.r_fire.val() {
            self.cr_used.d.next = self.cr_used.q.val() - 1;
        }
        // the output beat takes bytes lo.. of {this beat, held beat}; aligned and first
        // beats start in this beat, later ones (and the flush) in the held one
        self.r_useh.next =
            ((self.r_j.q.val() != 0) && (self.rh_lo.val() != 0)) || self.r_flush.q.val();
        if self.r_useh.val() {
            self.rfun.lo.next = self.r_h.q.val();
        } else {
            self.rfun.lo.next = self.rbuf.read_data.val();
        }
        self.rfun.hi.next = self.rbuf.read_data.val();
        self.rfun.sh.next = bit_cast::<7, 6>(self.rh_lo.val());
        self.r_lastin.next = self.r_j.q.val() == self.rh_na.val();
        if self.o_v.q.val() && self.rd.dat_ready.val() {
            self.o_v.d.next = false;
        }
        if self.r_flush.q.val() {
            if self.r_can.val() {
                self.o_v.d.next = true;
                self.o_data.d.next = self.rfun.out.val();
                self.o_keep.d.next = self.ones64.val() >> self.rh_endn.val();
                self.o_last.d.next = true;
                self.o_err.d.next = self.r_herr.q.val();
                self.r_flush.d.next = false;
                self.r_j.d.next = 0.into();
                self.rq.rd.next = true;
            }
        } else if self.r_fire.val() {
            self.r_h.d.next = self.rbuf.read_data.val();
            self.r_herr.d.next = self.r_bad.val();
            if (self.rh_lo.val() == 0) || (self.r_j.q.val() != 0) || (self.rh_na.val() == 0) {
                self.o_v.d.next = true;
                self.o_data.d.next = self.rfun.out.val();
                self.o_last.d.next = self.r_lastin.val() && !self.rh_fl.val();
                if self.r_lastin.val() && !self.rh_fl.val() {
                    self.o_keep.d.next = self.ones64.val() >> self.rh_endn.val();
                } else {
                    self.o_keep.d.next = self.ones64.val();
                }
                self.o_err.d.next = self.r_bad.val() || (self.r_useh.val() && self.r_herr.q.val());
            }
            if self.r_lastin.val() {
                if self.rh_fl.val() {
                    self.r_flush.d.next = true;
                } else {
                    self.r_j.d.next = 0.into();
                    self.rq.rd.next = true;
                }
            } else {
                self.r_j.d.next = self.r_j.q.val() + 1;
            }
        }
        if self.ar_fire.val() && !(self.m_fire.val() && self.m.rlast.val()) {
            self.ar_out.d.next = self.ar_out.q.val() + 1;
        } else if !self.ar_fire.val() && (self.m_fire.val() && self.m.rlast.val()) {
            self.ar_out.d.next = self.ar_out.q.val() - 1;
        }
        self.rd.dat_valid.next = self.o_v.q.val();
        self.rd.dat_data.next = self.o_data.q.val();
        self.rd.dat_keep.next = self.o_keep.q.val();
        self.rd.dat_last.next = self.o_last.q.val();
        self.rd.dat_err.next = self.o_err.q.val();

        // ================= write: AW issuer
        // (bursts as for reads: `BurstSplit`)
        self.aws.clock.next = self.clock.val();
        self.aws.rst.next = self.rst.val();
        self.m.awid.next = 0.into();
        self.m.awaddr.next = bit_cast::<64, 58>(self.aws.beat.val()) << 6;
        self.m.awlen.next = self.aws.blen.val().get_bits::<8>(0);
        self.m.awsize.next = 6.into();
        self.m.awburst.next = 1.into();
        self.m.awvalid.next = self.aws.busy.val();
        self.aw_fire.next = self.m.awvalid.val() && self.m.awready.val();
        self.aw_final.next = self.aw_fire.val() && self.aws.last.val();
        self.aws.fire.next = self.aw_fire.val();
        if self.aw_fire.val() {
            self.aw_cnt.d.next = self.aw_cnt.q.val() + 1;
            self.c_wr.d.next = self.c_wr.q.val() + 1;
        }
        // round-robin command intake
        self.wc_room.next = (!self.aws.busy.val() || self.aw_final.val())
            && !self.wq.full.val()
            && !self.bq.full.val();
        self.wc_sel.next =
            self.wr1.cmd_valid.val() && (self.pref.q.val() || !self.wr0.cmd_valid.val());
        self.wr0.cmd_ready.next = self.wc_room.val() && !self.wc_sel.val();
        self.wr1.cmd_ready.next = self.wc_room.val() && self.wc_sel.val();
        self.wc_take.next =
            self.wc_room.val() && (self.wr0.cmd_valid.val() || self.wr1.cmd_valid.val());
        if self.wc_sel.val() {
            self.wc_addr.next = self.wr1.cmd_addr.val();
            self.wc_len.next = self.wr1.cmd_len.val();
        } else {
            self.wc_addr.next = self.wr0.cmd_addr.val();
            self.wc_len.next = self.wr0.cmd_len.val();
        }
        self.wc_endaddr.next = self.wc_addr.val() + bit_cast::<64, 14>(self.wc_len.val()) - 1;
        self.wc_lo.next = self.wc_addr.val().get_bits::<6>(0);
        self.wc_lenm1.next = self.wc_len.val() - 1;
        self.wc_endrel.next =
            bit_cast::<15, 6>(self.wc_lo.val()) + bit_cast::<15, 14>(self.wc_lenm1.val());
        self.wc_na.next = self.wc_endrel.val().get_bits::<8>(6);
        self.wc_ni.next = self.wc_lenm1.val().get_bits::<8>(6);
        self.wc_entry.next = (bit_cast::<32, 6>(self.wc_lo.val()) << 1)
            | (bit_cast::<32, 8>(self.wc_na.val()) << 7)
            | (bit_cast::<32, 6>(self.wc_endrel.val().get_bits::<6>(0)) << 16)
            | (bit_cast::<32, 6>(self.wc_addr.val().get_bits::<6>(6)) << 22);
        if self.wc_na.val() != self.wc_ni.val() {
            self.wq.din.next = self
                .wc_entry
                .val()
                .replace_bit(0, self.wc_sel.val())
                .replace_bit(15, true);
        } else {
            self.wq.din.next = self.wc_entry.val().replace_bit(0, self.wc_sel.val());
        }
        // bursts of the command: 4 KiB pages touched (1..=3 for 8 KiB)
        self.wc_nb.next =
            self.wc_endaddr.val().get_bits::<2>(12) - self.wc_addr.val().get_bits::<2>(12) + 1;
        self.wc_bentry.next =
            (bit_cast::<3, 2>(self.wc_nb.val()) << 1).replace_bit(0, self.wc_sel.val());
        self.bq.din.next = self.wc_bentry.val();
        if self.wc_take.val() {
            self.wq.wr.next = true;
            self.bq.wr.next = true;
            self.pref.d.next = !self.wc_sel.val();
        }
        self.aws.load.next = self.wc_take.val();
        self.aws.load_beat.next = self.wc_addr.val().get_bits::<58>(6);
        self.aws.load_na.next = self.wc_na.val();

        // ================= write: W stage
        self.wh_c.next = self.wq.dout.val().get_bit(0);
        self.wh_lo.next = self.wq.dout.val().get_bits::<6>(1);
        self.wh_na.next = self.wq.dout.val().get_bits::<8>(7);
        self.wh_fl.next = self.wq.dout.val().get_bit(15);
        self.wh_endn.next = !self.wq.dout.val().get_bits::<6>(16);
        self.wh_fb.next = self.wq.dout.val().get_bits::<6>(22);
        if self.wh_c.val() {
            self.w_inv.next = self.wr1.dat_valid.val();
            self.w_ind.next = self.wr1.dat_data.val();
        } else {
            self.w_inv.next = self.wr0.dat_valid.val();
            self.w_ind.next = self.wr0.dat_data.val();
        }
        self.w_can.next = !self.w_v.q.val() || self.m.wready.val();
        self.w_lastbeat.next = self.w_j.q.val() == self.wh_na.val();
        self.w_need.next = !(self.w_lastbeat.val() && self.wh_fl.val());
        // a beat of burst w_cnt may go once that burst's AW was accepted
        self.w_rdy.next =
            !self.wq.empty.val() && self.w_can.val() && (self.aw_cnt.q.val() != self.w_cnt.q.val());
        self.w_go.next = self.w_rdy.val() && (!self.w_need.val() || self.w_inv.val());
        self.wr0.dat_ready.next = self.w_rdy.val() && self.w_need.val() && !self.wh_c.val();
        self.wr1.dat_ready.next = self.w_rdy.val() && self.w_need.val() && self.wh_c.val();
        self.w_ba.next = self.wh_fb.val() + self.w_j.q.val().get_bits::<6>(0);
        self.w_bl.next = self.w_lastbeat.val() || (self.w_ba.val() == 63);
        self.wfun.lo.next = self.w_prev.q.val();
        self.wfun.hi.next = self.w_ind.val();
        self.wfun.sh.next = self.c64.val() - bit_cast::<7, 6>(self.wh_lo.val());
        if self.w_j.q.val() == 0 {
            self.w_s1.next = self.ones64.val() << self.wh_lo.val();
        } else {
            self.w_s1.next = self.ones64.val();
        }
        if self.w_v.q.val() && self.m.wready.val() {
            self.w_v.d.next = false;
        }
        if self.w_go.val() {
            self.w_v.d.next = true;
            self.w_data.d.next = self.wfun.out.val();
            if self.w_lastbeat.val() {
                self.w_strb.d.next = self.w_s1.val() & (self.ones64.val() >> self.wh_endn.val());
            } else {
                self.w_strb.d.next = self.w_s1.val();
            }
            self.w_last.d.next = self.w_bl.val();
            if self.w_need.val() {
                self.w_prev.d.next = self.w_ind.val();
            }
            if self.w_bl.val() {
                self.w_cnt.d.next = self.w_cnt.q.val() + 1;
            }
            if self.w_lastbeat.val() {
                self.w_j.d.next = 0.into();
                self.wq.rd.next = true;
            } else {
                self.w_j.d.next = self.w_j.q.val() + 1;
            }
        }
        self.m.wvalid.next = self.w_v.q.val();
        self.m.wdata.next = self.w_data.q.val();
        self.m.wstrb.next = self.w_strb.q.val();
        self.m.wlast.next = self.w_last.q.val();

        // ================= write: B responses and done
        self.m.bready.next = true;
        self.bh_c.next = self.bq.dout.val().get_bit(0);
        self.bh_nb.next = self.bq.dout.val().get_bits::<2>(1);
        self.b_bad.next = self.m.bresp.val() != 0;
        self.d0.d.next = false;
        self.d1.d.next = false;
        if self.m.bvalid.val() {
            if (self.b_cnt.q.val() + 1) == self.bh_nb.val() {
                self.bq.rd.next = true;
                self.b_cnt.d.next = 0.into();
                self.b_err.d.next = false;
                if self.bh_c.val() {
                    self.d1.d.next = true;
                    self.e1.d.next = self.b_err.q.val() || self.b_bad.val();
                } else {
                    self.d0.d.next = true;
                    self.e0.d.next = self.b_err.q.val() || self.b_bad.val();
                }
            } else {
                self.b_cnt.d.next = self.b_cnt.q.val() + 1;
                self.b_err.d.next = self.b_err.q.val() || self.b_bad.val();
            }
        }
        self.wr0.done.next = self.d0.q.val();
        self.wr0.err.next = self.d0.q.val() && self.e0.q.val();
        self.wr1.done.next = self.d1.q.val();
        self.wr1.err.next = self.d1.q.val() && self.e1.q.val();

        // ================= counters: error responses (R beats and B responses)
        if (self.m_fire.val() && self.m_bad.val()) && (self.m.bvalid.val() && self.b_bad.val()) {
            self.c_err.d.next = self.c_err.q.val() + 2;
        } else if (self.m_fire.val() && self.m_bad.val())
            || (self.m.bvalid.val() && self.b_bad.val())
        {
            self.c_err.d.next = self.c_err.q.val() + 1;
        }
        self.cnt_rd_bursts.next = self.c_rd.q.val();
        self.cnt_wr_bursts.next = self.c_wr.q.val();
        self.cnt_bus_err.next = self.c_err.q.val();

        if self.rst.val() {
            self.ar_out.d.next = 0.into();
            self.rb_wp.d.next = 0.into();
            self.rb_rp.d.next = 0.into();
            self.rb_cnt.d.next = 0.into();
            self.rb_wl.d.next = false;
            self.cr_used.d.next = 0.into();
            self.r_j.d.next = 0.into();
            self.r_flush.d.next = false;
            self.o_v.d.next = false;
            self.aw_cnt.d.next = 0.into();
            self.pref.d.next = false;
            self.w_j.d.next = 0.into();
            self.w_cnt.d.next = 0.into();
            self.w_v.d.next = false;
            self.b_cnt.d.next = 0.into();
            self.b_err.d.next = false;
            self.d0.d.next = false;
            self.d1.d.next = false;
            self.c_rd.d.next = 0.into();
            self.c_wr.d.next = 0.into();
            self.c_err.d.next = 0.into();
            self.rq.wr.next = false;
            self.wq.wr.next = false;
            self.bq.wr.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use crate::common::vlt::DynModel;
    use rand::Rng;
    use rand_chacha::ChaCha8Rng;
    use std::collections::{HashMap, VecDeque};

    /// Co-simulation of the generated funnel against the Rust model.
    #[test]
    fn funnel_matches_model() {
        let mut m = model(Funnel::default(), "dmaeng_funnel");
        let mut r = rng(5);
        for i in 0..3000 {
            let lo: [u8; 64] = std::array::from_fn(|_| r.random());
            let hi: [u8; 64] = std::array::from_fn(|_| r.random());
            let sh = if i < 65 { i } else { r.random_range(0..128) };
            m.set_bytes("lo", &lo);
            m.set_bytes("hi", &hi);
            m.set("sh", sh as u64);
            m.tick();
            assert_eq!(
                m.get_bytes("out"),
                funnel_model(&lo, &hi, sh).to_vec(),
                "sh {sh}"
            );
        }
    }

    /// Host memory with configurable read latency and outstanding reads, and address ranges
    /// that answer with SLVERR (RRESP per beat, BRESP per burst). Same protocol checks and
    /// stall behaviour as `testutil::MemSlave` (which always answers OKAY).
    struct ErrSlave {
        mem: HashMap<u64, u8>,
        stall: f64,
        lat: (u64, u64),
        /// cycles from a burst's last W beat to its B response (uniform, end exclusive)
        b_lat: (u64, u64),
        max_reads: usize,
        bad: Vec<(u64, u64)>,
        aw: VecDeque<(u64, u32)>,
        w_beat: u32,
        reads: VecDeque<(u64, u32, u64)>,
        b: VecDeque<(u64, bool)>,
        drv: [bool; 5],
    }

    impl ErrSlave {
        fn new(stall: f64, lat: (u64, u64), max_reads: usize) -> Self {
            ErrSlave {
                mem: HashMap::new(),
                stall,
                lat,
                b_lat: (1, 20),
                max_reads,
                bad: vec![],
                aw: VecDeque::new(),
                w_beat: 0,
                reads: VecDeque::new(),
                b: VecDeque::new(),
                drv: [false; 5],
            }
        }
        fn is_bad(&self, a: u64, n: u64) -> bool {
            self.bad.iter().any(|&(x, y)| a < y && x < a + n)
        }
    }

    /// The two host-memory models behind one interface.
    trait Slave {
        fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng);
        fn observe(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng);
        fn mem(&self) -> &HashMap<u64, u8>;
        /// Whether the slave offered an R beat (of an accepted burst) in the last cycle, if
        /// the model tells.
        fn r_offered(&self) -> Option<bool> {
            None
        }
    }

    impl Slave for MemSlave {
        fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
            MemSlave::drive(self, m, r)
        }
        fn observe(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
            MemSlave::observe(self, m, r)
        }
        fn mem(&self) -> &HashMap<u64, u8> {
            &self.mem
        }
    }

    impl Slave for ErrSlave {
        fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
            let now = m.cycle;
            let awready = self.aw.len() < 4 && !chance(r, self.stall);
            let wready = !self.aw.is_empty() && !chance(r, self.stall);
            let bvalid = self.b.front().is_some_and(|t| t.0 <= now) && !chance(r, self.stall);
            let arready = self.reads.len() < self.max_reads && !chance(r, self.stall);
            let rvalid = self.reads.front().is_some_and(|x| x.2 <= now) && !chance(r, self.stall);
            self.drv = [awready, wready, bvalid, arready, rvalid];
            m.set("m_awready", awready as u64);
            m.set("m_wready", wready as u64);
            m.set("m_bvalid", bvalid as u64);
            let bbad = self.b.front().is_some_and(|x| x.1);
            m.set("m_bresp", if bbad { 2 } else { 0 });
            m.set("m_arready", arready as u64);
            m.set("m_rvalid", rvalid as u64);
            m.set("m_rresp", 0);
            if let Some(&(addr, beats, _)) = self.reads.front() {
                let data: Vec<u8> = (0..64)
                    .map(|k| *self.mem.get(&(addr + k)).unwrap_or(&0))
                    .collect();
                m.set_bytes("m_rdata", &data);
                m.set("m_rlast", (beats == 1) as u64);
                m.set("m_rresp", if self.is_bad(addr, 64) { 2 } else { 0 });
            }
        }
        fn observe(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
            let now = m.cycle;
            let [awready, wready, bvalid, arready, rvalid] = self.drv;
            if awready && m.bit("m_awvalid") {
                let addr = m.get("m_awaddr");
                let beats = m.get("m_awlen") as u32 + 1;
                assert_eq!(addr % 64, 0);
                assert_eq!(m.get("m_awsize"), 6);
                assert_eq!(m.get("m_awburst"), 1);
                assert!(addr / 4096 == (addr + 64 * beats as u64 - 1) / 4096);
                self.aw.push_back((addr, beats));
            }
            if wready && m.bit("m_wvalid") {
                let (addr, beats) = self.aw[0];
                let data = m.get_bytes("m_wdata");
                let strb = m.get("m_wstrb");
                let base = addr + 64 * self.w_beat as u64;
                for k in 0..64 {
                    if strb >> k & 1 == 1 {
                        self.mem.insert(base + k, data[k as usize]);
                    }
                }
                self.w_beat += 1;
                assert_eq!(m.bit("m_wlast"), self.w_beat == beats);
                if self.w_beat == beats {
                    self.aw.pop_front();
                    self.w_beat = 0;
                    let bad = self.is_bad(addr, 64 * beats as u64);
                    self.b
                        .push_back((now + r.random_range(self.b_lat.0..self.b_lat.1), bad));
                }
            }
            if bvalid && m.bit("m_bready") {
                self.b.pop_front();
            }
            if arready && m.bit("m_arvalid") {
                let addr = m.get("m_araddr");
                let beats = m.get("m_arlen") as u32 + 1;
                assert_eq!(m.get("m_arsize"), 6);
                assert_eq!(m.get("m_arburst"), 1);
                assert!(addr / 4096 == (addr + 64 * beats as u64 - 1) / 4096);
                let l = if self.lat.0 == self.lat.1 {
                    self.lat.0
                } else {
                    r.random_range(self.lat.0..self.lat.1)
                };
                self.reads.push_back((addr, beats, now + l));
            }
            if rvalid && m.bit("m_rready") {
                let f = &mut self.reads[0];
                f.0 += 64;
                f.1 -= 1;
                if f.1 == 0 {
                    self.reads.pop_front();
                }
            }
        }
        fn mem(&self) -> &HashMap<u64, u8> {
            &self.mem
        }
        fn r_offered(&self) -> Option<bool> {
            Some(self.drv[4])
        }
    }

    /// 4 KiB pages a transfer touches = bursts the engine must issue for it.
    fn bursts(addr: u64, len: u32) -> u64 {
        (addr + len as u64 - 1) / 4096 - addr / 4096 + 1
    }

    /// The read client: offers commands with random idle, takes data with random stalls and
    /// checks every beat against host memory (`bad`: ranges whose beats must carry dat_err).
    struct RdClient {
        todo: VecDeque<(u64, u32)>,
        exp: VecDeque<(u64, u32, u32)>,
        idle: f64,
        stall: f64,
        bad: Vec<(u64, u64)>,
        cv: bool,
        dr: bool,
        beats: u64,
        err_beats: u64,
        cmds_done: usize,
        last_cycle: u64,
    }

    impl RdClient {
        fn new(todo: Vec<(u64, u32)>, idle: f64, stall: f64) -> Self {
            RdClient {
                todo: todo.into(),
                exp: VecDeque::new(),
                idle,
                stall,
                bad: vec![],
                cv: false,
                dr: false,
                beats: 0,
                err_beats: 0,
                cmds_done: 0,
                last_cycle: 0,
            }
        }
        fn busy(&self) -> bool {
            !self.todo.is_empty() || !self.exp.is_empty()
        }
        fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
            if !self.cv {
                self.cv = !self.todo.is_empty() && !chance(r, self.idle);
            }
            m.set("rd_cmd_valid", self.cv as u64);
            if let Some(&(a, l)) = self.todo.front() {
                m.set("rd_cmd_addr", a);
                m.set("rd_cmd_len", l as u64);
            }
            self.dr = !chance(r, self.stall);
            m.set("rd_dat_ready", self.dr as u64);
        }
        fn observe(&mut self, m: &mut DynModel, mem: &HashMap<u64, u8>) {
            if self.cv && m.bit("rd_cmd_ready") {
                let (a, l) = self.todo.pop_front().unwrap();
                self.exp.push_back((a, l, 0));
                self.cv = false;
            }
            if self.dr && m.bit("rd_dat_valid") {
                let (a, l, k) = *self.exp.front().expect("read data without a command");
                let off = 64 * k as u64;
                let n = (l as u64 - off).min(64);
                let d = m.get_bytes("rd_dat_data");
                for i in 0..n {
                    let want = *mem.get(&(a + off + i)).unwrap_or(&0);
                    assert_eq!(
                        d[i as usize], want,
                        "read {a:#x}+{l}: byte {} of beat {k}",
                        i
                    );
                }
                let keep = if n == 64 { u64::MAX } else { (1 << n) - 1 };
                assert_eq!(m.get("rd_dat_keep"), keep, "keep, read {a:#x}+{l} beat {k}");
                let last = off + n == l as u64;
                assert_eq!(m.bit("rd_dat_last"), last, "last, read {a:#x}+{l} beat {k}");
                // the bus beats holding these bytes
                let (b0, b1) = ((a + off) & !63, (a + off + n - 1) & !63);
                let bad = self.bad.iter().any(|&(x, y)| b0 < y && x < b1 + 64);
                assert_eq!(m.bit("rd_dat_err"), bad, "err, read {a:#x}+{l} beat {k}");
                self.err_beats += bad as u64;
                self.beats += 1;
                self.last_cycle = m.cycle;
                if last {
                    self.exp.pop_front();
                    self.cmds_done += 1;
                } else {
                    self.exp[0].2 += 1;
                }
            }
        }
    }

    /// One write client: offers its commands in order and their packed data (garbage past the
    /// length on the last beat), optionally only after the command was taken; checks each
    /// `done` (in order, after the command's bytes are in memory) and records `err`.
    struct WrClient {
        p: &'static str,
        cmds: Vec<(u64, u32, Vec<u8>)>,
        taken: usize,
        dcmd: usize,
        dbeat: usize,
        done: usize,
        errs: Vec<bool>,
        idle: f64,
        wait_cmd: bool,
        cv: bool,
        dv: bool,
        last_cycle: u64,
    }

    impl WrClient {
        fn new(p: &'static str, cmds: Vec<(u64, u32, Vec<u8>)>, idle: f64, wait_cmd: bool) -> Self {
            WrClient {
                p,
                cmds,
                taken: 0,
                dcmd: 0,
                dbeat: 0,
                done: 0,
                errs: vec![],
                idle,
                wait_cmd,
                cv: false,
                dv: false,
                last_cycle: 0,
            }
        }
        fn n(&self, s: &str) -> String {
            format!("{}_{s}", self.p)
        }
        fn busy(&self) -> bool {
            self.done < self.cmds.len()
        }
        fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
            if !self.cv {
                self.cv = self.taken < self.cmds.len() && !chance(r, self.idle);
            }
            m.set(&self.n("cmd_valid"), self.cv as u64);
            if let Some((a, l, _)) = self.cmds.get(self.taken) {
                m.set(&self.n("cmd_addr"), *a);
                m.set(&self.n("cmd_len"), *l as u64);
            }
            if !self.dv {
                self.dv = self.dcmd < self.cmds.len()
                    && (!self.wait_cmd || self.dcmd < self.taken)
                    && !chance(r, self.idle);
            }
            m.set(&self.n("dat_valid"), self.dv as u64);
            if let Some((_, l, d)) = self.cmds.get(self.dcmd) {
                let off = 64 * self.dbeat;
                let beat: Vec<u8> = (0..64)
                    .map(|i| d.get(off + i).copied().unwrap_or(0xEE))
                    .collect();
                m.set_bytes(&self.n("dat_data"), &beat);
                m.set(&self.n("dat_last"), (off + 64 >= *l as usize) as u64);
            }
        }
        fn observe(&mut self, m: &mut DynModel, mem: &HashMap<u64, u8>) {
            if self.cv && m.bit(&self.n("cmd_ready")) {
                self.taken += 1;
                self.cv = false;
            }
            if self.dv && m.bit(&self.n("dat_ready")) {
                self.dv = false;
                self.dbeat += 1;
                if 64 * self.dbeat >= self.cmds[self.dcmd].1 as usize {
                    self.dcmd += 1;
                    self.dbeat = 0;
                }
            }
            if m.bit(&self.n("done")) {
                assert!(self.done < self.taken, "{}: done without a command", self.p);
                let (a, l, d) = &self.cmds[self.done];
                assert!(
                    self.done < self.dcmd,
                    "{}: done before the data of {a:#x}+{l} was given",
                    self.p
                );
                for (i, b) in d.iter().enumerate() {
                    assert_eq!(
                        mem.get(&(a + i as u64)),
                        Some(b),
                        "{}: done for {a:#x}+{l} before byte {i} was written",
                        self.p
                    );
                }
                self.errs.push(m.bit(&self.n("err")));
                self.done += 1;
                self.last_cycle = m.cycle;
            } else {
                assert!(!m.bit(&self.n("err")), "{}: err without done", self.p);
            }
        }
    }

    const SIZES: [u32; 11] = [1, 2, 63, 64, 65, 127, 4095, 4096, 4097, 8191, 8192];

    fn rand_len(r: &mut ChaCha8Rng, k: usize) -> u32 {
        if k < SIZES.len() {
            SIZES[k]
        } else if r.random_bool(0.3) {
            SIZES[r.random_range(0..SIZES.len())]
        } else if r.random_bool(0.5) {
            r.random_range(1..200)
        } else {
            r.random_range(1..=8192)
        }
    }

    fn rand_addr(r: &mut ChaCha8Rng, base: u64, span: u64) -> u64 {
        match r.random_range(0..4) {
            0 => base + (r.random_range(0..span) & !4095),
            1 => base + (r.random_range(0..span) & !63),
            2 => base + (r.random_range(0..span / 4096) + 1) * 4096 - r.random_range(1..100),
            _ => base + r.random_range(0..span),
        }
    }

    fn eng() -> DynModel {
        let mut m = model(DmaEng::default(), "dmaeng");
        for p in ["wr0", "wr1"] {
            m.set(&format!("{p}_cmd_valid"), 0);
            m.set(&format!("{p}_dat_valid"), 0);
        }
        m.set("rd_cmd_valid", 0);
        reset(&mut m);
        m
    }

    fn run_reads(m: &mut DynModel, s: &mut dyn Slave, c: &mut RdClient, r: &mut ChaCha8Rng) {
        let t0 = m.cycle;
        while c.busy() {
            assert!(m.cycle - t0 < 2_000_000, "reads hang");
            s.drive(m, r);
            c.drive(m, r);
            m.set("wr0_cmd_valid", 0);
            m.set("wr1_cmd_valid", 0);
            m.set("wr0_dat_valid", 0);
            m.set("wr1_dat_valid", 0);
            m.tick();
            // completion credits: R is never back-pressured, whatever the client does
            if s.r_offered() == Some(true) {
                assert!(
                    m.bit("m_rready"),
                    "R offered but not taken at cycle {}",
                    m.cycle
                );
            }
            s.observe(m, r);
            c.observe(m, s.mem());
            assert!(!m.bit("wr0_done") && !m.bit("wr1_done"));
        }
    }

    fn run_writes(m: &mut DynModel, s: &mut dyn Slave, w: &mut [WrClient; 2], r: &mut ChaCha8Rng) {
        let t0 = m.cycle;
        while w[0].busy() || w[1].busy() {
            assert!(m.cycle - t0 < 2_000_000, "writes hang");
            s.drive(m, r);
            w[0].drive(m, r);
            w[1].drive(m, r);
            m.set("rd_cmd_valid", 0);
            m.set("rd_dat_ready", 1);
            m.tick();
            s.observe(m, r);
            w[0].observe(m, s.mem());
            w[1].observe(m, s.mem());
            assert!(!m.bit("rd_dat_valid"));
        }
        for _ in 0..50 {
            s.drive(m, r);
            m.tick();
            s.observe(m, r);
            assert!(!m.bit("wr0_done") && !m.bit("wr1_done"), "extra done");
        }
    }

    fn fill(mem: &mut HashMap<u64, u8>, base: u64, len: u64, r: &mut ChaCha8Rng) {
        for a in base..base + len {
            mem.insert(a, r.random());
        }
    }

    #[test]
    fn reads_exact_bytes_under_backpressure() {
        let mut m = eng();
        let mut r = rng(21);
        let base = 0x7_0000_0000u64;
        let span = 48 * 1024;
        let mut total_bursts = 0;
        for (round, (stall, idle)) in [(0.0, 0.0), (0.3, 0.2), (0.6, 0.5), (0.1, 0.0)]
            .into_iter()
            .enumerate()
        {
            let mut s = MemSlave::new("m", stall);
            fill(&mut s.mem, base, span + 8192, &mut r);
            let cmds: Vec<(u64, u32)> = (0..60)
                .map(|k| (rand_addr(&mut r, base, span), rand_len(&mut r, k)))
                .collect();
            total_bursts += cmds.iter().map(|&(a, l)| bursts(a, l)).sum::<u64>();
            let mut c = RdClient::new(cmds.clone(), idle, stall);
            run_reads(&mut m, &mut s, &mut c, &mut r);
            assert_eq!(c.cmds_done, cmds.len(), "round {round}");
            assert_eq!(m.get("cnt_rd_bursts"), total_bursts, "round {round}");
        }
        assert_eq!(m.get("cnt_bus_err"), 0);
        assert_eq!(m.get("cnt_wr_bursts"), 0);
    }

    fn wr_cmds(r: &mut ChaCha8Rng, base: u64, n: usize) -> Vec<(u64, u32, Vec<u8>)> {
        // one 16 KiB slot per command: no overlaps, so every done can check its bytes
        (0..n)
            .map(|k| {
                let l = rand_len(r, (k + 5) % 40);
                let a = rand_addr(r, base + 16384 * k as u64, 8192);
                (a, l, (0..l).map(|_| r.random()).collect())
            })
            .collect()
    }

    #[test]
    fn writes_two_clients_exact_bytes_and_done_order() {
        let mut m = eng();
        let mut r = rng(22);
        let mut total_bursts = 0;
        for (round, (stall, idle)) in [(0.0, 0.0), (0.3, 0.2), (0.6, 0.4), (0.2, 0.7)]
            .into_iter()
            .enumerate()
        {
            let mut s = MemSlave::new("m", stall);
            let c0 = wr_cmds(&mut r, 0x1_0000_0000 + ((round as u64) << 24), 40);
            let c1 = wr_cmds(&mut r, 0x2_0000_0000 + ((round as u64) << 24), 40);
            let mut expect: HashMap<u64, u8> = HashMap::new();
            for (a, _, d) in c0.iter().chain(c1.iter()) {
                total_bursts += bursts(*a, d.len() as u32);
                for (i, b) in d.iter().enumerate() {
                    expect.insert(a + i as u64, *b);
                }
            }
            let mut w = [
                WrClient::new("wr0", c0, idle, round % 2 == 1),
                WrClient::new("wr1", c1, idle, round % 2 == 0),
            ];
            run_writes(&mut m, &mut s, &mut w, &mut r);
            // exactly the target bytes were written (nothing else in memory)
            assert_eq!(s.mem.len(), expect.len(), "round {round}: bytes written");
            for (a, b) in &expect {
                assert_eq!(s.mem.get(a), Some(b), "round {round}: byte {a:#x}");
            }
            assert!(w.iter().all(|c| c.errs.iter().all(|e| !e)));
            assert_eq!(m.get("cnt_wr_bursts"), total_bursts);
        }
        assert_eq!(m.get("cnt_bus_err"), 0);
        assert_eq!(m.get("cnt_rd_bursts"), 0);
    }

    #[test]
    fn bus_errors_reported() {
        let mut m = eng();
        let mut r = rng(23);
        let base = 0x9_0000_0000u64;
        let span = 64 * 1024;
        let mut s = ErrSlave::new(0.3, (2, 60), 8);
        fill(&mut s.mem, base, span + 8192, &mut r);
        // a few bad ranges of various sizes
        s.bad = vec![
            (base + 5000, base + 5001),
            (base + 20000, base + 20300),
            (base + 40960, base + 45056),
        ];
        let cmds: Vec<(u64, u32)> = (0..80)
            .map(|k| (rand_addr(&mut r, base, span), rand_len(&mut r, k)))
            .collect();
        let mut c = RdClient::new(cmds, 0.2, 0.3);
        c.bad = s.bad.clone();
        run_reads(&mut m, &mut s, &mut c, &mut r);
        // every bad bus beat read counts once
        let rd_bad: u64 = c.err_beats;
        assert!(rd_bad > 0, "the test must hit bad ranges");
        let rd_err_cnt = m.get("cnt_bus_err");
        assert!(rd_err_cnt > 0);
        // writes: done with err exactly for commands touching a bad range
        let wbase = base;
        let c0 = wr_cmds(&mut r, wbase, 12);
        let c1 = wr_cmds(&mut r, wbase + 12 * 16384, 12);
        s.bad = vec![
            (wbase + 16384 * 3 + 100, wbase + 16384 * 3 + 9000),
            (wbase + 16384 * 17, wbase + 16384 * 18),
        ];
        let want = |cm: &Vec<(u64, u32, Vec<u8>)>, bad: &Vec<(u64, u64)>| -> Vec<bool> {
            cm.iter()
                .map(|(a, l, _)| {
                    let (b0, b1) = (a & !63, (a + *l as u64 + 63) & !63);
                    bad.iter().any(|&(x, y)| b0 < y && x < b1)
                })
                .collect()
        };
        let (e0, e1) = (want(&c0, &s.bad), want(&c1, &s.bad));
        assert!(e0.iter().any(|&e| e) && e1.iter().any(|&e| e));
        let mut bad_b = 0u64;
        for (a, l, _) in c0.iter().chain(c1.iter()) {
            let (mut x, end) = (*a, a + *l as u64);
            while x < end {
                let pe = ((x / 4096) + 1) * 4096;
                let (b0, b1) = (x & !63, (pe.min(end) + 63) & !63);
                bad_b += s.bad.iter().any(|&(p, q)| b0 < q && p < b1) as u64;
                x = pe;
            }
        }
        let mut w = [
            WrClient::new("wr0", c0, 0.1, false),
            WrClient::new("wr1", c1, 0.1, true),
        ];
        run_writes(&mut m, &mut s, &mut w, &mut r);
        assert_eq!(w[0].errs, e0);
        assert_eq!(w[1].errs, e1);
        assert_eq!(m.get("cnt_bus_err"), rd_err_cnt + bad_b);
    }

    /// Cycles from the first command to the last data beat, for `cmds` read with no stall
    /// and the client always ready.
    fn read_cycles(s: &mut dyn Slave, cmds: Vec<(u64, u32)>, r: &mut ChaCha8Rng) -> u64 {
        let mut m = eng();
        let mut c = RdClient::new(cmds, 0.0, 0.0);
        let t0 = m.cycle;
        run_reads(&mut m, s, &mut c, r);
        c.last_cycle - t0
    }

    #[test]
    fn throughput() {
        let mut r = rng(24);
        let base = 0x3_0000_0000u64;
        let mut s = MemSlave::new("m", 0.0);
        fill(&mut s.mem, base, 80 * 1024, &mut r);
        let aligned: Vec<(u64, u32)> = (0..16).map(|k| (base + 4096 * k, 4096)).collect();
        let unal: Vec<(u64, u32)> = (0..16).map(|k| (base + 4096 * k + 17, 4096)).collect();
        let t_al = read_cycles(&mut s, aligned.clone(), &mut r);
        let t_un = read_cycles(&mut s, unal.clone(), &mut r);
        // the simulator's host memory: 150-cycle latency, enough outstanding reads
        let mut h = ErrSlave::new(0.0, (150, 150), 64);
        h.mem = s.mem.clone();
        let t_150 = read_cycles(&mut h, aligned, &mut r);
        let t_150u = read_cycles(&mut h, unal, &mut r);
        let small: Vec<(u64, u32)> = (0..256).map(|k| (base + 256 * k, 256)).collect();
        let t_small = read_cycles(&mut h, small, &mut r);
        // writes: 16 x 4 KiB from wr0, data always valid, no stalls
        let mut m = eng();
        let mut ws = MemSlave::new("m", 0.0);
        let wc = |off: u64| -> Vec<(u64, u32, Vec<u8>)> {
            (0..16)
                .map(|k| (base + 4096 * k + off, 4096, vec![k as u8; 4096]))
                .collect()
        };
        let mut w = [
            WrClient::new("wr0", wc(0), 0.0, false),
            WrClient::new("wr1", vec![], 0.0, false),
        ];
        let t0 = m.cycle;
        run_writes(&mut m, &mut ws, &mut w, &mut r);
        let t_w = w[0].last_cycle - t0;
        let mut w = [
            WrClient::new("wr0", wc(0x1_0000 + 5), 0.0, false),
            WrClient::new("wr1", vec![], 0.0, false),
        ];
        let t0 = m.cycle;
        run_writes(&mut m, &mut ws, &mut w, &mut r);
        let t_wu = w[0].last_cycle - t0;
        println!(
            "dmaeng 64 KiB as 16 x 4 KiB (1024 beats): read aligned {t_al} cycles, +17 {t_un} \
             (MemSlave, stall 0); 150-cycle latency: aligned {t_150}, +17 {t_150u}; \
             256 x 256 B reads at 150 latency: {t_small}; write aligned {t_w}, +5 {t_wu} \
             (to the last done)"
        );
        assert!(t_al < 1024 + 120, "aligned reads: {t_al} cycles");
        assert!(t_un < 1024 + 16 + 120, "unaligned reads: {t_un} cycles");
        assert!(t_150 < 1024 + 250, "150-latency reads: {t_150} cycles");
        assert!(t_w < 1024 + 100, "writes: {t_w} cycles");
    }

    /// Completion credits: the client holds `rd_dat_ready` low for 4000-cycle windows while
    /// many reads are outstanding. In every cycle in which the slave offers an R beat,
    /// `m_rready` is high; in the first window (buffer empty at its start) the engine takes
    /// one buffer's worth of R beats (the credits: at least 512 - 63, at most 512 plus the two
    /// the realigner holds) and then issues no AR; at the end of every window the slave has
    /// nothing left to send. Afterwards all data (and RRESP errors) arrive in order, intact.
    #[test]
    fn r_never_backpressured_by_stalled_client() {
        let mut r = rng(25);
        let base = 0x5_0000_0000u64;
        let span = 96 * 1024;
        for round in 0..2 {
            let mut m = eng();
            let mut s = ErrSlave::new(0.3, (2, 80), 16);
            fill(&mut s.mem, base, span + 8192, &mut r);
            s.bad = vec![(base + 7000, base + 7100), (base + 50000, base + 54096)];
            let cmds: Vec<(u64, u32)> = (0..120)
                .map(|k| {
                    let l = if round == 0 && k % 2 == 0 {
                        4096
                    } else {
                        rand_len(&mut r, k)
                    };
                    (rand_addr(&mut r, base, span), l)
                })
                .collect();
            let beats: u64 = cmds
                .iter()
                .map(|&(a, l)| (a + l as u64 - 1) / 64 - a / 64 + 1)
                .sum();
            assert!(
                beats > 3 * 512,
                "round {round}: {beats} beats is too little"
            );
            let mut c = RdClient::new(cmds.clone(), 0.0, 1.0);
            c.bad = s.bad.clone();
            let (mut t, mut taken, mut windows) = (0u64, 0u64, 0);
            while c.busy() {
                assert!(t < 2_000_000, "round {round}: reads hang");
                let off = t % 6000 < 4000;
                c.stall = if off { 1.0 } else { 0.3 };
                s.drive(&mut m, &mut r);
                c.drive(&mut m, &mut r);
                m.tick();
                let offered = s.drv[4];
                if offered {
                    assert!(m.bit("m_rready"), "round {round}: R stalled at cycle {t}");
                }
                if t < 4000 {
                    taken += (offered && m.bit("m_rready")) as u64;
                    if t > 3000 {
                        assert!(!m.bit("m_arvalid"), "round {round}: AR without credits");
                    }
                }
                if off && t % 6000 == 3999 && c.busy() {
                    assert!(s.reads.is_empty(), "round {round}: R left at cycle {t}");
                    windows += 1;
                }
                s.observe(&mut m, &mut r);
                c.observe(&mut m, &s.mem);
                t += 1;
            }
            assert!(
                (512 - 63..=512 + 2).contains(&taken),
                "round {round}: {taken} R beats taken in the first window"
            );
            assert!(windows >= 2, "round {round}: only {windows} stall windows");
            assert_eq!(c.cmds_done, cmds.len(), "round {round}");
            assert!(
                c.err_beats > 0,
                "round {round}: the bad ranges must be read"
            );
            assert!(
                m.get("cnt_bus_err") > 0,
                "round {round}: RRESP errors counted"
            );
        }
    }

    /// One beat per cycle behind a long read latency: no stalls, the client always ready, a
    /// fixed latency of 150 and 400 cycles; 256 reads of 4 KiB, aligned (16384 data beats)
    /// and at +17 (16640 R beats: 65 bus beats per 64 data beats) run at >= 0.97 beats per
    /// cycle, latency included (512 beats of credit cover 400 cycles of latency).
    /// 400 single-beat 32-byte writes (CQEs, or a SEND's payload) from both clients, with
    /// every B response 110 cycles after its data (the simulator's host memory is 100): the
    /// write-response queue holds 128 commands, so the writes go out at about one per cycle.
    /// With 64 (the command FIFOs' depth, until stop 38) they took 821 cycles, 64 writes per
    /// round trip; a 64-byte SEND stream writes two per message on the receiving side.
    #[test]
    fn single_beat_writes_behind_slow_write_responses() {
        let mut m = eng();
        let mut r = rng(27);
        let mut s = ErrSlave::new(0.0, (2, 3), 64);
        s.b_lat = (110, 111);
        let cmds = |base: u64, r: &mut ChaCha8Rng| -> Vec<(u64, u32, Vec<u8>)> {
            (0..200u64)
                .map(|k| (base + 64 * k, 32, (0..32).map(|_| r.random()).collect()))
                .collect()
        };
        let (c0, c1) = (cmds(0x1_0000_0000, &mut r), cmds(0x2_0000_0000, &mut r));
        let mut w = [
            WrClient::new("wr0", c0, 0.0, false),
            WrClient::new("wr1", c1, 0.0, false),
        ];
        let t0 = m.cycle;
        run_writes(&mut m, &mut s, &mut w, &mut r);
        let t = w.iter().map(|c| c.last_cycle).max().unwrap() - t0;
        println!("dmaeng 400 single-beat writes, B 110 cycles after the data: {t} cycles");
        assert_eq!(m.get("cnt_wr_bursts"), 400);
        assert!(t <= 400 + 110 + 40, "{t} cycles");
    }

    #[test]
    fn throughput_long_latency() {
        let mut r = rng(26);
        let base = 0x6_0000_0000u64;
        let mut mem = HashMap::new();
        fill(&mut mem, base, 257 * 4096, &mut r);
        for lat in [150u64, 400] {
            for (off, rbeats) in [(0u64, 64u64), (17, 65)] {
                let mut h = ErrSlave::new(0.0, (lat, lat), 64);
                h.mem = mem.clone();
                let cmds: Vec<(u64, u32)> =
                    (0..256).map(|k| (base + 4096 * k + off, 4096)).collect();
                let t = read_cycles(&mut h, cmds, &mut r);
                let budget = (256 * rbeats) as f64 / 0.97;
                println!(
                    "dmaeng 256 x 4 KiB at +{off}, latency {lat}: {t} cycles, {:.4} R beats \
                     per cycle (budget {budget:.0})",
                    (256 * rbeats) as f64 / t as f64
                );
                assert!((t as f64) <= budget, "latency {lat}, +{off}: {t} cycles");
            }
        }
    }
}
