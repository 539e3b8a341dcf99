//! RX: RoCE v2 header parser, responder, ACK/NAK processing.

pub mod ackevq;
pub mod ackproc;
pub mod atomic;
pub mod rxparse;
pub mod rxresp;
