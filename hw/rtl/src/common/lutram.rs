//! `LutRam`: `2^A` words of `W` bits in LUT RAM with one synchronous write port and two
//! asynchronous read ports (`ra` -> `rda`, `rb` -> `rdb`): per-QP tables that a block reads at
//! two QP numbers in the same cycle (ackproc's restart table, txreq's scheduler bits). A write
//! is seen by the reads from the next cycle on. The body is Verilog text (an array with
//! combinational reads, which Vivado maps to distributed RAM); `update()` is the same
//! behaviour in Rust. No reset: the users clear what they need.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct LutRam<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub we: Signal<In, Bit>,
    pub wa: Signal<In, Bits<A>>,
    pub wd: Signal<In, Bits<W>>,
    pub ra: Signal<In, Bits<A>>,
    pub rda: Signal<Out, Bits<W>>,
    pub rb: Signal<In, Bits<A>>,
    pub rdb: Signal<Out, Bits<W>>,
    _m: Vec<Bits<W>>,
}

impl<const W: usize, const A: usize> Default for LutRam<W, A> {
    fn default() -> Self {
        LutRam {
            clock: Default::default(),
            we: Default::default(),
            wa: Default::default(),
            wd: Default::default(),
            ra: Default::default(),
            rda: Default::default(),
            rb: Default::default(),
            rdb: Default::default(),
            _m: vec![Bits::default(); 1 << A],
        }
    }
}

impl<const W: usize, const A: usize> Logic for LutRam<W, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.we.val() {
            self._m[self.wa.val().index()] = self.wd.val();
        }
        self.rda.next = self._m[self.ra.val().index()];
        self.rdb.next = self._m[self.rb.val().index()];
    }
    fn connect(&mut self) {
        self.rda.connect();
        self.rdb.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "reg [{w1}:0] mem [0:{d1}];
always @(*) begin
    rda = mem[ra];
    rdb = mem[rb];
end
always @(posedge clock) begin
    if (we) mem[wa] <= wd;
end
",
            w1 = W - 1,
            d1 = (1usize << A) - 1,
        ))
    }
}
