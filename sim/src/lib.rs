//! rnic simulator
