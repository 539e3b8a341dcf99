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
    /// Extended transport headers (RETH/AETH/ImmDt) as raw bytes.
    pub ext: Vec<u8>,
    /// Payload without pad and ICRC.
    pub payload: Vec<u8>,
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
    const NAMES: [&str; 19] = [
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
    if p.opcode == op::ACKNOWLEDGE {
        let e = &p.ext;
        s.push_str(&format!(
            " (AETH syndrome {:#04x} MSN {})",
            e[0],
            u32::from_be_bytes([0, e[1], e[2], e[3]])
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
