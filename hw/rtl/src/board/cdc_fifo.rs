//! Asynchronous (dual-clock) AXI-Stream FIFO for the 512-bit Ethernet streams between the
//! CMAC clock (322.265625 MHz) and the core clock (250 MHz).
//!
//! Structure: two simple dual-port RAMs (tdata; tkeep/tlast/tuser) written in the `s_clk`
//! domain and read in the `m_clk` domain; binary write/read pointers with one extra wrap bit,
//! each re-registered as a Gray code and carried to the other side through a two-flop
//! [`SyncBits`] synchronizer. Full and empty are decided by comparing Gray codes, so only
//! one bit of a crossing pointer can be in flight at a time.
//!
//! The RAM read address is the *next* read pointer, so the registered RAM output always
//! holds the entry at the head of the FIFO: `m_axis.tdata` comes straight from the RAM
//! output register, and a pop costs no bubble (one beat per `m_clk` when `tready` is high).
//!
//! Three modes ([`CdcMode`]):
//! * `CutThrough`: a plain FIFO, `s_axis.tready` is low when full.
//! * `Packet` (store and forward): `m_axis.tvalid` rises only once a whole frame (up to
//!   `tlast`) is in the FIFO, and then stays high until that frame's `tlast` is taken. The
//!   CMAC transmitter needs this: once a frame has started it must not run dry, and its
//!   clock is faster than the core's. A frame longer than the FIFO would stall it, so the
//!   depth must hold the largest frame (the board uses 512 beats = 32 KiB).
//! * `DropOnFull`: for the CMAC receiver, which has no `tready`. `s_axis.tready` is always
//!   high (outside reset). When only one slot is left, a beat that does not end its frame is
//!   written with `tlast = 1, tuser = 1` (frame truncated and marked bad, as a MAC error) and
//!   the rest of the frame is discarded; when the FIFO is full at the start of a frame, the
//!   whole frame is discarded. Each such event pulses `s_overflow` for one `s_clk` cycle.
//!
//! Reset: `s_rst` and `m_rst` are synchronous to their own clocks and must overlap (derive
//! both from one source through [`crate::board::reset_sync::ResetSync`]), so that both pointers
//! restart at zero together.
use crate::board::reset_sync::SyncBits;
use rust_hdl::prelude::*;

/// Bits of side information per beat: tkeep (64), tlast, tuser.
pub const SIDE_BITS: usize = 66;

/// AXI-Stream, 512-bit, input side (the FIFO is the sink).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxisSource"]
pub struct AxisSink {
    pub tdata: Signal<In, Bits<512>>,
    pub tkeep: Signal<In, Bits<64>>,
    pub tlast: Signal<In, Bit>,
    pub tuser: Signal<In, Bit>,
    pub tvalid: Signal<In, Bit>,
    pub tready: Signal<Out, Bit>,
}

/// AXI-Stream, 512-bit, output side (the FIFO is the source).
#[derive(Clone, Debug, Default, LogicInterface)]
#[join = "AxisSink"]
pub struct AxisSource {
    pub tdata: Signal<Out, Bits<512>>,
    pub tkeep: Signal<Out, Bits<64>>,
    pub tlast: Signal<Out, Bit>,
    pub tuser: Signal<Out, Bit>,
    pub tvalid: Signal<Out, Bit>,
    pub tready: Signal<In, Bit>,
}

/// Flow-control behaviour of an [`AxisCdcFifo`] (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CdcMode {
    CutThrough,
    Packet,
    DropOnFull,
}

/// Dual-clock AXI-Stream FIFO with `2^A` entries; `AP1` must be `A + 1`.
#[derive(LogicBlock)]
pub struct AxisCdcFifo<const A: usize, const AP1: usize> {
    // ---- write side (s_clk)
    pub s_clk: Signal<In, Clock>,
    pub s_rst: Signal<In, Bit>,
    pub s_axis: AxisSink,
    /// One-cycle pulse per truncated or discarded frame (`DropOnFull` only).
    pub s_overflow: Signal<Out, Bit>,
    // ---- read side (m_clk)
    pub m_clk: Signal<In, Clock>,
    pub m_rst: Signal<In, Bit>,
    pub m_axis: AxisSource,
    // ---- configuration
    packet_mode: Constant<Bit>,
    drop_mode: Constant<Bit>,
    full_mask: Constant<Bits<AP1>>,
    // ---- storage
    data_ram: RAM<Bits<512>, A>,
    side_ram: RAM<Bits<SIDE_BITS>, A>,
    // ---- write-side state
    wbin: DFF<Bits<AP1>>,
    wgray: DFF<Bits<AP1>>,
    wpkt_bin: DFF<Bits<AP1>>,
    wpkt_gray: DFF<Bits<AP1>>,
    dropping: DFF<Bit>,
    rgray_sync: SyncBits<AP1>,
    // ---- read-side state
    rbin: DFF<Bits<AP1>>,
    rgray: DFF<Bits<AP1>>,
    rpkt_bin: DFF<Bits<AP1>>,
    rpkt_gray: DFF<Bits<AP1>>,
    wgray_sync: SyncBits<AP1>,
    wpkt_sync: SyncBits<AP1>,
    // ---- combinational temporaries
    w_full: Signal<Local, Bit>,
    w_last_slot: Signal<Local, Bit>,
    w_push: Signal<Local, Bit>,
    w_term: Signal<Local, Bit>,
    w_plus1: Signal<Local, Bits<AP1>>,
    w_plus1_gray: Signal<Local, Bits<AP1>>,
    w_next: Signal<Local, Bits<AP1>>,
    wpkt_next: Signal<Local, Bits<AP1>>,
    side_keep: Signal<Local, Bits<SIDE_BITS>>,
    side_last: Signal<Local, Bits<SIDE_BITS>>,
    r_not_empty: Signal<Local, Bit>,
    r_pkt_ready: Signal<Local, Bit>,
    r_valid: Signal<Local, Bit>,
    r_pop: Signal<Local, Bit>,
    r_next: Signal<Local, Bits<AP1>>,
    rpkt_next: Signal<Local, Bits<AP1>>,
}

impl<const A: usize, const AP1: usize> AxisCdcFifo<A, AP1> {
    pub fn new(mode: CdcMode) -> Self {
        assert_eq!(AP1, A + 1, "AxisCdcFifo: AP1 must be A + 1");
        assert!(A >= 2, "AxisCdcFifo: at least 4 entries");
        Self {
            s_clk: Default::default(),
            s_rst: Default::default(),
            s_axis: Default::default(),
            s_overflow: Default::default(),
            m_clk: Default::default(),
            m_rst: Default::default(),
            m_axis: Default::default(),
            packet_mode: Constant::new(mode == CdcMode::Packet),
            drop_mode: Constant::new(mode == CdcMode::DropOnFull),
            // Gray code of (ptr + 2^A): the two top bits inverted
            full_mask: Constant::new((3u64 << (A - 1)).into()),
            data_ram: Default::default(),
            side_ram: Default::default(),
            wbin: Default::default(),
            wgray: Default::default(),
            wpkt_bin: Default::default(),
            wpkt_gray: Default::default(),
            dropping: Default::default(),
            rgray_sync: Default::default(),
            rbin: Default::default(),
            rgray: Default::default(),
            rpkt_bin: Default::default(),
            rpkt_gray: Default::default(),
            wgray_sync: Default::default(),
            wpkt_sync: Default::default(),
            w_full: Default::default(),
            w_last_slot: Default::default(),
            w_push: Default::default(),
            w_term: Default::default(),
            w_plus1: Default::default(),
            w_plus1_gray: Default::default(),
            w_next: Default::default(),
            wpkt_next: Default::default(),
            side_keep: Default::default(),
            side_last: Default::default(),
            r_not_empty: Default::default(),
            r_pkt_ready: Default::default(),
            r_valid: Default::default(),
            r_pop: Default::default(),
            r_next: Default::default(),
            rpkt_next: Default::default(),
        }
    }
}

impl<const A: usize, const AP1: usize> Logic for AxisCdcFifo<A, AP1> {
    #[hdl_gen]
    fn update(&mut self) {
        // ================= write side (s_clk) =================
        dff_setup!(self, s_clk, wbin, wgray, wpkt_bin, wpkt_gray, dropping);
        self.rgray_sync.clock.next = self.s_clk.val();
        self.rgray_sync.rst.next = self.s_rst.val();
        self.rgray_sync.d.next = self.rgray.q.val();

        self.w_plus1.next = self.wbin.q.val() + 1;
        self.w_plus1_gray.next = self.w_plus1.val() ^ (self.w_plus1.val() >> 1);
        self.w_full.next = self.wgray.q.val() == (self.rgray_sync.q.val() ^ self.full_mask.val());
        self.w_last_slot.next =
            self.w_plus1_gray.val() == (self.rgray_sync.q.val() ^ self.full_mask.val());

        self.w_push.next = false;
        self.w_term.next = false;
        self.s_overflow.next = false;
        if self.drop_mode.val() {
            self.s_axis.tready.next = !self.s_rst.val();
            if self.s_axis.tvalid.val() & !self.s_rst.val() {
                if self.dropping.q.val() {
                    if self.s_axis.tlast.val() {
                        self.dropping.d.next = false;
                    }
                } else if self.w_full.val() {
                    // full at a frame boundary: discard the whole frame
                    self.s_overflow.next = true;
                    if !self.s_axis.tlast.val() {
                        self.dropping.d.next = true;
                    }
                } else if self.w_last_slot.val() & !self.s_axis.tlast.val() {
                    // last slot: end the frame here, marked bad; drop the rest
                    self.w_push.next = true;
                    self.w_term.next = true;
                    self.s_overflow.next = true;
                    self.dropping.d.next = true;
                } else {
                    self.w_push.next = true;
                }
            }
        } else {
            self.s_axis.tready.next = !self.w_full.val() & !self.s_rst.val();
            self.w_push.next = self.s_axis.tvalid.val() & !self.w_full.val() & !self.s_rst.val();
        }

        self.w_next.next = self.wbin.q.val();
        if self.w_push.val() {
            self.w_next.next = self.w_plus1.val();
        }
        self.wbin.d.next = self.w_next.val();
        self.wgray.d.next = self.w_next.val() ^ (self.w_next.val() >> 1);

        self.wpkt_next.next = self.wpkt_bin.q.val();
        if self.w_push.val() & (self.s_axis.tlast.val() | self.w_term.val()) {
            self.wpkt_next.next = self.wpkt_bin.q.val() + 1;
        }
        self.wpkt_bin.d.next = self.wpkt_next.val();
        self.wpkt_gray.d.next = self.wpkt_next.val() ^ (self.wpkt_next.val() >> 1);

        // side word: [63:0] tkeep, [64] tlast, [65] tuser
        self.side_keep.next = bit_cast::<SIDE_BITS, 64>(self.s_axis.tkeep.val());
        self.side_last.next = self
            .side_keep
            .val()
            .replace_bit(64, self.s_axis.tlast.val() | self.w_term.val());
        self.side_ram.write_data.next = self
            .side_last
            .val()
            .replace_bit(65, self.s_axis.tuser.val() | self.w_term.val());
        self.side_ram.write_clock.next = self.s_clk.val();
        self.side_ram.write_enable.next = self.w_push.val();
        self.side_ram.write_address.next = bit_cast::<A, AP1>(self.wbin.q.val());
        self.data_ram.write_clock.next = self.s_clk.val();
        self.data_ram.write_enable.next = self.w_push.val();
        self.data_ram.write_address.next = bit_cast::<A, AP1>(self.wbin.q.val());
        self.data_ram.write_data.next = self.s_axis.tdata.val();

        if self.s_rst.val() {
            self.wbin.d.next = 0.into();
            self.wgray.d.next = 0.into();
            self.wpkt_bin.d.next = 0.into();
            self.wpkt_gray.d.next = 0.into();
            self.dropping.d.next = false;
        }

        // ================= read side (m_clk) =================
        dff_setup!(self, m_clk, rbin, rgray, rpkt_bin, rpkt_gray);
        self.wgray_sync.clock.next = self.m_clk.val();
        self.wgray_sync.rst.next = self.m_rst.val();
        self.wgray_sync.d.next = self.wgray.q.val();
        self.wpkt_sync.clock.next = self.m_clk.val();
        self.wpkt_sync.rst.next = self.m_rst.val();
        self.wpkt_sync.d.next = self.wpkt_gray.q.val();

        self.r_not_empty.next = self.rgray.q.val() != self.wgray_sync.q.val();
        self.r_pkt_ready.next = true;
        if self.packet_mode.val() {
            // more whole frames written than whole frames read: the head frame is complete
            self.r_pkt_ready.next = self.rpkt_gray.q.val() != self.wpkt_sync.q.val();
        }
        self.r_valid.next = self.r_not_empty.val() & self.r_pkt_ready.val() & !self.m_rst.val();
        self.r_pop.next = self.r_valid.val() & self.m_axis.tready.val();

        self.m_axis.tvalid.next = self.r_valid.val();
        self.m_axis.tdata.next = self.data_ram.read_data.val();
        self.m_axis.tkeep.next = bit_cast::<64, SIDE_BITS>(self.side_ram.read_data.val());
        self.m_axis.tlast.next = self.side_ram.read_data.val().get_bit(64);
        self.m_axis.tuser.next = self.side_ram.read_data.val().get_bit(65);

        self.r_next.next = self.rbin.q.val();
        if self.r_pop.val() {
            self.r_next.next = self.rbin.q.val() + 1;
        }
        if self.m_rst.val() {
            self.r_next.next = 0.into();
        }
        self.rbin.d.next = self.r_next.val();
        self.rgray.d.next = self.r_next.val() ^ (self.r_next.val() >> 1);

        self.rpkt_next.next = self.rpkt_bin.q.val();
        if self.r_pop.val() & self.side_ram.read_data.val().get_bit(64) {
            self.rpkt_next.next = self.rpkt_bin.q.val() + 1;
        }
        if self.m_rst.val() {
            self.rpkt_next.next = 0.into();
        }
        self.rpkt_bin.d.next = self.rpkt_next.val();
        self.rpkt_gray.d.next = self.rpkt_next.val() ^ (self.rpkt_next.val() >> 1);

        // the RAM reads the next head every m_clk edge, so its output is always the head
        self.data_ram.read_clock.next = self.m_clk.val();
        self.data_ram.read_address.next = bit_cast::<A, AP1>(self.r_next.val());
        self.side_ram.read_clock.next = self.m_clk.val();
        self.side_ram.read_address.next = bit_cast::<A, AP1>(self.r_next.val());
    }
}

/// Depth of the board FIFOs: 2^9 = 512 beats of 64 bytes (32 KiB, over three jumbo frames);
/// one constant with the simulator's board receive mode (`rnic_abi::params`).
pub const BOARD_ADDR_BITS: usize = rnic_abi::params::BOARD_ETH_FIFO_ADDR_BITS as usize;
/// The board FIFO type.
pub type BoardAxisCdcFifo = AxisCdcFifo<BOARD_ADDR_BITS, { BOARD_ADDR_BITS + 1 }>;

/// Module name of the core -> CMAC FIFO (store and forward).
pub const TX_FIFO_MODULE: &str = "rnic_cdc_axis_tx";
/// Module name of the CMAC -> core FIFO (drop on full).
pub const RX_FIFO_MODULE: &str = "rnic_cdc_axis_rx";
/// Module name of the reset synchronizer.
pub const RESET_SYNC_MODULE: &str = "rnic_reset_sync";

/// Verilog (sanitised, no `$`) of every CDC module the board tops instantiate:
/// `(file name, text)` pairs.
pub fn board_cdc_verilog() -> Vec<(String, String)> {
    let mut tx = BoardAxisCdcFifo::new(CdcMode::Packet);
    tx.connect_all();
    let mut rx = BoardAxisCdcFifo::new(CdcMode::DropOnFull);
    rx.connect_all();
    let mut rs = crate::board::reset_sync::ResetSync::default();
    rs.connect_all();
    vec![
        (
            format!("{TX_FIFO_MODULE}.v"),
            cdc_vgen::verilog_named(&tx, TX_FIFO_MODULE),
        ),
        (
            format!("{RX_FIFO_MODULE}.v"),
            cdc_vgen::verilog_named(&rx, RX_FIFO_MODULE),
        ),
        (
            format!("{RESET_SYNC_MODULE}.v"),
            cdc_vgen::verilog_named(&rs, RESET_SYNC_MODULE),
        ),
    ]
}

/// Write [`board_cdc_verilog`] into `dir`.
pub fn write_board_cdc_verilog(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, text) in board_cdc_verilog() {
        std::fs::write(dir.join(name), text)?;
    }
    std::fs::write(dir.join(BOARD_PARAMS_VH), board_params_vh())
}

/// The Verilog header the hand-written board files include (`rnic_bar_split.v`,
/// `rnic_board_core.v`): the build numbers they need, from rnic-abi.
pub const BOARD_PARAMS_VH: &str = "rnic_board_params.vh";

/// Text of [`BOARD_PARAMS_VH`]: `RNIC_RING_ADDR_BITS`, the address bits of BAR2 (the ring
/// memory, `rnic_top`'s `s_axi_wqe_*` address width). The PCIe bridge maps BAR2 at AXI
/// address `1 << RNIC_RING_ADDR_BITS` (`rnic_pcie(bar_rings_axi)`, from the same number), so
/// that bit selects BAR2 over BAR0.
pub fn board_params_vh() -> String {
    let bits = rnic_abi::pcie::BAR2_BYTES.trailing_zeros();
    assert_eq!(
        bits as usize,
        crate::common::bus::BAR2_ADDR_BITS,
        "BAR2 is the ring memory"
    );
    format!(
        "// Generated by rnic-verilog from rnic-abi (hw/rtl/src/board/cdc_fifo.rs): do not edit.\n\
         `define RNIC_RING_ADDR_BITS {bits}\n"
    )
}

/// Verilog generation for the CDC blocks and their testbenches: the crate's `vgen`, with the
/// top module named.
pub mod cdc_vgen {
    use rust_hdl::prelude::*;

    /// Verilog of the connected block `uut` with top module `top`, `$`-free. The CDC blocks
    /// are fixed designs: a design-rule failure is a bug in this file, hence the panic.
    pub fn verilog_named<U: Block>(uut: &U, top: &str) -> String {
        crate::common::vgen::verilog_connected(uut, top)
            .unwrap_or_else(|e| panic!("CDC block {top}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_fifos_generate_without_dollars() {
        for (name, v) in board_cdc_verilog() {
            assert!(
                !v.contains("$signed") || !v.replace("$signed", "").contains('$'),
                "{name}"
            );
            assert!(v.contains("module rnic_"), "{name}");
        }
    }

    #[test]
    fn yosys_accepts_small_fifo() {
        if std::process::Command::new("yosys")
            .arg("-V")
            .output()
            .is_err()
        {
            eprintln!("yosys not installed: skipped");
            return;
        }
        let mut f = AxisCdcFifo::<3, 4>::new(CdcMode::DropOnFull);
        f.connect_all();
        yosys_validate("cdc_fifo_small", &generate_verilog(&f)).unwrap();
    }
}
