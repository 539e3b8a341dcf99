//! The error type of the `rnic-sim` library.

/// What the simulator's jobs (demo, bench) can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The driver reported an error.
    #[error(transparent)]
    Driver(#[from] rnic::Error),
    /// Writing the capture failed.
    #[error("pcap: {0}")]
    Pcap(#[from] pcap_file::PcapError),
    /// The hardware did something other than what the job checks for.
    #[error("check failed: {0}")]
    Check(String),
    /// There is no NIC of that index in the world.
    #[error("no NIC {nic} (the world has {nics})")]
    NoSuchNic { nic: usize, nics: usize },
    /// A frame handed to a NIC's receive port is empty or longer than the port takes.
    #[error("frame of {len} bytes: a NIC's receive port takes 1..={max} bytes")]
    FrameSize { len: usize, max: usize },
    /// Bad input to a tool (a replay configuration or capture): what was wrong, and where.
    #[error("{0}")]
    Input(String),
    /// Reading or writing a file failed.
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    /// Formatting the report failed (writing into a String does not fail in practice).
    #[error("report formatting: {0}")]
    Fmt(#[from] std::fmt::Error),
}

/// Fail with [`Error::Check`] unless `cond` holds.
macro_rules! ensure {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            return Err($crate::error::Error::Check(format!($($arg)+)));
        }
    };
}
pub(crate) use ensure;
