//! Launch shapes and kernel handles.

use cudarc::driver::{CudaFunction, LaunchConfig, sys};

use crate::error::{Error, Result};
use crate::gpu::DeviceProps;

/// A kernel of the module, with its name for error messages.
#[derive(Clone)]
pub struct Kernel {
    pub(crate) name: &'static str,
    pub(crate) function: CudaFunction,
}

impl Kernel {
    pub(crate) fn new(name: &'static str, function: CudaFunction) -> Kernel {
        Kernel { name, function }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Registers used per thread (as the driver compiled it for this GPU).
    pub fn registers(&self) -> Result<i32> {
        self.function
            .get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)
            .map_err(crate::Error::driver("kernel attribute query"))
    }
}

/// Grid, block and dynamic shared memory of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: u32,
    /// Ask for the SM's largest shared-memory carveout even where the launch needs 48 KiB or
    /// less (above that it always does): see [`Launch::beside_large_shared`].
    pub large_carveout: bool,
    /// Every block resident at once: see [`Launch::all_resident`].
    pub all_resident: bool,
}

impl Launch {
    /// Enough blocks of `block` threads to give each of `threads` threads one index.
    pub fn linear(threads: usize, block: u32) -> Launch {
        let blocks = threads.div_ceil(block.max(1) as usize).max(1);
        Launch {
            grid: (blocks.min(u32::MAX as usize) as u32, 1, 1),
            block: (block, 1, 1),
            shared_bytes: 0,
            large_carveout: false,
            all_resident: false,
        }
    }

    /// One warp of 32 threads per item, `warps_per_block` warps a block.
    pub fn warp_per_item(items: usize, warps_per_block: u32) -> Launch {
        Launch::linear(items.saturating_mul(32), 32 * warps_per_block)
    }

    /// An explicit grid and block.
    pub fn grid_2d(grid: (u32, u32), block: (u32, u32)) -> Launch {
        Launch {
            grid: (grid.0, grid.1, 1),
            block: (block.0, block.1, 1),
            shared_bytes: 0,
            large_carveout: false,
            all_resident: false,
        }
    }

    /// The same launch with `bytes` of dynamic shared memory.
    pub fn shared(self, bytes: usize) -> Launch {
        Launch { shared_bytes: bytes.min(u32::MAX as usize) as u32, ..self }
    }

    /// The same launch, for a kernel that runs beside kernels of over 48 KiB of shared memory
    /// per block (the LU's panels beside its updates): an SM holds one split of its memory
    /// between shared memory and L1 at a time, and a block asking another split waits until
    /// the SM drains (PERF.md), so such a kernel takes the same largest carveout.
    pub fn beside_large_shared(self) -> Launch {
        Launch { large_carveout: true, ..self }
    }

    /// The same launch with every block resident at once, for a kernel whose blocks wait on
    /// each other's work: the grid (one-dimensional, each block's share taken by a
    /// grid-stride loop) is capped at the blocks the GPU holds together at this kernel's
    /// occupancy, and launched cooperatively: the driver then runs the blocks together, or
    /// refuses the launch, never leaving one waiting for room.
    pub fn all_resident(self) -> Launch {
        Launch { all_resident: true, ..self }
    }

    /// Checks the shape against the device's limits, raising the kernel's shared-memory limit
    /// where the launch asks for more than the 48 KiB default, and its carveout then or where
    /// the launch is [`Launch::beside_large_shared`].
    pub(crate) fn validate(self, kernel: &Kernel, props: &DeviceProps) -> Result<LaunchConfig> {
        let fail = |message: String| Error::LaunchConfig { kernel: kernel.name.to_string(), message };
        let (bx, by, bz) = self.block;
        let threads = bx as u64 * by as u64 * bz as u64;
        if threads == 0 || threads > 1024 {
            return Err(fail(format!("{threads} threads per block (1..=1024 allowed)")));
        }
        let (gx, gy, gz) = self.grid;
        if gx == 0 || gy == 0 || gz == 0 || gy > 65535 || gz > 65535 {
            return Err(fail(format!("grid {:?} (x >= 1, y and z in 1..=65535)", self.grid)));
        }
        if self.shared_bytes as usize > props.max_shared_per_block_optin {
            return Err(fail(format!(
                "{} bytes of shared memory per block, the device allows {}",
                self.shared_bytes, props.max_shared_per_block_optin
            )));
        }
        let large = self.shared_bytes > 48 * 1024;
        if large {
            kernel
                .function
                .set_attribute(
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    self.shared_bytes as i32,
                )
                .map_err(|e| fail(format!("raising the shared-memory limit: {e}")))?;
        }
        if large || self.large_carveout {
            // Ask for the largest shared-memory carveout of the SM (the rest is L1), so that
            // several such blocks can be resident at once; a hint the driver may override.
            kernel
                .function
                .set_attribute(
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                    100,
                )
                .map_err(|e| fail(format!("setting the shared-memory carveout: {e}")))?;
        }
        let mut grid = self.grid;
        if self.all_resident {
            let per_sm = kernel
                .function
                .occupancy_max_active_blocks_per_multiprocessor(
                    threads as u32,
                    self.shared_bytes as usize,
                    None,
                )
                .map_err(|e| fail(format!("occupancy query: {e}")))?;
            if per_sm == 0 || gy * gz != 1 {
                return Err(fail(format!(
                    "{per_sm} blocks of {threads} threads fit an SM, grid {:?}: no one-dimensional grid can be resident at once",
                    self.grid
                )));
            }
            grid.0 = gx.min(per_sm.saturating_mul(props.sm_count));
        }
        Ok(LaunchConfig { grid_dim: grid, block_dim: self.block, shared_mem_bytes: self.shared_bytes })
    }
}
