//! RoCE v2 / InfiniBand transport constants (IBTA Vol. 1 chapter 9, Annex A17).

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const UDP_PORT_ROCEV2: u16 = 4791;
pub const ETH_HDR_BYTES: usize = 14;
pub const IPV4_HDR_BYTES: usize = 20;
pub const UDP_HDR_BYTES: usize = 8;
pub const BTH_BYTES: usize = 12;
pub const RETH_BYTES: usize = 16;
pub const AETH_BYTES: usize = 4;
pub const IMMDT_BYTES: usize = 4;
pub const ATOMIC_ETH_BYTES: usize = 28;
pub const ATOMIC_ACK_ETH_BYTES: usize = 8;
pub const ICRC_BYTES: usize = 4;
/// Per-frame wire overhead not in the AXI-Stream frame: preamble+SFD 8, FCS 4, IFG 12.
pub const WIRE_OVERHEAD_BYTES: usize = 24;
/// UDP source ports for RoCE v2 flows (entropy range, A17.2.2.3).
pub const UDP_SPORT_MIN: u16 = 0xC000;
/// PSNs are 24 bits.
pub const PSN_MASK: u32 = 0x00FF_FFFF;
/// BTH partition key default.
pub const DEFAULT_PKEY: u16 = 0xFFFF;

/// RC opcodes (BTH opcode byte, transport 000).
pub mod opcode {
    pub const SEND_FIRST: u8 = 0x00;
    pub const SEND_MIDDLE: u8 = 0x01;
    pub const SEND_LAST: u8 = 0x02;
    pub const SEND_LAST_IMM: u8 = 0x03;
    pub const SEND_ONLY: u8 = 0x04;
    pub const SEND_ONLY_IMM: u8 = 0x05;
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_MIDDLE: u8 = 0x07;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_LAST_IMM: u8 = 0x09;
    pub const WRITE_ONLY: u8 = 0x0A;
    pub const WRITE_ONLY_IMM: u8 = 0x0B;
    pub const READ_REQUEST: u8 = 0x0C;
    pub const READ_RESPONSE_FIRST: u8 = 0x0D;
    pub const READ_RESPONSE_MIDDLE: u8 = 0x0E;
    pub const READ_RESPONSE_LAST: u8 = 0x0F;
    pub const READ_RESPONSE_ONLY: u8 = 0x10;
    pub const ACKNOWLEDGE: u8 = 0x11;
    pub const ATOMIC_ACKNOWLEDGE: u8 = 0x12;
    pub const COMPARE_SWAP: u8 = 0x13;
    pub const FETCH_ADD: u8 = 0x14;
    /// RoCE v2 congestion notification packet (Annex A17.9.3).
    pub const CNP: u8 = 0x81;
}

/// IBTA RNR NAK timer field (9.7.5.2.8, table 45): code -> minimum wait in microseconds.
pub const RNR_TIMER_US: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840,
    5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840,
    245_760, 327_680, 491_520,
];

/// Unit of the local ACK timeout (IBTA 9.7.6.1.3): 4.096 us * 2^timeout; 0 = infinite.
pub const ACK_TIMEOUT_UNIT_NS: u64 = 4096;

/// Local ACK timeout in core cycles for a timeout exponent at `clock_khz` (None: infinite).
pub const fn ack_timeout_cycles(timeout: u8, clock_khz: u32) -> Option<u64> {
    if timeout == 0 {
        return None;
    }
    let t = if timeout > 31 { 31 } else { timeout };
    Some((ACK_TIMEOUT_UNIT_NS * clock_khz as u64 / 1_000_000) << t)
}

/// RNR wait in core cycles for an RNR timer code at `clock_khz`.
pub const fn rnr_wait_cycles(code: u8, clock_khz: u32) -> u64 {
    RNR_TIMER_US[(code & 31) as usize] as u64 * clock_khz as u64 / 1000
}

/// ECN codepoint ECT(0) in the IPv4 TOS byte's low two bits.
pub const ECN_ECT0: u8 = 0b10;

/// Path MTU enumeration as in IBTA (1 = 256 .. 5 = 4096).
pub const fn mtu_enum_to_bytes(e: u8) -> Option<u32> {
    match e {
        1..=5 => Some(128u32 << e),
        _ => None,
    }
}
pub const fn mtu_bytes_to_enum(b: u32) -> Option<u8> {
    match b {
        256 => Some(1),
        512 => Some(2),
        1024 => Some(3),
        2048 => Some(4),
        4096 => Some(5),
        _ => None,
    }
}

/// IPv4 protocol number of UDP.
pub const IPV4_PROTO_UDP: u8 = 17;
/// IPv4 version 4 and IHL 5 (no options), the first header byte.
pub const IPV4_VER_IHL: u8 = 0x45;
/// BTH transport header version (TVer) of this spec.
pub const BTH_TVER: u8 = 0;
/// Highest valid RC opcode (`opcode::FETCH_ADD`); RC opcodes are 0x00..=RC_OPCODE_MAX.
pub const RC_OPCODE_MAX: u8 = opcode::FETCH_ADD;
