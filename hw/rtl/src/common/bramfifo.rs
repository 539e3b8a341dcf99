//! Show-ahead FIFO whose storage is a synchronous-read RAM (block RAM by inference), for deep
//! queues where [`crate::common::fifo::Fifo`]'s asynchronous-read array would become LUT RAM
//! or registers (`rdresp`'s responder job queue: 4096 entries of 365 bits).
//!
//! Same ports and semantics as `Fifo`: `2^A` entries of `W` bits; `dout` is the head while
//! `!empty`; `wr` pushes `din` (ignored when `full`), `rd` pops (ignored when `empty`), both
//! in the same cycle allowed, at full rate (one push and one pop in every cycle, sustained).
//! Synchronous `rst` empties it.
//!
//! Structure: the RAM (`mem`, written on the clock edge, read into its output register `q`
//! from the registered read pointer `rp`, one cycle of read latency), then a 3-entry prefetch
//! stage (`b0`, `b1`, `b2`, a shift register; `dout` = `b0`). A RAM read is issued whenever
//! the RAM holds entries and the prefetch stage has room for one more counting the read in
//! flight (decided from registers only); 3 entries cover the read latency at one pop per
//! cycle. A push that finds the RAM empty, no read in flight and room in the prefetch stage
//! bypasses the RAM and goes straight into the prefetch stage, so order is kept and the
//! latency of an idle FIFO is that of `Fifo`: a pushed entry is the head (`!empty`, `dout`)
//! in the next cycle. Behind a backlog, an entry reaches the head 2 cycles after the entries
//! before it have made room (the RAM read); at one pop per cycle there is no bubble.
//!
//! `full` is registered state (`cnt` = entries pushed and not popped, wherever they are, ==
//! `2^A`): it rises only in the cycle after an accepted push (never by itself, never because
//! of a pop or of the internal RAM-to-prefetch moves), so a producer that saw `!full` still
//! finds room at its next push if nobody else pushed in between. `empty` falls only in the
//! cycle after a push or a RAM read completed, and rises only in the cycle after a pop.
//!
//! The read and write addresses never collide: a read is issued only for an entry written in
//! an earlier cycle, and a write to the read's slot would need `2^A` entries in the RAM,
//! i.e. `full`. The body is Verilog text; `update()` is the same behaviour, register for
//! register, in Rust. Per cycle it does constant work (no scan of the storage).

use rust_hdl::prelude::*;

/// Show-ahead FIFO of `2^A` entries of `W` bits in block RAM: see the module documentation.
#[derive(LogicBlock)]
pub struct BramFifo<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub wr: Signal<In, Bit>,
    pub din: Signal<In, Bits<W>>,
    pub rd: Signal<In, Bit>,
    pub dout: Signal<Out, Bits<W>>,
    pub empty: Signal<Out, Bit>,
    pub full: Signal<Out, Bit>,
    _m: Model<W>,
}

/// The Rust model's registers (the names of the Verilog body).
#[derive(Default)]
struct Model<const W: usize> {
    mem: Vec<Bits<W>>,
    wp: u64,
    rp: u64,
    cnt: u64,
    q: Bits<W>,
    rv: bool,
    pc: usize,
    b: [Bits<W>; 3],
}

impl<const W: usize, const A: usize> Default for BramFifo<W, A> {
    fn default() -> Self {
        BramFifo {
            clock: Default::default(),
            rst: Default::default(),
            wr: Default::default(),
            din: Default::default(),
            rd: Default::default(),
            dout: Default::default(),
            empty: Default::default(),
            full: Default::default(),
            _m: Default::default(),
        }
    }
}

impl<const W: usize, const A: usize> Logic for BramFifo<W, A> {
    fn update(&mut self) {
        let depth = 1u64 << A;
        if self.clock.pos_edge() {
            let m = &mut self._m;
            if self.rst.val() {
                m.wp = 0;
                m.rp = 0;
                m.cnt = 0;
                m.rv = false;
                m.pc = 0;
            } else {
                let (full, empty) = (m.cnt == depth, m.pc == 0);
                let push = self.wr.val() && !full;
                let pop = self.rd.val() && !empty;
                let ram_ne = m.wp != m.rp;
                let issue = ram_ne && m.pc + (m.rv as usize) < 3;
                let dir = push && !ram_ne && !m.rv && m.pc != 3;
                let ins = m.rv || dir;
                let nd = if m.rv { m.q } else { self.din.val() };
                let pos = m.pc - pop as usize;
                if m.mem.is_empty() {
                    m.mem = vec![Bits::<W>::default(); depth as usize];
                }
                if issue {
                    m.q = m.mem[(m.rp % depth) as usize];
                    m.rp = (m.rp + 1) % (2 * depth);
                }
                if push && !dir {
                    m.mem[(m.wp % depth) as usize] = self.din.val();
                    m.wp = (m.wp + 1) % (2 * depth);
                }
                m.rv = issue;
                m.cnt = m.cnt + push as u64 - pop as u64;
                if pop {
                    m.b[0] = m.b[1];
                    m.b[1] = m.b[2];
                }
                if ins {
                    m.b[pos] = nd;
                }
                m.pc = m.pc + ins as usize - pop as usize;
            }
        }
        self.dout.next = self._m.b[0];
        self.empty.next = self._m.pc == 0;
        self.full.next = self._m.cnt == depth;
    }
    fn connect(&mut self) {
        self.dout.connect();
        self.empty.connect();
        self.full.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!(
            "(* ram_style = \"block\" *) reg [{w1}:0] mem [0:{d1}];
reg [{a}:0] wp;
reg [{a}:0] rp;
reg [{a}:0] cnt;
reg [{w1}:0] q;
reg rv;
reg [1:0] pc;
reg [{w1}:0] b0;
reg [{w1}:0] b1;
reg [{w1}:0] b2;
wire push = wr && !full;
wire pop = rd && !empty;
wire ram_ne = wp != rp;
wire issue = ram_ne && (({{1'b0, pc}} + {{2'b00, rv}}) < 3'd3);
wire dir = push && !ram_ne && !rv && (pc != 2'd3);
wire ins = rv || dir;
wire [{w1}:0] nd = rv ? q : din;
wire [1:0] pos = pc - {{1'b0, pop}};
always @(*) begin
    dout = b0;
    empty = pc == 2'd0;
    full = cnt == {{1'b1, {a}'d0}};
end
// the RAM: one write port, one read port with its output register (simple dual-port BRAM)
always @(posedge clock) begin
    if (push && !dir) mem[wp[{a1}:0]] <= din;
end
always @(posedge clock) begin
    if (issue) q <= mem[rp[{a1}:0]];
end
always @(posedge clock) begin
    if (rst) begin
        wp <= {z};
        rp <= {z};
        cnt <= {z};
        rv <= 1'b0;
        pc <= 2'd0;
    end else begin
        if (push && !dir) wp <= wp + {one};
        if (issue) rp <= rp + {one};
        rv <= issue;
        if (push && !pop) cnt <= cnt + {one};
        else if (pop && !push) cnt <= cnt - {one};
        if (ins && !pop) pc <= pc + 2'd1;
        else if (pop && !ins) pc <= pc - 2'd1;
    end
end
// the prefetch stage: shift on a pop, then insert at the first free place
always @(posedge clock) begin
    if (pop) begin
        b0 <= b1;
        b1 <= b2;
    end
    if (ins) begin
        case (pos)
            2'd0: b0 <= nd;
            2'd1: b1 <= nd;
            default: b2 <= nd;
        endcase
    end
end
",
            w1 = W - 1,
            d1 = (1usize << A) - 1,
            a = A,
            a1 = A - 1,
            z = format_args!("{}'d0", A + 1),
            one = format_args!("{}'d1", A + 1),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use crate::common::vlt::DynModel;
    use rand::Rng;
    use rand_chacha::ChaCha8Rng;
    use std::collections::VecDeque;

    /// The Verilated FIFO against a queue. `step` drives one cycle and checks that cycle's
    /// outputs (the harness samples them before the edge) against the queue: `full` exactly
    /// when it holds 2^A entries, `empty` whenever it holds none, `dout` = the head whenever
    /// `!empty`; and the `full` property: `full` rises only in the cycle after a push.
    struct Tb {
        m: DynModel,
        q: VecDeque<u64>,
        cap: usize,
        /// this cycle's outputs
        empty: bool,
        full: bool,
        last_push: bool,
        /// cycles with entries queued but the head not yet visible
        lag: u64,
        pushed: u64,
        popped: u64,
    }

    impl Tb {
        fn new(m: DynModel, cap: usize) -> Self {
            let mut t = Tb {
                m,
                q: VecDeque::new(),
                cap,
                empty: true,
                full: false,
                last_push: false,
                lag: 0,
                pushed: 0,
                popped: 0,
            };
            t.reset();
            t
        }
        fn reset(&mut self) {
            self.m.set("wr", 0);
            self.m.set("rd", 0);
            reset(&mut self.m);
            self.q.clear();
            self.full = false;
            self.last_push = false;
        }
        /// Drive one cycle; returns (pushed, popped) as the FIFO saw them.
        fn step(&mut self, wr: bool, rd: bool, din: u64) -> (bool, bool) {
            self.m.set("wr", wr as u64);
            self.m.set("rd", rd as u64);
            self.m.set("din", din);
            self.m.tick();
            let (full, empty) = (self.m.bit("full"), self.m.bit("empty"));
            let n = self.q.len();
            assert_eq!(full, n == self.cap, "full with {n} queued");
            assert!(
                !full || self.full || self.last_push,
                "full rose without a push"
            );
            if n == 0 {
                assert!(empty, "not empty with nothing queued");
            }
            if !empty {
                assert_eq!(self.m.get("dout"), self.q[0], "head ({n} queued)");
            } else if n > 0 {
                self.lag += 1;
            }
            let (push, pop) = (wr && !full, rd && !empty);
            if pop {
                self.q.pop_front();
                self.popped += 1;
            }
            if push {
                self.q.push_back(din);
                self.pushed += 1;
            }
            (self.empty, self.full, self.last_push) = (empty, full, push);
            (push, pop)
        }
        /// Idle cycles until the head is visible (the RAM read behind a backlog).
        fn settle(&mut self) {
            for _ in 0..4 {
                if self.q.is_empty() {
                    return;
                }
                self.step(false, false, 0);
                if !self.empty {
                    return;
                }
            }
            panic!("head never visible");
        }
    }

    fn tb() -> Tb {
        Tb::new(model(BramFifo::<20, 4>::default(), "bramfifo"), 16)
    }

    fn val(r: &mut ChaCha8Rng) -> u64 {
        r.random_range(0..1 << 20)
    }

    /// Random pushes and pops (also at full / empty) with random idle on both sides, in
    /// phases that fill and phases that drain, against a queue; then a drain in order.
    #[test]
    fn random_push_pop_against_a_queue() {
        let mut t = tb();
        let mut r = rng(5);
        let mut at_full = 0;
        for i in 0..40_000 {
            let fill = [0.8, 0.5, 0.2, 0.95, 0.05][(i / 1500) % 5];
            let wr = chance(&mut r, fill);
            let rd = chance(&mut r, 1.0 - fill);
            let d = val(&mut r);
            t.step(wr, rd, d);
            at_full += t.full as u32;
        }
        assert!(
            t.pushed > 6000 && t.popped > 6000 && at_full > 1000,
            "{} {} {at_full}",
            t.pushed,
            t.popped
        );
        // the head hides only briefly (a RAM read when the prefetch stage ran dry)
        assert!(t.lag < 2000, "head hidden for {} cycles", t.lag);
        while !t.q.is_empty() {
            t.settle();
            t.step(false, true, 0);
        }
        t.step(false, false, 0);
        assert!(t.empty);
    }

    /// An idle FIFO shows a push in the next cycle; push+pop at empty (only the push), pop
    /// at empty (ignored); then, three times: fill completely, push at full (ignored),
    /// push+pop at full (only the pop), push+pop one short of full (both), drain completely
    /// at one pop per cycle.
    #[test]
    fn full_and_empty_edges() {
        let mut t = tb();
        let mut r = rng(6);
        assert_eq!(t.step(true, false, 7), (true, false));
        assert_eq!(
            t.step(false, true, 0),
            (false, true),
            "head 7 in the next cycle"
        );
        assert_eq!(t.step(true, true, 9), (true, false), "push+pop at empty");
        assert_eq!(t.step(false, true, 0), (false, true));
        assert_eq!(t.step(false, true, 0), (false, false), "pop at empty");
        for _round in 0..3 {
            for k in 0..16 {
                let d = val(&mut r);
                assert_eq!(t.step(true, false, d), (true, false), "push {k}");
            }
            for _ in 0..5 {
                let d = val(&mut r);
                assert_eq!(t.step(true, false, d), (false, false), "push at full");
                assert!(t.full);
            }
            let d = val(&mut r);
            assert_eq!(t.step(true, true, d), (false, true), "push+pop at full");
            for _ in 0..10 {
                let d = val(&mut r);
                assert_eq!(t.step(true, true, d), (true, true), "push+pop, 15 queued");
            }
            let mut cycles = 0;
            while !t.q.is_empty() {
                assert!(t.step(false, true, 0).1, "bubble in the drain");
                cycles += 1;
            }
            assert_eq!(cycles, 15);
            assert_eq!(t.step(false, true, 0), (false, false));
            assert!(t.empty && !t.full);
        }
    }

    /// One push and one pop in every cycle, sustained, from empty and from backlogs: the pops
    /// always find a head (no bubble), the pushes room, the depth stays constant. Then pops
    /// only, from full: one entry per cycle.
    #[test]
    fn sustained_full_rate() {
        let mut t = tb();
        let mut r = rng(7);
        for backlog in [0usize, 1, 2, 3, 4, 5, 15] {
            t.reset();
            for _ in 0..backlog {
                let d = val(&mut r);
                t.step(true, false, d);
            }
            for c in 0..1000 {
                let d = val(&mut r);
                let (push, pop) = t.step(true, true, d);
                assert!(push, "backlog {backlog}: push refused at cycle {c}");
                // from empty the first pop finds nothing; after that, every cycle
                assert!(
                    pop || (backlog == 0 && c == 0),
                    "backlog {backlog}: bubble at {c}"
                );
            }
            assert_eq!(t.q.len(), backlog.max(1));
        }
        t.reset();
        for _ in 0..16 {
            let d = val(&mut r);
            t.step(true, false, d);
        }
        for k in 0..16 {
            assert!(t.step(false, true, 0).1, "pop {k} from full");
        }
        assert_eq!(t.step(false, true, 0), (false, false));
        assert_eq!(t.lag, 0);
    }

    /// Reset in the middle of traffic (backlogs, reads in flight, full), with `wr` and `rd`
    /// high during it: empty at once, nothing old comes out, and the FIFO works on.
    #[test]
    fn reset_in_the_middle() {
        let mut t = tb();
        let mut r = rng(8);
        for k in 0..40 {
            for _ in 0..(k * 7) % 45 {
                let (wr, rd) = (chance(&mut r, 0.7), chance(&mut r, 0.3));
                let d = val(&mut r);
                t.step(wr, rd, d);
            }
            t.m.set("wr", 1);
            t.m.set("rd", 1);
            t.m.set("rst", 1);
            t.m.tick();
            t.m.set("rst", 0);
            t.q.clear();
            t.full = false;
            t.last_push = false;
            for _ in 0..4 {
                assert_eq!(t.step(false, true, 0), (false, false), "after reset {k}");
            }
            for _ in 0..200 {
                let (wr, rd) = (chance(&mut r, 0.6), chance(&mut r, 0.5));
                let d = val(&mut r);
                t.step(wr, rd, d);
            }
        }
    }

    /// rdresp's shape (365 bits, 4096 entries) generates, lints and runs: fill to full,
    /// random traffic, drain.
    #[test]
    fn wide_deep_instance() {
        let m = model(BramFifo::<365, 12>::default(), "bramfifo_w");
        let mut t = Tb::new(m, 4096);
        let mut r = rng(9);
        for k in 0..4096 {
            let d = r.random();
            assert!(t.step(true, false, d).0, "push {k}");
        }
        let d = r.random();
        assert!(!t.step(true, false, d).0 && t.full);
        for _ in 0..3000 {
            let (wr, rd) = (chance(&mut r, 0.5), chance(&mut r, 0.5));
            let d = r.random();
            t.step(wr, rd, d);
        }
        while !t.q.is_empty() {
            t.settle();
            t.step(false, true, 0);
        }
    }

    /// The Rust model (`update()`, what rust-hdl's simulator runs) against the Verilog, cycle
    /// for cycle: the same random inputs (pushes, pops, idle on both sides, two resets)
    /// through both, every cycle's `empty`, `full` and `dout` (while `!empty`) equal.
    #[test]
    fn rust_model_matches_the_verilog() {
        let mut r = rng(10);
        let ins: Vec<(bool, bool, bool, u64)> = (0..3000)
            .map(|i| {
                let fill = [0.8, 0.3, 0.5][(i / 300) % 3];
                let rst = i == 1000 || i == 2200;
                (
                    rst,
                    chance(&mut r, fill),
                    chance(&mut r, 1.0 - fill),
                    r.random_range(0..256),
                )
            })
            .collect();
        let mut m = model(BramFifo::<8, 3>::default(), "bramfifo_s");
        reset(&mut m);
        let mut want = vec![];
        for &(rst, wr, rd, d) in &ins {
            m.set("rst", rst as u64);
            m.set("wr", wr as u64);
            m.set("rd", rd as u64);
            m.set("din", d);
            m.tick();
            let e = m.bit("empty");
            want.push((e, m.bit("full"), if e { 0 } else { m.get("dout") }));
        }
        assert!(want.iter().any(|w| w.1) && want.iter().filter(|w| w.0).count() > 100);
        let mut uut = BramFifo::<8, 3>::default();
        uut.connect_all();
        let mut sim = simple_sim!(BramFifo<8, 3>, clock, 100_000_000, ep, {
            let mut x = ep.init()?;
            x.rst.next = true;
            wait_clock_cycles!(ep, clock, x, 3);
            for (k, &(rst, wr, rd, d)) in ins.iter().enumerate() {
                x.rst.next = rst;
                x.wr.next = wr;
                x.rd.next = rd;
                x.din.next = d.into();
                let e = x.empty.val();
                let got = (e, x.full.val(), if e { 0 } else { x.dout.val().index() as u64 });
                sim_assert_eq!(ep, got, want[k], x);
                wait_clock_cycle!(ep, clock, x);
            }
            ep.done(x)
        });
        sim.run(Box::new(uut), 1_000_000_000).unwrap();
    }
}
