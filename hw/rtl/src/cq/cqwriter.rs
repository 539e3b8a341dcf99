//! Data-path block `cqwriter` (docs/DATAPATH.md "cqwriter"): writes completions into the
//! host CQ rings.
//!
//! Three `CplS` inputs (`tx` from txreq, `rx` from rxresp, `ack` from ackproc) are served
//! round robin, one completion at a time: take it, read `CqContext` (record
//! `ctx_base(1) + cqn`), drop it as invalid (`cnt_cq_invalid`) when `cqn >= num_cqs` or flags
//! bit 0 is clear, as overflow (`cnt_cq_overflow`) when `producer - consumer == 2^log2` modulo
//! 2^16 (the CQ doorbell writes the low 16 bits of `consumer`);
//! otherwise one 32-byte DMA write (`wr`: the command from Issue; the data beat from a
//! four-entry queue (`beats`, a [`Fifo`] of the CQEs' 32 bytes), pushed when the command is
//! taken and offered until taken, so Issue ends with its command taken and room for its
//! beat, without waiting for the DMA engine to take the beats before it) of the
//! `Cqe` image at `base_iova + 32 * (producer mod 2^log2)`, owner bit set on even passes
//! (`(producer >> log2) & 1 == 0`), then the next completion while a byte-enable write of
//! `producer + 1` goes to the store in the background (one still waiting for the port is
//! replaced by the newer value: it is of the same CQ; a context read waits for it). The CQ
//! record is kept from one completion to the next: a completion to the same CQ reads nothing
//! while the store's write snoop shows no other writer's write to it but the CQ doorbell's
//! (whose consumer index is merged). The write's `done` is not waited for: a small queue
//! remembers, per write in flight, whether its CQ asked for an interrupt (flags bit 1); `irq`
//! pulses one cycle after that write's `done`. A completion to the CQ of the one before takes
//! Req (the kept record, and the checks at once) and Issue, and the next one is taken in
//! Issue's last cycle: 2 to 3 cycles per completion without stalls (5 before, about 7
//! before the record was kept).
//! Record offsets come from the ABI `FIELDS` tables (`Cqe`, `CqContext`).

use crate::common::bus::{CTX_ADDR_BITS, CTX_SRC_CQW, CplS, CtxPortM, CtxSnoopS, DmaWrM};
use crate::common::fifo::Fifo;
use crate::dma::dmaeng::WR_OUT_BITS;
use rnic_abi::params::{self, BuildParams};
use rnic_abi::queue::{CqContext, Cqe, cqe_flag};
use rust_hdl::prelude::*;

/// Bits of a queued CQE data beat: the CQE (the rest of the 512-bit beat is zero).
const BEAT_Q_BITS: usize = 256;
const _: () = assert!(Cqe::SIZE * 8 <= BEAT_Q_BITS);

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum CqState {
    Idle,
    Req,
    Wait,
    Check,
    Issue,
}

use crate::common::bus::field_bit as bit_off;

#[derive(LogicBlock)]
pub struct CqWriter {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub tx: CplS,
    pub rx: CplS,
    pub ack: CplS,
    pub ctx: CtxPortM,
    /// The context store's writes: the CQ record is kept from one completion to the next
    /// (`kc_v`).
    pub sn: CtxSnoopS,
    pub wr: DmaWrM,
    pub irq: Signal<Out, Bit>,
    pub cnt_cqe: Signal<Out, Bits<32>>,
    pub cnt_cq_overflow: Signal<Out, Bits<32>>,
    pub cnt_cq_invalid: Signal<Out, Bits<32>>,
    // constants: table, record and CQE layout
    n_cq: Constant<Bits<17>>,
    cq_base: Constant<Bits<CTX_ADDR_BITS>>,
    f_base: Constant<Bits<10>>,
    f_log2: Constant<Bits<10>>,
    f_flags: Constant<Bits<10>>,
    f_prod: Constant<Bits<10>>,
    f_cons: Constant<Bits<10>>,
    prod_be: Constant<Bits<64>>,
    /// the CQ doorbell's write: the low 16 bits of `consumer`
    cons_be: Constant<Bits<64>>,
    k_src: Constant<Bits<3>>,
    hi16: Constant<Bits<32>>,
    q_wr_id: Constant<Bits<10>>,
    q_byte_len: Constant<Bits<10>>,
    q_imm: Constant<Bits<10>>,
    q_qpn: Constant<Bits<10>>,
    q_src_qp: Constant<Bits<10>>,
    q_opcode: Constant<Bits<10>>,
    q_status: Constant<Bits<10>>,
    q_flags: Constant<Bits<10>>,
    q_idx: Constant<Bits<10>>,
    owner: Constant<Bits<8>>,
    cqe_len: Constant<Bits<14>>,
    ones32: Constant<Bits<32>>,
    one32: Constant<Bits<32>>,
    // state
    st: DFF<CqState>,
    last: DFF<Bits<2>>,
    cqn: DFF<Bits<16>>,
    wr_id: DFF<Bits<64>>,
    byte_len: DFF<Bits<32>>,
    imm: DFF<Bits<32>>,
    qpn: DFF<Bits<24>>,
    src_qp: DFF<Bits<24>>,
    opcode: DFF<Bits<8>>,
    status: DFF<Bits<8>>,
    cflags: DFF<Bits<8>>,
    wqe_idx: DFF<Bits<16>>,
    base: DFF<Bits<64>>,
    log2: DFF<Bits<8>>,
    qflags: DFF<Bits<8>>,
    prod: DFF<Bits<32>>,
    cons: DFF<Bits<32>>,
    /// `base`..`cons` hold CQ `kc_cqn`'s record as the store has it (plus our producer
    /// writes still pending): valid from the cycle its read was taken; the CQ doorbell's
    /// consumer merged from the snoop, any other writer's write to it clears the bit. A
    /// completion to that CQ reads nothing (Req straight to Check).
    kc_v: DFF<Bit>,
    kc_cqn: DFF<Bits<16>>,
    /// The producer write-back of the last CQE, in the background (`wb_pend`): record
    /// `wb_addr`, value `wb_prod`; a context read waits for it.
    wb_pend: DFF<Bit>,
    wb_addr: DFF<Bits<CTX_ADDR_BITS>>,
    wb_prod: DFF<Bits<32>>,
    cmd_ok: DFF<Bit>,
    /// the CQE data beats whose commands were taken, in command order (the CQE's 32 bytes;
    /// the beat's upper half is zero): the head is offered on `wr.dat_*` until taken, so
    /// Issue ends when its command is taken and there is room, without waiting for the DMA
    /// engine to take the beats before it
    beats: Fifo<BEAT_Q_BITS, 2>,
    /// One bit per CQE write in flight (its CQ asked for an interrupt), in command order:
    /// pushed when the command is taken, popped by its `done` (the engine answers in order).
    /// 128 deep ([`WR_OUT_BITS`]): a CQE write's round trip (about 110 cycles to its B
    /// response at the simulator's host memory) over 32 writes in flight held the writer to
    /// 3.4 cycles per CQE, behind a 64-byte WRITE stream's 3.25.
    pend: Fifo<1, WR_OUT_BITS>,
    irq_q: DFF<Bit>,
    c_cqe: DFF<Bits<32>>,
    c_ovf: DFF<Bits<32>>,
    c_inv: DFF<Bits<32>>,
    // combinational
    sel: Signal<Local, Bits<2>>,
    any: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    /// Issue's last cycle (command and data taken): the next completion may be taken in it
    fin: Signal<Local, Bit>,
    /// the record's checks decide now: in Check, or in Req on the kept record
    decide: Signal<Local, Bit>,
    slot: Signal<Local, Bits<32>>,
    pass: Signal<Local, Bits<32>>,
    size: Signal<Local, Bits<32>>,
    fill: Signal<Local, Bits<32>>,
    fl: Signal<Local, Bits<8>>,
    img: Signal<Local, Bits<512>>,
    cmd_fire: Signal<Local, Bit>,
    dat_fire: Signal<Local, Bit>,
    rec: Signal<Local, Bits<512>>,
    hit: Signal<Local, Bit>,
    sn_cq: Signal<Local, Bit>,
    sn_cons: Signal<Local, Bit>,
}

impl CqWriter {
    pub fn new(p: &BuildParams) -> Self {
        let cq = CqContext::FIELDS;
        let q = Cqe::FIELDS;
        let prod = CqContext::field("producer").expect("producer field");
        CqWriter {
            clock: Default::default(),
            rst: Default::default(),
            tx: Default::default(),
            rx: Default::default(),
            ack: Default::default(),
            ctx: Default::default(),
            sn: Default::default(),
            wr: Default::default(),
            irq: Default::default(),
            cnt_cqe: Default::default(),
            cnt_cq_overflow: Default::default(),
            cnt_cq_invalid: Default::default(),
            n_cq: Constant::new((p.num_cqs as u64).into()),
            cq_base: Constant::new((p.ctx_base(1) as u64).into()),
            f_base: bit_off(cq, "base_iova"),
            f_log2: bit_off(cq, "log2_entries"),
            f_flags: bit_off(cq, "flags"),
            f_prod: bit_off(cq, "producer"),
            f_cons: bit_off(cq, "consumer"),
            prod_be: Constant::new((((1u64 << (prod.bits / 8)) - 1) << prod.offset).into()),
            cons_be: Constant::new(crate::hostif::dbunit::cq_consumer_be().into()),
            k_src: Constant::new(CTX_SRC_CQW.into()),
            hi16: Constant::new(0xFFFF_0000u64.into()),
            q_wr_id: bit_off(q, "wr_id"),
            q_byte_len: bit_off(q, "byte_len"),
            q_imm: bit_off(q, "imm_data"),
            q_qpn: bit_off(q, "qp_num"),
            q_src_qp: bit_off(q, "src_qp"),
            q_opcode: bit_off(q, "opcode"),
            q_status: bit_off(q, "status"),
            q_flags: bit_off(q, "flags"),
            q_idx: bit_off(q, "sq_index"),
            owner: Constant::new((cqe_flag::OWNER as u64).into()),
            cqe_len: Constant::new((Cqe::SIZE as u64).into()),
            ones32: Constant::new(0xFFFF_FFFF_u64.into()),
            one32: Constant::new(1u64.into()),
            st: Default::default(),
            last: Default::default(),
            cqn: Default::default(),
            wr_id: Default::default(),
            byte_len: Default::default(),
            imm: Default::default(),
            qpn: Default::default(),
            src_qp: Default::default(),
            opcode: Default::default(),
            status: Default::default(),
            cflags: Default::default(),
            wqe_idx: Default::default(),
            base: Default::default(),
            log2: Default::default(),
            qflags: Default::default(),
            prod: Default::default(),
            cons: Default::default(),
            kc_v: Default::default(),
            kc_cqn: Default::default(),
            wb_pend: Default::default(),
            wb_addr: Default::default(),
            wb_prod: Default::default(),
            cmd_ok: Default::default(),
            beats: Default::default(),
            pend: Default::default(),
            irq_q: Default::default(),
            c_cqe: Default::default(),
            c_ovf: Default::default(),
            c_inv: Default::default(),
            sel: Default::default(),
            any: Default::default(),
            take: Default::default(),
            fin: Default::default(),
            decide: Default::default(),
            slot: Default::default(),
            pass: Default::default(),
            size: Default::default(),
            fill: Default::default(),
            fl: Default::default(),
            img: Default::default(),
            cmd_fire: Default::default(),
            dat_fire: Default::default(),
            rec: Default::default(),
            hit: Default::default(),
            sn_cq: Default::default(),
            sn_cons: Default::default(),
        }
    }
}

impl Default for CqWriter {
    fn default() -> Self {
        Self::new(&params::DEFAULT)
    }
}

impl Logic for CqWriter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, last, cqn, wr_id, byte_len, imm, qpn, src_qp, opcode, status, cflags,
            wqe_idx
        );
        dff_setup!(
            self, clock, base, log2, qflags, prod, cons, cmd_ok, irq_q, c_cqe, c_ovf, c_inv, kc_v,
            kc_cqn, wb_pend, wb_addr, wb_prod
        );
        // ---------------- context port
        // the producer write-back goes first, whenever one is pending
        self.ctx.req.next = self.wb_pend.q.val();
        self.ctx.we.next = self.wb_pend.q.val();
        self.ctx.addr.next = self.cq_base.val() + self.cqn.q.val().get_bits::<CTX_ADDR_BITS>(0);
        if self.wb_pend.q.val() {
            self.ctx.addr.next = self.wb_addr.q.val();
        }
        self.ctx.wdata.next = bit_cast::<512, 32>(self.wb_prod.q.val()) << self.f_prod.val();
        self.ctx.wbe.next = self.prod_be.val();
        if self.wb_pend.q.val() && self.ctx.gnt.val() {
            self.wb_pend.d.next = false;
        }
        self.rec.next = self.ctx.rdata.val();
        // the kept record
        self.hit.next = self.kc_v.q.val() && (self.cqn.q.val() == self.kc_cqn.q.val());
        self.sn_cq.next = self.sn.we.val()
            && (self.sn.src.val() != self.k_src.val())
            && (self.sn.addr.val()
                == self.cq_base.val() + self.kc_cqn.q.val().get_bits::<CTX_ADDR_BITS>(0));
        self.sn_cons.next = self.sn_cq.val() && (self.sn.wbe.val() == self.cons_be.val());

        // ---------------- ring slot, pass, CQE image
        self.size.next = self.one32.val() << self.log2.q.val();
        // the CQ doorbell carries the host's consumer index in 16 bits: compare modulo 2^16
        // (CQs hold at most 2^15 entries)
        self.fill.next = self.prod.q.val() - self.cons.q.val();
        self.slot.next = self.prod.q.val() & !(self.ones32.val() << self.log2.q.val());
        self.pass.next = self.prod.q.val() >> self.log2.q.val();
        if self.pass.val().get_bit(0) {
            self.fl.next = self.cflags.q.val() & !self.owner.val();
        } else {
            self.fl.next = self.cflags.q.val() | self.owner.val();
        }
        self.img.next = (bit_cast::<512, 64>(self.wr_id.q.val()) << self.q_wr_id.val())
            | (bit_cast::<512, 32>(self.byte_len.q.val()) << self.q_byte_len.val())
            | (bit_cast::<512, 32>(self.imm.q.val()) << self.q_imm.val())
            | (bit_cast::<512, 24>(self.qpn.q.val()) << self.q_qpn.val())
            | (bit_cast::<512, 24>(self.src_qp.q.val()) << self.q_src_qp.val())
            | (bit_cast::<512, 8>(self.opcode.q.val()) << self.q_opcode.val())
            | (bit_cast::<512, 8>(self.status.q.val()) << self.q_status.val())
            | (bit_cast::<512, 8>(self.fl.val()) << self.q_flags.val())
            | (bit_cast::<512, 16>(self.wqe_idx.q.val()) << self.q_idx.val());
        self.wr.cmd_addr.next = self.base.q.val() + (bit_cast::<64, 32>(self.slot.val()) << 5);
        self.wr.cmd_len.next = self.cqe_len.val();
        self.beats.clock.next = self.clock.val();
        self.beats.rst.next = self.rst.val();
        self.wr.dat_data.next = bit_cast::<512, BEAT_Q_BITS>(self.beats.dout.val());
        self.wr.dat_last.next = true;
        self.wr.cmd_valid.next = (self.st.q.val() == CqState::Issue) && !self.cmd_ok.q.val();
        self.wr.dat_valid.next = !self.beats.empty.val();
        self.cmd_fire.next = self.wr.cmd_valid.val() && self.wr.cmd_ready.val();
        self.dat_fire.next = self.wr.dat_valid.val() && self.wr.dat_ready.val();
        self.fin.next = (self.st.q.val() == CqState::Issue)
            && (self.cmd_ok.q.val() || self.cmd_fire.val())
            && !self.beats.full.val();
        self.beats.wr.next = self.fin.val();
        self.beats.din.next = self.img.val().get_bits::<BEAT_Q_BITS>(0);
        self.beats.rd.next = self.dat_fire.val();

        // ---------------- round-robin pick (0 tx, 1 rx, 2 ack), starting after `last`
        self.any.next = self.tx.valid.val() || self.rx.valid.val() || self.ack.valid.val();
        self.sel.next = 0.into();
        if self.last.q.val() == 0 {
            if self.rx.valid.val() {
                self.sel.next = 1.into();
            } else if self.ack.valid.val() {
                self.sel.next = 2.into();
            }
        } else if self.last.q.val() == 1 {
            if self.ack.valid.val() {
                self.sel.next = 2.into();
            } else if self.tx.valid.val() {
                self.sel.next = 0.into();
            } else {
                self.sel.next = 1.into();
            }
        } else if self.tx.valid.val() {
            self.sel.next = 0.into();
        } else if self.rx.valid.val() {
            self.sel.next = 1.into();
        } else {
            self.sel.next = 2.into();
        }
        // taken in Idle, or in the cycle Issue finishes (the registers below are Issue's until
        // the end of that cycle)
        self.take.next = ((self.st.q.val() == CqState::Idle) || self.fin.val()) && self.any.val();
        self.tx.ready.next = self.take.val() && (self.sel.val() == 0);
        self.rx.ready.next = self.take.val() && (self.sel.val() == 1);
        self.ack.ready.next = self.take.val() && (self.sel.val() == 2);
        if self.take.val() {
            self.last.d.next = self.sel.val();
            if self.sel.val() == 0 {
                self.cqn.d.next = self.tx.cqn.val();
                self.wr_id.d.next = self.tx.wr_id.val();
                self.byte_len.d.next = self.tx.byte_len.val();
                self.imm.d.next = self.tx.imm.val();
                self.qpn.d.next = self.tx.qpn.val();
                self.src_qp.d.next = self.tx.src_qp.val();
                self.opcode.d.next = self.tx.opcode.val();
                self.status.d.next = self.tx.status.val();
                self.cflags.d.next = self.tx.flags.val();
                self.wqe_idx.d.next = self.tx.wqe_idx.val();
            } else if self.sel.val() == 1 {
                self.cqn.d.next = self.rx.cqn.val();
                self.wr_id.d.next = self.rx.wr_id.val();
                self.byte_len.d.next = self.rx.byte_len.val();
                self.imm.d.next = self.rx.imm.val();
                self.qpn.d.next = self.rx.qpn.val();
                self.src_qp.d.next = self.rx.src_qp.val();
                self.opcode.d.next = self.rx.opcode.val();
                self.status.d.next = self.rx.status.val();
                self.cflags.d.next = self.rx.flags.val();
                self.wqe_idx.d.next = self.rx.wqe_idx.val();
            } else {
                self.cqn.d.next = self.ack.cqn.val();
                self.wr_id.d.next = self.ack.wr_id.val();
                self.byte_len.d.next = self.ack.byte_len.val();
                self.imm.d.next = self.ack.imm.val();
                self.qpn.d.next = self.ack.qpn.val();
                self.src_qp.d.next = self.ack.src_qp.val();
                self.opcode.d.next = self.ack.opcode.val();
                self.status.d.next = self.ack.status.val();
                self.cflags.d.next = self.ack.flags.val();
                self.wqe_idx.d.next = self.ack.wqe_idx.val();
            }
            self.st.d.next = CqState::Req;
        }

        // ---------------- irq queue: one bit per CQE write in flight, popped by `done`
        // (Issue starts only while it has room: no push is ever dropped)
        self.pend.clock.next = self.clock.val();
        self.pend.rst.next = self.rst.val();
        self.pend.rd.next = self.wr.done.val();
        self.pend.wr.next = self.cmd_fire.val();
        self.pend.din.next = self.qflags.q.val().get_bits::<1>(1);
        self.irq_q.d.next = self.wr.done.val() && self.pend.dout.val().any();

        // ---------------- FSM
        self.decide.next = false;
        if self.st.q.val() == CqState::Req {
            if bit_cast::<17, 16>(self.cqn.q.val()) >= self.n_cq.val() {
                self.c_inv.d.next = self.c_inv.q.val() + 1;
                self.st.d.next = CqState::Idle;
            } else if self.hit.val() && !self.sn_cq.val() {
                // the record is kept (a write to it shown on the snoop in this very cycle is
                // not in it yet: then it is read): Check's decisions at once (below)
                self.decide.next = true;
            } else if !self.wb_pend.q.val() {
                self.ctx.req.next = true;
                self.ctx.we.next = false;
                if self.ctx.gnt.val() {
                    self.kc_v.d.next = true;
                    self.kc_cqn.d.next = self.cqn.q.val();
                    self.st.d.next = CqState::Wait;
                }
            }
        } else if self.st.q.val() == CqState::Wait {
            if self.ctx.rvalid.val() {
                self.base.d.next = self.rec.val().get_bits::<64>(self.f_base.val().index());
                self.log2.d.next = self.rec.val().get_bits::<8>(self.f_log2.val().index());
                self.qflags.d.next = self.rec.val().get_bits::<8>(self.f_flags.val().index());
                self.prod.d.next = self.rec.val().get_bits::<32>(self.f_prod.val().index());
                self.cons.d.next = self.rec.val().get_bits::<32>(self.f_cons.val().index());
                self.st.d.next = CqState::Check;
            }
        } else if self.st.q.val() == CqState::Check {
            self.decide.next = true;
        } else if self.st.q.val() == CqState::Issue {
            if self.cmd_fire.val() {
                self.cmd_ok.d.next = true;
            }
            if self.fin.val() {
                // producer + 1: kept here, written back in the background; a write-back still
                // waiting for the port is of this same CQ (a completion to another CQ reads
                // its record only after it), so it is replaced by this one
                self.prod.d.next = self.prod.q.val() + 1;
                self.wb_pend.d.next = true;
                self.wb_addr.d.next =
                    self.cq_base.val() + self.cqn.q.val().get_bits::<CTX_ADDR_BITS>(0);
                self.wb_prod.d.next = self.prod.q.val() + 1;
                self.c_cqe.d.next = self.c_cqe.q.val() + 1;
                self.st.d.next = CqState::Idle;
                if self.take.val() {
                    self.st.d.next = CqState::Req;
                }
            }
        }
        // the record's checks (Check, or Req on the kept record): an invalid CQ or a full one
        // drops the completion, else Issue once fewer than 128 writes are in flight (Check
        // waits for that)
        if self.decide.val() {
            self.cmd_ok.d.next = false;
            self.st.d.next = CqState::Check;
            if !self.qflags.q.val().get_bit(0) {
                self.c_inv.d.next = self.c_inv.q.val() + 1;
                self.st.d.next = CqState::Idle;
            } else if self.fill.val().get_bits::<16>(0) == self.size.val().get_bits::<16>(0) {
                self.c_ovf.d.next = self.c_ovf.q.val() + 1;
                self.st.d.next = CqState::Idle;
            } else if !self.pend.full.val() {
                self.st.d.next = CqState::Issue;
            }
        }
        // another writer: the CQ doorbell's consumer (its low 16 bits) merged, anything else
        // drops the kept record
        if self.sn_cons.val() {
            self.cons.d.next = (self.cons.q.val() & self.hi16.val())
                | bit_cast::<32, 16>(
                    self.sn
                        .wdata
                        .val()
                        .get_bits::<16>(self.f_cons.val().index()),
                );
        }
        if self.sn_cq.val() && !self.sn_cons.val() {
            self.kc_v.d.next = false;
        }
        self.irq.next = self.irq_q.q.val();
        self.cnt_cqe.next = self.c_cqe.q.val();
        self.cnt_cq_overflow.next = self.c_ovf.q.val();
        self.cnt_cq_invalid.next = self.c_inv.q.val();
        if self.rst.val() {
            self.st.d.next = CqState::Idle;
            self.kc_v.d.next = false;
            self.wb_pend.d.next = false;
            self.last.d.next = 0.into();
            self.irq_q.d.next = false;
            self.c_cqe.d.next = 0.into();
            self.c_ovf.d.next = 0.into();
            self.c_inv.d.next = 0.into();
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
    use std::collections::VecDeque;

    const P: BuildParams = params::DEFAULT;

    /// A completion source on one `CplS` input: random idle, holds `valid` until taken.
    struct CplSrc {
        p: &'static str,
        q: VecDeque<(u16, Cqe)>,
        idle: f64,
        v: bool,
        sent: Vec<(u16, Cqe)>,
    }

    impl CplSrc {
        fn new(p: &'static str, idle: f64) -> Self {
            CplSrc {
                p,
                q: VecDeque::new(),
                idle,
                v: false,
                sent: vec![],
            }
        }
        fn n(&self, s: &str) -> String {
            format!("{}_{s}", self.p)
        }
        fn drive(&mut self, m: &mut DynModel, r: &mut ChaCha8Rng) {
            if !self.v {
                self.v = !self.q.is_empty() && !chance(r, self.idle);
            }
            m.set(&self.n("valid"), self.v as u64);
            if let Some(&(cqn, c)) = self.q.front() {
                m.set(&self.n("cqn"), cqn as u64);
                m.set(&self.n("wr_id"), c.wr_id);
                m.set(&self.n("byte_len"), c.byte_len as u64);
                m.set(&self.n("imm"), c.imm_data as u64);
                m.set(&self.n("qpn"), c.qp_num as u64);
                m.set(&self.n("src_qp"), c.src_qp as u64);
                m.set(&self.n("opcode"), c.opcode as u64);
                m.set(&self.n("status"), c.status as u64);
                m.set(&self.n("flags"), c.flags as u64);
                m.set(&self.n("wqe_idx"), c.sq_index as u64);
            }
        }
        fn observe(&mut self, m: &DynModel) {
            if self.v && m.bit(&self.n("ready")) {
                self.sent.push(self.q.pop_front().unwrap());
                self.v = false;
            }
        }
    }

    #[derive(Clone, Copy)]
    struct Cq {
        cqn: u16,
        base: u64,
        log2: u8,
        flags: u8,
    }

    struct Tb {
        m: DynModel,
        r: ChaCha8Rng,
        ctx: CtxModel,
        wr: DmaWrModel,
        src: [CplSrc; 3],
        cqs: Vec<Cq>,
        /// CQEs the host consumed, per entry of `cqs`.
        got: Vec<Vec<Cqe>>,
        irqs: u64,
        host_speed: f64,
    }

    impl Tb {
        fn new(seed: u64, stall: f64, idle: f64, cqs: Vec<Cq>) -> Tb {
            let mut m = model(CqWriter::default(), "cqwriter");
            for p in ["tx", "rx", "ack"] {
                m.set(&format!("{p}_valid"), 0);
            }
            reset(&mut m);
            let mut ctx =
                CtxModel::new("ctx", stall).with_snoop("sn", crate::common::bus::CTX_SRC_CQW);
            for cq in &cqs {
                let rec = CqContext {
                    base_iova: cq.base,
                    log2_entries: cq.log2,
                    flags: cq.flags,
                    irq_vector: 7,
                    producer: 0,
                    consumer: 0,
                };
                ctx.put(P.ctx_base(1) + cq.cqn as u32, rec.encode());
            }
            let n = cqs.len();
            Tb {
                m,
                r: rng(seed),
                ctx,
                wr: DmaWrModel::new("wr", stall),
                src: [
                    CplSrc::new("tx", idle),
                    CplSrc::new("rx", idle),
                    CplSrc::new("ack", idle),
                ],
                cqs,
                got: vec![vec![]; n],
                irqs: 0,
                host_speed: 0.05,
            }
        }
        fn cq_rec(&self, i: usize) -> CqContext {
            CqContext::decode(&self.ctx.get(P.ctx_base(1) + self.cqs[i].cqn as u32))
        }
        /// The host consumes every valid CQE (owner bit = phase) of CQ entry `i`, in order.
        fn consume(&mut self, i: usize) {
            let cq = self.cqs[i];
            let idx = P.ctx_base(1) + cq.cqn as u32;
            loop {
                let mut rec = self.cq_rec(i);
                let c = rec.consumer;
                let slot = c as u64 & ((1 << cq.log2) - 1);
                let a = cq.base + 32 * slot;
                let bytes: Option<Vec<u8>> = (0..32)
                    .map(|k| self.wr.mem.get(&(a + k)).copied())
                    .collect();
                let Some(b) = bytes else { return };
                let cqe = Cqe::decode(&b.try_into().unwrap());
                let phase = (c >> cq.log2) & 1 == 0;
                if (cqe.flags & cqe_flag::OWNER != 0) != phase {
                    return;
                }
                self.got[i].push(cqe);
                rec.consumer = c.wrapping_add(1);
                // the CQ doorbell: the low 16 bits of the consumer index
                let o = CqContext::field("consumer").unwrap().offset;
                self.ctx
                    .write(idx, &rec.encode(), 3 << o, crate::common::bus::CTX_SRC_DBU);
            }
        }
        fn step(&mut self) {
            let Tb {
                m, r, ctx, wr, src, ..
            } = self;
            ctx.drive(m, r);
            wr.drive(m, r);
            for s in src.iter_mut() {
                s.drive(m, r);
            }
            m.tick();
            ctx.observe(m);
            wr.observe(m, r);
            for s in src.iter_mut() {
                s.observe(m);
            }
            if m.bit("irq") {
                self.irqs += 1;
                assert!(
                    self.irqs <= self.wr.cmds.len() as u64,
                    "irq before its write"
                );
            }
            for i in 0..self.cqs.len() {
                if chance(&mut self.r, self.host_speed) {
                    self.consume(i);
                }
            }
        }
        fn idle(&self) -> bool {
            self.src.iter().all(|s| s.q.is_empty() && !s.v)
        }
        fn run(&mut self) {
            let mut n = 0;
            while !self.idle() {
                self.step();
                n += 1;
                assert!(n < 1_000_000, "hang");
            }
            for _ in 0..200 {
                self.step();
            }
            assert!(!self.wr.busy());
        }
    }

    fn rand_cqe(r: &mut ChaCha8Rng, id: u64) -> Cqe {
        Cqe {
            wr_id: id,
            byte_len: r.random(),
            imm_data: r.random(),
            qp_num: r.random_range(0..1 << 24),
            src_qp: r.random_range(0..1 << 24),
            opcode: r.random(),
            status: r.random(),
            vendor_err: 0,
            flags: r.random::<u8>() & !cqe_flag::OWNER,
            sq_index: r.random(),
            reserved: 0,
        }
    }

    /// The CQE the device must write for a completion on pass `pass`.
    fn with_owner(c: &Cqe, pass: u32) -> Cqe {
        let mut c = *c;
        if pass & 1 == 0 {
            c.flags |= cqe_flag::OWNER;
        }
        c
    }

    #[test]
    fn random_completions_three_inputs() {
        let cqs = vec![
            Cq {
                cqn: 0,
                base: 0x1000_0000,
                log2: 2,
                flags: 3,
            },
            Cq {
                cqn: 1,
                base: 0x2000_0040,
                log2: 3,
                flags: 1,
            },
            Cq {
                cqn: 7,
                base: 0x3000_0000,
                log2: 1,
                flags: 3,
            },
            Cq {
                cqn: 200,
                base: 0x4000_0020,
                log2: 5,
                flags: 1,
            },
            Cq {
                cqn: 9,
                base: 0x5000_0000,
                log2: 3,
                flags: 2,
            }, // not valid
        ];
        for (seed, stall, idle, speed) in
            [(1, 0.0, 0.0, 1.0), (2, 0.3, 0.3, 0.05), (3, 0.6, 0.6, 0.02)]
        {
            let mut t = Tb::new(seed, stall, idle, cqs.clone());
            t.host_speed = speed;
            let mut r = rng(seed + 100);
            let mut invalid = 0;
            for id in 0..600u64 {
                let k = r.random_range(0..6);
                let cqn = if k == 5 {
                    P.num_cqs as u16 + r.random_range(0..10)
                } else {
                    cqs[k].cqn
                };
                if k >= 4 {
                    invalid += 1;
                }
                let c = rand_cqe(&mut r, id);
                t.src[r.random_range(0..3)].q.push_back((cqn, c));
            }
            t.run();
            for i in 0..cqs.len() {
                t.consume(i);
            }
            let m = &t.m;
            assert_eq!(m.get("cnt_cq_invalid"), invalid, "seed {seed}");
            let written: usize = t.got.iter().map(|g| g.len()).sum();
            assert_eq!(m.get("cnt_cqe"), written as u64);
            let valid_sent = 600 - invalid;
            assert_eq!(
                m.get("cnt_cq_overflow"),
                valid_sent - written as u64,
                "seed {seed}"
            );
            if seed == 1 {
                assert_eq!(m.get("cnt_cq_overflow"), 0, "a fast host never overflows");
            } else {
                assert!(
                    m.get("cnt_cq_overflow") > 0,
                    "seed {seed}: overflow not exercised"
                );
            }
            assert_eq!(t.wr.cmds.len(), written, "one DMA write per CQE");
            let mut irq_want = 0;
            for (i, cq) in cqs.iter().enumerate() {
                let got = &t.got[i];
                // every CQE: a sent completion of this CQ with the pass's owner bit, and each
                // input's completions in their order
                let mut pos = [0usize; 3];
                for (n, cqe) in got.iter().enumerate() {
                    let (s, j) = (0..3)
                        .find_map(|s| {
                            t.src[s]
                                .sent
                                .iter()
                                .position(|(q, c)| c.wr_id == cqe.wr_id && *q == cq.cqn)
                                .map(|j| (s, j))
                        })
                        .unwrap_or_else(|| panic!("unknown CQE {cqe:?} in CQ {}", cq.cqn));
                    assert!(j >= pos[s], "CQ {}: input {s} out of order", cq.cqn);
                    pos[s] = j + 1;
                    let pass = (n as u32) >> cq.log2;
                    assert_eq!(
                        *cqe,
                        with_owner(&t.src[s].sent[j].1, pass),
                        "CQ {} #{n}",
                        cq.cqn
                    );
                }
                // the producer written back; the DMA addresses walk the ring
                let rec = t.cq_rec(i);
                assert_eq!(rec.producer, got.len() as u32, "CQ {} producer", cq.cqn);
                let addrs: Vec<u64> =
                    t.wr.cmds
                        .iter()
                        .filter(|(a, _)| *a >= cq.base && *a < cq.base + (32 << cq.log2))
                        .map(|&(a, l)| {
                            assert_eq!(l, 32);
                            a
                        })
                        .collect();
                let want: Vec<u64> = (0..got.len() as u64)
                    .map(|n| cq.base + 32 * (n & ((1 << cq.log2) - 1)))
                    .collect();
                assert_eq!(addrs, want, "CQ {} addresses", cq.cqn);
                if cq.flags & 3 == 3 {
                    irq_want += got.len() as u64;
                }
                if cq.flags & 1 == 0 {
                    assert!(got.is_empty());
                }
            }
            assert_eq!(t.irqs, irq_want, "seed {seed}: irq pulses");
            let pmask = {
                let f = CqContext::field("producer").unwrap();
                ((1u64 << (f.bits / 8)) - 1) << f.offset
            };
            for &(idx, be) in &t.ctx.writes {
                assert_eq!(be, pmask, "only the producer is written");
                assert!(cqs.iter().any(|c| P.ctx_base(1) + c.cqn as u32 == idx));
            }
        }
    }

    #[test]
    fn overflow_and_wrap_exact() {
        let cq = Cq {
            cqn: 3,
            base: 0x8000_0000,
            log2: 1,
            flags: 3,
        };
        let mut t = Tb::new(5, 0.3, 0.3, vec![cq]);
        t.host_speed = 0.0;
        let mut r = rng(6);
        let c: Vec<Cqe> = (0..8).map(|i| rand_cqe(&mut r, i)).collect();
        for x in &c[..5] {
            t.src[0].q.push_back((3, *x));
        }
        t.run();
        assert_eq!(t.m.get("cnt_cqe"), 2);
        assert_eq!(t.m.get("cnt_cq_overflow"), 3);
        assert_eq!(t.irqs, 2);
        t.consume(0);
        assert_eq!(t.got[0], vec![with_owner(&c[0], 0), with_owner(&c[1], 0)]);
        assert_eq!(t.cq_rec(0).consumer, 2);
        // second pass: owner bit clear, one more overflow
        for x in &c[5..8] {
            t.src[2].q.push_back((3, *x));
        }
        t.run();
        assert_eq!(t.m.get("cnt_cqe"), 4);
        assert_eq!(t.m.get("cnt_cq_overflow"), 4);
        assert_eq!(t.irqs, 4);
        t.consume(0);
        assert_eq!(t.got[0][2..], [with_owner(&c[5], 1), with_owner(&c[6], 1)]);
        assert_eq!(t.got[0][2].flags & cqe_flag::OWNER, 0);
        assert_eq!(t.cq_rec(0).producer, 4);
        assert_eq!(
            t.wr.cmds.iter().map(|x| x.0).collect::<Vec<_>>(),
            [cq.base, cq.base + 32, cq.base, cq.base + 32]
        );
    }

    /// `n` completions to CQ 4 (`log2` entries, `flags`) round robin over the three inputs,
    /// no stalls, a fast host, `done` `done_lat` cycles after a write's data: the bench after
    /// the run, and the cycles until every completion was taken.
    fn completion_stream(
        log2: u8,
        flags: u8,
        done_lat: std::ops::Range<u64>,
        n: u64,
        seed: u64,
    ) -> (Tb, u64) {
        let cq = Cq {
            cqn: 4,
            base: 0x9000_0000,
            log2,
            flags,
        };
        let mut t = Tb::new(8, 0.0, 0.0, vec![cq]);
        t.host_speed = 1.0;
        t.wr.done_lat = done_lat;
        let mut r = rng(seed);
        for i in 0..n {
            let c = rand_cqe(&mut r, i);
            t.src[(i % 3) as usize].q.push_back((4, c));
        }
        let t0 = t.m.cycle;
        while !t.idle() {
            t.step();
        }
        let dt = t.m.cycle - t0;
        t.run();
        assert_eq!(t.m.get("cnt_cqe"), n);
        (t, dt)
    }

    /// Cycles per completion with no stalls and a fast host (one CQ, back-to-back inputs).
    #[test]
    fn cycles_per_completion() {
        let (_, dt) = completion_stream(6, 1, 3..30, 300, 9);
        println!(
            "cqwriter: 300 completions taken in {dt} cycles ({:.1} per CQE)",
            dt as f64 / 300.0
        );
        // 2.5: Req (the kept record, Check's decisions), Issue (the command; the next
        // completion taken in its last cycle), and every other CQE a cycle more: the DMA model
        // takes a data beat only a cycle after its command, and this CQE's beat waits for the
        // one before it. 5.0 before (take, Req, Check, Issue until the beat too, and the cycle
        // the last write-back held Issue); 7 to 8 when every completion read its CQ record.
        assert!(dt <= 300 * 5 / 2 + 10, "{dt} cycles");
    }

    /// The same stream when every write's `done` comes 110 to 120 cycles after its data (the
    /// simulator's host memory: 100 cycles to the B response, plus the engine and the mux),
    /// into a CQ that asks for interrupts: the writer keeps enough writes in flight to stay
    /// at its own rate (2.5 cycles per CQE), and `irq` still pulses once per CQE, after its
    /// write. With 32 writes in flight (the irq bits in a 32-bit register until stop 38) this
    /// took 3.8 cycles per CQE, behind a 64-byte WRITE stream's 3.25.
    #[test]
    fn cycles_per_completion_behind_slow_write_responses() {
        let (t, dt) = completion_stream(9, 3, 110..121, 400, 10);
        assert_eq!(t.irqs, 400, "one irq pulse per CQE");
        println!(
            "cqwriter, slow write responses: 400 completions taken in {dt} cycles ({:.2} per CQE)",
            dt as f64 / 400.0
        );
        assert!(dt <= 400 * 5 / 2 + 10, "{dt} cycles");
    }
}
