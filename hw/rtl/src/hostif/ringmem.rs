//! BAR2 ring memory: an AXI4 slave (512-bit data) in front of a byte-enable RAM holding every
//! SQ and RQ ring (layout in `rnic-abi`: `BuildParams::sq_slot` / `rq_slot`).
//!
//! Writes: one burst at a time, INCR addressing in steps of `1 << awsize` bytes (FIXED and WRAP
//! bursts are treated as INCR: the driver never issues them), byte strobes honoured, one B
//! response per burst. A burst's first W beat is taken in the cycle its AW is (`wready`
//! follows `awvalid` when no burst is open), and B responses queue (up to [`B_OUT`] bursts
//! whose B is not yet taken), so single-beat WQE pushes go in at one per cycle: the driver's
//! posted writes stream in without waiting for each B. Reads: one burst at a time, one beat every two cycles (BAR2 reads are a
//! debug path; the WQE fetcher gets its own RAM port in the data-path work).

use crate::common::beram::BeRam;
use crate::common::bus::{BAR2_ADDR_BITS, RING_SLOT_BITS, RingPortS, WqeAxiS};
use crate::common::fifo::Fifo;
use rust_hdl::prelude::*;

/// Write bursts accepted whose B response the master has not taken yet, at most.
pub const B_OUT: u64 = 8;

#[derive(LogicBlock)]
pub struct RingMem {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s: WqeAxiS,
    /// Count of WQE bursts written (debug/observability).
    pub bursts: Signal<Out, Bits<32>>,
    pub q0: RingPortS,
    pub q1: RingPortS,
    pub q2: RingPortS,
    ram: BeRam<RING_SLOT_BITS>,
    tok: DFF<Bits<2>>,
    /// the engine ports' cycle: the token's claimant (0: q2, 1: q1, 2: q0), or 3 when a
    /// BAR2 read burst owns the RAM read port (`tok` and `r_active` as registered, in one
    /// register so that each grant is a function of six inputs)
    ts: DFF<Bits<2>>,
    ev1: DFF<Bit>,
    es1: DFF<Bits<2>>,
    ev2: DFF<Bit>,
    es2: DFF<Bits<2>>,
    eq: DFF<Bits<512>>,
    tk1: Signal<Local, Bit>,
    tk0: Signal<Local, Bit>,
    tkz: Signal<Local, Bit>,
    c2: Signal<Local, Bit>,
    p2: Signal<Local, Bit>,
    efree: Signal<Local, Bit>,
    c1: Signal<Local, Bit>,
    c0: Signal<Local, Bit>,
    g0: Signal<Local, Bit>,
    g1: Signal<Local, Bit>,
    g2: Signal<Local, Bit>,
    a0: Signal<Local, Bits<RING_SLOT_BITS>>,
    a1: Signal<Local, Bits<RING_SLOT_BITS>>,
    a2: Signal<Local, Bits<RING_SLOT_BITS>>,
    ar: Signal<Local, Bits<RING_SLOT_BITS>>,
    eany: Signal<Local, Bit>,
    w_active: DFF<Bit>,
    w_addr: DFF<Bits<BAR2_ADDR_BITS>>,
    w_size: DFF<Bits<3>>,
    w_id: DFF<Bits<4>>,
    /// B responses waiting (their IDs), and bursts accepted whose B is not taken
    bq: Fifo<4, 4>,
    b_out: DFF<Bits<5>>,
    st_id: DFF<Bits<4>>,
    aw_ok: Signal<Local, Bit>,
    aw_fire: Signal<Local, Bit>,
    w_fire: Signal<Local, Bit>,
    b_fire: Signal<Local, Bit>,
    cur_addr: Signal<Local, Bits<BAR2_ADDR_BITS>>,
    cur_size: Signal<Local, Bits<3>>,
    cur_id: Signal<Local, Bits<4>>,
    c_bout: Constant<Bits<5>>,
    burst_count: DFF<Bits<32>>,
    r_active: DFF<Bit>,
    r_addr: DFF<Bits<BAR2_ADDR_BITS>>,
    r_size: DFF<Bits<3>>,
    r_left: DFF<Bits<8>>,
    r_id: DFF<Bits<4>>,
    r_ok: DFF<Bit>,
    st_slot: DFF<Bits<RING_SLOT_BITS>>,
    st_data: DFF<Bits<512>>,
    st_strb: DFF<Bits<64>>,
    st_last: DFF<Bit>,
    one: Constant<Bits<BAR2_ADDR_BITS>>,
}

impl Default for RingMem {
    fn default() -> Self {
        RingMem {
            clock: Default::default(),
            rst: Default::default(),
            s: Default::default(),
            bursts: Default::default(),
            q0: Default::default(),
            q1: Default::default(),
            q2: Default::default(),
            ram: Default::default(),
            tok: Default::default(),
            ts: Default::default(),
            ev1: Default::default(),
            es1: Default::default(),
            ev2: Default::default(),
            es2: Default::default(),
            eq: Default::default(),
            tk1: Default::default(),
            tk0: Default::default(),
            tkz: Default::default(),
            c2: Default::default(),
            p2: Default::default(),
            efree: Default::default(),
            c1: Default::default(),
            c0: Default::default(),
            g0: Default::default(),
            g1: Default::default(),
            g2: Default::default(),
            a0: Default::default(),
            a1: Default::default(),
            a2: Default::default(),
            ar: Default::default(),
            eany: Default::default(),
            w_active: Default::default(),
            w_addr: Default::default(),
            w_size: Default::default(),
            w_id: Default::default(),
            bq: Default::default(),
            b_out: Default::default(),
            st_id: Default::default(),
            aw_ok: Default::default(),
            aw_fire: Default::default(),
            w_fire: Default::default(),
            b_fire: Default::default(),
            cur_addr: Default::default(),
            cur_size: Default::default(),
            cur_id: Default::default(),
            c_bout: Constant::new(B_OUT.into()),
            burst_count: Default::default(),
            r_active: Default::default(),
            r_addr: Default::default(),
            r_size: Default::default(),
            r_left: Default::default(),
            r_id: Default::default(),
            r_ok: Default::default(),
            st_slot: Default::default(),
            st_data: Default::default(),
            st_strb: Default::default(),
            st_last: Default::default(),
            one: Constant::new(1u64.into()),
        }
    }
}

impl Logic for RingMem {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            w_active,
            w_addr,
            w_size,
            w_id,
            b_out,
            st_id,
            burst_count,
            r_active,
            r_addr,
            r_size,
            r_left,
            r_id,
            r_ok
        );
        dff_setup!(self, clock, st_slot, st_data, st_strb, st_last);
        dff_setup!(self, clock, tok, ts, ev1, es1, ev2, es2, eq);
        self.ram.clock.next = self.clock.val();
        // ---- write channel: W beats pass one register stage before the RAM; B follows the
        // commit of the last beat (queued in `bq`). A burst's first beat may come with its AW.
        self.bq.clock.next = self.clock.val();
        self.bq.rst.next = self.rst.val();
        self.aw_ok.next = !self.w_active.q.val() && (self.b_out.q.val() < self.c_bout.val());
        self.s.awready.next = self.aw_ok.val();
        self.aw_fire.next = self.s.awvalid.val() && self.aw_ok.val();
        self.cur_addr.next = self.w_addr.q.val();
        self.cur_size.next = self.w_size.q.val();
        self.cur_id.next = self.w_id.q.val();
        if !self.w_active.q.val() {
            self.cur_addr.next = self.s.awaddr.val();
            self.cur_size.next = self.s.awsize.val();
            self.cur_id.next = self.s.awid.val();
        }
        self.s.wready.next = self.w_active.q.val() || self.aw_fire.val();
        self.w_fire.next = self.s.wvalid.val() && (self.w_active.q.val() || self.aw_fire.val());
        if self.aw_fire.val() {
            self.w_active.d.next = true;
            self.w_addr.d.next = self.s.awaddr.val();
            self.w_size.d.next = self.s.awsize.val();
            self.w_id.d.next = self.s.awid.val();
        }
        self.st_strb.d.next = 0.into();
        self.st_last.d.next = false;
        self.st_data.d.next = self.s.wdata.val();
        self.st_slot.d.next = self.cur_addr.val().get_bits::<RING_SLOT_BITS>(6);
        self.st_id.d.next = self.cur_id.val();
        if self.w_fire.val() {
            self.st_strb.d.next = self.s.wstrb.val();
            self.w_addr.d.next = self.cur_addr.val() + (self.one.val() << self.cur_size.val());
            if self.s.wlast.val() {
                self.w_active.d.next = false;
                self.st_last.d.next = true;
            }
        }
        self.ram.write_address.next = self.st_slot.q.val();
        self.ram.write_data.next = self.st_data.q.val();
        self.ram.write_enable.next = self.st_strb.q.val();
        self.bq.wr.next = self.st_last.q.val();
        self.bq.din.next = self.st_id.q.val();
        if self.st_last.q.val() {
            self.burst_count.d.next = self.burst_count.q.val() + 1;
        }
        self.s.bvalid.next = !self.bq.empty.val();
        self.s.bid.next = self.bq.dout.val();
        self.s.bresp.next = 0.into();
        self.b_fire.next = !self.bq.empty.val() && self.s.bready.val();
        self.bq.rd.next = self.b_fire.val();
        if self.aw_fire.val() && !self.b_fire.val() {
            self.b_out.d.next = self.b_out.q.val() + 1;
        } else if self.b_fire.val() && !self.aw_fire.val() {
            self.b_out.d.next = self.b_out.q.val() - 1;
        }
        self.bursts.next = self.burst_count.q.val();
        // ---- read channel
        self.s.arready.next = !self.r_active.q.val();
        if self.s.arvalid.val() && !self.r_active.q.val() {
            self.r_active.d.next = true;
            self.r_addr.d.next = self.s.araddr.val();
            self.r_size.d.next = self.s.arsize.val();
            self.r_left.d.next = self.s.arlen.val();
            self.r_id.d.next = self.s.arid.val();
        }
        // ---- engine read ports (only while no BAR2 read burst owns the RAM read port)
        // The rotating token names a port for each cycle (q2, q1, q0 in turn), which goes
        // first when it asks; otherwise q2 (the ACK processor) when it asks with `pri`, then
        // q0 (txreq), then q1 (the responder), then q2. So no port waits more than two
        // cycles. The ACK processor's reads go first because they pace every completion,
        // and txreq's sends wait on completions (READ credits, ring space): with q0 first,
        // 64 B READs over 2046 QPs took 4.86 cycles each (4.54 with this order alone), the
        // ACK processor's reads waiting 0.4 cycles per READ; its ACK walks' reads ahead do
        // not go first (`pri` low: they took txreq's reads of one deep QP's WRITE stream).
        // The grants are written one-hot, each a function of the requests, `q2.pri`, the
        // token and `r_active`, and the read address as an AND-OR of the slots under them:
        // no encoded select between the requests and the RAM's address.
        self.tk1.next = self.ts.q.val() == 1;
        self.tk0.next = self.ts.q.val() == 2;
        self.tkz.next = self.ts.q.val() == 0;
        // (the port is free of BAR2 reads; the token claims the cycle for q2 / q1 / q0)
        self.efree.next = self.ts.q.val() != 3;
        self.c1.next = self.tk1.val() && self.q1.req.val();
        self.c0.next = self.tk0.val() && self.q0.req.val();
        self.c2.next = self.tkz.val() && self.q2.req.val();
        self.p2.next = self.q2.req.val() && self.q2.pri.val();
        self.g2.next = self.efree.val()
            && self.q2.req.val()
            && (self.tkz.val()
                || (!self.c0.val()
                    && !self.c1.val()
                    && (self.q2.pri.val() || !(self.q0.req.val() || self.q1.req.val()))));
        self.g0.next = self.efree.val()
            && self.q0.req.val()
            && !self.c1.val()
            && !self.c2.val()
            && (self.tk0.val() || !self.p2.val());
        self.g1.next = self.efree.val()
            && self.q1.req.val()
            && !self.c0.val()
            && !self.c2.val()
            && (self.tk1.val() || !(self.q0.req.val() || self.p2.val()));
        self.eany.next = self.g0.val() || self.g1.val() || self.g2.val();
        self.tok.d.next = self.tok.q.val() + 1;
        if self.tok.q.val() == 2 {
            self.tok.d.next = 0.into();
        }
        self.q0.gnt.next = self.g0.val();
        self.q1.gnt.next = self.g1.val();
        self.q2.gnt.next = self.g2.val();
        self.a0.next = 0.into();
        self.a1.next = 0.into();
        self.a2.next = 0.into();
        self.ar.next = 0.into();
        if self.g0.val() {
            self.a0.next = self.q0.slot.val();
        }
        if self.g1.val() {
            self.a1.next = self.q1.slot.val();
        }
        if self.g2.val() {
            self.a2.next = self.q2.slot.val();
        }
        if !self.eany.val() {
            self.ar.next = self.r_addr.q.val().get_bits::<RING_SLOT_BITS>(6);
        }
        self.ram.read_address.next = self.a0.val() | self.a1.val() | self.a2.val() | self.ar.val();
        self.ev1.d.next = self.eany.val();
        self.es1.d.next = 0.into();
        if self.g1.val() {
            self.es1.d.next = 1.into();
        }
        if self.g2.val() {
            self.es1.d.next = 2.into();
        }
        self.ev2.d.next = self.ev1.q.val();
        self.es2.d.next = self.es1.q.val();
        self.eq.d.next = self.ram.read_data.val();
        self.q0.rvalid.next = self.ev2.q.val() && (self.es2.q.val() == 0);
        self.q1.rvalid.next = self.ev2.q.val() && (self.es2.q.val() == 1);
        self.q2.rvalid.next = self.ev2.q.val() && (self.es2.q.val() == 2);
        self.q0.rdata.next = self.eq.q.val();
        self.q1.rdata.next = self.eq.q.val();
        self.q2.rdata.next = self.eq.q.val();
        self.r_ok.d.next = self.r_active.q.val();
        self.s.rvalid.next = self.r_active.q.val() && self.r_ok.q.val();
        self.s.rdata.next = self.ram.read_data.val();
        self.s.rid.next = self.r_id.q.val();
        self.s.rresp.next = 0.into();
        self.s.rlast.next = self.r_left.q.val() == 0;
        if self.r_active.q.val() && self.r_ok.q.val() && self.s.rready.val() {
            self.r_ok.d.next = false;
            self.r_addr.d.next = self.r_addr.q.val() + (self.one.val() << self.r_size.q.val());
            self.r_left.d.next = self.r_left.q.val() - 1;
            if self.r_left.q.val() == 0 {
                self.r_active.d.next = false;
            }
        }
        if self.rst.val() {
            self.w_active.d.next = false;
            self.b_out.d.next = 0.into();
            self.r_active.d.next = false;
            self.r_ok.d.next = false;
            self.burst_count.d.next = 0.into();
            self.st_strb.d.next = 0.into();
            self.st_last.d.next = false;
            self.ev1.d.next = false;
            self.ev2.d.next = false;
            self.tok.d.next = 0.into();
        }
        // (from the next values, after every assignment above)
        self.ts.d.next = self.tok.d.val();
        if self.r_active.d.val() {
            self.ts.d.next = 3.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;
    use std::collections::HashMap;

    /// Write bursts with random strobes, W gaps and B backpressure, then read bursts with R
    /// backpressure, against a byte model.
    #[test]
    fn bursts_with_strobes_idle_and_backpressure() {
        bursts_with_strobes(model(RingMem::default(), "ringmem"));
    }

    /// The same through the form synthesis builds: `common::beram`'s byte-enable idiom (one
    /// conditional byte write per lane) instead of the simulator's read-modify-write.
    #[test]
    fn bursts_with_strobes_synthesis_form() {
        bursts_with_strobes(model_synth_form(RingMem::default(), "ringmem"));
    }

    fn bursts_with_strobes(mut m: crate::common::vlt::DynModel) {
        let mut r = rng(5);
        reset(&mut m);
        let mut model_mem: HashMap<u64, u8> = HashMap::new();
        let mut eng_reads = 0;
        for round in 0..6 {
            let p = [0.0, 0.4, 0.7][round % 3];
            // writes
            for _ in 0..20 {
                let addr = 64 * r.random_range(0..64u64) + 4096 * r.random_range(0..4u64) * 97;
                let addr = (addr % (1 << BAR2_ADDR_BITS)) & !63;
                let beats = r.random_range(1..5u64);
                let data: Vec<Vec<u8>> = (0..beats)
                    .map(|_| (0..64).map(|_| r.random()).collect())
                    .collect();
                let strb: Vec<u64> = (0..beats)
                    .map(|_| {
                        if r.random_bool(0.5) {
                            u64::MAX
                        } else {
                            r.random()
                        }
                    })
                    .collect();
                m.set("s_awaddr", addr);
                m.set("s_awlen", beats - 1);
                m.set("s_awsize", 6);
                m.set("s_awburst", 1);
                m.set("s_awid", 3);
                let (mut aw_done, mut sent, mut b_done) = (false, 0u64, false);
                let mut guard = 0;
                while !b_done {
                    guard += 1;
                    assert!(guard < 200);
                    let awv = !aw_done && !chance(&mut r, p);
                    m.set("s_awvalid", awv as u64);
                    let wv = aw_done && sent < beats && !chance(&mut r, p);
                    m.set("s_wvalid", wv as u64);
                    if sent < beats {
                        m.set_bytes("s_wdata", &data[sent as usize]);
                        m.set("s_wstrb", strb[sent as usize]);
                        m.set("s_wlast", (sent == beats - 1) as u64);
                    }
                    let bready = !chance(&mut r, p);
                    m.set("s_bready", bready as u64);
                    m.tick();
                    if awv && m.bit("s_awready") {
                        aw_done = true;
                    }
                    if wv && m.bit("s_wready") {
                        for k in 0..64 {
                            if strb[sent as usize] >> k & 1 == 1 {
                                model_mem
                                    .insert(addr + 64 * sent + k, data[sent as usize][k as usize]);
                            }
                        }
                        sent += 1;
                    }
                    if m.bit("s_bvalid") && bready {
                        assert_eq!(sent, beats, "B before the last W");
                        assert_eq!(m.get("s_bid"), 3);
                        b_done = true;
                    }
                }
                m.set("s_awvalid", 0);
                m.set("s_wvalid", 0);
            }
            // reads of everything written so far, in bursts of 1..=3, while the engine ports
            // read too: (pending request slot, reads in flight (due cycle, slot))
            type Port = (Option<u64>, std::collections::VecDeque<(u64, u64)>);
            let mut eng: [Port; 3] = Default::default();
            let mut addrs: Vec<u64> = model_mem.keys().map(|a| a & !63).collect();
            addrs.sort();
            addrs.dedup();
            for &a in addrs.iter().step_by(2) {
                let beats = r.random_range(1..4u64);
                m.set("s_araddr", a);
                m.set("s_arlen", beats - 1);
                m.set("s_arsize", 6);
                m.set("s_arid", 9);
                let (mut ar_done, mut got) = (false, 0u64);
                let mut guard = 0;
                while got < beats || eng.iter().any(|e| e.0.is_some() || !e.1.is_empty()) {
                    guard += 1;
                    assert!(guard < 300);
                    let arv = !ar_done && got < beats && !chance(&mut r, p);
                    m.set("s_arvalid", arv as u64);
                    let rready = !chance(&mut r, p);
                    m.set("s_rready", rready as u64);
                    // engine ports read random written slots at the same time
                    for (i, e) in eng.iter_mut().enumerate() {
                        if e.0.is_none() && got < beats && chance(&mut r, 0.5) {
                            e.0 = Some(addrs[r.random_range(0..addrs.len())] / 64);
                        }
                        m.set(&format!("q{i}_req"), e.0.is_some() as u64);
                        m.set(&format!("q{i}_slot"), e.0.unwrap_or(0));
                    }
                    m.tick();
                    for (i, e) in eng.iter_mut().enumerate() {
                        if m.bit(&format!("q{i}_rvalid")) {
                            let (due, slot) = e.1.pop_front().expect("unexpected rvalid");
                            assert_eq!(due, m.cycle, "engine port {i} latency");
                            let d = m.get_bytes(&format!("q{i}_rdata"));
                            for k in 0..64u64 {
                                let want = *model_mem.get(&(slot * 64 + k)).unwrap_or(&0);
                                assert_eq!(d[k as usize], want, "port {i} slot {slot} byte {k}");
                            }
                            eng_reads += 1;
                        }
                        if let Some(slot) = e.0
                            && m.bit(&format!("q{i}_gnt"))
                        {
                            e.1.push_back((m.cycle + 2, slot));
                            e.0 = None;
                        }
                    }
                    if arv && m.bit("s_arready") {
                        ar_done = true;
                    }
                    if m.bit("s_rvalid") && rready {
                        let d = m.get_bytes("s_rdata");
                        for k in 0..64u64 {
                            let want = *model_mem.get(&(a + 64 * got + k)).unwrap_or(&0);
                            assert_eq!(d[k as usize], want, "byte {:#x}", a + 64 * got + k);
                        }
                        assert_eq!(m.get("s_rid"), 9);
                        got += 1;
                        assert_eq!(m.bit("s_rlast"), got == beats);
                    }
                }
                m.set("s_arvalid", 0);
            }
        }
        assert!(eng_reads > 100, "{eng_reads} engine reads");
    }

    /// The engine ports' arbitration, with random requests held until granted (as the engines
    /// hold them) and no BAR2 read: at most one grant a cycle, only to a requester, one
    /// whenever any asks; the port the rotating token names (q2, q1, q0 in turn) goes first
    /// when it asks, else q2 if it asks with `pri`, then q0, then q1, then q2; so no port
    /// waits more than two cycles. The token's phase after reset is found from the grants
    /// (exactly one of the three agrees with all of them).
    #[test]
    fn engine_port_grants() {
        let mut m = model(RingMem::default(), "ringmem");
        let mut r = rng(17);
        reset(&mut m);
        let mut req = [false; 3];
        let mut waited = [0u32; 3];
        let mut phases = vec![0u64, 1, 2];
        let mut grants = [0u32; 3];
        let mut pri = false;
        for n in 0..6000u64 {
            // request rates per port vary by phase of the run: all busy, then mixed; q2's
            // requests ask with `pri` (held with the request) none, all, or half of the time
            let p = if n % 3000 < 1000 { 0.95 } else { 0.4 };
            let pp = [0.0, 1.0, 0.5][(n / 2000) as usize];
            for (i, q) in req.iter_mut().enumerate() {
                if !*q && chance(&mut r, p) {
                    *q = true;
                    if i == 2 {
                        pri = chance(&mut r, pp);
                    }
                }
                m.set(&format!("q{i}_req"), *q as u64);
                m.set(&format!("q{i}_slot"), r.random_range(0..64u64));
                // (q0's and q1's `pri` is not looked at)
                m.set(
                    &format!("q{i}_pri"),
                    if i == 2 {
                        pri as u64
                    } else {
                        r.random_range(0..2u64)
                    },
                );
            }
            let c = m.cycle;
            m.tick();
            let g: Vec<bool> = (0..3).map(|i| m.bit(&format!("q{i}_gnt"))).collect();
            assert!(
                g.iter().filter(|&&b| b).count() <= 1,
                "cycle {c}: grants {g:?}"
            );
            for i in 0..3 {
                assert!(!g[i] || req[i], "cycle {c}: q{i} granted without a request");
            }
            assert_eq!(
                req.iter().any(|&b| b),
                g.iter().any(|&b| b),
                "cycle {c}: {req:?} {g:?}"
            );
            // the policy for a token phase: tok = (c + phase) mod 3
            phases.retain(|&ph| {
                let tok = (c + ph) % 3;
                let want = if tok == 0 && req[2] {
                    Some(2)
                } else if tok == 1 && req[1] {
                    Some(1)
                } else if tok == 2 && req[0] {
                    Some(0)
                } else if req[2] && pri {
                    Some(2)
                } else if req[0] {
                    Some(0)
                } else if req[1] {
                    Some(1)
                } else if req[2] {
                    Some(2)
                } else {
                    None
                };
                want == g.iter().position(|&b| b)
            });
            assert!(
                !phases.is_empty(),
                "cycle {c}: no token phase explains {req:?} -> {g:?}"
            );
            for i in 0..3 {
                if g[i] {
                    req[i] = false;
                    waited[i] = 0;
                    grants[i] += 1;
                } else if req[i] {
                    waited[i] += 1;
                    assert!(
                        waited[i] <= 2,
                        "cycle {c}: q{i} waited {} cycles",
                        waited[i]
                    );
                }
            }
        }
        assert_eq!(phases.len(), 1, "token phase not pinned down: {phases:?}");
        assert!(
            grants.iter().all(|&n| n > 500),
            "grants per port {grants:?}"
        );
    }

    /// WQE pushes back to back: single-beat bursts with AW and W offered together, the next
    /// one at once (a posted-write stream). One is taken per cycle while B responses are
    /// taken; with `bready` held low, at most `B_OUT` bursts go in; every B comes, in order,
    /// with its ID; the slots hold the data (read through engine port 0).
    #[test]
    fn pushes_stream_at_one_per_cycle() {
        let mut m = model(RingMem::default(), "ringmem");
        let mut r = rng(15);
        reset(&mut m);
        for hold_b in [false, true] {
            let n = 48u64;
            let data: Vec<Vec<u8>> = (0..n)
                .map(|_| (0..64).map(|_| r.random()).collect())
                .collect();
            let base = if hold_b { 1024 } else { 0 };
            let (mut sent, mut bs, mut first, mut last) = (0u64, vec![], None, 0u64);
            let mut guard = 0;
            while bs.len() < n as usize {
                guard += 1;
                assert!(guard < 400);
                let v = sent < n;
                m.set("s_awvalid", v as u64);
                m.set("s_wvalid", v as u64);
                m.set("s_awaddr", 64 * (base + sent));
                m.set("s_awlen", 0);
                m.set("s_awsize", 6);
                m.set("s_awburst", 1);
                m.set("s_awid", sent % 16);
                m.set_bytes("s_wdata", &data[(sent % n) as usize]);
                m.set("s_wstrb", u64::MAX);
                m.set("s_wlast", 1);
                // held low for the first 40 cycles in the second round
                let bready = !(hold_b && guard < 40);
                m.set("s_bready", bready as u64);
                m.tick();
                let (aw, w) = (m.bit("s_awready"), m.bit("s_wready"));
                if v {
                    assert_eq!(aw, w, "AW and W of a single-beat burst go together");
                }
                if v && aw {
                    first.get_or_insert(m.cycle);
                    last = m.cycle;
                    sent += 1;
                }
                if m.bit("s_bvalid") && bready {
                    bs.push(m.get("s_bid"));
                }
                if hold_b && guard == 39 {
                    assert_eq!(sent, B_OUT, "bursts in while no B is taken");
                }
            }
            assert_eq!(bs, (0..n).map(|i| i % 16).collect::<Vec<_>>());
            if !hold_b {
                let span = last - first.unwrap() + 1;
                assert!(span <= n + 2, "{n} pushes took {span} cycles");
            }
            m.set("s_awvalid", 0);
            m.set("s_wvalid", 0);
            for i in 0..n {
                m.set("q0_req", 1);
                m.set("q0_slot", base + i);
                m.tick();
                assert!(m.bit("q0_gnt"));
                m.set("q0_req", 0);
                m.tick();
                m.tick();
                assert!(m.bit("q0_rvalid"));
                assert_eq!(m.get_bytes("q0_rdata"), data[i as usize], "slot {i}");
            }
        }
    }
}
