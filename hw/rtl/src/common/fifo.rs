//! Show-ahead FIFO in LUT RAM / registers (the one FIFO of the data path: `txreq`'s scheduler
//! queue, `txbuild`'s beat and ICRC queues, `rxresp`'s header and job queues). rust-hdl's
//! `SynchronousFIFO` is not used: its internal names collide once `$` is replaced. The body is
//! Verilog text (an asynchronous-read array); `update()` is the same behaviour in Rust.

use rust_hdl::prelude::*;
use std::collections::VecDeque;

/// Show-ahead FIFO of `2^A` entries of `W` bits: `dout` is the head while `!empty`; `rd` pops,
/// `wr` pushes (ignored when full / empty). Synchronous `rst` empties it. Storage is a plain
/// register array (LUTRAM / BRAM by inference). `empty` and `full` are registers (set from
/// the entry count before the edge), not compares of the pointers.
#[derive(LogicBlock)]
pub struct Fifo<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub wr: Signal<In, Bit>,
    pub din: Signal<In, Bits<W>>,
    pub rd: Signal<In, Bit>,
    pub dout: Signal<Out, Bits<W>>,
    pub empty: Signal<Out, Bit>,
    pub full: Signal<Out, Bit>,
    _q: VecDeque<Bits<W>>,
}

impl<const W: usize, const A: usize> Default for Fifo<W, A> {
    fn default() -> Self {
        Fifo {
            clock: Default::default(),
            rst: Default::default(),
            wr: Default::default(),
            din: Default::default(),
            rd: Default::default(),
            dout: Default::default(),
            empty: Default::default(),
            full: Default::default(),
            _q: VecDeque::new(),
        }
    }
}

impl<const W: usize, const A: usize> Logic for Fifo<W, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let (rst, rd, wr, din) = (self.rst.val(), self.rd.val(), self.wr.val(), self.din.val());
            model_edge(&mut self._q, 1 << A, rst, rd, wr, din);
        }
        self.dout.next = self._q.front().copied().unwrap_or_default();
        self.empty.next = self._q.is_empty();
        self.full.next = self._q.len() == 1 << A;
    }
    fn connect(&mut self) {
        self.dout.connect();
        self.empty.connect();
        self.full.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(fifo_verilog(W, A, false))
    }
}

/// A clock edge of the FIFOs' Rust model: `rst` empties it; else a pop (when not empty) and
/// a push (when not full, as of before the pop) in the same edge.
fn model_edge<T>(q: &mut VecDeque<T>, cap: usize, rst: bool, rd: bool, wr: bool, din: T) {
    if rst {
        q.clear();
    } else {
        let (full, empty) = (q.len() == cap, q.is_empty());
        if rd && !empty {
            q.pop_front();
        }
        if wr && !full {
            q.push_back(din);
        }
    }
}

/// The FIFOs' Verilog body: `2^a` entries of `w` bits in an asynchronous-read array; with
/// `peek`, also the second entry (`dout2`) and `two` from an entry count register.
fn fifo_verilog(w: usize, a: usize, peek: bool) -> String {
    let (z, one) = (format!("{}'d0", a + 1), format!("{}'d1", a + 1));
    let a1 = a - 1;
    let room1 = format!("{}'d{}", a + 1, (1usize << a) - 1);
    // the entries: the count register of the peek FIFO, else the pointers' difference
    let (p_decl, p_out, p_rst, p_cnt, fill) = if peek {
        (
            format!("reg [{a}:0] cnt;\nwire [{a1}:0] rp2 = rp[{a1}:0] + {a}'d1;\n"),
            "    dout2 = mem[rp2];\n".to_string(),
            format!("        cnt <= {z};\n"),
            format!(
                "        if (push && !pop) cnt <= cnt + {one};
        if (!push && pop) cnt <= cnt - {one};\n"
            ),
            "cnt".to_string(),
        )
    } else {
        (
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            "wp - rp".to_string(),
        )
    };
    let p_two = if peek {
        format!("    two = |cnt[{a}:1];\n")
    } else {
        String::new()
    };
    format!(
        "reg [{w1}:0] mem [0:{d1}];
reg [{a}:0] wp;
reg [{a}:0] rp;
// `empty` and `full` are registers, loaded from the entry count before the edge: a
// producer's push and a consumer's pop (late signals in their blocks) only select their
// next value, and neither flag is a pointer compare in front of the blocks that read it
reg empty_r;
reg full_r;
initial begin
    empty_r = 1'b1;
    full_r = 1'b0;
end
{p_decl}wire [{a}:0] fill = {fill};
wire one_left = fill == {one};
wire one_room = fill == {room1};
wire push = wr && !full_r;
wire pop = rd && !empty_r;
always @(*) begin
    dout = mem[rp[{a1}:0]];
{p_out}    empty = empty_r;
{p_two}    full = full_r;
end
always @(posedge clock) begin
    if (push) mem[wp[{a1}:0]] <= din;
end
always @(posedge clock) begin
    if (rst) begin
        wp <= {z};
        rp <= {z};
        empty_r <= 1'b1;
        full_r <= 1'b0;
{p_rst}    end else begin
        if (push) wp <= wp + {one};
        if (pop) rp <= rp + {one};
        if (push && !pop) begin
            empty_r <= 1'b0;
            full_r <= one_room;
        end
        if (!push && pop) begin
            full_r <= 1'b0;
            empty_r <= one_left;
        end
{p_cnt}    end
end
",
        w1 = w - 1,
        d1 = (1usize << a) - 1,
    )
}

/// [`Fifo`] that also shows its second entry: `dout2` is the entry behind the head while
/// `two` (at least two entries). A second asynchronous read of the same array, at the read
/// pointer + 1 (`rxresp`'s header queue: the responder looks at the next frame while the
/// current one leaves). `two` comes from an entry count kept in a register (not the pointers'
/// difference: a subtract and a compare in front of the responder's decision).
#[derive(LogicBlock)]
pub struct PeekFifo<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub wr: Signal<In, Bit>,
    pub din: Signal<In, Bits<W>>,
    pub rd: Signal<In, Bit>,
    pub dout: Signal<Out, Bits<W>>,
    pub dout2: Signal<Out, Bits<W>>,
    pub empty: Signal<Out, Bit>,
    pub two: Signal<Out, Bit>,
    pub full: Signal<Out, Bit>,
    _q: VecDeque<Bits<W>>,
}

impl<const W: usize, const A: usize> Default for PeekFifo<W, A> {
    fn default() -> Self {
        PeekFifo {
            clock: Default::default(),
            rst: Default::default(),
            wr: Default::default(),
            din: Default::default(),
            rd: Default::default(),
            dout: Default::default(),
            dout2: Default::default(),
            empty: Default::default(),
            two: Default::default(),
            full: Default::default(),
            _q: VecDeque::new(),
        }
    }
}

impl<const W: usize, const A: usize> Logic for PeekFifo<W, A> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let (rst, rd, wr, din) = (self.rst.val(), self.rd.val(), self.wr.val(), self.din.val());
            model_edge(&mut self._q, 1 << A, rst, rd, wr, din);
        }
        self.dout.next = self._q.front().copied().unwrap_or_default();
        self.dout2.next = self._q.get(1).copied().unwrap_or_default();
        self.empty.next = self._q.is_empty();
        self.two.next = self._q.len() >= 2;
        self.full.next = self._q.len() == 1 << A;
    }
    fn connect(&mut self) {
        self.dout.connect();
        self.dout2.connect();
        self.empty.connect();
        self.two.connect();
        self.full.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(fifo_verilog(W, A, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use crate::common::vlt::DynModel;
    use rand::Rng;

    /// Random pushes and pops (also when full / empty) against a VecDeque, in Verilator:
    /// `empty`, `full`, the head, and with `peek` `two` and the second entry, every cycle.
    /// Returns (pushes, pops, cycles with a second entry).
    fn against_a_queue(m: &mut DynModel, seed: u64, peek: bool) -> (u64, u64, u64) {
        let mut r = rng(seed);
        reset(m);
        let mut q: VecDeque<u64> = VecDeque::new();
        let (mut pushed, mut popped, mut seen2) = (0, 0, 0);
        for i in 0..20_000 {
            let fill = if (i / 2000) % 2 == 0 { 0.7 } else { 0.3 };
            let (wr, rd) = (chance(&mut r, fill), chance(&mut r, 1.0 - fill));
            let din: u64 = r.random_range(0..4096);
            m.set("wr", wr as u64);
            m.set("rd", rd as u64);
            m.set("din", din);
            m.tick();
            assert_eq!(m.bit("empty"), q.is_empty(), "empty at {i}");
            assert_eq!(m.bit("full"), q.len() == 8, "full at {i}");
            if let Some(h) = q.front() {
                assert_eq!(m.get("dout"), *h, "head at {i}");
            }
            if peek {
                assert_eq!(m.bit("two"), q.len() >= 2, "two at {i}");
                if let Some(h) = q.get(1) {
                    assert_eq!(m.get("dout2"), *h, "second at {i}");
                    seen2 += 1;
                }
            }
            let full = q.len() == 8;
            if rd && !q.is_empty() {
                q.pop_front();
                popped += 1;
            }
            if wr && !full {
                q.push_back(din);
                pushed += 1;
            }
        }
        (pushed, popped, seen2)
    }

    #[test]
    fn random_push_pop_against_a_queue() {
        let mut m = model(Fifo::<12, 3>::default(), "fifo");
        let (pushed, popped, _) = against_a_queue(&mut m, 3, false);
        assert!(pushed > 5000 && popped > 5000);
    }

    /// The same for [`PeekFifo`], with its second entry and `two`.
    #[test]
    fn peek_fifo_against_a_queue() {
        let mut m = model(PeekFifo::<12, 3>::default(), "peekfifo");
        let (pushed, popped, seen2) = against_a_queue(&mut m, 4, true);
        assert!(pushed > 5000 && popped > 5000 && seen2 > 5000);
    }
}
