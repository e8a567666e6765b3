//! Dense solve A x = b by Gaussian elimination with partial pivoting (row-major, f64 and f32).
//!
//! - [`cpu`]: the Milan report's serial elimination on the augmented matrix, and a blocked LU
//!   (rayon panels, `matrixmultiply` trailing updates) with getrs for many right-hand sides;
//! - [`classic`]: the report's GPU kernels, one column per round of four launches, with its
//!   single-thread back substitution or a parallel one;
//! - [`blocked`]: a blocked right-looking LU on the GPU (persistent panel kernel, triangular
//!   solve, tensor-core trailing update) and getrs;
//! - [`mixed`]: f64 answers from an f32 LU with TF32 trailing updates, refined in f64, with a
//!   fallback to the f64 LU where refinement stalls;
//! - the cuSOLVER baseline is `vendor::cusolver`.
//!
//! Every solver checks its input here ([`check_system`]: square, finite) and reports a
//! singular matrix as [`Error::Singular`] naming the first column whose pivot is not above
//! [`pivot_tolerance`] (n eps max|A|). Results are judged by the backward error
//! ||A x - b|| / (||A|| ||x|| + ||b||) ([`backward_error`]), which partial pivoting keeps near
//! the rounding unit.

pub mod blocked;
pub mod classic;
pub mod cpu;
pub mod mixed;

use crate::Scalar;
use crate::dense::DenseMatrix;
use crate::error::{Error, Result};
use crate::gpu::{self, CudaSlice, Gpu, Launch, MatrixView, MatrixViewMut};
use crate::kernels::solve as kernels;
use crate::memory::Footprint;

/// Checks that `a` is square and finite and `b` holds `nrhs` finite right-hand sides (n x nrhs,
/// row-major); returns the pivot tolerance for `a`.
pub fn check_system<T: Scalar>(a: &DenseMatrix<T>, b: &[T], nrhs: usize) -> Result<f64> {
    let n = a.rows;
    if a.cols != n {
        return Err(Error::InvalidInput(format!(
            "solving A x = b needs a square matrix, got {} x {}",
            a.rows, a.cols
        )));
    }
    if Some(b.len()) != n.checked_mul(nrhs) {
        return Err(Error::InvalidInput(format!(
            "the right-hand side of a {n} x {n} system with {nrhs} column(s) needs {} values, got {}",
            n.saturating_mul(nrhs),
            b.len()
        )));
    }
    let mut max_abs = 0.0f64;
    for (i, &v) in a.data.iter().enumerate() {
        if !v.is_finite() {
            return Err(Error::InvalidInput(format!(
                "A[{}][{}] is {v:?}: the matrix must be finite",
                i / n,
                i % n
            )));
        }
        max_abs = max_abs.max(v.abs().into());
    }
    if let Some(i) = b.iter().position(|v| !v.is_finite()) {
        return Err(Error::InvalidInput(format!(
            "b[{}][{}] is {:?}: the right-hand side must be finite",
            i / nrhs,
            i % nrhs,
            b[i]
        )));
    }
    Ok(pivot_tolerance::<T>(n, max_abs))
}

/// The smallest usable pivot: n eps max|A|. A pivot that small is at the level of the
/// rounding errors of the elimination itself, so the column it would eliminate is, to working
/// precision, a combination of the columns before it (LAPACK stops only at exact zeros, which
/// rounding rarely produces).
pub fn pivot_tolerance<T: Scalar>(n: usize, max_abs: f64) -> f64 {
    n as f64 * T::EPSILON * max_abs
}

/// The error for a singular column.
pub fn singular(column: usize, tolerance: f64) -> Error {
    Error::Singular { column, tolerance }
}

/// ||A X - B|| / (||A|| ||X|| + ||B||) in the infinity norm, computed in f64, for X and B
/// n x nrhs (row-major); the largest over the right-hand sides.
pub fn backward_error<T: Scalar>(a: &DenseMatrix<T>, x: &[T], b: &[T], nrhs: usize) -> f64 {
    let n = a.rows;
    assert!(a.cols == n && x.len() == n * nrhs && b.len() == n * nrhs, "backward_error: shapes differ");
    let norm_a = a
        .data
        .chunks(n.max(1))
        .map(|row| row.iter().map(|&v| v.abs().into()).sum::<f64>())
        .fold(0.0, f64::max);
    let column_max = |v: &[T], r: usize| (0..n).map(|i| v[i * nrhs + r].abs().into()).fold(0.0f64, f64::max);
    (0..nrhs)
        .map(|r| {
            let residual = (0..n)
                .map(|i| {
                    let row = &a.data[i * n..(i + 1) * n];
                    let ax: f64 =
                        row.iter().enumerate().map(|(j, &v)| v.into() * x[j * nrhs + r].into()).sum();
                    (ax - b[i * nrhs + r].into()).abs()
                })
                .fold(0.0, f64::max);
            backward_error_of_norms(residual, norm_a, column_max(x, r), column_max(b, r))
        })
        .fold(0.0, f64::max)
}

/// ||r|| / (||A|| ||x|| + ||b||) from the norms (the residual itself where the denominator is
/// 0); NaN stays NaN.
pub fn backward_error_of_norms(norm_r: f64, norm_a: f64, norm_x: f64, norm_b: f64) -> f64 {
    let scale = norm_a * norm_x + norm_b;
    if scale > 0.0 { norm_r / scale } else { norm_r }
}

/// What a backward-stable solve reaches: 45 n eps (1e-14 n in f64), far above what partial
/// pivoting gives on the test matrices, far below what a wrong result gives.
pub fn backward_error_bound<T: Scalar>(n: usize) -> f64 {
    45.0 * n.max(1) as f64 * T::EPSILON
}

/// A manufactured system: A with entries uniform in [-1, 1), a chosen solution X of
/// `nrhs` columns (uniform in [-1, 1)) and B = A X (computed in f64, then rounded to T).
/// Rows are generated in parallel, each from its own seed, so any size is quick. A system
/// larger than the host's available memory is an error before anything is allocated.
pub fn manufactured_system<T: Scalar>(
    n: usize,
    nrhs: usize,
    seed: u64,
) -> Result<(DenseMatrix<T>, Vec<T>, Vec<T>)> {
    let (n2, columns) = (n as u128 * n as u128, n as u128 * nrhs as u128);
    Footprint::new(format!("a manufactured {n} x {n} system with {nrhs} right-hand side(s)"))
        .host::<T>(n2 + 2 * columns)
        .check_host()?;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};
    use rayon::prelude::*;
    let random_rows = |rows: usize, cols: usize, salt: u64| -> Vec<T> {
        let mut values = vec![T::ZERO; rows * cols];
        values.par_chunks_mut(cols.max(1)).enumerate().for_each(|(i, row)| {
            let mut rng = StdRng::seed_from_u64(seed ^ salt ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            row.iter_mut().for_each(|v| *v = T::from_f64(rng.random_range(-1.0..1.0)));
        });
        values
    };
    let a = DenseMatrix { rows: n, cols: n, data: random_rows(n, n, 0x5eed_0a0a) };
    let x = random_rows(n, nrhs, 0x5eed_0b0b);
    let b = times(&a, &x, nrhs);
    Ok((a, x, b))
}

/// A X (X n x nrhs, row-major), each entry summed in f64 and then rounded to T, rows in
/// parallel.
fn times<T: Scalar>(a: &DenseMatrix<T>, x: &[T], nrhs: usize) -> Vec<T> {
    use rayon::prelude::*;
    let n = a.cols;
    let mut b = vec![T::ZERO; a.rows * nrhs];
    b.par_chunks_mut(nrhs.max(1)).enumerate().for_each(|(i, row)| {
        for (r, out) in row.iter_mut().enumerate() {
            let sum: f64 = (0..n).map(|j| a.data[i * n + j].into() * x[j * nrhs + r].into()).sum();
            *out = T::from_f64(sum);
        }
    });
    b
}

/// As [`manufactured_system`] with one right-hand side and n added to the diagonal: a strictly
/// diagonally dominant, well-conditioned system (the rows' off-diagonal sums are about n / 2),
/// where a low-precision factorisation refines in a few steps.
pub fn dominant_system<T: Scalar>(n: usize, seed: u64) -> Result<(DenseMatrix<T>, Vec<T>, Vec<T>)> {
    let (mut a, x, _) = manufactured_system::<T>(n, 1, seed)?;
    for i in 0..n {
        a.set(i, i, T::from_f64(a.get(i, i).into() + n as f64));
    }
    let b = times(&a, &x, 1);
    Ok((a, x, b))
}

/// The GPU solvers of this module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolveKernel {
    /// The Milan report: its four kernels per column and its single-thread back substitution.
    Classic,
    /// The report's elimination with the parallel back substitution (the triangular solve).
    ClassicParallel,
    /// Blocked right-looking LU (tensor-core update for f64) and getrs.
    Blocked,
    /// f64 only: an f32 LU with TF32 trailing updates, refined in f64 ([`mixed`]).
    Mixed,
}

impl SolveKernel {
    pub const ALL: [SolveKernel; 4] =
        [SolveKernel::Classic, SolveKernel::ClassicParallel, SolveKernel::Blocked, SolveKernel::Mixed];

    pub fn name(self) -> &'static str {
        match self {
            SolveKernel::Classic => "classic",
            SolveKernel::ClassicParallel => "classic-parallel",
            SolveKernel::Blocked => "blocked",
            SolveKernel::Mixed => "mixed",
        }
    }

    pub fn from_name(name: &str) -> Option<SolveKernel> {
        SolveKernel::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Solves A x = b on the GPU with `kernel`: checks the input, uploads it, solves, checks the
/// pivots and downloads x.
pub fn solve<T: Scalar>(gpu: &Gpu, kernel: SolveKernel, a: &DenseMatrix<T>, b: &[T]) -> Result<Vec<T>> {
    let tolerance = check_system(a, b, 1)?;
    let n = a.rows;
    if n == 0 {
        return Ok(Vec::new());
    }
    // A, b, x and the factor (the classic solver's augmented matrix is about as large).
    let (n2, n1) = ((n + 32) as u128 * (n + 32) as u128, n as u128);
    Footprint::new(format!("the {} solve of size {n}", kernel.name()))
        .device::<T>(2 * n2 + 4 * n1)
        .check_device(gpu)?;
    let (da, db) = (gpu.upload(&a.data)?, gpu.upload(b)?);
    let mut dx = gpu.filled(n, T::from_f64(f64::NAN))?;
    match kernel {
        SolveKernel::Classic | SolveKernel::ClassicParallel => {
            let back = if kernel == SolveKernel::Classic {
                classic::BackSubstitution::Serial
            } else {
                classic::BackSubstitution::Parallel
            };
            let mut solver = classic::ClassicSolver::new(gpu, n, tolerance)?;
            solver.solve(gpu, back, &da, &db, &mut dx)?;
            solver.check(gpu)?;
        }
        SolveKernel::Blocked => {
            let mut lu = blocked::BlockedLu::new(gpu, n, tolerance)?;
            lu.factor(gpu, &da)?;
            lu.check(gpu)?;
            lu.solve(gpu, 1, &db, &mut dx)?;
        }
        SolveKernel::Mixed => {
            let f64_buffers = (gpu::as_f64(&da), gpu::as_f64(&db), gpu::as_f64_mut(&mut dx));
            let (Some(a), Some(b), Some(x)) = f64_buffers else {
                return Err(Error::InvalidInput("the mixed-precision solve is f64 only".into()));
            };
            mixed::MixedSolver::new(gpu, n, tolerance)?.solve(gpu, a, b, x)?;
        }
    }
    gpu.download(&dx)
}

/// Solves A X = B for `nrhs` right-hand sides (B n x nrhs, row-major) with the blocked LU.
pub fn solve_many<T: Scalar>(gpu: &Gpu, a: &DenseMatrix<T>, b: &[T], nrhs: usize) -> Result<Vec<T>> {
    let tolerance = check_system(a, b, nrhs)?;
    let n = a.rows;
    if n == 0 || nrhs == 0 {
        return Ok(Vec::new());
    }
    let (da, db) = (gpu.upload(&a.data)?, gpu.upload(b)?);
    let mut dx = gpu.filled(n * nrhs, T::from_f64(f64::NAN))?;
    let mut lu = blocked::BlockedLu::new(gpu, n, tolerance)?;
    lu.factor(gpu, &da)?;
    lu.check(gpu)?;
    lu.solve(gpu, nrhs, &db, &mut dx)?;
    gpu.download(&dx)
}

/// Checks that an n x n matrix fits the kernels' u32 indices (with room for padding).
pub(crate) fn check_gpu_size(n: usize) -> Result<u32> {
    let padded = n.checked_add(64).and_then(|p| p.checked_mul(p));
    match padded {
        Some(p) if p <= u32::MAX as usize => Ok(n as u32),
        _ => Err(Error::InvalidInput(format!("n = {n}: the GPU solvers take n x n below 2^32 elements"))),
    }
}

/// The pivot check every GPU factorisation ends with: zeroes `info`, then records the first
/// column k whose |lu[k][k]| is not above `tolerance` (as n - k; 0 when none).
pub(crate) fn queue_pivot_check<T: Scalar>(
    gpu: &Gpu,
    lu: MatrixView<'_, T>,
    tolerance: f64,
    info: &mut CudaSlice<u32>,
) -> Result<()> {
    gpu.memset_zeros(info)?;
    let n = lu.rows().min(lu.cols());
    // SAFETY: reads the n diagonal entries of the view; info is one word.
    unsafe { kernels::pivots::check(gpu, Launch::linear(n, 256), n as u32, lu, T::from_f64(tolerance), info) }
}

/// Waits for the queued work and turns the pivot check's `info` into [`Error::Singular`].
pub(crate) fn read_pivot_check(gpu: &Gpu, n: usize, tolerance: f64, info: &CudaSlice<u32>) -> Result<()> {
    match gpu.download(info)?[0] as usize {
        0 => Ok(()),
        from_end => Err(singular(n - from_end, tolerance)),
    }
}

/// X = T^-1 B with the n x n triangle of `a` (lower or upper, unit diagonal or not) for the
/// columns of `b` and `x` (n x nrhs each), each 32 x 32 diagonal block solved by substitution,
/// or `by_inverse` (for an iterative refinement's own solves: a shorter chain, not backward
/// stable). `published` holds the words x is also published in (`triangular_words`), none
/// tagged `epoch`.
#[allow(clippy::too_many_arguments)] // the TRSM shape: three blocks, the triangle's kind, words
pub(crate) fn queue_triangular_solve<T: Scalar>(
    gpu: &Gpu,
    a: MatrixView<'_, T>,
    b: MatrixView<'_, T>,
    x: MatrixViewMut<'_, T>,
    upper: bool,
    unit_diagonal: bool,
    by_inverse: bool,
    published: &mut CudaSlice<u64>,
    epoch: u32,
) -> Result<()> {
    let (n, nrhs) = (a.rows(), b.cols());
    if a.cols() != n || b.rows() != n || x.rows() != n || x.cols() != nrhs {
        return Err(Error::InvalidInput(format!(
            "triangular solve: a {} x {} triangle with B {} x {} and X {} x {}",
            a.rows(),
            a.cols(),
            b.rows(),
            b.cols(),
            x.rows(),
            x.cols()
        )));
    }
    if published.len() < triangular_words::<T>(n, nrhs) {
        return Err(Error::InvalidInput(format!(
            "triangular solve: {} words to publish x in, for {n} rows x {nrhs} right-hand sides",
            published.len()
        )));
    }
    if nrhs > 65_535 {
        return Err(Error::InvalidInput(format!("{nrhs} right-hand sides (65535 at most)")));
    }
    let launch = triangular_launch::<T>(n, 1, nrhs as u32);
    let (upper, unit, by_inverse) = (upper as u32, unit_diagonal as u32, by_inverse as u32);
    // SAFETY: the views were checked against their buffers and against each other above; the
    // words too.
    unsafe {
        kernels::triangular::triangular(
            gpu, launch, n as u32, a, b, x, upper, unit, by_inverse, published, epoch,
        )
    }
}

/// out (cols x rows) = a^T for a row-major rows x cols matrix: a row-major matrix's storage
/// as a column-major one, for cuSOLVER.
pub(crate) fn queue_transpose<T: Scalar>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    a: &CudaSlice<T>,
    out: &mut CudaSlice<T>,
) -> Result<()> {
    if a.len() != rows * cols || out.len() != rows * cols || rows * cols > u32::MAX as usize {
        return Err(Error::InvalidInput(format!(
            "transpose of {rows} x {cols} with buffers of {} and {} values",
            a.len(),
            out.len()
        )));
    }
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    use abi::solve::{TRANSPOSE_ROWS, TRANSPOSE_TILE};
    let tiles = |len: usize| len.div_ceil(TRANSPOSE_TILE as usize) as u32;
    let launch = Launch::grid_2d((tiles(cols), tiles(rows)), (TRANSPOSE_TILE, TRANSPOSE_ROWS))
        .shared(abi::solve::transpose_shared_bytes(size_of::<T>()));
    // SAFETY: both buffers hold rows x cols values (checked).
    unsafe { kernels::transpose::transpose(gpu, launch, rows as u32, cols as u32, a, out) }
}

/// The launch of the triangular solve's kernels: `blocks_per_chunk` blocks for each 32-row chunk
/// of n rows (the solve's, then any more, as `refine::backward_residual` has), a grid row per
/// right-hand side.
pub(crate) fn triangular_launch<T: Scalar>(n: usize, blocks_per_chunk: u32, nrhs: u32) -> Launch {
    let chunks = n.div_ceil(abi::solve::TRIANGULAR_CHUNK as usize) as u32;
    Launch::grid_2d((blocks_per_chunk * chunks, nrhs), (abi::solve::TRIANGULAR_THREADS, 1))
        .shared(abi::solve::triangular_shared_bytes(size_of::<T>()))
}

/// The tagged words a triangular solve publishes x in (n rows, nrhs right-hand sides).
pub(crate) fn triangular_words<T: Scalar>(n: usize, nrhs: usize) -> usize {
    abi::solve::triangular_exchange_words(n, nrhs, size_of::<T>()).max(1)
}

/// The next epoch of a flag or tag buffer (never 0, the value of fresh words).
pub(crate) fn next_epoch(epoch: &mut u32) -> u32 {
    *epoch = epoch.wrapping_add(1).max(1);
    *epoch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_round_trip() {
        for k in SolveKernel::ALL {
            assert_eq!(SolveKernel::from_name(k.name()), Some(k));
        }
        assert_eq!(SolveKernel::from_name("cusolver"), None);
    }

    #[test]
    fn backward_error_of_an_exact_solution_is_zero() {
        let a = DenseMatrix::new(2, 2, vec![2.0, 1.0, 1.0, 3.0]).unwrap();
        let (x, b) = ([1.0, 2.0], [4.0, 7.0]);
        assert_eq!(backward_error(&a, &x, &b, 1), 0.0);
        // ||A x - b|| = 1 against ||A|| ||x|| + ||b|| = 4 * 2 + 7.
        assert!((backward_error(&a, &[1.0, 2.0], &[5.0, 7.0], 1) - 1.0 / 15.0).abs() < 1e-15);
    }

    #[test]
    fn epochs_skip_zero() {
        let mut e = u32::MAX;
        assert_eq!(next_epoch(&mut e), 1);
        assert_eq!(next_epoch(&mut e), 2);
    }
}
