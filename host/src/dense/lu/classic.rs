//! The Milan report's solver on the GPU (`kernels/src/lu/classic.rs`): the augmented matrix
//! [A | b] in a len x len buffer (len = n + 1 rounded up to a multiple of 32), then for each
//! column four launches (findmax, getmax, pivoting, eliminate), then back substitution in one
//! thread as the report did ([`BackSubstitution::Serial`]) or by the parallel triangular
//! solve ([`BackSubstitution::Parallel`]).

use super::{
    address, check_gpu_size, next_epoch, queue_pivot_check, queue_triangular_solve, read_pivot_check,
};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch, PushKernelArg};

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
    flags: CudaSlice<u32>,
    epoch: u32,
    info: CudaSlice<u32>,
}

impl<T: Scalar> ClassicSolver<T> {
    /// Buffers for an n x n system; `tolerance` is the smallest usable pivot
    /// (`lu::check_system` computes it).
    pub fn new(gpu: &Gpu, n: usize, tolerance: f64) -> Result<ClassicSolver<T>> {
        check_gpu_size(n)?;
        let len = (n + 1).div_ceil(THREADS_2D as usize) * THREADS_2D as usize;
        let blocks = len.div_ceil(THREADS_1D as usize);
        Ok(ClassicSolver {
            n,
            len,
            tolerance,
            m: gpu.zeros(len * len)?,
            block_max: gpu.zeros(blocks)?,
            block_row: gpu.zeros(blocks)?,
            flags: gpu.zeros(n.div_ceil(32).max(1))?,
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
        let name = |names| gpu.kernel(T::pick(names));
        let augment = name(("lu_classic_augment_f32", "lu_classic_augment_f64"))?;
        let findmax = name(("lu_classic_findmax_f32", "lu_classic_findmax_f64"))?;
        let getmax = name(("lu_classic_getmax_f32", "lu_classic_getmax_f64"))?;
        let pivoting = name(("lu_classic_pivoting_f32", "lu_classic_pivoting_f64"))?;
        let eliminate = name(("lu_classic_eliminate_f32", "lu_classic_eliminate_f64"))?;

        let (n32, len32) = (n as u32, len as u32);
        let tiles = len32 / THREADS_2D;
        let grid_2d = Launch::grid_2d((tiles, tiles), (THREADS_2D, THREADS_2D));
        let blocks = len32.div_ceil(THREADS_1D);
        let findmax_launch = Launch {
            grid: (blocks, 1, 1),
            block: (THREADS_1D, 1, 1),
            shared_bytes: THREADS_1D * (size_of::<T>() as u32 + 4),
        };
        let one_thread = Launch::linear(1, 1);
        let row_launch = Launch::linear(len, THREADS_1D);
        let m = &mut self.m;
        let (block_max, block_row) = (&mut self.block_max, &mut self.block_row);
        // SAFETY (every launch below): the arguments follow the kernels' signatures in
        // kernels/src/lu/classic.rs; m is len x len, block_max and block_row hold one slot per
        // findmax block, a is n x n and b holds n values.
        unsafe {
            gpu.launch(&augment, grid_2d, |args| {
                args.arg(&n32).arg(&len32).arg(a).arg(b).arg(&mut *m);
            })?;
            for col in 0..n32.saturating_sub(1) {
                gpu.launch(&findmax, findmax_launch, |args| {
                    args.arg(&len32).arg(&*m).arg(&col).arg(&mut *block_max).arg(&mut *block_row);
                })?;
                gpu.launch(&getmax, one_thread, |args| {
                    args.arg(&blocks).arg(&mut *block_max).arg(&mut *block_row);
                })?;
                gpu.launch(&pivoting, row_launch, |args| {
                    args.arg(&len32).arg(&mut *m).arg(&col).arg(&*block_max).arg(&*block_row);
                })?;
                gpu.launch(&eliminate, grid_2d, |args| {
                    args.arg(&len32).arg(&mut *m).arg(&col);
                })?;
            }
        }
        let m_at = address(gpu, &self.m, 0);
        queue_pivot_check::<T>(gpu, n, m_at, len, self.tolerance, &mut self.info)?;
        match back {
            BackSubstitution::Serial => {
                let kernel = name(("lu_classic_back_substitution_f32", "lu_classic_back_substitution_f64"))?;
                let m = &mut self.m;
                // SAFETY: back_substitution(n, len, m, x) with m len x len and x n values.
                unsafe {
                    gpu.launch(&kernel, one_thread, |args| {
                        args.arg(&n32).arg(&len32).arg(m).arg(x);
                    })
                }
            }
            BackSubstitution::Parallel => {
                // U is the upper triangle of m; the right-hand side its column n.
                let epoch = next_epoch(&mut self.epoch);
                let x_at = address(gpu, x, 0);
                queue_triangular_solve::<T>(
                    gpu,
                    n,
                    1,
                    (m_at, len),
                    (address(gpu, &self.m, n), len),
                    (x_at, 1),
                    true,
                    false,
                    &mut self.flags,
                    epoch,
                )
            }
        }
    }

    /// Waits for the solve; a column without a usable pivot is [`Error::Singular`].
    pub fn check(&self, gpu: &Gpu) -> Result<()> {
        read_pivot_check(gpu, self.n, self.tolerance, &self.info)
    }
}
