//! Block `descslice`: a register slice on the packet-descriptor bus between the requester
//! (`txreq`) and the frame builder (`txbuild`).
//!
//! The requester computes a descriptor's payload length late in its cycle (`rem <= mtu`, the
//! path MTU, the WQE's length), and the frame builder sums the frame length, its beat count
//! and the payload-read command from it in the same cycle; the builder's `ready` (room and the
//! payload-read port) went back into the requester's pop. Both directions now end at
//! registers here: the builder sees a descriptor from flip-flops and the requester sees a
//! `ready` that is a register's decode. Two entries, so a descriptor can go in every cycle
//! while one leaves every cycle (no bubble); one cycle of latency.
//!
//! Verilog text generated from the descriptor's field list (`txreq::DESC_FIELDS`), like the
//! builder's descriptor FIFO; the slice's body is `common::regslice`'s.

use crate::common::regslice::slice_verilog;
use crate::tx::txreq::{DESC_FIELDS, TxDescM, TxDescS};
use rust_hdl::prelude::*;

/// Two-entry register slice of packet descriptors: `i` (sink: `ready` while fewer than two
/// are held), `o` (source: `valid` while one is held, its fields from the head register).
/// Synchronous reset empties it.
#[derive(LogicBlock, Default)]
pub struct DescSlice {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub i: TxDescS,
    pub o: TxDescM,
}

impl Logic for DescSlice {
    /// No rust-hdl model: Verilog text, checked in Verilator by the tests.
    fn update(&mut self) {}
    fn connect(&mut self) {
        self.i.ready.connect();
        self.o.valid.connect();
        self.o.connect_fields();
    }
    fn hdl(&self) -> Verilog {
        let w: usize = DESC_FIELDS.iter().map(|f| f.1).sum();
        let cat = |p: &str| {
            DESC_FIELDS
                .iter()
                .rev()
                .map(|f| format!("{p}${}", f.0))
                .collect::<Vec<_>>()
                .join(", ")
        };
        Verilog::Custom(slice_verilog(
            w,
            ("i$valid", "i$ready", &format!("{{{}}}", cat("i"))),
            ("o$valid", "o$ready", &format!("{{{}}}", cat("o"))),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use crate::common::vlt::DynModel;
    use rand::Rng;

    /// A descriptor of random field values (each field cut to its width).
    fn desc(r: &mut impl Rng) -> Vec<Vec<u8>> {
        DESC_FIELDS
            .iter()
            .map(|&(_, b)| {
                let mut v: Vec<u8> = (0..b.div_ceil(8)).map(|_| r.random()).collect();
                if b % 8 != 0 {
                    *v.last_mut().unwrap() &= (1u8 << (b % 8)) - 1;
                }
                v
            })
            .collect()
    }

    /// [`reg_queue_stress`] with descriptors of random field values: each comes out once, in
    /// order, with every field; `valid` exactly while one taken in an earlier cycle is held
    /// (nothing goes straight through: the outputs are registers), never more than two held;
    /// and with the consumer always ready a descriptor goes in and one comes out in every
    /// cycle.
    #[test]
    fn descriptors_in_order_under_random_idle_and_backpressure() {
        let mut m = model(DescSlice::default(), "descslice");
        reset(&mut m);
        let set = |m: &mut DynModel, d: &Vec<Vec<u8>>| {
            for (k, f) in DESC_FIELDS.iter().enumerate() {
                m.set_bytes(&format!("i_{}", f.0), &d[k]);
            }
        };
        let st = reg_queue_stress(&mut m, 7, 20_000, ("i_", "o_", 2), desc, set, |m, d| {
            for (k, f) in DESC_FIELDS.iter().enumerate() {
                let o = m.get_bytes(&format!("o_{}", f.0));
                assert_eq!(o[..d[k].len()], d[k][..], "field {}", f.0);
            }
        });
        assert!(
            st.got > 5000 && st.full > 500,
            "{} taken, {} cycles full",
            st.got,
            st.full
        );
        // full rate: offered every cycle and taken every cycle, one per cycle after the first
        let outs = full_rate(&mut m, 3, 200, ("i_", "o_"), desc, set);
        assert!(outs >= 198, "{outs} out of 200 cycles");
    }
}
