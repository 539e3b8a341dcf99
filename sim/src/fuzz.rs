//! A fuzz test of the receive path: mutated valid RoCE v2 frames fed into one NIC's port.
//!
//! One NIC (B) in a world of its own, its port cabled to the test ([`World::detach_port`]: what
//! it sends is only recorded), set up through verbs: [`QPS`] RC QPs in RTS (path MTUs 4096,
//! 1024, 256; one expects PSNs just below the 24-bit wrap), a writable MR (local write, remote
//! write, read and atomic), an atomic-only MR (local write, remote atomic), a read-only MR
//! (remote read), [`RECV_WQES`] receive WQEs per QP from a receive MR, one CQ. Frames come in
//! chunks of [`CHUNK`]: valid messages addressed to B's QPs at the PSN each QP expects (WRITE
//! FIRST/MIDDLE/LAST/ONLY with and without immediate, SEND likewise, READ requests, atomics
//! (COMPARE_SWAP and FETCH_ADD on the writable or the atomic-only MR, now and then a
//! misaligned one or one to the read-only MR, and duplicates: a recent atomic frame sent
//! again with its old PSN), ACK/NAK, CNP), their frames mutated (in
//! half of the messages each frame with probability 3/4, in the other half exactly one: bit
//! flips, bytes overwritten in the BTH opcode/flags/P_Key/QPN/PSN, the RETH
//! VA/rkey/length, the AETH, the IPv4/UDP length fields and addresses, truncation,
//! extension), and half of the mutated ones given a recomputed ICRC (and IPv4 header checksum)
//! so they get past the ICRC check to the transport. All from one ChaCha8 seed:
//! deterministic.
//!
//! After each chunk the world must go quiet (links idle, no MMIO, nothing sent) within
//! [`CHUNK_MAX_CYCLES`] cycles, the DMA audit must show writes only into the writable MR, the
//! atomic-only MR (there only whole aligned 8-byte words, one per write: an atomic's result;
//! nothing else may write it), the receive MR and the CQ ring and no IOMMU fault; then the CQ
//! is drained and a QP the device
//! moved out of RTS (or whose receive WQEs ran low) is reset and reconnected. At the end a
//! valid WRITE ONLY to a fresh QP must land byte-exact and be ACKed. Any violation is an
//! [`Error::Check`] naming the seed, the chunk and (for a hang) the chunk's frames in hex.

use crate::error::{Error, ensure};
use crate::eth::LinkConfig;
use crate::world::{MAX_INJECT_BYTES, WorldConfig};
use crate::{SharedWorld, SimNic, world};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rnic::Rnic;
use rnic::verbs::{
    AccessFlags, CompletionQueue, ConnectAttr, Context, CqAttr, Endpoint, MemoryRegion, Mtu,
    PortAddr, QpCaps, QueuePair, RecvWr, WorkCompletion,
};
use rnic_abi::queue::{aeth, qp_state};
use rnic_abi::roce::opcode as op;
use std::net::Ipv4Addr;

/// QPs of B under fuzz.
pub const QPS: usize = 3;
/// Receive WQEs posted per QP (reposted when fewer than half are left).
pub const RECV_WQES: usize = 16;
/// Bytes of one receive WQE.
pub const RECV_BYTES: usize = 4096;
/// Bytes of the writable, the atomic-only and the read-only MR.
pub const MR_BYTES: usize = 64 * 1024;
/// Frames injected between two checks.
pub const CHUNK: usize = 64;
/// Cycles the world must stay quiet for a chunk to be done.
pub const IDLE_CYCLES: u64 = 2_000;
/// Cycles a chunk may take to go quiet before it counts as a hang (a chunk is at most
/// 64 x 9000 bytes, ~12000 cycles at line rate).
pub const CHUNK_MAX_CYCLES: u64 = 400_000;

const MTUS: [u32; QPS] = [4096, 1024, 256];
/// The PSN each QP expects after a (re)connect.
const PEER_PSN: [u32; QPS] = [0, 0x00FF_FFF0, 0x0012_3456];
const PEER_QPN: u32 = 0x11;

/// What a fuzz run saw.
#[derive(Debug, Clone)]
pub struct FuzzOutcome {
    pub seed: u64,
    /// Frames injected into B's port.
    pub frames: usize,
    /// Frames left valid, mutated with the old ICRC, mutated with a recomputed ICRC.
    pub valid: usize,
    pub mutated: usize,
    pub recomputed: usize,
    /// Frames B sent (ACKs, NAKs, READ and atomic responses).
    pub sent: usize,
    /// Simulated cycles of the run.
    pub cycles: u64,
    /// Completions polled, and those with an error status.
    pub completions: usize,
    pub error_completions: usize,
    /// QPs reset and reconnected after the device moved them out of RTS.
    pub qp_resets: usize,
    /// Frames the board's RX FIFO dropped.
    pub rx_fifo_drops: u64,
    /// Bytes the DMA audit checked.
    pub dma_bytes: u64,
    /// B's engine counters at the end (non-zero ones).
    pub counters: Vec<(&'static str, u32)>,
}

impl FuzzOutcome {
    /// An engine counter (0 when absent).
    pub fn counter(&self, k: &str) -> u32 {
        self.counters.iter().find(|c| c.0 == k).map_or(0, |c| c.1)
    }
    /// A few lines for humans.
    pub fn summary(&self) -> String {
        let c = self
            .counters
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        format!(
            "fuzz seed {}: {} frames ({} valid, {} mutated with the old ICRC, {} with a recomputed ICRC), {} sent by B, {} cycles, {} completions ({} errors), {} QP resets, {} RX FIFO drops, {} DMA bytes audited\n  counters: {c}",
            self.seed,
            self.frames,
            self.valid,
            self.mutated,
            self.recomputed,
            self.sent,
            self.cycles,
            self.completions,
            self.error_completions,
            self.qp_resets,
            self.rx_fifo_drops,
            self.dma_bytes
        )
    }
}

// ---- frames

const POLY: u32 = 0xEDB8_8320;
/// Frame offsets masked to 1s in the ICRC (IBTA Annex A17.8 for IPv4 without options: TOS,
/// TTL, header checksum, UDP checksum, BTH resv8a/FECN/BECN byte).
const MASKED: [usize; 7] = [15, 22, 24, 25, 40, 41, 46];
const ETH: usize = 14;
const BTH: usize = 42;
const EXT: usize = 54;

fn crc_raw(mut s: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        s ^= b as u32;
        for _ in 0..8 {
            s = if s & 1 == 1 { (s >> 1) ^ POLY } else { s >> 1 };
        }
    }
    s
}

/// The ICRC of `frame` (Ethernet header on, without the ICRC), as the spec computes it over 8
/// bytes of 1s and the IP packet with the variant fields masked; `None` when the frame is
/// shorter than its headers. The same function as `rnic_rtl::net::icrc::icrc` (the test
/// checks they agree).
pub fn icrc(frame: &[u8]) -> Option<u32> {
    if frame.len() < EXT {
        return None;
    }
    let mut covered = vec![0xFFu8; 8];
    covered.extend_from_slice(&frame[ETH..]);
    for m in MASKED {
        covered[m - ETH + 8] = 0xFF;
    }
    Some(!crc_raw(!0, &covered))
}

/// Whether the frame's last 4 bytes hold the ICRC of the rest (little-endian on the wire).
pub fn icrc_ok(frame: &[u8]) -> bool {
    let Some(body) = frame.len().checked_sub(4).map(|n| &frame[..n]) else {
        return false;
    };
    icrc(body).is_some_and(|c| c.to_le_bytes() == frame[frame.len() - 4..])
}

fn ip_checksum(f: &mut [u8]) {
    if f.len() < ETH + 20 {
        return;
    }
    f[24] = 0;
    f[25] = 0;
    let mut sum: u32 = f[ETH..ETH + 20]
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    f[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// Replace the last 4 bytes of `f` with the ICRC of the rest.
fn fix_icrc(f: &mut [u8]) -> bool {
    let n = f.len();
    if n < EXT + 4 {
        return false;
    }
    let Some(c) = icrc(&f[..n - 4]) else {
        return false;
    };
    f[n - 4..].copy_from_slice(&c.to_le_bytes());
    true
}

/// Addresses of the frames sent to B.
#[derive(Debug, Clone, Copy)]
pub struct Hdr {
    pub dmac: [u8; 6],
    pub smac: [u8; 6],
    pub sip: Ipv4Addr,
    pub dip: Ipv4Addr,
    pub sport: u16,
}

/// A RoCE v2 RC frame (without FCS): Ethernet, IPv4 (DF, TTL 64, checksum), UDP to 4791
/// (checksum 0), BTH (P_Key 0xFFFF), `ext`, `payload` padded to 4 bytes, ICRC.
pub fn frame(
    h: &Hdr,
    opcode: u8,
    qpn: u32,
    psn: u32,
    ackreq: bool,
    ext: &[u8],
    payload: &[u8],
) -> Vec<u8> {
    let pad = (4 - payload.len() % 4) % 4;
    let ip_len = 20 + 8 + 12 + ext.len() + payload.len() + pad + 4;
    let mut f = Vec::with_capacity(ETH + ip_len);
    f.extend_from_slice(&h.dmac);
    f.extend_from_slice(&h.smac);
    f.extend_from_slice(&[0x08, 0x00]);
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&h.sip.octets());
    ip[16..20].copy_from_slice(&h.dip.octets());
    f.extend_from_slice(&ip);
    ip_checksum(&mut f);
    f.extend_from_slice(&h.sport.to_be_bytes());
    f.extend_from_slice(&rnic_abi::roce::UDP_PORT_ROCEV2.to_be_bytes());
    f.extend_from_slice(&((ip_len - 20) as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.push(opcode);
    f.push((pad as u8) << 4);
    f.extend_from_slice(&rnic_abi::roce::DEFAULT_PKEY.to_be_bytes());
    f.push(0);
    f.extend_from_slice(&qpn.to_be_bytes()[1..]);
    f.push(if ackreq { 0x80 } else { 0 });
    f.extend_from_slice(&(psn & rnic_abi::roce::PSN_MASK).to_be_bytes()[1..]);
    f.extend_from_slice(ext);
    f.extend_from_slice(payload);
    f.resize(f.len() + pad, 0);
    f.extend_from_slice(&[0; 4]);
    fix_icrc(&mut f);
    f
}

/// A RETH: virtual address, rkey, DMA length.
pub fn reth(va: u64, rkey: u32, len: u32) -> Vec<u8> {
    let mut r = va.to_be_bytes().to_vec();
    r.extend_from_slice(&rkey.to_be_bytes());
    r.extend_from_slice(&len.to_be_bytes());
    r
}

/// What the generator knows about B.
struct Target {
    hdr: Hdr,
    /// (QPN, path MTU, PSN expected next).
    qps: Vec<(u32, usize, u32)>,
    /// (IOVA, rkey) of the writable, the atomic-only and the read-only MR.
    wmr: (u64, u32),
    amr: (u64, u32),
    rmr: (u64, u32),
    /// The last valid atomic request frames (sent again later: duplicates).
    recent_atomics: Vec<Vec<u8>>,
}

/// Atomic request frames kept for duplicates (more than the responder's 16 saved results, so
/// some duplicates find no saved result).
const RECENT_ATOMICS: usize = 24;

fn bytes(rng: &mut ChaCha8Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.random()).collect()
}

/// A valid message (one or more frames) to one of B's QPs at the PSN it expects.
fn message(rng: &mut ChaCha8Rng, t: &mut Target) -> Vec<Vec<u8>> {
    let k = rng.random_range(0..t.qps.len());
    let (qpn, mtu, psn) = t.qps[k];
    let h = t.hdr;
    // WRITEs twice as often as the other kinds (they reach the deepest state)
    let kind = match rng.random_range(0..16u32) {
        r @ 0..=7 => r % 4,
        r @ 8..=11 => r - 4,
        r => r - 4,
    };
    let imm = |rng: &mut ChaCha8Rng| rng.random::<u32>().to_be_bytes().to_vec();
    let mut out = Vec::new();
    let mut next = psn;
    match kind {
        // WRITE ONLY (/IMM), WRITE FIRST..LAST (/IMM)
        0..=3 => {
            let multi = kind >= 2;
            let with_imm = kind % 2 == 1;
            let len = if multi {
                rng.random_range(mtu + 1..=(4 * mtu).min(MR_BYTES))
            } else {
                rng.random_range(0..=mtu)
            };
            let off = rng.random_range(0..=(MR_BYTES - len)) as u64;
            let data = bytes(rng, len);
            let r = reth(t.wmr.0 + off, t.wmr.1, len as u32);
            if !multi {
                let (o, mut ext) = if with_imm {
                    (op::WRITE_ONLY_IMM, r)
                } else {
                    (op::WRITE_ONLY, r)
                };
                if with_imm {
                    ext.extend(imm(rng));
                }
                out.push(frame(&h, o, qpn, next, true, &ext, &data));
                next += 1;
            } else {
                let chunks: Vec<&[u8]> = data.chunks(mtu).collect();
                let last = chunks.len() - 1;
                for (i, c) in chunks.iter().enumerate() {
                    let (o, ext) = if i == 0 {
                        (op::WRITE_FIRST, r.clone())
                    } else if i < last {
                        (op::WRITE_MIDDLE, vec![])
                    } else if with_imm {
                        (op::WRITE_LAST_IMM, imm(rng))
                    } else {
                        (op::WRITE_LAST, vec![])
                    };
                    out.push(frame(&h, o, qpn, next, i == last, &ext, c));
                    next += 1;
                }
            }
        }
        // SEND ONLY (/IMM), SEND FIRST..LAST (/IMM)
        4..=7 => {
            let multi = kind >= 6;
            let with_imm = kind % 2 == 1;
            let len = if multi {
                rng.random_range(mtu + 1..=(3 * mtu).min(RECV_BYTES).max(mtu + 1))
            } else {
                rng.random_range(0..=mtu.min(RECV_BYTES))
            };
            let data = bytes(rng, len);
            if !multi {
                let (o, ext) = if with_imm {
                    (op::SEND_ONLY_IMM, imm(rng))
                } else {
                    (op::SEND_ONLY, vec![])
                };
                out.push(frame(&h, o, qpn, next, true, &ext, &data));
                next += 1;
            } else {
                let chunks: Vec<&[u8]> = data.chunks(mtu).collect();
                let last = chunks.len() - 1;
                for (i, c) in chunks.iter().enumerate() {
                    let (o, ext) = if i == 0 {
                        (op::SEND_FIRST, vec![])
                    } else if i < last {
                        (op::SEND_MIDDLE, vec![])
                    } else if with_imm {
                        (op::SEND_LAST_IMM, imm(rng))
                    } else {
                        (op::SEND_LAST, vec![])
                    };
                    out.push(frame(&h, o, qpn, next, i == last, &ext, c));
                    next += 1;
                }
            }
        }
        // READ request from either MR
        8 => {
            let (va, rkey) = if rng.random() { t.rmr } else { t.wmr };
            let len = rng.random_range(0..=(2 * mtu));
            let off = rng.random_range(0..=(MR_BYTES - len)) as u64;
            out.push(frame(
                &h,
                op::READ_REQUEST,
                qpn,
                next,
                true,
                &reth(va + off, rkey, len as u32),
                &[],
            ));
            next += len.div_ceil(mtu).max(1) as u32;
        }
        // a duplicate: a recent atomic again, with its old PSN (answered from the saved
        // result, or dropped when it is older than the saved ones; not executed again)
        9 if !t.recent_atomics.is_empty() && rng.random_bool(0.25) => {
            let i = rng.random_range(0..t.recent_atomics.len());
            out.push(t.recent_atomics[i].clone());
        }
        // atomics on the writable or the atomic-only MR (now and then misaligned, or to the
        // read-only MR: NAKed)
        9 => {
            let o = if rng.random() {
                op::COMPARE_SWAP
            } else {
                op::FETCH_ADD
            };
            let (base, rkey) = match rng.random_range(0..16u32) {
                0 => t.rmr,
                1..=7 => t.wmr,
                _ => t.amr,
            };
            // a few words only, so COMPARE_SWAPs sometimes match what is there
            let words = if rng.random() { 4 } else { MR_BYTES / 8 };
            let mut off = rng.random_range(0..words) as u64 * 8;
            if rng.random_range(0..16u32) == 0 {
                off += rng.random_range(1..8);
            }
            let mut ext = (base + off).to_be_bytes().to_vec();
            ext.extend_from_slice(&rkey.to_be_bytes());
            if rng.random() {
                ext.extend(bytes(rng, 16));
            } else {
                // small operands: adds of 1, compares with 0
                ext.extend_from_slice(&rng.random_range(0..4u64).to_be_bytes());
                ext.extend_from_slice(&rng.random_range(0..2u64).to_be_bytes());
            }
            let f = frame(&h, o, qpn, next, true, &ext, &[]);
            if t.recent_atomics.len() == RECENT_ATOMICS {
                t.recent_atomics.remove(0);
            }
            t.recent_atomics.push(f.clone());
            out.push(f);
            next += 1;
        }
        // ACK / NAK / atomic ACK / READ response to a requester with nothing outstanding
        10 => {
            let syn = [
                aeth::ACK,
                aeth::RNR_NAK,
                aeth::NAK_PSN_SEQ_ERR,
                aeth::NAK_INV_REQ,
                aeth::NAK_REM_ACCESS,
                aeth::NAK_REM_OP_ERR,
            ][rng.random_range(0..6)];
            let mut a = vec![syn];
            a.extend_from_slice(&rng.random::<u32>().to_be_bytes()[1..]);
            let p = rng.random::<u32>();
            match rng.random_range(0..3) {
                0 => out.push(frame(&h, op::ACKNOWLEDGE, qpn, p, false, &a, &[])),
                1 => {
                    a.extend(bytes(rng, 8));
                    out.push(frame(&h, op::ATOMIC_ACKNOWLEDGE, qpn, p, false, &a, &[]))
                }
                _ => {
                    let len = rng.random_range(0..=mtu);
                    out.push(frame(
                        &h,
                        op::READ_RESPONSE_ONLY,
                        qpn,
                        p,
                        false,
                        &a,
                        &bytes(rng, len),
                    ))
                }
            }
        }
        // CNP
        _ => out.push(frame(&h, op::CNP, qpn, 0, false, &[0; 16], &[])),
    }
    t.qps[k].2 = next & rnic_abi::roce::PSN_MASK;
    out
}

/// Interesting 32-bit values for length and key fields.
fn edgy(rng: &mut ChaCha8Rng) -> u32 {
    let v = [
        0,
        1,
        3,
        4,
        255,
        256,
        1023,
        1024,
        4095,
        4096,
        4097,
        MR_BYTES as u32 - 1,
        MR_BYTES as u32,
        MR_BYTES as u32 + 1,
        0x7FFF_FFFF,
        0x8000_0000,
        0xFFFF_FFFF,
        0xFFFF_FFFC,
    ];
    if rng.random_bool(0.7) {
        v[rng.random_range(0..v.len())]
    } else {
        rng.random()
    }
}

fn put(f: &mut [u8], at: usize, v: &[u8]) {
    for (i, b) in v.iter().enumerate() {
        if let Some(x) = f.get_mut(at + i) {
            *x = *b;
        }
    }
}

/// One mutation of `f` in place.
fn mutate(rng: &mut ChaCha8Rng, f: &mut Vec<u8>, qpns: &[u32]) {
    let n = f.len();
    match rng.random_range(0..16u32) {
        0 => {
            let i = rng.random_range(0..n);
            f[i] ^= 1 << rng.random_range(0..8);
        }
        1 => {
            let i = rng.random_range(0..n.min(EXT + 28));
            f[i] ^= 1 << rng.random_range(0..8);
        }
        2 => {
            let i = rng.random_range(0..n.min(EXT + 28));
            f[i] = rng.random();
        }
        // BTH opcode: any byte or any RC opcode
        3 => {
            let o = if rng.random() {
                rng.random()
            } else {
                rng.random_range(0..=0x16u8)
            };
            put(f, BTH, &[o]);
        }
        // BTH flags (SE, M, pad, TVer)
        4 => put(f, BTH + 1, &[rng.random()]),
        // P_Key, resv8a
        5 => {
            let v: u16 = if rng.random() { 0x7FFF } else { rng.random() };
            put(f, BTH + 2, &v.to_be_bytes());
            if rng.random_bool(0.3) {
                put(f, BTH + 4, &[rng.random()]);
            }
        }
        // destination QPN: another QP of B, 0/1, a neighbour, anything
        6 => {
            let q = match rng.random_range(0..4) {
                0 => qpns[rng.random_range(0..qpns.len())],
                1 => rng.random_range(0..2),
                2 => qpns[qpns.len() - 1] + rng.random_range(1..64),
                _ => rng.random::<u32>() & 0xFF_FFFF,
            };
            put(f, BTH + 5, &q.to_be_bytes()[1..]);
        }
        // AckReq/resv7 byte, PSN
        7 => {
            if rng.random_bool(0.3) {
                put(f, BTH + 8, &[rng.random()]);
            }
            let old = f
                .get(BTH + 9..BTH + 12)
                .map_or(0, |p| u32::from_be_bytes([0, p[0], p[1], p[2]]));
            let psn = match rng.random_range(0..3) {
                0 => old.wrapping_add(rng.random_range(1..4)),
                1 => old.wrapping_sub(rng.random_range(1..4)),
                _ => rng.random(),
            } & 0xFF_FFFF;
            put(f, BTH + 9, &psn.to_be_bytes()[1..]);
        }
        // RETH VA (or atomic VA)
        8 => {
            let va = u64::from_be_bytes(
                f.get(EXT..EXT + 8)
                    .and_then(|b| b.try_into().ok())
                    .unwrap_or([0; 8]),
            );
            let v = match rng.random_range(0..4) {
                0 => va.wrapping_add(rng.random_range(1..8192)),
                1 => va.wrapping_sub(rng.random_range(1..8192)),
                2 => u64::MAX - rng.random_range(0..4096),
                _ => rng.random(),
            };
            put(f, EXT, &v.to_be_bytes());
        }
        // RETH rkey
        9 => {
            let v = if rng.random() {
                f.get(EXT + 8..EXT + 12)
                    .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                    ^ (1 << rng.random_range(0..32))
            } else {
                edgy(rng)
            };
            put(f, EXT + 8, &v.to_be_bytes());
        }
        // RETH DMA length
        10 => put(f, EXT + 12, &edgy(rng).to_be_bytes()),
        // AETH (of an ACK) / first ext word
        11 => put(f, EXT, &rng.random::<u32>().to_be_bytes()),
        // truncation
        12 => {
            if n > 1 {
                let k = rng.random_range(1..n);
                f.truncate(k);
            }
        }
        // extension
        13 => {
            let k = rng.random_range(1..=(MAX_INJECT_BYTES - n).clamp(1, 4096));
            let tail = bytes(rng, k);
            f.extend(tail);
            f.truncate(MAX_INJECT_BYTES);
        }
        // IPv4 total length / UDP length
        14 => {
            let (at, base) = if rng.random() {
                (ETH + 2, n.saturating_sub(ETH))
            } else {
                (ETH + 24, n.saturating_sub(ETH + 20))
            };
            let v = match rng.random_range(0..3) {
                0 => (base as u16).wrapping_add(rng.random_range(1..16)),
                1 => (base as u16).wrapping_sub(rng.random_range(1..16)),
                _ => rng.random(),
            };
            put(f, at, &v.to_be_bytes());
        }
        // addresses, protocol, version, ports
        _ => match rng.random_range(0..6) {
            0 => put(f, 0, &bytes(rng, 6)),
            1 => put(f, 12, &bytes(rng, 2)),
            2 => put(f, ETH, &[rng.random()]),
            3 => put(f, ETH + 9, &[rng.random()]),
            4 => put(f, ETH + 16, &bytes(rng, 4)),
            _ => put(f, ETH + 22, &bytes(rng, 2)),
        },
    }
}

fn hex(f: &[u8]) -> String {
    f.iter().map(|b| format!("{b:02x}")).collect()
}

// ---- the rig

type Ctx = Context<SimNic>;

struct Rig<'c> {
    w: SharedWorld,
    ctx: &'c Ctx,
    cq: CompletionQueue<'c, SimNic>,
    wmr: MemoryRegion<'c, SimNic>,
    amr: MemoryRegion<'c, SimNic>,
    rmr: MemoryRegion<'c, SimNic>,
    recv: MemoryRegion<'c, SimNic>,
    peer: PortAddr,
}

impl<'c> Rig<'c> {
    fn allowed(&self) -> Vec<(u64, usize)> {
        let r = self.cq.ring();
        vec![
            (self.wmr.iova(), self.wmr.len()),
            (self.amr.iova(), self.amr.len()),
            (self.recv.iova(), self.recv.len()),
            (r.iova(), r.len()),
        ]
    }

    /// The atomic-only MR (REMOTE_ATOMIC, no REMOTE_WRITE) may be written only by atomics:
    /// every write that touches it writes exactly one whole aligned 8-byte word there.
    fn atomic_only_writes(&self, w: &crate::World) -> Result<(), Error> {
        let (s, l) = (self.amr.iova(), self.amr.len() as u64);
        for r in &w.nics[0].mem.audit {
            let inside: Vec<u64> = r
                .bytes
                .iter()
                .map(|b| b.0)
                .filter(|a| *a >= s && *a < s + l)
                .collect();
            if inside.is_empty() {
                continue;
            }
            let mut sorted = inside.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let word = sorted[0];
            ensure!(
                sorted.len() == 8
                    && inside.len() == 8
                    && word.is_multiple_of(8)
                    && sorted[7] == word + 7,
                "a write of {} bytes into the atomic-only MR (no REMOTE_WRITE) at cycle {}, IOVA {:#x}: not one aligned 8-byte word (an atomic's result)",
                inside.len(),
                r.cycle,
                word
            );
        }
        Ok(())
    }

    /// RESET -> RTS expecting `psn` from the peer, receive WQEs posted.
    fn connect(&self, qp: &QueuePair<'_, SimNic>, k: usize) -> Result<(), Error> {
        qp.connect(
            &Endpoint {
                qpn: PEER_QPN + k as u32,
                psn: PEER_PSN[k % QPS],
                ipv4: self.peer.ipv4,
                mac: self.peer.mac,
            },
            &ConnectAttr {
                access: AccessFlags::LOCAL_WRITE
                    | AccessFlags::REMOTE_WRITE
                    | AccessFlags::REMOTE_READ
                    | AccessFlags::REMOTE_ATOMIC,
                path_mtu: Mtu::from_bytes(MTUS[k % QPS])?,
                ..ConnectAttr::default()
            },
        )?;
        self.post_recvs(qp, k)
    }

    fn post_recvs(&self, qp: &QueuePair<'_, SimNic>, k: usize) -> Result<(), Error> {
        let have = qp.outstanding()?.1;
        let base = k * RECV_WQES * RECV_BYTES;
        let wrs = (have..RECV_WQES)
            .map(|i| {
                let slot = i % RECV_WQES;
                Ok(RecvWr::new(
                    slot as u64,
                    self.recv.sge(base + slot * RECV_BYTES, RECV_BYTES)?,
                ))
            })
            .collect::<Result<Vec<_>, rnic::Error>>()?;
        if !wrs.is_empty() {
            qp.post_recv(&wrs)?;
        }
        Ok(())
    }

    /// Run until nothing happened for [`IDLE_CYCLES`]; the error describes the hang.
    fn settle(&self, what: &dyn Fn() -> String) -> Result<(), Error> {
        let mut w = self.w.borrow_mut();
        let start = w.cycle;
        let mut idle = 0;
        let mut seen = w.wire.len();
        while idle < IDLE_CYCLES {
            if w.cycle - start > CHUNK_MAX_CYCLES {
                return Err(Error::Check(format!(
                    "hang: B still busy {CHUNK_MAX_CYCLES} cycles after {} (links busy {:?}, frames sent in the last {} cycles {})",
                    what(),
                    w.links.iter().map(|l| l.busy()).collect::<Vec<_>>(),
                    idle,
                    w.wire.len() - seen
                )));
            }
            w.step();
            if w.quiet() && w.wire.len() == seen {
                idle += 1;
            } else {
                idle = 0;
                seen = w.wire.len();
            }
        }
        Ok(())
    }
}

/// Fuzz B's receive path with `frames` frames from `seed` (see the module documentation).
pub fn run(seed: u64, frames: usize) -> Result<FuzzOutcome, Error> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xF022_F022);
    let w = world(WorldConfig {
        seed,
        nics: 1,
        link: LinkConfig::board(),
        ..WorldConfig::default()
    });
    let (tx_link, rx_link) = w.borrow_mut().detach_port(0)?;
    let port = PortAddr::sim(2)?;
    let peer = PortAddr::sim(1)?;
    let ctx = Context::new(Rnic::open(SimNic::new(&w, 0)?)?, port)?;
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq_with(CqAttr {
        entries: 1024,
        irq: false,
        irq_vector: 0,
    })?;
    let wmr = pd.reg_mr(
        &ctx.alloc_buf(MR_BYTES)?,
        AccessFlags::LOCAL_WRITE
            | AccessFlags::REMOTE_WRITE
            | AccessFlags::REMOTE_READ
            | AccessFlags::REMOTE_ATOMIC,
    )?;
    let amr = pd.reg_mr(
        &ctx.alloc_buf(MR_BYTES)?,
        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_ATOMIC,
    )?;
    let rmr = pd.reg_mr(&ctx.alloc_buf(MR_BYTES)?, AccessFlags::REMOTE_READ)?;
    let recv = pd.reg_mr(
        &ctx.alloc_buf((QPS + 1) * RECV_WQES * RECV_BYTES)?,
        AccessFlags::LOCAL_WRITE,
    )?;
    let rig = Rig {
        w: w.clone(),
        ctx: &ctx,
        cq,
        wmr,
        amr,
        rmr,
        recv,
        peer,
    };
    let caps = QpCaps {
        max_recv_wr: RECV_WQES as u32,
        ..QpCaps::default()
    };
    let mut qps = Vec::new();
    for k in 0..QPS {
        let qp = pd.create_qp(&rig.cq, &rig.cq, caps)?;
        rig.connect(&qp, k)?;
        qps.push(qp);
    }
    let mut t = Target {
        hdr: Hdr {
            dmac: port.mac,
            smac: peer.mac,
            sip: peer.ipv4,
            dip: port.ipv4,
            sport: 0xC0DE,
        },
        qps: qps
            .iter()
            .enumerate()
            .map(|(k, q)| (q.qpn(), MTUS[k] as usize, PEER_PSN[k]))
            .collect(),
        wmr: (rig.wmr.iova(), rig.wmr.rkey()),
        amr: (rig.amr.iova(), rig.amr.rkey()),
        rmr: (rig.rmr.iova(), rig.rmr.rkey()),
        recent_atomics: Vec::new(),
    };
    let qpns: Vec<u32> = t.qps.iter().map(|q| q.0).collect();
    let mut o = FuzzOutcome {
        seed,
        frames: 0,
        valid: 0,
        mutated: 0,
        recomputed: 0,
        sent: 0,
        cycles: 0,
        completions: 0,
        error_completions: 0,
        qp_resets: 0,
        rx_fifo_drops: 0,
        dma_bytes: 0,
        counters: Vec::new(),
    };
    let t0 = {
        let mut w = w.borrow_mut();
        w.wire.clear();
        w.cycle
    };
    let mut wc = vec![WorkCompletion::default(); 256];
    let mut chunk_no = 0usize;
    // frames of the current message still to inject (reversed), and which of them to mutate:
    // half of the messages have each frame mutated with probability 3/4, the other half
    // exactly one frame (so the rest of the message is valid around it)
    let mut pending: Vec<Vec<u8>> = Vec::new();
    let mut hit: Vec<bool> = Vec::new();
    while o.frames < frames {
        let mut chunk = Vec::new();
        while chunk.len() < CHUNK && o.frames + chunk.len() < frames {
            if pending.is_empty() {
                pending = message(&mut rng, &mut t);
                pending.reverse();
                hit = if rng.random() {
                    (0..pending.len()).map(|_| rng.random_bool(0.75)).collect()
                } else {
                    let one = rng.random_range(0..pending.len());
                    (0..pending.len()).map(|i| i == one).collect()
                };
            }
            let Some(mut f) = pending.pop() else { break };
            if hit.pop().unwrap_or(false) {
                let k = if rng.random_bool(0.6) {
                    1
                } else {
                    rng.random_range(2..=3)
                };
                for _ in 0..k {
                    mutate(&mut rng, &mut f, &qpns);
                }
                if rng.random() && fix_icrc(&mut f) {
                    if rng.random_bool(0.9) {
                        ip_checksum(&mut f);
                        fix_icrc(&mut f);
                    }
                    o.recomputed += 1;
                } else {
                    o.mutated += 1;
                }
            } else {
                o.valid += 1;
            }
            // a MAC pads what it delivers to 60 bytes
            chunk.push(crate::extport::pad(f));
        }
        {
            let mut w = w.borrow_mut();
            for f in &chunk {
                w.inject_rx(0, f.clone())?;
            }
        }
        o.frames += chunk.len();
        let describe = || {
            let mut s = format!("seed {seed} chunk {chunk_no}, its frames:");
            for f in &chunk {
                s.push_str(&format!("\n  {}", hex(f)));
            }
            s
        };
        rig.settle(&describe)?;
        {
            let mut w = w.borrow_mut();
            o.dma_bytes += w
                .audit_dma_writes(0, 0, &rig.allowed())
                .and_then(|n| rig.atomic_only_writes(&w).map(|()| n))
                .map_err(|e| Error::Check(format!("seed {seed} chunk {chunk_no}: {e}")))?;
            w.nics[0].mem.audit.clear();
        }
        // drain the CQ, put QPs the device stopped back into RTS, repost receive WQEs
        loop {
            let n = rig.cq.poll(&mut wc)?;
            o.completions += n;
            o.error_completions += wc[..n].iter().filter(|c| !c.is_ok()).count();
            if n == 0 {
                break;
            }
        }
        let mut touched = false;
        for (k, q) in qps.iter().enumerate() {
            // the next chunk starts at the PSN each QP expects now
            let (qc, rs) = q.query_device()?;
            t.qps[k].2 = rs.rq_psn & rnic_abi::roce::PSN_MASK;
            if qc.state != qp_state::RTS {
                q.modify_to_reset()?;
                rig.connect(q, k)?;
                t.qps[k].2 = PEER_PSN[k];
                o.qp_resets += 1;
                touched = true;
            } else if q.outstanding()?.1 < RECV_WQES / 2 {
                rig.post_recvs(q, k)?;
                touched = true;
            }
        }
        if touched {
            rig.settle(&|| format!("seed {seed} chunk {chunk_no}: the QP resets"))?;
        }
        chunk_no += 1;
        // keep memory flat on long runs
        let mut w = w.borrow_mut();
        o.sent += w.sent_by(0, 0).len();
        w.wire.clear();
    }
    o.cycles = w.borrow().cycle - t0;

    // a valid WRITE ONLY to a fresh QP lands byte-exact and is ACKed
    let fresh = pd.create_qp(&rig.cq, &rig.cq, caps)?;
    rig.connect(&fresh, QPS)?;
    let len = 3000;
    let data: Vec<u8> = bytes(&mut rng, len);
    let off = 4096;
    let psn = PEER_PSN[0];
    let f = frame(
        &t.hdr,
        op::WRITE_ONLY,
        fresh.qpn(),
        psn,
        true,
        &reth(rig.wmr.iova() + off as u64, rig.wmr.rkey(), len as u32),
        &data,
    );
    let mark = {
        let mut w = w.borrow_mut();
        let mark = w.wire.len();
        w.inject_rx(0, f.clone())?;
        mark
    };
    rig.settle(&|| format!("seed {seed}: the final WRITE {}", hex(&f)))?;
    let acks: Vec<Vec<u8>> = w
        .borrow()
        .sent_by(0, mark)
        .iter()
        .map(|f| f.data.clone())
        .collect();
    ensure!(
        acks.len() == 1,
        "seed {seed}: the final WRITE got {} answers, not one ACK: {:?}",
        acks.len(),
        acks.iter().map(|a| hex(a)).collect::<Vec<_>>()
    );
    let a = &acks[0];
    ensure!(
        a.len() >= EXT + 4
            && a[BTH] == op::ACKNOWLEDGE
            && u32::from_be_bytes([0, a[BTH + 5], a[BTH + 6], a[BTH + 7]]) == PEER_QPN + QPS as u32
            && u32::from_be_bytes([0, a[BTH + 9], a[BTH + 10], a[BTH + 11]]) == psn
            && a[EXT] == aeth::ACK,
        "seed {seed}: the final WRITE's answer is not an ACK of PSN {psn:#x}: {}",
        hex(a)
    );
    let mut got = vec![0u8; len];
    rig.wmr.read(off, &mut got)?;
    ensure!(
        got == data,
        "seed {seed}: the final WRITE did not land byte-exact"
    );
    {
        let w = w.borrow();
        o.dma_bytes += w
            .audit_dma_writes(0, 0, &rig.allowed())
            .and_then(|n| rig.atomic_only_writes(&w).map(|()| n))
            .map_err(|e| Error::Check(format!("seed {seed}, final WRITE: {e}")))?;
        o.rx_fifo_drops = w.links[rx_link].stats.rx_fifo_drops;
        let _ = tx_link;
    }
    o.counters = rig
        .ctx
        .engine_counters()?
        .into_iter()
        .filter(|c| c.1 != 0)
        .collect();
    Ok(o)
}
