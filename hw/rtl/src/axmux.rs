//! AXI4 2:1 master mux: the data-path DMA engine (`s0`) and the DMA self-test (`s1`) share the
//! host-memory port `m`. Both use one AXI ID, so the slave must answer in order (AXI's rule
//! for one ID); the mux records which master issued each read burst and each write burst in
//! two order queues (one bit per burst) and routes R beats and B responses by them.
//! AR: `s0` first unless the token (toggling on every taken AR) says `s1`. AW/W: a write
//! burst is locked from its AW to its WLAST (W beats of one burst are never interleaved
//! with another master's). At most 64 bursts outstanding per direction.

use crate::bus::{HostAxiM, HostAxiS};
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct AxMux {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s0: HostAxiS,
    pub s1: HostAxiS,
    pub m: HostAxiM,
    // read order queue: bit k = master of the k-th oldest outstanding read burst
    rq: DFF<Bits<64>>,
    rn: DFF<Bits<7>>,
    rtok: DFF<Bit>,
    // write order queue
    wq: DFF<Bits<64>>,
    wn: DFF<Bits<7>>,
    // write lock: a burst's W beats in progress (wsel = its master), AW taken
    wlock: DFF<Bit>,
    wsel: DFF<Bit>,
    aw_done: DFF<Bit>,
    ar_sel: Signal<Local, Bit>,
    ar_go: Signal<Local, Bit>,
    r_sel: Signal<Local, Bit>,
    r_pop: Signal<Local, Bit>,
    b_sel: Signal<Local, Bit>,
    b_pop: Signal<Local, Bit>,
    aw_sel: Signal<Local, Bit>,
    aw_go: Signal<Local, Bit>,
    rq_sh: Signal<Local, Bits<64>>,
    wq_sh: Signal<Local, Bits<64>>,
    rn_sh: Signal<Local, Bits<7>>,
    wn_sh: Signal<Local, Bits<7>>,
}

impl Logic for AxMux {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rq, rn, rtok, wq, wn, wlock, wsel, aw_done);
        // ---------------- reads
        self.ar_sel.next = false;
        if self.s1.arvalid.val() && (self.rtok.q.val() || !self.s0.arvalid.val()) {
            self.ar_sel.next = true;
        }
        self.ar_go.next =
            (self.s0.arvalid.val() || self.s1.arvalid.val()) && (self.rn.q.val() < 64);
        self.m.arvalid.next = self.ar_go.val();
        self.m.arid.next = 0.into();
        self.m.araddr.next = self.s0.araddr.val();
        self.m.arlen.next = self.s0.arlen.val();
        self.m.arsize.next = self.s0.arsize.val();
        self.m.arburst.next = self.s0.arburst.val();
        if self.ar_sel.val() {
            self.m.araddr.next = self.s1.araddr.val();
            self.m.arlen.next = self.s1.arlen.val();
            self.m.arsize.next = self.s1.arsize.val();
            self.m.arburst.next = self.s1.arburst.val();
        }
        self.s0.arready.next = self.ar_go.val() && !self.ar_sel.val() && self.m.arready.val();
        self.s1.arready.next = self.ar_go.val() && self.ar_sel.val() && self.m.arready.val();
        // R beats go to the master of the oldest read burst
        self.r_sel.next = self.rq.q.val().get_bit(0);
        self.s0.rvalid.next = self.m.rvalid.val() && !self.r_sel.val();
        self.s1.rvalid.next = self.m.rvalid.val() && self.r_sel.val();
        self.s0.rdata.next = self.m.rdata.val();
        self.s1.rdata.next = self.m.rdata.val();
        self.s0.rresp.next = self.m.rresp.val();
        self.s1.rresp.next = self.m.rresp.val();
        self.s0.rlast.next = self.m.rlast.val();
        self.s1.rlast.next = self.m.rlast.val();
        self.s0.rid.next = 0.into();
        self.s1.rid.next = 0.into();
        self.m.rready.next = self.s0.rready.val();
        if self.r_sel.val() {
            self.m.rready.next = self.s1.rready.val();
        }
        self.r_pop.next = self.m.rvalid.val() && self.m.rready.val() && self.m.rlast.val();
        self.rq_sh.next = self.rq.q.val();
        self.rn_sh.next = self.rn.q.val();
        if self.r_pop.val() {
            self.rq_sh.next = self.rq.q.val() >> 1;
            self.rn_sh.next = self.rn.q.val() - 1;
        }
        self.rq.d.next = self.rq_sh.val();
        self.rn.d.next = self.rn_sh.val();
        if self.ar_go.val() && self.m.arready.val() {
            self.rq.d.next = self
                .rq_sh
                .val()
                .replace_bit(self.rn_sh.val().index(), self.ar_sel.val());
            self.rn.d.next = self.rn_sh.val() + 1;
            self.rtok.d.next = !self.rtok.q.val();
        }
        // ---------------- writes
        self.aw_sel.next = self.wsel.q.val();
        if !self.wlock.q.val() {
            self.aw_sel.next = self.s1.awvalid.val() && !self.s0.awvalid.val();
        }
        self.aw_go.next = !self.aw_done.q.val()
            && (self.wn.q.val() < 64)
            && ((self.wlock.q.val() && self.wsel.q.val() && self.s1.awvalid.val())
                || (self.wlock.q.val() && !self.wsel.q.val() && self.s0.awvalid.val())
                || (!self.wlock.q.val() && (self.s0.awvalid.val() || self.s1.awvalid.val())));
        self.m.awvalid.next = self.aw_go.val();
        self.m.awid.next = 0.into();
        self.m.awaddr.next = self.s0.awaddr.val();
        self.m.awlen.next = self.s0.awlen.val();
        self.m.awsize.next = self.s0.awsize.val();
        self.m.awburst.next = self.s0.awburst.val();
        if self.aw_sel.val() {
            self.m.awaddr.next = self.s1.awaddr.val();
            self.m.awlen.next = self.s1.awlen.val();
            self.m.awsize.next = self.s1.awsize.val();
            self.m.awburst.next = self.s1.awburst.val();
        }
        self.s0.awready.next = self.aw_go.val() && !self.aw_sel.val() && self.m.awready.val();
        self.s1.awready.next = self.aw_go.val() && self.aw_sel.val() && self.m.awready.val();
        // W beats of the locked burst (the lock starts with the AW handshake or earlier W)
        self.m.wvalid.next = false;
        self.m.wdata.next = self.s0.wdata.val();
        self.m.wstrb.next = self.s0.wstrb.val();
        self.m.wlast.next = self.s0.wlast.val();
        self.s0.wready.next = false;
        self.s1.wready.next = false;
        if self.wlock.q.val() {
            if self.wsel.q.val() {
                self.m.wvalid.next = self.s1.wvalid.val();
                self.m.wdata.next = self.s1.wdata.val();
                self.m.wstrb.next = self.s1.wstrb.val();
                self.m.wlast.next = self.s1.wlast.val();
                self.s1.wready.next = self.m.wready.val();
            } else {
                self.m.wvalid.next = self.s0.wvalid.val();
                self.s0.wready.next = self.m.wready.val();
            }
        }
        if self.aw_go.val() && self.m.awready.val() {
            self.aw_done.d.next = true;
            self.wlock.d.next = true;
            self.wsel.d.next = self.aw_sel.val();
        }
        if self.wlock.q.val() && self.m.wvalid.val() && self.m.wready.val() && self.m.wlast.val() {
            self.wlock.d.next = false;
            self.aw_done.d.next = false;
        }
        // B responses go to the master of the oldest write burst
        self.b_sel.next = self.wq.q.val().get_bit(0);
        self.s0.bvalid.next = self.m.bvalid.val() && !self.b_sel.val();
        self.s1.bvalid.next = self.m.bvalid.val() && self.b_sel.val();
        self.s0.bresp.next = self.m.bresp.val();
        self.s1.bresp.next = self.m.bresp.val();
        self.s0.bid.next = 0.into();
        self.s1.bid.next = 0.into();
        self.m.bready.next = self.s0.bready.val();
        if self.b_sel.val() {
            self.m.bready.next = self.s1.bready.val();
        }
        self.b_pop.next = self.m.bvalid.val() && self.m.bready.val();
        self.wq_sh.next = self.wq.q.val();
        self.wn_sh.next = self.wn.q.val();
        if self.b_pop.val() {
            self.wq_sh.next = self.wq.q.val() >> 1;
            self.wn_sh.next = self.wn.q.val() - 1;
        }
        self.wq.d.next = self.wq_sh.val();
        self.wn.d.next = self.wn_sh.val();
        if self.aw_go.val() && self.m.awready.val() {
            self.wq.d.next = self
                .wq_sh
                .val()
                .replace_bit(self.wn_sh.val().index(), self.aw_sel.val());
            self.wn.d.next = self.wn_sh.val() + 1;
        }
        if self.rst.val() {
            self.rn.d.next = 0.into();
            self.wn.d.next = 0.into();
            self.wlock.d.next = false;
            self.aw_done.d.next = false;
            self.rtok.d.next = false;
        }
    }
}
