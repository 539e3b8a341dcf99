//! shared test helpers
