//! TX: SQ scheduler + requester, frame builder + TX arbiter.

pub mod txbuild;
pub mod txreq;
