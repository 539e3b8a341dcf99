//! AXI4-Lite slave front end (BAR0): turns AXI4-Lite transactions into single-cycle pulses on
//! the internal register bus. One transaction at a time; writes win over reads in the same
//! cycle. Only full-word writes (`wstrb == 0xF`) reach the registers; narrower writes are
//! acknowledged and ignored. Responses are always OKAY (reserved offsets read 0).

use crate::bus::{AxilS, RegBusM};
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct AxilFront {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s: AxilS,
    pub bus: RegBusM,
    write_fire: Signal<Local, Bit>,
    read_fire: Signal<Local, Bit>,
    bvalid: DFF<Bit>,
    rvalid: DFF<Bit>,
    rpending: DFF<Bit>,
    rdata: DFF<Bits<32>>,
}

impl Logic for AxilFront {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, bvalid, rvalid, rpending, rdata);
        self.write_fire.next = self.s.awvalid.val()
            && self.s.wvalid.val()
            && !self.bvalid.q.val()
            && !self.rpending.q.val();
        self.read_fire.next = self.s.arvalid.val()
            && (!self.s.awvalid.val() || !self.s.wvalid.val())
            && !self.rvalid.q.val()
            && !self.rpending.q.val()
            && !self.bvalid.q.val();
        self.s.awready.next = self.write_fire.val();
        self.s.wready.next = self.write_fire.val();
        self.s.arready.next = self.read_fire.val();
        self.bus.wdata.next = self.s.wdata.val();
        self.bus.wr.next = self.write_fire.val() && (self.s.wstrb.val() == 0xF);
        self.bus.rd.next = self.read_fire.val();
        if self.write_fire.val() {
            self.bus.addr.next = self.s.awaddr.val() & 0xFFFC;
        } else {
            self.bus.addr.next = self.s.araddr.val() & 0xFFFC;
        }
        self.rpending.d.next = self.read_fire.val();
        if self.rpending.q.val() {
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
        }
    }
}
