//! `rxresp`: the receive side of the data path (docs/DATAPATH.md "rxresp"): RX packet buffer,
//! header parser + ICRC check, dispatch (ACKNOWLEDGE -> ackproc, drops), and the RC responder
//! for SEND / RDMA WRITE requests (PSN and opcode-sequence checks, access checks, receive WQEs,
//! payload DMA writes, receive completions, ACK/NAK requests).
//!
//! Structure (all in `#[hdl_gen]`; the RAM is rust-hdl's):
//!
//! 1. **Input.** A frame starts only when the packet buffer has room for a maximum frame
//!    ([`MAX_BEATS`]) and fewer than [`FIFO_DEPTH`] frames are waiting: until then `rx.tready`
//!    is low on its first beat (in the simulator the link pauses, the stand-in for the PFC
//!    pause of a lossless RoCE fabric; on a board the MAC-side FIFO absorbs it or drops).
//!    Beats of a started frame are always taken. They are written into the packet buffer (a
//!    ring of [`BUF_BEATS`] 64-byte beats). Beats beyond [`MAX_BEATS`] are not stored (the
//!    frame is dropped as a parse drop), and a frame whose last beat has `tuser` set (MAC
//!    error) too. (`cnt_drop_buf` counts whole frames refused for lack of room: with this flow
//!    control it stays 0; it remains for a build that must never stall the MAC.)
//! 2. **Checks.** The ICRC checker (`icrc`, RX mode) sees the live beat with `tkeep`/`tlast` cut
//!    at byte 14 + IPv4 total length (Ethernet padding excluded: the end is computed from the
//!    first beat's IPv4 length field); the parser (`rxparse`) sees a registered copy, so both
//!    results are valid 3 cycles after the MAC's last beat. Then the frame's verdict and parsed
//!    header go into a small FIFO (one entry per admitted frame, dropped ones included, so the
//!    buffer is freed in order); drop counters (`cnt_drop_parse`, `cnt_drop_icrc`) count here.
//! 3. **Dispatcher / responder FSM**, one frame at a time from the FIFO: dropped frames,
//!    ACKNOWLEDGE (-> `ackev`), unsupported opcodes (`cnt_drop_opcode`), unknown QPs
//!    (`cnt_drop_qp`), and requests: reads `QpContext` and `RqState`, checks, reads the receive
//!    WQE (ring) and the MR (ctx) as needed, then issues in parallel the DMA write command, the
//!    completion (after the command was taken), the ACK/NAK, the `RqState` write (byte enables:
//!    every responder field, never `rq_pi`) and a *mover job*, and pops the FIFO.
//! 4. **Mover**: streams the payload of each job from the packet buffer to `wr.dat_*`, shifted
//!    by the payload offset (4 possible: 54, 58, 70, 74 bytes; a 4-way mux of constant shifts),
//!    one beat per cycle, and frees the frame's buffer space. Commands may run ahead of data
//!    (allowed by the `DmaWrM` contract), so the FSM handles frame n+1 while frame n streams.
//!
//! Responder semantics (decisions where DATAPATH.md leaves room):
//! * duplicate PSN: no write, no state change; ACK (if AckReq) with PSN = rq_psn - 1 (the last
//!   PSN accepted, as rxe does, C9-105) and the current MSN. Counted `cnt_rx_dup`.
//! * future PSN: NAK PSN sequence error with PSN = rq_psn, once (NAK_SENT, cleared by the next
//!   in-sequence packet); further future packets are dropped silently.
//! * opcode sequence violation, WRITE MIDDLE/LAST beyond `wr_left`: NAK invalid request, no
//!   state change (`cnt_nak_inv`).
//! * WRITE FIRST/ONLY failing the access checks: NAK remote access error, nothing written,
//!   rq_psn + 1; a FIRST sets IN_WRITE|WRITE_BAD so the rest of the message is consumed
//!   (rq_psn + 1 each, nothing written, no ACK) (`cnt_nak_acc`).
//! * SEND / WRITE_*_IMM without a posted receive WQE (`rq_ci == rq_pi`): RNR NAK, no state
//!   change (`cnt_nak_rnr`).
//! * SEND whose receive buffer fails the MR check: NAK remote access error + completion
//!   LOC_PROT_ERR; overflow of the receive WQE: NAK invalid request + completion LOC_LEN_ERR;
//!   both consume the WQE (rq_ci + 1), clear IN_SEND, and do not advance rq_psn.
//! * `cnt_rx_req` counts request packets executed (in sequence, all checks passed).
//! * completion `byte_len` = bytes of the whole message (SEND and WRITE_IMM alike).
//! * ACKNOWLEDGE frames: only the QPN range is checked here (QP state: ackproc's business).

use crate::RING_SLOT_BITS;
use crate::common::bus::{
    AckEvM, AckReqM, CTX_ADDR_BITS, CplM, CtxPortM, DmaWrM, RingPortM, StreamS,
};
use crate::common::fifo::Fifo;
use crate::net::icrc::Icrc;
use crate::rx::rxparse::{self, RxParse};
use rnic_abi::params::{self, BuildParams};
use rnic_abi::queue::{
    MrEntry, QpContext, RqState, Wqe, access, aeth, cqe_flag, qp_state, rqs_flag, wc_op, wc_status,
};
use rnic_abi::roce::{self, opcode};
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
const HQ_BITS: usize = 4;
/// Frames waiting between the checks and the responder.
pub const FIFO_DEPTH: usize = 1 << HQ_BITS;
/// Width of a header FIFO entry (see the packing in `update`).
const HDR_W: usize = 320;
/// Width of a mover job.
const JOB_W: usize = 32;

const _: () = assert!(BUF_BEATS >= 2 * MAX_BEATS);

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum St {
    Idle,
    QpRd,
    RqsRd,
    WaitCtx,
    Decide,
    WqeRd,
    WqeWait,
    MrRd,
    MrWait,
    Check,
    Emit,
}

#[derive(Copy, Clone, Debug, PartialEq, LogicState)]
pub enum MSt {
    Idle,
    Prime,
    Run,
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

/// The block: see the module documentation.
#[derive(LogicBlock)]
pub struct RxResp {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub rx: StreamS,
    pub ctx: CtxPortM,
    pub ring: RingPortM,
    pub wr: DmaWrM,
    pub cpl: CplM,
    pub ack: AckReqM,
    pub ackev: AckEvM,
    pub cnt_rx_req: Signal<Out, Bits<32>>,
    pub cnt_rx_dup: Signal<Out, Bits<32>>,
    pub cnt_nak_seq: Signal<Out, Bits<32>>,
    pub cnt_nak_acc: Signal<Out, Bits<32>>,
    pub cnt_nak_inv: Signal<Out, Bits<32>>,
    pub cnt_nak_rnr: Signal<Out, Bits<32>>,
    pub cnt_drop_qp: Signal<Out, Bits<32>>,
    pub cnt_drop_opcode: Signal<Out, Bits<32>>,
    pub cnt_drop_icrc: Signal<Out, Bits<32>>,
    pub cnt_drop_parse: Signal<Out, Bits<32>>,
    /// Frames dropped whole at their first beat because the packet buffer or FIFO was full.
    pub cnt_drop_buf: Signal<Out, Bits<32>>,
    // ---- sub-blocks
    parse: RxParse,
    crc: Icrc,
    pbuf: RAM<Bits<512>, BUF_BITS>,
    hq: Fifo<HDR_W, HQ_BITS>,
    jq: Fifo<JOB_W, 2>,
    // ---- constants
    k_tot: Constant<Bits<10>>,
    k_eth: Constant<Bits<16>>,
    k_maxb: Constant<Bits<11>>,
    k_room: Constant<Bits<9>>,
    k_fifo: Constant<Bits<5>>,
    k_ones64: Constant<Bits<64>>,
    k_nqp: Constant<Bits<24>>,
    k_nmr: Constant<Bits<24>>,
    k_rqs_base: Constant<Bits<CTX_ADDR_BITS>>,
    k_mr_base: Constant<Bits<CTX_ADDR_BITS>>,
    k_rq_slot0: Constant<Bits<RING_SLOT_BITS>>,
    k_rq_shift: Constant<Bits<5>>,
    k_rq_mask: Constant<Bits<16>>,
    k_rqs_wbe: Constant<Bits<64>>,
    k_po: [Constant<Bits<16>>; 4],
    k_sh: [Constant<Bits<10>>; 4],
    k_shi: [Constant<Bits<10>>; 4],
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
    k_op_ack: Constant<Bits<8>>,
    k_rtr: Constant<Bits<8>>,
    k_rts: Constant<Bits<8>>,
    k_acc_rw: Constant<Bits<32>>,
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
    o_q_access: Constant<Bits<10>>,
    o_q_rqpn: Constant<Bits<10>>,
    o_q_dmac: Constant<Bits<10>>,
    o_q_sport: Constant<Bits<10>>,
    o_q_dip: Constant<Bits<10>>,
    o_q_sip: Constant<Bits<10>>,
    o_q_pd: Constant<Bits<10>>,
    o_q_rcqn: Constant<Bits<10>>,
    o_q_smac: Constant<Bits<10>>,
    o_s_psn: Constant<Bits<10>>,
    o_s_msn: Constant<Bits<10>>,
    o_s_pi: Constant<Bits<10>>,
    o_s_ci: Constant<Bits<10>>,
    o_s_flags: Constant<Bits<10>>,
    o_s_va: Constant<Bits<10>>,
    o_s_rkey: Constant<Bits<10>>,
    o_s_left: Constant<Bits<10>>,
    o_s_off: Constant<Bits<10>>,
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
    // ---- input side
    in_mid: DFF<Bit>,
    in_idx: DFF<Bits<11>>,
    in_adm: DFF<Bit>,
    in_over: DFF<Bit>,
    in_start: DFF<Bits<9>>,
    wptr: DFF<Bits<9>>,
    crc_on: DFF<Bit>,
    crc_endb: DFF<Bits<11>>,
    crc_endl: DFF<Bits<6>>,
    credits: DFF<Bits<5>>,
    rq_v: DFF<Bit>,
    rq_d: DFF<Bits<512>>,
    rq_k: DFF<Bits<64>>,
    rq_l: DFF<Bit>,
    e1: DFF<Bits<21>>,
    e2: DFF<Bits<21>>,
    e3: DFF<Bits<21>>,
    first: Signal<Local, Bit>,
    room: Signal<Local, Bit>,
    acc: Signal<Local, Bit>,
    cur_idx: Signal<Local, Bits<11>>,
    tot: Signal<Local, Bits<16>>,
    endbyte: Signal<Local, Bits<16>>,
    cur_endb: Signal<Local, Bits<11>>,
    cur_endl: Signal<Local, Bits<6>>,
    cur_on: Signal<Local, Bit>,
    hit: Signal<Local, Bit>,
    used: Signal<Local, Bits<9>>,
    cur_adm: Signal<Local, Bit>,
    cur_over: Signal<Local, Bit>,
    beat_we: Signal<Local, Bit>,
    ev_now: Signal<Local, Bits<21>>,
    ev_start: Signal<Local, Bits<9>>,
    ev_end: Signal<Local, Bits<9>>,
    j_first: Signal<Local, Bits<9>>,
    cap_ctx: Signal<Local, Bit>,
    adm_take: Signal<Local, Bit>,
    hpop: Signal<Local, Bit>,
    endl1: Signal<Local, Bits<64>>,
    // ---- verdict
    v_drop: Signal<Local, Bit>,
    // ---- head of the header FIFO
    h_va: Signal<Local, Bits<64>>,
    h_rkey: Signal<Local, Bits<32>>,
    h_rlen: Signal<Local, Bits<32>>,
    h_imm: Signal<Local, Bits<32>>,
    h_psn: Signal<Local, Bits<24>>,
    h_op: Signal<Local, Bits<8>>,
    h_qpn: Signal<Local, Bits<24>>,
    h_syn: Signal<Local, Bits<8>>,
    h_amsn: Signal<Local, Bits<24>>,
    h_pad: Signal<Local, Bits<2>>,
    h_ackreq: Signal<Local, Bit>,
    h_drop: Signal<Local, Bit>,
    h_payoff: Signal<Local, Bits<16>>,
    h_paylen: Signal<Local, Bits<16>>,
    h_start: Signal<Local, Bits<9>>,
    h_end: Signal<Local, Bits<9>>,
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
    // ---- record fields
    q_state: Signal<Local, Bits<8>>,
    q_access: Signal<Local, Bits<8>>,
    q_rqpn: Signal<Local, Bits<24>>,
    q_pd: Signal<Local, Bits<32>>,
    q_rcqn: Signal<Local, Bits<16>>,
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
    m_iova: Signal<Local, Bits<64>>,
    m_len: Signal<Local, Bits<64>>,
    m_access: Signal<Local, Bits<32>>,
    m_flags: Signal<Local, Bits<32>>,
    w_len: Signal<Local, Bits<32>>,
    w_addr: Signal<Local, Bits<64>>,
    w_lkey: Signal<Local, Bits<32>>,
    psn_d: Signal<Local, Bits<24>>,
    seq_ok: Signal<Local, Bit>,
    key: Signal<Local, Bits<32>>,
    key_idx: Signal<Local, Bits<24>>,
    need_acc: Signal<Local, Bits<32>>,
    r_addr: Signal<Local, Bits<64>>,
    r_len: Signal<Local, Bits<64>>,
    r_off: Signal<Local, Bits<64>>,
    mr_ok: Signal<Local, Bit>,
    pay32: Signal<Local, Bits<32>>,
    new_off: Signal<Local, Bits<32>>,
    nb: Signal<Local, Bits<16>>,
    sel: Signal<Local, Bits<2>>,
    // ---- responder FSM
    st: DFF<St>,
    rcnt: DFF<Bits<2>>,
    qp: DFF<Bits<512>>,
    rqs: DFF<Bits<512>>,
    mr: DFF<Bits<512>>,
    wqe: DFF<Bits<512>>,
    p_cmd: DFF<Bit>,
    p_cpl: DFF<Bit>,
    p_ack: DFF<Bit>,
    p_wr: DFF<Bit>,
    p_job: DFF<Bit>,
    p_aev: DFF<Bit>,
    o_syn: DFF<Bits<8>>,
    o_apsn: DFF<Bits<24>>,
    o_cst: DFF<Bits<8>>,
    o_cop: DFF<Bits<8>>,
    o_cflags: DFF<Bits<8>>,
    o_clen: DFF<Bits<32>>,
    t_addr: DFF<Bits<64>>,
    t_len: DFF<Bits<14>>,
    j_nb: DFF<Bits<7>>,
    n_psn: DFF<Bits<24>>,
    n_msn: DFF<Bits<24>>,
    n_ci: DFF<Bits<16>>,
    n_flags: DFF<Bits<8>>,
    n_va: DFF<Bits<64>>,
    n_rkey: DFF<Bits<32>>,
    n_left: DFF<Bits<32>>,
    n_off: DFF<Bits<32>>,
    // ---- mover
    mst: DFF<MSt>,
    ra: DFF<Bits<BUF_BITS>>,
    prev: DFF<Bits<512>>,
    m_left: DFF<Bits<7>>,
    m_sel: DFF<Bits<2>>,
    m_end: DFF<Bits<9>>,
    fptr: DFF<Bits<9>>,
    ra_n: Signal<Local, Bits<BUF_BITS>>,
    j_base: Signal<Local, Bits<BUF_BITS>>,
    j_cnt: Signal<Local, Bits<7>>,
    j_sel: Signal<Local, Bits<2>>,
    j_end: Signal<Local, Bits<9>>,
    m_load: Signal<Local, Bit>,
    mv_lo: Signal<Local, Bits<512>>,
    mv_hi: Signal<Local, Bits<512>>,
    // ---- counters
    ct_rx_req: DFF<Bits<32>>,
    ct_rx_dup: DFF<Bits<32>>,
    ct_nak_seq: DFF<Bits<32>>,
    ct_nak_acc: DFF<Bits<32>>,
    ct_nak_inv: DFF<Bits<32>>,
    ct_nak_rnr: DFF<Bits<32>>,
    ct_drop_qp: DFF<Bits<32>>,
    ct_drop_op: DFF<Bits<32>>,
    ct_drop_icrc: DFF<Bits<32>>,
    ct_drop_parse: DFF<Bits<32>>,
    ct_drop_buf: DFF<Bits<32>>,
}

impl RxResp {
    pub fn new(p: &BuildParams) -> Self {
        let ext = rxparse::EXT_OFF as u64;
        let po = [
            ext,
            ext + roce::IMMDT_BYTES as u64,
            ext + roce::RETH_BYTES as u64,
            ext + (roce::RETH_BYTES + roce::IMMDT_BYTES) as u64,
        ];
        let rq_shift = p.rq_depth.trailing_zeros() as u64;
        RxResp {
            clock: Default::default(),
            rst: Default::default(),
            rx: Default::default(),
            ctx: Default::default(),
            ring: Default::default(),
            wr: Default::default(),
            cpl: Default::default(),
            ack: Default::default(),
            ackev: Default::default(),
            cnt_rx_req: Default::default(),
            cnt_rx_dup: Default::default(),
            cnt_nak_seq: Default::default(),
            cnt_nak_acc: Default::default(),
            cnt_nak_inv: Default::default(),
            cnt_nak_rnr: Default::default(),
            cnt_drop_qp: Default::default(),
            cnt_drop_opcode: Default::default(),
            cnt_drop_icrc: Default::default(),
            cnt_drop_parse: Default::default(),
            cnt_drop_buf: Default::default(),
            parse: Default::default(),
            crc: Default::default(),
            pbuf: Default::default(),
            hq: Default::default(),
            jq: Default::default(),
            k_tot: k(8 * (rxparse::IP_OFF as u64 + 2)),
            k_eth: k(roce::ETH_HDR_BYTES as u64),
            k_maxb: k(MAX_BEATS as u64),
            k_room: k((BUF_BEATS - MAX_BEATS) as u64),
            k_fifo: k(FIFO_DEPTH as u64),
            k_ones64: k(u64::MAX),
            k_nqp: k(p.num_qps as u64),
            k_nmr: k(p.num_mrs as u64),
            k_rqs_base: k(p.ctx_base(3) as u64),
            k_mr_base: k(p.ctx_base(2) as u64),
            k_rq_slot0: k((p.rq_slot(0, 0) / rnic_abi::WQE_BYTES as u32) as u64),
            k_rq_shift: k(rq_shift),
            k_rq_mask: k(p.rq_depth as u64 - 1),
            k_rqs_wbe: k(rqs_wbe()),
            k_po: po.map(k),
            k_sh: po.map(|x| k(8 * (x % 64))),
            k_shi: po.map(|x| k(512 - 8 * (x % 64))),
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
            k_op_ack: k(opcode::ACKNOWLEDGE as u64),
            k_rtr: k(qp_state::RTR as u64),
            k_rts: k(qp_state::RTS as u64),
            k_acc_rw: k(access::REMOTE_WRITE as u64),
            k_acc_lw: k(access::LOCAL_WRITE as u64),
            k_f_send: k(rqs_flag::IN_SEND as u64),
            k_f_write: k(rqs_flag::IN_WRITE as u64),
            k_f_nak: k(rqs_flag::NAK_SENT as u64),
            k_f_bad: k(rqs_flag::WRITE_BAD as u64),
            k_syn_ack: k(aeth::ACK as u64),
            k_syn_rnr: k(aeth::RNR_NAK as u64),
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
            o_q_access: qf("access"),
            o_q_rqpn: qf("remote_qpn"),
            o_q_dmac: qf("dest_mac"),
            o_q_sport: qf("udp_sport"),
            o_q_dip: qf("dest_ip"),
            o_q_sip: qf("src_ip"),
            o_q_pd: qf("pd"),
            o_q_rcqn: qf("recv_cqn"),
            o_q_smac: qf("src_mac"),
            o_s_psn: sf("rq_psn"),
            o_s_msn: sf("msn"),
            o_s_pi: sf("rq_pi"),
            o_s_ci: sf("rq_ci"),
            o_s_flags: sf("flags"),
            o_s_va: sf("wr_va"),
            o_s_rkey: sf("wr_rkey"),
            o_s_left: sf("wr_left"),
            o_s_off: sf("recv_off"),
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
            in_mid: Default::default(),
            in_idx: Default::default(),
            in_adm: Default::default(),
            in_over: Default::default(),
            in_start: Default::default(),
            wptr: Default::default(),
            crc_on: Default::default(),
            crc_endb: Default::default(),
            crc_endl: Default::default(),
            credits: Default::default(),
            rq_v: Default::default(),
            rq_d: Default::default(),
            rq_k: Default::default(),
            rq_l: Default::default(),
            e1: Default::default(),
            e2: Default::default(),
            e3: Default::default(),
            first: Default::default(),
            room: Default::default(),
            acc: Default::default(),
            cur_idx: Default::default(),
            tot: Default::default(),
            endbyte: Default::default(),
            cur_endb: Default::default(),
            cur_endl: Default::default(),
            cur_on: Default::default(),
            hit: Default::default(),
            used: Default::default(),
            cur_adm: Default::default(),
            cur_over: Default::default(),
            beat_we: Default::default(),
            ev_now: Default::default(),
            ev_start: Default::default(),
            ev_end: Default::default(),
            j_first: Default::default(),
            cap_ctx: Default::default(),
            adm_take: Default::default(),
            hpop: Default::default(),
            endl1: Default::default(),
            v_drop: Default::default(),
            h_va: Default::default(),
            h_rkey: Default::default(),
            h_rlen: Default::default(),
            h_imm: Default::default(),
            h_psn: Default::default(),
            h_op: Default::default(),
            h_qpn: Default::default(),
            h_syn: Default::default(),
            h_amsn: Default::default(),
            h_pad: Default::default(),
            h_ackreq: Default::default(),
            h_drop: Default::default(),
            h_payoff: Default::default(),
            h_paylen: Default::default(),
            h_start: Default::default(),
            h_end: Default::default(),
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
            q_state: Default::default(),
            q_access: Default::default(),
            q_rqpn: Default::default(),
            q_pd: Default::default(),
            q_rcqn: Default::default(),
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
            m_iova: Default::default(),
            m_len: Default::default(),
            m_access: Default::default(),
            m_flags: Default::default(),
            w_len: Default::default(),
            w_addr: Default::default(),
            w_lkey: Default::default(),
            psn_d: Default::default(),
            seq_ok: Default::default(),
            key: Default::default(),
            key_idx: Default::default(),
            need_acc: Default::default(),
            r_addr: Default::default(),
            r_len: Default::default(),
            r_off: Default::default(),
            mr_ok: Default::default(),
            pay32: Default::default(),
            new_off: Default::default(),
            nb: Default::default(),
            sel: Default::default(),
            st: Default::default(),
            rcnt: Default::default(),
            qp: Default::default(),
            rqs: Default::default(),
            mr: Default::default(),
            wqe: Default::default(),
            p_cmd: Default::default(),
            p_cpl: Default::default(),
            p_ack: Default::default(),
            p_wr: Default::default(),
            p_job: Default::default(),
            p_aev: Default::default(),
            o_syn: Default::default(),
            o_apsn: Default::default(),
            o_cst: Default::default(),
            o_cop: Default::default(),
            o_cflags: Default::default(),
            o_clen: Default::default(),
            t_addr: Default::default(),
            t_len: Default::default(),
            j_nb: Default::default(),
            n_psn: Default::default(),
            n_msn: Default::default(),
            n_ci: Default::default(),
            n_flags: Default::default(),
            n_va: Default::default(),
            n_rkey: Default::default(),
            n_left: Default::default(),
            n_off: Default::default(),
            mst: Default::default(),
            ra: Default::default(),
            prev: Default::default(),
            m_left: Default::default(),
            m_sel: Default::default(),
            m_end: Default::default(),
            fptr: Default::default(),
            ra_n: Default::default(),
            j_base: Default::default(),
            j_cnt: Default::default(),
            j_sel: Default::default(),
            j_end: Default::default(),
            m_load: Default::default(),
            mv_lo: Default::default(),
            mv_hi: Default::default(),
            ct_rx_req: Default::default(),
            ct_rx_dup: Default::default(),
            ct_nak_seq: Default::default(),
            ct_nak_acc: Default::default(),
            ct_nak_inv: Default::default(),
            ct_nak_rnr: Default::default(),
            ct_drop_qp: Default::default(),
            ct_drop_op: Default::default(),
            ct_drop_icrc: Default::default(),
            ct_drop_parse: Default::default(),
            ct_drop_buf: Default::default(),
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
        dff_setup!(
            self, clock, in_mid, in_idx, in_adm, in_over, in_start, wptr, crc_on, crc_endb,
            crc_endl, credits, rq_v, rq_d, rq_k, rq_l, e1, e2, e3
        );
        dff_setup!(
            self, clock, st, rcnt, qp, rqs, mr, wqe, p_cmd, p_cpl, p_ack, p_wr, p_job, p_aev,
            o_syn, o_apsn, o_cst, o_cop, o_cflags, o_clen, t_addr, t_len, j_nb
        );
        dff_setup!(
            self, clock, n_psn, n_msn, n_ci, n_flags, n_va, n_rkey, n_left, n_off, mst, ra, prev,
            m_left, m_sel, m_end, fptr
        );
        dff_setup!(
            self,
            clock,
            ct_rx_req,
            ct_rx_dup,
            ct_nak_seq,
            ct_nak_acc,
            ct_nak_inv,
            ct_nak_rnr,
            ct_drop_qp,
            ct_drop_op,
            ct_drop_icrc,
            ct_drop_parse,
            ct_drop_buf
        );
        self.parse.clock.next = self.clock.val();
        self.crc.clock.next = self.clock.val();
        self.hq.clock.next = self.clock.val();
        self.jq.clock.next = self.clock.val();
        self.pbuf.read_clock.next = self.clock.val();
        self.pbuf.write_clock.next = self.clock.val();
        self.parse.rst.next = self.rst.val();
        self.crc.rst.next = self.rst.val();
        self.hq.rst.next = self.rst.val();
        self.jq.rst.next = self.rst.val();

        // =========================================================== input: buffer + checks
        self.first.next = !self.in_mid.q.val();
        // flow control: a frame starts only when the buffer has room for a maximum frame and
        // the header FIFO a slot; until then its first beat waits (tready low). In the
        // simulator the link pauses (PFC stand-in); on a board the MAC-side FIFO absorbs or
        // drops. Mid-frame beats are always taken (their room was reserved at the start).
        self.room.next = (self.wptr.q.val() - self.fptr.q.val()) <= self.k_room.val()
            && self.credits.q.val() < self.k_fifo.val();
        self.rx.tready.next = !self.first.val() || self.room.val();
        self.acc.next = self.rx.tvalid.val() && (!self.first.val() || self.room.val());
        self.cur_idx.next = self.in_idx.q.val();
        if self.first.val() {
            self.cur_idx.next = 0.into();
        }
        // end of the ICRC-covered bytes: 14 + IPv4 total length (first beat's bytes 16..17)
        self.tot.next =
            (bit_cast::<16, 8>(self.rx.tdata.val().get_bits::<8>(self.k_tot.val().index())) << 8)
                | bit_cast::<16, 8>(
                    self.rx
                        .tdata
                        .val()
                        .get_bits::<8>(self.k_tot.val().index() + 8),
                );
        self.endbyte.next = self.tot.val() + self.k_eth.val() - 1;
        self.cur_endb.next = self.crc_endb.q.val();
        self.cur_endl.next = self.crc_endl.q.val();
        self.cur_on.next = self.crc_on.q.val();
        if self.first.val() {
            self.cur_endb.next = bit_cast::<11, 10>(self.endbyte.val().get_bits::<10>(6));
            self.cur_endl.next = self.endbyte.val().get_bits::<6>(0);
            self.cur_on.next = true;
        }
        self.hit.next = self.cur_idx.val() == self.cur_endb.val();
        self.endl1.next = bit_cast::<64, 6>(self.cur_endl.val()) + 1;
        self.crc.tdata.next = self.rx.tdata.val();
        self.crc.tvalid.next = self.acc.val() && self.cur_on.val();
        self.crc.tlast.next = self.rx.tlast.val() || self.hit.val();
        self.crc.tkeep.next = self.rx.tkeep.val();
        if self.hit.val() {
            self.crc.tkeep.next = self.rx.tkeep.val() & !(self.k_ones64.val() << self.endl1.val());
        }
        self.crc.rx.next = true;
        // admission at the first beat
        self.used.next = self.wptr.q.val() - self.fptr.q.val();
        self.cur_adm.next = self.in_adm.q.val();
        self.cur_over.next = self.in_over.q.val();
        if self.first.val() {
            self.cur_adm.next =
                self.used.val() <= self.k_room.val() && self.credits.q.val() < self.k_fifo.val();
            self.cur_over.next = false;
        }
        if self.cur_idx.val() >= self.k_maxb.val() {
            self.cur_over.next = true;
        }
        self.beat_we.next = self.acc.val() && self.cur_adm.val() && !self.cur_over.val();
        self.pbuf.write_address.next = self.wptr.q.val().get_bits::<BUF_BITS>(0);
        self.pbuf.write_data.next = self.rx.tdata.val();
        self.pbuf.write_enable.next = self.beat_we.val();
        self.adm_take.next = self.acc.val() && self.first.val() && self.cur_adm.val();
        if self.beat_we.val() {
            self.wptr.d.next = self.wptr.q.val() + 1;
        }
        if self.acc.val() {
            self.in_mid.d.next = !self.rx.tlast.val();
            self.in_idx.d.next = self.cur_idx.val() + 1;
            self.in_adm.d.next = self.cur_adm.val();
            self.in_over.d.next = self.cur_over.val();
            self.crc_on.d.next = self.cur_on.val() && !self.hit.val();
            self.crc_endb.d.next = self.cur_endb.val();
            self.crc_endl.d.next = self.cur_endl.val();
            if self.first.val() {
                self.in_start.d.next = self.wptr.q.val();
            }
        }
        // per-frame facts, delayed to the parser's result: adm | over | err | start | end
        self.ev_start.next = self.in_start.q.val();
        if self.first.val() {
            self.ev_start.next = self.wptr.q.val();
        }
        self.ev_end.next = self.wptr.q.val();
        if self.beat_we.val() {
            self.ev_end.next = self.wptr.q.val() + 1;
        }
        self.ev_now.next = bit_cast::<21, 1>(self.cur_adm.val().into())
            | (bit_cast::<21, 1>(self.cur_over.val().into()) << 1)
            | (bit_cast::<21, 1>(self.rx.tuser.val().into()) << 2)
            | (bit_cast::<21, 9>(self.ev_start.val()) << 3)
            | (bit_cast::<21, 9>(self.ev_end.val()) << 12);
        self.e1.d.next = self.ev_now.val();
        self.e2.d.next = self.e1.q.val();
        self.e3.d.next = self.e2.q.val();
        // the parser sees a registered copy (result 3 cycles after the MAC's last beat, as
        // the ICRC's on the live beat)
        self.rq_v.d.next = self.acc.val() && !self.rst.val();
        self.rq_d.d.next = self.rx.tdata.val();
        self.rq_k.d.next = self.rx.tkeep.val();
        self.rq_l.d.next = self.rx.tlast.val();
        self.parse.tdata.next = self.rq_d.q.val();
        self.parse.tkeep.next = self.rq_k.q.val();
        self.parse.tlast.next = self.rq_l.q.val();
        self.parse.tvalid.next = self.rq_v.q.val();

        // =========================================================== verdict -> header FIFO
        self.v_drop.next = self.parse.drop.val()
            || !self.crc.icrc_ok.val()
            || self.e3.q.val().get_bit(1)
            || self.e3.q.val().get_bit(2);
        self.hq.wr.next = false;
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
            | (bit_cast::<HDR_W, 1>(self.v_drop.val().into()) << 251)
            | (bit_cast::<HDR_W, 16>(self.parse.pay_off.val()) << 256)
            | (bit_cast::<HDR_W, 16>(self.parse.pay_len.val()) << 272)
            | (bit_cast::<HDR_W, 9>(self.e3.q.val().get_bits::<9>(3)) << 288)
            | (bit_cast::<HDR_W, 9>(self.e3.q.val().get_bits::<9>(12)) << 297);
        if self.parse.hdr_valid.val() {
            if self.e3.q.val().get_bit(0) {
                self.hq.wr.next = true;
                if self.parse.drop.val() || self.e3.q.val().get_bit(1) || self.e3.q.val().get_bit(2)
                {
                    self.ct_drop_parse.d.next = self.ct_drop_parse.q.val() + 1;
                } else if !self.crc.icrc_ok.val() {
                    self.ct_drop_icrc.d.next = self.ct_drop_icrc.q.val() + 1;
                }
            } else {
                self.ct_drop_buf.d.next = self.ct_drop_buf.q.val() + 1;
            }
        }

        // =========================================================== head fields
        self.h_va.next = self.hq.dout.val().get_bits::<64>(0);
        self.h_rkey.next = self.hq.dout.val().get_bits::<32>(64);
        self.h_rlen.next = self.hq.dout.val().get_bits::<32>(96);
        self.h_imm.next = self.hq.dout.val().get_bits::<32>(128);
        self.h_psn.next = self.hq.dout.val().get_bits::<24>(160);
        self.h_op.next = self.hq.dout.val().get_bits::<8>(184);
        self.h_qpn.next = self.hq.dout.val().get_bits::<24>(192);
        self.h_syn.next = self.hq.dout.val().get_bits::<8>(216);
        self.h_amsn.next = self.hq.dout.val().get_bits::<24>(224);
        self.h_pad.next = self.hq.dout.val().get_bits::<2>(248);
        self.h_ackreq.next = self.hq.dout.val().get_bit(250);
        self.h_drop.next = self.hq.dout.val().get_bit(251);
        self.h_payoff.next = self.hq.dout.val().get_bits::<16>(256);
        self.h_paylen.next = self.hq.dout.val().get_bits::<16>(272);
        self.h_start.next = self.hq.dout.val().get_bits::<9>(288);
        self.h_end.next = self.hq.dout.val().get_bits::<9>(297);
        self.pay.next = self.h_paylen.val() - bit_cast::<16, 2>(self.h_pad.val());
        self.pay32.next = bit_cast::<32, 16>(self.pay.val());
        self.is_first.next =
            self.h_op.val() == self.k_op_sf.val() || self.h_op.val() == self.k_op_wf.val();
        self.is_mid.next =
            self.h_op.val() == self.k_op_sm.val() || self.h_op.val() == self.k_op_wm.val();
        self.is_last.next = self.h_op.val() == self.k_op_sl.val()
            || self.h_op.val() == self.k_op_sli.val()
            || self.h_op.val() == self.k_op_wl.val()
            || self.h_op.val() == self.k_op_wli.val();
        self.is_only.next = self.h_op.val() == self.k_op_so.val()
            || self.h_op.val() == self.k_op_soi.val()
            || self.h_op.val() == self.k_op_wo.val()
            || self.h_op.val() == self.k_op_woi.val();
        self.has_imm.next = self.h_op.val() == self.k_op_sli.val()
            || self.h_op.val() == self.k_op_soi.val()
            || self.h_op.val() == self.k_op_wli.val()
            || self.h_op.val() == self.k_op_woi.val();
        self.is_send.next = self.h_op.val() <= self.k_op_soi.val();
        self.is_write.next =
            self.h_op.val() >= self.k_op_wf.val() && self.h_op.val() <= self.k_op_woi.val();
        self.has_reth.next = self.is_write.val() && (self.is_first.val() || self.is_only.val());
        self.need_wqe.next = self.is_send.val() || (self.is_write.val() && self.has_imm.val());
        self.qpn_ok.next = self.h_qpn.val() < self.k_nqp.val();
        // payload offset -> shift select; beats of payload
        self.sel.next = 0.into();
        if self.h_payoff.val() == self.k_po[1].val() {
            self.sel.next = 1.into();
        }
        if self.h_payoff.val() == self.k_po[2].val() {
            self.sel.next = 2.into();
        }
        if self.h_payoff.val() == self.k_po[3].val() {
            self.sel.next = 3.into();
        }
        self.nb.next = (self.pay.val() + 63) >> 6;

        // =========================================================== record fields
        self.q_state.next = self.qp.q.val().get_bits::<8>(self.o_q_state.val().index());
        self.q_access.next = self.qp.q.val().get_bits::<8>(self.o_q_access.val().index());
        self.q_rqpn.next = self.qp.q.val().get_bits::<24>(self.o_q_rqpn.val().index());
        self.q_pd.next = self.qp.q.val().get_bits::<32>(self.o_q_pd.val().index());
        self.q_rcqn.next = self.qp.q.val().get_bits::<16>(self.o_q_rcqn.val().index());
        self.s_psn.next = self.rqs.q.val().get_bits::<24>(self.o_s_psn.val().index());
        self.s_msn.next = self.rqs.q.val().get_bits::<24>(self.o_s_msn.val().index());
        self.s_pi.next = self.rqs.q.val().get_bits::<16>(self.o_s_pi.val().index());
        self.s_ci.next = self.rqs.q.val().get_bits::<16>(self.o_s_ci.val().index());
        self.s_flags.next = self.rqs.q.val().get_bits::<8>(self.o_s_flags.val().index());
        self.s_va.next = self.rqs.q.val().get_bits::<64>(self.o_s_va.val().index());
        self.s_left.next = self.rqs.q.val().get_bits::<32>(self.o_s_left.val().index());
        self.s_off.next = self.rqs.q.val().get_bits::<32>(self.o_s_off.val().index());
        self.m_key.next = self.mr.q.val().get_bits::<32>(self.o_m_key.val().index());
        self.m_pd.next = self.mr.q.val().get_bits::<32>(self.o_m_pd.val().index());
        self.m_iova.next = self.mr.q.val().get_bits::<64>(self.o_m_iova.val().index());
        self.m_len.next = self.mr.q.val().get_bits::<64>(self.o_m_len.val().index());
        self.m_access.next = self
            .mr
            .q
            .val()
            .get_bits::<32>(self.o_m_access.val().index());
        self.m_flags.next = self.mr.q.val().get_bits::<32>(self.o_m_flags.val().index());
        self.w_len.next = self.wqe.q.val().get_bits::<32>(self.o_w_len.val().index());
        self.w_addr.next = self.wqe.q.val().get_bits::<64>(self.o_w_addr.val().index());
        self.w_lkey.next = self.wqe.q.val().get_bits::<32>(self.o_w_lkey.val().index());
        // PSN position and opcode sequence
        self.psn_d.next = self.h_psn.val() - self.s_psn.val();
        self.seq_ok.next = self.is_first.val() || self.is_only.val();
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
        if self.is_write.val() {
            self.key.next = self.h_rkey.val();
            self.r_addr.next = self.h_va.val();
            self.r_len.next = bit_cast::<64, 32>(self.h_rlen.val());
            self.need_acc.next = self.k_acc_rw.val();
        }
        self.key_idx.next = bit_cast::<24, 32>(self.key.val() >> 8);
        self.r_off.next = self.r_addr.val() - self.m_iova.val();
        self.mr_ok.next = self.key_idx.val() < self.k_nmr.val()
            && self.m_flags.val().get_bit(0)
            && self.m_key.val() == self.key.val()
            && self.m_pd.val() == self.q_pd.val()
            && (self.m_access.val() & self.need_acc.val()).any()
            && self.r_addr.val() >= self.m_iova.val()
            && self.r_off.val() <= self.m_len.val()
            && self.r_len.val() <= self.m_len.val() - self.r_off.val();
        self.new_off.next = self.s_off.val() + self.pay32.val();

        // =========================================================== responder FSM
        self.ctx.req.next = false;
        self.ctx.we.next = false;
        self.ctx.addr.next = bit_cast::<CTX_ADDR_BITS, 24>(self.h_qpn.val());
        self.ctx.wdata.next = (bit_cast::<512, 24>(self.n_psn.q.val()) << self.o_s_psn.val())
            | (bit_cast::<512, 24>(self.n_msn.q.val()) << self.o_s_msn.val())
            | (bit_cast::<512, 16>(self.n_ci.q.val()) << self.o_s_ci.val())
            | (bit_cast::<512, 8>(self.n_flags.q.val()) << self.o_s_flags.val())
            | (bit_cast::<512, 64>(self.n_va.q.val()) << self.o_s_va.val())
            | (bit_cast::<512, 32>(self.n_rkey.q.val()) << self.o_s_rkey.val())
            | (bit_cast::<512, 32>(self.n_left.q.val()) << self.o_s_left.val())
            | (bit_cast::<512, 32>(self.n_off.q.val()) << self.o_s_off.val());
        self.ctx.wbe.next = self.k_rqs_wbe.val();
        self.ring.req.next = false;
        self.ring.slot.next = self.k_rq_slot0.val()
            + (bit_cast::<RING_SLOT_BITS, 24>(self.h_qpn.val()) << self.k_rq_shift.val())
            + bit_cast::<RING_SLOT_BITS, 16>(self.s_ci.val() & self.k_rq_mask.val());
        self.wr.cmd_valid.next = false;
        self.wr.cmd_addr.next = self.t_addr.q.val();
        self.wr.cmd_len.next = self.t_len.q.val();
        self.cpl.valid.next = false;
        self.cpl.cqn.next = self.q_rcqn.val();
        self.cpl.wr_id.next = self.wqe.q.val().get_bits::<64>(self.o_w_wrid.val().index());
        self.cpl.byte_len.next = self.o_clen.q.val();
        self.cpl.imm.next = self.h_imm.val();
        self.cpl.qpn.next = self.h_qpn.val();
        self.cpl.src_qp.next = self.q_rqpn.val();
        self.cpl.opcode.next = self.o_cop.q.val();
        self.cpl.status.next = self.o_cst.q.val();
        self.cpl.flags.next = self.o_cflags.q.val();
        self.cpl.wqe_idx.next = self.s_ci.val();
        self.ack.valid.next = false;
        self.ack.dmac.next =
            (bit_cast::<48, 8>(self.qp.q.val().get_bits::<8>(self.o_q_dmac.val().index())) << 40)
                | (bit_cast::<48, 8>(
                    self.qp
                        .q
                        .val()
                        .get_bits::<8>(self.o_q_dmac.val().index() + 8),
                ) << 32)
                | (bit_cast::<48, 8>(
                    self.qp
                        .q
                        .val()
                        .get_bits::<8>(self.o_q_dmac.val().index() + 16),
                ) << 24)
                | (bit_cast::<48, 8>(
                    self.qp
                        .q
                        .val()
                        .get_bits::<8>(self.o_q_dmac.val().index() + 24),
                ) << 16)
                | (bit_cast::<48, 8>(
                    self.qp
                        .q
                        .val()
                        .get_bits::<8>(self.o_q_dmac.val().index() + 32),
                ) << 8)
                | bit_cast::<48, 8>(
                    self.qp
                        .q
                        .val()
                        .get_bits::<8>(self.o_q_dmac.val().index() + 40),
                );
        self.ack.smac.next =
            (bit_cast::<48, 8>(self.qp.q.val().get_bits::<8>(self.o_q_smac.val().index())) << 40)
                | (bit_cast::<48, 8>(
                    self.qp
                        .q
                        .val()
                        .get_bits::<8>(self.o_q_smac.val().index() + 8),
                ) << 32)
                | (bit_cast::<48, 8>(
                    self.qp
                        .q
                        .val()
                        .get_bits::<8>(self.o_q_smac.val().index() + 16),
                ) << 24)
                | (bit_cast::<48, 8>(
                    self.qp
                        .q
                        .val()
                        .get_bits::<8>(self.o_q_smac.val().index() + 24),
                ) << 16)
                | (bit_cast::<48, 8>(
                    self.qp
                        .q
                        .val()
                        .get_bits::<8>(self.o_q_smac.val().index() + 32),
                ) << 8)
                | bit_cast::<48, 8>(
                    self.qp
                        .q
                        .val()
                        .get_bits::<8>(self.o_q_smac.val().index() + 40),
                );
        self.ack.sip.next = self.qp.q.val().get_bits::<32>(self.o_q_sip.val().index());
        self.ack.dip.next = self.qp.q.val().get_bits::<32>(self.o_q_dip.val().index());
        self.ack.sport.next = self.qp.q.val().get_bits::<16>(self.o_q_sport.val().index());
        self.ack.dqpn.next = self.q_rqpn.val();
        self.ack.psn.next = self.o_apsn.q.val();
        self.ack.syndrome.next = self.o_syn.q.val();
        self.ack.msn.next = self.n_msn.q.val();
        self.ackev.valid.next = false;
        self.ackev.qpn.next = self.h_qpn.val();
        self.ackev.psn.next = self.h_psn.val();
        self.ackev.syndrome.next = self.h_syn.val();
        self.ackev.msn.next = self.h_amsn.val();
        self.jq.wr.next = false;
        self.j_first.next = self.h_start.val() + bit_cast::<9, 16>(self.h_payoff.val() >> 6);
        self.jq.din.next = bit_cast::<JOB_W, BUF_BITS>(self.j_first.val().get_bits::<BUF_BITS>(0))
            | (bit_cast::<JOB_W, 7>(self.j_nb.q.val()) << 8)
            | (bit_cast::<JOB_W, 2>(self.sel.val()) << 15)
            | (bit_cast::<JOB_W, 9>(self.h_end.val()) << 17);
        self.hpop.next = false;
        self.cap_ctx.next = false;

        match self.st.q.val() {
            St::Idle => {
                self.rcnt.d.next = 0.into();
                self.j_nb.d.next = 0.into();
                self.p_cmd.d.next = false;
                self.p_cpl.d.next = false;
                self.p_ack.d.next = false;
                self.p_wr.d.next = false;
                self.p_aev.d.next = false;
                self.p_job.d.next = true;
                if !self.hq.empty.val() {
                    self.st.d.next = St::Emit;
                    if self.h_drop.val() {
                        // counted at the verdict
                    } else if self.h_op.val() == self.k_op_ack.val() {
                        if self.qpn_ok.val() {
                            self.p_aev.d.next = true;
                        } else {
                            self.ct_drop_qp.d.next = self.ct_drop_qp.q.val() + 1;
                        }
                    } else if !(self.is_send.val() || self.is_write.val()) {
                        self.ct_drop_op.d.next = self.ct_drop_op.q.val() + 1;
                    } else if !self.qpn_ok.val() {
                        self.ct_drop_qp.d.next = self.ct_drop_qp.q.val() + 1;
                    } else {
                        self.st.d.next = St::QpRd;
                    }
                }
            }
            St::QpRd => {
                self.ctx.req.next = true;
                if self.ctx.gnt.val() {
                    self.st.d.next = St::RqsRd;
                }
            }
            St::RqsRd => {
                self.cap_ctx.next = true;
                self.ctx.req.next = true;
                self.ctx.addr.next =
                    bit_cast::<CTX_ADDR_BITS, 24>(self.h_qpn.val()) + self.k_rqs_base.val();
                if self.ctx.gnt.val() {
                    self.st.d.next = St::WaitCtx;
                }
            }
            St::WaitCtx => {
                self.cap_ctx.next = true;
                if self.rcnt.q.val() == 2 {
                    self.st.d.next = St::Decide;
                }
            }
            St::Decide => {
                self.st.d.next = St::Emit;
                self.n_psn.d.next = self.s_psn.val();
                self.n_msn.d.next = self.s_msn.val();
                self.n_ci.d.next = self.s_ci.val();
                self.n_flags.d.next = self.s_flags.val();
                self.n_va.d.next = self.s_va.val();
                self.n_rkey.d.next = self.rqs.q.val().get_bits::<32>(self.o_s_rkey.val().index());
                self.n_left.d.next = self.s_left.val();
                self.n_off.d.next = self.s_off.val();
                self.o_apsn.d.next = self.h_psn.val();
                if !(self.q_state.val() == self.k_rtr.val()
                    || self.q_state.val() == self.k_rts.val())
                {
                    self.ct_drop_qp.d.next = self.ct_drop_qp.q.val() + 1;
                } else if self.psn_d.val().get_bit(23) {
                    // duplicate
                    self.ct_rx_dup.d.next = self.ct_rx_dup.q.val() + 1;
                    if self.h_ackreq.val() {
                        self.p_ack.d.next = true;
                        self.o_syn.d.next = self.k_syn_ack.val();
                        self.o_apsn.d.next = self.s_psn.val() - 1;
                    }
                } else if self.psn_d.val().any() {
                    // future PSN: one NAK until the expected PSN arrives
                    if !(self.s_flags.val() & self.k_f_nak.val()).any() {
                        self.ct_nak_seq.d.next = self.ct_nak_seq.q.val() + 1;
                        self.p_ack.d.next = true;
                        self.o_syn.d.next = self.k_syn_seq.val();
                        self.o_apsn.d.next = self.s_psn.val();
                        self.n_flags.d.next = self.s_flags.val() | self.k_f_nak.val();
                        self.p_wr.d.next = true;
                    }
                } else {
                    self.p_wr.d.next = true;
                    self.n_flags.d.next = self.s_flags.val() & !self.k_f_nak.val();
                    if !self.seq_ok.val() {
                        self.ct_nak_inv.d.next = self.ct_nak_inv.q.val() + 1;
                        self.p_ack.d.next = true;
                        self.o_syn.d.next = self.k_syn_inv.val();
                    } else if self.is_write.val() && (self.s_flags.val() & self.k_f_bad.val()).any()
                    {
                        // rest of a WRITE that failed its access check: consume
                        self.n_psn.d.next = self.s_psn.val() + 1;
                        if self.is_last.val() {
                            self.n_flags.d.next = self.s_flags.val()
                                & !(self.k_f_nak.val() | self.k_f_write.val() | self.k_f_bad.val());
                        }
                    } else if self.need_wqe.val() && self.s_ci.val() == self.s_pi.val() {
                        self.ct_nak_rnr.d.next = self.ct_nak_rnr.q.val() + 1;
                        self.p_ack.d.next = true;
                        self.o_syn.d.next = self.k_syn_rnr.val();
                    } else if self.need_wqe.val() {
                        self.st.d.next = St::WqeRd;
                    } else if self.has_reth.val() {
                        self.st.d.next = St::MrRd;
                    } else {
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
                if self.ring.rvalid.val() {
                    self.wqe.d.next = self.ring.rdata.val();
                    if self.has_reth.val() || (self.is_send.val() && self.pay.val().any()) {
                        self.st.d.next = St::MrRd;
                    } else {
                        self.st.d.next = St::Check;
                    }
                }
            }
            St::MrRd => {
                self.ctx.req.next = true;
                self.ctx.addr.next =
                    bit_cast::<CTX_ADDR_BITS, 24>(self.key_idx.val()) + self.k_mr_base.val();
                if self.ctx.gnt.val() {
                    self.st.d.next = St::MrWait;
                }
            }
            St::MrWait => {
                if self.ctx.rvalid.val() {
                    self.mr.d.next = self.ctx.rdata.val();
                    self.st.d.next = St::Check;
                }
            }
            St::Check => {
                self.st.d.next = St::Emit;
                self.o_apsn.d.next = self.h_psn.val();
                self.o_syn.d.next = self.k_syn_ack.val();
                self.o_cst.d.next = self.k_ws_ok.val();
                self.o_cop.d.next = self.k_wo_recv.val();
                self.o_cflags.d.next = 0.into();
                self.o_clen.d.next = self.new_off.val();
                self.t_len.d.next = self.pay.val().get_bits::<14>(0);
                if self.has_imm.val() {
                    self.o_cflags.d.next = self.k_cf_imm.val();
                }
                if self.is_write.val() {
                    self.o_cop.d.next = self.k_wo_imm.val();
                }
                if self.has_reth.val()
                    && !((self.q_access.val().get_bits::<8>(0)
                        & self.k_acc_rw.val().get_bits::<8>(0))
                    .any()
                        && self.mr_ok.val()
                        && self.pay32.val() <= self.h_rlen.val())
                {
                    // WRITE FIRST/ONLY failing its access checks
                    self.ct_nak_acc.d.next = self.ct_nak_acc.q.val() + 1;
                    self.p_ack.d.next = true;
                    self.o_syn.d.next = self.k_syn_acc.val();
                    self.n_psn.d.next = self.s_psn.val() + 1;
                    if self.is_first.val() {
                        self.n_flags.d.next =
                            self.n_flags.q.val() | self.k_f_write.val() | self.k_f_bad.val();
                    }
                } else if self.is_write.val()
                    && !self.has_reth.val()
                    && self.pay32.val() > self.s_left.val()
                {
                    self.ct_nak_inv.d.next = self.ct_nak_inv.q.val() + 1;
                    self.p_ack.d.next = true;
                    self.o_syn.d.next = self.k_syn_inv.val();
                } else if self.is_send.val() && self.pay.val().any() && !self.mr_ok.val() {
                    self.ct_nak_acc.d.next = self.ct_nak_acc.q.val() + 1;
                    self.p_ack.d.next = true;
                    self.o_syn.d.next = self.k_syn_acc.val();
                    self.p_cpl.d.next = true;
                    self.o_cst.d.next = self.k_ws_prot.val();
                    self.o_clen.d.next = self.s_off.val();
                    self.n_ci.d.next = self.s_ci.val() + 1;
                    self.n_off.d.next = 0.into();
                    self.n_flags.d.next = self.n_flags.q.val() & !self.k_f_send.val();
                } else if self.is_send.val() && self.new_off.val() > self.w_len.val() {
                    self.ct_nak_inv.d.next = self.ct_nak_inv.q.val() + 1;
                    self.p_ack.d.next = true;
                    self.o_syn.d.next = self.k_syn_inv.val();
                    self.p_cpl.d.next = true;
                    self.o_cst.d.next = self.k_ws_len.val();
                    self.o_clen.d.next = self.s_off.val();
                    self.n_ci.d.next = self.s_ci.val() + 1;
                    self.n_off.d.next = 0.into();
                    self.n_flags.d.next = self.n_flags.q.val() & !self.k_f_send.val();
                } else {
                    // execute
                    self.ct_rx_req.d.next = self.ct_rx_req.q.val() + 1;
                    self.p_ack.d.next = self.h_ackreq.val();
                    self.n_psn.d.next = self.s_psn.val() + 1;
                    self.p_cmd.d.next = self.pay.val().any();
                    self.j_nb.d.next = self.nb.val().get_bits::<7>(0);
                    self.n_off.d.next = self.new_off.val();
                    if self.is_send.val() {
                        self.t_addr.d.next =
                            self.w_addr.val() + bit_cast::<64, 32>(self.s_off.val());
                        if self.is_first.val() {
                            self.n_flags.d.next = self.n_flags.q.val() | self.k_f_send.val();
                        }
                    } else if self.has_reth.val() {
                        self.t_addr.d.next = self.h_va.val();
                        self.n_va.d.next = self.h_va.val() + bit_cast::<64, 16>(self.pay.val());
                        self.n_left.d.next = self.h_rlen.val() - self.pay32.val();
                        self.n_rkey.d.next = self.h_rkey.val();
                        self.n_off.d.next = self.pay32.val();
                        self.o_clen.d.next = self.pay32.val();
                        if self.is_first.val() {
                            self.n_flags.d.next =
                                (self.n_flags.q.val() | self.k_f_write.val()) & !self.k_f_bad.val();
                        }
                    } else {
                        self.t_addr.d.next = self.s_va.val();
                        self.n_va.d.next = self.s_va.val() + bit_cast::<64, 16>(self.pay.val());
                        self.n_left.d.next = self.s_left.val() - self.pay32.val();
                    }
                    if self.is_last.val() || self.is_only.val() {
                        self.n_msn.d.next = self.s_msn.val() + 1;
                        self.n_off.d.next = 0.into();
                        self.n_flags.d.next = self.n_flags.q.val()
                            & !(self.k_f_send.val() | self.k_f_write.val() | self.k_f_bad.val());
                        if self.need_wqe.val() {
                            self.p_cpl.d.next = true;
                            self.n_ci.d.next = self.s_ci.val() + 1;
                        }
                    }
                }
            }
            St::Emit => {
                self.wr.cmd_valid.next = self.p_cmd.q.val();
                if self.wr.cmd_ready.val() {
                    self.p_cmd.d.next = false;
                }
                // the completion follows its payload's DMA command
                self.cpl.valid.next = self.p_cpl.q.val() && !self.p_cmd.q.val();
                if self.cpl.ready.val() && !self.p_cmd.q.val() {
                    self.p_cpl.d.next = false;
                }
                self.ack.valid.next = self.p_ack.q.val();
                if self.ack.ready.val() {
                    self.p_ack.d.next = false;
                }
                self.ackev.valid.next = self.p_aev.q.val();
                if self.ackev.ready.val() {
                    self.p_aev.d.next = false;
                }
                self.ctx.req.next = self.p_wr.q.val();
                self.ctx.we.next = true;
                self.ctx.addr.next =
                    bit_cast::<CTX_ADDR_BITS, 24>(self.h_qpn.val()) + self.k_rqs_base.val();
                if self.ctx.gnt.val() {
                    self.p_wr.d.next = false;
                }
                self.jq.wr.next = self.p_job.q.val() && !self.jq.full.val();
                if !self.jq.full.val() {
                    self.p_job.d.next = false;
                }
                if !(self.p_cmd.q.val()
                    || self.p_cpl.q.val()
                    || self.p_ack.q.val()
                    || self.p_aev.q.val()
                    || self.p_wr.q.val()
                    || self.p_job.q.val())
                {
                    self.hpop.next = true;
                    self.st.d.next = St::Idle;
                }
            }
            _ => {
                self.st.d.next = St::Idle;
            }
        }
        // QP and RqState records: the first and second read data after Idle
        if self.ctx.rvalid.val() && self.cap_ctx.val() {
            self.rcnt.d.next = self.rcnt.q.val() + 1;
            if self.rcnt.q.val() == 0 {
                self.qp.d.next = self.ctx.rdata.val();
            } else {
                self.rqs.d.next = self.ctx.rdata.val();
            }
        }
        self.hq.rd.next = self.hpop.val();
        // admission credits: + at an admitted first beat, - at a header pop
        if self.adm_take.val() && !self.hpop.val() {
            self.credits.d.next = self.credits.q.val() + 1;
        } else if !self.adm_take.val() && self.hpop.val() {
            self.credits.d.next = self.credits.q.val() - 1;
        }

        // =========================================================== mover
        self.j_base.next = self.jq.dout.val().get_bits::<BUF_BITS>(0);
        self.j_cnt.next = self.jq.dout.val().get_bits::<7>(8);
        self.j_sel.next = self.jq.dout.val().get_bits::<2>(15);
        self.j_end.next = self.jq.dout.val().get_bits::<9>(17);
        self.ra_n.next = self.ra.q.val();
        self.jq.rd.next = false;
        self.m_load.next = false;
        self.wr.dat_valid.next = false;
        self.wr.dat_last.next = self.m_left.q.val() == 1;
        self.mv_lo.next = self.prev.q.val() >> self.k_sh[0].val();
        self.mv_hi.next = self.pbuf.read_data.val() << self.k_shi[0].val();
        if self.m_sel.q.val() == 1 {
            self.mv_lo.next = self.prev.q.val() >> self.k_sh[1].val();
            self.mv_hi.next = self.pbuf.read_data.val() << self.k_shi[1].val();
        }
        if self.m_sel.q.val() == 2 {
            self.mv_lo.next = self.prev.q.val() >> self.k_sh[2].val();
            self.mv_hi.next = self.pbuf.read_data.val() << self.k_shi[2].val();
        }
        if self.m_sel.q.val() == 3 {
            self.mv_lo.next = self.prev.q.val() >> self.k_sh[3].val();
            self.mv_hi.next = self.pbuf.read_data.val() << self.k_shi[3].val();
        }
        self.wr.dat_data.next = self.mv_lo.val() | self.mv_hi.val();
        match self.mst.q.val() {
            MSt::Idle => {
                if !self.jq.empty.val() {
                    self.jq.rd.next = true;
                    if self.j_cnt.val() == 0 {
                        self.fptr.d.next = self.j_end.val();
                    } else {
                        self.m_load.next = true;
                    }
                }
            }
            MSt::Prime => {
                self.prev.d.next = self.pbuf.read_data.val();
                self.ra_n.next = self.ra.q.val() + 1;
                self.mst.d.next = MSt::Run;
            }
            MSt::Run => {
                self.wr.dat_valid.next = true;
                if self.wr.dat_ready.val() {
                    self.prev.d.next = self.pbuf.read_data.val();
                    self.ra_n.next = self.ra.q.val() + 1;
                    self.m_left.d.next = self.m_left.q.val() - 1;
                    if self.m_left.q.val() == 1 {
                        self.fptr.d.next = self.m_end.q.val();
                        self.mst.d.next = MSt::Idle;
                        // chain straight into the next payload (one bubble per frame)
                        if !self.jq.empty.val() && self.j_cnt.val().any() {
                            self.jq.rd.next = true;
                            self.m_load.next = true;
                        }
                    }
                }
            }
            _ => {
                self.mst.d.next = MSt::Idle;
            }
        }
        if self.m_load.val() {
            self.ra_n.next = self.j_base.val();
            self.m_left.d.next = self.j_cnt.val();
            self.m_sel.d.next = self.j_sel.val();
            self.m_end.d.next = self.j_end.val();
            self.mst.d.next = MSt::Prime;
        }
        self.ra.d.next = self.ra_n.val();
        self.pbuf.read_address.next = self.ra_n.val();

        // =========================================================== counters, reset
        self.cnt_rx_req.next = self.ct_rx_req.q.val();
        self.cnt_rx_dup.next = self.ct_rx_dup.q.val();
        self.cnt_nak_seq.next = self.ct_nak_seq.q.val();
        self.cnt_nak_acc.next = self.ct_nak_acc.q.val();
        self.cnt_nak_inv.next = self.ct_nak_inv.q.val();
        self.cnt_nak_rnr.next = self.ct_nak_rnr.q.val();
        self.cnt_drop_qp.next = self.ct_drop_qp.q.val();
        self.cnt_drop_opcode.next = self.ct_drop_op.q.val();
        self.cnt_drop_icrc.next = self.ct_drop_icrc.q.val();
        self.cnt_drop_parse.next = self.ct_drop_parse.q.val();
        self.cnt_drop_buf.next = self.ct_drop_buf.q.val();
        if self.rst.val() {
            self.in_mid.d.next = false;
            self.in_adm.d.next = false;
            self.in_over.d.next = false;
            self.wptr.d.next = 0.into();
            self.fptr.d.next = 0.into();
            self.crc_on.d.next = false;
            self.credits.d.next = 0.into();
            self.st.d.next = St::Idle;
            self.mst.d.next = MSt::Idle;
            self.p_cmd.d.next = false;
            self.p_cpl.d.next = false;
            self.p_ack.d.next = false;
            self.p_wr.d.next = false;
            self.p_job.d.next = false;
            self.p_aev.d.next = false;
            self.ct_rx_req.d.next = 0.into();
            self.ct_rx_dup.d.next = 0.into();
            self.ct_nak_seq.d.next = 0.into();
            self.ct_nak_acc.d.next = 0.into();
            self.ct_nak_inv.d.next = 0.into();
            self.ct_nak_rnr.d.next = 0.into();
            self.ct_drop_qp.d.next = 0.into();
            self.ct_drop_op.d.next = 0.into();
            self.ct_drop_icrc.d.next = 0.into();
            self.ct_drop_parse.d.next = 0.into();
            self.ct_drop_buf.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{
        CplSink, CtxModel, DmaWrModel, RingModel, chance, model, reset, rng,
    };
    use crate::common::vlt::DynModel;
    use crate::net::icrc;
    use rand::Rng;
    use rand_chacha::ChaCha8Rng;
    use rnic_abi::params::DEFAULT as P;
    use rnic_abi::queue::{Cqe, make_key, wqe_op};
    use std::collections::{HashMap, VecDeque};

    const QPN: u32 = 5;
    const RQPN: u32 = 0x77;
    const PD: u32 = 7;
    const RCQN: u16 = 9;
    const MR_IDX: u32 = 3;
    const MR_IOVA: u64 = 0x10_0000;
    const MR_LEN: u64 = 0x4_0000;
    const RBUF_MR: u32 = 4;
    const RBUF_IOVA: u64 = 0x80_0000;
    const PSN0: u32 = 0xFF_FFF0; // wraps during the tests
    const DMAC: [u8; 6] = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];
    const SMAC: [u8; 6] = [0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE];
    const SIP: u32 = 0x0A00_0001;
    const DIP: u32 = 0x0A00_0002;
    const SPORT: u16 = 0xC123;

    fn rkey() -> u32 {
        make_key(MR_IDX, 0x5A)
    }
    fn lkey() -> u32 {
        make_key(RBUF_MR, 0x21)
    }

    /// One RoCE v2 packet as the test's encoder builds it (IBTA 9.2-9.3, A17; RFC 791/768).
    #[derive(Clone, Debug, Default)]
    struct Pkt {
        op: u8,
        qpn: u32,
        psn: u32,
        ackreq: bool,
        reth: Option<(u64, u32, u32)>,
        aeth: Option<(u8, u32)>,
        imm: Option<u32>,
        payload: Vec<u8>,
    }

    /// Encode a frame: Ethernet + IPv4 + UDP + BTH + RETH/AETH/ImmDt + payload + pad + ICRC,
    /// then Ethernet padding to 60 bytes.
    fn encode(p: &Pkt) -> Vec<u8> {
        let pad = (4 - p.payload.len() % 4) % 4;
        let ext = 16 * p.reth.is_some() as usize
            + 4 * p.aeth.is_some() as usize
            + 4 * p.imm.is_some() as usize;
        let udp_len = 8 + 12 + ext + p.payload.len() + pad + 4;
        let tot = 20 + udp_len;
        let mut f = vec![];
        f.extend(SMAC); // the peer sends to our MAC: any value works for the RX path
        f.extend(DMAC);
        f.extend([0x08, 0x00]);
        f.extend([0x45, 0x00]);
        f.extend((tot as u16).to_be_bytes());
        f.extend([0x00, 0x00, 0x40, 0x00, 64, 17, 0, 0]);
        f.extend(DIP.to_be_bytes());
        f.extend(SIP.to_be_bytes());
        let mut sum: u32 = f[14..34]
            .chunks(2)
            .map(|w| u16::from_be_bytes([w[0], w[1]]) as u32)
            .sum();
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        f[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        f.extend(0xD000u16.to_be_bytes());
        f.extend(4791u16.to_be_bytes());
        f.extend((udp_len as u16).to_be_bytes());
        f.extend([0, 0]);
        f.push(p.op);
        f.push((pad as u8) << 4);
        f.extend([0xFF, 0xFF, 0]);
        f.extend(&p.qpn.to_be_bytes()[1..]);
        f.push((p.ackreq as u8) << 7);
        f.extend(&p.psn.to_be_bytes()[1..]);
        if let Some((va, rk, len)) = p.reth {
            f.extend(va.to_be_bytes());
            f.extend(rk.to_be_bytes());
            f.extend(len.to_be_bytes());
        }
        if let Some((syn, msn)) = p.aeth {
            f.push(syn);
            f.extend(&msn.to_be_bytes()[1..]);
        }
        if let Some(i) = p.imm {
            f.extend(i.to_be_bytes());
        }
        f.extend(&p.payload);
        f.extend(std::iter::repeat_n(0, pad));
        let c = icrc::icrc(&f).unwrap();
        f.extend(c.to_le_bytes());
        while f.len() < 60 {
            f.push(0);
        }
        f
    }

    #[derive(Clone, Debug, PartialEq)]
    struct AckOut {
        dmac: u64,
        smac: u64,
        sip: u32,
        dip: u32,
        sport: u16,
        dqpn: u32,
        psn: u32,
        syn: u8,
        msn: u32,
    }

    struct Bench {
        m: DynModel,
        r: ChaCha8Rng,
        ctx: CtxModel,
        ring: RingModel,
        dma: DmaWrModel,
        cpl: CplSink,
        acks: Vec<AckOut>,
        aevs: Vec<(u32, u32, u8, u32)>,
        beats: VecDeque<([u8; 64], u64, bool, bool, usize)>,
        idle: f64,
        stall: f64,
        ack_ready: bool,
        aev_ready: bool,
        /// cycle of each frame's last beat, by frame number
        last_at: Vec<u64>,
        /// cycles of the first DMA data beat / command of each payload
        dat_first: Vec<u64>,
        cmd_at: Vec<u64>,
        prev_cv: bool,
        prev_dv: bool,
        frames: usize,
        /// cycles a beat was held by flow control (tready low)
        held: u64,
    }

    fn mac48(m: [u8; 6]) -> u64 {
        m.iter().fold(0, |a, b| a << 8 | *b as u64)
    }

    impl Bench {
        fn new(seed: u64, idle: f64, stall: f64) -> Bench {
            let mut m = model(RxResp::default(), "rxresp_block");
            reset(&mut m);
            let mut b = Bench {
                m,
                r: rng(seed),
                ctx: CtxModel::new("ctx", stall),
                ring: RingModel::new("ring", stall),
                dma: DmaWrModel::new("wr", stall),
                cpl: CplSink::new("cpl", stall),
                acks: vec![],
                aevs: vec![],
                beats: VecDeque::new(),
                idle,
                stall,
                ack_ready: false,
                aev_ready: false,
                last_at: vec![],
                dat_first: vec![],
                cmd_at: vec![],
                prev_cv: false,
                prev_dv: false,
                frames: 0,
                held: 0,
            };
            b.set_qp(
                QPN,
                rnic_abi::queue::qp_state::RTS,
                access::REMOTE_WRITE as u8,
            );
            b.set_rqs(QPN, PSN0, 0);
            b.set_mr(
                MR_IDX,
                MrEntry {
                    key: rkey(),
                    pd: PD,
                    iova: MR_IOVA,
                    length: MR_LEN,
                    access: access::REMOTE_WRITE | access::LOCAL_WRITE,
                    flags: 1,
                },
            );
            b.set_mr(
                RBUF_MR,
                MrEntry {
                    key: lkey(),
                    pd: PD,
                    iova: RBUF_IOVA,
                    length: 0x10_0000,
                    access: access::LOCAL_WRITE,
                    flags: 1,
                },
            );
            b
        }
        fn set_qp(&mut self, qpn: u32, state: u8, acc: u8) {
            let q = QpContext {
                state,
                qp_type: 2,
                path_mtu: 3,
                access: acc,
                remote_qpn: RQPN,
                dest_mac: DMAC,
                udp_sport: SPORT,
                dest_ip: DIP,
                src_ip: SIP,
                pd: PD,
                send_cqn: 1,
                recv_cqn: RCQN,
                src_mac: SMAC,
                ..Default::default()
            };
            self.ctx.rec.insert(qpn, q.encode());
        }
        fn set_rqs(&mut self, qpn: u32, psn: u32, pi: u16) {
            let s = RqState {
                rq_psn: psn,
                rq_pi: pi,
                ..Default::default()
            };
            self.ctx.rec.insert(P.ctx_base(3) + qpn, s.encode());
        }
        fn rqs(&self, qpn: u32) -> RqState {
            RqState::decode(&self.ctx.get(P.ctx_base(3) + qpn))
        }
        fn set_mr(&mut self, idx: u32, e: MrEntry) {
            self.ctx.rec.insert(P.ctx_base(2) + idx, e.encode());
        }
        /// Post receive WQE `idx` of QP `qpn` and advance rq_pi to idx + 1 (a doorbell).
        fn post_recv(&mut self, qpn: u32, idx: u16, addr: u64, len: u32, wr_id: u64) {
            let w = Wqe {
                opcode: wqe_op::RECV,
                slots: 1,
                length: len,
                wr_id,
                local_addr: addr,
                lkey: lkey(),
                ..Default::default()
            };
            self.ring
                .slots
                .insert(P.rq_slot(qpn, idx as u32) / 64, w.encode());
            let a = P.ctx_base(3) + qpn;
            let mut rec = self.ctx.get(a);
            let f = RqState::field("rq_pi").unwrap();
            rec[f.offset..f.offset + 2].copy_from_slice(&(idx.wrapping_add(1)).to_le_bytes());
            self.ctx.rec.insert(a, rec);
        }
        fn send_frame(&mut self, f: &[u8], user: bool) {
            let n = f.len().div_ceil(64);
            for i in 0..n {
                let c = &f[64 * i..(64 * i + 64).min(f.len())];
                let mut d = [0u8; 64];
                self.r.fill(&mut d[..]);
                d[..c.len()].copy_from_slice(c);
                let keep = if c.len() == 64 {
                    u64::MAX
                } else {
                    (1u64 << c.len()) - 1
                };
                self.beats
                    .push_back((d, keep, i + 1 == n, user && i + 1 == n, self.frames));
            }
            self.frames += 1;
        }
        fn send(&mut self, p: &Pkt) {
            let f = encode(p);
            self.send_frame(&f, false);
        }
        fn cycle(&mut self) {
            let go = !self.beats.is_empty() && !chance(&mut self.r, self.idle);
            let mut last_frame = None;
            if go {
                let (d, k, l, u, fno) = *self.beats.front().unwrap();
                self.m.set_bytes("rx_tdata", &d);
                self.m.set("rx_tkeep", k);
                self.m.set("rx_tlast", l as u64);
                self.m.set("rx_tuser", u as u64);
                if l {
                    last_frame = Some(fno);
                }
            } else {
                let mut d = [0u8; 64];
                self.r.fill(&mut d[..]);
                self.m.set_bytes("rx_tdata", &d);
                self.m.set("rx_tkeep", self.r.random());
                self.m.set("rx_tlast", self.r.random::<bool>() as u64);
                self.m.set("rx_tuser", self.r.random::<bool>() as u64);
            }
            self.m.set("rx_tvalid", go as u64);
            self.ctx.drive(&mut self.m, &mut self.r);
            self.ring.drive(&mut self.m, &mut self.r);
            self.dma.drive(&mut self.m, &mut self.r);
            self.cpl.drive(&mut self.m, &mut self.r);
            self.ack_ready = !chance(&mut self.r, self.stall);
            self.aev_ready = !chance(&mut self.r, self.stall);
            self.m.set("ack_ready", self.ack_ready as u64);
            self.m.set("ackev_ready", self.aev_ready as u64);
            let now = self.m.cycle;
            self.m.tick();
            // a beat is taken when tready is high (flow control holds a frame's first beat)
            if go && !self.m.bit("rx_tready") {
                self.held += 1;
                last_frame = None;
            } else if go {
                self.beats.pop_front();
            }
            if let Some(f) = last_frame {
                assert_eq!(self.last_at.len(), f);
                self.last_at.push(now);
            }
            self.ctx.observe(&mut self.m);
            self.ring.observe(&mut self.m);
            // commands and payloads are separated by at least one idle cycle: rising edges
            let (cv, dv) = (self.m.bit("wr_cmd_valid"), self.m.bit("wr_dat_valid"));
            if cv && !self.prev_cv {
                self.cmd_at.push(now);
            }
            if dv && !self.prev_dv {
                self.dat_first.push(now);
            }
            (self.prev_cv, self.prev_dv) = (cv, dv);
            self.dma.observe(&mut self.m, &mut self.r);
            self.cpl.observe(&mut self.m);
            if self.ack_ready && self.m.bit("ack_valid") {
                let g = |s: &str| self.m.get(&format!("ack_{s}"));
                self.acks.push(AckOut {
                    dmac: g("dmac"),
                    smac: g("smac"),
                    sip: g("sip") as u32,
                    dip: g("dip") as u32,
                    sport: g("sport") as u16,
                    dqpn: g("dqpn") as u32,
                    psn: g("psn") as u32,
                    syn: g("syndrome") as u8,
                    msn: g("msn") as u32,
                });
            }
            if self.aev_ready && self.m.bit("ackev_valid") {
                let g = |s: &str| self.m.get(&format!("ackev_{s}"));
                self.aevs.push((
                    g("qpn") as u32,
                    g("psn") as u32,
                    g("syndrome") as u8,
                    g("msn") as u32,
                ));
            }
        }
        /// Run until every beat is in and the block has been quiet for a while.
        fn run(&mut self) {
            let mut quiet = 0;
            let mut n = 0;
            while quiet < 200 {
                self.cycle();
                n += 1;
                assert!(n < 2_000_000, "no progress");
                let busy = !self.beats.is_empty()
                    || self.m.bit("wr_dat_valid")
                    || self.m.bit("ctx_req")
                    || self.m.bit("ring_req")
                    || self.m.bit("cpl_valid")
                    || self.m.bit("ack_valid")
                    || self.m.bit("ackev_valid");
                quiet = if busy { 0 } else { quiet + 1 };
            }
        }
        fn dump(&self, what: &str) {
            let c: Vec<String> = CNTS
                .iter()
                .map(|c| format!("{}={}", &c[4..], self.m.get(c)))
                .collect();
            eprintln!(
                "{what}: cycle {} frames {} {}; rqs {:?}",
                self.m.cycle,
                self.frames,
                c.join(" "),
                self.rqs(QPN)
            );
        }
        fn cnt(&self, n: &str) -> u64 {
            self.m.get(n)
        }
        fn ack(&self, psn: u32, syn: u8, msn: u32) -> AckOut {
            AckOut {
                dmac: mac48(DMAC),
                smac: mac48(SMAC),
                sip: SIP,
                dip: DIP,
                sport: SPORT,
                dqpn: RQPN,
                psn: psn & 0xFF_FFFF,
                syn,
                msn,
            }
        }
    }

    const CNTS: [&str; 11] = [
        "cnt_rx_req",
        "cnt_rx_dup",
        "cnt_nak_seq",
        "cnt_nak_acc",
        "cnt_nak_inv",
        "cnt_nak_rnr",
        "cnt_drop_qp",
        "cnt_drop_opcode",
        "cnt_drop_icrc",
        "cnt_drop_parse",
        "cnt_drop_buf",
    ];

    fn psn(i: u32) -> u32 {
        PSN0.wrapping_add(i) & 0xFF_FFFF
    }

    fn bytes(r: &mut ChaCha8Rng, n: usize) -> Vec<u8> {
        (0..n).map(|_| r.random()).collect()
    }

    /// WRITE ONLY of several lengths at unaligned VAs and a FIRST/MIDDLE/LAST message land at
    /// the right bytes; ACKs on AckReq with PSN and MSN; RqState advanced.
    #[test]
    fn writes_land() {
        for (seed, idle, stall) in [(1, 0.0, 0.0), (2, 0.4, 0.3)] {
            let mut b = Bench::new(seed, idle, stall);
            let mut r = rng(seed + 100);
            let mut want: HashMap<u64, u8> = HashMap::new();
            let mut want_cmds = vec![];
            let mut want_acks = vec![];
            let mut i = 0;
            let mut va = MR_IOVA + 3;
            for len in [1usize, 63, 64, 65, 4095, 4096, 2, 100] {
                let data = bytes(&mut r, len);
                let ackreq = i % 2 == 0;
                b.send(&Pkt {
                    op: opcode::WRITE_ONLY,
                    qpn: QPN,
                    psn: psn(i),
                    ackreq,
                    reth: Some((va, rkey(), len as u32)),
                    payload: data.clone(),
                    ..Default::default()
                });
                for (k, d) in data.iter().enumerate() {
                    want.insert(va + k as u64, *d);
                }
                want_cmds.push((va, len as u32));
                if ackreq {
                    want_acks.push(b.ack(psn(i), aeth::ACK, i + 1));
                }
                i += 1;
                va += len as u64 + 1 + r.random_range(0..200);
            }
            // FIRST / MIDDLE / MIDDLE / LAST (1024-byte MTU), ack on the last only
            let total = 3 * 1024 + 77;
            let data = bytes(&mut r, total);
            for (j, op) in [
                opcode::WRITE_FIRST,
                opcode::WRITE_MIDDLE,
                opcode::WRITE_MIDDLE,
                opcode::WRITE_LAST,
            ]
            .into_iter()
            .enumerate()
            {
                let chunk = data[1024 * j..(1024 * (j + 1)).min(total)].to_vec();
                b.send(&Pkt {
                    op,
                    qpn: QPN,
                    psn: psn(i),
                    ackreq: j == 3,
                    reth: (j == 0).then_some((va, rkey(), total as u32)),
                    payload: chunk.clone(),
                    ..Default::default()
                });
                want_cmds.push((va + 1024 * j as u64, chunk.len() as u32));
                i += 1;
            }
            want_acks.push(b.ack(psn(i - 1), aeth::ACK, 9));
            for (k, d) in data.iter().enumerate() {
                want.insert(va + k as u64, *d);
            }
            b.run();
            b.dump("writes_land");
            assert_eq!(b.dma.cmds, want_cmds, "seed {seed}");
            assert_eq!(b.dma.mem.len(), want.len(), "bytes written");
            for (a, d) in &want {
                assert_eq!(b.dma.mem.get(a), Some(d), "byte at {a:#x}");
            }
            assert_eq!(b.acks, want_acks);
            let s = b.rqs(QPN);
            assert_eq!((s.rq_psn, s.msn, s.flags), (psn(i), 9, 0));
            assert_eq!(b.cnt("cnt_rx_req"), i as u64);
            assert!(b.cpl.got.is_empty());
            for c in [
                "cnt_rx_dup",
                "cnt_nak_seq",
                "cnt_nak_acc",
                "cnt_nak_inv",
                "cnt_nak_rnr",
                "cnt_drop_qp",
                "cnt_drop_opcode",
                "cnt_drop_icrc",
                "cnt_drop_parse",
                "cnt_drop_buf",
            ] {
                assert_eq!(b.cnt(c), 0, "{c}");
            }
            // RqState writes never touch rq_pi
            let f = RqState::field("rq_pi").unwrap();
            for (idx, be) in &b.ctx.writes {
                assert_eq!(*idx, P.ctx_base(3) + QPN);
                assert_eq!(be >> f.offset & 3, 0);
            }
        }
    }

    fn wr_only(q: u32, i: u32, va: u64, key: u32, data: &[u8], ackreq: bool) -> Pkt {
        Pkt {
            op: opcode::WRITE_ONLY,
            qpn: q,
            psn: psn(i),
            ackreq,
            reth: Some((va, key, data.len() as u32)),
            payload: data.to_vec(),
            ..Default::default()
        }
    }

    fn cqe(wr_id: u64, byte_len: u32, imm: Option<u32>, op: u8, status: u8, idx: u16) -> Cqe {
        Cqe {
            wr_id,
            byte_len,
            imm_data: imm.unwrap_or(0),
            qp_num: QPN,
            src_qp: RQPN,
            opcode: op,
            status,
            vendor_err: 0,
            flags: if imm.is_some() { cqe_flag::WITH_IMM } else { 0 },
            sq_index: idx,
            reserved: 0,
        }
    }

    /// SEND (multi-packet with ImmDt, single, zero-length Ethernet-padded) into receive WQEs,
    /// WRITE_ONLY_IMM and WRITE FIRST + LAST_IMM consuming receive WQEs: data placement,
    /// completions (byte_len, imm, WITH_IMM, src_qp, wr_id, wqe_idx), ACKs, rq_ci.
    #[test]
    fn sends_and_write_imm() {
        for (seed, idle, stall) in [(3, 0.0, 0.0), (4, 0.5, 0.4)] {
            let mut b = Bench::new(seed, idle, stall);
            let mut r = rng(seed + 100);
            let a0 = RBUF_IOVA + 5;
            let a1 = RBUF_IOVA + 0x2001;
            let a4 = RBUF_IOVA + 0x3000;
            b.post_recv(QPN, 0, a0, 5000, 0x1000);
            b.post_recv(QPN, 1, a1, 100, 0x1001);
            b.post_recv(QPN, 2, 0, 0, 0x1002);
            b.post_recv(QPN, 3, 0, 0, 0x1003);
            b.post_recv(QPN, 4, a4, 64, 0x1004);
            let mut want: HashMap<u64, u8> = HashMap::new();
            let mut put = |a: u64, d: &[u8]| {
                for (k, x) in d.iter().enumerate() {
                    want.insert(a + k as u64, *x);
                }
            };
            let mut acks = vec![];
            let mut cpls = vec![];
            // SEND FIRST / MIDDLE / LAST_IMM
            let m = bytes(&mut r, 2348);
            let imm0 = 0xDEAD_BEEF;
            for (j, (op, lo, hi)) in [
                (opcode::SEND_FIRST, 0, 1024),
                (opcode::SEND_MIDDLE, 1024, 2048),
                (opcode::SEND_LAST_IMM, 2048, 2348),
            ]
            .into_iter()
            .enumerate()
            {
                b.send(&Pkt {
                    op,
                    qpn: QPN,
                    psn: psn(j as u32),
                    ackreq: j == 2,
                    imm: (j == 2).then_some(imm0),
                    payload: m[lo..hi].to_vec(),
                    ..Default::default()
                });
            }
            put(a0, &m);
            acks.push(b.ack(psn(2), aeth::ACK, 1));
            cpls.push(cqe(0x1000, 2348, Some(imm0), wc_op::RECV, 0, 0));
            // SEND ONLY
            let d1 = bytes(&mut r, 17);
            b.send(&Pkt {
                op: opcode::SEND_ONLY,
                qpn: QPN,
                psn: psn(3),
                ackreq: true,
                payload: d1.clone(),
                ..Default::default()
            });
            put(a1, &d1);
            acks.push(b.ack(psn(3), aeth::ACK, 2));
            cpls.push(cqe(0x1001, 17, None, wc_op::RECV, 0, 1));
            // WRITE ONLY IMM
            let d2 = bytes(&mut r, 50);
            let va2 = MR_IOVA + 0x777;
            let mut p = wr_only(QPN, 4, va2, rkey(), &d2, false);
            p.op = opcode::WRITE_ONLY_IMM;
            p.imm = Some(0x1234_5678);
            b.send(&p);
            put(va2, &d2);
            cpls.push(cqe(
                0x1002,
                50,
                Some(0x1234_5678),
                wc_op::RECV_RDMA_WITH_IMM,
                0,
                2,
            ));
            // WRITE FIRST + LAST_IMM
            let d3 = bytes(&mut r, 1034);
            let va3 = MR_IOVA + 0x2003;
            let mut p = wr_only(QPN, 5, va3, rkey(), &d3[..1024], false);
            p.op = opcode::WRITE_FIRST;
            p.reth = Some((va3, rkey(), 1034));
            b.send(&p);
            b.send(&Pkt {
                op: opcode::WRITE_LAST_IMM,
                qpn: QPN,
                psn: psn(6),
                ackreq: true,
                imm: Some(7),
                payload: d3[1024..].to_vec(),
                ..Default::default()
            });
            put(va3, &d3);
            acks.push(b.ack(psn(6), aeth::ACK, 4));
            cpls.push(cqe(0x1003, 1034, Some(7), wc_op::RECV_RDMA_WITH_IMM, 0, 3));
            // zero-length SEND ONLY: a 58-byte frame padded to 60 with junk padding bytes
            let mut f = encode(&Pkt {
                op: opcode::SEND_ONLY,
                qpn: QPN,
                psn: psn(7),
                ackreq: true,
                ..Default::default()
            });
            assert_eq!(f.len(), 60);
            f[58] = 0x5A;
            f[59] = 0xA5;
            b.send_frame(&f, false);
            acks.push(b.ack(psn(7), aeth::ACK, 5));
            cpls.push(cqe(0x1004, 0, None, wc_op::RECV, 0, 4));
            b.run();
            b.dump("sends_and_write_imm");
            assert_eq!(b.dma.mem.len(), want.len(), "bytes written");
            for (a, d) in &want {
                assert_eq!(b.dma.mem.get(a), Some(d), "byte at {a:#x}");
            }
            assert_eq!(b.acks, acks);
            let got: Vec<Cqe> = b.cpl.got.iter().map(|x| x.1).collect();
            assert_eq!(got, cpls);
            assert!(b.cpl.got.iter().all(|x| x.0 == RCQN));
            let s = b.rqs(QPN);
            assert_eq!(
                (s.rq_psn, s.msn, s.rq_ci, s.rq_pi, s.flags),
                (psn(8), 5, 5, 5, 0)
            );
            assert_eq!(b.cnt("cnt_rx_req"), 8);
            for c in &CNTS[1..] {
                assert_eq!(b.cnt(c), 0, "{c}");
            }
        }
    }

    /// Duplicate and future PSNs, access errors (rkey, PD, bounds, MR access, QP access, the
    /// rest of a failed WRITE), opcode-sequence error, RNR, receive overflow: the right
    /// ACK/NAK each, nothing written where it must not be, RqState and counters.
    #[test]
    fn psn_and_naks() {
        for (seed, idle, stall) in [(5, 0.0, 0.0), (6, 0.5, 0.4)] {
            let mut b = Bench::new(seed, idle, stall);
            let mut r = rng(seed + 100);
            let mr = |b: &mut Bench, idx: u32, pd: u32, acc: u32| {
                b.set_mr(
                    idx,
                    MrEntry {
                        key: make_key(idx, 1),
                        pd,
                        iova: MR_IOVA,
                        length: MR_LEN,
                        access: acc,
                        flags: 1,
                    },
                );
                make_key(idx, 1)
            };
            let k_pd = mr(&mut b, 6, PD + 1, access::REMOTE_WRITE);
            let k_acc = mr(&mut b, 7, PD, access::LOCAL_WRITE | access::REMOTE_READ);
            b.set_qp(6, qp_state::RTR, 0);
            b.set_rqs(6, 40, 0);
            let mut want: HashMap<u64, u8> = HashMap::new();
            let mut acks = vec![];
            let va = MR_IOVA + 0x100;
            let mut good = |b: &mut Bench, i: u32, a: u64, r: &mut ChaCha8Rng| {
                let d = bytes(r, 33);
                b.send(&wr_only(QPN, i, a, rkey(), &d, true));
                for (k, x) in d.iter().enumerate() {
                    want.insert(a + k as u64, *x);
                }
            };
            let junk = bytes(&mut r, 40);
            good(&mut b, 0, va, &mut r);
            acks.push(b.ack(psn(0), aeth::ACK, 1));
            b.send(&wr_only(QPN, 0, va + 0x1000, rkey(), &junk, true)); // duplicate
            acks.push(b.ack(psn(0), aeth::ACK, 1));
            b.send(&wr_only(QPN, 3, va + 0x1000, rkey(), &junk, true)); // future
            acks.push(b.ack(psn(1), aeth::NAK_PSN_SEQ_ERR, 1));
            b.send(&wr_only(QPN, 4, va + 0x1000, rkey(), &junk, true)); // future, silent
            good(&mut b, 1, va + 0x200, &mut r);
            acks.push(b.ack(psn(1), aeth::ACK, 2));
            b.send(&wr_only(QPN, 5, va + 0x1000, rkey(), &junk, false)); // future: NAK again
            acks.push(b.ack(psn(2), aeth::NAK_PSN_SEQ_ERR, 2));
            // access errors: each NAKed, PSN consumed
            let bad_gen = make_key(MR_IDX, 0x5B);
            b.send(&wr_only(QPN, 2, va + 0x1000, bad_gen, &junk, false));
            acks.push(b.ack(psn(2), aeth::NAK_REM_ACCESS, 2));
            b.send(&wr_only(QPN, 3, va + 0x1000, k_pd, &junk, false));
            acks.push(b.ack(psn(3), aeth::NAK_REM_ACCESS, 2));
            b.send(&wr_only(
                QPN,
                4,
                MR_IOVA + MR_LEN - 39,
                rkey(),
                &junk,
                false,
            ));
            acks.push(b.ack(psn(4), aeth::NAK_REM_ACCESS, 2));
            b.send(&wr_only(QPN, 5, va + 0x1000, k_acc, &junk, false));
            acks.push(b.ack(psn(5), aeth::NAK_REM_ACCESS, 2));
            // a WRITE FIRST failing: its MIDDLE and LAST are consumed, not written, not ACKed
            let big = bytes(&mut r, 256);
            let mut p = wr_only(QPN, 6, va + 0x1000, bad_gen, &big, false);
            p.op = opcode::WRITE_FIRST;
            p.reth = Some((va + 0x1000, bad_gen, 768));
            b.send(&p);
            acks.push(b.ack(psn(6), aeth::NAK_REM_ACCESS, 2));
            let mut p = wr_only(QPN, 7, 0, 0, &big, true);
            p.op = opcode::WRITE_MIDDLE;
            p.reth = None;
            b.send(&p);
            p.op = opcode::WRITE_LAST;
            p.psn = psn(8);
            b.send(&p);
            // MIDDLE without a message in progress: invalid request, PSN not consumed
            p.op = opcode::WRITE_MIDDLE;
            p.psn = psn(9);
            b.send(&p);
            acks.push(b.ack(psn(9), aeth::NAK_INV_REQ, 2));
            // SEND without a receive WQE: RNR NAK
            let s = Pkt {
                op: opcode::SEND_ONLY,
                qpn: QPN,
                psn: psn(9),
                payload: junk[..20].to_vec(),
                ..Default::default()
            };
            b.send(&s);
            acks.push(b.ack(psn(9), aeth::RNR_NAK, 2));
            // QP without REMOTE_WRITE access (QP 6, RTR)
            b.send(&Pkt {
                psn: 40,
                ..wr_only(6, 0, va + 0x1000, rkey(), &junk, false)
            });
            let mut a6 = b.ack(40, aeth::NAK_REM_ACCESS, 0);
            a6.dqpn = RQPN;
            acks.push(a6);
            b.run();
            // receive overflow: a WQE of 10 bytes, a 20-byte SEND
            b.post_recv(QPN, 0, RBUF_IOVA, 10, 0x2000);
            b.send(&s);
            acks.push(b.ack(psn(9), aeth::NAK_INV_REQ, 2));
            good(&mut b, 9, va + 0x300, &mut r);
            acks.push(b.ack(psn(9), aeth::ACK, 3));
            b.run();
            b.dump("psn_and_naks");
            assert_eq!(b.acks, acks);
            assert_eq!(b.dma.cmds.len(), 3);
            assert_eq!(b.dma.mem.len(), want.len(), "bytes written");
            for (a, d) in &want {
                assert_eq!(b.dma.mem.get(a), Some(d), "byte at {a:#x}");
            }
            let got: Vec<Cqe> = b.cpl.got.iter().map(|x| x.1).collect();
            assert_eq!(
                got,
                [cqe(0x2000, 0, None, wc_op::RECV, wc_status::LOC_LEN_ERR, 0)]
            );
            let s = b.rqs(QPN);
            assert_eq!((s.rq_psn, s.msn, s.rq_ci, s.flags), (psn(10), 3, 1, 0));
            let s6 = b.rqs(6);
            assert_eq!((s6.rq_psn, s6.msn), (41, 0));
            let want_cnt = [3, 1, 2, 6, 2, 1, 0, 0, 0, 0, 0];
            for (c, w) in CNTS.iter().zip(want_cnt) {
                assert_eq!(b.cnt(c), w, "{c}");
            }
        }
    }

    /// Drops: unknown QP, QP not RTR/RTS, bad ICRC, MAC error (tuser), not IPv4, READ
    /// (opcode); ACKNOWLEDGE frames to ackev; the block still works afterwards.
    #[test]
    fn drops_and_ackev() {
        for (seed, idle, stall) in [(7, 0.0, 0.0), (8, 0.5, 0.4)] {
            let mut b = Bench::new(seed, idle, stall);
            let mut r = rng(seed + 100);
            b.set_qp(7, qp_state::INIT, access::REMOTE_WRITE as u8);
            let junk = bytes(&mut r, 100);
            let va = MR_IOVA + 0x40;
            b.send(&wr_only(300, 0, va, rkey(), &junk, true)); // unknown QP
            b.send(&wr_only(7, 0, va, rkey(), &junk, true)); // QP in INIT
            let mut f = encode(&wr_only(QPN, 0, va, rkey(), &junk, true));
            f[80] ^= 0x10; // payload bit flip: ICRC bad
            b.send_frame(&f, false);
            let f = encode(&wr_only(QPN, 0, va, rkey(), &junk, true));
            b.send_frame(&f, true); // MAC error on the last beat
            let mut g = f.clone();
            g[12] = 0x86;
            g[13] = 0xDD; // IPv6 ethertype
            b.send_frame(&g, false);
            b.send(&Pkt {
                op: opcode::READ_REQUEST,
                qpn: QPN,
                psn: psn(0),
                reth: Some((va, rkey(), 64)),
                ..Default::default()
            });
            let mut aevs = vec![];
            for (q, ps, syn, msn) in [
                (QPN, 0x123456, aeth::ACK, 77),
                (300, 1, aeth::ACK, 1),
                (9, 0xFFFFFF, aeth::NAK_REM_ACCESS, 0xABCDEF),
            ] {
                b.send(&Pkt {
                    op: opcode::ACKNOWLEDGE,
                    qpn: q,
                    psn: ps,
                    aeth: Some((syn, msn)),
                    ..Default::default()
                });
                if q < P.num_qps {
                    aevs.push((q, ps, syn, msn));
                }
            }
            b.send(&wr_only(QPN, 0, va, rkey(), &junk, true));
            b.run();
            b.dump("drops_and_ackev");
            assert_eq!(b.aevs, aevs);
            assert_eq!(b.acks, [b.ack(psn(0), aeth::ACK, 1)]);
            assert_eq!(b.dma.cmds, [(va, 100)]);
            for (k, d) in junk.iter().enumerate() {
                assert_eq!(b.dma.mem.get(&(va + k as u64)), Some(d));
            }
            let want_cnt = [1, 0, 0, 0, 0, 0, 3, 1, 1, 2, 0];
            for (c, w) in CNTS.iter().zip(want_cnt) {
                assert_eq!(b.cnt(c), w, "{c}");
            }
        }
    }

    /// The shared SoftRoCE capture through the block with no QP set up (all QPs in RESET):
    /// every RoCE frame passes the ICRC and the parser; ACKNOWLEDGEs reach ackev, requests are
    /// dropped for the QP state, READs for the opcode, non-IPv4 frames by the parser. (Idle
    /// between beats: back-to-back one-beat frames outrun the FSM and fill the header FIFO.)
    #[test]
    fn vectors() {
        let v = crate::common::testutil::vector_frames();
        let mut b = Bench::new(9, 0.8, 0.2);
        b.ctx.rec.clear();
        let mut aevs = vec![];
        let (mut parse, mut qp, mut op) = (0, 0, 0);
        let be =
            |f: &[u8], a: usize, n: usize| f[a..a + n].iter().fold(0u32, |x, y| x << 8 | *y as u32);
        for f in &v {
            b.send_frame(f, false);
            if f[12..14] != [0x08, 0x00] {
                parse += 1;
                continue;
            }
            let (o, q) = (f[42], be(f, 47, 3));
            if o == opcode::ACKNOWLEDGE {
                if q < P.num_qps {
                    aevs.push((q, be(f, 51, 3), f[54], be(f, 55, 3)));
                } else {
                    qp += 1;
                }
            } else if o <= opcode::WRITE_ONLY_IMM {
                qp += 1;
            } else {
                op += 1;
            }
        }
        b.run();
        b.dump("vectors");
        assert!(!aevs.is_empty() && qp > 0 && op > 0);
        assert_eq!(b.aevs, aevs);
        let want_cnt = [0, 0, 0, 0, 0, 0, qp, op, 0, parse, 0];
        for (c, w) in CNTS.iter().zip(want_cnt) {
            assert_eq!(b.cnt(c), w, "{c}");
        }
    }

    /// Latency (MAC's last beat -> DMA command / first data beat) with idle ports, and
    /// throughput: 4 KiB WRITE packets back to back at one beat per cycle are all accepted.
    /// Then the same with a slow DMA engine: whole frames are dropped (cnt_drop_buf), never
    /// corrupted.
    #[test]
    fn latency_and_throughput() {
        let mut b = Bench::new(10, 0.0, 0.0);
        let mut r = rng(110);
        for (i, len) in [4096usize, 1, 100, 1000].into_iter().enumerate() {
            let d = bytes(&mut r, len);
            b.send(&wr_only(
                QPN,
                i as u32,
                MR_IOVA + 0x10000 * i as u64 + 9,
                rkey(),
                &d,
                false,
            ));
            b.run();
        }
        let lat_cmd: Vec<u64> = b
            .cmd_at
            .iter()
            .zip(&b.last_at)
            .map(|(c, l)| c - l)
            .collect();
        let lat_dat: Vec<u64> = b
            .dat_first
            .iter()
            .zip(&b.last_at)
            .map(|(c, l)| c - l)
            .collect();
        eprintln!("latency last beat -> DMA command {lat_cmd:?}, -> first data beat {lat_dat:?}");
        assert!(lat_dat.iter().all(|l| *l <= 40));
        // throughput: one 16-packet message of 4 KiB packets, no idle
        let mut b = Bench::new(11, 0.0, 0.0);
        let n = 16;
        let total = 4096 * n;
        let data = bytes(&mut r, total);
        let va = MR_IOVA + 5;
        for j in 0..n {
            let op = if j == 0 {
                opcode::WRITE_FIRST
            } else if j + 1 == n {
                opcode::WRITE_LAST
            } else {
                opcode::WRITE_MIDDLE
            };
            b.send(&Pkt {
                op,
                qpn: QPN,
                psn: psn(j as u32),
                ackreq: j + 1 == n,
                reth: (j == 0).then_some((va, rkey(), total as u32)),
                payload: data[4096 * j..4096 * (j + 1)].to_vec(),
                ..Default::default()
            });
        }
        let beats_in = b.beats.len();
        b.run();
        b.dump("throughput");
        assert_eq!(b.cnt("cnt_drop_buf"), 0);
        assert_eq!(b.cnt("cnt_rx_req"), n as u64);
        for (k, d) in data.iter().enumerate() {
            assert_eq!(b.dma.mem.get(&(va + k as u64)), Some(d));
        }
        let span = b.cmd_at.len();
        assert_eq!(span, n);
        eprintln!(
            "throughput: {beats_in} input beats in {beats_in} cycles; payload beats streamed from cycle {} to the last frame's first data beat at {} (last input beat at {})",
            b.dat_first[0],
            b.dat_first[n - 1],
            b.last_at[n - 1]
        );
        assert!(
            b.dat_first[n - 1] - b.last_at[n - 1] <= 40,
            "the stream kept up"
        );
        // slow DMA: the input is held by flow control (no frame lost), everything lands
        let mut b = Bench::new(12, 0.0, 0.0);
        b.dma.stall = 0.8;
        let mut want: HashMap<u64, u8> = HashMap::new();
        for j in 0..12u32 {
            let d = bytes(&mut r, 4000);
            let a = MR_IOVA + 0x1000 * j as u64;
            b.send(&wr_only(QPN, j, a, rkey(), &d, false));
            for (k, x) in d.iter().enumerate() {
                want.insert(a + k as u64, *x);
            }
        }
        b.run();
        b.dump("slow dma");
        assert_eq!(b.cnt("cnt_drop_buf"), 0);
        assert!(b.held > 0, "flow control held the input");
        assert_eq!(b.cnt("cnt_rx_req"), 12);
        assert_eq!(b.dma.mem.len(), want.len());
        for (a, d) in &b.dma.mem {
            assert_eq!(want.get(a), Some(d), "byte at {a:#x}");
        }
    }
}
