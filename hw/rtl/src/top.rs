//! `rnic_top`: the engine as one flat module with the stable port names of DESIGN.md
//! (`s_axil_*` BAR0, `s_axi_wqe_*` BAR2, `m_axi_*` host memory, `m_axis_tx_*`/`s_axis_rx_*`
//! Ethernet frames, `irq_req`), all synchronous to `clk`, `rst` synchronous active high.

use crate::common::bus::{
    AckEvM, AtomReqM, AxilS, CplM, CtxPortM, CtxRdM, CtxSnoopM, DmaRdM, DmaWrM, HostAxiM, PiPortM,
    PiSnoopM, RdVerdictM, RestartM, RingPortM, RspJobM, RxCheckM, StreamM, StreamS, TimerExpM,
    TimerSetM, WqeAxiS,
};
use crate::cq::cplq::CplQ;
use crate::cq::cqwriter::CqWriter;
use crate::ctx::ctxstore::CtxStore;
use crate::debug::engstat::EngStat;
use crate::debug::macdbg::MacDebug;
use crate::debug::rxstat::RxStat;
use crate::dma::axmux::AxMux;
use crate::dma::dmaeng::DmaEng;
use crate::dma::dmatest::DmaTest;
use crate::hostif::axil::AxilFront;
use crate::hostif::dbunit::DbUnit;
use crate::hostif::devregs::DevRegs;
use crate::hostif::ringmem::RingMem;
use crate::rx::ackevq::AckEvQ;
use crate::rx::ackproc::AckProc;
use crate::rx::atomic::AtomicUnit;
use crate::rx::rxresp::RxResp;
use crate::tx::acktimer::AckTimer;
use crate::tx::descslice::DescSlice;
use crate::tx::rdresp::RdResp;
use crate::tx::txbuild::TxBuild;
use crate::tx::txreq::{TxDescM, TxReq};
use rnic_abi::params::BuildParams;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct RnicTop {
    pub clk: Signal<In, Clock>,
    pub rst: Signal<In, Bit>,
    pub s_axil: AxilS,
    pub s_axi_wqe: WqeAxiS,
    pub m_axi: HostAxiM,
    pub m_axis_tx: StreamM,
    pub s_axis_rx: StreamS,
    pub irq_req: Signal<Out, Bit>,
    axil: AxilFront,
    devregs: DevRegs,
    ctxs: CtxStore,
    dmat: DmaTest,
    macd: MacDebug,
    ring: RingMem,
    rxs: RxStat,
    dbu: DbUnit,
    engs: EngStat,
    mux: AxMux,
    /// The DMA engine and the atomic unit share `mux`'s first input.
    dmux: AxMux,
    dmae: DmaEng,
    cqw: CqWriter,
    txq: TxReq,
    /// the register slice between txq's descriptors and txb
    txd: DescSlice,
    txb: TxBuild,
    rdr: RdResp,
    rxr: RxResp,
    aevq: AckEvQ,
    /// the ACK processor's completions, queued for the completion writer
    acplq: CplQ,
    ackp: AckProc,
    tmr: AckTimer,
    atu: AtomicUnit,
}

impl RnicTop {
    pub fn new(p: &BuildParams) -> Self {
        RnicTop {
            clk: Default::default(),
            rst: Default::default(),
            s_axil: Default::default(),
            s_axi_wqe: Default::default(),
            m_axi: Default::default(),
            m_axis_tx: Default::default(),
            s_axis_rx: Default::default(),
            irq_req: Default::default(),
            axil: Default::default(),
            devregs: DevRegs::new(p),
            ctxs: CtxStore::new(p),
            dmat: Default::default(),
            macd: Default::default(),
            ring: Default::default(),
            rxs: Default::default(),
            dbu: DbUnit::new(p),
            engs: Default::default(),
            mux: Default::default(),
            dmux: Default::default(),
            dmae: Default::default(),
            cqw: Default::default(),
            txq: Default::default(),
            txd: Default::default(),
            txb: Default::default(),
            rdr: Default::default(),
            rxr: Default::default(),
            aevq: Default::default(),
            acplq: Default::default(),
            ackp: Default::default(),
            tmr: Default::default(),
            atu: AtomicUnit::new(p),
        }
    }
}

impl Logic for RnicTop {
    #[hdl_gen]
    fn update(&mut self) {
        self.axil.clock.next = self.clk.val();
        self.devregs.clock.next = self.clk.val();
        self.ctxs.clock.next = self.clk.val();
        self.dmat.clock.next = self.clk.val();
        self.macd.clock.next = self.clk.val();
        self.ring.clock.next = self.clk.val();
        self.axil.rst.next = self.rst.val();
        self.devregs.rst.next = self.rst.val();
        self.ctxs.rst.next = self.rst.val();
        self.dmat.rst.next = self.rst.val();
        self.macd.rst.next = self.rst.val();
        self.ring.rst.next = self.rst.val();
        self.rxs.clock.next = self.clk.val();
        self.rxs.rst.next = self.rst.val();
        // RX check counters: fed by the responder's parser + ICRC (one event per frame)
        RxCheckM::join(&mut self.rxr.chk, &mut self.rxs.chk);
        self.rxs.bus.addr.next = self.axil.bus.addr.val();
        self.rxs.bus.wdata.next = self.axil.bus.wdata.val();
        self.rxs.bus.wr.next = self.axil.bus.wr.val();
        self.rxs.bus.rd.next = self.axil.bus.rd.val();
        AxilS::link(&mut self.s_axil, &mut self.axil.s);
        WqeAxiS::link(&mut self.s_axi_wqe, &mut self.ring.s);
        // register bus: one master, every block decodes its own offsets, read data ORed
        self.devregs.bus.addr.next = self.axil.bus.addr.val();
        self.devregs.bus.wdata.next = self.axil.bus.wdata.val();
        self.devregs.bus.wr.next = self.axil.bus.wr.val();
        self.devregs.bus.rd.next = self.axil.bus.rd.val();
        self.ctxs.bus.addr.next = self.axil.bus.addr.val();
        self.ctxs.bus.wdata.next = self.axil.bus.wdata.val();
        self.ctxs.bus.wr.next = self.axil.bus.wr.val();
        self.ctxs.bus.rd.next = self.axil.bus.rd.val();
        self.dmat.bus.addr.next = self.axil.bus.addr.val();
        self.dmat.bus.wdata.next = self.axil.bus.wdata.val();
        self.dmat.bus.wr.next = self.axil.bus.wr.val();
        self.dmat.bus.rd.next = self.axil.bus.rd.val();
        self.macd.bus.addr.next = self.axil.bus.addr.val();
        self.macd.bus.wdata.next = self.axil.bus.wdata.val();
        self.macd.bus.wr.next = self.axil.bus.wr.val();
        self.macd.bus.rd.next = self.axil.bus.rd.val();
        self.axil.bus.rdata.next = self.rxs.bus.rdata.val()
            | self.engs.bus.rdata.val()
            | self.devregs.bus.rdata.val()
            | self.ctxs.bus.rdata.val()
            | self.dmat.bus.rdata.val()
            | self.macd.bus.rdata.val();
        // doorbells -> context store indices (+ SQ kicks)
        self.dbu.clock.next = self.clk.val();
        self.dbu.rst.next = self.rst.val();
        self.dbu.db_valid.next = self.devregs.db_valid.val();
        self.dbu.db_kind.next = self.devregs.db_kind.val();
        self.dbu.db_word.next = self.devregs.db_word.val();
        self.axil.hold.next = !self.dbu.db_room.val();
        CtxPortM::join(&mut self.dbu.ctx, &mut self.ctxs.p0);
        PiPortM::join(&mut self.dbu.pi, &mut self.ctxs.pi);
        // ---- the data path (docs/DATAPATH.md)
        self.mux.clock.next = self.clk.val();
        self.dmux.clock.next = self.clk.val();
        self.atu.clock.next = self.clk.val();
        self.dmae.clock.next = self.clk.val();
        self.cqw.clock.next = self.clk.val();
        self.txq.clock.next = self.clk.val();
        self.txb.clock.next = self.clk.val();
        self.rdr.clock.next = self.clk.val();
        self.rxr.clock.next = self.clk.val();
        self.ackp.clock.next = self.clk.val();
        self.tmr.clock.next = self.clk.val();
        self.mux.rst.next = self.rst.val();
        self.dmux.rst.next = self.rst.val();
        self.atu.rst.next = self.rst.val();
        self.dmae.rst.next = self.rst.val();
        self.cqw.rst.next = self.rst.val();
        self.txq.rst.next = self.rst.val();
        self.txb.rst.next = self.rst.val();
        self.rdr.rst.next = self.rst.val();
        self.rxr.rst.next = self.rst.val();
        self.ackp.rst.next = self.rst.val();
        self.tmr.rst.next = self.rst.val();
        CtxPortM::join(&mut self.txq.ctx, &mut self.ctxs.p1);
        CtxPortM::join(&mut self.rxr.ctx, &mut self.ctxs.p2);
        CtxRdM::join(&mut self.rxr.ctxb, &mut self.ctxs.pr);
        CtxPortM::join(&mut self.ackp.ctx, &mut self.ctxs.p3);
        CtxPortM::join(&mut self.cqw.ctx, &mut self.ctxs.p4);
        // the store's write snoop, to the engines that keep records across accesses
        CtxSnoopM::join(&mut self.ctxs.sn, &mut self.txq.sn);
        PiSnoopM::join(&mut self.ctxs.pisn, &mut self.txq.pisn);
        self.rxr.sn.we.next = self.ctxs.sn.we.val();
        self.rxr.sn.src.next = self.ctxs.sn.src.val();
        self.rxr.sn.addr.next = self.ctxs.sn.addr.val();
        self.rxr.sn.wbe.next = self.ctxs.sn.wbe.val();
        self.rxr.sn.wdata.next = self.ctxs.sn.wdata.val();
        // (the completion writer keeps a CQ record: it watches the CQ bank's writes)
        CtxSnoopM::join(&mut self.ctxs.snc, &mut self.cqw.sn);
        self.ackp.snp_we.next = self.ctxs.sn.we.val();
        self.ackp.snp_addr.next = self.ctxs.sn.addr.val();
        self.ackp.snp_src.next = self.ctxs.sn.src.val();
        self.ackp.snp_wbe.next = self.ctxs.sn.wbe.val();
        self.ackp.snp_wdata.next = self.ctxs.sn.wdata.val();
        RingPortM::join(&mut self.txq.ring, &mut self.ring.q0);
        RingPortM::join(&mut self.rxr.ring, &mut self.ring.q1);
        RingPortM::join(&mut self.ackp.ring, &mut self.ring.q2);
        self.txq.kick_valid.next = self.dbu.kick_valid.val();
        self.txq.kick_qpn.next = self.dbu.kick_qpn.val();
        self.txd.clock.next = self.clk.val();
        self.txd.rst.next = self.rst.val();
        TxDescM::join(&mut self.txq.pkt, &mut self.txd.i);
        TxDescM::join(&mut self.txd.o, &mut self.txb.pkt);
        DmaRdM::join(&mut self.txb.rd, &mut self.dmae.rd);
        DmaWrM::join(&mut self.rxr.wr, &mut self.dmae.wr0);
        DmaWrM::join(&mut self.cqw.wr, &mut self.dmae.wr1);
        CplM::join(&mut self.txq.cpl, &mut self.cqw.tx);
        CplM::join(&mut self.rxr.cpl, &mut self.cqw.rx);
        self.acplq.clock.next = self.clk.val();
        self.acplq.rst.next = self.rst.val();
        CplM::join(&mut self.ackp.cpl, &mut self.acplq.i);
        CplM::join(&mut self.acplq.o, &mut self.cqw.ack);
        // the responder's ACK/NAKs and READ jobs, in decision order, become ACKNOWLEDGE and
        // READ RESPONSE descriptors (rdresp), which txbuild takes before txreq's
        RspJobM::join(&mut self.rxr.rsp, &mut self.rdr.job);
        TxDescM::join(&mut self.rdr.desc, &mut self.txb.rsp);
        self.aevq.clock.next = self.clk.val();
        self.aevq.rst.next = self.rst.val();
        AckEvM::join(&mut self.rxr.ackev, &mut self.aevq.i);
        AckEvM::join(&mut self.aevq.o, &mut self.ackp.ev);
        RdVerdictM::join(&mut self.ackp.rdv, &mut self.rxr.rdv);
        // retransmission: txreq arms the QP timers, ackproc re-arms them and takes their
        // expiries, and hands go-back-N restarts to txreq
        TimerSetM::join(&mut self.txq.arm, &mut self.tmr.a);
        TimerSetM::join(&mut self.ackp.tset, &mut self.tmr.b);
        TimerExpM::join(&mut self.tmr.exp, &mut self.ackp.tmo);
        RestartM::join(&mut self.ackp.rs, &mut self.txq.rs);
        // atomics: the responder hands CMP_SWAP / FETCH_ADD to the atomic unit, which waits
        // for the responder's earlier DMA writes (commands taken on wr0 vs their `done`),
        // then reads, modifies and writes the 8 bytes through its own AXI master
        AtomReqM::join(&mut self.rxr.atom, &mut self.atu.req);
        self.atu.dw_cmd.next = self.rxr.wr.cmd_valid.val() & self.dmae.wr0.cmd_ready.val();
        self.atu.dw_done.next = self.dmae.wr0.done.val();
        // host memory: the DMA engine and the atomic unit (dmux), and the DMA self-test,
        // share m_axi
        HostAxiM::join(&mut self.dmae.m, &mut self.dmux.s0);
        HostAxiM::join(&mut self.atu.m, &mut self.dmux.s1);
        HostAxiM::join(&mut self.dmux.m, &mut self.mux.s0);
        HostAxiM::join(&mut self.dmat.m, &mut self.mux.s1);
        HostAxiM::link(&mut self.m_axi, &mut self.mux.m);
        // frames: the TX arbiter sends ACKs, requests and MAC-debug frames; every received
        // frame goes to the responder (which may hold tready low) and is seen by MAC debug
        StreamM::join(&mut self.macd.tx, &mut self.txb.dbg);
        StreamM::link(&mut self.m_axis_tx, &mut self.txb.tx);
        self.rxr.rx.tdata.next = self.s_axis_rx.tdata.val();
        self.rxr.rx.tkeep.next = self.s_axis_rx.tkeep.val();
        self.rxr.rx.tlast.next = self.s_axis_rx.tlast.val();
        self.rxr.rx.tvalid.next = self.s_axis_rx.tvalid.val();
        self.rxr.rx.tuser.next = self.s_axis_rx.tuser.val();
        self.macd.rx.tdata.next = self.s_axis_rx.tdata.val();
        self.macd.rx.tkeep.next = self.s_axis_rx.tkeep.val();
        self.macd.rx.tlast.next = self.s_axis_rx.tlast.val();
        self.macd.rx.tvalid.next = self.s_axis_rx.tvalid.val() && self.rxr.rx.tready.val();
        self.macd.rx.tuser.next = self.s_axis_rx.tuser.val();
        self.s_axis_rx.tready.next = self.rxr.rx.tready.val();
        // data-path counters
        self.engs.clock.next = self.clk.val();
        self.engs.rst.next = self.rst.val();
        self.engs.bus.addr.next = self.axil.bus.addr.val();
        self.engs.bus.wdata.next = self.axil.bus.wdata.val();
        self.engs.bus.wr.next = self.axil.bus.wr.val();
        self.engs.bus.rd.next = self.axil.bus.rd.val();
        // counter indices follow rnic_abi::regs::eng::COUNTERS (the system tests read them by name)
        self.engs.cnt[0].next = self.dbu.cnt_bad.val();
        self.engs.cnt[1].next = self.txq.cnt_wqe.val();
        self.engs.cnt[2].next = self.txq.cnt_wqe_err.val();
        self.engs.cnt[3].next = self.txb.cnt_tx_pkts.val();
        self.engs.cnt[4].next = self.txb.cnt_tx_acks.val();
        self.engs.cnt[5].next = self.rxr.cnt_rx_req.val();
        self.engs.cnt[6].next = self.rxr.cnt_rx_dup.val();
        self.engs.cnt[7].next = self.rxr.cnt_nak_seq.val();
        self.engs.cnt[8].next = self.rxr.cnt_nak_acc.val();
        self.engs.cnt[9].next = self.rxr.cnt_nak_inv.val();
        self.engs.cnt[10].next = self.rxr.cnt_nak_rnr.val();
        self.engs.cnt[11].next = self.rxr.cnt_drop_qp.val();
        self.engs.cnt[12].next = self.rxr.cnt_drop_opcode.val();
        self.engs.cnt[13].next = self.rxr.cnt_drop_icrc.val();
        self.engs.cnt[14].next = self.rxr.cnt_drop_parse.val();
        self.engs.cnt[24].next = self.rxr.cnt_drop_buf.val();
        self.engs.cnt[25].next = self.rxr.cnt_drop_pkey.val();
        self.engs.cnt[26].next = self.rxr.cnt_drop_addr.val();
        self.engs.cnt[27].next = self.txq.cnt_retx.val();
        self.engs.cnt[28].next = self.txq.cnt_restart.val();
        self.engs.cnt[29].next = self.ackp.cnt_timeout.val();
        self.engs.cnt[30].next = self.ackp.cnt_rnr.val();
        self.engs.cnt[31].next = self.ackp.cnt_nak_seq.val();
        self.engs.cnt[32].next = self.rxr.cnt_rx_cnp.val();
        self.engs.cnt[33].next = self.ackp.cnt_retry_exc.val();
        self.engs.cnt[34].next = self.rxr.cnt_rx_read.val();
        self.engs.cnt[35].next = self.ackp.cnt_rd_rsp.val();
        self.engs.cnt[36].next = self.ackp.cnt_rd_gap.val();
        self.engs.cnt[37].next = self.ackp.cnt_rd_drop.val();
        self.engs.cnt[38].next = self.rxr.cnt_rx_atomic.val();
        self.engs.cnt[39].next = self.rxr.cnt_atom_dup.val();
        self.engs.cnt[40].next = self.rxr.cnt_atom_miss.val();
        self.engs.cnt[41].next = self.rxr.cnt_drop_busy.val();
        self.engs.cnt[42].next = self.ackp.cnt_rs_merged.val();
        self.engs.cnt[43].next = self.ctxs.cnt_wr.val();
        self.engs.cnt[44].next = self.ctxs.cnt_rd.val();
        self.engs.cnt[45].next = self.ctxs.cnt_wait0.val();
        self.engs.cnt[46].next = self.ctxs.cnt_wait1.val();
        self.engs.cnt[47].next = self.ctxs.cnt_wait2.val();
        self.engs.cnt[48].next = self.ctxs.cnt_wait3.val();
        self.engs.cnt[49].next = self.ctxs.cnt_wait4.val();
        self.engs.cnt[15].next = self.ackp.cnt_ack.val();
        self.engs.cnt[16].next = self.ackp.cnt_nak.val();
        self.engs.cnt[17].next = self.ackp.cnt_ack_ignored.val();
        self.engs.cnt[18].next = self.cqw.cnt_cqe.val();
        self.engs.cnt[19].next = self.cqw.cnt_cq_overflow.val();
        self.engs.cnt[20].next = self.cqw.cnt_cq_invalid.val();
        self.engs.cnt[21].next = self.dmae.cnt_rd_bursts.val();
        self.engs.cnt[22].next = self.dmae.cnt_wr_bursts.val();
        self.engs.cnt[23].next = self.dmae.cnt_bus_err.val();
        // interrupts and soft reset
        self.devregs.irq_set.next = bit_cast::<3, 1>(self.dmat.done_pulse.val().into())
            | (bit_cast::<3, 1>(self.macd.rx_pulse.val().into()) << 1)
            | (bit_cast::<3, 1>(self.cqw.irq.val().into()) << 2);
        self.macd.soft_reset.next = self.devregs.soft_reset.val();
        self.devregs.eng_ready.next = self.txq.ready.val() && self.ackp.ready.val();
        self.irq_req.next = self.devregs.irq_req.val();
    }
}
