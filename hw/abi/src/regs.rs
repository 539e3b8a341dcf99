//! BAR0 register map: a chain of self-describing blocks.
//!
//! Every block starts with three read-only words: `TYPE` (+0x0), `VERSION` (+0x4, major in
//! bits 31:16, minor in 15:0) and `NEXT` (+0x8, BAR0 byte offset of the next block, 0 = last).
//! The driver walks the chain from offset 0 and refuses a device whose first block is not the
//! device block, whose magic is wrong, or whose major version it does not know.
//! All registers are 32 bits wide and 32-bit aligned. 64-bit quantities are split LO/HI.

/// Register access kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// read-only
    Ro,
    /// read-write
    Rw,
    /// write-only (reads return 0)
    Wo,
    /// write 1 to clear
    W1c,
}

impl Access {
    pub const fn as_str(self) -> &'static str {
        match self {
            Access::Ro => "RO",
            Access::Rw => "RW",
            Access::Wo => "WO",
            Access::W1c => "W1C",
        }
    }
}

/// One register.
#[derive(Debug, Clone, Copy)]
pub struct Reg {
    pub name: &'static str,
    /// Byte offset from BAR0.
    pub offset: u32,
    pub access: Access,
    pub doc: &'static str,
}

/// A window of BAR0 that is memory, not registers.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub name: &'static str,
    pub offset: u32,
    pub bytes: u32,
    pub access: Access,
    pub doc: &'static str,
}

/// One self-describing block.
#[derive(Debug, Clone, Copy)]
pub struct Block {
    pub name: &'static str,
    pub kind: u16,
    pub major: u16,
    pub minor: u16,
    pub base: u32,
    pub next: u32,
    pub doc: &'static str,
    pub regs: &'static [Reg],
    pub windows: &'static [Window],
}

impl Block {
    /// The value of the VERSION register.
    pub const fn version_word(&self) -> u32 {
        ((self.major as u32) << 16) | self.minor as u32
    }
}

/// Size of BAR0 in bytes.
pub const BAR0_BYTES: u32 = 0x1_0000;

/// Offsets of the block header words, relative to a block's base.
pub const BLK_TYPE: u32 = 0x0;
pub const BLK_VERSION: u32 = 0x4;
pub const BLK_NEXT: u32 = 0x8;

/// Block type codes.
pub mod kind {
    pub const DEVICE: u16 = 0x0001;
    pub const DOORBELL: u16 = 0x0002;
    pub const CONTEXT: u16 = 0x0003;
    pub const DMATEST: u16 = 0x0004;
    pub const MACDBG: u16 = 0x0005;
    pub const RXSTAT: u16 = 0x0006;
    pub const ENGSTAT: u16 = 0x0007;
}

/// Device block: identity, version, build parameters, scratch, control, interrupts.
pub mod dev {
    pub const BASE: u32 = 0x0000;
    pub const MAJOR: u16 = 1;
    pub const MINOR: u16 = 0;
    /// "RNIC" in ASCII.
    pub const MAGIC_VALUE: u32 = 0x524E_4943;
    pub const MAGIC: u32 = BASE + 0x0C;
    pub const HW_VERSION: u32 = BASE + 0x10;
    pub const NUM_QPS: u32 = BASE + 0x14;
    pub const SQ_DEPTH: u32 = BASE + 0x18;
    pub const RQ_DEPTH: u32 = BASE + 0x1C;
    pub const MAX_MTU: u32 = BASE + 0x20;
    pub const DATAPATH_BITS: u32 = BASE + 0x24;
    pub const CLOCK_KHZ: u32 = BASE + 0x28;
    pub const NUM_CQS: u32 = BASE + 0x2C;
    pub const NUM_MRS: u32 = BASE + 0x30;
    pub const RING_BYTES: u32 = BASE + 0x34;
    pub const DEEP_QPS: u32 = BASE + 0x38;
    pub const DEEP_DEPTH: u32 = BASE + 0x3C;
    pub const SCRATCH: u32 = BASE + 0x40;
    pub const CONTROL: u32 = BASE + 0x44;
    pub const STATUS: u32 = BASE + 0x48;
    pub const CYCLE_LO: u32 = BASE + 0x4C;
    pub const CYCLE_HI: u32 = BASE + 0x50;
    pub const IRQ_STATUS: u32 = BASE + 0x54;
    pub const IRQ_ENABLE: u32 = BASE + 0x58;
    pub const RD_ATOMIC: u32 = BASE + 0x5C;
    /// CONTROL bit 0: soft reset of the engine state (self-clearing).
    pub const CONTROL_SOFT_RESET: u32 = 1 << 0;
    /// STATUS bit 0: ready: the engine has finished the work a reset starts (the requester's
    /// and the ACK processor's sweeps of their per-QP LUT RAMs, about 5 x `num_qps` cycles).
    /// The driver waits for it at open().
    pub const STATUS_READY: u32 = 1 << 0;
    /// IRQ bits (IRQ_STATUS / IRQ_ENABLE).
    pub const IRQ_DMATEST_DONE: u32 = 1 << 0;
    pub const IRQ_MAC_RX: u32 = 1 << 1;
    /// A completion was written to a CQ whose context asks for an interrupt.
    pub const IRQ_CQ: u32 = 1 << 2;
    pub const IRQ_ALL: u32 = IRQ_DMATEST_DONE | IRQ_MAC_RX | IRQ_CQ;
}

/// Doorbell block. Doorbell words: bits 15:0 queue number, bits 31:16 new producer index
/// (consumer index for the CQ doorbell), modulo 2^16.
pub mod db {
    pub const BASE: u32 = 0x0100;
    pub const MAJOR: u16 = 1;
    pub const MINOR: u16 = 0;
    pub const SQ: u32 = BASE + 0x0C;
    pub const RQ: u32 = BASE + 0x10;
    pub const CQ: u32 = BASE + 0x14;
    pub const COUNT: u32 = BASE + 0x18;
    pub const LAST: u32 = BASE + 0x1C;
    pub const LAST_KIND: u32 = BASE + 0x20;
    /// LAST_KIND values.
    pub const KIND_SQ: u32 = 0;
    pub const KIND_RQ: u32 = 1;
    pub const KIND_CQ: u32 = 2;
    /// Pack a doorbell word.
    pub const fn word(queue: u16, index: u16) -> u32 {
        ((index as u32) << 16) | queue as u32
    }
    /// Unpack a doorbell word into (queue, index).
    pub const fn unpack(w: u32) -> (u16, u16) {
        (w as u16, (w >> 16) as u16)
    }
}

/// Context block: the mailbox through which the driver writes and reads QP contexts, CQ
/// contexts and MR entries (64-byte records) in the device's context store.
pub mod ctx {
    pub const BASE: u32 = 0x0200;
    pub const MAJOR: u16 = 1;
    pub const MINOR: u16 = 1;
    /// Write starts a command: bits 1:0 op, bit 3 masked (writes only), bits 7:4 table,
    /// bits 31:16 index.
    pub const CMD: u32 = BASE + 0x0C;
    /// bit 0 busy, bit 1 error (bad table, bad op or index out of range) of the last command.
    pub const STATUS: u32 = BASE + 0x10;
    /// Byte enables of a masked write (`CMD_MASKED`): bit i of WBE_LO/WBE_HI = byte i / 32+i
    /// of the record. Kept until rewritten; all ones after reset.
    pub const WBE_LO: u32 = BASE + 0x14;
    pub const WBE_HI: u32 = BASE + 0x18;
    /// 16 words of staging data (the 64-byte record, little-endian), at DATA + 4*i.
    pub const DATA: u32 = BASE + 0x40;
    pub const DATA_WORDS: u32 = 16;
    pub const OP_WRITE: u32 = 1;
    pub const OP_READ: u32 = 2;
    /// CMD flag: a write stores only the bytes enabled in WBE_LO/WBE_HI, so fields the engine
    /// owns are not rolled back by a driver update of the others.
    pub const CMD_MASKED: u32 = 1 << 3;
    pub const TABLE_QP: u32 = 0;
    pub const TABLE_CQ: u32 = 1;
    pub const TABLE_MR: u32 = 2;
    /// QP responder state (`RqState`).
    pub const TABLE_RQS: u32 = 3;
    pub const STATUS_BUSY: u32 = 1 << 0;
    pub const STATUS_ERROR: u32 = 1 << 1;
    pub const fn cmd(op: u32, table: u32, index: u16) -> u32 {
        (op & 3) | ((table & 0xF) << 4) | ((index as u32) << 16)
    }
    /// A masked write command (byte enables in WBE_LO/WBE_HI).
    pub const fn cmd_masked_write(table: u32, index: u16) -> u32 {
        cmd(OP_WRITE, table, index) | CMD_MASKED
    }
}

/// DMA self-test block: the device writes an incrementing byte pattern to a host IOVA over
/// `m_axi` (AW/W/B), or reads it back (AR/R), checks it and reports a checksum.
/// Pattern: byte i of the buffer = (SEED + i) mod 256. Any byte alignment and length 1..=MAX_LEN.
pub mod dmat {
    pub const BASE: u32 = 0x0300;
    pub const MAJOR: u16 = 1;
    pub const MINOR: u16 = 0;
    pub const IOVA_LO: u32 = BASE + 0x0C;
    pub const IOVA_HI: u32 = BASE + 0x10;
    pub const LEN: u32 = BASE + 0x14;
    pub const SEED: u32 = BASE + 0x18;
    /// bit 0: start write; bit 1: start read-and-verify.
    pub const CTRL: u32 = BASE + 0x1C;
    /// bit 0 busy, bit 1 done, bit 2 bus error (SLVERR/DECERR), bit 3 mismatch, bit 4 bad argument.
    pub const STATUS: u32 = BASE + 0x20;
    pub const CHECKSUM: u32 = BASE + 0x24;
    pub const MISMATCH: u32 = BASE + 0x28;
    pub const CYCLES: u32 = BASE + 0x2C;
    pub const CTRL_WRITE: u32 = 1 << 0;
    pub const CTRL_READ: u32 = 1 << 1;
    pub const STATUS_BUSY: u32 = 1 << 0;
    pub const STATUS_DONE: u32 = 1 << 1;
    pub const STATUS_BUS_ERROR: u32 = 1 << 2;
    pub const STATUS_MISMATCH: u32 = 1 << 3;
    pub const STATUS_BAD_ARG: u32 = 1 << 4;
    pub const MAX_LEN: u32 = 65536;
}

/// MAC debug block: transmit a frame from the TX window, count and capture received frames.
pub mod mac {
    pub const BASE: u32 = 0x0400;
    pub const MAJOR: u16 = 1;
    pub const MINOR: u16 = 0;
    pub const TX_LEN: u32 = BASE + 0x0C;
    /// bit 0: send the TX window's first TX_LEN bytes as one frame.
    pub const TX_CTRL: u32 = BASE + 0x10;
    /// bit 0 busy, bit 1 bad length on the last send.
    pub const TX_STATUS: u32 = BASE + 0x14;
    pub const TX_FRAMES: u32 = BASE + 0x18;
    pub const RX_FRAMES: u32 = BASE + 0x1C;
    pub const RX_BYTES: u32 = BASE + 0x20;
    pub const RX_LAST_LEN: u32 = BASE + 0x24;
    pub const RX_ERRORS: u32 = BASE + 0x28;
    pub const TX_BUF_OFF: u32 = BASE + 0x2C;
    pub const RX_BUF_OFF: u32 = BASE + 0x30;
    pub const TX_CTRL_SEND: u32 = 1 << 0;
    pub const TX_STATUS_BUSY: u32 = 1 << 0;
    pub const TX_STATUS_BAD_LEN: u32 = 1 << 1;
    /// Frame windows (bytes, little-endian words: byte 0 of the frame = bits 7:0 of word 0).
    pub const TX_BUF: u32 = 0x1000;
    pub const RX_BUF: u32 = 0x1800;
    pub const BUF_BYTES: u32 = 2048;
    /// Smallest frame the debug path sends (Ethernet header).
    pub const MIN_LEN: u32 = 14;
}

/// RX statistics block: every frame arriving on `s_axis_rx` goes through the RoCE v2 header
/// parser and the ICRC check; good RoCE frames and every drop reason are counted here.
pub mod rxs {
    pub const BASE: u32 = 0x0500;
    pub const MAJOR: u16 = 1;
    pub const MINOR: u16 = 0;
    /// RoCE v2 frames whose headers parsed and whose ICRC matched.
    pub const ROCE_OK: u32 = BASE + 0x0C;
    /// Frames whose headers parsed but whose ICRC did not match (dropped).
    pub const ICRC_BAD: u32 = BASE + 0x10;
    /// Opcode, destination QP and PSN of the last good RoCE frame.
    pub const LAST_OPCODE: u32 = BASE + 0x14;
    pub const LAST_QPN: u32 = BASE + 0x18;
    pub const LAST_PSN: u32 = BASE + 0x1C;
    /// Drop counters, one word per parser drop reason, in [`DROP_REASONS`] order.
    pub const DROP: u32 = BASE + 0x20;
    /// Parser drop reasons (the parser's reason code is the index + 1).
    pub const DROP_REASONS: [&str; 11] = [
        "short",
        "ethertype",
        "ip_hdr",
        "ip_csum",
        "ip_len",
        "frag",
        "not_udp",
        "udp_port",
        "tver",
        "opcode",
        "payload",
    ];
}

/// Data-path statistics block: one read-only 32-bit wrapping counter per event, at
/// `CNT + 4*i` in [`COUNTERS`] order.
pub mod eng {
    pub const BASE: u32 = 0x0600;
    pub const MAJOR: u16 = 1;
    pub const MINOR: u16 = 0;
    pub const CNT: u32 = BASE + 0x0C;
    /// Counter names (block that counts: meaning).
    pub const COUNTERS: [(&str, &str); 50] = [
        (
            "db_bad",
            "doorbell unit: doorbells naming a queue beyond the tables (dropped)",
        ),
        ("tx_wqe", "TX requester: send WQEs started"),
        (
            "tx_wqe_err",
            "TX requester: send WQEs failing their local checks (error completion, QP to ERR)",
        ),
        ("tx_pkts", "TX builder: request packets sent"),
        ("tx_acks", "TX builder: ACK/NAK packets sent"),
        ("rx_req", "responder: request packets accepted"),
        (
            "rx_dup",
            "responder: duplicate request packets (re-ACKed, not written)",
        ),
        ("nak_seq", "responder: NAK PSN sequence error sent"),
        ("nak_acc", "responder: NAK remote access error sent"),
        ("nak_inv", "responder: NAK invalid request sent"),
        ("nak_rnr", "responder: RNR NAK sent (no receive WQE)"),
        (
            "drop_qp",
            "responder: packets for an unknown QP or a QP not in RTR/RTS (dropped)",
        ),
        (
            "drop_opcode",
            "responder: opcodes this build does not serve (dropped)",
        ),
        ("drop_icrc", "responder: frames with a bad ICRC (dropped)"),
        (
            "drop_parse",
            "responder: frames the header parser rejected (dropped)",
        ),
        ("ack", "ACK processor: ACKs received"),
        ("nak", "ACK processor: NAKs received"),
        (
            "ack_ignored",
            "ACK processor: duplicate ACKs or ACKs for a QP not in RTS",
        ),
        ("cqe", "completion writer: CQEs written"),
        (
            "cq_overflow",
            "completion writer: completions lost to a full CQ",
        ),
        (
            "cq_invalid",
            "completion writer: completions for an invalid CQ",
        ),
        ("dma_rd_bursts", "DMA engine: read bursts"),
        ("dma_wr_bursts", "DMA engine: write bursts"),
        ("dma_bus_err", "DMA engine: bus error responses"),
        (
            "drop_buf",
            "responder: frames dropped because the RX packet buffer was full",
        ),
        (
            "drop_pkey",
            "responder: frames whose BTH P_Key is not ours (low 15 bits != 0x7FFF; dropped)",
        ),
        (
            "drop_addr",
            "responder: requests, ACKs and CNPs whose destination IPv4 or MAC is not the QP's local address (dropped)",
        ),
        (
            "retx_psn",
            "TX requester: PSNs rewound by go-back-N restarts (packets to send again)",
        ),
        (
            "restarts",
            "TX requester: go-back-N restarts applied (timeout, sequence NAK, RNR timer)",
        ),
        (
            "timeouts",
            "ACK processor: local ACK timeouts with packets outstanding",
        ),
        ("rnr_rx", "ACK processor: RNR NAKs received"),
        (
            "nak_seq_rx",
            "ACK processor: PSN sequence error NAKs received (go-back-N from the NAK PSN)",
        ),
        (
            "rx_cnp",
            "responder: RoCE v2 congestion notification packets received (counted)",
        ),
        (
            "retry_exc",
            "ACK processor: QPs ended by RETRY_EXC_ERR or RNR_RETRY_EXC_ERR",
        ),
        (
            "rx_read",
            "responder: RDMA READ requests answered (new and duplicate)",
        ),
        (
            "rd_rsp",
            "ACK processor: READ RESPONSE packets accepted and placed",
        ),
        (
            "rd_gap",
            "ACK processor: implicit NAKs (a READ RESPONSE or ACK past a missing READ RESPONSE; go-back-N restart)",
        ),
        (
            "rd_drop",
            "ACK processor: READ RESPONSE packets dropped (duplicate, out of place, malformed)",
        ),
        (
            "rx_atomic",
            "responder: atomic requests (CMP_SWAP, FETCH_ADD) executed",
        ),
        (
            "atom_dup",
            "responder: duplicate atomic requests answered with the saved result (not executed again)",
        ),
        (
            "atom_miss",
            "responder: duplicate atomic requests with no saved result (dropped)",
        ),
        (
            "drop_busy",
            "responder: requests dropped unexecuted because the responder job queue (ACK/NAK, READ, ATOMIC ACKNOWLEDGE) was full: the receive path never waits for transmit",
        ),
        (
            "rs_merged",
            "ACK processor: go-back-N restarts merged into the one already queued for the same QP (the restart queue holds one entry per QP, so the ACK processor never waits for the requester)",
        ),
        (
            "ctx_writes",
            "context store: record writes taken (engine write-backs and the BAR0 mailbox)",
        ),
        (
            "ctx_reads",
            "context store: record reads taken (port A and port B together)",
        ),
        (
            "ctx_wait_db",
            "context store: cycles the doorbell unit's request waited for a grant",
        ),
        (
            "ctx_wait_tx",
            "context store: cycles the TX requester's request waited for a grant",
        ),
        (
            "ctx_wait_rx",
            "context store: cycles the responder's request waited for a grant",
        ),
        (
            "ctx_wait_ack",
            "context store: cycles the ACK processor's request waited for a grant",
        ),
        (
            "ctx_wait_cqw",
            "context store: cycles the completion writer's request waited for a grant",
        ),
    ];
}

use Access::*;

/// The whole map, in chain order.
pub const BLOCKS: &[Block] = &[
    Block {
        name: "device",
        kind: kind::DEVICE,
        major: dev::MAJOR,
        minor: dev::MINOR,
        base: dev::BASE,
        next: db::BASE,
        doc: "Identity, version, build parameters, scratch, control, interrupt status.",
        regs: &[
            Reg {
                name: "MAGIC",
                offset: dev::MAGIC,
                access: Ro,
                doc: "0x524E4943 (\"RNIC\").",
            },
            Reg {
                name: "HW_VERSION",
                offset: dev::HW_VERSION,
                access: Ro,
                doc: "Engine version: major 31:24, minor 23:16, patch 15:0.",
            },
            Reg {
                name: "NUM_QPS",
                offset: dev::NUM_QPS,
                access: Ro,
                doc: "Build parameter: number of queue pairs.",
            },
            Reg {
                name: "SQ_DEPTH",
                offset: dev::SQ_DEPTH,
                access: Ro,
                doc: "Build parameter: send-queue ring depth (WQEs) of a standard QP.",
            },
            Reg {
                name: "RQ_DEPTH",
                offset: dev::RQ_DEPTH,
                access: Ro,
                doc: "Build parameter: receive-queue ring depth (WQEs) of a standard QP.",
            },
            Reg {
                name: "MAX_MTU",
                offset: dev::MAX_MTU,
                access: Ro,
                doc: "Build parameter: largest path MTU in bytes.",
            },
            Reg {
                name: "DATAPATH_BITS",
                offset: dev::DATAPATH_BITS,
                access: Ro,
                doc: "Build parameter: datapath width in bits.",
            },
            Reg {
                name: "CLOCK_KHZ",
                offset: dev::CLOCK_KHZ,
                access: Ro,
                doc: "Build parameter: nominal core clock in kHz.",
            },
            Reg {
                name: "NUM_CQS",
                offset: dev::NUM_CQS,
                access: Ro,
                doc: "Build parameter: number of completion queues.",
            },
            Reg {
                name: "NUM_MRS",
                offset: dev::NUM_MRS,
                access: Ro,
                doc: "Build parameter: memory-region table entries.",
            },
            Reg {
                name: "RING_BYTES",
                offset: dev::RING_BYTES,
                access: Ro,
                doc: "Bytes of BAR2 ring memory: standard SQ rings, standard RQ rings, deep SQ rings, deep RQ rings.",
            },
            Reg {
                name: "DEEP_QPS",
                offset: dev::DEEP_QPS,
                access: Ro,
                doc: "Build parameter: QPs with deep rings, the last QP numbers (NUM_QPS - DEEP_QPS ..).",
            },
            Reg {
                name: "DEEP_DEPTH",
                offset: dev::DEEP_DEPTH,
                access: Ro,
                doc: "Build parameter: send- and receive-queue ring depth (WQEs) of a deep QP.",
            },
            Reg {
                name: "SCRATCH",
                offset: dev::SCRATCH,
                access: Rw,
                doc: "Scratch register, no effect.",
            },
            Reg {
                name: "CONTROL",
                offset: dev::CONTROL,
                access: Rw,
                doc: "Bit 0: soft reset of counters and engines (self-clearing).",
            },
            Reg {
                name: "STATUS",
                offset: dev::STATUS,
                access: Ro,
                doc: "Bit 0: ready: the engine finished the work a reset starts (the requester's and the ACK processor's sweeps of their per-QP LUT RAMs, about 5 x NUM_QPS cycles); the driver waits for it at open().",
            },
            Reg {
                name: "CYCLE_LO",
                offset: dev::CYCLE_LO,
                access: Ro,
                doc: "Free-running core-clock cycle counter, bits 31:0 (reading LO latches HI).",
            },
            Reg {
                name: "CYCLE_HI",
                offset: dev::CYCLE_HI,
                access: Ro,
                doc: "Cycle counter bits 63:32, latched by the last CYCLE_LO read.",
            },
            Reg {
                name: "IRQ_STATUS",
                offset: dev::IRQ_STATUS,
                access: W1c,
                doc: "Pending interrupt causes: bit 0 DMA self-test done, bit 1 MAC debug frame received.",
            },
            Reg {
                name: "IRQ_ENABLE",
                offset: dev::IRQ_ENABLE,
                access: Rw,
                doc: "Interrupt enables, same bits; irq_o = |(IRQ_STATUS & IRQ_ENABLE).",
            },
            Reg {
                name: "RD_ATOMIC",
                offset: dev::RD_ATOMIC,
                access: Ro,
                doc: "Build parameter: outstanding RDMA READ/atomic operations per QP, both ways: the saved atomic results the responder keeps per QP (its max_dest_rd_atomic) and the requester's clamp of max_rd_atomic.",
            },
        ],
        windows: &[],
    },
    Block {
        name: "doorbell",
        kind: kind::DOORBELL,
        major: db::MAJOR,
        minor: db::MINOR,
        base: db::BASE,
        next: ctx::BASE,
        doc: "Doorbells: bits 15:0 queue number, bits 31:16 new producer (consumer for CQ) index.",
        regs: &[
            Reg {
                name: "SQ",
                offset: db::SQ,
                access: Wo,
                doc: "Send-queue doorbell.",
            },
            Reg {
                name: "RQ",
                offset: db::RQ,
                access: Wo,
                doc: "Receive-queue doorbell.",
            },
            Reg {
                name: "CQ",
                offset: db::CQ,
                access: Wo,
                doc: "Completion-queue consumer-index doorbell.",
            },
            Reg {
                name: "COUNT",
                offset: db::COUNT,
                access: Ro,
                doc: "Doorbells received since reset.",
            },
            Reg {
                name: "LAST",
                offset: db::LAST,
                access: Ro,
                doc: "Last doorbell word written.",
            },
            Reg {
                name: "LAST_KIND",
                offset: db::LAST_KIND,
                access: Ro,
                doc: "Kind of the last doorbell: 0 SQ, 1 RQ, 2 CQ.",
            },
        ],
        windows: &[],
    },
    Block {
        name: "context",
        kind: kind::CONTEXT,
        major: ctx::MAJOR,
        minor: ctx::MINOR,
        base: ctx::BASE,
        next: dmat::BASE,
        doc: "Context mailbox: write DATA[0..16], then CMD to store a 64-byte QP context, CQ context or MR entry (with CMD bit 3, only the bytes enabled in WBE_LO/WBE_HI); or CMD read, then DATA.",
        regs: &[
            Reg {
                name: "CMD",
                offset: ctx::CMD,
                access: Wo,
                doc: "Bits 1:0 op (1 write, 2 read), bit 3 masked write (byte enables WBE_LO/WBE_HI), bits 7:4 table (0 QP, 1 CQ, 2 MR, 3 QP responder state), bits 31:16 index.",
            },
            Reg {
                name: "STATUS",
                offset: ctx::STATUS,
                access: Ro,
                doc: "Bit 0 busy; bit 1 error of the last command (bad op/table, index out of range).",
            },
            Reg {
                name: "WBE_LO",
                offset: ctx::WBE_LO,
                access: Rw,
                doc: "Byte enables of a masked write, record bytes 0..31 (bit i = byte i); all ones after reset.",
            },
            Reg {
                name: "WBE_HI",
                offset: ctx::WBE_HI,
                access: Rw,
                doc: "Byte enables of a masked write, record bytes 32..63 (bit i = byte 32+i); all ones after reset.",
            },
            Reg {
                name: "DATA0..DATA15",
                offset: ctx::DATA,
                access: Rw,
                doc: "Staging record, 16 words at DATA + 4*i, little-endian.",
            },
        ],
        windows: &[],
    },
    Block {
        name: "dmatest",
        kind: kind::DMATEST,
        major: dmat::MAJOR,
        minor: dmat::MINOR,
        base: dmat::BASE,
        next: mac::BASE,
        doc: "DMA self-test over m_axi: write byte i = (SEED + i) mod 256 to IOVA..IOVA+LEN, or read it back and verify.",
        regs: &[
            Reg {
                name: "IOVA_LO",
                offset: dmat::IOVA_LO,
                access: Rw,
                doc: "Target IOVA bits 31:0 (any byte alignment).",
            },
            Reg {
                name: "IOVA_HI",
                offset: dmat::IOVA_HI,
                access: Rw,
                doc: "Target IOVA bits 63:32.",
            },
            Reg {
                name: "LEN",
                offset: dmat::LEN,
                access: Rw,
                doc: "Length in bytes, 1..=65536.",
            },
            Reg {
                name: "SEED",
                offset: dmat::SEED,
                access: Rw,
                doc: "Pattern seed (bits 7:0).",
            },
            Reg {
                name: "CTRL",
                offset: dmat::CTRL,
                access: Wo,
                doc: "Bit 0 start write; bit 1 start read-and-verify.",
            },
            Reg {
                name: "STATUS",
                offset: dmat::STATUS,
                access: Ro,
                doc: "Bit 0 busy, 1 done, 2 bus error, 3 mismatch, 4 bad argument.",
            },
            Reg {
                name: "CHECKSUM",
                offset: dmat::CHECKSUM,
                access: Ro,
                doc: "Checksum of the bytes moved (see rnic_abi::dmatest::checksum).",
            },
            Reg {
                name: "MISMATCH",
                offset: dmat::MISMATCH,
                access: Ro,
                doc: "Read-and-verify: bytes that differed from the pattern.",
            },
            Reg {
                name: "CYCLES",
                offset: dmat::CYCLES,
                access: Ro,
                doc: "Core cycles the last operation took, start to last response.",
            },
        ],
        windows: &[],
    },
    Block {
        name: "macdbg",
        kind: kind::MACDBG,
        major: mac::MAJOR,
        minor: mac::MINOR,
        base: mac::BASE,
        next: rxs::BASE,
        doc: "MAC debug path: send the frame in the TX window on m_axis_tx; count and capture frames from s_axis_rx.",
        regs: &[
            Reg {
                name: "TX_LEN",
                offset: mac::TX_LEN,
                access: Rw,
                doc: "Frame length in bytes, 14..=2048 (no FCS).",
            },
            Reg {
                name: "TX_CTRL",
                offset: mac::TX_CTRL,
                access: Wo,
                doc: "Bit 0: send.",
            },
            Reg {
                name: "TX_STATUS",
                offset: mac::TX_STATUS,
                access: Ro,
                doc: "Bit 0 busy; bit 1 the last send had a bad length and was refused.",
            },
            Reg {
                name: "TX_FRAMES",
                offset: mac::TX_FRAMES,
                access: Ro,
                doc: "Frames sent by the debug path.",
            },
            Reg {
                name: "RX_FRAMES",
                offset: mac::RX_FRAMES,
                access: Ro,
                doc: "Good frames received.",
            },
            Reg {
                name: "RX_BYTES",
                offset: mac::RX_BYTES,
                access: Ro,
                doc: "Bytes in good frames received.",
            },
            Reg {
                name: "RX_LAST_LEN",
                offset: mac::RX_LAST_LEN,
                access: Ro,
                doc: "Length of the last good frame (captured in RX_BUF up to 2048 bytes).",
            },
            Reg {
                name: "RX_ERRORS",
                offset: mac::RX_ERRORS,
                access: Ro,
                doc: "Frames received with tuser (MAC error) set; not counted as good (RX_BUF may hold part of one).",
            },
            Reg {
                name: "TX_BUF_OFF",
                offset: mac::TX_BUF_OFF,
                access: Ro,
                doc: "BAR0 offset of the TX window.",
            },
            Reg {
                name: "RX_BUF_OFF",
                offset: mac::RX_BUF_OFF,
                access: Ro,
                doc: "BAR0 offset of the RX window.",
            },
        ],
        windows: &[
            Window {
                name: "TX_BUF",
                offset: mac::TX_BUF,
                bytes: mac::BUF_BYTES,
                access: Wo,
                doc: "Frame to send (write-only; reads return 0).",
            },
            Window {
                name: "RX_BUF",
                offset: mac::RX_BUF,
                bytes: mac::BUF_BYTES,
                access: Ro,
                doc: "Last good frame received.",
            },
        ],
    },
    Block {
        name: "rxstat",
        kind: kind::RXSTAT,
        major: rxs::MAJOR,
        minor: rxs::MINOR,
        base: rxs::BASE,
        next: eng::BASE,
        doc: "RX path checks: RoCE v2 header parser (Eth/IPv4/UDP 4791/BTH, IPv4 checksum, lengths, RC opcodes) and ICRC check on every received frame.",
        regs: &[
            Reg {
                name: "ROCE_OK",
                offset: rxs::ROCE_OK,
                access: Ro,
                doc: "RoCE v2 frames with valid headers and ICRC.",
            },
            Reg {
                name: "ICRC_BAD",
                offset: rxs::ICRC_BAD,
                access: Ro,
                doc: "Frames with valid headers and a wrong ICRC (dropped).",
            },
            Reg {
                name: "LAST_OPCODE",
                offset: rxs::LAST_OPCODE,
                access: Ro,
                doc: "BTH opcode of the last good RoCE frame.",
            },
            Reg {
                name: "LAST_QPN",
                offset: rxs::LAST_QPN,
                access: Ro,
                doc: "Destination QP of the last good RoCE frame.",
            },
            Reg {
                name: "LAST_PSN",
                offset: rxs::LAST_PSN,
                access: Ro,
                doc: "PSN of the last good RoCE frame.",
            },
            Reg {
                name: "DROP0..DROP10",
                offset: rxs::DROP,
                access: Ro,
                doc: "Frames dropped by the parser, per reason (DROP + 4*i): short, ethertype, ip_hdr, ip_csum, ip_len, frag, not_udp, udp_port, tver, opcode, payload.",
            },
        ],
        windows: &[],
    },
    Block {
        name: "engstat",
        kind: kind::ENGSTAT,
        major: eng::MAJOR,
        minor: eng::MINOR,
        base: eng::BASE,
        next: 0,
        doc: "Data-path event counters (32-bit, wrapping), one word each at CNT + 4*i in the order of `eng::COUNTERS`.",
        regs: &[Reg {
            name: "CNT0..CNT49",
            offset: eng::CNT,
            access: Ro,
            doc: "db_bad, tx_wqe, tx_wqe_err, tx_pkts, tx_acks, rx_req, rx_dup, nak_seq, nak_acc, nak_inv, nak_rnr, drop_qp, drop_opcode, drop_icrc, drop_parse, ack, nak, ack_ignored, cqe, cq_overflow, cq_invalid, dma_rd_bursts, dma_wr_bursts, dma_bus_err, drop_buf, drop_pkey, drop_addr, retx_psn, restarts, timeouts, rnr_rx, nak_seq_rx, rx_cnp, retry_exc, rx_read, rd_rsp, rd_gap, rd_drop, rx_atomic, atom_dup, atom_miss, drop_busy, rs_merged, ctx_writes, ctx_reads, ctx_wait_db, ctx_wait_tx, ctx_wait_rx, ctx_wait_ack, ctx_wait_cqw.",
        }],
        windows: &[],
    },
];

/// Is `off` a valid 32-bit register or window offset in BAR0? (Reserved offsets read 0.)
pub fn bar0_in_range(off: u64) -> bool {
    off.is_multiple_of(4) && off < BAR0_BYTES as u64
}

const fn check_blocks() -> bool {
    let mut i = 0;
    while i < BLOCKS.len() {
        let b = &BLOCKS[i];
        // chain order and link
        if i + 1 < BLOCKS.len() {
            if b.next != BLOCKS[i + 1].base || b.next <= b.base {
                return false;
            }
        } else if b.next != 0 {
            return false;
        }
        let limit = if b.next == 0 { 0x1000 + b.base } else { b.next };
        let mut j = 0;
        while j < b.regs.len() {
            let r = &b.regs[j];
            if !r.offset.is_multiple_of(4) || r.offset < b.base + 0xC || r.offset >= limit {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}
const _: () = assert!(
    check_blocks(),
    "register map: block chain or register offsets are inconsistent"
);
const _: () = assert!(
    mac::TX_BUF + mac::BUF_BYTES <= mac::RX_BUF && mac::RX_BUF + mac::BUF_BYTES <= BAR0_BYTES
);
const _: () = assert!(ctx::DATA + 4 * ctx::DATA_WORDS <= dmat::BASE);
