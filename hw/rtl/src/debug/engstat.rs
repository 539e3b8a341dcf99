//! Data-path statistics (BAR0 block `engstat`): the blocks' 32-bit event counters, readable
//! at `eng::CNT + 4*i` in the order of `rnic_abi::regs::eng::COUNTERS`. The counters live in
//! the blocks that count; this block only decodes the register reads (answer next cycle).

use crate::common::bus::{RegBusS, reg_addr};
use rnic_abi::regs::eng;
use rust_hdl::prelude::*;

/// Number of counters.
pub const N: usize = eng::COUNTERS.len();

/// Index of a counter by name (panics on an unknown name: a build-time wiring error).
pub fn idx(name: &str) -> usize {
    eng::COUNTERS
        .iter()
        .position(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no engine counter {name}"))
}

#[derive(LogicBlock)]
pub struct EngStat {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub bus: RegBusS,
    pub cnt: [Signal<In, Bits<32>>; N],
    a_cnt: [Constant<Bits<16>>; N],
    rdata: DFF<Bits<32>>,
}

impl Default for EngStat {
    fn default() -> Self {
        EngStat {
            clock: Default::default(),
            rst: Default::default(),
            bus: Default::default(),
            cnt: std::array::from_fn(|_| Default::default()),
            a_cnt: std::array::from_fn(|i| reg_addr(eng::CNT + 4 * i as u32)),
            rdata: Default::default(),
        }
    }
}

impl Logic for EngStat {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rdata);
        self.rdata.d.next = 0.into();
        if self.bus.rd.val() {
            for i in 0..N {
                if self.bus.addr.val() == self.a_cnt[i].val() {
                    self.rdata.d.next = self.cnt[i].val();
                }
            }
        }
        self.bus.rdata.next = self.rdata.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;

    #[test]
    fn every_counter_reads_at_its_offset() {
        let mut m = model(EngStat::default(), "engstat");
        reset(&mut m);
        for i in 0..N {
            m.set(&format!("cnt_{i}"), 0x1000_0000 + 7 * i as u64);
        }
        for i in 0..N {
            assert_eq!(
                bus_read(&mut m, eng::CNT + 4 * i as u32),
                0x1000_0000 + 7 * i as u32
            );
        }
        assert_eq!(
            bus_read(&mut m, eng::CNT + 4 * N as u32),
            0,
            "past the last counter"
        );
        assert_eq!(idx("cqe"), 18);
    }
}
