//! Doorbell unit: turns BAR0 doorbell events (`devregs`' `db_valid/db_kind/db_word`) into
//! context-store writes of the producer/consumer index (SQ: `QpContext.sq_pi`, on a port of its
//! own, `pi`, into the store's `sq_pi` bank, which waits only for a mailbox write in flight; RQ:
//! `RqState.rq_pi` and CQ: the low 16 bits of `CqContext.consumer`, byte-enabled writes on the
//! record port `ctx`; the head event is decoded into an output stage of registers a cycle before it
//! drives the ports), then, for SQ doorbells, a one-cycle `kick` with the QP number to the TX
//! requester, after the write was granted so that the requester's next context read sees the new
//! index. A doorbell naming a queue beyond the build's tables is dropped (as it enters the output
//! stage) and counted (`cnt_bad`). Events queue in a 4-deep FIFO of registers (rust-hdl's
//! `SynchronousFIFO` is not used: its internal names collide once `$` is replaced). A doorbell is
//! never lost: `db_room` is low once 3 events wait, and the BAR0 front (`axil`) takes no write
//! while it is low (it has one write in flight to here at a time, a BAR0 write every second cycle
//! at most). The context store may keep the unit waiting (up to 6 cycles a write) while the host
//! streams doorbells faster than that: the host's posted writes then wait on the bus, as PCIe flow
//! control makes them wait.

use crate::common::bus::{CTX_ADDR_BITS, CtxPortM, PiPortM};
use rnic_abi::params::{self, BuildParams};
use rnic_abi::queue::{CqContext, QpContext, RqState};
use rnic_abi::regs::{ctx, db};
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct DbUnit {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub db_valid: Signal<In, Bit>,
    pub db_kind: Signal<In, Bits<2>>,
    pub db_word: Signal<In, Bits<32>>,
    /// RQ and CQ doorbells: the index written into the record (byte enables).
    pub ctx: CtxPortM,
    /// SQ doorbells: `sq_pi` written into the context store's `sq_pi` bank.
    pub pi: PiPortM,
    /// Room for a doorbell: at most 2 events queued. The BAR0 front takes no write while it
    /// is low (one write in flight to here at a time), so a doorbell is never dropped.
    pub db_room: Signal<Out, Bit>,
    pub kick_valid: Signal<Out, Bit>,
    pub kick_qpn: Signal<Out, Bits<16>>,
    pub cnt_bad: Signal<Out, Bits<32>>,
    mem: [DFF<Bits<34>>; 4],
    wp: DFF<Bits<3>>,
    rp: DFF<Bits<3>>,
    head: Signal<Local, Bits<34>>,
    empty: Signal<Local, Bit>,
    full: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    kv: DFF<Bit>,
    kq: DFF<Bits<16>>,
    bad: DFF<Bits<32>>,
    n_qp: Constant<Bits<16>>,
    n_cq: Constant<Bits<16>>,
    base_cq: Constant<Bits<CTX_ADDR_BITS>>,
    base_rqs: Constant<Bits<CTX_ADDR_BITS>>,
    k_sq: Constant<Bits<2>>,
    k_rq: Constant<Bits<2>>,
    k_cq: Constant<Bits<2>>,
    sh_rq: Constant<Bits<10>>,
    sh_cq: Constant<Bits<10>>,
    be_rq: Constant<Bits<64>>,
    be_cq: Constant<Bits<64>>,
    kind: Signal<Local, Bits<2>>,
    sq: Signal<Local, Bit>,
    gnt: Signal<Local, Bit>,
    queue: Signal<Local, Bits<16>>,
    index: Signal<Local, Bits<16>>,
    ok: Signal<Local, Bit>,
    // the output stage: the doorbell being written, decoded from the FIFO's head a cycle
    // before (so the ports to the context store are driven from registers: their arbiters
    // and grants do not wait for the head's mux, its range checks and the address sum)
    o_v: DFF<Bit>,
    o_sq: DFF<Bit>,
    o_cq: DFF<Bit>,
    o_q: DFF<Bits<16>>,
    o_idx: DFF<Bits<16>>,
    o_addr: DFF<Bits<CTX_ADDR_BITS>>,
    dec_addr: Signal<Local, Bits<CTX_ADDR_BITS>>,
    done: Signal<Local, Bit>,
}

/// Byte enables of the doorbell unit's context writes: the 16-bit index at the start of the
/// field. The engines that keep a record recognise these writes on the context store's
/// snoop by exactly these masks (and merge the index instead of reading the record again).
fn db_be(fields: &[rnic_abi::layout::FieldDesc], name: &str) -> u64 {
    3u64 << crate::common::bus::field(fields, name).offset
}
/// SQ doorbell: `QpContext.sq_pi`.
pub fn sq_pi_be() -> u64 {
    db_be(QpContext::FIELDS, "sq_pi")
}
/// RQ doorbell: `RqState.rq_pi`.
pub fn rq_pi_be() -> u64 {
    db_be(RqState::FIELDS, "rq_pi")
}
/// CQ doorbell: the low 16 bits of `CqContext.consumer`.
pub fn cq_consumer_be() -> u64 {
    db_be(CqContext::FIELDS, "consumer")
}

impl DbUnit {
    pub fn new(p: &BuildParams) -> Self {
        let rq = crate::common::bus::field(RqState::FIELDS, "rq_pi").offset;
        let cq = crate::common::bus::field(CqContext::FIELDS, "consumer").offset;
        let c10 = |b: usize| Constant::new(((8 * b) as u64).into());
        let be = |m: u64| Constant::new(m.into());
        DbUnit {
            clock: Default::default(),
            rst: Default::default(),
            db_valid: Default::default(),
            db_kind: Default::default(),
            db_word: Default::default(),
            ctx: Default::default(),
            pi: Default::default(),
            db_room: Default::default(),
            kick_valid: Default::default(),
            kick_qpn: Default::default(),
            cnt_bad: Default::default(),
            mem: Default::default(),
            wp: Default::default(),
            rp: Default::default(),
            head: Default::default(),
            empty: Default::default(),
            full: Default::default(),
            pop: Default::default(),
            kv: Default::default(),
            kq: Default::default(),
            bad: Default::default(),
            n_qp: Constant::new((p.num_qps as u64).into()),
            n_cq: Constant::new((p.num_cqs as u64).into()),
            base_cq: Constant::new((p.ctx_base(ctx::TABLE_CQ) as u64).into()),
            base_rqs: Constant::new((p.ctx_base(ctx::TABLE_RQS) as u64).into()),
            k_sq: Constant::new((db::KIND_SQ as u64).into()),
            k_rq: Constant::new((db::KIND_RQ as u64).into()),
            k_cq: Constant::new((db::KIND_CQ as u64).into()),
            sh_rq: c10(rq),
            sh_cq: c10(cq),
            be_rq: be(rq_pi_be()),
            be_cq: be(cq_consumer_be()),
            sq: Default::default(),
            gnt: Default::default(),
            kind: Default::default(),
            queue: Default::default(),
            index: Default::default(),
            ok: Default::default(),
            o_v: Default::default(),
            o_sq: Default::default(),
            o_cq: Default::default(),
            o_q: Default::default(),
            o_idx: Default::default(),
            o_addr: Default::default(),
            dec_addr: Default::default(),
            done: Default::default(),
        }
    }
}

impl Default for DbUnit {
    fn default() -> Self {
        Self::new(&params::DEFAULT)
    }
}

impl Logic for DbUnit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, kv, kq, bad, wp, rp);
        dff_setup!(self, clock, o_v, o_sq, o_cq, o_q, o_idx, o_addr);
        for i in 0..4 {
            self.mem[i].clock.next = self.clock.val();
            self.mem[i].d.next = self.mem[i].q.val();
        }
        self.empty.next = self.wp.q.val() == self.rp.q.val();
        self.full.next = (self.wp.q.val() - self.rp.q.val()) == 4;
        self.db_room.next = (self.wp.q.val() - self.rp.q.val()) < 3;
        if self.db_valid.val() && !self.full.val() {
            self.wp.d.next = self.wp.q.val() + 1;
            for i in 0..4 {
                if self.wp.q.val().get_bits::<2>(0).index() == i {
                    self.mem[i].d.next = bit_cast::<34, 32>(self.db_word.val())
                        | (bit_cast::<34, 2>(self.db_kind.val()) << 32);
                }
            }
        }
        self.head.next = self.mem[0].q.val();
        for i in 1..4 {
            if self.rp.q.val().get_bits::<2>(0).index() == i {
                self.head.next = self.mem[i].q.val();
            }
        }
        self.kind.next = self.head.val().get_bits::<2>(32);
        self.queue.next = self.head.val().get_bits::<16>(0);
        self.index.next = self.head.val().get_bits::<16>(16);
        // the head's decode: its record (RQ: RqState, CQ: CqContext) and whether it names a
        // queue of the build's tables
        self.dec_addr.next = self.queue.val().get_bits::<CTX_ADDR_BITS>(0) + self.base_rqs.val();
        self.ok.next = self.queue.val() < self.n_qp.val();
        if self.kind.val() == self.k_cq.val() {
            self.ok.next = self.queue.val() < self.n_cq.val();
            self.dec_addr.next = self.queue.val().get_bits::<CTX_ADDR_BITS>(0) + self.base_cq.val();
        } else if (self.kind.val() != self.k_sq.val()) && (self.kind.val() != self.k_rq.val()) {
            self.ok.next = false;
        }
        self.sq.next = self.kind.val() == self.k_sq.val();
        // the output stage's doorbell on the ports (an SQ doorbell goes to the `pi` port; the
        // record port writes RQ and CQ ones)
        self.ctx.we.next = true;
        self.ctx.addr.next = self.o_addr.q.val();
        self.ctx.wdata.next = bit_cast::<512, 16>(self.o_idx.q.val()) << self.sh_rq.val();
        self.ctx.wbe.next = self.be_rq.val();
        if self.o_cq.q.val() {
            self.ctx.wdata.next = bit_cast::<512, 16>(self.o_idx.q.val()) << self.sh_cq.val();
            self.ctx.wbe.next = self.be_cq.val();
        }
        self.pi.qpn.next = self.o_q.q.val();
        self.pi.idx.next = self.o_idx.q.val();
        self.ctx.req.next = self.o_v.q.val() && !self.o_sq.q.val();
        self.pi.req.next = self.o_v.q.val() && self.o_sq.q.val();
        self.gnt.next = self.ctx.gnt.val();
        if self.o_sq.q.val() {
            self.gnt.next = self.pi.gnt.val();
        }
        self.done.next = self.o_v.q.val() && self.gnt.val();
        self.kv.d.next = self.done.val() && self.o_sq.q.val();
        self.kq.d.next = self.o_q.q.val();
        if self.done.val() {
            self.o_v.d.next = false;
        }
        // the head moves into the output stage when that is free or written now; one naming
        // no queue of the tables is dropped there and counted
        self.pop.next = !self.empty.val() && (!self.o_v.q.val() || self.done.val());
        if self.pop.val() {
            self.rp.d.next = self.rp.q.val() + 1;
            if self.ok.val() {
                self.o_v.d.next = true;
                self.o_sq.d.next = self.sq.val();
                self.o_cq.d.next = self.kind.val() == self.k_cq.val();
                self.o_q.d.next = self.queue.val();
                self.o_idx.d.next = self.index.val();
                self.o_addr.d.next = self.dec_addr.val();
            } else {
                self.bad.d.next = self.bad.q.val() + 1;
            }
        }
        self.kick_valid.next = self.kv.q.val();
        self.kick_qpn.next = self.kq.q.val();
        self.cnt_bad.next = self.bad.q.val();
        if self.rst.val() {
            self.kv.d.next = false;
            self.o_v.d.next = false;
            self.bad.d.next = 0.into();
            self.wp.d.next = 0.into();
            self.rp.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::*;
    use rand::Rng;

    /// Random doorbells of every kind (some for queues beyond the tables) against a stalling
    /// context store, as fast as the BAR0 front sends them (every second cycle, only after a
    /// cycle with `db_room`): every valid one becomes exactly its 2-byte write (an SQ one on
    /// the `pi` port, which stalls too), SQ ones a kick after the write, bad ones are
    /// counted; nothing is lost or reordered. (Sent without
    /// looking at `db_room`, as before it existed, doorbells are lost: the test fails.)
    #[test]
    fn doorbells_become_index_writes_and_kicks() {
        let p = params::DEFAULT;
        let mut m = model(DbUnit::default(), "dbunit");
        let mut r = rng(21);
        let mut store = CtxModel::new("ctx", 0.7);
        reset(&mut m);
        let mut want = std::collections::VecDeque::new();
        let (mut kicks, mut bad) = (vec![], 0u32);
        let mut sent = 0;
        let mut last_write = 0;
        let mut pi_writes = 0;
        let (mut room, mut held) = (true, 0);
        for _ in 0..20_000 {
            let fire = sent < 400 && m.cycle % 2 == 0 && room && chance(&mut r, 0.9);
            held += (sent < 400 && m.cycle % 2 == 0 && !room) as u32;
            if fire {
                let kind = r.random_range(0..3u32);
                let limit = if kind == db::KIND_CQ {
                    p.num_cqs
                } else {
                    p.num_qps
                };
                let q = if chance(&mut r, 0.1) {
                    limit + r.random_range(0..100)
                } else {
                    r.random_range(0..limit)
                };
                let idx: u16 = r.random();
                m.set("db_valid", 1);
                m.set("db_kind", kind as u64);
                m.set("db_word", db::word(q as u16, idx) as u64);
                if q < limit {
                    let (rec, off) = match kind {
                        db::KIND_SQ => (q, 40),
                        db::KIND_RQ => (p.ctx_base(ctx::TABLE_RQS) + q, 8),
                        _ => (p.ctx_base(ctx::TABLE_CQ) + q, 16),
                    };
                    want.push_back((kind, q, rec, off, idx));
                } else {
                    bad += 1;
                }
                sent += 1;
            } else {
                m.set("db_valid", 0);
            }
            store.drive(&mut m, &mut r);
            let pi_gnt = !chance(&mut r, 0.7);
            m.set("pi_gnt", pi_gnt as u64);
            m.tick();
            room = m.bit("db_room");
            store.observe(&mut m);
            if store.writes.len() > last_write {
                let (rec_i, be) = store.writes[last_write];
                last_write += 1;
                let (kind, q, rec, off, idx) = want.pop_front().expect("unexpected write");
                assert_ne!(kind, db::KIND_SQ, "SQ doorbell {q} on the record port");
                assert_eq!(
                    (rec_i, be),
                    (rec, 3u64 << off),
                    "doorbell kind {kind} queue {q}"
                );
                assert_eq!(le(&store.get(rec), off, 2), idx as u64);
            }
            if pi_gnt && m.bit("pi_req") {
                let (kind, q, _, _, idx) = want.pop_front().expect("unexpected sq_pi write");
                assert_eq!(kind, db::KIND_SQ, "queue {q} on the pi port");
                assert_eq!((m.get("pi_qpn"), m.get("pi_idx")), (q as u64, idx as u64));
                pi_writes += 1;
                kicks.push((q, m.cycle));
            }
            if m.bit("kick_valid") {
                let (q, at) = kicks.remove(0);
                assert_eq!(m.get("kick_qpn"), q as u64);
                assert_eq!(m.cycle, at + 1, "kick one cycle after the write");
            }
        }
        assert_eq!(sent, 400);
        assert!(pi_writes > 100, "{pi_writes} SQ doorbells");
        assert!(held > 50, "the store held the doorbells back {held} times");
        assert!(want.is_empty() && kicks.is_empty(), "all doorbells handled");
        assert_eq!(m.get("cnt_bad"), bad as u64);
    }
}
