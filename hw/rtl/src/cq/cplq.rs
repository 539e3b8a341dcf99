//! Data-path block `cplq`: a queue of completion requests between a producer (`ackproc`) and
//! the completion writer (`cqwriter`). Sixteen entries, first-word fall-through: a completion
//! offered while the queue is empty reaches `cqwriter` in the same cycle (no added latency),
//! and the producer goes on while `cqwriter` writes the CQEs before it. Without it the ACK
//! processor's walk retired one WQE per CQE write (2 to 3 cycles each: `cqwriter` takes a
//! completion only when the one before was issued) and its per-ACK cycles (context, write-back)
//! left `cqwriter` idle; one deep QP's 64-byte WRITEs were paced by that chain
//! (docs/BENCHMARKS.md, issue 12).
//!
//! The queue is a [`FtFifo`] (handshakes there); this block packs a completion into an
//! entry and back. Order is kept, so the CQEs of one producer land in the order it
//! completed them.

use crate::common::bus::{CplM, CplS};
use crate::common::ftfifo::FtFifo;
use rust_hdl::prelude::*;

/// Bits of one queued completion: cqn 16, wr_id 64, byte_len 32, imm 32, qpn 24, src_qp 24,
/// opcode 8, status 8, flags 8, wqe_idx 16 (packed in that order from bit 0).
const CW: usize = 232;
/// log2 of the depth.
const DA: usize = 4;
/// Entries held.
pub const DEPTH: usize = 1 << DA;

#[derive(LogicBlock, Default)]
pub struct CplQ {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub i: CplS,
    pub o: CplM,
    q: FtFifo<CW, DA>,
}

impl Logic for CplQ {
    #[hdl_gen]
    fn update(&mut self) {
        self.q.clock.next = self.clock.val();
        self.q.rst.next = self.rst.val();
        self.q.din.next = bit_cast::<CW, 16>(self.i.cqn.val())
            | (bit_cast::<CW, 64>(self.i.wr_id.val()) << 16)
            | (bit_cast::<CW, 32>(self.i.byte_len.val()) << 80)
            | (bit_cast::<CW, 32>(self.i.imm.val()) << 112)
            | (bit_cast::<CW, 24>(self.i.qpn.val()) << 144)
            | (bit_cast::<CW, 24>(self.i.src_qp.val()) << 168)
            | (bit_cast::<CW, 8>(self.i.opcode.val()) << 192)
            | (bit_cast::<CW, 8>(self.i.status.val()) << 200)
            | (bit_cast::<CW, 8>(self.i.flags.val()) << 208)
            | (bit_cast::<CW, 16>(self.i.wqe_idx.val()) << 216);
        self.q.in_valid.next = self.i.valid.val();
        self.i.ready.next = self.q.in_ready.val();
        self.o.valid.next = self.q.out_valid.val();
        self.q.out_ready.next = self.o.ready.val();
        self.o.cqn.next = self.q.dout.val().get_bits::<16>(0);
        self.o.wr_id.next = self.q.dout.val().get_bits::<64>(16);
        self.o.byte_len.next = self.q.dout.val().get_bits::<32>(80);
        self.o.imm.next = self.q.dout.val().get_bits::<32>(112);
        self.o.qpn.next = self.q.dout.val().get_bits::<24>(144);
        self.o.src_qp.next = self.q.dout.val().get_bits::<24>(168);
        self.o.opcode.next = self.q.dout.val().get_bits::<8>(192);
        self.o.status.next = self.q.dout.val().get_bits::<8>(200);
        self.o.flags.next = self.q.dout.val().get_bits::<8>(208);
        self.o.wqe_idx.next = self.q.dout.val().get_bits::<16>(216);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;

    const F: [(&str, u32); 10] = [
        ("cqn", 16),
        ("wr_id", 64),
        ("byte_len", 32),
        ("imm", 32),
        ("qpn", 24),
        ("src_qp", 24),
        ("opcode", 8),
        ("status", 8),
        ("flags", 8),
        ("wqe_idx", 16),
    ];

    fn cpl(r: &mut impl Rng) -> [u64; 10] {
        let mut c = [0u64; 10];
        for (k, (_, w)) in F.iter().enumerate() {
            c[k] = if *w == 64 {
                r.random()
            } else {
                r.random_range(0..1u64 << w)
            };
        }
        c
    }

    /// [`queue_stress`] with completions of random field values (every bit of the packing
    /// exercised): each comes out once, in order, with every field; the queue fills up under
    /// a slow consumer, and a completion offered into an empty queue with the consumer ready
    /// goes through in its cycle.
    #[test]
    fn completions_in_order_under_random_idle_and_backpressure() {
        let mut m = model(CplQ::default(), "cplq");
        reset(&mut m);
        let st = queue_stress(
            &mut m,
            47,
            30_000,
            ("i_", "o_", DEPTH),
            cpl,
            |m, c| {
                for (k, (f, _)) in F.iter().enumerate() {
                    m.set(&format!("i_{f}"), c[k]);
                }
            },
            |m, c| {
                for (k, (f, _)) in F.iter().enumerate() {
                    assert_eq!(m.get(&format!("o_{f}")), c[k], "field {f}");
                }
            },
        );
        assert!(st.got > 10_000 && st.thru > 500 && st.full > 1000);
    }
}
