//! Mixed-precision solve: the f64 answer of A x = b from an f32 factorisation on tensor cores.
//!
//! A is rounded to f32 and factored by the blocked LU with partial pivoting, its trailing
//! updates on TF32 tensor cores (`UpdateKernel::Wgmma` on H100 and H200, else `Pipelined`).
//! Then iterative refinement in f64 (`kernels/src/solve/refine.rs`): the residual r = b - A x
//! in f64 on the GPU, the correction A d = r solved through the f32 factors (r scaled into
//! f32's range first), x += d in f64, until the backward error ||r|| / (||A|| ||x|| + ||b||) is
//! below sqrt(n) eps, cuSOLVER's criterion for its refinement solver (where progress stops before
//! that, it is enough to be below the f64 solve's threshold, [`backward_error_bound`]). Each
//! residual is computed beside the backward half of the solve before it, by more blocks of that
//! launch, as d's chunks land (`BlockedLu::solve_with_residual`), so that reading A overlaps
//! the solve's chain. Each step shrinks the error by about cond(A) times the factors' relative
//! error; where that is not below one (an ill-conditioned A, or a matrix singular in f32),
//! refinement stalls, and the solver falls back to the f64 blocked LU by itself and says so in
//! its [`Refinement`].

use super::blocked::{BlockedLu, NextResidual};
use super::{backward_error_bound, backward_error_of_norms, check_gpu_size};
use crate::error::{Error, Result};
use crate::gemm::update::UpdateKernel;
use crate::gpu::{CudaSlice, Gpu, Launch};
use crate::kernels::solve::refine as kernels;
use crate::memory::Footprint;

/// Refinement steps before giving up (LAPACK's dsgesv takes 30).
pub const MAX_ITERATIONS: usize = 30;
/// A step must at least halve the backward error, or refinement has stalled.
const MIN_REDUCTION: f64 = 0.5;

/// How the mixed solve reached its answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Path {
    /// Refinement of the f32 factors' solution reached the threshold.
    Refined,
    /// The f64 blocked LU solved it, because of `reason`.
    FellBack { reason: String },
}

/// What a mixed solve did.
#[derive(Clone, Debug, PartialEq)]
pub struct Refinement {
    /// Refinement steps taken with the f32 factors (each a residual and a correction).
    pub iterations: usize,
    pub path: Path,
    /// The backward error of the returned x.
    pub backward_error: f64,
}

impl std::fmt::Display for Refinement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.path {
            Path::Refined => write!(f, "refined in {} step(s)", self.iterations),
            Path::FellBack { reason } => {
                write!(f, "fell back to the f64 LU after {} step(s): {reason}", self.iterations)
            }
        }
    }
}

/// The buffers of the mixed solve of one n x n system.
pub struct MixedSolver {
    n: usize,
    /// The f64 pivot tolerance (n eps max|A|); the f32 factorisation uses f32's.
    tolerance: f64,
    /// The f32 LU, factored where A is rounded to f32 (its own buffer).
    lu: BlockedLu<f32>,
    /// A's absolute row sums (for ||A||).
    row_sums: CudaSlice<f64>,
    /// Two maxima of |values| read back at once ([`read_norms`]).
    norms: CudaSlice<f64>,
    residual: CudaSlice<f64>,
    residual_low: CudaSlice<f32>,
    correction: CudaSlice<f32>,
    /// The f64 LU, made on the first fallback.
    fallback: Option<BlockedLu<f64>>,
}

impl MixedSolver {
    /// Buffers for an n x n system; `tolerance` is the f64 pivot tolerance
    /// (`solve::check_system::<f64>` computes it).
    pub fn new(gpu: &Gpu, n: usize, tolerance: f64) -> Result<MixedSolver> {
        check_gpu_size(n)?;
        let n2 = n as u128 * n as u128;
        Footprint::new(format!("the mixed-precision solve of size {n}"))
            .device::<f32>(n2 + 3 * n as u128)
            .device::<f64>(2 * n as u128 + 2)
            .check_device(gpu)?;
        // Both tolerances are n eps max|A|, each with its own eps.
        let tolerance_low = tolerance * (f32::EPSILON as f64 / f64::EPSILON);
        let update = if gpu.ptx_name() == "sm_90a" { UpdateKernel::Wgmma } else { UpdateKernel::Pipelined };
        let lu = BlockedLu::<f32>::new(gpu, n, tolerance_low)?.with_update(update);
        Ok(MixedSolver {
            n,
            tolerance,
            lu,
            row_sums: gpu.zeros(n.max(1))?,
            norms: gpu.zeros(2)?,
            residual: gpu.zeros(n.max(1))?,
            residual_low: gpu.zeros(n.max(1))?,
            correction: gpu.zeros(n.max(1))?,
            fallback: None,
        })
    }

    /// The block column of the f32 LU (one of `blocked::BLOCK_COLUMNS`; default
    /// `blocked::default_block_column`).
    pub fn with_block_column(mut self, width: usize) -> Result<MixedSolver> {
        self.lu = self.lu.with_block_column(width)?;
        Ok(self)
    }

    /// The backward error the refinement stops at: sqrt(n) eps.
    pub fn threshold(&self) -> f64 {
        (self.n as f64).sqrt() * f64::EPSILON
    }

    /// Solves A x = b (A n x n row-major, b and x n values, all f64 on the device). A singular
    /// matrix is [`Error::Singular`] from the f64 LU, naming the column.
    pub fn solve(
        &mut self,
        gpu: &Gpu,
        a: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
    ) -> Result<Refinement> {
        let n = self.n;
        if a.len() != n * n || b.len() != n || x.len() != n {
            return Err(Error::InvalidInput(format!(
                "mixed solve of size {n} needs A of {} values and b, x of {n}, got {}, {} and {}",
                n * n,
                a.len(),
                b.len(),
                x.len()
            )));
        }
        if n == 0 {
            return Ok(Refinement { iterations: 0, path: Path::Refined, backward_error: 0.0 });
        }
        let n32 = n as u32;
        // A rounded to f32 straight into the LU's buffer, which it factors in place.
        let (low, ld) = self.lu.matrix_mut();
        // SAFETY: a holds n x n values, the LU's buffer n rows of `ld` >= n, row_sums n.
        unsafe {
            kernels::demote_matrix(
                gpu,
                Launch::warp_per_item(n, 8),
                n32,
                a,
                low,
                ld as u32,
                &mut self.row_sums,
            )?
        };
        self.lu.factor_in_place(gpu)?;
        let (norm_a, norm_b) = read_norms(gpu, &self.row_sums, b, &mut self.norms)?;
        match self.lu.check(gpu) {
            Err(Error::Singular { column, .. }) => {
                let reason = format!("column {column} (counting from 0) has no usable pivot in f32");
                return self.fall_back(gpu, a, b, x, 0, reason, (norm_a, norm_b));
            }
            other => other?,
        }

        gpu.memset_zeros(x)?;
        gpu.copy(b, &mut self.residual)?;
        let mut previous = f64::INFINITY;
        let mut iteration = 0;
        loop {
            // From the second step on, the residual was computed beside the last correction.
            let (norm_r, norm_x) = if iteration == 0 {
                (norm_b, 0.0)
            } else {
                read_norms(gpu, &self.residual, x, &mut self.norms)?
            };
            let error = backward_error_of_norms(norm_r, norm_a, norm_x, norm_b);
            if error <= self.threshold() {
                return Ok(Refinement { iterations: iteration, path: Path::Refined, backward_error: error });
            }
            // The first step goes from x = 0; from the second on, each must make progress.
            let stalled = !error.is_finite() || (iteration >= 2 && error > MIN_REDUCTION * previous);
            // Progress can stop at the rounding of the residual itself: an answer the f64 solve
            // would pass.
            if stalled && error <= backward_error_bound::<f64>(n) {
                return Ok(Refinement { iterations: iteration, path: Path::Refined, backward_error: error });
            }
            if stalled || iteration == MAX_ITERATIONS {
                let why = if stalled { "refinement stalled" } else { "refinement did not converge" };
                let reason =
                    format!("{why} at backward error {error:.2e} (threshold {:.2e})", self.threshold());
                return self.fall_back(gpu, a, b, x, iteration, reason, (norm_a, norm_b));
            }
            previous = error;
            // d = A^-1 r through the f32 factors, r scaled by a power of two (exactly) to a
            // maximum near one, so that small residuals do not underflow in f32.
            let scale = 2f64.powi(norm_r.log2().floor() as i32);
            // SAFETY: every vector holds n values.
            unsafe {
                kernels::demote_scaled(
                    gpu,
                    Launch::linear(n, 256),
                    n32,
                    &self.residual,
                    1.0 / scale,
                    &mut self.residual_low,
                )?;
            }
            let next = NextResidual { a, x, b, scale, r: &mut self.residual };
            self.lu.solve_with_residual(gpu, &self.residual_low, &mut self.correction, next)?;
            // SAFETY: as above.
            unsafe { kernels::add_correction(gpu, Launch::linear(n, 256), n32, &self.correction, scale, x)? };
            iteration += 1;
        }
    }

    /// Queues r = b - A x in f64.
    fn queue_residual(
        &mut self,
        gpu: &Gpu,
        a: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
    ) -> Result<()> {
        // SAFETY: a holds n x n values, the vectors n.
        unsafe {
            kernels::residual(
                gpu,
                Launch::warp_per_item(self.n, 8),
                self.n as u32,
                a,
                x,
                b,
                &mut self.residual,
            )
        }
    }

    /// Solves with the f64 blocked LU, for `reason`.
    #[allow(clippy::too_many_arguments)] // the system, the steps so far and why
    fn fall_back(
        &mut self,
        gpu: &Gpu,
        a: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
        iterations: usize,
        reason: String,
        (norm_a, norm_b): (f64, f64),
    ) -> Result<Refinement> {
        let lu = match &mut self.fallback {
            Some(lu) => lu,
            slot => slot.insert(BlockedLu::<f64>::new(gpu, self.n, self.tolerance)?),
        };
        lu.factor(gpu, a)?;
        lu.check(gpu)?;
        lu.solve(gpu, 1, b, x)?;
        self.queue_residual(gpu, a, b, x)?;
        let (norm_r, norm_x) = read_norms(gpu, &self.residual, x, &mut self.norms)?;
        let backward_error = backward_error_of_norms(norm_r, norm_a, norm_x, norm_b);
        Ok(Refinement { iterations, path: Path::FellBack { reason }, backward_error })
    }
}

/// max |u_i| and max |v_i| (NaN if any value is) for two vectors of one length, waiting for the
/// queued work: one small kernel and one 16-byte copy instead of both vectors' copies.
fn read_norms(
    gpu: &Gpu,
    u: &CudaSlice<f64>,
    v: &CudaSlice<f64>,
    norms: &mut CudaSlice<f64>,
) -> Result<(f64, f64)> {
    let launch = Launch::linear(1024, 1024).shared(32 * size_of::<u64>());
    let n = u.len().min(v.len()) as u32;
    // SAFETY: u and v hold at least n values, norms two.
    unsafe { kernels::max_abs_pair(gpu, launch, n, u, v, norms)? };
    let norms = gpu.download(norms)?;
    Ok((norms[0], norms[1]))
}
