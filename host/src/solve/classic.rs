//! The Milan report's solver on the GPU (`kernels/src/solve/classic.rs`): the augmented matrix
//! [A | b] in a len x len buffer (len = n + 1 rounded up to a multiple of 32), then for each
//! column four launches (findmax, getmax, pivoting, eliminate), then back substitution in one
//! thread as the report did ([`BackSubstitution::Serial`]) or by the parallel triangular
//! solve ([`BackSubstitution::Parallel`]).

use super::{
    check_gpu_size, next_epoch, queue_pivot_check, queue_triangular_solve, read_pivot_check, triangular_words,
};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch, MatrixView, MatrixViewMut};
use crate::kernels::solve::classic as kernels;
use crate::memory::Footprint;

/// How the triangular system left by the elimination is solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackSubstitution {
    /// The report's `solveCuda`: one GPU thread.
    Serial,
    /// 32-row chunks solved in dependency order by the blocks of one launch.
    Parallel,
}

/// Threads per block of the report's 1D kernels (its THREADS1).
const THREADS_1D: u32 = 1024;
/// The side of the report's 2D blocks (its THREADS).
const THREADS_2D: u32 = 32;

/// The report's solver for one size n, with its device buffers allocated once.
pub struct ClassicSolver<T> {
    n: usize,
    len: usize,
    tolerance: f64,
    /// The augmented matrix, len x len.
    m: CudaSlice<T>,
    /// Each findmax block's maximum and its row (slot 0: the pivot, after getmax).
    block_max: CudaSlice<T>,
    block_row: CudaSlice<u32>,
    /// The tagged words the parallel back substitution publishes x in.
    published: CudaSlice<u64>,
    epoch: u32,
    info: CudaSlice<u32>,
}

impl<T: Scalar> ClassicSolver<T> {
    /// Buffers for an n x n system; `tolerance` is the smallest usable pivot
    /// (`solve::check_system` computes it).
    pub fn new(gpu: &Gpu, n: usize, tolerance: f64) -> Result<ClassicSolver<T>> {
        check_gpu_size(n)?;
        let len = (n + 1).div_ceil(THREADS_2D as usize) * THREADS_2D as usize;
        let blocks = len.div_ceil(THREADS_1D as usize);
        Footprint::new(format!("the classic solver of size {n}"))
            .device::<T>(len as u128 * len as u128 + blocks as u128)
            .check_device(gpu)?;
        Ok(ClassicSolver {
            n,
            len,
            tolerance,
            m: gpu.zeros(len * len)?,
            block_max: gpu.zeros(blocks)?,
            block_row: gpu.zeros(blocks)?,
            published: gpu.zeros(triangular_words::<T>(n, 1))?,
            epoch: 0,
            info: gpu.zeros(1)?,
        })
    }

    /// Queues the solve of A x = b (A n x n row-major, b and x n values, device buffers).
    /// Call [`ClassicSolver::check`] before using x: it reports a singular matrix.
    pub fn solve(
        &mut self,
        gpu: &Gpu,
        back: BackSubstitution,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        x: &mut CudaSlice<T>,
    ) -> Result<()> {
        let (n, len) = (self.n, self.len);
        if a.len() != n * n || b.len() != n || x.len() != n {
            return Err(Error::InvalidInput(format!(
                "classic solve of size {n} needs A of {} values and b, x of {n}, got {}, {} and {}",
                n * n,
                a.len(),
                b.len(),
                x.len()
            )));
        }
        if n == 0 {
            return Ok(());
        }
        let (n32, len32) = (n as u32, len as u32);
        let tiles = len32 / THREADS_2D;
        let grid_2d = Launch::grid_2d((tiles, tiles), (THREADS_2D, THREADS_2D));
        let blocks = len32.div_ceil(THREADS_1D);
        let findmax_launch =
            Launch::linear(len, THREADS_1D).shared(THREADS_1D as usize * (size_of::<T>() + 4));
        let one_thread = Launch::linear(1, 1);
        let row_launch = Launch::linear(len, THREADS_1D);
        let m = &mut self.m;
        let (block_max, block_row) = (&mut self.block_max, &mut self.block_row);
        // SAFETY (every launch below): m is len x len, block_max and block_row hold one slot
        // per findmax block, a is n x n and b holds n values.
        unsafe {
            kernels::augment(gpu, grid_2d, n32, len32, a, b, m)?;
            for col in 0..n32.saturating_sub(1) {
                kernels::findmax(gpu, findmax_launch, len32, m, col, block_max, block_row)?;
                kernels::getmax(gpu, one_thread, blocks, block_max, block_row)?;
                kernels::pivoting(gpu, row_launch, len32, m, col, block_max, block_row)?;
                kernels::eliminate(gpu, grid_2d, len32, m, col)?;
            }
        }
        queue_pivot_check::<T>(gpu, MatrixView::new(&self.m, 0, n, n, len)?, self.tolerance, &mut self.info)?;
        match back {
            BackSubstitution::Serial => {
                // SAFETY: m is len x len, x holds n values.
                unsafe { kernels::back_substitution(gpu, one_thread, n32, len32, &mut self.m, x) }
            }
            BackSubstitution::Parallel => {
                // U is the upper triangle of m; the right-hand side its column n.
                let epoch = next_epoch(&mut self.epoch);
                let u = MatrixView::new(&self.m, 0, n, n, len)?;
                let b = MatrixView::new(&self.m, n, n, 1, len)?;
                let x = MatrixViewMut::new(x, 0, n, 1, 1)?;
                queue_triangular_solve(gpu, u, b, x, true, false, false, &mut self.published, epoch)
            }
        }
    }

    /// Waits for the solve; a column without a usable pivot is [`Error::Singular`].
    pub fn check(&self, gpu: &Gpu) -> Result<()> {
        read_pivot_check(gpu, self.n, self.tolerance, &self.info)
    }
}
