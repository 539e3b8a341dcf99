//! MAC address byte order: records (the ABI's `[u8; 6]` fields) hold the wire octets in order,
//! record byte 0 = first octet, so in a little-endian record image the first octet is bits
//! 7:0; on the data path's buses (`TxDescM::dmac`, `RspJobM::smac`, ...) the first octet is
//! bits 47:40. One block turns the one into the other (`#[hdl_gen]` has no functions).

use rust_hdl::prelude::*;

/// Record-order MAC (`rec`: first octet in bits 7:0) -> wire-order 48-bit value
/// (`wire_order`: first octet in bits 47:40). Combinational.
#[derive(LogicBlock, Default)]
pub struct MacOrder {
    pub rec: Signal<In, Bits<48>>,
    pub wire_order: Signal<Out, Bits<48>>,
}

impl Logic for MacOrder {
    #[hdl_gen]
    fn update(&mut self) {
        self.wire_order.next = (bit_cast::<48, 8>(self.rec.val().get_bits::<8>(0)) << 40)
            | (bit_cast::<48, 8>(self.rec.val().get_bits::<8>(8)) << 32)
            | (bit_cast::<48, 8>(self.rec.val().get_bits::<8>(16)) << 24)
            | (bit_cast::<48, 8>(self.rec.val().get_bits::<8>(24)) << 16)
            | (bit_cast::<48, 8>(self.rec.val().get_bits::<8>(32)) << 8)
            | bit_cast::<48, 8>(self.rec.val().get_bits::<8>(40));
    }
}
