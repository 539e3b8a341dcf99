//! Show-ahead FIFO in LUT RAM / registers (the one FIFO of the data path: `txreq`'s scheduler
//! queue, `txbuild`'s beat and ICRC queues, `rxresp`'s header and job queues). rust-hdl's
//! `SynchronousFIFO` is not used: its internal names collide once `$` is replaced. The body is
//! Verilog text (an asynchronous-read array); `update()` is the same behaviour in Rust.

use rust_hdl::prelude::*;
use std::collections::VecDeque;

/// Show-ahead FIFO of `2^A` entries of `W` bits: `dout` is the head while `!empty`; `rd` pops,
/// `wr` pushes (ignored when full / empty). Synchronous `rst` empties it. Storage is a plain
/// register array (LUTRAM / BRAM by inference).
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
            if self.rst.val() {
                self._q.clear();
            } else {
                let (full, empty) = (self._q.len() == 1 << A, self._q.is_empty());
                if self.rd.val() && !empty {
                    self._q.pop_front();
                }
                if self.wr.val() && !full {
                    self._q.push_back(self.din.val());
                }
            }
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
        Verilog::Custom(format!(
            "reg [{w1}:0] mem [0:{d1}];
reg [{a}:0] wp;
reg [{a}:0] rp;
always @(*) begin
    dout = mem[rp[{a1}:0]];
    empty = wp == rp;
    full = (wp[{a1}:0] == rp[{a1}:0]) && (wp[{a}] != rp[{a}]);
end
always @(posedge clock) begin
    if (wr && !full) mem[wp[{a1}:0]] <= din;
end
always @(posedge clock) begin
    if (rst) begin
        wp <= {z};
        rp <= {z};
    end else begin
        if (wr && !full) wp <= wp + {one};
        if (rd && !empty) rp <= rp + {one};
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
            if self.rst.val() {
                self._q.clear();
            } else {
                let (full, empty) = (self._q.len() == 1 << A, self._q.is_empty());
                if self.rd.val() && !empty {
                    self._q.pop_front();
                }
                if self.wr.val() && !full {
                    self._q.push_back(self.din.val());
                }
            }
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
        Verilog::Custom(format!(
            "reg [{w1}:0] mem [0:{d1}];
reg [{a}:0] wp;
reg [{a}:0] rp;
reg [{a}:0] cnt;
wire [{a1}:0] rp2 = rp[{a1}:0] + {one1};
always @(*) begin
    dout = mem[rp[{a1}:0]];
    dout2 = mem[rp2];
    empty = wp == rp;
    two = |cnt[{a}:1];
    full = (wp[{a1}:0] == rp[{a1}:0]) && (wp[{a}] != rp[{a}]);
end
always @(posedge clock) begin
    if (wr && !full) mem[wp[{a1}:0]] <= din;
end
always @(posedge clock) begin
    if (rst) begin
        wp <= {z};
        rp <= {z};
        cnt <= {z};
    end else begin
        if (wr && !full) wp <= wp + {one};
        if (rd && !empty) rp <= rp + {one};
        if ((wr && !full) && !(rd && !empty)) cnt <= cnt + {one};
        if (!(wr && !full) && (rd && !empty)) cnt <= cnt - {one};
    end
end
",
            w1 = W - 1,
            d1 = (1usize << A) - 1,
            a = A,
            a1 = A - 1,
            z = format_args!("{}'d0", A + 1),
            one = format_args!("{}'d1", A + 1),
            one1 = format_args!("{}'d1", A),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;

    /// Random pushes and pops (also when full / empty) against a VecDeque, in Verilator.
    #[test]
    fn random_push_pop_against_a_queue() {
        let mut m = model(Fifo::<12, 3>::default(), "fifo");
        let mut r = rng(3);
        reset(&mut m);
        let mut q: VecDeque<u64> = VecDeque::new();
        let (mut pushed, mut popped) = (0, 0);
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
        assert!(pushed > 5000 && popped > 5000);
    }

    /// The same against a VecDeque for [`PeekFifo`], with its second entry and `two`.
    #[test]
    fn peek_fifo_against_a_queue() {
        let mut m = model(PeekFifo::<12, 3>::default(), "peekfifo");
        let mut r = rng(4);
        reset(&mut m);
        let mut q: VecDeque<u64> = VecDeque::new();
        let mut seen2 = 0;
        for i in 0..20_000 {
            let fill = if (i / 2000) % 2 == 0 { 0.7 } else { 0.3 };
            let (wr, rd) = (chance(&mut r, fill), chance(&mut r, 1.0 - fill));
            let din: u64 = r.random_range(0..4096);
            m.set("wr", wr as u64);
            m.set("rd", rd as u64);
            m.set("din", din);
            m.tick();
            assert_eq!(m.bit("empty"), q.is_empty(), "empty at {i}");
            assert_eq!(m.bit("two"), q.len() >= 2, "two at {i}");
            assert_eq!(m.bit("full"), q.len() == 8, "full at {i}");
            if let Some(h) = q.front() {
                assert_eq!(m.get("dout"), *h, "head at {i}");
            }
            if let Some(h) = q.get(1) {
                assert_eq!(m.get("dout2"), *h, "second at {i}");
                seen2 += 1;
            }
            let full = q.len() == 8;
            if rd && !q.is_empty() {
                q.pop_front();
            }
            if wr && !full {
                q.push_back(din);
            }
        }
        assert!(seen2 > 5000);
    }
}
