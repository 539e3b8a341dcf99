//! AXI4-Lite slave front end (BAR0): turns AXI4-Lite transactions into single-cycle pulses on
//! the internal register bus, from registers (the bus never depends combinationally on the
//! AXI inputs: a timing boundary, and it keeps the register decoders out of the simulator's
//! per-input evaluation). One transaction at a time; writes win over reads in the same
//! cycle. Only full-word writes (`wstrb == 0xF`) reach the registers; narrower writes are
//! acknowledged and ignored. Responses are always OKAY (reserved offsets read 0).

use crate::common::bus::{AxilS, RegBusM};
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct AxilFront {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s: AxilS,
    pub bus: RegBusM,
    /// No write is taken while high (the doorbell unit's queue has no room for another
    /// doorbell): AWREADY/WREADY stay low, the host's posted write waits on the bus.
    pub hold: Signal<In, Bit>,
    write_fire: Signal<Local, Bit>,
    read_fire: Signal<Local, Bit>,
    bvalid: DFF<Bit>,
    rvalid: DFF<Bit>,
    rpending: DFF<Bit>,
    rpending2: DFF<Bit>,
    rdata: DFF<Bits<32>>,
    q_addr: DFF<Bits<16>>,
    q_wdata: DFF<Bits<32>>,
    q_wr: DFF<Bit>,
    q_rd: DFF<Bit>,
}

impl Logic for AxilFront {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, bvalid, rvalid, rpending, rpending2, rdata, q_addr, q_wdata, q_wr, q_rd
        );
        self.write_fire.next = self.s.awvalid.val()
            && self.s.wvalid.val()
            && !self.hold.val()
            && !self.bvalid.q.val()
            && !self.rpending.q.val()
            && !self.rpending2.q.val();
        self.read_fire.next = self.s.arvalid.val()
            && (!self.s.awvalid.val() || !self.s.wvalid.val())
            && !self.rvalid.q.val()
            && !self.rpending.q.val()
            && !self.rpending2.q.val()
            && !self.bvalid.q.val();
        self.s.awready.next = self.write_fire.val();
        self.s.wready.next = self.write_fire.val();
        self.s.arready.next = self.read_fire.val();
        // the bus pulse goes out one cycle after the AXI handshake
        self.q_wdata.d.next = self.s.wdata.val();
        self.q_wr.d.next = self.write_fire.val() && (self.s.wstrb.val() == 0xF);
        self.q_rd.d.next = self.read_fire.val();
        if self.write_fire.val() {
            self.q_addr.d.next = self.s.awaddr.val() & 0xFFFC;
        } else {
            self.q_addr.d.next = self.s.araddr.val() & 0xFFFC;
        }
        self.bus.wdata.next = self.q_wdata.q.val();
        self.bus.wr.next = self.q_wr.q.val();
        self.bus.rd.next = self.q_rd.q.val();
        self.bus.addr.next = self.q_addr.q.val();
        // read: handshake (t), bus pulse (t+1), block answers (t+2), RVALID (t+3)
        self.rpending.d.next = self.read_fire.val();
        self.rpending2.d.next = self.rpending.q.val();
        if self.rpending2.q.val() {
            self.rdata.d.next = self.bus.rdata.val();
            self.rvalid.d.next = true;
        }
        if self.rvalid.q.val() && self.s.rready.val() {
            self.rvalid.d.next = false;
        }
        if self.bvalid.q.val() && self.s.bready.val() {
            self.bvalid.d.next = false;
        }
        if self.write_fire.val() {
            self.bvalid.d.next = true;
        }
        self.s.bvalid.next = self.bvalid.q.val();
        self.s.bresp.next = 0.into();
        self.s.rvalid.next = self.rvalid.q.val();
        self.s.rdata.next = self.rdata.q.val();
        self.s.rresp.next = 0.into();
        if self.rst.val() {
            self.bvalid.d.next = false;
            self.rvalid.d.next = false;
            self.rpending.d.next = false;
            self.rpending2.d.next = false;
            self.q_wr.d.next = false;
            self.q_rd.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;
    use std::collections::HashMap;

    /// Random writes and reads with random idle on AW/W/AR (AW and W offered independently),
    /// random backpressure on B/R and a random `hold` (no write taken while it is high); a
    /// register-bus model answers reads one cycle later.
    #[test]
    fn random_traffic_with_idle_and_backpressure() {
        let mut m = model(AxilFront::default(), "axil");
        let mut r = rng(3);
        reset(&mut m);
        let mut regs: HashMap<u64, u32> = HashMap::new();
        let mut bus_log = Vec::new();
        let mut expect_log = Vec::new();
        let mut pending_rdata = 0u64;
        for p in [0.0, 0.5] {
            for _ in 0..300 {
                let addr = 4 * r.random_range(0..16u64);
                let write = r.random_bool(0.5);
                let data: u32 = r.random();
                let (mut aw, mut w, mut ar, mut b, mut rr) = (!write, !write, write, !write, write);
                let mut got = None;
                let mut held: Option<u32> = None;
                let mut cycles = 0;
                while !(aw && w && ar && b && rr) {
                    cycles += 1;
                    assert!(cycles < 100, "transaction stuck");
                    m.set("s_awaddr", addr | r.random_range(0..4));
                    m.set("s_wdata", data as u64);
                    m.set("s_wstrb", 0xF);
                    m.set("s_araddr", addr);
                    let awv = !aw && !chance(&mut r, p);
                    let wv = !w && !chance(&mut r, p);
                    let arv = !ar && !chance(&mut r, p);
                    m.set("s_awvalid", awv as u64);
                    m.set("s_wvalid", wv as u64);
                    m.set("s_arvalid", arv as u64);
                    let bready = !chance(&mut r, p);
                    let rready = !chance(&mut r, p);
                    m.set("s_bready", bready as u64);
                    m.set("s_rready", rready as u64);
                    m.set("bus_rdata", pending_rdata);
                    let hold = chance(&mut r, 0.3);
                    m.set("hold", hold as u64);
                    m.tick();
                    if hold {
                        assert!(
                            !m.bit("s_awready") && !m.bit("s_wready"),
                            "a write taken on hold"
                        );
                    }
                    // register-bus model
                    pending_rdata = 0;
                    if m.bit("bus_wr") {
                        regs.insert(m.get("bus_addr"), m.get("bus_wdata") as u32);
                        bus_log.push((m.get("bus_addr"), m.get("bus_wdata") as u32));
                    }
                    if m.bit("bus_rd") {
                        pending_rdata = *regs.get(&m.get("bus_addr")).unwrap_or(&0) as u64;
                    }
                    aw |= awv && m.bit("s_awready");
                    w |= wv && m.bit("s_wready");
                    ar |= arv && m.bit("s_arready");
                    if m.bit("s_rvalid") {
                        let v = m.get("s_rdata") as u32;
                        if let Some(h) = held {
                            assert_eq!(h, v, "RDATA changed while RVALID was held");
                        }
                        held = Some(v);
                        if rready {
                            got = Some(v);
                            rr = true;
                        }
                    }
                    if m.bit("s_bvalid") && bready && aw && w {
                        assert_eq!(m.get("s_bresp"), 0);
                        b = true;
                    }
                }
                if write {
                    expect_log.push((addr, data));
                } else {
                    assert_eq!(
                        got,
                        Some(*regs.get(&addr).unwrap_or(&0)),
                        "read of {addr:#x}"
                    );
                }
            }
        }
        assert_eq!(
            bus_log, expect_log,
            "every AXI write reaches the bus once, in order, word aligned"
        );
    }
}
