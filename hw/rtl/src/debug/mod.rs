//! Debug and statistics: MAC-debug frames, RX check counters, data-path counters.

pub mod engstat;
pub mod macdbg;
pub mod rxstat;
