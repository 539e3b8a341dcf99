//! TX: SQ scheduler + requester, transport timers, frame builder + TX arbiter.

pub mod acktimer;
pub mod txbuild;
pub mod txreq;
