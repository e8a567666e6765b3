//! Blocked right-looking LU with partial pivoting on the GPU (`kernels/src/solve/blocked.rs`)
//! and getrs, on two levels, with look-ahead. A block column ([`BLOCK_COLUMNS`]) is
//! factored panel by panel (64 or 128 columns) on a second stream of the highest priority: the
//! persistent panel kernel (pivot search, row swaps, elimination inside the panel), the
//! triangular solve of the panel's block row, and the update of the columns right of the
//! panel, each reaching to the end of the next block column (the block column's window). So
//! the next block column is ready when this one is, and its factorisation follows at once.
//! Meanwhile, on the GPU's stream, the block column after that gets what its factorisation
//! will need from this one (the row swaps, `swap_rows`, LAPACK's laswp; its part of the block
//! row; its part of the trailing update A22 -= L21 U12, k = the block column's width), then the rest of
//! the matrix: the panels are latency-bound, the update is not. The updates are the GEMM-update
//! kernels (`kernels/src/gemm/update.rs`: tensor cores for f64) in place with leading
//! dimension n. Then a check of the pivots, and for each solve: b permuted, L y = P b, U x = y.

use std::ops::Range;
use std::sync::Arc;

use super::{
    check_gpu_size, next_epoch, queue_pivot_check, queue_triangular_solve, read_pivot_check,
    triangular_launch, triangular_words,
};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gemm::copy_rows;
use crate::gemm::update::{UpdateKernel, update};
use crate::gpu::{CudaEvent, CudaSlice, CudaStream, Gpu, Launch, MatrixView, MatrixViewMut, Queue};
use crate::kernels::solve::blocked as kernels;
use crate::memory::Footprint;

/// The panel widths the kernels are built for (their `NB`): the k of the trailing update.
pub const PANEL_WIDTHS: [usize; 2] = {
    let nb = kernels::panel::NB;
    [nb[0] as usize, nb[1] as usize]
};
/// The default. A panel of 128 halves the update's traffic through C, but costs more per
/// column in the panel; 64 was as fast or faster where measured (PERF.md).
pub const DEFAULT_PANEL_WIDTH: usize = 64;
const MAX_NB: usize = 128;
/// The widths of a block column the LU takes: its panels update only the block column itself,
/// and the rest of the matrix is updated once per block column with this k. 256 is a quarter
/// of the traffic through C of one update per 64-wide panel; a wider one gives the update's
/// tiles a longer k-loop, over which their pipeline's fill and their epilogue weigh less, and
/// costs the panels' critical path more (the default: [`default_block_column`]).
pub const BLOCK_COLUMNS: [usize; 3] = [256, 384, 512];
const _: () = {
    let mut i = 0;
    while i < BLOCK_COLUMNS.len() {
        assert!(BLOCK_COLUMNS[i].is_multiple_of(MAX_NB), "panels start at multiples of their width");
        i += 1;
    }
};

/// The most steps of one `swap_rows` launch within `shared` bytes a block, in whole warps of
/// steps: the row swaps of a wider block column go in parts.
fn swap_steps<T>(shared: usize) -> Result<usize> {
    let fits = |steps: usize| abi::solve::swap_rows_shared_bytes(steps, size_of::<T>()) <= shared;
    let widest = BLOCK_COLUMNS[BLOCK_COLUMNS.len() - 1];
    let most = (1..=widest / 32).rev().map(|warps| 32 * warps).find(|&steps| fits(steps));
    most.ok_or_else(|| {
        Error::InvalidInput(format!(
            "the LU's row swaps need more than the device's {shared} bytes of shared memory a block"
        ))
    })
}

/// The block column for an n x n matrix of `T`: from n = 16384 on, where the trailing update
/// is most of the time, 512 in f64 and 384 in f32 (whose TF32 update is faster, so that its
/// panels weigh more), else 256 (measured: PERF.md).
pub fn default_block_column<T: Scalar>(n: usize) -> usize {
    match (n >= 16384, T::NAME) {
        (false, _) => BLOCK_COLUMNS[0],
        (true, "f32") => BLOCK_COLUMNS[1],
        (true, _) => BLOCK_COLUMNS[2],
    }
}
const THREADS: u32 = abi::solve::BLOCKED_THREADS;
/// Fewest panel rows per block: below this, fewer blocks (fewer candidates to wait for) win.
const MIN_ROWS_PER_BLOCK: usize = 32;
/// Most blocks of the panel kernel: one thread of each block waits for each block's candidate,
/// and some threads must be left to apply the row swaps.
const MAX_PANEL_BLOCKS: usize = 192;

/// How the panel kernel's blocks meet each column to exchange their pivot candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PanelExchange {
    /// No meeting: each block reads the others' candidates as their tagged words land (the
    /// default, and the faster: PERF.md).
    Tagged,
    /// A grid barrier per column (one atomic counter), then the reads: the classic way.
    Barrier,
}

/// The default exchange.
pub const DEFAULT_EXCHANGE: PanelExchange = PanelExchange::Tagged;

/// The LU factors of one n x n matrix on the device, and the buffers to get and use them.
pub struct BlockedLu<T> {
    n: usize,
    tolerance: f64,
    update: UpdateKernel,
    panel_width: usize,
    exchange: PanelExchange,
    block_column: usize,
    /// The most steps one `swap_rows` launch takes (its shared memory grows with them).
    swap_steps: usize,
    sms: usize,
    /// L (unit, below the diagonal) and U, row-major n x n, rows `ld` apart.
    lu: CudaSlice<T>,
    /// n rounded up to 128 bytes: every row starts on a line, so the tensor-core updates copy
    /// 16-byte chunks and the copy engine can read the blocks, whatever n is.
    ld: usize,
    /// LAPACK's ipiv (0-based): row i was swapped with row pivots[i] at step i.
    pivots: CudaSlice<u32>,
    /// Row i of P A is row perm[i] of A.
    perm: CudaSlice<u32>,
    /// The panel kernel's tagged words (two candidate slots per block, two diagonal rows), and
    /// the last tag used (each panel column tags its words with a new one).
    exchange_words: CudaSlice<u64>,
    panel_epoch: u32,
    /// One zeroed barrier word per panel (with [`PanelExchange::Barrier`]).
    barriers: CudaSlice<u32>,
    info: CudaSlice<u32>,
    /// The next block column's panels run here, beside the trailing update (look-ahead).
    panel_stream: Arc<CudaStream>,
    /// getrs: the words the triangular solves publish x in, and P b and L^-1 P b (grown to the
    /// widest B).
    published: CudaSlice<u64>,
    epoch: u32,
    permuted: CudaSlice<T>,
    forward: CudaSlice<T>,
}

impl<T: Scalar> BlockedLu<T> {
    /// Buffers for an n x n matrix; `tolerance` is the smallest usable pivot
    /// (`solve::check_system` computes it).
    pub fn new(gpu: &Gpu, n: usize, tolerance: f64) -> Result<BlockedLu<T>> {
        check_gpu_size(n)?;
        let sms = gpu.props().sm_count.max(1) as usize;
        // The factor, the getrs vectors and the panel kernel's scratch.
        let exchange_words =
            abi::solve::panel_exchange_words(sms.min(MAX_PANEL_BLOCKS), MAX_NB, size_of::<T>());
        let ld = n.next_multiple_of(128 / size_of::<T>());
        Footprint::new(format!("the blocked LU of size {n}"))
            .device::<T>(n as u128 * ld as u128 + 2 * n as u128)
            .device::<u64>((exchange_words + triangular_words::<T>(n, 1)) as u128)
            .device::<u32>(4 * n as u128)
            .check_device(gpu)?;
        let lu = BlockedLu {
            n,
            tolerance,
            update: UpdateKernel::default_for::<T>(gpu),
            panel_width: DEFAULT_PANEL_WIDTH,
            exchange: DEFAULT_EXCHANGE,
            block_column: default_block_column::<T>(n),
            swap_steps: swap_steps::<T>(gpu.props().max_shared_per_block_optin)?,
            sms,
            lu: gpu.zeros(n * ld)?,
            ld,
            pivots: gpu.zeros(n)?,
            perm: gpu.zeros(n)?,
            exchange_words: gpu.zeros(exchange_words)?,
            panel_epoch: 0,
            barriers: gpu.zeros(n.div_ceil(PANEL_WIDTHS[0]).max(1))?,
            info: gpu.zeros(1)?,
            panel_stream: gpu.urgent_stream()?,
            published: gpu.zeros(triangular_words::<T>(n, 1))?,
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

    /// The block column's width (one of [`BLOCK_COLUMNS`]; default [`default_block_column`]).
    pub fn with_block_column(mut self, width: usize) -> Result<BlockedLu<T>> {
        if !BLOCK_COLUMNS.contains(&width) {
            let [narrow, wide, widest] = BLOCK_COLUMNS;
            return Err(Error::InvalidInput(format!(
                "block column of {width} columns ({narrow}, {wide} or {widest})"
            )));
        }
        self.block_column = width;
        Ok(self)
    }

    /// The block column's width.
    pub fn block_column(&self) -> usize {
        self.block_column
    }

    /// The block column after `block` (empty at the end of the matrix): its window.
    fn window(&self, block: &Range<usize>) -> Range<usize> {
        block.end..(block.end + self.block_column).min(self.n)
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

    /// The trailing-update kernel (default: [`UpdateKernel::default_for`]). For f32,
    /// `Pipelined` and `Wgmma` take the update's inputs to TF32 (the mixed-precision solve's
    /// factors) and `Dmma` falls back to SIMT; `Wgmma` and `DmmaTma` run the trailing updates
    /// only (k = the block column's width) and `Pipelined` those inside a block column.
    pub fn with_update(mut self, update: UpdateKernel) -> BlockedLu<T> {
        self.update =
            if T::NAME == "f32" && update == UpdateKernel::Dmma { UpdateKernel::Simt } else { update };
        self
    }

    /// Blocks, rows per block and shared bytes of the panel kernel for a panel of `rows` rows.
    fn panel_shape(&self, rows: usize) -> (usize, usize, usize) {
        let blocks = rows.div_ceil(MIN_ROWS_PER_BLOCK).clamp(1, self.sms.min(MAX_PANEL_BLOCKS));
        let rows_per_block = rows.div_ceil(blocks);
        let shared = abi::solve::panel_shared_bytes(rows_per_block, self.panel_width, size_of::<T>());
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
        if self.ld == n {
            gpu.copy(a, &mut self.lu)?;
        } else {
            copy_rows(gpu, a, (n, n), &mut self.lu, self.ld)?;
        }
        self.factor_in_place(gpu)
    }

    /// The n x n matrix [`BlockedLu::factor_in_place`] factors, to fill in place of a copy, and
    /// its row stride.
    pub(crate) fn matrix_mut(&mut self) -> (&mut CudaSlice<T>, usize) {
        (&mut self.lu, self.ld)
    }

    /// Queues P A = L U of the matrix already in the factors' buffer ([`BlockedLu::matrix_mut`]),
    /// as [`BlockedLu::factor`] does.
    pub(crate) fn factor_in_place(&mut self, gpu: &Gpu) -> Result<()> {
        let n = self.n;
        if n == 0 {
            return Ok(());
        }
        let n32 = n as u32;
        // SAFETY: perm holds n words.
        unsafe { kernels::identity_permutation(gpu, Launch::linear(n, 256), n32, &mut self.perm)? };
        let use_barrier = (self.exchange == PanelExchange::Barrier) as u32;
        if use_barrier != 0 {
            gpu.memset_zeros(&mut self.barriers)?;
        }
        // Block column j is factored on the panel stream, together with block j's part of the
        // next block column (its window): swaps, block row and update there, panel by panel.
        // Then, on the GPU's stream, the same for the block column after that (the window of
        // block j + 1's factorisation, which starts at once and waits for it only after its
        // first panel), and the rest of the matrix, beside block j + 1's factorisation. So the
        // factorisations follow one another with no step between them.
        let blocks: Vec<Range<usize>> =
            (0..n).step_by(self.block_column).map(|b| b..(b + self.block_column).min(n)).collect();
        let panel_stream = self.panel_stream.clone();
        panel_stream.join(gpu.stream()).map_err(Error::driver("stream wait"))?;
        self.queue_block_column(gpu.on(&panel_stream), blocks[0].clone(), None, use_barrier)?;
        for (j, block) in blocks.iter().enumerate() {
            gpu.stream().join(&panel_stream).map_err(Error::driver("stream wait"))?;
            let after = self.window(blocks.get(j + 1).unwrap_or(block));
            self.queue_swap_rows(gpu.into(), block.clone(), 0..0, after.clone())?;
            self.queue_block_row(gpu, block.clone(), after.clone())?;
            self.queue_update(gpu.into(), self.update, block.clone(), block.end..n, after.clone())?;
            if let Some(next) = blocks.get(j + 1) {
                let after_ready = gpu.stream().record_event(None).map_err(Error::driver("event record"))?;
                self.queue_block_column(
                    gpu.on(&panel_stream),
                    next.clone(),
                    Some(&after_ready),
                    use_barrier,
                )?;
            }
            let rest = after.end..n;
            self.queue_swap_rows(gpu.into(), block.clone(), 0..block.start, rest.clone())?;
            self.queue_block_row(gpu, block.clone(), rest.clone())?;
            self.queue_update(gpu.into(), self.update, block.clone(), block.end..n, rest)?;
        }
        gpu.stream().join(&panel_stream).map_err(Error::driver("stream wait"))?;
        queue_pivot_check::<T>(
            gpu,
            MatrixView::new(&self.lu, 0, n, n, self.ld)?,
            self.tolerance,
            &mut self.info,
        )
    }

    /// Queues the factorisation of the block column `block` (already updated by the block
    /// columns left of it) and its part of its window (the next block column, already updated
    /// by the block columns left of `block` once `window_ready` completes): for each panel, the
    /// panel kernel (its row swaps kept inside the block column and, once the window is ready,
    /// the window), its block row up to the window's end, and the update of the block column's
    /// rest and the window.
    fn queue_block_column(
        &mut self,
        queue: Queue,
        block: Range<usize>,
        window_ready: Option<&CudaEvent>,
        use_barrier: u32,
    ) -> Result<()> {
        let n = self.n;
        let window = self.window(&block);
        for (i, (k0, width)) in self.panels(&block).enumerate() {
            if i == 0 {
                self.queue_panel(queue, k0, width, block.clone(), use_barrier)?;
                if let Some(event) = window_ready {
                    queue.stream().wait(event).map_err(Error::driver("stream wait"))?;
                }
                self.queue_swap_rows(queue, k0..k0 + width, 0..0, window.clone())?;
            } else {
                self.queue_panel(queue, k0, width, block.start..window.end, use_barrier)?;
            }
            self.queue_trsm(queue, k0, width, k0 + width..window.end)?;
            self.queue_update(
                queue,
                self.panel_update(),
                k0..k0 + width,
                k0 + width..n,
                k0 + width..window.end,
            )?;
        }
        Ok(())
    }

    /// The panels of the block column `block`: (first column, width).
    fn panels(&self, block: &Range<usize>) -> impl Iterator<Item = (usize, usize)> + use<T> {
        let (nb, end) = (self.panel_width, block.end);
        block.clone().step_by(nb).map(move |k0| (k0, nb.min(end - k0)))
    }

    /// Queues U12 = L11^-1 A12 for the block column `block` and the columns `columns` right
    /// of it, panel by panel (each panel's rows solved, then the block row's rows below them
    /// updated).
    fn queue_block_row(&mut self, gpu: &Gpu, block: Range<usize>, columns: Range<usize>) -> Result<()> {
        for (k0, width) in self.panels(&block) {
            self.queue_trsm(gpu.into(), k0, width, columns.clone())?;
            self.queue_update(
                gpu.into(),
                self.panel_update(),
                k0..k0 + width,
                k0 + width..block.end,
                columns.clone(),
            )?;
        }
        Ok(())
    }

    /// Queues the row swaps of the block column `block` on the columns `left` (left of it,
    /// starting at 0) and `right` (right of it): in parts of at most `swap_steps` steps, equal
    /// but for the last, in order, as the swaps are made.
    fn queue_swap_rows(
        &mut self,
        queue: Queue,
        block: Range<usize>,
        left: Range<usize>,
        right: Range<usize>,
    ) -> Result<()> {
        let columns = left.len() + right.len();
        if columns == 0 || block.is_empty() {
            return Ok(());
        }
        let part = block.len().div_ceil(block.len().div_ceil(self.swap_steps));
        for k0 in block.clone().step_by(part) {
            let width = part.min(block.end - k0);
            let launch =
                Launch::linear(columns.div_ceil(abi::solve::SWAP_COLS as usize) * THREADS as usize, THREADS)
                    .shared(abi::solve::swap_rows_shared_bytes(width, size_of::<T>()))
                    .beside_large_shared();
            // SAFETY: the pivots of steps k0..k0 + width are rows of the n x n matrix below
            // them; the columns `left` (from 0) and `right` lie inside it.
            unsafe {
                kernels::swap_rows::<T>(
                    queue,
                    launch,
                    &mut self.lu,
                    self.ld as u32,
                    &self.pivots,
                    k0 as u32,
                    width as u32,
                    left.end as u32,
                    right.start as u32,
                    right.end as u32,
                )?;
            }
        }
        Ok(())
    }

    /// Queues the panel kernel for columns k0..k0 + width (rows k0..n), its row swaps applied
    /// to the columns `swapped`.
    fn queue_panel(
        &mut self,
        queue: Queue,
        k0: usize,
        width: usize,
        swapped: Range<usize>,
        use_barrier: u32,
    ) -> Result<()> {
        let (n, nb) = (self.n, self.panel_width);
        let (blocks, rows_per_block, shared) = self.panel_shape(n - k0);
        let launch = Launch::linear(blocks * THREADS as usize, THREADS).shared(shared).beside_large_shared();
        if self.panel_epoch > u32::MAX - 2 * MAX_NB as u32 {
            queue.stream().memset_zeros(&mut self.exchange_words).map_err(Error::driver("memset"))?;
            self.panel_epoch = 0;
        }
        let epoch = self.panel_epoch + 1; // this panel's tags: epoch..epoch + width
        self.panel_epoch += width as u32;
        let step = k0 / nb;
        let mut barrier = self.barriers.slice_mut(step..step + 1);
        // SAFETY: the exchange holds the words of at most min(sms, MAX_PANEL_BLOCKS) blocks,
        // none tagged with this panel's tags yet; this panel's barrier word was zeroed, and at
        // most one block per SM with `shared` bytes keeps the whole grid resident.
        unsafe {
            kernels::panel::<T>(
                queue,
                launch,
                nb as u32,
                n as u32,
                &mut self.lu,
                self.ld as u32,
                k0 as u32,
                width as u32,
                rows_per_block as u32,
                &mut self.pivots,
                &mut self.perm,
                &mut self.exchange_words,
                epoch,
                &mut barrier,
                use_barrier,
                swapped.start as u32,
                swapped.end as u32,
            )
        }
    }

    /// Queues U = L^-1 A for the rows k0..k0 + width and `columns`, L the unit lower triangle
    /// of the panel at k0.
    fn queue_trsm(&mut self, queue: Queue, k0: usize, width: usize, columns: Range<usize>) -> Result<()> {
        if columns.is_empty() {
            return Ok(());
        }
        let nb = self.panel_width;
        let launch = Launch::linear(
            columns.len().div_ceil(abi::solve::TRSM_COLS as usize) * THREADS as usize,
            THREADS,
        )
        .shared(abi::solve::trsm_shared_bytes(nb, size_of::<T>()))
        .beside_large_shared();
        let (n, k0, width) = (self.n as u32, k0 as u32, width as u32);
        let (begin, end) = (columns.start as u32, columns.end as u32);
        let ld = self.ld as u32;
        // SAFETY: the n x n matrix; the panel's rows and the columns lie inside it.
        unsafe { kernels::trsm::<T>(queue, launch, nb as u32, n, &mut self.lu, ld, k0, width, begin, end) }
    }

    /// Queues A[rows, columns] -= A[rows, ks] A[ks, columns], where `rows` and `columns` both
    /// start at or after the end of `ks` (so the three blocks do not overlap).
    fn queue_update(
        &mut self,
        queue: Queue,
        kernel: UpdateKernel,
        ks: Range<usize>,
        rows: Range<usize>,
        columns: Range<usize>,
    ) -> Result<()> {
        if rows.is_empty() || columns.is_empty() {
            return Ok(());
        }
        let n = self.n;
        let (top, bottom) = MatrixViewMut::new(&mut self.lu, 0, n, n, self.ld)?.split_rows(rows.start);
        let (_, u) = top.split_rows(ks.start).1.split_rows(ks.len()).0.split_cols(columns.start);
        let (u, _) = u.split_cols(columns.len());
        let (bottom, _) = bottom.split_rows(rows.len());
        let (left, c) = bottom.split_cols(columns.start);
        let (c, _) = c.split_cols(columns.len());
        let (l, _) = left.split_cols(ks.start).1.split_cols(ks.len());
        update(queue, kernel, l.into_view(), u.into_view(), c)
    }

    /// The kernel of the updates inside a block column and its block row (k = the panel
    /// width): the tensor maps of `Wgmma` and `DmmaTma` are kept for the trailing updates only
    /// (those inside are many, and some run on the panel stream), so these run `Pipelined` in
    /// their place.
    fn panel_update(&self) -> UpdateKernel {
        match self.update {
            UpdateKernel::Wgmma | UpdateKernel::DmmaTma => UpdateKernel::Pipelined,
            kernel => kernel,
        }
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
        let epoch = self.queue_forward(gpu, nrhs, b, false)?;
        let lu = MatrixView::new(&self.lu, 0, n, n, self.ld)?;
        let forward = MatrixView::new(&self.forward, 0, n, nrhs, nrhs)?;
        let x = MatrixViewMut::full(x, n, nrhs)?;
        queue_triangular_solve(gpu, lu, forward, x, true, false, false, &mut self.published, epoch)
    }

    /// The first half of [`BlockedLu::solve`] (b's n x nrhs values checked): `forward` = L^-1 P b,
    /// L's diagonal blocks solved with `by_inverse` ([`queue_triangular_solve`]). Returns the
    /// epoch the second half's words take.
    fn queue_forward(&mut self, gpu: &Gpu, nrhs: usize, b: &CudaSlice<T>, by_inverse: bool) -> Result<u32> {
        let n = self.n;
        if self.permuted.len() < n * nrhs {
            self.permuted = gpu.zeros(n * nrhs)?;
            self.forward = gpu.zeros(n * nrhs)?;
        }
        let words = triangular_words::<T>(n, nrhs);
        if self.published.len() < words {
            self.published = gpu.zeros(words)?;
        }
        let (n32, nrhs32) = (n as u32, nrhs as u32);
        // SAFETY: b and `permuted` hold n x nrhs values, perm a permutation of 0..n.
        unsafe {
            kernels::permute_rows(
                gpu,
                Launch::linear(n * nrhs, 256),
                n32,
                nrhs32,
                &self.perm,
                b,
                &mut self.permuted,
            )?
        };
        let lu = MatrixView::new(&self.lu, 0, n, n, self.ld)?;
        let epoch = next_epoch(&mut self.epoch);
        let (permuted, forward) = (
            MatrixView::new(&self.permuted, 0, n, nrhs, nrhs)?,
            MatrixViewMut::new(&mut self.forward, 0, n, nrhs, nrhs)?,
        );
        queue_triangular_solve(
            gpu,
            lu,
            permuted,
            forward,
            false,
            true,
            by_inverse,
            &mut self.published,
            epoch,
        )?;
        Ok(next_epoch(&mut self.epoch))
    }

    /// The factors (L and U in one row-major n x n matrix) and LAPACK's 0-based ipiv, copied
    /// back (waits for the queued work first).
    pub fn download_factors(&self, gpu: &Gpu) -> Result<(Vec<T>, Vec<u32>)> {
        let (n, ld) = (self.n, self.ld);
        let rows = gpu.download(&self.lu)?;
        let factors = rows.chunks(ld.max(1)).flat_map(|row| &row[..n]).copied().collect();
        Ok((factors, gpu.download(&self.pivots)?))
    }
}

/// The f64 residual the mixed solve takes next, computed beside the backward half of a solve
/// with the f32 factors ([`BlockedLu::solve_with_residual`]).
pub(crate) struct NextResidual<'a> {
    /// The n x n f64 matrix, row-major.
    pub a: &'a CudaSlice<f64>,
    /// The solution before this correction.
    pub x: &'a CudaSlice<f64>,
    pub b: &'a CudaSlice<f64>,
    /// What the correction is multiplied by before it is added to x.
    pub scale: f64,
    /// Gets b - A (x + scale d), x + scale d rounded as `refine::add_correction` rounds it.
    pub r: &'a mut CudaSlice<f64>,
}

impl BlockedLu<f32> {
    /// As [`BlockedLu::solve`] with one right-hand side, d = A^-1 rhs, and with the residual
    /// that follows (`next`) computed by more blocks of the backward half's launch, as the
    /// correction's chunks land (`refine::backward_residual`): reading A overlaps the solve.
    pub(crate) fn solve_with_residual(
        &mut self,
        gpu: &Gpu,
        rhs: &CudaSlice<f32>,
        d: &mut CudaSlice<f32>,
        next: NextResidual<'_>,
    ) -> Result<()> {
        let n = self.n;
        let vectors = [rhs.len(), d.len(), next.x.len(), next.b.len(), next.r.len()];
        if vectors.iter().any(|&len| len != n) || next.a.len() != n * n {
            return Err(Error::InvalidInput(format!(
                "solve with residual of size {n}: A of {} values and vectors of {vectors:?}",
                next.a.len()
            )));
        }
        if n == 0 {
            return Ok(());
        }
        // The refinement's own solve: its f64 residuals make up for the inverses' error.
        let epoch = self.queue_forward(gpu, 1, rhs, true)?;
        let lu = MatrixView::new(&self.lu, 0, n, n, self.ld)?;
        let forward = MatrixView::new(&self.forward, 0, n, 1, 1)?;
        let launch = triangular_launch::<f32>(n, 2, 1);
        let NextResidual { a, x, b, scale, r } = next;
        // SAFETY: the factors and forward hold n x n and n values (views checked), d, x, b and r
        // n and A n x n (checked above); `published` the words of one right-hand side
        // (`queue_forward`), none tagged with the new epoch.
        unsafe {
            crate::kernels::solve::refine::backward_residual(
                gpu,
                launch,
                n as u32,
                lu,
                forward,
                MatrixViewMut::full(d, n, 1)?,
                &mut self.published,
                epoch,
                a,
                x,
                b,
                scale,
                r,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_swaps_fit_the_devices_shared_memory() {
        // An H100's or H200's 227 KiB a block, an A100's 163 KiB, and too little for a warp.
        assert_eq!(swap_steps::<f64>(232_448).unwrap(), 416);
        assert_eq!(swap_steps::<f64>(166_912).unwrap(), 320);
        assert_eq!(swap_steps::<f32>(232_448).unwrap(), 512);
        let err = swap_steps::<f64>(10_000).unwrap_err().to_string();
        assert!(err.contains("10000 bytes of shared memory"), "{err}");
    }
}
