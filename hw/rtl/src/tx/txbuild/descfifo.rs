//! The descriptor FIFO of [`super::TxBuild`]: 16 packet descriptors (Verilog text generated
//! from the descriptor's field list).

use crate::tx::txreq::{DESC_FIELDS, TxDescM, TxDescS};
use rust_hdl::prelude::*;

/// Bits of the side word stored with each descriptor (`xi` -> `xo`): the frame length
/// without the ICRC at [`SIDE_FLEN_AT`], the IPv4 total length at [`SIDE_IPLEN_AT`], each
/// [`SIDE_LEN_BITS`] wide.
pub const SIDE_BITS: usize = 30;
pub const SIDE_LEN_BITS: usize = 14;
pub const SIDE_FLEN_AT: usize = 0;
pub const SIDE_IPLEN_AT: usize = 14;
const _: () = assert!(SIDE_IPLEN_AT + SIDE_LEN_BITS <= SIDE_BITS);

/// 16-deep show-ahead FIFO of packet descriptors: `i` (sink: `ready` = not full), `o`
/// (source: `valid` = not empty, `ready` pops), plus a side word per entry (`xi` written with
/// `i`, `xo` beside `o`: values the intake derives from the descriptor so that the stage
/// after the FIFO does not). Synchronous reset empties it.
#[derive(LogicBlock, Default)]
pub struct DescFifo {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub i: TxDescS,
    pub o: TxDescM,
    pub xi: Signal<In, Bits<SIDE_BITS>>,
    pub xo: Signal<Out, Bits<SIDE_BITS>>,
}

impl Logic for DescFifo {
    /// No rust-hdl model: Verilog text, checked in Verilator by the tests.
    fn update(&mut self) {}
    fn connect(&mut self) {
        self.i.ready.connect();
        self.o.valid.connect();
        self.o.connect_fields();
        self.xo.connect();
    }
    fn hdl(&self) -> Verilog {
        let w: usize = DESC_FIELDS.iter().map(|f| f.1).sum::<usize>() + SIDE_BITS;
        let cat = |p: &str, x: &str| {
            std::iter::once(x.to_string())
                .chain(DESC_FIELDS.iter().rev().map(|f| format!("{p}${}", f.0)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        Verilog::Custom(format!(
            "reg [{w1}:0] mem [0:15];
reg [4:0] wp;
reg [4:0] rp;
reg is_full;
reg is_empty;
always @(*) begin
    is_empty = wp == rp;
    is_full = (wp[3:0] == rp[3:0]) && (wp[4] != rp[4]);
    i$ready = !is_full;
    o$valid = !is_empty;
    {{{o}}} = mem[rp[3:0]];
end
always @(posedge clock) begin
    if (i$valid && !is_full) mem[wp[3:0]] <= {{{i}}};
end
always @(posedge clock) begin
    if (rst) begin
        wp <= 5'd0;
        rp <= 5'd0;
    end else begin
        if (i$valid && !is_full) wp <= wp + 5'd1;
        if (o$ready && !is_empty) rp <= rp + 5'd1;
    end
end
",
            w1 = w - 1,
            o = cat("o", "xo"),
            i = cat("i", "xi"),
        ))
    }
}
