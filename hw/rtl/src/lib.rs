//! rnic RTL
