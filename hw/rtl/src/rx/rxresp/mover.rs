//! Payload mover of [`super::RxResp`]: streams each job's payload from the packet buffer to
//! the DMA write client's data channel, shifted from the payload offset to byte 0 (one of four
//! constant shifts), one beat per cycle, and frees the frame's buffer space behind it. A job
//! with `swap8` has its first 8 output bytes reversed (an ATOMIC ACKNOWLEDGE's value: big-endian
//! on the wire, a little-endian u64 in memory).

use super::{BUF_BITS, MoveJobS, PTR_BITS, PktBufRdM};
use crate::common::fifo::Fifo;
use crate::rx::rxparse;
use rnic_abi::roce;
use rust_hdl::prelude::*;

/// Width of a job FIFO entry: first beat | beats << 8 | shift << 15 | end << 17 | swap8 << 26.
const JOB_W: usize = 32;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum MSt {
    Idle,
    Prime,
    Run,
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

#[derive(LogicBlock)]
pub struct Mover {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    /// Jobs from the responder.
    pub job: MoveJobS,
    /// Read port of the packet buffer.
    pub buf: PktBufRdM,
    /// Buffer beats before this pointer are free (to the ingress' flow control).
    pub free_ptr: Signal<Out, Bits<PTR_BITS>>,
    /// The data half of the `DmaWrM` client.
    pub dat_valid: Signal<Out, Bit>,
    pub dat_ready: Signal<In, Bit>,
    pub dat_data: Signal<Out, Bits<512>>,
    pub dat_last: Signal<Out, Bit>,
    jobs: Fifo<JOB_W, 2>,
    /// Right shift of the previous beat and left shift of the current one, per payload offset.
    k_sh: [Constant<Bits<10>>; 4],
    k_shi: [Constant<Bits<10>>; 4],
    st: DFF<MSt>,
    rd_addr: DFF<Bits<BUF_BITS>>,
    prev_beat: DFF<Bits<512>>,
    beats_left: DFF<Bits<7>>,
    shift_sel: DFF<Bits<2>>,
    frame_end: DFF<Bits<PTR_BITS>>,
    freed: DFF<Bits<PTR_BITS>>,
    swap8: DFF<Bit>,
    rd_addr_next: Signal<Local, Bits<BUF_BITS>>,
    q_first: Signal<Local, Bits<BUF_BITS>>,
    q_beats: Signal<Local, Bits<7>>,
    q_shift: Signal<Local, Bits<2>>,
    q_end: Signal<Local, Bits<PTR_BITS>>,
    q_swap8: Signal<Local, Bit>,
    /// The shifted beat, and its first 8 bytes reversed.
    merged: Signal<Local, Bits<512>>,
    rev8: Signal<Local, Bits<64>>,
    load: Signal<Local, Bit>,
    lo_part: Signal<Local, Bits<512>>,
    hi_part: Signal<Local, Bits<512>>,
}

impl Mover {
    pub fn new() -> Self {
        let ext = rxparse::EXT_OFF as u64;
        let po = [
            ext,
            ext + roce::IMMDT_BYTES as u64,
            ext + roce::RETH_BYTES as u64,
            ext + (roce::RETH_BYTES + roce::IMMDT_BYTES) as u64,
        ];
        Mover {
            clock: Default::default(),
            rst: Default::default(),
            job: Default::default(),
            buf: Default::default(),
            free_ptr: Default::default(),
            dat_valid: Default::default(),
            dat_ready: Default::default(),
            dat_data: Default::default(),
            dat_last: Default::default(),
            jobs: Default::default(),
            k_sh: po.map(|x| k(8 * (x % 64))),
            k_shi: po.map(|x| k(512 - 8 * (x % 64))),
            st: Default::default(),
            rd_addr: Default::default(),
            prev_beat: Default::default(),
            beats_left: Default::default(),
            shift_sel: Default::default(),
            frame_end: Default::default(),
            freed: Default::default(),
            swap8: Default::default(),
            rd_addr_next: Default::default(),
            q_first: Default::default(),
            q_beats: Default::default(),
            q_shift: Default::default(),
            q_end: Default::default(),
            q_swap8: Default::default(),
            merged: Default::default(),
            rev8: Default::default(),
            load: Default::default(),
            lo_part: Default::default(),
            hi_part: Default::default(),
        }
    }
}

impl Default for Mover {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for Mover {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, rd_addr, prev_beat, beats_left, shift_sel, frame_end, freed, swap8
        );
        self.jobs.clock.next = self.clock.val();
        self.jobs.rst.next = self.rst.val();
        self.jobs.wr.next = self.job.push.val();
        self.jobs.din.next = bit_cast::<JOB_W, BUF_BITS>(self.job.first.val())
            | (bit_cast::<JOB_W, 7>(self.job.beats.val()) << 8)
            | (bit_cast::<JOB_W, 2>(self.job.shift.val()) << 15)
            | (bit_cast::<JOB_W, PTR_BITS>(self.job.end.val()) << 17)
            | (bit_cast::<JOB_W, 1>(self.job.swap8.val().into()) << 26);
        self.job.full.next = self.jobs.full.val();
        self.q_first.next = self.jobs.dout.val().get_bits::<BUF_BITS>(0);
        self.q_beats.next = self.jobs.dout.val().get_bits::<7>(8);
        self.q_shift.next = self.jobs.dout.val().get_bits::<2>(15);
        self.q_end.next = self.jobs.dout.val().get_bits::<PTR_BITS>(17);
        self.q_swap8.next = self.jobs.dout.val().get_bit(26);
        self.rd_addr_next.next = self.rd_addr.q.val();
        self.jobs.rd.next = false;
        self.load.next = false;
        self.dat_valid.next = false;
        self.dat_last.next = self.beats_left.q.val() == 1;
        // one branch per shift (not a default overridden by the selected one): the simulator
        // then shifts the 512-bit beats once a cycle instead of twice (synthesis: the same
        // 4:1 multiplexer of constant shifts)
        if self.shift_sel.q.val() == 0 {
            self.lo_part.next = self.prev_beat.q.val() >> self.k_sh[0].val();
            self.hi_part.next = self.buf.data.val() << self.k_shi[0].val();
        } else if self.shift_sel.q.val() == 1 {
            self.lo_part.next = self.prev_beat.q.val() >> self.k_sh[1].val();
            self.hi_part.next = self.buf.data.val() << self.k_shi[1].val();
        } else if self.shift_sel.q.val() == 2 {
            self.lo_part.next = self.prev_beat.q.val() >> self.k_sh[2].val();
            self.hi_part.next = self.buf.data.val() << self.k_shi[2].val();
        } else {
            self.lo_part.next = self.prev_beat.q.val() >> self.k_sh[3].val();
            self.hi_part.next = self.buf.data.val() << self.k_shi[3].val();
        }
        self.merged.next = self.lo_part.val() | self.hi_part.val();
        self.rev8.next = (bit_cast::<64, 8>(self.merged.val().get_bits::<8>(0)) << 56)
            | (bit_cast::<64, 8>(self.merged.val().get_bits::<8>(8)) << 48)
            | (bit_cast::<64, 8>(self.merged.val().get_bits::<8>(16)) << 40)
            | (bit_cast::<64, 8>(self.merged.val().get_bits::<8>(24)) << 32)
            | (bit_cast::<64, 8>(self.merged.val().get_bits::<8>(32)) << 24)
            | (bit_cast::<64, 8>(self.merged.val().get_bits::<8>(40)) << 16)
            | (bit_cast::<64, 8>(self.merged.val().get_bits::<8>(48)) << 8)
            | bit_cast::<64, 8>(self.merged.val().get_bits::<8>(56));
        self.dat_data.next = self.merged.val();
        if self.swap8.q.val() {
            self.dat_data.next =
                ((self.merged.val() >> 64) << 64) | bit_cast::<512, 64>(self.rev8.val());
        }
        match self.st.q.val() {
            MSt::Idle => {
                if !self.jobs.empty.val() {
                    self.jobs.rd.next = true;
                    if self.q_beats.val() == 0 {
                        self.freed.d.next = self.q_end.val();
                    } else {
                        self.load.next = true;
                    }
                }
            }
            MSt::Prime => {
                self.prev_beat.d.next = self.buf.data.val();
                self.rd_addr_next.next = self.rd_addr.q.val() + 1;
                self.st.d.next = MSt::Run;
            }
            MSt::Run => {
                self.dat_valid.next = true;
                if self.dat_ready.val() {
                    self.prev_beat.d.next = self.buf.data.val();
                    self.rd_addr_next.next = self.rd_addr.q.val() + 1;
                    self.beats_left.d.next = self.beats_left.q.val() - 1;
                    if self.beats_left.q.val() == 1 {
                        self.freed.d.next = self.frame_end.q.val();
                        self.st.d.next = MSt::Idle;
                        // chain straight into the next payload (one bubble per frame)
                        if !self.jobs.empty.val() && self.q_beats.val().any() {
                            self.jobs.rd.next = true;
                            self.load.next = true;
                        }
                    }
                }
            }
            _ => {
                self.st.d.next = MSt::Idle;
            }
        }
        if self.load.val() {
            self.rd_addr_next.next = self.q_first.val();
            self.beats_left.d.next = self.q_beats.val();
            self.shift_sel.d.next = self.q_shift.val();
            self.frame_end.d.next = self.q_end.val();
            self.swap8.d.next = self.q_swap8.val();
            self.st.d.next = MSt::Prime;
        }
        self.rd_addr.d.next = self.rd_addr_next.val();
        self.buf.addr.next = self.rd_addr_next.val();
        self.free_ptr.next = self.freed.q.val();
        if self.rst.val() {
            self.freed.d.next = 0.into();
            self.st.d.next = MSt::Idle;
        }
    }
}
