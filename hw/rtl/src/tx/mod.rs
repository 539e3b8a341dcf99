//! TX: SQ scheduler + requester, frame builder + TX arbiter.

pub mod build;
pub mod txreq;
