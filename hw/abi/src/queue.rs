//! Work-queue and completion-queue records, QP/CQ contexts and MR entries.
//! All records are little-endian byte images; the RTL slices them at the offsets in `FIELDS`.

use crate::layout;

/// Work request opcodes (WQE `opcode`).
pub mod wqe_op {
    pub const SEND: u8 = 0x00;
    pub const SEND_IMM: u8 = 0x01;
    pub const RDMA_WRITE: u8 = 0x02;
    pub const RDMA_WRITE_IMM: u8 = 0x03;
    pub const RDMA_READ: u8 = 0x04;
    pub const ATOMIC_CMP_SWAP: u8 = 0x05;
    pub const ATOMIC_FETCH_ADD: u8 = 0x06;
    /// Receive WQE (RQ rings only).
    pub const RECV: u8 = 0x10;
}

/// WQE `flags` bits.
pub mod wqe_flag {
    pub const SIGNALED: u8 = 1 << 0;
    pub const INLINE: u8 = 1 << 1;
    pub const SOLICITED: u8 = 1 << 2;
    pub const FENCE: u8 = 1 << 3;
}

/// Saved atomic results per QP on the responder (IBTA responder resources for atomics, a ring
/// in `RqState.atom_head/atom_cnt`); the most a peer may have outstanding (we advertise it as
/// `max_dest_rd_atomic`). The build parameter `rd_atomic` (128 in the standard build, 16 in
/// the 16k-QP build; the device reports it in `dev::RD_ATOMIC`).
pub const ATOMIC_RESOURCES: u32 = crate::params::DEFAULT.rd_atomic;
/// Most READ/atomic WQEs a requester QP has outstanding (the clamp of `max_rd_atomic`): the
/// same build parameter, so our requester never exceeds what our responder advertises.
pub const MAX_RD_ATOMIC: u32 = crate::params::DEFAULT.rd_atomic;
/// ACK coalescing on the requester: a SEND or WRITE message asks for an acknowledgement
/// (BTH AckReq in its last packet) when it is the last WQE posted at the time it is sent, or
/// when its WQE index + 1 is a multiple of K = min(this, the largest power of two <= the QP's
/// READ/atomic limit L = max(1, min(max_rd_atomic, MAX_RD_ATOMIC))); a power of two. K <= L
/// keeps a READ/atomic waiting for the limit from waiting on WRITEs that asked for no ACK.
/// Every 64th PSN asks for one as well, and READ/atomic requests always do. An ACK
/// acknowledges every packet before it (IBTA 9.7.5.1), so the WQEs in between complete with
/// it.
pub const ACK_EVERY_WQES: u32 = 8;
const _: () = assert!(ACK_EVERY_WQES.is_power_of_two());
/// Bytes an atomic operates on (and the length of its local SGE).
pub const ATOMIC_BYTES: u32 = 8;

/// Bytes of inline data a one-slot WQE carries (bytes 48..64).
pub const WQE_INLINE_BYTES: usize = 16;

layout! {
    /// A 64-byte work-queue entry in a BAR2 ring slot.
    pub struct Wqe [64] {
        opcode: u8 = 0, "Work request opcode (wqe_op).";
        flags: u8 = 1, "wqe_flag bits.";
        inline_len: u8 = 2, "Inline bytes in `inline_data` (INLINE flag).";
        slots: u8 = 3, "64-byte slots this WQE occupies (1 today).";
        length: u32 = 4, "Message length in bytes.";
        wr_id: u64 = 8, "Caller's work request id, returned in the CQE.";
        local_addr: u64 = 16, "Local IOVA of the payload.";
        lkey: u32 = 24, "Local key of the MR holding the payload.";
        imm_data: u32 = 28, "Immediate data (host order; sent big-endian).";
        remote_addr: u64 = 32, "Remote virtual address (RDMA WRITE/READ/atomics).";
        rkey: u32 = 40, "Remote key.";
        reserved: u32 = 44, "Zero.";
        inline_data: [u8; 16] = 48, "Inline payload, or for atomics the compare value (48..56, u64 little-endian) and the swap/add value (56..64, u64 little-endian).";
    }
}

/// CQE `status` values (ibv_wc_status numbering).
pub mod wc_status {
    pub const SUCCESS: u8 = 0;
    pub const LOC_LEN_ERR: u8 = 1;
    pub const LOC_QP_OP_ERR: u8 = 2;
    pub const LOC_PROT_ERR: u8 = 4;
    pub const WR_FLUSH_ERR: u8 = 5;
    pub const REM_INV_REQ_ERR: u8 = 9;
    pub const REM_ACCESS_ERR: u8 = 10;
    pub const REM_OP_ERR: u8 = 11;
    pub const RETRY_EXC_ERR: u8 = 12;
    pub const RNR_RETRY_EXC_ERR: u8 = 13;
    pub const GENERAL_ERR: u8 = 21;
}

/// CQE `opcode` values (ibv_wc_opcode numbering).
pub mod wc_op {
    pub const SEND: u8 = 0;
    pub const RDMA_WRITE: u8 = 1;
    pub const RDMA_READ: u8 = 2;
    pub const COMP_SWAP: u8 = 3;
    pub const FETCH_ADD: u8 = 4;
    pub const RECV: u8 = 128;
    pub const RECV_RDMA_WITH_IMM: u8 = 129;
}

/// CQE `flags` bits.
pub mod cqe_flag {
    /// `imm_data` is valid.
    pub const WITH_IMM: u8 = 1 << 0;
    /// Owner/phase bit: the device writes the ring's current phase; the host consumes a CQE
    /// when the bit equals the phase it expects (which flips on every wrap).
    pub const OWNER: u8 = 1 << 7;
}

layout! {
    /// A 32-byte completion-queue entry written by the device into a host-memory CQ ring.
    pub struct Cqe [32] {
        wr_id: u64 = 0, "wr_id of the completed WQE.";
        byte_len: u32 = 8, "Bytes transferred (receive side: bytes received).";
        imm_data: u32 = 12, "Immediate data (host order) when WITH_IMM.";
        qp_num: u32 = 16, "Local QP number.";
        src_qp: u32 = 20, "Remote QP number.";
        opcode: u8 = 24, "wc_op.";
        status: u8 = 25, "wc_status.";
        vendor_err: u8 = 26, "Device-specific error detail.";
        flags: u8 = 27, "cqe_flag bits, including the owner/phase bit.";
        sq_index: u16 = 28, "SQ/RQ slot index of the completed WQE.";
        reserved: u16 = 30, "Zero.";
    }
}

/// QP states (ibv_qp_state numbering).
pub mod qp_state {
    pub const RESET: u8 = 0;
    pub const INIT: u8 = 1;
    pub const RTR: u8 = 2;
    pub const RTS: u8 = 3;
    pub const SQD: u8 = 4;
    pub const SQE: u8 = 5;
    pub const ERR: u8 = 6;
}

/// Access flags (MR `access`, QP `access`), ibv_access_flags numbering.
pub mod access {
    pub const LOCAL_WRITE: u32 = 1 << 0;
    pub const REMOTE_WRITE: u32 = 1 << 1;
    pub const REMOTE_READ: u32 = 1 << 2;
    pub const REMOTE_ATOMIC: u32 = 1 << 3;
}

layout! {
    /// QP context, requester half and addressing: one 64-byte record per QP in the context
    /// store (table 0). Written whole by the driver (modify_qp); afterwards the engine writes
    /// only its own fields with byte enables: the doorbell unit `sq_pi`, the TX requester
    /// `sq_psn`/`sq_ci`, the ACK processor `una_psn`/`sq_ack_ci`/`state` (to ERR), the RX
    /// responder `state` (to ERR, after a class A/C error it NAKed).
    pub struct QpContext [64] {
        state: u8 = 0, "qp_state.";
        qp_type: u8 = 1, "2 = RC.";
        path_mtu: u8 = 2, "IBTA MTU enum 1..5 (256..4096).";
        access: u8 = 3, "Remote access allowed on this QP (access bits 1..3).";
        remote_qpn: u32 = 4, "Destination QP number (24 bits).";
        sq_psn: u32 = 8, "Next PSN to send (24 bits; TX).";
        una_psn: u32 = 12, "PSN of the first packet of the oldest unacknowledged WQE (24 bits; ACK processor).";
        dest_mac: [u8; 6] = 16, "Destination MAC address.";
        udp_sport: u16 = 22, "UDP source port (0xC000..0xFFFF).";
        dest_ip: u32 = 24, "Destination IPv4 address (host order).";
        src_ip: u32 = 28, "Source IPv4 address (host order).";
        pd: u32 = 32, "Protection domain.";
        send_cqn: u16 = 36, "CQ for send completions.";
        recv_cqn: u16 = 38, "CQ for receive completions.";
        sq_pi: u16 = 40, "SQ producer index (doorbell unit, free-running).";
        sq_ci: u16 = 42, "Next SQ WQE to transmit (TX, free-running).";
        sq_ack_ci: u16 = 44, "Next SQ WQE to complete (ACK processor, free-running).";
        retry_cnt: u8 = 46, "Transport retries after a local ACK timeout or a PSN sequence error NAK (0..7).";
        rnr_retry: u8 = 47, "RNR retries (0..6; 7 = retry forever).";
        timeout: u8 = 48, "Local ACK timeout: 4.096 us * 2^timeout (0 = infinite, no timer).";
        max_rd_atomic: u8 = 49, "Outstanding RDMA READ/atomic WQEs as requester: a READ/atomic WQE is sent only while it is fewer than max(1, min(max_rd_atomic, MAX_RD_ATOMIC)) WQEs after sq_ack_ci (TX).";
        min_rnr_timer: u8 = 50, "IBTA RNR timer code our RNR NAKs carry (0..31; responder).";
        traffic_class: u8 = 51, "IPv4 TOS: DSCP in bits 7:2; the ECN bits are sent as ECT(0).";
        retry_left: u8 = 52, "Transport retries left (ACK processor; reset to retry_cnt on progress).";
        rnr_left: u8 = 53, "RNR retries left (ACK processor; reset to rnr_retry on progress).";
        req_flags: u8 = 54, "req_flag bits (ACK processor).";
        max_dest_rd_atomic: u8 = 55, "Outstanding RDMA READ/atomic as responder (stored; the responder always keeps ATOMIC_RESOURCES saved atomic results and answers every READ).";
        src_mac: [u8; 6] = 56, "Source MAC address.";
        ack_psn_lo: u16 = 62, "Low 16 bits of the last PSN acknowledged (an ACK's PSN, a NAK's PSN - 1); retries refill when it advances (ACK processor).";
    }
}

/// The QP context fields the requester engine (txreq, the ACK processor) advances once the QP
/// sends: the driver writes them only when the QP enters RTS (a later read-modify-write would
/// roll them back), and the responder never reads them (their writes leave its kept record).
pub const QPC_REQUESTER_FIELDS: [&str; 9] = [
    "sq_psn",
    "una_psn",
    "sq_pi",
    "sq_ci",
    "sq_ack_ci",
    "retry_left",
    "rnr_left",
    "req_flags",
    "ack_psn_lo",
];

/// QP context `req_flags` bits (requester side, owned by the ACK processor).
pub mod req_flag {
    /// An RNR NAK was received: the requester waits for the RNR timer before it sends again
    /// (from `una_psn`); the TX scheduler skips the QP meanwhile.
    pub const RNR_WAIT: u8 = 1 << 0;
    /// A READ RESPONSE (or an ACK) arrived past the next expected READ RESPONSE PSN (an
    /// implicit NAK, IBTA 9.7.5.1.3): a go-back-N restart from the expected PSN was sent and
    /// one retry used; later responses of the same gap do not restart again. Cleared when an
    /// expected response is accepted and on a timeout.
    pub const RD_GAP: u8 = 1 << 1;
}

/// Responder-state `flags` bits.
pub mod rqs_flag {
    /// A multi-packet SEND is in progress (next packet must be MIDDLE/LAST).
    pub const IN_SEND: u8 = 1 << 0;
    /// A multi-packet RDMA WRITE is in progress.
    pub const IN_WRITE: u8 = 1 << 1;
    /// A NAK (sequence error) was sent for `rq_psn`; no further NAK until it arrives.
    pub const NAK_SENT: u8 = 1 << 2;
    /// The current WRITE failed its access check: drop (and do not write) its remaining packets.
    pub const WRITE_BAD: u8 = 1 << 3;
}

layout! {
    /// QP responder state: one 64-byte record per QP (table 3). The driver writes it whole at
    /// RESET->INIT/RTR (zero except `rq_psn`); afterwards the doorbell unit writes `rq_pi` and
    /// the RX responder everything else.
    pub struct RqState [64] {
        rq_psn: u32 = 0, "Next PSN expected (24 bits).";
        msn: u32 = 4, "Message sequence number of the last completed message (24 bits).";
        rq_pi: u16 = 8, "RQ producer index (doorbell unit, free-running).";
        rq_ci: u16 = 10, "Next RQ WQE to consume (free-running).";
        flags: u8 = 12, "rqs_flag bits.";
        atom_head: u8 = 13, "Next slot (0..ATOMIC_RESOURCES-1) of the QP's saved atomic results (responder resources).";
        atom_cnt: u8 = 14, "Saved atomic results that are valid (0..=ATOMIC_RESOURCES; the driver's zero at INIT empties them).";
        reserved1: u8 = 15, "Zero.";
        wr_va: u64 = 16, "Next remote virtual address of the WRITE in progress.";
        wr_rkey: u32 = 24, "rkey of the WRITE in progress.";
        wr_left: u32 = 28, "Bytes of the WRITE in progress still allowed (RETH DMA length minus received).";
        recv_off: u32 = 32, "Bytes received so far into the current receive WQE / WRITE message.";
        reserved2: u32 = 36, "Zero.";
        reserved3: u64 = 40, "Zero.";
        reserved4: u64 = 48, "Zero.";
        reserved5: u64 = 56, "Zero.";
    }
}

/// AETH syndrome byte values (IBTA 9.7.5.1): bits 7:5 kind, 4:0 credit count / timer / NAK code.
pub mod aeth {
    /// ACK with "invalid credit count" (31): no end-to-end credits, as RC without SRQ credits.
    pub const ACK: u8 = 0x1F;
    /// RNR NAK with timer field 14 (an IBTA RNR timer code, not a time in any unit).
    pub const RNR_NAK: u8 = 0x20 | 0x0E;
    pub const NAK_PSN_SEQ_ERR: u8 = 0x60;
    pub const NAK_INV_REQ: u8 = 0x61;
    pub const NAK_REM_ACCESS: u8 = 0x62;
    pub const NAK_REM_OP_ERR: u8 = 0x63;
    /// Kind field (bits 7:5) values.
    pub const KIND_ACK: u8 = 0;
    pub const KIND_RNR: u8 = 1;
    pub const KIND_NAK: u8 = 3;
}

layout! {
    /// CQ context: one 64-byte record per CQ (table 1).
    pub struct CqContext [64] {
        base_iova: u64 = 0, "IOVA of the CQE ring in host memory.";
        log2_entries: u8 = 8, "Ring size: 2^n CQEs of 32 bytes.";
        flags: u8 = 9, "bit 0 valid, bit 1 interrupt on completion.";
        irq_vector: u16 = 10, "Interrupt vector.";
        producer: u32 = 12, "Device producer index (free-running).";
        consumer: u32 = 16, "Host consumer index (from CQ doorbells).";
    }
}

layout! {
    /// Memory-region entry (table 2). Keys: bits 31:8 table index, bits 7:0 generation.
    pub struct MrEntry [64] {
        key: u32 = 0, "lkey = rkey: index << 8 | generation.";
        pd: u32 = 4, "Protection domain.";
        iova: u64 = 8, "Start IOVA (= virtual address the peer uses).";
        length: u64 = 16, "Length in bytes.";
        access: u32 = 24, "access bits.";
        flags: u32 = 28, "bit 0 valid.";
    }
}

/// Split an MR key into (table index, generation).
pub const fn key_parts(key: u32) -> (u32, u8) {
    (key >> 8, key as u8)
}
/// Build an MR key.
pub const fn make_key(index: u32, generation: u8) -> u32 {
    (index << 8) | generation as u32
}
