//! Data-path block `rdresp`: the response generator (responder side of RDMA READ, and every
//! ACK/NAK the responder sends).
//!
//! Input: responder jobs (`job`, [`RspJobS`], from `rxresp`) in the order the responder
//! decided them. They go into a job queue ([`BramFifo`], block RAM) of `2^JOB_DEPTH_LOG2` =
//! 32768 entries ([`JOB_QUEUE_CAP`]): room for 32768 READs and atomics outstanding at once,
//! 16 on every QP of the standard build (which advertises `ATOMIC_RESOURCES` = 128 per QP as
//! `max_dest_rd_atomic`: 2048 x 128 jobs would take 2,624 BRAM36) and 2 on every QP of the
//! 16k-QP build (16384 x 16). So the responder is not held while long READs stream out, even
//! when the link stalls; a READ or atomic that finds the queue full (more than 32768
//! outstanding over all QPs at once) is dropped as lost (`drop_busy`) and its requester
//! retries it. Our own requester's clamp `MAX_RD_ATOMIC` is checked to be no larger than
//! `ATOMIC_RESOURCES`.
//! `job.ready` = `!full`, and `full` rises only in the cycle after a push, so the room the
//! responder saw at its decision is still there at its push. ACK/NAK jobs share the queue
//! (one stream keeps IBTA 9.5's response order); the bound covers the READ and atomic jobs
//! only, so a flood of ACK jobs (or of duplicate READs a peer retries while the first answers
//! still wait) behind a stalled link can still fill it (`job.ready` low).
//! Output: packet descriptors (`desc`, [`TxDescM`], to `txbuild`'s `rsp`
//! port), one per cycle while `desc.ready` is high, in job order:
//!
//! - ACK job (`read` = 0): one ACKNOWLEDGE (0x11) descriptor, PSN `psn`, AETH = `syndrome`
//!   << 24 | `msn` in the ImmDt slot (`has_imm` = 1: with no RETH, the AETH and the ImmDt both
//!   follow the BTH directly, so the header generator writes the same bytes), no payload.
//! - READ job (`read` = 1): n = max(1, ceil(`len` / mtu)) descriptors, mtu = 128 << `mtu`
//!   (enum 1..5; 0 counts as 1, 6 and 7 as 5): packet i has PSN `psn` + i (mod 2^24), opcode
//!   READ RESPONSE ONLY when n = 1, else FIRST / MIDDLE ... / LAST, payload
//!   min(mtu, `len` - i * mtu) bytes read by `txbuild` from host address `va` + i * mtu
//!   (`addr`; 0 bytes for a zero-length READ), BTH pad count to a multiple of 4, AETH (as
//!   above) on FIRST / LAST / ONLY, none on MIDDLE. No RETH, AckReq 0, SE 0, never inline.
//! - Atomic job (`atomic` = 1, `read` = 0): one ATOMIC ACKNOWLEDGE (0x12) descriptor, PSN
//!   `psn`, AETH in the ImmDt slot as for an ACK, and the AtomicAckETH (`orig`, the original
//!   remote value) as an inline 8-byte payload: `inl` = 1, `paylen` = 8, `pad` = 0, `idata`
//!   bytes 0..7 = `orig` big-endian (byte 0 = bits 7:0 = `orig[63:56]`), bytes 8..15 zero,
//!   `addr` 0. The frame is Eth/IPv4/UDP/BTH/AETH/AtomicAckETH/ICRC (IBTA 9.5.3).
//!
//! The segmentation keeps a running PSN, address and remaining-byte count (no multiplies);
//! the descriptor leaves from an output register that reloads in the cycle it is taken, so
//! the packets of one READ and consecutive jobs stream back to back. A job's first descriptor
//! is on `desc` 2 cycles after the job was taken when it found the queue empty (it bypasses
//! the queue's RAM); behind a backlog the RAM read is hidden by the queue's prefetch stage
//! (still one descriptor per cycle).
//! Counter: `cnt_rd_pkts` (READ RESPONSE descriptors taken by `desc`; ACKNOWLEDGE and ATOMIC
//! ACKNOWLEDGE descriptors are not counted here: `txbuild` counts both in `cnt_tx_acks`).

use crate::common::bramfifo::BramFifo;
use crate::common::bus::RspJobS;
use crate::tx::txreq::TxDescM;
use rnic_abi::params::{self, DEFAULT};
use rnic_abi::queue::{ATOMIC_RESOURCES, MAX_RD_ATOMIC};
use rnic_abi::roce::opcode;
use rust_hdl::prelude::*;

/// Bits of a job FIFO entry (the [`RspJobS`] data fields, packed LSB first in declaration
/// order: dmac 0, smac 48, sip 96, dip 128, sport 160, tos 176, dqpn 184, psn 208,
/// syndrome 232, msn 240, read 264, va 265, len 329, mtu 361, atomic 364). An atomic job
/// has no va: its `orig` is stored in the va slot (bits 265..329).
pub const JOB_BITS: usize = 365;
/// READ and atomic jobs a compliant peer can have outstanding at once: every QP, each with
/// up to `ATOMIC_RESOURCES` (our `max_dest_rd_atomic`) READs / atomics in flight.
pub const MAX_OUTSTANDING_RD_ATOMIC: u32 = DEFAULT.num_qps * ATOMIC_RESOURCES;
/// Most entries the job queue gets (365 bits each: 32,768 fill 328 BRAM36). The standard
/// build's 2048 QPs x 128 and the 16k-QP build's 16384 x 16 (262,144 each) would take 2,624
/// BRAM36, more than a U250 has, so both keep 32,768 (16 and 2 per QP on average): beyond
/// that a READ or atomic request finds the queue full and is dropped as lost (`drop_busy`),
/// and its requester retries it.
pub const JOB_QUEUE_CAP: u32 = 1 << 15;
/// Entries of the job queue: [`MAX_OUTSTANDING_RD_ATOMIC`], at most [`JOB_QUEUE_CAP`].
pub const JOB_SLOTS: u32 = if MAX_OUTSTANDING_RD_ATOMIC < JOB_QUEUE_CAP {
    MAX_OUTSTANDING_RD_ATOMIC
} else {
    JOB_QUEUE_CAP
};
/// Job queue depth (log2): the smallest power of two that holds [`JOB_SLOTS`] (15: 32768
/// entries in both builds).
pub const JOB_DEPTH_LOG2: usize = (32 - (JOB_SLOTS - 1).leading_zeros()) as usize;
const _: () = assert!(
    1 << JOB_DEPTH_LOG2 >= JOB_SLOTS && 1 << (JOB_DEPTH_LOG2 - 1) < JOB_SLOTS,
    "the job queue holds JOB_SLOTS jobs"
);
const _: () = assert!(
    params::DEFAULT.num_qps != params::STANDARD.num_qps
        || JOB_SLOTS >= 16 * params::STANDARD.num_qps,
    "the standard build's job queue holds 16 READs/atomics on every QP at once"
);
const _: () = assert!(
    MAX_RD_ATOMIC <= ATOMIC_RESOURCES,
    "our requester never has more outstanding than our responder advertises"
);

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

/// The block: see the module documentation.
#[derive(LogicBlock)]
pub struct RdResp {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub job: RspJobS,
    pub desc: TxDescM,
    pub cnt_rd_pkts: Signal<Out, Bits<32>>,
    jfifo: BramFifo<JOB_BITS, JOB_DEPTH_LOG2>,
    // segmentation state of the head job (READ)
    busy: DFF<Bit>,
    psn_r: DFF<Bits<24>>,
    addr_r: DFF<Bits<64>>,
    rem_r: DFF<Bits<32>>,
    // output register
    o_v: DFF<Bit>,
    o_rd: DFF<Bit>,
    o_dmac: DFF<Bits<48>>,
    o_smac: DFF<Bits<48>>,
    o_sip: DFF<Bits<32>>,
    o_dip: DFF<Bits<32>>,
    o_sport: DFF<Bits<16>>,
    o_tos: DFF<Bits<8>>,
    o_opcode: DFF<Bits<8>>,
    o_pad: DFF<Bits<2>>,
    o_dqpn: DFF<Bits<24>>,
    o_psn: DFF<Bits<24>>,
    o_has_imm: DFF<Bit>,
    o_imm: DFF<Bits<32>>,
    o_paylen: DFF<Bits<13>>,
    o_addr: DFF<Bits<64>>,
    o_inl: DFF<Bit>,
    o_idata: DFF<Bits<64>>,
    n_rd: DFF<Bits<32>>,
    c_ack: Constant<Bits<8>>,
    c_atom: Constant<Bits<8>>,
    c_first: Constant<Bits<8>>,
    c_middle: Constant<Bits<8>>,
    c_last: Constant<Bits<8>>,
    c_only: Constant<Bits<8>>,
    zero2: Constant<Bits<2>>,
    // combinational
    j_din: Signal<Local, Bits<JOB_BITS>>,
    j_din1: Signal<Local, Bits<JOB_BITS>>,
    j_va: Signal<Local, Bits<64>>,
    h_v: Signal<Local, Bit>,
    h_dmac: Signal<Local, Bits<48>>,
    h_smac: Signal<Local, Bits<48>>,
    h_sip: Signal<Local, Bits<32>>,
    h_dip: Signal<Local, Bits<32>>,
    h_sport: Signal<Local, Bits<16>>,
    h_tos: Signal<Local, Bits<8>>,
    h_dqpn: Signal<Local, Bits<24>>,
    h_psn: Signal<Local, Bits<24>>,
    h_syn: Signal<Local, Bits<8>>,
    h_msn: Signal<Local, Bits<24>>,
    h_read: Signal<Local, Bit>,
    h_atom: Signal<Local, Bit>,
    h_swap: Signal<Local, Bits<64>>,
    h_va: Signal<Local, Bits<64>>,
    h_len: Signal<Local, Bits<32>>,
    h_mtu: Signal<Local, Bits<3>>,
    mtu_b: Signal<Local, Bits<13>>,
    c_psn: Signal<Local, Bits<24>>,
    c_addr: Signal<Local, Bits<64>>,
    c_rem: Signal<Local, Bits<32>>,
    c_lastp: Signal<Local, Bit>,
    c_plen: Signal<Local, Bits<13>>,
    ld: Signal<Local, Bit>,
    adv: Signal<Local, Bit>,
}

impl Default for RdResp {
    fn default() -> Self {
        RdResp {
            clock: Default::default(),
            rst: Default::default(),
            job: Default::default(),
            desc: Default::default(),
            cnt_rd_pkts: Default::default(),
            jfifo: Default::default(),
            busy: Default::default(),
            psn_r: Default::default(),
            addr_r: Default::default(),
            rem_r: Default::default(),
            o_v: Default::default(),
            o_rd: Default::default(),
            o_dmac: Default::default(),
            o_smac: Default::default(),
            o_sip: Default::default(),
            o_dip: Default::default(),
            o_sport: Default::default(),
            o_tos: Default::default(),
            o_opcode: Default::default(),
            o_pad: Default::default(),
            o_dqpn: Default::default(),
            o_psn: Default::default(),
            o_has_imm: Default::default(),
            o_imm: Default::default(),
            o_paylen: Default::default(),
            o_addr: Default::default(),
            o_inl: Default::default(),
            o_idata: Default::default(),
            n_rd: Default::default(),
            c_ack: k(opcode::ACKNOWLEDGE as u64),
            c_atom: k(opcode::ATOMIC_ACKNOWLEDGE as u64),
            c_first: k(opcode::READ_RESPONSE_FIRST as u64),
            c_middle: k(opcode::READ_RESPONSE_MIDDLE as u64),
            c_last: k(opcode::READ_RESPONSE_LAST as u64),
            c_only: k(opcode::READ_RESPONSE_ONLY as u64),
            zero2: k(0),
            j_din: Default::default(),
            j_din1: Default::default(),
            j_va: Default::default(),
            h_v: Default::default(),
            h_dmac: Default::default(),
            h_smac: Default::default(),
            h_sip: Default::default(),
            h_dip: Default::default(),
            h_sport: Default::default(),
            h_tos: Default::default(),
            h_dqpn: Default::default(),
            h_psn: Default::default(),
            h_syn: Default::default(),
            h_msn: Default::default(),
            h_read: Default::default(),
            h_atom: Default::default(),
            h_swap: Default::default(),
            h_va: Default::default(),
            h_len: Default::default(),
            h_mtu: Default::default(),
            mtu_b: Default::default(),
            c_psn: Default::default(),
            c_addr: Default::default(),
            c_rem: Default::default(),
            c_lastp: Default::default(),
            c_plen: Default::default(),
            ld: Default::default(),
            adv: Default::default(),
        }
    }
}

impl Logic for RdResp {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, psn_r, addr_r, rem_r, n_rd);
        dff_setup!(
            self, clock, o_v, o_rd, o_dmac, o_smac, o_sip, o_dip, o_sport, o_tos, o_opcode, o_pad,
            o_dqpn, o_psn, o_has_imm, o_imm, o_paylen, o_addr, o_inl, o_idata
        );
        self.jfifo.clock.next = self.clock.val();
        self.jfifo.rst.next = self.rst.val();
        self.cnt_rd_pkts.next = self.n_rd.q.val();

        // ---------------- job intake
        self.job.ready.next = !self.jfifo.full.val();
        self.jfifo.wr.next = self.job.valid.val();
        // an atomic has no va: its original value takes the va slot
        self.j_va.next = self.job.va.val();
        if self.job.atomic.val() && !self.job.read.val() {
            self.j_va.next = self.job.orig.val();
        }
        self.j_din.next = bit_cast::<JOB_BITS, 48>(self.job.dmac.val())
            | (bit_cast::<JOB_BITS, 48>(self.job.smac.val()) << 48)
            | (bit_cast::<JOB_BITS, 32>(self.job.sip.val()) << 96)
            | (bit_cast::<JOB_BITS, 32>(self.job.dip.val()) << 128)
            | (bit_cast::<JOB_BITS, 16>(self.job.sport.val()) << 160)
            | (bit_cast::<JOB_BITS, 8>(self.job.tos.val()) << 176)
            | (bit_cast::<JOB_BITS, 24>(self.job.dqpn.val()) << 184)
            | (bit_cast::<JOB_BITS, 24>(self.job.psn.val()) << 208)
            | (bit_cast::<JOB_BITS, 8>(self.job.syndrome.val()) << 232)
            | (bit_cast::<JOB_BITS, 24>(self.job.msn.val()) << 240)
            | (bit_cast::<JOB_BITS, 64>(self.j_va.val()) << 265)
            | (bit_cast::<JOB_BITS, 32>(self.job.len.val()) << 329)
            | (bit_cast::<JOB_BITS, 3>(self.job.mtu.val()) << 361);
        self.j_din1.next = self.j_din.val().replace_bit(264, self.job.read.val());
        self.jfifo.din.next = self
            .j_din1
            .val()
            .replace_bit(364, self.job.atomic.val() && !self.job.read.val());

        // ---------------- head job
        self.h_v.next = !self.jfifo.empty.val();
        self.h_dmac.next = self.jfifo.dout.val().get_bits::<48>(0);
        self.h_smac.next = self.jfifo.dout.val().get_bits::<48>(48);
        self.h_sip.next = self.jfifo.dout.val().get_bits::<32>(96);
        self.h_dip.next = self.jfifo.dout.val().get_bits::<32>(128);
        self.h_sport.next = self.jfifo.dout.val().get_bits::<16>(160);
        self.h_tos.next = self.jfifo.dout.val().get_bits::<8>(176);
        self.h_dqpn.next = self.jfifo.dout.val().get_bits::<24>(184);
        self.h_psn.next = self.jfifo.dout.val().get_bits::<24>(208);
        self.h_syn.next = self.jfifo.dout.val().get_bits::<8>(232);
        self.h_msn.next = self.jfifo.dout.val().get_bits::<24>(240);
        self.h_read.next = self.jfifo.dout.val().get_bit(264);
        self.h_va.next = self.jfifo.dout.val().get_bits::<64>(265);
        self.h_len.next = self.jfifo.dout.val().get_bits::<32>(329);
        self.h_mtu.next = self.jfifo.dout.val().get_bits::<3>(361);
        self.h_atom.next = self.jfifo.dout.val().get_bit(364);
        // the AtomicAckETH (orig, from the va slot) big-endian: inline byte 0 = orig[63:56]
        self.h_swap.next = (bit_cast::<64, 8>(self.h_va.val().get_bits::<8>(56)))
            | (bit_cast::<64, 8>(self.h_va.val().get_bits::<8>(48)) << 8)
            | (bit_cast::<64, 8>(self.h_va.val().get_bits::<8>(40)) << 16)
            | (bit_cast::<64, 8>(self.h_va.val().get_bits::<8>(32)) << 24)
            | (bit_cast::<64, 8>(self.h_va.val().get_bits::<8>(24)) << 32)
            | (bit_cast::<64, 8>(self.h_va.val().get_bits::<8>(16)) << 40)
            | (bit_cast::<64, 8>(self.h_va.val().get_bits::<8>(8)) << 48)
            | (bit_cast::<64, 8>(self.h_va.val().get_bits::<8>(0)) << 56);
        self.mtu_b.next = 4096.into();
        if self.h_mtu.val() <= 1 {
            self.mtu_b.next = 256.into();
        } else if self.h_mtu.val() == 2 {
            self.mtu_b.next = 512.into();
        } else if self.h_mtu.val() == 3 {
            self.mtu_b.next = 1024.into();
        } else if self.h_mtu.val() == 4 {
            self.mtu_b.next = 2048.into();
        }
        // the packet to emit next: the job's first, or the running state's
        self.c_psn.next = self.h_psn.val();
        self.c_addr.next = self.h_va.val();
        self.c_rem.next = self.h_len.val();
        if self.busy.q.val() {
            self.c_psn.next = self.psn_r.q.val();
            self.c_addr.next = self.addr_r.q.val();
            self.c_rem.next = self.rem_r.q.val();
        }
        self.c_lastp.next = self.c_rem.val() <= bit_cast::<32, 13>(self.mtu_b.val());
        self.c_plen.next = self.mtu_b.val();
        if self.c_lastp.val() {
            self.c_plen.next = self.c_rem.val().get_bits::<13>(0);
        }

        // ---------------- output register
        self.desc.valid.next = self.o_v.q.val();
        self.desc.dmac.next = self.o_dmac.q.val();
        self.desc.smac.next = self.o_smac.q.val();
        self.desc.sip.next = self.o_sip.q.val();
        self.desc.dip.next = self.o_dip.q.val();
        self.desc.sport.next = self.o_sport.q.val();
        self.desc.tos.next = self.o_tos.q.val();
        self.desc.opcode.next = self.o_opcode.q.val();
        self.desc.se.next = false;
        self.desc.pad.next = self.o_pad.q.val();
        self.desc.dqpn.next = self.o_dqpn.q.val();
        self.desc.ackreq.next = false;
        self.desc.psn.next = self.o_psn.q.val();
        self.desc.has_reth.next = false;
        self.desc.va.next = 0.into();
        self.desc.rkey.next = 0.into();
        self.desc.dmalen.next = 0.into();
        self.desc.has_imm.next = self.o_has_imm.q.val();
        self.desc.imm.next = self.o_imm.q.val();
        self.desc.paylen.next = self.o_paylen.q.val();
        self.desc.addr.next = self.o_addr.q.val();
        self.desc.inl.next = self.o_inl.q.val();
        self.desc.idata.next = bit_cast::<128, 64>(self.o_idata.q.val());
        if self.o_v.q.val() && self.desc.ready.val() && self.o_rd.q.val() {
            self.n_rd.d.next = self.n_rd.q.val() + 1;
        }

        self.ld.next = !self.o_v.q.val() || self.desc.ready.val();
        self.adv.next = self.ld.val() && self.h_v.val();
        self.jfifo.rd.next = self.adv.val() && (!self.h_read.val() || self.c_lastp.val());
        if self.ld.val() {
            self.o_v.d.next = self.h_v.val();
        }
        if self.adv.val() {
            self.o_rd.d.next = self.h_read.val();
            self.o_dmac.d.next = self.h_dmac.val();
            self.o_smac.d.next = self.h_smac.val();
            self.o_sip.d.next = self.h_sip.val();
            self.o_dip.d.next = self.h_dip.val();
            self.o_sport.d.next = self.h_sport.val();
            self.o_tos.d.next = self.h_tos.val();
            self.o_dqpn.d.next = self.h_dqpn.val();
            self.o_psn.d.next = self.c_psn.val();
            self.o_imm.d.next =
                (bit_cast::<32, 8>(self.h_syn.val()) << 24) | bit_cast::<32, 24>(self.h_msn.val());
            if self.h_read.val() {
                self.o_opcode.d.next = self.c_middle.val();
                if (!self.busy.q.val()) && self.c_lastp.val() {
                    self.o_opcode.d.next = self.c_only.val();
                } else if !self.busy.q.val() {
                    self.o_opcode.d.next = self.c_first.val();
                } else if self.c_lastp.val() {
                    self.o_opcode.d.next = self.c_last.val();
                }
                self.o_has_imm.d.next = (!self.busy.q.val()) || self.c_lastp.val();
                if self.busy.q.val() && !self.c_lastp.val() {
                    self.o_imm.d.next = 0.into();
                }
                self.o_paylen.d.next = self.c_plen.val();
                self.o_pad.d.next = self.zero2.val() - self.c_plen.val().get_bits::<2>(0);
                self.o_addr.d.next = self.c_addr.val();
                self.o_inl.d.next = false;
                self.o_idata.d.next = 0.into();
                // the running state for the next packet of this READ
                self.busy.d.next = !self.c_lastp.val();
                self.psn_r.d.next = self.c_psn.val() + 1;
                self.addr_r.d.next = self.c_addr.val() + bit_cast::<64, 13>(self.mtu_b.val());
                self.rem_r.d.next = self.c_rem.val() - bit_cast::<32, 13>(self.mtu_b.val());
            } else if self.h_atom.val() {
                // ATOMIC ACKNOWLEDGE: AETH, then the AtomicAckETH as an inline payload
                self.o_opcode.d.next = self.c_atom.val();
                self.o_has_imm.d.next = true;
                self.o_paylen.d.next = 8.into();
                self.o_pad.d.next = 0.into();
                self.o_addr.d.next = 0.into();
                self.o_inl.d.next = true;
                self.o_idata.d.next = self.h_swap.val();
                self.busy.d.next = false;
            } else {
                self.o_opcode.d.next = self.c_ack.val();
                self.o_has_imm.d.next = true;
                self.o_paylen.d.next = 0.into();
                self.o_pad.d.next = 0.into();
                self.o_addr.d.next = 0.into();
                self.o_inl.d.next = false;
                self.o_idata.d.next = 0.into();
                self.busy.d.next = false;
            }
        }
        if self.rst.val() {
            self.busy.d.next = false;
            self.o_v.d.next = false;
            self.n_rd.d.next = 0.into();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::common::testutil::*;
    use crate::common::vlt::DynModel;
    use rand::Rng;
    use rand_chacha::ChaCha8Rng;
    use std::collections::VecDeque;

    /// A responder job as the tests drive it ([`RspJobS`]'s data fields).
    #[derive(Clone, Debug, PartialEq, Eq, Default)]
    pub struct Job {
        pub dmac: u64,
        pub smac: u64,
        pub sip: u32,
        pub dip: u32,
        pub sport: u16,
        pub tos: u8,
        pub dqpn: u32,
        pub psn: u32,
        pub syndrome: u8,
        pub msn: u32,
        pub read: bool,
        pub va: u64,
        pub len: u32,
        pub mtu: u8,
        pub atomic: bool,
        pub orig: u64,
    }

    /// A packet descriptor, every [`TxDescM`] data field.
    #[derive(Clone, Debug, PartialEq, Eq, Default)]
    pub struct Desc {
        pub dmac: u64,
        pub smac: u64,
        pub sip: u32,
        pub dip: u32,
        pub sport: u16,
        pub tos: u8,
        pub opcode: u8,
        pub se: bool,
        pub pad: u8,
        pub dqpn: u32,
        pub ackreq: bool,
        pub psn: u32,
        pub has_reth: bool,
        pub va: u64,
        pub rkey: u32,
        pub dmalen: u32,
        pub has_imm: bool,
        pub imm: u32,
        pub paylen: u32,
        pub addr: u64,
        pub inl: bool,
        pub idata: Vec<u8>,
    }

    impl Job {
        /// Drive the job's data fields on port `p` (`p_dmac`, ...).
        pub fn drive(&self, m: &mut DynModel, p: &str) {
            let mut s = |n: &str, v: u64| m.set(&format!("{p}_{n}"), v);
            s("dmac", self.dmac);
            s("smac", self.smac);
            s("sip", self.sip as u64);
            s("dip", self.dip as u64);
            s("sport", self.sport as u64);
            s("tos", self.tos as u64);
            s("dqpn", self.dqpn as u64);
            s("psn", self.psn as u64);
            s("syndrome", self.syndrome as u64);
            s("msn", self.msn as u64);
            s("read", self.read as u64);
            s("va", self.va);
            s("len", self.len as u64);
            s("mtu", self.mtu as u64);
            s("atomic", self.atomic as u64);
            s("orig", self.orig);
        }
    }

    impl Desc {
        /// Drive the descriptor's data fields on port `p`.
        pub fn drive(&self, m: &mut DynModel, p: &str) {
            let mut s = |n: &str, v: u64| m.set(&format!("{p}_{n}"), v);
            s("dmac", self.dmac);
            s("smac", self.smac);
            s("sip", self.sip as u64);
            s("dip", self.dip as u64);
            s("sport", self.sport as u64);
            s("tos", self.tos as u64);
            s("opcode", self.opcode as u64);
            s("se", self.se as u64);
            s("pad", self.pad as u64);
            s("dqpn", self.dqpn as u64);
            s("ackreq", self.ackreq as u64);
            s("psn", self.psn as u64);
            s("has_reth", self.has_reth as u64);
            s("va", self.va);
            s("rkey", self.rkey as u64);
            s("dmalen", self.dmalen as u64);
            s("has_imm", self.has_imm as u64);
            s("imm", self.imm as u64);
            s("paylen", self.paylen as u64);
            s("addr", self.addr);
            s("inl", self.inl as u64);
            m.set_bytes(&format!("{p}_idata"), &self.idata);
        }
        /// The descriptor on output port `p`.
        pub fn read(m: &DynModel, p: &str) -> Desc {
            let g = |n: &str| m.get(&format!("{p}_{n}"));
            Desc {
                dmac: g("dmac"),
                smac: g("smac"),
                sip: g("sip") as u32,
                dip: g("dip") as u32,
                sport: g("sport") as u16,
                tos: g("tos") as u8,
                opcode: g("opcode") as u8,
                se: g("se") == 1,
                pad: g("pad") as u8,
                dqpn: g("dqpn") as u32,
                ackreq: g("ackreq") == 1,
                psn: g("psn") as u32,
                has_reth: g("has_reth") == 1,
                va: g("va"),
                rkey: g("rkey") as u32,
                dmalen: g("dmalen") as u32,
                has_imm: g("has_imm") == 1,
                imm: g("imm") as u32,
                paylen: g("paylen") as u32,
                addr: g("addr"),
                inl: g("inl") == 1,
                idata: m.get_bytes(&format!("{p}_idata")),
            }
        }
    }

    /// Path MTU bytes of the enum (0 as 1, 6 and 7 as 5).
    pub fn mtu_bytes(mtu: u8) -> u32 {
        128 << mtu.clamp(1, 5)
    }

    /// The model: the descriptors of one job, written from the block's contract
    /// (IBTA 9.4.3 READ RESPONSE segmentation, 9.7.5 AETH), with a multiply per packet.
    pub fn expand(j: &Job) -> Vec<Desc> {
        let base = Desc {
            dmac: j.dmac,
            smac: j.smac,
            sip: j.sip,
            dip: j.dip,
            sport: j.sport,
            tos: j.tos,
            dqpn: j.dqpn,
            idata: vec![0; 16],
            ..Default::default()
        };
        let aeth = (j.syndrome as u32) << 24 | j.msn;
        if !j.read && j.atomic {
            // ATOMIC ACKNOWLEDGE (IBTA 9.5.3): AETH, AtomicAckETH = orig big-endian, inline
            let mut idata = j.orig.to_be_bytes().to_vec();
            idata.resize(16, 0);
            return vec![Desc {
                opcode: opcode::ATOMIC_ACKNOWLEDGE,
                psn: j.psn,
                has_imm: true,
                imm: aeth,
                paylen: 8,
                inl: true,
                idata,
                ..base
            }];
        }
        if !j.read {
            return vec![Desc {
                opcode: opcode::ACKNOWLEDGE,
                psn: j.psn,
                has_imm: true,
                imm: aeth,
                ..base
            }];
        }
        let mtu = mtu_bytes(j.mtu) as u64;
        let len = j.len as u64;
        let n = len.div_ceil(mtu).max(1);
        (0..n)
            .map(|i| {
                let op = match (n, i) {
                    (1, _) => opcode::READ_RESPONSE_ONLY,
                    (_, 0) => opcode::READ_RESPONSE_FIRST,
                    _ if i == n - 1 => opcode::READ_RESPONSE_LAST,
                    _ => opcode::READ_RESPONSE_MIDDLE,
                };
                let paylen = mtu.min(len - i * mtu) as u32;
                let aeth_here = op != opcode::READ_RESPONSE_MIDDLE;
                Desc {
                    opcode: op,
                    psn: (j.psn + i as u32) & 0xFF_FFFF,
                    pad: ((4 - paylen % 4) % 4) as u8,
                    has_imm: aeth_here,
                    imm: if aeth_here { aeth } else { 0 },
                    paylen,
                    addr: j.va.wrapping_add(i * mtu),
                    ..base.clone()
                }
            })
            .collect()
    }

    /// A random job; READ lengths at the segmentation edges, PSNs near the 2^24 wrap,
    /// addresses near 4 GiB boundaries (and the 2^64 wrap).
    pub fn rand_job(r: &mut ChaCha8Rng, p_read: f64, max_len: u32) -> Job {
        let mtu: u8 = if r.random_bool(0.05) {
            [0, 6, 7][r.random_range(0..3)]
        } else {
            r.random_range(1..=5)
        };
        let m = mtu_bytes(mtu);
        let len = match r.random_range(0..12) {
            0 => 0,
            1 => 1,
            2 => 3,
            3 => 4,
            4 => 63,
            5 => 64,
            6 => m - 1,
            7 => m,
            8 => m + 1,
            9 => m * r.random_range(2..20),
            _ => r.random_range(0..=max_len),
        };
        let psn = if r.random_bool(0.5) {
            0xFF_FFFF - r.random_range(0..40)
        } else {
            r.random_range(0..1 << 24)
        };
        let va = match r.random_range(0..4) {
            0 => (r.random::<u64>() << 32) | (0xFFFF_0000 + r.random_range(0..0x1_0000)),
            1 => u64::MAX - r.random_range(0..70_000),
            _ => r.random(),
        };
        Job {
            dmac: r.random_range(0..1 << 48),
            smac: r.random_range(0..1 << 48),
            sip: r.random(),
            dip: r.random(),
            sport: r.random(),
            tos: r.random(),
            dqpn: r.random_range(0..1 << 24),
            psn,
            syndrome: [0x1F, 0x60, 0x61, 0x62, 0x2E, 0x00][r.random_range(0..6)],
            msn: r.random_range(0..1 << 24),
            read: r.random_bool(p_read),
            va,
            len,
            mtu,
            atomic: false,
            orig: 0,
        }
    }

    /// [`rand_job`], then with probability `p_atomic` a non-READ job becomes an atomic's
    /// answer (random `orig`; `va`, `len` and `mtu` stay random: the block must ignore them).
    pub fn rand_job_atomic(r: &mut ChaCha8Rng, p_read: f64, p_atomic: f64, max_len: u32) -> Job {
        let mut j = rand_job(r, p_read, max_len);
        if !j.read && r.random_bool(p_atomic) {
            j.atomic = true;
            j.orig = match r.random_range(0..4) {
                0 => 0,
                1 => u64::MAX,
                2 => 0x0102_0304_0506_0708,
                _ => r.random(),
            };
        } else if r.random_bool(0.3) {
            // a READ or ACK job with `atomic` = 1 (READ: atomic ignored) or junk orig
            j.orig = r.random();
            j.atomic = j.read;
        }
        j
    }

    struct Out {
        descs: Vec<Desc>,
        /// cycle of every descriptor taken
        at: Vec<u64>,
        /// cycles `job_ready` was low with a job offered
        job_stalls: u64,
    }

    /// Drive `jobs` with idle probability `idle` and `desc.ready` low with probability
    /// `bp(cycle)`; checks the valid/ready rules on `desc` and the counter.
    fn run(
        m: &mut DynModel,
        jobs: &[Job],
        idle: f64,
        bp: &dyn Fn(u64) -> f64,
        r: &mut ChaCha8Rng,
    ) -> Out {
        let want: Vec<Desc> = jobs.iter().flat_map(expand).collect();
        let n_rd0 = m.get("cnt_rd_pkts");
        let mut q: VecDeque<Job> = jobs.iter().cloned().collect();
        let mut out = Out {
            descs: vec![],
            at: vec![],
            job_stalls: 0,
        };
        let mut held: Option<Desc> = None;
        let t0 = m.cycle;
        while out.descs.len() < want.len() {
            let now = m.cycle - t0;
            let jv = !q.is_empty() && !chance(r, idle);
            m.set("job_valid", jv as u64);
            if let Some(j) = q.front() {
                j.drive(m, "job");
            }
            let ready = !chance(r, bp(now));
            m.set("desc_ready", ready as u64);
            m.tick();
            if jv && m.bit("job_ready") {
                q.pop_front();
            } else if jv {
                out.job_stalls += 1;
            }
            let v = m.bit("desc_valid");
            if let Some(h) = held.take() {
                assert!(v, "desc_valid dropped without ready at cycle {now}");
                assert_eq!(Desc::read(m, "desc"), h, "descriptor changed while stalled");
            }
            if v && !ready {
                held = Some(Desc::read(m, "desc"));
            }
            if v && ready {
                let d = Desc::read(m, "desc");
                let i = out.descs.len();
                assert!(i < want.len(), "extra descriptor {d:?}");
                assert_eq!(d, want[i], "descriptor {i}");
                out.descs.push(d);
                out.at.push(now);
            }
            assert!(
                now < 5_000_000,
                "timeout: {} of {}",
                out.descs.len(),
                want.len()
            );
        }
        // nothing more
        m.set("job_valid", 0);
        m.set("desc_ready", 1);
        for _ in 0..20 {
            m.tick();
            assert!(!m.bit("desc_valid"), "descriptor after the last");
        }
        let rd = want
            .iter()
            .filter(|d| d.opcode != opcode::ACKNOWLEDGE && d.opcode != opcode::ATOMIC_ACKNOWLEDGE)
            .count() as u64;
        assert_eq!(m.get("cnt_rd_pkts") - n_rd0, rd, "cnt_rd_pkts");
        out
    }

    /// Random ACK and READ jobs with random idle and backpressure (phases from none to
    /// heavy), every descriptor field against the model.
    #[test]
    fn descriptors_match_the_model() {
        let mut m = model(RdResp::default(), "rdresp");
        let mut r = rng(11);
        reset(&mut m);
        let jobs: Vec<Job> = (0..600).map(|_| rand_job(&mut r, 0.6, 70_000)).collect();
        // every MTU and length class shows up
        for mtu in 1..=5 {
            assert!(
                jobs.iter()
                    .any(|j| j.read && j.mtu == mtu && j.len > mtu_bytes(mtu))
            );
        }
        let bp = |t: u64| [0.0, 0.3, 0.7, 0.1, 0.95][(t / 3000 % 5) as usize];
        let o = run(&mut m, &jobs, 0.3, &bp, &mut r);
        let ops = |op: u8| o.descs.iter().filter(|d| d.opcode == op).count();
        for op in 0x0D..=0x11 {
            assert!(ops(op) > 20, "opcode {op:#x}: {}", ops(op));
        }
        // 600 jobs never fill the job queue, whatever the backpressure
        assert_eq!(o.job_stalls, 0, "job_ready low");
        // after reset: counter cleared, nothing pending
        let jobs: Vec<Job> = (0..50).map(|_| rand_job(&mut r, 0.5, 5000)).collect();
        let o2 = run(&mut m, &jobs, 0.0, &|_| 0.5, &mut r);
        assert!(!o2.descs.is_empty());
        reset(&mut m);
        assert_eq!(m.get("cnt_rd_pkts"), 0);
        let jobs: Vec<Job> = (0..50).map(|_| rand_job(&mut r, 0.5, 5000)).collect();
        run(&mut m, &jobs, 0.5, &|_| 0.2, &mut r);
    }

    /// Without backpressure the packets of one READ and consecutive jobs leave one per
    /// cycle: a 64 KiB READ at MTU 4096 (16 packets), one at MTU 1024 (64), then ACKs and
    /// short READs, all back to back after the first.
    #[test]
    fn streams_back_to_back() {
        let mut m = model(RdResp::default(), "rdresp");
        let mut r = rng(12);
        reset(&mut m);
        let mut jobs = vec![];
        for (len, mtu) in [(65536, 5), (65536, 3), (4096, 5), (4097, 5)] {
            let mut j = rand_job(&mut r, 1.0, 0);
            j.len = len;
            j.mtu = mtu;
            jobs.push(j);
        }
        for i in 0..20 {
            let mut j = rand_job(&mut r, (i % 2) as f64, 0);
            j.len = 1;
            jobs.push(j);
        }
        let o = run(&mut m, &jobs, 0.0, &|_| 0.0, &mut r);
        let n = o.at.len() as u64;
        assert_eq!(n, 16 + 64 + 1 + 2 + 20);
        assert_eq!(o.at[0], 2, "first descriptor 2 cycles after the job");
        assert_eq!(o.at[n as usize - 1] - o.at[0] + 1, n, "bubbles: {:?}", o.at);
    }

    /// Atomic jobs interleaved with ACK and READ jobs (and READ jobs with `atomic` set,
    /// which stay READs), random idle and backpressure: one ATOMIC ACKNOWLEDGE descriptor
    /// per atomic job, in job order, every field against the model (AETH in the ImmDt slot,
    /// AtomicAckETH = orig big-endian as the 8-byte inline payload); not in `cnt_rd_pkts`;
    /// back to back without backpressure.
    #[test]
    fn atomic_acks_in_order() {
        let mut m = model(RdResp::default(), "rdresp");
        let mut r = rng(13);
        reset(&mut m);
        let jobs: Vec<Job> = (0..500)
            .map(|_| rand_job_atomic(&mut r, 0.4, 0.6, 20_000))
            .collect();
        assert!(jobs.iter().any(|j| j.read && j.atomic));
        let bp = |t: u64| [0.0, 0.4, 0.8, 0.1][(t / 2000 % 4) as usize];
        let o = run(&mut m, &jobs, 0.3, &bp, &mut r);
        let ops = |op: u8| o.descs.iter().filter(|d| d.opcode == op).count();
        assert!(ops(opcode::ATOMIC_ACKNOWLEDGE) > 100);
        assert!(ops(opcode::ACKNOWLEDGE) > 50);
        assert!(ops(opcode::READ_RESPONSE_ONLY) > 20);
        // the byte order, by hand: orig 0x0102..08 goes out as 01 02 .. 08
        let d = o
            .descs
            .iter()
            .find(|d| d.opcode == opcode::ATOMIC_ACKNOWLEDGE && d.idata[0] == 1 && d.idata[7] == 8)
            .expect("an atomic with orig 0x0102030405060708");
        assert_eq!(d.idata, [1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            (d.paylen, d.pad, d.inl, d.has_imm, d.has_reth),
            (8, 0, true, true, false)
        );
        // atomics and ACKs alone, no backpressure: one per cycle
        let jobs: Vec<Job> = (0..40)
            .map(|_| rand_job_atomic(&mut r, 0.0, 0.5, 0))
            .collect();
        let o = run(&mut m, &jobs, 0.0, &|_| 0.0, &mut r);
        let n = o.at.len() as u64;
        assert_eq!(n, 40);
        assert_eq!(o.at[n as usize - 1] - o.at[0] + 1, n, "bubbles: {:?}", o.at);
    }

    /// `desc` held (txbuild taking nothing) for a long stretch: the job queue takes jobs with
    /// `job_ready` high throughout, far beyond the 16 of the old queue (300 jobs, random
    /// idle); `desc_valid` holds its first descriptor unchanged. Released (random
    /// backpressure), every descriptor of every job leaves in job order. Then the queue is
    /// filled to the brim (desc held): `job_ready` stays high for at least 2^JOB_DEPTH_LOG2
    /// jobs and falls only in the cycle after an accepted job; released, all are answered in
    /// order and the queue takes jobs again.
    #[test]
    fn deep_queue_while_desc_is_held() {
        let mut m = model(RdResp::default(), "rdresp");
        let mut r = rng(14);
        reset(&mut m);
        /// Feed `jobs` with `desc_ready` low (idle probability `idle`) until the queue
        /// refuses one or all are taken; returns how many were taken.
        fn feed(m: &mut DynModel, r: &mut ChaCha8Rng, jobs: &[Job], idle: f64) -> usize {
            let mut taken = 0;
            let mut held: Option<Desc> = None;
            let mut last_taken = false;
            m.set("desc_ready", 0);
            while taken < jobs.len() {
                let jv = !chance(r, idle);
                m.set("job_valid", jv as u64);
                jobs[taken].drive(m, "job");
                m.tick();
                let ready = m.bit("job_ready");
                if !ready {
                    assert!(last_taken, "job_ready fell without a job taken before it");
                    break;
                }
                last_taken = jv;
                if jv {
                    taken += 1;
                }
                if m.bit("desc_valid") {
                    let d = Desc::read(m, "desc");
                    if let Some(h) = &held {
                        assert_eq!(&d, h, "held descriptor changed");
                    }
                    held = Some(d);
                }
            }
            m.set("job_valid", 0);
            taken
        }
        /// Release `desc` (backpressure `bp`) and collect the descriptors of `jobs`.
        fn drain(m: &mut DynModel, r: &mut ChaCha8Rng, jobs: &[Job], bp: f64) {
            let want: Vec<Desc> = jobs.iter().flat_map(expand).collect();
            let mut got = 0;
            let mut cycles = 0u64;
            while got < want.len() {
                let ready = !chance(r, bp);
                m.set("desc_ready", ready as u64);
                m.tick();
                if ready && m.bit("desc_valid") {
                    assert_eq!(Desc::read(m, "desc"), want[got], "descriptor {got}");
                    got += 1;
                }
                cycles += 1;
                assert!(cycles < 4 * want.len() as u64 + 100, "stuck at {got}");
            }
            m.set("desc_ready", 1);
            for _ in 0..10 {
                m.tick();
                assert!(!m.bit("desc_valid"), "descriptor after the last");
            }
        }
        let jobs: Vec<Job> = (0..300)
            .map(|_| rand_job_atomic(&mut r, 0.4, 0.4, 20_000))
            .collect();
        assert_eq!(feed(&mut m, &mut r, &jobs, 0.3), 300, "job_ready fell");
        // held for a long stretch more: nothing changes, nothing is lost
        for _ in 0..2000 {
            m.tick();
            assert!(m.bit("job_ready"));
        }
        drain(&mut m, &mut r, &jobs, 0.3);
        // to the brim: short jobs, at full rate
        let jobs: Vec<Job> = (0..(1 << JOB_DEPTH_LOG2) + 10)
            .map(|_| {
                let mut j = rand_job_atomic(&mut r, 0.3, 0.4, 0);
                j.len = j.len.min(300);
                j
            })
            .collect();
        let n = feed(&mut m, &mut r, &jobs, 0.0);
        // the queue's entries, plus at most the job in the output register
        assert!(
            (1 << JOB_DEPTH_LOG2..=(1 << JOB_DEPTH_LOG2) + 1).contains(&n),
            "{n} jobs taken before job_ready fell"
        );
        drain(&mut m, &mut r, &jobs[..n], 0.1);
        assert!(m.bit("job_ready"));
        let jobs: Vec<Job> = (0..20).map(|_| rand_job(&mut r, 0.5, 5000)).collect();
        run(&mut m, &jobs, 0.2, &|_| 0.2, &mut r);
    }
}
