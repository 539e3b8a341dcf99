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
            model_write(
                &mut self._mem,
                self.write_address.val().index() as u64,
                self.write_data.val(),
                self.write_enable.val(),
            );
        }
    }
    fn connect(&mut self) {
        self.read_data.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(body(ADDR, false))
    }
}

/// The Rust models' byte-enabled write: the bytes of `data` enabled in `be` go to word `wa`.
fn model_write(mem: &mut HashMap<u64, Bits<512>>, wa: u64, data: Bits<512>, be: Bits<64>) {
    if be.any() {
        let old = mem.get(&wa).copied().unwrap_or_default();
        let mut mask = Bits::<512>::default();
        for lane in 0..64 {
            if be.get_bit(lane) {
                mask = mask | (Bits::<512>::from(0xFFu64) << (8 * lane as u64));
            }
        }
        mem.insert(wa, (old & !mask) | (data & mask));
    }
}

/// The Verilog of [`BeRam`] (`second`: also the read port `read_address_b`/`read_data_b` of
/// [`BeRam2R`]).
fn body(addr_bits: usize, second: bool) -> String {
    // deep instances (the 2 MiB ring memory) belong in UltraRAM on UltraScale+
    let style = if addr_bits >= 12 {
        "(* ram_style = \"ultra\" *) "
    } else {
        ""
    };
    let rb = if second {
        "    if (read_enable_b) read_data_b <= mem[read_address_b];\n"
    } else {
        ""
    };
    format!(
        "{style}reg [511:0] mem [0:{depth}];
`ifdef VERILATOR
// Simulation: one read-modify-write per cycle (Verilator commits a per-byte memory write
// through 64 delayed-assignment flags every cycle, which dominated the simulator's time),
// its byte mask formed only in a cycle that writes (as a wire, Verilator would form it
// every cycle), a whole line without one. Same behaviour as the synthesis form below:
// read-before-write on the read port.
always @(posedge clock) begin
    if (&write_enable) mem[write_address] <= write_data;
    else if (|write_enable) mem[write_address] <= (mem[write_address] & ~{{{mask}}}) | (write_data & {{{mask}}});
    read_data <= mem[read_address];
{rb}end
`else
// Synthesis: the byte-enable idiom Vivado and yosys map onto BRAM/URAM byte-write enables.
integer lane;
always @(posedge clock) begin
    for (lane = 0; lane < 64; lane = lane + 1)
        if (write_enable[lane]) mem[write_address][8*lane +: 8] <= write_data[8*lane +: 8];
    read_data <= mem[read_address];
{rb}end
`endif
",
        mask = (0..64)
            .rev()
            .map(|l| format!("{{8{{write_enable[{l}]}}}}"))
            .collect::<Vec<_>>()
            .join(", "),
        depth = (1usize << addr_bits) - 1
    )
}

/// [`BeRam`] with a second registered read port (`read_address_b` -> `read_data_b`, one
/// cycle, read-before-write like the first, `read_data_b` held while `read_enable_b` is low):
/// a true dual-port BRAM/URAM whose port A reads or writes and whose port B only reads. The
/// context store serves two accesses per cycle with it (the enable also spares the
/// simulator a 512-bit read in the cycles without one).
#[derive(LogicBlock)]
pub struct BeRam2R<const ADDR: usize> {
    pub clock: Signal<In, Clock>,
    pub write_address: Signal<In, Bits<ADDR>>,
    pub write_data: Signal<In, Bits<512>>,
    pub write_enable: Signal<In, Bits<64>>,
    pub read_address: Signal<In, Bits<ADDR>>,
    pub read_data: Signal<Out, Bits<512>>,
    pub read_address_b: Signal<In, Bits<ADDR>>,
    pub read_enable_b: Signal<In, Bit>,
    pub read_data_b: Signal<Out, Bits<512>>,
    _mem: HashMap<u64, Bits<512>>,
}

impl<const ADDR: usize> Default for BeRam2R<ADDR> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            write_address: Default::default(),
            write_data: Default::default(),
            write_enable: Default::default(),
            read_address: Default::default(),
            read_data: Default::default(),
            read_address_b: Default::default(),
            read_enable_b: Default::default(),
            read_data_b: Default::default(),
            _mem: HashMap::new(),
        }
    }
}

impl<const ADDR: usize> Logic for BeRam2R<ADDR> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let ra = self.read_address.val().index() as u64;
            self.read_data.next = self._mem.get(&ra).copied().unwrap_or_default();
            if self.read_enable_b.val() {
                let rb = self.read_address_b.val().index() as u64;
                self.read_data_b.next = self._mem.get(&rb).copied().unwrap_or_default();
            }
            model_write(
                &mut self._mem,
                self.write_address.val().index() as u64,
                self.write_data.val(),
                self.write_enable.val(),
            );
        }
    }
    fn connect(&mut self) {
        self.read_data.connect();
        self.read_data_b.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(body(ADDR, true))
    }
}
