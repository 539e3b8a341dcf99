//! RoCE v2 frames as they appear on the simulated wire: the one parser of the workspace
//! (Ethernet / IPv4 / UDP 4791 / BTH and the extended headers of the opcodes our NICs use), used
//! by the demo's frame lines and by the system tests.

use rnic_abi::roce::opcode as op;

/// A RoCE v2 packet seen on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RocePkt {
    pub opcode: u8,
    pub dqpn: u32,
    pub psn: u32,
    pub ackreq: bool,
    pub solicited: bool,
    pub src_ip: [u8; 4],
    pub dst_ip: [u8; 4],
    pub udp_sport: u16,
    /// Extended transport headers (RETH/AETH/ImmDt/AtomicETH/AtomicAckETH) as raw bytes.
    pub ext: Vec<u8>,
    /// Payload without pad and ICRC.
    pub payload: Vec<u8>,
}

/// The AtomicETH of a COMPARE_SWAP / FETCH_ADD request (IBTA 9.3.4, 28 bytes, big-endian):
/// virtual address, R_Key, swap (or add) data, compare data (0 on FETCH_ADD).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicEth {
    pub va: u64,
    pub rkey: u32,
    pub swap_add: u64,
    pub compare: u64,
}

/// An AETH (IBTA 9.3.5): syndrome and MSN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aeth {
    pub syndrome: u8,
    pub msn: u32,
}

fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().unwrap())
}

impl RocePkt {
    /// The AtomicETH, on COMPARE_SWAP and FETCH_ADD.
    pub fn atomic_eth(&self) -> Option<AtomicEth> {
        if !matches!(self.opcode, op::COMPARE_SWAP | op::FETCH_ADD) || self.ext.len() != 28 {
            return None;
        }
        let e = &self.ext;
        Some(AtomicEth {
            va: be64(&e[0..8]),
            rkey: u32::from_be_bytes(e[8..12].try_into().unwrap()),
            swap_add: be64(&e[12..20]),
            compare: be64(&e[20..28]),
        })
    }
    /// The AETH, on ACKNOWLEDGE, ATOMIC_ACKNOWLEDGE and READ RESPONSE FIRST/LAST/ONLY.
    pub fn aeth(&self) -> Option<Aeth> {
        let has = matches!(
            self.opcode,
            op::ACKNOWLEDGE
                | op::ATOMIC_ACKNOWLEDGE
                | op::READ_RESPONSE_FIRST
                | op::READ_RESPONSE_LAST
                | op::READ_RESPONSE_ONLY
        );
        (has && self.ext.len() >= 4).then(|| Aeth {
            syndrome: self.ext[0],
            msn: u32::from_be_bytes([0, self.ext[1], self.ext[2], self.ext[3]]),
        })
    }
    /// The AtomicAckETH's original remote data, on ATOMIC_ACKNOWLEDGE (IBTA 9.3.6).
    pub fn atomic_orig(&self) -> Option<u64> {
        (self.opcode == op::ATOMIC_ACKNOWLEDGE && self.ext.len() == 12)
            .then(|| be64(&self.ext[4..]))
    }
}

/// Bytes of extended headers an RC opcode carries (RETH, ImmDt, AETH).
pub fn ext_header_bytes(opcode: u8) -> usize {
    match opcode {
        op::WRITE_FIRST | op::WRITE_ONLY | op::READ_REQUEST => 16,
        op::WRITE_ONLY_IMM => 20,
        op::SEND_LAST_IMM | op::SEND_ONLY_IMM | op::WRITE_LAST_IMM => 4,
        op::ACKNOWLEDGE
        | op::READ_RESPONSE_FIRST
        | op::READ_RESPONSE_LAST
        | op::READ_RESPONSE_ONLY => 4,
        // AETH + AtomicAckETH
        op::ATOMIC_ACKNOWLEDGE => 12,
        // AtomicETH
        op::COMPARE_SWAP | op::FETCH_ADD => 28,
        _ => 0,
    }
}

/// Parse an Ethernet/IPv4/UDP 4791/BTH frame (IPv4 without options, as RoCE v2 sends it);
/// None if it is not one.
pub fn parse_roce(f: &[u8]) -> Option<RocePkt> {
    if f.len() < 14 + 20 + 8 + 12 + 4 || f[12..14] != [0x08, 0x00] || f[23] != 17 {
        return None;
    }
    if u16::from_be_bytes([f[36], f[37]]) != rnic_abi::roce::UDP_PORT_ROCEV2 {
        return None;
    }
    let ip_len = u16::from_be_bytes([f[16], f[17]]) as usize;
    let end = 14 + ip_len;
    if end > f.len() {
        return None;
    }
    let bth = &f[42..54];
    let opcode = bth[0];
    let pad = ((bth[1] >> 4) & 3) as usize;
    let ext = ext_header_bytes(opcode);
    let pstart = 54 + ext;
    let pend = end.checked_sub(4 + pad)?;
    if pend < pstart {
        return None;
    }
    Some(RocePkt {
        opcode,
        solicited: bth[1] & 0x80 != 0,
        dqpn: u32::from_be_bytes([0, bth[5], bth[6], bth[7]]),
        ackreq: bth[8] & 0x80 != 0,
        psn: u32::from_be_bytes([0, bth[9], bth[10], bth[11]]),
        src_ip: [f[26], f[27], f[28], f[29]],
        dst_ip: [f[30], f[31], f[32], f[33]],
        udp_sport: u16::from_be_bytes([f[34], f[35]]),
        ext: f[54..pstart].to_vec(),
        payload: f[pstart..pend].to_vec(),
    })
}

/// The IBTA name of an RC opcode ("?" for others).
pub fn opcode_name(o: u8) -> &'static str {
    const NAMES: [&str; 21] = [
        "SEND_FIRST",
        "SEND_MIDDLE",
        "SEND_LAST",
        "SEND_LAST_IMM",
        "SEND_ONLY",
        "SEND_ONLY_IMM",
        "WRITE_FIRST",
        "WRITE_MIDDLE",
        "WRITE_LAST",
        "WRITE_LAST_IMM",
        "WRITE_ONLY",
        "WRITE_ONLY_IMM",
        "READ_REQ",
        "READ_RESP_FIRST",
        "READ_RESP_MIDDLE",
        "READ_RESP_LAST",
        "READ_RESP_ONLY",
        "ACK",
        "ATOMIC_ACK",
        "CMP_SWAP",
        "FETCH_ADD",
    ];
    NAMES.get(o as usize).copied().unwrap_or("?")
}

/// One line about a RoCE v2 frame (None for anything else).
pub fn describe(f: &[u8]) -> Option<String> {
    let p = parse_roce(f)?;
    let [s0, s1, s2, s3] = p.src_ip;
    let [d0, d1, d2, d3] = p.dst_ip;
    let mut s = format!(
        "{s0}.{s1}.{s2}.{s3} -> {d0}.{d1}.{d2}.{d3} sport {:#06x} {:<15} QP {:<3} PSN {:#08x}{} payload {} B",
        p.udp_sport,
        opcode_name(p.opcode),
        p.dqpn,
        p.psn,
        if p.ackreq { " A" } else { "  " },
        p.payload.len(),
    );
    if matches!(p.opcode, op::ACKNOWLEDGE | op::ATOMIC_ACKNOWLEDGE)
        && let Some(a) = p.aeth()
    {
        s.push_str(&format!(
            " (AETH syndrome {:#04x} MSN {}",
            a.syndrome, a.msn
        ));
        if let Some(o) = p.atomic_orig() {
            s.push_str(&format!(" orig {o:#x}"));
        }
        s.push(')');
    }
    if let Some(a) = p.atomic_eth() {
        s.push_str(&format!(
            " (va {:#x} rkey {:#x} swap/add {:#x} compare {:#x})",
            a.va, a.rkey, a.swap_add, a.compare
        ));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An RC WRITE_ONLY frame of `payload` bytes with `pad` pad bytes, ICRC zero.
    fn write_only(payload: usize, pad: u8) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 8 + 12 + 16 + payload + pad as usize + 4];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        let ip_len = (f.len() - 14) as u16;
        f[16..18].copy_from_slice(&ip_len.to_be_bytes());
        f[23] = 17;
        f[26..30].copy_from_slice(&[10, 0, 0, 1]);
        f[30..34].copy_from_slice(&[10, 0, 0, 2]);
        f[34..36].copy_from_slice(&0xC001u16.to_be_bytes());
        f[36..38].copy_from_slice(&4791u16.to_be_bytes());
        f[42] = op::WRITE_ONLY;
        f[43] = pad << 4;
        f[47..50].copy_from_slice(&[0, 0, 7]);
        f[50] = 0x80;
        f[51..54].copy_from_slice(&[0, 1, 2]);
        for (k, b) in f[70..70 + payload].iter_mut().enumerate() {
            *b = k as u8;
        }
        f
    }

    #[test]
    fn parses_headers_payload_and_pad() {
        let p = parse_roce(&write_only(13, 3)).expect("RoCE");
        assert_eq!(
            (p.opcode, p.dqpn, p.psn, p.ackreq),
            (op::WRITE_ONLY, 7, 0x102, true)
        );
        assert_eq!(
            (p.src_ip, p.dst_ip, p.udp_sport),
            ([10, 0, 0, 1], [10, 0, 0, 2], 0xC001)
        );
        assert_eq!(p.ext.len(), 16);
        assert_eq!(p.payload, (0..13).collect::<Vec<u8>>());
        let line = describe(&write_only(13, 3)).unwrap();
        assert!(
            line.contains("WRITE_ONLY") && line.ends_with("payload 13 B"),
            "{line}"
        );
    }

    /// A frame of `opcode` whose extended headers are `ext` (no payload), ICRC zero.
    fn with_ext(opcode: u8, ext: &[u8]) -> Vec<u8> {
        let mut f = write_only(0, 0);
        f.truncate(54);
        f[42] = opcode;
        f.extend_from_slice(ext);
        f.extend_from_slice(&[0; 4]);
        let ip_len = (f.len() - 14) as u16;
        f[16..18].copy_from_slice(&ip_len.to_be_bytes());
        f
    }

    #[test]
    fn parses_atomic_headers() {
        let mut ext = 0x1122_3344_5566_7788u64.to_be_bytes().to_vec();
        ext.extend_from_slice(&0xAABB_CCDDu32.to_be_bytes());
        ext.extend_from_slice(&0x0102_0304_0506_0708u64.to_be_bytes());
        ext.extend_from_slice(&0xF0E0_D0C0_B0A0_9080u64.to_be_bytes());
        for o in [op::COMPARE_SWAP, op::FETCH_ADD] {
            let p = parse_roce(&with_ext(o, &ext)).expect("RoCE");
            assert!(p.payload.is_empty() && p.aeth().is_none() && p.atomic_orig().is_none());
            assert_eq!(
                p.atomic_eth(),
                Some(AtomicEth {
                    va: 0x1122_3344_5566_7788,
                    rkey: 0xAABB_CCDD,
                    swap_add: 0x0102_0304_0506_0708,
                    compare: 0xF0E0_D0C0_B0A0_9080,
                })
            );
            let line = describe(&with_ext(o, &ext)).unwrap();
            assert!(line.contains("rkey 0xaabbccdd"), "{line}");
        }
        assert_eq!(opcode_name(op::COMPARE_SWAP), "CMP_SWAP");
        assert_eq!(opcode_name(op::FETCH_ADD), "FETCH_ADD");
        let mut ack = vec![0x1F, 0, 0x12, 0x34];
        ack.extend_from_slice(&0xDEAD_BEEF_0000_0001u64.to_be_bytes());
        let p = parse_roce(&with_ext(op::ATOMIC_ACKNOWLEDGE, &ack)).expect("RoCE");
        assert_eq!(
            p.aeth(),
            Some(Aeth {
                syndrome: 0x1F,
                msn: 0x1234
            })
        );
        assert_eq!(p.atomic_orig(), Some(0xDEAD_BEEF_0000_0001));
        assert!(p.atomic_eth().is_none() && p.payload.is_empty());
        let line = describe(&with_ext(op::ATOMIC_ACKNOWLEDGE, &ack)).unwrap();
        assert!(
            line.contains("ATOMIC_ACK") && line.contains("orig 0xdeadbeef00000001"),
            "{line}"
        );
    }

    #[test]
    fn rejects_other_frames() {
        let mut f = write_only(8, 0);
        f[37] ^= 1; // another UDP port
        assert_eq!(parse_roce(&f), None);
        let mut f = write_only(8, 0);
        f[12] = 0x86; // not IPv4
        assert_eq!(parse_roce(&f), None);
        let f = write_only(8, 0);
        assert_eq!(
            parse_roce(&f[..f.len() - 1]),
            None,
            "IPv4 length beyond the frame"
        );
        assert_eq!(parse_roce(&f[..40]), None, "too short");
    }
}
