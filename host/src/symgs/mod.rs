//! Symmetric Gauss-Seidel (SymGS), the smoother of HPCG: a forward sweep over the rows, then
//! a backward one, each row `x[i] = (r[i] - sum_{j != i} a_ij x[j]) / a_ii` with the newest x.
//!
//! - [`cpu`]: the sequential references (general, and the GPU101 report's variant).
//! - [`ready_done`]: the report's GPU algorithm (ready/done flags, a host loop): the baseline.
//! - [`levels`]: level scheduling, one launch per level, optionally one CUDA graph per sweep.
//! - [`level_copies`]: level scheduling on a copy of the matrix grouped by forward level, the
//!   backward sweep reusing r minus the forward's lower sums (few, wide levels: a renumbered
//!   mesh).
//! - [`sync_free`]: one launch per sweep direction, rows waiting on per-row done flags (or,
//!   faster, on the values themselves).
//! - [`multicolor`]: a *different* smoother (rows reordered by color, colored on the GPU), one
//!   launch per color, replayed from a CUDA graph; colors of many short, even rows read in
//!   sliced-ELL form.
//! - [`pcg`]: conjugate gradients preconditioned by one sweep (HPCG-like).
//! - `vendor::cusparse_spsv`: the same sweep from cuSPARSE triangular solves (the baseline).
//!
//! The first three keep the sequential row order and match [`cpu::CpuSymgs::sweep`] to
//! rounding; they run out of place as the report does (forward x -> tmp, backward tmp -> x; see
//! `kernels/src/symgs/mod.rs`), which keeps them exact for unsymmetric patterns too.

mod blocks;
pub mod cpu;
pub mod level_copies;
pub mod levels;
pub mod multicolor;
pub mod pcg;
pub mod ready_done;
pub mod sync_free;

pub use cpu::Direction;

use std::sync::OnceLock;

use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu};
use crate::sparse::Csr;
use crate::spmv::csr::DeviceCsr;

/// A matrix ready for the GPU smoothers: checked once (square, every diagonal entry stored and
/// nonzero, every value finite), on the device with its diagonal. `csr` also serves PCG's
/// SpMV (its adaptive kernel is tuned at upload).
pub struct SymgsMatrix<T> {
    pub rows: usize,
    pub csr: DeviceCsr<T>,
    pub diagonal: CudaSlice<T>,
    /// Whether the pattern is structurally symmetric, once a smoother has asked.
    symmetric_pattern: OnceLock<bool>,
}

impl<T: Scalar> SymgsMatrix<T> {
    pub fn upload(gpu: &Gpu, a: &Csr<T>) -> Result<Self> {
        let diagonal = cpu::checked_diagonal(a)?;
        Ok(SymgsMatrix {
            rows: a.rows(),
            csr: DeviceCsr::upload(gpu, a)?,
            diagonal: gpu.upload(&diagonal)?,
            symmetric_pattern: OnceLock::new(),
        })
    }

    /// Whether a_ij is stored wherever a_ji is (level copies, node blocks and the coloring
    /// need to know): checked on the GPU the first time it is asked.
    pub(crate) fn pattern_symmetric(&self, gpu: &Gpu) -> Result<bool> {
        if let Some(&symmetric) = self.symmetric_pattern.get() {
            return Ok(symmetric);
        }
        let symmetric = multicolor::pattern_symmetric(gpu, self.rows, &self.csr.row_ptr, &self.csr.col_idx)?;
        Ok(*self.symmetric_pattern.get_or_init(|| symmetric))
    }

    /// Checks that r and x have one value per row.
    pub(crate) fn check_vectors(&self, r: Option<&CudaSlice<T>>, x: &CudaSlice<T>) -> Result<()> {
        check_lengths(self.rows, r.map_or(self.rows, |r| r.len()), x.len())
    }
}

/// Checks that r and x (of `r_len` and `x_len` values) have one value per row.
pub(crate) fn check_lengths(rows: usize, r_len: usize, x_len: usize) -> Result<()> {
    if r_len != rows || x_len != rows {
        return Err(Error::InvalidInput(format!(
            "SymGS on {rows} rows needs r and x of {rows} values, got r {r_len} and x {x_len}"
        )));
    }
    Ok(())
}

/// A GPU smoother: one symmetric sweep at a time, queued on the GPU's stream.
pub trait Smoother<T: Scalar> {
    /// The name in tests and reports ("level-schedule", ...).
    fn name(&self) -> String;

    /// Whether it keeps the sequential row order (so matches the CPU sweep to rounding);
    /// false for a reordered smoother such as multicolor.
    fn exact_order(&self) -> bool;

    /// The order a reordered smoother visits the rows in (row `order[k]` k-th, then back); None
    /// where it keeps A's own. Its sweeps match the CPU sweep in that order to rounding
    /// ([`cpu::CpuSymgs::sweep_in`]).
    fn row_order(&self, _gpu: &Gpu) -> Result<Option<Vec<u32>>> {
        Ok(None)
    }

    /// One symmetric sweep on A x = r: forward then backward, x updated in place. The
    /// vectors must hold finite values (check them on the host with [`cpu::check_vector`]).
    fn sweep(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()>;

    /// `count` symmetric sweeps, one after the other: what `count` calls of [`Smoother::sweep`]
    /// give. Smoothers that carry work from one sweep to the next do (multicolor and level
    /// copies: each sweep after the first skips a launch and reads each entry once, its
    /// forward half taking the upper sums the backward half before it kept).
    fn sweeps(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>, count: usize) -> Result<()> {
        (0..count).try_for_each(|_| self.sweep(gpu, r, x))
    }

    /// One symmetric sweep from x = 0 (a preconditioner's), into x: what [`Smoother::sweep`]
    /// gives after x is zeroed. Smoothers that can skip the products with those zeros do.
    fn sweep_from_zero(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        gpu.memset_zeros(x)?;
        self.sweep(gpu, r, x)
    }
}

/// The right-hand side of a half-sweep: the given r, or (the GPU101 report's variant) the
/// vector the half-sweep reads its old values from, i.e. x as it stands when it starts.
pub(crate) fn rhs_of<'a, T>(r: Option<&'a CudaSlice<T>>, old: &'a CudaSlice<T>) -> &'a CudaSlice<T> {
    r.unwrap_or(old)
}

/// 1 for the forward direction, 0 for the backward one: the kernels' `forward` argument.
pub(crate) fn forward_flag(direction: Direction) -> u32 {
    (direction == Direction::Forward) as u32
}
