//! Build parameters of the default build. The RTL generator reads these; the device reports
//! them in the device block; the driver reads them back at open().

/// Parameters that size the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildParams {
    pub num_qps: u32,
    pub num_cqs: u32,
    pub num_mrs: u32,
    /// WQEs per send queue (power of two).
    pub sq_depth: u32,
    /// WQEs per receive queue (power of two).
    pub rq_depth: u32,
    /// Largest path MTU, bytes.
    pub max_mtu: u32,
    /// Datapath width, bits.
    pub datapath_bits: u32,
    /// Nominal core clock, kHz.
    pub clock_khz: u32,
}

impl BuildParams {
    /// Bytes of BAR2 ring memory: all SQ rings, then all RQ rings.
    pub const fn ring_bytes(&self) -> u32 {
        self.num_qps * (self.sq_depth + self.rq_depth) * crate::WQE_BYTES as u32
    }
    /// BAR2 offset of slot `idx` of QP `qpn`'s send queue.
    pub const fn sq_slot(&self, qpn: u32, idx: u32) -> u32 {
        (qpn * self.sq_depth + (idx % self.sq_depth)) * crate::WQE_BYTES as u32
    }
    /// BAR2 offset of slot `idx` of QP `qpn`'s receive queue.
    pub const fn rq_slot(&self, qpn: u32, idx: u32) -> u32 {
        (self.num_qps * self.sq_depth + qpn * self.rq_depth + (idx % self.rq_depth))
            * crate::WQE_BYTES as u32
    }
    /// Number of 64-byte ring slots (log2), for the ring RAM address width.
    pub const fn ring_slots_log2(&self) -> u32 {
        (self.ring_bytes() / crate::WQE_BYTES as u32).trailing_zeros()
    }
    /// First context-store record of each table (QP, CQ, MR, QP responder state): the
    /// tables are stacked in that order in one RAM of 64-byte records.
    pub const fn ctx_base(&self, table: u32) -> u32 {
        match table {
            0 => 0,
            1 => self.num_qps,
            2 => self.num_qps + self.num_cqs,
            _ => self.num_qps + self.num_cqs + self.num_mrs,
        }
    }
    /// Records in the context store (all four tables).
    pub const fn ctx_records(&self) -> u32 {
        2 * self.num_qps + self.num_cqs + self.num_mrs
    }
    /// Address bits of the context store.
    pub const fn ctx_addr_bits(&self) -> u32 {
        32 - (self.ctx_records() - 1).leading_zeros()
    }
    /// Nominal clock in Hz.
    pub const fn clock_hz(&self) -> u64 {
        self.clock_khz as u64 * 1000
    }
    const fn valid(&self) -> bool {
        self.num_qps.is_power_of_two()
            && self.sq_depth.is_power_of_two()
            && self.rq_depth.is_power_of_two()
            && self.ring_bytes().is_power_of_two()
            && self.num_qps <= 65536
            && self.num_cqs <= 65536
            && self.num_mrs <= 65536
            && self.max_mtu >= 256
            && self.max_mtu <= 4096
            && self.datapath_bits == 512
    }
}

/// The default build.
pub const DEFAULT: BuildParams = BuildParams {
    num_qps: 256,
    num_cqs: 256,
    num_mrs: 1024,
    sq_depth: 64,
    rq_depth: 64,
    max_mtu: 4096,
    datapath_bits: 512,
    clock_khz: 250_000,
};

const _: () = assert!(DEFAULT.valid(), "default build parameters are inconsistent");

/// Address bits of the board's Ethernet clock-crossing FIFOs (`rnic_rtl::cdc_fifo`): 2^9 = 512
/// beats of 64 bytes. The RX one drops a frame that finds it full (the CMAC cannot be paused);
/// the simulator's board receive mode (`rnic_sim::eth::LinkConfig::board`) models that depth.
pub const BOARD_ETH_FIFO_ADDR_BITS: u32 = 9;
/// Bytes the board's RX FIFO holds (counted in 64-byte beats).
pub const BOARD_RX_FIFO_BYTES: usize = 64 << BOARD_ETH_FIFO_ADDR_BITS;

/// Engine version reported in HW_VERSION: major 31:24, minor 23:16, patch 15:0.
pub const HW_VERSION: u32 = 1 << 16; // 0.1.0
