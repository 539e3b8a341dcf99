//! (owned by the board issue: reset synchronizer)
