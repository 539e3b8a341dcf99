//! RoCE v2 wire helpers shared by RX and TX: the streaming ICRC, MAC byte order.

pub mod icrc;
pub mod mac;
