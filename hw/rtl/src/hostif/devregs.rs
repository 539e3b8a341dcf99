//! Device and doorbell register blocks, plus the read-only identity ROM of every block.
//!
//! * Identity ROM: the TYPE/VERSION/NEXT header of every block, the device magic, version and
//!   build parameters, the MAC window offsets: all generated from `rnic-abi` at elaboration.
//! * Device block: SCRATCH, CONTROL (soft reset pulse), STATUS, 64-bit cycle counter (HI latched
//!   on a LO read), IRQ_STATUS (W1C, set by `irq_set` pulses), IRQ_ENABLE, `irq_req`.
//! * Doorbell block: SQ/RQ/CQ doorbell writes become one-cycle `db_valid` events with kind and
//!   word (for the schedulers), and are counted.

use crate::common::bus::RegBusS;
use crate::common::bus::reg_addr;
use rnic_abi::params::{self, BuildParams};
use rnic_abi::regs::{self, db, dev, mac};
use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// BAR0 words covered by the identity ROM (0x000..0x7FF).
pub const ROM_ADDR_BITS: usize = 9;

/// The identity ROM contents: BAR0 word index -> value.
pub fn rom_contents(p: &BuildParams) -> BTreeMap<u32, u32> {
    let mut m = BTreeMap::new();
    for b in regs::BLOCKS {
        m.insert((b.base + regs::BLK_TYPE) / 4, b.kind as u32);
        m.insert((b.base + regs::BLK_VERSION) / 4, b.version_word());
        m.insert((b.base + regs::BLK_NEXT) / 4, b.next);
    }
    let w = |off: u32| off / 4;
    m.insert(w(dev::MAGIC), dev::MAGIC_VALUE);
    m.insert(w(dev::HW_VERSION), params::HW_VERSION);
    m.insert(w(dev::NUM_QPS), p.num_qps);
    m.insert(w(dev::SQ_DEPTH), p.sq_depth);
    m.insert(w(dev::RQ_DEPTH), p.rq_depth);
    m.insert(w(dev::MAX_MTU), p.max_mtu);
    m.insert(w(dev::DATAPATH_BITS), p.datapath_bits);
    m.insert(w(dev::CLOCK_KHZ), p.clock_khz);
    m.insert(w(dev::NUM_CQS), p.num_cqs);
    m.insert(w(dev::NUM_MRS), p.num_mrs);
    m.insert(w(dev::RING_BYTES), p.ring_bytes());
    m.insert(w(dev::DEEP_QPS), p.deep_qps);
    m.insert(w(dev::DEEP_DEPTH), p.deep_depth);
    m.insert(w(dev::RD_ATOMIC), p.rd_atomic);
    m.insert(w(mac::TX_BUF_OFF), mac::TX_BUF);
    m.insert(w(mac::RX_BUF_OFF), mac::RX_BUF);
    assert!(
        m.keys().all(|k| *k < (1 << ROM_ADDR_BITS)),
        "identity ROM overflows its window"
    );
    m
}

#[derive(LogicBlock)]
pub struct DevRegs {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub bus: RegBusS,
    /// Interrupt causes (bit 0 DMA self-test done, bit 1 MAC debug RX), one-cycle pulses.
    pub irq_set: Signal<In, Bits<3>>,
    /// The engines' reset work is done (txreq's and ackproc's sweeps of their per-QP LUT
    /// RAMs): STATUS.READY.
    pub eng_ready: Signal<In, Bit>,
    pub irq_req: Signal<Out, Bit>,
    /// Soft reset request (one cycle) to the other blocks.
    pub soft_reset: Signal<Out, Bit>,
    /// Doorbell event: kind (0 SQ, 1 RQ, 2 CQ) and the doorbell word.
    pub db_valid: Signal<Out, Bit>,
    pub db_kind: Signal<Out, Bits<2>>,
    pub db_word: Signal<Out, Bits<32>>,
    rom: SyncROM<Bits<32>, ROM_ADDR_BITS>,
    a_scratch: Constant<Bits<16>>,
    a_control: Constant<Bits<16>>,
    a_status: Constant<Bits<16>>,
    a_cycle_lo: Constant<Bits<16>>,
    a_cycle_hi: Constant<Bits<16>>,
    a_irq_status: Constant<Bits<16>>,
    a_irq_enable: Constant<Bits<16>>,
    a_db_sq: Constant<Bits<16>>,
    a_db_rq: Constant<Bits<16>>,
    a_db_cq: Constant<Bits<16>>,
    a_db_count: Constant<Bits<16>>,
    a_db_last: Constant<Bits<16>>,
    a_db_last_kind: Constant<Bits<16>>,
    rom_sel: DFF<Bit>,
    rdata: DFF<Bits<32>>,
    scratch: DFF<Bits<32>>,
    cycles: DFF<Bits<64>>,
    cycle_hi_latch: DFF<Bits<32>>,
    irq_status: DFF<Bits<3>>,
    irq_enable: DFF<Bits<3>>,
    db_count: DFF<Bits<32>>,
    db_last: DFF<Bits<32>>,
    db_last_kind: DFF<Bits<2>>,
    reset_pulse: DFF<Bit>,
}

impl DevRegs {
    pub fn new(p: &BuildParams) -> Self {
        let rom: BTreeMap<Bits<ROM_ADDR_BITS>, Bits<32>> = rom_contents(p)
            .into_iter()
            .map(|(k, v)| ((k as u64).into(), (v as u64).into()))
            .collect();
        DevRegs {
            clock: Default::default(),
            rst: Default::default(),
            bus: Default::default(),
            irq_set: Default::default(),
            eng_ready: Default::default(),
            irq_req: Default::default(),
            soft_reset: Default::default(),
            db_valid: Default::default(),
            db_kind: Default::default(),
            db_word: Default::default(),
            rom: SyncROM::new(rom),
            a_scratch: reg_addr(dev::SCRATCH),
            a_control: reg_addr(dev::CONTROL),
            a_status: reg_addr(dev::STATUS),
            a_cycle_lo: reg_addr(dev::CYCLE_LO),
            a_cycle_hi: reg_addr(dev::CYCLE_HI),
            a_irq_status: reg_addr(dev::IRQ_STATUS),
            a_irq_enable: reg_addr(dev::IRQ_ENABLE),
            a_db_sq: reg_addr(db::SQ),
            a_db_rq: reg_addr(db::RQ),
            a_db_cq: reg_addr(db::CQ),
            a_db_count: reg_addr(db::COUNT),
            a_db_last: reg_addr(db::LAST),
            a_db_last_kind: reg_addr(db::LAST_KIND),
            rom_sel: Default::default(),
            rdata: Default::default(),
            scratch: Default::default(),
            cycles: Default::default(),
            cycle_hi_latch: Default::default(),
            irq_status: Default::default(),
            irq_enable: Default::default(),
            db_count: Default::default(),
            db_last: Default::default(),
            db_last_kind: Default::default(),
            reset_pulse: Default::default(),
        }
    }
}

impl Default for DevRegs {
    fn default() -> Self {
        Self::new(&params::DEFAULT)
    }
}

impl Logic for DevRegs {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            rom_sel,
            rdata,
            scratch,
            cycles,
            cycle_hi_latch,
            irq_status,
            irq_enable,
            db_count,
            db_last,
            db_last_kind,
            reset_pulse
        );
        self.rom.clock.next = self.clock.val();
        self.rom.address.next = self.bus.addr.val().get_bits::<9>(2);
        self.cycles.d.next = self.cycles.q.val() + 1;
        self.reset_pulse.d.next = false;
        self.soft_reset.next = self.reset_pulse.q.val();
        self.db_valid.next = false;
        self.db_kind.next = 0.into();
        self.db_word.next = self.bus.wdata.val();
        // reads: identity ROM (registered) OR this block's registers (registered)
        self.rom_sel.d.next = self.bus.rd.val() && (self.bus.addr.val() < 0x800);
        self.rdata.d.next = 0.into();
        if self.bus.rd.val() {
            if self.bus.addr.val() == self.a_scratch.val() {
                self.rdata.d.next = self.scratch.q.val();
            } else if self.bus.addr.val() == self.a_status.val() {
                self.rdata.d.next = bit_cast::<32, 1>(self.eng_ready.val().into());
            } else if self.bus.addr.val() == self.a_cycle_lo.val() {
                self.rdata.d.next = self.cycles.q.val().get_bits::<32>(0);
                self.cycle_hi_latch.d.next = self.cycles.q.val().get_bits::<32>(32);
            } else if self.bus.addr.val() == self.a_cycle_hi.val() {
                self.rdata.d.next = self.cycle_hi_latch.q.val();
            } else if self.bus.addr.val() == self.a_irq_status.val() {
                self.rdata.d.next = bit_cast::<32, 3>(self.irq_status.q.val());
            } else if self.bus.addr.val() == self.a_irq_enable.val() {
                self.rdata.d.next = bit_cast::<32, 3>(self.irq_enable.q.val());
            } else if self.bus.addr.val() == self.a_db_count.val() {
                self.rdata.d.next = self.db_count.q.val();
            } else if self.bus.addr.val() == self.a_db_last.val() {
                self.rdata.d.next = self.db_last.q.val();
            } else if self.bus.addr.val() == self.a_db_last_kind.val() {
                self.rdata.d.next = bit_cast::<32, 2>(self.db_last_kind.q.val());
            }
        }
        if self.rom_sel.q.val() {
            self.bus.rdata.next = self.rdata.q.val() | self.rom.data.val();
        } else {
            self.bus.rdata.next = self.rdata.q.val();
        }
        // interrupt causes: set by pulses, cleared by W1C writes (a set wins over a clear)
        self.irq_status.d.next = self.irq_status.q.val() | self.irq_set.val();
        if self.bus.wr.val() {
            if self.bus.addr.val() == self.a_scratch.val() {
                self.scratch.d.next = self.bus.wdata.val();
            } else if self.bus.addr.val() == self.a_control.val() {
                self.reset_pulse.d.next = self.bus.wdata.val().get_bit(0);
            } else if self.bus.addr.val() == self.a_irq_status.val() {
                self.irq_status.d.next = (self.irq_status.q.val()
                    & !self.bus.wdata.val().get_bits::<3>(0))
                    | self.irq_set.val();
            } else if self.bus.addr.val() == self.a_irq_enable.val() {
                self.irq_enable.d.next = self.bus.wdata.val().get_bits::<3>(0);
            } else if self.bus.addr.val() == self.a_db_sq.val() {
                self.db_valid.next = true;
                self.db_kind.next = 0.into();
            } else if self.bus.addr.val() == self.a_db_rq.val() {
                self.db_valid.next = true;
                self.db_kind.next = 1.into();
            } else if self.bus.addr.val() == self.a_db_cq.val() {
                self.db_valid.next = true;
                self.db_kind.next = 2.into();
            }
        }
        if self.db_valid.val() {
            self.db_count.d.next = self.db_count.q.val() + 1;
            self.db_last.d.next = self.bus.wdata.val();
            self.db_last_kind.d.next = self.db_kind.val();
        }
        self.irq_req.next = (self.irq_status.q.val() & self.irq_enable.q.val()).any();
        if self.rst.val() || self.reset_pulse.q.val() {
            self.irq_status.d.next = 0.into();
            self.db_count.d.next = 0.into();
            self.db_last.d.next = 0.into();
            self.db_last_kind.d.next = 0.into();
        }
        if self.rst.val() {
            self.scratch.d.next = 0.into();
            self.irq_enable.d.next = 0.into();
            self.cycles.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;

    #[test]
    fn identity_rom_registers_doorbells_and_irq() {
        let p = params::DEFAULT;
        let mut m = model(DevRegs::default(), "devregs");
        reset(&mut m);
        for (word, val) in rom_contents(&p) {
            assert_eq!(
                bus_read(&mut m, 4 * word),
                val,
                "ROM word at {:#x}",
                4 * word
            );
        }
        bus_write(&mut m, dev::SCRATCH, 0xA5A5_5A5A);
        assert_eq!(bus_read(&mut m, dev::SCRATCH), 0xA5A5_5A5A);
        // STATUS.READY is the engines' `eng_ready`
        assert_eq!(bus_read(&mut m, dev::STATUS), 0);
        m.set("eng_ready", 1);
        assert_eq!(bus_read(&mut m, dev::STATUS), dev::STATUS_READY);
        m.set("eng_ready", 0);
        assert_eq!(bus_read(&mut m, dev::STATUS), 0);
        assert_eq!(bus_read(&mut m, 0x0FFC), 0, "reserved");
        assert_eq!(bus_read(&mut m, 0x3000), 0, "outside the ROM window");
        // doorbells: event pulses and counters
        m.set("bus_addr", db::SQ as u64);
        m.set("bus_wdata", db::word(7, 9) as u64);
        m.set("bus_wr", 1);
        m.tick();
        assert!(m.bit("db_valid"));
        assert_eq!(
            (m.get("db_kind"), m.get("db_word") as u32),
            (0, db::word(7, 9))
        );
        m.set("bus_wr", 0);
        bus_write(&mut m, db::CQ, db::word(1, 2));
        assert_eq!(bus_read(&mut m, db::COUNT), 2);
        assert_eq!(bus_read(&mut m, db::LAST_KIND), db::KIND_CQ);
        // interrupts: set by a pulse, masked by IRQ_ENABLE, W1C
        m.set("irq_set", 0b10);
        m.tick();
        m.set("irq_set", 0);
        m.tick();
        assert!(!m.bit("irq_req"));
        bus_write(&mut m, dev::IRQ_ENABLE, dev::IRQ_MAC_RX);
        m.tick();
        assert!(m.bit("irq_req"));
        bus_write(&mut m, dev::IRQ_STATUS, dev::IRQ_MAC_RX);
        m.tick();
        assert!(!m.bit("irq_req"));
        assert_eq!(bus_read(&mut m, dev::IRQ_STATUS), 0);
        // soft reset pulse clears the doorbell counters
        bus_write(&mut m, dev::CONTROL, dev::CONTROL_SOFT_RESET);
        m.tick();
        assert_eq!(bus_read(&mut m, db::COUNT), 0);
    }
}
