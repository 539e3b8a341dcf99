//! Per-lane datapath of the DMA self-test, generated as Verilog text from Rust (64 byte lanes
//! of pattern generation, byte masks, XOR folds and the per-lane mismatch bits are a lot of unrolled
//! logic for `#[hdl_gen]`). `update()` is the Rust model of the same function; the RTL is
//! co-simulated against `rnic_abi::dmatest` through the whole engine in the simulator tests.
//!
//! For one 64-byte beat: lane k is valid when `(!first || k >= lo) && (!last || k < hi)`;
//! its pattern byte is `base + k`; invalid lanes are zero in `pattern` and in the masked data.

use rust_hdl::prelude::*;
use std::fmt::Write;

#[derive(LogicBlock, Default)]
pub struct DmaLanes {
    /// Pattern byte of lane 0 of this beat.
    pub base: Signal<In, Bits<8>>,
    /// First valid lane of the first beat.
    pub lo: Signal<In, Bits<6>>,
    /// One past the last valid lane of the last beat (1..=64).
    pub hi: Signal<In, Bits<7>>,
    pub first: Signal<In, Bit>,
    pub last: Signal<In, Bit>,
    /// Compute only when set (all outputs 0 otherwise): the simulator skips idle cycles.
    pub en: Signal<In, Bit>,
    /// Data read from host memory.
    pub data: Signal<In, Bits<512>>,
    pub strb: Signal<Out, Bits<64>>,
    pub pattern: Signal<Out, Bits<512>>,
    pub fold_pattern: Signal<Out, Bits<32>>,
    pub fold_data: Signal<Out, Bits<32>>,
    /// Lane k set: a valid lane whose data byte differs from its pattern byte (the self-test
    /// registers these and counts them a cycle later, [`crate::common::popcount`]).
    pub misbits: Signal<Out, Bits<64>>,
}

impl Logic for DmaLanes {
    fn update(&mut self) {
        let base = self.base.val().index() as u8;
        let lo = self.lo.val().index();
        let hi = self.hi.val().index();
        let (first, last) = (self.first.val(), self.last.val());
        let en = self.en.val();
        let data = self.data.val();
        let mut strb = Bits::<64>::default();
        let mut pat = Bits::<512>::default();
        let mut md = Bits::<512>::default();
        let mut mis = Bits::<64>::default();
        for k in 0..64usize {
            let valid = en && (!first || k >= lo) && (!last || k < hi);
            if valid {
                strb = strb.replace_bit(k, true);
                let p = base.wrapping_add(k as u8) as u64;
                let d = data.get_bits::<8>(8 * k);
                pat = pat | (Bits::<512>::from(p) << (8 * k as u64));
                md = md | (bit_cast::<512, 8>(d) << (8 * k as u64));
                if d.index() as u64 != p {
                    mis = mis.replace_bit(k, true);
                }
            }
        }
        let fold = |v: Bits<512>| {
            let mut f = Bits::<32>::default();
            for w in 0..16 {
                f = f ^ v.get_bits::<32>(32 * w);
            }
            f
        };
        self.strb.next = strb;
        self.pattern.next = pat;
        self.fold_pattern.next = fold(pat);
        self.fold_data.next = fold(md);
        self.misbits.next = mis;
    }
    fn connect(&mut self) {
        self.strb.connect();
        self.pattern.connect();
        self.fold_pattern.connect();
        self.fold_data.connect();
        self.misbits.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(lanes_verilog())
    }
}

/// The generated body. Synthesis sees one `always @(*)`; under `` `ifdef VERILATOR `` the
/// lanes are a task that Verilator keeps as a function (`no_inline_task`) and calls only when
/// `en` is set: its dataflow pass would otherwise turn the `!en` guard into masks and compute
/// the 64 lanes on every cycle (the self-test is idle during RDMA traffic). Both forms are
/// the same text with different names.
pub fn lanes_verilog() -> String {
    let zero = "    strb = 64'd0;\n    pattern = 512'd0;\n    masked = 512'd0;\n    fold_pattern = 32'd0;\n    fold_data = 32'd0;\n    misbits = 64'd0;\n";
    let mut s = String::from("reg [511:0] masked;\n`ifdef VERILATOR\n");
    s.push_str(
        "task lanes_calc(input [7:0] t_base, input [5:0] t_lo, input [6:0] t_hi, input t_first, input t_last, input [511:0] t_data, output [63:0] o_strb, output [511:0] o_pattern, output [511:0] o_masked, output [31:0] o_fp, output [31:0] o_fd, output [63:0] o_mis);\n  /* verilator no_inline_task */\n  begin\n",
    );
    s.push_str(&lanes_body(
        "t_",
        "o_strb",
        "o_pattern",
        "o_masked",
        "o_fp",
        "o_fd",
        "o_mis",
    ));
    s.push_str("  end\nendtask\nalways @(*) begin\n  if (!en) begin\n");
    s.push_str(zero);
    s.push_str("  end else begin\n    lanes_calc(base, lo, hi, first, last, data, strb, pattern, masked, fold_pattern, fold_data, misbits);\n  end\nend\n`else\n");
    s.push_str("always @(*) begin\n  if (!en) begin\n");
    s.push_str(zero);
    s.push_str("  end else begin\n");
    s.push_str(&lanes_body(
        "",
        "strb",
        "pattern",
        "masked",
        "fold_pattern",
        "fold_data",
        "misbits",
    ));
    s.push_str("  end\nend\n`endif\n");
    s
}

/// The lanes' statements: inputs named `{i}base`, `{i}lo`, ... (`i` a prefix), outputs as given.
fn lanes_body(i: &str, strb: &str, pat: &str, msk: &str, fp: &str, fd: &str, mis: &str) -> String {
    let mut s = String::new();
    for k in 0..64 {
        // lane 63 is at or above any `lo`: no comparison (Verilator flags constant ones)
        let lo_ok = if k == 63 {
            "1'b1".to_string()
        } else {
            format!("(!{i}first || 6'd{k} >= {i}lo)")
        };
        let _ = writeln!(
            s,
            "    {strb}[{k}] = {lo_ok} && (!{i}last || 7'd{k} < {i}hi);"
        );
        let _ = writeln!(
            s,
            "    {pat}[{}:{}] = {strb}[{k}] ? {i}base + 8'd{k} : 8'd0;",
            8 * k + 7,
            8 * k
        );
        let _ = writeln!(
            s,
            "    {msk}[{}:{}] = {strb}[{k}] ? {i}data[{}:{}] : 8'd0;",
            8 * k + 7,
            8 * k,
            8 * k + 7,
            8 * k
        );
    }
    let words = |v: &str| {
        (0..16)
            .map(|w| format!("{v}[{}:{}]", 32 * w + 31, 32 * w))
            .collect::<Vec<_>>()
            .join(" ^ ")
    };
    let _ = writeln!(s, "    {fp} = {};", words(pat));
    let _ = writeln!(s, "    {fd} = {};", words(msk));
    for k in 0..64 {
        let _ = writeln!(
            s,
            "    {mis}[{k}] = {strb}[{k}] && ({i}data[{}:{}] != {pat}[{}:{}]);",
            8 * k + 7,
            8 * k,
            8 * k + 7,
            8 * k
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;

    /// Co-simulation of the generated Verilog against an independent byte-level reference.
    #[test]
    fn generated_lanes_match_reference() {
        lanes_match_reference(model(DmaLanes::default(), "dmalanes_wrap"));
    }

    /// The same through the form synthesis builds (one `always @(*)`, no task).
    #[test]
    fn synthesis_form_lanes_match_reference() {
        lanes_match_reference(model_synth_form(DmaLanes::default(), "dmalanes_wrap"));
    }

    fn lanes_match_reference(mut m: crate::common::vlt::DynModel) {
        let mut r = rng(9);
        for _ in 0..2000 {
            let base: u8 = r.random();
            let lo: u64 = r.random_range(0..64);
            let hi: u64 = r.random_range(1..=64);
            let first = r.random_bool(0.5);
            let last = r.random_bool(0.5);
            let mut data: Vec<u8> = (0..64).map(|_| r.random()).collect();
            // make some lanes match the pattern
            for (k, d) in data.iter_mut().enumerate() {
                if r.random_bool(0.5) {
                    *d = base.wrapping_add(k as u8);
                }
            }
            m.set("base", base as u64);
            m.set("lo", lo);
            m.set("hi", hi);
            let en = r.random_bool(0.9);
            m.set("en", en as u64);
            m.set("first", first as u64);
            m.set("last", last as u64);
            m.set_bytes("data", &data);
            m.tick();
            let (mut strb, mut pat, mut fp, mut fd, mut mis) = (0u64, [0u8; 64], 0u32, 0u32, 0u64);
            let mut md = [0u8; 64];
            for k in 0..64usize {
                let valid = en && (!first || k as u64 >= lo) && (!last || (k as u64) < hi);
                if valid {
                    strb |= 1 << k;
                    pat[k] = base.wrapping_add(k as u8);
                    md[k] = data[k];
                    mis |= ((data[k] != pat[k]) as u64) << k;
                }
            }
            for w in 0..16 {
                fp ^= u32::from_le_bytes(pat[4 * w..4 * w + 4].try_into().unwrap());
                fd ^= u32::from_le_bytes(md[4 * w..4 * w + 4].try_into().unwrap());
            }
            assert_eq!(m.get("strb"), strb);
            assert_eq!(m.get_bytes("pattern"), pat.to_vec());
            assert_eq!(m.get("fold_pattern") as u32, fp);
            assert_eq!(m.get("fold_data") as u32, fd);
            assert_eq!(m.get("misbits"), mis);
        }
    }
}
