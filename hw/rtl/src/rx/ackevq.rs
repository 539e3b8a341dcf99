//! Data-path block `ackevq`: the queue of received ACKNOWLEDGE / READ RESPONSE / ATOMIC
//! ACKNOWLEDGE events between the responder (`rxresp`, which checks the frame and emits the
//! event) and the ACK processor (`ackproc`). Four entries, first-word fall-through: an event
//! offered while the queue is empty reaches `ackproc` in the same cycle (no added latency on
//! the READ RESPONSE verdict round trip), and the responder goes on to the next frame while
//! `ackproc` walks the SQ for the last one. So `ackproc` finds the next event waiting when it
//! walks, which is when it reads that event's QP record ahead; without the queue the
//! responder held each event until `ackproc`'s Idle took it and every ACK on another QP
//! paid for a context read (docs/BENCHMARKS.md, issue 12).
//!
//! `i.ready` = not full; `o.valid` = not empty or `i.valid`; `o` shows the head, or `i`
//! when empty; an event is queued when offered and not taken straight through.

use crate::common::bus::{AckEvM, AckEvS};
use crate::common::fifo::Fifo;
use rust_hdl::prelude::*;

/// Bits of one queued event: qpn 24, psn 24, syndrome 8, msn 24, rsp 1, rpos 2, plen 13,
/// atom 1.
const EW: usize = 97;
/// log2 of the depth.
const DA: usize = 2;

#[derive(LogicBlock, Default)]
pub struct AckEvQ {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub i: AckEvS,
    pub o: AckEvM,
    q: Fifo<EW, DA>,
    din: Signal<Local, Bits<EW>>,
    head: Signal<Local, Bits<EW>>,
    thru: Signal<Local, Bit>,
}

impl Logic for AckEvQ {
    #[hdl_gen]
    fn update(&mut self) {
        self.q.clock.next = self.clock.val();
        self.q.rst.next = self.rst.val();
        self.din.next = bit_cast::<EW, 24>(self.i.qpn.val())
            | (bit_cast::<EW, 24>(self.i.psn.val()) << 24)
            | (bit_cast::<EW, 8>(self.i.syndrome.val()) << 48)
            | (bit_cast::<EW, 24>(self.i.msn.val()) << 56)
            | (bit_cast::<EW, 1>(self.i.rsp.val().into()) << 80)
            | (bit_cast::<EW, 2>(self.i.rpos.val()) << 81)
            | (bit_cast::<EW, 13>(self.i.plen.val()) << 83)
            | (bit_cast::<EW, 1>(self.i.atom.val().into()) << 96);
        self.q.din.next = self.din.val();
        self.head.next = self.q.dout.val();
        if self.q.empty.val() {
            self.head.next = self.din.val();
        }
        self.o.valid.next = !self.q.empty.val() || self.i.valid.val();
        self.o.qpn.next = self.head.val().get_bits::<24>(0);
        self.o.psn.next = self.head.val().get_bits::<24>(24);
        self.o.syndrome.next = self.head.val().get_bits::<8>(48);
        self.o.msn.next = self.head.val().get_bits::<24>(56);
        self.o.rsp.next = self.head.val().get_bit(80);
        self.o.rpos.next = self.head.val().get_bits::<2>(81);
        self.o.plen.next = self.head.val().get_bits::<13>(83);
        self.o.atom.next = self.head.val().get_bit(96);
        self.i.ready.next = !self.q.full.val();
        // straight through: offered into an empty queue and taken in the same cycle
        self.thru.next = self.q.empty.val() && self.i.valid.val() && self.o.ready.val();
        self.q.wr.next = self.i.valid.val() && !self.q.full.val() && !self.thru.val();
        self.q.rd.next = !self.q.empty.val() && self.o.ready.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;

    fn ev(r: &mut impl Rng) -> [u64; 8] {
        [
            r.random_range(0..1 << 24),
            r.random_range(0..1 << 24),
            r.random_range(0..256),
            r.random_range(0..1 << 24),
            r.random_range(0..2),
            r.random_range(0..4),
            r.random_range(0..1 << 13),
            r.random_range(0..2),
        ]
    }
    const F: [&str; 8] = [
        "qpn", "psn", "syndrome", "msn", "rsp", "rpos", "plen", "atom",
    ];

    /// Random offers (random idle) and random backpressure: every event comes out once, in
    /// order, with every field; the queue never holds more than its depth, and an event
    /// offered into an empty queue with the consumer ready goes through in its cycle.
    #[test]
    fn events_in_order_under_random_idle_and_backpressure() {
        let mut m = model(AckEvQ::default(), "ackevq");
        let mut r = rng(31);
        reset(&mut m);
        let mut sent = std::collections::VecDeque::new();
        let (mut got, mut thru) = (0, 0);
        let mut cur: Option<[u64; 8]> = None;
        for _ in 0..20_000 {
            if cur.is_none() && chance(&mut r, 0.6) {
                cur = Some(ev(&mut r));
            }
            m.set("i_valid", cur.is_some() as u64);
            if let Some(e) = cur {
                for (k, f) in F.iter().enumerate() {
                    m.set(&format!("i_{f}"), e[k]);
                }
            }
            let rdy = chance(&mut r, 0.5);
            m.set("o_ready", rdy as u64);
            let was_empty = sent.is_empty();
            m.tick();
            let offered = cur.is_some() && m.bit("i_ready");
            if offered {
                sent.push_back(cur.take().unwrap());
            }
            if m.bit("o_valid") && rdy {
                let want = sent.pop_front().expect("an event out of nowhere");
                for (k, f) in F.iter().enumerate() {
                    assert_eq!(m.get(&format!("o_{f}")), want[k], "field {f}");
                }
                got += 1;
                if was_empty && offered {
                    thru += 1;
                }
            }
            assert!(sent.len() <= 4, "{} events held", sent.len());
        }
        assert!(
            got > 5000 && thru > 300,
            "{got} events, {thru} straight through"
        );
    }
}
