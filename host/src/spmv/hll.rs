//! GPU HLL SpMV: the device copy of a hacked-ELLPACK matrix and the kernels of
//! `kernels/src/spmv/hll.rs` (the Tor Vergata report's v1..v4 on the row-major layout, and
//! the column-major SELL kernel).

use super::gpu::{BlockWarps, check_vectors, to_u32};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch};
use crate::kernels::spmv::hll as kernels;
use crate::sparse::{Hll, HllLayout};

/// An HLL matrix in device memory.
pub struct DeviceHll<T> {
    pub rows: usize,
    pub cols: usize,
    pub hack_size: usize,
    pub layout: HllLayout,
    pub stored: usize,
    pub nnz: usize,
    pub hack_offsets: CudaSlice<u32>,
    pub hack_widths: CudaSlice<u32>,
    pub col_idx: CudaSlice<u32>,
    pub values: CudaSlice<T>,
}

impl<T: Scalar> DeviceHll<T> {
    pub fn upload(gpu: &Gpu, a: &Hll<T>) -> Result<DeviceHll<T>> {
        to_u32(a.rows(), "rows")?;
        to_u32(a.cols(), "cols")?;
        to_u32(a.stored(), "stored HLL slots")?;
        Ok(DeviceHll {
            rows: a.rows(),
            cols: a.cols(),
            hack_size: a.hack_size(),
            layout: a.layout(),
            stored: a.stored(),
            nnz: a.stored() - a.stored_zeros(),
            hack_offsets: gpu.upload(a.hack_offsets())?,
            hack_widths: gpu.upload(a.hack_widths())?,
            col_idx: gpu.upload(a.col_indices())?,
            values: gpu.upload(a.values())?,
        })
    }

    /// Bytes a kernel moves at least: the stored slots (padding included) once, x, y once.
    pub fn min_traffic_bytes(&self) -> usize {
        let elem = size_of::<T>();
        self.stored * (elem + 4) + (self.cols + self.rows) * elem
    }
}

/// The HLL kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HllKernel {
    /// v1: one thread per hack (row-major layout).
    V1ThreadPerHack,
    /// v2: one thread per row (row-major layout).
    V2ThreadPerRow,
    /// v3: one thread per row, x window in shared memory (row-major layout).
    V3SharedX,
    /// v4: one warp per row, shfl_down reduction (row-major layout).
    V4WarpPerRow,
    /// Column-major slices (SELL), one thread per row: the fast one.
    Sell,
}

impl HllKernel {
    pub const ALL: [HllKernel; 5] = [
        HllKernel::V1ThreadPerHack,
        HllKernel::V2ThreadPerRow,
        HllKernel::V3SharedX,
        HllKernel::V4WarpPerRow,
        HllKernel::Sell,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HllKernel::V1ThreadPerHack => "hll-v1",
            HllKernel::V2ThreadPerRow => "hll-v2",
            HllKernel::V3SharedX => "hll-v3",
            HllKernel::V4WarpPerRow => "hll-v4",
            HllKernel::Sell => "hll-sell",
        }
    }

    pub fn from_name(name: &str) -> Option<HllKernel> {
        HllKernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The slot layout the kernel reads.
    pub fn layout(self) -> HllLayout {
        if self == HllKernel::Sell { HllLayout::ColumnMajor } else { HllLayout::RowMajor }
    }
}

/// y = A x with the chosen HLL kernel; the matrix must be in the layout the kernel reads.
pub fn spmv<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceHll<T>,
    kernel: HllKernel,
    warps: BlockWarps,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    check_vectors(a.rows, a.cols, x, y)?;
    if a.layout != kernel.layout() {
        return Err(Error::InvalidInput(format!(
            "{} reads the {:?} HLL layout, the matrix is {:?}",
            kernel.name(),
            kernel.layout(),
            a.layout
        )));
    }
    if a.rows == 0 {
        return Ok(());
    }
    let threads = warps.threads();
    let launch = match kernel {
        HllKernel::V1ThreadPerHack => Launch::linear(a.rows.div_ceil(a.hack_size), threads),
        HllKernel::V2ThreadPerRow | HllKernel::Sell => Launch::linear(a.rows, threads),
        HllKernel::V3SharedX => Launch::linear(a.rows, threads).shared(threads as usize * size_of::<T>()),
        HllKernel::V4WarpPerRow => Launch::warp_per_item(a.rows, warps.warps()),
    };
    let (rows, cols, hack) = (a.rows as u32, a.cols as u32, a.hack_size as u32);
    let (offsets, widths, col_idx, values) = (&a.hack_offsets, &a.hack_widths, &a.col_idx, &a.values);
    // SAFETY: the buffers hold the uploaded HLL matrix (checked at upload), x and y the
    // checked lengths.
    unsafe {
        match kernel {
            HllKernel::V1ThreadPerHack => {
                kernels::v1_thread_per_hack(gpu, launch, rows, hack, offsets, widths, col_idx, values, x, y)
            }
            HllKernel::V2ThreadPerRow => {
                kernels::v2_thread_per_row(gpu, launch, rows, hack, offsets, widths, col_idx, values, x, y)
            }
            HllKernel::V3SharedX => {
                kernels::v3_shared_x(gpu, launch, rows, cols, hack, offsets, widths, col_idx, values, x, y)
            }
            HllKernel::V4WarpPerRow => {
                kernels::v4_warp_per_row(gpu, launch, rows, hack, offsets, widths, col_idx, values, x, y)
            }
            HllKernel::Sell => kernels::sell(gpu, launch, rows, hack, offsets, widths, col_idx, values, x, y),
        }
    }
}
