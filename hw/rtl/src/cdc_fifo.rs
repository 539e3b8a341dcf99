//! (owned by the board issue: asynchronous AXI-Stream FIFO)
