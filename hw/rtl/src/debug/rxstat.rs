//! RX statistics: pairs each frame's header-parser result with its ICRC check and counts good
//! RoCE v2 frames, ICRC failures and the parser's drop reasons (BAR0 block `rxstat`).
//!
//! The parser reports a frame 2 cycles after its last beat and the ICRC block 3 cycles after
//! it, both in frame order, so a one-deep pending parser result is enough to pair them (a
//! new parser result and the previous frame's ICRC can arrive in the same cycle: the ICRC is
//! consumed first).

use crate::common::bus::{RegBusS, reg_addr};
use rnic_abi::regs::rxs;
use rust_hdl::prelude::*;

/// Number of parser drop reasons (counters).
pub const DROP_REASONS: usize = rxs::DROP_REASONS.len();

#[derive(LogicBlock)]
pub struct RxStat {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub bus: RegBusS,
    /// From the parser.
    pub hdr_valid: Signal<In, Bit>,
    pub drop: Signal<In, Bit>,
    pub opcode: Signal<In, Bits<8>>,
    pub dest_qpn: Signal<In, Bits<24>>,
    pub psn: Signal<In, Bits<24>>,
    pub drop_cnt: [Signal<In, Bits<32>>; DROP_REASONS],
    /// From the ICRC checker.
    pub icrc_done: Signal<In, Bit>,
    pub icrc_ok: Signal<In, Bit>,
    a_ok: Constant<Bits<16>>,
    a_bad: Constant<Bits<16>>,
    a_op: Constant<Bits<16>>,
    a_qpn: Constant<Bits<16>>,
    a_psn: Constant<Bits<16>>,
    a_drop: [Constant<Bits<16>>; DROP_REASONS],
    rdata: DFF<Bits<32>>,
    pend: DFF<Bit>,
    pend_drop: DFF<Bit>,
    pend_op: DFF<Bits<8>>,
    pend_qpn: DFF<Bits<24>>,
    pend_psn: DFF<Bits<24>>,
    ok: DFF<Bits<32>>,
    bad: DFF<Bits<32>>,
    last_op: DFF<Bits<8>>,
    last_qpn: DFF<Bits<24>>,
    last_psn: DFF<Bits<24>>,
}

impl Default for RxStat {
    fn default() -> Self {
        RxStat {
            clock: Default::default(),
            rst: Default::default(),
            bus: Default::default(),
            hdr_valid: Default::default(),
            drop: Default::default(),
            opcode: Default::default(),
            dest_qpn: Default::default(),
            psn: Default::default(),
            drop_cnt: Default::default(),
            icrc_done: Default::default(),
            icrc_ok: Default::default(),
            a_ok: reg_addr(rxs::ROCE_OK),
            a_bad: reg_addr(rxs::ICRC_BAD),
            a_op: reg_addr(rxs::LAST_OPCODE),
            a_qpn: reg_addr(rxs::LAST_QPN),
            a_psn: reg_addr(rxs::LAST_PSN),
            a_drop: std::array::from_fn(|i| reg_addr(rxs::DROP + 4 * i as u32)),
            rdata: Default::default(),
            pend: Default::default(),
            pend_drop: Default::default(),
            pend_op: Default::default(),
            pend_qpn: Default::default(),
            pend_psn: Default::default(),
            ok: Default::default(),
            bad: Default::default(),
            last_op: Default::default(),
            last_qpn: Default::default(),
            last_psn: Default::default(),
        }
    }
}

impl Logic for RxStat {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, rdata, pend, pend_drop, pend_op, pend_qpn, pend_psn
        );
        dff_setup!(self, clock, ok, bad, last_op, last_qpn, last_psn);
        // the ICRC result of the pending frame first, then a new parser result
        if self.icrc_done.val() && self.pend.q.val() {
            self.pend.d.next = false;
            if !self.pend_drop.q.val() {
                if self.icrc_ok.val() {
                    self.ok.d.next = self.ok.q.val() + 1;
                    self.last_op.d.next = self.pend_op.q.val();
                    self.last_qpn.d.next = self.pend_qpn.q.val();
                    self.last_psn.d.next = self.pend_psn.q.val();
                } else {
                    self.bad.d.next = self.bad.q.val() + 1;
                }
            }
        }
        if self.hdr_valid.val() {
            self.pend.d.next = true;
            self.pend_drop.d.next = self.drop.val();
            self.pend_op.d.next = self.opcode.val();
            self.pend_qpn.d.next = self.dest_qpn.val();
            self.pend_psn.d.next = self.psn.val();
        }
        self.rdata.d.next = 0.into();
        if self.bus.rd.val() {
            if self.bus.addr.val() == self.a_ok.val() {
                self.rdata.d.next = self.ok.q.val();
            } else if self.bus.addr.val() == self.a_bad.val() {
                self.rdata.d.next = self.bad.q.val();
            } else if self.bus.addr.val() == self.a_op.val() {
                self.rdata.d.next = bit_cast::<32, 8>(self.last_op.q.val());
            } else if self.bus.addr.val() == self.a_qpn.val() {
                self.rdata.d.next = bit_cast::<32, 24>(self.last_qpn.q.val());
            } else if self.bus.addr.val() == self.a_psn.val() {
                self.rdata.d.next = bit_cast::<32, 24>(self.last_psn.q.val());
            }
            for i in 0..DROP_REASONS {
                if self.bus.addr.val() == self.a_drop[i].val() {
                    self.rdata.d.next = self.drop_cnt[i].val();
                }
            }
        }
        self.bus.rdata.next = self.rdata.q.val();
        if self.rst.val() {
            self.pend.d.next = false;
            self.ok.d.next = 0.into();
            self.bad.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;

    /// Random sequences of parser results and ICRC results with the real latency offset
    /// (ICRC one cycle after the parser), frames back to back or with gaps.
    #[test]
    fn pairs_parser_and_icrc_results() {
        let mut m = model(RxStat::default(), "rxstat");
        let mut r = rng(17);
        reset(&mut m);
        let (mut ok, mut bad, mut last) = (0u32, 0u32, (0u64, 0u64, 0u64));
        // (parser cycle) -> ICRC one cycle later; frames ends at cycles t, t+1, ... with gaps
        let mut icrc_next: Option<bool> = None;
        for k in 0..400u64 {
            let frame = r.random_bool(0.6);
            let drop = frame && r.random_bool(0.2);
            let good = r.random_bool(0.8);
            let (op, qpn, psn) = (r.random_range(0..0x15u64), r.random_range(0..1u64 << 24), k);
            m.set("hdr_valid", frame as u64);
            m.set("drop", drop as u64);
            m.set("opcode", op);
            m.set("dest_qpn", qpn);
            m.set("psn", psn);
            m.set("icrc_done", icrc_next.is_some() as u64);
            m.set("icrc_ok", icrc_next.unwrap_or(false) as u64);
            m.tick();
            icrc_next = frame.then_some(good);
            if frame && !drop {
                if good {
                    ok += 1;
                    last = (op, qpn, psn);
                } else {
                    bad += 1;
                }
            }
        }
        m.set("hdr_valid", 0);
        m.set("icrc_done", icrc_next.is_some() as u64);
        m.set("icrc_ok", icrc_next.unwrap_or(false) as u64);
        m.tick();
        m.set("icrc_done", 0);
        for i in 0..DROP_REASONS {
            m.set(&format!("drop_cnt_{i}"), 100 + i as u64);
        }
        assert_eq!(bus_read(&mut m, rxs::ROCE_OK), ok);
        assert_eq!(bus_read(&mut m, rxs::ICRC_BAD), bad);
        assert_eq!(bus_read(&mut m, rxs::LAST_OPCODE) as u64, last.0);
        assert_eq!(bus_read(&mut m, rxs::LAST_QPN) as u64, last.1);
        assert_eq!(bus_read(&mut m, rxs::LAST_PSN) as u64, last.2);
        for i in 0..DROP_REASONS as u32 {
            assert_eq!(bus_read(&mut m, rxs::DROP + 4 * i), 100 + i);
        }
        assert_eq!(
            bus_read(&mut m, rxs::DROP + 4 * DROP_REASONS as u32),
            0,
            "past the last counter"
        );
    }
}
