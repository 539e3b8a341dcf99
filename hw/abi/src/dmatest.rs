//! Reference model of the DMA self-test (the RTL implements the same function; tests compare).

/// Pattern byte `i` of a self-test buffer.
pub const fn pattern_byte(seed: u8, i: u64) -> u8 {
    seed.wrapping_add(i as u8)
}

/// The self-test checksum over the bytes of a transfer, as the device computes it on its
/// 64-byte beats: bytes outside `[iova, iova+len)` count as zero; each 64-byte-aligned beat is
/// folded into 32 bits by XOR of its 16 little-endian words; `acc = rotl(acc, 1) ^ fold`.
/// `read(addr)` returns the byte at a host address.
pub fn checksum(iova: u64, len: u64, mut read: impl FnMut(u64) -> u8) -> u32 {
    if len == 0 {
        return 0;
    }
    let first = iova & !63;
    let end = iova + len;
    let mut acc: u32 = 0;
    let mut beat = first;
    while beat < end {
        let mut fold = 0u32;
        for w in 0..16u64 {
            let mut word = 0u32;
            for b in 0..4u64 {
                let a = beat + w * 4 + b;
                let byte = if a >= iova && a < end { read(a) } else { 0 };
                word |= (byte as u32) << (8 * b);
            }
            fold ^= word;
        }
        acc = acc.rotate_left(1) ^ fold;
        beat += 64;
    }
    acc
}

/// Checksum of the expected pattern at `iova`.
pub fn pattern_checksum(iova: u64, len: u64, seed: u8) -> u32 {
    checksum(iova, len, |a| pattern_byte(seed, a - iova))
}
