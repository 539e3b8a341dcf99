//! Responder of [`super::RxResp`]: the dispatcher and RC responder FSM, one frame at a time
//! from the head of the header FIFO (see the module documentation of `rx::rxresp`): QP context,
//! RQ state, receive WQE and MR reads, the checks, then the DMA write command, completion,
//! responder job (ACK/NAK, READ or ATOMIC ACKNOWLEDGE), `RqState` write-back and the mover
//! job, in parallel. An atomic request, once its checks passed, goes to the atomic unit
//! (`atom`) and waits for its `done`. A frame that needs a responder job while `rsp.ready` is
//! low at the commit point (Decide / Check) is dropped (`cnt_drop_busy`): the job push never
//! waits. A READ RESPONSE or ATOMIC ACKNOWLEDGE goes to ackproc
//! (`ackev`) first and waits for its verdict (`rdv`) before the DMA write of its payload.

use super::{BUF_BITS, MoveJobM, RxHdrS};
use crate::common::bus::{
    ATOM_CNT_BITS, ATOM_SLOT_BITS, AckEvM, AtomReqM, CTX_ADDR_BITS, CTX_SRC_RX, CplM, CtxPortM,
    CtxRdM, CtxSnoopS, RSP_FIRST, RSP_LAST, RSP_MIDDLE, RSP_ONLY, RdVerdictS, RingPortM, RspJobM,
    be_bits, field_be,
};
use crate::common::ringslot::RingSlot;
use crate::hostif::dbunit;
use crate::net::mac::MacOrder;
use crate::rx::rxparse;
use rnic_abi::params::BuildParams;
use rnic_abi::queue::{
    ATOMIC_RESOURCES, MrEntry, QPC_REQUESTER_FIELDS, QpContext, RqState, Wqe, access, aeth,
    cqe_flag, qp_state, rqs_flag, wc_op, wc_status,
};
use rnic_abi::roce::{self, opcode};
use rust_hdl::prelude::*;

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum St {
    Idle,
    /// The QP's records (`QpContext` on `ctx`, `RqState` on `ctxb`) asked for until both
    /// are taken (they usually are, at once, in Idle).
    QpRd,
    WaitCtx,
    Decide,
    WqeRd,
    WqeWait,
    /// The MR of a RETH / READ / atomic request (its R_Key is in the header): read right
    /// after the QP records, before the decision needs it.
    MrPre,
    MrRd,
    MrWait,
    /// The receive WQE's MR is the kept one: its bounds compared on registers (no read).
    MrKeep,
    Check,
    /// READ RESPONSE: the event to ackproc, then its verdict.
    RspEv,
    RspVd,
    /// Atomic: the request to the atomic unit, then its `done`.
    AtomReq,
    AtomWait,
    Emit,
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}
fn qf(name: &str) -> Constant<Bits<10>> {
    k(QpContext::field(name)
        .expect("QpContext field")
        .bit_offset() as u64)
}
fn sf(name: &str) -> Constant<Bits<10>> {
    k(RqState::field(name).expect("RqState field").bit_offset() as u64)
}
fn mf(name: &str) -> Constant<Bits<10>> {
    k(MrEntry::field(name).expect("MrEntry field").bit_offset() as u64)
}
fn wf(name: &str) -> Constant<Bits<10>> {
    k(Wqe::field(name).expect("Wqe field").bit_offset() as u64)
}
/// Byte-enable mask of the `RqState` fields the responder owns (everything but `rq_pi` and the
/// reserved words).
fn rqs_wbe() -> u64 {
    let mut m = 0u64;
    for f in RqState::FIELDS {
        if f.name == "rq_pi" || f.name.starts_with("reserved") {
            continue;
        }
        for b in 0..f.bits / 8 {
            m |= 1 << (f.offset + b);
        }
    }
    m
}

#[derive(LogicBlock)]
pub struct Responder {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub ctx: CtxPortM,
    /// The store's read-only port for the `RqState` read, asked for in the cycle of the
    /// `QpContext` read on `ctx`.
    pub ctxb: CtxRdM,
    /// The context store's writes: `qp`, `rqs` and `mr` are kept for the next frame while
    /// nobody else writes them (see `kq_v`).
    pub sn: CtxSnoopS,
    pub ring: RingPortM,
    pub cpl: CplM,
    /// Responder jobs (ACK/NAK, `read` = 0; READ to answer, `read` = 1), in decision order.
    pub rsp: RspJobM,
    pub ackev: AckEvM,
    /// ackproc's verdict on each READ RESPONSE event; `placed` after an ok one's DMA command.
    pub rdv: RdVerdictS,
    /// Atomics to execute or look up (the atomic unit).
    pub atom: AtomReqM,
    /// Head of the header FIFO (the frame being worked on).
    pub head: RxHdrS,
    /// Jobs for the payload mover.
    pub job: MoveJobM,
    /// DMA write commands (the `cmd_*` half of the `DmaWrM` client; the mover sends the data).
    pub cmd_valid: Signal<Out, Bit>,
    pub cmd_ready: Signal<In, Bit>,
    pub cmd_addr: Signal<Out, Bits<64>>,
    pub cmd_len: Signal<Out, Bits<14>>,
    dmac_order: MacOrder,
    smac_order: MacOrder,
    pub cnt_rx_req: Signal<Out, Bits<32>>,
    pub cnt_rx_dup: Signal<Out, Bits<32>>,
    pub cnt_nak_seq: Signal<Out, Bits<32>>,
    pub cnt_nak_acc: Signal<Out, Bits<32>>,
    pub cnt_nak_inv: Signal<Out, Bits<32>>,
    pub cnt_nak_rnr: Signal<Out, Bits<32>>,
    pub cnt_drop_qp: Signal<Out, Bits<32>>,
    pub cnt_drop_opcode: Signal<Out, Bits<32>>,
    pub cnt_drop_pkey: Signal<Out, Bits<32>>,
    pub cnt_drop_addr: Signal<Out, Bits<32>>,
    /// RoCE v2 CNPs received for a valid QP (counted and dropped).
    pub cnt_rx_cnp: Signal<Out, Bits<32>>,
    /// READ requests answered (a READ job sent; new and duplicate).
    pub cnt_rx_read: Signal<Out, Bits<32>>,
    /// New atomics executed; duplicates answered from a saved result; duplicates not found.
    pub cnt_rx_atomic: Signal<Out, Bits<32>>,
    pub cnt_atom_dup: Signal<Out, Bits<32>>,
    pub cnt_atom_miss: Signal<Out, Bits<32>>,
    /// Frames that needed a responder job while `rsp.ready` was low at the commit point:
    /// dropped as if lost on the wire.
    pub cnt_drop_busy: Signal<Out, Bits<32>>,
    // ---- constants
    k_pkey15: Constant<Bits<16>>,
    /// QPN bits at and above `num_qps` (a power of two): in range when none is set
    k_qhi: Constant<Bits<24>>,
    k_nmr: Constant<Bits<24>>,
    k_rqs_base: Constant<Bits<CTX_ADDR_BITS>>,
    k_mr_base: Constant<Bits<CTX_ADDR_BITS>>,
    rqslot: RingSlot,
    k_rqs_wbe: Constant<Bits<64>>,
    k_po: [Constant<Bits<16>>; 4],
    k_op_sf: Constant<Bits<8>>,
    k_op_sm: Constant<Bits<8>>,
    k_op_sl: Constant<Bits<8>>,
    k_op_sli: Constant<Bits<8>>,
    k_op_so: Constant<Bits<8>>,
    k_op_soi: Constant<Bits<8>>,
    k_op_wf: Constant<Bits<8>>,
    k_op_wm: Constant<Bits<8>>,
    k_op_wl: Constant<Bits<8>>,
    k_op_wli: Constant<Bits<8>>,
    k_op_wo: Constant<Bits<8>>,
    k_op_woi: Constant<Bits<8>>,
    k_op_rd: Constant<Bits<8>>,
    k_op_rrf: Constant<Bits<8>>,
    k_op_rrm: Constant<Bits<8>>,
    k_op_rrl: Constant<Bits<8>>,
    k_op_rro: Constant<Bits<8>>,
    k_rpos_f: Constant<Bits<2>>,
    k_rpos_m: Constant<Bits<2>>,
    k_rpos_l: Constant<Bits<2>>,
    k_rpos_o: Constant<Bits<2>>,
    /// Largest READ DMA length (2^31, IBTA 9.4.5).
    k_rd_max: Constant<Bits<32>>,
    k_op_ack: Constant<Bits<8>>,
    k_op_aack: Constant<Bits<8>>,
    k_op_cs: Constant<Bits<8>>,
    k_op_fa: Constant<Bits<8>>,
    k_acc_ra: Constant<Bits<32>>,
    k_syn_op: Constant<Bits<8>>,
    /// ATOMIC_RESOURCES (saved atomic results per QP).
    k_ares: Constant<Bits<8>>,
    k_ares_mask: Constant<Bits<8>>,
    k_op_cnp: Constant<Bits<8>>,
    k_err: Constant<Bits<8>>,
    k_state_be: Constant<Bits<64>>,
    k_rnr_mask: Constant<Bits<8>>,
    k_ws_inv: Constant<Bits<8>>,
    k_rtr: Constant<Bits<8>>,
    k_rts: Constant<Bits<8>>,
    k_acc_rw: Constant<Bits<32>>,
    k_acc_rr: Constant<Bits<32>>,
    k_acc_lw: Constant<Bits<32>>,
    k_f_send: Constant<Bits<8>>,
    k_f_write: Constant<Bits<8>>,
    k_f_nak: Constant<Bits<8>>,
    k_f_bad: Constant<Bits<8>>,
    k_syn_ack: Constant<Bits<8>>,
    k_syn_rnr: Constant<Bits<8>>,
    k_syn_seq: Constant<Bits<8>>,
    k_syn_inv: Constant<Bits<8>>,
    k_syn_acc: Constant<Bits<8>>,
    k_ws_ok: Constant<Bits<8>>,
    k_ws_len: Constant<Bits<8>>,
    k_ws_prot: Constant<Bits<8>>,
    k_wo_recv: Constant<Bits<8>>,
    k_wo_imm: Constant<Bits<8>>,
    k_cf_imm: Constant<Bits<8>>,
    // record field bit offsets (from the ABI FIELDS tables)
    o_q_state: Constant<Bits<10>>,
    o_q_mtu: Constant<Bits<10>>,
    o_q_access: Constant<Bits<10>>,
    o_q_rqpn: Constant<Bits<10>>,
    o_q_dmac: Constant<Bits<10>>,
    o_q_sport: Constant<Bits<10>>,
    o_q_dip: Constant<Bits<10>>,
    o_q_sip: Constant<Bits<10>>,
    /// the record's `sq_ack_ci` and `sq_ci` (the event's hint, `AckEvM::ackci` / `hv`)
    o_q_ackci: Constant<Bits<10>>,
    o_q_sqci: Constant<Bits<10>>,
    /// the hint's "a WQE was sent at `sq_ack_ci`" (`sq_ci - sq_ack_ci - 1` in 0 .. 2^15) of a
    /// record as the store's read data brings it (`rd_gap`), kept beside each record it is
    /// loaded with: `k_hv` beside `qp`, `p_hv` beside `p_qp`. The event's hint is then a
    /// select of registers, not a subtraction behind the record select (the record select
    /// hangs on the snoop). `h_k`: the hint is the kept record's (the head's QP, or the frame
    /// behind's when it is the kept QP; no snoop term: a hint only saves the ACK processor a
    /// read, which checks it against the record)
    rd_gap: Signal<Local, Bits<16>>,
    k_hv: DFF<Bit>,
    p_hv: DFF<Bit>,
    h_k: Signal<Local, Bit>,
    o_q_pd: Constant<Bits<10>>,
    o_q_rcqn: Constant<Bits<10>>,
    o_q_smac: Constant<Bits<10>>,
    o_q_rnrt: Constant<Bits<10>>,
    o_q_tc: Constant<Bits<10>>,
    o_s_psn: Constant<Bits<10>>,
    o_s_msn: Constant<Bits<10>>,
    o_s_pi: Constant<Bits<10>>,
    o_s_ci: Constant<Bits<10>>,
    o_s_flags: Constant<Bits<10>>,
    o_s_va: Constant<Bits<10>>,
    o_s_rkey: Constant<Bits<10>>,
    o_s_left: Constant<Bits<10>>,
    o_s_off: Constant<Bits<10>>,
    o_s_ahead: Constant<Bits<10>>,
    o_s_acnt: Constant<Bits<10>>,
    o_m_key: Constant<Bits<10>>,
    o_m_pd: Constant<Bits<10>>,
    o_m_iova: Constant<Bits<10>>,
    o_m_len: Constant<Bits<10>>,
    o_m_access: Constant<Bits<10>>,
    o_m_flags: Constant<Bits<10>>,
    o_w_len: Constant<Bits<10>>,
    o_w_wrid: Constant<Bits<10>>,
    o_w_addr: Constant<Bits<10>>,
    o_w_lkey: Constant<Bits<10>>,
    mv_first: Signal<Local, Bits<9>>,
    capture_ctx: Signal<Local, Bit>,
    /// the frame at the head finds its records kept (no context read)
    hit: Signal<Local, Bit>,
    /// the read of the frame's QpContext (then its RqState, MR) is taken: the tags follow
    take_qp: Signal<Local, Bit>,
    /// the frame leaves Emit (the header FIFO pop)
    em_exit: Signal<Local, Bit>,
    /// ... and the frame behind it goes straight to Decide (no Idle): a WRITE (no
    /// immediate) of the same QP on the kept records and MR (see `n_hit`), or a SEND ONLY of
    /// the same QP whose receive WQE was read ahead (`n_hit_s`); the RqState write of this
    /// frame taken, no error
    em_fast: Signal<Local, Bit>,
    /// the entry behind the head (`head.n_*`): a WRITE FIRST/MIDDLE/LAST/ONLY; with a RETH;
    /// its MR index; it finds the kept records (as `hit` for the head); its request's end
    n_write: Signal<Local, Bit>,
    n_reth: Signal<Local, Bit>,
    n_mr_idx: Signal<Local, Bits<24>>,
    n_hit: Signal<Local, Bit>,
    n_end: Signal<Local, Bits<65>>,
    /// the entry behind the head: a SEND ONLY (with or without immediate) of the kept QP
    /// whose receive WQE was read ahead (the one this frame's write-back leaves at `rq_ci`)
    n_sendo: Signal<Local, Bit>,
    n_hit_s: Signal<Local, Bit>,
    /// the entry behind the head is a frame the dispatcher would pass (`n_pass`: no verdict
    /// drop, our P_Key, a QP number in range) of the kept QP (`n_rec`: its QpContext, no
    /// other writer's write to it now), whose RqState no other writer writes now either:
    /// what `n_hit` and `n_hit_s` share
    n_pass: Signal<Local, Bit>,
    /// the next frame's QPN is one of the build's (`k_qhi` clear)
    n_qok: Signal<Local, Bit>,
    n_kept: Signal<Local, Bit>,
    em_cmd: Signal<Local, Bit>,
    em_ctx: Signal<Local, Bit>,
    /// the receive WQE's MR (MrRd) is the kept one
    hit_m: Signal<Local, Bit>,
    /// the kept MR is valid and no other writer writes it now (the MR half of every kept-MR
    /// test: this frame's `hit_m`, the WQE read data's `rw_hit`, the next frame's `n_hit`)
    km_ok: Signal<Local, Bit>,
    /// a SEND with payload takes its MR from its receive WQE (a WRITE with immediate has its
    /// RETH MR already): WqeWait's and Decide's choice after the WQE is in
    wqe_mr: Signal<Local, Bit>,
    sn_oth: Signal<Local, Bit>,
    sn_qp: Signal<Local, Bit>,
    sn_rqs: Signal<Local, Bit>,
    sn_rqpi: Signal<Local, Bit>,
    /// another writer's RqState write other than rq_pi: the kept RqState is dropped
    sn_rqs_kill: Signal<Local, Bit>,
    sn_mr: Signal<Local, Bit>,
    rq_base: Signal<Local, Bits<512>>,
    rq_m: Signal<Local, Bits<512>>,
    rqs_wd: Signal<Local, Bits<512>>,
    own_rqs: Signal<Local, Bit>,
    k_src_rx: Constant<Bits<3>>,
    /// QpContext bytes only the requester side writes and the responder never reads
    k_qp_req_be: Constant<Bits<64>>,
    k_rqpi_be: Constant<Bits<64>>,
    mk_rqpi: Constant<Bits<512>>,
    mk_rqs: Constant<Bits<512>>,
    /// ACKNOWLEDGE / READ RESPONSE / ATOMIC ACKNOWLEDGE: only the QpContext is read (no
    /// RqState: `rqs` keeps an older record, which nothing on that path uses).
    rsp_path: Signal<Local, Bit>,
    /// A RETH / READ / atomic request: its MR (R_Key from the header) is read third.
    pre_mr: Signal<Local, Bit>,
    /// Context reads of this packet (1 QP, 2 + RqState, 3 + MR).
    n_reads: Signal<Local, Bits<2>>,
    /// This cycle commits the frame at the head to side effects that include a responder
    /// job (an ACK/NAK, a READ, an ATOMIC ACKNOWLEDGE; an atomic about to be handed to the
    /// unit): with `rsp.ready` low, the frame is dropped instead.
    needs_job: Signal<Local, Bit>,
    // ---- head of the header FIFO, decoded
    pay: Signal<Local, Bits<16>>,
    is_send: Signal<Local, Bit>,
    is_write: Signal<Local, Bit>,
    is_first: Signal<Local, Bit>,
    is_mid: Signal<Local, Bit>,
    is_last: Signal<Local, Bit>,
    is_only: Signal<Local, Bit>,
    has_imm: Signal<Local, Bit>,
    has_reth: Signal<Local, Bit>,
    need_wqe: Signal<Local, Bit>,
    qpn_ok: Signal<Local, Bit>,
    is_ack: Signal<Local, Bit>,
    is_cnp: Signal<Local, Bit>,
    /// READ REQUEST; READ RESPONSE (any position).
    is_rd: Signal<Local, Bit>,
    is_rresp: Signal<Local, Bit>,
    /// CMP_SWAP / FETCH_ADD; ATOMIC ACKNOWLEDGE; an event with a verdict (READ RESPONSE or
    /// ATOMIC ACKNOWLEDGE).
    is_atom: Signal<Local, Bit>,
    is_aack: Signal<Local, Bit>,
    is_rev: Signal<Local, Bit>,
    /// Atomic: QP access REMOTE_ATOMIC; the saved-result ring (head, valid count clamped).
    at_qacc: Signal<Local, Bit>,
    s_ahead: Signal<Local, Bits<8>>,
    s_acnt: Signal<Local, Bits<8>>,
    at_cnt: Signal<Local, Bits<8>>,
    /// READ: QP access REMOTE_READ; DMA length > 2^31 (registered from the header, as `lgt`:
    /// read in Check only, which always follows a cycle with the same head, Decide); PSNs the
    /// request takes (n).
    rd_qacc: Signal<Local, Bit>,
    rd_long: DFF<Bit>,
    rd_n: Signal<Local, Bits<24>>,
    in_send: Signal<Local, Bit>,
    // ---- record fields
    q_state: Signal<Local, Bits<8>>,
    q_access: Signal<Local, Bits<8>>,
    q_rqpn: Signal<Local, Bits<24>>,
    q_pd: Signal<Local, Bits<32>>,
    q_rcqn: Signal<Local, Bits<16>>,
    q_mtu: Signal<Local, Bits<8>>,
    q_sip: Signal<Local, Bits<32>>,
    pkey_ok: Signal<Local, Bit>,
    addr_ok: Signal<Local, Bit>,
    /// RETH DMA length 0 (registered from the header, as `rd_long`)
    zlen: DFF<Bit>,
    /// A WRITE ONLY whose payload is not its RETH DMA length, or a WRITE FIRST's longer than
    /// it (registered from the header, as `rd_long`: the 32-bit compares stay out of Check's
    /// priority chain)
    wl_bad: DFF<Bit>,
    len_bad: Signal<Local, Bit>,
    s_psn: Signal<Local, Bits<24>>,
    s_msn: Signal<Local, Bits<24>>,
    s_pi: Signal<Local, Bits<16>>,
    s_ci: Signal<Local, Bits<16>>,
    s_flags: Signal<Local, Bits<8>>,
    s_va: Signal<Local, Bits<64>>,
    s_left: Signal<Local, Bits<32>>,
    s_off: Signal<Local, Bits<32>>,
    m_key: Signal<Local, Bits<32>>,
    m_pd: Signal<Local, Bits<32>>,
    m_access: Signal<Local, Bits<32>>,
    m_flags: Signal<Local, Bits<32>>,
    w_len: Signal<Local, Bits<32>>,
    w_addr: Signal<Local, Bits<64>>,
    w_lkey: Signal<Local, Bits<32>>,
    psn_diff: Signal<Local, Bits<24>>,
    seq_ok: Signal<Local, Bit>,
    key: Signal<Local, Bits<32>>,
    mr_idx: Signal<Local, Bits<24>>,
    need_acc: Signal<Local, Bits<32>>,
    r_addr: Signal<Local, Bits<64>>,
    r_len: Signal<Local, Bits<64>>,
    mr_ok: Signal<Local, Bit>,
    pay32: Signal<Local, Bits<32>>,
    off_after: Signal<Local, Bits<32>>,
    pay_beats: Signal<Local, Bits<16>>,
    pay_shift: Signal<Local, Bits<2>>,
    // ---- responder FSM
    st: DFF<St>,
    rd_cnt: DFF<Bits<2>>,
    /// This frame's QpContext / RqState read taken; its RqState in.
    q_got: DFF<Bit>,
    s_got: DFF<Bit>,
    s_in: DFF<Bit>,
    take_rqs: Signal<Local, Bit>,
    /// This cycle asks for the QP's records (Idle for a frame of another QP, or QpRd); which
    /// of them this frame has already taken (`s_have` also when it needs no RqState).
    rec_rd: Signal<Local, Bit>,
    q_have: Signal<Local, Bit>,
    s_have: Signal<Local, Bit>,
    /// Kept records. `qp` holds QP `kq_qpn`'s context as the store has it (`kq_v`), and
    /// `rqs` its RqState (`ks_v`): valid from the cycle their reads were taken, every later
    /// write merged (our RqState writes; another writer's rq_pi) or clearing the bit (any
    /// other write by another writer to a field we use, our own write of `state`). A frame of
    /// that QP reads neither: Idle goes straight to Decide (`hitp`).
    kq_v: DFF<Bit>,
    ks_v: DFF<Bit>,
    kq_qpn: DFF<Bits<24>>,
    /// the RqState record's address of `kq_qpn`
    kq_ra: DFF<Bits<CTX_ADDR_BITS>>,
    /// `mr` holds MR `km_idx` (record address `km_a`) as the store has it (`km_v`); its
    /// iova and iova + length (the bounds of a kept-MR frame, compared in Decide)
    km_v: DFF<Bit>,
    km_idx: DFF<Bits<24>>,
    km_a: DFF<Bits<CTX_ADDR_BITS>>,
    ms_iova: DFF<Bits<64>>,
    ms_mend: DFF<Bits<65>>,
    /// Read ahead: while a frame is in Decide, the records of the frame behind it (of another
    /// QP: `pf_go`) are read into `p_qp` / `p_rqs` (QP `p_qpn`, RqState record `p_ra`). Their
    /// tags (`p_q_v`, `p_s_v`) are set when the reads are taken and cleared by another
    /// writer's write to them, as for the kept records; `p_qh` / `p_sh` say the data is in
    /// (the store answers 2 cycles after the grant: `pq1/pq2`, `ps1/ps2`). In the next
    /// frame's Idle they become the kept records (`p_swap`) and the frame goes to Decide as on
    /// a hit; any other Idle with a frame drops them (only the frame in Decide writes records
    /// meanwhile, and those of its own QP).
    p_q_v: DFF<Bit>,
    p_s_v: DFF<Bit>,
    p_qh: DFF<Bit>,
    p_sh: DFF<Bit>,
    p_qpn: DFF<Bits<24>>,
    p_ra: DFF<Bits<CTX_ADDR_BITS>>,
    pq1: DFF<Bit>,
    pq2: DFF<Bit>,
    ps1: DFF<Bit>,
    ps2: DFF<Bit>,
    p_qp: DFF<Bits<512>>,
    p_rqs: DFF<Bits<512>>,
    pf_go: Signal<Local, Bit>,
    /// The read ahead asked for in Idle already (`pf_idle`): a head on the response path
    /// whose records are kept or read ahead (no read of its own) with a READ RESPONSE or
    /// ATOMIC ACKNOWLEDGE of another QP behind it (a QpContext only) has that QP's record
    /// read in Idle, a cycle before Decide would (taken: `pi_tk`, and Decide asks for
    /// none). The ACK processor, which shares the read (`xq_*`), then has the record while
    /// it still decides the event before. (Not for an ACKNOWLEDGE behind: its read is not
    /// shared, and 64 B WRITEs over 2046 QPs went 4.14 -> 4.16 cycles with it.)
    pf_idle: Signal<Local, Bit>,
    n_oth_i: Signal<Local, Bit>,
    pi_tk: DFF<Bit>,
    /// Receive-WQE read-ahead: a frame in Decide (or in Check, when Decide's was not taken)
    /// that would complete its receive WQE asks for the next one (`wa_go`: QP `wa_qpn`, index
    /// `wa_idx` = ci + 1, when both are posted: ci and ci + 1 are not the kept rq_pi);
    /// its data in `wa_data` (`wa_h`) 2 cycles after the grant (`wa1/wa2`). A posted WQE does
    /// not change until it is consumed, so the tag alone says it is current; it is dropped
    /// when the kept RqState is read again, handed over, or written by another writer. A
    /// frame of the kept QP whose receive WQE it is (`wa_hit`) takes it in Idle (`wq_got`)
    /// and reads no ring.
    wa_v: DFF<Bit>,
    wa_h: DFF<Bit>,
    wa_qpn: DFF<Bits<24>>,
    wa_idx: DFF<Bits<16>>,
    wa_data: DFF<Bits<512>>,
    wa1: DFF<Bit>,
    wa2: DFF<Bit>,
    wq_got: DFF<Bit>,
    wa_go: Signal<Local, Bit>,
    wa_hit: Signal<Local, Bit>,
    /// the read-ahead WQE's L_Key, address, range end and whether its MR index is in range,
    /// registered with `wa_data` (the kept-MR check of a SEND that takes it needs no cycle
    /// of its own: Decide compares the range, Check follows)
    wa_key: DFF<Bits<32>>,
    wa_addr: DFF<Bits<64>>,
    wa_end: DFF<Bits<65>>,
    wa_iok: DFF<Bit>,
    /// the read-ahead WQE as Idle or `em_fast` take it: from its registers, or from the
    /// ring's read data in the cycle it arrives (`wx_now`)
    wx_now: Signal<Local, Bit>,
    wx_h: Signal<Local, Bit>,
    wx_data: Signal<Local, Bits<512>>,
    wx_key: Signal<Local, Bits<32>>,
    wx_addr: Signal<Local, Bits<64>>,
    wx_end: Signal<Local, Bits<65>>,
    wx_iok: Signal<Local, Bit>,
    /// a read-ahead of this frame's next WQE was already taken (Decide's; Check asks only
    /// when it was not)
    wa_same: Signal<Local, Bit>,
    /// this frame takes the read-ahead WQE (`wx_*`) into `wqe`, and (a SEND: its MR check is
    /// the WQE's) its range and key into `rq_*` (`take_wr`; a WRITE with immediate checks its
    /// RETH)
    take_wx: Signal<Local, Bit>,
    take_wr: Signal<Local, Bit>,
    /// the receive WQE on the ring's read data (WqeWait): its MR index, whether that is the
    /// kept MR, its range's end
    rw_key: Signal<Local, Bits<32>>,
    rw_idx: Signal<Local, Bits<24>>,
    rw_hit: Signal<Local, Bit>,
    rw_end: Signal<Local, Bits<65>>,
    /// ... its buffer address, and whether its MR index is in range (WqeWait and the
    /// read-ahead's capture load these)
    rw_addr: Signal<Local, Bits<64>>,
    rw_iok: Signal<Local, Bit>,
    /// the entry behind the head is a frame of another QP (registered: the head did not
    /// change at that edge, no frame left Emit)
    n_oth: DFF<Bit>,
    n_rsp: Signal<Local, Bit>,
    /// Early event: while the head waits in RspVd for its verdict, the READ RESPONSE or
    /// ATOMIC ACKNOWLEDGE behind it (`n_rev`) that the dispatcher would pass (no verdict
    /// drop, our P_Key, a QP number in range, addressed to us by its QP record: the kept one
    /// when it is the head's QP, else the one read ahead, `n_sip`/`n_smac`, `n_rec`) has its
    /// event offered to the ACK processor (`ne_ok`); taken, `ev_early` says the frame now
    /// behind the head sent its event, and its Decide goes straight to RspVd. The ACK
    /// processor then reads that event's QP record while it finishes the head's, instead of
    /// after it (one READ RESPONSE event at a time before).
    n_rev: Signal<Local, Bit>,
    n_aack: Signal<Local, Bit>,
    n_rec: Signal<Local, Bit>,
    n_sip: Signal<Local, Bits<32>>,
    n_smac: MacOrder,
    ne_ok: Signal<Local, Bit>,
    /// Idle event: a READ RESPONSE or ATOMIC ACKNOWLEDGE at the head whose event was not sent
    /// early, and which Idle sends on to Decide on records kept (`hit`) or read ahead
    /// (`p_hit`), offers its event in Idle (`ie_ok`, the dispatcher's checks on the record it
    /// goes on with: `addr_ok` on the kept one, `p_sip`/`p_smac` on the one read ahead, which
    /// must be in `p_qp` by now, not coming as `p_qnow`); taken, `ev_early` is set as for an
    /// early event and Decide goes straight to RspVd. The ACK processor then has the event
    /// two cycles sooner than from RspEv, and the frame waits in RspVd while the records of
    /// the frame behind it come (with READ RESPONSEs of one message each on other QPs an
    /// early event, sent in RspVd, came for every second frame only: the frame behind's
    /// records come two cycles after its Decide).
    ie_ok: Signal<Local, Bit>,
    p_sip: Signal<Local, Bits<32>>,
    p_smac: MacOrder,
    ev_early: DFF<Bit>,
    /// This block's QpContext reads as the ACK processor sees them (`ackev.xq_*`): a read of
    /// the head's QP (`take_qp`) or the frame behind's (`take_pq`) granted, for a READ
    /// RESPONSE or ATOMIC ACKNOWLEDGE, registered (`xq_gr`, `xq_qr`), and the port's read
    /// data. With READ RESPONSEs on other QPs the event of the frame behind comes only once
    /// that record is in here, too late for the ACK processor to read it ahead itself; a
    /// read of its own took the store's port from this block's read (tried: 64 B READs over
    /// 2046 QPs 5.60 -> 5.99 cycles). Not for ACKNOWLEDGEs (tried: 64 B WRITEs over 2046 QPs
    /// 4.14 -> 4.18 cycles with them, READs the same).
    xq_gr: DFF<Bit>,
    xq_qr: DFF<Bits<24>>,
    /// `st == RspVd`, or Emit after RspVd (`vd_em`: the head's payload placed, its event
    /// long sent, so the frame behind may still send its event early), as a register of its
    /// own (from the next-state value): the event's field select starts at one flip-flop, not
    /// at a decode of `st`
    in_vd: DFF<Bit>,
    vd_em: DFF<Bit>,
    /// the event's fields: the head's, or in RspVd the frame's behind it
    e_op: Signal<Local, Bits<8>>,
    e_pay: Signal<Local, Bits<16>>,
    take_pq: Signal<Local, Bit>,
    take_ps: Signal<Local, Bit>,
    sn_pq: Signal<Local, Bit>,
    sn_ps: Signal<Local, Bit>,
    p_psn: Signal<Local, Bits<24>>,
    p_hit: Signal<Local, Bit>,
    /// The QpContext read ahead comes this cycle (`pq2` with the store's data): an ACK,
    /// READ RESPONSE or ATOMIC ACKNOWLEDGE (which needs no RqState) takes it as it comes.
    p_qnow: Signal<Local, Bit>,
    p_swap: Signal<Local, Bit>,
    /// this frame took the kept records
    hitp: DFF<Bit>,
    /// this frame read its QP records but took the kept MR (no MR read: the records' reads go
    /// to WaitCtx; Decide compares its bounds as for `hitp`)
    hitm: DFF<Bit>,
    /// and its receive WQE's ring read was taken with the decision to take them (Idle)
    wq_pre: DFF<Bit>,
    /// this frame's RqState write was taken (merged into `rqs` as the frame leaves Emit)
    wr_done: DFF<Bit>,
    qp: DFF<Bits<512>>,
    rqs: DFF<Bits<512>>,
    mr: DFF<Bits<512>>,
    wqe: DFF<Bits<512>>,
    pend_cmd: DFF<Bit>,
    pend_cpl: DFF<Bit>,
    pend_ack: DFF<Bit>,
    pend_wr: DFF<Bit>,
    pend_job: DFF<Bit>,
    pend_aev: DFF<Bit>,
    /// Class A/C error: write `QpContext.state = ERR` after the `RqState` write.
    pend_qerr: DFF<Bit>,
    /// Opcode-sequence error in a multi-packet SEND: the receive WQE is read only to complete
    /// it with an error (WqeWait goes straight to Emit).
    wqe_flush: DFF<Bit>,
    /// The job is a READ (`rsp.read`); the READ request is a duplicate.
    resp_read: DFF<Bit>,
    rd_dup: DFF<Bit>,
    /// An ok READ RESPONSE verdict: `rdv.placed` once its DMA command is taken.
    rd_place: DFF<Bit>,
    /// The atomic at the head is a duplicate (a look-up); the job is an ATOMIC ACKNOWLEDGE
    /// (`rsp.atomic`) with `resp_orig`.
    at_dup: DFF<Bit>,
    // the request's side of the MR check, registered from the header / receive WQE (both
    // stable for at least a cycle before Decide / Check use them): key, address, end
    // (address + length, 65 bits), access needed, index in range
    rq_key: DFF<Bits<32>>,
    rq_addr: DFF<Bits<64>>,
    rq_end: DFF<Bits<65>>,
    rq_acc: DFF<Bits<32>>,
    rq_idx_ok: DFF<Bit>,
    /// The MR record's end (iova + length, 65 bits), loaded with `mr`.
    /// the MR bounds compares, registered with the MR record: rq_addr >= iova and
    /// rq_end <= iova + len (the request's bounds are in their registers by then)
    mr_lo: DFF<Bit>,
    mr_hi: DFF<Bit>,
    rd_mend: Signal<Local, Bits<65>>,
    rd_iova: Signal<Local, Bits<64>>,
    rd_lo: Signal<Local, Bit>,
    rd_hi: Signal<Local, Bit>,
    /// The header's PSN minus the RqState's expected PSN, loaded with `rqs` (the head does
    /// not change while its records are read).
    pdiff: DFF<Bits<24>>,
    /// The payload against each path MTU 256..4096 (bit m-1 for MTU code m), registered from
    /// the header: longer than it (`lgt`), not equal to it (`lne`); the QP's MTU selects.
    lgt: DFF<Bits<5>>,
    lne: DFF<Bits<5>>,
    /// The QP's path MTU as an index, registered from the record: read in Check only, which
    /// always follows a cycle with the record in place (Decide, MrWait, MrKeep, WqeWait).
    mtu_sel: DFF<Bits<3>>,
    pay_gt_mtu: Signal<Local, Bit>,
    pay_ne_mtu: Signal<Local, Bit>,
    // a READ's PSN count max(1, ceil(len / MTU)) for each path MTU 256..4096, registered from
    // the header (the QP's MTU only selects one: no variable shift before the PSN add)
    rdc1: DFF<Bits<24>>,
    rdc2: DFF<Bits<24>>,
    rdc3: DFF<Bits<24>>,
    rdc4: DFF<Bits<24>>,
    rdc5: DFF<Bits<24>>,
    rd_len33: Signal<Local, Bits<33>>,
    rd_s1: Signal<Local, Bits<33>>,
    rd_s2: Signal<Local, Bits<33>>,
    rd_s3: Signal<Local, Bits<33>>,
    rd_s4: Signal<Local, Bits<33>>,
    rd_s5: Signal<Local, Bits<33>>,
    resp_atom: DFF<Bit>,
    resp_orig: DFF<Bits<64>>,
    next_ahead: DFF<Bits<8>>,
    next_acnt: DFF<Bits<8>>,
    resp_syn: DFF<Bits<8>>,
    resp_psn: DFF<Bits<24>>,
    cqe_status: DFF<Bits<8>>,
    cqe_op: DFF<Bits<8>>,
    cqe_flags: DFF<Bits<8>>,
    cqe_len: DFF<Bits<32>>,
    dma_addr: DFF<Bits<64>>,
    dma_len: DFF<Bits<14>>,
    mv_beats: DFF<Bits<7>>,
    next_psn: DFF<Bits<24>>,
    next_msn: DFF<Bits<24>>,
    next_ci: DFF<Bits<16>>,
    next_flags: DFF<Bits<8>>,
    next_va: DFF<Bits<64>>,
    next_rkey: DFF<Bits<32>>,
    next_left: DFF<Bits<32>>,
    next_off: DFF<Bits<32>>,
    // ---- counters
    ct_rx_req: DFF<Bits<32>>,
    ct_rx_dup: DFF<Bits<32>>,
    ct_nak_seq: DFF<Bits<32>>,
    ct_nak_acc: DFF<Bits<32>>,
    ct_nak_inv: DFF<Bits<32>>,
    ct_nak_rnr: DFF<Bits<32>>,
    ct_drop_qp: DFF<Bits<32>>,
    ct_drop_op: DFF<Bits<32>>,
    ct_drop_pkey: DFF<Bits<32>>,
    ct_drop_addr: DFF<Bits<32>>,
    ct_rx_cnp: DFF<Bits<32>>,
    ct_rx_read: DFF<Bits<32>>,
    ct_rx_atomic: DFF<Bits<32>>,
    ct_atom_dup: DFF<Bits<32>>,
    ct_atom_miss: DFF<Bits<32>>,
    ct_drop_busy: DFF<Bits<32>>,
}

impl Responder {
    pub fn new(p: &BuildParams) -> Self {
        let ext = rxparse::EXT_OFF as u64;
        let po = [
            ext,
            ext + roce::IMMDT_BYTES as u64,
            ext + roce::RETH_BYTES as u64,
            ext + (roce::RETH_BYTES + roce::IMMDT_BYTES) as u64,
        ];
        Responder {
            clock: Default::default(),
            rst: Default::default(),
            ctx: Default::default(),
            ctxb: Default::default(),
            sn: Default::default(),
            ring: Default::default(),
            cpl: Default::default(),
            rsp: Default::default(),
            ackev: Default::default(),
            rdv: Default::default(),
            atom: Default::default(),
            head: Default::default(),
            job: Default::default(),
            cmd_valid: Default::default(),
            cmd_ready: Default::default(),
            cmd_addr: Default::default(),
            cmd_len: Default::default(),
            dmac_order: Default::default(),
            smac_order: Default::default(),
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
            k_pkey15: k(0x7FFF),
            k_qhi: k(p.qpn_high_mask() as u64),
            k_nmr: k(p.num_mrs as u64),
            k_rqs_base: k(p.ctx_base(3) as u64),
            k_mr_base: k(p.ctx_base(2) as u64),
            rqslot: RingSlot::rq(p),
            k_rqs_wbe: k(rqs_wbe()),
            k_po: po.map(k),
            k_op_sf: k(opcode::SEND_FIRST as u64),
            k_op_sm: k(opcode::SEND_MIDDLE as u64),
            k_op_sl: k(opcode::SEND_LAST as u64),
            k_op_sli: k(opcode::SEND_LAST_IMM as u64),
            k_op_so: k(opcode::SEND_ONLY as u64),
            k_op_soi: k(opcode::SEND_ONLY_IMM as u64),
            k_op_wf: k(opcode::WRITE_FIRST as u64),
            k_op_wm: k(opcode::WRITE_MIDDLE as u64),
            k_op_wl: k(opcode::WRITE_LAST as u64),
            k_op_wli: k(opcode::WRITE_LAST_IMM as u64),
            k_op_wo: k(opcode::WRITE_ONLY as u64),
            k_op_woi: k(opcode::WRITE_ONLY_IMM as u64),
            k_op_rd: k(opcode::READ_REQUEST as u64),
            k_op_rrf: k(opcode::READ_RESPONSE_FIRST as u64),
            k_op_rrm: k(opcode::READ_RESPONSE_MIDDLE as u64),
            k_op_rrl: k(opcode::READ_RESPONSE_LAST as u64),
            k_op_rro: k(opcode::READ_RESPONSE_ONLY as u64),
            k_rpos_f: k(RSP_FIRST),
            k_rpos_m: k(RSP_MIDDLE),
            k_rpos_l: k(RSP_LAST),
            k_rpos_o: k(RSP_ONLY),
            k_rd_max: k(1 << 31),
            k_op_ack: k(opcode::ACKNOWLEDGE as u64),
            k_op_aack: k(opcode::ATOMIC_ACKNOWLEDGE as u64),
            k_op_cs: k(opcode::COMPARE_SWAP as u64),
            k_op_fa: k(opcode::FETCH_ADD as u64),
            k_acc_ra: k(access::REMOTE_ATOMIC as u64),
            k_syn_op: k(aeth::NAK_REM_OP_ERR as u64),
            k_ares: k(ATOMIC_RESOURCES as u64),
            k_ares_mask: k(ATOMIC_RESOURCES as u64 - 1),
            k_op_cnp: k(opcode::CNP as u64),
            k_err: k(qp_state::ERR as u64),
            k_state_be: field_be(QpContext::FIELDS, &["state"]),
            k_rnr_mask: k(0x1F),
            k_ws_inv: k(wc_status::REM_INV_REQ_ERR as u64),
            k_rtr: k(qp_state::RTR as u64),
            k_rts: k(qp_state::RTS as u64),
            k_acc_rw: k(access::REMOTE_WRITE as u64),
            k_acc_rr: k(access::REMOTE_READ as u64),
            k_acc_lw: k(access::LOCAL_WRITE as u64),
            k_f_send: k(rqs_flag::IN_SEND as u64),
            k_f_write: k(rqs_flag::IN_WRITE as u64),
            k_f_nak: k(rqs_flag::NAK_SENT as u64),
            k_f_bad: k(rqs_flag::WRITE_BAD as u64),
            k_syn_ack: k(aeth::ACK as u64),
            k_syn_rnr: k((aeth::KIND_RNR as u64) << 5),
            k_syn_seq: k(aeth::NAK_PSN_SEQ_ERR as u64),
            k_syn_inv: k(aeth::NAK_INV_REQ as u64),
            k_syn_acc: k(aeth::NAK_REM_ACCESS as u64),
            k_ws_ok: k(wc_status::SUCCESS as u64),
            k_ws_len: k(wc_status::LOC_LEN_ERR as u64),
            k_ws_prot: k(wc_status::LOC_PROT_ERR as u64),
            k_wo_recv: k(wc_op::RECV as u64),
            k_wo_imm: k(wc_op::RECV_RDMA_WITH_IMM as u64),
            k_cf_imm: k(cqe_flag::WITH_IMM as u64),
            o_q_state: qf("state"),
            o_q_mtu: qf("path_mtu"),
            o_q_access: qf("access"),
            o_q_rqpn: qf("remote_qpn"),
            o_q_dmac: qf("dest_mac"),
            o_q_sport: qf("udp_sport"),
            o_q_dip: qf("dest_ip"),
            o_q_sip: qf("src_ip"),
            o_q_ackci: qf("sq_ack_ci"),
            o_q_sqci: qf("sq_ci"),
            rd_gap: Default::default(),
            k_hv: Default::default(),
            p_hv: Default::default(),
            h_k: Default::default(),
            o_q_pd: qf("pd"),
            o_q_rcqn: qf("recv_cqn"),
            o_q_smac: qf("src_mac"),
            o_q_rnrt: qf("min_rnr_timer"),
            o_q_tc: qf("traffic_class"),
            o_s_psn: sf("rq_psn"),
            o_s_msn: sf("msn"),
            o_s_pi: sf("rq_pi"),
            o_s_ci: sf("rq_ci"),
            o_s_flags: sf("flags"),
            o_s_va: sf("wr_va"),
            o_s_rkey: sf("wr_rkey"),
            o_s_left: sf("wr_left"),
            o_s_off: sf("recv_off"),
            o_s_ahead: sf("atom_head"),
            o_s_acnt: sf("atom_cnt"),
            o_m_key: mf("key"),
            o_m_pd: mf("pd"),
            o_m_iova: mf("iova"),
            o_m_len: mf("length"),
            o_m_access: mf("access"),
            o_m_flags: mf("flags"),
            o_w_len: wf("length"),
            o_w_wrid: wf("wr_id"),
            o_w_addr: wf("local_addr"),
            o_w_lkey: wf("lkey"),
            mv_first: Default::default(),
            capture_ctx: Default::default(),
            rsp_path: Default::default(),
            pre_mr: Default::default(),
            n_reads: Default::default(),
            needs_job: Default::default(),
            pay: Default::default(),
            is_send: Default::default(),
            is_write: Default::default(),
            is_first: Default::default(),
            is_mid: Default::default(),
            is_last: Default::default(),
            is_only: Default::default(),
            has_imm: Default::default(),
            has_reth: Default::default(),
            need_wqe: Default::default(),
            qpn_ok: Default::default(),
            is_ack: Default::default(),
            is_cnp: Default::default(),
            is_rd: Default::default(),
            is_rresp: Default::default(),
            is_atom: Default::default(),
            is_aack: Default::default(),
            is_rev: Default::default(),
            at_qacc: Default::default(),
            s_ahead: Default::default(),
            s_acnt: Default::default(),
            at_cnt: Default::default(),
            rd_qacc: Default::default(),
            rd_long: Default::default(),
            rd_n: Default::default(),
            in_send: Default::default(),
            q_state: Default::default(),
            q_access: Default::default(),
            q_rqpn: Default::default(),
            q_pd: Default::default(),
            q_rcqn: Default::default(),
            q_mtu: Default::default(),
            q_sip: Default::default(),
            pkey_ok: Default::default(),
            addr_ok: Default::default(),
            zlen: Default::default(),
            wl_bad: Default::default(),
            len_bad: Default::default(),
            s_psn: Default::default(),
            s_msn: Default::default(),
            s_pi: Default::default(),
            s_ci: Default::default(),
            s_flags: Default::default(),
            s_va: Default::default(),
            s_left: Default::default(),
            s_off: Default::default(),
            m_key: Default::default(),
            m_pd: Default::default(),
            m_access: Default::default(),
            m_flags: Default::default(),
            w_len: Default::default(),
            w_addr: Default::default(),
            w_lkey: Default::default(),
            psn_diff: Default::default(),
            seq_ok: Default::default(),
            key: Default::default(),
            mr_idx: Default::default(),
            need_acc: Default::default(),
            r_addr: Default::default(),
            r_len: Default::default(),
            mr_ok: Default::default(),
            pay32: Default::default(),
            off_after: Default::default(),
            pay_beats: Default::default(),
            pay_shift: Default::default(),
            st: Default::default(),
            rd_cnt: Default::default(),
            q_got: Default::default(),
            s_got: Default::default(),
            s_in: Default::default(),
            take_rqs: Default::default(),
            rec_rd: Default::default(),
            q_have: Default::default(),
            s_have: Default::default(),
            kq_v: Default::default(),
            ks_v: Default::default(),
            kq_qpn: Default::default(),
            kq_ra: Default::default(),
            km_v: Default::default(),
            km_idx: Default::default(),
            km_a: Default::default(),
            ms_iova: Default::default(),
            ms_mend: Default::default(),
            p_q_v: Default::default(),
            p_s_v: Default::default(),
            p_qh: Default::default(),
            p_sh: Default::default(),
            p_qpn: Default::default(),
            p_ra: Default::default(),
            pq1: Default::default(),
            pq2: Default::default(),
            ps1: Default::default(),
            ps2: Default::default(),
            p_qp: Default::default(),
            p_rqs: Default::default(),
            pf_go: Default::default(),
            pf_idle: Default::default(),
            n_oth_i: Default::default(),
            pi_tk: Default::default(),
            wa_v: Default::default(),
            wa_h: Default::default(),
            wa_qpn: Default::default(),
            wa_idx: Default::default(),
            wa_data: Default::default(),
            wa1: Default::default(),
            wa2: Default::default(),
            wq_got: Default::default(),
            wa_go: Default::default(),
            wa_hit: Default::default(),
            wa_key: Default::default(),
            wa_addr: Default::default(),
            wa_end: Default::default(),
            wa_iok: Default::default(),
            wx_now: Default::default(),
            wx_h: Default::default(),
            wx_data: Default::default(),
            wx_key: Default::default(),
            wx_addr: Default::default(),
            wx_end: Default::default(),
            wx_iok: Default::default(),
            wa_same: Default::default(),
            take_wx: Default::default(),
            take_wr: Default::default(),
            rw_key: Default::default(),
            rw_idx: Default::default(),
            rw_hit: Default::default(),
            rw_end: Default::default(),
            rw_addr: Default::default(),
            rw_iok: Default::default(),
            n_oth: Default::default(),
            n_rsp: Default::default(),
            n_rev: Default::default(),
            n_aack: Default::default(),
            n_rec: Default::default(),
            n_sip: Default::default(),
            n_smac: Default::default(),
            ne_ok: Default::default(),
            ie_ok: Default::default(),
            p_sip: Default::default(),
            p_smac: Default::default(),
            ev_early: Default::default(),
            xq_gr: Default::default(),
            xq_qr: Default::default(),
            in_vd: Default::default(),
            vd_em: Default::default(),
            e_op: Default::default(),
            e_pay: Default::default(),
            take_pq: Default::default(),
            take_ps: Default::default(),
            sn_pq: Default::default(),
            sn_ps: Default::default(),
            p_psn: Default::default(),
            p_hit: Default::default(),
            p_qnow: Default::default(),
            p_swap: Default::default(),
            hitp: Default::default(),
            hitm: Default::default(),
            wq_pre: Default::default(),
            hit_m: Default::default(),
            km_ok: Default::default(),
            wqe_mr: Default::default(),
            hit: Default::default(),
            take_qp: Default::default(),
            em_exit: Default::default(),
            em_fast: Default::default(),
            n_write: Default::default(),
            n_reth: Default::default(),
            n_mr_idx: Default::default(),
            n_hit: Default::default(),
            n_sendo: Default::default(),
            n_hit_s: Default::default(),
            n_pass: Default::default(),
            n_qok: Default::default(),
            n_kept: Default::default(),
            n_end: Default::default(),
            em_cmd: Default::default(),
            em_ctx: Default::default(),
            wr_done: Default::default(),
            sn_oth: Default::default(),
            sn_qp: Default::default(),
            sn_rqs: Default::default(),
            sn_rqpi: Default::default(),
            sn_rqs_kill: Default::default(),
            sn_mr: Default::default(),
            rq_base: Default::default(),
            rq_m: Default::default(),
            rqs_wd: Default::default(),
            own_rqs: Default::default(),
            k_src_rx: k(CTX_SRC_RX),
            k_qp_req_be: field_be(QpContext::FIELDS, &QPC_REQUESTER_FIELDS),
            k_rqpi_be: k(dbunit::rq_pi_be()),
            mk_rqpi: be_bits(dbunit::rq_pi_be()),
            mk_rqs: be_bits(rqs_wbe()),
            qp: Default::default(),
            rqs: Default::default(),
            mr: Default::default(),
            wqe: Default::default(),
            pend_cmd: Default::default(),
            pend_cpl: Default::default(),
            pend_ack: Default::default(),
            pend_wr: Default::default(),
            pend_job: Default::default(),
            pend_aev: Default::default(),
            pend_qerr: Default::default(),
            wqe_flush: Default::default(),
            resp_read: Default::default(),
            rd_dup: Default::default(),
            rd_place: Default::default(),
            at_dup: Default::default(),
            rq_key: Default::default(),
            rq_addr: Default::default(),
            rq_end: Default::default(),
            rq_acc: Default::default(),
            rq_idx_ok: Default::default(),
            mr_lo: Default::default(),
            mr_hi: Default::default(),
            rd_mend: Default::default(),
            rd_iova: Default::default(),
            rd_lo: Default::default(),
            rd_hi: Default::default(),
            pdiff: Default::default(),
            lgt: Default::default(),
            lne: Default::default(),
            mtu_sel: Default::default(),
            pay_gt_mtu: Default::default(),
            pay_ne_mtu: Default::default(),
            rdc1: Default::default(),
            rdc2: Default::default(),
            rdc3: Default::default(),
            rdc4: Default::default(),
            rdc5: Default::default(),
            rd_len33: Default::default(),
            rd_s1: Default::default(),
            rd_s2: Default::default(),
            rd_s3: Default::default(),
            rd_s4: Default::default(),
            rd_s5: Default::default(),
            resp_atom: Default::default(),
            resp_orig: Default::default(),
            next_ahead: Default::default(),
            next_acnt: Default::default(),
            resp_syn: Default::default(),
            resp_psn: Default::default(),
            cqe_status: Default::default(),
            cqe_op: Default::default(),
            cqe_flags: Default::default(),
            cqe_len: Default::default(),
            dma_addr: Default::default(),
            dma_len: Default::default(),
            mv_beats: Default::default(),
            next_psn: Default::default(),
            next_msn: Default::default(),
            next_ci: Default::default(),
            next_flags: Default::default(),
            next_va: Default::default(),
            next_rkey: Default::default(),
            next_left: Default::default(),
            next_off: Default::default(),
            ct_rx_req: Default::default(),
            ct_rx_dup: Default::default(),
            ct_nak_seq: Default::default(),
            ct_nak_acc: Default::default(),
            ct_nak_inv: Default::default(),
            ct_nak_rnr: Default::default(),
            ct_drop_qp: Default::default(),
            ct_drop_op: Default::default(),
            ct_drop_pkey: Default::default(),
            ct_drop_addr: Default::default(),
            ct_rx_cnp: Default::default(),
            ct_rx_read: Default::default(),
            ct_rx_atomic: Default::default(),
            ct_atom_dup: Default::default(),
            ct_atom_miss: Default::default(),
            ct_drop_busy: Default::default(),
        }
    }
}

impl Logic for Responder {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            st,
            rd_cnt,
            q_got,
            s_got,
            s_in,
            kq_v,
            ks_v,
            kq_qpn,
            kq_ra,
            km_v,
            km_idx,
            km_a,
            ms_iova,
            ms_mend,
            hitp,
            hitm,
            wq_pre,
            wr_done,
            qp,
            rqs,
            mr,
            wqe,
            pend_cmd,
            pend_cpl,
            pend_ack,
            pend_wr,
            pend_job,
            pend_aev,
            pend_qerr,
            wqe_flush,
            resp_read,
            rd_dup,
            rd_place,
            resp_syn,
            resp_psn,
            cqe_status,
            cqe_op,
            cqe_flags,
            cqe_len,
            dma_addr,
            dma_len,
            mv_beats,
            next_psn,
            next_msn,
            next_ci,
            next_flags,
            next_va,
            next_rkey,
            next_left,
            next_off,
            ct_rx_req,
            ct_rx_dup,
            ct_nak_seq,
            ct_nak_acc,
            ct_nak_inv,
            ct_nak_rnr,
            ct_drop_qp,
            ct_drop_op,
            ct_drop_pkey,
            ct_drop_addr,
            ct_rx_cnp,
            ct_rx_read
        );
        dff_setup!(self, clock, rd_long, zlen, wl_bad);
        dff_setup!(
            self,
            clock,
            ev_early,
            xq_gr,
            xq_qr,
            in_vd,
            vd_em,
            k_hv,
            p_hv,
            at_dup,
            rq_key,
            rq_addr,
            rq_end,
            rq_acc,
            rq_idx_ok,
            mr_lo,
            mr_hi,
            pdiff,
            lgt,
            lne,
            mtu_sel,
            rdc1,
            rdc2,
            rdc3,
            rdc4,
            rdc5,
            resp_atom,
            resp_orig,
            next_ahead,
            next_acnt,
            ct_rx_atomic,
            ct_atom_dup,
            ct_atom_miss,
            ct_drop_busy,
            p_q_v,
            p_s_v,
            p_qh,
            p_sh,
            p_qpn,
            p_ra,
            pq1,
            pq2,
            ps1,
            ps2,
            p_qp,
            p_rqs,
            n_oth,
            pi_tk,
            wa_v,
            wa_h,
            wa_qpn,
            wa_idx,
            wa_data,
            wa1,
            wa2,
            wq_got,
            wa_key,
            wa_addr,
            wa_end,
            wa_iok
        );
        // =========================================================== head fields
        self.pay.next = self.head.data_len.val();
        self.pay32.next = bit_cast::<32, 16>(self.pay.val());
        self.is_first.next = self.head.opcode.val() == self.k_op_sf.val()
            || self.head.opcode.val() == self.k_op_wf.val();
        self.is_mid.next = self.head.opcode.val() == self.k_op_sm.val()
            || self.head.opcode.val() == self.k_op_wm.val();
        self.is_last.next = self.head.opcode.val() == self.k_op_sl.val()
            || self.head.opcode.val() == self.k_op_sli.val()
            || self.head.opcode.val() == self.k_op_wl.val()
            || self.head.opcode.val() == self.k_op_wli.val();
        self.is_only.next = self.head.opcode.val() == self.k_op_so.val()
            || self.head.opcode.val() == self.k_op_soi.val()
            || self.head.opcode.val() == self.k_op_wo.val()
            || self.head.opcode.val() == self.k_op_woi.val();
        self.has_imm.next = self.head.opcode.val() == self.k_op_sli.val()
            || self.head.opcode.val() == self.k_op_soi.val()
            || self.head.opcode.val() == self.k_op_wli.val()
            || self.head.opcode.val() == self.k_op_woi.val();
        self.is_send.next = self.head.opcode.val() <= self.k_op_soi.val();
        self.is_write.next = self.head.opcode.val() >= self.k_op_wf.val()
            && self.head.opcode.val() <= self.k_op_woi.val();
        self.has_reth.next = self.is_write.val() && (self.is_first.val() || self.is_only.val());
        self.need_wqe.next = self.is_send.val() || (self.is_write.val() && self.has_imm.val());
        self.qpn_ok.next = !(self.head.qpn.val() & self.k_qhi.val()).any();
        self.is_ack.next = self.head.opcode.val() == self.k_op_ack.val();
        self.is_cnp.next = self.head.opcode.val() == self.k_op_cnp.val();
        self.is_rd.next = self.head.opcode.val() == self.k_op_rd.val();
        self.is_rresp.next = self.head.opcode.val() >= self.k_op_rrf.val()
            && self.head.opcode.val() <= self.k_op_rro.val();
        self.is_atom.next = self.head.opcode.val() == self.k_op_cs.val()
            || self.head.opcode.val() == self.k_op_fa.val();
        self.is_aack.next = self.head.opcode.val() == self.k_op_aack.val();
        self.is_rev.next = self.is_rresp.val() || self.is_aack.val();
        // payload offset -> shift select; beats of payload
        self.pay_shift.next = 0.into();
        if self.head.pay_off.val() == self.k_po[1].val() {
            self.pay_shift.next = 1.into();
        }
        if self.head.pay_off.val() == self.k_po[2].val() {
            self.pay_shift.next = 2.into();
        }
        if self.head.pay_off.val() == self.k_po[3].val() {
            self.pay_shift.next = 3.into();
        }
        self.pay_beats.next = (self.pay.val() + 63) >> 6;

        // =========================================================== record fields
        self.q_state.next = self.qp.q.val().get_bits::<8>(self.o_q_state.val().index());
        self.q_access.next = self.qp.q.val().get_bits::<8>(self.o_q_access.val().index());
        self.q_rqpn.next = self.qp.q.val().get_bits::<24>(self.o_q_rqpn.val().index());
        self.q_pd.next = self.qp.q.val().get_bits::<32>(self.o_q_pd.val().index());
        self.q_rcqn.next = self.qp.q.val().get_bits::<16>(self.o_q_rcqn.val().index());
        self.q_mtu.next = self.qp.q.val().get_bits::<8>(self.o_q_mtu.val().index());
        self.q_sip.next = self.qp.q.val().get_bits::<32>(self.o_q_sip.val().index());
        // P_Key: ours is the default 0xFFFF (full member); a packet's P_Key matches when its
        // low 15 bits do (full or limited membership, IBTA 10.9.3). Destination IPv4 and MAC:
        // ours are the QP context's source fields (the ones txreq puts in our frames).
        self.pkey_ok.next = (self.head.pkey.val() & self.k_pkey15.val()) == self.k_pkey15.val();
        self.addr_ok.next = self.head.dip.val() == self.q_sip.val()
            && self.head.dmac.val() == self.smac_order.wire_order.val();
        self.s_psn.next = self.rqs.q.val().get_bits::<24>(self.o_s_psn.val().index());
        self.s_msn.next = self.rqs.q.val().get_bits::<24>(self.o_s_msn.val().index());
        self.s_pi.next = self.rqs.q.val().get_bits::<16>(self.o_s_pi.val().index());
        self.s_ci.next = self.rqs.q.val().get_bits::<16>(self.o_s_ci.val().index());
        self.s_flags.next = self.rqs.q.val().get_bits::<8>(self.o_s_flags.val().index());
        self.s_va.next = self.rqs.q.val().get_bits::<64>(self.o_s_va.val().index());
        self.s_left.next = self.rqs.q.val().get_bits::<32>(self.o_s_left.val().index());
        self.s_off.next = self.rqs.q.val().get_bits::<32>(self.o_s_off.val().index());
        self.s_ahead.next = self.rqs.q.val().get_bits::<8>(self.o_s_ahead.val().index());
        self.s_acnt.next = self.rqs.q.val().get_bits::<8>(self.o_s_acnt.val().index());
        self.at_cnt.next = self.s_acnt.val();
        if self.s_acnt.val() > self.k_ares.val() {
            self.at_cnt.next = self.k_ares.val();
        }
        self.at_qacc.next =
            (self.q_access.val().get_bits::<8>(0) & self.k_acc_ra.val().get_bits::<8>(0)).any();
        self.m_key.next = self.mr.q.val().get_bits::<32>(self.o_m_key.val().index());
        self.m_pd.next = self.mr.q.val().get_bits::<32>(self.o_m_pd.val().index());
        self.m_access.next = self
            .mr
            .q
            .val()
            .get_bits::<32>(self.o_m_access.val().index());
        self.m_flags.next = self.mr.q.val().get_bits::<32>(self.o_m_flags.val().index());
        self.w_len.next = self.wqe.q.val().get_bits::<32>(self.o_w_len.val().index());
        self.w_addr.next = self.wqe.q.val().get_bits::<64>(self.o_w_addr.val().index());
        self.w_lkey.next = self.wqe.q.val().get_bits::<32>(self.o_w_lkey.val().index());
        self.in_send.next = (self.s_flags.val() & self.k_f_send.val()).any();
        // PSN position and opcode sequence
        self.psn_diff.next = self.pdiff.q.val();
        self.seq_ok.next =
            self.is_first.val() || self.is_only.val() || self.is_rd.val() || self.is_atom.val();
        if (self.s_flags.val() & self.k_f_send.val()).any() {
            self.seq_ok.next = self.is_send.val() && (self.is_mid.val() || self.is_last.val());
        } else if (self.s_flags.val() & self.k_f_write.val()).any() {
            self.seq_ok.next = self.is_write.val() && (self.is_mid.val() || self.is_last.val());
        }
        // MR check (WRITE: RETH against the rkey's MR; SEND: receive WQE against the lkey's)
        self.key.next = self.w_lkey.val();
        self.r_addr.next = self.w_addr.val();
        self.r_len.next = bit_cast::<64, 32>(self.w_len.val());
        self.need_acc.next = self.k_acc_lw.val();
        if self.is_write.val() || self.is_rd.val() || self.is_atom.val() {
            self.key.next = self.head.rkey.val();
            self.r_addr.next = self.head.va.val();
            self.r_len.next = bit_cast::<64, 32>(self.head.rlen.val());
            self.need_acc.next = self.k_acc_rw.val();
        }
        if self.is_rd.val() {
            self.need_acc.next = self.k_acc_rr.val();
        }
        if self.is_atom.val() {
            // atomic: [va, va + 8) with MR access REMOTE_ATOMIC
            self.need_acc.next = self.k_acc_ra.val();
            self.r_len.next = 8.into();
        }
        self.mr_idx.next = bit_cast::<24, 32>(self.key.val() >> 8);
        self.rsp_path.next = self.is_ack.val() || self.is_rev.val();
        self.pre_mr.next = self.has_reth.val() || self.is_rd.val() || self.is_atom.val();
        self.wqe_mr.next = !self.has_reth.val() && self.is_send.val() && self.pay.val().any();
        // reads on `ctx`: the QpContext, then a RETH / READ / atomic request's MR (the
        // RqState comes on `ctxb`)
        self.n_reads.next = 1.into();
        if self.pre_mr.val() && !self.hitm.q.val() {
            self.n_reads.next = 2.into();
        }
        // [addr, addr + len) inside [iova, iova + len of the MR), in 65 bits (no wrap): the
        // request's side comes from registers (the check's depth, docs/BENCHMARKS.md)
        self.rq_key.d.next = self.key.val();
        self.rq_addr.d.next = self.r_addr.val();
        self.rq_end.d.next =
            bit_cast::<65, 64>(self.r_addr.val()) + bit_cast::<65, 64>(self.r_len.val());
        self.rq_acc.d.next = self.need_acc.val();
        self.rq_idx_ok.d.next = self.mr_idx.val() < self.k_nmr.val();
        self.rd_iova.next = self
            .ctx
            .rdata
            .val()
            .get_bits::<64>(self.o_m_iova.val().index());
        self.rd_mend.next = bit_cast::<65, 64>(self.rd_iova.val())
            + bit_cast::<65, 64>(
                self.ctx
                    .rdata
                    .val()
                    .get_bits::<64>(self.o_m_len.val().index()),
            );
        // the bounds compares on the MR record as it is read (both places that load `mr`)
        self.rd_lo.next = self.rq_addr.q.val() >= self.rd_iova.val();
        self.rd_hi.next = self.rq_end.q.val() <= self.rd_mend.val();
        self.mr_ok.next = self.rq_idx_ok.q.val()
            && self.m_flags.val().get_bit(0)
            && self.m_key.val() == self.rq_key.q.val()
            && self.m_pd.val() == self.q_pd.val()
            && (self.m_access.val() & self.rq_acc.q.val()).any()
            && self.mr_lo.q.val()
            && self.mr_hi.q.val();
        self.off_after.next = self.s_off.val() + self.pay32.val();
        // zero-length RDMA WRITE / READ (RETH DMA length 0): no R_Key or bounds check (C9-88)
        self.zlen.d.next = !self.head.rlen.val().any();
        // READ: QP access, DMA length at most 2^31, and the PSNs it takes:
        // n = max(1, ceil(len / path MTU)) (the length is at most 2^31: no overflow)
        self.rd_qacc.next =
            (self.q_access.val().get_bits::<8>(0) & self.k_acc_rr.val().get_bits::<8>(0)).any();
        self.rd_long.d.next = self.head.rlen.val() > self.k_rd_max.val();
        self.rd_len33.next = bit_cast::<33, 32>(self.head.rlen.val());
        self.rd_s1.next = (self.rd_len33.val() + 0xFF) >> 8;
        self.rdc1.d.next = self.rd_s1.val().get_bits::<24>(0);
        self.rd_s2.next = (self.rd_len33.val() + 0x1FF) >> 9;
        self.rdc2.d.next = self.rd_s2.val().get_bits::<24>(0);
        self.rd_s3.next = (self.rd_len33.val() + 0x3FF) >> 10;
        self.rdc3.d.next = self.rd_s3.val().get_bits::<24>(0);
        self.rd_s4.next = (self.rd_len33.val() + 0x7FF) >> 11;
        self.rdc4.d.next = self.rd_s4.val().get_bits::<24>(0);
        self.rd_s5.next = (self.rd_len33.val() + 0xFFF) >> 12;
        self.rdc5.d.next = self.rd_s5.val().get_bits::<24>(0);
        if !self.head.rlen.val().any() {
            self.rdc1.d.next = 1.into();
            self.rdc2.d.next = 1.into();
            self.rdc3.d.next = 1.into();
            self.rdc4.d.next = 1.into();
            self.rdc5.d.next = 1.into();
        }
        // the QP's path MTU as an index 0..4 (256..4096) into the per-MTU values (the driver
        // only writes MTU codes 1..5; others take the nearest)
        self.mtu_sel.d.next = 4.into();
        if self.q_mtu.val() <= 1 {
            self.mtu_sel.d.next = 0.into();
        } else if self.q_mtu.val() <= 4 {
            self.mtu_sel.d.next = self.q_mtu.val().get_bits::<3>(0) - 1;
        }
        self.rd_n.next = self.rdc5.q.val();
        if self.mtu_sel.q.val() == 0 {
            self.rd_n.next = self.rdc1.q.val();
        } else if self.mtu_sel.q.val() == 1 {
            self.rd_n.next = self.rdc2.q.val();
        } else if self.mtu_sel.q.val() == 2 {
            self.rd_n.next = self.rdc3.q.val();
        } else if self.mtu_sel.q.val() == 3 {
            self.rd_n.next = self.rdc4.q.val();
        }
        // packet lengths (IBTA C9-20..C9-22, rxe check_length): FIRST / MIDDLE carry exactly
        // the path MTU, LAST / ONLY at most; a WRITE ONLY carries its RETH DMA length, a
        // WRITE's FIRST and MIDDLE no more than is left of it, its LAST exactly what is left
        self.lgt.d.next = 0.into();
        if self.pay32.val() > 256 {
            self.lgt.d.next = 1.into();
        }
        if self.pay32.val() > 512 {
            self.lgt.d.next = 3.into();
        }
        if self.pay32.val() > 1024 {
            self.lgt.d.next = 7.into();
        }
        if self.pay32.val() > 2048 {
            self.lgt.d.next = 15.into();
        }
        if self.pay32.val() > 4096 {
            self.lgt.d.next = 31.into();
        }
        self.lne.d.next = 31.into();
        if self.pay32.val() == 256 {
            self.lne.d.next = 30.into();
        }
        if self.pay32.val() == 512 {
            self.lne.d.next = 29.into();
        }
        if self.pay32.val() == 1024 {
            self.lne.d.next = 27.into();
        }
        if self.pay32.val() == 2048 {
            self.lne.d.next = 23.into();
        }
        if self.pay32.val() == 4096 {
            self.lne.d.next = 15.into();
        }
        self.pay_gt_mtu.next = self.lgt.q.val().get_bit(self.mtu_sel.q.val().index());
        self.pay_ne_mtu.next = self.lne.q.val().get_bit(self.mtu_sel.q.val().index());
        self.len_bad.next = false;
        if (self.is_first.val() || self.is_mid.val()) && self.pay_ne_mtu.val() {
            self.len_bad.next = true;
        }
        if (self.is_last.val() || self.is_only.val()) && self.pay_gt_mtu.val() {
            self.len_bad.next = true;
        }
        self.wl_bad.d.next = self.is_write.val()
            && ((self.is_only.val() && (self.pay32.val() != self.head.rlen.val()))
                || (self.is_first.val() && (self.pay32.val() > self.head.rlen.val())));
        if self.wl_bad.q.val() {
            self.len_bad.next = true;
        }
        if self.is_write.val() {
            if self.is_mid.val() && self.pay32.val() > self.s_left.val() {
                self.len_bad.next = true;
            }
            if self.is_last.val() && self.pay32.val() != self.s_left.val() {
                self.len_bad.next = true;
            }
        }

        // =========================================================== kept records
        self.sn_oth.next = self.sn.we.val() && (self.sn.src.val() != self.k_src_rx.val());
        self.sn_qp.next = self.sn_oth.val()
            && (self.sn.addr.val() == self.kq_qpn.q.val().get_bits::<CTX_ADDR_BITS>(0))
            && (self.sn.wbe.val() & !self.k_qp_req_be.val()).any();
        self.sn_rqs.next = self.sn_oth.val() && (self.sn.addr.val() == self.kq_ra.q.val());
        self.sn_rqpi.next = self.sn_rqs.val() && (self.sn.wbe.val() == self.k_rqpi_be.val());
        self.sn_rqs_kill.next = self.sn_rqs.val() && !self.sn_rqpi.val();
        self.sn_mr.next = self.sn_oth.val() && (self.sn.addr.val() == self.km_a.q.val());
        self.km_ok.next = self.km_v.q.val() && !self.sn_mr.val();
        self.hit_m.next = self.km_ok.val() && (self.mr_idx.val() == self.km_idx.q.val());
        // a write shown this cycle is in the store but not yet in the kept record: no hit
        // (an rq_pi merge is, from the next cycle on, when Decide looks at it)
        self.hit.next = self.kq_v.q.val()
            && !self.sn_qp.val()
            && (self.head.qpn.val() == self.kq_qpn.q.val())
            && (self.rsp_path.val() || (self.ks_v.q.val() && !self.sn_rqs_kill.val()))
            && (!self.pre_mr.val() || self.hit_m.val());

        self.rw_key.next = self
            .ring
            .rdata
            .val()
            .get_bits::<32>(self.o_w_lkey.val().index());
        self.rw_idx.next = bit_cast::<24, 32>(self.rw_key.val() >> 8);
        self.rw_iok.next = self.rw_idx.val() < self.k_nmr.val();
        self.rw_addr.next = self
            .ring
            .rdata
            .val()
            .get_bits::<64>(self.o_w_addr.val().index());
        self.rw_hit.next = self.km_ok.val() && (self.rw_idx.val() == self.km_idx.q.val());
        self.rw_end.next = bit_cast::<65, 64>(self.rw_addr.val())
            + bit_cast::<65, 32>(
                self.ring
                    .rdata
                    .val()
                    .get_bits::<32>(self.o_w_len.val().index()),
            );
        self.wx_now.next = self.wa2.q.val() && self.ring.rvalid.val();
        self.wx_h.next = self.wa_h.q.val() || self.wx_now.val();
        self.wx_data.next = self.wa_data.q.val();
        self.wx_key.next = self.wa_key.q.val();
        self.wx_addr.next = self.wa_addr.q.val();
        self.wx_end.next = self.wa_end.q.val();
        self.wx_iok.next = self.wa_iok.q.val();
        if self.wx_now.val() {
            self.wx_data.next = self.ring.rdata.val();
            self.wx_key.next = self.rw_key.val();
            self.wx_addr.next = self.rw_addr.val();
            self.wx_end.next = self.rw_end.val();
            self.wx_iok.next = self.rw_iok.val();
        }
        // the frame behind the head, for `em_fast`: a WRITE without immediate that the
        // dispatcher would pass (no verdict drop, our P_Key, a QP number in range) and that
        // finds the kept records as `hit` does (the kept QP, its RqState, for a RETH the kept
        // MR; no other writer's write to them now)
        self.n_write.next = (self.head.n_opcode.val() == self.k_op_wf.val())
            || (self.head.n_opcode.val() == self.k_op_wm.val())
            || (self.head.n_opcode.val() == self.k_op_wl.val())
            || (self.head.n_opcode.val() == self.k_op_wo.val());
        self.n_reth.next = (self.head.n_opcode.val() == self.k_op_wf.val())
            || (self.head.n_opcode.val() == self.k_op_wo.val());
        self.n_mr_idx.next = bit_cast::<24, 32>(self.head.n_rkey.val() >> 8);
        self.n_end.next =
            bit_cast::<65, 64>(self.head.n_va.val()) + bit_cast::<65, 32>(self.head.n_rlen.val());
        self.n_qok.next = !(self.head.n_qpn.val() & self.k_qhi.val()).any();
        self.n_pass.next = self.head.n_valid.val()
            && !self.head.n_drop.val()
            && ((self.head.n_pkey.val() & self.k_pkey15.val()) == self.k_pkey15.val())
            && self.n_qok.val();
        self.n_rec.next = self.kq_v.q.val()
            && !self.sn_qp.val()
            && (self.kq_qpn.q.val() == self.head.n_qpn.val());
        self.n_kept.next =
            self.n_pass.val() && self.n_rec.val() && self.ks_v.q.val() && !self.sn_rqs_kill.val();
        self.n_hit.next = self.n_kept.val()
            && self.n_write.val()
            && (!self.n_reth.val()
                || (self.km_ok.val() && (self.n_mr_idx.val() == self.km_idx.q.val())));
        self.n_sendo.next = (self.head.n_opcode.val() == self.k_op_so.val())
            || (self.head.n_opcode.val() == self.k_op_soi.val());
        self.n_hit_s.next = self.n_kept.val()
            && self.n_sendo.val()
            && self.wa_v.q.val()
            && self.wx_h.val()
            && (self.wa_qpn.q.val() == self.kq_qpn.q.val())
            && (self.wa_idx.q.val() == self.next_ci.q.val());
        // read ahead (`p_*`): the frame behind the head is of another QP (its reads are asked
        // for in Decide; an RqState unless it is an ACK, READ RESPONSE or ATOMIC ACKNOWLEDGE),
        // and this frame reads nothing more on `ctx` (no receive WQE, so no WQE MR read)
        self.n_aack.next = self.head.n_opcode.val() == self.k_op_aack.val();
        self.n_rev.next = ((self.head.n_opcode.val() >= self.k_op_rrf.val())
            && (self.head.n_opcode.val() <= self.k_op_rro.val()))
            || self.n_aack.val();
        self.n_rsp.next = (self.head.n_opcode.val() == self.k_op_ack.val()) || self.n_rev.val();
        // (the QP compare registered, a cycle before Decide: the FIFO's second read feeds no
        // flip-flop enable directly; a frame that came from Emit (`em_fast`) asks for none)
        self.n_oth.d.next = self.head.n_valid.val()
            && !self.head.n_drop.val()
            && self.n_qok.val()
            && (self.head.n_qpn.val() != self.head.qpn.val())
            && (self.st.q.val() != St::Emit);
        self.pf_go.next = (self.st.q.val() == St::Decide)
            && self.n_oth.q.val()
            && !self.pi_tk.q.val()
            && !self.need_wqe.val()
            && !self.in_send.val();
        self.sn_pq.next = self.sn_oth.val()
            && (self.sn.addr.val() == self.p_qpn.q.val().get_bits::<CTX_ADDR_BITS>(0))
            && (self.sn.wbe.val() & !self.k_qp_req_be.val()).any();
        self.sn_ps.next = self.sn_oth.val() && (self.sn.addr.val() == self.p_ra.q.val());
        self.p_psn.next = self
            .p_rqs
            .q
            .val()
            .get_bits::<24>(self.o_s_psn.val().index());
        // the head's records were read ahead (as `hit`: no other writer's write now)
        // (a frame behind one that spends no cycle between Decide and Emit finds the QpContext
        // read ahead coming in its Idle: one on the response path takes it from the store's
        // read data, as WaitCtx would; a request also needs its RqState registered)
        self.p_qnow.next = self.pq2.q.val() && self.ctx.rvalid.val();
        self.p_hit.next = self.p_q_v.q.val()
            && (self.p_qh.q.val() || (self.p_qnow.val() && self.rsp_path.val()))
            && !self.sn_pq.val()
            && (self.head.qpn.val() == self.p_qpn.q.val())
            && (self.rsp_path.val()
                || (self.p_s_v.q.val() && self.p_sh.q.val() && !self.sn_ps.val()))
            && (!self.pre_mr.val() || self.hit_m.val());
        self.p_swap.next = false;
        self.n_oth_i.next = self.head.n_valid.val()
            && !self.head.n_drop.val()
            && self.n_qok.val()
            && (self.head.n_qpn.val() != self.head.qpn.val());
        self.pf_idle.next = (self.st.q.val() == St::Idle)
            && self.head.valid.val()
            && self.rsp_path.val()
            && (self.hit.val() || self.p_hit.val())
            && self.n_rev.val()
            && self.n_oth_i.val();
        self.pi_tk.d.next = self.pf_idle.val() && self.ctx.gnt.val();
        self.wa_hit.next = self.wa_v.q.val()
            && self.wx_h.val()
            && (self.head.qpn.val() == self.wa_qpn.q.val())
            && (self.s_ci.val() == self.wa_idx.q.val());
        self.wa_same.next = self.wa_v.q.val()
            && (self.head.qpn.val() == self.wa_qpn.q.val())
            && (self.s_ci.val() + 1 == self.wa_idx.q.val());
        // asked for in Decide (its data then comes in time for a next SEND that goes from
        // Emit straight to Decide), again in Check when Decide's was not taken
        self.wa_go.next = ((self.st.q.val() == St::Decide)
            || ((self.st.q.val() == St::Check) && !self.wa_same.val()))
            && self.need_wqe.val()
            && (self.is_last.val() || self.is_only.val())
            && self.ks_v.q.val()
            && (self.head.qpn.val() == self.kq_qpn.q.val())
            && (self.s_ci.val() != self.s_pi.val())
            && (self.s_ci.val() + 1 != self.s_pi.val());

        // =========================================================== responder FSM
        self.ctx.req.next = false;
        self.ctx.we.next = false;
        self.ctx.addr.next = bit_cast::<CTX_ADDR_BITS, 24>(self.head.qpn.val());
        self.ctxb.req.next = false;
        self.ctxb.addr.next =
            bit_cast::<CTX_ADDR_BITS, 24>(self.head.qpn.val()) + self.k_rqs_base.val();
        self.rqs_wd.next = (bit_cast::<512, 24>(self.next_psn.q.val()) << self.o_s_psn.val())
            | (bit_cast::<512, 24>(self.next_msn.q.val()) << self.o_s_msn.val())
            | (bit_cast::<512, 16>(self.next_ci.q.val()) << self.o_s_ci.val())
            | (bit_cast::<512, 8>(self.next_flags.q.val()) << self.o_s_flags.val())
            | (bit_cast::<512, 64>(self.next_va.q.val()) << self.o_s_va.val())
            | (bit_cast::<512, 32>(self.next_rkey.q.val()) << self.o_s_rkey.val())
            | (bit_cast::<512, 32>(self.next_left.q.val()) << self.o_s_left.val())
            | (bit_cast::<512, 32>(self.next_off.q.val()) << self.o_s_off.val())
            | (bit_cast::<512, 8>(self.next_ahead.q.val()) << self.o_s_ahead.val())
            | (bit_cast::<512, 8>(self.next_acnt.q.val()) << self.o_s_acnt.val());
        self.ctx.wdata.next = self.rqs_wd.val();
        self.ctx.wbe.next = self.k_rqs_wbe.val();
        self.ring.req.next = false;
        self.rqslot.qpn.next = self.head.qpn.val();
        self.rqslot.idx.next = self.s_ci.val();
        self.ring.slot.next = self.rqslot.slot.val();
        self.ring.pri.next = false;
        self.cmd_valid.next = false;
        self.cmd_addr.next = self.dma_addr.q.val();
        self.cmd_len.next = self.dma_len.q.val();
        self.cpl.valid.next = false;
        self.cpl.cqn.next = self.q_rcqn.val();
        self.cpl.wr_id.next = self.wqe.q.val().get_bits::<64>(self.o_w_wrid.val().index());
        self.cpl.byte_len.next = self.cqe_len.q.val();
        self.cpl.imm.next = self.head.imm.val();
        self.cpl.qpn.next = self.head.qpn.val();
        self.cpl.src_qp.next = self.q_rqpn.val();
        self.cpl.opcode.next = self.cqe_op.q.val();
        self.cpl.status.next = self.cqe_status.q.val();
        self.cpl.flags.next = self.cqe_flags.q.val();
        self.cpl.wqe_idx.next = self.s_ci.val();
        self.rsp.valid.next = false;
        self.dmac_order.rec.next = self.qp.q.val().get_bits::<48>(self.o_q_dmac.val().index());
        self.smac_order.rec.next = self.qp.q.val().get_bits::<48>(self.o_q_smac.val().index());
        self.rsp.dmac.next = self.dmac_order.wire_order.val();
        self.rsp.smac.next = self.smac_order.wire_order.val();
        self.rsp.sip.next = self.qp.q.val().get_bits::<32>(self.o_q_sip.val().index());
        self.rsp.dip.next = self.qp.q.val().get_bits::<32>(self.o_q_dip.val().index());
        self.rsp.sport.next = self.qp.q.val().get_bits::<16>(self.o_q_sport.val().index());
        self.rsp.tos.next = self.qp.q.val().get_bits::<8>(self.o_q_tc.val().index());
        self.rsp.dqpn.next = self.q_rqpn.val();
        self.rsp.psn.next = self.resp_psn.q.val();
        self.rsp.syndrome.next = self.resp_syn.q.val();
        self.rsp.msn.next = self.next_msn.q.val();
        self.rsp.read.next = self.resp_read.q.val();
        self.rsp.va.next = 0.into();
        self.rsp.len.next = 0.into();
        self.rsp.mtu.next = 0.into();
        self.rsp.atomic.next = self.resp_atom.q.val();
        self.rsp.orig.next = 0.into();
        if self.resp_atom.q.val() {
            self.rsp.orig.next = self.resp_orig.q.val();
        }
        if self.resp_read.q.val() {
            self.rsp.va.next = self.head.va.val();
            self.rsp.len.next = self.head.rlen.val();
            self.rsp.mtu.next = self.q_mtu.val().get_bits::<3>(0);
        }
        // ---- the frame behind the head, for an early event (see `ev_early`): its QP's
        // record, the kept one (`n_rec`: the head's QP), else the one read ahead
        // (one slice of each record's source IP and MAC: `q_sip` / `smac_order` of the kept
        // record, `p_sip` / `p_smac` of the one read ahead)
        self.p_sip.next = self.p_qp.q.val().get_bits::<32>(self.o_q_sip.val().index());
        self.p_smac.rec.next = self
            .p_qp
            .q
            .val()
            .get_bits::<48>(self.o_q_smac.val().index());
        self.n_sip.next = self.p_sip.val();
        self.n_smac.rec.next = self.p_smac.rec.val();
        if self.n_rec.val() {
            self.n_sip.next = self.q_sip.val();
            self.n_smac.rec.next = self.smac_order.rec.val();
        }
        self.ie_ok.next = (self.st.q.val() == St::Idle)
            && self.head.valid.val()
            && !self.head.drop.val()
            && self.pkey_ok.val()
            && self.qpn_ok.val()
            && self.is_rev.val()
            && !self.ev_early.q.val()
            && ((self.hit.val() && self.addr_ok.val())
                || (!self.hit.val()
                    && self.p_hit.val()
                    && self.p_qh.q.val()
                    && (self.head.dip.val() == self.p_sip.val())
                    && (self.head.dmac.val() == self.p_smac.wire_order.val())));
        self.ne_ok.next = self.in_vd.q.val()
            && !self.ev_early.q.val()
            && self.n_pass.val()
            && self.n_rev.val()
            && (self.n_rec.val()
                || (self.p_q_v.q.val()
                    && self.p_qh.q.val()
                    && !self.sn_pq.val()
                    && (self.p_qpn.q.val() == self.head.n_qpn.val())))
            && (self.head.n_dip.val() == self.n_sip.val())
            && (self.head.n_dmac.val() == self.n_smac.wire_order.val());
        // ---- the event (the head's; in RspVd the early one of the frame behind it)
        self.ackev.valid.next = false;
        self.ackev.qpn.next = self.head.qpn.val();
        self.ackev.psn.next = self.head.psn.val();
        self.ackev.syndrome.next = self.head.syndrome.val();
        self.ackev.msn.next = self.head.aeth_msn.val();
        self.ackev.rsp.next = self.is_rev.val();
        self.ackev.atom.next = self.is_aack.val();
        // (the hint: `sq_ack_ci` of the record the event was checked on, usable when a WQE
        // was sent there)
        // (sq_ci after sq_ack_ci: sq_ci - sq_ack_ci - 1 in 0 .. 2^15, as the ACK processor
        // tests it; of the read data, registered with the record it comes with)
        self.rd_gap.next = self
            .ctx
            .rdata
            .val()
            .get_bits::<16>(self.o_q_sqci.val().index())
            + !self
                .ctx
                .rdata
                .val()
                .get_bits::<16>(self.o_q_ackci.val().index());
        self.h_k.next = true;
        if self.in_vd.q.val() {
            self.h_k.next = self.kq_v.q.val() && (self.kq_qpn.q.val() == self.head.n_qpn.val());
        } else if self.st.q.val() == St::Idle {
            // (the Idle event: on the kept record, else on the one read ahead)
            self.h_k.next = self.kq_v.q.val() && (self.kq_qpn.q.val() == self.head.qpn.val());
        }
        self.ackev.ackci.next = self
            .p_qp
            .q
            .val()
            .get_bits::<16>(self.o_q_ackci.val().index());
        self.ackev.hv.next = self.p_hv.q.val();
        if self.h_k.val() {
            self.ackev.ackci.next = self.qp.q.val().get_bits::<16>(self.o_q_ackci.val().index());
            self.ackev.hv.next = self.k_hv.q.val();
        }
        self.e_op.next = self.head.opcode.val();
        self.e_pay.next = self.pay.val();
        if self.in_vd.q.val() {
            self.ackev.qpn.next = self.head.n_qpn.val();
            self.ackev.psn.next = self.head.n_psn.val();
            self.ackev.syndrome.next = self.head.n_syndrome.val();
            self.ackev.msn.next = self.head.n_aeth_msn.val();
            self.ackev.rsp.next = true;
            self.ackev.atom.next = self.n_aack.val();
            self.e_op.next = self.head.n_opcode.val();
            self.e_pay.next = self.head.n_data_len.val();
        }
        self.ackev.rpos.next = 0.into();
        self.ackev.plen.next = 0.into();
        if self.e_op.val() == self.k_op_aack.val() {
            // ATOMIC ACKNOWLEDGE: one 8-byte "response" (its AtomicAckETH)
            self.ackev.rpos.next = self.k_rpos_o.val();
            self.ackev.plen.next = 8.into();
        }
        if (self.e_op.val() >= self.k_op_rrf.val()) && (self.e_op.val() <= self.k_op_rro.val()) {
            self.ackev.plen.next = self.e_pay.val().get_bits::<13>(0);
            if self.e_op.val() == self.k_op_rrf.val() {
                self.ackev.rpos.next = self.k_rpos_f.val();
            }
            if self.e_op.val() == self.k_op_rrm.val() {
                // no AETH on a MIDDLE
                self.ackev.rpos.next = self.k_rpos_m.val();
                self.ackev.syndrome.next = self.k_syn_ack.val();
                self.ackev.msn.next = 0.into();
            }
            if self.e_op.val() == self.k_op_rrl.val() {
                self.ackev.rpos.next = self.k_rpos_l.val();
            }
            if self.e_op.val() == self.k_op_rro.val() {
                self.ackev.rpos.next = self.k_rpos_o.val();
            }
        }
        self.rdv.ready.next = false;
        self.rdv.placed.next = false;
        self.job.push.next = false;
        self.mv_first.next =
            self.head.buf_start.val() + bit_cast::<9, 16>(self.head.pay_off.val() >> 6);
        self.job.first.next = self.mv_first.val().get_bits::<BUF_BITS>(0);
        self.job.beats.next = self.mv_beats.q.val();
        self.job.shift.next = self.pay_shift.val();
        self.job.end.next = self.head.buf_end.val();
        self.job.swap8.next = false;
        if self.is_aack.val() {
            // the AtomicAckETH: frame bytes 58..65 (beat 0, offset class 58), byte-reversed
            self.job.first.next = self.head.buf_start.val().get_bits::<BUF_BITS>(0);
            self.job.shift.next = 1.into();
            self.job.swap8.next = true;
        }
        self.atom.valid.next = false;
        self.atom.qpn.next = self.head.qpn.val();
        self.atom.psn.next = self.head.psn.val();
        self.atom.dup.next = self.at_dup.q.val();
        self.atom.fa.next = self.head.opcode.val() == self.k_op_fa.val();
        self.atom.addr.next = self.head.va.val();
        self.atom.swap.next = self.head.swap.val();
        self.atom.cmp.next = self.head.cmp.val();
        self.atom.head.next = self.s_ahead.val().get_bits::<ATOM_SLOT_BITS>(0);
        self.atom.cnt.next = self.at_cnt.val().get_bits::<ATOM_CNT_BITS>(0);
        self.head.pop.next = false;
        self.capture_ctx.next = false;
        self.take_qp.next = false;
        self.take_wx.next = false;
        self.take_wr.next = false;
        self.take_rqs.next = false;
        self.rec_rd.next = false;
        self.q_have.next = (self.st.q.val() == St::QpRd) && self.q_got.q.val();
        self.s_have.next =
            ((self.st.q.val() == St::QpRd) && self.s_got.q.val()) || self.rsp_path.val();
        self.em_exit.next = false;
        self.em_fast.next = false;
        self.em_cmd.next = false;
        self.em_ctx.next = false;
        self.needs_job.next = false;

        match self.st.q.val() {
            St::Idle => {
                self.rd_cnt.d.next = 0.into();
                self.q_got.d.next = false;
                self.s_got.d.next = false;
                self.s_in.d.next = false;
                self.hitp.d.next = false;
                self.hitm.d.next = false;
                self.wq_pre.d.next = false;
                self.wq_got.d.next = false;
                self.wr_done.d.next = false;
                self.mv_beats.d.next = 0.into();
                self.pend_cmd.d.next = false;
                self.pend_cpl.d.next = false;
                self.pend_ack.d.next = false;
                self.pend_wr.d.next = false;
                self.pend_aev.d.next = false;
                self.pend_qerr.d.next = false;
                self.wqe_flush.d.next = false;
                self.resp_read.d.next = false;
                self.rd_dup.d.next = false;
                self.rd_place.d.next = false;
                self.at_dup.d.next = false;
                self.resp_atom.d.next = false;
                self.pend_job.d.next = true;
                // (the Idle event, `ie_ok`: Decide then honours `ev_early`)
                self.ackev.valid.next = self.ie_ok.val();
                if self.ie_ok.val() && self.ackev.ready.val() {
                    self.ev_early.d.next = true;
                }
                if self.head.valid.val() {
                    // the QpContext read is asked for with the header, before the checks
                    // below (a short path into the store's arbiter); a frame they drop
                    // leaves it unused (its data comes in Emit or Idle, which take none)
                    self.ctx.req.next = !self.hit.val() && !self.p_hit.val();
                    self.ctxb.req.next =
                        !self.hit.val() && !self.p_hit.val() && !self.rsp_path.val();
                    // (or the frame behind's, `pf_idle`)
                    if self.pf_idle.val() {
                        self.ctx.req.next = true;
                        self.ctx.addr.next = bit_cast::<CTX_ADDR_BITS, 24>(self.head.n_qpn.val());
                    }
                    self.st.d.next = St::Emit;
                    if self.head.drop.val() {
                        // counted at the verdict
                    } else if !self.pkey_ok.val() {
                        self.ct_drop_pkey.d.next = self.ct_drop_pkey.q.val() + 1;
                    } else if !(self.is_send.val()
                        || self.is_write.val()
                        || self.is_ack.val()
                        || self.is_cnp.val()
                        || self.is_rd.val()
                        || self.is_rev.val()
                        || self.is_atom.val())
                    {
                        self.ct_drop_op.d.next = self.ct_drop_op.q.val() + 1;
                    } else if !self.qpn_ok.val() {
                        self.ct_drop_qp.d.next = self.ct_drop_qp.q.val() + 1;
                    } else if self.hit.val() {
                        // the QP's records (and the request's MR) are kept: no reads; a
                        // SEND's (or WRITE with immediate's) receive WQE is read now, its
                        // slot known from the kept RqState (unused when Decide takes
                        // another way: only WqeWait takes ring data)
                        // (or it was read ahead: taken from `wa_data`)
                        self.ring.req.next = self.need_wqe.val() && !self.wa_hit.val();
                        self.wq_pre.d.next =
                            self.need_wqe.val() && !self.wa_hit.val() && self.ring.gnt.val();
                        if self.need_wqe.val() && self.wa_hit.val() {
                            self.wq_got.d.next = true;
                            self.take_wx.next = true;
                            self.take_wr.next = self.is_send.val();
                        }
                        self.hitp.d.next = true;
                        self.pdiff.d.next = self.head.psn.val() - self.s_psn.val();
                        self.st.d.next = St::Decide;
                    } else if self.p_hit.val() {
                        // its records were read ahead: they become the kept ones (`p_swap`)
                        // and the frame goes on as on a hit (a receive WQE is read in WqeRd)
                        self.p_swap.next = true;
                        self.hitp.d.next = true;
                        self.pdiff.d.next = self.head.psn.val() - self.p_psn.val();
                        self.st.d.next = St::Decide;
                    } else {
                        // both records at once (QpRd asks again for one the store did not
                        // take this cycle; `rec_rd` below)
                        self.st.d.next = St::QpRd;
                        self.rec_rd.next = true;
                    }
                }
            }
            St::QpRd => {
                self.capture_ctx.next = true;
                self.ctx.req.next = !self.q_have.val();
                self.ctxb.req.next = !self.s_have.val();
                self.rec_rd.next = true;
            }
            St::MrPre => {
                self.capture_ctx.next = true;
                self.ctx.req.next = true;
                self.ctx.addr.next =
                    bit_cast::<CTX_ADDR_BITS, 24>(self.mr_idx.val()) + self.k_mr_base.val();
                if self.ctx.gnt.val() {
                    self.st.d.next = St::WaitCtx;
                }
            }
            St::WaitCtx => {
                // Decide follows the cycle that captures the last record (its derived
                // registers, pdiff and the MR compares, are loaded with it)
                self.capture_ctx.next = true;
                if ((self.rd_cnt.q.val() == self.n_reads.val())
                    || (self.ctx.rvalid.val() && (self.rd_cnt.q.val() + 1 == self.n_reads.val())))
                    && (self.rsp_path.val() || self.s_in.q.val() || self.ctxb.rvalid.val())
                {
                    self.st.d.next = St::Decide;
                }
            }
            St::Decide => {
                self.st.d.next = St::Emit;
                if self.pf_go.val() {
                    self.ctx.req.next = true;
                    self.ctx.addr.next = bit_cast::<CTX_ADDR_BITS, 24>(self.head.n_qpn.val());
                    self.ctxb.req.next = !self.n_rsp.val();
                    self.ctxb.addr.next = bit_cast::<CTX_ADDR_BITS, 24>(self.head.n_qpn.val())
                        + self.k_rqs_base.val();
                }
                if self.hitp.q.val() || self.hitm.q.val() {
                    // the kept MR's bounds (its compares are registered with the record on
                    // a read; here the request's side is in rq_addr/rq_end by now)
                    self.mr_lo.d.next = self.rq_addr.q.val() >= self.ms_iova.q.val();
                    self.mr_hi.d.next = self.rq_end.q.val() <= self.ms_mend.q.val();
                }
                self.next_psn.d.next = self.s_psn.val();
                self.next_msn.d.next = self.s_msn.val();
                self.next_ci.d.next = self.s_ci.val();
                self.next_flags.d.next = self.s_flags.val();
                self.next_va.d.next = self.s_va.val();
                self.next_rkey.d.next =
                    self.rqs.q.val().get_bits::<32>(self.o_s_rkey.val().index());
                self.next_left.d.next = self.s_left.val();
                self.next_off.d.next = self.s_off.val();
                self.next_ahead.d.next = self.s_ahead.val();
                self.next_acnt.d.next = self.s_acnt.val();
                self.resp_psn.d.next = self.head.psn.val();
                if self.is_ack.val() || self.is_rev.val() {
                    // ACKNOWLEDGE / READ RESPONSE / ATOMIC ACKNOWLEDGE: addressed to us (the QP
                    // state is ackproc's business); a READ RESPONSE or ATOMIC ACKNOWLEDGE then
                    // waits for ackproc's verdict (its event already sent while the frame
                    // before it waited for its own: `ev_early`, honoured as it was sent)
                    self.ev_early.d.next = false;
                    if self.ev_early.q.val() {
                        self.st.d.next = St::RspVd;
                    } else if self.addr_ok.val() && self.is_rev.val() {
                        self.st.d.next = St::RspEv;
                    } else if self.addr_ok.val() {
                        self.pend_aev.d.next = true;
                    } else {
                        self.ct_drop_addr.d.next = self.ct_drop_addr.q.val() + 1;
                    }
                } else if !(self.q_state.val() == self.k_rtr.val()
                    || self.q_state.val() == self.k_rts.val())
                {
                    self.ct_drop_qp.d.next = self.ct_drop_qp.q.val() + 1;
                } else if !self.addr_ok.val() {
                    // not addressed to us (IP or MAC): silently dropped
                    self.ct_drop_addr.d.next = self.ct_drop_addr.q.val() + 1;
                } else if self.is_cnp.val() {
                    // congestion notification: counted, dropped (no rate limiter yet)
                    self.ct_rx_cnp.d.next = self.ct_rx_cnp.q.val() + 1;
                } else if self.psn_diff.val().get_bit(23) && self.is_rd.val() {
                    // duplicate READ: answered again from the request (the requester may
                    // re-request from the middle with its own PSN, va and length) after the
                    // access checks; no state change (Check, which also counts it: nothing
                    // is committed before)
                    self.rd_dup.d.next = true;
                    self.st.d.next = St::Check;
                } else if self.psn_diff.val().get_bit(23) && self.is_atom.val() {
                    // duplicate atomic: not executed again; its saved result is looked up
                    // (found: answered with it; else dropped); no state change. Whether it
                    // is found is known only after asking: it needs room for a job
                    self.needs_job.next = true;
                    self.ct_rx_dup.d.next = self.ct_rx_dup.q.val() + 1;
                    self.at_dup.d.next = true;
                    self.st.d.next = St::AtomReq;
                } else if self.psn_diff.val().get_bit(23) {
                    // duplicate SEND/WRITE: ACKed again whether or not AckReq is set (C9-105;
                    // a requester may retransmit a middle packet without AckReq), with the
                    // last PSN accepted and the current MSN; nothing else
                    self.needs_job.next = true;
                    self.ct_rx_dup.d.next = self.ct_rx_dup.q.val() + 1;
                    self.pend_ack.d.next = true;
                    self.resp_syn.d.next = self.k_syn_ack.val();
                    self.resp_psn.d.next = self.s_psn.val() - 1;
                } else if self.psn_diff.val().any() {
                    // future PSN: one NAK until the expected PSN arrives
                    if !(self.s_flags.val() & self.k_f_nak.val()).any() {
                        self.needs_job.next = true;
                        self.ct_nak_seq.d.next = self.ct_nak_seq.q.val() + 1;
                        self.pend_ack.d.next = true;
                        self.resp_syn.d.next = self.k_syn_seq.val();
                        self.resp_psn.d.next = self.s_psn.val();
                        self.next_flags.d.next = self.s_flags.val() | self.k_f_nak.val();
                        self.pend_wr.d.next = true;
                    }
                } else {
                    self.pend_wr.d.next = true;
                    self.next_flags.d.next = self.s_flags.val() & !self.k_f_nak.val();
                    if !self.seq_ok.val() {
                        // class C: NAK invalid request, QP to ERR; a receive WQE being filled
                        // by a multi-packet SEND is completed with REM_INV_REQ_ERR (as rxe)
                        self.needs_job.next = true;
                        self.ct_nak_inv.d.next = self.ct_nak_inv.q.val() + 1;
                        self.pend_ack.d.next = true;
                        self.resp_syn.d.next = self.k_syn_inv.val();
                        self.pend_qerr.d.next = true;
                        if self.in_send.val() {
                            self.wqe_flush.d.next = true;
                            self.st.d.next = St::WqeRd;
                            if self.wq_pre.q.val() {
                                self.st.d.next = St::WqeWait;
                            }
                            if self.wq_got.q.val() {
                                self.st.d.next = St::Emit;
                            }
                            self.pend_cpl.d.next = true;
                            self.cqe_status.d.next = self.k_ws_inv.val();
                            self.cqe_op.d.next = self.k_wo_recv.val();
                            self.cqe_flags.d.next = 0.into();
                            self.cqe_len.d.next = self.s_off.val();
                            self.next_ci.d.next = self.s_ci.val() + 1;
                            self.next_off.d.next = 0.into();
                            self.next_flags.d.next =
                                self.s_flags.val() & !(self.k_f_nak.val() | self.k_f_send.val());
                        }
                    } else if self.is_write.val() && (self.s_flags.val() & self.k_f_bad.val()).any()
                    {
                        // rest of a WRITE that failed its access check: consume
                        self.next_psn.d.next = self.s_psn.val() + 1;
                        if self.is_last.val() {
                            self.next_flags.d.next = self.s_flags.val()
                                & !(self.k_f_nak.val() | self.k_f_write.val() | self.k_f_bad.val());
                        }
                    } else if self.need_wqe.val() && self.s_ci.val() == self.s_pi.val() {
                        // RNR NAK (class B: no state change), timer code from the QP
                        self.needs_job.next = true;
                        self.ct_nak_rnr.d.next = self.ct_nak_rnr.q.val() + 1;
                        self.pend_ack.d.next = true;
                        self.resp_syn.d.next = self.k_syn_rnr.val()
                            | (self.qp.q.val().get_bits::<8>(self.o_q_rnrt.val().index())
                                & self.k_rnr_mask.val());
                    } else if self.need_wqe.val() {
                        self.st.d.next = St::WqeRd;
                        if self.wq_pre.q.val() {
                            self.st.d.next = St::WqeWait;
                        }
                        if self.wq_got.q.val() {
                            // the WQE read ahead is in `wqe` and its range and key in
                            // `rq_*` (both loaded as it was taken): WqeWait's choice now;
                            // the kept MR's bounds are compared above, so on to Check
                            self.st.d.next = St::Check;
                            if self.wqe_mr.val() && !self.hit_m.val() {
                                self.st.d.next = St::MrRd;
                            }
                        }
                    } else {
                        // a RETH / READ / atomic request's MR is in `mr` already
                        self.st.d.next = St::Check;
                    }
                }
            }
            St::WqeRd => {
                self.ring.req.next = true;
                if self.ring.gnt.val() {
                    self.st.d.next = St::WqeWait;
                }
            }
            St::WqeWait => {
                if self.ring.rvalid.val() && !self.wa2.q.val() {
                    self.wqe.d.next = self.ring.rdata.val();
                    if self.wqe_flush.q.val() {
                        self.st.d.next = St::Emit;
                    } else if self.wqe_mr.val() {
                        // a SEND's MR comes from its receive WQE: when its L_Key names the kept MR,
                        // straight to MrKeep with the WQE's range and key loaded from the
                        // read data (what MrRd would load from `wqe`)
                        self.st.d.next = St::MrRd;
                        if self.rw_hit.val() {
                            self.st.d.next = St::MrKeep;
                            self.rq_key.d.next = self.rw_key.val();
                            self.rq_addr.d.next = self.rw_addr.val();
                            self.rq_end.d.next = self.rw_end.val();
                            self.rq_idx_ok.d.next = self.rw_iok.val();
                        }
                    } else {
                        self.st.d.next = St::Check;
                    }
                }
            }
            St::MrRd => {
                self.ctx.addr.next =
                    bit_cast::<CTX_ADDR_BITS, 24>(self.mr_idx.val()) + self.k_mr_base.val();
                if self.hit_m.val() {
                    self.st.d.next = St::MrKeep;
                } else {
                    self.ctx.req.next = true;
                    if self.ctx.gnt.val() {
                        self.st.d.next = St::MrWait;
                    }
                }
            }
            St::MrKeep => {
                // rq_addr / rq_end hold the receive WQE's range by now (from `wqe`, loaded
                // two cycles before)
                self.mr_lo.d.next = self.rq_addr.q.val() >= self.ms_iova.q.val();
                self.mr_hi.d.next = self.rq_end.q.val() <= self.ms_mend.q.val();
                self.st.d.next = St::Check;
            }
            St::MrWait => {
                if self.ctx.rvalid.val() {
                    self.mr.d.next = self.ctx.rdata.val();
                    self.mr_lo.d.next = self.rd_lo.val();
                    self.mr_hi.d.next = self.rd_hi.val();
                    self.ms_iova.d.next = self.rd_iova.val();
                    self.ms_mend.d.next = self.rd_mend.val();
                    self.st.d.next = St::Check;
                }
            }
            St::Check => {
                // every outcome here sends a job (ACK/NAK, READ, or the atomic to the unit,
                // then its ATOMIC ACKNOWLEDGE or NAK) but an executed SEND/WRITE without
                // AckReq and a duplicate READ failing its checks
                self.needs_job.next = true;
                self.st.d.next = St::Emit;
                self.resp_psn.d.next = self.head.psn.val();
                self.resp_syn.d.next = self.k_syn_ack.val();
                self.cqe_status.d.next = self.k_ws_ok.val();
                self.cqe_op.d.next = self.k_wo_recv.val();
                self.cqe_flags.d.next = 0.into();
                self.cqe_len.d.next = self.off_after.val();
                self.dma_len.d.next = self.pay.val().get_bits::<14>(0);
                if self.has_imm.val() {
                    self.cqe_flags.d.next = self.k_cf_imm.val();
                }
                if self.is_write.val() {
                    self.cqe_op.d.next = self.k_wo_imm.val();
                }
                if self.is_rd.val() {
                    // READ REQUEST: QP access, DMA length, MR (for length > 0) with
                    // REMOTE_READ; a failing new request is a class C error (rq_psn not
                    // advanced, QP to ERR), a failing duplicate is dropped silently
                    if self.rd_dup.q.val() {
                        self.ct_rx_dup.d.next = self.ct_rx_dup.q.val() + 1;
                        if self.rd_qacc.val()
                            && !self.rd_long.q.val()
                            && (self.zlen.q.val() || self.mr_ok.val())
                        {
                            self.ct_rx_read.d.next = self.ct_rx_read.q.val() + 1;
                            self.pend_ack.d.next = true;
                            self.resp_read.d.next = true;
                        } else {
                            self.needs_job.next = false;
                        }
                    } else if !self.rd_qacc.val() {
                        self.ct_nak_acc.d.next = self.ct_nak_acc.q.val() + 1;
                        self.pend_ack.d.next = true;
                        self.pend_qerr.d.next = true;
                        self.resp_syn.d.next = self.k_syn_acc.val();
                    } else if self.rd_long.q.val() {
                        self.ct_nak_inv.d.next = self.ct_nak_inv.q.val() + 1;
                        self.pend_ack.d.next = true;
                        self.pend_qerr.d.next = true;
                        self.resp_syn.d.next = self.k_syn_inv.val();
                    } else if !(self.zlen.q.val() || self.mr_ok.val()) {
                        self.ct_nak_acc.d.next = self.ct_nak_acc.q.val() + 1;
                        self.pend_ack.d.next = true;
                        self.pend_qerr.d.next = true;
                        self.resp_syn.d.next = self.k_syn_acc.val();
                    } else {
                        // execute: the READ job (the responses acknowledge; no ACK)
                        self.ct_rx_req.d.next = self.ct_rx_req.q.val() + 1;
                        self.ct_rx_read.d.next = self.ct_rx_read.q.val() + 1;
                        self.pend_ack.d.next = true;
                        self.resp_read.d.next = true;
                        self.next_psn.d.next = self.s_psn.val() + self.rd_n.val();
                        self.next_msn.d.next = self.s_msn.val() + 1;
                    }
                } else if self.is_atom.val() {
                    // atomic, in this order: QP access REMOTE_ATOMIC, 8-byte aligned VA, MR
                    // (REMOTE_ATOMIC, [va, va + 8)); each failure class C (rq_psn kept, QP to
                    // ERR); passed: to the atomic unit
                    if !self.at_qacc.val() {
                        self.ct_nak_acc.d.next = self.ct_nak_acc.q.val() + 1;
                        self.pend_ack.d.next = true;
                        self.pend_qerr.d.next = true;
                        self.resp_syn.d.next = self.k_syn_acc.val();
                    } else if self.head.va.val().get_bits::<3>(0).any() {
                        // misaligned (rxe: RESPST_ERR_MISALIGNED_ATOMIC): NAK invalid request
                        self.ct_nak_inv.d.next = self.ct_nak_inv.q.val() + 1;
                        self.pend_ack.d.next = true;
                        self.pend_qerr.d.next = true;
                        self.resp_syn.d.next = self.k_syn_inv.val();
                    } else if !self.mr_ok.val() {
                        self.ct_nak_acc.d.next = self.ct_nak_acc.q.val() + 1;
                        self.pend_ack.d.next = true;
                        self.pend_qerr.d.next = true;
                        self.resp_syn.d.next = self.k_syn_acc.val();
                    } else {
                        self.st.d.next = St::AtomReq;
                    }
                } else if self.has_reth.val()
                    && !((self.q_access.val().get_bits::<8>(0)
                        & self.k_acc_rw.val().get_bits::<8>(0))
                    .any()
                        && (self.zlen.q.val() || self.mr_ok.val()))
                {
                    // WRITE FIRST/ONLY failing its access checks (class C: QP to ERR)
                    self.ct_nak_acc.d.next = self.ct_nak_acc.q.val() + 1;
                    self.pend_ack.d.next = true;
                    self.pend_qerr.d.next = true;
                    self.resp_syn.d.next = self.k_syn_acc.val();
                    self.next_psn.d.next = self.s_psn.val() + 1;
                    if self.is_first.val() {
                        self.next_flags.d.next =
                            self.next_flags.q.val() | self.k_f_write.val() | self.k_f_bad.val();
                    }
                } else if self.len_bad.val() {
                    // packet length against the path MTU / the WRITE's DMA length: NAK
                    // invalid request (class C: QP to ERR); a receive WQE being filled by a
                    // multi-packet SEND is completed with REM_INV_REQ_ERR (as rxe)
                    self.ct_nak_inv.d.next = self.ct_nak_inv.q.val() + 1;
                    self.pend_ack.d.next = true;
                    self.resp_syn.d.next = self.k_syn_inv.val();
                    self.pend_qerr.d.next = true;
                    if self.in_send.val() {
                        self.pend_cpl.d.next = true;
                        self.cqe_status.d.next = self.k_ws_inv.val();
                        self.cqe_flags.d.next = 0.into();
                        self.cqe_len.d.next = self.s_off.val();
                        self.next_ci.d.next = self.s_ci.val() + 1;
                        self.next_off.d.next = 0.into();
                        self.next_flags.d.next = self.next_flags.q.val() & !self.k_f_send.val();
                    }
                } else if self.wqe_mr.val() && !self.mr_ok.val() {
                    self.ct_nak_acc.d.next = self.ct_nak_acc.q.val() + 1;
                    self.pend_ack.d.next = true;
                    self.resp_syn.d.next = self.k_syn_acc.val();
                    self.pend_qerr.d.next = true;
                    self.pend_cpl.d.next = true;
                    self.cqe_status.d.next = self.k_ws_prot.val();
                    self.cqe_len.d.next = self.s_off.val();
                    self.next_ci.d.next = self.s_ci.val() + 1;
                    self.next_off.d.next = 0.into();
                    self.next_flags.d.next = self.next_flags.q.val() & !self.k_f_send.val();
                } else if self.is_send.val()
                    && self.pay32.val() > self.w_len.val() - self.s_off.val()
                {
                    self.ct_nak_inv.d.next = self.ct_nak_inv.q.val() + 1;
                    self.pend_ack.d.next = true;
                    self.resp_syn.d.next = self.k_syn_inv.val();
                    self.pend_qerr.d.next = true;
                    self.pend_cpl.d.next = true;
                    self.cqe_status.d.next = self.k_ws_len.val();
                    self.cqe_len.d.next = self.s_off.val();
                    self.next_ci.d.next = self.s_ci.val() + 1;
                    self.next_off.d.next = 0.into();
                    self.next_flags.d.next = self.next_flags.q.val() & !self.k_f_send.val();
                } else {
                    // execute
                    self.needs_job.next = self.head.ackreq.val();
                    self.ct_rx_req.d.next = self.ct_rx_req.q.val() + 1;
                    self.pend_ack.d.next = self.head.ackreq.val();
                    self.next_psn.d.next = self.s_psn.val() + 1;
                    self.pend_cmd.d.next = self.pay.val().any();
                    self.mv_beats.d.next = self.pay_beats.val().get_bits::<7>(0);
                    self.next_off.d.next = self.off_after.val();
                    if self.is_send.val() {
                        self.dma_addr.d.next =
                            self.w_addr.val() + bit_cast::<64, 32>(self.s_off.val());
                        if self.is_first.val() {
                            self.next_flags.d.next = self.next_flags.q.val() | self.k_f_send.val();
                        }
                    } else if self.has_reth.val() {
                        self.dma_addr.d.next = self.head.va.val();
                        self.next_va.d.next =
                            self.head.va.val() + bit_cast::<64, 16>(self.pay.val());
                        self.next_left.d.next = self.head.rlen.val() - self.pay32.val();
                        self.next_rkey.d.next = self.head.rkey.val();
                        self.next_off.d.next = self.pay32.val();
                        self.cqe_len.d.next = self.pay32.val();
                        if self.is_first.val() {
                            self.next_flags.d.next = (self.next_flags.q.val()
                                | self.k_f_write.val())
                                & !self.k_f_bad.val();
                        }
                    } else {
                        self.dma_addr.d.next = self.s_va.val();
                        self.next_va.d.next = self.s_va.val() + bit_cast::<64, 16>(self.pay.val());
                        self.next_left.d.next = self.s_left.val() - self.pay32.val();
                    }
                    if self.is_last.val() || self.is_only.val() {
                        self.next_msn.d.next = self.s_msn.val() + 1;
                        self.next_off.d.next = 0.into();
                        self.next_flags.d.next = self.next_flags.q.val()
                            & !(self.k_f_send.val() | self.k_f_write.val() | self.k_f_bad.val());
                        if self.need_wqe.val() {
                            self.pend_cpl.d.next = true;
                            self.next_ci.d.next = self.s_ci.val() + 1;
                        }
                    }
                }
            }
            St::RspEv => {
                self.ackev.valid.next = true;
                if self.ackev.ready.val() {
                    self.st.d.next = St::RspVd;
                }
            }
            St::RspVd => {
                // ok: place the payload at the verdict's address (plen 0: nothing to write);
                // !ok: drop (the mover job only frees the buffer)
                // (the early event of the frame behind: `ne_ok`)
                self.ackev.valid.next = self.ne_ok.val();
                if self.ne_ok.val() && self.ackev.ready.val() {
                    self.ev_early.d.next = true;
                }
                self.rdv.ready.next = true;
                if self.rdv.valid.val() {
                    self.st.d.next = St::Emit;
                    if self.rdv.ok.val() {
                        self.rd_place.d.next = true;
                        self.pend_cmd.d.next = self.pay.val().any();
                        self.dma_addr.d.next = self.rdv.addr.val();
                        self.dma_len.d.next = self.pay.val().get_bits::<14>(0);
                        self.mv_beats.d.next = self.pay_beats.val().get_bits::<7>(0);
                        if self.is_aack.val() {
                            // the original value: 8 bytes (one beat, byte-reversed)
                            self.pend_cmd.d.next = true;
                            self.dma_len.d.next = 8.into();
                            self.mv_beats.d.next = 1.into();
                        }
                    }
                }
            }
            St::AtomReq => {
                self.atom.valid.next = true;
                if self.atom.ready.val() {
                    self.st.d.next = St::AtomWait;
                }
            }
            St::AtomWait => {
                if self.atom.done.val() {
                    self.st.d.next = St::Emit;
                    self.resp_syn.d.next = self.k_syn_ack.val();
                    self.resp_orig.d.next = self.atom.orig.val();
                    if self.at_dup.q.val() {
                        // duplicate: the saved result with the current msn, or dropped
                        if self.atom.found.val() {
                            self.ct_atom_dup.d.next = self.ct_atom_dup.q.val() + 1;
                            self.pend_ack.d.next = true;
                            self.resp_atom.d.next = true;
                        } else {
                            self.ct_atom_miss.d.next = self.ct_atom_miss.q.val() + 1;
                        }
                    } else if self.atom.err.val() {
                        // bus error: NAK remote operational error (class C: QP to ERR)
                        self.pend_ack.d.next = true;
                        self.pend_qerr.d.next = true;
                        self.resp_syn.d.next = self.k_syn_op.val();
                    } else {
                        // executed: the ATOMIC ACKNOWLEDGE acknowledges (no separate ACK)
                        self.ct_rx_req.d.next = self.ct_rx_req.q.val() + 1;
                        self.ct_rx_atomic.d.next = self.ct_rx_atomic.q.val() + 1;
                        self.pend_ack.d.next = true;
                        self.resp_atom.d.next = true;
                        self.next_psn.d.next = self.s_psn.val() + 1;
                        self.next_msn.d.next = self.s_msn.val() + 1;
                        self.next_ahead.d.next = (self.s_ahead.val() + 1) & self.k_ares_mask.val();
                        self.next_acnt.d.next = self.at_cnt.val() + 1;
                        if self.at_cnt.val() == self.k_ares.val() {
                            self.next_acnt.d.next = self.k_ares.val();
                        }
                    }
                }
            }
            St::Emit => {
                // after an ok READ RESPONSE verdict: `placed` in the cycle the DMA command is
                // taken (plen 0: in the first cycle here)
                self.rdv.placed.next =
                    self.rd_place.q.val() && (!self.pend_cmd.q.val() || self.cmd_ready.val());
                if self.rd_place.q.val() && (!self.pend_cmd.q.val() || self.cmd_ready.val()) {
                    self.rd_place.d.next = false;
                }
                self.cmd_valid.next = self.pend_cmd.q.val();
                if self.cmd_ready.val() {
                    self.pend_cmd.d.next = false;
                }
                // the completion goes with or after its payload's DMA command: the engine
                // takes that command before the completion writer can issue the CQE's
                // write (several cycles after it takes the completion), so the CQE's write
                // follows the payload's on the one AXI ID
                self.cpl.valid.next =
                    self.pend_cpl.q.val() && (!self.pend_cmd.q.val() || self.cmd_ready.val());
                if self.cpl.ready.val() && (!self.pend_cmd.q.val() || self.cmd_ready.val()) {
                    self.pend_cpl.d.next = false;
                }
                // the job: room was seen at the commit point and only this push can take it,
                // so `rsp.ready` is high here (the hold below is never used)
                self.rsp.valid.next = self.pend_ack.q.val();
                if self.rsp.ready.val() {
                    self.pend_ack.d.next = false;
                }
                self.ackev.valid.next = self.pend_aev.q.val();
                if self.ackev.ready.val() {
                    self.pend_aev.d.next = false;
                }
                // after RspVd (no event of the head's pending): the early event of the frame
                // behind, if RspVd did not send it (`ne_ok`)
                if self.ne_ok.val() {
                    self.ackev.valid.next = true;
                    if self.ackev.ready.val() {
                        self.ev_early.d.next = true;
                    }
                }
                // the RqState write, then (class A/C errors) QpContext.state = ERR
                self.ctx.req.next = self.pend_wr.q.val() || self.pend_qerr.q.val();
                self.ctx.we.next = true;
                if self.pend_wr.q.val() {
                    self.ctx.addr.next =
                        bit_cast::<CTX_ADDR_BITS, 24>(self.head.qpn.val()) + self.k_rqs_base.val();
                    if self.ctx.gnt.val() {
                        self.pend_wr.d.next = false;
                        self.wr_done.d.next = true;
                    }
                } else {
                    self.ctx.wdata.next =
                        bit_cast::<512, 8>(self.k_err.val()) << self.o_q_state.val();
                    self.ctx.wbe.next = self.k_state_be.val();
                    if self.ctx.gnt.val() {
                        self.pend_qerr.d.next = false;
                    }
                }
                self.job.push.next = self.pend_job.q.val() && !self.job.full.val();
                if !self.job.full.val() {
                    self.pend_job.d.next = false;
                }
                // leave in the cycle the last pending item is taken (each one below is
                // clear, or taken in this cycle: the same conditions that clear it above)
                self.em_cmd.next = !self.pend_cmd.q.val() || self.cmd_ready.val();
                self.em_ctx.next = !(self.pend_wr.q.val() || self.pend_qerr.q.val())
                    || (!(self.pend_wr.q.val() && self.pend_qerr.q.val()) && self.ctx.gnt.val());
                if self.em_cmd.val()
                    && (!self.pend_cpl.q.val() || self.cpl.ready.val())
                    && (!self.pend_ack.q.val() || self.rsp.ready.val())
                    && (!self.pend_aev.q.val() || self.ackev.ready.val())
                    && self.em_ctx.val()
                    && (!self.pend_job.q.val() || !self.job.full.val())
                    && !(self.rd_place.q.val() && self.pend_cmd.q.val() && !self.cmd_ready.val())
                {
                    self.head.pop.next = true;
                    self.em_exit.next = true;
                    self.st.d.next = St::Idle;
                }
            }
            _ => {
                self.st.d.next = St::Idle;
            }
        }
        // the next receive WQE read ahead (Decide, Check: neither asks for a ring read)
        if self.wa_go.val() {
            self.ring.req.next = true;
            self.rqslot.idx.next = self.s_ci.val() + 1;
        }
        // the QP's records asked for (Idle, QpRd): each taken once; with both taken, on to
        // WaitCtx, or first the request's MR (the kept record, or read now)
        if self.rec_rd.val() {
            self.take_qp.next = !self.q_have.val() && self.ctx.gnt.val();
            self.take_rqs.next = !self.s_have.val() && self.ctxb.gnt.val();
            self.q_got.d.next = self.q_have.val() || self.ctx.gnt.val();
            self.s_got.d.next = self.s_have.val() || self.ctxb.gnt.val();
            if (self.q_have.val() || self.ctx.gnt.val())
                && (self.s_have.val() || self.ctxb.gnt.val())
            {
                self.st.d.next = St::WaitCtx;
                if self.pre_mr.val() {
                    if self.hit_m.val() {
                        self.hitm.d.next = true;
                    } else {
                        self.st.d.next = St::MrPre;
                    }
                }
            }
        }
        // No room in the responder job queue at the commit point (Decide or Check, before
        // anything with an effect and before the atomic unit is asked): the frame is dropped
        // as if lost on the wire. Only the mover job that frees its buffer and the header
        // FIFO pop remain; no counter but this one. (The responder is `rsp`'s only producer
        // and `rsp.ready` = not full can fall only through a push, so a job committed with
        // `rsp.ready` high is taken in Emit's first cycle: the push never waits.)
        if self.needs_job.val() && !self.rsp.ready.val() {
            self.st.d.next = St::Emit;
            self.ct_drop_busy.d.next = self.ct_drop_busy.q.val() + 1;
            self.pend_cmd.d.next = false;
            self.pend_cpl.d.next = false;
            self.pend_ack.d.next = false;
            self.pend_wr.d.next = false;
            self.pend_qerr.d.next = false;
            self.wqe_flush.d.next = false;
            self.resp_read.d.next = false;
            self.resp_atom.d.next = false;
            self.mv_beats.d.next = 0.into();
            self.ct_rx_req.d.next = self.ct_rx_req.q.val();
            self.ct_rx_dup.d.next = self.ct_rx_dup.q.val();
            self.ct_rx_read.d.next = self.ct_rx_read.q.val();
            self.ct_nak_seq.d.next = self.ct_nak_seq.q.val();
            self.ct_nak_acc.d.next = self.ct_nak_acc.q.val();
            self.ct_nak_inv.d.next = self.ct_nak_inv.q.val();
            self.ct_nak_rnr.d.next = self.ct_nak_rnr.q.val();
        }
        // QP and (RETH / READ / atomic) MR records on `ctx`, in order, and the RqState on
        // `ctxb`: the read data after Idle
        if self.ctxb.rvalid.val() && self.capture_ctx.val() {
            self.s_in.d.next = true;
            self.pdiff.d.next = self.head.psn.val()
                - self
                    .ctxb
                    .rdata
                    .val()
                    .get_bits::<24>(self.o_s_psn.val().index());
        }
        if self.ctx.rvalid.val() && self.capture_ctx.val() {
            self.rd_cnt.d.next = self.rd_cnt.q.val() + 1;
            if self.rd_cnt.q.val() == 0 {
                self.qp.d.next = self.ctx.rdata.val();
                self.k_hv.d.next = !self.rd_gap.val().get_bit(15);
            } else {
                self.mr.d.next = self.ctx.rdata.val();
                self.mr_lo.d.next = self.rd_lo.val();
                self.mr_hi.d.next = self.rd_hi.val();
                self.ms_iova.d.next = self.rd_iova.val();
                self.ms_mend.d.next = self.rd_mend.val();
            }
        }
        // ---- the kept records: tags set when their reads are taken (a write the read does
        // not see shows on the snoop from its rvalid cycle on, so after the tag is set)
        // (the RqState read may be taken before, with or after the QpContext read: its tag
        // is set with its own read, and until then shows none)
        if self.take_qp.val() {
            self.kq_v.d.next = true;
            self.kq_qpn.d.next = self.head.qpn.val();
            if self.rsp_path.val() || !self.s_have.val() {
                self.ks_v.d.next = false;
            }
        }
        if self.take_rqs.val() {
            self.ks_v.d.next = true;
            self.kq_ra.d.next =
                bit_cast::<CTX_ADDR_BITS, 24>(self.head.qpn.val()) + self.k_rqs_base.val();
        }
        if self.ctx.gnt.val() && ((self.st.q.val() == St::MrPre) || (self.st.q.val() == St::MrRd)) {
            self.km_v.d.next = true;
            self.km_idx.d.next = self.mr_idx.val();
            self.km_a.d.next =
                bit_cast::<CTX_ADDR_BITS, 24>(self.mr_idx.val()) + self.k_mr_base.val();
        }
        // RqState: the read data, then a snooped rq_pi (the doorbell unit) on top, then our
        // own write when the store takes it
        self.rq_base.next = self.rqs.q.val();
        if self.ctxb.rvalid.val() && self.capture_ctx.val() {
            self.rq_base.next = self.ctxb.rdata.val();
        }
        if self.p_swap.val() {
            self.rq_base.next = self.p_rqs.q.val();
        }
        self.rq_m.next = self.rq_base.val();
        if self.sn_rqpi.val() && !self.p_swap.val() {
            self.rq_m.next = (self.rq_base.val() & !self.mk_rqpi.val())
                | (self.sn.wdata.val() & self.mk_rqpi.val());
        }
        // (merged as the frame leaves Emit: until then its outputs may still look at the
        // record as read, e.g. the receive CQE's WQE index)
        self.own_rqs.next = self.em_exit.val()
            && (self.wr_done.q.val() || (self.pend_wr.q.val() && self.ctx.gnt.val()));
        self.rqs.d.next = self.rq_m.val();
        if self.own_rqs.val() {
            self.rqs.d.next =
                (self.rq_m.val() & !self.mk_rqs.val()) | (self.rqs_wd.val() & self.mk_rqs.val());
        }
        // our own QpContext write (state = ERR): the kept record is dropped
        if (self.st.q.val() == St::Emit)
            && !self.pend_wr.q.val()
            && self.pend_qerr.q.val()
            && self.ctx.gnt.val()
        {
            self.kq_v.d.next = false;
        }
        // the records read ahead become the kept ones
        if self.p_swap.val() {
            self.kq_v.d.next = true;
            self.kq_qpn.d.next = self.p_qpn.q.val();
            self.ks_v.d.next = self.p_s_v.q.val() && self.p_sh.q.val() && !self.sn_ps.val();
            self.kq_ra.d.next = self.p_ra.q.val();
            self.qp.d.next = self.p_qp.q.val();
            self.k_hv.d.next = self.p_hv.q.val();
            if !self.p_qh.q.val() {
                // (`p_qnow`: the record comes now)
                self.qp.d.next = self.ctx.rdata.val();
                self.k_hv.d.next = !self.rd_gap.val().get_bit(15);
            }
        }
        // another writer's writes (after the tags: a clear wins; in a swap's cycle they
        // are to the records it drops)
        if self.sn_qp.val() && !self.p_swap.val() {
            self.kq_v.d.next = false;
        }
        if self.sn_rqs_kill.val() && !self.p_swap.val() {
            self.ks_v.d.next = false;
        }
        // ---- receive-WQE read-ahead (Decide, Check): the data 2 cycles after the grant
        self.wa1.d.next = self.wa_go.val() && self.ring.gnt.val();
        self.wa2.d.next = self.wa1.q.val();
        if self.wx_now.val() {
            self.wa_data.d.next = self.wx_data.val();
            self.wa_key.d.next = self.wx_key.val();
            self.wa_addr.d.next = self.wx_addr.val();
            self.wa_end.d.next = self.wx_end.val();
            self.wa_iok.d.next = self.wx_iok.val();
            self.wa_h.d.next = true;
        }
        if self.wa_go.val() && self.ring.gnt.val() {
            self.wa_v.d.next = true;
            self.wa_h.d.next = false;
            self.wa_qpn.d.next = self.head.qpn.val();
            self.wa_idx.d.next = self.s_ci.val() + 1;
        }
        if self.take_rqs.val() || self.p_swap.val() || self.sn_rqs_kill.val() || self.sn_qp.val() {
            self.wa_v.d.next = false;
        }
        // ---- read ahead: reads taken in Decide, their data 2 cycles later; a new read-ahead
        // (after the data) starts over; the next frame's Idle uses or drops them
        self.take_pq.next = (self.pf_go.val() || self.pf_idle.val()) && self.ctx.gnt.val();
        self.take_ps.next = self.pf_go.val() && !self.n_rsp.val() && self.ctxb.gnt.val();
        // this block's QpContext reads, for the ACK processor (see `xq_gr`)
        self.xq_gr.d.next = ((self.take_qp.val() && self.is_rev.val())
            || (self.take_pq.val() && self.n_rev.val()))
            && !self.rst.val();
        // (the QP: the read ahead's when it asks, which no read of the head's shares a cycle
        // with; the select waits for no grant)
        self.xq_qr.d.next = self.head.qpn.val();
        if self.pf_go.val() || self.pf_idle.val() {
            self.xq_qr.d.next = self.head.n_qpn.val();
        }
        self.ackev.xq_g.next = self.xq_gr.q.val();
        self.ackev.xq_qpn.next = self.xq_qr.q.val();
        self.ackev.xq_d.next = self.ctx.rdata.val();
        self.pq1.d.next = self.take_pq.val();
        self.pq2.d.next = self.pq1.q.val();
        self.ps1.d.next = self.take_ps.val();
        self.ps2.d.next = self.ps1.q.val();
        if self.pq2.q.val() && self.ctx.rvalid.val() {
            self.p_qp.d.next = self.ctx.rdata.val();
            self.p_hv.d.next = !self.rd_gap.val().get_bit(15);
            self.p_qh.d.next = true;
        }
        if self.ps2.q.val() && self.ctxb.rvalid.val() {
            self.p_rqs.d.next = self.ctxb.rdata.val();
            self.p_sh.d.next = true;
        }
        if self.pf_go.val() || self.pf_idle.val() {
            self.p_q_v.d.next = self.take_pq.val();
            self.p_s_v.d.next = self.take_ps.val();
            self.p_qh.d.next = false;
            self.p_sh.d.next = false;
            self.p_qpn.d.next = self.head.n_qpn.val();
            self.p_ra.d.next =
                bit_cast::<CTX_ADDR_BITS, 24>(self.head.n_qpn.val()) + self.k_rqs_base.val();
        }
        if ((self.st.q.val() == St::Idle) && self.head.valid.val() && !self.pf_idle.val())
            || self.sn_pq.val()
        {
            self.p_q_v.d.next = false;
        }
        if ((self.st.q.val() == St::Idle) && self.head.valid.val()) || self.sn_ps.val() {
            self.p_s_v.d.next = false;
        }
        if self.sn_mr.val() {
            self.km_v.d.next = false;
        }

        // ---- the next frame straight from Emit: in the cycle this frame leaves, a WRITE of
        // the same QP behind it (`n_hit`) goes to Decide at once, with what Idle would have
        // loaded for it: its PSN difference against the rq_psn this frame's RqState write
        // leaves (that write taken, merged into `rqs` at this edge: `own_rqs`), and its
        // request's MR bounds (`rq_*`, compared in Decide); for a SEND ONLY (`n_hit_s`) its
        // receive WQE read ahead, with its range (`take_wx`, `take_wr`). A frame ending in an
        // error (QP to ERR) never hands on. 4 -> 3 cycles per WRITE of one QP, 6 -> 3 per SEND
        // ONLY.
        self.em_fast.next = self.em_exit.val()
            && (self.n_hit.val() || self.n_hit_s.val())
            && !self.pend_qerr.q.val()
            && (self.wr_done.q.val() || (self.pend_wr.q.val() && self.ctx.gnt.val()));
        if self.em_fast.val() {
            self.st.d.next = St::Decide;
            self.hitp.d.next = true;
            self.hitm.d.next = false;
            self.wq_pre.d.next = false;
            self.wq_got.d.next = false;
            self.pdiff.d.next = self.head.n_psn.val() - self.next_psn.q.val();
            if self.n_hit_s.val() {
                // a SEND ONLY: its receive WQE, the one read ahead (`wx_*`, below)
                self.wq_got.d.next = true;
                self.take_wx.next = true;
                self.take_wr.next = true;
            } else {
                self.rq_key.d.next = self.head.n_rkey.val();
                self.rq_addr.d.next = self.head.n_va.val();
                self.rq_end.d.next = self.n_end.val();
                self.rq_acc.d.next = self.k_acc_rw.val();
                self.rq_idx_ok.d.next = self.n_mr_idx.val() < self.k_nmr.val();
            }
            // Idle's clears
            self.rd_cnt.d.next = 0.into();
            self.q_got.d.next = false;
            self.s_got.d.next = false;
            self.s_in.d.next = false;
            self.wr_done.d.next = false;
            self.mv_beats.d.next = 0.into();
            self.pend_cmd.d.next = false;
            self.pend_cpl.d.next = false;
            self.pend_ack.d.next = false;
            self.pend_wr.d.next = false;
            self.pend_aev.d.next = false;
            self.pend_qerr.d.next = false;
            self.wqe_flush.d.next = false;
            self.resp_read.d.next = false;
            self.rd_dup.d.next = false;
            self.rd_place.d.next = false;
            self.at_dup.d.next = false;
            self.resp_atom.d.next = false;
            self.pend_job.d.next = true;
        }

        // a frame takes the read-ahead WQE (Idle, `em_fast`): the WQE, and for a SEND its
        // range and key as Decide would load them from it (its MR check: L_Key, LOCAL_WRITE)
        if self.take_wx.val() {
            self.wqe.d.next = self.wx_data.val();
        }
        if self.take_wr.val() {
            self.rq_key.d.next = self.wx_key.val();
            self.rq_addr.d.next = self.wx_addr.val();
            self.rq_end.d.next = self.wx_end.val();
            self.rq_idx_ok.d.next = self.wx_iok.val();
            self.rq_acc.d.next = self.k_acc_lw.val();
        }

        // =========================================================== counters, reset
        self.cnt_rx_req.next = self.ct_rx_req.q.val();
        self.cnt_rx_dup.next = self.ct_rx_dup.q.val();
        self.cnt_nak_seq.next = self.ct_nak_seq.q.val();
        self.cnt_nak_acc.next = self.ct_nak_acc.q.val();
        self.cnt_nak_inv.next = self.ct_nak_inv.q.val();
        self.cnt_nak_rnr.next = self.ct_nak_rnr.q.val();
        self.cnt_drop_qp.next = self.ct_drop_qp.q.val();
        self.cnt_drop_opcode.next = self.ct_drop_op.q.val();
        self.cnt_drop_pkey.next = self.ct_drop_pkey.q.val();
        self.cnt_drop_addr.next = self.ct_drop_addr.q.val();
        self.cnt_rx_cnp.next = self.ct_rx_cnp.q.val();
        self.cnt_rx_read.next = self.ct_rx_read.q.val();
        self.cnt_rx_atomic.next = self.ct_rx_atomic.q.val();
        self.cnt_atom_dup.next = self.ct_atom_dup.q.val();
        self.cnt_atom_miss.next = self.ct_atom_miss.q.val();
        self.cnt_drop_busy.next = self.ct_drop_busy.q.val();
        if self.rst.val() {
            self.st.d.next = St::Idle;
            self.kq_v.d.next = false;
            self.ks_v.d.next = false;
            self.km_v.d.next = false;
            self.p_q_v.d.next = false;
            self.p_s_v.d.next = false;
            self.pq1.d.next = false;
            self.pq2.d.next = false;
            self.ps1.d.next = false;
            self.ps2.d.next = false;
            self.n_oth.d.next = false;
            self.wa_v.d.next = false;
            self.wa1.d.next = false;
            self.wa2.d.next = false;
            self.wq_got.d.next = false;
            self.hitp.d.next = false;
            self.hitm.d.next = false;
            self.wq_pre.d.next = false;
            self.pend_cmd.d.next = false;
            self.pend_cpl.d.next = false;
            self.pend_ack.d.next = false;
            self.pend_wr.d.next = false;
            self.pend_job.d.next = false;
            self.pend_aev.d.next = false;
            self.ev_early.d.next = false;
            self.pend_qerr.d.next = false;
            self.wqe_flush.d.next = false;
            self.resp_read.d.next = false;
            self.rd_dup.d.next = false;
            self.rd_place.d.next = false;
            self.ct_rx_req.d.next = 0.into();
            self.ct_rx_dup.d.next = 0.into();
            self.ct_nak_seq.d.next = 0.into();
            self.ct_nak_acc.d.next = 0.into();
            self.ct_nak_inv.d.next = 0.into();
            self.ct_nak_rnr.d.next = 0.into();
            self.ct_drop_qp.d.next = 0.into();
            self.ct_drop_op.d.next = 0.into();
            self.ct_drop_pkey.d.next = 0.into();
            self.ct_drop_addr.d.next = 0.into();
            self.ct_rx_cnp.d.next = 0.into();
            self.ct_rx_read.d.next = 0.into();
            self.ct_rx_atomic.d.next = 0.into();
            self.ct_atom_dup.d.next = 0.into();
            self.ct_atom_miss.d.next = 0.into();
            self.ct_drop_busy.d.next = 0.into();
            self.at_dup.d.next = false;
            self.resp_atom.d.next = false;
        }
        self.vd_em.d.next =
            (self.st.d.val() == St::Emit) && ((self.st.q.val() == St::RspVd) || self.vd_em.q.val());
        self.in_vd.d.next = (self.st.d.val() == St::RspVd) || self.vd_em.d.val();
    }
}
