//! The descriptor FIFO of [`super::TxBuild`]: [`DESC_DEPTH`] packet descriptors (Verilog text
//! generated from the descriptor's field list).

use crate::tx::txreq::{DESC_FIELDS, TxDescM, TxDescS};
use rust_hdl::prelude::*;

/// Bits of the side word stored with each descriptor (`xi` -> `xo`): the frame length
/// without the ICRC at [`SIDE_FLEN_AT`], the IPv4 total length at [`SIDE_IPLEN_AT`], each
/// [`SIDE_LEN_BITS`] wide.
pub const SIDE_BITS: usize = 30;
/// Address bits of the descriptor FIFO. Each descriptor's payload read is issued when it
/// enters, so this bounds the reads in flight: 64 cover a 150-cycle host read latency (plus
/// the DMA engine's pipeline) at a 64-byte packet every 3 cycles; 16 held one QP's 64-byte
/// WRITEs to about 11 cycles each.
pub const DESC_BITS: usize = 6;
pub const DESC_DEPTH: usize = 1 << DESC_BITS;
/// Frame beats (64 bytes, header included) the descriptor FIFO may hold: no descriptor is
/// taken while it holds this many or more. 16 KiB covers the read latency at line rate and
/// bounds how long an ACK or READ RESPONSE taken now waits behind queued frames (about 4 of
/// 4 KiB, where a 64-deep FIFO of them would be 64).
pub const READ_AHEAD_BEATS: u64 = 256;
pub const SIDE_LEN_BITS: usize = 14;
pub const SIDE_FLEN_AT: usize = 0;
pub const SIDE_IPLEN_AT: usize = 14;
const _: () = assert!(SIDE_IPLEN_AT + SIDE_LEN_BITS <= SIDE_BITS);

/// [`DESC_DEPTH`]-deep show-ahead FIFO of packet descriptors: `i` (sink: `ready` = not full), `o`
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
            "reg [{w1}:0] mem [0:{d1}];
reg [{a}:0] wp;
reg [{a}:0] rp;
reg is_full;
reg is_empty;
always @(*) begin
    is_empty = wp == rp;
    is_full = (wp[{a1}:0] == rp[{a1}:0]) && (wp[{a}] != rp[{a}]);
    i$ready = !is_full;
    o$valid = !is_empty;
    {{{o}}} = mem[rp[{a1}:0]];
end
always @(posedge clock) begin
    if (i$valid && !is_full) mem[wp[{a1}:0]] <= {{{i}}};
end
always @(posedge clock) begin
    if (rst) begin
        wp <= {z};
        rp <= {z};
    end else begin
        if (i$valid && !is_full) wp <= wp + {one};
        if (o$ready && !is_empty) rp <= rp + {one};
    end
end
",
            w1 = w - 1,
            d1 = DESC_DEPTH - 1,
            a = DESC_BITS,
            a1 = DESC_BITS - 1,
            z = format_args!("{}'d0", DESC_BITS + 1),
            one = format_args!("{}'d1", DESC_BITS + 1),
            o = cat("o", "xo"),
            i = cat("i", "xi"),
        ))
    }
}
