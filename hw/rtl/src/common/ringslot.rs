//! `RingSlot`: the BAR2 ring-memory slot of WQE `idx` of a QP's send or receive queue
//! (combinational). Ring memory is a pool of two ring classes (rnic-abi `BuildParams`):
//! standard rings of `sq_depth` / `rq_depth` WQEs and, for the last `deep_qps` QP numbers,
//! deep rings of `deep_depth`. Each region is aligned to its size, so a slot is the region
//! base OR (QP part << log2 depth) OR (idx mod depth): masks and a 2:1 mux, no adder and no
//! compare (the class is a mask test, `BuildParams::deep_qpn_mask`). The constants come from
//! rnic-abi (`region_base`, `deep_qpn_mask`), the same numbers the driver's `sq_slot` /
//! `rq_slot` use.

use crate::common::bus::RING_SLOT_BITS;
use rnic_abi::params::BuildParams;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct RingSlot {
    /// QP number (only valid QPs are asked for).
    pub qpn: Signal<In, Bits<24>>,
    /// Free-running ring index.
    pub idx: Signal<In, Bits<16>>,
    /// Ring-memory slot (64-byte WQE) of that index.
    pub slot: Signal<Out, Bits<RING_SLOT_BITS>>,
    /// QPN bits that are all ones exactly for the deep-ring QPs (of the valid ones)
    k_deep_hi: Constant<Bits<24>>,
    k_std_base: Constant<Bits<RING_SLOT_BITS>>,
    k_std_log2: Constant<Bits<5>>,
    k_std_mask: Constant<Bits<16>>,
    k_deep_base: Constant<Bits<RING_SLOT_BITS>>,
    k_deep_qmask: Constant<Bits<24>>,
    k_deep_log2: Constant<Bits<5>>,
    k_deep_mask: Constant<Bits<16>>,
}

fn k<const N: usize>(v: u64) -> Constant<Bits<N>> {
    Constant::new(v.into())
}

impl RingSlot {
    /// Slots of the send queues (`region` 0) or of the receive queues (`region` 1).
    fn new(p: &BuildParams, region: u32) -> Self {
        let depth = if region == 0 { p.sq_depth } else { p.rq_depth };
        let deep_mask = if p.deep_qps == 0 { 0 } else { p.deep_qps - 1 };
        RingSlot {
            qpn: Default::default(),
            idx: Default::default(),
            slot: Default::default(),
            k_deep_hi: k(p.deep_qpn_mask() as u64),
            k_std_base: k(p.region_base(region) as u64),
            k_std_log2: k(depth.trailing_zeros() as u64),
            k_std_mask: k(depth as u64 - 1),
            k_deep_base: k(p.region_base(region + 2) as u64),
            k_deep_qmask: k(deep_mask as u64),
            k_deep_log2: k(p.deep_depth.trailing_zeros() as u64),
            k_deep_mask: k(p.deep_depth as u64 - 1),
        }
    }
    /// Send-queue slots.
    pub fn sq(p: &BuildParams) -> Self {
        Self::new(p, 0)
    }
    /// Receive-queue slots.
    pub fn rq(p: &BuildParams) -> Self {
        Self::new(p, 1)
    }
}

impl Logic for RingSlot {
    #[hdl_gen]
    fn update(&mut self) {
        if (self.qpn.val() & self.k_deep_hi.val()) == self.k_deep_hi.val() {
            self.slot.next = self.k_deep_base.val()
                | (bit_cast::<RING_SLOT_BITS, 24>(self.qpn.val() & self.k_deep_qmask.val())
                    << self.k_deep_log2.val())
                | bit_cast::<RING_SLOT_BITS, 16>(self.idx.val() & self.k_deep_mask.val());
        } else {
            self.slot.next = self.k_std_base.val()
                | (bit_cast::<RING_SLOT_BITS, 24>(self.qpn.val()) << self.k_std_log2.val())
                | bit_cast::<RING_SLOT_BITS, 16>(self.idx.val() & self.k_std_mask.val());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{model, rng};
    use rand::Rng;
    use rnic_abi::params::DEFAULT as P;

    /// Test bench: the block between registers (the harness needs a clock).
    #[derive(LogicBlock)]
    struct Bench {
        clock: Signal<In, Clock>,
        qpn: Signal<In, Bits<24>>,
        idx: Signal<In, Bits<16>>,
        slot: Signal<Out, Bits<RING_SLOT_BITS>>,
        rs: RingSlot,
        slot_q: DFF<Bits<RING_SLOT_BITS>>,
    }

    impl Logic for Bench {
        #[hdl_gen]
        fn update(&mut self) {
            dff_setup!(self, clock, slot_q);
            self.rs.qpn.next = self.qpn.val();
            self.rs.idx.next = self.idx.val();
            self.slot_q.d.next = self.rs.slot.val();
            self.slot.next = self.slot_q.q.val();
        }
    }

    fn bench(rs: RingSlot) -> Bench {
        Bench {
            clock: Default::default(),
            qpn: Default::default(),
            idx: Default::default(),
            slot: Default::default(),
            rs,
            slot_q: Default::default(),
        }
    }

    /// Every QP of the build (both classes, the class boundary included) and random indices
    /// give the slot rnic-abi's `sq_slot` / `rq_slot` give the driver; no two (QP, slot)
    /// pairs of valid indices share a slot.
    #[test]
    fn ring_slots_match_the_abi() {
        const { assert!(P.deep_qps > 0, "the default build has deep-ring QPs") };
        for (name, rs, want) in [
            (
                "sq",
                RingSlot::sq(&P),
                (|q, i| P.sq_slot(q, i)) as fn(u32, u32) -> u32,
            ),
            ("rq", RingSlot::rq(&P), |q, i| P.rq_slot(q, i)),
        ] {
            let mut m = model(bench(rs), &format!("ringslot_{name}"));
            let mut r = rng(11);
            let mut seen = std::collections::HashSet::new();
            for qpn in 0..P.num_qps {
                let depth = if name == "sq" {
                    P.sq_depth_of(qpn)
                } else {
                    P.rq_depth_of(qpn)
                };
                let mut idxs: Vec<u32> = vec![0, depth - 1, depth, 0xFFFF];
                idxs.extend((0..6).map(|_| r.random_range(0..=0xFFFFu32)));
                for idx in idxs {
                    m.set("qpn", qpn as u64);
                    m.set("idx", idx as u64);
                    // the output register takes the slot at the first edge, shows it after it
                    m.tick();
                    m.tick();
                    let got = m.get("slot") as u32;
                    assert_eq!(
                        got * 64,
                        want(qpn, idx),
                        "{name} QP {qpn} index {idx:#x} (deep {})",
                        P.is_deep(qpn)
                    );
                    assert!(got * 64 < P.ring_bytes());
                    seen.insert((got, qpn, idx % depth));
                }
            }
            let slots: std::collections::HashSet<u32> = seen.iter().map(|s| s.0).collect();
            let pairs: std::collections::HashSet<(u32, u32)> =
                seen.iter().map(|s| (s.1, s.2)).collect();
            assert_eq!(
                slots.len(),
                pairs.len(),
                "{name}: two ring entries share a slot"
            );
        }
    }
}
