//! The sync-free smoother: one launch per sweep direction. Blocks take rows from an atomic
//! ticket, four at a time (a warp each, or two rows a warp in wide levels), and wait on the
//! rows they depend on, so a sweep costs the longest dependency chain instead of a launch per
//! level. A finished row signals through a done flag (release store; waiters poll, then
//! acquire), as specified, or through its value itself ([`Signal::Value`]: one load per
//! hand-over, no fence). Waits are bounded: one that lasts [`SyncFreeSmoother::timeout_ns`]
//! makes the sweep an error, never a hang (see `kernels/src/symgs/sync_free.rs` for why no
//! valid run can deadlock).
//!
//! The rows are handed out level by level (the order of the level analysis), not in row
//! order: in row order the rows in flight (a few thousand consecutive ones) hold the stencil's
//! chains of neighbours along x, and the sweep crawls; in level order the rows in flight are
//! whole levels of independent rows. PERF.md has the figures behind these choices.

use super::levels::{DeviceLevels, levels_gpu};
use super::{Direction, Smoother, SymgsMatrix, forward_flag, rhs_of};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch};
use crate::kernels::symgs::sync_free as kernels;
use abi::symgs::{
    SYNC_FREE_LANES_PER_ROW as LANES_PER_ROW, SYNC_FREE_WARPS_PER_BLOCK as WARPS_PER_BLOCK, TicketPlan,
};

/// How long one wait may last before the sweep is abandoned: far beyond any valid wait (a
/// warp waits at most for the rows that the other running warps hold, microseconds each).
pub const DEFAULT_TIMEOUT_NS: u64 = 2_000_000_000;

/// Warps per SM of a persistent launch by default: the H100's 64 resident warps per SM.
pub const FULL_WARPS_PER_SM: u32 = 64;

/// A grid of `warps_per_sm` warps per SM (a multiple of [`WARPS_PER_BLOCK`]) in blocks of
/// [`WARPS_PER_BLOCK`], or about one warp per row when there are fewer rows.
pub(crate) fn persistent_launch(gpu: &Gpu, rows: usize, warps_per_sm: u32) -> Launch {
    let warps = rows.min((gpu.props().sm_count * warps_per_sm) as usize);
    Launch::warp_per_item(warps.max(1), WARPS_PER_BLOCK)
}

/// How a finished row tells the rows that wait on it (see `kernels/src/symgs/sync_free.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// A per-row done flag, release store / acquire load: the scheme as specified.
    DoneFlags,
    /// The value itself, polled until it is no longer the "unset" NaN: one load per hand-over.
    Value,
}

/// The error of a wait that timed out at `row`.
pub(crate) fn timeout_error(what: &'static str, row: u32, timeout_ns: u64) -> Error {
    Error::Library {
        library: "SymGS",
        what,
        message: format!(
            "row {row} waited more than {:.3} s for a row it depends on; the sweep was abandoned and its output is not valid",
            timeout_ns as f64 * 1e-9
        ),
    }
}

/// Rows per warp in a block ticket over the wide levels (see [`TicketPlan`]): 2 was the
/// fastest batch of those measured (PERF.md).
const WIDE_BATCH: u32 = 2;

/// The rows of one direction in the order they are handed out, level by level.
struct SweepOrder<T> {
    /// Each row as `[row, first nonzero, end nonzero, 0]`.
    entries: CudaSlice<u32>,
    /// The rows' 1 / a_ii in the same order: read in sequence rather than gathered (one
    /// scattered load fewer per row), and no division in the kernel.
    inverse_diagonal: CudaSlice<T>,
    /// Where each level starts in the order, and the end.
    level_offsets: Vec<u32>,
    /// Which tickets hand out batches (set by [`SyncFreeSmoother::replan`]).
    plan: TicketPlan,
}

impl<T: Scalar> SweepOrder<T> {
    /// `row_ptr` and `diagonal`: the matrix's, on the host.
    fn new(gpu: &Gpu, row_ptr: &[u32], diagonal: &[T], levels: &DeviceLevels) -> Result<Self> {
        let rows = row_ptr.len().saturating_sub(1);
        let mut entries = Vec::with_capacity(4 * rows);
        let mut inverse = Vec::with_capacity(rows);
        for row in gpu.download(&levels.rows)? {
            let r = row as usize;
            if r >= rows {
                return Err(Error::InvalidInput(format!("level lists name row {row} of a matrix of {rows}")));
            }
            entries.extend([row, row_ptr[r], row_ptr[r + 1], 0]);
            inverse.push(T::ONE / diagonal[r]);
        }
        Ok(SweepOrder {
            entries: gpu.upload(&entries)?,
            inverse_diagonal: gpu.upload(&inverse)?,
            level_offsets: levels.offsets.clone(),
            plan: TicketPlan::NONE,
        })
    }
}

/// The sync-free smoother on one matrix.
pub struct SyncFreeSmoother<'a, T> {
    matrix: &'a SymgsMatrix<T>,
    /// The order rows are handed out in, per direction.
    forward_order: SweepOrder<T>,
    backward_order: SweepOrder<T>,
    tmp: CudaSlice<T>,
    /// The half-sweep that finished each row (so the flags are never cleared).
    done: CudaSlice<u32>,
    /// One ticket counter per direction, zeroed before each sweep.
    tickets: CudaSlice<u32>,
    /// 0, or 1 + the first row whose wait timed out.
    error: CudaSlice<u32>,
    /// The number of the last half-sweep run.
    epoch: u32,
    signal: Signal,
    warps_per_sm: u32,
    timeout_ns: u64,
    backoff_ns: u32,
    /// Batches: levels of at least this many rows, rows per warp; None: the default.
    batches: Option<(usize, u32)>,
    sm_count: u32,
    first_ticket: u32,
}

impl<'a, T: Scalar> SyncFreeSmoother<'a, T> {
    /// With the levels computed on the GPU.
    pub fn new(gpu: &Gpu, matrix: &'a SymgsMatrix<T>) -> Result<Self> {
        let forward = levels_gpu(gpu, matrix, Direction::Forward)?;
        let backward = levels_gpu(gpu, matrix, Direction::Backward)?;
        Self::with_levels(gpu, matrix, forward, backward)
    }

    /// With given levels (e.g. from [`super::levels::levels_cpu`]); they must be `matrix`'s.
    pub fn with_levels(
        gpu: &Gpu,
        matrix: &'a SymgsMatrix<T>,
        forward: DeviceLevels,
        backward: DeviceLevels,
    ) -> Result<Self> {
        forward.check_for(matrix)?;
        backward.check_for(matrix)?;
        let (row_ptr, diagonal) = (gpu.download(&matrix.csr.row_ptr)?, gpu.download(&matrix.diagonal)?);
        let mut smoother = SyncFreeSmoother {
            matrix,
            forward_order: SweepOrder::new(gpu, &row_ptr, &diagonal, &forward)?,
            backward_order: SweepOrder::new(gpu, &row_ptr, &diagonal, &backward)?,
            tmp: gpu.zeros(matrix.rows)?,
            done: gpu.zeros(matrix.rows)?,
            tickets: gpu.zeros(2)?,
            error: gpu.zeros(1)?,
            epoch: 0,
            signal: Signal::DoneFlags,
            warps_per_sm: FULL_WARPS_PER_SM,
            timeout_ns: DEFAULT_TIMEOUT_NS,
            backoff_ns: 0,
            batches: None,
            sm_count: gpu.props().sm_count,
            first_ticket: 0,
        };
        smoother.replan();
        Ok(smoother)
    }

    /// Sets each direction's ticket plan from the batch setting and the warps in flight.
    fn replan(&mut self) {
        let in_flight = (self.sm_count * self.warps_per_sm) as usize;
        let (wide_rows, batch) = self.batches.unwrap_or((in_flight, WIDE_BATCH));
        for order in [&mut self.forward_order, &mut self.backward_order] {
            order.plan = TicketPlan::new(&order.level_offsets, wide_rows, batch);
        }
    }

    pub fn timeout_ns(&self) -> u64 {
        self.timeout_ns
    }

    /// Sets how long one wait may last before the sweep becomes an error.
    pub fn set_timeout_ns(&mut self, ns: u64) {
        self.timeout_ns = ns;
    }

    /// Polls a flag every `ns` nanoseconds (`nanosleep` between polls) instead of spinning:
    /// fewer loads from the warps that wait, at the price of a later wake-up.
    pub fn with_backoff_ns(mut self, ns: u32) -> Self {
        self.backoff_ns = ns;
        self
    }

    /// Hands each warp `batch` consecutive rows per ticket over the longest run of levels of
    /// at least `wide_rows` rows (default: 2 rows, levels at least as wide as the
    /// warps in flight); `batch` 1 turns batches off. Any setting gives the same result.
    pub fn with_batches(mut self, wide_rows: usize, batch: u32) -> Self {
        self.batches = Some((wide_rows, batch.max(1)));
        self.replan();
        self
    }

    /// Signals finished rows by `signal` (default: done flags).
    pub fn with_signal(mut self, signal: Signal) -> Self {
        self.signal = signal;
        self
    }

    /// Runs `warps` warps per SM (rounded down to a multiple of 4, 4..=64, default 64): fewer
    /// warps in flight, fewer polls competing with the rows being computed.
    pub fn with_warps_per_sm(mut self, warps: u32) -> Self {
        self.warps_per_sm =
            (warps / WARPS_PER_BLOCK * WARPS_PER_BLOCK).clamp(WARPS_PER_BLOCK, FULL_WARPS_PER_SM);
        self.replan();
        self
    }

    /// Test hook: hands out tickets from `first` instead of 0, so that the first rows of the
    /// order (4 per ticket) are never computed and the rows depending on them must time out
    /// (how the tests check that a stuck wait ends in an error, not a hang).
    #[doc(hidden)]
    pub fn start_tickets_at(&mut self, first: u32) {
        self.first_ticket = first;
    }

    /// The GPU101 report's variant (see [`super::cpu::CpuSymgs::sweep_report_variant`]).
    pub fn sweep_report_variant(&mut self, gpu: &Gpu, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, None, x)
    }

    fn run(&mut self, gpu: &Gpu, r: Option<&CudaSlice<T>>, x: &mut CudaSlice<T>) -> Result<()> {
        self.matrix.check_vectors(r, x)?;
        if self.matrix.rows == 0 {
            return Ok(());
        }
        if self.epoch > u32::MAX - 2 {
            // Flags would wrap around: start again from zeroed flags.
            gpu.memset_zeros(&mut self.done)?;
            self.epoch = 0;
        }
        if self.first_ticket == 0 {
            gpu.memset_zeros(&mut self.tickets)?;
        } else {
            gpu.upload_into(&[self.first_ticket; 2], &mut self.tickets)?;
        }
        let signal = match self.signal {
            Signal::DoneFlags => abi::symgs::DONE_FLAGS,
            Signal::Value => abi::symgs::VALUE,
        };
        let m = self.matrix;
        let rows = m.rows as u32;
        let launch =
            persistent_launch(gpu, m.rows, self.warps_per_sm).shared(abi::symgs::SYNC_FREE_SHARED_BYTES);
        for (k, direction) in [Direction::Forward, Direction::Backward].into_iter().enumerate() {
            self.epoch += 1;
            let forward = forward_flag(direction);
            let mut ticket = self.tickets.slice_mut(k..k + 1);
            let (order, rhs, old, new): (&SweepOrder<T>, &CudaSlice<T>, &CudaSlice<T>, &mut CudaSlice<T>) =
                match direction {
                    Direction::Forward => (&self.forward_order, rhs_of(r, x), x, &mut self.tmp),
                    Direction::Backward => (&self.backward_order, rhs_of(r, &self.tmp), &self.tmp, x),
                };
            // SAFETY (both launches): a checked square matrix, `order` a dependency order of
            // its `rows` rows with their extents and inverse diagonal; flags and vectors of
            // `rows`.
            unsafe {
                if self.signal == Signal::Value {
                    kernels::mark_unset(gpu, Launch::linear(m.rows, 256), rows, new)?;
                }
                kernels::sweep(
                    gpu,
                    launch,
                    signal,
                    LANES_PER_ROW,
                    rows,
                    &order.entries,
                    order.plan,
                    forward,
                    self.epoch,
                    self.timeout_ns,
                    self.backoff_ns,
                    &mut ticket,
                    &mut self.done,
                    &mut self.error,
                    &m.csr.col_idx,
                    &m.csr.values,
                    &order.inverse_diagonal,
                    rhs,
                    old,
                    new,
                )?;
            }
        }
        let stuck = gpu.download(&self.error)?[0];
        if stuck != 0 {
            gpu.memset_zeros(&mut self.error)?;
            gpu.memset_zeros(&mut self.done)?;
            self.epoch = 0;
            return Err(timeout_error("sync-free sweep", stuck - 1, self.timeout_ns));
        }
        Ok(())
    }
}

impl<T: Scalar> Smoother<T> for SyncFreeSmoother<'_, T> {
    fn name(&self) -> String {
        let mut name = match self.signal {
            Signal::DoneFlags => "sync-free".to_string(),
            Signal::Value => "sync-free-values".to_string(),
        };
        if self.warps_per_sm != FULL_WARPS_PER_SM {
            name += &format!("-{}warps-per-sm", self.warps_per_sm);
        }
        if self.backoff_ns != 0 {
            name += &format!("-backoff{}ns", self.backoff_ns);
        }
        match self.batches {
            Some((_, 1)) => name += "-row-per-warp",
            Some((wide_rows, batch)) => name += &format!("-batch{batch}-from{wide_rows}rows"),
            None => {}
        }
        name
    }

    fn exact_order(&self) -> bool {
        true
    }

    fn sweep(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        self.run(gpu, Some(r), x)
    }
}
