//! GPU BSR SpMV: the device copy of a block matrix and the kernels of
//! `kernels/src/spmv/bsr.rs`.

use super::gpu::{BlockWarps, check_vectors, to_u32};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch};
use crate::kernels::spmv::bsr as kernels;
use crate::sparse::Bsr;

/// A BSR matrix in device memory.
pub struct DeviceBsr<T> {
    pub rows: usize,
    pub cols: usize,
    pub block_size: usize,
    pub block_rows: usize,
    pub blocks: usize,
    pub block_row_ptr: CudaSlice<u32>,
    pub block_col: CudaSlice<u32>,
    pub values: CudaSlice<T>,
}

impl<T: Scalar> DeviceBsr<T> {
    pub fn upload(gpu: &Gpu, a: &Bsr<T>) -> Result<DeviceBsr<T>> {
        to_u32(a.rows(), "rows")?;
        to_u32(a.cols(), "cols")?;
        to_u32(a.stored(), "stored BSR slots")?;
        if a.block_size() > 32 {
            return Err(Error::InvalidInput(format!(
                "BSR block size {} (the GPU kernels take up to 32)",
                a.block_size()
            )));
        }
        Ok(DeviceBsr {
            rows: a.rows(),
            cols: a.cols(),
            block_size: a.block_size(),
            block_rows: a.block_rows(),
            blocks: a.blocks(),
            block_row_ptr: gpu.upload(a.block_row_ptr())?,
            block_col: gpu.upload(a.block_col_indices())?,
            values: gpu.upload(a.values())?,
        })
    }

    /// Bytes a kernel moves at least: the stored blocks once, x once, y once.
    pub fn min_traffic_bytes(&self) -> usize {
        let elem = size_of::<T>();
        self.blocks * (self.block_size * self.block_size * elem + 4)
            + (self.block_rows + 1) * 4
            + (self.cols + self.rows) * elem
    }
}

/// The BSR kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BsrKernel {
    /// One thread per block row (Uruguay, first variant).
    ThreadPerBlockRow,
    /// One thread per stored cell, atomics into y (Uruguay, second variant).
    ThreadPerCell,
    /// One warp per block row, coalesced block loads.
    WarpPerBlockRow,
}

impl BsrKernel {
    pub const ALL: [BsrKernel; 3] =
        [BsrKernel::ThreadPerBlockRow, BsrKernel::ThreadPerCell, BsrKernel::WarpPerBlockRow];

    pub fn name(self) -> &'static str {
        match self {
            BsrKernel::ThreadPerBlockRow => "bsr-thread-per-block-row",
            BsrKernel::ThreadPerCell => "bsr-thread-per-cell",
            BsrKernel::WarpPerBlockRow => "bsr-warp-per-block-row",
        }
    }

    pub fn from_name(name: &str) -> Option<BsrKernel> {
        BsrKernel::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// y = A x with the chosen BSR kernel.
pub fn spmv<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceBsr<T>,
    kernel: BsrKernel,
    warps: BlockWarps,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    check_vectors(a.rows, a.cols, x, y)?;
    if a.rows == 0 {
        return Ok(());
    }
    let launch = match kernel {
        BsrKernel::ThreadPerBlockRow => Launch::linear(a.block_rows, warps.threads()),
        BsrKernel::ThreadPerCell => {
            gpu.memset_zeros(y)?;
            if a.blocks == 0 {
                return Ok(());
            }
            Launch::linear(a.blocks * a.block_size * a.block_size, warps.threads())
        }
        BsrKernel::WarpPerBlockRow => Launch::warp_per_item(a.block_rows, warps.warps()),
    };
    let (block_rows, b, rows, cols) =
        (a.block_rows as u32, a.block_size as u32, a.rows as u32, a.cols as u32);
    // Every BSR kernel takes the same arguments.
    macro_rules! bsr {
        ($kernel:ident) => {
            kernels::$kernel(
                gpu,
                launch,
                block_rows,
                b,
                rows,
                cols,
                &a.block_row_ptr,
                &a.block_col,
                &a.values,
                x,
                y,
            )
        };
    }
    // SAFETY: the buffers hold the uploaded BSR matrix (checked at upload), x and y the
    // checked lengths.
    unsafe {
        match kernel {
            BsrKernel::ThreadPerBlockRow => bsr!(thread_per_block_row),
            BsrKernel::ThreadPerCell => bsr!(thread_per_cell),
            BsrKernel::WarpPerBlockRow => bsr!(warp_per_block_row),
        }
    }
}
