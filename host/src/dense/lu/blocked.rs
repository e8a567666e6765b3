//! Blocked right-looking LU with partial pivoting on the GPU (`kernels/src/lu/blocked.rs`)
//! and getrs. For each panel of 64 (or 128) columns: the persistent panel kernel (pivot search, row
//! swaps across the whole matrix, elimination inside the panel), the triangular solve of the
//! block row to its right, and the trailing update A22 -= L21 U12 by the GEMM-update kernel
//! (`kernels/src/gemm/update.rs`: tensor cores for f64) in place with leading dimension n.
//! Then a check of the pivots, and for each solve: b permuted, L y = P b, U x = y.

use super::{
    address, check_gpu_size, next_epoch, queue_pivot_check, queue_triangular_solve, read_pivot_check,
};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch, PushKernelArg};

/// The panel widths the kernels are built for (their `NB`): the k of the trailing update.
pub const PANEL_WIDTHS: [usize; 2] = [64, 128];
/// The default. A panel of 128 halves the update's traffic through C, but costs more per
/// column in the panel: on an H100, n = 8192 took 70.6 ms with 64 and 74.2 ms with 128
/// (n = 16384: 296.5 and 295.8 ms).
pub const DEFAULT_PANEL_WIDTH: usize = 64;
const MAX_NB: usize = 128;
/// Threads per block of the panel and block-row kernels (the kernels' `THREADS`).
const THREADS: u32 = 256;
/// Fewest panel rows per block: below this, fewer blocks (fewer flags to wait for) win.
const MIN_ROWS_PER_BLOCK: usize = 32;
/// Most blocks of the panel kernel: one thread of each block waits for each block's flag,
/// and some threads must be left to apply the row swaps.
const MAX_PANEL_BLOCKS: usize = 192;

/// How the panel kernel's blocks exchange their pivot candidates each column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PanelExchange {
    /// A grid barrier per column (one atomic counter, one waiting thread per block): the
    /// default, and the faster (n = 8192 on an H100: 70.6 ms against 84.5 ms with flags).
    Barrier,
    /// Each block raises a flag per column; one thread per block waits for each block's flag.
    Flags,
}

/// The kernel of the trailing update C -= A B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateKernel {
    /// f64 tensor cores (mma.sync m8n8k4); f64 only.
    Dmma,
    /// Register-blocked FMAs, f32 and f64.
    Simt,
}

impl UpdateKernel {
    /// Tensor cores for f64, SIMT for f32.
    pub fn default_for<T: Scalar>() -> UpdateKernel {
        if T::NAME == "f64" { UpdateKernel::Dmma } else { UpdateKernel::Simt }
    }
}

/// The LU factors of one n x n matrix on the device, and the buffers to get and use them.
pub struct BlockedLu<T> {
    n: usize,
    tolerance: f64,
    update: UpdateKernel,
    panel_width: usize,
    exchange: PanelExchange,
    sms: usize,
    /// L (unit, below the diagonal) and U, row-major n x n.
    lu: CudaSlice<T>,
    /// LAPACK's ipiv (0-based): row i was swapped with row pivots[i] at step i.
    pivots: CudaSlice<u32>,
    /// Row i of P A is row perm[i] of A.
    perm: CudaSlice<u32>,
    /// The panel kernel's scratch: two candidate slots and flags per block, two diagonal rows;
    /// the flags' values so far (each panel column raises them to a new one).
    candidates: CudaSlice<T>,
    candidate_rows: CudaSlice<u32>,
    diagonal_rows: CudaSlice<T>,
    flags_panel: CudaSlice<u32>,
    panel_epoch: u32,
    /// One zeroed barrier word per panel (with [`PanelExchange::Barrier`]).
    barriers: CudaSlice<u32>,
    info: CudaSlice<u32>,
    /// getrs: flags of the triangular solves, and P b and L^-1 P b (grown to the widest B).
    flags: CudaSlice<u32>,
    epoch: u32,
    permuted: CudaSlice<T>,
    forward: CudaSlice<T>,
}

impl<T: Scalar> BlockedLu<T> {
    /// Buffers for an n x n matrix; `tolerance` is the smallest usable pivot
    /// (`lu::check_system` computes it).
    pub fn new(gpu: &Gpu, n: usize, tolerance: f64) -> Result<BlockedLu<T>> {
        check_gpu_size(n)?;
        let sms = gpu.props().sm_count.max(1) as usize;
        let lu = BlockedLu {
            n,
            tolerance,
            update: UpdateKernel::default_for::<T>(),
            panel_width: DEFAULT_PANEL_WIDTH,
            exchange: PanelExchange::Barrier,
            sms,
            lu: gpu.zeros(n * n)?,
            pivots: gpu.zeros(n)?,
            perm: gpu.zeros(n)?,
            candidates: gpu.zeros(2 * sms * (MAX_NB + 1))?,
            candidate_rows: gpu.zeros(2 * sms)?,
            diagonal_rows: gpu.zeros(2 * MAX_NB)?,
            flags_panel: gpu.zeros(2 * sms)?,
            panel_epoch: 0,
            barriers: gpu.zeros(n.div_ceil(PANEL_WIDTHS[0]).max(1))?,
            info: gpu.zeros(1)?,
            flags: gpu.zeros(n.div_ceil(32).max(1))?,
            epoch: 0,
            permuted: gpu.zeros(n)?,
            forward: gpu.zeros(n)?,
        };
        lu.check_panel_fits(gpu)?;
        Ok(lu)
    }

    /// The panel width (64 or 128; default [`DEFAULT_PANEL_WIDTH`]).
    pub fn with_panel_width(mut self, gpu: &Gpu, width: usize) -> Result<BlockedLu<T>> {
        if !PANEL_WIDTHS.contains(&width) {
            return Err(Error::InvalidInput(format!("panel width {width} (64 or 128)")));
        }
        self.panel_width = width;
        self.check_panel_fits(gpu)?;
        Ok(self)
    }

    /// How the panel kernel's blocks exchange their candidates.
    pub fn with_exchange(mut self, exchange: PanelExchange) -> BlockedLu<T> {
        self.exchange = exchange;
        self
    }

    /// The first panel is the tallest: its rows must fit the blocks' shared memory.
    fn check_panel_fits(&self, gpu: &Gpu) -> Result<()> {
        let (_, _, shared) = self.panel_shape(self.n);
        let limit = gpu.props().max_shared_per_block_optin;
        if shared > limit {
            return Err(Error::InvalidInput(format!(
                "n = {}: the panel kernel's rows need {shared} bytes of shared memory per block, the device has {limit}",
                self.n
            )));
        }
        Ok(())
    }

    /// The trailing-update kernel (tensor cores for f64 by default; SIMT for f32 always).
    pub fn with_update(mut self, update: UpdateKernel) -> BlockedLu<T> {
        self.update = if T::NAME == "f64" { update } else { UpdateKernel::Simt };
        self
    }

    /// Blocks, rows per block and shared bytes of the panel kernel for a panel of `rows` rows.
    fn panel_shape(&self, rows: usize) -> (usize, usize, usize) {
        let blocks = rows.div_ceil(MIN_ROWS_PER_BLOCK).clamp(1, self.sms.min(MAX_PANEL_BLOCKS));
        let rows_per_block = rows.div_ceil(blocks);
        let elem = size_of::<T>();
        let round = |bytes: usize| bytes.next_multiple_of(16);
        let nb = self.panel_width;
        let shared =
            round(rows_per_block * (nb + 1) * elem) + 2 * round(nb * elem) + round(32 * elem) + 32 * 4;
        (blocks, rows_per_block, shared)
    }

    /// Queues P A = L U of `a` (n x n, row-major; left as it is). Call [`BlockedLu::check`]
    /// before using the factors: it reports a singular matrix.
    pub fn factor(&mut self, gpu: &Gpu, a: &CudaSlice<T>) -> Result<()> {
        let n = self.n;
        if a.len() != n * n {
            return Err(Error::InvalidInput(format!(
                "blocked LU of size {n} needs {} values, got {}",
                n * n,
                a.len()
            )));
        }
        if n == 0 {
            return Ok(());
        }
        gpu.copy(a, &mut self.lu)?;
        let n32 = n as u32;
        let identity = gpu.kernel("lu_identity_permutation")?;
        // SAFETY: identity_permutation(n, perm) with perm of n words.
        unsafe {
            gpu.launch(&identity, Launch::linear(n, 256), |args| {
                args.arg(&n32).arg(&mut self.perm);
            })?;
        }
        let nb = self.panel_width;
        let (panel, trsm) = if nb == 64 {
            (("lu_panel64_f32", "lu_panel64_f64"), ("lu_trsm64_f32", "lu_trsm64_f64"))
        } else {
            (("lu_panel128_f32", "lu_panel128_f64"), ("lu_trsm128_f32", "lu_trsm128_f64"))
        };
        let (panel, trsm) = (gpu.kernel(T::pick(panel))?, gpu.kernel(T::pick(trsm))?);
        let use_barrier = (self.exchange == PanelExchange::Barrier) as u32;
        if use_barrier != 0 {
            gpu.memset_zeros(&mut self.barriers)?;
        }
        for (step, k0) in (0..n).step_by(nb).enumerate() {
            let width = nb.min(n - k0);
            let (blocks, rows_per_block, shared) = self.panel_shape(n - k0);
            let launch =
                Launch { grid: (blocks as u32, 1, 1), block: (THREADS, 1, 1), shared_bytes: shared as u32 };
            let (k0_32, width32, rows32) = (k0 as u32, width as u32, rows_per_block as u32);
            if self.panel_epoch > u32::MAX - 2 * MAX_NB as u32 {
                gpu.memset_zeros(&mut self.flags_panel)?;
                self.panel_epoch = 0;
            }
            let epoch = self.panel_epoch + 1; // this panel's flags: epoch..epoch + width
            self.panel_epoch += width as u32;
            let barrier = address(gpu, &self.barriers, step);
            // SAFETY: panel(n, a, k0, width, rows_per_block, pivots, perm, candidates,
            // candidate_rows, diagonal_rows, flags, epoch, barrier, use_barrier): the scratch
            // holds two slots and flags for each of at most `sms` blocks, no flag holds this
            // panel's values yet, this panel's barrier word was zeroed, and at most one block
            // per SM with `shared` bytes keeps the whole grid resident.
            unsafe {
                gpu.launch(&panel, launch, |args| {
                    args.arg(&n32)
                        .arg(&mut self.lu)
                        .arg(&k0_32)
                        .arg(&width32)
                        .arg(&rows32)
                        .arg(&mut self.pivots)
                        .arg(&mut self.perm)
                        .arg(&mut self.candidates)
                        .arg(&mut self.candidate_rows)
                        .arg(&mut self.diagonal_rows)
                        .arg(&mut self.flags_panel)
                        .arg(&epoch)
                        .arg(&barrier)
                        .arg(&use_barrier);
                })?;
            }
            let rest = n - k0 - width;
            if rest == 0 {
                continue;
            }
            let trsm_launch = Launch::linear(rest.div_ceil(64) * THREADS as usize, THREADS)
                .shared((nb * (nb + 1) + nb * 64) * size_of::<T>());
            // SAFETY: trsm(n, a, k0, width) on the n x n matrix.
            unsafe {
                gpu.launch(&trsm, trsm_launch, |args| {
                    args.arg(&n32).arg(&mut self.lu).arg(&k0_32).arg(&width32);
                })?;
            }
            let first = k0 + width;
            let l21 = (address(gpu, &self.lu, first * n + k0), n);
            let u12 = (address(gpu, &self.lu, k0 * n + first), n);
            let a22 = (address(gpu, &self.lu, first * n + first), n);
            // SAFETY: L21 (rest x width), U12 (width x rest) and A22 (rest x rest) are disjoint
            // blocks of the n x n factor.
            unsafe { update_at::<T>(gpu, self.update, (rest, rest, width), l21, u12, a22)? };
        }
        let lu_at = address(gpu, &self.lu, 0);
        queue_pivot_check::<T>(gpu, n, lu_at, n, self.tolerance, &mut self.info)
    }

    /// Waits for the factorisation; a column without a usable pivot is [`Error::Singular`].
    pub fn check(&self, gpu: &Gpu) -> Result<()> {
        read_pivot_check(gpu, self.n, self.tolerance, &self.info)
    }

    /// Queues X = A^-1 B for `nrhs` right-hand sides (B and X n x nrhs, row-major) with the
    /// factors of the last [`BlockedLu::factor`] (LAPACK's getrs).
    pub fn solve(&mut self, gpu: &Gpu, nrhs: usize, b: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        let n = self.n;
        if b.len() != n * nrhs || x.len() != n * nrhs {
            return Err(Error::InvalidInput(format!(
                "solve with {nrhs} right-hand side(s) of size {n} needs B and X of {} values, got {} and {}",
                n * nrhs,
                b.len(),
                x.len()
            )));
        }
        if n == 0 || nrhs == 0 {
            return Ok(());
        }
        if self.permuted.len() < n * nrhs {
            self.permuted = gpu.zeros(n * nrhs)?;
            self.forward = gpu.zeros(n * nrhs)?;
        }
        if self.flags.len() < n.div_ceil(32) * nrhs {
            self.flags = gpu.zeros(n.div_ceil(32) * nrhs)?;
        }
        let (n32, nrhs32) = (n as u32, nrhs as u32);
        let permute = gpu.kernel(T::pick(("lu_permute_rows_f32", "lu_permute_rows_f64")))?;
        // SAFETY: permute_rows(n, nrhs, perm, b, y) with b and y of n x nrhs values.
        unsafe {
            gpu.launch(&permute, Launch::linear(n * nrhs, 256), |args| {
                args.arg(&n32).arg(&nrhs32).arg(&self.perm).arg(b).arg(&mut self.permuted);
            })?;
        }
        let lu = (address(gpu, &self.lu, 0), n);
        let permuted = (address(gpu, &self.permuted, 0), nrhs);
        let forward = (address(gpu, &self.forward, 0), nrhs);
        let epoch = next_epoch(&mut self.epoch);
        queue_triangular_solve::<T>(
            gpu,
            n,
            nrhs,
            lu,
            permuted,
            forward,
            false,
            true,
            &mut self.flags,
            epoch,
        )?;
        let epoch = next_epoch(&mut self.epoch);
        let x_at = (address(gpu, x, 0), nrhs);
        queue_triangular_solve::<T>(gpu, n, nrhs, lu, forward, x_at, true, false, &mut self.flags, epoch)
    }

    /// The factors (L and U in one row-major n x n matrix) and LAPACK's 0-based ipiv.
    pub fn factors(&self) -> (&CudaSlice<T>, &CudaSlice<u32>) {
        (&self.lu, &self.pivots)
    }
}

/// A block of a row-major matrix: the buffer, the offset of its first element and the
/// leading dimension (the distance between its rows).
pub struct Block<B> {
    pub buffer: B,
    pub offset: usize,
    pub ld: usize,
}

/// Queues C -= A B (A m x k, B k x n, C m x n), each a block of a row-major buffer; checks
/// that every block lies inside its buffer.
pub fn update<T: Scalar>(
    gpu: &Gpu,
    kernel: UpdateKernel,
    (m, n, k): (usize, usize, usize),
    a: Block<&CudaSlice<T>>,
    b: Block<&CudaSlice<T>>,
    c: Block<&mut CudaSlice<T>>,
) -> Result<()> {
    let fits = |len: usize, offset: usize, ld: usize, rows: usize, cols: usize| {
        rows == 0
            || cols == 0
            || (cols <= ld && offset + (rows - 1) * ld + cols <= len && ld <= u32::MAX as usize)
    };
    if !fits(a.buffer.len(), a.offset, a.ld, m, k)
        || !fits(b.buffer.len(), b.offset, b.ld, k, n)
        || !fits(c.buffer.len(), c.offset, c.ld, m, n)
    {
        return Err(Error::InvalidInput(format!(
            "update C -= A B of {m} x {k} by {k} x {n}: a block lies outside its buffer or its leading dimension is shorter than its rows"
        )));
    }
    let at = |buf: &CudaSlice<T>, block_offset: usize, ld: usize| (address(gpu, buf, block_offset), ld);
    let (a_at, b_at, c_at) =
        (at(a.buffer, a.offset, a.ld), at(b.buffer, b.offset, b.ld), at(c.buffer, c.offset, c.ld));
    // SAFETY: the blocks were checked against their buffers; C is borrowed exclusively, so it
    // overlaps neither A nor B.
    unsafe { update_at::<T>(gpu, kernel, (m, n, k), a_at, b_at, c_at) }
}

/// Queues C -= A B for (m, n, k) on blocks given as (device address, leading dimension).
///
/// # Safety
/// A (m x k), B (k x n) and C (m x n) lie inside live device buffers, and C overlaps neither.
unsafe fn update_at<T: Scalar>(
    gpu: &Gpu,
    kernel: UpdateKernel,
    (m, n, k): (usize, usize, usize),
    a: (u64, usize),
    b: (u64, usize),
    c: (u64, usize),
) -> Result<()> {
    if m == 0 || n == 0 {
        return Ok(());
    }
    let grid = (n.div_ceil(64) as u32, m.div_ceil(64) as u32);
    let (name, launch) = match kernel {
        UpdateKernel::Dmma if T::NAME == "f64" => {
            ("gemm_update_dmma_f64", Launch::grid_2d(grid, (128, 1)).shared((64 * 20 + 16 * 68) * 8))
        }
        UpdateKernel::Dmma => return Err(Error::InvalidInput("the DMMA update kernel is f64 only".into())),
        UpdateKernel::Simt => (
            T::pick(("gemm_update_simt_f32", "gemm_update_simt_f64")),
            Launch::grid_2d(grid, (256, 1)).shared(2 * 16 * 64 * size_of::<T>()),
        ),
    };
    let kernel = gpu.kernel(name)?;
    let (m32, n32, k32) = (m as u32, n as u32, k as u32);
    let (lda, ldb, ldc) = (a.1 as u32, b.1 as u32, c.1 as u32);
    // SAFETY: update(m, n, k, a, lda, b, ldb, c, ldc): the caller's contract.
    unsafe {
        gpu.launch(&kernel, launch, |args| {
            args.arg(&m32).arg(&n32).arg(&k32).arg(&a.0).arg(&lda).arg(&b.0).arg(&ldb).arg(&c.0).arg(&ldc);
        })
    }
}
