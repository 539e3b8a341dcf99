//! RoCE v2 wire helpers shared by RX and TX: the streaming ICRC.

pub mod icrc;
