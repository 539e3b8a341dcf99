//! Streaming RoCE v2 ICRC (IBTA Vol. 1 Annex A17, RoCE v2 over IPv4) for the 512-bit datapath.
//!
//! The ICRC is the standard reflected CRC-32 (polynomial 0x04C11DB7, initial value and final
//! XOR all ones) over: 8 bytes of 0xFF (stand-in for the masked LRH), the IPv4 header with TOS
//! (DSCP+ECN), TTL and header checksum set to ones, the UDP header with its checksum set to
//! ones, the BTH with byte 4 (FECN, BECN, resv6) set to ones, and everything after the BTH up to
//! the ICRC. The Ethernet header is not covered. The ICRC is stored least significant byte
//! first. Every masked field is required by the shared SoftRoCE vectors: leaving any one out
//! makes all 180 frames fail (see the tests).
//!
//! Interface: an AXI4-Stream tap that is always ready (it observes a stream, it never stalls
//! it, so it has no `tready`): `tdata` little-endian (byte 0 = bits 7:0), `tkeep` contiguous
//! from bit 0 and non-zero on the last beat, `tlast`, `tvalid`. The frame is Ethernet (14) +
//! IPv4 without options (20) + UDP (8) + BTH (12) + the rest; the masked bytes all lie in beat
//! 0. With `rx` = 0 (TX) the frame ends before the ICRC and `icrc` is the ICRC to append. With
//! `rx` = 1 the frame ends with its 4 ICRC bytes (Ethernet padding already trimmed by the
//! parser): `icrc` is the ICRC of everything before them and `icrc_ok` says whether they match.
//! `rx` is sampled with the last beat. Results: `done` pulses for one cycle 3 clock cycles
//! after the edge that accepts the last beat; `icrc` / `icrc_ok` hold until the next result.
//! Frames may follow each other back to back.
//!
//! Structure (all generated as Verilog text from matrices computed here at elaboration):
//! 1. per beat, one 544->32 XOR matrix (512 data bits + 32 state bits) of the CRC over all 64
//!    byte lanes, with lanes outside `tkeep` zeroed. On the first beat, the state is 0 and lanes
//!    0..9 are 0 and lanes 10..13 are 0xFF: from the all-ones initial value, four 0xFF bytes
//!    give state 0, and zero bytes keep state 0, so this equals "init, 8 x 0xFF"; the masked
//!    header bytes are forced to 0xFF in the same place;
//! 2. the last beat's state is the CRC of the frame followed by `k` = 64 - n zero bytes. The
//!    zero-byte advance is an invertible linear map, so two pipeline stages undo it with
//!    conditional fixed 32x32 matrices for 1, 2, 4 (stage 2) and 8, 16, 32 bytes (stage 3): a
//!    few hundred LUTs instead of 64 tail matrices of 544 inputs;
//! 3. RX: the state after the whole frame (ICRC included) equals the advance by 4 bytes of
//!    (state before the ICRC) ^ (ICRC word), so `icrc` = !(unadvance4(state) ^ trailer), and
//!    `icrc_ok` is `state == 0xDEBB20E3` (the CRC-32 residue). The trailer (the frame's last 4
//!    bytes, which may start in the previous beat) is picked from the last beat and the
//!    previous beat's top 3 bytes.
//!
//! `update()` is a cycle model of the same registers written with byte-serial CRC code
//! ([`CycleModel`]); [`icrc`] and [`icrc_matches`] are the frame-level reference from the spec.

use rust_hdl::prelude::*;
use std::fmt::Write;

/// Reflected CRC-32 polynomial.
const POLY: u32 = 0xEDB8_8320;
/// Bytes of the frame before the IPv4 header.
pub const ETH_LEN: usize = 14;
/// Ethernet + IPv4 (no options) + UDP + BTH.
pub const HDR_LEN: usize = 54;
/// Frame offsets of the bytes that the ICRC covers as all ones: IPv4 TOS, TTL, header checksum
/// (2), UDP checksum (2), BTH byte 4 (FECN, BECN, resv6).
pub const MASKED: [usize; 7] = [15, 22, 24, 25, 40, 41, 46];
/// Raw CRC state after a message followed by its own (little-endian) CRC-32.
pub const RESIDUE: u32 = 0xDEBB_20E3;

/// Raw (no init, no final XOR) reflected CRC-32 state update, bit-serial.
pub fn crc_raw(mut s: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        s ^= b as u32;
        for _ in 0..8 {
            s = if s & 1 == 1 { (s >> 1) ^ POLY } else { s >> 1 };
        }
    }
    s
}

/// Undo `bytes` zero-byte steps of the raw state update (the step is invertible: the top bit
/// after a step is the bit that was shifted out, because the polynomial has bit 31 set).
pub fn unadvance(mut s: u32, bytes: usize) -> u32 {
    for _ in 0..8 * bytes {
        let out = s >> 31;
        if out == 1 {
            s ^= POLY;
        }
        s = (s << 1) | out;
    }
    s
}

/// The ICRC of `frame` (Ethernet frame without the ICRC), from the spec: `None` if the frame
/// is shorter than the headers.
pub fn icrc(frame: &[u8]) -> Option<u32> {
    if frame.len() < HDR_LEN {
        return None;
    }
    let mut covered = vec![0xFFu8; 8];
    covered.extend_from_slice(&frame[ETH_LEN..]);
    for m in MASKED {
        covered[m - ETH_LEN + 8] = 0xFF;
    }
    Some(!crc_raw(!0, &covered))
}

/// True if `frame` ends with its correct ICRC.
pub fn icrc_matches(frame: &[u8]) -> bool {
    if frame.len() < HDR_LEN + 4 {
        return false;
    }
    let (body, tail) = frame.split_at(frame.len() - 4);
    let want = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
    icrc(body) == Some(want)
}

/// One beat as the block sees it.
#[derive(Clone, Debug)]
pub struct Beat {
    pub data: [u8; 64],
    pub keep: u64,
    pub last: bool,
    pub valid: bool,
    pub rx: bool,
}

impl Default for Beat {
    fn default() -> Self {
        Beat {
            data: [0; 64],
            keep: 0,
            last: false,
            valid: false,
            rx: false,
        }
    }
}

/// Register-level model of the block (what `update()` runs at each rising edge).
#[derive(Clone, Debug)]
pub struct CycleModel {
    first: bool,
    acc: u32,
    tail3: [u8; 3],
    p1: (bool, u32, u32, u32, bool),
    p2: (bool, u32, u32, u32, bool),
    /// Outputs: `done`, `icrc`, `icrc_ok`.
    pub done: bool,
    pub icrc: u32,
    pub icrc_ok: bool,
}

impl Default for CycleModel {
    fn default() -> Self {
        CycleModel {
            first: true,
            acc: 0,
            tail3: [0; 3],
            p1: (false, 0, 0, 0, false),
            p2: (false, 0, 0, 0, false),
            done: false,
            icrc: 0,
            icrc_ok: false,
        }
    }
}

impl CycleModel {
    /// One rising clock edge with these inputs.
    pub fn edge(&mut self, rst: bool, b: &Beat) {
        if rst {
            *self = CycleModel::default();
            return;
        }
        // lanes: keep, then the first-beat substitution
        let mut d = [0u8; 64];
        for (k, v) in d.iter_mut().enumerate() {
            if b.keep >> k & 1 == 1 {
                *v = b.data[k];
            }
        }
        if self.first {
            d[..10].fill(0);
            d[10..ETH_LEN].fill(0xFF);
            for m in MASKED {
                d[m] = 0xFF;
            }
        }
        let crc_beat = crc_raw(if self.first { 0 } else { self.acc }, &d);
        // n = index of the highest kept lane + 1; k = 64 - n zero lanes at the end; the
        // trailer's first byte is window byte n - 1. (tkeep = 0 is not a valid last beat: the
        // RTL then uses k = 0 and idx = 0, and so does this model.)
        let (k, idx) = match b.keep.leading_zeros() as usize {
            64 => (0, 0),
            z => (z, 63 - z),
        };
        let mut win = self.tail3.to_vec();
        win.extend_from_slice(&b.data);
        let t = u32::from_le_bytes([win[idx], win[idx + 1], win[idx + 2], win[idx + 3]]);
        // pipeline (right to left, so each stage sees the previous edge's values)
        let (v2, s2, k2, t2, rx2) = self.p2;
        self.done = v2;
        if v2 {
            let total = if k2 & 1 == 1 { unadvance(s2, 8) } else { s2 };
            let total = if k2 & 2 == 2 {
                unadvance(total, 16)
            } else {
                total
            };
            let total = if k2 & 4 == 4 {
                unadvance(total, 32)
            } else {
                total
            };
            self.icrc = if rx2 {
                !(unadvance(total, 4) ^ t2)
            } else {
                !total
            };
            self.icrc_ok = rx2 && total == RESIDUE;
        }
        let (v1, s1, k1, t1, rx1) = self.p1;
        self.p2.0 = v1;
        if v1 {
            let mut s = s1;
            for bit in 0..3 {
                if k1 >> bit & 1 == 1 {
                    s = unadvance(s, 1 << bit);
                }
            }
            self.p2 = (true, s, k1 >> 3, t1, rx1);
        }
        self.p1.0 = b.valid && b.last;
        if b.valid && b.last {
            self.p1 = (true, crc_beat, k as u32, t, b.rx);
        }
        if b.valid {
            self.first = b.last;
            self.acc = crc_beat;
            self.tail3.copy_from_slice(&b.data[61..]);
        }
    }
}

/// The block: see the module documentation.
#[derive(LogicBlock, Default)]
pub struct Icrc {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub tdata: Signal<In, Bits<512>>,
    pub tkeep: Signal<In, Bits<64>>,
    pub tlast: Signal<In, Bit>,
    pub tvalid: Signal<In, Bit>,
    /// 1: the frame ends with its ICRC (check); 0: it does not (generate). Sampled on tlast.
    pub rx: Signal<In, Bit>,
    pub done: Signal<Out, Bit>,
    pub icrc: Signal<Out, Bits<32>>,
    pub icrc_ok: Signal<Out, Bit>,
    _m: CycleModel,
}

impl Logic for Icrc {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let v = self.tdata.val();
            let mut data = [0u8; 64];
            for (k, d) in data.iter_mut().enumerate() {
                *d = v.get_bits::<8>(8 * k).index() as u8;
            }
            let beat = Beat {
                data,
                keep: self.tkeep.val().to_u64(),
                last: self.tlast.val(),
                valid: self.tvalid.val(),
                rx: self.rx.val(),
            };
            self._m.edge(self.rst.val(), &beat);
        }
        self.done.next = self._m.done;
        self.icrc.next = (self._m.icrc as u64).into();
        self.icrc_ok.next = self._m.icrc_ok;
    }
    fn connect(&mut self) {
        self.done.connect();
        self.icrc.connect();
        self.icrc_ok.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(icrc_verilog())
    }
}

/// Row masks of the one-beat matrix: for output bit j, the data bits (64 bytes, byte k bit b
/// = data bit 8k+b) and the state bits that it XORs.
pub fn beat_matrix() -> Vec<([u8; 64], u32)> {
    let mut rows = vec![([0u8; 64], 0u32); 32];
    let mut block = [0u8; 64];
    for i in 0..512 {
        block[i / 8] = 1 << (i % 8);
        let col = crc_raw(0, &block);
        block[i / 8] = 0;
        for (j, row) in rows.iter_mut().enumerate() {
            if col >> j & 1 == 1 {
                row.0[i / 8] |= 1 << (i % 8);
            }
        }
    }
    for i in 0..32 {
        let col = crc_raw(1 << i, &block);
        for (j, row) in rows.iter_mut().enumerate() {
            if col >> j & 1 == 1 {
                row.1 |= 1 << i;
            }
        }
    }
    rows
}

/// Row masks of `unadvance(_, bytes)` as a 32x32 matrix.
pub fn unadvance_matrix(bytes: usize) -> [u32; 32] {
    let mut rows = [0u32; 32];
    for i in 0..32 {
        let col = unadvance(1 << i, bytes);
        for (j, row) in rows.iter_mut().enumerate() {
            if col >> j & 1 == 1 {
                *row |= 1 << i;
            }
        }
    }
    rows
}

/// `dst[j] = sel ? ^(src & row_j) : src[j]` for all 32 bits.
fn cond_matrix(s: &mut String, dst: &str, src: &str, sel: &str, rows: &[u32; 32]) {
    for (j, r) in rows.iter().enumerate() {
        let _ = writeln!(
            s,
            "    {dst}[{j}] = {sel} ? (^({src} & 32'h{r:08x})) : {src}[{j}];"
        );
    }
}

/// The generated module body.
pub fn icrc_verilog() -> String {
    let mut s = String::from(
        "// generated by rnic_rtl::icrc: see icrc.rs for the structure
reg first;
reg [31:0] acc;
reg [23:0] tail3;
reg [511:0] d;
reg [31:0] cin;
reg [31:0] crc_beat;
reg [63:0] hot;
reg [5:0] k;
reg [5:0] idx;
reg [535:0] win;
reg p1_v;
reg p1_rx;
reg [31:0] p1_s;
reg [31:0] p1_t;
reg [5:0] p1_k;
reg p2_v;
reg p2_rx;
reg [31:0] p2_s;
reg [31:0] p2_t;
reg [2:0] p2_k;
reg [31:0] a1;
reg [31:0] a2;
reg [31:0] a3;
reg [31:0] b1;
reg [31:0] b2;
reg [31:0] b3;
reg [31:0] fin;
// One clocked process. The matrices are blocking temporaries at its top: synthesis sees them
// computed every cycle (plain combinational logic, the same netlist as an always @(*)); the
// simulator computes them only on cycles that use them (tvalid / p1_v / p2_v). A guard in an
// always @(*) would not do: the simulator's dataflow pass lifts the matrices out of it.
// verilator lint_off BLKSEQ
always @(posedge clock) begin
`ifdef VERILATOR
    if (tvalid | p1_v | p2_v) begin
`else
    begin
`endif
",
    );
    for k in 0..64 {
        let (h, l) = (8 * k + 7, 8 * k);
        let _ = writeln!(s, "    d[{h}:{l}] = tkeep[{k}] ? tdata[{h}:{l}] : 8'd0;");
    }
    s.push_str(
        "    if (first) begin\n        d[79:0] = 80'd0;\n        d[111:80] = 32'hffffffff;\n",
    );
    for m in MASKED {
        let _ = writeln!(s, "        d[{}:{}] = 8'hff;", 8 * m + 7, 8 * m);
    }
    s.push_str("    end\n    cin = first ? 32'd0 : acc;\n");
    for (j, (dm, cm)) in beat_matrix().iter().enumerate() {
        let hex: String = dm.iter().rev().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(
            s,
            "    crc_beat[{j}] = (^(d & 512'h{hex})) ^ (^(cin & 32'h{cm:08x}));"
        );
    }
    // one-hot position of the last kept lane: lane i hot means n = i + 1
    for i in 0..63 {
        let _ = writeln!(s, "    hot[{i}] = tkeep[{i}] & ~tkeep[{}];", i + 1);
    }
    s.push_str("    hot[63] = tkeep[63];\n");
    for b in 0..6 {
        let (mut km, mut im) = (0u64, 0u64);
        for i in 0..64u64 {
            km |= ((63 - i) >> b & 1) << i;
            im |= (i >> b & 1) << i;
        }
        let _ = writeln!(s, "    k[{b}] = |(hot & 64'h{km:016x});");
        let _ = writeln!(s, "    idx[{b}] = |(hot & 64'h{im:016x});");
    }
    s.push_str("    win = {tdata, tail3};\n");
    cond_matrix(&mut s, "a1", "p1_s", "p1_k[0]", &unadvance_matrix(1));
    cond_matrix(&mut s, "a2", "a1", "p1_k[1]", &unadvance_matrix(2));
    cond_matrix(&mut s, "a3", "a2", "p1_k[2]", &unadvance_matrix(4));
    cond_matrix(&mut s, "b1", "p2_s", "p2_k[0]", &unadvance_matrix(8));
    cond_matrix(&mut s, "b2", "b1", "p2_k[1]", &unadvance_matrix(16));
    cond_matrix(&mut s, "b3", "b2", "p2_k[2]", &unadvance_matrix(32));
    for (j, r) in unadvance_matrix(4).iter().enumerate() {
        let _ = writeln!(s, "    fin[{j}] = (^(b3 & 32'h{r:08x})) ^ p2_t[{j}];");
    }
    let _ = write!(
        s,
        "    end
    if (rst) begin
        first <= 1'b1;
        p1_v <= 1'b0;
        p2_v <= 1'b0;
        done <= 1'b0;
        icrc <= 32'd0;
        icrc_ok <= 1'b0;
    end else begin
        if (tvalid) begin
            first <= tlast;
            acc <= crc_beat;
            tail3 <= tdata[511:488];
        end
        p1_v <= tvalid & tlast;
        if (tvalid & tlast) begin
            p1_s <= crc_beat;
            p1_k <= k;
            p1_t <= win[{{idx, 3'b000}} +: 32];
            p1_rx <= rx;
        end
        p2_v <= p1_v;
        if (p1_v) begin
            p2_s <= a3;
            p2_k <= p1_k[5:3];
            p2_t <= p1_t;
            p2_rx <= p1_rx;
        end
        done <= p2_v;
        if (p2_v) begin
            icrc <= p2_rx ? ~fin : ~b3;
            icrc_ok <= p2_rx & (b3 == 32'h{RESIDUE:08x});
        end
    end
end
// verilator lint_on BLKSEQ
"
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use crate::common::vlt::DynModel;
    use rand::Rng;
    use rand_chacha::ChaCha8Rng;

    fn vectors() -> Vec<Vec<u8>> {
        let mut out = vec![];
        for d in vector_frames() {
            let roce = d.len() >= HDR_LEN + 4
                && d[12..14] == [0x08, 0x00]
                && d[14] == 0x45
                && d[23] == 17
                && d[36..38] == 4791u16.to_be_bytes();
            if roce {
                out.push(d);
            }
        }
        assert_eq!(out.len(), 180, "RoCE v2 frames in the shared vectors");
        out
    }

    /// The Verilated block and the cycle model in lockstep: every cycle's outputs compared.
    struct Bench {
        m: DynModel,
        model: CycleModel,
        r: ChaCha8Rng,
        results: Vec<(u32, bool)>,
    }

    impl Bench {
        fn new(seed: u64) -> Bench {
            Self::of(seed, model(Icrc::default(), "icrc_block"))
        }
        /// The synthesis form (no simulator-only idle guard: `model_synth_form`).
        fn synth(seed: u64) -> Bench {
            Self::of(seed, model_synth_form(Icrc::default(), "icrc_block"))
        }
        fn of(seed: u64, mut m: DynModel) -> Bench {
            reset(&mut m);
            Bench {
                m,
                model: CycleModel::default(),
                r: rng(seed),
                results: vec![],
            }
        }
        fn cycle(&mut self, b: &Beat) {
            self.m.set_bytes("tdata", &b.data);
            self.m.set("tkeep", b.keep);
            self.m.set("tlast", b.last as u64);
            self.m.set("tvalid", b.valid as u64);
            self.m.set("rx", b.rx as u64);
            self.m.tick();
            let got = (
                self.m.bit("done"),
                self.m.get("icrc") as u32,
                self.m.bit("icrc_ok"),
            );
            let want = (self.model.done, self.model.icrc, self.model.icrc_ok);
            assert_eq!(got, want, "RTL vs cycle model at cycle {}", self.m.cycle);
            if got.0 {
                self.results.push((got.1, got.2));
            }
            self.model.edge(false, b);
        }
        /// Stream one frame with idle cycles (probability `idle`) before and inside it.
        fn send(&mut self, f: &[u8], rx: bool, idle: f64) {
            let beats: Vec<&[u8]> = f.chunks(64).collect();
            for (i, c) in beats.iter().enumerate() {
                while chance(&mut self.r, idle) {
                    // junk on the bus while tvalid is low
                    let mut junk = Beat {
                        keep: self.r.random(),
                        last: self.r.random(),
                        rx: self.r.random(),
                        ..Beat::default()
                    };
                    self.r.fill(&mut junk.data[..]);
                    self.cycle(&junk);
                }
                let mut b = Beat {
                    keep: if c.len() == 64 {
                        u64::MAX
                    } else {
                        (1 << c.len()) - 1
                    },
                    last: i + 1 == beats.len(),
                    valid: true,
                    rx,
                    ..Beat::default()
                };
                b.data[..c.len()].copy_from_slice(c);
                // bytes outside tkeep are junk
                for d in &mut b.data[c.len()..] {
                    *d = self.r.random();
                }
                self.cycle(&b);
            }
        }
        fn drain(&mut self) {
            for _ in 0..4 {
                self.cycle(&Beat::default());
            }
        }
    }

    fn trailer(f: &[u8]) -> u32 {
        let t = &f[f.len() - 4..];
        u32::from_le_bytes([t[0], t[1], t[2], t[3]])
    }

    #[test]
    fn spec_reference_matches_vectors_and_every_mask_is_needed() {
        let v = vectors();
        assert!(v.iter().all(|f| icrc_matches(f)));
        assert_eq!(RESIDUE, crc_raw(!0, &[0; 4]));
        assert_eq!(!crc_raw(!0, b"123456789"), 0xCBF4_3926);
        // drop one masked byte at a time: then no frame matches
        for skip in MASKED {
            let ok = v
                .iter()
                .filter(|f| {
                    let body = &f[..f.len() - 4];
                    let mut c = vec![0xFFu8; 8];
                    c.extend_from_slice(&body[ETH_LEN..]);
                    for m in MASKED.iter().filter(|m| **m != skip) {
                        c[m - ETH_LEN + 8] = 0xFF;
                    }
                    !crc_raw(!0, &c) == trailer(f)
                })
                .count();
            assert_eq!(ok, 0, "frames still valid without masking byte {skip}");
        }
    }

    #[test]
    fn vectors_check_in_rtl() {
        let v = vectors();
        let mut b = Bench::new(31);
        for (i, f) in v.iter().enumerate() {
            b.send(f, true, [0.0, 0.3, 0.7][i % 3]);
        }
        b.drain();
        assert_eq!(b.results.len(), v.len());
        for (i, (f, (c, ok))) in v.iter().zip(&b.results).enumerate() {
            assert!(*ok, "frame {i}: icrc_ok");
            assert_eq!(*c, trailer(f), "frame {i}: icrc");
        }
        // the same frames without their ICRC, TX mode: the ICRC to append
        let mut b = Bench::new(32);
        for (i, f) in v.iter().enumerate() {
            b.send(&f[..f.len() - 4], false, [0.5, 0.0][i % 2]);
        }
        b.drain();
        let got: Vec<u32> = b.results.iter().map(|r| r.0).collect();
        let want: Vec<u32> = v.iter().map(|f| trailer(f)).collect();
        assert_eq!(got, want);
        assert!(b.results.iter().all(|r| !r.1), "icrc_ok is 0 in TX mode");
    }

    #[test]
    fn flipped_bits_in_rtl() {
        let v = vectors();
        let mut r = rng(33);
        let mut b = Bench::new(34);
        let mut expect = vec![];
        for (i, f) in v.iter().enumerate() {
            // a covered, unmasked bit (the ICRC itself included): bad
            let mut g = f.clone();
            let pos = loop {
                let p = r.random_range(ETH_LEN..g.len());
                if !MASKED.contains(&p) {
                    break p;
                }
            };
            g[pos] ^= 1 << r.random_range(0..8);
            assert!(!icrc_matches(&g));
            b.send(&g, true, [0.0, 0.4][i % 2]);
            expect.push(false);
            // a masked field (TOS, TTL, IP checksum, UDP checksum, BTH byte 4): still good
            let mut g = f.clone();
            g[MASKED[r.random_range(0..MASKED.len())]] ^= 1 << r.random_range(0..8);
            b.send(&g, true, 0.2);
            expect.push(true);
            // the Ethernet header is not covered
            let mut g = f.clone();
            g[r.random_range(0..ETH_LEN)] ^= 1 << r.random_range(0..8);
            b.send(&g, true, 0.0);
            expect.push(true);
        }
        b.drain();
        let got: Vec<bool> = b.results.iter().map(|r| r.1).collect();
        assert_eq!(got, expect);
    }

    /// The block's rust-hdl model (`update()`) in rust-hdl's own simulator, on vector frames.
    #[test]
    fn rust_hdl_simulation_of_the_model() {
        let frames: Vec<Vec<u8>> = vectors().into_iter().step_by(6).collect();
        let want: Vec<u32> = frames.iter().map(|f| trailer(f)).collect();
        let mut sim = Simulation::<Icrc>::new();
        sim.add_clock(5, |x: &mut Box<Icrc>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<Icrc>| {
            let mut x = sim.init()?;
            let mut got = vec![];
            for f in &frames {
                let n = f.len().div_ceil(64);
                for (i, c) in f.chunks(64).enumerate() {
                    let mut d = Bits::<512>::default();
                    for (k, b) in c.iter().enumerate() {
                        d = d | (Bits::<512>::from(*b as u64) << (8 * k as u64));
                    }
                    x.tdata.next = d;
                    x.tkeep.next = if c.len() == 64 {
                        u64::MAX.into()
                    } else {
                        ((1u64 << c.len()) - 1).into()
                    };
                    x.tlast.next = i + 1 == n;
                    x.tvalid.next = true;
                    x.rx.next = true;
                    wait_clock_cycle!(sim, clock, x);
                    if x.done.val() {
                        got.push((x.icrc.val().to_u64() as u32, x.icrc_ok.val()));
                    }
                }
            }
            x.tvalid.next = false;
            for _ in 0..5 {
                wait_clock_cycle!(sim, clock, x);
                if x.done.val() {
                    got.push((x.icrc.val().to_u64() as u32, x.icrc_ok.val()));
                }
            }
            let expect: Vec<(u32, bool)> = want.iter().map(|w| (*w, true)).collect();
            sim_assert!(sim, got == expect, x);
            sim.done(x)
        });
        let mut uut = Icrc::default();
        uut.connect_all();
        sim.run(Box::new(uut), 100_000)
            .expect("rust-hdl simulation");
    }

    /// Random frames covering all 64 tail lengths, both modes, against the cycle model (every
    /// cycle) and the spec reference.
    #[test]
    fn random_frames_all_tail_lengths() {
        random_frames(Bench::new(36));
    }

    /// The same frames through the form synthesis builds (the matrices computed every
    /// cycle, not only under the simulator's `tvalid | p1_v | p2_v` guard).
    #[test]
    fn random_frames_synthesis_form() {
        random_frames(Bench::synth(36));
    }

    fn random_frames(mut b: Bench) {
        let mut r = rng(35);
        let mut expect = vec![];
        for rep in 0..3 {
            for res in 0..64usize {
                let base = 64 * r.random_range(0..34) + res;
                let len = if base < 60 { base + 64 } else { base };
                assert!((60..=2200).contains(&len) && len % 64 == res);
                let mut f: Vec<u8> = (0..len).map(|_| r.random()).collect();
                let idle = [0.0, 0.3, 0.8][rep];
                // TX: the whole frame is covered
                b.send(&f, false, idle);
                expect.push((icrc(&f).unwrap(), false));
                // RX: the last 4 bytes are the ICRC (right or wrong)
                let c = icrc(&f[..len - 4]).unwrap();
                let good = r.random_bool(0.5);
                let t = if good {
                    c
                } else {
                    c ^ (1 << r.random_range(0..32))
                };
                f[len - 4..].copy_from_slice(&t.to_le_bytes());
                b.send(&f, true, idle);
                expect.push((c, good));
            }
        }
        b.drain();
        assert_eq!(b.results, expect);
    }
}
