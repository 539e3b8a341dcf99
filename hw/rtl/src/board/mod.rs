//! Board clock-domain crossings (CMAC clock vs core clock).

pub mod cdc_fifo;
pub mod reset_sync;
