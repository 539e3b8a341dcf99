//! Build parameters of the default build. The RTL generator reads these; the device reports
//! them in the device block; the driver reads them back at open().

/// Parameters that size the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildParams {
    pub num_qps: u32,
    pub num_cqs: u32,
    pub num_mrs: u32,
    /// WQEs per send queue of a standard QP (power of two).
    pub sq_depth: u32,
    /// WQEs per receive queue of a standard QP (power of two).
    pub rq_depth: u32,
    /// QPs with deep rings: the last `deep_qps` QP numbers, [num_qps - deep_qps, num_qps)
    /// (power of two, or 0). The driver gives a QP one of them when its capabilities do not
    /// fit the standard rings (or when the standard QPs are used up).
    pub deep_qps: u32,
    /// WQEs per send queue and per receive queue of a deep QP (power of two).
    pub deep_depth: u32,
    /// Largest path MTU, bytes.
    pub max_mtu: u32,
    /// Datapath width, bits.
    pub datapath_bits: u32,
    /// Nominal core clock, kHz.
    pub clock_khz: u32,
    /// Outstanding RDMA READ/atomic operations per QP, both ways (power of two, 1..=128): the
    /// responder keeps this many saved atomic results per QP (IBTA responder resources, what
    /// it advertises as `max_dest_rd_atomic`), and the requester clamps `max_rd_atomic` to it.
    pub rd_atomic: u32,
}

/// Largest `rd_atomic` a build may have: `RqState.atom_cnt` is a byte that counts up to it.
pub const RD_ATOMIC_MAX: u32 = 128;

impl BuildParams {
    /// Ring memory (BAR2) is a pool of 64-byte slots in four regions, each aligned to its own
    /// size so that a slot number is the region base OR (QP part << log2 depth) OR index:
    /// standard SQ rings (`num_qps * sq_depth` slots, indexed by QPN), standard RQ rings
    /// (`num_qps * rq_depth`), deep SQ rings (`deep_qps * deep_depth`, indexed by QPN minus
    /// the first deep QPN) and deep RQ rings. The standard regions keep a slot range for the
    /// deep QPNs too (unused), which keeps their addressing a shift.
    const fn region_slots(&self, r: u32) -> u32 {
        match r {
            0 => self.num_qps * self.sq_depth,
            1 => self.num_qps * self.rq_depth,
            _ => self.deep_qps * self.deep_depth,
        }
    }
    /// First slot of ring region `r` (0 standard SQ, 1 standard RQ, 2 deep SQ, 3 deep RQ).
    pub const fn region_base(&self, r: u32) -> u32 {
        let mut base = 0;
        let mut i = 0;
        while i < r {
            base += self.region_slots(i);
            i += 1;
        }
        base
    }
    /// Bytes of BAR2 ring memory (all four regions).
    pub const fn ring_bytes(&self) -> u32 {
        self.region_base(4) * crate::WQE_BYTES as u32
    }
    /// [`Self::ring_bytes`] for parameters read from a device: `None` when a region or the
    /// sum overflows 32 bits (or `deep_qps > num_qps`).
    pub fn checked_ring_bytes(&self) -> Option<u32> {
        let std = self.sq_depth.checked_add(self.rq_depth)?;
        let deep = self.deep_depth.checked_mul(2)?;
        self.num_qps
            .checked_mul(std)?
            .checked_add(self.deep_qps.checked_mul(deep)?)?
            .checked_mul(crate::WQE_BYTES as u32)
            .filter(|_| self.deep_qps <= self.num_qps)
    }
    /// First QP number with deep rings (`num_qps` when there are none).
    pub const fn first_deep_qpn(&self) -> u32 {
        self.num_qps - self.deep_qps
    }
    /// The 24-bit QPN bits at and above `num_qps` (a power of two): a QPN is one of the
    /// build's when none of them is set. The RTL tests this mask instead of comparing
    /// `qpn < num_qps` (a carry chain).
    pub const fn qpn_high_mask(&self) -> u32 {
        assert!(self.num_qps.is_power_of_two(), "num_qps is a power of two");
        !(self.num_qps - 1) & 0xff_ffff
    }
    /// The QPN bits that are all ones exactly for the deep-ring QPs among the build's QPNs
    /// (`num_qps` and `deep_qps` powers of two: the bits from `deep_qps` up to `num_qps`);
    /// with no deep QPs, the bit `num_qps`, which no QPN of the build has. The RTL tests
    /// this mask instead of comparing `qpn >= first_deep_qpn()`.
    pub const fn deep_qpn_mask(&self) -> u32 {
        assert!(
            self.num_qps.is_power_of_two()
                && (self.deep_qps == 0 || self.deep_qps.is_power_of_two()),
            "num_qps and deep_qps are powers of two"
        );
        if self.deep_qps == 0 {
            self.num_qps
        } else {
            (self.num_qps - 1) & !(self.deep_qps - 1)
        }
    }
    /// Whether QP `qpn` has deep rings.
    pub const fn is_deep(&self, qpn: u32) -> bool {
        qpn >= self.first_deep_qpn()
    }
    /// Send-queue depth of QP `qpn`.
    pub const fn sq_depth_of(&self, qpn: u32) -> u32 {
        if self.is_deep(qpn) {
            self.deep_depth
        } else {
            self.sq_depth
        }
    }
    /// Receive-queue depth of QP `qpn`.
    pub const fn rq_depth_of(&self, qpn: u32) -> u32 {
        if self.is_deep(qpn) {
            self.deep_depth
        } else {
            self.rq_depth
        }
    }
    /// Largest send or receive queue any QP of the build can have.
    pub const fn max_depth(&self) -> u32 {
        let q = if self.sq_depth > self.rq_depth {
            self.sq_depth
        } else {
            self.rq_depth
        };
        if self.deep_qps > 0 && self.deep_depth > q {
            self.deep_depth
        } else {
            q
        }
    }
    const fn slot(&self, std_region: u32, qpn: u32, idx: u32) -> u32 {
        let depth = if std_region == 0 {
            self.sq_depth_of(qpn)
        } else {
            self.rq_depth_of(qpn)
        };
        // a deep QP's rings: the deep region of the same queue kind, indexed from the first
        // deep QP number
        let (region, qp) = if self.is_deep(qpn) {
            (std_region + 2, qpn - self.first_deep_qpn())
        } else {
            (std_region, qpn)
        };
        (self.region_base(region) + qp * depth + idx % depth) * crate::WQE_BYTES as u32
    }
    /// BAR2 offset of slot `idx` (free-running, taken modulo the depth) of QP `qpn`'s send
    /// queue.
    pub const fn sq_slot(&self, qpn: u32, idx: u32) -> u32 {
        self.slot(0, qpn, idx)
    }
    /// BAR2 offset of slot `idx` of QP `qpn`'s receive queue.
    pub const fn rq_slot(&self, qpn: u32, idx: u32) -> u32 {
        self.slot(1, qpn, idx)
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
    /// Address bits of the CQ table's own RAM bank (the context store keeps the CQ contexts
    /// apart from the other tables, see `rnic_rtl::ctx::ctxstore`).
    pub const fn cq_addr_bits(&self) -> u32 {
        32 - (self.num_cqs - 1).leading_zeros()
    }
    /// Nominal clock in Hz.
    pub const fn clock_hz(&self) -> u64 {
        self.clock_khz as u64 * 1000
    }
    /// Every ring region starts at a multiple of its own size (slot numbers are ORs).
    const fn regions_aligned(&self) -> bool {
        let mut r = 0;
        while r < 4 {
            let n = self.region_slots(r);
            if n > 0 && !self.region_base(r).is_multiple_of(n) {
                return false;
            }
            r += 1;
        }
        true
    }
    const fn valid(&self) -> bool {
        self.num_qps.is_power_of_two()
            && self.sq_depth.is_power_of_two()
            && self.rq_depth.is_power_of_two()
            && self.ring_bytes().is_power_of_two()
            && (self.deep_qps == 0 || self.deep_qps.is_power_of_two())
            && self.deep_qps < self.num_qps
            && self.deep_depth.is_power_of_two()
            // ring indices are 16 bits and the engines test "WQEs between two indices" on
            // one subtraction's top bit, which needs fewer than 2^15 of them
            && self.sq_depth <= 1 << 14
            && self.rq_depth <= 1 << 14
            && self.deep_depth <= 1 << 14
            && self.regions_aligned()
            && self.num_qps <= 65536
            && self.num_cqs <= 65536
            && self.num_cqs >= 2
            && self.num_mrs <= 65536
            && self.max_mtu >= 256
            && self.max_mtu <= 4096
            && self.datapath_bits == 512
            && self.rd_atomic.is_power_of_two()
            && self.rd_atomic <= RD_ATOMIC_MAX
    }
}

/// The standard build: 2048 QPs.
pub const STANDARD: BuildParams = BuildParams {
    num_qps: 2048,
    num_cqs: 2048,
    num_mrs: 1024,
    sq_depth: 16,
    rq_depth: 16,
    deep_qps: 64,
    deep_depth: 512,
    max_mtu: 4096,
    datapath_bits: 512,
    clock_khz: 250_000,
    rd_atomic: 128,
};

/// The 16k-QP build (cargo feature `qps16k`, `make verilog QPS=16k`): 16,384 QPs and CQs,
/// 4,096 MRs; the many QPs get shallow rings (4 SQ and 4 RQ WQEs) and the last 128 deep ones
/// (512 each), so ring memory is 16 MiB (8 MiB in the standard build).
pub const QPS16K: BuildParams = BuildParams {
    num_qps: 16384,
    num_cqs: 16384,
    num_mrs: 4096,
    sq_depth: 4,
    rq_depth: 4,
    deep_qps: 128,
    deep_depth: 512,
    max_mtu: 4096,
    datapath_bits: 512,
    clock_khz: 250_000,
    // 16,384 x 128 saved atomic results would not fit a U250 (docs/ARCHITECTURE.md)
    rd_atomic: 16,
};

/// The build's parameters: [`STANDARD`], or [`QPS16K`] with the cargo feature `qps16k`.
/// The RTL takes its widths and RAM depths from these at generation time.
pub const DEFAULT: BuildParams = if cfg!(feature = "qps16k") {
    QPS16K
} else {
    STANDARD
};

const _: () = assert!(
    STANDARD.valid(),
    "standard build parameters are inconsistent"
);
const _: () = assert!(QPS16K.valid(), "16k-QP build parameters are inconsistent");

/// Address bits of the board's Ethernet clock-crossing FIFOs (`rnic_rtl::cdc_fifo`): 2^9 = 512
/// beats of 64 bytes. The RX one drops a frame that finds it full (the CMAC cannot be paused);
/// the simulator's board receive mode (`rnic_sim::eth::LinkConfig::board`) models that depth.
pub const BOARD_ETH_FIFO_ADDR_BITS: u32 = 9;
/// Bytes the board's RX FIFO holds (counted in 64-byte beats).
pub const BOARD_RX_FIFO_BYTES: usize = 64 << BOARD_ETH_FIFO_ADDR_BITS;

/// Engine version reported in HW_VERSION: major 31:24, minor 23:16, patch 15:0.
pub const HW_VERSION: u32 = 1 << 16; // 0.1.0
