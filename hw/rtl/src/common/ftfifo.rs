//! First-word fall-through queue: a [`Fifo`] with a bypass, for the queues between two
//! engines where an entry offered to an empty queue must not lose a cycle (`rx::ackevq`:
//! ACK events to the ACK processor; `cq::cplq`: the ACK processor's completions to the
//! completion writer). The blocks that use it pack their bundle's fields into `din` and
//! unpack `dout`.
//!
//! `in_ready` = not full; `out_valid` = not empty or `in_valid`; `dout` is the head, or `din`
//! when empty; an entry is queued when offered and not taken straight through (offered into
//! an empty queue in a cycle with `out_ready`). `in_ready` never depends on `out_ready`, so no
//! combinational path runs from the consumer's ready to the producer's.

use crate::common::fifo::Fifo;
use rust_hdl::prelude::*;

/// The queue: `2^A` entries of `W` bits (see the module documentation).
#[derive(LogicBlock, Default)]
pub struct FtFifo<const W: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub din: Signal<In, Bits<W>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub dout: Signal<Out, Bits<W>>,
    q: Fifo<W, A>,
    thru: Signal<Local, Bit>,
}

impl<const W: usize, const A: usize> Logic for FtFifo<W, A> {
    #[hdl_gen]
    fn update(&mut self) {
        self.q.clock.next = self.clock.val();
        self.q.rst.next = self.rst.val();
        self.q.din.next = self.din.val();
        self.dout.next = self.q.dout.val();
        if self.q.empty.val() {
            self.dout.next = self.din.val();
        }
        self.out_valid.next = !self.q.empty.val() || self.in_valid.val();
        self.in_ready.next = !self.q.full.val();
        // straight through: offered into an empty queue and taken in the same cycle
        self.thru.next = self.q.empty.val() && self.in_valid.val() && self.out_ready.val();
        self.q.wr.next = self.in_valid.val() && !self.q.full.val() && !self.thru.val();
        self.q.rd.next = !self.q.empty.val() && self.out_ready.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;

    /// [`queue_stress`]: every entry out once, in order, `out_valid` exactly while one is
    /// held, at most the depth held; the queue fills up under the slow consumer, and an entry
    /// offered into an empty queue with the consumer ready goes through in its cycle.
    #[test]
    fn entries_in_order_under_random_idle_and_backpressure() {
        let mut m = model(FtFifo::<40, 3>::default(), "ftfifo");
        reset(&mut m);
        let st = queue_stress(
            &mut m,
            53,
            30_000,
            ("in_", "out_", 8),
            |r| r.random_range(0..1u64 << 40),
            |m, e| m.set("din", *e),
            |m, e| assert_eq!(m.get("dout"), *e),
        );
        assert!(
            st.got > 10_000 && st.thru > 500 && st.full > 1000,
            "{} entries, {} straight through, {} cycles full",
            st.got,
            st.thru,
            st.full
        );
    }
}
