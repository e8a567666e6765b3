//! What the GPU SpMV drivers share: the kernel catalogue (names for the CLI and benches), the
//! launch options, and the checks every driver makes before a launch.

use crate::error::{Error, Result};
use crate::gpu::CudaSlice;

/// Warps per block of a launch: 1..=5 as in the reports (32..160 threads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockWarps(u32);

impl BlockWarps {
    pub const DEFAULT: BlockWarps = BlockWarps(4);

    pub fn new(warps: u32) -> Result<BlockWarps> {
        if (1..=32).contains(&warps) {
            Ok(BlockWarps(warps))
        } else {
            Err(Error::InvalidInput(format!(
                "{warps} warps per block (1..=32 allowed; the reports used 1..=5)"
            )))
        }
    }

    pub fn threads(self) -> u32 {
        32 * self.0
    }

    pub fn warps(self) -> u32 {
        self.0
    }
}

impl Default for BlockWarps {
    fn default() -> Self {
        BlockWarps::DEFAULT
    }
}

/// The u32 the kernels take for a size, or an error naming it.
pub(crate) fn to_u32(value: usize, what: &str) -> Result<u32> {
    u32::try_from(value)
        .map_err(|_| Error::InvalidInput(format!("{what} = {value} exceeds the kernels' u32 range")))
}

/// Checks the vector lengths of y = A x against an `rows x cols` matrix.
pub(crate) fn check_vectors<T>(rows: usize, cols: usize, x: &CudaSlice<T>, y: &CudaSlice<T>) -> Result<()> {
    if x.len() != cols || y.len() != rows {
        return Err(Error::InvalidInput(format!(
            "SpMV of a {rows} x {cols} matrix needs x of {cols} and y of {rows} elements, got x {} and y {}",
            x.len(),
            y.len()
        )));
    }
    Ok(())
}
