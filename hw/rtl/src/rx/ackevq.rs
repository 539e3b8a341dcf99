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
//! The queue is a [`FtFifo`] (handshakes there); this block packs an event into an entry
//! and back.

use crate::common::bus::{AckEvM, AckEvS};
use crate::common::ftfifo::FtFifo;
use rust_hdl::prelude::*;

/// Bits of one queued event: qpn 24, psn 24, syndrome 8, msn 24, rsp 1, rpos 2, plen 13,
/// atom 1, ackci 16, hv 1.
const EW: usize = 114;
/// log2 of the depth.
const DA: usize = 2;

#[derive(LogicBlock, Default)]
pub struct AckEvQ {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub i: AckEvS,
    pub o: AckEvM,
    q: FtFifo<EW, DA>,
}

impl Logic for AckEvQ {
    #[hdl_gen]
    fn update(&mut self) {
        self.q.clock.next = self.clock.val();
        self.q.rst.next = self.rst.val();
        self.q.din.next = bit_cast::<EW, 24>(self.i.qpn.val())
            | (bit_cast::<EW, 24>(self.i.psn.val()) << 24)
            | (bit_cast::<EW, 8>(self.i.syndrome.val()) << 48)
            | (bit_cast::<EW, 24>(self.i.msn.val()) << 56)
            | (bit_cast::<EW, 1>(self.i.rsp.val().into()) << 80)
            | (bit_cast::<EW, 2>(self.i.rpos.val()) << 81)
            | (bit_cast::<EW, 13>(self.i.plen.val()) << 83)
            | (bit_cast::<EW, 1>(self.i.atom.val().into()) << 96)
            | (bit_cast::<EW, 16>(self.i.ackci.val()) << 97)
            | (bit_cast::<EW, 1>(self.i.hv.val().into()) << 113);
        self.q.in_valid.next = self.i.valid.val();
        self.i.ready.next = self.q.in_ready.val();
        self.o.valid.next = self.q.out_valid.val();
        self.q.out_ready.next = self.o.ready.val();
        self.o.qpn.next = self.q.dout.val().get_bits::<24>(0);
        self.o.psn.next = self.q.dout.val().get_bits::<24>(24);
        self.o.syndrome.next = self.q.dout.val().get_bits::<8>(48);
        self.o.msn.next = self.q.dout.val().get_bits::<24>(56);
        self.o.rsp.next = self.q.dout.val().get_bit(80);
        self.o.rpos.next = self.q.dout.val().get_bits::<2>(81);
        self.o.plen.next = self.q.dout.val().get_bits::<13>(83);
        self.o.atom.next = self.q.dout.val().get_bit(96);
        self.o.ackci.next = self.q.dout.val().get_bits::<16>(97);
        self.o.hv.next = self.q.dout.val().get_bit(113);
        // (the sender's record reads go around the queue)
        self.o.xq_g.next = self.i.xq_g.val();
        self.o.xq_qpn.next = self.i.xq_qpn.val();
        self.o.xq_d.next = self.i.xq_d.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;

    fn ev(r: &mut impl Rng) -> [u64; 10] {
        [
            r.random_range(0..1 << 24),
            r.random_range(0..1 << 24),
            r.random_range(0..256),
            r.random_range(0..1 << 24),
            r.random_range(0..2),
            r.random_range(0..4),
            r.random_range(0..1 << 13),
            r.random_range(0..2),
            r.random_range(0..1 << 16),
            r.random_range(0..2),
        ]
    }
    const F: [&str; 10] = [
        "qpn", "psn", "syndrome", "msn", "rsp", "rpos", "plen", "atom", "ackci", "hv",
    ];

    /// [`queue_stress`] with events of random field values: each comes out once, in order,
    /// with every field; the queue never holds more than its depth, and an event offered into
    /// an empty queue with the consumer ready goes through in its cycle.
    #[test]
    fn events_in_order_under_random_idle_and_backpressure() {
        let mut m = model(AckEvQ::default(), "ackevq");
        reset(&mut m);
        let st = queue_stress(
            &mut m,
            31,
            20_000,
            ("i_", "o_", 1 << DA),
            ev,
            |m, e| {
                for (k, f) in F.iter().enumerate() {
                    m.set(&format!("i_{f}"), e[k]);
                }
            },
            |m, e| {
                for (k, f) in F.iter().enumerate() {
                    assert_eq!(m.get(&format!("o_{f}")), e[k], "field {f}");
                }
            },
        );
        assert!(
            st.got > 5000 && st.thru > 300,
            "{} events, {} straight through",
            st.got,
            st.thru
        );
    }
}
