//! A two-entry register slice on a valid/ready bus: both directions end at registers (the
//! consumer sees `valid` and the payload from flip-flops, the producer sees a `ready` decoded
//! from a register), one cycle of latency and no bubble (an entry can go in and one come out
//! in every cycle). [`slice_verilog`] is the body, shared with the packet-descriptor slice
//! (`tx::descslice`), whose payload is a bundle of named fields; [`RegSlice`] carries one
//! `W`-bit word (the DMA engine's AR channel).

use rust_hdl::prelude::*;

/// The Verilog body of a two-entry register slice: `w` payload bits, the input side's
/// `valid`/`ready`/payload expression `i` and the output side's `o` (a `{...}` concatenation
/// or one signal name), in the block's own port names; synchronous `rst` empties it.
pub fn slice_verilog(
    w: usize,
    (i_valid, i_ready, i): (&str, &str, &str),
    (o_valid, o_ready, o): (&str, &str, &str),
) -> String {
    format!(
        "reg [{w1}:0] h0;
reg [{w1}:0] h1;
reg [1:0] n;
reg push;
reg pop;
always @(*) begin
    {i_ready} = n != 2'd2;
    {o_valid} = n != 2'd0;
    {o} = h0;
    push = {i_valid} && (n != 2'd2);
    pop = {o_ready} && (n != 2'd0);
end
always @(posedge clock) begin
    if (push && ((n == 2'd0) || ((n == 2'd1) && pop))) h0 <= {i};
    if (push && (n == 2'd1) && !pop) h1 <= {i};
    if (pop && (n == 2'd2)) h0 <= h1;
end
always @(posedge clock) begin
    if (rst) n <= 2'd0;
    else if (push && !pop) n <= n + 2'd1;
    else if (pop && !push) n <= n - 2'd1;
end
",
        w1 = w - 1,
    )
}

/// Two-entry register slice of `W`-bit words: `i_*` (sink: `i_ready` while fewer than two are
/// held), `o_*` (source: `o_valid` while one is held, `o_data` the head register). No
/// rust-hdl model: Verilog text, checked in Verilator by the tests.
#[derive(LogicBlock, Default)]
pub struct RegSlice<const W: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub i_valid: Signal<In, Bit>,
    pub i_ready: Signal<Out, Bit>,
    pub i_data: Signal<In, Bits<W>>,
    pub o_valid: Signal<Out, Bit>,
    pub o_ready: Signal<In, Bit>,
    pub o_data: Signal<Out, Bits<W>>,
}

impl<const W: usize> Logic for RegSlice<W> {
    fn update(&mut self) {}
    fn connect(&mut self) {
        self.i_ready.connect();
        self.o_valid.connect();
        self.o_data.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(slice_verilog(
            W,
            ("i_valid", "i_ready", "i_data"),
            ("o_valid", "o_ready", "o_data"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use crate::common::vlt::DynModel;
    use rand::Rng;

    /// [`reg_queue_stress`] on a 72-bit slice (wider than one simulator word): each word comes
    /// out once, in order and whole; `valid` only for words taken in an earlier cycle; never
    /// more than two held; and one word in and one out in every cycle when the consumer is
    /// always ready.
    #[test]
    fn words_in_order_under_random_idle_and_backpressure() {
        let mut m = model(RegSlice::<72>::default(), "regslice");
        reset(&mut m);
        let word =
            |r: &mut rand_chacha::ChaCha8Rng| (0..9).map(|_| r.random()).collect::<Vec<u8>>();
        let set = |m: &mut DynModel, d: &Vec<u8>| m.set_bytes("i_data", d);
        let st = reg_queue_stress(&mut m, 11, 20_000, ("i_", "o_", 2), word, set, |m, d| {
            assert_eq!(m.get_bytes("o_data")[..9], d[..])
        });
        assert!(
            st.got > 5000 && st.full > 500,
            "{} taken, {} cycles full",
            st.got,
            st.full
        );
        let outs = full_rate(&mut m, 5, 200, ("i_", "o_"), word, set);
        assert!(outs >= 198, "{outs} out of 200 cycles");
    }
}
