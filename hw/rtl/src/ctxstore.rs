//! Context store: one RAM of 64-byte records holding the QP contexts, CQ contexts and MR
//! entries (regions in that order, sized by the build parameters), written and read by the
//! driver through the BAR0 `context` mailbox. The data-path engines get their own ports on it
//! in the data-path work.

use crate::bus::RegBusS;
use crate::bus::reg_addr;
use rnic_abi::params::{self, BuildParams};
use rnic_abi::regs::ctx;
use rust_hdl::prelude::*;

/// Address bits of the context RAM (entries: QPs + CQs + MRs of the default build).
pub const CTX_ADDR_BITS: usize = {
    let p = params::DEFAULT;
    let n = p.num_qps + p.num_cqs + p.num_mrs;
    (32 - (n - 1).leading_zeros()) as usize
};

fn c(v: u32) -> Constant<Bits<CTX_ADDR_BITS>> {
    Constant::new((v as u64).into())
}

#[derive(LogicBlock)]
pub struct CtxStore {
    pub clock: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub bus: RegBusS,
    ram: RAM<Bits<512>, CTX_ADDR_BITS>,
    a_cmd: Constant<Bits<16>>,
    a_status: Constant<Bits<16>>,
    a_data: Constant<Bits<16>>,
    n_qp: Constant<Bits<16>>,
    n_cq: Constant<Bits<16>>,
    n_mr: Constant<Bits<16>>,
    base_cq: Constant<Bits<CTX_ADDR_BITS>>,
    base_mr: Constant<Bits<CTX_ADDR_BITS>>,
    ones32: Constant<Bits<512>>,
    zero32: Constant<Bits<32>>,
    staging: DFF<Bits<512>>,
    rdata: DFF<Bits<32>>,
    pending: DFF<Bit>,
    error: DFF<Bit>,
    op: Signal<Local, Bits<2>>,
    tbl: Signal<Local, Bits<4>>,
    index: Signal<Local, Bits<16>>,
    valid: Signal<Local, Bit>,
    addr: Signal<Local, Bits<CTX_ADDR_BITS>>,
    word_off: Signal<Local, Bits<9>>,
    in_data: Signal<Local, Bit>,
}

impl CtxStore {
    pub fn new(p: &BuildParams) -> Self {
        CtxStore {
            clock: Default::default(),
            rst: Default::default(),
            bus: Default::default(),
            ram: Default::default(),
            a_cmd: reg_addr(ctx::CMD),
            a_status: reg_addr(ctx::STATUS),
            a_data: reg_addr(ctx::DATA),
            n_qp: reg_addr(p.num_qps),
            n_cq: reg_addr(p.num_cqs),
            n_mr: reg_addr(p.num_mrs),
            base_cq: c(p.num_qps),
            base_mr: c(p.num_qps + p.num_cqs),
            ones32: Constant::new(0xFFFF_FFFFu64.into()),
            zero32: Constant::new(0u64.into()),
            staging: Default::default(),
            rdata: Default::default(),
            pending: Default::default(),
            error: Default::default(),
            op: Default::default(),
            tbl: Default::default(),
            index: Default::default(),
            valid: Default::default(),
            addr: Default::default(),
            word_off: Default::default(),
            in_data: Default::default(),
        }
    }
}

impl Default for CtxStore {
    fn default() -> Self {
        Self::new(&params::DEFAULT)
    }
}

impl Logic for CtxStore {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, staging, rdata, pending, error);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.op.next = self.bus.wdata.val().get_bits::<2>(0);
        self.tbl.next = self.bus.wdata.val().get_bits::<4>(4);
        self.index.next = self.bus.wdata.val().get_bits::<16>(16);
        self.valid.next = false;
        self.addr.next = self.index.val().get_bits::<CTX_ADDR_BITS>(0);
        if self.tbl.val() == 0 {
            self.valid.next = self.index.val() < self.n_qp.val();
        } else if self.tbl.val() == 1 {
            self.valid.next = self.index.val() < self.n_cq.val();
            self.addr.next = self.index.val().get_bits::<CTX_ADDR_BITS>(0) + self.base_cq.val();
        } else if self.tbl.val() == 2 {
            self.valid.next = self.index.val() < self.n_mr.val();
            self.addr.next = self.index.val().get_bits::<CTX_ADDR_BITS>(0) + self.base_mr.val();
        }
        self.in_data.next = (self.bus.addr.val() & 0xFFC0) == self.a_data.val();
        self.word_off.next = bit_cast::<9, 4>(self.bus.addr.val().get_bits::<4>(2)) << 5;
        self.ram.write_address.next = self.addr.val();
        self.ram.write_data.next = self.staging.q.val();
        self.ram.write_enable.next = false;
        self.ram.read_address.next = self.addr.val();
        self.pending.d.next = false;
        if self.pending.q.val() {
            self.staging.d.next = self.ram.read_data.val();
        }
        if self.bus.wr.val() && !self.pending.q.val() {
            if self.bus.addr.val() == self.a_cmd.val() {
                if self.valid.val() && (self.op.val() == 1) {
                    self.ram.write_enable.next = true;
                    self.error.d.next = false;
                } else if self.valid.val() && (self.op.val() == 2) {
                    self.pending.d.next = true;
                    self.error.d.next = false;
                } else {
                    self.error.d.next = true;
                }
            } else if self.in_data.val() {
                self.staging.d.next = (self.staging.q.val()
                    & !(self.ones32.val() << self.word_off.val()))
                    | (bit_cast::<512, 32>(self.bus.wdata.val()) << self.word_off.val());
            }
        }
        self.rdata.d.next = 0.into();
        if self.bus.rd.val() {
            if self.bus.addr.val() == self.a_status.val() {
                self.rdata.d.next = self
                    .zero32
                    .val()
                    .replace_bit(0, self.pending.q.val())
                    .replace_bit(1, self.error.q.val());
            } else if self.in_data.val() {
                self.rdata.d.next = self
                    .staging
                    .q
                    .val()
                    .get_bits::<32>(self.word_off.val().index());
            }
        }
        self.bus.rdata.next = self.rdata.q.val();
        if self.rst.val() {
            self.pending.d.next = false;
            self.error.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use rand::Rng;

    #[test]
    fn mailbox_writes_and_reads_every_table() {
        let p = params::DEFAULT;
        let mut m = model(CtxStore::default(), "ctxstore");
        let mut r = rng(4);
        reset(&mut m);
        let mut written = Vec::new();
        for (table, n) in [
            (ctx::TABLE_QP, p.num_qps),
            (ctx::TABLE_CQ, p.num_cqs),
            (ctx::TABLE_MR, p.num_mrs),
        ] {
            for idx in [0, 1, n / 2, n - 1] {
                let rec: Vec<u32> = (0..16).map(|_| r.random()).collect();
                for (i, w) in rec.iter().enumerate() {
                    bus_write(&mut m, ctx::DATA + 4 * i as u32, *w);
                }
                bus_write(&mut m, ctx::CMD, ctx::cmd(ctx::OP_WRITE, table, idx as u16));
                assert_eq!(bus_read(&mut m, ctx::STATUS), 0);
                written.push((table, idx, rec));
            }
        }
        for (table, idx, rec) in &written {
            bus_write(
                &mut m,
                ctx::CMD,
                ctx::cmd(ctx::OP_READ, *table, *idx as u16),
            );
            let mut st = bus_read(&mut m, ctx::STATUS);
            for _ in 0..4 {
                if st & ctx::STATUS_BUSY == 0 {
                    break;
                }
                st = bus_read(&mut m, ctx::STATUS);
            }
            assert_eq!(st, 0, "read command finishes without error");
            let got: Vec<u32> = (0..16)
                .map(|i| bus_read(&mut m, ctx::DATA + 4 * i))
                .collect();
            assert_eq!(&got, rec, "table {table} index {idx}");
        }
        for bad in [
            ctx::cmd(ctx::OP_READ, ctx::TABLE_QP, p.num_qps as u16),
            ctx::cmd(ctx::OP_WRITE, ctx::TABLE_MR, p.num_mrs as u16),
            ctx::cmd(3, 0, 0),
            ctx::cmd(ctx::OP_READ, 5, 0),
        ] {
            bus_write(&mut m, ctx::CMD, bad);
            assert_eq!(
                bus_read(&mut m, ctx::STATUS),
                ctx::STATUS_ERROR,
                "command {bad:#x}"
            );
        }
    }
}
