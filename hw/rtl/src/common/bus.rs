//! Our own interface structs for the engine's buses. rust-hdl types stay behind these, so a
//! later move to another HDL crate changes this file and the blocks, not the port names.
//! Every bundle comes in two orientations (`*S` = slave/sink side, `*M` = master/source side)
//! that `join` to each other. At the top level a field `s_axil: AxilS` becomes the flat ports
//! `s_axil_awaddr`, `s_axil_awvalid`, ...

use rust_hdl::prelude::*;

/// AXI4-Lite, slave side (BAR0). 16-bit address, 32-bit data.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxilM"]
pub struct AxilS {
    pub awaddr: Signal<In, Bits<16>>,
    pub awvalid: Signal<In, Bit>,
    pub awready: Signal<Out, Bit>,
    pub wdata: Signal<In, Bits<32>>,
    pub wstrb: Signal<In, Bits<4>>,
    pub wvalid: Signal<In, Bit>,
    pub wready: Signal<Out, Bit>,
    pub bresp: Signal<Out, Bits<2>>,
    pub bvalid: Signal<Out, Bit>,
    pub bready: Signal<In, Bit>,
    pub araddr: Signal<In, Bits<16>>,
    pub arvalid: Signal<In, Bit>,
    pub arready: Signal<Out, Bit>,
    pub rdata: Signal<Out, Bits<32>>,
    pub rresp: Signal<Out, Bits<2>>,
    pub rvalid: Signal<Out, Bit>,
    pub rready: Signal<In, Bit>,
}

/// AXI4-Lite, master side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxilS"]
pub struct AxilM {
    pub awaddr: Signal<Out, Bits<16>>,
    pub awvalid: Signal<Out, Bit>,
    pub awready: Signal<In, Bit>,
    pub wdata: Signal<Out, Bits<32>>,
    pub wstrb: Signal<Out, Bits<4>>,
    pub wvalid: Signal<Out, Bit>,
    pub wready: Signal<In, Bit>,
    pub bresp: Signal<In, Bits<2>>,
    pub bvalid: Signal<In, Bit>,
    pub bready: Signal<Out, Bit>,
    pub araddr: Signal<Out, Bits<16>>,
    pub arvalid: Signal<Out, Bit>,
    pub arready: Signal<In, Bit>,
    pub rdata: Signal<In, Bits<32>>,
    pub rresp: Signal<In, Bits<2>>,
    pub rvalid: Signal<In, Bit>,
    pub rready: Signal<Out, Bit>,
}

/// AXI4 (full), slave side, 512-bit data, 4-bit id, `A`-bit address.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxiM"]
pub struct AxiS<const A: usize> {
    pub awid: Signal<In, Bits<4>>,
    pub awaddr: Signal<In, Bits<A>>,
    pub awlen: Signal<In, Bits<8>>,
    pub awsize: Signal<In, Bits<3>>,
    pub awburst: Signal<In, Bits<2>>,
    pub awvalid: Signal<In, Bit>,
    pub awready: Signal<Out, Bit>,
    pub wdata: Signal<In, Bits<512>>,
    pub wstrb: Signal<In, Bits<64>>,
    pub wlast: Signal<In, Bit>,
    pub wvalid: Signal<In, Bit>,
    pub wready: Signal<Out, Bit>,
    pub bid: Signal<Out, Bits<4>>,
    pub bresp: Signal<Out, Bits<2>>,
    pub bvalid: Signal<Out, Bit>,
    pub bready: Signal<In, Bit>,
    pub arid: Signal<In, Bits<4>>,
    pub araddr: Signal<In, Bits<A>>,
    pub arlen: Signal<In, Bits<8>>,
    pub arsize: Signal<In, Bits<3>>,
    pub arburst: Signal<In, Bits<2>>,
    pub arvalid: Signal<In, Bit>,
    pub arready: Signal<Out, Bit>,
    pub rid: Signal<Out, Bits<4>>,
    pub rdata: Signal<Out, Bits<512>>,
    pub rresp: Signal<Out, Bits<2>>,
    pub rlast: Signal<Out, Bit>,
    pub rvalid: Signal<Out, Bit>,
    pub rready: Signal<In, Bit>,
}

/// AXI4 (full), master side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxiS"]
pub struct AxiM<const A: usize> {
    pub awid: Signal<Out, Bits<4>>,
    pub awaddr: Signal<Out, Bits<A>>,
    pub awlen: Signal<Out, Bits<8>>,
    pub awsize: Signal<Out, Bits<3>>,
    pub awburst: Signal<Out, Bits<2>>,
    pub awvalid: Signal<Out, Bit>,
    pub awready: Signal<In, Bit>,
    pub wdata: Signal<Out, Bits<512>>,
    pub wstrb: Signal<Out, Bits<64>>,
    pub wlast: Signal<Out, Bit>,
    pub wvalid: Signal<Out, Bit>,
    pub wready: Signal<In, Bit>,
    pub bid: Signal<In, Bits<4>>,
    pub bresp: Signal<In, Bits<2>>,
    pub bvalid: Signal<In, Bit>,
    pub bready: Signal<Out, Bit>,
    pub arid: Signal<Out, Bits<4>>,
    pub araddr: Signal<Out, Bits<A>>,
    pub arlen: Signal<Out, Bits<8>>,
    pub arsize: Signal<Out, Bits<3>>,
    pub arburst: Signal<Out, Bits<2>>,
    pub arvalid: Signal<Out, Bit>,
    pub arready: Signal<In, Bit>,
    pub rid: Signal<In, Bits<4>>,
    pub rdata: Signal<In, Bits<512>>,
    pub rresp: Signal<In, Bits<2>>,
    pub rlast: Signal<In, Bit>,
    pub rvalid: Signal<In, Bit>,
    pub rready: Signal<Out, Bit>,
}

/// AXI4-Stream frame source (towards the MAC): 512-bit data, byte keep, last, error user bit.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "StreamS"]
pub struct StreamM {
    pub tdata: Signal<Out, Bits<512>>,
    pub tkeep: Signal<Out, Bits<64>>,
    pub tlast: Signal<Out, Bit>,
    pub tvalid: Signal<Out, Bit>,
    pub tready: Signal<In, Bit>,
    pub tuser: Signal<Out, Bit>,
}

/// AXI4-Stream frame sink (from the MAC).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "StreamM"]
pub struct StreamS {
    pub tdata: Signal<In, Bits<512>>,
    pub tkeep: Signal<In, Bits<64>>,
    pub tlast: Signal<In, Bit>,
    pub tvalid: Signal<In, Bit>,
    pub tready: Signal<Out, Bit>,
    pub tuser: Signal<In, Bit>,
}

/// Internal register bus from the AXI4-Lite front end to the register blocks, slave side.
/// `wr` pulses one cycle with `addr`/`wdata`; `rd` pulses one cycle with `addr`, and the block
/// answers on `rdata` in the next cycle (0 when the address is not its own), so registered RAM
/// reads fit. Blocks' `rdata` are ORed together.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RegBusM"]
pub struct RegBusS {
    pub addr: Signal<In, Bits<16>>,
    pub wdata: Signal<In, Bits<32>>,
    pub wr: Signal<In, Bit>,
    pub rd: Signal<In, Bit>,
    pub rdata: Signal<Out, Bits<32>>,
}

/// Register bus, master side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RegBusS"]
pub struct RegBusM {
    pub addr: Signal<Out, Bits<16>>,
    pub wdata: Signal<Out, Bits<32>>,
    pub wr: Signal<Out, Bit>,
    pub rd: Signal<Out, Bit>,
    pub rdata: Signal<In, Bits<32>>,
}

/// A BAR0 register offset from `rnic-abi` as a 16-bit constant the register decoders compare
/// against (`#[hdl_gen]` match arms cannot name Rust constants).
pub fn reg_addr(offset: u32) -> Constant<Bits<16>> {
    Constant::new((offset as u64).into())
}

/// The ABI record field `name` of a `FIELDS` table (panics on a wrong name: a generation-time
/// wiring error, never a run-time one).
pub fn field(fields: &[rnic_abi::layout::FieldDesc], name: &str) -> rnic_abi::layout::FieldDesc {
    *fields
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no ABI record field {name}"))
}

/// Bit offset of an ABI record field, as a constant for dynamic slicing and shifts of a
/// 512-bit record image (`rec.get_bits::<N>(off.val().index())`).
pub fn field_bit(fields: &[rnic_abi::layout::FieldDesc], name: &str) -> Constant<Bits<10>> {
    Constant::new((8 * field(fields, name).offset as u64).into())
}

/// Byte-enable mask (bit i = record byte i) covering the named ABI record fields.
pub fn field_bytes(fields: &[rnic_abi::layout::FieldDesc], names: &[&str]) -> u64 {
    names.iter().fold(0, |m, n| {
        let f = field(fields, n);
        m | ((((1u128 << (f.bits / 8)) - 1) as u64) << f.offset)
    })
}

/// [`field_bytes`] as a constant for a context-store port's `wbe`.
pub fn field_be(fields: &[rnic_abi::layout::FieldDesc], names: &[&str]) -> Constant<Bits<64>> {
    Constant::new(field_bytes(fields, names).into())
}

/// A record's byte enables spread over its bits (bit i = record bit i): a 512-bit mask to
/// merge a write into a kept record.
pub fn be_bits(be: u64) -> Constant<Bits<512>> {
    let mut m: Bits<512> = 0.into();
    for i in 0..512 {
        if be >> (i / 8) & 1 == 1 {
            m = m.replace_bit(i, true);
        }
    }
    Constant::new(m)
}

/// The bits of the named ABI record fields as a 512-bit mask ([`be_bits`] of [`field_bytes`]).
pub fn field_mask(fields: &[rnic_abi::layout::FieldDesc], names: &[&str]) -> Constant<Bits<512>> {
    be_bits(field_bytes(fields, names))
}

/// BAR2 (WQE rings) AXI4 slave port of the default build.
pub type WqeAxiS = AxiS<{ BAR2_ADDR_BITS }>;
/// Host-memory AXI4 master port: 64-bit addresses.
pub type HostAxiM = AxiM<64>;
/// Host-memory AXI4 port, slave side (the master mux's inputs).
pub type HostAxiS = AxiS<64>;

// ---------------------------------------------------------------------------------------------
// Data-path ports (docs/DATAPATH.md has the timing rules of each). `*M` = client/source side.

/// Context-store record address bits (all four tables stacked, see `BuildParams::ctx_base`).
/// Address bits of the ring RAM (64-byte slots) in the default build.
pub const RING_SLOT_BITS: usize = rnic_abi::params::DEFAULT.ring_slots_log2() as usize;
/// BAR2 address width in bits.
pub const BAR2_ADDR_BITS: usize = RING_SLOT_BITS + 6;
pub const CTX_ADDR_BITS: usize = rnic_abi::params::DEFAULT.ctx_addr_bits() as usize;
/// Address bits of the context store's CQ bank (the CQ table's own RAM).
pub const CQ_ADDR_BITS: usize = rnic_abi::params::DEFAULT.cq_addr_bits() as usize;

/// Context-store port, client side. `req`/`gnt` are a valid/ready pair: hold `req` with
/// `we/addr/wdata/wbe` stable until the store takes the request in a cycle with `req && gnt`
/// (`gnt` may be high without `req`). A read's record appears on `rdata` with `rvalid` high
/// for exactly one cycle, 2 cycles after the cycle it was taken. Writes apply the
/// byte enables `wbe` (byte i = `wdata[8i+7:8i]` = record byte i, ABI little-endian image).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "CtxPortS"]
pub struct CtxPortM {
    pub req: Signal<Out, Bit>,
    pub we: Signal<Out, Bit>,
    pub addr: Signal<Out, Bits<CTX_ADDR_BITS>>,
    pub wdata: Signal<Out, Bits<512>>,
    pub wbe: Signal<Out, Bits<64>>,
    pub gnt: Signal<In, Bit>,
    pub rvalid: Signal<In, Bit>,
    pub rdata: Signal<In, Bits<512>>,
}

/// Context-store port, store side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "CtxPortM"]
pub struct CtxPortS {
    pub req: Signal<In, Bit>,
    pub we: Signal<In, Bit>,
    pub addr: Signal<In, Bits<CTX_ADDR_BITS>>,
    pub wdata: Signal<In, Bits<512>>,
    pub wbe: Signal<In, Bits<64>>,
    pub gnt: Signal<Out, Bit>,
    pub rvalid: Signal<Out, Bit>,
    pub rdata: Signal<Out, Bits<512>>,
}

/// Context-store read-only port, client side: `req`/`gnt` and the read's timing as on
/// [`CtxPortM`] (record on `rdata` with `rvalid`, 2 cycles after the cycle it was taken). The
/// store serves it on its second RAM port only, ahead of the other readers there: the
/// responder reads a QP's `RqState` on it in the cycle it reads the `QpContext` on its
/// [`CtxPortM`].
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "CtxRdS"]
pub struct CtxRdM {
    pub req: Signal<Out, Bit>,
    pub addr: Signal<Out, Bits<CTX_ADDR_BITS>>,
    pub gnt: Signal<In, Bit>,
    pub rvalid: Signal<In, Bit>,
    pub rdata: Signal<In, Bits<512>>,
}

/// Context-store read-only port, store side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "CtxRdM"]
pub struct CtxRdS {
    pub req: Signal<In, Bit>,
    pub addr: Signal<In, Bits<CTX_ADDR_BITS>>,
    pub gnt: Signal<Out, Bit>,
    pub rvalid: Signal<Out, Bit>,
    pub rdata: Signal<Out, Bits<512>>,
}

/// The context store's engine port numbers, as [`CtxSnoopM::src`] names the writer (the
/// BAR0 mailbox, the driver, is `CTX_SRC_HOST`).
pub const CTX_SRC_DBU: u64 = 0;
pub const CTX_SRC_TX: u64 = 1;
pub const CTX_SRC_RX: u64 = 2;
pub const CTX_SRC_ACK: u64 = 3;
pub const CTX_SRC_CQW: u64 = 4;
pub const CTX_SRC_HOST: u64 = 5;

/// Context-store write snoop, store side: every write the store took, one cycle after the
/// cycle it was taken (the cycle its bytes went into the RAM): `we` for one cycle with the
/// writer `src` (`CTX_SRC_*`), the record `addr`, the byte enables and the data. An engine
/// that keeps a record across accesses (the TX requester's context between WQEs of one QP)
/// watches it: a read taken in the cycle a write shows here or later already holds that
/// write's bytes, one taken earlier does not.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "CtxSnoopS"]
pub struct CtxSnoopM {
    pub we: Signal<Out, Bit>,
    pub src: Signal<Out, Bits<3>>,
    pub addr: Signal<Out, Bits<CTX_ADDR_BITS>>,
    pub wbe: Signal<Out, Bits<64>>,
    pub wdata: Signal<Out, Bits<512>>,
}

/// Context-store write snoop, watcher side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "CtxSnoopM"]
pub struct CtxSnoopS {
    pub we: Signal<In, Bit>,
    pub src: Signal<In, Bits<3>>,
    pub addr: Signal<In, Bits<CTX_ADDR_BITS>>,
    pub wbe: Signal<In, Bits<64>>,
    pub wdata: Signal<In, Bits<512>>,
}

/// SQ doorbell port, client side (the doorbell unit): QP `qpn`'s `QpContext.sq_pi` becomes
/// `idx`, held until taken (`req && gnt`). The context store keeps every QP's `sq_pi` in a
/// bank of its own beside the record RAM, with its own write port, so a doorbell never waits
/// for the engines' write-backs (only for a mailbox write in flight).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "PiPortS"]
pub struct PiPortM {
    pub req: Signal<Out, Bit>,
    pub qpn: Signal<Out, Bits<16>>,
    pub idx: Signal<Out, Bits<16>>,
    pub gnt: Signal<In, Bit>,
}

/// SQ doorbell port, store side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "PiPortM"]
pub struct PiPortS {
    pub req: Signal<In, Bit>,
    pub qpn: Signal<In, Bits<16>>,
    pub idx: Signal<In, Bits<16>>,
    pub gnt: Signal<Out, Bit>,
}

/// `sq_pi` write snoop, store side: every write the SQ doorbell port took, one cycle after
/// the cycle it was taken (`we` for one cycle, the QP number, the new index). It may show in
/// the same cycle as a [`CtxSnoopM`] write (another record, or other bytes of the same one).
/// A read of a QP record holds every `sq_pi` write taken up to and including the read's own
/// cycle (unlike the record RAM's writes: see [`CtxSnoopM`]); the one shown in the cycle its
/// data comes was taken the cycle after the read and is not in it: merge it on top, as for
/// the record snoop.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "PiSnoopS"]
pub struct PiSnoopM {
    pub we: Signal<Out, Bit>,
    pub qpn: Signal<Out, Bits<16>>,
    pub idx: Signal<Out, Bits<16>>,
}

/// `sq_pi` write snoop, watcher side (the TX requester).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "PiSnoopM"]
pub struct PiSnoopS {
    pub we: Signal<In, Bit>,
    pub qpn: Signal<In, Bits<16>>,
    pub idx: Signal<In, Bits<16>>,
}

/// Ring-memory read port (one 64-byte WQE slot per read), client side. Same handshake as
/// [`CtxPortM`]: hold `req`/`slot` until taken (`req && gnt`); `rdata` valid with `rvalid`
/// 2 cycles after.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RingPortS"]
pub struct RingPortM {
    pub req: Signal<Out, Bit>,
    /// the request is one a decision waits for (the memory may serve it before others;
    /// held with `req`)
    pub pri: Signal<Out, Bit>,
    pub slot: Signal<Out, Bits<RING_SLOT_BITS>>,
    pub gnt: Signal<In, Bit>,
    pub rvalid: Signal<In, Bit>,
    pub rdata: Signal<In, Bits<512>>,
}

/// Ring-memory read port, memory side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RingPortM"]
pub struct RingPortS {
    pub req: Signal<In, Bit>,
    pub pri: Signal<In, Bit>,
    pub slot: Signal<In, Bits<RING_SLOT_BITS>>,
    pub gnt: Signal<Out, Bit>,
    pub rvalid: Signal<Out, Bit>,
    pub rdata: Signal<Out, Bits<512>>,
}

/// DMA read client (host memory -> engine), client side. A command (`cmd_*`, valid/ready)
/// reads `cmd_len` (1..=8192) bytes at any byte address `cmd_addr`; its data comes back in
/// command order on `dat_*` (valid/ready), packed: beat k holds request bytes 64k..64k+63 in
/// `dat_data` bytes 0.. (byte 0 = bits 7:0), `dat_keep` marks the valid bytes (all ones except
/// possibly the last beat), `dat_last` on the command's last beat, `dat_err` on any beat whose
/// bus response was an error (the bytes are then undefined).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "DmaRdS"]
pub struct DmaRdM {
    pub cmd_valid: Signal<Out, Bit>,
    pub cmd_ready: Signal<In, Bit>,
    pub cmd_addr: Signal<Out, Bits<64>>,
    pub cmd_len: Signal<Out, Bits<14>>,
    pub dat_valid: Signal<In, Bit>,
    pub dat_ready: Signal<Out, Bit>,
    pub dat_data: Signal<In, Bits<512>>,
    pub dat_keep: Signal<In, Bits<64>>,
    pub dat_last: Signal<In, Bit>,
    pub dat_err: Signal<In, Bit>,
}

/// DMA read client, engine side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "DmaRdM"]
pub struct DmaRdS {
    pub cmd_valid: Signal<In, Bit>,
    pub cmd_ready: Signal<Out, Bit>,
    pub cmd_addr: Signal<In, Bits<64>>,
    pub cmd_len: Signal<In, Bits<14>>,
    pub dat_valid: Signal<Out, Bit>,
    pub dat_ready: Signal<In, Bit>,
    pub dat_data: Signal<Out, Bits<512>>,
    pub dat_keep: Signal<Out, Bits<64>>,
    pub dat_last: Signal<Out, Bit>,
    pub dat_err: Signal<Out, Bit>,
}

/// DMA write client (engine -> host memory), client side. A command writes `cmd_len`
/// (1..=8192) bytes at any byte address `cmd_addr`; the client then supplies exactly
/// ceil(len/64) beats on `dat_*` (valid/ready), packed from byte 0 like [`DmaRdM`] data,
/// `dat_last` on the last. The client may present data before or after the command is taken;
/// commands of one client are written in order. `done` pulses once per command, in command
/// order, when every bus response of it has returned (`err` high with it if any was an error).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "DmaWrS"]
pub struct DmaWrM {
    pub cmd_valid: Signal<Out, Bit>,
    pub cmd_ready: Signal<In, Bit>,
    pub cmd_addr: Signal<Out, Bits<64>>,
    pub cmd_len: Signal<Out, Bits<14>>,
    pub dat_valid: Signal<Out, Bit>,
    pub dat_ready: Signal<In, Bit>,
    pub dat_data: Signal<Out, Bits<512>>,
    pub dat_last: Signal<Out, Bit>,
    pub done: Signal<In, Bit>,
    pub err: Signal<In, Bit>,
}

/// DMA write client, engine side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "DmaWrM"]
pub struct DmaWrS {
    pub cmd_valid: Signal<In, Bit>,
    pub cmd_ready: Signal<Out, Bit>,
    pub cmd_addr: Signal<In, Bits<64>>,
    pub cmd_len: Signal<In, Bits<14>>,
    pub dat_valid: Signal<In, Bit>,
    pub dat_ready: Signal<Out, Bit>,
    pub dat_data: Signal<In, Bits<512>>,
    pub dat_last: Signal<In, Bit>,
    pub done: Signal<Out, Bit>,
    pub err: Signal<Out, Bit>,
}

/// Completion request (to the completion writer), source side, valid/ready. Fields as in the
/// ABI `Cqe` (the writer adds the owner bit to `flags`).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "CplS"]
pub struct CplM {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub cqn: Signal<Out, Bits<16>>,
    pub wr_id: Signal<Out, Bits<64>>,
    pub byte_len: Signal<Out, Bits<32>>,
    pub imm: Signal<Out, Bits<32>>,
    pub qpn: Signal<Out, Bits<24>>,
    pub src_qp: Signal<Out, Bits<24>>,
    pub opcode: Signal<Out, Bits<8>>,
    pub status: Signal<Out, Bits<8>>,
    pub flags: Signal<Out, Bits<8>>,
    pub wqe_idx: Signal<Out, Bits<16>>,
}

/// Completion request, writer side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "CplM"]
pub struct CplS {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub cqn: Signal<In, Bits<16>>,
    pub wr_id: Signal<In, Bits<64>>,
    pub byte_len: Signal<In, Bits<32>>,
    pub imm: Signal<In, Bits<32>>,
    pub qpn: Signal<In, Bits<24>>,
    pub src_qp: Signal<In, Bits<24>>,
    pub opcode: Signal<In, Bits<8>>,
    pub status: Signal<In, Bits<8>>,
    pub flags: Signal<In, Bits<8>>,
    pub wqe_idx: Signal<In, Bits<16>>,
}

/// A received, checked ACKNOWLEDGE (RX dispatcher -> ACK processor), source side, valid/ready.
/// `qpn` is the BTH destination QP (our local QP number).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AckEvS"]
pub struct AckEvM {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<24>>,
    pub psn: Signal<Out, Bits<24>>,
    pub syndrome: Signal<Out, Bits<8>>,
    pub msn: Signal<Out, Bits<24>>,
    /// An RDMA READ RESPONSE (0x0D..0x10), not an ACKNOWLEDGE: the sender waits for the
    /// ACK processor's verdict on [`RdVerdictM`] before it takes the next frame. `syndrome` /
    /// `msn` are the AETH's for FIRST / LAST / ONLY and `aeth::ACK` / 0 for MIDDLE.
    pub rsp: Signal<Out, Bit>,
    /// READ RESPONSE position: 0 FIRST, 1 MIDDLE, 2 LAST, 3 ONLY (`RSP_*`).
    pub rpos: Signal<Out, Bits<2>>,
    /// READ RESPONSE payload bytes (without the pad), 0..=4096.
    pub plen: Signal<Out, Bits<13>>,
    /// An ATOMIC ACKNOWLEDGE (0x12), sent with `rsp` = 1, `rpos` = ONLY, `plen` = 8 and the
    /// AETH's syndrome/MSN: its AtomicAckETH (frame bytes 58..65, the original remote value,
    /// big-endian on the wire) is what an ok verdict places: the receive side writes it at
    /// the verdict's `addr` as a host-order (little-endian) u64, as rxe does.
    pub atom: Signal<Out, Bit>,
    /// The QP record's `sq_ack_ci` as the sender last saw it (its copy of the record, which
    /// may be stale): a hint with which the ACK processor reads the first WQE the event walks
    /// before the record itself comes. It is checked against the record (a stale hint costs
    /// a ring read, never a wrong decision).
    pub ackci: Signal<Out, Bits<16>>,
    /// `ackci` may be used: the sender's copy of the record had a WQE sent at `ackci`
    /// (`sq_ci` after it). Only then is that ring slot known to hold WQE `ackci` (posted and
    /// sent before the copy was read, and kept there until it completes, which the ACK
    /// processor's own record check then shows); a slot not yet posted may hold an older
    /// lap's WQE.
    pub hv: Signal<Out, Bit>,
    /// The sender's QP-record reads, apart from the handshake (whatever `valid` says): a read
    /// of QP `xq_qpn`'s record was granted on the sender's context port a cycle ago
    /// (`xq_g`, registered), its data comes on `xq_d` (that port's read data) in the next
    /// cycle. The receiver may keep that record as one it read itself at the grant (the
    /// frames the sender reads records for are mostly the ones whose events come next).
    pub xq_g: Signal<Out, Bit>,
    pub xq_qpn: Signal<Out, Bits<24>>,
    pub xq_d: Signal<Out, Bits<512>>,
}

/// Received ACKNOWLEDGE, ACK-processor side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AckEvM"]
pub struct AckEvS {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<24>>,
    pub psn: Signal<In, Bits<24>>,
    pub syndrome: Signal<In, Bits<8>>,
    pub msn: Signal<In, Bits<24>>,
    pub rsp: Signal<In, Bit>,
    pub rpos: Signal<In, Bits<2>>,
    pub plen: Signal<In, Bits<13>>,
    pub atom: Signal<In, Bit>,
    pub ackci: Signal<In, Bits<16>>,
    pub hv: Signal<In, Bit>,
    pub xq_g: Signal<In, Bit>,
    pub xq_qpn: Signal<In, Bits<24>>,
    pub xq_d: Signal<In, Bits<512>>,
}

/// READ RESPONSE positions on [`AckEvM::rpos`].
pub const RSP_FIRST: u64 = 0;
pub const RSP_MIDDLE: u64 = 1;
pub const RSP_LAST: u64 = 2;
pub const RSP_ONLY: u64 = 3;

/// The ACK processor's verdict on a READ RESPONSE event (ackproc -> rxresp), source side.
/// `valid`/`ready`: exactly one verdict per `AckEvM` with `rsp` set, after that event was
/// taken. `ok` = place the payload (`plen` bytes of the event) at host address `addr` (the
/// READ WQE's local buffer + the response's offset); !ok = drop the frame (duplicate, gap,
/// malformed, QP not RTS). After an `ok` verdict, the receive side pulses `placed` for one
/// cycle once the payload's DMA write command has been taken by the DMA engine (at once when
/// `plen` is 0), so a completion the ACK processor writes afterwards lands after the data
/// (same AXI ID). The ACK processor takes no other event until then.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RdVerdictS"]
pub struct RdVerdictM {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub ok: Signal<Out, Bit>,
    pub addr: Signal<Out, Bits<64>>,
    pub placed: Signal<In, Bit>,
}

/// READ RESPONSE verdict, receive side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RdVerdictM"]
pub struct RdVerdictS {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub ok: Signal<In, Bit>,
    pub addr: Signal<In, Bits<64>>,
    pub placed: Signal<Out, Bit>,
}

/// A responder job (rxresp -> rdresp), source side, valid/ready, in the order the responder
/// decided them: an ACK/NAK (`read` = 0: one ACKNOWLEDGE frame, PSN `psn`, AETH = `syndrome`
/// and `msn`) or an RDMA READ to answer (`read` = 1: READ RESPONSE packets for `len` bytes
/// read from host address `va`, PSNs `psn`, `psn`+1, ..., segmented at the path MTU
/// 128 << `mtu`, AETH = `syndrome` (ACK) + `msn` on FIRST/LAST/ONLY). Addressing from the
/// responder's QP context: MACs as 48-bit numbers with the first wire octet in bits 47:40,
/// IPv4 addresses host order (first wire octet in bits 31:24). One stream, so an ACK never
/// overtakes the READ responses of requests before it (IBTA 9.5: responses in PSN order).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RspJobS"]
pub struct RspJobM {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub dmac: Signal<Out, Bits<48>>,
    pub smac: Signal<Out, Bits<48>>,
    pub sip: Signal<Out, Bits<32>>,
    pub dip: Signal<Out, Bits<32>>,
    pub sport: Signal<Out, Bits<16>>,
    pub tos: Signal<Out, Bits<8>>,
    pub dqpn: Signal<Out, Bits<24>>,
    pub psn: Signal<Out, Bits<24>>,
    pub syndrome: Signal<Out, Bits<8>>,
    pub msn: Signal<Out, Bits<24>>,
    pub read: Signal<Out, Bit>,
    pub va: Signal<Out, Bits<64>>,
    /// READ DMA length in bytes (0 = one READ RESPONSE ONLY without payload).
    pub len: Signal<Out, Bits<32>>,
    /// Path MTU, IBTA enum 1..5.
    pub mtu: Signal<Out, Bits<3>>,
    /// An atomic's answer (`read` = 0): one ATOMIC ACKNOWLEDGE frame (opcode 0x12), PSN
    /// `psn`, AETH = `syndrome` + `msn`, AtomicAckETH = `orig` (sent big-endian).
    pub atomic: Signal<Out, Bit>,
    /// The original value at the atomic's address (before the operation), as a number.
    pub orig: Signal<Out, Bits<64>>,
}

/// Responder job, response-generator side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RspJobM"]
pub struct RspJobS {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub dmac: Signal<In, Bits<48>>,
    pub smac: Signal<In, Bits<48>>,
    pub sip: Signal<In, Bits<32>>,
    pub dip: Signal<In, Bits<32>>,
    pub sport: Signal<In, Bits<16>>,
    pub tos: Signal<In, Bits<8>>,
    pub dqpn: Signal<In, Bits<24>>,
    pub psn: Signal<In, Bits<24>>,
    pub syndrome: Signal<In, Bits<8>>,
    pub msn: Signal<In, Bits<24>>,
    pub read: Signal<In, Bit>,
    pub va: Signal<In, Bits<64>>,
    pub len: Signal<In, Bits<32>>,
    pub mtu: Signal<In, Bits<3>>,
    pub atomic: Signal<In, Bit>,
    pub orig: Signal<In, Bits<64>>,
}

/// Bits of a saved-atomic slot index (`AtomReqM::head`): log2 of the build's `rd_atomic`.
pub const ATOM_SLOT_BITS: usize = rnic_abi::queue::ATOMIC_RESOURCES.trailing_zeros() as usize;
/// Bits of a saved-atomic count 0..=`ATOMIC_RESOURCES` (`AtomReqM::cnt`).
pub const ATOM_CNT_BITS: usize = ATOM_SLOT_BITS + 1;
const _: () = assert!(
    rnic_abi::queue::ATOMIC_RESOURCES == 1 << ATOM_SLOT_BITS && ATOM_CNT_BITS <= 8,
    "AtomReqM::head and cnt hold the build's rd_atomic slots"
);

/// An atomic to execute or to look up (RX responder -> `rx::atomic::AtomicUnit`), source side.
/// `valid`/`ready` hands over one request; the unit answers with a one-cycle `done` pulse
/// (with `found`, `err`, `orig`) some cycles later, and takes no new request before that.
///
/// * `dup` = 0, a new atomic (all responder checks passed): the unit waits until every DMA
///   write command the responder issued before has completed (its `wr_cmd` / `wr_done`
///   inputs), reads the 8 bytes at host address `addr` (8-byte aligned), computes
///   FETCH_ADD (`fa` = 1): orig + `swap`; CMP_SWAP (`fa` = 0): `swap` if orig == `cmp`, else
///   unchanged (and then writes nothing), writes the new value back and waits for its write
///   response, so no other access of the responder to that address falls between the read
///   and the write. Memory holds host-order (little-endian) u64s. It then saves {`psn`,
///   orig} in slot `head` of QP `qpn`'s result ring and pulses `done` with `found` = 1 and
///   `orig`; `err` = 1 instead if a bus response was an error (nothing saved; the responder
///   NAKs remote operational error).
/// * `dup` = 1, a duplicate: no memory access; the unit searches the `cnt` newest saved
///   results of QP `qpn` (slots `head`-1, `head`-2, ... modulo `ATOMIC_RESOURCES`) for `psn`:
///   `found` = 1 with its saved `orig`, or `found` = 0.
///
/// `head`/`cnt` are the QP's `RqState.atom_head` / `atom_cnt`; the responder owns them and,
/// after a new atomic, writes head + 1 (mod `ATOMIC_RESOURCES`) and min(cnt + 1,
/// `ATOMIC_RESOURCES`).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AtomReqS"]
pub struct AtomReqM {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<24>>,
    pub psn: Signal<Out, Bits<24>>,
    pub dup: Signal<Out, Bit>,
    pub fa: Signal<Out, Bit>,
    pub addr: Signal<Out, Bits<64>>,
    /// Swap value (CMP_SWAP) or addend (FETCH_ADD).
    pub swap: Signal<Out, Bits<64>>,
    pub cmp: Signal<Out, Bits<64>>,
    pub head: Signal<Out, Bits<ATOM_SLOT_BITS>>,
    pub cnt: Signal<Out, Bits<ATOM_CNT_BITS>>,
    pub done: Signal<In, Bit>,
    pub found: Signal<In, Bit>,
    pub err: Signal<In, Bit>,
    pub orig: Signal<In, Bits<64>>,
}

/// An atomic to execute or look up, atomic-unit side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AtomReqM"]
pub struct AtomReqS {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<24>>,
    pub psn: Signal<In, Bits<24>>,
    pub dup: Signal<In, Bit>,
    pub fa: Signal<In, Bit>,
    pub addr: Signal<In, Bits<64>>,
    pub swap: Signal<In, Bits<64>>,
    pub cmp: Signal<In, Bits<64>>,
    pub head: Signal<In, Bits<ATOM_SLOT_BITS>>,
    pub cnt: Signal<In, Bits<ATOM_CNT_BITS>>,
    pub done: Signal<Out, Bit>,
    pub found: Signal<Out, Bit>,
    pub err: Signal<Out, Bit>,
    pub orig: Signal<Out, Bits<64>>,
}

/// One received frame's RX checks (the responder's header parser + ICRC checker), for the
/// `rxstat` counters. `valid` pulses once per frame with the parser's result; `icrc_ok` is the
/// same frame's ICRC check.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RxCheckS"]
pub struct RxCheckM {
    pub valid: Signal<Out, Bit>,
    /// The parser dropped the frame, for this reason (code = index in
    /// `rnic_abi::regs::rxs::DROP_REASONS` + 1; 0 = not dropped).
    pub drop: Signal<Out, Bit>,
    pub reason: Signal<Out, Bits<4>>,
    pub icrc_ok: Signal<Out, Bit>,
    /// BTH opcode, destination QP, PSN.
    pub opcode: Signal<Out, Bits<8>>,
    pub qpn: Signal<Out, Bits<24>>,
    pub psn: Signal<Out, Bits<24>>,
}

/// RX checks, counter side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RxCheckM"]
pub struct RxCheckS {
    pub valid: Signal<In, Bit>,
    pub drop: Signal<In, Bit>,
    pub reason: Signal<In, Bits<4>>,
    pub icrc_ok: Signal<In, Bit>,
    pub opcode: Signal<In, Bits<8>>,
    pub qpn: Signal<In, Bits<24>>,
    pub psn: Signal<In, Bits<24>>,
}

/// Set a QP's transport timer (txreq, ackproc -> acktimer), source side, valid/ready.
/// `rnr` = 0: local ACK timeout, `code` = the QP's `timeout` exponent (0 disarms);
/// `rnr` = 1: RNR wait, `code` = the RNR NAK's timer field.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "TimerSetS"]
pub struct TimerSetM {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<24>>,
    pub rnr: Signal<Out, Bit>,
    pub code: Signal<Out, Bits<5>>,
}

/// Set a QP's transport timer, timer side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "TimerSetM"]
pub struct TimerSetS {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<24>>,
    pub rnr: Signal<In, Bit>,
    pub code: Signal<In, Bits<5>>,
}

/// A QP's transport timer expired (acktimer -> ackproc), source side, valid/ready.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "TimerExpS"]
pub struct TimerExpM {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<24>>,
}

/// A QP's transport timer expired, ACK-processor side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "TimerExpM"]
pub struct TimerExpS {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<24>>,
}

/// Go-back-N restart (ackproc -> txreq), source side, valid/ready: send QP `qpn` again from
/// PSN `psn` (the requester clamps it to `una_psn`; when nothing was sent from there it
/// rewinds nothing but schedules the QP if it has WQEs to send). `valid` may fall without a
/// transfer (ackproc's restart queue withholds a head whose QP it is processing); the payload
/// never changes while `valid` is high.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RestartS"]
pub struct RestartM {
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    pub qpn: Signal<Out, Bits<24>>,
    pub psn: Signal<Out, Bits<24>>,
}

/// Go-back-N restart, requester side.
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "RestartM"]
pub struct RestartS {
    pub valid: Signal<In, Bit>,
    pub ready: Signal<Out, Bit>,
    pub qpn: Signal<In, Bits<24>>,
    pub psn: Signal<In, Bits<24>>,
}
