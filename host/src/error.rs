//! The crate's one error type. Every message names the problem and, where it helps, the fix.

use cudarc::driver::DriverError;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "no CUDA driver: libcuda.so could not be loaded (this needs an NVIDIA GPU with its driver installed)"
    )]
    NoDriver,
    #[error("no CUDA device: {0}")]
    NoDevice(String),
    #[error(
        "out of device memory: asked for {asked} bytes ({}), {free} bytes free of {total}",
        human_bytes(*asked as f64)
    )]
    OutOfMemory { asked: usize, free: usize, total: usize },
    #[error(
        "not enough {memory} memory: {what} needs {needed} bytes ({}), {available} bytes ({}) are available",
        human_bytes(*needed as f64),
        human_bytes(*available as f64)
    )]
    NotEnoughMemory { memory: &'static str, what: String, needed: u128, available: u128 },
    #[error("kernel `{0}` not found in the PTX module (is it `#[unsafe(no_mangle)]` in `kernels`?)")]
    KernelNotFound(String),
    #[error("launch of kernel `{kernel}` failed: {source}")]
    Launch { kernel: String, source: DriverError },
    #[error("GPU error after launching `{kernel}` (the last kernel launched): {source}")]
    Device { kernel: String, source: DriverError },
    #[error("CUDA {what} failed: {source}")]
    Driver { what: &'static str, source: DriverError },
    #[error("{library} error in {what}: {message}")]
    Library { library: &'static str, what: &'static str, message: String },
    #[error("invalid launch configuration for `{kernel}`: {message}")]
    LaunchConfig { kernel: String, message: String },
    #[error(
        "another rank of the distributed run failed in {0} (its own error says why); this one stopped with it"
    )]
    PeerFailed(String),
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error(
        "singular matrix: column {column} (counting from 0) has no pivot above {tolerance:.3e} in magnitude (n eps max|A|): it is, to working precision, a combination of the columns before it, so A x = b has no unique solution"
    )]
    Singular { column: usize, tolerance: f64 },
    #[error("result check failed: {0}")]
    Verification(String),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    /// A Matrix Market file that could not be read (names the file and line).
    #[error(transparent)]
    MatrixMarket(#[from] crate::mm::MmError),
}

impl Error {
    /// Wraps a driver error from the call named by `what`.
    pub fn driver(what: &'static str) -> impl FnOnce(DriverError) -> Error {
        move |source| Error::Driver { what, source }
    }
}

/// `Ok(None)` where `allocation` failed for want of device memory: for a copy or workspace that
/// the work can go without.
pub(crate) fn unless_out_of_memory<T>(allocation: Result<T>) -> Result<Option<T>> {
    match allocation {
        Ok(value) => Ok(Some(value)),
        Err(Error::OutOfMemory { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

pub fn human_bytes(bytes: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}
