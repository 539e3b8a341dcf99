//! Clock-domain-crossing primitives used by the board tops:
//!
//! * [`ResetSync`]: an asynchronous-assert, synchronous-deassert reset synchronizer
//!   (active high). Any level on `arst` resets the domain at once; the release is
//!   re-timed to `clock` through a chain of `STAGES` flops marked `ASYNC_REG`.
//! * [`SyncBits`]: a two-flop synchronizer for a bus whose value changes at most one bit at
//!   a time (a Gray-coded pointer), or for a slow level signal. Both stages carry
//!   `ASYNC_REG` so that Vivado places them in one slice and reports them in its CDC checks.
//!
//! Both blocks are hand-written Verilog (`Verilog::Custom`): rust-hdl's `DFF` has no
//! asynchronous reset and no way to attach attributes. Each has a plain-Rust model in
//! `update()` for rust-hdl's own simulator; the Verilog is verified in Verilator by
//! `tests/cdc.rs`.
use rust_hdl::prelude::*;

/// Number of flops in the reset release chain.
pub const RESET_STAGES: usize = 4;

/// Asynchronous-assert, synchronous-deassert reset synchronizer (active high in and out).
#[derive(LogicBlock, Default)]
pub struct ResetSync {
    /// The destination clock.
    pub clock: Signal<In, Clock>,
    /// Asynchronous reset request, active high (may come from any clock domain or a pin).
    pub arst: Signal<In, Bit>,
    /// Reset for the `clock` domain: asserted immediately, released on a `clock` edge.
    pub rst: Signal<Out, Bit>,
    _chain: [bool; RESET_STAGES],
}

impl Logic for ResetSync {
    fn update(&mut self) {
        if self.arst.val() {
            self._chain = [true; RESET_STAGES];
        } else if self.clock.pos_edge() {
            for i in (1..RESET_STAGES).rev() {
                self._chain[i] = self._chain[i - 1];
            }
            self._chain[0] = false;
        }
        self.rst.next = self._chain[RESET_STAGES - 1];
    }

    fn connect(&mut self) {
        self.rst.connect();
    }

    fn hdl(&self) -> Verilog {
        let n = RESET_STAGES;
        Verilog::Custom(format!(
            "\
// async assert / sync release; the chain powers up asserted
(* ASYNC_REG = \"TRUE\" *) reg [{hi}:0] rst_chain = {n}'b{ones};
always @(posedge clock or posedge arst) begin
    if (arst)
        rst_chain <= {n}'b{ones};
    else
        rst_chain <= {{rst_chain[{hm1}:0], 1'b0}};
end
always @(*) rst = rst_chain[{hi}];
",
            hi = n - 1,
            hm1 = n - 2,
            ones = "1".repeat(n),
        ))
    }
}

/// Two-flop synchronizer for a `W`-bit Gray-coded value (or a slow level), with a
/// synchronous reset in the destination domain.
#[derive(LogicBlock, Default)]
pub struct SyncBits<const W: usize> {
    /// Destination clock.
    pub clock: Signal<In, Clock>,
    /// Destination-domain synchronous reset (clears both stages).
    pub rst: Signal<In, Bit>,
    /// Source value (launched from a flop in another clock domain).
    pub d: Signal<In, Bits<W>>,
    /// Value in the destination domain, two `clock` edges later.
    pub q: Signal<Out, Bits<W>>,
    _s1: Bits<W>,
    _s2: Bits<W>,
}

impl<const W: usize> Logic for SyncBits<W> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.rst.val() {
                self._s1 = Bits::default();
                self._s2 = Bits::default();
            } else {
                self._s2 = self._s1;
                self._s1 = self.d.val();
            }
        }
        self.q.next = self._s2;
    }

    fn connect(&mut self) {
        self.q.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "\
// first stage samples an asynchronous input: keep both stages together (ASYNC_REG)
(* ASYNC_REG = \"TRUE\" *) reg [{hi}:0] cdc_s1 = {W}'d0;
(* ASYNC_REG = \"TRUE\" *) reg [{hi}:0] cdc_s2 = {W}'d0;
always @(posedge clock) begin
    if (rst) begin
        cdc_s1 <= {W}'d0;
        cdc_s2 <= {W}'d0;
    end else begin
        cdc_s1 <= d;
        cdc_s2 <= cdc_s1;
    end
end
always @(*) q = cdc_s2;
",
            hi = W - 1,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_sync_releases_after_stages() {
        let mut uut = ResetSync::default();
        uut.connect_all();
        let mut sim = simple_sim!(ResetSync, clock, 100_000_000, ep, {
            let mut x = ep.init()?;
            x.arst.next = true;
            wait_clock_cycles!(ep, clock, x, 2);
            sim_assert!(ep, x.rst.val(), x);
            x.arst.next = false;
            for _ in 0..(RESET_STAGES - 1) {
                wait_clock_cycle!(ep, clock, x);
                sim_assert!(ep, x.rst.val(), x);
            }
            wait_clock_cycles!(ep, clock, x, 2);
            sim_assert!(ep, !x.rst.val(), x);
            ep.done(x)
        });
        sim.run(Box::new(uut), 1_000_000).unwrap();
    }

    #[test]
    fn custom_verilog_is_well_formed() {
        let mut r = ResetSync::default();
        r.connect_all();
        let v = generate_verilog(&r);
        assert!(v.contains("ASYNC_REG") && v.contains("posedge arst"));
        let mut s = SyncBits::<5>::default();
        s.connect_all();
        let v = generate_verilog(&s);
        assert!(v.contains("reg [4:0] cdc_s1"));
    }
}
