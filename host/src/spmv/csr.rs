//! GPU CSR SpMV: the device copy of a matrix, the kernels of `kernels/src/spmv/csr.rs`, and
//! the adaptive kernel with its one-time analysis ([`CsrPlan`]).

use super::gpu::{BlockWarps, check_vectors, to_u32};
use crate::Scalar;
use crate::error::Result;
use crate::gpu::{CudaSlice, Gpu, Launch};
use crate::kernels::spmv::csr as kernels;
use crate::sparse::Csr;

/// A CSR matrix in device memory, with the analysis the adaptive kernel uses.
pub struct DeviceCsr<T> {
    pub rows: usize,
    pub cols: usize,
    pub nnz: usize,
    pub row_ptr: CudaSlice<u32>,
    pub col_idx: CudaSlice<u32>,
    pub values: CudaSlice<T>,
    pub plan: CsrPlan,
    /// The plan's chunks of long rows on the device: (rows, starts).
    long_chunks: Option<(CudaSlice<u32>, CudaSlice<u32>)>,
}

/// The adaptive kernel's choices for one matrix, made once when it is uploaded (as cuSPARSE's
/// analysis step does): rows longer than `long_row` are cut into chunks of `LONG_ROW_CHUNK`
/// nonzeros, a warp each; the others get `width` lanes each, the width timed fastest on this
/// matrix among 2..=32 (a first guess from the mean length where nothing was timed).
#[derive(Clone, Debug, PartialEq)]
pub struct CsrPlan {
    pub width: u32,
    pub long_row: u32,
    pub long_rows: Vec<u32>,
    /// (row, first nonzero) of each chunk of the long rows.
    pub chunk_rows: Vec<u32>,
    pub chunk_starts: Vec<u32>,
}

/// Nonzeros per warp on a long row: 8 per lane.
pub const LONG_ROW_CHUNK: u32 = 256;

/// Threads per block of the vector kernel.
const VECTOR_BLOCK: u32 = 128;

/// The widths the vector kernel is built for.
pub const WIDTHS: [u32; 5] = kernels::vector::W;

impl CsrPlan {
    pub fn new(row_ptr: &[u32]) -> CsrPlan {
        let rows = row_ptr.len().saturating_sub(1);
        let lengths = row_ptr.windows(2).map(|w| w[1] - w[0]);
        let mean = if rows == 0 { 0.0 } else { row_ptr[rows] as f64 / rows as f64 };
        // A row far above the mean would keep its group busy while the warp's other groups
        // idle: past 8x the mean (and at least two warp-loads) it goes to the chunk kernel.
        let long_row = (8.0 * mean).max(64.0) as u32;
        let long_rows: Vec<u32> =
            lengths.enumerate().filter(|&(_, len)| len > long_row).map(|(r, _)| r as u32).collect();
        let long_nnz: u64 =
            long_rows.iter().map(|&r| (row_ptr[r as usize + 1] - row_ptr[r as usize]) as u64).sum();
        let short_rows = rows - long_rows.len();
        let short_mean =
            if short_rows == 0 { 0.0 } else { (row_ptr[rows] as u64 - long_nnz) as f64 / short_rows as f64 };
        let (mut chunk_rows, mut chunk_starts) = (Vec::new(), Vec::new());
        for &r in &long_rows {
            let (start, end) = (row_ptr[r as usize], row_ptr[r as usize + 1]);
            for first in (start..end).step_by(LONG_ROW_CHUNK as usize) {
                chunk_rows.push(r);
                chunk_starts.push(first);
            }
        }
        CsrPlan { width: Self::width_for(short_mean), long_row, long_rows, chunk_rows, chunk_starts }
    }

    /// Lanes per row for rows of `mean` nonzeros: the power of two nearest mean / 4, so each
    /// lane does about four products, two loads in flight at a time (narrower groups beat one
    /// product per lane: PERF.md), within 2..=32.
    pub fn width_for(mean: f64) -> u32 {
        let target = (mean / 4.0).max(1.0);
        let w = 2f64.powf(target.log2().round()) as u32;
        w.clamp(2, 32)
    }
}

impl<T: Scalar> DeviceCsr<T> {
    /// Copies `a` to the device and analyses it for the adaptive kernel, timing its widths.
    pub fn upload(gpu: &Gpu, a: &Csr<T>) -> Result<DeviceCsr<T>> {
        let mut device = DeviceCsr::upload_untuned(gpu, a)?;
        device.tune_width(gpu)?;
        Ok(device)
    }

    /// Copies `a` to the device with the plan's first-guess width (nothing timed).
    pub fn upload_untuned(gpu: &Gpu, a: &Csr<T>) -> Result<DeviceCsr<T>> {
        to_u32(a.rows(), "rows")?;
        to_u32(a.cols(), "cols")?;
        let plan = CsrPlan::new(a.row_ptr());
        let long_chunks = if plan.chunk_rows.is_empty() {
            None
        } else {
            Some((gpu.upload(&plan.chunk_rows)?, gpu.upload(&plan.chunk_starts)?))
        };
        Ok(DeviceCsr {
            rows: a.rows(),
            cols: a.cols(),
            nnz: a.nnz(),
            row_ptr: gpu.upload(a.row_ptr())?,
            col_idx: gpu.upload(a.col_indices())?,
            values: gpu.upload(a.values())?,
            plan,
            long_chunks,
        })
    }

    /// Times the adaptive kernel at each width on this matrix (x of ones, three runs each,
    /// median) and keeps the fastest. Small matrices keep the first guess: timing them
    /// measures launch overhead, not the width.
    pub fn tune_width(&mut self, gpu: &Gpu) -> Result<()> {
        if self.nnz < 1 << 20 {
            return Ok(());
        }
        let x = gpu.filled(self.cols, T::ONE)?;
        let mut y = gpu.zeros::<T>(self.rows)?;
        let mut best = (f64::INFINITY, self.plan.width);
        for width in WIDTHS {
            self.plan.width = width;
            let ms = gpu
                .time(1, 3, || spmv(gpu, self, CsrKernel::Adaptive, BlockWarps::DEFAULT, &x, &mut y))?
                .median_ms();
            if ms < best.0 {
                best = (ms, width);
            }
        }
        self.plan.width = best.1;
        Ok(())
    }

    /// Bytes a kernel must move at least: the matrix once, x once, y written once.
    pub fn min_traffic_bytes(&self) -> usize {
        let elem = size_of::<T>();
        self.nnz * (elem + 4) + (self.rows + 1) * 4 + self.cols * elem + self.rows * elem
    }
}

/// The CSR kernels, from the reports' classics to the fast adaptive one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsrKernel {
    /// One thread per row.
    Scalar,
    /// One thread per nonzero, block-level sums, atomics into y (Uruguay).
    NnzAtomic,
    /// Warp per row, shuffle reduction.
    WarpShuffle,
    /// Warp per row, shared-memory reduction (Tor Vergata kernel 3).
    WarpShared,
    /// Warp per row, read-only cached loads (Tor Vergata kernel 4).
    WarpLdg,
    /// `w` lanes per row (2, 4, 8, 16, 32), no long-row split: for benchmarking the widths.
    Vector(u32),
    /// The fast kernel: lanes per row from the analysis, long rows in chunks of a block each.
    Adaptive,
}

impl CsrKernel {
    pub const ALL: [CsrKernel; 7] = [
        CsrKernel::Scalar,
        CsrKernel::NnzAtomic,
        CsrKernel::WarpShuffle,
        CsrKernel::WarpShared,
        CsrKernel::WarpLdg,
        CsrKernel::Vector(8),
        CsrKernel::Adaptive,
    ];

    pub fn name(self) -> String {
        match self {
            CsrKernel::Scalar => "csr-scalar".into(),
            CsrKernel::NnzAtomic => "csr-nnz-atomic".into(),
            CsrKernel::WarpShuffle => "csr-warp-shuffle".into(),
            CsrKernel::WarpShared => "csr-warp-shared".into(),
            CsrKernel::WarpLdg => "csr-warp-ldg".into(),
            CsrKernel::Vector(w) => format!("csr-vector{w}"),
            CsrKernel::Adaptive => "csr-adaptive".into(),
        }
    }

    pub fn from_name(name: &str) -> Option<CsrKernel> {
        if let Some(w) = name.strip_prefix("csr-vector").and_then(|w| w.parse().ok()) {
            return WIDTHS.contains(&w).then_some(CsrKernel::Vector(w));
        }
        CsrKernel::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// y = A x with the chosen kernel, queued on the GPU's stream. `warps` sets the block size
/// of the kernels that take one (all but the adaptive kernel, whose blocks are 128 threads).
pub fn spmv<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceCsr<T>,
    kernel: CsrKernel,
    warps: BlockWarps,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    check_vectors(a.rows, a.cols, x, y)?;
    if a.rows == 0 {
        return Ok(());
    }
    let rows = a.rows as u32;
    let threads = warps.threads();
    let (row_ptr, col_idx, values) = (&a.row_ptr, &a.col_idx, &a.values);
    // SAFETY (every launch below): the buffers hold an `a.rows x a.cols` CSR matrix with
    // `a.nnz` entries (checked at upload), x and y the checked lengths.
    unsafe {
        match kernel {
            CsrKernel::Scalar => {
                kernels::scalar(gpu, Launch::linear(a.rows, threads), rows, row_ptr, col_idx, values, x, y)
            }
            CsrKernel::WarpShuffle => {
                let launch = Launch::warp_per_item(a.rows, warps.warps());
                kernels::warp_shuffle(gpu, launch, rows, row_ptr, col_idx, values, x, y)
            }
            CsrKernel::WarpShared => {
                let launch =
                    Launch::warp_per_item(a.rows, warps.warps()).shared(threads as usize * size_of::<T>());
                kernels::warp_shared(gpu, launch, rows, row_ptr, col_idx, values, x, y)
            }
            CsrKernel::WarpLdg => {
                let launch = Launch::warp_per_item(a.rows, warps.warps());
                kernels::warp_ldg(gpu, launch, rows, row_ptr, col_idx, values, x, y)
            }
            CsrKernel::NnzAtomic => {
                gpu.memset_zeros(y)?;
                if a.nnz == 0 {
                    return Ok(());
                }
                let nnz = to_u32(a.nnz, "nnz")?;
                let launch = Launch::linear(a.nnz, threads)
                    .shared(abi::spmv::nnz_atomic_shared_bytes(threads, size_of::<T>()));
                kernels::nnz_atomic(gpu, launch, rows, nnz, row_ptr, col_idx, values, x, y)
            }
            CsrKernel::Vector(width) => launch_vector(gpu, a, width, u32::MAX, x, y),
            CsrKernel::Adaptive => {
                launch_vector(gpu, a, a.plan.width, a.plan.long_row, x, y)?;
                if let Some((chunk_rows, chunk_starts)) = &a.long_chunks {
                    let chunks = to_u32(a.plan.chunk_rows.len(), "long-row chunks")?;
                    let launch = Launch::warp_per_item(chunks as usize, 4);
                    kernels::long_row_chunks(
                        gpu,
                        launch,
                        chunks,
                        LONG_ROW_CHUNK,
                        chunk_rows,
                        chunk_starts,
                        row_ptr,
                        col_idx,
                        values,
                        x,
                        y,
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// The vector kernel at `width` lanes per row; rows longer than `long_row` are left to the
/// long-row kernel.
fn launch_vector<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceCsr<T>,
    width: u32,
    long_row: u32,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    let launch = Launch::linear(a.rows.saturating_mul(width as usize), VECTOR_BLOCK);
    // SAFETY: as in `spmv`.
    unsafe {
        kernels::vector(gpu, launch, width, a.rows as u32, &a.row_ptr, &a.col_idx, &a.values, x, y, long_row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_round_trip() {
        for k in CsrKernel::ALL.into_iter().chain([2, 4, 16, 32].map(CsrKernel::Vector)) {
            assert_eq!(CsrKernel::from_name(&k.name()), Some(k));
        }
        assert_eq!(CsrKernel::from_name("csr-vector3"), None);
    }

    #[test]
    fn plan_picks_width_and_long_rows() {
        assert_eq!(CsrPlan::width_for(27.0), 8);
        assert_eq!(CsrPlan::width_for(7.0), 2);
        assert_eq!(CsrPlan::width_for(81.0), 16);
        assert_eq!(CsrPlan::width_for(1000.0), 32);
        // A thousand rows of 3 and one of 600: the long one is listed, the width comes from
        // the others.
        let mut row_ptr = vec![0u32];
        for len in (0..1000).map(|r| if r == 10 { 600 } else { 3 }) {
            row_ptr.push(row_ptr.last().unwrap() + len);
        }
        let plan = CsrPlan::new(&row_ptr);
        assert_eq!(plan.long_rows, vec![10]);
        // 600 nonzeros make three chunks of up to 256.
        assert_eq!(plan.chunk_rows, vec![10, 10, 10]);
        assert_eq!(plan.chunk_starts, vec![30, 30 + LONG_ROW_CHUNK, 30 + 2 * LONG_ROW_CHUNK]);
        assert_eq!(plan.width, 2);
    }
}
