//! GPU HLL SpMV: the device copy of a hacked-ELLPACK matrix and the kernels of
//! `kernels/src/spmv/hll.rs` (the Tor Vergata report's v1..v4 on the row-major layout, and
//! the column-major SELL kernel).

use super::gpu::{BlockWarps, check_vectors, to_u32};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch, PushKernelArg};
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

    fn entry_points(self) -> (&'static str, &'static str) {
        match self {
            HllKernel::V1ThreadPerHack => ("spmv_hll_v1_f32", "spmv_hll_v1_f64"),
            HllKernel::V2ThreadPerRow => ("spmv_hll_v2_f32", "spmv_hll_v2_f64"),
            HllKernel::V3SharedX => ("spmv_hll_v3_f32", "spmv_hll_v3_f64"),
            HllKernel::V4WarpPerRow => ("spmv_hll_v4_f32", "spmv_hll_v4_f64"),
            HllKernel::Sell => ("spmv_hll_sell_f32", "spmv_hll_sell_f64"),
        }
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
    let k = gpu.kernel(T::pick(kernel.entry_points()))?;
    let (rows, cols, hack) = (a.rows as u32, a.cols as u32, a.hack_size as u32);
    // SAFETY: the arguments match the entry points of kernels/src/spmv/hll.rs (v3 also takes
    // cols); the buffers hold the uploaded HLL matrix, and x, y the checked lengths.
    unsafe {
        gpu.launch(&k, launch, |args| {
            args.arg(&rows);
            if kernel == HllKernel::V3SharedX {
                args.arg(&cols);
            }
            args.arg(&hack)
                .arg(&a.hack_offsets)
                .arg(&a.hack_widths)
                .arg(&a.col_idx)
                .arg(&a.values)
                .arg(x)
                .arg(y);
        })
    }
}
