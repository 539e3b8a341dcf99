//! DMA self-test engine: proves both directions of `m_axi`.
//!
//! Write: issues AW bursts (64-byte beats, never crossing 4 KiB) covering `[IOVA, IOVA+LEN)`,
//! streams W beats with byte strobes so exactly those bytes are written with the pattern
//! `(SEED + i) mod 256`, and collects one B response per burst.
//! Read: issues AR bursts over the same beats, compares every in-range byte of R with the
//! pattern, counts mismatching bytes, and checksums the data (see `rnic_abi::dmatest`).
//! Registers (BAR0 block `dmatest`) are decoded here from the register bus.

use crate::common::bus::reg_addr;
use crate::common::bus::{HostAxiM, RegBusS};
use crate::common::popcount::Popcount64;
use crate::dma::dmalanes::DmaLanes;
use rnic_abi::regs::dmat;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct DmaTest {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub bus: RegBusS,
    pub m: HostAxiM,
    /// One-cycle pulse when an operation completes.
    pub done_pulse: Signal<Out, Bit>,
    lanes: DmaLanes,
    a_iova_lo: Constant<Bits<16>>,
    a_iova_hi: Constant<Bits<16>>,
    a_len: Constant<Bits<16>>,
    a_seed: Constant<Bits<16>>,
    a_ctrl: Constant<Bits<16>>,
    a_status: Constant<Bits<16>>,
    a_checksum: Constant<Bits<16>>,
    a_mismatch: Constant<Bits<16>>,
    a_cycles: Constant<Bits<16>>,
    max_len: Constant<Bits<32>>,
    rdata: DFF<Bits<32>>,
    iova: DFF<Bits<64>>,
    len: DFF<Bits<32>>,
    seed: DFF<Bits<8>>,
    busy: DFF<Bit>,
    dir_read: DFF<Bit>,
    done: DFF<Bit>,
    bus_err: DFF<Bit>,
    bad_arg: DFF<Bit>,
    first_beat: DFF<Bits<58>>,
    last_beat: DFF<Bits<58>>,
    lo: DFF<Bits<6>>,
    hi: DFF<Bits<7>>,
    base0: DFF<Bits<8>>,
    a_beat: DFF<Bits<58>>,
    a_done: DFF<Bit>,
    /// Beats from `a_beat` to the last beat (the address channel's remaining length - 1).
    a_rem: DFF<Bits<58>>,
    bursts: DFF<Bits<16>>,
    d_beat: DFF<Bits<58>>,
    d_done: DFF<Bit>,
    w_bursts: DFF<Bits<16>>,
    b_count: DFF<Bits<16>>,
    checksum: DFF<Bits<32>>,
    mismatches: DFF<Bits<32>>,
    cycles: DFF<Bits<32>>,
    // combinational temporaries
    end_addr: Signal<Local, Bits<64>>,
    blen: Signal<Local, Bits<58>>,
    to_page_end: Signal<Local, Bits<58>>,
    a_fire: Signal<Local, Bit>,
    d_fire: Signal<Local, Bit>,
    d_last_in_burst: Signal<Local, Bit>,
    d_is_last: Signal<Local, Bit>,
    fold: Signal<Local, Bits<32>>,
    status: Signal<Local, Bits<5>>,
    // R input register stage: a read beat is checked the cycle after its handshake
    r_v: DFF<Bit>,
    r_d: DFF<Bits<512>>,
    r_err: DFF<Bit>,
    // mismatch stage: a read beat's mismatching lanes are counted the cycle after its check
    mis_v: DFF<Bit>,
    mis_b: DFF<Bits<64>>,
    pc: Popcount64,
    d_off: Signal<Local, Bits<58>>,
    page_left: Signal<Local, Bits<6>>,
    zero5: Constant<Bits<5>>,
}

impl Default for DmaTest {
    fn default() -> Self {
        DmaTest {
            clock: Default::default(),
            rst: Default::default(),
            bus: Default::default(),
            m: Default::default(),
            done_pulse: Default::default(),
            lanes: Default::default(),
            a_iova_lo: reg_addr(dmat::IOVA_LO),
            a_iova_hi: reg_addr(dmat::IOVA_HI),
            a_len: reg_addr(dmat::LEN),
            a_seed: reg_addr(dmat::SEED),
            a_ctrl: reg_addr(dmat::CTRL),
            a_status: reg_addr(dmat::STATUS),
            a_checksum: reg_addr(dmat::CHECKSUM),
            a_mismatch: reg_addr(dmat::MISMATCH),
            a_cycles: reg_addr(dmat::CYCLES),
            max_len: Constant::new((dmat::MAX_LEN as u64).into()),
            rdata: Default::default(),
            iova: Default::default(),
            len: Default::default(),
            seed: Default::default(),
            busy: Default::default(),
            dir_read: Default::default(),
            done: Default::default(),
            bus_err: Default::default(),
            bad_arg: Default::default(),
            first_beat: Default::default(),
            last_beat: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            base0: Default::default(),
            a_beat: Default::default(),
            a_done: Default::default(),
            a_rem: Default::default(),
            bursts: Default::default(),
            d_beat: Default::default(),
            d_done: Default::default(),
            w_bursts: Default::default(),
            b_count: Default::default(),
            checksum: Default::default(),
            mismatches: Default::default(),
            cycles: Default::default(),
            end_addr: Default::default(),
            blen: Default::default(),
            to_page_end: Default::default(),
            a_fire: Default::default(),
            d_fire: Default::default(),
            d_last_in_burst: Default::default(),
            d_is_last: Default::default(),
            fold: Default::default(),
            status: Default::default(),
            r_v: Default::default(),
            r_d: Default::default(),
            r_err: Default::default(),
            mis_v: Default::default(),
            mis_b: Default::default(),
            pc: Default::default(),
            d_off: Default::default(),
            page_left: Default::default(),
            zero5: Constant::new(0u64.into()),
        }
    }
}

impl Logic for DmaTest {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, rdata, iova, len, seed, busy, dir_read, done, bus_err, bad_arg,
            first_beat, last_beat, lo, hi, base0
        );
        dff_setup!(
            self, clock, a_beat, a_done, a_rem, bursts, d_beat, d_done, w_bursts, b_count,
            checksum, mismatches, cycles
        );
        dff_setup!(self, clock, r_v, r_d, r_err, mis_v, mis_b);
        self.done_pulse.next = false;
        // ---------------- mismatch stage (before the register writes: a start clears it)
        self.pc.i.next = self.mis_b.q.val();
        self.mis_v.d.next = false;
        if self.mis_v.q.val() {
            self.mismatches.d.next = self.mismatches.q.val() + bit_cast::<32, 7>(self.pc.n.val());
        }
        // ---------------- register reads
        self.status.next = self
            .zero5
            .val()
            .replace_bit(0, self.busy.q.val())
            .replace_bit(1, self.done.q.val())
            .replace_bit(2, self.bus_err.q.val())
            .replace_bit(3, self.mismatches.q.val().any())
            .replace_bit(4, self.bad_arg.q.val());
        self.rdata.d.next = 0.into();
        if self.bus.rd.val() {
            if self.bus.addr.val() == self.a_iova_lo.val() {
                self.rdata.d.next = self.iova.q.val().get_bits::<32>(0);
            } else if self.bus.addr.val() == self.a_iova_hi.val() {
                self.rdata.d.next = self.iova.q.val().get_bits::<32>(32);
            } else if self.bus.addr.val() == self.a_len.val() {
                self.rdata.d.next = self.len.q.val();
            } else if self.bus.addr.val() == self.a_seed.val() {
                self.rdata.d.next = bit_cast::<32, 8>(self.seed.q.val());
            } else if self.bus.addr.val() == self.a_status.val() {
                self.rdata.d.next = bit_cast::<32, 5>(self.status.val());
            } else if self.bus.addr.val() == self.a_checksum.val() {
                self.rdata.d.next = self.checksum.q.val();
            } else if self.bus.addr.val() == self.a_mismatch.val() {
                self.rdata.d.next = self.mismatches.q.val();
            } else if self.bus.addr.val() == self.a_cycles.val() {
                self.rdata.d.next = self.cycles.q.val();
            }
        }
        self.bus.rdata.next = self.rdata.q.val();
        // ---------------- register writes and start
        self.end_addr.next = self.iova.q.val() + bit_cast::<64, 32>(self.len.q.val()) - 1;
        if self.bus.wr.val() && !self.busy.q.val() {
            if self.bus.addr.val() == self.a_iova_lo.val() {
                self.iova.d.next = (self.iova.q.val() & 0xFFFF_FFFF_0000_0000_u64)
                    | bit_cast::<64, 32>(self.bus.wdata.val());
            } else if self.bus.addr.val() == self.a_iova_hi.val() {
                self.iova.d.next = (self.iova.q.val() & 0xFFFF_FFFF_u64)
                    | (bit_cast::<64, 32>(self.bus.wdata.val()) << 32);
            } else if self.bus.addr.val() == self.a_len.val() {
                self.len.d.next = self.bus.wdata.val();
            } else if self.bus.addr.val() == self.a_seed.val() {
                self.seed.d.next = self.bus.wdata.val().get_bits::<8>(0);
            } else if self.bus.addr.val() == self.a_ctrl.val()
                && self.bus.wdata.val().get_bits::<2>(0).any()
            {
                self.done.d.next = false;
                self.bus_err.d.next = false;
                self.bad_arg.d.next = false;
                self.checksum.d.next = 0.into();
                self.mismatches.d.next = 0.into();
                self.cycles.d.next = 0.into();
                if (self.len.q.val() == 0)
                    || (self.len.q.val() > self.max_len.val())
                    || (self.end_addr.val() < self.iova.q.val())
                {
                    self.bad_arg.d.next = true;
                } else {
                    self.busy.d.next = true;
                    self.dir_read.d.next = !self.bus.wdata.val().get_bit(0);
                    self.first_beat.d.next = self.iova.q.val().get_bits::<58>(6);
                    self.last_beat.d.next = self.end_addr.val().get_bits::<58>(6);
                    self.lo.d.next = self.iova.q.val().get_bits::<6>(0);
                    self.hi.d.next = bit_cast::<7, 6>(self.end_addr.val().get_bits::<6>(0)) + 1;
                    // pattern byte of lane 0 of the first beat: seed - iova[5:0]
                    self.base0.d.next =
                        self.seed.q.val() - bit_cast::<8, 6>(self.iova.q.val().get_bits::<6>(0));
                    self.a_beat.d.next = self.iova.q.val().get_bits::<58>(6);
                    self.d_beat.d.next = self.iova.q.val().get_bits::<58>(6);
                    self.a_done.d.next = false;
                    self.a_rem.d.next =
                        self.end_addr.val().get_bits::<58>(6) - self.iova.q.val().get_bits::<58>(6);
                    self.d_done.d.next = false;
                    self.bursts.d.next = 0.into();
                    self.w_bursts.d.next = 0.into();
                    self.b_count.d.next = 0.into();
                }
            }
        }
        // ---------------- address channel (AW for writes, AR for reads)
        // burst: up to the end of the transfer or of the 4 KiB page, whichever comes first
        // (negate at 6 bits first: Verilog would widen before `~` inside a wider expression)
        self.page_left.next = !self.a_beat.q.val().get_bits::<6>(0);
        self.to_page_end.next = bit_cast::<58, 6>(self.page_left.val());
        // (the remaining length is a register: no subtraction and compare of 58-bit beat
        // numbers in front of AW/AR and `a_done`)
        if self.a_rem.q.val() < self.to_page_end.val() {
            self.blen.next = self.a_rem.q.val();
        } else {
            self.blen.next = self.to_page_end.val();
        }
        self.m.awid.next = 0.into();
        self.m.arid.next = 0.into();
        self.m.awaddr.next = bit_cast::<64, 58>(self.a_beat.q.val()) << 6;
        self.m.araddr.next = bit_cast::<64, 58>(self.a_beat.q.val()) << 6;
        self.m.awlen.next = self.blen.val().get_bits::<8>(0);
        self.m.arlen.next = self.blen.val().get_bits::<8>(0);
        self.m.awsize.next = 6.into();
        self.m.arsize.next = 6.into();
        self.m.awburst.next = 1.into();
        self.m.arburst.next = 1.into();
        self.m.awvalid.next = self.busy.q.val() && !self.dir_read.q.val() && !self.a_done.q.val();
        self.m.arvalid.next = self.busy.q.val() && self.dir_read.q.val() && !self.a_done.q.val();
        self.a_fire.next = (self.m.awvalid.val() && self.m.awready.val())
            || (self.m.arvalid.val() && self.m.arready.val());
        if self.a_fire.val() {
            self.a_beat.d.next = self.a_beat.q.val() + self.blen.val() + 1;
            self.bursts.d.next = self.bursts.q.val() + 1;
            self.a_rem.d.next = self.a_rem.q.val() - self.blen.val() - 1;
            if self.a_rem.q.val() <= self.to_page_end.val() {
                self.a_done.d.next = true;
            }
        }
        // ---------------- data lanes for the current data beat
        self.d_off.next = self.d_beat.q.val() - self.first_beat.q.val();
        self.lanes.base.next =
            self.base0.q.val() + (bit_cast::<8, 2>(self.d_off.val().get_bits::<2>(0)) << 6);
        self.lanes.en.next = self.busy.q.val();
        self.lanes.lo.next = self.lo.q.val();
        self.lanes.hi.next = self.hi.q.val();
        self.lanes.first.next = self.d_beat.q.val() == self.first_beat.q.val();
        self.lanes.last.next = self.d_beat.q.val() == self.last_beat.q.val();
        self.lanes.data.next = self.r_d.q.val();
        self.d_is_last.next = self.d_beat.q.val() == self.last_beat.q.val();
        self.d_last_in_burst.next =
            self.d_is_last.val() || (self.d_beat.q.val().get_bits::<6>(0) == 0x3F);
        // ---------------- W channel: only for bursts whose AW was issued
        self.m.wdata.next = self.lanes.pattern.val();
        self.m.wstrb.next = self.lanes.strb.val();
        self.m.wlast.next = self.d_last_in_burst.val();
        self.m.wvalid.next = self.busy.q.val()
            && !self.dir_read.q.val()
            && !self.d_done.q.val()
            && (self.w_bursts.q.val() < self.bursts.q.val());
        self.m.rready.next = self.busy.q.val() && self.dir_read.q.val();
        self.m.bready.next = true;
        self.r_v.d.next = self.m.rvalid.val() && self.m.rready.val();
        self.r_d.d.next = self.m.rdata.val();
        self.r_err.d.next = self.m.rresp.val() != 0;
        // a data beat: a W handshake, or the staged R beat
        self.d_fire.next = (self.m.wvalid.val() && self.m.wready.val()) || self.r_v.q.val();
        if self.dir_read.q.val() {
            self.fold.next = self.lanes.fold_data.val();
        } else {
            self.fold.next = self.lanes.fold_pattern.val();
        }
        if self.d_fire.val() {
            self.d_beat.d.next = self.d_beat.q.val() + 1;
            self.checksum.d.next =
                ((self.checksum.q.val() << 1) | (self.checksum.q.val() >> 31)) ^ self.fold.val();
            if self.d_is_last.val() {
                self.d_done.d.next = true;
            }
            if self.d_last_in_burst.val() {
                self.w_bursts.d.next = self.w_bursts.q.val() + 1;
            }
            if self.dir_read.q.val() {
                self.mis_v.d.next = true;
                self.mis_b.d.next = self.lanes.misbits.val();
                if self.r_err.q.val() {
                    self.bus_err.d.next = true;
                }
            }
        }
        if self.m.bvalid.val() {
            self.b_count.d.next = self.b_count.q.val() + 1;
            if self.m.bresp.val() != 0 {
                self.bus_err.d.next = true;
            }
        }
        // ---------------- completion
        if self.busy.q.val() {
            self.cycles.d.next = self.cycles.q.val() + 1;
            if self.a_done.q.val()
                && self.d_done.q.val()
                && (self.dir_read.q.val() || (self.b_count.q.val() == self.bursts.q.val()))
            {
                self.busy.d.next = false;
                self.done.d.next = true;
                self.done_pulse.next = true;
            }
        }
        if self.rst.val() {
            self.r_v.d.next = false;
            self.busy.d.next = false;
            self.done.d.next = false;
            self.bus_err.d.next = false;
            self.bad_arg.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;
    use rnic_abi::dmatest;

    fn start(m: &mut crate::common::vlt::DynModel, iova: u64, len: u32, seed: u8, ctrl: u32) {
        bus_write(m, dmat::IOVA_LO, iova as u32);
        bus_write(m, dmat::IOVA_HI, (iova >> 32) as u32);
        bus_write(m, dmat::LEN, len);
        bus_write(m, dmat::SEED, seed as u32);
        bus_write(m, dmat::CTRL, ctrl);
    }

    /// Run until done with the memory slave stalling every channel at random.
    fn run(
        m: &mut crate::common::vlt::DynModel,
        mem: &mut MemSlave,
        r: &mut rand_chacha::ChaCha8Rng,
    ) -> u32 {
        for _ in 0..200_000 {
            mem.drive(m, r);
            m.tick();
            mem.observe(m, r);
            if m.bit("done_pulse") {
                m.tick();
                return bus_read(m, dmat::STATUS);
            }
        }
        panic!("DMA self-test did not finish");
    }

    #[test]
    fn random_transfers_under_backpressure() {
        let mut m = model(DmaTest::default(), "dmatest");
        let mut r = rng(11);
        reset(&mut m);
        for (k, stall) in [0.0, 0.3, 0.6].into_iter().cycle().take(24).enumerate() {
            let mut mem = MemSlave::new("m", stall);
            let iova = 0x1_0000_0000u64 + r.random_range(0..3 * 4096);
            let len: u32 = if k % 6 == 0 {
                1
            } else {
                r.random_range(1..12_000)
            };
            let seed: u8 = r.random();
            start(&mut m, iova, len, seed, dmat::CTRL_WRITE);
            let st = run(&mut m, &mut mem, &mut r);
            assert_eq!(st & 0x1F, dmat::STATUS_DONE, "status after write {k}");
            // exactly the pattern, exactly in range
            assert_eq!(
                mem.mem.len(),
                len as usize,
                "bytes written ({iova:#x}+{len})"
            );
            for (&a, &b) in &mem.mem {
                assert!(a >= iova && a < iova + len as u64);
                assert_eq!(b, dmatest::pattern_byte(seed, a - iova));
            }
            let sum = bus_read(&mut m, dmat::CHECKSUM);
            assert_eq!(sum, dmatest::pattern_checksum(iova, len as u64, seed));
            // read back, then with one byte corrupted
            start(&mut m, iova, len, seed, dmat::CTRL_READ);
            assert_eq!(run(&mut m, &mut mem, &mut r) & 0x1F, dmat::STATUS_DONE);
            assert_eq!(bus_read(&mut m, dmat::MISMATCH), 0);
            assert_eq!(bus_read(&mut m, dmat::CHECKSUM), sum);
            let victim = iova + r.random_range(0..len as u64);
            *mem.mem.get_mut(&victim).expect("written") ^= 0x40;
            start(&mut m, iova, len, seed, dmat::CTRL_READ);
            let st = run(&mut m, &mut mem, &mut r);
            assert_eq!(st & 0x1F, dmat::STATUS_DONE | dmat::STATUS_MISMATCH);
            assert_eq!(bus_read(&mut m, dmat::MISMATCH), 1);
        }
    }
}
