//! `rxresp`: the receive side of the data path (docs/DATAPATH.md "rxresp"): RX packet buffer,
//! header parser + ICRC check, dispatch (ACKNOWLEDGE, READ RESPONSE and ATOMIC ACKNOWLEDGE ->
//! ackproc, READ RESPONSE payloads and atomic original values placed on ackproc's verdict,
//! drops), and the RC responder for SEND / RDMA WRITE / RDMA READ / atomic requests (PSN and
//! opcode-sequence checks, access checks, receive WQEs, payload DMA writes, receive
//! completions, atomics handed to the atomic unit on `atom`, responder jobs: ACK/NAKs, READs
//! and ATOMIC ACKNOWLEDGEs to answer).
//!
//! [`RxResp`] is three sub-blocks joined by typed bundles (all connections between them are
//! combinational; every register lives in exactly one of them):
//!
//! ```text
//!  rx --> Ingress ---- head (RxHdr: head of the header FIFO, pop) ---> Responder --> ctx, ring,
//!         packet buffer, parser + ICRC,                                  |           cpl, rsp,
//!         verdict, header FIFO  ---> chk (RxCheck, to rxstat)            |           ackev, rdv,
//!                                                                        |           atom, wr.cmd
//!            ^      |                                                    | job (MoveJob)
//!            |      +-- buf (PktBufRd: read port of the packet buffer) --v
//!            +------------- free_ptr ------------------------------- Mover --> wr.dat
//! ```
//!
//! 1. **[`ingress::Ingress`].** A frame starts only when the packet buffer has room for a
//!    maximum frame ([`MAX_BEATS`]) and fewer than [`FIFO_DEPTH`] frames are waiting: until
//!    then `rx.tready` is low on its first beat (in the simulator the link pauses, the stand-in
//!    for the PFC pause of a lossless RoCE fabric; on a board the MAC-side FIFO absorbs it or
//!    drops). Beats of a started frame are always taken. They are written into the packet
//!    buffer (a ring of [`BUF_BEATS`] 64-byte beats). Beats beyond [`MAX_BEATS`] are not
//!    stored (the frame is dropped as a parse drop), and a frame whose last beat has `tuser`
//!    set (MAC error) too. (`cnt_drop_buf` counts whole frames refused for lack of room: with
//!    this flow control it stays 0; it remains for a build that must never stall the MAC.)
//!    The ICRC checker (`icrc`, RX mode) and the parser (`rxparse`) both see a registered
//!    copy of the beat (nothing but a flip-flop between the MAC's stream and their logic),
//!    the ICRC's with `tkeep`/`tlast` cut at byte 14 + IPv4 total length (Ethernet padding
//!    excluded: the end is computed from the first beat's IPv4 length field before the
//!    register); both results are valid 4 cycles after the MAC's last beat. Then the frame's verdict and parsed
//!    header go into a small FIFO (one entry per admitted frame, dropped ones included, so the
//!    buffer is freed in order); drop counters (`cnt_drop_parse`, `cnt_drop_icrc`) count here.
//!    Every frame's parser + ICRC result also leaves on `chk` (the `rxstat` counters).
//! 2. **[`responder::Responder`]** (dispatcher + RC responder FSM), one frame at a time from
//!    the header FIFO: dropped frames, ACKNOWLEDGE (-> `ackev`), READ RESPONSE and ATOMIC
//!    ACKNOWLEDGE (-> `ackev`, then ackproc's verdict on `rdv`, then the payload's DMA
//!    write), unsupported opcodes (`cnt_drop_opcode`: none left, every opcode the parser
//!    passes is served), unknown QPs (`cnt_drop_qp`), and requests: reads `QpContext` and
//!    `RqState`, checks, reads the receive WQE (ring) and the MR (ctx) as needed, hands an
//!    atomic to the atomic unit (`atom`) and waits for its `done`, then issues in parallel the
//!    DMA write command, the completion (after the command was taken), the responder job
//!    (`rsp`: ACK/NAK, READ or ATOMIC ACKNOWLEDGE), the `RqState` write (byte enables: every
//!    responder field, never `rq_pi`) and a *mover job*, and pops the header FIFO. It never
//!    waits for room in the responder job queue: a frame that needs a job while `rsp.ready`
//!    is low is dropped instead (`cnt_drop_busy`, below).
//! 3. **[`mover::Mover`]**: streams the payload of each job from the packet buffer to
//!    `wr.dat_*`, shifted by the payload offset (4 possible: 54, 58, 70, 74 bytes; a 4-way mux
//!    of constant shifts; an ATOMIC ACKNOWLEDGE's job takes the 8 bytes at 58 byte-reversed),
//!    one beat per cycle, and frees the frame's buffer space. Commands
//!    may run ahead of data (allowed by the `DmaWrM` contract), so the responder handles frame
//!    n+1 while frame n streams.
//!
//! Responder semantics (decisions where DATAPATH.md leaves room):
//! * duplicate PSN: no write, no completion, no state change; ACKed whether or not AckReq is
//!   set, with PSN = rq_psn - 1 (the last PSN accepted, as rxe does, C9-105) and the current
//!   MSN. Counted `cnt_rx_dup`.
//! * future PSN: NAK PSN sequence error with PSN = rq_psn, once (NAK_SENT, cleared by the next
//!   in-sequence packet); further future packets are dropped silently.
//! * class A/C errors (every NAK invalid request / remote access / remote operational error):
//!   after the `RqState` write, `QpContext.state = ERR` (byte enable of `state` only), so the
//!   QP's later packets are dropped (`cnt_drop_qp`), as rxe does. A receive WQE being filled
//!   by a multi-packet SEND when an opcode-sequence or length error hits is completed with
//!   REM_INV_REQ_ERR (rxe's status) and consumed.
//! * opcode sequence violation, WRITE MIDDLE/LAST beyond `wr_left`: NAK invalid request, QP
//!   to ERR (`cnt_nak_inv`).
//! * WRITE FIRST/ONLY failing the access checks: NAK remote access error, nothing written,
//!   rq_psn + 1, QP to ERR; a FIRST sets IN_WRITE|WRITE_BAD so that the rest of the message
//!   would be consumed (rq_psn + 1 each, nothing written, no ACK) (`cnt_nak_acc`).
//! * SEND / WRITE_*_IMM without a posted receive WQE (`rq_ci == rq_pi`): RNR NAK with AETH
//!   syndrome `0x20 | (QpContext.min_rnr_timer & 0x1F)`, no state change (`cnt_nak_rnr`).
//! * SEND whose receive buffer fails the MR check: NAK remote access error + completion
//!   LOC_PROT_ERR; overflow of the receive WQE: NAK invalid request + completion LOC_LEN_ERR;
//!   both consume the WQE (rq_ci + 1), clear IN_SEND, do not advance rq_psn, QP to ERR.
//! * BTH P_Key not ours (low 15 bits != 0x7FFF), checked for every frame the parser passed:
//!   dropped silently (`cnt_drop_pkey`). A request whose destination IPv4 / MAC differs from
//!   the QP context's `src_ip` / `src_mac`: dropped silently after the QP-state check
//!   (`cnt_drop_addr`).
//! * packet lengths (FIRST/MIDDLE = path MTU, LAST/ONLY <= path MTU, WRITE ONLY = RETH DMA
//!   length, WRITE FIRST/MIDDLE <= what is left, WRITE LAST = what is left): NAK invalid
//!   request, QP to ERR (`cnt_nak_inv`), checked after the access checks (so a FIRST with a
//!   bad rkey still sets WRITE_BAD).
//! * WRITE with RETH DMA length 0: no MR (rkey/bounds) check, no DMA (C9-88).
//! * `cnt_rx_req` counts request packets executed (in sequence, all checks passed).
//! * completion `byte_len` = bytes of the whole message (SEND and WRITE_IMM alike).
//! * ACKNOWLEDGE frames: QPN range, P_Key and destination IPv4 / MAC (the QP context is read
//!   for them) are checked here (QP state: ackproc's business).
//! * CNP (BTH opcode 0x81) for a QP in RTR/RTS addressed to us: counted (`cnt_rx_cnp`),
//!   dropped; otherwise dropped like a request.
//! * responder job queue full (`rsp.ready` low) when the responder commits to a frame that
//!   would push a responder job (any ACK/NAK: the ACK of an AckReq request, the re-ACK of a
//!   duplicate, NAK PSN sequence error, RNR NAK, NAK invalid request / remote access / remote
//!   operational error; a READ job; the ATOMIC ACKNOWLEDGE of a new or a duplicate atomic):
//!   the frame is dropped as if lost on the wire: no DMA command, no completion, no `RqState`
//!   or `QpContext` write, nothing on `atom`, no counter but `cnt_drop_busy` (+1); the mover
//!   job only frees its buffer and the header FIFO is popped. The commit point is the cycle
//!   the outcome is decided, before anything with an effect: Decide for duplicates, future
//!   PSNs, opcode-sequence errors and RNR NAKs; Check for the rest; for an atomic (new or
//!   duplicate) before it is handed to the atomic unit (which executes it), so a duplicate
//!   atomic is dropped whether or not its saved result would be found. A frame that needs
//!   no job (a SEND / WRITE executed without AckReq, the rest of a failed WRITE, a duplicate
//!   READ failing its checks, ACKNOWLEDGE / READ RESPONSE / ATOMIC ACKNOWLEDGE for ackproc,
//!   CNPs, every drop) is handled normally whatever `rsp.ready` is. Why the push in Emit then
//!   never waits: the responder is the only producer of `rsp` and handles one frame at a
//!   time, and the queue's `ready` is `!full`, which can fall only through a push; so the
//!   room seen at the commit point is still there at the push. Why dropping is correct: to
//!   an IBTA RC requester the frame was lost; it retransmits on the PSN sequence NAK a later
//!   packet draws or on its retry timer (an atomic dropped here was not executed, so its
//!   retransmission executes it once). It happens only when the transmit side has been
//!   blocked long enough to fill the queue; it keeps the receive path from ever waiting on
//!   the transmit side (no circular wait between two NICs sending both ways).
//! * every responder job carries the QP's `traffic_class` (`rsp.tos`: the TOS byte of the
//!   ACK / READ RESPONSE frames).
//! * responder jobs (`rsp`, [`RspJobM`]) are one stream in decision order: ACK/NAKs with
//!   `read` = 0 (va, len, mtu 0) and READs to answer with `read` = 1, so an ACK never
//!   overtakes the READ responses of an earlier request.
//! * READ REQUEST (0x0C), in sequence: a multi-packet SEND or WRITE in progress is an opcode
//!   sequence error (NAK invalid request, QP to ERR; a SEND's receive WQE completed with
//!   REM_INV_REQ_ERR as above). Then, in this order: QP access REMOTE_READ (else NAK remote
//!   access error), RETH DMA length <= 2^31 (else NAK invalid request), for a length > 0 the
//!   MR check as for a WRITE but with MR access REMOTE_READ (key index < num_mrs, valid, key,
//!   PD, bounds; else NAK remote access error); each failure is class C (QP to ERR) and does
//!   not advance rq_psn (`cnt_nak_acc` / `cnt_nak_inv`). A length of 0 needs no MR (C9-88
//!   analog). Pass: rq_psn + n with n = max(1, ceil(len / path MTU)), msn + 1, NAK_SENT
//!   cleared, and a READ job (PSN = the request's, va, len, mtu = the QP's `path_mtu`,
//!   syndrome ACK, the new msn); no separate ACK, whatever AckReq says (the responses
//!   acknowledge). Counted in `cnt_rx_req` and `cnt_rx_read`.
//! * duplicate READ REQUEST (PSN before rq_psn, in the 2^23 window): executed again from the
//!   request (the requester may re-request from the middle with its own PSN, va and length):
//!   the same QP access / length / MR checks, then a READ job with the request's PSN and the
//!   current msn; failing: dropped silently. No state change. `cnt_rx_dup` always,
//!   `cnt_rx_read` when answered. A future-PSN READ: NAK PSN sequence error as any request.
//! * READ RESPONSE (0x0D FIRST .. 0x10 ONLY): QPN range, P_Key and destination IPv4 / MAC as
//!   for an ACKNOWLEDGE (QP state: ackproc's business), then `ackev` with `rsp` = 1, `rpos`
//!   (`RSP_*`), `plen` = payload bytes without pad, the AETH syndrome / MSN (MIDDLE: ACK, 0).
//!   The responder then takes ackproc's verdict on `rdv`: ok and plen > 0 -> DMA write of the
//!   payload at the verdict's `addr` (command + mover job), `rdv.placed` pulses in the cycle
//!   the command is taken; ok and plen 0 -> `placed` in the cycle after the verdict; !ok ->
//!   dropped (the buffer freed). Nothing is placed without an ok verdict.
//! * CMP_SWAP (0x13) / FETCH_ADD (0x14), in sequence: a multi-packet SEND or WRITE in progress
//!   is an opcode sequence error (NAK invalid request, QP to ERR, as for READ). Then, in this
//!   order: QP access REMOTE_ATOMIC (else NAK remote access error), VA 8-byte aligned (else NAK
//!   invalid request; rxe's RESPST_ERR_MISALIGNED_ATOMIC), the MR check of [va, va + 8) as for
//!   a WRITE but with MR access REMOTE_ATOMIC (else NAK remote access error); each failure is
//!   class C (QP to ERR), does not advance rq_psn and sends nothing to the atomic unit
//!   (`cnt_nak_acc` / `cnt_nak_inv`). Pass: the request on `atom` (`AtomReqM`: dup 0, qpn,
//!   psn, fa = FETCH_ADD, addr = va, swap, cmp, head/cnt = `RqState.atom_head/atom_cnt`), then
//!   its `done`: `err` -> NAK remote operational error, QP to ERR, rq_psn kept; else rq_psn +
//!   1, msn + 1, NAK_SENT cleared, atom_head + 1 (mod `ATOMIC_RESOURCES`), atom_cnt =
//!   min(cnt + 1, `ATOMIC_RESOURCES`), and an ATOMIC ACKNOWLEDGE job (`rsp.atomic` = 1,
//!   `orig`, PSN = the request's, syndrome ACK, the new msn); no separate ACK, whatever AckReq
//!   says. Counted in `cnt_rx_req` and `cnt_rx_atomic`. The responder issues nothing else
//!   while it waits (one frame at a time); the unit itself orders the atomic after the DMA
//!   writes issued before it.
//! * duplicate atomic (PSN before rq_psn, in the 2^23 window): not executed again and not
//!   checked: `atom` with dup 1 (head/cnt from `RqState`); found -> an ATOMIC ACKNOWLEDGE job
//!   with the saved original value, the request's PSN and the current msn (`cnt_atom_dup`);
//!   not found -> dropped silently (`cnt_atom_miss`). `cnt_rx_dup` always; no state change. A
//!   future-PSN atomic: NAK PSN sequence error as any request.
//! * ATOMIC ACKNOWLEDGE (0x12): QPN range, P_Key and destination IPv4 / MAC as for a READ
//!   RESPONSE ONLY, then `ackev` with `rsp` = 1, `atom` = 1, `rpos` ONLY, `plen` 8 and the
//!   AETH; on an ok verdict an 8-byte DMA write at the verdict's `addr` of the AtomicAckETH
//!   (frame bytes 58..65) byte-reversed (big-endian on the wire, a host-order little-endian
//!   u64 in memory, as rxe writes it), `placed` as for a READ RESPONSE; !ok -> dropped.

pub mod ingress;
pub mod mover;
pub mod responder;
#[cfg(test)]
mod tests;

use crate::common::bus::{
    AckEvM, AtomReqM, CplM, CtxPortM, CtxRdM, CtxSnoopS, DmaWrM, RdVerdictS, RingPortM, RspJobM,
    RxCheckM, StreamS,
};
use ingress::Ingress;
use mover::Mover;
use responder::Responder;
use rnic_abi::params::{self, BuildParams};
use rust_hdl::prelude::*;

/// Largest frame: Eth + IPv4 + UDP + BTH + RETH + ImmDt (78 with margin) + 4096 + ICRC.
pub const MAX_FRAME_BYTES: usize = 4096 + 78 + 4;
/// Beats of the largest frame.
pub const MAX_BEATS: usize = MAX_FRAME_BYTES.div_ceil(64);
/// Packet buffer address bits (beats).
pub const BUF_BITS: usize = 8;
/// Packet buffer size in 64-byte beats (16 KiB: 3 maximum frames).
pub const BUF_BEATS: usize = 1 << BUF_BITS;
/// Header FIFO address bits.
pub(crate) const HQ_BITS: usize = 4;
/// Frames waiting between the checks and the responder.
pub const FIFO_DEPTH: usize = 1 << HQ_BITS;
/// Bits of a packet-buffer pointer (one more than the address: full vs empty).
pub const PTR_BITS: usize = BUF_BITS + 1;

const _: () = assert!(BUF_BEATS >= 2 * MAX_BEATS);

/// Head of the header FIFO (ingress -> responder): one received frame's parsed header, its
/// verdict and where it lies in the packet buffer. `valid` = the FIFO is not empty; `pop`
/// takes the entry (the responder is done with the frame).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RxHdrS"]
pub struct RxHdrM {
    pub valid: Signal<Out, Bit>,
    pub pop: Signal<In, Bit>,
    /// RETH virtual address, rkey, DMA length.
    pub va: Signal<Out, Bits<64>>,
    pub rkey: Signal<Out, Bits<32>>,
    pub rlen: Signal<Out, Bits<32>>,
    /// ImmDt.
    pub imm: Signal<Out, Bits<32>>,
    /// BTH fields.
    pub psn: Signal<Out, Bits<24>>,
    pub opcode: Signal<Out, Bits<8>>,
    pub qpn: Signal<Out, Bits<24>>,
    pub pad: Signal<Out, Bits<2>>,
    pub ackreq: Signal<Out, Bit>,
    /// AETH syndrome and MSN (ACKNOWLEDGE frames).
    pub syndrome: Signal<Out, Bits<8>>,
    pub aeth_msn: Signal<Out, Bits<24>>,
    /// The verdict: parser drop, ICRC bad, too long or MAC error.
    pub drop: Signal<Out, Bit>,
    /// Payload offset in the frame, and the message bytes the packet carries (its payload
    /// without the pad), subtracted before the FIFO.
    pub pay_off: Signal<Out, Bits<16>>,
    pub data_len: Signal<Out, Bits<16>>,
    /// The frame's first beat in the packet buffer, and the pointer after its last beat.
    pub buf_start: Signal<Out, Bits<PTR_BITS>>,
    pub buf_end: Signal<Out, Bits<PTR_BITS>>,
    /// BTH P_Key, IPv4 destination address, destination MAC (first octet in bits 47:40).
    pub pkey: Signal<Out, Bits<16>>,
    pub dip: Signal<Out, Bits<32>>,
    pub dmac: Signal<Out, Bits<48>>,
    /// AtomicETH swap/add and compare data (CMP_SWAP / FETCH_ADD; zero otherwise). The
    /// atomic's VA and R_Key are in `va` / `rkey`.
    pub swap: Signal<Out, Bits<64>>,
    pub cmp: Signal<Out, Bits<64>>,
    /// The entry behind the head (`n_valid`: there is one), the fields the responder needs
    /// to take it straight from the head's Emit (kept records, a WRITE), and to hand a READ
    /// RESPONSE's or ATOMIC ACKNOWLEDGE's event to the ACK processor while the head waits for
    /// its verdict (`n_syndrome` .. `n_dmac`).
    pub n_valid: Signal<Out, Bit>,
    pub n_va: Signal<Out, Bits<64>>,
    pub n_rkey: Signal<Out, Bits<32>>,
    pub n_rlen: Signal<Out, Bits<32>>,
    pub n_psn: Signal<Out, Bits<24>>,
    pub n_opcode: Signal<Out, Bits<8>>,
    pub n_qpn: Signal<Out, Bits<24>>,
    pub n_drop: Signal<Out, Bit>,
    pub n_pkey: Signal<Out, Bits<16>>,
    pub n_syndrome: Signal<Out, Bits<8>>,
    pub n_aeth_msn: Signal<Out, Bits<24>>,
    pub n_data_len: Signal<Out, Bits<16>>,
    pub n_dip: Signal<Out, Bits<32>>,
    pub n_dmac: Signal<Out, Bits<48>>,
}

/// Head of the header FIFO, responder side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RxHdrM"]
pub struct RxHdrS {
    pub valid: Signal<In, Bit>,
    pub pop: Signal<Out, Bit>,
    pub va: Signal<In, Bits<64>>,
    pub rkey: Signal<In, Bits<32>>,
    pub rlen: Signal<In, Bits<32>>,
    pub imm: Signal<In, Bits<32>>,
    pub psn: Signal<In, Bits<24>>,
    pub opcode: Signal<In, Bits<8>>,
    pub qpn: Signal<In, Bits<24>>,
    pub pad: Signal<In, Bits<2>>,
    pub ackreq: Signal<In, Bit>,
    pub syndrome: Signal<In, Bits<8>>,
    pub aeth_msn: Signal<In, Bits<24>>,
    pub drop: Signal<In, Bit>,
    pub pay_off: Signal<In, Bits<16>>,
    pub data_len: Signal<In, Bits<16>>,
    pub buf_start: Signal<In, Bits<PTR_BITS>>,
    pub buf_end: Signal<In, Bits<PTR_BITS>>,
    pub pkey: Signal<In, Bits<16>>,
    pub dip: Signal<In, Bits<32>>,
    pub dmac: Signal<In, Bits<48>>,
    pub swap: Signal<In, Bits<64>>,
    pub cmp: Signal<In, Bits<64>>,
    pub n_valid: Signal<In, Bit>,
    pub n_va: Signal<In, Bits<64>>,
    pub n_rkey: Signal<In, Bits<32>>,
    pub n_rlen: Signal<In, Bits<32>>,
    pub n_psn: Signal<In, Bits<24>>,
    pub n_opcode: Signal<In, Bits<8>>,
    pub n_qpn: Signal<In, Bits<24>>,
    pub n_drop: Signal<In, Bit>,
    pub n_pkey: Signal<In, Bits<16>>,
    pub n_syndrome: Signal<In, Bits<8>>,
    pub n_aeth_msn: Signal<In, Bits<24>>,
    pub n_data_len: Signal<In, Bits<16>>,
    pub n_dip: Signal<In, Bits<32>>,
    pub n_dmac: Signal<In, Bits<48>>,
}

/// A mover job (responder -> mover): copy `beats` beats of payload from buffer beat `first`,
/// shifted by payload-offset class `shift` (0..3: 54, 58, 70, 74 bytes), then free the buffer
/// up to `end`. `beats` = 0: only free. `swap8`: the first 8 output bytes reversed (an ATOMIC
/// ACKNOWLEDGE's big-endian AtomicAckETH, class 58, 1 beat, placed as a little-endian u64).
/// `push` is taken when `full` is low.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "MoveJobS"]
pub struct MoveJobM {
    pub push: Signal<Out, Bit>,
    pub full: Signal<In, Bit>,
    pub first: Signal<Out, Bits<BUF_BITS>>,
    pub beats: Signal<Out, Bits<7>>,
    pub shift: Signal<Out, Bits<2>>,
    pub end: Signal<Out, Bits<PTR_BITS>>,
    pub swap8: Signal<Out, Bit>,
}

/// A mover job, mover side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "MoveJobM"]
pub struct MoveJobS {
    pub push: Signal<In, Bit>,
    pub full: Signal<Out, Bit>,
    pub first: Signal<In, Bits<BUF_BITS>>,
    pub beats: Signal<In, Bits<7>>,
    pub shift: Signal<In, Bits<2>>,
    pub end: Signal<In, Bits<PTR_BITS>>,
    pub swap8: Signal<In, Bit>,
}

/// Read port of the packet buffer (mover -> ingress): `data` is the beat at the `addr` of the
/// previous cycle (registered RAM read).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "PktBufRdS"]
pub struct PktBufRdM {
    pub addr: Signal<Out, Bits<BUF_BITS>>,
    pub data: Signal<In, Bits<512>>,
}

/// Read port of the packet buffer, buffer side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "PktBufRdM"]
pub struct PktBufRdS {
    pub addr: Signal<In, Bits<BUF_BITS>>,
    pub data: Signal<Out, Bits<512>>,
}

/// The block: see the module documentation.
#[derive(LogicBlock)]
pub struct RxResp {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub rx: StreamS,
    pub ctx: CtxPortM,
    /// The `RqState` reads (the store's read-only port).
    pub ctxb: CtxRdM,
    /// The context store's write snoop (the responder's kept records).
    pub sn: CtxSnoopS,
    pub ring: RingPortM,
    pub wr: DmaWrM,
    pub cpl: CplM,
    /// Responder jobs to the response generator (`tx::rdresp`): ACK/NAKs (`read` = 0) and
    /// READs to answer (`read` = 1), one ordered stream.
    pub rsp: RspJobM,
    /// Received ACKNOWLEDGEs and READ RESPONSEs (`rsp` = 1) to ackproc.
    pub ackev: AckEvM,
    /// ackproc's verdict on each READ RESPONSE event, and `placed` back.
    pub rdv: RdVerdictS,
    /// Every received frame's parser + ICRC result (to `rxstat`).
    pub chk: RxCheckM,
    /// Atomics to execute (new) or to look up (duplicates), to `rx::atomic::AtomicUnit`.
    pub atom: AtomReqM,
    pub cnt_rx_req: Signal<Out, Bits<32>>,
    pub cnt_rx_dup: Signal<Out, Bits<32>>,
    pub cnt_nak_seq: Signal<Out, Bits<32>>,
    pub cnt_nak_acc: Signal<Out, Bits<32>>,
    pub cnt_nak_inv: Signal<Out, Bits<32>>,
    pub cnt_nak_rnr: Signal<Out, Bits<32>>,
    pub cnt_drop_qp: Signal<Out, Bits<32>>,
    pub cnt_drop_opcode: Signal<Out, Bits<32>>,
    /// Frames whose BTH P_Key is not ours (low 15 bits != 0x7FFF; dropped).
    pub cnt_drop_pkey: Signal<Out, Bits<32>>,
    /// Requests whose destination IPv4 or MAC is not the QP's local address (dropped).
    pub cnt_drop_addr: Signal<Out, Bits<32>>,
    /// RoCE v2 CNPs received for a valid QP (counted, dropped).
    pub cnt_rx_cnp: Signal<Out, Bits<32>>,
    /// READ requests answered (new and duplicate).
    pub cnt_rx_read: Signal<Out, Bits<32>>,
    /// New atomics executed (answered with an ATOMIC ACKNOWLEDGE).
    pub cnt_rx_atomic: Signal<Out, Bits<32>>,
    /// Duplicate atomics answered from the saved results; duplicates not found (dropped).
    pub cnt_atom_dup: Signal<Out, Bits<32>>,
    pub cnt_atom_miss: Signal<Out, Bits<32>>,
    /// Frames that needed a responder job while the job queue (`rsp`) was full: dropped
    /// as if lost on the wire (engstat `drop_busy`).
    pub cnt_drop_busy: Signal<Out, Bits<32>>,
    pub cnt_drop_icrc: Signal<Out, Bits<32>>,
    pub cnt_drop_parse: Signal<Out, Bits<32>>,
    /// Frames dropped whole at their first beat because the packet buffer or FIFO was full.
    pub cnt_drop_buf: Signal<Out, Bits<32>>,
    ingress: Ingress,
    resp: Responder,
    mover: Mover,
}

impl RxResp {
    pub fn new(p: &BuildParams) -> Self {
        RxResp {
            clock: Default::default(),
            rst: Default::default(),
            rx: Default::default(),
            ctx: Default::default(),
            ctxb: Default::default(),
            sn: Default::default(),
            ring: Default::default(),
            wr: Default::default(),
            cpl: Default::default(),
            rsp: Default::default(),
            ackev: Default::default(),
            rdv: Default::default(),
            chk: Default::default(),
            atom: Default::default(),
            cnt_rx_req: Default::default(),
            cnt_rx_dup: Default::default(),
            cnt_nak_seq: Default::default(),
            cnt_nak_acc: Default::default(),
            cnt_nak_inv: Default::default(),
            cnt_nak_rnr: Default::default(),
            cnt_drop_qp: Default::default(),
            cnt_drop_opcode: Default::default(),
            cnt_drop_pkey: Default::default(),
            cnt_drop_addr: Default::default(),
            cnt_rx_cnp: Default::default(),
            cnt_rx_read: Default::default(),
            cnt_rx_atomic: Default::default(),
            cnt_atom_dup: Default::default(),
            cnt_atom_miss: Default::default(),
            cnt_drop_busy: Default::default(),
            cnt_drop_icrc: Default::default(),
            cnt_drop_parse: Default::default(),
            cnt_drop_buf: Default::default(),
            ingress: Ingress::new(),
            resp: Responder::new(p),
            mover: Mover::new(),
        }
    }
}

impl Default for RxResp {
    fn default() -> Self {
        Self::new(&params::DEFAULT)
    }
}

impl Logic for RxResp {
    #[hdl_gen]
    fn update(&mut self) {
        self.ingress.clock.next = self.clock.val();
        self.resp.clock.next = self.clock.val();
        self.mover.clock.next = self.clock.val();
        self.ingress.rst.next = self.rst.val();
        self.resp.rst.next = self.rst.val();
        self.mover.rst.next = self.rst.val();
        // frames in; the responder's requests out
        StreamS::link(&mut self.rx, &mut self.ingress.rx);
        RxCheckM::link(&mut self.chk, &mut self.ingress.chk);
        CtxPortM::link(&mut self.ctx, &mut self.resp.ctx);
        CtxRdM::link(&mut self.ctxb, &mut self.resp.ctxb);
        CtxSnoopS::link(&mut self.sn, &mut self.resp.sn);
        RingPortM::link(&mut self.ring, &mut self.resp.ring);
        CplM::link(&mut self.cpl, &mut self.resp.cpl);
        RspJobM::link(&mut self.rsp, &mut self.resp.rsp);
        AckEvM::link(&mut self.ackev, &mut self.resp.ackev);
        RdVerdictS::link(&mut self.rdv, &mut self.resp.rdv);
        AtomReqM::link(&mut self.atom, &mut self.resp.atom);
        // between the three parts
        RxHdrM::join(&mut self.ingress.head, &mut self.resp.head);
        MoveJobM::join(&mut self.resp.job, &mut self.mover.job);
        PktBufRdM::join(&mut self.mover.buf, &mut self.ingress.buf);
        self.ingress.free_ptr.next = self.mover.free_ptr.val();
        // the DMA write client: commands from the responder, data from the mover
        self.wr.cmd_valid.next = self.resp.cmd_valid.val();
        self.wr.cmd_addr.next = self.resp.cmd_addr.val();
        self.wr.cmd_len.next = self.resp.cmd_len.val();
        self.resp.cmd_ready.next = self.wr.cmd_ready.val();
        self.wr.dat_valid.next = self.mover.dat_valid.val();
        self.wr.dat_data.next = self.mover.dat_data.val();
        self.wr.dat_last.next = self.mover.dat_last.val();
        self.mover.dat_ready.next = self.wr.dat_ready.val();
        // counters
        self.cnt_rx_req.next = self.resp.cnt_rx_req.val();
        self.cnt_rx_dup.next = self.resp.cnt_rx_dup.val();
        self.cnt_nak_seq.next = self.resp.cnt_nak_seq.val();
        self.cnt_nak_acc.next = self.resp.cnt_nak_acc.val();
        self.cnt_nak_inv.next = self.resp.cnt_nak_inv.val();
        self.cnt_nak_rnr.next = self.resp.cnt_nak_rnr.val();
        self.cnt_drop_qp.next = self.resp.cnt_drop_qp.val();
        self.cnt_drop_opcode.next = self.resp.cnt_drop_opcode.val();
        self.cnt_drop_pkey.next = self.resp.cnt_drop_pkey.val();
        self.cnt_drop_addr.next = self.resp.cnt_drop_addr.val();
        self.cnt_rx_cnp.next = self.resp.cnt_rx_cnp.val();
        self.cnt_rx_read.next = self.resp.cnt_rx_read.val();
        self.cnt_rx_atomic.next = self.resp.cnt_rx_atomic.val();
        self.cnt_atom_dup.next = self.resp.cnt_atom_dup.val();
        self.cnt_atom_miss.next = self.resp.cnt_atom_miss.val();
        self.cnt_drop_busy.next = self.resp.cnt_drop_busy.val();
        self.cnt_drop_icrc.next = self.ingress.cnt_drop_icrc.val();
        self.cnt_drop_parse.next = self.ingress.cnt_drop_parse.val();
        self.cnt_drop_buf.next = self.ingress.cnt_drop_buf.val();
    }
}
