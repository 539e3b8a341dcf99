//! Simple dual-port RAM with byte enables: 512-bit words, one write port with 64 byte enables,
//! one registered read port. rust-hdl has no byte-enable RAM, so the body is our own Verilog
//! (inferred as BRAM/URAM with byte-wide write enables by yosys and Vivado); `update()` is the
//! plain-Rust model of the same behaviour.

use rust_hdl::prelude::*;
use std::collections::HashMap;

#[derive(LogicBlock)]
pub struct BeRam<const ADDR: usize> {
    pub clock: Signal<In, Clock>,
    pub write_address: Signal<In, Bits<ADDR>>,
    pub write_data: Signal<In, Bits<512>>,
    pub write_enable: Signal<In, Bits<64>>,
    pub read_address: Signal<In, Bits<ADDR>>,
    pub read_data: Signal<Out, Bits<512>>,
    _mem: HashMap<u64, Bits<512>>,
}

impl<const ADDR: usize> Default for BeRam<ADDR> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            write_enable: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            _mem: HashMap::new(),
        }
    }
}

impl<const ADDR: usize> Logic for BeRam<ADDR> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let ra = self.read_address.val().index() as u64;
            self.read_data.next = self._mem.get(&ra).copied().unwrap_or_default();
            let be = self.write_enable.val();
            if be.any() {
                let wa = self.write_address.val().index() as u64;
                let old = self._mem.get(&wa).copied().unwrap_or_default();
                let mut mask = Bits::<512>::default();
                for lane in 0..64 {
                    if be.get_bit(lane) {
                        mask = mask | (Bits::<512>::from(0xFFu64) << (8 * lane as u64));
                    }
                }
                self._mem
                    .insert(wa, (old & !mask) | (self.write_data.val() & mask));
            }
        }
    }
    fn connect(&mut self) {
        self.read_data.connect();
    }
    fn hdl(&self) -> Verilog {
        // deep instances (the 2 MiB ring memory) belong in UltraRAM on UltraScale+
        let style = if ADDR >= 12 {
            "(* ram_style = \"ultra\" *) "
        } else {
            ""
        };
        Verilog::Custom(format!(
            "{style}reg [511:0] mem [0:{depth}];
`ifdef VERILATOR
// Simulation: one read-modify-write per cycle (Verilator commits a per-byte memory write
// through 64 delayed-assignment flags every cycle, which dominated the simulator's time).
// Same behaviour as the synthesis form below: read-before-write on the read port.
wire [511:0] bitmask = {{{mask}}};
always @(posedge clock) begin
    if (|write_enable) mem[write_address] <= (mem[write_address] & ~bitmask) | (write_data & bitmask);
    read_data <= mem[read_address];
end
`else
// Synthesis: the byte-enable idiom Vivado and yosys map onto BRAM/URAM byte-write enables.
integer lane;
always @(posedge clock) begin
    for (lane = 0; lane < 64; lane = lane + 1)
        if (write_enable[lane]) mem[write_address][8*lane +: 8] <= write_data[8*lane +: 8];
    read_data <= mem[read_address];
end
`endif
",
            mask = (0..64).rev().map(|l| format!("{{8{{write_enable[{l}]}}}}")).collect::<Vec<_>>().join(", "),
            depth = (1usize << ADDR) - 1
        ))
    }
}
