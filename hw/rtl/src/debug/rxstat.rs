//! RX statistics (BAR0 block `rxstat`): counts good RoCE v2 frames, ICRC failures and the
//! parser's drops per reason, from the responder's own header parser and ICRC checker (`rxresp`
//! ingress, bundle [`RxCheckS`]): one event per received frame, parser and ICRC result
//! together (both are ready 3 cycles after the frame's last beat).

use crate::common::bus::{RegBusS, RxCheckS, reg_addr};
use rnic_abi::regs::rxs;
use rust_hdl::prelude::*;

/// Number of parser drop reasons (counters).
pub const DROP_REASONS: usize = rxs::DROP_REASONS.len();

#[derive(LogicBlock)]
pub struct RxStat {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub bus: RegBusS,
    /// Per-frame check results.
    pub chk: RxCheckS,
    a_ok: Constant<Bits<16>>,
    a_bad: Constant<Bits<16>>,
    a_op: Constant<Bits<16>>,
    a_qpn: Constant<Bits<16>>,
    a_psn: Constant<Bits<16>>,
    a_drop: [Constant<Bits<16>>; DROP_REASONS],
    k_reason: [Constant<Bits<4>>; DROP_REASONS],
    drops: [DFF<Bits<32>>; DROP_REASONS],
    rdata: DFF<Bits<32>>,
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
            chk: Default::default(),
            a_ok: reg_addr(rxs::ROCE_OK),
            a_bad: reg_addr(rxs::ICRC_BAD),
            a_op: reg_addr(rxs::LAST_OPCODE),
            a_qpn: reg_addr(rxs::LAST_QPN),
            a_psn: reg_addr(rxs::LAST_PSN),
            a_drop: std::array::from_fn(|i| reg_addr(rxs::DROP + 4 * i as u32)),
            k_reason: std::array::from_fn(|i| Constant::new((i as u64 + 1).into())),
            drops: std::array::from_fn(|_| Default::default()),
            rdata: Default::default(),
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
        dff_setup!(self, clock, rdata, ok, bad, last_op, last_qpn, last_psn);
        // a frame the parser accepted: good or bad ICRC
        if self.chk.valid.val() && !self.chk.drop.val() {
            if self.chk.icrc_ok.val() {
                self.ok.d.next = self.ok.q.val() + 1;
                self.last_op.d.next = self.chk.opcode.val();
                self.last_qpn.d.next = self.chk.qpn.val();
                self.last_psn.d.next = self.chk.psn.val();
            } else {
                self.bad.d.next = self.bad.q.val() + 1;
            }
        }
        // parser drops per reason (rxs::DROP_REASONS order: reason code = index + 1)
        for i in 0..DROP_REASONS {
            self.drops[i].clock.next = self.clock.val();
            self.drops[i].d.next = self.drops[i].q.val();
            if self.chk.valid.val()
                && self.chk.drop.val()
                && self.chk.reason.val() == self.k_reason[i].val()
            {
                self.drops[i].d.next = self.drops[i].q.val() + 1;
            }
            if self.rst.val() {
                self.drops[i].d.next = 0.into();
            }
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
                    self.rdata.d.next = self.drops[i].q.val();
                }
            }
        }
        self.bus.rdata.next = self.rdata.q.val();
        if self.rst.val() {
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

    /// Random per-frame check events, back to back or with gaps: frames the parser accepted
    /// count as good or bad by their ICRC, the last good one's BTH fields are kept, dropped
    /// ones count under their reason.
    #[test]
    fn counts_check_events() {
        let mut m = model(RxStat::default(), "rxstat");
        let mut r = rng(17);
        reset(&mut m);
        let (mut ok, mut bad, mut last) = (0u32, 0u32, (0u64, 0u64, 0u64));
        let mut drops = [0u32; DROP_REASONS];
        for k in 0..400u64 {
            let frame = r.random_bool(0.6);
            let drop = r.random_bool(0.2);
            let reason = if drop {
                r.random_range(1..=DROP_REASONS as u64)
            } else {
                0
            };
            let good = r.random_bool(0.8);
            let (op, qpn, psn) = (r.random_range(0..0x15u64), r.random_range(0..1u64 << 24), k);
            m.set("chk_valid", frame as u64);
            m.set("chk_drop", drop as u64);
            m.set("chk_reason", reason);
            m.set("chk_icrc_ok", good as u64);
            m.set("chk_opcode", op);
            m.set("chk_qpn", qpn);
            m.set("chk_psn", psn);
            m.tick();
            if frame && drop {
                drops[reason as usize - 1] += 1;
            }
            if frame && !drop {
                if good {
                    ok += 1;
                    last = (op, qpn, psn);
                } else {
                    bad += 1;
                }
            }
        }
        m.set("chk_valid", 0);
        assert_eq!(bus_read(&mut m, rxs::ROCE_OK), ok);
        assert_eq!(bus_read(&mut m, rxs::ICRC_BAD), bad);
        assert_eq!(bus_read(&mut m, rxs::LAST_OPCODE) as u64, last.0);
        assert_eq!(bus_read(&mut m, rxs::LAST_QPN) as u64, last.1);
        assert_eq!(bus_read(&mut m, rxs::LAST_PSN) as u64, last.2);
        for (i, n) in drops.iter().enumerate() {
            assert_eq!(bus_read(&mut m, rxs::DROP + 4 * i as u32), *n, "reason {i}");
        }
        assert_eq!(
            bus_read(&mut m, rxs::DROP + 4 * DROP_REASONS as u32),
            0,
            "past the last counter"
        );
    }
}
