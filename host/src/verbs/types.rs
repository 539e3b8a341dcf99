//! Plain value types of the verbs API: access flags, MTU, addresses, endpoints, QP states,
//! work requests and completions, creation/modify attributes.

use super::*;

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
            return Err(Error::UnknownAccessFlags {
                bits,
                unknown: bits & !Self::ALL,
            });
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
            None => Err(Error::BadMtu { bytes: b }),
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
            return Err(Error::NotUnicast {
                what: "MAC",
                addr: fmt_mac(&mac),
            });
        }
        if ipv4.is_unspecified() || ipv4.is_multicast() || ipv4.is_broadcast() {
            return Err(Error::NotUnicast {
                what: "IPv4 address",
                addr: ipv4.to_string(),
            });
        }
        Ok(PortAddr { mac, ipv4 })
    }
    /// The deterministic address of simulated NIC number `n` (1..=254): MAC
    /// 02:00:00:00:00:n (locally administered), IPv4 10.0.0.n.
    pub fn sim(n: u8) -> Result<PortAddr> {
        if n == 0 || n == 255 {
            return Err(Error::OutOfRange {
                what: "simulated NIC number",
                value: n as u64,
                min: 1,
                max: 254,
            });
        }
        PortAddr::new([0x02, 0, 0, 0, 0, n], Ipv4Addr::new(10, 0, 0, n))
    }
}

pub(super) fn fmt_mac(m: &[u8; 6]) -> String {
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
            return Err(Error::EndpointLength {
                len: b.len(),
                expected: Self::BYTES,
            });
        }
        if b[0] != Self::TAG || b[1] != Self::VERSION {
            return Err(Error::EndpointVersion {
                tag: b[0],
                version: b[1],
                want_tag: Self::TAG,
                want_version: Self::VERSION,
            });
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

    pub(super) fn check(&self) -> Result<()> {
        if self.qpn > roce::PSN_MASK || self.psn > roce::PSN_MASK {
            let (what, value) = if self.qpn > roce::PSN_MASK {
                ("endpoint QPN", self.qpn)
            } else {
                ("endpoint PSN", self.psn)
            };
            return Err(Error::Wider24 { what, value });
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
pub(super) fn default_psn(qpn: u32, port: &PortAddr) -> u32 {
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

    pub(super) fn from_cqe(c: &Cqe) -> WorkCompletion {
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

/// What a send work request does. The SGE (or inline data) is the local buffer: what a
/// SEND or WRITE sends, or where a READ's data lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOp {
    /// SEND: consumes a receive WQE at the peer.
    Send,
    /// SEND with immediate data (delivered in the peer's receive completion).
    SendWithImm(u32),
    /// RDMA WRITE of the SGE to `remote_addr` in the peer's MR `rkey` (REMOTE_WRITE).
    RdmaWrite { remote_addr: u64, rkey: u32 },
    /// RDMA WRITE with immediate data (consumes a receive WQE at the peer).
    RdmaWriteWithImm {
        remote_addr: u64,
        rkey: u32,
        imm: u32,
    },
    /// RDMA READ of the SGE's length from `remote_addr` in the peer's MR `rkey` (REMOTE_READ)
    /// into the SGE, whose MR must have LOCAL_WRITE ([`Error::ReadNeedsLocalWrite`]); no
    /// inline data ([`Error::InlineRead`]); 0 bytes (no SGE) is allowed. Completes with
    /// [`WcOpcode::RdmaRead`] once the last response is placed.
    RdmaRead { remote_addr: u64, rkey: u32 },
    /// ATOMIC COMPARE & SWAP of the little-endian u64 at `remote_addr` in the peer's MR `rkey`
    /// (REMOTE_ATOMIC on the MR and the peer's QP): if it equals `compare` it becomes `swap`.
    /// Either way the original value is written (host order, 8 bytes) into the SGE, which must
    /// be exactly [`ATOMIC_BYTES`] long ([`Error::AtomicLength`]) in an MR with LOCAL_WRITE
    /// ([`Error::AtomicNeedsLocalWrite`]); `remote_addr` must be 8-byte aligned
    /// ([`Error::AtomicMisaligned`]); no inline data ([`Error::InlineAtomic`]). Completes with
    /// [`WcOpcode::CompSwap`], `byte_len` 8.
    CompareSwap {
        remote_addr: u64,
        rkey: u32,
        compare: u64,
        swap: u64,
    },
    /// ATOMIC FETCH & ADD: the little-endian u64 at `remote_addr` in the peer's MR `rkey`
    /// becomes itself + `add` (wrapping); the original value is written into the SGE. The same
    /// rules as [`SendOp::CompareSwap`]; completes with [`WcOpcode::FetchAdd`], `byte_len` 8.
    FetchAdd {
        remote_addr: u64,
        rkey: u32,
        add: u64,
    },
}

/// Bytes an atomic operates on, and the length its local SGE must have.
pub const ATOMIC_BYTES: u32 = rnic_abi::queue::ATOMIC_BYTES;

impl SendOp {
    pub(super) fn wqe_opcode(self) -> u8 {
        match self {
            SendOp::Send => wqe_op::SEND,
            SendOp::SendWithImm(_) => wqe_op::SEND_IMM,
            SendOp::RdmaWrite { .. } => wqe_op::RDMA_WRITE,
            SendOp::RdmaWriteWithImm { .. } => wqe_op::RDMA_WRITE_IMM,
            SendOp::RdmaRead { .. } => wqe_op::RDMA_READ,
            SendOp::CompareSwap { .. } => wqe_op::ATOMIC_CMP_SWAP,
            SendOp::FetchAdd { .. } => wqe_op::ATOMIC_FETCH_ADD,
        }
    }
    pub(super) fn wc_opcode(self) -> WcOpcode {
        match self {
            SendOp::Send | SendOp::SendWithImm(_) => WcOpcode::Send,
            SendOp::RdmaWrite { .. } | SendOp::RdmaWriteWithImm { .. } => WcOpcode::RdmaWrite,
            SendOp::RdmaRead { .. } => WcOpcode::RdmaRead,
            SendOp::CompareSwap { .. } => WcOpcode::CompSwap,
            SendOp::FetchAdd { .. } => WcOpcode::FetchAdd,
        }
    }
    /// The remote address, for the RDMA operations.
    pub(super) fn remote_addr(self) -> Option<u64> {
        match self {
            SendOp::RdmaWrite { remote_addr, .. }
            | SendOp::RdmaWriteWithImm { remote_addr, .. }
            | SendOp::RdmaRead { remote_addr, .. }
            | SendOp::CompareSwap { remote_addr, .. }
            | SendOp::FetchAdd { remote_addr, .. } => Some(remote_addr),
            SendOp::Send | SendOp::SendWithImm(_) => None,
        }
    }
    /// An atomic (CMP_SWAP or FETCH_ADD).
    pub fn is_atomic(self) -> bool {
        matches!(self, SendOp::CompareSwap { .. } | SendOp::FetchAdd { .. })
    }
}

/// A send work request (one SGE, or up to 16 bytes inline; a READ: one SGE or none; an
/// atomic: one SGE of 8 bytes).
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
    /// Outstanding send WQEs, 1..=max(sq_depth, deep_depth). Above the standard `sq_depth`
    /// the QP gets one of the `deep_qps` QP numbers with deep rings.
    pub max_send_wr: u32,
    /// Outstanding receive WQEs, 1..=max(rq_depth, deep_depth) (as `max_send_wr`).
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
        // the standard rings: every QP number has them (deeper rings come from the few
        // deep-ring QPs, see `ProtectionDomain::create_qp`)
        QpCaps {
            max_send_wr: rnic_abi::params::DEFAULT.sq_depth,
            max_recv_wr: rnic_abi::params::DEFAULT.rq_depth,
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
    /// Outstanding RDMA READ/atomic as responder, as advertised to the peer (stored in
    /// `QpContext.max_dest_rd_atomic`). The responder always keeps the build's
    /// `rd_atomic` saved atomic results per QP (`Context::params().rd_atomic`, the device's
    /// `RD_ATOMIC` register; `rnic_abi::queue::ATOMIC_RESOURCES`, the default: 128 in the
    /// standard build, 16 in the 16k-QP build) and answers every READ, so that is what it
    /// supports; the peer's `max_rd_atomic` should not exceed it.
    pub max_dest_rd_atomic: u8,
    /// The IBTA RNR timer code (0..=31, 9.7.5.2.8) our RNR NAKs carry: how long the peer waits
    /// before it sends again after finding no receive posted (12 = 0.64 ms, 1 = 0.01 ms).
    pub min_rnr_timer: u8,
    /// IPv4 TOS of everything this QP sends (requests and ACKs): DSCP in bits 7:2; the engine
    /// sends the ECN bits as ECT(0), so bits 1:0 are ignored.
    pub traffic_class: u8,
}

/// Default RNR timer code (0.64 ms, as rdma-core's examples use).
pub const DEFAULT_MIN_RNR_TIMER: u8 = 12;

/// RTR->RTS attributes (the first PSN sent is the QP's local PSN, see
/// [`QueuePair::set_local_psn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtsAttr {
    /// Local ACK timeout exponent (4.096 us * 2^timeout), 0..=31; 0 = no timer (wait forever).
    pub timeout: u8,
    /// Transport retries 0..=7 (after an ACK timeout or a PSN sequence error NAK); when they are
    /// used up without progress the WQE completes with RETRY_EXC_ERR and the QP goes to ERR.
    pub retry_cnt: u8,
    /// RNR retries 0..=6, 7 = retry forever; used up: RNR_RETRY_EXC_ERR.
    pub rnr_retry: u8,
    /// Outstanding RDMA READ/atomic WQEs as requester, enforced by the engine: a READ or
    /// atomic is sent only while fewer than max(1, min(max_rd_atomic,
    /// `rnic_abi::queue::MAX_RD_ATOMIC`)) WQEs are outstanding ahead of it (the build's
    /// `rd_atomic`: 128 in the standard build, 16 in the 16k-QP build). Default: that limit.
    pub max_rd_atomic: u8,
}

impl Default for RtsAttr {
    fn default() -> Self {
        RtsAttr {
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            max_rd_atomic: MAX_RD_ATOMIC as u8,
        }
    }
}

impl RtsAttr {
    /// The defaults with the READ/atomic depth of the device at hand (`p` =
    /// [`Context::params`], its `RD_ATOMIC` register) instead of this crate's build: the same
    /// driver runs the 16k-QP build (16) and the standard one (128).
    pub fn for_device(p: &BuildParams) -> Self {
        RtsAttr {
            max_rd_atomic: p.rd_atomic.min(255) as u8,
            ..RtsAttr::default()
        }
    }
}

/// Everything [`QueuePair::connect`] needs besides the remote endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectAttr {
    pub access: AccessFlags,
    pub path_mtu: Mtu,
    pub rts: RtsAttr,
    /// See [`RtrAttr::min_rnr_timer`].
    pub min_rnr_timer: u8,
    /// See [`RtrAttr::traffic_class`].
    pub traffic_class: u8,
    /// See [`RtrAttr::max_dest_rd_atomic`].
    pub max_dest_rd_atomic: u8,
}

impl Default for ConnectAttr {
    fn default() -> Self {
        ConnectAttr {
            access: AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
            path_mtu: Mtu::Mtu4096,
            rts: RtsAttr::default(),
            min_rnr_timer: DEFAULT_MIN_RNR_TIMER,
            traffic_class: 0,
            max_dest_rd_atomic: ATOMIC_RESOURCES as u8,
        }
    }
}

impl ConnectAttr {
    /// The defaults with the READ/atomic depths of the device at hand (`p` =
    /// [`Context::params`]): `max_dest_rd_atomic` is what its responder keeps per QP (the
    /// value to advertise to the peer), `rts.max_rd_atomic` its requester's limit. The plain
    /// [`Default`] uses this crate's build (`ATOMIC_RESOURCES`), which advertises more than a
    /// 16k-QP build keeps.
    pub fn for_device(p: &BuildParams) -> Self {
        ConnectAttr {
            rts: RtsAttr::for_device(p),
            max_dest_rd_atomic: p.rd_atomic.min(255) as u8,
            ..ConnectAttr::default()
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
