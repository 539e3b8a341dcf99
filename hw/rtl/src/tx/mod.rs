//! TX: SQ scheduler + requester, transport timers, response generator, frame builder + TX
//! arbiter.

pub mod acktimer;
pub mod descslice;
pub mod rdresp;
pub mod txbuild;
pub mod txreq;
