//! RDMA verbs over an rnic device, in the shape of rdma-core / the `ibverbs` crate:
//! [`Context`] -> [`ProtectionDomain`] -> [`MemoryRegion`] and [`QueuePair`] (RC), and
//! [`CompletionQueue`]s polled for [`WorkCompletion`]s.
//!
//! ```text
//! let ctx = Context::open(dev, PortAddr::sim(1)?)?;
//! let pd = ctx.alloc_pd()?;
//! let cq = ctx.create_cq(64)?;
//! let buf = ctx.alloc_buf(4096)?;
//! let mr = pd.reg_mr(&buf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE)?;
//! let qp = pd.create_qp(&cq, &cq, QpCaps::default())?;
//! // exchange qp.endpoint()? with the peer out of band, then
//! qp.connect(&remote, &ConnectAttr::default())?;
//! qp.post_send(&[SendWr::new(1, SendOp::Send).sge(mr.sge(0, 64)?)])?;
//! let wc = cq.wait(1, 10_000_000)?;
//! ```
//!
//! Everything is checked here before it reaches the device; every bad argument and every call
//! in the wrong QP state is an [`Error`], never a panic. Objects borrow the [`Context`]; they
//! release their device resources on drop (errors ignored) or explicitly through
//! `dereg`/`destroy`/`dealloc` (errors returned). One thread drives a context (it is not
//! `Sync`); the device is behind a `RefCell`, so re-entrant use is reported as
//! [`Error::ContextBusy`].
//!
//! Send-queue accounting follows rdma-core: a posted WQE stays outstanding until a signaled
//! completion at or after it is polled (RC completes in order), so a QP whose WQEs are all
//! unsignaled fills up. When a completion with an error status arrives the QP goes to the
//! error state; its remaining WQEs (send and receive) are then returned as `WR_FLUSH_ERR`
//! completions by the CQ they belong to (the hardware leaves flushing to the driver).

use crate::device::{Device, DmaBuf};
use crate::driver::{DeviceInfo, Rnic};
use crate::error::{Error, Result};
use rnic_abi::params::BuildParams;
use rnic_abi::queue::{
    CqContext, Cqe, MrEntry, QpContext, RqState, WQE_INLINE_BYTES, Wqe, access, cqe_flag, make_key,
    qp_state, wc_op, wc_status, wqe_flag, wqe_op,
};
use rnic_abi::regs::{ctx as ctxreg, db};
use rnic_abi::roce;
use std::cell::{RefCell, RefMut};
use std::collections::VecDeque;
use std::fmt;
use std::net::Ipv4Addr;

/// First QP number handed out (0 and 1 are the special QPs of InfiniBand).
pub const FIRST_QPN: u32 = 2;
/// Bytes of one CQE in the host ring.
pub const CQE_BYTES: usize = Cqe::SIZE;
/// Largest CQ: 2^15 entries (the CQ doorbell carries a 16-bit consumer index, so a ring must
/// be at most half of its range for the full/empty distinction to survive the truncation).
pub const MAX_CQ_ENTRIES: u32 = 1 << 15;
/// Largest message (IBTA: 2^31 bytes).
pub const MAX_MSG_BYTES: u64 = 1 << 31;
/// QP transport type in `QpContext.qp_type`.
pub const QP_TYPE_RC: u8 = 2;
/// `CqContext.flags`: valid, interrupt on completion.
pub const CQ_FLAG_VALID: u8 = 1 << 0;
pub const CQ_FLAG_IRQ: u8 = 1 << 1;
/// `MrEntry.flags`: valid.
pub const MR_FLAG_VALID: u32 = 1 << 0;

// ------------------------------------------------------------------------------------------
// plain value types

/// Memory / QP access flags (ibv_access_flags numbering, `rnic_abi::queue::access`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AccessFlags(u32);

impl AccessFlags {
    pub const LOCAL_WRITE: AccessFlags = AccessFlags(access::LOCAL_WRITE);
    pub const REMOTE_WRITE: AccessFlags = AccessFlags(access::REMOTE_WRITE);
    pub const REMOTE_READ: AccessFlags = AccessFlags(access::REMOTE_READ);
    pub const REMOTE_ATOMIC: AccessFlags = AccessFlags(access::REMOTE_ATOMIC);
    const ALL: u32 =
        access::LOCAL_WRITE | access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC;
    const REMOTE: u32 = access::REMOTE_WRITE | access::REMOTE_READ | access::REMOTE_ATOMIC;

    /// No access beyond local read.
    pub const fn empty() -> AccessFlags {
        AccessFlags(0)
    }
    /// From raw bits; unknown bits are an error.
    pub fn from_bits(bits: u32) -> Result<AccessFlags> {
        if bits & !Self::ALL != 0 {
            return Err(Error::InvalidArgument(format!(
                "access flags {bits:#x}: unknown bits {:#x}",
                bits & !Self::ALL
            )));
        }
        Ok(AccessFlags(bits))
    }
    pub const fn bits(self) -> u32 {
        self.0
    }
    pub const fn contains(self, other: AccessFlags) -> bool {
        self.0 & other.0 == other.0
    }
    /// The remote bits (what a QP context stores).
    pub const fn remote(self) -> AccessFlags {
        AccessFlags(self.0 & Self::REMOTE)
    }
}

impl std::ops::BitOr for AccessFlags {
    type Output = AccessFlags;
    fn bitor(self, rhs: AccessFlags) -> AccessFlags {
        AccessFlags(self.0 | rhs.0)
    }
}

/// Path MTU (IBTA enumeration 1..5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mtu {
    Mtu256 = 1,
    Mtu512 = 2,
    Mtu1024 = 3,
    Mtu2048 = 4,
    Mtu4096 = 5,
}

impl Mtu {
    pub const ALL: [Mtu; 5] = [
        Mtu::Mtu256,
        Mtu::Mtu512,
        Mtu::Mtu1024,
        Mtu::Mtu2048,
        Mtu::Mtu4096,
    ];
    /// The IBTA enumeration value (what `QpContext.path_mtu` holds).
    pub const fn code(self) -> u8 {
        self as u8
    }
    /// Payload bytes per packet.
    pub const fn bytes(self) -> u32 {
        128 << (self as u32)
    }
    /// From a byte count (256, 512, 1024, 2048, 4096).
    pub fn from_bytes(b: u32) -> Result<Mtu> {
        match roce::mtu_bytes_to_enum(b) {
            Some(e) => Ok(Mtu::ALL[e as usize - 1]),
            None => Err(Error::InvalidArgument(format!(
                "path MTU {b}: must be 256, 512, 1024, 2048 or 4096"
            ))),
        }
    }
}

/// The addresses of a NIC port: its MAC and IPv4 address (the GID of RoCE v2 over IPv4).
/// The engine has no port registers: every QP context carries the source addresses, so the
/// driver keeps them here and copies them into each QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortAddr {
    pub mac: [u8; 6],
    pub ipv4: Ipv4Addr,
}

impl PortAddr {
    /// A unicast, non-zero MAC and a unicast, non-zero IPv4 address.
    pub fn new(mac: [u8; 6], ipv4: Ipv4Addr) -> Result<PortAddr> {
        if mac[0] & 1 != 0 || mac == [0; 6] {
            return Err(Error::InvalidArgument(format!(
                "MAC {} is multicast or zero",
                fmt_mac(&mac)
            )));
        }
        if ipv4.is_unspecified() || ipv4.is_multicast() || ipv4.is_broadcast() {
            return Err(Error::InvalidArgument(format!(
                "IPv4 address {ipv4} is not a unicast address"
            )));
        }
        Ok(PortAddr { mac, ipv4 })
    }
    /// The deterministic address of simulated NIC number `n` (1..=254): MAC
    /// 02:00:00:00:00:n (locally administered), IPv4 10.0.0.n.
    pub fn sim(n: u8) -> Result<PortAddr> {
        if n == 0 || n == 255 {
            return Err(Error::InvalidArgument(format!(
                "simulated NIC number {n}: must be 1..=254"
            )));
        }
        PortAddr::new([0x02, 0, 0, 0, 0, n], Ipv4Addr::new(10, 0, 0, n))
    }
}

fn fmt_mac(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// What one side of an RC connection tells the other, out of band: its QP number, the first
/// PSN it will send, and its port addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Endpoint {
    pub qpn: u32,
    pub psn: u32,
    pub ipv4: Ipv4Addr,
    pub mac: [u8; 6],
}

impl Endpoint {
    /// Encoded size: tag 'R', version 1, QPN (4, big-endian), PSN (4), IPv4 (4), MAC (6).
    pub const BYTES: usize = 20;
    const TAG: u8 = b'R';
    const VERSION: u8 = 1;

    pub fn to_bytes(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        b[0] = Self::TAG;
        b[1] = Self::VERSION;
        b[2..6].copy_from_slice(&self.qpn.to_be_bytes());
        b[6..10].copy_from_slice(&self.psn.to_be_bytes());
        b[10..14].copy_from_slice(&self.ipv4.octets());
        b[14..20].copy_from_slice(&self.mac);
        b
    }

    /// Decode and check (tag, version, 24-bit QPN and PSN, unicast addresses).
    pub fn from_bytes(b: &[u8]) -> Result<Endpoint> {
        if b.len() != Self::BYTES {
            return Err(Error::InvalidArgument(format!(
                "endpoint of {} bytes: expected {}",
                b.len(),
                Self::BYTES
            )));
        }
        if b[0] != Self::TAG || b[1] != Self::VERSION {
            return Err(Error::InvalidArgument(format!(
                "endpoint tag/version {:#04x}/{}: expected {:#04x}/{}",
                b[0],
                b[1],
                Self::TAG,
                Self::VERSION
            )));
        }
        let word = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let ep = Endpoint {
            qpn: word(2),
            psn: word(6),
            ipv4: Ipv4Addr::new(b[10], b[11], b[12], b[13]),
            mac: [b[14], b[15], b[16], b[17], b[18], b[19]],
        };
        ep.check()?;
        Ok(ep)
    }

    fn check(&self) -> Result<()> {
        if self.qpn > roce::PSN_MASK || self.psn > roce::PSN_MASK {
            return Err(Error::InvalidArgument(format!(
                "endpoint QPN {:#x} / PSN {:#x}: both are 24-bit numbers",
                self.qpn, self.psn
            )));
        }
        PortAddr::new(self.mac, self.ipv4).map(|_| ())
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "QP {} PSN {:#08x} at {} / {}",
            self.qpn,
            self.psn,
            self.ipv4,
            fmt_mac(&self.mac)
        )
    }
}

/// The UDP source port of a connection: deterministic in the two QP numbers, in the RoCE v2
/// entropy range 0xC000..=0xFFFF.
pub fn udp_sport(local_qpn: u32, remote_qpn: u32) -> u16 {
    let mut h = local_qpn.wrapping_mul(0x9E37_79B1) ^ remote_qpn.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 16;
    h = h.wrapping_mul(0x7FEB_352D);
    h ^= h >> 15;
    roce::UDP_SPORT_MIN | (h as u16 & 0x3FFF)
}

/// The default first PSN of a QP: deterministic in the QP number and the port address.
fn default_psn(qpn: u32, port: &PortAddr) -> u32 {
    let mut h = qpn.wrapping_mul(0x0100_0193) ^ u32::from(port.ipv4).wrapping_mul(0x2545_F491);
    h ^= h >> 13;
    h.wrapping_mul(0x5BD1_E995) & roce::PSN_MASK
}

/// QP states (ibv_qp_state); the device holds the same numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QpState {
    Reset,
    Init,
    Rtr,
    Rts,
    Err,
}

impl QpState {
    pub const fn code(self) -> u8 {
        match self {
            QpState::Reset => qp_state::RESET,
            QpState::Init => qp_state::INIT,
            QpState::Rtr => qp_state::RTR,
            QpState::Rts => qp_state::RTS,
            QpState::Err => qp_state::ERR,
        }
    }
    pub const fn name(self) -> &'static str {
        match self {
            QpState::Reset => "RESET",
            QpState::Init => "INIT",
            QpState::Rtr => "RTR",
            QpState::Rts => "RTS",
            QpState::Err => "ERR",
        }
    }
    /// The transitions of the IBTA QP state machine this driver implements (RC, no SQD/SQE):
    /// RESET->INIT, INIT->INIT, INIT->RTR, RTR->RTS, RTS->RTS, any->RESET, any->ERR.
    pub const fn can_go_to(self, to: QpState) -> bool {
        matches!(
            (self, to),
            (QpState::Reset, QpState::Init)
                | (QpState::Init, QpState::Init)
                | (QpState::Init, QpState::Rtr)
                | (QpState::Rtr, QpState::Rts)
                | (QpState::Rts, QpState::Rts)
                | (_, QpState::Reset)
                | (_, QpState::Err)
        )
    }
}

impl fmt::Display for QpState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Completion status (ibv_wc_status numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WcStatus {
    #[default]
    Success,
    LocLenErr,
    LocQpOpErr,
    LocProtErr,
    WrFlushErr,
    RemInvReqErr,
    RemAccessErr,
    RemOpErr,
    RetryExcErr,
    RnrRetryExcErr,
    GeneralErr,
    /// A status this driver does not know.
    Other(u8),
}

impl WcStatus {
    pub fn from_code(c: u8) -> WcStatus {
        match c {
            wc_status::SUCCESS => WcStatus::Success,
            wc_status::LOC_LEN_ERR => WcStatus::LocLenErr,
            wc_status::LOC_QP_OP_ERR => WcStatus::LocQpOpErr,
            wc_status::LOC_PROT_ERR => WcStatus::LocProtErr,
            wc_status::WR_FLUSH_ERR => WcStatus::WrFlushErr,
            wc_status::REM_INV_REQ_ERR => WcStatus::RemInvReqErr,
            wc_status::REM_ACCESS_ERR => WcStatus::RemAccessErr,
            wc_status::REM_OP_ERR => WcStatus::RemOpErr,
            wc_status::RETRY_EXC_ERR => WcStatus::RetryExcErr,
            wc_status::RNR_RETRY_EXC_ERR => WcStatus::RnrRetryExcErr,
            wc_status::GENERAL_ERR => WcStatus::GeneralErr,
            other => WcStatus::Other(other),
        }
    }
    pub fn code(self) -> u8 {
        match self {
            WcStatus::Success => wc_status::SUCCESS,
            WcStatus::LocLenErr => wc_status::LOC_LEN_ERR,
            WcStatus::LocQpOpErr => wc_status::LOC_QP_OP_ERR,
            WcStatus::LocProtErr => wc_status::LOC_PROT_ERR,
            WcStatus::WrFlushErr => wc_status::WR_FLUSH_ERR,
            WcStatus::RemInvReqErr => wc_status::REM_INV_REQ_ERR,
            WcStatus::RemAccessErr => wc_status::REM_ACCESS_ERR,
            WcStatus::RemOpErr => wc_status::REM_OP_ERR,
            WcStatus::RetryExcErr => wc_status::RETRY_EXC_ERR,
            WcStatus::RnrRetryExcErr => wc_status::RNR_RETRY_EXC_ERR,
            WcStatus::GeneralErr => wc_status::GENERAL_ERR,
            WcStatus::Other(c) => c,
        }
    }
}

/// Completion opcode (ibv_wc_opcode numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WcOpcode {
    #[default]
    Send,
    RdmaWrite,
    RdmaRead,
    CompSwap,
    FetchAdd,
    Recv,
    RecvRdmaWithImm,
    /// An opcode this driver does not know.
    Other(u8),
}

impl WcOpcode {
    pub fn from_code(c: u8) -> WcOpcode {
        match c {
            wc_op::SEND => WcOpcode::Send,
            wc_op::RDMA_WRITE => WcOpcode::RdmaWrite,
            wc_op::RDMA_READ => WcOpcode::RdmaRead,
            wc_op::COMP_SWAP => WcOpcode::CompSwap,
            wc_op::FETCH_ADD => WcOpcode::FetchAdd,
            wc_op::RECV => WcOpcode::Recv,
            wc_op::RECV_RDMA_WITH_IMM => WcOpcode::RecvRdmaWithImm,
            other => WcOpcode::Other(other),
        }
    }
    /// Receive-side completion (bit 7 of the ibv numbering).
    pub fn is_recv(self) -> bool {
        matches!(self, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm)
            || matches!(self, WcOpcode::Other(c) if c & 0x80 != 0)
    }
}

/// One completion, as `ibv_wc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkCompletion {
    pub wr_id: u64,
    pub status: WcStatus,
    pub opcode: WcOpcode,
    /// Bytes transferred (receive side: bytes received).
    pub byte_len: u32,
    /// Immediate data, when the message carried it.
    pub imm_data: Option<u32>,
    /// Local QP.
    pub qp_num: u32,
    /// Remote QP.
    pub src_qp: u32,
    /// Device-specific error detail (0 for driver-generated flush completions).
    pub vendor_err: u8,
}

impl WorkCompletion {
    pub fn is_ok(&self) -> bool {
        self.status == WcStatus::Success
    }

    fn from_cqe(c: &Cqe) -> WorkCompletion {
        WorkCompletion {
            wr_id: c.wr_id,
            status: WcStatus::from_code(c.status),
            opcode: WcOpcode::from_code(c.opcode),
            byte_len: c.byte_len,
            imm_data: (c.flags & cqe_flag::WITH_IMM != 0).then_some(c.imm_data),
            qp_num: c.qp_num,
            src_qp: c.src_qp,
            vendor_err: c.vendor_err,
        }
    }
}

/// Does a CQE whose flags byte is `flags` belong to the pass of consumer index `ci`? The device
/// writes the owner bit set on even passes over the ring (`(ci >> log2) & 1 == 0`) and clear on
/// odd ones; a zeroed ring therefore reads as "not yet written" on the first pass.
pub fn cqe_is_new(flags: u8, ci: u32, log2_entries: u8) -> bool {
    let even_pass = (ci >> log2_entries) & 1 == 0;
    (flags & cqe_flag::OWNER != 0) == even_pass
}

/// The owner bit the device writes for producer index `pi` (for tests and fake devices).
pub fn owner_flag_for(pi: u32, log2_entries: u8) -> u8 {
    if (pi >> log2_entries) & 1 == 0 {
        cqe_flag::OWNER
    } else {
        0
    }
}

/// One scatter/gather element: `length` bytes at IOVA `addr` inside the MR of `lkey`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sge {
    pub addr: u64,
    pub length: u32,
    pub lkey: u32,
}

/// What a send work request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOp {
    Send,
    SendWithImm(u32),
    RdmaWrite {
        remote_addr: u64,
        rkey: u32,
    },
    RdmaWriteWithImm {
        remote_addr: u64,
        rkey: u32,
        imm: u32,
    },
}

impl SendOp {
    fn wqe_opcode(self) -> u8 {
        match self {
            SendOp::Send => wqe_op::SEND,
            SendOp::SendWithImm(_) => wqe_op::SEND_IMM,
            SendOp::RdmaWrite { .. } => wqe_op::RDMA_WRITE,
            SendOp::RdmaWriteWithImm { .. } => wqe_op::RDMA_WRITE_IMM,
        }
    }
    fn wc_opcode(self) -> WcOpcode {
        match self {
            SendOp::Send | SendOp::SendWithImm(_) => WcOpcode::Send,
            _ => WcOpcode::RdmaWrite,
        }
    }
}

/// A send work request (one SGE, or up to 16 bytes inline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendWr<'a> {
    pub wr_id: u64,
    pub op: SendOp,
    /// The payload, from a registered MR. None (or length 0) with no inline data: a
    /// zero-length message.
    pub sge: Option<Sge>,
    /// Inline payload, copied into the WQE (at most 16 bytes and the QP's max_inline_data).
    pub inline: Option<&'a [u8]>,
    /// Generate a completion on success (errors always complete).
    pub signaled: bool,
    /// Solicited event (SE bit on the last packet of a SEND).
    pub solicited: bool,
}

impl<'a> SendWr<'a> {
    /// A signaled work request without payload; add one with [`SendWr::sge`] or
    /// [`SendWr::inline`].
    pub fn new(wr_id: u64, op: SendOp) -> SendWr<'a> {
        SendWr {
            wr_id,
            op,
            sge: None,
            inline: None,
            signaled: true,
            solicited: false,
        }
    }
    pub fn sge(mut self, sge: Sge) -> Self {
        self.sge = Some(sge);
        self
    }
    pub fn inline(mut self, data: &'a [u8]) -> Self {
        self.inline = Some(data);
        self
    }
    pub fn unsignaled(mut self) -> Self {
        self.signaled = false;
        self
    }
    pub fn solicited(mut self) -> Self {
        self.solicited = true;
        self
    }
    /// Message length in bytes.
    pub fn length(&self) -> u64 {
        match (self.inline, self.sge) {
            (Some(d), _) => d.len() as u64,
            (None, Some(s)) => s.length as u64,
            (None, None) => 0,
        }
    }
}

/// A receive work request (one SGE, or none for zero-length messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvWr {
    pub wr_id: u64,
    pub sge: Option<Sge>,
}

impl RecvWr {
    pub fn new(wr_id: u64, sge: Sge) -> RecvWr {
        RecvWr {
            wr_id,
            sge: Some(sge),
        }
    }
}

/// QP capabilities at creation (`ibv_qp_cap` + `sq_sig_all`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpCaps {
    /// Outstanding send WQEs, 1..=sq_depth.
    pub max_send_wr: u32,
    /// Outstanding receive WQEs, 1..=rq_depth.
    pub max_recv_wr: u32,
    /// SGEs per send WQE: 0 or 1.
    pub max_send_sge: u32,
    /// SGEs per receive WQE: 0 or 1.
    pub max_recv_sge: u32,
    /// Inline bytes per send WQE: 0..=16.
    pub max_inline_data: u32,
    /// Signal every send WQE, whatever its `signaled` flag.
    pub sq_sig_all: bool,
}

impl Default for QpCaps {
    fn default() -> Self {
        QpCaps {
            max_send_wr: 32,
            max_recv_wr: 32,
            max_send_sge: 1,
            max_recv_sge: 1,
            max_inline_data: WQE_INLINE_BYTES as u32,
            sq_sig_all: false,
        }
    }
}

/// RESET->INIT / INIT->INIT attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InitAttr {
    /// Remote access the QP allows (REMOTE_WRITE etc.; LOCAL_WRITE is ignored).
    pub access: AccessFlags,
}

/// INIT->RTR attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtrAttr {
    /// The peer: destination QPN, its first PSN (our expected PSN), its addresses.
    pub remote: Endpoint,
    pub path_mtu: Mtu,
    /// Outstanding RDMA READ/atomic as responder (accepted for rdma-core compatibility; unused
    /// until READ and atomics exist).
    pub max_dest_rd_atomic: u8,
}

/// RTR->RTS attributes (the first PSN sent is the QP's local PSN, see
/// [`QueuePair::set_local_psn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtsAttr {
    /// Local ACK timeout exponent (4.096 us * 2^timeout), 0..=31. Stored (no retransmission yet).
    pub timeout: u8,
    /// Transport retries 0..=7. Stored.
    pub retry_cnt: u8,
    /// RNR retries 0..=7. Stored.
    pub rnr_retry: u8,
    /// Outstanding RDMA READ/atomic as requester. Stored.
    pub max_rd_atomic: u8,
}

impl Default for RtsAttr {
    fn default() -> Self {
        RtsAttr {
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            max_rd_atomic: 1,
        }
    }
}

/// Everything [`QueuePair::connect`] needs besides the remote endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectAttr {
    pub access: AccessFlags,
    pub path_mtu: Mtu,
    pub rts: RtsAttr,
}

impl Default for ConnectAttr {
    fn default() -> Self {
        ConnectAttr {
            access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            path_mtu: Mtu::Mtu4096,
            rts: RtsAttr::default(),
        }
    }
}

/// CQ creation attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CqAttr {
    /// Ring entries: a power of two, 1..=MAX_CQ_ENTRIES.
    pub entries: u32,
    /// Interrupt on every completion (vector `irq_vector`).
    pub irq: bool,
    pub irq_vector: u16,
}

// ------------------------------------------------------------------------------------------
// software state shared by the objects

#[derive(Debug, Clone, Copy)]
struct SqEntry {
    wr_id: u64,
    signaled: bool,
    op: WcOpcode,
    length: u32,
}

#[derive(Debug)]
struct QpSw {
    pd: u32,
    send_cqn: u32,
    recv_cqn: u32,
    caps: QpCaps,
    state: QpState,
    local_psn: u32,
    remote: Option<Endpoint>,
    path_mtu: Option<Mtu>,
    access: AccessFlags,
    sq_pi: u16,
    rq_pi: u16,
    sq: VecDeque<SqEntry>,
    rq: VecDeque<u64>,
}

#[derive(Debug, Default)]
struct MrSlot {
    generation: u8,
    used: bool,
}

#[derive(Debug, Default)]
struct Resources {
    next_pd: u32,
    /// Live PDs: (pd number, users).
    pds: Vec<(u32, u32)>,
    mrs: Vec<MrSlot>,
    /// CQ users (QPs) per CQ number; None = free.
    cqs: Vec<Option<u32>>,
    qps: Vec<Option<QpSw>>,
}

impl Resources {
    fn pd_users(&mut self, pd: u32) -> Result<&mut u32> {
        self.pds
            .iter_mut()
            .find(|(n, _)| *n == pd)
            .map(|(_, u)| u)
            .ok_or_else(|| {
                Error::InvalidArgument(format!("protection domain {pd} is not allocated"))
            })
    }
    fn qp(&mut self, qpn: u32) -> Result<&mut QpSw> {
        self.qps
            .get_mut(qpn as usize)
            .and_then(|q| q.as_mut())
            .ok_or_else(|| Error::InvalidArgument(format!("QP {qpn} does not exist")))
    }
}

/// A verbs context: one opened device, its port addresses and the resource tables.
pub struct Context<D: Device> {
    nic: RefCell<Rnic<D>>,
    params: BuildParams,
    port: PortAddr,
    res: RefCell<Resources>,
}

impl<D: Device> Context<D> {
    /// Open a device ([`Rnic::open`]) and make a context with the given port addresses.
    pub fn open(dev: D, port: PortAddr) -> Result<Self> {
        Self::new(Rnic::open(dev)?, port)
    }

    /// A context over an opened device.
    pub fn new(nic: Rnic<D>, port: PortAddr) -> Result<Self> {
        PortAddr::new(port.mac, port.ipv4)?;
        let params = nic.info().params;
        let res = Resources {
            next_pd: 1,
            pds: Vec::new(),
            mrs: (0..params.num_mrs).map(|_| MrSlot::default()).collect(),
            cqs: vec![None; params.num_cqs as usize],
            qps: (0..params.num_qps).map(|_| None).collect(),
        };
        Ok(Context {
            nic: RefCell::new(nic),
            params,
            port,
            res: RefCell::new(res),
        })
    }

    /// Give the device back (all objects are gone: they borrow the context).
    pub fn into_nic(self) -> Rnic<D> {
        self.nic.into_inner()
    }

    pub fn params(&self) -> BuildParams {
        self.params
    }

    pub fn port(&self) -> PortAddr {
        self.port
    }

    /// What the driver read at open.
    pub fn info(&self) -> Result<DeviceInfo> {
        Ok(self.nic()?.info().clone())
    }

    fn nic(&self) -> Result<RefMut<'_, Rnic<D>>> {
        self.nic.try_borrow_mut().map_err(|_| Error::ContextBusy)
    }

    fn res(&self) -> Result<RefMut<'_, Resources>> {
        self.res.try_borrow_mut().map_err(|_| Error::ContextBusy)
    }

    /// Run `f` on the driver (registers, counters, the device itself).
    pub fn with_nic<R>(&self, f: impl FnOnce(&mut Rnic<D>) -> Result<R>) -> Result<R> {
        f(&mut *self.nic()?)
    }

    /// Allocate a zeroed DMA buffer (register it with [`ProtectionDomain::reg_mr`]).
    pub fn alloc_buf(&self, len: usize) -> Result<DmaBuf> {
        self.nic()?.device().dma_alloc(len)
    }

    pub fn free_buf(&self, buf: DmaBuf) -> Result<()> {
        self.nic()?.device().dma_free(buf)
    }

    pub fn write_buf(&self, buf: &DmaBuf, off: usize, data: &[u8]) -> Result<()> {
        self.nic()?.device().dma_write(buf, off, data)
    }

    pub fn read_buf(&self, buf: &DmaBuf, off: usize, out: &mut [u8]) -> Result<()> {
        self.nic()?.device().dma_read(buf, off, out)
    }

    /// Let device time pass (the simulator advances the world).
    pub fn relax(&self) -> Result<()> {
        self.nic()?.device().relax();
        Ok(())
    }

    /// Device time in nanoseconds.
    pub fn now_ns(&self) -> Result<u64> {
        Ok(self.nic()?.device().now_ns())
    }

    /// Allocate a protection domain (numbers from 1 upward).
    pub fn alloc_pd(&self) -> Result<ProtectionDomain<'_, D>> {
        let mut r = self.res()?;
        let mut pd = r.next_pd;
        // skip numbers still in use after a wrap
        while pd == 0 || r.pds.iter().any(|(n, _)| *n == pd) {
            pd = pd.wrapping_add(1);
        }
        r.next_pd = pd.wrapping_add(1);
        r.pds.push((pd, 0));
        Ok(ProtectionDomain {
            ctx: self,
            pd,
            live: true,
        })
    }

    /// Create a completion queue of `entries` CQEs (a power of two), no interrupt.
    pub fn create_cq(&self, entries: u32) -> Result<CompletionQueue<'_, D>> {
        self.create_cq_with(CqAttr {
            entries,
            irq: false,
            irq_vector: 0,
        })
    }

    /// Create a completion queue.
    pub fn create_cq_with(&self, attr: CqAttr) -> Result<CompletionQueue<'_, D>> {
        if !attr.entries.is_power_of_two() || attr.entries > MAX_CQ_ENTRIES {
            return Err(Error::InvalidArgument(format!(
                "CQ of {} entries: must be a power of two in 1..={MAX_CQ_ENTRIES}",
                attr.entries
            )));
        }
        if attr.irq_vector != 0 {
            return Err(Error::InvalidArgument(format!(
                "interrupt vector {}: the engine has one (0)",
                attr.irq_vector
            )));
        }
        let log2 = attr.entries.trailing_zeros() as u8;
        let cqn = {
            let mut r = self.res()?;
            let Some(n) = r.cqs.iter().position(|c| c.is_none()) else {
                return Err(Error::OutOfResources {
                    what: "completion queues",
                    limit: self.params.num_cqs,
                });
            };
            r.cqs[n] = Some(0);
            n as u32
        };
        let made = (|| {
            let mut nic = self.nic()?;
            let buf = nic.device().dma_alloc(attr.entries as usize * CQE_BYTES)?;
            let rec = CqContext {
                base_iova: buf.iova,
                log2_entries: log2,
                flags: CQ_FLAG_VALID | if attr.irq { CQ_FLAG_IRQ } else { 0 },
                irq_vector: attr.irq_vector,
                producer: 0,
                consumer: 0,
            };
            if let Err(e) = nic.write_context(ctxreg::TABLE_CQ, cqn, &rec.encode()) {
                let _ = nic.device().dma_free(buf);
                return Err(e);
            }
            Ok(buf)
        })();
        match made {
            Ok(buf) => Ok(CompletionQueue {
                ctx: self,
                cqn,
                buf,
                log2,
                ci: 0,
                db_ci: 0,
                live: true,
            }),
            Err(e) => {
                self.res()?.cqs[cqn as usize] = None;
                Err(e)
            }
        }
    }

    fn write_ctx(&self, table: u32, index: u32, rec: &[u8; 64]) -> Result<()> {
        self.nic()?.write_context(table, index, rec)
    }
}

// ------------------------------------------------------------------------------------------
// protection domain and memory regions

/// A protection domain: MRs and QPs of one PD only work together.
pub struct ProtectionDomain<'c, D: Device> {
    ctx: &'c Context<D>,
    pd: u32,
    live: bool,
}

impl<'c, D: Device> ProtectionDomain<'c, D> {
    /// The PD number the device sees.
    pub fn pd_num(&self) -> u32 {
        self.pd
    }

    /// Register a whole DMA buffer.
    pub fn reg_mr(&self, buf: &DmaBuf, access: AccessFlags) -> Result<MemoryRegion<'c, D>> {
        self.reg_mr_range(buf, 0, buf.len, access)
    }

    /// Register `[off, off+len)` of a DMA buffer. The MR's address (what the peer uses in
    /// RDMA WRITEs) is the IOVA of its first byte. Remote write needs local write (IBTA).
    pub fn reg_mr_range(
        &self,
        buf: &DmaBuf,
        off: usize,
        len: usize,
        access: AccessFlags,
    ) -> Result<MemoryRegion<'c, D>> {
        buf.check(off, len)?;
        if len == 0 {
            return Err(Error::InvalidArgument("memory region of 0 bytes".into()));
        }
        AccessFlags::from_bits(access.bits())?;
        if (access.contains(AccessFlags::REMOTE_WRITE)
            || access.contains(AccessFlags::REMOTE_ATOMIC))
            && !access.contains(AccessFlags::LOCAL_WRITE)
        {
            return Err(Error::InvalidArgument(
                "remote write/atomic access needs LOCAL_WRITE too".into(),
            ));
        }
        let iova = buf
            .iova
            .checked_add(off as u64)
            .filter(|i| i.checked_add(len as u64).is_some())
            .ok_or_else(|| {
                Error::InvalidArgument(format!("IOVA {:#x} + {off} + {len} overflows", buf.iova))
            })?;
        let (index, key) = {
            let mut r = self.ctx.res()?;
            let Some(i) = r.mrs.iter().position(|m| !m.used) else {
                return Err(Error::OutOfResources {
                    what: "memory-region table entries",
                    limit: self.ctx.params.num_mrs,
                });
            };
            let slot = &mut r.mrs[i];
            // generation 0 is never used, so key 0 (a zeroed WQE) is never valid
            slot.generation = match slot.generation.wrapping_add(1) {
                0 => 1,
                g => g,
            };
            slot.used = true;
            let key = make_key(i as u32, slot.generation);
            *r.pd_users(self.pd)? += 1;
            (i as u32, key)
        };
        let rec = MrEntry {
            key,
            pd: self.pd,
            iova,
            length: len as u64,
            access: access.bits(),
            flags: MR_FLAG_VALID,
        };
        if let Err(e) = self.ctx.write_ctx(ctxreg::TABLE_MR, index, &rec.encode()) {
            let mut r = self.ctx.res()?;
            r.mrs[index as usize].used = false;
            if let Ok(u) = r.pd_users(self.pd) {
                *u -= 1;
            }
            return Err(e);
        }
        Ok(MemoryRegion {
            ctx: self.ctx,
            index,
            key,
            pd: self.pd,
            buf: *buf,
            off,
            len,
            iova,
            access,
            live: true,
        })
    }

    /// Create an RC queue pair in this PD, in state RESET.
    pub fn create_qp(
        &self,
        send_cq: &CompletionQueue<'c, D>,
        recv_cq: &CompletionQueue<'c, D>,
        caps: QpCaps,
    ) -> Result<QueuePair<'c, D>> {
        let p = self.ctx.params;
        let bad = |what: String| Err(Error::InvalidArgument(what));
        if caps.max_send_wr == 0 || caps.max_send_wr > p.sq_depth {
            return bad(format!(
                "max_send_wr {}: must be 1..={} (SQ depth)",
                caps.max_send_wr, p.sq_depth
            ));
        }
        if caps.max_recv_wr == 0 || caps.max_recv_wr > p.rq_depth {
            return bad(format!(
                "max_recv_wr {}: must be 1..={} (RQ depth)",
                caps.max_recv_wr, p.rq_depth
            ));
        }
        if caps.max_send_sge > 1 || caps.max_recv_sge > 1 {
            return bad(format!(
                "{} send / {} receive SGEs: the engine takes one per WQE",
                caps.max_send_sge, caps.max_recv_sge
            ));
        }
        if caps.max_inline_data as usize > WQE_INLINE_BYTES {
            return bad(format!(
                "max_inline_data {}: at most {WQE_INLINE_BYTES}",
                caps.max_inline_data
            ));
        }
        if !std::ptr::eq(send_cq.ctx, self.ctx) || !std::ptr::eq(recv_cq.ctx, self.ctx) {
            return bad("the CQs belong to another context".into());
        }
        let qpn = {
            let mut r = self.ctx.res()?;
            r.pd_users(self.pd)?;
            let Some(q) = (FIRST_QPN as usize..r.qps.len()).find(|&q| r.qps[q].is_none()) else {
                return Err(Error::OutOfResources {
                    what: "queue pairs",
                    limit: p.num_qps.saturating_sub(FIRST_QPN),
                });
            };
            r.qps[q] = Some(QpSw {
                pd: self.pd,
                send_cqn: send_cq.cqn,
                recv_cqn: recv_cq.cqn,
                caps,
                state: QpState::Reset,
                local_psn: default_psn(q as u32, &self.ctx.port),
                remote: None,
                path_mtu: None,
                access: AccessFlags::empty(),
                sq_pi: 0,
                rq_pi: 0,
                sq: VecDeque::new(),
                rq: VecDeque::new(),
            });
            *r.pd_users(self.pd)? += 1;
            for cqn in [send_cq.cqn, recv_cq.cqn] {
                if let Some(Some(u)) = r.cqs.get_mut(cqn as usize) {
                    *u += 1;
                }
            }
            q as u32
        };
        let qp = QueuePair {
            ctx: self.ctx,
            qpn,
            live: true,
        };
        // the device record may hold an old QP: start from a clean RESET
        qp.write_reset_records()?;
        Ok(qp)
    }

    /// Free the PD; an error if MRs or QPs still use it.
    pub fn dealloc(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        if !self.live {
            return Ok(());
        }
        let mut r = self.ctx.res()?;
        let users = *r.pd_users(self.pd)?;
        if users > 0 {
            return Err(Error::InUse {
                what: format!("protection domain {}", self.pd),
                users,
                by: "memory regions / queue pairs",
            });
        }
        r.pds.retain(|(n, _)| *n != self.pd);
        self.live = false;
        Ok(())
    }
}

impl<D: Device> Drop for ProtectionDomain<'_, D> {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

/// A registered memory region: key = table index << 8 | generation (lkey = rkey).
pub struct MemoryRegion<'c, D: Device> {
    ctx: &'c Context<D>,
    index: u32,
    key: u32,
    pd: u32,
    buf: DmaBuf,
    off: usize,
    len: usize,
    iova: u64,
    access: AccessFlags,
    live: bool,
}

impl<'c, D: Device> MemoryRegion<'c, D> {
    pub fn lkey(&self) -> u32 {
        self.key
    }
    pub fn rkey(&self) -> u32 {
        self.key
    }
    /// IOVA of the first byte (the address a peer writes to).
    pub fn iova(&self) -> u64 {
        self.iova
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn access(&self) -> AccessFlags {
        self.access
    }
    pub fn pd_num(&self) -> u32 {
        self.pd
    }
    /// The buffer the MR lies in.
    pub fn buf(&self) -> DmaBuf {
        self.buf
    }

    fn check(&self, off: usize, len: usize) -> Result<()> {
        match off.checked_add(len) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(Error::InvalidArgument(format!(
                "[{off}, {off}+{len}) is outside the memory region of {} bytes",
                self.len
            ))),
        }
    }

    /// An SGE for `[off, off+len)` of the MR.
    pub fn sge(&self, off: usize, len: usize) -> Result<Sge> {
        self.check(off, len)?;
        if len as u64 > MAX_MSG_BYTES {
            return Err(Error::InvalidArgument(format!(
                "SGE of {len} bytes: messages are at most {MAX_MSG_BYTES}"
            )));
        }
        Ok(Sge {
            addr: self.iova + off as u64,
            length: len as u32,
            lkey: self.key,
        })
    }

    /// The remote address of byte `off` (for the peer's RDMA WRITE).
    pub fn remote_addr(&self, off: usize) -> Result<u64> {
        self.check(off, 0)?;
        Ok(self.iova + off as u64)
    }

    /// Host write into the MR.
    pub fn write(&self, off: usize, data: &[u8]) -> Result<()> {
        self.check(off, data.len())?;
        self.ctx.write_buf(&self.buf, self.off + off, data)
    }

    /// Host read from the MR.
    pub fn read(&self, off: usize, out: &mut [u8]) -> Result<()> {
        self.check(off, out.len())?;
        self.ctx.read_buf(&self.buf, self.off + off, out)
    }

    /// Deregister: the entry becomes invalid and the key stale (the next MR in this slot gets
    /// another generation).
    pub fn dereg(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        if !self.live {
            return Ok(());
        }
        self.ctx
            .write_ctx(ctxreg::TABLE_MR, self.index, &MrEntry::default().encode())?;
        let mut r = self.ctx.res()?;
        r.mrs[self.index as usize].used = false;
        if let Ok(u) = r.pd_users(self.pd) {
            *u = u.saturating_sub(1);
        }
        self.live = false;
        Ok(())
    }
}

impl<D: Device> Drop for MemoryRegion<'_, D> {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

// ------------------------------------------------------------------------------------------
// completion queues

/// A completion queue: a ring of 32-byte CQEs in host memory written by the device.
pub struct CompletionQueue<'c, D: Device> {
    ctx: &'c Context<D>,
    cqn: u32,
    buf: DmaBuf,
    log2: u8,
    /// Host consumer index (free-running).
    ci: u32,
    /// Consumer index last told to the device.
    db_ci: u32,
    live: bool,
}

impl<'c, D: Device> CompletionQueue<'c, D> {
    pub fn cqn(&self) -> u32 {
        self.cqn
    }
    pub fn entries(&self) -> u32 {
        1 << self.log2
    }
    /// The CQE ring (for tests and debugging).
    pub fn ring(&self) -> DmaBuf {
        self.buf
    }
    /// Completions consumed so far (the consumer index).
    pub fn consumed(&self) -> u32 {
        self.ci
    }

    /// Poll up to `wc.len()` completions without waiting; returns how many were filled.
    /// Device CQEs first (in ring order), then, once the ring is empty, `WR_FLUSH_ERR`
    /// completions for the WQEs of QPs in the error state that use this CQ.
    pub fn poll(&mut self, wc: &mut [WorkCompletion]) -> Result<usize> {
        let mut n = 0;
        let entries = self.entries();
        while n < wc.len() {
            let slot = (self.ci & (entries - 1)) as usize;
            let mut raw = [0u8; CQE_BYTES];
            self.ctx.read_buf(&self.buf, slot * CQE_BYTES, &mut raw)?;
            if !cqe_is_new(raw[27], self.ci, self.log2) {
                break;
            }
            let c = Cqe::decode(&raw);
            let w = WorkCompletion::from_cqe(&c);
            self.account(&w)?;
            wc[n] = w;
            n += 1;
            self.ci = self.ci.wrapping_add(1);
            // tell the device early when a large batch crosses half the ring
            if self.ci.wrapping_sub(self.db_ci) >= entries.div_ceil(2) {
                self.ring_doorbell()?;
            }
        }
        if n > 0 && self.ci != self.db_ci {
            self.ring_doorbell()?;
        }
        if n < wc.len() {
            n += self.flush(&mut wc[n..])?;
        }
        Ok(n)
    }

    fn ring_doorbell(&mut self) -> Result<()> {
        self.ctx.nic()?.doorbell(db::CQ, self.cqn, self.ci as u16)?;
        self.db_ci = self.ci;
        Ok(())
    }

    /// Free the WQEs a completion covers; an error status puts the QP in ERR.
    fn account(&self, w: &WorkCompletion) -> Result<()> {
        let mut r = self.ctx.res()?;
        let Some(Some(q)) = r.qps.get_mut(w.qp_num as usize) else {
            return Ok(()); // not ours (stale QP): nothing to account
        };
        if w.opcode.is_recv() {
            if q.recv_cqn == self.cqn {
                q.rq.pop_front();
            }
        } else if q.send_cqn == self.cqn {
            let upto = if w.is_ok() {
                // in-order RC: everything up to the oldest signaled WQE is done
                q.sq.iter().position(|e| e.signaled || q.caps.sq_sig_all)
            } else {
                q.sq.iter().position(|e| e.wr_id == w.wr_id)
            };
            let k = upto.unwrap_or(0).min(q.sq.len());
            q.sq.drain(..(k + 1).min(q.sq.len()));
        }
        if !w.is_ok() {
            q.state = QpState::Err;
        }
        Ok(())
    }

    /// WR_FLUSH_ERR completions for QPs in ERR that use this CQ.
    fn flush(&self, wc: &mut [WorkCompletion]) -> Result<usize> {
        let mut r = self.ctx.res()?;
        let mut n = 0;
        for (qpn, q) in r.qps.iter_mut().enumerate() {
            let Some(q) = q else { continue };
            if q.state != QpState::Err {
                continue;
            }
            let src_qp = q.remote.map_or(0, |e| e.qpn);
            while n < wc.len() && q.send_cqn == self.cqn {
                let Some(e) = q.sq.pop_front() else { break };
                wc[n] = WorkCompletion {
                    wr_id: e.wr_id,
                    status: WcStatus::WrFlushErr,
                    opcode: e.op,
                    byte_len: e.length,
                    imm_data: None,
                    qp_num: qpn as u32,
                    src_qp,
                    vendor_err: 0,
                };
                n += 1;
            }
            while n < wc.len() && q.recv_cqn == self.cqn {
                let Some(wr_id) = q.rq.pop_front() else { break };
                wc[n] = WorkCompletion {
                    wr_id,
                    status: WcStatus::WrFlushErr,
                    opcode: WcOpcode::Recv,
                    byte_len: 0,
                    imm_data: None,
                    qp_num: qpn as u32,
                    src_qp,
                    vendor_err: 0,
                };
                n += 1;
            }
        }
        Ok(n)
    }

    /// Poll until at least `min` completions are in `wc` (at most `wc.len()`), letting device
    /// time pass between polls; [`Error::Timeout`] after `timeout_ns` of device time.
    pub fn poll_wait(
        &mut self,
        wc: &mut [WorkCompletion],
        min: usize,
        timeout_ns: u64,
    ) -> Result<usize> {
        if min > wc.len() {
            return Err(Error::InvalidArgument(format!(
                "waiting for {min} completions with room for {}",
                wc.len()
            )));
        }
        let t0 = self.ctx.now_ns()?;
        let mut got = 0;
        loop {
            got += self.poll(&mut wc[got..])?;
            if got >= min {
                return Ok(got);
            }
            let now = self.ctx.now_ns()?;
            if now.saturating_sub(t0) > timeout_ns {
                return Err(Error::Timeout {
                    what: "completions",
                    ns: now - t0,
                });
            }
            self.ctx.relax()?;
        }
    }

    /// Wait for exactly `n` completions.
    pub fn wait(&mut self, n: usize, timeout_ns: u64) -> Result<Vec<WorkCompletion>> {
        let mut wc = vec![WorkCompletion::default(); n];
        let got = self.poll_wait(&mut wc, n, timeout_ns)?;
        wc.truncate(got);
        Ok(wc)
    }

    /// Destroy the CQ; an error if QPs still use it.
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        if !self.live {
            return Ok(());
        }
        {
            let r = self.ctx.res()?;
            if let Some(Some(users)) = r.cqs.get(self.cqn as usize)
                && *users > 0
            {
                return Err(Error::InUse {
                    what: format!("completion queue {}", self.cqn),
                    users: *users,
                    by: "queue pairs",
                });
            }
        }
        self.ctx
            .write_ctx(ctxreg::TABLE_CQ, self.cqn, &CqContext::default().encode())?;
        self.ctx.free_buf(self.buf)?;
        self.ctx.res()?.cqs[self.cqn as usize] = None;
        self.live = false;
        Ok(())
    }
}

impl<D: Device> Drop for CompletionQueue<'_, D> {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

// ------------------------------------------------------------------------------------------
// queue pairs

/// An RC queue pair.
pub struct QueuePair<'c, D: Device> {
    ctx: &'c Context<D>,
    qpn: u32,
    live: bool,
}

impl<'c, D: Device> QueuePair<'c, D> {
    pub fn qpn(&self) -> u32 {
        self.qpn
    }

    fn with<R>(&self, f: impl FnOnce(&mut QpSw) -> Result<R>) -> Result<R> {
        let mut r = self.ctx.res()?;
        f(r.qp(self.qpn)?)
    }

    /// The driver's view of the state (the device moves a QP to ERR on its own; the driver
    /// learns it from the error completion).
    pub fn state(&self) -> Result<QpState> {
        self.with(|q| Ok(q.state))
    }

    /// Read the device's QP context and responder state.
    pub fn query_device(&self) -> Result<(QpContext, RqState)> {
        let mut nic = self.ctx.nic()?;
        let qc = QpContext::decode(&nic.read_context(ctxreg::TABLE_QP, self.qpn)?);
        let rs = RqState::decode(&nic.read_context(ctxreg::TABLE_RQS, self.qpn)?);
        Ok((qc, rs))
    }

    /// The first PSN this QP sends (after RTS).
    pub fn local_psn(&self) -> Result<u32> {
        self.with(|q| Ok(q.local_psn))
    }

    /// Choose the first PSN this QP sends: only before RTS.
    pub fn set_local_psn(&self, psn: u32) -> Result<()> {
        if psn > roce::PSN_MASK {
            return Err(Error::InvalidArgument(format!(
                "PSN {psn:#x} is wider than 24 bits"
            )));
        }
        let qpn = self.qpn;
        self.with(|q| match q.state {
            QpState::Reset | QpState::Init | QpState::Rtr => {
                q.local_psn = psn;
                Ok(())
            }
            s => Err(Error::QpState {
                qpn,
                state: s.name(),
                what: "the first PSN is fixed once the QP is in RTS".into(),
            }),
        })
    }

    /// What the peer needs to connect to this QP.
    pub fn endpoint(&self) -> Result<Endpoint> {
        let port = self.ctx.port;
        Ok(Endpoint {
            qpn: self.qpn,
            psn: self.local_psn()?,
            ipv4: port.ipv4,
            mac: port.mac,
        })
    }

    /// The peer given at RTR.
    pub fn remote(&self) -> Result<Option<Endpoint>> {
        self.with(|q| Ok(q.remote))
    }

    /// Send / receive WQEs posted and not yet completed.
    pub fn outstanding(&self) -> Result<(usize, usize)> {
        self.with(|q| Ok((q.sq.len(), q.rq.len())))
    }

    fn transition(&self, to: QpState) -> Result<QpState> {
        let qpn = self.qpn;
        self.with(|q| {
            if q.state.can_go_to(to) {
                Ok(q.state)
            } else {
                Err(Error::QpState {
                    qpn,
                    state: q.state.name(),
                    what: format!("cannot move to {to}"),
                })
            }
        })
    }

    fn read_records(&self) -> Result<(QpContext, RqState)> {
        self.query_device()
    }

    /// Write both records (responder state first: the QP context's state gates the data path).
    fn write_records(&self, qc: &QpContext, rs: &RqState) -> Result<()> {
        let mut nic = self.ctx.nic()?;
        nic.write_context(ctxreg::TABLE_RQS, self.qpn, &rs.encode())?;
        nic.write_context(ctxreg::TABLE_QP, self.qpn, &qc.encode())
    }

    fn base_context(&self, q: &QpSw, state: QpState) -> QpContext {
        let port = self.ctx.port;
        QpContext {
            state: state.code(),
            qp_type: QP_TYPE_RC,
            access: q.access.remote().bits() as u8,
            src_ip: u32::from(port.ipv4),
            src_mac: port.mac,
            pd: q.pd,
            send_cqn: q.send_cqn as u16,
            recv_cqn: q.recv_cqn as u16,
            sq_pi: q.sq_pi,
            sq_ci: q.sq_pi,
            sq_ack_ci: q.sq_pi,
            ..Default::default()
        }
    }

    fn write_reset_records(&self) -> Result<()> {
        let qc = self.with(|q| {
            q.sq_pi = 0;
            q.rq_pi = 0;
            q.sq.clear();
            q.rq.clear();
            q.remote = None;
            q.path_mtu = None;
            Ok(self.base_context(q, QpState::Reset))
        })?;
        self.write_records(&qc, &RqState::default())
    }

    /// RESET->INIT (or INIT->INIT): the QP's remote access rights; receive WQEs may be posted
    /// from INIT on.
    pub fn modify_to_init(&self, attr: &InitAttr) -> Result<()> {
        AccessFlags::from_bits(attr.access.bits())?;
        let from = self.transition(QpState::Init)?;
        let qc = self.with(|q| {
            q.access = attr.access;
            Ok(self.base_context(q, QpState::Init))
        })?;
        if from == QpState::Reset {
            self.write_records(&qc, &RqState::default())?;
        } else {
            let (mut cur, rs) = self.read_records()?;
            cur.access = qc.access;
            self.write_records(&cur, &rs)?;
        }
        self.with(|q| {
            q.state = QpState::Init;
            Ok(())
        })
    }

    /// INIT->RTR: the peer (its QPN, first PSN and addresses) and the path MTU.
    pub fn modify_to_rtr(&self, attr: &RtrAttr) -> Result<()> {
        attr.remote.check()?;
        let max_mtu = self.ctx.params.max_mtu;
        if attr.path_mtu.bytes() > max_mtu {
            return Err(Error::InvalidArgument(format!(
                "path MTU {} is above the device's {max_mtu}",
                attr.path_mtu.bytes()
            )));
        }
        self.transition(QpState::Rtr)?;
        let (mut qc, mut rs) = self.read_records()?;
        let (rq_pi, sq_pi) = self.with(|q| Ok((q.rq_pi, q.sq_pi)))?;
        let e = attr.remote;
        qc.state = qp_state::RTR;
        qc.path_mtu = attr.path_mtu.code();
        qc.remote_qpn = e.qpn;
        qc.dest_mac = e.mac;
        qc.dest_ip = u32::from(e.ipv4);
        qc.udp_sport = udp_sport(self.qpn, e.qpn);
        qc.sq_pi = sq_pi;
        rs.rq_psn = e.psn;
        rs.rq_pi = rq_pi; // the driver's index: safe against a doorbell still in flight
        self.write_records(&qc, &rs)?;
        self.with(|q| {
            q.remote = Some(e);
            q.path_mtu = Some(attr.path_mtu);
            q.state = QpState::Rtr;
            Ok(())
        })
    }

    /// RTR->RTS (or RTS->RTS): start sending at the local PSN; timeout/retry values are stored.
    pub fn modify_to_rts(&self, attr: &RtsAttr) -> Result<()> {
        if attr.timeout > 31 || attr.retry_cnt > 7 || attr.rnr_retry > 7 {
            return Err(Error::InvalidArgument(format!(
                "timeout {} (0..=31), retry_cnt {} (0..=7), rnr_retry {} (0..=7)",
                attr.timeout, attr.retry_cnt, attr.rnr_retry
            )));
        }
        let from = self.transition(QpState::Rts)?;
        let (mut qc, _) = self.read_records()?;
        let (psn, sq_pi) = self.with(|q| Ok((q.local_psn, q.sq_pi)))?;
        qc.state = qp_state::RTS;
        if from == QpState::Rtr {
            qc.sq_psn = psn;
            qc.una_psn = psn;
            qc.sq_pi = sq_pi;
            qc.sq_ci = sq_pi;
            qc.sq_ack_ci = sq_pi;
        }
        qc.timeout = attr.timeout;
        qc.retry_cnt = attr.retry_cnt;
        qc.rnr_retry = attr.rnr_retry;
        qc.max_rd_atomic = attr.max_rd_atomic;
        self.ctx
            .write_ctx(ctxreg::TABLE_QP, self.qpn, &qc.encode())?;
        self.with(|q| {
            q.state = QpState::Rts;
            Ok(())
        })
    }

    /// RESET->INIT->RTR->RTS in one call.
    pub fn connect(&self, remote: &Endpoint, attr: &ConnectAttr) -> Result<()> {
        self.modify_to_init(&InitAttr {
            access: attr.access,
        })?;
        self.modify_to_rtr(&RtrAttr {
            remote: *remote,
            path_mtu: attr.path_mtu,
            max_dest_rd_atomic: 1,
        })?;
        self.modify_to_rts(&attr.rts)
    }

    /// Any state -> ERR: the device stops the QP; outstanding WQEs come back flushed.
    pub fn modify_to_err(&self) -> Result<()> {
        self.transition(QpState::Err)?;
        let (mut qc, _) = self.read_records()?;
        qc.state = qp_state::ERR;
        self.ctx
            .nic()?
            .write_context(ctxreg::TABLE_QP, self.qpn, &qc.encode())?;
        self.with(|q| {
            q.state = QpState::Err;
            Ok(())
        })
    }

    /// Any state -> RESET: outstanding WQEs are discarded (no completions), indices restart.
    pub fn modify_to_reset(&self) -> Result<()> {
        self.transition(QpState::Reset)?;
        self.write_reset_records()?;
        self.with(|q| {
            q.state = QpState::Reset;
            q.access = AccessFlags::empty();
            Ok(())
        })
    }

    fn check_sge(sge: &Sge) -> Result<()> {
        if sge.addr.checked_add(sge.length as u64).is_none() {
            return Err(Error::InvalidArgument(format!(
                "SGE at {:#x} + {} bytes overflows",
                sge.addr, sge.length
            )));
        }
        if sge.length as u64 > MAX_MSG_BYTES {
            return Err(Error::InvalidArgument(format!(
                "SGE of {} bytes: messages are at most {MAX_MSG_BYTES}",
                sge.length
            )));
        }
        Ok(())
    }

    fn build_send_wqe(q: &QpSw, wr: &SendWr) -> Result<Wqe> {
        let mut w = Wqe {
            opcode: wr.op.wqe_opcode(),
            slots: 1,
            wr_id: wr.wr_id,
            ..Default::default()
        };
        if wr.signaled || q.caps.sq_sig_all {
            w.flags |= wqe_flag::SIGNALED;
        }
        if wr.solicited {
            w.flags |= wqe_flag::SOLICITED;
        }
        match (wr.sge, wr.inline) {
            (Some(_), Some(_)) => {
                return Err(Error::InvalidArgument(format!(
                    "work request {}: both an SGE and inline data",
                    wr.wr_id
                )));
            }
            (None, Some(d)) => {
                let max = (q.caps.max_inline_data as usize).min(WQE_INLINE_BYTES);
                if d.len() > max {
                    return Err(Error::InvalidArgument(format!(
                        "work request {}: {} inline bytes, the QP allows {max}",
                        wr.wr_id,
                        d.len()
                    )));
                }
                w.flags |= wqe_flag::INLINE;
                w.inline_len = d.len() as u8;
                w.length = d.len() as u32;
                w.inline_data[..d.len()].copy_from_slice(d);
            }
            (Some(s), None) => {
                Self::check_sge(&s)?;
                if q.caps.max_send_sge == 0 && s.length > 0 {
                    return Err(Error::InvalidArgument(format!(
                        "work request {}: the QP was created with max_send_sge 0",
                        wr.wr_id
                    )));
                }
                w.length = s.length;
                w.local_addr = s.addr;
                w.lkey = s.lkey;
            }
            (None, None) => {}
        }
        match wr.op {
            SendOp::Send => {}
            SendOp::SendWithImm(imm) => w.imm_data = imm,
            SendOp::RdmaWrite { remote_addr, rkey } => {
                w.remote_addr = remote_addr;
                w.rkey = rkey;
            }
            SendOp::RdmaWriteWithImm {
                remote_addr,
                rkey,
                imm,
            } => {
                w.remote_addr = remote_addr;
                w.rkey = rkey;
                w.imm_data = imm;
            }
        }
        if let SendOp::RdmaWrite { remote_addr, .. } | SendOp::RdmaWriteWithImm { remote_addr, .. } =
            wr.op
            && remote_addr.checked_add(w.length as u64).is_none()
        {
            return Err(Error::InvalidArgument(format!(
                "work request {}: remote address {remote_addr:#x} + {} overflows",
                wr.wr_id, w.length
            )));
        }
        Ok(w)
    }

    /// Post send work requests: all or none (every request is checked first), one doorbell.
    /// The QP must be in RTS and have room for all of them.
    pub fn post_send(&self, wrs: &[SendWr]) -> Result<()> {
        if wrs.is_empty() {
            return Ok(());
        }
        let qpn = self.qpn;
        let (first, wqes) = self.with(|q| {
            if q.state != QpState::Rts {
                return Err(Error::QpState {
                    qpn,
                    state: q.state.name(),
                    what: "send work requests need RTS".into(),
                });
            }
            if q.sq.len() + wrs.len() > q.caps.max_send_wr as usize {
                return Err(Error::QueueFull {
                    qpn,
                    queue: "send",
                    outstanding: q.sq.len(),
                    posting: wrs.len(),
                    depth: q.caps.max_send_wr,
                });
            }
            let wqes = wrs
                .iter()
                .map(|wr| Self::build_send_wqe(q, wr))
                .collect::<Result<Vec<_>>>()?;
            Ok((q.sq_pi, wqes))
        })?;
        let mut idx = first;
        {
            let mut nic = self.ctx.nic()?;
            for w in &wqes {
                nic.push_sq_wqe(qpn, idx as u32, w)?;
                idx = idx.wrapping_add(1);
            }
            nic.doorbell(db::SQ, qpn, idx)?;
        }
        self.with(|q| {
            for (wr, w) in wrs.iter().zip(&wqes) {
                q.sq.push_back(SqEntry {
                    wr_id: wr.wr_id,
                    signaled: w.flags & wqe_flag::SIGNALED != 0,
                    op: wr.op.wc_opcode(),
                    length: w.length,
                });
            }
            q.sq_pi = idx;
            Ok(())
        })
    }

    /// Post receive work requests (from INIT on): all or none, one doorbell.
    pub fn post_recv(&self, wrs: &[RecvWr]) -> Result<()> {
        if wrs.is_empty() {
            return Ok(());
        }
        let qpn = self.qpn;
        let (first, wqes) = self.with(|q| {
            if !matches!(q.state, QpState::Init | QpState::Rtr | QpState::Rts) {
                return Err(Error::QpState {
                    qpn,
                    state: q.state.name(),
                    what: "receive work requests need INIT, RTR or RTS".into(),
                });
            }
            if q.rq.len() + wrs.len() > q.caps.max_recv_wr as usize {
                return Err(Error::QueueFull {
                    qpn,
                    queue: "receive",
                    outstanding: q.rq.len(),
                    posting: wrs.len(),
                    depth: q.caps.max_recv_wr,
                });
            }
            let mut wqes = Vec::with_capacity(wrs.len());
            for wr in wrs {
                let mut w = Wqe {
                    opcode: wqe_op::RECV,
                    slots: 1,
                    wr_id: wr.wr_id,
                    ..Default::default()
                };
                if let Some(s) = wr.sge {
                    Self::check_sge(&s)?;
                    if q.caps.max_recv_sge == 0 && s.length > 0 {
                        return Err(Error::InvalidArgument(format!(
                            "receive request {}: the QP was created with max_recv_sge 0",
                            wr.wr_id
                        )));
                    }
                    w.length = s.length;
                    w.local_addr = s.addr;
                    w.lkey = s.lkey;
                }
                wqes.push(w);
            }
            Ok((q.rq_pi, wqes))
        })?;
        let mut idx = first;
        {
            let mut nic = self.ctx.nic()?;
            for w in &wqes {
                nic.push_rq_wqe(qpn, idx as u32, w)?;
                idx = idx.wrapping_add(1);
            }
            nic.doorbell(db::RQ, qpn, idx)?;
        }
        self.with(|q| {
            q.rq.extend(wrs.iter().map(|w| w.wr_id));
            q.rq_pi = idx;
            Ok(())
        })
    }

    /// Destroy the QP: the device records are cleared (state RESET) and the QPN is free.
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        if !self.live {
            return Ok(());
        }
        self.write_records(&QpContext::default(), &RqState::default())?;
        let mut r = self.ctx.res()?;
        if let Some(q) = r.qps[self.qpn as usize].take() {
            if let Ok(u) = r.pd_users(q.pd) {
                *u = u.saturating_sub(1);
            }
            for cqn in [q.send_cqn, q.recv_cqn] {
                if let Some(Some(u)) = r.cqs.get_mut(cqn as usize) {
                    *u = u.saturating_sub(1);
                }
            }
        }
        self.live = false;
        Ok(())
    }
}

impl<D: Device> Drop for QueuePair<'_, D> {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

#[cfg(test)]
mod tests {
    //! Pure-software tests: the verbs layer against a fake device that implements the register
    //! map's identity, the context mailbox, the rings and DMA memory (no data path: the tests
    //! play the hardware's part by writing CQEs into the ring).
    use super::*;
    use crate::device::Bar;
    use rnic_abi::params::{self, DEFAULT};
    use rnic_abi::regs::{self, ctx as cr, dev};
    use std::collections::HashMap;

    #[derive(Default)]
    struct Fake {
        ctx_data: [u32; 16],
        ctx_status: u32,
        tables: HashMap<(u32, u32), [u8; 64]>,
        rings: HashMap<u64, [u8; 64]>,
        doorbells: Vec<(u32, u32)>,
        bufs: HashMap<u64, (u64, Vec<u8>)>,
        next_id: u64,
        now: u64,
    }

    impl Fake {
        fn exec(&mut self, cmd: u32) {
            let (op, table, index) = (cmd & 3, (cmd >> 4) & 0xF, cmd >> 16);
            let limit = match table {
                cr::TABLE_QP | cr::TABLE_RQS => DEFAULT.num_qps,
                cr::TABLE_CQ => DEFAULT.num_cqs,
                cr::TABLE_MR => DEFAULT.num_mrs,
                _ => 0,
            };
            if index >= limit || !(op == cr::OP_READ || op == cr::OP_WRITE) {
                self.ctx_status = cr::STATUS_ERROR;
                return;
            }
            self.ctx_status = 0;
            if op == cr::OP_WRITE {
                let mut rec = [0u8; 64];
                for (i, w) in self.ctx_data.iter().enumerate() {
                    rec[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
                }
                self.tables.insert((table, index), rec);
            } else {
                let rec = self.tables.get(&(table, index)).copied().unwrap_or([0; 64]);
                for (i, w) in self.ctx_data.iter_mut().enumerate() {
                    *w = u32::from_le_bytes(rec[4 * i..4 * i + 4].try_into().unwrap());
                }
            }
        }
        fn buf(&mut self, b: &DmaBuf) -> Result<&mut Vec<u8>> {
            match self.bufs.get_mut(&b.id) {
                Some((iova, v)) if *iova == b.iova => Ok(v),
                _ => Err(Error::UnknownBuffer(b.id)),
            }
        }
    }

    impl Device for Fake {
        fn describe(&self) -> String {
            "fake".into()
        }
        fn bar_len(&self, bar: Bar) -> u64 {
            match bar {
                Bar::Regs => rnic_abi::pcie::BAR0_BYTES,
                Bar::Rings => rnic_abi::pcie::BAR2_BYTES,
            }
        }
        fn read32(&mut self, bar: Bar, off: u64) -> Result<u32> {
            let off = off as u32;
            if bar == Bar::Rings {
                let slot = self
                    .rings
                    .get(&(off as u64 & !63))
                    .copied()
                    .unwrap_or([0; 64]);
                let i = (off & 63) as usize;
                return Ok(u32::from_le_bytes(slot[i..i + 4].try_into().unwrap()));
            }
            for b in regs::BLOCKS {
                if off == b.base + regs::BLK_TYPE {
                    return Ok(b.kind as u32);
                }
                if off == b.base + regs::BLK_VERSION {
                    return Ok(b.version_word());
                }
                if off == b.base + regs::BLK_NEXT {
                    return Ok(b.next);
                }
            }
            let p = DEFAULT;
            Ok(match off {
                dev::MAGIC => dev::MAGIC_VALUE,
                dev::HW_VERSION => params::HW_VERSION,
                dev::NUM_QPS => p.num_qps,
                dev::NUM_CQS => p.num_cqs,
                dev::NUM_MRS => p.num_mrs,
                dev::SQ_DEPTH => p.sq_depth,
                dev::RQ_DEPTH => p.rq_depth,
                dev::MAX_MTU => p.max_mtu,
                dev::DATAPATH_BITS => p.datapath_bits,
                dev::CLOCK_KHZ => p.clock_khz,
                dev::RING_BYTES => p.ring_bytes(),
                cr::STATUS => self.ctx_status,
                o if (cr::DATA..cr::DATA + 64).contains(&o) => {
                    self.ctx_data[((o - cr::DATA) / 4) as usize]
                }
                _ => 0,
            })
        }
        fn write32(&mut self, bar: Bar, off: u64, val: u32) -> Result<()> {
            if bar == Bar::Regs {
                let off = off as u32;
                match off {
                    cr::CMD => self.exec(val),
                    o if (cr::DATA..cr::DATA + 64).contains(&o) => {
                        self.ctx_data[((o - cr::DATA) / 4) as usize] = val
                    }
                    db::SQ | db::RQ | db::CQ => self.doorbells.push((off, val)),
                    _ => {}
                }
            }
            Ok(())
        }
        fn push_wqe(&mut self, off: u64, wqe: &[u8; 64]) -> Result<()> {
            crate::device::check_bar(Bar::Rings, self.bar_len(Bar::Rings), off, 64)?;
            self.rings.insert(off, *wqe);
            Ok(())
        }
        fn dma_alloc(&mut self, len: usize) -> Result<DmaBuf> {
            self.next_id += 1;
            let iova = 0x1_0000_0000 + self.next_id * 0x100_0000;
            self.bufs.insert(self.next_id, (iova, vec![0; len]));
            Ok(DmaBuf {
                id: self.next_id,
                iova,
                len,
            })
        }
        fn dma_free(&mut self, buf: DmaBuf) -> Result<()> {
            self.buf(&buf)?;
            self.bufs.remove(&buf.id);
            Ok(())
        }
        fn dma_read(&mut self, buf: &DmaBuf, off: usize, out: &mut [u8]) -> Result<()> {
            buf.check(off, out.len())?;
            let v = self.buf(buf)?;
            out.copy_from_slice(&v[off..off + out.len()]);
            Ok(())
        }
        fn dma_write(&mut self, buf: &DmaBuf, off: usize, data: &[u8]) -> Result<()> {
            buf.check(off, data.len())?;
            let v = self.buf(buf)?;
            v[off..off + data.len()].copy_from_slice(data);
            Ok(())
        }
        fn relax(&mut self) {
            self.now += 64;
        }
        fn now_ns(&mut self) -> u64 {
            self.now
        }
        fn wait_irq(&mut self, _vector: u32, _timeout_ns: u64) -> Result<bool> {
            Ok(false)
        }
    }

    fn open() -> Context<Fake> {
        Context::open(Fake::default(), PortAddr::sim(1).unwrap()).unwrap()
    }

    fn table(c: &Context<Fake>, t: u32, i: u32) -> [u8; 64] {
        c.with_nic(|n| Ok(n.device().tables.get(&(t, i)).copied().unwrap_or([0; 64])))
            .unwrap()
    }

    fn doorbells(c: &Context<Fake>) -> Vec<(u32, u32)> {
        c.with_nic(|n| Ok(std::mem::take(&mut n.device().doorbells)))
            .unwrap()
    }

    fn ring_wqe(c: &Context<Fake>, off: u32) -> Wqe {
        let raw = c
            .with_nic(|n| Ok(n.device().rings.get(&(off as u64)).copied()))
            .unwrap()
            .expect("no WQE in that slot");
        Wqe::decode(&raw)
    }

    /// Play the device: write CQE number `pi` (free-running) with the owner bit of its pass.
    fn hw_cqe(c: &Context<Fake>, cq: &CompletionQueue<Fake>, pi: u32, mut cqe: Cqe) {
        let log2 = cq.entries().trailing_zeros() as u8;
        cqe.flags = (cqe.flags & !cqe_flag::OWNER) | owner_flag_for(pi, log2);
        let slot = (pi & (cq.entries() - 1)) as usize;
        c.write_buf(&cq.ring(), slot * CQE_BYTES, &cqe.encode())
            .unwrap();
    }

    fn peer() -> Endpoint {
        Endpoint {
            qpn: 9,
            psn: 0x00AB_CDEF,
            ipv4: Ipv4Addr::new(10, 0, 0, 2),
            mac: [2, 0, 0, 0, 0, 2],
        }
    }

    fn send_cqe(qpn: u32, wr_id: u64, status: u8) -> Cqe {
        Cqe {
            wr_id,
            qp_num: qpn,
            src_qp: 9,
            opcode: wc_op::SEND,
            status,
            ..Default::default()
        }
    }

    #[test]
    fn access_flags_are_checked() {
        assert!(AccessFlags::from_bits(0x10).is_err());
        let rw = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
        assert_eq!(rw.bits(), 3);
        assert!(rw.contains(AccessFlags::REMOTE_WRITE));
        assert_eq!(rw.remote(), AccessFlags::REMOTE_WRITE);
        let c = open();
        let pd = c.alloc_pd().unwrap();
        let buf = c.alloc_buf(4096).unwrap();
        // remote write without local write (IBTA), empty MR, out of range
        assert!(matches!(
            pd.reg_mr(&buf, AccessFlags::REMOTE_WRITE),
            Err(Error::InvalidArgument(_))
        ));
        assert!(pd.reg_mr_range(&buf, 10, 0, rw).is_err());
        assert!(pd.reg_mr_range(&buf, 4000, 97, rw).is_err());
        assert!(pd.reg_mr_range(&buf, usize::MAX, 2, rw).is_err());
        assert!(pd.reg_mr_range(&buf, 4000, 96, rw).is_ok());
    }

    #[test]
    fn endpoint_encoding_roundtrips_and_rejects_garbage() {
        let e = peer();
        let b = e.to_bytes();
        assert_eq!(b.len(), Endpoint::BYTES);
        assert_eq!(Endpoint::from_bytes(&b).unwrap(), e);
        assert!(Endpoint::from_bytes(&b[..19]).is_err());
        for (i, v) in [(0usize, b'X'), (1, 2), (2, 1), (6, 1), (14, 1), (10, 0xE0)] {
            let mut bad = b;
            bad[i] = v;
            assert!(Endpoint::from_bytes(&bad).is_err(), "byte {i} = {v:#x}");
        }
        let mut zero_ip = b;
        zero_ip[10..14].fill(0);
        assert!(Endpoint::from_bytes(&zero_ip).is_err());
        assert!(e.to_string().contains("10.0.0.2"));
    }

    #[test]
    fn addresses_mtu_and_sport() {
        let a = PortAddr::sim(3).unwrap();
        assert_eq!(a.mac, [2, 0, 0, 0, 0, 3]);
        assert_eq!(a.ipv4, Ipv4Addr::new(10, 0, 0, 3));
        assert!(PortAddr::sim(0).is_err() && PortAddr::sim(255).is_err());
        assert!(
            PortAddr::new([1, 0, 0, 0, 0, 1], a.ipv4).is_err(),
            "multicast"
        );
        assert!(PortAddr::new([2, 0, 0, 0, 0, 1], Ipv4Addr::UNSPECIFIED).is_err());
        for m in Mtu::ALL {
            assert_eq!(Mtu::from_bytes(m.bytes()).unwrap(), m);
            assert_eq!(roce::mtu_enum_to_bytes(m.code()), Some(m.bytes()));
        }
        assert!(Mtu::from_bytes(1500).is_err());
        let mut seen = std::collections::HashSet::new();
        for l in 0..64 {
            for r in 0..64 {
                let p = udp_sport(l, r);
                assert!(p >= 0xC000);
                seen.insert(p);
            }
        }
        assert!(seen.len() > 3500, "sport spread {}", seen.len());
        assert_eq!(udp_sport(5, 7), udp_sport(5, 7));
    }

    #[test]
    fn qp_state_machine() {
        use QpState::{Init, Reset, Rtr, Rts};
        let all = [Reset, Init, Rtr, Rts, QpState::Err];
        let ok = [
            (Reset, Init),
            (Init, Init),
            (Init, Rtr),
            (Rtr, Rts),
            (Rts, Rts),
        ];
        for a in all {
            for b in all {
                let want = ok.contains(&(a, b)) || b == Reset || b == QpState::Err;
                assert_eq!(a.can_go_to(b), want, "{a} -> {b}");
            }
        }
        // through the API, on a fake device
        let c = open();
        let pd = c.alloc_pd().unwrap();
        let cq = c.create_cq(16).unwrap();
        let qp = pd.create_qp(&cq, &cq, QpCaps::default()).unwrap();
        let rtr = RtrAttr {
            remote: peer(),
            path_mtu: Mtu::Mtu1024,
            max_dest_rd_atomic: 1,
        };
        assert!(matches!(qp.modify_to_rtr(&rtr), Err(Error::QpState { .. })));
        assert!(matches!(
            qp.modify_to_rts(&RtsAttr::default()),
            Err(Error::QpState { .. })
        ));
        qp.modify_to_init(&InitAttr {
            access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        })
        .unwrap();
        assert!(qp.modify_to_rts(&RtsAttr::default()).is_err());
        qp.modify_to_rtr(&rtr).unwrap();
        assert!(qp.modify_to_init(&InitAttr::default()).is_err());
        assert!(
            qp.modify_to_rts(&RtsAttr {
                retry_cnt: 8,
                ..Default::default()
            })
            .is_err()
        );
        qp.modify_to_rts(&RtsAttr::default()).unwrap();
        assert!(qp.set_local_psn(5).is_err(), "PSN fixed in RTS");
        assert_eq!(qp.state().unwrap(), Rts);
        qp.modify_to_err().unwrap();
        assert_eq!(
            QpContext::decode(&table(&c, cr::TABLE_QP, qp.qpn())).state,
            qp_state::ERR
        );
        qp.modify_to_reset().unwrap();
        assert_eq!(qp.state().unwrap(), Reset);
        assert_eq!(
            QpContext::decode(&table(&c, cr::TABLE_QP, qp.qpn())).state,
            qp_state::RESET
        );
    }

    #[test]
    fn modify_writes_the_contexts() {
        let c = open();
        let pd = c.alloc_pd().unwrap();
        let scq = c.create_cq(16).unwrap();
        let rcq = c.create_cq(32).unwrap();
        let qp = pd.create_qp(&scq, &rcq, QpCaps::default()).unwrap();
        assert_eq!(qp.qpn(), FIRST_QPN);
        qp.set_local_psn(0xFF_FFFE).unwrap();
        assert!(qp.set_local_psn(1 << 24).is_err());
        let ep = qp.endpoint().unwrap();
        assert_eq!(
            (ep.qpn, ep.psn, ep.ipv4, ep.mac),
            (2, 0xFF_FFFE, Ipv4Addr::new(10, 0, 0, 1), [2, 0, 0, 0, 0, 1])
        );
        // receive WQEs posted in INIT survive RTR's read-modify-write
        qp.modify_to_init(&InitAttr {
            access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        })
        .unwrap();
        qp.post_recv(&[RecvWr {
            wr_id: 1,
            sge: None,
        }])
        .unwrap();
        assert_eq!(doorbells(&c), vec![(db::RQ, db::word(qp.qpn() as u16, 1))]);
        // the device's doorbell unit would have written rq_pi; the fake does not, and RTR
        // must set it from the driver's view
        let attr = ConnectAttr {
            path_mtu: Mtu::Mtu1024,
            rts: RtsAttr {
                timeout: 17,
                retry_cnt: 3,
                rnr_retry: 6,
                max_rd_atomic: 1,
            },
            ..Default::default()
        };
        qp.modify_to_rtr(&RtrAttr {
            remote: peer(),
            path_mtu: attr.path_mtu,
            max_dest_rd_atomic: 1,
        })
        .unwrap();
        let rs = RqState::decode(&table(&c, cr::TABLE_RQS, 2));
        assert_eq!(
            (rs.rq_psn, rs.rq_pi, rs.rq_ci, rs.msn),
            (0xAB_CDEF, 1, 0, 0)
        );
        qp.modify_to_rts(&attr.rts).unwrap();
        let qc = QpContext::decode(&table(&c, cr::TABLE_QP, 2));
        let want = QpContext {
            state: qp_state::RTS,
            qp_type: QP_TYPE_RC,
            path_mtu: 3,
            access: access::REMOTE_WRITE as u8,
            remote_qpn: 9,
            sq_psn: 0xFF_FFFE,
            una_psn: 0xFF_FFFE,
            dest_mac: [2, 0, 0, 0, 0, 2],
            udp_sport: udp_sport(2, 9),
            dest_ip: 0x0A00_0002,
            src_ip: 0x0A00_0001,
            pd: pd.pd_num(),
            send_cqn: scq.cqn() as u16,
            recv_cqn: rcq.cqn() as u16,
            retry_cnt: 3,
            rnr_retry: 6,
            timeout: 17,
            max_rd_atomic: 1,
            src_mac: [2, 0, 0, 0, 0, 1],
            ..Default::default()
        };
        assert_eq!(qc, want);
        // path MTU above the device's maximum is refused; a bad remote endpoint too
        let qp2 = pd.create_qp(&scq, &rcq, QpCaps::default()).unwrap();
        assert_eq!(qp2.qpn(), 3);
        qp2.modify_to_init(&InitAttr::default()).unwrap();
        let mut bad = peer();
        bad.qpn = 1 << 24;
        assert!(
            qp2.modify_to_rtr(&RtrAttr {
                remote: bad,
                path_mtu: Mtu::Mtu256,
                max_dest_rd_atomic: 0
            })
            .is_err()
        );
        // destroy clears the records and frees the QPN
        qp.destroy().unwrap();
        assert_eq!(table(&c, cr::TABLE_QP, 2), [0; 64]);
        let qp3 = pd.create_qp(&scq, &rcq, QpCaps::default()).unwrap();
        assert_eq!(qp3.qpn(), 2);
    }

    #[test]
    fn qp_caps_are_checked() {
        let c = open();
        let pd = c.alloc_pd().unwrap();
        let cq = c.create_cq(8).unwrap();
        let bad = [
            QpCaps {
                max_send_wr: DEFAULT.sq_depth + 1,
                ..Default::default()
            },
            QpCaps {
                max_send_wr: 0,
                ..Default::default()
            },
            QpCaps {
                max_recv_wr: DEFAULT.rq_depth + 1,
                ..Default::default()
            },
            QpCaps {
                max_send_sge: 2,
                ..Default::default()
            },
            QpCaps {
                max_recv_sge: 2,
                ..Default::default()
            },
            QpCaps {
                max_inline_data: 17,
                ..Default::default()
            },
        ];
        for caps in bad {
            assert!(
                matches!(pd.create_qp(&cq, &cq, caps), Err(Error::InvalidArgument(_))),
                "{caps:?}"
            );
        }
        let full = QpCaps {
            max_send_wr: DEFAULT.sq_depth,
            max_recv_wr: DEFAULT.rq_depth,
            ..Default::default()
        };
        // every QPN from 2 up, then out of resources
        let mut qps = Vec::new();
        for q in FIRST_QPN..DEFAULT.num_qps {
            let qp = pd.create_qp(&cq, &cq, full).unwrap();
            assert_eq!(qp.qpn(), q);
            qps.push(qp);
        }
        assert!(matches!(
            pd.create_qp(&cq, &cq, full),
            Err(Error::OutOfResources { .. })
        ));
        // the CQ and the PD are in use
        assert!(matches!(pd.dealloc(), Err(Error::InUse { .. }) | Ok(())));
    }

    #[test]
    fn in_use_objects_cannot_be_destroyed() {
        let c = open();
        let pd = c.alloc_pd().unwrap();
        let cq = c.create_cq(8).unwrap();
        let cq_other = c.create_cq(8).unwrap();
        let qp = pd.create_qp(&cq, &cq_other, QpCaps::default()).unwrap();
        assert!(matches!(cq.destroy(), Err(Error::InUse { .. })));
        let pd2 = c.alloc_pd().unwrap();
        assert_ne!(pd2.pd_num(), pd.pd_num());
        let buf = c.alloc_buf(64).unwrap();
        let mr = pd2.reg_mr(&buf, AccessFlags::empty()).unwrap();
        assert!(matches!(pd2.dealloc(), Err(Error::InUse { .. })));
        mr.dereg().unwrap();
        qp.destroy().unwrap();
        cq_other.destroy().unwrap();
        assert_eq!(
            CqContext::decode(&table(&c, cr::TABLE_CQ, 1)).flags,
            0,
            "destroyed CQ invalid"
        );
    }

    #[test]
    fn mr_keys_generations_and_entries() {
        let c = open();
        let pd = c.alloc_pd().unwrap();
        let buf = c.alloc_buf(3 * 4096).unwrap();
        let rw = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE;
        let mr = pd.reg_mr_range(&buf, 100, 5000, rw).unwrap();
        assert_eq!(mr.lkey(), make_key(0, 1));
        assert_eq!(mr.iova(), buf.iova + 100);
        let e = MrEntry::decode(&table(&c, cr::TABLE_MR, 0));
        assert_eq!(
            e,
            MrEntry {
                key: make_key(0, 1),
                pd: pd.pd_num(),
                iova: buf.iova + 100,
                length: 5000,
                access: 3,
                flags: MR_FLAG_VALID
            }
        );
        let mr2 = pd.reg_mr(&buf, AccessFlags::empty()).unwrap();
        assert_eq!(mr2.lkey(), make_key(1, 1));
        // SGEs are bounds-checked against the MR
        assert_eq!(
            mr.sge(10, 20).unwrap(),
            Sge {
                addr: buf.iova + 110,
                length: 20,
                lkey: mr.lkey()
            }
        );
        assert!(mr.sge(4990, 11).is_err());
        assert!(mr.write(4999, &[1, 2]).is_err());
        mr.write(4998, &[1, 2]).unwrap();
        let mut back = [0u8; 2];
        c.read_buf(&buf, 100 + 4998, &mut back).unwrap();
        assert_eq!(back, [1, 2]);
        let old = mr.lkey();
        mr.dereg().unwrap();
        assert_eq!(table(&c, cr::TABLE_MR, 0), [0; 64], "entry invalidated");
        // the slot is reused with a new generation: the old key is stale
        let mr3 = pd.reg_mr(&buf, rw).unwrap();
        assert_eq!(mr3.lkey(), make_key(0, 2));
        assert_ne!(mr3.lkey(), old);
        // dropping deregisters too
        drop(mr3);
        assert_eq!(table(&c, cr::TABLE_MR, 0), [0; 64]);
        // generation never 0, even after 255 reuses
        for _ in 0..300 {
            let m = pd.reg_mr(&buf, rw).unwrap();
            assert_ne!(m.lkey() & 0xFF, 0);
        }
        // the table fills up
        let mut all = Vec::new();
        loop {
            match pd.reg_mr(&buf, rw) {
                Ok(m) => all.push(m),
                Err(Error::OutOfResources { limit, .. }) => {
                    assert_eq!(limit, DEFAULT.num_mrs);
                    break;
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(all.len() + 1, DEFAULT.num_mrs as usize);
    }

    #[test]
    fn cq_creation_is_checked_and_written() {
        let c = open();
        for bad in [0u32, 3, 100, MAX_CQ_ENTRIES * 2] {
            assert!(c.create_cq(bad).is_err(), "{bad}");
        }
        assert!(
            c.create_cq_with(CqAttr {
                entries: 8,
                irq: true,
                irq_vector: 1
            })
            .is_err()
        );
        let cq = c
            .create_cq_with(CqAttr {
                entries: 64,
                irq: true,
                irq_vector: 0,
            })
            .unwrap();
        let rec = CqContext::decode(&table(&c, cr::TABLE_CQ, cq.cqn()));
        assert_eq!(
            rec,
            CqContext {
                base_iova: cq.ring().iova,
                log2_entries: 6,
                flags: CQ_FLAG_VALID | CQ_FLAG_IRQ,
                irq_vector: 0,
                producer: 0,
                consumer: 0
            }
        );
        assert_eq!(cq.ring().len, 64 * 32);
        let one = c.create_cq(1).unwrap();
        assert_eq!(one.entries(), 1);
    }

    #[test]
    fn cq_phase_bit_over_several_wraps() {
        assert!(cqe_is_new(cqe_flag::OWNER, 0, 3));
        assert!(!cqe_is_new(0, 0, 3));
        assert!(cqe_is_new(0, 8, 3));
        assert!(!cqe_is_new(cqe_flag::OWNER, 8, 3));
        assert!(cqe_is_new(cqe_flag::OWNER, 16, 3));
        let c = open();
        let mut cq = c.create_cq(8).unwrap();
        let mut wc = [WorkCompletion::default(); 16];
        assert_eq!(cq.poll(&mut wc).unwrap(), 0, "zeroed ring is empty");
        assert!(doorbells(&c).is_empty(), "no doorbell without progress");
        let mut pi = 0u32;
        let mut ci = 0u64;
        // batches of 1..7 over 6 passes; stale entries of the last pass never show up
        for batch in [1u32, 7, 3, 5, 8, 2, 6, 4, 7, 5] {
            for _ in 0..batch {
                let mut e = send_cqe(77, pi as u64, 0);
                e.byte_len = pi;
                if pi.is_multiple_of(3) {
                    e.flags = cqe_flag::WITH_IMM;
                    e.imm_data = 0x1000 + pi;
                    e.opcode = wc_op::RECV;
                }
                hw_cqe(&c, &cq, pi, e);
                pi += 1;
            }
            let n = cq.poll(&mut wc).unwrap();
            assert_eq!(n as u32, batch);
            for w in &wc[..n] {
                assert_eq!(w.wr_id, ci);
                assert_eq!(w.byte_len as u64, ci);
                assert_eq!(w.qp_num, 77);
                if ci.is_multiple_of(3) {
                    assert_eq!(w.imm_data, Some(0x1000 + ci as u32));
                    assert_eq!(w.opcode, WcOpcode::Recv);
                } else {
                    assert_eq!(w.imm_data, None);
                    assert_eq!(w.opcode, WcOpcode::Send);
                }
                ci += 1;
            }
            assert_eq!(cq.poll(&mut wc).unwrap(), 0, "nothing new after the batch");
            let d = doorbells(&c);
            assert_eq!(
                d.last().copied(),
                Some((db::CQ, db::word(cq.cqn() as u16, pi as u16))),
                "consumer index told to the device"
            );
        }
        assert_eq!(cq.consumed(), pi);
        // a slice smaller than what is ready: the rest stays for the next poll
        for _ in 0..5 {
            hw_cqe(&c, &cq, pi, send_cqe(77, pi as u64, 0));
            pi += 1;
        }
        assert_eq!(cq.poll(&mut wc[..2]).unwrap(), 2);
        assert_eq!(cq.poll(&mut wc).unwrap(), 3);
        assert_eq!(wc[0].wr_id, pi as u64 - 3);
        // poll_wait times out in device time, without panicking
        let t = cq.poll_wait(&mut wc, 1, 10_000);
        assert!(matches!(t, Err(Error::Timeout { .. })));
        assert!(cq.poll_wait(&mut wc[..1], 2, 10).is_err(), "min > room");
    }

    fn rts<'c>(
        c: &'c Context<Fake>,
        pd: &ProtectionDomain<'c, Fake>,
        cq: &CompletionQueue<'c, Fake>,
        caps: QpCaps,
    ) -> QueuePair<'c, Fake> {
        let qp = pd.create_qp(cq, cq, caps).unwrap();
        qp.connect(&peer(), &ConnectAttr::default()).unwrap();
        doorbells(c);
        qp
    }

    #[test]
    fn post_send_builds_wqes_and_rings_the_doorbell() {
        let c = open();
        let pd = c.alloc_pd().unwrap();
        let cq = c.create_cq(64).unwrap();
        let buf = c.alloc_buf(8192).unwrap();
        let mr = pd
            .reg_mr(&buf, AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE)
            .unwrap();
        let qp = pd.create_qp(&cq, &cq, QpCaps::default()).unwrap();
        let wr = SendWr::new(5, SendOp::Send).sge(mr.sge(1, 100).unwrap());
        // not in RTS yet
        assert!(matches!(qp.post_send(&[wr]), Err(Error::QpState { .. })));
        qp.connect(&peer(), &ConnectAttr::default()).unwrap();
        doorbells(&c);
        let q = qp.qpn();
        let p = DEFAULT;
        qp.post_send(&[
            wr,
            SendWr::new(
                6,
                SendOp::RdmaWriteWithImm {
                    remote_addr: 0xAB00,
                    rkey: 0x1234,
                    imm: 0xFEED,
                },
            )
            .sge(mr.sge(7, 4097).unwrap())
            .unsignaled(),
            SendWr::new(7, SendOp::SendWithImm(0x55))
                .inline(b"hello, rdma!")
                .solicited(),
            SendWr::new(8, SendOp::Send),
        ])
        .unwrap();
        assert_eq!(doorbells(&c), vec![(db::SQ, db::word(q as u16, 4))]);
        let w0 = ring_wqe(&c, p.sq_slot(q, 0));
        assert_eq!(
            w0,
            Wqe {
                opcode: wqe_op::SEND,
                flags: wqe_flag::SIGNALED,
                slots: 1,
                length: 100,
                wr_id: 5,
                local_addr: buf.iova + 1,
                lkey: mr.lkey(),
                ..Default::default()
            }
        );
        let w1 = ring_wqe(&c, p.sq_slot(q, 1));
        assert_eq!(
            (
                w1.opcode,
                w1.flags,
                w1.length,
                w1.remote_addr,
                w1.rkey,
                w1.imm_data
            ),
            (wqe_op::RDMA_WRITE_IMM, 0, 4097, 0xAB00, 0x1234, 0xFEED)
        );
        let w2 = ring_wqe(&c, p.sq_slot(q, 2));
        assert_eq!(
            (w2.opcode, w2.flags, w2.inline_len, w2.length, w2.imm_data),
            (
                wqe_op::SEND_IMM,
                wqe_flag::SIGNALED | wqe_flag::INLINE | wqe_flag::SOLICITED,
                12,
                12,
                0x55
            )
        );
        assert_eq!(&w2.inline_data[..12], b"hello, rdma!");
        assert_eq!(&w2.inline_data[12..], &[0; 4]);
        let w3 = ring_wqe(&c, p.sq_slot(q, 3));
        assert_eq!((w3.length, w3.lkey, w3.local_addr), (0, 0, 0));
        // bad requests: nothing posted, no doorbell
        let long = [0u8; 17];
        for bad in [
            SendWr::new(9, SendOp::Send).inline(&long),
            SendWr::new(9, SendOp::Send)
                .inline(b"x")
                .sge(mr.sge(0, 1).unwrap()),
            SendWr::new(9, SendOp::Send).sge(Sge {
                addr: u64::MAX,
                length: 2,
                lkey: 1,
            }),
            SendWr::new(
                9,
                SendOp::RdmaWrite {
                    remote_addr: u64::MAX - 1,
                    rkey: 1,
                },
            )
            .sge(mr.sge(0, 10).unwrap()),
        ] {
            assert!(
                matches!(qp.post_send(&[bad]), Err(Error::InvalidArgument(_))),
                "{bad:?}"
            );
        }
        // a good one followed by a bad one: none of them is posted
        assert!(
            qp.post_send(&[wr, SendWr::new(9, SendOp::Send).inline(&long)])
                .is_err()
        );
        assert!(doorbells(&c).is_empty());
        assert_eq!(qp.outstanding().unwrap(), (4, 0));
        // the QP's inline limit
        let small = pd
            .create_qp(
                &cq,
                &cq,
                QpCaps {
                    max_inline_data: 4,
                    ..Default::default()
                },
            )
            .unwrap();
        small.connect(&peer(), &ConnectAttr::default()).unwrap();
        assert!(
            small
                .post_send(&[SendWr::new(1, SendOp::Send).inline(b"12345")])
                .is_err()
        );
        small
            .post_send(&[SendWr::new(1, SendOp::Send).inline(b"1234")])
            .unwrap();
    }

    #[test]
    fn send_queue_is_freed_by_signaled_completions() {
        let c = open();
        let pd = c.alloc_pd().unwrap();
        let mut cq = c.create_cq(16).unwrap();
        let caps = QpCaps {
            max_send_wr: 8,
            ..Default::default()
        };
        let qp = rts(&c, &pd, &cq, caps);
        let q = qp.qpn();
        let un = |id| SendWr::new(id, SendOp::Send).unsignaled();
        let sig = |id| SendWr::new(id, SendOp::Send);
        qp.post_send(&[un(0), un(1), un(2), sig(3), un(4)]).unwrap();
        // 5 + 4 > 8: full, and nothing is posted
        let e = qp.post_send(&[un(5), un(6), un(7), un(8)]);
        assert!(matches!(
            e,
            Err(Error::QueueFull {
                outstanding: 5,
                posting: 4,
                depth: 8,
                ..
            })
        ));
        qp.post_send(&[un(5), sig(6), un(7)]).unwrap();
        assert!(matches!(
            qp.post_send(&[un(8)]),
            Err(Error::QueueFull { .. })
        ));
        // the device completes wr 3 (signaled): 0..=3 are free
        hw_cqe(&c, &cq, 0, send_cqe(q, 3, wc_status::SUCCESS));
        let w = cq.wait(1, 1_000_000).unwrap();
        assert_eq!((w[0].wr_id, w[0].status), (3, WcStatus::Success));
        assert_eq!(qp.outstanding().unwrap(), (4, 0));
        qp.post_send(&[un(8), un(9), un(10), un(11)]).unwrap();
        assert_eq!(qp.outstanding().unwrap(), (8, 0));
        hw_cqe(&c, &cq, 1, send_cqe(q, 6, wc_status::SUCCESS));
        cq.wait(1, 1_000_000).unwrap();
        assert_eq!(qp.outstanding().unwrap(), (5, 0), "4, 5, 6 freed");
        let sq: Vec<_> = doorbells(&c)
            .into_iter()
            .filter(|d| d.0 == db::SQ)
            .collect();
        assert_eq!(sq.last().copied(), Some((db::SQ, db::word(q as u16, 12))));
        // complete the rest, then run the indices past the SQ depth and the u16 range
        hw_cqe(&c, &cq, 2, send_cqe(q, 11, wc_status::SUCCESS));
        cq.wait(1, 1_000_000).unwrap();
        for (pi, k) in (3u32..).zip(12..(1u64 << 16) + 40) {
            qp.post_send(&[sig(k)]).unwrap();
            hw_cqe(&c, &cq, pi, send_cqe(q, k, wc_status::SUCCESS));
            assert_eq!(cq.wait(1, 1_000_000).unwrap()[0].wr_id, k);
        }
        let last = doorbells(&c).into_iter().rfind(|d| d.0 == db::SQ).unwrap();
        let n = (1u32 << 16) + 40;
        assert_eq!(last, (db::SQ, db::word(q as u16, n as u16)));
        let w = ring_wqe(&c, DEFAULT.sq_slot(q, n - 1));
        assert_eq!(w.wr_id, n as u64 - 1);
        assert_eq!(qp.outstanding().unwrap(), (0, 0));
    }

    #[test]
    fn error_completion_moves_the_qp_to_err_and_flushes() {
        let c = open();
        let pd = c.alloc_pd().unwrap();
        let mut cq = c.create_cq(16).unwrap();
        let qp = rts(&c, &pd, &cq, QpCaps::default());
        let q = qp.qpn();
        qp.post_recv(&[
            RecvWr {
                wr_id: 100,
                sge: None,
            },
            RecvWr {
                wr_id: 101,
                sge: None,
            },
        ])
        .unwrap();
        qp.post_send(&[
            SendWr::new(1, SendOp::Send),
            SendWr::new(2, SendOp::Send).unsignaled(),
            SendWr::new(3, SendOp::Send),
        ])
        .unwrap();
        // success for 1, REM_ACCESS_ERR for the unsignaled 2 (errors always complete)
        hw_cqe(&c, &cq, 0, send_cqe(q, 1, wc_status::SUCCESS));
        hw_cqe(&c, &cq, 1, send_cqe(q, 2, wc_status::REM_ACCESS_ERR));
        let w = cq.wait(5, 1_000_000).unwrap();
        let got: Vec<(u64, WcStatus)> = w.iter().map(|w| (w.wr_id, w.status)).collect();
        assert_eq!(
            got,
            vec![
                (1, WcStatus::Success),
                (2, WcStatus::RemAccessErr),
                (3, WcStatus::WrFlushErr),
                (100, WcStatus::WrFlushErr),
                (101, WcStatus::WrFlushErr),
            ]
        );
        assert_eq!(w[4].opcode, WcOpcode::Recv);
        assert_eq!(w[2].src_qp, 9);
        assert_eq!(qp.state().unwrap(), QpState::Err);
        assert_eq!(qp.outstanding().unwrap(), (0, 0));
        assert!(matches!(
            qp.post_send(&[SendWr::new(4, SendOp::Send)]),
            Err(Error::QpState { .. })
        ));
        let mut wc = [WorkCompletion::default(); 4];
        assert_eq!(cq.poll(&mut wc).unwrap(), 0);
        // back to work through RESET
        qp.modify_to_reset().unwrap();
        qp.connect(&peer(), &ConnectAttr::default()).unwrap();
        qp.post_send(&[SendWr::new(4, SendOp::Send)]).unwrap();
    }

    #[test]
    fn post_recv_checks() {
        let c = open();
        let pd = c.alloc_pd().unwrap();
        let cq = c.create_cq(16).unwrap();
        let buf = c.alloc_buf(4096).unwrap();
        let mr = pd.reg_mr(&buf, AccessFlags::LOCAL_WRITE).unwrap();
        let qp = pd
            .create_qp(
                &cq,
                &cq,
                QpCaps {
                    max_recv_wr: 2,
                    ..Default::default()
                },
            )
            .unwrap();
        let r = RecvWr::new(1, mr.sge(0, 4096).unwrap());
        assert!(matches!(qp.post_recv(&[r]), Err(Error::QpState { .. })));
        qp.modify_to_init(&InitAttr::default()).unwrap();
        assert!(matches!(
            qp.post_recv(&[r, r, r]),
            Err(Error::QueueFull { .. })
        ));
        qp.post_recv(&[r, r]).unwrap();
        let w = ring_wqe(&c, DEFAULT.rq_slot(qp.qpn(), 1));
        assert_eq!(
            (w.opcode, w.length, w.local_addr, w.lkey, w.wr_id),
            (wqe_op::RECV, 4096, buf.iova, mr.lkey(), 1)
        );
        assert_eq!(doorbells(&c), vec![(db::RQ, db::word(qp.qpn() as u16, 2))]);
    }

    #[test]
    fn objects_release_on_drop() {
        let c = open();
        {
            let pd = c.alloc_pd().unwrap();
            let cq = c.create_cq(8).unwrap();
            let _qp = pd.create_qp(&cq, &cq, QpCaps::default()).unwrap();
            // dropped in reverse order: QP, CQ, PD
        }
        let pd = c.alloc_pd().unwrap();
        let cq = c.create_cq(8).unwrap();
        assert_eq!(cq.cqn(), 0, "CQ number reused");
        let qp = pd.create_qp(&cq, &cq, QpCaps::default()).unwrap();
        assert_eq!(qp.qpn(), FIRST_QPN, "QPN reused");
        // re-entrant use is an error, not a panic
        let r = c.with_nic(|_| c.alloc_buf(64).map(|_| ()));
        assert!(matches!(r, Err(Error::ContextBusy)));
    }

    // ---- a behavioural two-NIC loopback following docs/DATAPATH.md: it reads exactly the
    // records the driver writes (QP context, responder state, CQ context, MR entries, WQE
    // slots, doorbells) and executes each posted WQE at its doorbell, so the driver's record
    // contents are checked against the contract before the RTL exists.

    use std::rc::Rc;

    impl Fake {
        fn rec(&self, t: u32, i: u32) -> [u8; 64] {
            self.tables.get(&(t, i)).copied().unwrap_or([0; 64])
        }
        fn put(&mut self, t: u32, i: u32, r: [u8; 64]) {
            self.tables.insert((t, i), r);
        }
        fn mem(&mut self, iova: u64, len: usize) -> Option<&mut [u8]> {
            self.bufs.values_mut().find_map(|(base, v)| {
                let off = iova.checked_sub(*base)? as usize;
                (off + len <= v.len()).then(|| &mut v[off..off + len])
            })
        }
        /// MR check as the engine does it: valid, key, PD, access, bounds.
        fn mr_ok(&self, key: u32, pd: u32, need: u32, addr: u64, len: u64) -> bool {
            let (idx, _) = rnic_abi::queue::key_parts(key);
            if idx >= DEFAULT.num_mrs {
                return false;
            }
            let m = MrEntry::decode(&self.rec(cr::TABLE_MR, idx));
            m.flags & MR_FLAG_VALID != 0
                && m.key == key
                && m.pd == pd
                && m.access & need == need
                && addr >= m.iova
                && addr + len <= m.iova + m.length
        }
        /// cqwriter: one CQE into the ring of `cqn`.
        fn cqe(&mut self, cqn: u16, mut c: Cqe) {
            let mut cq = CqContext::decode(&self.rec(cr::TABLE_CQ, cqn as u32));
            assert!(
                cq.flags & CQ_FLAG_VALID != 0,
                "completion for invalid CQ {cqn}"
            );
            let n = 1u32 << cq.log2_entries;
            let used = (cq.producer as u16).wrapping_sub(cq.consumer as u16) as u32;
            assert!(
                used < n,
                "CQ {cqn} overflow: the driver's consumer doorbells lag"
            );
            c.flags |= owner_flag_for(cq.producer, cq.log2_entries);
            let slot = (cq.producer & (n - 1)) as u64;
            self.mem(cq.base_iova + 32 * slot, 32)
                .expect("CQ ring mapped")
                .copy_from_slice(&c.encode());
            cq.producer += 1;
            self.put(cr::TABLE_CQ, cqn as u32, cq.encode());
        }
        /// dbunit: the doorbell's index into the context record.
        fn apply_doorbell(&mut self, reg: u32, word: u32) {
            let (q, idx) = db::unpack(word);
            let q = q as u32;
            match reg {
                db::SQ => {
                    let mut c = QpContext::decode(&self.rec(cr::TABLE_QP, q));
                    c.sq_pi = idx;
                    self.put(cr::TABLE_QP, q, c.encode());
                }
                db::RQ => {
                    let mut r = RqState::decode(&self.rec(cr::TABLE_RQS, q));
                    r.rq_pi = idx;
                    self.put(cr::TABLE_RQS, q, r.encode());
                }
                _ => {
                    let mut c = CqContext::decode(&self.rec(cr::TABLE_CQ, q));
                    c.consumer = (c.consumer & !0xFFFF) | idx as u32;
                    self.put(cr::TABLE_CQ, q, c.encode());
                }
            }
        }
    }

    #[derive(Default)]
    struct Net {
        nics: [Fake; 2],
    }

    impl Net {
        /// txreq + rxresp + ackproc for QP `qpn` of NIC `k`, run to completion at once.
        fn run_sq(&mut self, k: usize, qpn: u32) {
            let [a, b] = &mut self.nics;
            let (me, peer) = if k == 0 { (a, b) } else { (b, a) };
            loop {
                let mut qc = QpContext::decode(&me.rec(cr::TABLE_QP, qpn));
                if qc.state != qp_state::RTS || qc.sq_ci == qc.sq_pi {
                    return;
                }
                let off = DEFAULT.sq_slot(qpn, qc.sq_ci as u32) as u64;
                let w = Wqe::decode(&me.rings[&off]);
                let len = w.length as usize;
                let fail = |me: &mut Fake, qc: &mut QpContext, status: u8| {
                    me.cqe(
                        qc.send_cqn,
                        Cqe {
                            wr_id: w.wr_id,
                            qp_num: qpn,
                            src_qp: qc.remote_qpn,
                            status,
                            opcode: wc_op::SEND,
                            ..Default::default()
                        },
                    );
                    qc.state = qp_state::ERR;
                    qc.sq_ci = qc.sq_ci.wrapping_add(1);
                    me.put(cr::TABLE_QP, qpn, qc.encode());
                };
                let payload = if w.flags & wqe_flag::INLINE != 0 {
                    assert_eq!(w.inline_len as u32, w.length);
                    w.inline_data[..len].to_vec()
                } else if len > 0 {
                    if !me.mr_ok(w.lkey, qc.pd, 0, w.local_addr, len as u64) {
                        fail(me, &mut qc, wc_status::LOC_PROT_ERR);
                        return;
                    }
                    me.mem(w.local_addr, len).unwrap().to_vec()
                } else {
                    Vec::new()
                };
                // the responder
                let pq = qc.remote_qpn;
                let pc = QpContext::decode(&peer.rec(cr::TABLE_QP, pq));
                assert!(
                    pc.state == qp_state::RTR || pc.state == qp_state::RTS,
                    "peer QP {pq} not ready"
                );
                assert_eq!(pc.remote_qpn, qpn, "peer's remote QPN");
                assert_eq!(pc.dest_ip, qc.src_ip, "addresses cross");
                assert_eq!(pc.dest_mac, qc.src_mac, "addresses cross");
                let mut rs = RqState::decode(&peer.rec(cr::TABLE_RQS, pq));
                let n = len.div_ceil(128 << qc.path_mtu).max(1) as u32;
                assert_eq!(rs.rq_psn, qc.sq_psn, "PSNs agree");
                let is_write = matches!(w.opcode, wqe_op::RDMA_WRITE | wqe_op::RDMA_WRITE_IMM);
                let imm = matches!(w.opcode, wqe_op::SEND_IMM | wqe_op::RDMA_WRITE_IMM);
                if is_write {
                    let ok = pc.access as u32 & access::REMOTE_WRITE != 0
                        && (len == 0
                            || peer.mr_ok(
                                w.rkey,
                                pc.pd,
                                access::REMOTE_WRITE,
                                w.remote_addr,
                                len as u64,
                            ));
                    if !ok {
                        fail(me, &mut qc, wc_status::REM_ACCESS_ERR);
                        return;
                    }
                }
                let consumes = !is_write || imm;
                if consumes && rs.rq_ci == rs.rq_pi {
                    fail(me, &mut qc, wc_status::RNR_RETRY_EXC_ERR);
                    return;
                }
                let target = if is_write {
                    Some(w.remote_addr)
                } else {
                    let r =
                        Wqe::decode(&peer.rings[&(DEFAULT.rq_slot(pq, rs.rq_ci as u32) as u64)]);
                    if len > r.length as usize
                        || (len > 0
                            && !peer.mr_ok(
                                r.lkey,
                                pc.pd,
                                access::LOCAL_WRITE,
                                r.local_addr,
                                len as u64,
                            ))
                    {
                        peer.cqe(
                            pc.recv_cqn,
                            Cqe {
                                wr_id: r.wr_id,
                                qp_num: pq,
                                src_qp: qpn,
                                status: wc_status::LOC_LEN_ERR,
                                opcode: wc_op::RECV,
                                ..Default::default()
                            },
                        );
                        fail(me, &mut qc, wc_status::REM_INV_REQ_ERR);
                        return;
                    }
                    Some(r.local_addr)
                };
                if let Some(t) = target.filter(|_| len > 0) {
                    peer.mem(t, len).unwrap().copy_from_slice(&payload);
                }
                if consumes {
                    let r =
                        Wqe::decode(&peer.rings[&(DEFAULT.rq_slot(pq, rs.rq_ci as u32) as u64)]);
                    rs.rq_ci = rs.rq_ci.wrapping_add(1);
                    peer.cqe(
                        pc.recv_cqn,
                        Cqe {
                            wr_id: r.wr_id,
                            byte_len: len as u32,
                            imm_data: w.imm_data,
                            qp_num: pq,
                            src_qp: pc.remote_qpn,
                            opcode: if is_write {
                                wc_op::RECV_RDMA_WITH_IMM
                            } else {
                                wc_op::RECV
                            },
                            flags: if imm { cqe_flag::WITH_IMM } else { 0 },
                            ..Default::default()
                        },
                    );
                }
                rs.rq_psn = (rs.rq_psn + n) & roce::PSN_MASK;
                rs.msn += 1;
                peer.put(cr::TABLE_RQS, pq, rs.encode());
                // ACK: the requester completes it
                qc.sq_psn = (qc.sq_psn + n) & roce::PSN_MASK;
                qc.una_psn = qc.sq_psn;
                qc.sq_ci = qc.sq_ci.wrapping_add(1);
                qc.sq_ack_ci = qc.sq_ci;
                me.put(cr::TABLE_QP, qpn, qc.encode());
                if w.flags & wqe_flag::SIGNALED != 0 {
                    me.cqe(
                        qc.send_cqn,
                        Cqe {
                            wr_id: w.wr_id,
                            byte_len: w.length,
                            qp_num: qpn,
                            src_qp: qc.remote_qpn,
                            opcode: if is_write {
                                wc_op::RDMA_WRITE
                            } else {
                                wc_op::SEND
                            },
                            ..Default::default()
                        },
                    );
                }
            }
        }
    }

    struct LoopNic {
        net: Rc<RefCell<Net>>,
        k: usize,
    }

    impl Device for LoopNic {
        fn describe(&self) -> String {
            format!("loopback NIC {}", self.k)
        }
        fn bar_len(&self, bar: Bar) -> u64 {
            self.net.borrow().nics[self.k].bar_len(bar)
        }
        fn read32(&mut self, bar: Bar, off: u64) -> Result<u32> {
            self.net.borrow_mut().nics[self.k].read32(bar, off)
        }
        fn write32(&mut self, bar: Bar, off: u64, val: u32) -> Result<()> {
            let mut net = self.net.borrow_mut();
            net.nics[self.k].write32(bar, off, val)?;
            let off = off as u32;
            if bar == Bar::Regs && matches!(off, db::SQ | db::RQ | db::CQ) {
                net.nics[self.k].doorbells.clear();
                net.nics[self.k].apply_doorbell(off, val);
                if off == db::SQ {
                    net.run_sq(self.k, db::unpack(val).0 as u32);
                }
            }
            Ok(())
        }
        fn push_wqe(&mut self, off: u64, wqe: &[u8; 64]) -> Result<()> {
            self.net.borrow_mut().nics[self.k].push_wqe(off, wqe)
        }
        fn dma_alloc(&mut self, len: usize) -> Result<DmaBuf> {
            // disjoint IOVAs per NIC
            let mut net = self.net.borrow_mut();
            let f = &mut net.nics[self.k];
            let mut b = f.dma_alloc(len)?;
            let (_, v) = f.bufs.remove(&b.id).unwrap();
            b.iova += (self.k as u64) << 40;
            f.bufs.insert(b.id, (b.iova, v));
            Ok(b)
        }
        fn dma_free(&mut self, buf: DmaBuf) -> Result<()> {
            self.net.borrow_mut().nics[self.k].dma_free(buf)
        }
        fn dma_read(&mut self, buf: &DmaBuf, off: usize, out: &mut [u8]) -> Result<()> {
            self.net.borrow_mut().nics[self.k].dma_read(buf, off, out)
        }
        fn dma_write(&mut self, buf: &DmaBuf, off: usize, data: &[u8]) -> Result<()> {
            self.net.borrow_mut().nics[self.k].dma_write(buf, off, data)
        }
        fn relax(&mut self) {
            self.net.borrow_mut().nics[self.k].relax()
        }
        fn now_ns(&mut self) -> u64 {
            self.net.borrow_mut().nics[self.k].now_ns()
        }
        fn wait_irq(&mut self, _v: u32, _t: u64) -> Result<bool> {
            Ok(false)
        }
    }

    fn loop_pair() -> (Context<LoopNic>, Context<LoopNic>) {
        let net = Rc::new(RefCell::new(Net::default()));
        let a = Context::open(
            LoopNic {
                net: net.clone(),
                k: 0,
            },
            PortAddr::sim(1).unwrap(),
        )
        .unwrap();
        let b = Context::open(LoopNic { net, k: 1 }, PortAddr::sim(2).unwrap()).unwrap();
        (a, b)
    }

    #[test]
    fn loopback_model_runs_every_operation_through_the_records() {
        let (ca, cb) = loop_pair();
        let (pa, pb) = (ca.alloc_pd().unwrap(), cb.alloc_pd().unwrap());
        // small CQs and queues so that rings and CQs wrap many times
        let (mut qa_cq, mut qb_cq) = (ca.create_cq(8).unwrap(), cb.create_cq(4).unwrap());
        let src = pa
            .reg_mr(&ca.alloc_buf(70_000).unwrap(), AccessFlags::empty())
            .unwrap();
        let dst = pb
            .reg_mr(
                &cb.alloc_buf(70_000).unwrap(),
                AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            )
            .unwrap();
        let caps = QpCaps {
            max_send_wr: 4,
            max_recv_wr: 2,
            ..QpCaps::default()
        };
        let qa = pa.create_qp(&qa_cq, &qa_cq, caps).unwrap();
        let qb = pb.create_qp(&qb_cq, &qb_cq, caps).unwrap();
        qa.set_local_psn(roce::PSN_MASK - 20).unwrap();
        let (ea, eb) = (qa.endpoint().unwrap(), qb.endpoint().unwrap());
        let attr = ConnectAttr {
            path_mtu: Mtu::Mtu1024,
            ..ConnectAttr::default()
        };
        qa.connect(&Endpoint::from_bytes(&eb.to_bytes()).unwrap(), &attr)
            .unwrap();
        qb.connect(&ea, &attr).unwrap();
        let kinds = |i: u64, len: usize| match i % 4 {
            0 => SendOp::Send,
            1 => SendOp::SendWithImm(i as u32 ^ 0xABCD),
            2 => SendOp::RdmaWrite {
                remote_addr: dst.remote_addr(3).unwrap(),
                rkey: dst.rkey(),
            },
            _ => SendOp::RdmaWriteWithImm {
                remote_addr: dst.remote_addr(70_000 - len).unwrap(),
                rkey: dst.rkey(),
                imm: i as u32,
            },
        };
        let mut wc = [WorkCompletion::default(); 8];
        let mut packets = 0u32;
        for i in 0..300u64 {
            let len = [0usize, 1, 16, 1023, 1025, 4096, 65536][i as usize % 7];
            packets += len.div_ceil(1024).max(1) as u32;
            let op = kinds(i, len);
            let data: Vec<u8> = (0..len).map(|k| (k as u64 * 7 + i) as u8).collect();
            src.write(11, &data).unwrap();
            let recv = !matches!(op, SendOp::RdmaWrite { .. });
            if recv {
                let sge = matches!(op, SendOp::Send | SendOp::SendWithImm(_))
                    .then(|| dst.sge(100, len).unwrap());
                qb.post_recv(&[RecvWr {
                    wr_id: 1000 + i,
                    sge,
                }])
                .unwrap();
            }
            let mut wr = SendWr::new(i, op);
            if len > 0 && len <= 16 && i % 3 == 0 {
                wr = wr.inline(&data);
            } else if len > 0 {
                wr = wr.sge(src.sge(11, len).unwrap());
            }
            // every third WQE unsignaled: the next signaled one frees it
            if i % 3 == 1 {
                wr = wr.unsignaled();
            }
            qa.post_send(&[wr]).unwrap();
            if i % 3 != 1 {
                let n = qa_cq.poll(&mut wc).unwrap();
                assert_eq!(n, 1, "message {i}");
                let want_op = if matches!(op, SendOp::Send | SendOp::SendWithImm(_)) {
                    WcOpcode::Send
                } else {
                    WcOpcode::RdmaWrite
                };
                assert_eq!(
                    (wc[0].wr_id, wc[0].status, wc[0].opcode, wc[0].byte_len),
                    (i, WcStatus::Success, want_op, len as u32)
                );
                assert_eq!(qa.outstanding().unwrap().0, 0);
            }
            if recv {
                let n = qb_cq.poll(&mut wc).unwrap();
                assert_eq!(n, 1, "message {i} at the responder");
                let imm = match op {
                    SendOp::SendWithImm(x) | SendOp::RdmaWriteWithImm { imm: x, .. } => Some(x),
                    _ => None,
                };
                assert_eq!(
                    (
                        wc[0].wr_id,
                        wc[0].byte_len,
                        wc[0].imm_data,
                        wc[0].src_qp,
                        wc[0].qp_num
                    ),
                    (1000 + i, len as u32, imm, qa.qpn(), qb.qpn())
                );
            }
            let at = match op {
                SendOp::RdmaWrite { .. } => 3,
                SendOp::RdmaWriteWithImm { .. } => 70_000 - len,
                _ => 100,
            };
            let mut got = vec![0u8; len];
            dst.read(at, &mut got).unwrap();
            assert_eq!(got, data, "message {i}: {op:?} {len} B");
        }
        assert_eq!(qa_cq.consumed(), 200);
        // the PSN wrapped on the way
        let (hw, _) = qa.query_device().unwrap();
        assert_eq!(hw.sq_psn, (roce::PSN_MASK - 20 + packets) & roce::PSN_MASK);
        // a bad rkey: REM_ACCESS_ERR, the next WQE flushed, then RESET and back to work
        let bad = SendWr::new(
            7,
            SendOp::RdmaWrite {
                remote_addr: dst.iova(),
                rkey: dst.rkey() ^ 1,
            },
        )
        .sge(src.sge(0, 10).unwrap())
        .unsignaled();
        qa.post_send(&[bad, SendWr::new(8, SendOp::Send)]).unwrap();
        let w = qa_cq.wait(2, 1000).unwrap();
        assert_eq!(
            (w[0].wr_id, w[0].status, w[1].wr_id, w[1].status),
            (7, WcStatus::RemAccessErr, 8, WcStatus::WrFlushErr)
        );
        assert_eq!(qa.state().unwrap(), QpState::Err);
        // SEND with no receive posted: RNR
        qa.modify_to_reset().unwrap();
        qb.modify_to_reset().unwrap();
        let (ea, eb) = (qa.endpoint().unwrap(), qb.endpoint().unwrap());
        qa.connect(&eb, &attr).unwrap();
        qb.connect(&ea, &attr).unwrap();
        qa.post_send(&[SendWr::new(9, SendOp::Send)]).unwrap();
        let w = qa_cq.wait(1, 1000).unwrap();
        assert_eq!((w[0].wr_id, w[0].status), (9, WcStatus::RnrRetryExcErr));
        // a bad lkey: LOC_PROT_ERR
        qa.modify_to_reset().unwrap();
        qa.connect(&eb, &attr).unwrap();
        let mut sge = src.sge(0, 10).unwrap();
        sge.lkey ^= 0x100;
        qa.post_send(&[SendWr::new(10, SendOp::Send).sge(sge)])
            .unwrap();
        let w = qa_cq.wait(1, 1000).unwrap();
        assert_eq!((w[0].wr_id, w[0].status), (10, WcStatus::LocProtErr));
    }
}
