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

/// BAR2 (WQE rings) AXI4 slave port of the default build.
pub type WqeAxiS = AxiS<{ crate::BAR2_ADDR_BITS }>;
/// Host-memory AXI4 master port: 64-bit addresses.
pub type HostAxiM = AxiM<64>;
